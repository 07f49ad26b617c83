"""nvmecontrol(8) ``nvmecontrol identify nvmeX``: Identify Controller, FreeBSD style.

sbin/nvmecontrol/identify.c prints ``Label:<padding>value`` lines in a fixed
order, including ``Volatile Write Cache:        Present`` / ``Not Present``.
Web pages frequently collapse the whole block into one line; the parser then
cuts the text at the known labels (in their printed order), which is exact for
every label it knows and ignores the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from slogqual.tools import run as _run

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
    """nvdN/ndaN is namespace 1 of controller nvmeN on the usual single-namespace drive."""
    return "nvme" + re.sub(r"\D", "", disk)


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
    m = re.match(r"(\d+)\s*bytes", fields.get("Total NVM Capacity", ""))
    ident.total_capacity = int(m.group(1)) if m else None
    vwc = fields.get("Volatile Write Cache")
    if vwc:
        v = vwc.strip().lower()
        ident.vwc_present = False if v.startswith("not present") else True if v.startswith("present") else None
    return ident


def identify(ctrl: str) -> NvmeIdentify:
    proc = _run.run(argv(ctrl), timeout=30, typed_timeout=True, check=True)
    return _run.parse_output(proc, parse)
