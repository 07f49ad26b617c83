"""nvmecontrol(8): ``nvmecontrol identify nvmeX`` (Identify Controller) and ``nvmecontrol logpage -p 2 nvmeX``
(the SMART/Health Information log), FreeBSD style.

sbin/nvmecontrol/identify.c prints ``Label:<padding>value`` lines in a fixed
order, including ``Volatile Write Cache:        Present`` / ``Not Present``.
Web pages frequently collapse the whole block into one line; the parser then
cuts the text at the known labels (in their printed order), which is exact for
every label it knows and ignores the rest. It prints no composite temperature
thresholds (WCTEMP/CCTEMP): identify_ext.c has no line for them, only ``-x``'s hex dump holds them.

The health log (sbin/nvmecontrol/logpage.c, ``print_log_health``) is one ``Label:<padding>value`` line per
field of the page, in the page's own units: temperatures as ``%u K, %2.2f C, %3.2f F`` (the Kelvin integer is
the field), the 128-bit counters in decimal, the warning/critical composite temperature times in minutes and
the thermal management totals in seconds, all four 32-bit fields printed with ``%d``. The lines indented by
one space under ``Critical Warning State`` are that byte's bits, not fields. Since 2019 (FreeBSD 12.1/13) it
ends with the four thermal management lines; older nvmecontrol stops at the temperature sensors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from slogqual.tools import spawn as _run
from slogqual.tools.nvme import KELVIN_OFFSET

PROGRAM = "nvmecontrol"

# Labels identify.c prints (a subset, in order) that slogqual uses or must step over.
LABELS = [
    "Vendor ID", "Subsystem Vendor ID", "Serial Number", "Model Number", "Firmware Version",
    "Recommended Arb Burst", "IEEE OUI Identifier", "Multi-Path I/O Capabilities",
    "Max Data Transfer Size", "Controller ID", "Version", "Security Send/Receive", "Format NVM",
    "Firmware Activate/Download", "Namespace Managment", "Namespace Management", "Device Self-test",
    "Directives", "NVMe-MI Send/Receive", "Virtualization Management", "Doorbell Buffer Config",
    "Get LBA Status", "Sanitize", "Abort Command Limit", "Async Event Request Limit",
    "Number of Firmware Slots", "Firmware Slot 1 Read-Only", "Per-Namespace SMART Log",
    "Error Log Page Entries", "Number of Power States", "Total NVM Capacity",
    "Unallocated NVM Capacity", "Submission Queue Entry Size", "Completion Queue Entry Size",
    "Number of Namespaces", "Compare Command", "Write Uncorrectable Command",
    "Dataset Management Command", "Write Zeroes Command", "Features Save/Select Field",
    "Reservation", "Timestamp feature", "Verify feature", "Fused Operation Support",
    "Format NVM Attributes", "Volatile Write Cache", "NVM Subsystem Name",
]


@dataclass
class NvmeIdentify:
    model: Optional[str] = None
    serial: Optional[str] = None
    firmware: Optional[str] = None
    version: Optional[str] = None
    total_capacity: Optional[int] = None
    vwc_present: Optional[bool] = None
    fields: Dict[str, str] = field(default_factory=dict)


def controller_of(disk: str) -> str:
    """nvdN/ndaN (and its partitions, nvd0p1) is namespace 1 of controller nvmeN on the usual single-namespace
    drive; nvmeN and its namespace nodes nvmeNnsM belong to controller nvmeN."""
    m = re.match(r"(?:nvd|nda|nvme)([0-9]+)", disk)
    return "nvme" + (m.group(1) if m else re.sub(r"\D", "", disk))


def argv(ctrl: str) -> List[str]:
    return [PROGRAM, "identify", ctrl]


def _fields_by_lines(text: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([A-Za-z][A-Za-z0-9 /()\-.]*?):\s+(.*?)\s*$", line)
        if m and not set(m.group(2)) <= {"="}:
            out.setdefault(m.group(1).strip(), m.group(2))
    return out


def _fields_by_labels(text: str) -> Dict[str, str]:
    flat = " ".join(text.split())
    hits = []
    for label in LABELS:
        for m in re.finditer(re.escape(label) + r":\s", flat):
            hits.append((m.start(), m.end(), label))
    hits.sort()
    # drop a hit nested in a longer label (e.g. "Vendor ID" inside "Subsystem Vendor ID")
    clean = [h for h in hits if not any(o[0] < h[0] < o[1] or (o[0] < h[0] and h[1] <= o[1]) for o in hits if o is not h)]
    out: Dict[str, str] = {}
    for i, (start, end, label) in enumerate(clean):
        stop = clean[i + 1][0] if i + 1 < len(clean) else len(flat)
        value = flat[end:stop].strip()
        value = re.split(r"\s+[A-Z][A-Za-z /]+\s+={4,}", value)[0].strip()  # a section heading follows
        out.setdefault(label, value)
    return out


def parse(text: str) -> NvmeIdentify:
    if not text or not text.strip():
        raise ValueError("empty nvmecontrol output")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    fields = _fields_by_lines(text) if len(lines) > 5 else _fields_by_labels(text)
    if not any(k in fields for k in ("Model Number", "Serial Number", "Volatile Write Cache")):
        fields = _fields_by_labels(text)
    if not any(k in fields for k in ("Model Number", "Serial Number", "Volatile Write Cache")):
        raise ValueError("no nvmecontrol identify fields (Model Number, Serial Number, Volatile Write Cache)")
    ident = NvmeIdentify(fields=fields)
    ident.model = fields.get("Model Number") or None
    ident.serial = fields.get("Serial Number") or None
    ident.firmware = fields.get("Firmware Version") or None
    ident.version = fields.get("Version") or None
    m = re.match(r"([0-9]+)\s*bytes", fields.get("Total NVM Capacity", ""))
    ident.total_capacity = int(m.group(1)) if m else None
    vwc = fields.get("Volatile Write Cache")
    if vwc:
        v = vwc.strip().lower()
        ident.vwc_present = False if v.startswith("not present") else True if v.startswith("present") else None
    return ident


def identify(ctrl: str) -> NvmeIdentify:
    proc = _run.run(argv(ctrl), timeout=30, typed_timeout=True, check=True)
    return _run.parse_output(proc, parse)


# --- the SMART/Health Information log (02h) ----------------------------------------------------------------

HEALTH_TITLE = "SMART/Health Information Log"
_U32 = 0xFFFFFFFF

# logpage.c's top-level labels (lower case) -> NvmeHealth field; the values are integers in the page's units
_HEALTH_COUNTERS = {
    "available spare": "available_spare",
    "available spare threshold": "available_spare_threshold",
    "percentage used": "percentage_used",
    "data units written": "data_units_written",
    "data units (512,000 byte) written": "data_units_written",  # the label before 2018
    "warning temp composite time": "warning_temp_time_min",
    "error temp composite time": "critical_temp_time_min",
    "temperature 1 transition count": "thm_temp1_trans_count",
    "temperature 2 transition count": "thm_temp2_trans_count",
    "total time for temperature 1": "thm_temp1_total_time_s",
    "total time for temperature 2": "thm_temp2_total_time_s",
}
# the 32-bit fields logpage.c prints with %d: a value above 2^31-1 comes out negative
_SIGNED_U32 = {"warning_temp_time_min", "critical_temp_time_min", "thm_temp1_trans_count", "thm_temp2_trans_count",
               "thm_temp1_total_time_s", "thm_temp2_total_time_s"}


@dataclass
class NvmeHealth:
    """The health log as nvmecontrol printed it; the field names are nvme.SmartLog's (Linux's nvme-cli), so the
    thermal snapshot fills from either alike. None: the line was not printed (an older nvmecontrol)."""

    critical_warning: Optional[int] = None
    temperature_c: Optional[int] = None  # composite temperature: the Kelvin field less 273, as nvme-cli
    available_spare: Optional[int] = None
    available_spare_threshold: Optional[int] = None
    percentage_used: Optional[int] = None
    data_units_written: Optional[int] = None  # units of 512,000 bytes
    warning_temp_time_min: Optional[int] = None
    critical_temp_time_min: Optional[int] = None
    thm_temp1_trans_count: Optional[int] = None
    thm_temp2_trans_count: Optional[int] = None
    thm_temp1_total_time_s: Optional[int] = None
    thm_temp2_total_time_s: Optional[int] = None
    sensors_c: Optional[Dict[int, int]] = None  # sensor number (1-8) -> Celsius; nvmecontrol skips unreported ones


def argv_health(ctrl: str) -> List[str]:
    return [PROGRAM, "logpage", "-p", "2", ctrl]


def _kelvin_c(value: str) -> Optional[int]:
    """'306 K, 32.85 C, 91.13 F' -> 33 (Kelvin less 273); None for 0 K, the page's "not reported"."""
    m = re.match(r"\s*([0-9]+)\s*K\b", value)
    if not m:
        raise ValueError(f"no Kelvin temperature in {value.strip()[:40]!r}")
    k = int(m.group(1))
    return k - KELVIN_OFFSET if k > 0 else None


def _integer(value: str, field_name: str) -> int:
    v = value.strip()
    if not re.fullmatch(r"-?[0-9]+", v):
        raise ValueError(f"{field_name}: not a number: {v[:40]!r}")
    n = int(v)
    if field_name in _SIGNED_U32:
        return n & _U32  # %d of an unsigned 32-bit field: the same bits
    if n < 0:
        raise ValueError(f"{field_name}: negative {v!r}")
    return n


def _health_line(h: NvmeHealth, sensors: Dict[int, int], label: str, value: str) -> None:
    key = " ".join(label.split()).lower()
    if key == "critical warning state":
        h.critical_warning = int(value.strip(), 16)
    elif key == "temperature":
        h.temperature_c = _kelvin_c(value)
    elif key in _HEALTH_COUNTERS:
        setattr(h, _HEALTH_COUNTERS[key], _integer(value, _HEALTH_COUNTERS[key]))
    else:
        m = re.fullmatch(r"temperature sensor ([1-8])", key)
        c = _kelvin_c(value) if m else None
        if c is not None:
            sensors[int(m.group(1))] = c


def parse_health(text: str) -> NvmeHealth:
    """``nvmecontrol logpage -p 2`` text. ValueError on text without the log's title or composite temperature
    (another page, an error, garbage) and on a known field whose value is not its number."""
    if not isinstance(text, str) or HEALTH_TITLE not in text:
        raise ValueError(f"no {HEALTH_TITLE!r} in nvmecontrol output")
    h, sensors = NvmeHealth(), {}
    seen_temperature = False
    for line in text.splitlines():
        label, sep, value = line.partition(":")
        if not sep or not label or label[0].isspace():
            continue  # the title, its underline, the critical warning's bits
        seen_temperature |= " ".join(label.split()).lower() == "temperature"
        _health_line(h, sensors, label, value)
    if not seen_temperature:
        raise ValueError("no composite Temperature line in nvmecontrol's health log")
    h.sensors_c = sensors or None
    return h


def health(ctrl: str, host=None) -> NvmeHealth:
    """The SMART/Health log of controller ``ctrl`` (nvme0); host: where nvmecontrol runs (tools/freebsd/host.py).
    ToolFailedError on a failing exit (no such controller, the page refused), ToolOutputError on text
    :func:`parse_health` cannot read, ToolMissingError/ToolTimeoutError as the host raises them."""
    from slogqual.tools.freebsd.host import LIVE

    proc = (host or LIVE).run(argv_health(ctrl), timeout=30)
    if proc.returncode != 0:
        raise _run.failure(proc.args, proc.returncode, proc.stderr, proc.stdout)
    return _run.parse_output(proc, parse_health)
