"""The path from the host to a FreeBSD disk (issue #30): the UnitPath device/topology.py reads from
sysfs on Linux, read here from three programs' output.

- ``camcontrol devlist -v``: the CAM bus a disk (daN, adaN, ndaN) is on and that bus's SIM — the HBA's
  driver instance (mpr0, mps0, arcmsr0, mrsas1), one AHCI port (ahcich3), the NVMe controller (nvme0).
  The SIM is the SCSI host of the path: every unit behind one mpr0 shares it. An nvdN disk is not on
  CAM; it is namespace 1 of controller nvmeN (device/freebsd.py, nvme_controller).
- ``devinfo -rv``: the newbus tree above the SIM: the PCI function it is (mpr0, nvme0) or hangs off
  (ahcich3 off ahci0), the bridges above that (root ports, switch ports: ``pcibN`` with a PCI location)
  and the host bridge (the ``pcibN`` a top ``pciN`` bus hangs off, at an ACPI handle, no PCI location).
- ``pciconf -lvc``: each PCI function's names and its PCI Express link, found by the selector devinfo
  gives it (``dbsf=pci0:1:0:0``): ``link x4(x8) speed 8.0(8.0)``, negotiated width and speed (GT/s)
  with the maximum in parentheses. On a root or downstream port that is the link below it.

Elements: PCI host bridge, bridges, the PCI function, then the SIM (an NVMe controller for nda/nvd).
Keys: a PCI function by its selector, the host bridge by its newbus name, ``sim:NAME``,
``nvme:NAME``: the same element has the same key on every unit's path, which is all analysis/shelf.py
needs. Without devinfo the PCI function is found by the SIM's own name in pciconf (mpr0, nvme0:
the same driver instance), without its bridges; what stays unknown is said in ``notes``.

:func:`build` does no I/O (tested on recorded outputs); :func:`walk` runs the programs through a
tools/freebsd/host.Host (the live one, or recorded outputs in the tests).
"""

from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Optional

from slogqual.device.freebsd import nvme_controller
from slogqual.errors import ToolError
from slogqual.results.shelf import (NVME_CONTROLLER, PCI_BRIDGE, PCI_FUNCTION, PCI_HOST, SCSI_HOST, Element, Link,
                                    UnitPath)
from slogqual.tools.freebsd import camcontrol, devinfo, pciconf
from slogqual.tools.freebsd.host import LIVE, Host

_DISK = re.compile(r"^((?:da|ada|nda|nvd)\d+)")
_PCI_BUS = re.compile(r"^pci\d+$")
PCI_BRIDGE_CLASS = "0x0604"  # class 06 (bridge), subclass 04 (PCI-to-PCI): root ports, switch ports


def disk_of(name: str) -> Optional[str]:
    """da0 of da0, da0p1, da0s1a; None for what is not a disk of these kinds (md0, a label)."""
    m = _DISK.match(name)
    return m.group(1) if m else None


def _parsed(parse, text: Optional[str], tool: str, notes: List[str]):
    if text is None:
        return None
    try:
        return parse(text)
    except ValueError as exc:
        notes.append(f"{tool}: {exc}")
        return None


def link_of(dev: pciconf.PciDevice) -> Optional[Link]:
    """A PCI function's PCI Express link as pciconf -lvc prints it; None without the capability."""
    x = dev.pcie
    if x is None or (x.width is None and x.speed_gts is None):
        return None
    # a port with nothing trained below it prints x0 and speed 0.0: unknown, never a rate of 0
    return Link("pcie", x.speed_gts or None, x.width or None, x.max_speed_gts or None, x.max_width or None,
                evidence=f"pciconf -lvc {dev.name}@{dev.selector}: {x.text}")


def _pci_element(name: str, selector: str, pci: Dict[str, pciconf.PciDevice], pnp_class: Optional[str]) -> Element:
    dev = pci.get(selector)
    cls = pnp_class or None
    kind = PCI_BRIDGE if cls and cls.lower().startswith(PCI_BRIDGE_CLASS) else PCI_FUNCTION
    if dev is None:
        return Element(kind, f"{name}@{selector}", selector, pci_class=cls)
    words = " ".join(w for w in (dev.fields.get("vendor"), dev.fields.get("device")) if w)
    return Element(kind, f"{name}@{selector}", selector, link_of(dev), pci_class=cls, description=words or None)


def _chain(node: devinfo.Device, pci: Dict[str, pciconf.PciDevice]) -> List[Element]:
    """The host bridge, the bridges and the PCI function on the way down to ``node`` (itself included
    when it is a PCI function): newbus devices with a PCI location, and the parent of the top pci bus."""
    out: List[Element] = []
    for dev in node.ancestors() + [node]:
        if _PCI_BUS.match(dev.name) and dev.parent is not None and dev.parent.selector is None and not out:
            out.append(Element(PCI_HOST, dev.parent.name, dev.parent.name))
        elif dev.selector:
            out.append(_pci_element(dev.name, dev.selector, pci, dev.pnpinfo.get("class")))
    return out


def pci_elements(owner: str, tree: Optional[List[devinfo.Device]], pci: Optional[List[pciconf.PciDevice]],
                 unit: UnitPath) -> List[Element]:
    """The PCI elements down to the SIM or NVMe controller ``owner`` (its newbus name: ahcich0, mpr0),
    from devinfo's tree and pciconf's functions (None: not run); what stays unknown goes to
    ``unit.notes``, the newbus path to ``unit.syspath``."""
    by_selector = {d.selector: d for d in pci or []}
    node = devinfo.find(tree, owner) if tree is not None else None
    if node is not None:
        unit.syspath = "/".join(d.name for d in node.ancestors() + [node])
        chain = _chain(node, by_selector)
        if pci is None:
            unit.notes.append("pciconf -lvc gave nothing: the PCI links are unknown")
        if not chain:
            unit.notes.append(f"devinfo shows no PCI device above {owner}")
        return chain
    unit.notes.append(f"devinfo -rv lists no {owner}: the bridges above it are unknown" if tree is not None
                      else f"devinfo -rv gave nothing: the bridges above {owner} are unknown")
    same = next((d for d in pci or [] if d.name == owner), None)
    if same is not None:  # a driver instance that is itself the PCI function: mpr0, nvme0, arcmsr0
        return [_pci_element(same.name, same.selector, by_selector, None)]
    unit.notes.append(f"the PCI function of {owner} is unknown: " +
                      (f"pciconf -lvc lists no {owner}" if pci is not None else "pciconf -lvc gave nothing"))
    return []


def build(device: str, devlist_text: Optional[str] = None, devinfo_text: Optional[str] = None,
          pciconf_text: Optional[str] = None) -> UnitPath:
    """The path of ``device`` (/dev/da0) from the programs' outputs; None: that program did not run or
    failed. What the outputs leave unknown is in ``notes``; no path at all is ``error``."""
    unit = UnitPath(device=device)
    disk = disk_of(os.path.basename(device))
    if disk is None:
        unit.error = f"{device} is not a da, ada, nda or nvd disk: its path is unknown"
        return unit
    buses = _parsed(camcontrol.parse_devlist, devlist_text, "camcontrol devlist -v", unit.notes)
    tree = _parsed(devinfo.parse, devinfo_text, "devinfo -rv", unit.notes)
    pci = _parsed(pciconf.parse, pciconf_text, "pciconf -lvc", unit.notes)
    bus = camcontrol.bus_of(buses, disk) if buses is not None else None
    if disk.startswith(("nvd", "nda")):
        # nda's SIM is its controller; nvd is not on CAM
        owner = bus.sim if bus is not None else nvme_controller(disk)
        if bus is None:
            unit.notes.append(f"{disk} taken to be namespace 1 of {owner} (the usual single namespace)")
        last = Element(NVME_CONTROLLER, owner, f"nvme:{owner}")
    elif bus is None:
        unit.error = (f"camcontrol devlist -v lists no {disk}: its path is unknown" if buses is not None
                      else f"camcontrol devlist -v gave nothing: the path of {disk} is unknown")
        return unit
    else:
        owner = bus.sim
        last = Element(SCSI_HOST, owner, f"sim:{owner}", description=f"scbus{bus.scbus}, bus {bus.sim_bus}")
    unit.elements = pci_elements(owner, tree, pci, unit) + [last]
    return unit


def _output(host: Host, argv: List[str], tool: str, notes: List[str]) -> Optional[str]:
    """argv's stdout; None (and a note) when the program is missing, hangs or fails."""
    try:
        proc = host.run(argv)
    except ToolError as exc:
        notes.append(f"{tool}: {exc}")
        return None
    if proc.returncode != 0:
        err = (proc.stderr or "").strip().splitlines()
        notes.append(f"{tool} failed: " + (err[-1] if err else f"exit {proc.returncode}"))
        return None
    return proc.stdout


def walk(path: str, host: Optional[Host] = None) -> UnitPath:
    """The path of the disk at ``path`` on a FreeBSD host (the live one unless given)."""
    host = host or LIVE
    name = os.path.basename(path)
    notes: List[str] = []
    disk = disk_of(name)
    devlist = (_output(host, camcontrol.argv_devlist(), "camcontrol devlist -v", notes)
               if disk is not None and not disk.startswith("nvd") else None)
    tree = _output(host, devinfo.argv(), "devinfo -rv", notes) if disk is not None else None
    pci = _output(host, pciconf.argv(), "pciconf -lvc", notes) if disk is not None else None
    unit = build(path, devlist, tree, pci)
    unit.notes[:0] = notes
    return unit


def recorded(path: str, host: Optional[Host] = None) -> Dict[str, Any]:
    """walk as a result keeps it (``pool.devices[dev].topology``)."""
    return walk(path, host).to_dict()
