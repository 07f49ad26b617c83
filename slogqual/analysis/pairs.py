"""Mirrored and striped log pairs in a pool scenario: each pair's verdict, and what the pair buys (or
costs) against the best single log of the same result. Pure functions over scaling curves.

The talk measured both shapes: two SLOGs striped (≈ 30,000 IOPS, more than one alone) and an NVDIMM
mirrored to the partner controller (the mirror's cost against one log). A pair is judged against the
same no-log curves as a single candidate, never against another SLOG curve.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

from slogqual.analysis import scaling
from slogqual.analysis.findings import PROBLEMS, Finding, Kind, StepRef
from slogqual.results.scenario import ScenarioStep

PAIR_LOGS = ("mirror", "stripe")


def is_pair(curve: scaling.Curve) -> bool:
    return curve.log in PAIR_LOGS


def devices_of(steps: Sequence[ScenarioStep], pool_logs: Sequence[str]) -> List[str]:
    """A pair curve's log devices: the steps' recorded ``log_devices`` without zpool's 'mirror' keyword;
    a step without them (none is known to exist) falls back to the pool's two --log devices."""
    for s in steps:
        devs = [d for d in s.log_devices if d != "mirror"]
        if devs:
            return devs
    return list(pool_logs) if len(pool_logs) == 2 else []


def versus_single(pair: scaling.Curve, pair_peak: float, best: Optional[Dict[str, Any]],
                  metric: str) -> Optional[Finding]:
    """The pair's peak against the best single log's (same sync), as a finding; None without one."""
    if not best or not best.get("peak") or pair_peak <= 0:
        return None
    return Finding(Kind.PAIR_VERSUS_SINGLE,
                   {"metric": metric, "log": pair.log, "ratio": pair_peak / best["peak"], "peak": pair_peak,
                    "single": best["device"], "single_name": best["name"], "single_peak": best["peak"],
                    "same_within": scaling.SAME},
                   tuple(StepRef(pair.config, pair.candidate, s.threads) for s in pair.steps
                         if s.value(metric) == pair_peak))


def entries(pairs: Sequence[scaling.Curve], devices: Dict[tuple, List[str]], singles: Sequence[Dict[str, Any]],
            judge: Callable[[scaling.Curve], scaling.Verdict], name: Callable[[str], str],
            metric: str, ceilings: Optional[Dict[tuple, Finding]] = None) -> List[Dict[str, Any]]:
    """One entry per pair curve, fastest first. ``singles``: the per-candidate entries (with ``sync``);
    ``judge``: the verdict of one SLOG curve against the no-log curves; ``name``: a device's words;
    ``ceilings``: each curve's PAIR_CEILING finding by (config, candidate), where there is one."""
    out = []
    for c in pairs:
        v = judge(c)
        pk = scaling.peak(c.steps, metric)
        peak = pk.value(metric) if pk else None
        same_sync = [s for s in singles if s.get("sync") == c.sync and s.get("peak")]
        best = max(same_sync, key=lambda s: s["peak"]) if same_sync else None
        devs = devices.get((c.config, c.candidate)) or []
        vs = versus_single(c, peak, best, metric) if peak else None
        ceiling = (ceilings or {}).get((c.config, c.candidate))
        out.append({
            "config": c.config, "log": c.log, "candidate": c.candidate, "devices": devs,
            "name": " + ".join(name(d) for d in devs) or (c.candidate or c.config), "peak": peak,
            "findings": [f.to_dict() for f in v.findings if f.kind not in PROBLEMS]
            + [f.to_dict() for f in (vs, ceiling) if f is not None],
            "slog_benefit_at_peak": v.benefit_at_peak,
            "slog_of_standard_at_peak": v.of_standard_at_peak,
            "best_single": best["device"] if best else None,
            "of_best_single": peak / best["peak"] if best and peak else None,
        })
    out.sort(key=lambda d: -(d["peak"] or 0))
    return out
