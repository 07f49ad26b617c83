r"""lspci (pciutils): PCIe link capability (LnkCap) and status (LnkSta) of one function, and the tree
of functions (``lspci -tv``) that names them.

``lspci -vv -s ADDR`` (root sees the capability registers). Used when sysfs
lacks ``current_link_speed`` (old kernels) and to double-check it. The parser
accepts whole ``-vv`` dumps, ``| grep -i width`` extracts and outputs of
several functions (it reads the first function unless an address is given).
Only this module spawns lspci.

``lspci -tv`` draws the buses as a tree (pciutils ls-tree.c): ``-[0000:00]-`` a root bus
(``+-[0000:20]-`` and ``\-[0000:e0]-`` when there are several), ``DD.F`` a function on the bus to its
left, ``DD.F-[SS-UU]-`` a bridge whose secondary bus (``SS``) follows it on the same line; a bus's
functions hang off one column (``+-`` every one but the last, ``\-`` the last, ``--`` an only one),
continued on lines whose ``|`` keep the columns. Only functions that are not bridges are named:
root ports and switch ports show as addresses alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from slogqual.tools import spawn as _run

PROGRAM = "lspci"

_FUNC_RE = re.compile(r"^(?:([0-9a-fA-F]{4}):)?([0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s")
_CAP_RE = re.compile(r"LnkCap:.*?Speed\s+([0-9.]+)\s*GT/s.*?Width\s+x([0-9]+)", re.IGNORECASE)
_STA_RE = re.compile(r"LnkSta:.*?Speed\s+([0-9.]+)\s*GT/s(\s*\(downgraded\))?.*?Width\s+x([0-9]+)(\s*\(downgraded\))?",
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


_ADDR_RE = re.compile(r"(?:([0-9a-f]{1,4}):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})\.0*([0-7])")


def _full_address(address: str) -> str:
    """'01:00.0' -> '0000:01:00.0': lspci leaves out the PCI domain when every device is in domain 0
    (and sysfs, or a user, may give it either way). Read as ``lspci -s`` reads a slot: each part in hex
    with as many digits as given ('6:0.0' and '06:00.00' are 06:00.0, pciutils 3.9 here); written with
    lspci's widths, in lower case. Anything else (a wildcard) is returned as it is."""
    a = address.strip().lower()
    m = _ADDR_RE.fullmatch(a)
    if not m:
        return a
    domain, bus, device, function = m.groups()
    return f"{int(domain or '0', 16):04x}:{int(bus, 16):02x}:{int(device, 16):02x}.{function}"


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


# --- lspci -tv ---------------------------------------------------------------------------------------------

_ROOT_RE = re.compile(r"\[(?:([0-9a-fA-F]{1,4}):)?([0-9a-fA-F]{1,2})\]")
_DEV_RE = re.compile(r"([0-9a-fA-F]{2})\.([0-7])(?:-\[([0-9a-fA-F]{2})(?:-([0-9a-fA-F]{2}))?\])?")


@dataclass
class TreeFunction:
    address: str  # 0000:05:00.0
    name: Optional[str]  # "Samsung Electronics Co Ltd NVMe SSD Controller ..."; None for a bridge
    parent: Optional[str]  # the bridge it sits behind; None on a root bus
    buses: Optional[Tuple[int, int]] = None  # a bridge's secondary and subordinate bus


def argv_tree() -> List[str]:
    return [PROGRAM, "-tv"]


def _tree_line(line: str, bus_at: Dict[int, Tuple[int, int, Optional[str]]], out: Dict[str, TreeFunction]) -> None:
    """One line of the tree into ``out``. ``bus_at``: per column of a ``+-``/``\\-``/``--``, the bus
    (domain, number) whose functions hang there and the bridge that bus is behind."""
    bus: Optional[Tuple[int, int, Optional[str]]] = None  # opened to the left on this line
    pos = 0
    while pos < len(line):
        ch = line[pos]
        if ch in " |+\\-":
            pos += 1
            continue
        if ch == "[" and bus is None:
            m = _ROOT_RE.match(line, pos)
            if not m:
                return
            bus = (int(m.group(1) or "0", 16), int(m.group(2), 16), None)
            pos = m.end()
            continue
        m = _DEV_RE.match(line, pos)
        if not m:
            return
        here = bus if bus is not None else bus_at.get(pos - 2)
        if here is None:
            return
        bus_at[pos - 2] = here
        domain, number, parent = here
        address = f"{domain:04x}:{number:02x}:{m.group(1).lower()}.{m.group(2)}"
        if m.group(3):
            secondary = int(m.group(3), 16)
            out[address] = TreeFunction(address, None, parent, (secondary, int(m.group(4) or m.group(3), 16)))
            bus = (domain, secondary, address)
            pos = m.end()
            continue
        name = line[m.end():].strip()
        out[address] = TreeFunction(address, name or None, parent)
        return


def parse_tree(text: str) -> Dict[str, TreeFunction]:
    """``lspci -tv`` (or ``-t``, names then None; a ``grep`` of it keeps what it kept): every function by
    its full address. ValueError when no root bus is found."""
    out: Dict[str, TreeFunction] = {}
    bus_at: Dict[int, Tuple[int, int, Optional[str]]] = {}
    for line in (text or "").splitlines():
        _tree_line(line.rstrip(), bus_at, out)
    if not out:
        raise ValueError("no lspci -t tree (no '-[DDDD:BB]-' root bus) found")
    return out


def behind(tree: Dict[str, TreeFunction], bridge: str) -> List[TreeFunction]:
    """The named functions below a bridge, at any depth, in the tree's order."""
    out = []
    for f in tree.values():
        up = f.parent
        while up is not None and up != bridge:
            up = tree[up].parent if up in tree else None
        if up == bridge and f.name:
            out.append(f)
    return out


def describe(tree: Dict[str, TreeFunction], address: str) -> Optional[str]:
    """What to call a function: its name; for a bridge, what is behind it ("behind it: 4 × Samsung ...");
    None when the tree does not hold it or nothing named is behind it."""
    f = tree.get(_full_address(address))
    if f is None:
        return None
    if f.name:
        return f.name
    counts: Dict[str, int] = {}
    for g in behind(tree, f.address):
        counts[g.name] = counts.get(g.name, 0) + 1
    if not counts:
        return None
    return "behind it: " + ", ".join(f"{n} × {name}" if n > 1 else name for name, n in counts.items())


def tree() -> Dict[str, TreeFunction]:
    """This host's ``lspci -tv``. ToolMissingError/ToolFailedError/ToolTimeoutError as run.run raises them."""
    proc = _run.run(argv_tree(), timeout=30, typed_timeout=True, check=True)
    return _run.parse_output(proc, parse_tree)
