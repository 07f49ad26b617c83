"""devinfo(8): ``devinfo -rv``, the newbus device tree — which device each device hangs off.

Each device is a line indented two spaces per level below its parent (usr.sbin/devinfo/devinfo.c,
print_device): its name (``unknown`` when no driver attached), then with -v ``pnpinfo KEY=VALUE ...``
and ``at KEY=VALUE ...`` (its location; a PCI function's carries ``dbsf=pci0:1:0:0``, the selector
pciconf names it by), then `` (disabled)`` or `` (suspended)``. -r adds each device's resources below
it, a header ending in ``:`` at four spaces more and the ranges (``0xa0b00000-0xa0bfffff``, ``5-155``)
at eight: those are skipped here. -r is asked for because the one real capture found is ``-rv``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from slogqual.tools import spawn as _run

PROGRAM = "devinfo"

_DEVICE = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)(?: pnpinfo (?P<pnp>.*?))?(?: at (?P<loc>.*?))?"
                     r"(?: \((?P<state>disabled|suspended)\))?$")
_RANGE = re.compile(r"^(?:0x[0-9a-fA-F]+|[0-9]+)(?:-(?:0x[0-9a-fA-F]+|[0-9]+))?$")


@dataclass
class Device:
    name: str  # ahci0, pcib1, pci1, unknown
    indent: int  # spaces before the name: two per level below the root
    pnpinfo: Dict[str, str] = field(default_factory=dict)
    location: Dict[str, str] = field(default_factory=dict)
    state: Optional[str] = None  # disabled, suspended
    parent: Optional["Device"] = field(default=None, repr=False, compare=False)

    @property
    def selector(self) -> Optional[str]:
        """A PCI function's pciconf selector (pci0:1:0:0), from its location's dbsf."""
        return self.location.get("dbsf")

    def ancestors(self) -> List["Device"]:
        """From the root down to this device's parent."""
        out: List[Device] = []
        node = self.parent
        while node is not None:
            out.append(node)
            node = node.parent
        return out[::-1]


def argv() -> List[str]:
    return [PROGRAM, "-rv"]


def _pairs(text: Optional[str]) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for token in (text or "").split():
        key, sep, value = token.partition("=")
        if sep:
            out[key] = value.strip('"')
    return out


def parse(text: str) -> List[Device]:
    """Every device, parents before their children. ValueError when no device line is found."""
    devices: List[Device] = []
    stack: List[Device] = []
    for raw in (text or "").splitlines():
        content = raw.strip()
        if not content or content.endswith(":") or _RANGE.match(content):
            continue  # a resource header or range (-r)
        m = _DEVICE.match(content)
        if not m:
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        while stack and stack[-1].indent >= indent:
            stack.pop()
        dev = Device(m.group("name"), indent, _pairs(m.group("pnp")), _pairs(m.group("loc")), m.group("state"),
                     parent=stack[-1] if stack else None)
        devices.append(dev)
        stack.append(dev)
    if not devices:
        raise ValueError("no devinfo device lines found")
    return devices


def find(devices: List[Device], name: str) -> Optional[Device]:
    """The device named name (ahcich0, mpr0); ``unknown`` names no one device."""
    if name == "unknown":
        return None
    return next((d for d in devices if d.name == name), None)


def tree(host=None) -> List[Device]:
    from slogqual.tools.freebsd.host import LIVE

    proc = (host or LIVE).run(argv())
    if proc.returncode != 0:
        raise _run.failure(proc.args, proc.returncode, proc.stderr, proc.stdout)
    return _run.parse_output(proc, parse)
