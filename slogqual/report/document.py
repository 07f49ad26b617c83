"""The content of a report, independent of HTML or Markdown: sections, rows, verdicts.

Everything a lab needs to archive one qualification: which device (identity,
link and write-cache verdicts), how it was measured (parameters, environment),
what came out (points, class in plain words), and what makes the numbers suspect
(warnings). The device record comes from slogqual's device inspection and may
be null or partial; diskinfo imports carry the diskinfo header instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from slogqual.analysis.classes import Classification, classify, fmt_us
from slogqual.report.plot import series_label
from slogqual.results import LAT_BASIS_FLUSH_BOUND, SweepResult
from slogqual.units import size_label

# Identity fields in the order a reader looks for them.
IDENTITY_KEYS = [
    ("model", "Model"), ("serial", "Serial"), ("firmware", "Firmware"), ("vendor", "Vendor"),
    ("transport", "Transport"), ("class", "Device class"), ("capacity", "Capacity"), ("size", "Capacity"),
    ("sector_size", "Sector size"), ("logical_block_size", "Logical block"), ("physical_block_size", "Physical block"),
    ("media_size", "Media size (bytes)"), ("rotational", "Rotational"), ("rotation_rate", "Rotation rate"),
    ("trim", "TRIM/UNMAP"), ("attachment", "Attachment"), ("physical_path", "Physical path"),
    ("path", "Path"), ("source", "Identity from"),
]
VERDICT_KEYS = [("write_cache", "Write cache / PLP"), ("link", "Link"), ("safety", "Safety")]
BAD_RE = re.compile(r"volatile|unsafe|degraded|downgrad|below|slow|no plp|not protected|lost|refused|warn", re.I)
GOOD_RE = re.compile(r"non-?volatile|write-?through|\bsafe\b|plp|protected|full|\bok\b|as capable|matches", re.I)


@dataclass
class Verdict:
    label: str
    text: str
    tone: str  # "bad", "good" or "neutral"
    detail: List[Tuple[str, str]] = field(default_factory=list)


def tone_of(text: str) -> str:
    """bad / good / neutral, from the words of a verdict ("non-volatile" is not "volatile")."""
    t = text or ""
    if BAD_RE.search(re.sub(r"non-?volatile", "", t, flags=re.I)):
        return "bad"
    if GOOD_RE.search(t):
        return "good"
    return "neutral"


def scalar(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(scalar(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {scalar(v)}" for k, v in value.items() if v not in (None, "", [], {}))
    return str(value)


def _verdict(label: str, value: Any) -> Verdict:
    if isinstance(value, dict):
        head = None
        for key in ("verdict", "summary", "state", "status", "text", "value"):
            if value.get(key) not in (None, ""):
                head = scalar(value[key])
                break
        detail = [(k, scalar(v)) for k, v in value.items() if v not in (None, "", [], {}) and scalar(v) != head]
        text = head or scalar(value) or "not determined"
        return Verdict(label, text, tone_of(text), detail)
    text = scalar(value) or "not determined"
    return Verdict(label, text, tone_of(text) if value is not None else "neutral")


@dataclass
class DeviceSection:
    name: str
    path: str
    result: SweepResult
    classification: Classification
    identity: List[Tuple[str, str]]
    verdicts: List[Verdict]
    params: List[Tuple[str, str]]
    environment: List[Tuple[str, str]]
    point_rows: List[List[str]]
    point_headers: List[str]
    upper_bound_percentiles: bool


def identity_rows(result: SweepResult) -> List[Tuple[str, str]]:
    dev = result.device if isinstance(result.device, dict) else {}
    rows: List[Tuple[str, str]] = []
    seen = set()
    for key, label in IDENTITY_KEYS:
        if key in dev and label not in seen and dev[key] not in (None, "", [], {}):
            rows.append((label, scalar(dev[key])))
            seen.add(label)
    target = result.target or {}
    rows.append(("Target", f"{target.get('path', '?')} ({target.get('kind', '?')})"))
    if target.get("size"):
        rows.append(("Target size (bytes)", f"{target['size']:,}"))
    return rows


def verdicts(result: SweepResult) -> List[Verdict]:
    dev = result.device if isinstance(result.device, dict) else None
    out = []
    for key, label in VERDICT_KEYS:
        if dev is not None and key in dev:
            out.append(_verdict(label, dev[key]))
        elif key != "safety":
            why = "no device record" if dev is None else "not in the device record"
            if result.source == "diskinfo":
                why = "not known from diskinfo output"
            out.append(Verdict(label, f"not determined ({why})", "neutral"))
    return out


def _num(v: Optional[float], digits: int = 1) -> str:
    if v is None:
        return "–"
    return f"{v:,.{digits}f}"


def point_table(result: SweepResult) -> Tuple[List[str], List[List[str]]]:
    diskinfo = result.source == "diskinfo"
    headers = ["size", "IOs", "mean µs", "p50 µs", "p99 µs", "p99.9 µs", "max µs", "writes/s", "MiB/s"]
    rows = []
    for p in result.points:
        lat = p.lat_us
        rows.append([
            size_label(p.size), (f"~{p.ios:,}" if diskinfo else f"{p.ios:,}"), _num(lat.mean), _num(lat.p50),
            _num(lat.p99), _num(lat.p999), _num(lat.max), _num(p.iops, 0), _num(p.mbps, 1),
        ])
    return headers, rows


def _flatten(d: Dict[str, Any], skip: Sequence[str] = ()) -> List[Tuple[str, str]]:
    out = []
    for k, v in d.items():
        if k in skip or v in (None, "", [], {}):
            continue
        if k == "sizes" and isinstance(v, list):
            v = ", ".join(size_label(int(s)) for s in v)
        out.append((k, scalar(v)))
    return out


def device_section(result: SweepResult, path: str, name: Optional[str] = None) -> DeviceSection:
    headers, rows = point_table(result)
    return DeviceSection(
        name=name or series_label(result),
        path=path,
        result=result,
        classification=classify(result),
        identity=identity_rows(result),
        verdicts=verdicts(result),
        params=_flatten(result.params),
        environment=_flatten(result.environment),
        point_rows=rows,
        point_headers=headers,
        upper_bound_percentiles=any(p.lat_basis == LAT_BASIS_FLUSH_BOUND for p in result.points),
    )


def summary_row(s: DeviceSection) -> List[str]:
    c = s.classification
    wc = next((v.text for v in s.verdicts if v.label.startswith("Write cache")), "")
    return [
        s.name,
        s.result.source,
        str(len(s.result.points)),
        fmt_us(c.small_io_latency_us) if c.small_io_latency_us else "–",
        "–" if c.peak_mbps is None else f"{c.peak_mbps:,.0f}",
        wc,
        c.summary,
    ]


SUMMARY_HEADERS = ["device", "source", "sizes", "small-IO latency", "peak MiB/s", "write cache", "class (plain words)"]
