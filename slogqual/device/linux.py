"""Device identification on Linux: sysfs first, then lsblk, smartctl, nvme-cli and lspci.

Each tool is optional. Each source gives its facts (sysfs_facts, lsblk_facts, smartctl_facts,
nvme_facts) and one table, PRECEDENCE, says which source's answer a field takes (sysfs is the
kernel's own answer and costs nothing; smartctl and nvme-cli ask the device itself and win for
model, serial and firmware, and for the write cache). What stays unknown is listed in
``record.unknown`` with the reason, including which tool was missing.
"""

from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Optional

from slogqual import paths
from slogqual.device import classify as C
from slogqual.device import facts as _facts
from slogqual.device.facts import FILL, OVERRIDE
from slogqual.device.record import DeviceRecord, Link, LinkEnd
from slogqual.errors import ToolError, UsageError
from slogqual.kernel import sysfs
from slogqual.tools import lsblk, lspci, nvme, smartctl
from slogqual.tools import spawn as _run


IDENTITY_FIELDS = ("model", "vendor", "serial", "firmware", "capacity", "logical_sector", "physical_sector",
                   "rotational")




def _tool_state(name: str) -> str:
    hint = _run.install_advice(name)
    return f"absent ({hint})" if hint else "absent"


def identify(spec: str, sysroot: str = sysfs.SYS) -> DeviceRecord:
    pk = paths.kind_of(spec)
    if pk.kind == paths.KIND_NBD:
        return _identify_nbd(spec)
    if pk.kind == paths.KIND_FILE:
        return _identify_file(spec, pk.st, sysroot)
    return _identify_block(spec, pk.devnum, sysroot)


# --- regular files and NBD ----------------------------------------------------------------

def _identify_file(path: str, st: os.stat_result, sysroot: str) -> DeviceRecord:
    rec = DeviceRecord(path=path, kind="file", transport="file", platform="linux")
    rec.capacity = st.st_size
    rec.sources["capacity"] = "stat"
    rec.device_class, rec.class_evidence = C.classify("file", None, None, None)
    under = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    info = sysfs.block_info(under, sysroot)
    kernel = None
    if info is not None:
        rec.notes.append(f"the file lives on /dev/{info.name} ({under})")
        kernel = info.write_cache
    else:
        rec.notes.append(f"the file's filesystem has no block device in sysfs (device {under}: tmpfs, overlay, "
                         "network or ZFS)")
    for f in ("model", "vendor", "serial", "firmware", "logical_sector", "physical_sector", "rotational"):
        rec.unknown[f] = "a regular file has no hardware identity; see the record of the device under it"
    rec.link = C.no_link("a regular file has no link of its own")
    rec.write_cache = C.judge_write_cache([], None, "file")
    if kernel:
        rec.write_cache.evidence.append(f"device under the file (/dev/{info.name}): queue/write_cache = {kernel}")
    return rec


def _identify_nbd(uri: str) -> DeviceRecord:
    rec = DeviceRecord(path=uri, kind="nbd", transport="nbd", platform="linux")
    rec.device_class, rec.class_evidence = C.classify("nbd", None, None, None)
    try:
        from slogqual.tools import nbdkit  # nbdinfo lives in the nbdkit module

        size = nbdkit.export_size(uri)
        rec.tools["nbdinfo"] = "used" if size is not None else _tool_state("nbdinfo")
        if size is not None:
            rec.capacity = size
            rec.sources["capacity"] = "nbdinfo"
        else:
            rec.unknown["capacity"] = "nbdinfo is not installed"
    except Exception as exc:  # an unreachable export is a sweep error, not an identity one
        rec.tools["nbdinfo"] = f"failed: {exc}"
        rec.unknown["capacity"] = f"nbdinfo could not reach the export ({exc})"
    for f in ("model", "vendor", "serial", "firmware", "logical_sector", "physical_sector", "rotational"):
        rec.unknown[f] = "an NBD export does not describe the hardware behind the server"
    rec.link = C.no_link("an NBD export is reached over a socket")
    rec.write_cache = C.judge_write_cache([], None, "nbd")
    return rec


# --- block devices ------------------------------------------------------------------------

def transport_of(info: sysfs.BlockInfo, tran: Optional[str]) -> str:
    """Transport from the kernel's view (sysfs path, driver) with lsblk's TRAN as a hint."""
    name = info.name if not info.is_partition else (info.parent or info.name)
    if name.startswith("loop"):
        return "loop"
    if name.startswith("nbd"):
        return "nbd"
    if name.startswith("pmem") or "ndbus" in "/".join(info.bus_path):
        return "pmem"
    if name.startswith("nvme") or info.nvme_ctrl:
        return "nvme"
    if name.startswith(("zram", "ram")):
        return "ram"
    if name.startswith("md"):
        return "md"
    if name.startswith("dm-"):
        return "dm"
    if info.driver == "virtio_blk" or name.startswith("vd"):
        return "virtio"
    t = (tran or "").lower()
    if t in ("sata", "ata"):
        return "sata"
    if t in ("sas",):
        return "sas"
    if t in ("usb",):
        return "usb"
    if t in ("nvme",):
        return "nvme"
    if t in ("fc", "iscsi", "spi", "srp"):
        return "scsi"
    path = "/".join(info.bus_path)
    if re.search(r"/ata\d+/", "/" + path + "/"):
        return "sata"
    if "/usb" in "/" + path:
        return "usb"
    if re.search(r"/port-\d+:\d+|/end_device-", path):
        return "sas"
    if re.search(r"/host\d+/target\d+", path):
        return "scsi"
    return "unknown"


def _lanes(width: Optional[int]) -> Optional[int]:
    return width if width is not None and 0 < width <= 32 else None


def _pci_link(info: sysfs.BlockInfo, scope: str) -> Optional[Link]:
    p = info.pci
    if p is None:
        return None
    link = Link(kind="pcie", scope=scope, address=p.address)
    if p.current_speed or p.max_speed or p.current_width or p.max_width:
        # "Unknown" speeds, width 0 (no link trained) and 255 (invalid) are what emulated and
        # virtual functions report: unknown, not a degraded link.
        link.current = LinkEnd(speed=p.current_speed, rate=C.parse_gts(p.current_speed), width=_lanes(p.current_width))
        link.max = LinkEnd(speed=p.max_speed, rate=C.parse_gts(p.max_speed), width=_lanes(p.max_width))
        link.evidence.append(f"sysfs {p.address}: current_link_speed={p.current_speed!r} "
                             f"current_link_width={p.current_width} max_link_speed={p.max_speed!r} "
                             f"max_link_width={p.max_width}")
    elif lspci.available():
        try:
            l2 = lspci.link(p.address)
        except ToolError as exc:
            link.reason = f"{p.address}: sysfs has no link attributes and lspci failed ({exc})"
            return C.judge_link(link)
        if l2 is not None:
            link.current = LinkEnd(speed=f"{l2.sta_gts}GT/s" if l2.sta_gts else None, rate=l2.sta_gts,
                                   width=l2.sta_width)
            link.max = LinkEnd(speed=f"{l2.cap_gts}GT/s" if l2.cap_gts else None, rate=l2.cap_gts, width=l2.cap_width)
            link.evidence.append(f"lspci -vv -s {p.address}: LnkSta {l2.sta_gts} GT/s x{l2.sta_width}, "
                                 f"LnkCap {l2.cap_gts} GT/s x{l2.cap_width}")
        else:
            link.reason = f"{p.address} has no PCIe link attributes (conventional PCI or virtual function)"
    else:
        link.reason = f"{p.address}: sysfs has no link attributes and lspci is not installed"
    return C.judge_link(link)


def link_from_smart(smart: smartctl.SmartInfo, transport: str) -> Link:
    """The disk's own SATA/SAS link from smartctl's interface_speed (current vs max), judged."""
    cur, mx = smart.link_current, smart.link_max
    link = Link(kind="sata" if transport == "sata" else transport, scope="device",
                current=LinkEnd(speed=cur.text if cur else None, rate=cur.gbps if cur else None),
                max=LinkEnd(speed=mx.text if mx else None, rate=mx.gbps if mx else None))
    link.evidence.append(f"smartctl interface_speed: max {mx.text if mx else None!r}, "
                         f"current {cur.text if cur else None!r}")
    return C.judge_link(link)


def link_from_ata(al: dict) -> Link:
    """The SATA link as libata negotiated it (sata_spd) against what the port can do (hw_sata_spd_limit)."""
    cur, mx = al.get("sata_spd"), al.get("hw_sata_spd_limit")
    link = Link(kind="sata", scope="device",
                current=LinkEnd(speed=cur, rate=C.parse_gbps(cur)), max=LinkEnd(speed=mx, rate=C.parse_gbps(mx)))
    link.evidence.append(f"sysfs ata_link of {al.get('port')}: sata_spd={cur!r} hw_sata_spd_limit={mx!r}")
    return C.judge_link(link)


# Who answers an identity field, per source, in the order the sources are asked (sysfs, lsblk,
# smartctl, nvme-cli); the rules are device/facts.py's. FILL takes a field no earlier source knew:
# sysfs is the kernel's own answer and costs nothing, lsblk repeats it. OVERRIDE replaces what is
# known, with a note where it differs: the device's own answer (ATA IDENTIFY, SCSI INQUIRY, NVMe
# Identify) beats the kernel's SCSI-translated copy, which cuts an ATA model to 16 characters and its
# firmware to 4.
_HARDWARE = ("capacity", "logical_sector", "physical_sector", "rotational", "model", "vendor", "serial", "firmware",
             "wwn")
PRECEDENCE = {
    "sysfs": {f: FILL for f in _HARDWARE},
    "lsblk": {f: FILL for f in _HARDWARE},
    "smartctl": {"model": OVERRIDE, "serial": OVERRIDE, "firmware": OVERRIDE,
                 "vendor": FILL, "capacity": FILL, "logical_sector": FILL, "physical_sector": FILL},
    "nvme id-ctrl": {"model": OVERRIDE, "serial": OVERRIDE, "firmware": OVERRIDE},
}


def merge(rec: DeviceRecord, source: str, facts: Dict[str, Any]) -> None:
    """One source's facts into the record, as PRECEDENCE says (a field it does not list is not taken)."""
    _facts.merge(rec, PRECEDENCE, source, facts)


def sysfs_facts(info: sysfs.BlockInfo) -> Dict[str, Any]:
    return {"capacity": info.size, "logical_sector": info.logical_block_size,
            "physical_sector": info.physical_block_size, "rotational": info.rotational, "model": info.model,
            "vendor": info.vendor, "serial": info.serial, "firmware": info.revision, "wwn": info.wwid}


def lsblk_facts(lb: lsblk.LsblkDevice) -> Dict[str, Any]:
    return {"capacity": lb.size, "logical_sector": lb.logical_sector, "physical_sector": lb.physical_sector,
            "rotational": lb.rotational, "model": lb.model,
            "vendor": None if (lb.vendor or "").startswith("0x") else lb.vendor,  # virtio: a PCI id
            "serial": lb.serial, "firmware": lb.revision, "wwn": lb.wwn}


def smartctl_facts(smart: smartctl.SmartInfo) -> Dict[str, Any]:
    return {"model": smart.model, "serial": smart.serial, "firmware": smart.firmware, "vendor": smart.vendor,
            "capacity": smart.capacity, "logical_sector": smart.logical_block_size,
            "physical_sector": smart.physical_block_size}


def nvme_facts(ident: nvme.IdCtrl) -> Dict[str, Any]:
    return {"model": ident.model, "serial": ident.serial, "firmware": ident.firmware}


# --- each source asked: its tool state in rec.tools, its answer or None ------------------------------

def _ask_lsblk(rec: DeviceRecord, path: str) -> Optional[lsblk.LsblkDevice]:
    if not lsblk.available():
        rec.tools["lsblk"] = _tool_state("lsblk")
        return None
    try:
        devs = lsblk.query(path)
    except ToolError as exc:
        rec.tools["lsblk"] = f"failed: {exc}"
        return None
    rec.tools["lsblk"] = "used"
    return devs[0] if devs else None


def _ask_smartctl(rec: DeviceRecord, path: str, physical: bool) -> Optional[smartctl.SmartInfo]:
    """smartctl asks the device (ATA IDENTIFY / SCSI INQUIRY+VPD / NVMe Identify); only physical disks."""
    if not physical:
        rec.tools["smartctl"] = f"not used: {rec.transport} device"
        return None
    if not smartctl.available():
        rec.tools["smartctl"] = _tool_state("smartctl")
        return None
    try:
        smart = smartctl.query(path, nvme=rec.transport == "nvme")
    except ToolError as exc:
        rec.tools["smartctl"] = f"failed: {exc}"
        return None
    rec.tools["smartctl"] = "used" if smart.usable else "failed: " + ("; ".join(smart.errors) or "device not identified")
    return smart if smart.usable else None


def _smartctl_cache_signals(smart: smartctl.SmartInfo) -> List[C.CacheSignal]:
    if smart.write_cache_enabled is None:
        return []
    return [C.CacheSignal("smartctl -g wcache", smart.write_cache_enabled,
                          "write cache " + ("enabled" if smart.write_cache_enabled else "disabled"))]


def _ask_nvme(rec: DeviceRecord, info: sysfs.BlockInfo) -> List[C.CacheSignal]:
    """nvme-cli on the namespace's controller: Identify Controller (merged into rec at once) and the
    write-cache signals of its VWC bit 0 and the Volatile Write Cache feature."""
    if not info.nvme_ctrl:
        rec.tools["nvme"] = "not used: no NVMe controller in sysfs"
        return []
    if not nvme.available():
        rec.tools["nvme"] = _tool_state("nvme")
        return []
    ctrl = f"/dev/{info.nvme_ctrl}"
    try:
        ident = nvme.id_ctrl(ctrl)
        rec.tools["nvme"] = "used"
        merge(rec, "nvme id-ctrl", nvme_facts(ident))
        return _nvme_cache_signals(ctrl, ident)
    except ToolError as exc:  # the Identify's facts, once merged, stay
        rec.tools["nvme"] = f"failed: {exc}"
        return []


def _nvme_cache_signals(ctrl: str, ident: nvme.IdCtrl) -> List[C.CacheSignal]:
    if ident.vwc_present is False:
        return [C.CacheSignal("nvme id-ctrl", False, f"vwc={ident.vwc} (bit 0 clear: no volatile write cache present)")]
    if not ident.vwc_present:
        return []
    enabled = nvme.get_vwc_enabled(ctrl)
    if enabled is None:
        return [C.CacheSignal("nvme id-ctrl", True, f"vwc={ident.vwc} (bit 0 set: volatile write cache present; "
                                                    "feature 06h state unreadable, enabled is the default)")]
    return [C.CacheSignal("nvme get-feature -f 6", enabled, f"vwc={ident.vwc} present; Volatile Write Cache feature "
                                                            + ("enabled" if enabled else "disabled"))]


def _scsi_cache_signal(info: sysfs.BlockInfo) -> List[C.CacheSignal]:
    """The sd driver's cache_type: "write back" = WCE 1, "write through"/"none" = WCE 0."""
    ct = info.scsi_cache_type.lower()
    return [C.CacheSignal("sysfs scsi_disk/cache_type", ct.startswith("write back"),
                          f"{info.scsi_cache_type!r} (WCE={'1' if ct.startswith('write back') else '0'})")]


# --- a block device: the sources asked and merged, then what follows from the merged record ----------

def _identify_block(path: str, devnum: str, sysroot: str) -> DeviceRecord:
    rec = DeviceRecord(path=path, kind="block", devnum=devnum, platform="linux")
    info = sysfs.block_info(devnum, sysroot)
    if info is None:
        raise UsageError(f"{path}: block device {devnum} is not in sysfs")
    rec.name = info.name
    rec.partition_of = info.parent if info.is_partition else None
    if info.is_partition:
        rec.notes.append(f"a partition of /dev/{info.parent}: hardware fields describe that disk")
    rec.tools["sysfs"] = "used"

    lb = _ask_lsblk(rec, path)
    merge(rec, "sysfs", sysfs_facts(info))
    if lb is not None:
        merge(rec, "lsblk", lsblk_facts(lb))
    rec.transport = transport_of(info, lb.transport if lb else None)
    rec.sources["transport"] = "sysfs" + ("+lsblk" if lb and lb.transport else "")

    signals: List[C.CacheSignal] = []
    physical = rec.transport in ("sata", "sas", "scsi", "usb", "nvme")
    smart = _ask_smartctl(rec, path, physical)
    if smart is not None:
        merge(rec, "smartctl", smartctl_facts(smart))
        if smart.rotation_rate is not None:
            rec.rotation_rate = smart.rotation_rate
            rec.sources["rotation_rate"] = "smartctl"
        signals += _smartctl_cache_signals(smart)
        if smart.scsi_transport and rec.transport == "scsi" and "sas" in smart.scsi_transport.lower():
            rec.transport = "sas"
            rec.sources["transport"] += "+smartctl"
    if rec.transport == "nvme":
        signals += _ask_nvme(rec, info)
    if info.scsi_cache_type and not any(s.source.startswith("smartctl") for s in signals):
        signals += _scsi_cache_signal(info)

    _emulation_and_class(rec, info, physical)
    if info.loop_backing_file:
        rec.notes.append(f"loop device backed by {info.loop_backing_file}")
    _link(rec, info, smart)
    rec.topology = _topology(path, info, sysroot)
    _write_cache(rec, info, signals)
    _explain_unknowns(rec, info, smart)
    _tool_versions(rec)
    return rec


def _topology(path: str, info: sysfs.BlockInfo, sysroot: str) -> Dict[str, Any]:
    """The path from the host to the disk (a partition's: its disk's), each element with its link
    (device/topology.py): what a report and the fleet view show units sharing."""
    from slogqual.device import topology

    unit = topology.walk(info.parent if info.is_partition and info.parent else info.name, sysroot)
    unit.device = path
    return unit.to_dict()


def _emulation_and_class(rec: DeviceRecord, info: sysfs.BlockInfo, physical: bool) -> None:
    emu = C.emulated_by(rec.model, rec.vendor)
    pci_vendor = (info.pci.vendor or "").lower() if info.pci else ""
    if not emu and pci_vendor in C.EMULATOR_PCI_VENDORS and rec.transport == "nvme":
        emu = C.EMULATOR_PCI_VENDORS[pci_vendor] + f" (PCI vendor {pci_vendor})"
    if emu:
        rec.emulated = True
    elif physical or rec.transport == "pmem":
        if _in_virtual_machine():
            rec.emulated = None
            rec.unknown["emulated"] = ("this host is a virtual machine (CPU hypervisor flag): an emulated disk with "
                                       "a custom model cannot be told from a passed-through one")
        else:
            rec.emulated = False
    rec.device_class, rec.class_evidence = C.classify(rec.transport, rec.rotational, rec.rotation_rate,
                                                      rec.model, rec.vendor)
    if emu:
        rec.class_evidence.append(f"emulated by {emu}: the class is what the device presents, not real media")


def _link(rec: DeviceRecord, info: sysfs.BlockInfo, smart: Optional[smartctl.SmartInfo]) -> None:
    if rec.transport == "nvme":
        link = _pci_link(info, "device") if info.nvme_transport in (None, "pcie") else None
        rec.link = link or C.no_link(f"NVMe over {info.nvme_transport or 'an unknown transport'}: no PCIe link")
    elif rec.transport in ("sata", "sas", "scsi", "usb"):
        if smart is not None and (smart.link_current or smart.link_max):
            rec.link = link_from_smart(smart, rec.transport)
        elif rec.transport == "sata" and sysfs.ata_link(info):
            rec.link = link_from_ata(sysfs.ata_link(info))
        elif smart is not None:
            rec.link = Link(reason="smartctl reported no interface speed for this disk")
        else:
            rec.link = Link(reason="no tool reported the disk's link speed (smartctl "
                                   + ("could not identify the disk" if smartctl.available() else "not installed") + ")")
        rec.controller_link = _pci_link(info, "controller")
    elif rec.transport == "virtio":
        rec.link = C.no_link("virtio-blk has no physical link")
    else:
        rec.link = C.no_link(f"a {rec.transport} device has no physical link")


def _write_cache(rec: DeviceRecord, info: sysfs.BlockInfo, signals: List[C.CacheSignal]) -> None:
    rec.write_cache = C.judge_write_cache(signals, info.write_cache, rec.transport)
    if rec.transport == "pmem":
        ns = pmem_namespace(info)
        if ns:
            rec.notes.append(f"NVDIMM namespace {ns}")
        domain = _pmem_persistence_domain(info)
        rec.write_cache.evidence.append(f"NVDIMM region persistence_domain: {domain or 'not reported'}")
        if rec.write_cache.verdict == C.WC_ENABLED:
            rec.write_cache.reason = ("the CPU cache in front of the persistent memory is volatile (the kernel writes "
                                      "it back on every flush)" + ("" if domain else "; the platform's persistence "
                                                                   "domain is not reported"))
    if rec.transport == "virtio" and not signals:
        rec.write_cache.reason += " (for virtio the hypervisor decides what a flush does)"


def _tool_versions(rec: DeviceRecord) -> None:
    for name, mod in (("lsblk", lsblk), ("smartctl", smartctl), ("nvme", nvme), ("lspci", lspci)):
        if rec.tools.get(name) == "used" or (name == "lspci" and any("lspci" in e for e in rec.link.evidence)):
            try:
                rec.tool_versions[name] = str(mod.version())
            except ToolError:  # a version that cannot be read is not recorded
                pass


def pmem_namespace(info: sysfs.BlockInfo) -> Optional[str]:
    """'namespace0.0 (mode fsdax) in region0' for a pmem block device, from its sysfs device link."""
    ns_dir = os.path.realpath(os.path.join(info.syspath, "device"))
    ns = os.path.basename(ns_dir)
    if not ns.startswith("namespace"):
        return None
    mode = sysfs.read(os.path.join(ns_dir, "mode"))
    return f"{ns} (mode {mode or 'unknown'}) in {os.path.basename(os.path.dirname(ns_dir))}"


def _pmem_persistence_domain(info: sysfs.BlockInfo) -> Optional[str]:
    """'cpu_cache' (eADR), 'memory_controller' (ADR) or None: sysfs of the namespace's region."""
    cur = os.path.realpath(os.path.join(info.syspath, "device"))
    for _ in range(4):
        dom = sysfs.read(os.path.join(cur, "persistence_domain"))
        if dom is not None:
            return dom or None
        cur = os.path.dirname(cur)
    return None


def _in_virtual_machine() -> bool:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return " hypervisor" in line
    except OSError:
        pass
    return False


def _explain_unknowns(rec: DeviceRecord, info: sysfs.BlockInfo, smart) -> None:
    if rec.transport in ("loop", "nbd", "ram", "md", "dm"):
        why = f"a {rec.transport} device has no hardware identity"
        for f in ("model", "vendor", "serial", "firmware"):
            rec.mark_unknown(f, why)
    elif rec.transport == "virtio":
        for f in ("model", "vendor", "firmware"):
            rec.mark_unknown(f, "virtio-blk reports no model, vendor or firmware")
        rec.mark_unknown("serial", "the hypervisor set no serial for this disk")
    tools = [f"{t} {s}" for t, s in rec.tools.items() if s != "used"]
    generic = "not reported by " + ", ".join(t for t, s in rec.tools.items() if s == "used")
    if tools:
        generic += "; " + "; ".join(tools)
    for f in IDENTITY_FIELDS:
        rec.mark_unknown(f, generic)
    if rec.vendor is None and rec.transport in ("sata", "nvme"):
        rec.unknown["vendor"] = f"{rec.transport} devices report no separate vendor field (it is part of the model)"
    if rec.device_class == "unknown":
        rec.unknown["class"] = "; ".join(rec.class_evidence)
