"""ctladm(8) (FreeBSD base): ``ctladm devlist -v``, the CTL LUNs with their backends and options.

usr.sbin/ctladm/ctladm.c prints a header (``LUN Backend  Size (Blocks)  BS Serial Number  Device ID``),
then per LUN ``%3s %-13s %18s %4s %-16s %-16s`` (the serial number and device ID are 16 columns wide and
may hold spaces: ``MYSERIAL   0``), and with ``-v`` each LUN option indented on its own line as
``name=value`` (``lun_type=0``, ``file=/dev/zvol/...``, ``ctld_name=IQN,lun,0``, ``writecache=off``).
Read back after ctld started our target, it says which backing file each LUN serves and with which
options CTL runs it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

PROGRAM = "ctladm"

_HEADER = re.compile(r"^\s*LUN\s+Backend\s+Size \(Blocks\)\s+BS\s+Serial Number\s+Device ID\s*$")
_LUN = re.compile(r"^\s*([0-9]+) (\S+)\s+([0-9]+)\s+([0-9]+) (.*)$")
_OPTION = re.compile(r"^\s+([A-Za-z_][A-Za-z0-9_.-]*)=(.*)$")
_ID_WIDTH = 16  # %-16s serial number, then one space


@dataclass
class CtlLun:
    lun: int
    backend: str  # block | ramdisk
    size_blocks: int
    blocksize: int
    serial: str
    device_id: str
    options: Dict[str, str] = field(default_factory=dict)

    @property
    def size_bytes(self) -> int:
        return self.size_blocks * self.blocksize

    @property
    def file(self) -> Optional[str]:
        """The backing store of a block-backend LUN (its ``file`` option)."""
        return self.options.get("file")


def devlist_argv() -> List[str]:
    return [PROGRAM, "devlist", "-v"]


def parse_devlist(text: str) -> List[CtlLun]:
    """``ctladm devlist`` with or without ``-v``; the header may be missing (a pasted excerpt). ValueError
    on empty text, a line that is neither a LUN nor an option, or an option before any LUN."""
    lines = [ln.rstrip("\n") for ln in (text or "").splitlines() if ln.strip()]
    if lines and _HEADER.match(lines[0]):
        lines = lines[1:]
    elif not lines:
        raise ValueError("empty ctladm devlist output")
    luns: List[CtlLun] = []
    for line in lines:
        m = _LUN.match(line)
        if m and not _OPTION.match(line):
            rest = m.group(5)
            luns.append(CtlLun(int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4)),
                               rest[:_ID_WIDTH].strip(), rest[_ID_WIDTH + 1:].strip()))
            continue
        o = _OPTION.match(line)
        if not o or not luns:
            raise ValueError(f"ctladm devlist: unexpected line {line.strip()[:80]!r}")
        luns[-1].options[o.group(1)] = o.group(2).strip()
    return luns
