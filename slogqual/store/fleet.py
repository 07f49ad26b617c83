"""The units of a fleet, read from the result store: each unit's latest sweep (its figures, host, slot,
path, firmware, and its path from the host where recorded) and its latest verdict per profile. The
statistics are slogqual/analysis/fleet.py.

A unit is a model and a serial; a device without a serial is its host and path.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from slogqual.analysis.fleet import Unit
from slogqual.results.device import check_topology
from slogqual.results.schema import Checker, DocumentError
from slogqual.results.shelf import UnitPath
from slogqual.store import KIND_QUALIFICATION, KIND_SWEEP, Run, Store, StoreError
from slogqual.store.documents import device_of


def _key(r: Run) -> Optional[Tuple[str, str]]:
    if not r.model:
        return None
    return (r.model, f"serial:{r.serial}" if r.serial else f"at:{r.host or '?'}:{r.target or '?'}")


def fleet_units(store: Store, model: Optional[str] = None) -> List[Unit]:
    sweeps: Dict[Tuple[str, str], Run] = {}
    verdicts: Dict[Tuple[str, str], Dict[str, str]] = {}
    quals: Dict[Tuple[str, str], Run] = {}
    for r in store.runs(model=model):  # oldest first: the later run of a unit replaces the earlier
        key = _key(r)
        if key is None:
            continue
        if r.kind == KIND_SWEEP and r.status in ("complete", None):
            sweeps[key] = r
        elif r.kind == KIND_QUALIFICATION and r.profile:
            verdicts.setdefault(key, {})[r.profile] = r.verdict or "unknown"
            quals[key] = r
    points = store.points([r.id for r in sweeps.values()])
    units = []
    for key in sorted(set(sweeps) | set(verdicts)):
        r = sweeps.get(key) or quals[key]
        pts = points.get(r.id, []) if key in sweeps else []
        units.append(Unit(model=key[0], serial=r.serial, firmware=r.firmware, host=r.host, target=r.target,
                          slot=r.slot, run_id=r.id if key in sweeps else None, started=r.started or r.recorded,
                          lat_us={p["size"]: p["mean_us"] for p in pts if p["mean_us"] is not None},
                          mbps={p["size"]: p["mbps"] for p in pts if p["mbps"] is not None},
                          verdicts=verdicts.get(key, {}), topology=_topology(store, r)))
    return units


def _topology(store: Store, run: Run) -> Optional[UnitPath]:
    """The unit's path from the host as its run's device record holds it (written since the record has
    one); None for older runs, files, NBD exports, imports, or a document the loader would refuse."""
    try:
        topo = device_of(store.result(run.id)).topology
        if not isinstance(topo, dict):
            return None
        check_topology(Checker(f"run {run.id}"), topo, "device.topology")
        return UnitPath.from_dict(topo)
    except (StoreError, DocumentError):
        return None
