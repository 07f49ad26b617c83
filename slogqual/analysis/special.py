"""The ZIL on the special vdev (OpenZFS 2.4, ``log = "special"``): where its blocks went and what it bought,
as facts for report/scenario.py to word.

A pool with a special vdev and no log vdev allocates its ZIL blocks on the special vdev (log, special's
embedded log, special, normal's embedded log, normal: openzfs/zfs#17505). 2.4's ZIL kstats count those blocks
under the ``normal`` class (``zil_itx_metaslab_normal_*``), never ``slog``: the kstat says how many bytes the
ZIL wrote, the step's per-vdev ``zpool iostat`` rows say which vdevs took them (the ``special`` section beside
the data vdevs; all their writes over the window, the txg's as well as the ZIL's).

Each special-vdev curve is set beside the dedicated SLOG of the same device (the single-log curve of that
candidate and sync) and beside no log (the ``log = "none"`` curve of that sync), step by step at the thread
counts all of them ran. Reads only the result's steps.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from slogqual.results.scenario import ScenarioResult, ScenarioStep

SPECIAL = "special"


def _curves(result: ScenarioResult, log: str) -> Dict[Tuple[str, Optional[str]], List[ScenarioStep]]:
    by: Dict[Tuple[str, Optional[str]], List[ScenarioStep]] = {}
    for s in result.steps:
        if s.log == log:
            by.setdefault((s.config, s.candidate), []).append(s)
    return by


def _value(s: ScenarioStep, metric: str) -> float:
    return s.iops if metric == "iops" else s.mbps


def _ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or not b else round(a / b, 4)


def _zil_bytes(s: ScenarioStep) -> Optional[int]:
    if s.slog_bytes is None or s.normal_bytes is None:
        return None
    return s.slog_bytes + s.normal_bytes


def _match(curves: Dict[Tuple[str, Optional[str]], List[ScenarioStep]], sync: str,
           candidate: Optional[str]) -> Optional[Tuple[str, List[ScenarioStep]]]:
    """The first curve of ``sync`` (and of ``candidate``, when one is given): (its configuration, its steps)."""
    for (config, cand), steps in curves.items():
        if steps[0].sync == sync and (candidate is None or cand in (candidate, None)):
            return config, steps
    return None


def entries(result: ScenarioResult, metric: str) -> List[Dict[str, Any]]:
    """One entry per special-vdev curve: its configuration, candidate, sync, the parameter it ran with, the
    configurations it is compared with, and per step the ZIL's bytes by kstat class, the special and data
    vdevs' writes (bytes/s) and the ratios to the SLOG and to no log at the same thread count."""
    specials = _curves(result, SPECIAL)
    singles, nones = _curves(result, "single"), _curves(result, "none")
    out = []
    for (config, candidate), steps in specials.items():
        sync = steps[0].sync
        slog = _match(singles, sync, candidate or (steps[0].special_devices or [None])[0])
        none = _match(nones, sync, None)
        slog_at = {s.threads: s for s in (slog[1] if slog else [])}
        none_at = {s.threads: s for s in (none[1] if none else [])}
        rows = []
        for s in steps:
            special_w, data_w = s.special_write_bytes_s, s.data_write_bytes_s
            vdev_total = None if special_w is None or data_w is None else special_w + data_w
            at_slog, at_none = slog_at.get(s.threads), none_at.get(s.threads)
            rows.append({
                "threads": s.threads, "value": _value(s, metric), "zil_bytes": _zil_bytes(s),
                "zil_normal_bytes": s.normal_bytes, "zil_slog_bytes": s.slog_bytes,
                "special_write_bytes_s": special_w, "data_write_bytes_s": data_w,
                "special_share": _ratio(special_w, vdev_total),
                "slog_value": _value(at_slog, metric) if at_slog else None,
                "none_value": _value(at_none, metric) if at_none else None,
                "of_slog": _ratio(_value(s, metric), _value(at_slog, metric)) if at_slog else None,
                "of_none": _ratio(_value(s, metric), _value(at_none, metric)) if at_none else None,
            })
        counted = [r for r in rows if r["zil_slog_bytes"] is not None]
        out.append({
            "config": config, "candidate": candidate, "device": (steps[0].special_devices or [candidate])[0],
            "sync": sync, "zil_special_is_slog": steps[0].zil_special_is_slog, "metric": metric,
            "slog_config": slog[0] if slog else None, "none_config": none[0] if none else None,
            # 2.4 counts the special vdev's ZIL blocks as normal: a slog byte here contradicts the pool's build
            "slog_class_bytes": sum(r["zil_slog_bytes"] for r in counted) if counted else None,
            "steps": rows,
        })
    return out
