"""smartctl (smartmontools) in JSON mode: identity, rotation, link speed and ATA/SCSI write cache.

``smartctl --json=c -i -g wcache DEV`` (``-i`` only for NVMe, where
``-g wcache`` does not apply). smartctl's exit status is a bit mask: bits 0
and 1 mean the command line or the device open failed, the higher bits are
about the disk's health and do not make the identity less true. Only this
module spawns smartctl.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, List, Optional

from slogqual.tools import run as _run

PROGRAM = "smartctl"

EXIT_CMDLINE = 1 << 0
EXIT_OPEN = 1 << 1


@dataclass
class Speed:
    text: Optional[str]  # "6.0 Gb/s"
    gbps: Optional[float]


@dataclass
class SmartInfo:
    protocol: Optional[str] = None  # ATA | SCSI | NVMe
    device_type: Optional[str] = None  # sat, scsi, nvme, usbsunplus ...
    model: Optional[str] = None
    vendor: Optional[str] = None
    family: Optional[str] = None
    serial: Optional[str] = None
    firmware: Optional[str] = None
    capacity: Optional[int] = None
    logical_block_size: Optional[int] = None
    physical_block_size: Optional[int] = None
    rotation_rate: Optional[int] = None  # rpm; 0 = solid state
    form_factor: Optional[str] = None
    scsi_transport: Optional[str] = None  # "SAS (SPL-4)"
    link_max: Optional[Speed] = None
    link_current: Optional[Speed] = None
    write_cache_enabled: Optional[bool] = None
    exit_status: Optional[int] = None
    errors: List[str] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        """The device was opened and identified (the exit status bits 0/1 are clear)."""
        if self.exit_status is not None and self.exit_status & (EXIT_CMDLINE | EXIT_OPEN):
            return False
        return bool(self.model or self.serial or self.protocol)


def version() -> _run.ToolVersion:
    """'smartctl 7.3 2022-02-28 r5338 ...' -> (7, 3)."""
    return _run.get_version(PROGRAM, ["--version"], r"smartctl (\d+)\.(\d+)")


def check_version() -> _run.ToolVersion:
    return _run.check_version(PROGRAM, version)


def available() -> bool:
    return _run.which(PROGRAM) is not None


def argv(device: str, nvme: bool = False) -> List[str]:
    cmd = [PROGRAM, "--json=c", "-i"]
    if not nvme:
        cmd += ["-g", "wcache"]
    return cmd + [device]


def _number(v: Any) -> Optional[float]:
    """A finite JSON number (not a bool, not Infinity/NaN/1e999); None otherwise."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return v if math.isfinite(v) else None


def _speed(d: Any) -> Optional[Speed]:
    if not isinstance(d, dict):
        return None
    text = _s(d.get("string"))
    gbps = None
    ups, bpu = _number(d.get("units_per_second")), _number(d.get("bits_per_unit"))
    if ups is not None and bpu is not None:
        gbps = ups * bpu / 1e9
    elif isinstance(text, str):
        m = re.match(r"\s*([0-9.]+)\s*Gb/s", text)
        if m:
            gbps = float(m.group(1))
    return Speed(text=text, gbps=gbps)


def _s(v: Any) -> Optional[str]:
    if v is None or isinstance(v, (dict, list)):
        return None
    s = str(v).strip()
    return s or None


def _i(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def parse(text: str) -> SmartInfo:
    """Parse smartctl JSON. Raises ValueError on text that is not a smartctl JSON object."""
    if not text or not text.strip():
        raise ValueError("empty smartctl output")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"smartctl output is not JSON ({exc.msg})") from None
    if not isinstance(doc, dict):
        raise ValueError("smartctl JSON is not an object")
    info = SmartInfo()
    meta = doc.get("smartctl") if isinstance(doc.get("smartctl"), dict) else {}
    info.exit_status = _i(meta.get("exit_status"))
    messages = meta.get("messages")
    for m in messages if isinstance(messages, list) else []:  # a field of the wrong type is not read
        if isinstance(m, dict) and m.get("severity") == "error" and m.get("string"):
            info.errors.append(str(m["string"]))
    dev = doc.get("device") if isinstance(doc.get("device"), dict) else {}
    info.protocol = _s(dev.get("protocol"))
    info.device_type = _s(dev.get("type"))
    # SCSI: the product alone (scsi_model_name is vendor + product; the vendor has its own field)
    info.model = _s(doc.get("model_name")) or _s(doc.get("scsi_product")) or _s(doc.get("scsi_model_name"))
    info.vendor = _s(doc.get("scsi_vendor"))
    info.family = _s(doc.get("model_family"))
    info.serial = _s(doc.get("serial_number"))
    info.firmware = _s(doc.get("firmware_version")) or _s(doc.get("scsi_revision"))
    cap = doc.get("user_capacity")
    if isinstance(cap, dict):
        info.capacity = _i(cap.get("bytes"))
    if info.capacity is None:
        info.capacity = _i(doc.get("nvme_total_capacity"))
    info.logical_block_size = _i(doc.get("logical_block_size"))
    info.physical_block_size = _i(doc.get("physical_block_size"))
    info.rotation_rate = _i(doc.get("rotation_rate"))
    ff = doc.get("form_factor")
    if isinstance(ff, dict):
        info.form_factor = _s(ff.get("name"))
    tp = doc.get("scsi_transport_protocol")
    if isinstance(tp, dict):
        info.scsi_transport = _s(tp.get("name"))
    spd = doc.get("interface_speed")
    if isinstance(spd, dict):
        info.link_max = _speed(spd.get("max"))
        info.link_current = _speed(spd.get("current"))
    wc = doc.get("write_cache")
    if isinstance(wc, dict) and isinstance(wc.get("enabled"), bool):
        info.write_cache_enabled = wc["enabled"]
    return info


def query(device: str, nvme: bool = False) -> SmartInfo:
    """Run smartctl on device. Its exit status bits land in the result (``usable``); ToolTooOldError
    for a smartctl without JSON, ToolTimeoutError when it hangs, ToolOutputError when its output
    cannot be parsed at all."""
    check_version()
    proc = _run.run(argv(device, nvme=nvme), timeout=60, typed_timeout=True)
    return _run.parse_output(proc, parse)
