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

FreeBSD (not implemented here: snapshot() returns a snapshot whose ``error`` says so for a disk, None
for anything else) would use ``nvmecontrol logpage -p 2 nvmeN``, which prints the same SMART/Health log
page (a parser for its text would go in slogqual/tools/freebsd/nvmecontrol.py), ``nvmecontrol identify``
for the thresholds, and smartctl, which works on /dev/adaN, /dev/daN and /dev/nvmeN as on Linux.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional

from slogqual.errors import ToolError
from slogqual.paths import is_nbd_uri
from slogqual.tools import nvme, smartctl, sysfs
from slogqual.tools import run as _run

SOURCE_NVME = "nvme smart-log"
SOURCE_SMARTCTL = "smartctl"

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


def snapshot(path: str, sysroot: str = sysfs.SYS) -> Optional[ThermalSnapshot]:
    """The thermal state of the device at ``path`` now, or None when ``path`` is not a device whose
    hardware reports one (found from stat and sysfs alone, no tool is run then). Never raises: a tool
    missing, failing or printing garbage leaves ``error`` set (and ``source`` None when nothing was read)."""
    try:
        if is_nbd_uri(path):
            return None
        try:
            st = os.stat(path)
        except OSError as exc:
            snap = _new(path)
            snap.error = f"cannot stat {path}: {exc.strerror or exc}"
            return snap
        if sys.platform.startswith("freebsd"):
            return _freebsd(path, st)
        if not stat.S_ISBLK(st.st_mode):
            return None  # a regular file (on tmpfs, ZFS, ext4 ...): no device heat of its own
        return _linux(path, f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}", sysroot)
    except Exception as exc:  # the contract: evidence gathering never ends a sweep
        snap = _new(path)
        snap.error = f"thermal snapshot failed: {type(exc).__name__}: {exc}"
        return snap


def _freebsd(path: str, st: os.stat_result) -> Optional[ThermalSnapshot]:
    from slogqual.device.freebsd import transport_of

    if not (stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)):
        return None
    transport = transport_of(os.path.basename(os.path.realpath(path)))
    if transport not in PHYSICAL:
        return None
    snap = _new(path)
    snap.transport = transport
    snap.error = ("thermal snapshots are not implemented on FreeBSD (nvmecontrol logpage -p 2 or smartctl "
                  "would serve)")
    return snap


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


def _nvme(snap: ThermalSnapshot, ctrl: str, path: str) -> ThermalSnapshot:
    errors = []
    if nvme.available():
        try:
            log = nvme.smart_log(ctrl)
        except ToolError as exc:
            errors.append(f"nvme smart-log {ctrl}: {exc}")
        else:
            snap.source, snap.queried = SOURCE_NVME, ctrl
            for f in ("temperature_c", "warning_temp_time_min", "critical_temp_time_min", "thm_temp1_trans_count",
                      "thm_temp2_trans_count", "thm_temp1_total_time_s", "thm_temp2_total_time_s", "critical_warning",
                      "percentage_used", "data_units_written"):
                setattr(snap, f, getattr(log, f))
            snap.sensors_c = _sensors(log.sensors_c)
            try:
                ident = nvme.id_ctrl(ctrl)
                snap.warning_threshold_c = ident.warning_threshold_c
                snap.critical_threshold_c = ident.critical_threshold_c
            except ToolError as exc:
                snap.notes.append(f"thresholds unknown: nvme id-ctrl {ctrl}: {exc}")
            return snap
    else:
        errors.append(_tool_unavailable(nvme.PROGRAM))
    # smartctl on the controller: temperature, the warning/critical minutes and (7.5) thresholds; the
    # transition counters only from its text form (a smartctl without JSON)
    _smartctl(snap, ctrl)
    if snap.ok:
        if snap.thm_temp1_trans_count is None:
            snap.notes.append("nvme-cli unavailable: smartctl's JSON has no thermal management transition counters")
        snap.notes.extend(errors)
    else:
        snap.error = "; ".join(errors + ([snap.error] if snap.error else []))
    return snap


def _smartctl(snap: ThermalSnapshot, device: str) -> ThermalSnapshot:
    if not smartctl.available():
        snap.error = _tool_unavailable(smartctl.PROGRAM)
        return snap
    try:
        h = smartctl.health(device)
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
