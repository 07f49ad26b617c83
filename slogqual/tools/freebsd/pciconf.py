"""pciconf(8): ``pciconf -lvc``, every PCI function with its names and capabilities.

A device line ``nvme0@pci0:1:0:0:<tab>class=0x010802 ...`` (the driver unit, or ``noneN``, then
the selector), then indented ``key = 'value'`` lines (-v: vendor, device, class, subclass) and
capability lines (-c). The PCI Express capability (usr.sbin/pciconf/cap.c, cap_express) reads
``cap 10[70] = PCI-Express 2 endpoint max data 256(2048) FLR NS`` and, on continuation lines
(older releases print them on the first), ``link x8(x8) speed 5.0(8.0) ASPM ...``: the negotiated
width and speed (GT/s) with the maximum the link supports in parentheses. The "2" is the
capability structure's version, not the PCIe generation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from slogqual.tools import spawn as _run

PROGRAM = "pciconf"

_DEVICE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*?)([0-9]+)@(pci[0-9:]+?):?\s+(\S.*)?$")
_FIELD = re.compile(r"^\s+(vendor|device|class|subclass)\s+=\s+'?(.*?)'?\s*$")
_CAP = re.compile(r"^\s+(e?cap)\s+([0-9a-fA-F]+)\[[0-9a-fA-F]+\]\s*=?\s*(.*)$")
_LINK = re.compile(r"link\s+x([0-9]+)\(x([0-9]+)\)")
_SPEED = re.compile(r"speed\s+([0-9.]+)\(([0-9.]+)\)")
_EXPRESS = re.compile(r"PCI-Express\s+([0-9]+)\s+(.+?)\s+max data")


@dataclass
class PcieLink:
    port_type: str  # endpoint, root port, legacy endpoint, ...
    width: Optional[int] = None  # negotiated lanes
    max_width: Optional[int] = None
    speed_gts: Optional[float] = None  # negotiated GT/s
    max_speed_gts: Optional[float] = None
    text: str = ""  # the capability as printed, lines joined


@dataclass
class PciDevice:
    name: str  # nvme0, none3
    selector: str  # pci0:1:0:0
    fields: Dict[str, str] = field(default_factory=dict)
    pcie: Optional[PcieLink] = None


def argv() -> List[str]:
    return [PROGRAM, "-lvc"]


def _finish(dev: Optional[PciDevice], cap: List[str]) -> None:
    if dev is None or not cap:
        return
    text = " ".join(" ".join(cap).split())
    m = _EXPRESS.search(text)
    if not m:
        return
    link = PcieLink(port_type=m.group(2), text=text)
    lm = _LINK.search(text)
    if lm:
        link.width, link.max_width = int(lm.group(1)), int(lm.group(2))
    sm = _SPEED.search(text)
    if sm:
        link.speed_gts, link.max_speed_gts = float(sm.group(1)), float(sm.group(2))
    dev.pcie = link


def parse(text: str) -> List[PciDevice]:
    """ValueError when no device line is found."""
    devices: List[PciDevice] = []
    cur: Optional[PciDevice] = None
    cap: List[str] = []  # the PCI Express capability's lines, while in it
    for raw in (text or "").splitlines():
        if not raw.strip():
            continue
        m = _DEVICE.match(raw)
        if m and not raw[0].isspace():
            _finish(cur, cap)
            cap = []
            cur = PciDevice(name=m.group(1) + m.group(2), selector=m.group(3).rstrip(":"))
            devices.append(cur)
            continue
        if cur is None:
            continue
        m = _CAP.match(raw)
        if m:
            _finish(cur, cap)
            cap = [m.group(3)] if m.group(1) == "cap" and m.group(2) == "10" else []
            continue
        m = _FIELD.match(raw)
        if m and not cap:
            cur.fields.setdefault(m.group(1), m.group(2))
            continue
        if cap:
            cap.append(raw.strip())
    _finish(cur, cap)
    if not devices:
        raise ValueError("no pciconf device lines ('name@pciD:B:S:F: class=...') found")
    return devices


def devices(host=None) -> List[PciDevice]:
    from slogqual.tools.freebsd.host import LIVE

    proc = (host or LIVE).run(argv())
    if proc.returncode != 0:
        raise _run.failure(proc.args, proc.returncode, proc.stderr, proc.stdout)
    return _run.parse_output(proc, parse)
