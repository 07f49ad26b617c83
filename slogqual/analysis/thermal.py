"""Thermal evidence: what two thermal snapshots of a device (before and after a measurement) say about
heat during it. Pure: snapshots in (slogqual.device.thermal.ThermalSnapshot objects or their
``to_dict()`` documents), warnings and a summary out as facts (``ThermalNote``; slogqual/report/sweep.py
words them before the sweep stores them); no tools, no processes.

A rise during the measurement in any of the NVMe SMART/Health log's thermal counters is a warning on
the result: the host-controlled thermal management transition counts and total times (the drive
throttled itself: the numbers measured are those of a throttled drive), and the minutes above the
warning or critical composite temperature. A counter that went down is a warning too: the snapshots
are not of the same device life (a reset, another device), so the evidence cannot be trusted.
A temperature rise alone is information, unless the temperature reached a threshold the device reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

# counter -> (what it counts, unit). The unit is the SMART/Health log's own: minutes for the composite
# temperature times, seconds for the thermal management times.
COUNTERS: Tuple[Tuple[str, str, str], ...] = (
    ("thm_temp1_trans_count", "transitions into thermal management level 1 (light throttling)", ""),
    ("thm_temp2_trans_count", "transitions into thermal management level 2 (heavy throttling)", ""),
    ("thm_temp1_total_time_s", "time in thermal management level 1 (light throttling)", "s"),
    ("thm_temp2_total_time_s", "time in thermal management level 2 (heavy throttling)", "s"),
    ("warning_temp_time_min", "time at or above the warning composite temperature", "min"),
    ("critical_temp_time_min", "time at or above the critical composite temperature", "min"),
)
THROTTLING = ("thm_temp1_trans_count", "thm_temp2_trans_count", "thm_temp1_total_time_s", "thm_temp2_total_time_s")
CRITICAL_WARNING_TEMPERATURE = 0x2  # SMART/Health critical warning bit 1


def _get(snap: Any, key: str) -> Any:
    if snap is None:
        return None
    if isinstance(snap, dict):
        return snap.get(key)
    return getattr(snap, key, None)


def _int(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _num(v: Any) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _usable(snap: Any) -> bool:
    return snap is not None and _get(snap, "source") is not None


def interval_s(before: Any, after: Any) -> Optional[float]:
    """Seconds between the snapshots (the monotonic clock when both have it, else wall-clock)."""
    for key in ("monotonic", "time"):
        a, b = _num(_get(before, key)), _num(_get(after, key))
        if a is not None and b is not None and b >= a:
            return b - a
    return None


@dataclass(frozen=True)
class ThermalNote:
    """A line of the thermal evidence, over ``over_s`` seconds: a counter ``key`` that ``rose`` (its ``what``
    and ``unit``; ``threshold_c`` the composite temperature a time-at-or-above counter counts from) or went
    ``down``; the device ``hot`` after the measurement (``after`` °C at or above its ``name`` threshold
    ``threshold_c``, ``before`` °C before); the ``critical-bit`` set (``before``/``after`` the
    critical_warning byte); or, information, the temperature ``steady`` or ``moved``."""

    kind: str
    key: Optional[str] = None
    before: Optional[int] = None
    after: Optional[int] = None
    unit: str = ""
    what: str = ""
    threshold_c: Optional[int] = None
    name: Optional[str] = None
    over_s: Optional[float] = None


def _threshold(before: Any, after: Any, key: str) -> Optional[int]:
    return _int(_get(after, key)) if _int(_get(after, key)) is not None else _int(_get(before, key))


THRESHOLD_OF = {"warning_temp_time_min": "warning_threshold_c", "critical_temp_time_min": "critical_threshold_c"}


def compare(before: Any, after: Any) -> List[ThermalNote]:
    """The warnings, each naming the counter, its values before and after and the interval. None or an
    unusable snapshot on either side gives no warnings (``summary`` says the evidence is missing)."""
    if not (_usable(before) and _usable(after)):
        return []
    out: List[ThermalNote] = []
    over = interval_s(before, after)
    for key, what, unit in COUNTERS:
        a, b = _int(_get(before, key)), _int(_get(after, key))
        if a is None or b is None or a == b:
            continue
        if b > a:
            threshold = _threshold(before, after, THRESHOLD_OF[key]) if key in THRESHOLD_OF else None
            out.append(ThermalNote("rose", key, a, b, unit, what, threshold, over_s=over))
        else:
            out.append(ThermalNote("down", key, a, b, over_s=over))
    t_after = _int(_get(after, "temperature_c"))
    if t_after is not None:
        for key, name in (("critical_threshold_c", "critical"), ("warning_threshold_c", "warning")):
            limit = _threshold(before, after, key)
            if limit is not None and t_after >= limit:
                out.append(ThermalNote("hot", before=_int(_get(before, "temperature_c")), after=t_after,
                                       threshold_c=limit, name=name, over_s=over))
                break
    cw_a, cw_b = _int(_get(before, "critical_warning")), _int(_get(after, "critical_warning"))
    if cw_b is not None and cw_b & CRITICAL_WARNING_TEMPERATURE and not (
            cw_a is not None and cw_a & CRITICAL_WARNING_TEMPERATURE):
        out.append(ThermalNote("critical-bit", before=cw_a, after=cw_b, over_s=over))
    return out


def info(before: Any, after: Any) -> List[ThermalNote]:
    """What is worth saying but is no warning: the temperature before and after."""
    if not (_usable(before) and _usable(after)):
        return []
    a, b = _int(_get(before, "temperature_c")), _int(_get(after, "temperature_c"))
    if a is None or b is None:
        return []
    return [ThermalNote("steady" if b == a else "moved", before=a, after=b, over_s=interval_s(before, after))]


@dataclass(frozen=True)
class ThermalMissing:
    """Why the thermal evidence is missing: per side (before, after), the snapshot's error and whether it was
    taken at all."""

    sides: Tuple[Tuple[str, Optional[str], bool], ...]


def summary(before: Any, after: Any) -> Dict[str, Any]:
    """The thermal evidence of one measurement, for a result document (report/sweep.thermal_dict words its
    warnings, info and what is missing): both snapshots, the interval, each counter's before/after/delta,
    whether the drive throttled, the warnings and the info lines."""
    doc: Dict[str, Any] = {
        "available": _usable(before) and _usable(after),
        "source": _get(after, "source") or _get(before, "source"),
        "interval_s": interval_s(before, after),
        "before": _as_dict(before),
        "after": _as_dict(after),
    }
    if not doc["available"]:
        missing = [(side, _get(s, "error"), s is not None) for side, s in (("before", before), ("after", after))
                   if not _usable(s)]
        doc.update(throttled=None, warnings=[], info=[], unavailable=ThermalMissing(tuple(missing)),
                   temperature_c=None, counters={})
        return doc
    counters: Dict[str, Dict[str, Any]] = {}
    for key, what, unit in COUNTERS:
        a, b = _int(_get(before, key)), _int(_get(after, key))
        if a is None and b is None:
            continue
        counters[key] = {"before": a, "after": b, "delta": (b - a) if a is not None and b is not None else None,
                         "unit": unit or "count", "what": what}
    t_a, t_b = _int(_get(before, "temperature_c")), _int(_get(after, "temperature_c"))
    known = [counters[k]["delta"] for k in THROTTLING if k in counters and counters[k]["delta"] is not None]
    doc.update(
        temperature_c={"before": t_a, "after": t_b,
                       "delta": (t_b - t_a) if t_a is not None and t_b is not None else None,
                       "warning_threshold": _threshold(before, after, "warning_threshold_c"),
                       "critical_threshold": _threshold(before, after, "critical_threshold_c")},
        counters=counters,
        throttled=(any(d > 0 for d in known) if known else None),
        warnings=compare(before, after),
        info=info(before, after),
    )
    return doc


def _as_dict(snap: Any) -> Optional[Dict[str, Any]]:
    if snap is None:
        return None
    if isinstance(snap, dict):
        return dict(snap)
    to_dict = getattr(snap, "to_dict", None)
    return to_dict() if callable(to_dict) else None
