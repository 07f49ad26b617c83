"""Sweeps as a library call: ``run_sweeps(request)`` -> ``SweepOutcome`` (issue #27's sweep door).

Everything ``slogqual sweep`` does between "these are the targets" and "here are the result documents"
lives here, below the CLI: the result paths, the bad-input checks (every target resolved, every output
checked, the engines found, before anything is written), the scratch target, resume, the claims of a
tray (all or nothing: every target passes the interlocks before any is written, issue #30), one
``SyncWriteSweep`` per target, the result store and the scratch clean-up. The CLI parses its options into
a ``SweepRequest``, calls ``run_sweeps`` and prints the outcome.

Errors before any write are the project's typed errors (UsageError: exit 2; RefusedError: exit 3; a
tool missing or too old). Once targets are claimed, one target failing does not stop the others: its
``UnitOutcome`` carries the error and the exit code, and ``on_unit`` hears of it when it happens. An
interrupt (KeyboardInterrupt) propagates after every claim was released and every scratch file removed;
each result file then holds the sizes measured and ``--resume`` continues it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from slogqual import paths, store
from slogqual.sweep import shelf_probe
from slogqual.analysis import path_ceiling
from slogqual.sweep.at_once import at_once
from slogqual.sweep import target as targets
from slogqual.errors import ResultWriteError, SlogqualError, UsageError
from slogqual.outputs import check_makeable, check_output, make_output_dir
from slogqual.process import EXIT_INTERRUPTED
from slogqual.progress import Progress, UnitProgress
from slogqual.results import SWEEP_SCHEMA_PREFIX, STATUS_COMPLETE, SweepResult, write_json_atomic
from slogqual.results.shelf import UnitPath
from slogqual.store.backends import is_url
from slogqual.sweep.engine import ENGINE_PAIR, SweepParams, SyncWriteSweep, claim_all, load_for_resume, note_resume
from slogqual.sweep.engine import resume_target, same_target, tray_refusal
from slogqual.sweep.shelf_probe import SHELF_SCHEMA
from slogqual.sweep.target import Target
from slogqual.tools import fio, pairbench


@dataclass
class SweepRequest:
    """What to sweep. ``targets``: block devices, files, NBD URIs; none: a scratch file in
    ``scratch_dir``. ``params``: the sweep's parameters (None with ``resume``, whose document names its
    own). ``output``: a file (one target) or a directory (several); None: a name per target in
    ``output_dir``. ``argv`` is recorded in each document's environment."""

    targets: List[str] = field(default_factory=list)
    params: Optional[SweepParams] = None
    output: Optional[str] = None
    resume: Optional[str] = None  # an unfinished result file: measure the sizes it lacks
    destroy_data: bool = False
    skip_refused: bool = False  # sweep the targets that pass the interlocks, skip (and name) the others
    parallel: bool = False  # measure the targets at the same time, each writing the document a lone run writes
    probe: bool = False  # then each unit alone and all at once, 128 KiB ... 8 MiB (shelf_probe), into a shelf document
    path_ceilings: List[str] = field(default_factory=list)  # --path-ceiling ELEMENT=RATE (analysis.path_ceiling)
    force: bool = False  # an output may replace a file that is not a slogqual sweep result
    store: Optional[str] = None  # --store PATH|URL; None: $SLOGQUAL_STORE or the default
    record_in_store: bool = True
    scratch_dir: str = ""  # "" : the current directory
    output_dir: str = ""  # where default result names go; "": the current directory
    argv: Optional[List[str]] = None


@dataclass
class UnitOutcome:
    """One target of the run: its result (complete, or as far as it got), or why it has none."""

    path: str  # the target's path ("" for a scratch file that was never made)
    output: str
    result: Optional[SweepResult] = None
    error: Optional[str] = None  # the failure or refusal, one line
    exit_code: int = 0
    skipped: bool = False  # refused by the interlocks and skipped (--skip-refused): nothing written
    partial_kept: bool = False  # failed part-way; the result file keeps the sizes measured (--resume)
    unsaved: Optional[Dict[str, Any]] = None  # the result file could not be written: its document


@dataclass
class SweepOutcome:
    units: List[UnitOutcome] = field(default_factory=list)
    already_complete: bool = False  # a resume of a complete result: nothing was measured
    shelf: Optional[Any] = None  # --probe: the shelf_probe.ShelfProbe of the units swept
    shelf_path: Optional[str] = None

    @property
    def results(self) -> List[SweepResult]:
        """The documents of the targets that were measured to the end, in the order named."""
        return [u.result for u in self.units if u.result is not None and u.error is None]

    @property
    def exit_code(self) -> int:
        return max((u.exit_code for u in self.units), default=0)

    @property
    def skipped(self) -> List[UnitOutcome]:
        return [u for u in self.units if u.skipped]


def _name_of(spec: Optional[str]) -> str:
    return paths.file_stem(spec, "target") if spec else "scratch"


def output_paths(output: Optional[str], specs: List[Optional[str]], here: str) -> Tuple[List[str], Optional[str]]:
    """Where each target's result goes: ``output`` itself (one target, not a directory), one file per
    target in the directory ``output``, or slogqual-sweep-NAME-TIME.json in ``here``; and the directory
    to make for them (None: it is there), made by make_output_dir once every check passed."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    names = [f"slogqual-sweep-{_name_of(s)}-{stamp}.json" for s in specs]
    if len(set(names)) != len(names):
        names = [f"slogqual-sweep-{i}-{_name_of(s)}-{stamp}.json" for i, s in enumerate(specs, 1)]
    if not output:
        return [os.path.join(os.path.abspath(here), n) for n in names], None
    if len(specs) == 1 and not (os.path.isdir(output) or output.endswith("/")):
        parent = os.path.dirname(os.path.abspath(output))
        if not os.path.isdir(parent):
            raise UsageError(f"{output}: directory {parent} does not exist")
        return [os.path.abspath(output)], None
    if os.path.exists(output) and not os.path.isdir(output):
        raise UsageError(f"{output} is a file: with several targets -o names a directory (one result per target)")
    directory = os.path.abspath(output)
    if os.path.isdir(directory):
        return [os.path.join(directory, n) for n in names], None
    return [os.path.join(directory, n) for n in names], check_makeable(output)


def engines(params: SweepParams, kinds: List[str]) -> Tuple[str, str]:
    """(fio version, pair engine version) of the engines that will measure targets of these kinds, each
    checked (the pair engine built, on first use from a source tree) before anything is written; fio is
    needed only where it measures (--mode dsync, NBD, --engine fio), "" where it does not."""
    kinds_engines = {params.engine_for_kind(k) for k in kinds}
    fio_version = fio.check_version().text if kinds_engines - {ENGINE_PAIR} else ""
    engine_version = pairbench.check_version(fio_instead=not params.pair_only).text \
        if ENGINE_PAIR in kinds_engines else ""
    return fio_version, engine_version


@dataclass
class _Plan:
    params: SweepParams
    units: List[Tuple[Target, str, Optional[SweepResult]]]  # (target, result path, resumed document)
    fio_version: str
    engine_version: str
    shelf_output: Optional[str] = None  # --probe: where the shelf document goes
    new_dir: Optional[str] = None  # the output directory to make once the tray is claimed (none: it is there)
    ceilings: List[path_ceiling.Declaration] = field(default_factory=list)  # --path-ceiling, checked
    # --probe: each unit's path by target path, read once here with the ceilings set, handed to the probe
    unit_paths: Dict[str, UnitPath] = field(default_factory=dict)


def _plan_resume(req: SweepRequest, here: str) -> Tuple[Optional[_Plan], Optional[SweepResult]]:
    """The plan of a resumed sweep, or (None, the document) when it is complete already."""
    if req.targets or req.params is not None:
        raise UsageError("--resume takes its target, sizes, engine and options from the result file")
    if req.parallel:
        raise UsageError("--parallel measures several new targets at once; --resume continues one result")
    result = load_for_resume(req.resume)
    if result.status == STATUS_COMPLETE and all(result.point(s) for s in result.params["sizes"]):
        return None, result
    try:
        params = SweepParams.from_dict(result.params)
    except UsageError as exc:
        raise UsageError(f"{req.resume}: {exc}") from None
    fio_version, engine_version = engines(params, [result.target.get("kind")])
    note_resume(result, fio_version, req.argv, engine_version)
    tgt = resume_target(result, here)
    params.check_target(tgt)
    return _Plan(params, [(tgt, os.path.abspath(req.resume), result)], fio_version, engine_version), None


def _plan_new(req: SweepRequest, result_store: store.Store, here: str) -> _Plan:
    """Every check that needs no write, in the order a user would fix them; then the scratch file."""
    params = req.params
    if params is None:
        raise UsageError("a sweep needs its parameters (sizes, mode, runtime)")
    params.validate()
    if any(not t.strip() for t in req.targets):
        raise UsageError("an empty target name: give a device, a file or an nbd URI (or no target at all for a "
                         "scratch file here)")
    if req.parallel and len(req.targets) < 2:
        raise UsageError("--parallel measures several targets at once: name two or more")
    if req.probe and len(req.targets) < 2:
        raise UsageError("--probe measures several targets alone and together: name two or more")
    if req.parallel and (params.sustained or params.precision is not None):
        raise UsageError("--parallel takes a fixed --runtime per size: not --sustain or --precision")
    ceilings = path_ceiling.parse_all(req.path_ceilings, shelf_probe.unit_device)
    if ceilings and not req.probe:
        raise UsageError(f"{path_ceiling.OPTION} is for --probe's together vs alone: add --probe")
    specs: List[Optional[str]] = list(req.targets) or [None]
    outputs, new_dir = output_paths(req.output, specs, req.output_dir or here)
    largest = max(params.sizes)
    # Resolve every target before measuring any: bad input costs nothing.
    resolved = [targets.resolve(s, largest) if s else None for s in specs]
    for t in resolved:
        if t:
            params.check_target(t)
    same_target(resolved)
    targets.one_storage(resolved)  # two loop devices on one file, a partition and its disk, one WWN twice
    # ... and every output: never a target, the store, a device node, or a file that is not ours
    protect = [(t.path, "a target of this sweep") for t in resolved if t and not targets.is_nbd_uri(t.path)]
    if not is_url(result_store.location):
        protect.append((result_store.location, "the result store"))
    for out in outputs if new_dir is None else []:  # nothing is in a directory still to be made
        check_output(out, "sweep result", SWEEP_SCHEMA_PREFIX, protect, force=req.force)
    shelf_output = None
    if req.probe:
        shelf_probe.check_engine(params, [t for t in resolved if t],
                                 "files and block devices in --mode flush, not --engine fio or NBD targets")
        shelf_output = os.path.join(os.path.dirname(outputs[0]), f"slogqual-shelf-{time.strftime('%Y%m%dT%H%M%S')}.json")
        if new_dir is None:
            check_output(shelf_output, "shelf result", SHELF_SCHEMA.rsplit("/", 1)[0] + "/", protect,
                         force=req.force)
    unit_paths: Dict[str, UnitPath] = {}
    if req.probe:  # read once for the run; each ceiling names an element of them, or nothing is written
        tray = [t for t in resolved if t]
        unit_paths = {t.path: p for t, p in zip(tray, shelf_probe.paths_of(tray, ceilings))}
    fio_version, engine_version = engines(params, [t.kind if t else targets.KIND_SCRATCH for t in resolved])
    if req.probe and not engine_version:
        engine_version = pairbench.check_version().text
    if req.probe:
        fio.check_version()  # the probe's higher-queue-depth round (shelf_probe.DEPTH)
    units = [(tgt if tgt else targets.create_scratch(here, largest), out, None) for tgt, out in zip(resolved, outputs)]
    return _Plan(params, units, fio_version, engine_version, shelf_output, new_dir, ceilings, unit_paths)


def run_sweeps(req: SweepRequest, progress: Optional[Progress] = None,
               on_unit: Optional[Callable[[UnitOutcome], None]] = None) -> SweepOutcome:
    """Sweep (or resume) every target of the request, one after the other, and return what became of
    each. ``on_unit`` is told of each target as it ends (skipped ones before any is measured). What
    describes the whole machine is read once for the run (device.one_reading)."""
    from slogqual import device

    with device.one_reading():
        return _run_sweeps(req, progress, on_unit)


def _run_sweeps(req: SweepRequest, progress: Optional[Progress],
                on_unit: Optional[Callable[[UnitOutcome], None]]) -> SweepOutcome:
    progress = progress or Progress(quiet=True)
    tell = on_unit or (lambda _u: None)
    here = req.scratch_dir or os.getcwd()
    result_store = store.Store(req.store)  # a bad --store / $SLOGQUAL_STORE is refused now (nothing opened yet)
    if req.resume:
        plan, complete = _plan_resume(req, here)
        if plan is None:
            return SweepOutcome([UnitOutcome(complete.target.get("path") or "", os.path.abspath(req.resume),
                                             complete)], already_complete=True)
    else:
        plan = _plan_new(req, result_store, here)
    outcome = SweepOutcome()
    with contextlib.ExitStack() as claims:
        try:
            units = _claim(req, plan, claims, outcome, tell)
            if units:
                make_output_dir(plan.new_dir)  # every check passed, every unit claimed: now the first write
            if req.parallel and len(units) > 1:
                _sweep_parallel(req, plan, units, progress, outcome, tell)
                units = []
            for tgt, out, previous in units:
                try:
                    unit = _sweep_one(req, plan, tgt, out, previous, progress)
                finally:
                    targets.remove_scratch(tgt)
                outcome.units.append(unit)
                tell(unit)
            if plan.shelf_output:
                _probe(plan, outcome, progress)
        finally:
            for tgt, _, _ in plan.units:  # an interrupt or an error before a target's turn
                targets.remove_scratch(tgt)
    return outcome


def _probe(plan: _Plan, outcome: SweepOutcome, progress: Progress) -> None:
    """--probe: the units swept to the end, each alone and all at once (still claimed), into the shelf
    document; nothing when fewer than two were."""
    swept = {u.path: u.result.device for u in outcome.units if u.result is not None and u.error is None}
    tray = [t for t, _, _ in plan.units if t.path in swept]
    if len(tray) < 2:
        progress.say("no together vs alone: fewer than two units were swept")
        return
    # the sweep's own sizes where bandwidth matters, when it has any (--sizes 128k keeps a probe short)
    sizes = [s for s in plan.params.sizes if s >= shelf_probe.PROBE_SIZES[0]] or shelf_probe.PROBE_SIZES
    outcome.shelf = shelf_probe.probe(tray, plan.params.runtime_s, sizes=sizes, progress=progress,
                                      paths=plan.unit_paths, identities=swept)
    write_json_atomic(plan.shelf_output, outcome.shelf.to_dict())
    outcome.shelf_path = plan.shelf_output
    progress.say(f"shelf: {plan.shelf_output}")


def _claim(req: SweepRequest, plan: _Plan, claims: contextlib.ExitStack, outcome: SweepOutcome,
           tell: Callable[[UnitOutcome], None]) -> List[Tuple[Target, str, Optional[SweepResult]]]:
    """Claim the whole tray before any target is written (the claims held until ``claims`` closes): one
    refusal refuses the run, unless --skip-refused, which skips (and reports) each refused target."""
    tray = [tgt for tgt, _, _ in plan.units]
    refused = claim_all(claims, tray, req.destroy_data)
    if refused and not req.skip_refused:
        raise tray_refusal(refused, tray)
    for tgt, exc in refused:
        out = next(o for t, o, _ in plan.units if t is tgt)
        unit = UnitOutcome(tgt.path, out, error=str(exc), exit_code=exc.exit_code, skipped=True)
        outcome.units.append(unit)
        tell(unit)
    return [(t, o, p) for t, o, p in plan.units if all(t is not r for r, _ in refused)]


def _sweep_parallel(req: SweepRequest, plan: _Plan, units: List[Tuple[Target, str, Optional[SweepResult]]],
                    progress: Progress, outcome: SweepOutcome, tell: Callable[[UnitOutcome], None]) -> None:
    """Every claimed unit measured at the same time (slogqual.sweep.at_once); each document is the one a lone
    run writes. An interrupt ends each unit as it ends a lone run (the size being measured is dropped,
    the document saved as interrupted), then propagates."""
    ended: Dict[int, UnitOutcome] = {}

    def worker(i: int, tgt: Target, out: str, previous: Optional[SweepResult]) -> Callable[[threading.Event], None]:
        def work(stop: threading.Event) -> None:
            try:
                unit = _sweep_one(req, plan, tgt, out, previous, UnitProgress(tgt.path, progress), stop)
            except KeyboardInterrupt:
                unit = UnitOutcome(tgt.path, out, error=f"{tgt.path}: interrupted", exit_code=EXIT_INTERRUPTED,
                                   partial_kept=os.path.exists(out))
            except Exception as exc:  # not a SlogqualError: still this unit's end, never the others'
                unit = UnitOutcome(tgt.path, out, error=f"{tgt.path}: {type(exc).__name__}: {exc}", exit_code=1,
                                   partial_kept=os.path.exists(out))
            ended[i] = unit
            tell(unit)
        return work

    progress.say(f"measuring {len(units)} units at once")
    try:
        at_once([worker(i, *u) for i, u in enumerate(units)], "slogqual-sweep",
                on_interrupt=lambda: print("slogqual: interrupted: every unit stops and keeps the sizes it measured",
                                           file=sys.stderr))
    finally:
        outcome.units.extend(ended[i] for i in sorted(ended))


def _sweep_one(req: SweepRequest, plan: _Plan, tgt: Target, out: str, previous: Optional[SweepResult],
               progress: Progress, stop: Optional[threading.Event] = None) -> UnitOutcome:
    """One claimed target measured; its failure is its outcome, not the run's end."""
    unit = UnitOutcome(tgt.path, out)
    try:
        for note in tgt.notes:
            progress.say(f"note: {note}")
        sweep = SyncWriteSweep(tgt, plan.params, out, progress, result=previous, fio_version=plan.fio_version,
                               argv=req.argv, engine_version=plan.engine_version, stop=stop)
        for w in (previous.warnings if previous else []):
            progress.say(f"WARNING: {w}")
        result = sweep.run()
        for w in result.warnings:
            progress.say(f"WARNING: {w}")
        unit.result = result
        progress.say(f"result: {out}")
        if req.record_in_store:
            store.record_or_warn(result, out, store_path=req.store)  # history / compare --baseline
    except ResultWriteError as exc:
        # The result file cannot be written: what was measured is handed back instead.
        unit.error, unit.exit_code, unit.unsaved = str(exc), exc.exit_code, exc.document
    except SlogqualError as exc:
        # One target failing does not stop the others; its result file keeps every size measured before.
        unit.error, unit.exit_code = str(exc), exc.exit_code
        unit.partial_kept = os.path.exists(out)
    return unit
