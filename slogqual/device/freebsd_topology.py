"""The path from the host to a FreeBSD disk (issue #30): the UnitPath device/topology.py reads from
sysfs on Linux, read here from the output of camcontrol, devinfo and pciconf.

- ``camcontrol devlist -v``: the CAM bus a disk (daN, adaN, ndaN) is on and that bus's SIM — the HBA's
  driver instance (mpr0, mps0, arcmsr0, mrsas1), one AHCI port (ahcich3), the NVMe controller (nvme0).
  The SIM is the SCSI host of the path: every unit behind one mpr0 shares it. An nvdN disk is not on
  CAM; it is namespace 1 of controller nvmeN (tools/freebsd/nvmecontrol.py, controller_of).
- ``devinfo -rv``: the newbus tree above the SIM: the PCI function it is (mpr0, nvme0) or hangs off
  (ahcich3 off ahci0), the bridges above that (root ports, switch ports: ``pcibN`` with a PCI location)
  and the host bridge (the ``pcibN`` a top ``pciN`` bus hangs off, at an ACPI handle, no PCI location).
- ``pciconf -lvc``: each PCI function's names and its PCI Express link, found by the selector devinfo
  gives it (``dbsf=pci0:1:0:0``): ``link x4(x8) speed 8.0(8.0)``, negotiated width and speed (GT/s)
  with the maximum in parentheses. On a root or downstream port that is the link below it.
- the disk's own link, from the announce lines ``camcontrol identify adaN`` (or ``inquiry daN``) prints
  first: ``600.000MB/s transfers (SATA 3.x, UDMA6, PIO 8192bytes)``, CAM's current transfer settings of
  the disk (sbin/camcontrol/camcontrol.c, camxferrate). On an ATA channel the revision in parentheses is
  the negotiated SATA link: ahci(4) reads it from the port's SStatus (SPD) for a disk without a port
  multiplier (sys/dev/ahci/ahci.c, XPT_GET_TRAN_SETTINGS); the rate is that revision's. Behind mpr(4)
  or mps(4) the rate is the one the disk's phy negotiated (sys/dev/mpr/mpr_sas.c: the target's
  linkrate, 150000 to 1200000 kbit/s, printed as 150.000 to 1200.000 MB/s). What the device itself can
  do is its announce: ``ACS-3 ATA SATA 3.x device`` (the ATA IDENTIFY data).

Elements: PCI host bridge, bridges, the PCI function, then for adaN the ATA channel with its link (Linux's
``ataN``; the SIM of an ahci, ata, siis or mvs channel is that one port), the SIM (an NVMe controller for
nda/nvd), and for daN behind mpr/mps the target's port with its link (Linux's ``port-H:N``).
Keys: a PCI function by its selector, the host bridge by its newbus name, ``sim:NAME``,
``nvme:NAME``, ``ata:SIM`` (``ata:SIM:TARGET`` behind a port multiplier), ``sas:SIM:BUS:TARGET``: the same
element has the same key on every unit's path, which is all analysis/shelf.py needs. Without devinfo
the PCI function is found by the SIM's own name in pciconf (mpr0, nvme0: the same driver instance),
without its bridges; what stays unknown is said in ``notes``. ``source`` is ``camcontrol``.

:func:`build` does no I/O (tested on recorded outputs); :func:`walk` runs the programs through a
tools/freebsd/host.Host (the live one, or recorded outputs in the tests).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from slogqual.device import classify as C
from slogqual.errors import ToolError
from slogqual.results.shelf import (ATA_PORT, NVME_CONTROLLER, PCI_BRIDGE, PCI_FUNCTION, PCI_HOST, SAS_PORT,
                                    SCSI_HOST, SOURCE_CAMCONTROL, Element, Link, UnitPath)
from slogqual.tools.freebsd import camcontrol, devinfo, nvmecontrol, pciconf
from slogqual.tools.freebsd.host import LIVE, Host

_DISK = re.compile(r"^((?:da|ada|nda|nvd)\d+)")
_PCI_BUS = re.compile(r"^pci\d+$")
PCI_BRIDGE_CLASS = "0x0604"  # class 06 (bridge), subclass 04 (PCI-to-PCI): root ports, switch ports
# SIMs that are one ATA channel each: ahci(4) and siis(4) and mvs(4) ports, ata(4) channels
_ATA_CHANNEL = re.compile(r"^(?:ahcich|ata|siisch|mvsch)\d+$")
# SAS HBAs whose transfer settings are each target's negotiated link rate (mpr_sas.c, mps_sas.c)
_SAS_RATES = re.compile(r"^(?:mpr|mps)\d+$")
# what mpr and mps print for a target whose rate they do not know: their base transfer speed, 150000 kbit/s,
# the same figure as a 1.5 Gbit/s link, so never taken for one
_SAS_BASE_MBPS = 150.0
_REVISION = re.compile(r"\bSATA (\d)\.x\b")


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


# --- the disk's own link: its announce lines (camcontrol identify / inquiry) ------------------------------

def transfers(cam: camcontrol.CamInfo) -> str:
    """The announce's transfers line as camcontrol prints it: ``600.000MB/s transfers (SATA 3.x, ...)``."""
    line = f"{cam.transfer_mbps:.3f}MB/s transfers" if cam.transfer_mbps is not None else "no transfers line"
    return line + (f" ({cam.transfer_detail})" if cam.transfer_detail else "")


def device_generation(cam: camcontrol.CamInfo) -> Optional[float]:
    """The fastest SATA generation the device itself announces (``ACS-3 ATA SATA 3.x device``), Gbit/s."""
    m = _REVISION.search(cam.device_kind or "")
    return camcontrol.SATA_REVISION_GBPS.get(m.group(1)) if m else None


def sata_link(cam: camcontrol.CamInfo, tool: str) -> Optional[Link]:
    """An ATA channel's SATA link: the revision in the transfers line's parentheses (the rate of that
    revision), the device's own generation as the most it could do. None without a revision: parallel ATA
    (``WDMA2, PIO 8192bytes``) or a SIM that gave none (``SATA, ...`` at its base speed)."""
    m = _REVISION.search(cam.transfer_detail or "")
    if cam.transfer_mbps is None or m is None:
        return None
    rate = camcontrol.SATA_REVISION_GBPS.get(m.group(1))
    return Link("sata", rate, 1 if rate else None, device_generation(cam), 1,
                evidence=f"{tool}: {transfers(cam)}; the device: {cam.device_kind or 'announced no SATA generation'}")


def sas_link(cam: camcontrol.CamInfo, tool: str) -> Optional[Link]:
    """A target's link behind mpr/mps: the rate its phy negotiated (600.000 MB/s: 6 Gbit/s), against the
    device's own SATA generation where it announces one. None at the HBA's base speed (unknown)."""
    mbps = cam.transfer_mbps
    if mbps is None or mbps <= _SAS_BASE_MBPS:
        return None
    mx = device_generation(cam)
    return Link("sas", C.parse_gbps(f"{mbps}MB/s"), 1, mx, 1 if mx else None,
                evidence=f"{tool}: {transfers(cam)}; the device: {cam.device_kind or 'not announced'}")


def _target_of(bus: camcontrol.CamBus, disk: str) -> int:
    return next(u.target for u in bus.units if disk in u.periphs)


def _no_link(disk: str, cam: Optional[camcontrol.CamInfo], tool: str) -> str:
    if cam is None:
        return f"{tool} gave nothing: the link of {disk} is unknown"
    return f"{tool} gives no negotiated rate ({transfers(cam)}): the link of {disk} is unknown"


def ata_port(disk: str, bus: camcontrol.CamBus, cam: Optional[camcontrol.CamInfo], tool: str,
             notes: List[str]) -> Optional[Element]:
    """The ATA channel adaN is on, with the link it negotiated (``cam``: the disk's identify; None: not
    run). A bus that holds more than the disk (a port multiplier and the disks behind it) gives each disk
    an element of its own: the link then is the one between it and the multiplier. None (and a note) on a
    SIM that is not an ATA channel slogqual knows."""
    if not _ATA_CHANNEL.match(bus.sim):
        notes.append(f"{disk} is on {bus.sim}, not an ahci, ata, siis or mvs channel: its link is unknown")
        return None
    shared = any(u.periphs and disk not in u.periphs for u in bus.units)
    target = _target_of(bus, disk)
    name, key = (f"{bus.sim} target {target}", f"ata:{bus.sim}:{target}") if shared else (bus.sim, f"ata:{bus.sim}")
    link = sata_link(cam, tool) if cam is not None else None
    if link is None:
        notes.append(_no_link(disk, cam, tool))
    return Element(ATA_PORT, name, key, link, description=f"scbus{bus.scbus} target {target}")


def sas_port(disk: str, bus: camcontrol.CamBus, cam: Optional[camcontrol.CamInfo], tool: str,
             notes: List[str]) -> Optional[Element]:
    """The port daN is attached by behind an mpr or mps HBA (the HBA's phy or an expander's), with the
    rate it negotiated; None on other SIMs, whose transfer rate is not shown to be the disk's link (a note
    says so when the disk's announce was read)."""
    if not _SAS_RATES.match(bus.sim):
        if cam is not None:
            notes.append(f"{disk} is on {bus.sim}: slogqual reads a disk's link behind mpr or mps only, so it is "
                         "unknown")
        return None
    target = _target_of(bus, disk)
    link = sas_link(cam, tool) if cam is not None else None
    if link is None:
        notes.append(_no_link(disk, cam, tool))
    return Element(SAS_PORT, f"{bus.sim} target {target}", f"sas:{bus.sim}:{bus.sim_bus}:{target}", link,
                   description=f"scbus{bus.scbus}, bus {bus.sim_bus}")


# --- the whole path -----------------------------------------------------------------------------------------

def cam_elements(disk: str, bus: camcontrol.CamBus, cam: Optional[camcontrol.CamInfo], tool: str,
                 notes: List[str]) -> List[Element]:
    """A da or ada disk's elements from its CAM bus down: the ATA channel (ada), the SIM, the SAS port (da)."""
    sim = Element(SCSI_HOST, bus.sim, f"sim:{bus.sim}", description=f"scbus{bus.scbus}, bus {bus.sim_bus}")
    port = ata_port if disk.startswith("ada") else sas_port
    own = port(disk, bus, cam, tool, notes)
    if own is None:
        return [sim]
    return [own, sim] if own.kind == ATA_PORT else [sim, own]


def build(device: str, devlist_text: Optional[str] = None, devinfo_text: Optional[str] = None,
          pciconf_text: Optional[str] = None, announce: Optional[camcontrol.CamInfo] = None,
          announce_tool: Optional[str] = None) -> UnitPath:
    """The path of ``device`` (/dev/da0) from the programs' outputs; None: that program did not run or
    failed. ``announce``: the disk's ``camcontrol identify`` (ada) or ``inquiry`` (da) parsed, whose
    transfers line is its link, ``announce_tool`` the command that printed it. What the outputs leave
    unknown is in ``notes``; no path at all is ``error``."""
    unit = UnitPath(device=device, source=SOURCE_CAMCONTROL)
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
        owner = bus.sim if bus is not None else nvmecontrol.controller_of(disk)
        if bus is None:
            unit.notes.append(f"{disk} taken to be namespace 1 of {owner} (the usual single namespace)")
        below = [Element(NVME_CONTROLLER, owner, f"nvme:{owner}")]
    elif bus is None:
        unit.error = (f"camcontrol devlist -v lists no {disk}: its path is unknown" if buses is not None
                      else f"camcontrol devlist -v gave nothing: the path of {disk} is unknown")
        return unit
    else:
        owner = bus.sim
        below = cam_elements(disk, bus, announce, announce_tool or f"camcontrol {announce_verb(disk)} {disk}",
                             unit.notes)
    unit.elements = pci_elements(owner, tree, pci, unit) + below
    return unit


def announce_verb(disk: str) -> str:
    """The camcontrol command whose announce lines carry the disk's link: identify (ATA), inquiry (SCSI)."""
    return "identify" if disk.startswith("ada") else "inquiry"


# --- the whole machine's programs: read once per run --------------------------------------------------------

# devinfo -rv and pciconf -lvc print the whole machine, the same for every disk of a run
MACHINE_WIDE = (tuple(devinfo.argv()), tuple(pciconf.argv()))
_Ran = Any  # a finished run (subprocess.CompletedProcess, from its door) or the ToolError it raised
_reading_lock = threading.Lock()
_reading: Optional[Dict[Tuple[Any, Tuple[str, ...]], _Ran]] = None  # (host, argv) -> what it gave, in a run
_depth = 0


@contextlib.contextmanager
def one_reading() -> Iterator[None]:
    """Within: a run. The machine-wide programs (MACHINE_WIDE) run once per host and what they gave (the
    output, or the error) serves every disk identified or walked; nested or overlapping runs share the
    reading. When the last run leaves, it is forgotten: outside, and in a long-lived process's next run, the
    programs run again, so a run never sees another run's machine."""
    global _reading, _depth
    with _reading_lock:
        _depth += 1
        if _reading is None:
            _reading = {}
    try:
        yield
    finally:
        with _reading_lock:
            _depth -= 1
            if _depth == 0:
                _reading = None


def machine_run(host: Any, argv: List[str], run: Callable[[], Any]) -> Any:
    """``run()``, argv's finished run on ``host``; for a machine-wide program within one_reading, the
    run's first answer (a ToolError raised again) for every later disk of that host."""
    key = (host, tuple(str(a) for a in argv))
    with _reading_lock:
        kept = _reading if key[1] in MACHINE_WIDE else None
        if kept is not None and key not in kept:
            try:
                kept[key] = run()
            except ToolError as exc:
                kept[key] = exc
        got = kept.get(key) if kept is not None else None
    if got is None:
        return run()
    if isinstance(got, ToolError):
        raise got
    return got


def _output(host: Host, argv: List[str], tool: str, notes: List[str]) -> Optional[str]:
    """argv's stdout; None (and a note) when the program is missing, hangs or fails."""
    try:
        proc = machine_run(host, argv, lambda: host.run(argv))
    except ToolError as exc:
        notes.append(f"{tool}: {exc}")
        return None
    if proc.returncode != 0:
        err = (proc.stderr or "").strip().splitlines()
        notes.append(f"{tool} failed: " + (err[-1] if err else f"exit {proc.returncode}"))
        return None
    return proc.stdout


Announce = Tuple[Optional[camcontrol.CamInfo], str]  # a disk's identify or inquiry parsed, and the command


def _announce(host: Host, disk: str, devlist: Optional[str], notes: List[str]) -> Announce:
    """The disk's identify (ada) or inquiry (da behind mpr/mps, the only SIMs whose rate is read) parsed,
    and the command; None where it is not asked, gave nothing or cannot be read (a note says which)."""
    tool = f"camcontrol {announce_verb(disk)} {disk}"
    if disk.startswith("da"):
        buses = _parsed(camcontrol.parse_devlist, devlist, "camcontrol devlist -v", [])
        bus = camcontrol.bus_of(buses, disk) if buses is not None else None
        if bus is None or not _SAS_RATES.match(bus.sim):
            return None, tool
    argv = camcontrol.argv_identify(disk) if disk.startswith("ada") else camcontrol.argv_inquiry(disk)
    return _parsed(camcontrol.parse, _output(host, argv, tool, notes), tool, notes), tool


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
    cam, tool = (_announce(host, disk, devlist, notes) if disk is not None and disk.startswith(("da", "ada"))
                 else (None, None))
    unit = build(path, devlist, tree, pci, cam, tool)
    unit.notes[:0] = notes
    return unit


def recorded(path: str, host: Optional[Host] = None) -> Dict[str, Any]:
    """walk as a result keeps it (``pool.devices[dev].topology``)."""
    return walk(path, host).to_dict()
