"""Device identification on FreeBSD: geom, diskinfo -v, camcontrol identify/inquiry, nvmecontrol identify,
pciconf -lvc.

:func:`build` turns the tools' outputs into a DeviceRecord and does no I/O, so
it is tested on recorded outputs; :func:`identify` runs the tools on a FreeBSD
host and hands their outputs to build(). A ``da`` disk whose inquiry shows an ATA
device (a SATA disk behind a SAS HBA: vendor "ATA") is also asked ``camcontrol
identify``, which gives its rotation and SATA link; an NVMe controller's PCIe link
comes from ``pciconf -lvc``. The safety interlocks are device/freebsd_safety.py (the facts; device/interlock.py the rules they share).
"""

from __future__ import annotations

import os
import re
from typing import Dict, Optional

from slogqual.device import classify as C
from slogqual.device.record import DeviceRecord, Link, LinkEnd
from slogqual.errors import ToolError, UsageError
from slogqual.tools.freebsd import camcontrol, diskinfo, geom, nvmecontrol, pciconf

SATA_GEN_GBPS = {"1": 1.5, "2": 3.0, "3": 6.0}


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


def nvme_controller(name: str) -> str:
    """nvdN/ndaN is namespace 1 of controller nvmeN on the usual single-namespace drive."""
    return "nvme" + re.sub(r"\D", "", name)


def build(path: str, geom_text: Optional[str] = None, diskinfo_text: Optional[str] = None,
          camcontrol_text: Optional[str] = None, nvmecontrol_text: Optional[str] = None,
          tools: Optional[Dict[str, str]] = None, camcontrol_identify_text: Optional[str] = None,
          pciconf_text: Optional[str] = None) -> DeviceRecord:
    """A record from whichever outputs are given (None = that tool was not available).
    camcontrol_text is the inquiry (da) or identify (ada) output; camcontrol_identify_text the identify
    of a da disk whose inquiry shows an ATA device; pciconf_text ``pciconf -lvc`` for an NVMe disk."""
    name = os.path.basename(path)
    rec = DeviceRecord(path=path, kind="block", name=name, platform="freebsd")
    rec.tools.update(tools or {})
    errors: Dict[str, str] = {}

    def parsed(tool: str, parse, text: Optional[str]):
        """``parse(text)`` for a tool that ran (None: it did not); its failure is noted, not raised."""
        if text is None:
            return None
        try:
            out = parse(text)
        except ValueError as exc:
            errors[tool] = str(exc)
            return None
        rec.tools.setdefault(tool, "used")
        return out

    g = None
    if geom_text is not None:
        try:
            disks = geom.parse(geom_text)
            g = next((d for d in disks if d.name == name), disks[0] if disks else None)
            rec.tools.setdefault("geom", "used" if g else "failed: no disk in output")
        except ValueError as exc:
            errors["geom"] = str(exc)
    di = parsed("diskinfo", diskinfo.parse, diskinfo_text)
    cam = parsed("camcontrol", camcontrol.parse, camcontrol_text)
    nv = parsed("nvmecontrol", nvmecontrol.parse, nvmecontrol_text)
    # an ATA identify of a da disk (a SATA disk behind a SAS HBA)
    cam_id = parsed("camcontrol identify", camcontrol.parse, camcontrol_identify_text)
    pci = parsed("pciconf", pciconf.parse, pciconf_text)
    for t, e in errors.items():
        rec.tools[t] = f"failed: {e}"

    if cam_id:  # the drive's own answers come before the HBA's translation of them
        rec.set("model", cam_id.model, "camcontrol identify")
        rec.set("serial", cam_id.serial, "camcontrol identify")
        rec.set("firmware", cam_id.firmware, "camcontrol identify")
        rec.set("wwn", cam_id.wwn, "camcontrol identify")
        rec.set("logical_sector", cam_id.logical_sector, "camcontrol identify")
        rec.set("physical_sector", cam_id.physical_sector, "camcontrol identify")
        if cam_id.logical_sector and cam_id.sectors:
            rec.set("capacity", cam_id.logical_sector * cam_id.sectors, "camcontrol identify")
        if cam_id.media_rpm is not None:
            rec.rotation_rate, rec.sources["rotation_rate"] = cam_id.media_rpm, "camcontrol identify"

    if nv:
        rec.set("model", nv.model, "nvmecontrol")
        rec.set("serial", nv.serial, "nvmecontrol")
        rec.set("firmware", nv.firmware, "nvmecontrol")
    if cam:
        rec.set("model", cam.model, "camcontrol")
        rec.set("serial", cam.serial, "camcontrol")
        rec.set("firmware", cam.firmware, "camcontrol")
        rec.set("wwn", cam.wwn, "camcontrol")
        rec.set("logical_sector", cam.logical_sector, "camcontrol")
        rec.set("physical_sector", cam.physical_sector, "camcontrol")
        if cam.logical_sector and cam.sectors:
            rec.set("capacity", cam.logical_sector * cam.sectors, "camcontrol")
        if cam.media_rpm is not None:
            rec.rotation_rate, rec.sources["rotation_rate"] = cam.media_rpm, "camcontrol"
    if g:
        rec.set("model", g.descr, "geom")
        rec.set("serial", g.ident, "geom")
        rec.set("capacity", g.mediasize, "geom")
        rec.set("logical_sector", g.sectorsize, "geom")
        if g.stripesize:
            rec.set("physical_sector", g.stripesize, "geom")
        if rec.rotation_rate is None and g.rotationrate is not None:
            rec.rotation_rate, rec.sources["rotation_rate"] = g.rotationrate, "geom"
    if di:
        rec.set("model", di.descr, "diskinfo")
        rec.set("serial", di.ident, "diskinfo")
        rec.set("capacity", di.mediasize, "diskinfo")
        rec.set("logical_sector", di.sectorsize, "diskinfo")
        if di.stripesize:
            rec.set("physical_sector", di.stripesize, "diskinfo")
        if rec.rotation_rate is None and di.rotation_rate is not None:
            rec.rotation_rate, rec.sources["rotation_rate"] = di.rotation_rate, "diskinfo"
    if rec.rotation_rate is not None:
        rec.rotational = rec.rotation_rate > 1
        rec.sources["rotational"] = rec.sources["rotation_rate"]

    rec.transport = transport_of(name, di.attachment if di else None)
    rec.sources["transport"] = "device name" + (" + diskinfo attachment" if di and di.attachment else "")
    if cam_id and name.startswith("da"):
        hba = rec.transport
        rec.transport = "sata"
        rec.sources["transport"] = (f"camcontrol identify (an ATA device: a SATA disk behind a {hba} "
                                    "HBA, the inquiry's vendor being ATA)")
        cam = cam_id  # its announce lines carry the SATA generation and the negotiated rate
    rec.device_class, rec.class_evidence = C.classify(rec.transport, rec.rotational, rec.rotation_rate,
                                                      rec.model, rec.vendor)
    emu = C.emulated_by(rec.model, rec.vendor)
    if emu:
        rec.emulated = True
        rec.class_evidence.append(f"emulated by {emu}: the class is what the device presents, not real media")

    # link: SATA from camcontrol (negotiated transfer rate vs the generation the device announces)
    if cam and rec.transport == "sata":
        cur = C.parse_gbps(f"{cam.transfer_mbps}MB/s") if cam.transfer_mbps else None
        m = re.search(r"SATA (\d)\.x", cam.device_kind or "")
        mx = SATA_GEN_GBPS.get(m.group(1)) if m else None
        rec.link = Link(kind="sata", scope="device", current=LinkEnd(speed=f"{cam.transfer_mbps}MB/s" if cam.transfer_mbps else None, rate=cur),
                        max=LinkEnd(speed=f"SATA {m.group(1)}.x" if m else None, rate=mx))
        rec.link.evidence.append(f"camcontrol: {cam.device_kind!r}, transfers {cam.transfer_mbps} MB/s "
                                 f"({cam.transfer_detail})")
        C.judge_link(rec.link)
    elif rec.transport == "nvme":
        rec.link = _pcie_link(name, pci, pciconf_text is not None)
    else:
        rec.link = Link(reason=f"no link information for a {rec.transport} device on FreeBSD")

    # write cache
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
    rec.write_cache = C.judge_write_cache(signals, None, rec.transport)
    if not signals:
        if rec.transport == "nvme":
            rec.write_cache.reason = "nvmecontrol identify did not report the Volatile Write Cache field"
        elif rec.transport in ("sata",):
            rec.write_cache.reason = "camcontrol identify did not report the write cache feature"
        elif rec.transport in ("sas", "scsi"):
            rec.write_cache.reason = "the SCSI WCE bit (camcontrol modepage -m 8) is not read yet"

    for f in ("model", "serial", "firmware", "capacity", "logical_sector", "physical_sector", "rotational"):
        if getattr(rec, f) is None:
            given = [t for t, txt in (("geom", geom_text), ("diskinfo", diskinfo_text),
                                      ("camcontrol", camcontrol_text), ("nvmecontrol", nvmecontrol_text)) if txt is not None]
            rec.unknown[f] = ("not reported by " + ", ".join(given)) if given else "no FreeBSD tool output available"
    rec.unknown.setdefault("vendor", "FreeBSD tools report the vendor as part of the model")
    if rec.device_class == "unknown":
        rec.unknown["class"] = "; ".join(rec.class_evidence)
    return rec


def _pcie_link(name: str, devices, asked: bool) -> Link:
    """The NVMe controller's PCIe link from pciconf -lvc: negotiated width/speed and, in parentheses,
    the maximum the link supports."""
    ctrl = nvme_controller(name)
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


def _run_text(argv, tools: Dict[str, str]) -> Optional[str]:
    """stdout of argv, '' when it failed (the parser then reports it), None when the program is absent."""
    from slogqual.tools import run as _run

    if _run.which(argv[0]) is None:
        tools[argv[0]] = "absent"
        return None
    try:
        proc = _run.run(argv, timeout=60, typed_timeout=True)
    except ToolError as exc:  # a hung geom/diskinfo/camcontrol: recorded, as a failure is
        tools[argv[0]] = f"failed: {exc}"
        return None
    if proc.returncode != 0:
        err = (proc.stderr or "").strip().splitlines()
        tools[argv[0]] = "failed: " + (err[-1] if err else f"exit {proc.returncode}")
        return None
    return proc.stdout


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
        texts["nvmecontrol_text"] = _run_text(nvmecontrol.argv(nvme_controller(name)), tools)
        texts["pciconf_text"] = _run_text(pciconf.argv(), tools)
    return build(path, tools=tools, **texts)
