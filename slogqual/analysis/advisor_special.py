"""Special vdev or SLOG? (issue #39): what a pool's ZIL does on its special vdev beside a dedicated log, as
facts for report/advice.py to word. Pure: it sets out the advisor's own prediction for the special device as a
log (analysis.advisor._special makes it) under each OpenZFS setting.

OpenZFS 2.4 (openzfs/zfs#17505) allocates the ZIL of a pool with a special vdev and no log vdev on the special
vdev, and with ``zil_special_is_slog`` at 1 (its default) logs each write as it would to a SLOG (its data copied
into the log). So the special device's sweep, run through the log model, is what the ZIL can do there — and no
more: the special vdev also takes the pool's metadata and small blocks at every txg sync, which a dedicated log
of the same device never sees. Every figure is therefore an upper bound (``special-shared``); the lab's
measurement of the same device as special vdev and as dedicated log (docs/scenarios.md, OpenZFS 2.4.4) ran the
special 0.80-1.00x of the log.

Three answers, one per OpenZFS setting (``applies`` names the one the pool runs where its version is known —
``advise --zfs``, or this host's module — and is None otherwise):

- ``2.4, zil_special_is_slog=1``: the log model on the special's sweep, each figure an upper bound;
- ``2.4, zil_special_is_slog=0``: writes ZFS logs indirectly without a SLOG (larger than
  zfs_immediate_write_sz on a dataset, a zvol's full blocks) wait for their data on the pool as without a log;
  the others as above;
- ``before 2.4``: the ZIL stays off the special vdev (log, then the normal class): as without a log.

Each log candidate's predicted figure is then set beside the special's at every thread count.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from slogqual.versions import openzfs_series

SHARED = "special-shared"  # the upper bound's name: the special vdev's own metadata and small-block writes
SETTINGS = ("2.4-special-is-slog", "2.4-special-not-slog", "before-2.4")
LAB_RATIO = (0.80, 1.00)  # the special vdev / the same device as a dedicated log, measured (docs/scenarios.md)


def _as_special(step: Dict[str, Any]) -> Dict[str, Any]:
    """A log-model step on the special's sweep as the special's figure: an upper bound (its own bound kept when it
    already was one — the host's ceiling binds the special as much as a log), never a prediction."""
    bound = step.get("upper_bound") or (None if step.get("extrapolated") else SHARED)
    return {"threads": step["threads"], "iops": step["iops"], "binding": step["binding"], "upper_bound": bound,
            "extrapolated": step.get("extrapolated"), "host_iops": step["limits"].get("host_iops"),
            "log_latency_iops": step["limits"]["log_latency_iops"]}


def setting_steps(setting: str, model: List[Dict[str, Any]], indirect: bool) -> List[Dict[str, Any]]:
    """Per thread count the figure under one OpenZFS setting (module doc); the no-log figure is the data side's
    own at that thread count (the model step's ``without_slog_iops``)."""
    out = []
    for s in model:
        if setting == "before-2.4" or (setting == "2.4-special-not-slog" and indirect):
            out.append({"threads": s["threads"], "iops": s.get("without_slog_iops"), "binding": "as-without-log",
                        "basis": s.get("without_slog_basis"), "upper_bound": None})
        else:
            out.append(_as_special(s))
    return out


def applies(version: Optional[str], special_is_slog: Optional[int]) -> Optional[str]:
    """The setting the pool's OpenZFS runs: before 2.4, or 2.4 with zil_special_is_slog as read (its default 1
    where not read); None where the version is unknown (then no setting is picked: all three are shown)."""
    found = openzfs_series(version)
    if found is None:
        return None
    if found < (2, 4):
        return "before-2.4"
    return "2.4-special-not-slog" if special_is_slog == 0 else "2.4-special-is-slog"


def answer(model: Dict[str, Any], indirect: bool, candidates: Sequence[Dict[str, Any]],
           setting: Optional[str] = None) -> Dict[str, Any]:
    """The special vdev's answer from ``model``, the advisor's prediction for the special device as a log
    (analysis.advisor.predict_candidate), and ``indirect``, whether ZFS logs this load's writes indirectly without
    a SLOG: the three settings' steps, and each candidate's figure over the special's at every thread count both
    have (``ratio`` > 1: the dedicated log would be faster); ``setting``: the one the pool's OpenZFS runs, if known."""
    settings = {s: setting_steps(s, model["steps"], indirect) for s in SETTINGS}
    special = {s["threads"]: s for s in settings["2.4-special-is-slog"]}
    versus = []
    for c in candidates:
        rows = []
        for s in c["steps"]:
            sp = special.get(s["threads"])
            if sp is None or not sp["iops"]:
                continue
            rows.append({"threads": s["threads"], "log_iops": s["iops"], "log_upper_bound": s.get("upper_bound"),
                         "special_iops": sp["iops"], "ratio": round(s["iops"] / sp["iops"], 3)})
        versus.append({"sweep": c["sweep"], "path": c["path"], "class": c["class"], "steps": rows})
    return {"sweep": model["sweep"], "path": model["path"], "model": model["model"], "class": model["class"],
            "indirect_without_slog": indirect, "settings": settings, "versus": versus,
            "lab_ratio": list(LAB_RATIO), "applies": setting}
