"""The sweep document's words that its measurement loop stores beside the figures: a sustained point's
collapse (analysis/overtime.py) and the thermal evidence's warnings and information lines
(analysis/thermal.py). The sweep's engine calls these before it saves a point, so a stored result keeps the
sentences people read; the facts stay beside them.
"""

from __future__ import annotations

from typing import Any, Dict

from slogqual.analysis import thermal
from slogqual.analysis.overtime import Collapse
from slogqual.analysis.thermal import THROTTLING, ThermalMissing, ThermalNote


def collapse_why(c: Collapse) -> str:
    """What a sustained run's bandwidth did against its first seconds."""
    if not c.evaluated:
        return (f"the run lasted {c.run_s:.1f} s; a collapse needs {c.baseline_s:g} s of baseline and a "
                f"{c.window_s:g} s window after it")
    if c.t_s is None:
        return (f"bandwidth stayed at or above {c.fraction:.0%} of the first {c.baseline_s:g} s "
                f"({c.baseline_exact:.1f} MiB/s) in every {c.window_s:g} s window")
    return (f"bandwidth fell below {c.fraction:.0%} of the first {c.baseline_s:g} s ({c.baseline_exact:.1f} MiB/s) "
            f"at {c.t_s:.1f} s, after {c.bytes_before} bytes")


def collapse_dict(c: Collapse) -> Dict[str, Any]:
    """A sustained point's ``collapse`` as the sweep document holds it: the figures, then ``why``."""
    return dict(c.to_dict(), why=collapse_why(c))


def _over(n: ThermalNote) -> str:
    return f" over {n.over_s:.0f} s" if n.over_s is not None else ""


def thermal_line(n: ThermalNote) -> str:
    """A warning or an information line of the thermal evidence."""
    over = _over(n)
    if n.kind == "rose":
        what = "thermal throttling" if n.key in THROTTLING else "over temperature"
        amount = f"{n.after - n.before} {n.unit}" if n.unit else str(n.after - n.before)
        line = f"{what} during the measurement: {n.key} rose from {n.before} to {n.after} (+{amount}){over}: {n.what}"
        return line + (f" ({n.threshold_c} °C)" if n.threshold_c is not None else "")
    if n.kind == "down":
        return (f"thermal evidence unreliable: {n.key} went down from {n.before} to {n.after}{over} (a counter over "
                "the device's life: reset, or the snapshots are not of the same device)")
    if n.kind == "hot":
        was = f" (from {n.before} °C)" if n.before is not None else ""
        return (f"over temperature: the device was at {n.after} °C after the measurement{was}{over}, at or above "
                f"its {n.name} temperature threshold of {n.threshold_c} °C")
    if n.kind == "critical-bit":
        return (f"over temperature: SMART/Health critical warning bit 1 (temperature) set after the measurement "
                f"(critical_warning {n.before} -> {n.after}){over}")
    if n.kind == "steady":
        return f"temperature steady at {n.before} °C{over}"
    return (f"temperature {'rose' if n.after > n.before else 'fell'} from {n.before} °C to {n.after} °C "
            f"({n.after - n.before:+d} °C){over}")


def thermal_missing(m: ThermalMissing) -> str:
    return "; ".join(f"{side}: {error or ('no reading' if taken else 'not taken')}" for side, error, taken in m.sides)


def thermal_dict(summary: Dict[str, Any]) -> Dict[str, Any]:
    """A point's ``thermal`` (analysis.thermal.summary) as the sweep document holds it: its warnings, its
    information lines and what is missing in words."""
    out = dict(summary, warnings=[thermal_line(n) for n in summary["warnings"]],
               info=[thermal_line(n) for n in summary["info"]])
    if isinstance(out.get("unavailable"), ThermalMissing):
        out["unavailable"] = thermal_missing(out["unavailable"])
    return out


def thermal_summary(before: Any, after: Any) -> Dict[str, Any]:
    """The thermal evidence of one measurement as the sweep stores it (analysis.thermal.summary, worded)."""
    return thermal_dict(thermal.summary(before, after))
