"""lspci (pciutils): PCIe link capability (LnkCap) and status (LnkSta) of one function.

``lspci -vv -s ADDR`` (root sees the capability registers). Used when sysfs
lacks ``current_link_speed`` (old kernels) and to double-check it. The parser
accepts whole ``-vv`` dumps, ``| grep -i width`` extracts and outputs of
several functions (it reads the first function unless an address is given).
Only this module spawns lspci.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional

from slogqual.tools import run as _run

PROGRAM = "lspci"

_FUNC_RE = re.compile(r"^(?:([0-9a-fA-F]{4}):)?([0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s")
_CAP_RE = re.compile(r"LnkCap:.*?Speed\s+([0-9.]+)\s*GT/s.*?Width\s+x(\d+)", re.IGNORECASE)
_STA_RE = re.compile(r"LnkSta:.*?Speed\s+([0-9.]+)\s*GT/s(\s*\(downgraded\))?.*?Width\s+x(\d+)(\s*\(downgraded\))?",
                     re.IGNORECASE)


@dataclass
class PcieLink:
    address: Optional[str]
    cap_gts: Optional[float] = None
    cap_width: Optional[int] = None
    sta_gts: Optional[float] = None
    sta_width: Optional[int] = None
    speed_downgraded: Optional[bool] = None  # lspci's own "(downgraded)" mark (pciutils >= 3.7)
    width_downgraded: Optional[bool] = None


def version() -> _run.ToolVersion:
    """'lspci version 3.9.0' -> (3, 9): major.minor is what device records keep."""
    return _run.get_version(PROGRAM, ["--version"], r"lspci version (\d+)\.(\d+)")


def available() -> bool:
    return _run.which(PROGRAM) is not None


def argv(address: str) -> List[str]:
    return [PROGRAM, "-vv", "-s", address]


def _full_address(address: str) -> str:
    """'01:00.0' -> '0000:01:00.0': lspci leaves out the PCI domain when every device is in domain 0
    (and sysfs, or a user, may give it either way); hex digits in lower case."""
    a = address.strip().lower()
    return "0000:" + a if re.fullmatch(r"[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", a) else a


def parse(text: str, address: Optional[str] = None) -> Optional[PcieLink]:
    """The link of the first function in text (or of address, with or without its domain: 01:00.0 is
    0000:01:00.0, never 0001:01:00.0). None when no LnkCap/LnkSta is there."""
    blocks: List[tuple] = []
    cur_addr, cur_lines = None, []
    for line in (text or "").splitlines():
        m = _FUNC_RE.match(line)
        if m:
            if cur_lines:
                blocks.append((cur_addr, cur_lines))
            cur_addr = (m.group(1) + ":" if m.group(1) else "") + m.group(2)
            cur_lines = []
        else:
            cur_lines.append(line)
    if cur_lines:
        blocks.append((cur_addr, cur_lines))
    for addr, lines in blocks:
        if address and addr and _full_address(addr) != _full_address(address):
            continue
        body = "\n".join(lines)
        cap, sta = _CAP_RE.search(body), _STA_RE.search(body)
        if not cap and not sta:
            continue
        link = PcieLink(address=addr or address)
        if cap:
            link.cap_gts, link.cap_width = float(cap.group(1)), int(cap.group(2))
        if sta:
            link.sta_gts, link.sta_width = float(sta.group(1)), int(sta.group(3))
            link.speed_downgraded = bool(sta.group(2))
            link.width_downgraded = bool(sta.group(4))
        return link
    return None


def link(address: str) -> Optional[PcieLink]:
    """The function's link; None when lspci shows it without LnkCap/LnkSta (conventional PCI, a
    virtual function). ToolFailedError/ToolTimeoutError when lspci fails or hangs."""
    proc = _run.run(argv(address), timeout=30, typed_timeout=True, check=True)
    return _run.parse_output(proc, parse, address)
