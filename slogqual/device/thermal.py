"""Thermal snapshots of the device under test: what its own logs say about heat, read before and after a
measurement so that throttling during it shows (slogqual.analysis.thermal compares two of them).

- NVMe: the SMART/Health log (02h) of the namespace's controller, by nvme-cli (``nvme smart-log``):
  composite temperature, minutes above the warning/critical composite temperature, and the
  host-controlled thermal management transition counts and times. The thresholds come from Identify
  Controller (wctemp/cctemp). smartctl is the fallback; its JSON has no transition counters (its text does:
  read when the smartctl has no JSON), smartctl 7.5's JSON has the thresholds.
- SATA/SAS/SCSI/USB disks: the temperature smartctl reports (slogqual.tools.smartctl.argv_health), and SCSI's
  trip point.

Wear is read in the same run where the device keeps it in a standard log (compared by slogqual.analysis.wear):
NVMe's Percentage Used and Data Units Written; an ATA device's Device Statistics (Percentage Used Endurance
Indicator, Logical Sectors Written); a SCSI device's Solid State Media percentage used and its write error
counter's bytes processed. A device without them (an HDD, an SSD without Device Statistics) gives a snapshot
without wear, not an error: its heat is still evidence.
- Anything else (regular files, loop, pmem, virtio, md, dm, zram, nbd URIs): None, at once and without
  running a tool; there is no device heat to speak of, or no way to ask the hardware under it.

A missing or failing tool never raises: the snapshot carries an ``error`` string instead, so a sweep
goes on without thermal evidence and says why.

FreeBSD (chosen on FreeBSD, or when a host of tools/freebsd/host.py is given: the tests run it so on recorded
outputs) goes by the device's name alone:
- NVMe (/dev/nvmeN, nvmeNnsM, nvdN, ndaN and their partitions; nvd/nda taken as namespace 1 of controller
  nvmeN, as device/freebsd.py does): ``nvmecontrol logpage -p 2 nvmeN``, the same SMART/Health log page,
  read by slogqual.tools.freebsd.nvmecontrol.parse_health into the fields nvme-cli's fills (composite
  temperature, warning/critical composite temperature minutes, transition counts and times, sensors,
  Percentage Used, Data Units Written). No thresholds: ``nvmecontrol identify`` does not print WCTEMP/CCTEMP,
  and a note says so. smartctl on /dev/nvmeN is the fallback, as it is for nvme-cli on Linux.
- SATA/SAS/SCSI/USB disks (/dev/adaN, /dev/daN and their partitions): smartctl on the whole disk, through
  the same function as on Linux.
- Anything else (md, zvol, vtbd, GEOM labels, files): None, without running a tool.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from slogqual.errors import ToolError, ToolMissingError
from slogqual.paths import is_nbd_uri
from slogqual.kernel import sysfs
from slogqual.tools import nvme, smartctl
from slogqual.tools import spawn as _run
from slogqual.tools.freebsd import nvmecontrol

SOURCE_NVME = "nvme smart-log"
SOURCE_NVMECONTROL = "nvmecontrol logpage"
SOURCE_SMARTCTL = "smartctl"

# What the NVMe SMART/Health log gives, by the same names in nvme.SmartLog and nvmecontrol.NvmeHealth
_LOG_FIELDS = ("temperature_c", "warning_temp_time_min", "critical_temp_time_min", "thm_temp1_trans_count",
               "thm_temp2_trans_count", "thm_temp1_total_time_s", "thm_temp2_total_time_s", "critical_warning",
               "percentage_used", "data_units_written")

# transports whose hardware can be asked for its temperature (slogqual.device.linux.transport_of)
PHYSICAL = ("nvme", "sata", "sas", "scsi", "usb")


@dataclass
class ThermalSnapshot:
    """One reading of a device's thermal state. ``time`` is wall-clock (seconds since the epoch, for a
    document), ``monotonic`` the clock intervals are measured on. Every counter is None when the source
    did not report it: NVMe ``warning_temp_time_min``/``critical_temp_time_min`` in minutes,
    ``thm_temp*_total_time_s`` in seconds, as the SMART/Health log counts them."""

    path: str
    time: float
    monotonic: float
    source: Optional[str] = None  # SOURCE_NVME | SOURCE_SMARTCTL; None when nothing could be read
    queried: Optional[str] = None  # what the tool was pointed at: /dev/nvme0 for /dev/nvme0n1p1
    transport: Optional[str] = None
    temperature_c: Optional[int] = None
    warning_threshold_c: Optional[int] = None  # NVMe WCTEMP
    critical_threshold_c: Optional[int] = None  # NVMe CCTEMP; SCSI drive trip temperature
    warning_temp_time_min: Optional[int] = None
    critical_temp_time_min: Optional[int] = None
    thm_temp1_trans_count: Optional[int] = None
    thm_temp2_trans_count: Optional[int] = None
    thm_temp1_total_time_s: Optional[int] = None
    thm_temp2_total_time_s: Optional[int] = None
    sensors_c: Optional[Dict[str, int]] = None  # sensor number -> Celsius
    critical_warning: Optional[int] = None
    # wear, where the device reports it in a standard log: read with the heat, compared by analysis.wear
    percentage_used: Optional[int] = None  # NVMe; ATA Device Statistics page 7; SCSI Solid State Media
    data_units_written: Optional[int] = None  # NVMe: units of 512,000 bytes, rounded up by the device
    logical_sectors_written: Optional[int] = None  # ATA Device Statistics page 1: whole logical sectors
    logical_sector_bytes: Optional[int] = None  # ATA: the size of those sectors
    write_bytes_processed: Optional[int] = None  # SCSI write error counter: bytes, to the nearest 10^6
    error: Optional[str] = None  # why no (or only part of the) reading was taken
    notes: List[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.source is not None

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "ThermalSnapshot":
        """The inverse of to_dict (a document read back); unknown keys are ignored."""
        known = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        return cls(**known)


def _new(path: str) -> ThermalSnapshot:
    return ThermalSnapshot(path=path, time=time.time(), monotonic=time.monotonic())


def _sensors(s: Optional[Dict[int, int]]) -> Optional[Dict[str, int]]:
    return {str(k): v for k, v in sorted(s.items())} if s else None


def _tool_unavailable(program: str) -> str:
    hint = _run.install_advice(program)
    return f"{program} is not installed" + (f" ({hint})" if hint else "")


def snapshot(path: str, sysroot: str = sysfs.SYS, host=None) -> Optional[ThermalSnapshot]:
    """The thermal state of the device at ``path`` now, or None when ``path`` is not a device whose
    hardware reports one (found from stat and sysfs, or on FreeBSD the device's name, alone: no tool is run
    then). Never raises: a tool missing, failing or printing garbage leaves ``error`` set (and ``source``
    None when nothing was read). host: FreeBSD's programs and /dev (tools/freebsd/host.py); given, or on
    FreeBSD, the FreeBSD way is taken."""
    try:
        if is_nbd_uri(path):
            return None
        try:
            st = os.stat(path)
        except OSError as exc:
            snap = _new(path)
            snap.error = f"cannot stat {path}: {exc.strerror or exc}"
            return snap
        if host is not None or sys.platform.startswith("freebsd"):
            from slogqual.tools.freebsd.host import LIVE

            return _freebsd(path, st, host or LIVE)
        if not stat.S_ISBLK(st.st_mode):
            return None  # a regular file (on tmpfs, ZFS, ext4 ...): no device heat of its own
        return _linux(path, f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}", sysroot)
    except Exception as exc:  # the contract: evidence gathering never ends a sweep
        snap = _new(path)
        snap.error = f"thermal snapshot failed: {type(exc).__name__}: {exc}"
        return snap


# A FreeBSD disk's name, and the GEOM classes a name can carry on top of it: a GPT partition (p1) or an MBR slice
# and its partition (s1, s1a), then stacked classes (ada0p3.eli); the heat is the whole disk's.
_BSD_SUFFIX = r"(?:[ps]\d+[a-h]?)?(?:\.[a-z]+)*"
_BSD_NVME = re.compile(rf"nvme\d+(?:ns\d+)?|(?:nvd|nda)\d+{_BSD_SUFFIX}")
_BSD_CAM = re.compile(rf"((?:ada|da)\d+){_BSD_SUFFIX}")


def _bsd_name(path: str, dev: str) -> str:
    """The node's name under dev (/dev/ada0p1 -> ada0p1, /dev/zvol/tank/v -> zvol/tank/v); elsewhere the
    basename of what the path resolves to."""
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(dev))
    return os.path.basename(os.path.realpath(path)) if rel.startswith("..") else rel


def _bsd_disk(name: str) -> Optional[Tuple[str, str]]:
    """(transport, what to ask) for a FreeBSD disk name: the NVMe controller (nvme0) for nvmeN, nvmeNnsM,
    nvdN, ndaN and their partitions; the whole ada/da disk for its partitions. None for anything else (md,
    zvol, vtbd, a GEOM label, a file)."""
    from slogqual.device.freebsd import transport_of

    if _BSD_NVME.fullmatch(name):
        return "nvme", nvmecontrol.controller_of(name)
    m = _BSD_CAM.fullmatch(name)
    return (transport_of(m.group(1)), m.group(1)) if m else None


def _freebsd(path: str, st: os.stat_result, host) -> Optional[ThermalSnapshot]:
    if not (stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)):
        return None  # a regular file: no device heat of its own
    disk = _bsd_disk(_bsd_name(path, host.dev))
    if disk is None:
        return None
    transport, asked = disk
    snap = _new(path)
    snap.transport = transport
    if transport == "nvme":
        return _nvmecontrol(snap, asked, host)
    return _smartctl(snap, os.path.join(host.dev, asked), host)


def _nvmecontrol(snap: ThermalSnapshot, ctrl: str, host) -> ThermalSnapshot:
    """nvmecontrol's health log of the controller; smartctl on /dev/nvmeN when it fails."""
    device = os.path.join(host.dev, ctrl)
    try:
        log = nvmecontrol.health(ctrl, host)
    except ToolMissingError:
        errors = [_tool_unavailable(nvmecontrol.PROGRAM)]
    except ToolError as exc:
        errors = [f"nvmecontrol logpage -p 2 {ctrl}: {exc}"]
    else:
        _from_log(snap, SOURCE_NVMECONTROL, device, log)
        # identify_ext.c prints no WCTEMP/CCTEMP, so the minutes above them are read without the limits
        snap.notes.append("thresholds unknown: nvmecontrol identify does not print WCTEMP/CCTEMP")
        return snap
    return _smartctl_fallback(snap, device, errors, "nvmecontrol", host)


def _linux(path: str, devnum: str, sysroot: str) -> Optional[ThermalSnapshot]:
    from slogqual.device.linux import transport_of

    info = sysfs.block_info(devnum, sysroot)
    if info is None:
        snap = _new(path)
        snap.error = f"block device {devnum} is not in sysfs"
        return snap
    transport = transport_of(info, None)
    if transport not in PHYSICAL:
        return None  # loop, pmem, virtio, md, dm, zram, nbd: nothing to ask about heat
    snap = _new(path)
    snap.transport = transport
    if transport == "nvme" and info.nvme_ctrl:
        return _nvme(snap, f"/dev/{info.nvme_ctrl}", path)
    whole = f"/dev/{info.parent}" if info.is_partition and info.parent else path
    return _smartctl(snap, whole)


def _from_log(snap: ThermalSnapshot, source: str, queried: str, log) -> None:
    """Fill the snapshot from an NVMe SMART/Health log (nvme.SmartLog or nvmecontrol.NvmeHealth)."""
    snap.source, snap.queried = source, queried
    for f in _LOG_FIELDS:
        setattr(snap, f, getattr(log, f))
    snap.sensors_c = _sensors(log.sensors_c)


def _nvme(snap: ThermalSnapshot, ctrl: str, path: str) -> ThermalSnapshot:
    errors = []
    if nvme.available():
        try:
            log = nvme.smart_log(ctrl)
        except ToolError as exc:
            errors.append(f"nvme smart-log {ctrl}: {exc}")
        else:
            _from_log(snap, SOURCE_NVME, ctrl, log)
            try:
                ident = nvme.id_ctrl(ctrl)
                snap.warning_threshold_c = ident.warning_threshold_c
                snap.critical_threshold_c = ident.critical_threshold_c
            except ToolError as exc:
                snap.notes.append(f"thresholds unknown: nvme id-ctrl {ctrl}: {exc}")
            return snap
    else:
        errors.append(_tool_unavailable(nvme.PROGRAM))
    return _smartctl_fallback(snap, ctrl, errors, "nvme-cli")


def _smartctl_fallback(snap: ThermalSnapshot, ctrl: str, errors: List[str], first: str, host=None) -> ThermalSnapshot:
    """smartctl on the NVMe controller when ``first`` (nvme-cli, nvmecontrol) gave nothing: temperature, the
    warning/critical minutes and (7.5) thresholds; the transition counters only from its text form (a
    smartctl without JSON). ``errors``: why the first tool gave nothing, kept as notes or in the error."""
    _smartctl(snap, ctrl, host)
    if snap.ok:
        if snap.thm_temp1_trans_count is None:
            snap.notes.append(f"{first} unavailable: smartctl's JSON has no thermal management transition counters")
        snap.notes.extend(errors)
    else:
        snap.error = "; ".join(errors + ([snap.error] if snap.error else []))
    return snap


def _smartctl(snap: ThermalSnapshot, device: str, host=None) -> ThermalSnapshot:
    """smartctl's temperatures and wear of ``device``, the same on Linux and FreeBSD; host: FreeBSD's programs
    (a missing smartctl is then the host's ToolMissingError), None: this host, looked up on PATH first."""
    if host is None and not smartctl.available():
        snap.error = _tool_unavailable(smartctl.PROGRAM)
        return snap
    try:
        h = smartctl.health(device) if host is None else smartctl.health(device, host=host)
    except ToolMissingError:
        snap.error = _tool_unavailable(smartctl.PROGRAM)
        return snap
    except ToolError as exc:
        snap.error = f"smartctl {device}: {exc}"
        return snap
    if not h.usable:
        why = "; ".join(h.errors) or "no temperature reported"
        snap.error = f"smartctl {device}: {why}"
        return snap
    snap.source, snap.queried = SOURCE_SMARTCTL, device
    for f in ("temperature_c", "warning_temp_time_min", "critical_temp_time_min", "critical_warning",
              "thm_temp1_trans_count", "thm_temp2_trans_count", "thm_temp1_total_time_s", "thm_temp2_total_time_s",
              "warning_threshold_c", "critical_threshold_c", "percentage_used", "data_units_written",
              "logical_sectors_written", "logical_sector_bytes", "write_bytes_processed"):
        setattr(snap, f, getattr(h, f))
    snap.sensors_c = _sensors(h.sensors_c)
    if h.drive_trip_c is not None:
        snap.critical_threshold_c = h.drive_trip_c
    return snap
