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

from slogqual.analysis import shelf
from slogqual.analysis.classes import Classification, classify, fmt_us
from slogqual.report import classes as class_words
from slogqual.report import wording
from slogqual.report.plot import series_label
from slogqual.results import LAT_BASIS_FLUSH_BOUND, SweepResult
from slogqual.results.shelf import ShelfResult, UnitPath
from slogqual.units import size_label

# Identity fields in the order a reader looks for them (slogqual.device/1 records, diskinfo headers).
IDENTITY_KEYS = [
    ("model", "Model"), ("vendor", "Vendor"), ("serial", "Serial"), ("firmware", "Firmware"), ("wwn", "WWN"),
    ("transport", "Transport"), ("class", "Device class"), ("class_evidence", "Class evidence"),
    ("capacity", "Capacity (bytes)"), ("media_size", "Media size (bytes)"),
    ("logical_sector", "Logical sector"), ("physical_sector", "Physical sector"), ("sector_size", "Sector size"),
    ("rotational", "Rotational"), ("rotation_rate", "Rotation rate"), ("emulated", "Emulated"),
    ("trim", "TRIM/UNMAP"), ("attachment", "Attachment"), ("physical_path", "Physical path"),
    ("path", "Path"), ("partition_of", "Partition of"), ("platform", "Platform"), ("source", "Identity from"),
]
VERDICT_KEYS = [("write_cache", "Write cache"), ("power_loss", "Power loss"), ("link", "Link"),
                ("controller_link", "Controller link")]
# The verdict codes of slogqual.device/1 (slogqual/device/record.py) in plain words, with their tone.
VERDICT_WORDS = {
    "no-volatile-cache": ("no volatile write cache: an acknowledged write is on stable media", "good"),
    "volatile-cache-enabled": ("VOLATILE WRITE CACHE ENABLED: safe as a SLOG only with power-loss protection "
                               "or flushes that are honoured (see Power loss)", "bad"),
    "ok": ("link runs at its full capability", "good"),
    "below-capability": ("LINK BELOW CAPABILITY: bandwidth is capped", "bad"),
    "not-applicable": ("no link to check", "neutral"),
    "unknown": ("not determined", "neutral"),
}
BAD_RE = re.compile(r"volatile|unsafe|degraded|downgrad|below|no plp|not protected|lost|refused", re.I)
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


def _link_end(end: Any) -> str:
    if not isinstance(end, dict):
        return scalar(end)
    speed = end.get("speed") or (f"{end['rate']:g}" if end.get("rate") is not None else "")
    return " ".join(x for x in (speed, f"x{end['width']}" if end.get("width") else "") if x) or "?"


def _power_loss(label: str, value: Dict[str, Any]) -> Verdict:
    """analysis.powerloss's verdict: its words, its basis (measured / reported / inferred) and every piece
    of evidence by name; the tone from whether it is known safe."""
    tone = {True: "good", False: "bad"}.get(value.get("safe"), "neutral")
    detail = [("basis", scalar(value.get("basis")))]
    detail += [(scalar(e.get("name")) or "evidence", scalar(e.get("says"))) for e in value.get("evidence") or []
               if isinstance(e, dict)]
    return Verdict(label, scalar(value.get("text")) or scalar(value.get("verdict")) or "not determined", tone, detail)


def _verdict(label: str, value: Any) -> Verdict:
    if isinstance(value, dict) and "basis" in value and "evidence" in value:
        return _power_loss(label, value)
    if isinstance(value, dict):
        code = value.get("verdict")
        detail: List[Tuple[str, str]] = []
        if value.get("reason"):
            detail.append(("why", scalar(value["reason"])))
        if isinstance(value.get("current"), dict) and any(value["current"].values()):
            detail.append(("current", _link_end(value["current"])))
        if isinstance(value.get("max"), dict) and any(value["max"].values()):
            detail.append(("capable", _link_end(value["max"])))
        for key in ("kind", "scope", "address", "kernel"):
            if value.get(key):
                detail.append((key, scalar(value[key])))
        for line in value.get("evidence") or []:
            detail.append(("evidence", scalar(line)))
        if code in VERDICT_WORDS:
            words, tone = VERDICT_WORDS[code]
            return Verdict(label, words, tone, detail)
        text = scalar(code) if code else (scalar(value.get("summary") or value.get("state")) or "not determined")
        known = {k for k, _ in detail}
        detail += [(k, scalar(v)) for k, v in value.items()
                   if k not in known and k not in ("verdict", "current", "max", "evidence") and v not in (None, "", [], {})]
        return Verdict(label, text, tone_of(text), detail)
    if isinstance(value, str) and value in VERDICT_WORDS:
        words, tone = VERDICT_WORDS[value]
        return Verdict(label, words, tone)
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
    if isinstance(dev.get("unknown"), dict) and dev["unknown"]:
        by_reason: Dict[str, List[str]] = {}
        for k, v in dev["unknown"].items():
            by_reason.setdefault(str(v), []).append(str(k))
        rows.append(("Not determined", "; ".join(f"{', '.join(ks)} ({why})" for why, ks in by_reason.items())))
    if isinstance(dev.get("sources"), dict) and dev["sources"]:
        rows.append(("Sources", "; ".join(f"{k}: {v}" for k, v in dev["sources"].items())))
    path = unit_path_of(result)
    if path is not None:
        rows.append(("Path from the host", wording.unit_path(path)))
    target = result.target or {}
    rows.append(("Target", f"{target.get('path', '?')} ({target.get('kind', '?')})"))
    if target.get("size"):
        rows.append(("Target size (bytes)", f"{target['size']:,}"))
    return rows


def verdicts(result: SweepResult) -> List[Verdict]:
    dev = result.device if isinstance(result.device, dict) else None
    out = []
    for key, label in VERDICT_KEYS:
        if dev is not None and dev.get(key) is not None:
            out.append(_verdict(label, dev[key]))
        elif key != "controller_link":
            why = "no device record" if dev is None else "not in the device record"
            if result.source == "diskinfo":
                why = "not known from diskinfo output"
            out.append(Verdict(label, f"not determined ({why})", "neutral"))
    return out


def _num(v: Optional[float], digits: int = 1) -> str:
    if v is None:
        return "–"
    return f"{v:,.{digits}f}"


def all_warnings(result: SweepResult) -> List[str]:
    """The result's warnings, then the device record's that the result does not already carry."""
    out = list(result.warnings)
    dev = result.device if isinstance(result.device, dict) else {}
    for w in dev.get("warnings") or []:
        if w not in out:
            out.append(str(w))
    return out


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
        class_words.summary(c),
    ]


SUMMARY_HEADERS = ["device", "source", "sizes", "small-IO latency", "peak MiB/s", "write cache", "class (plain words)"]


# --- what the units share on their paths (device records' topology, shelf documents) ------------------

SHARED_HEADERS = ["element", "link", "ceiling", "units behind it"]


def unit_path_of(result: SweepResult) -> Optional[UnitPath]:
    """The path from the host its device record carries (Linux block devices), or None."""
    dev = result.device if isinstance(result.device, dict) else {}
    topo = dev.get("topology")
    return UnitPath.from_dict(topo) if isinstance(topo, dict) else None


def shared_rows(shared: Sequence[Tuple[Optional[str], shelf.Shared]], by_host: bool) -> List[List[str]]:
    return [([host or "unknown host"] if by_host else [])
            + [s.label, s.link or "–", wording.ceiling_words(s), ", ".join(s.units)] for host, s in shared]


@dataclass
class SharedPaths:
    """Which units of a report share what on their paths: the element, its ceiling, the units behind it."""

    headers: List[str]
    rows: List[List[str]]
    sentences: List[str]  # the elements with a ceiling, in words
    units: int  # units with a path to hardware

    lead: str = wording.SHARED_LEAD


def shared_paths(results: Sequence[SweepResult]) -> Optional[SharedPaths]:
    """From the results' device records, per host; None when fewer than two units have a path to
    hardware (files, loop devices, NBD exports and imports have none)."""
    units = []
    for r in results:
        path = unit_path_of(r)
        if path is not None and path.elements:
            units.append(((r.environment or {}).get("host"), path))
    if len({(h, p.device) for h, p in units}) < 2:
        return None
    shared = shelf.shared_on_hosts(units)
    by_host = len({h for h, _ in units}) > 1
    return SharedPaths((["host"] if by_host else []) + SHARED_HEADERS, shared_rows(shared, by_host),
                       [wording.shared_element(s, host if by_host else None) for host, s in shared
                        if s.ceiling is not None],
                       len({(h, p.device) for h, p in units}))


@dataclass
class ShelfSection:
    """A together-vs-alone document: the units, what they share, each size's figures and findings."""

    path: str
    result: ShelfResult
    shared_headers: List[str]
    shared: List[List[str]]
    size_headers: List[str]
    sizes: List[List[str]]
    findings: List[str]


def shelf_section(result: ShelfResult, path: str) -> ShelfSection:
    shared = [(None, s) for s in shelf.shared_elements(result.paths)]
    sizes = [[s.label, f"{s.alone_sum / 1e6:,.1f}",
              "–" if s.together is None else f"{s.together / 1e6:,.1f}",
              f"{s.together / s.alone_sum:.0%}" if s.together is not None and s.alone_sum else "–"]
             for s in result.sizes]
    findings = [f"{s.label}: {w}" for s in result.sizes for w in s.findings]
    return ShelfSection(path, result, SHARED_HEADERS, shared_rows(shared, False),
                        ["size", "alone, summed (MB/s)", "together (MB/s)", "together / alone"], sizes, findings)
