"""Device identification on FreeBSD: geom, diskinfo -v, camcontrol identify/inquiry, nvmecontrol identify,
pciconf -lvc; and the disk's path from the host (``topology``), from camcontrol devlist -v, devinfo -rv and
pciconf -lvc (device/freebsd_topology.py), as a Linux record carries the one sysfs shows.

:func:`build` turns the tools' outputs into a DeviceRecord and does no I/O, so
it is tested on recorded outputs; :func:`identify` runs the tools on a FreeBSD
host and hands their outputs to build(). A ``da`` disk whose inquiry shows an ATA
device (a SATA disk behind a SAS HBA: vendor "ATA") is also asked ``camcontrol
identify``, which gives its rotation and SATA link; an NVMe controller's PCIe link
comes from ``pciconf -lvc``. Each source's answers are its facts (camcontrol_facts, nvmecontrol_facts,
geom_facts, diskinfo_facts), merged by one table, PRECEDENCE, with device/facts.py's rules, as on Linux.
The safety interlocks are device/freebsd_safety.py (the facts; device/interlock.py the rules they share).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from slogqual.device import classify as C
from slogqual.device import facts as _facts
from slogqual.device import freebsd_topology
from slogqual.device.facts import FILL
from slogqual.device.record import DeviceRecord, Link, LinkEnd
from slogqual.errors import ToolError, UsageError
from slogqual.tools.freebsd import camcontrol, devinfo, diskinfo, geom, nvmecontrol, pciconf
from slogqual.tools.freebsd.host import LIVE


def transport_of(name: str, attachment: Optional[str] = None) -> str:
    if name.startswith("ada"):
        return "sata"
    if name.startswith(("nvd", "nda")):
        return "nvme"
    if name.startswith("vtbd"):
        return "virtio"
    if name.startswith("md"):
        return "ram"
    if name.startswith("pmem"):
        return "pmem"
    if name.startswith("da"):
        att = (attachment or "").lower()
        if att.startswith("umass"):
            return "usb"
        if re.match(r"(mpr|mps|mpt|mrsas|pmspcv|hpt)", att):
            return "sas"
        return "scsi"
    return "unknown"


# Who answers an identity field, per source, in the order they are merged (device/facts.py's rules):
# the drive's own answers come before the HBA's translation of them (camcontrol identify of a SATA disk
# behind a SAS HBA before its inquiry), the device's before the kernel's (geom and diskinfo repeat what
# the disk reported at attach).
_CAM_FIELDS = ("model", "serial", "firmware", "wwn", "logical_sector", "physical_sector", "capacity", "rotation_rate")
_GEOM_FIELDS = ("model", "serial", "capacity", "logical_sector", "physical_sector", "rotation_rate")
PRECEDENCE = {
    "camcontrol identify": {f: FILL for f in _CAM_FIELDS},
    "nvmecontrol": {f: FILL for f in ("model", "serial", "firmware")},
    "camcontrol": {f: FILL for f in _CAM_FIELDS},
    "geom": {f: FILL for f in _GEOM_FIELDS},
    "diskinfo": {f: FILL for f in _GEOM_FIELDS},
}


def camcontrol_facts(cam: camcontrol.CamInfo) -> Dict[str, Any]:
    """camcontrol identify (ATA) or inquiry (SCSI): the capacity from the sector count it reports."""
    return {"model": cam.model, "serial": cam.serial, "firmware": cam.firmware, "wwn": cam.wwn,
            "logical_sector": cam.logical_sector, "physical_sector": cam.physical_sector,
            "capacity": cam.logical_sector * cam.sectors if cam.logical_sector and cam.sectors else None,
            "rotation_rate": cam.media_rpm}


def nvmecontrol_facts(nv: nvmecontrol.NvmeIdentify) -> Dict[str, Any]:
    return {"model": nv.model, "serial": nv.serial, "firmware": nv.firmware}


def geom_facts(g: geom.GeomDisk) -> Dict[str, Any]:
    # a stripe size of 0 says nothing of the physical sector
    return {"model": g.descr, "serial": g.ident, "capacity": g.mediasize, "logical_sector": g.sectorsize,
            "physical_sector": g.stripesize or None, "rotation_rate": g.rotationrate}


def diskinfo_facts(di: diskinfo.DiskInfo) -> Dict[str, Any]:
    return {"model": di.descr, "serial": di.ident, "capacity": di.mediasize, "logical_sector": di.sectorsize,
            "physical_sector": di.stripesize or None, "rotation_rate": di.rotation_rate}


@dataclass
class Outputs:
    """The tools' outputs as build() is handed them (None: that tool was not run or not there)."""

    geom: Optional[str] = None
    diskinfo: Optional[str] = None
    camcontrol: Optional[str] = None  # the inquiry (da) or identify (ada)
    nvmecontrol: Optional[str] = None
    camcontrol_identify: Optional[str] = None  # of a da disk whose inquiry shows an ATA device
    pciconf: Optional[str] = None  # pciconf -lvc: an NVMe disk's link, and every disk's PCI path
    devlist: Optional[str] = None  # camcontrol devlist -v: the CAM bus and SIM of the disk's path
    devinfo: Optional[str] = None  # devinfo -rv: the bridges above the SIM


@dataclass
class Parsed:
    """What the outputs say, each None where its tool gave nothing readable."""

    geom: Optional[geom.GeomDisk] = None
    diskinfo: Optional[diskinfo.DiskInfo] = None
    camcontrol: Optional[camcontrol.CamInfo] = None
    nvmecontrol: Optional[nvmecontrol.NvmeIdentify] = None
    camcontrol_identify: Optional[camcontrol.CamInfo] = None
    pciconf: Optional[List[pciconf.PciDevice]] = None
    devlist: Optional[List[camcontrol.CamBus]] = None
    devinfo: Optional[List[devinfo.Device]] = None


def build(path: str, geom_text: Optional[str] = None, diskinfo_text: Optional[str] = None,
          camcontrol_text: Optional[str] = None, nvmecontrol_text: Optional[str] = None,
          tools: Optional[Dict[str, str]] = None, camcontrol_identify_text: Optional[str] = None,
          pciconf_text: Optional[str] = None, devlist_text: Optional[str] = None,
          devinfo_text: Optional[str] = None) -> DeviceRecord:
    """A record from whichever outputs are given (None = that tool was not available).
    camcontrol_text is the inquiry (da) or identify (ada) output; camcontrol_identify_text the identify
    of a da disk whose inquiry shows an ATA device; pciconf_text ``pciconf -lvc`` (an NVMe disk's link,
    and with devlist_text ``camcontrol devlist -v`` and devinfo_text ``devinfo -rv`` the disk's path)."""
    out = Outputs(geom_text, diskinfo_text, camcontrol_text, nvmecontrol_text, camcontrol_identify_text,
                  pciconf_text, devlist_text, devinfo_text)
    name = os.path.basename(path)
    rec = DeviceRecord(path=path, kind="block", name=name, platform="freebsd")
    rec.tools.update(tools or {})
    p = _parse(rec, name, out)
    _facts.merge_in_order(rec, PRECEDENCE, _answers(p))
    if rec.rotation_rate is not None:
        rec.rotational = rec.rotation_rate > 1
        rec.sources["rotational"] = rec.sources["rotation_rate"]
    _transport(rec, name, p)
    # the identify of a da disk: its announce lines carry the SATA generation and the negotiated rate
    cam = p.camcontrol_identify if p.camcontrol_identify and name.startswith("da") else p.camcontrol
    _device_class(rec)
    if cam and rec.transport == "sata":
        rec.link = _sata_link(cam)
    elif rec.transport == "nvme":
        rec.link = _pcie_link(name, p.pciconf, out.pciconf is not None)
    else:
        rec.link = Link(reason=f"no link information for a {rec.transport} device on FreeBSD")
    _write_cache(rec, p.nvmecontrol, cam)
    _unknowns(rec, out)
    verb = "identify" if (cam is not None and cam is p.camcontrol_identify) or name.startswith("ada") else "inquiry"
    rec.topology = _topology(path, out, cam, verb)
    return rec


def _topology(path: str, out: Outputs, cam: Optional[camcontrol.CamInfo], verb: str) -> Dict[str, Any]:
    """The path from the host to the disk (a partition's: its disk's), each element with its link, as
    device/freebsd_topology.py reads it; ``cam`` is the disk's own ``camcontrol VERB`` (identify or
    inquiry), whose transfers line is its link."""
    disk = freebsd_topology.disk_of(os.path.basename(path))
    unit = freebsd_topology.build(path, out.devlist, out.devinfo, out.pciconf, cam, f"camcontrol {verb} {disk}")
    return unit.to_dict()


def _parse(rec: DeviceRecord, name: str, out: Outputs) -> Parsed:
    """Each output parsed; a tool that ran is "used" in rec.tools, one whose output cannot be read
    "failed: why" (after the others), and its answer None."""
    errors: Dict[str, str] = {}

    def parsed(tool: str, parse, text: Optional[str]):
        if text is None:
            return None
        try:
            value = parse(text)
        except ValueError as exc:
            errors[tool] = str(exc)
            return None
        rec.tools.setdefault(tool, "used")
        return value

    p = Parsed()
    if out.geom is not None:
        try:
            disks = geom.parse(out.geom)
            p.geom = next((d for d in disks if d.name == name), disks[0] if disks else None)
            rec.tools.setdefault("geom", "used" if p.geom else "failed: no disk in output")
        except ValueError as exc:
            errors["geom"] = str(exc)
    p.diskinfo = parsed("diskinfo", diskinfo.parse, out.diskinfo)
    p.camcontrol = parsed("camcontrol", camcontrol.parse, out.camcontrol)
    p.nvmecontrol = parsed("nvmecontrol", nvmecontrol.parse, out.nvmecontrol)
    p.camcontrol_identify = parsed("camcontrol identify", camcontrol.parse, out.camcontrol_identify)
    p.pciconf = parsed("pciconf", pciconf.parse, out.pciconf)
    # read here for their state in rec.tools; the path (freebsd_topology.build) reads them with its own notes
    p.devlist = parsed("camcontrol devlist", camcontrol.parse_devlist, out.devlist)
    p.devinfo = parsed("devinfo", devinfo.parse, out.devinfo)
    for tool, why in errors.items():
        rec.tools[tool] = f"failed: {why}"
    return p


def _answers(p: Parsed) -> Dict[str, Dict[str, Any]]:
    """The facts of each source that answered, by PRECEDENCE's source names."""
    found = {"camcontrol identify": (p.camcontrol_identify, camcontrol_facts),
             "nvmecontrol": (p.nvmecontrol, nvmecontrol_facts), "camcontrol": (p.camcontrol, camcontrol_facts),
             "geom": (p.geom, geom_facts), "diskinfo": (p.diskinfo, diskinfo_facts)}
    return {source: facts(answer) for source, (answer, facts) in found.items() if answer}


def _transport(rec: DeviceRecord, name: str, p: Parsed) -> None:
    di = p.diskinfo
    rec.transport = transport_of(name, di.attachment if di else None)
    rec.sources["transport"] = "device name" + (" + diskinfo attachment" if di and di.attachment else "")
    if p.camcontrol_identify and name.startswith("da"):
        hba = rec.transport
        rec.transport = "sata"
        rec.sources["transport"] = (f"camcontrol identify (an ATA device: a SATA disk behind a {hba} "
                                    "HBA, the inquiry's vendor being ATA)")


def _device_class(rec: DeviceRecord) -> None:
    rec.device_class, rec.class_evidence = C.classify(rec.transport, rec.rotational, rec.rotation_rate,
                                                      rec.model, rec.vendor)
    emu = C.emulated_by(rec.model, rec.vendor)
    if emu:
        rec.emulated = True
        rec.class_evidence.append(f"emulated by {emu}: the class is what the device presents, not real media")


def _sata_link(cam: camcontrol.CamInfo) -> Link:
    """camcontrol's negotiated transfer rate against the SATA generation the device announces."""
    cur = C.parse_gbps(f"{cam.transfer_mbps}MB/s") if cam.transfer_mbps else None
    m = re.search(r"SATA (\d)\.x", cam.device_kind or "")
    mx = camcontrol.SATA_REVISION_GBPS.get(m.group(1)) if m else None
    link = Link(kind="sata", scope="device",
                current=LinkEnd(speed=f"{cam.transfer_mbps}MB/s" if cam.transfer_mbps else None, rate=cur),
                max=LinkEnd(speed=f"SATA {m.group(1)}.x" if m else None, rate=mx))
    link.evidence.append(f"camcontrol: {cam.device_kind!r}, transfers {cam.transfer_mbps} MB/s "
                         f"({cam.transfer_detail})")
    C.judge_link(link)
    return link


def _cache_signals(nv: Optional[nvmecontrol.NvmeIdentify], cam: Optional[camcontrol.CamInfo]) -> List[C.CacheSignal]:
    signals = []
    if nv and nv.vwc_present is not None:
        if nv.vwc_present:
            signals.append(C.CacheSignal("nvmecontrol identify", True, "Volatile Write Cache: Present (the feature "
                                         "state is not printed; enabled is the default)"))
        else:
            signals.append(C.CacheSignal("nvmecontrol identify", False, "Volatile Write Cache: Not Present"))
    if cam and cam.write_cache is not None:
        wc = cam.write_cache
        if wc.supported is False:
            signals.append(C.CacheSignal("camcontrol identify", False, "write cache not supported"))
        elif wc.enabled is not None:
            signals.append(C.CacheSignal("camcontrol identify", wc.enabled,
                                         "write cache supported, " + ("enabled" if wc.enabled else "disabled")))
    return signals


def _write_cache(rec: DeviceRecord, nv: Optional[nvmecontrol.NvmeIdentify],
                 cam: Optional[camcontrol.CamInfo]) -> None:
    signals = _cache_signals(nv, cam)
    rec.write_cache = C.judge_write_cache(signals, None, rec.transport)
    if not signals:
        if rec.transport == "nvme":
            rec.write_cache.reason = "nvmecontrol identify did not report the Volatile Write Cache field"
        elif rec.transport in ("sata",):
            rec.write_cache.reason = "camcontrol identify did not report the write cache feature"
        elif rec.transport in ("sas", "scsi"):
            rec.write_cache.reason = "the SCSI WCE bit (camcontrol modepage -m 8) is not read yet"


def _unknowns(rec: DeviceRecord, out: Outputs) -> None:
    given = [t for t, txt in (("geom", out.geom), ("diskinfo", out.diskinfo), ("camcontrol", out.camcontrol),
                              ("nvmecontrol", out.nvmecontrol)) if txt is not None]
    for f in ("model", "serial", "firmware", "capacity", "logical_sector", "physical_sector", "rotational"):
        if getattr(rec, f) is None:
            rec.unknown[f] = ("not reported by " + ", ".join(given)) if given else "no FreeBSD tool output available"
    rec.unknown.setdefault("vendor", "FreeBSD tools report the vendor as part of the model")
    if rec.device_class == "unknown":
        rec.unknown["class"] = "; ".join(rec.class_evidence)


def _pcie_link(name: str, devices, asked: bool) -> Link:
    """The NVMe controller's PCIe link from pciconf -lvc: negotiated width/speed and, in parentheses,
    the maximum the link supports."""
    ctrl = nvmecontrol.controller_of(name)
    if devices is None:
        return Link(reason="pciconf -lvc " + ("failed" if asked else "was not run") + f": the PCIe link of {ctrl} "
                    "is unknown")
    dev = next((d for d in devices if d.name == ctrl), None)
    if dev is None:
        return Link(reason=f"pciconf -lvc lists no {ctrl}")
    x = dev.pcie
    if x is None or (x.width is None and x.speed_gts is None):
        return Link(kind="pcie", scope="device", address=dev.selector,
                    reason=f"pciconf -lvc shows no PCI Express link for {ctrl}@{dev.selector}")
    link = Link(kind="pcie", scope="device", address=dev.selector,
                current=LinkEnd(speed=f"{x.speed_gts:g} GT/s" if x.speed_gts is not None else None,
                                rate=x.speed_gts, width=x.width),
                max=LinkEnd(speed=f"{x.max_speed_gts:g} GT/s" if x.max_speed_gts is not None else None,
                            rate=x.max_speed_gts, width=x.max_width))
    link.evidence.append(f"pciconf -lvc {ctrl}@{dev.selector}: {x.text}")
    return C.judge_link(link)


def _run_text(argv, tools: Dict[str, str], tool: Optional[str] = None) -> Optional[str]:
    """stdout of argv; None when it failed or the program is absent, which ``tools[tool]`` (the program's
    name unless given) then says."""
    from slogqual.tools import spawn as _run

    tool = tool or argv[0]
    if _run.which(argv[0]) is None:
        tools[tool] = "absent"
        return None
    try:  # the live host's: devinfo and pciconf once per run (freebsd_topology.one_reading)
        proc = freebsd_topology.machine_run(LIVE, argv, lambda: LIVE.run(argv, timeout=60))
    except ToolError as exc:  # a hung geom/diskinfo/camcontrol: recorded, as a failure is
        tools[tool] = f"failed: {exc}"
        return None
    if proc.returncode != 0:
        err = (proc.stderr or "").strip().splitlines()
        tools[tool] = "failed: " + (err[-1] if err else f"exit {proc.returncode}")
        return None
    return proc.stdout


def _path_texts(name: str, tools: Dict[str, str]) -> Dict[str, Optional[str]]:
    """The outputs the disk's path is read from (device/freebsd_topology.py): the CAM bus (not for nvd,
    which is not on CAM), the newbus tree, the PCI functions with their links."""
    texts = {"devinfo_text": _run_text(devinfo.argv(), tools), "pciconf_text": _run_text(pciconf.argv(), tools)}
    if not name.startswith("nvd"):
        texts["devlist_text"] = _run_text(camcontrol.argv_devlist(), tools, "camcontrol devlist")
    return texts


def identify(path: str) -> DeviceRecord:
    from slogqual.paths import is_nbd_uri

    if is_nbd_uri(path):
        rec = DeviceRecord(path=path, kind="nbd", transport="nbd", platform="freebsd")
        rec.device_class, rec.class_evidence = C.classify("nbd", None, None, None)
        rec.write_cache = C.judge_write_cache([], None, "nbd")
        return rec
    if not os.path.exists(path):
        raise UsageError(f"{path}: no such file or device")
    name = os.path.basename(os.path.realpath(path))
    tools: Dict[str, str] = {}
    texts = {
        "geom_text": _run_text(geom.argv(name), tools),
        "diskinfo_text": _run_text(diskinfo.argv(path), tools),
    }
    if name.startswith("ada"):
        texts["camcontrol_text"] = _run_text(camcontrol.argv_identify(name), tools)
    elif name.startswith("da"):
        texts["camcontrol_text"] = _run_text(camcontrol.argv_inquiry(name), tools)
        try:
            ata = texts["camcontrol_text"] is not None and camcontrol.is_ata(camcontrol.parse(texts["camcontrol_text"]))
        except ValueError:
            ata = False
        if ata:  # a SATA disk behind a SAS HBA: ATA IDENTIFY passes through (SAT), with rotation and link
            texts["camcontrol_identify_text"] = _run_text(camcontrol.argv_identify(name), tools)
    elif name.startswith(("nvd", "nda")):
        texts["nvmecontrol_text"] = _run_text(nvmecontrol.argv(nvmecontrol.controller_of(name)), tools)
    if name.startswith(("ada", "da", "nvd", "nda")):
        texts.update(_path_texts(name, tools))
    return build(path, tools=tools, **texts)
