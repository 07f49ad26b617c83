"""Together vs alone (issue #30): at the sizes where bandwidth matters (128 KiB ... 8 MiB), each unit of a
shelf alone, then every unit at once, and what slogqual.analysis.shelf makes of the figures on the paths
slogqual.device.topology reads (where the aggregate stopped, the slow sibling with its slot and link).

Each measurement is the pair engine's QD1 write + flush loop (what the sweep measures) for ``runtime_s``;
"together" starts one engine per unit at the same moment, one thread each. A QD1 loop that waits for every
flush may never ask enough of a path to meet its ceiling, so a short higher-queue-depth probe follows: fio,
DEPTH threads of O_DIRECT random writes per unit without a flush (what the path carries when the units'
caches take the writes), at 1 MiB (or the largest size that fits). The units must already be
claimed (slogqual.sweep.door and qualify.door hold the tray's claims while they call ``probe``). An interrupt
ends the engines running at that moment (slogqual.sweep.at_once) and propagates.

The document, ``slogqual.shelf/1``, is written beside the sweep results (``shelf_document``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence

from slogqual import environment
from slogqual.sweep.at_once import at_once
from slogqual.analysis import path_ceiling, shelf
from slogqual.report import shelf as shelf_words
from slogqual.device import topology
from slogqual.progress import Progress
from slogqual.results import schema as S
from slogqual.results.shelf import UnitPath
from slogqual.errors import UsageError
from slogqual.sweep.engine import ENGINE_PAIR, SweepParams, describe_target
from slogqual.sweep.target import Target
from slogqual.kernel import sysfs
from slogqual.tools import fio, pairbench
from slogqual.units import KiB, MiB, size_label

SHELF_SCHEMA = S.SHELF
PROBE_SIZES = [128 * KiB, 256 * KiB, 512 * KiB, 1 * MiB, 2 * MiB, 4 * MiB, 8 * MiB]
DEPTH = 8  # the higher-queue-depth probe: writes in flight per unit (fio threads, psync O_DIRECT)
DEPTH_SIZE = 1 * MiB


@dataclass
class ProbeSize:
    size: int
    alone: Dict[str, float]  # device -> bytes/s, each unit measured by itself
    together: Dict[str, float]  # device -> bytes/s, every unit at once
    analysis: shelf.ShelfAnalysis
    depth: int = 1  # writes in flight per unit: 1, the pair engine's write + flush; DEPTH, fio's writes alone

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"size": self.size}
        if self.depth != 1:
            d.update(depth=self.depth, engine="fio", flush=False)
        return {**d, "alone": dict(self.alone), "together": dict(self.together), "analysis": shelf_words.analysis_dict(self.analysis)}

    @property
    def label(self) -> str:
        return size_label(self.size) + (f" QD{self.depth}" if self.depth != 1 else "")


@dataclass
class ShelfProbe:
    units: List[str]
    paths: List[UnitPath]
    runtime_s: float
    sizes: List[ProbeSize] = field(default_factory=list)
    started: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return {"schema": SHELF_SCHEMA, "started": self.started, "units": list(self.units),
                "runtime_s": self.runtime_s, "paths": [p.to_dict() for p in self.paths],
                "sizes": [s.to_dict() for s in self.sizes]}


def _bandwidth(target: Target, size: int, runtime_s: float) -> float:
    """Bytes/s of QD1 write + flush pairs of ``size`` on the target for runtime_s (the pair engine)."""
    job = pairbench.PairJob(filename=target.path, bs=size, region_bytes=target.size, runtime_s=runtime_s,
                            direct=target.direct)
    r = pairbench.run_job(job)
    return r.bytes_written / (r.elapsed_ns / 1e9) if r.elapsed_ns else 0.0


def _deep_bandwidth(target: Target, size: int, runtime_s: float) -> float:
    """Bytes/s of DEPTH threads of O_DIRECT random writes of ``size`` on the target, no flush (fio)."""
    load = fio.FioLoad(rw="randwrite", bs=size, threads_per_lun=DEPTH, runtime_s=runtime_s, devices=[target.path],
                       direct=target.direct)
    return fio.run_load(load).bw_bytes


def _together(targets: Sequence[Target], size: int, runtime_s: float, measure=_bandwidth) -> Dict[str, float]:
    """Every target's bandwidth with all of them written at once (slogqual.sweep.at_once); a unit whose engine
    failed raises its error after the others ended."""
    got: Dict[str, float] = {}

    def worker(t: Target):
        def work(_stop) -> None:
            got[t.path] = measure(t, size, runtime_s)
        return work

    at_once([worker(t) for t in targets], "slogqual-probe")
    return got


def unit_device(unit: str) -> str:
    """A --path-ceiling's DEVICE as its path names it: a /dev/disk/by-id link followed; a bare name (sdb)
    kept, which matches by its base name."""
    return os.path.realpath(unit) if os.sep in unit else unit


def check_engine(params: SweepParams, targets: Sequence[Target], measured_with: str) -> str:
    """Every unit measured with the pair engine, or UsageError (the doors' --probe check, before anything
    is written): where the engine cannot be had here, why (no cc: how to get it; never --engine fio,
    which the probe does not take); otherwise the units it measures (``measured_with``, the door's words).
    Returns the engine's version."""
    others = [t for t in targets if params.engine_for(t) != ENGINE_PAIR]
    why = next((params.fallback(t.kind) for t in others if params.fallback(t.kind)), "")
    if why:
        why = pairbench.missing_compiler(fio_instead=False) if why == pairbench.NO_COMPILER else why
        raise UsageError(f"--probe measures with the pair engine, which cannot be had here: {why}")
    if others:
        raise UsageError(f"--probe measures with the pair engine: {measured_with}")
    return pairbench.check_version(fio_instead=False).text


def paths_of(targets: Sequence[Target], ceilings: Sequence[path_ceiling.Declaration] = (),
             root: str = sysfs.SYS) -> List[UnitPath]:
    """The targets' paths as sysfs at ``root`` shows them (on FreeBSD, its programs: topology.unit_path),
    with the ceilings the user declared (--path-ceiling) set; UsageError for one that names no element.
    Cheap (files only): a door calls it once to check the declarations before anything is written."""
    paths = [topology.unit_path(t.path, root) for t in targets]
    path_ceiling.apply(paths, ceilings)
    return paths


def probe(targets: Sequence[Target], runtime_s: float = 1.0, sizes: Sequence[int] = PROBE_SIZES,
          progress: Optional[Progress] = None, root: str = sysfs.SYS,
          ceilings: Sequence[path_ceiling.Declaration] = (), depth: bool = True,
          paths: Optional[Mapping[str, UnitPath]] = None,
          identities: Optional[Mapping[str, Optional[Dict[str, Any]]]] = None) -> ShelfProbe:
    """Each unit alone, then all at once, at every size that fits every target, then (``depth``) the
    higher-queue-depth round; the paths; per round the analysis of where the aggregate stopped.

    ``paths``: the units' paths by target path as the caller's plan read them (paths_of, the declared
    ceilings set), so a run reads each unit's path once; without them they are read here (paths_of with
    ``ceilings``). ``identities``: the units' identity records the run already holds (a sweep's ``device``),
    a unit without one identified here."""
    progress = progress or Progress(quiet=True)
    paths = [paths[t.path] for t in targets] if paths is not None else paths_of(targets, ceilings, root)
    known = identities or {}
    identity = {t.path: (known.get(t.path) or describe_target(t) or {}) for t in targets}
    result = ShelfProbe([t.path for t in targets], paths, runtime_s, started=environment.now_iso())
    fit = [s for s in sizes if all(t.size is None or s <= t.size for t in targets)]
    rounds = [(size, 1, _bandwidth) for size in fit]
    deep = max([s for s in PROBE_SIZES if s <= DEPTH_SIZE and all(t.size is None or s <= t.size for t in targets)],
               default=None)
    if deep is not None and depth:
        rounds.append((deep, DEPTH, _deep_bandwidth))
    for i, (size, qd, measure) in enumerate(rounds, 1):
        alone = {t.path: measure(t, size, runtime_s) for t in targets}
        progress.say(f"together vs alone {size_label(size)}{f' QD{qd}' if qd > 1 else ''} ({i}/{len(rounds)})")
        together = _together(targets, size, runtime_s, measure)
        figures = [shelf.UnitFigures(t.path, alone[t.path], together[t.path], identity[t.path].get("model"),
                                     identity[t.path].get("firmware")) for t in targets]
        probed = ProbeSize(size, alone, together, shelf.analyse(figures, paths), depth=qd)
        result.sizes.append(probed)
        for f in probed.analysis.findings:
            progress.say(f"  {probed.label}: {shelf_words.finding_words(f)}")
    return result
