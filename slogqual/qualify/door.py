"""Qualification as a library call: ``qualify(request)`` -> ``QualifyOutcome`` (issue #27: a door per
capability, below the CLI).

Everything between "these devices, this profile" and "here are the verdicts" lives here: the bad-input
checks before anything is written (the profile's sizes, the output directory and every file it will hold,
the JUnit file, the power-cut result), the device runs in turn (qualify.engine.DeviceRun), the result store
(every device's sweep, scenario results and qualification document), and the reports (JUnit, HTML) after
the verdicts are saved. The caller is told of each finished device (``on_device``) and of notes and
errors that do not change a verdict (``on_note``); a report that cannot be written is such a note, and
the verdicts' exit code stands.

An interrupt (Ctrl-C, SIGTERM turned into KeyboardInterrupt) ends the device loop: what was measured is
kept, the reports are written for the finished devices and ``outcome.interrupted`` is set.

``parallel`` (issue #30, a shelf at once): the devices are a tray. Every one is resolved while planning
(bad input before anything is written), identified, then claimed before any is written: one refusal
refuses the run (exit 3, no document), unless ``skip_refused``, which judges each refused device REFUSED
as its lone run would and names it. The claimed devices are measured at the same time (slogqual.sweep.at_once:
preconditioning, steady state and sweep, one thread each); ``probe`` then measures them alone and
together (shelf_probe) while still claimed; with the claims released, each device's scenarios (in turn)
and verdict follow. Each document is the one a lone run writes. An interrupt ends every device as it
ends a lone run: each document saved, marked interrupted, each sweep resumable, no device left claimed.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from slogqual.sweep import shelf_probe
from slogqual.sweep import target as targets
from slogqual.analysis import path_ceiling
from slogqual.sweep.at_once import at_once
from slogqual.process import EXIT_INTERRUPTED
from slogqual.errors import SlogqualError, UsageError
from slogqual.outputs import check_makeable, check_output, make_output_dir, text_mark
from slogqual.progress import Progress, UnitProgress
from slogqual.qualify import judge, output
from slogqual.qualify import profile as profiles
from slogqual.qualify.engine import DeviceRun, Options, load_scenario_results, scenario_documents, stems
from slogqual.results import schema, write_json_atomic
from slogqual.results.qualification import QualificationResult, StoreRecord
from slogqual.results.schema import prefix
from slogqual.results.shelf import ShelfResult, UnitPath
from slogqual.sweep.target import Target

JUNIT_MARK = '<testsuites name="slogqual'
HTML_MARK = '<meta name="generator" content="slogqual'


@dataclass
class QualifyRequest:
    """What ``slogqual qualify`` asks for; None means the profile's value."""

    devices: List[str]
    profile: str  # a shipped profile's name or a TOML file
    out_dir: str = ""  # '' = slogqual-qualify-TIME in the current directory
    junit: Optional[str] = None
    force: bool = False
    precondition: Optional[str] = None
    quick_bytes: int = 1 << 30
    max_rounds: Optional[int] = None
    round_runtime_s: Optional[float] = None
    sizes: Optional[List[int]] = None
    runtime_s: Optional[float] = None
    settle_s: Optional[float] = None
    lab: bool = False
    data: List[str] = field(default_factory=list)
    scenario_quick: bool = False
    #: the scenario steps' runtime and ramp over the scenario's (pool.scenario.OVERRIDES' keys runtime, ramp)
    scenario_overrides: Dict[str, float] = field(default_factory=dict)
    scenario_results: List[str] = field(default_factory=list)
    powercut: Optional[str] = None
    destroy_data: bool = False
    labels: Dict[str, Optional[str]] = field(default_factory=dict)  # model / serial / firmware to file under
    store: Optional[str] = None  # --store / $SLOGQUAL_STORE; None: the default store
    record_in_store: bool = True
    html: bool = True
    argv: List[str] = field(default_factory=list)  # the command line, for the documents
    parallel: bool = False  # measure the devices at the same time, a tray claimed all or nothing
    skip_refused: bool = False  # with parallel: qualify the devices that pass the interlocks, name the others
    probe: bool = False  # with parallel: then each device alone and all at once (slogqual.shelf/1, shelf.json)
    path_ceilings: List[str] = field(default_factory=list)  # with probe: --path-ceiling ELEMENT=RATE


@dataclass
class QualifyOutcome:
    runs: List[DeviceRun]
    out_dir: str
    junit: Optional[str] = None  # written
    html: Optional[str] = None  # written
    interrupted: bool = False
    skipped: List[str] = field(default_factory=list)  # --skip-refused: the devices refused and skipped
    shelf: Optional[Any] = None  # --probe: the shelf_probe.ShelfProbe of the devices measured
    shelf_path: Optional[str] = None

    @property
    def documents(self) -> List[QualificationResult]:
        return [r.doc for r in self.runs if r.doc is not None]

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return EXIT_INTERRUPTED
        return max((r.exit_code for r in self.runs), default=0)


def _guard(req: QualifyRequest, path: str, what: str, ours) -> str:
    from slogqual import store

    protect = [(p, "an input of this command") for p in req.devices]
    protect += store.protected(req.store)
    return check_output(path, what, ours, protect, force=req.force)


def _planned(req: QualifyRequest, prof: profiles.Profile):
    """Every file the run will write into the output directory, with what it is."""
    planned = []
    for stem in stems(list(req.devices)):
        planned += [(f"{stem}.qualification.json", "qualification document", prefix(schema.QUALIFICATION)),
                    (f"{stem}.sweep.json", "sweep result", prefix(schema.SWEEP))]
        planned += [(f"{stem}.scenario-{n}.json", "scenario result", prefix(schema.SCENARIO))
                    for n in prof.scenarios if req.data]
    planned += [(f"scenario-{n}-lab.json", "scenario result", prefix(schema.SCENARIO))
                for n in prof.scenarios if req.lab]
    if req.html:
        planned.append(("qualification.html", "HTML report", text_mark(HTML_MARK, lines=8)))
    if req.probe:
        planned.append((SHELF_NAME, "shelf result", prefix(schema.SHELF)))
    return planned


SHELF_NAME = "shelf.json"


def _plan_tray(req: QualifyRequest, prof: profiles.Profile, sizes: List[int],
               ceilings: List[path_ceiling.Declaration]) -> Tuple[List[Target], Dict[str, UnitPath]]:
    """--parallel: every device resolved before anything is written (a path that cannot be used is bad
    input, as in ``sweep --parallel``), none named twice; --probe's engine checked and the devices' paths
    read, once for the run, by target path."""
    from slogqual.sweep.engine import SweepParams, same_target

    largest = max(sizes + [prof.steady_size])
    tray = [targets.resolve(spec, largest) for spec in req.devices]
    same_target(list(tray), done="qualified")
    targets.one_storage(list(tray), done="qualified")
    if not req.probe:
        return tray, {}
    if len(tray) < 2:
        raise UsageError("--probe measures several devices alone and together: name two or more")
    shelf_probe.check_engine(SweepParams(mode=prof.mode, sizes=sizes), tray,
                             "files and block devices under a profile in flush mode, not NBD targets")
    # each ceiling names an element of the paths, or nothing is written
    return tray, {t.path: p for t, p in zip(tray, shelf_probe.paths_of(tray, ceilings))}


def _check_tray_options(req: QualifyRequest) -> List[path_ceiling.Declaration]:
    """The tray's options checked with the others; the --path-ceiling declarations parsed, once."""
    ceilings = path_ceiling.parse_all(req.path_ceilings, shelf_probe.unit_device)
    if ceilings and not req.probe:
        raise UsageError(f"{path_ceiling.OPTION} is for --probe's together vs alone: add --probe")
    if not req.parallel and (req.skip_refused or req.probe):
        flag = "--skip-refused" if req.skip_refused else "--probe"
        raise UsageError(f"{flag} goes with --parallel (without it the devices are qualified in turn, each "
                         "claimed on its own, a refused one judged REFUSED and the next one qualified)")
    return ceilings


def plan(req: QualifyRequest) -> Options:
    """The checks, in the order a user meets them, before anything is written (the output directory too:
    the run makes it once nothing can refuse it, after a tray's claims). Returns the device runs'
    options. What describes the whole machine is read once for the plan (device.one_reading)."""
    from slogqual import device

    with device.one_reading():
        return _plan(req)


def _plan(req: QualifyRequest) -> Options:
    from slogqual.results.powercut import PowercutResult
    from slogqual.tools import fio

    prof = profiles.load(req.profile)  # a bad profile: one line, before anything else
    fio_version = fio.check_version().text
    if req.labels.get("serial") and len(req.devices) > 1:
        raise UsageError("--serial labels one device: qualify the devices one at a time to give each a serial")
    if len(set(req.devices)) != len(req.devices):
        raise UsageError("a device is named twice")
    powercut = PowercutResult.load(req.powercut) if req.powercut else None
    if req.lab and req.data:
        raise UsageError("--lab runs the scenarios on emulated devices: it does not take --data")
    if req.scenario_overrides and not (req.lab or req.data):
        raise UsageError("--scenario-runtime and --scenario-ramp set the steps of the scenarios qualify runs: "
                         "add --data DEV... (or --lab)")
    sizes = list(req.sizes) if req.sizes else list(prof.sizes)
    if req.sizes:
        profiles.check_sizes(prof, sizes, "--sizes")
    if req.quick_bytes < 128 * 1024:
        raise UsageError("--quick-bytes must be at least 128k")
    ceilings = _check_tray_options(req)
    tray, unit_paths = _plan_tray(req, prof, sizes, ceilings) if req.parallel else ([], {})
    out_dir = os.path.abspath(req.out_dir or f"slogqual-qualify-{time.strftime('%Y%m%dT%H%M%S')}")
    if req.junit:  # its directory exists and is writable, the file is not another's: checked here
        _guard(req, req.junit, "JUnit report", text_mark(JUNIT_MARK, lines=2))
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise UsageError(f"{out_dir} is not a directory: --out names the directory for the results")
    if os.path.isdir(out_dir):  # only an earlier run's files of the same kind may be replaced
        for name, what, ours in _planned(req, prof):
            _guard(req, os.path.join(out_dir, name), what, ours)
    else:  # made by the run once nothing can refuse it (make_output_dir), not here
        check_makeable(out_dir)
    scenario_results = load_scenario_results(req.scenario_results)
    return Options(
        profile=prof, devices=list(req.devices), out_dir=out_dir,
        precondition=req.precondition or prof.precondition, destroy_data=req.destroy_data, sizes=sizes,
        runtime_s=req.runtime_s if req.runtime_s is not None else prof.runtime_s,
        settle_s=req.settle_s if req.settle_s is not None else prof.settle_s,
        round_runtime_s=req.round_runtime_s if req.round_runtime_s is not None else prof.round_runtime_s,
        max_rounds=req.max_rounds if req.max_rounds is not None else prof.max_rounds,
        quick_bytes=req.quick_bytes, lab=req.lab, data=list(req.data), scenario_quick=req.scenario_quick,
        scenario_overrides=dict(req.scenario_overrides),
        scenario_results=scenario_results,
        labels={k: req.labels.get(k) for k in ("model", "serial", "firmware")},
        argv=list(req.argv), fio_version=fio_version, powercut=powercut, powercut_path=req.powercut,
        parallel=req.parallel, skip_refused=req.skip_refused, targets=tray,
        shelf_output=os.path.join(out_dir, SHELF_NAME) if req.probe else None,
        ceilings=ceilings, unit_paths=unit_paths)


class _Recorder:
    """The result store for a qualify run: opened once; a store that cannot be opened is a note, and the
    documents then say they were not recorded."""

    def __init__(self, req: QualifyRequest, on_note: Callable[[str], None]):
        from slogqual.store import Store, StoreError

        self.store = None
        self.error: Optional[str] = None
        self.on_note = on_note
        if not req.record_in_store:
            return
        store = Store(req.store)
        try:
            store.open()
        except StoreError as exc:
            on_note(f"error: {exc}; this run's results are written to files only")
            self.error = str(exc)
            return
        self.store = store

    def record(self, dr: DeviceRun) -> None:
        from slogqual.store import StoreError

        doc = dr.doc
        if self.store is None:
            doc.store = StoreRecord.made({"recorded": False, "error": self.error}, "store") if self.error else None
        else:
            try:
                ids = {}
                if dr.sweep is not None:  # a sweep is filed under the qualification's identity (labels included)
                    ids["sweep"] = self.store.record(dr.sweep, dr.sweep_path, doc.who)
                for result, path in scenario_documents(dr):
                    self.store.record(result, path)
                ids["qualification"] = self.store.record(doc, dr.doc_path)
                doc.store = StoreRecord.made({"recorded": True, "path": self.store.path, "ids": ids}, "store")
            except StoreError as exc:
                self.on_note(f"error: {exc}; results kept in {dr.doc_path}")
                doc.store = StoreRecord.made({"recorded": False, "path": self.store.path, "error": str(exc)}, "store")
        dr.rewrite()

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


def qualify(req: QualifyRequest, opts: Optional[Options] = None, progress: Optional[Progress] = None,
            on_device: Callable[[DeviceRun], None] = lambda dr: None,
            on_note: Callable[[str], None] = lambda line: None) -> QualifyOutcome:
    """Qualify every device (in turn, or with ``parallel`` at the same time), record each in the store,
    then write the reports. ``opts`` is what ``plan(req, …)`` returned when the caller planned first.
    What describes the whole machine is read once for the run (device.one_reading)."""
    from slogqual import device

    with device.one_reading():
        return _qualify(req, opts, progress, on_device, on_note)


def _qualify(req: QualifyRequest, opts: Optional[Options], progress: Optional[Progress],
             on_device: Callable[[DeviceRun], None], on_note: Callable[[str], None]) -> QualifyOutcome:
    opts = opts or plan(req)
    progress = progress or Progress(quiet=True)
    outcome = QualifyOutcome(runs=[], out_dir=opts.out_dir)
    if opts.parallel:
        _at_once(req, opts, progress, outcome, on_device, on_note)
    else:
        _in_turn(req, opts, progress, outcome, on_device, on_note)
    _reports(req, opts, progress, outcome, on_note)
    return outcome


def _in_turn(req: QualifyRequest, opts: Options, progress: Progress, outcome: QualifyOutcome,
             on_device: Callable[[DeviceRun], None], on_note: Callable[[str], None]) -> None:
    make_output_dir(opts.out_dir)  # in turn, a refused device is judged REFUSED: its document goes here
    recorder = _Recorder(req, on_note)
    lab_cache: dict = {}
    try:
        for spec, stem in zip(opts.devices, stems(opts.devices)):
            progress.say(f"qualifying {spec} against {opts.profile.name}")
            dr = DeviceRun(opts, spec, stem, progress, lab_cache)
            outcome.runs.append(dr)
            dr.run()
            _done(dr, recorder, on_device, on_note)
    except KeyboardInterrupt:
        outcome.interrupted = True
        on_note("interrupted; the results so far are kept")
    finally:
        recorder.close()


def _done(dr: DeviceRun, recorder: "_Recorder", on_device: Callable[[DeviceRun], None],
          on_note: Callable[[str], None]) -> None:
    """A device's verdict saved: into the store, and told."""
    recorder.record(dr)
    if dr.error:
        on_note(f"{dr.spec}: {dr.error}")
    on_device(dr)


def _at_once(req: QualifyRequest, opts: Options, progress: Progress, outcome: QualifyOutcome,
             on_device: Callable[[DeviceRun], None], on_note: Callable[[str], None]) -> None:
    """--parallel: the tray identified and claimed all or nothing, measured at the same time (still
    claimed: --probe), then each device's scenarios and verdict in turn."""
    from slogqual.sweep.engine import claim_all, tray_refusal

    lab_cache: dict = {}
    runs = [DeviceRun(opts, spec, stem, UnitProgress(spec, progress), lab_cache)
            for spec, stem in zip(opts.devices, stems(opts.devices))]
    tray = list(opts.targets)
    recorder: Optional[_Recorder] = None
    try:
        with contextlib.ExitStack() as claims:
            for dr, target in zip(runs, tray):  # identity first, as a lone run reads it before its claim
                dr.identify(target)
            refused = claim_all(claims, tray, opts.destroy_data)
            if refused and not opts.skip_refused:
                raise tray_refusal(refused, tray, does="qualifies")  # nothing written, every claim released
            make_output_dir(opts.out_dir)  # the tray claimed: now the first write
            outcome.runs = runs
            recorder = _Recorder(req, on_note)
            for target, exc in refused:
                dr = runs[tray.index(target)]
                dr.failed(exc)
                dr.conclude(claimed=False)
                outcome.skipped.append(dr.spec)
                on_note(f"skipped {dr.spec} (--skip-refused): {dr.error}")
                recorder.record(dr)
                on_device(dr)
            measured = [(dr, t) for dr, t in zip(runs, tray) if all(t is not r for r, _ in refused)]
            if not measured:
                on_note("every device was refused: nothing left to qualify")
                return
            progress.say(f"qualifying {len(measured)} devices at once against {opts.profile.name}")
            at_once([_unit(dr, t) for dr, t in measured], "slogqual-qualify",
                    on_interrupt=lambda: on_note("interrupted: every device stops and keeps what it measured"))
            if opts.shelf_output:
                _probe(opts, [(dr, t) for dr, t in measured if not dr.error], progress, outcome, on_note)
        for dr, _ in measured:  # the claims released: the scenarios claim the device themselves
            if dr.doc is None:
                dr.conclude(claimed=True)
                _done(dr, recorder, on_device, on_note)
    except KeyboardInterrupt:
        outcome.interrupted = True
        for dr in outcome.runs:
            if dr.doc is None:
                dr.interrupted()
        on_note("interrupted; the results so far are kept")
    finally:
        if recorder is not None:
            recorder.close()


def _unit(dr: DeviceRun, target: Target) -> Callable[[threading.Event], None]:
    """One device's measurement in a worker thread: its end, whatever it is, is its own."""
    def work(stop: threading.Event) -> None:
        try:
            dr.measure(target, stop)
        except KeyboardInterrupt:
            dr.interrupted()
        except Exception as exc:  # not a SlogqualError (a bug): still this device's end, never the others'
            dr.error, dr.exit_code, dr.verdict = f"{type(exc).__name__}: {exc}", 1, judge.VERDICT_ERROR
    return work


def _probe(opts: Options, units: List[tuple], progress: Progress, outcome: QualifyOutcome,
           on_note: Callable[[str], None]) -> None:
    """--probe: the devices measured to the end, each alone and all at once (still claimed), into
    shelf.json; nothing when fewer than two were. A probe that fails is a note: the verdicts stand."""
    if len(units) < 2:
        progress.say("no together vs alone: fewer than two devices were measured")
        return
    try:
        outcome.shelf = shelf_probe.probe([t for _, t in units], opts.runtime_s, progress=progress,
                                          paths=opts.unit_paths, identities={t.path: dr.record for dr, t in units})
        write_json_atomic(opts.shelf_output, outcome.shelf.to_dict())
    except (SlogqualError, OSError) as exc:
        on_note(f"error: together vs alone: {exc}; the verdicts stand")
        return
    outcome.shelf_path = opts.shelf_output
    progress.say(f"shelf: {opts.shelf_output}")


def _reports(req: QualifyRequest, opts: Options, progress: Progress, outcome: QualifyOutcome,
             on_note: Callable[[str], None]) -> None:
    """The reports come after the verdicts are measured and saved: one that cannot be written (ENOSPC,
    EROFS, its directory gone) is a note, and the verdicts' exit code stands."""
    from slogqual.report import junit

    docs = outcome.documents
    if req.junit and docs:
        try:
            junit.write(req.junit, docs)
            outcome.junit = req.junit
            progress.say(f"JUnit: {req.junit}")
        except OSError as exc:
            on_note(f"error: the JUnit report {req.junit} could not be written ({exc.strerror or exc}); "
                    f"the verdicts are in {opts.out_dir}")
    if req.html and docs:
        sweeps = [(r.sweep, r.sweep_path) for r in outcome.runs if r.sweep is not None and r.sweep.points]
        html_path = os.path.join(opts.out_dir, "qualification.html")
        try:
            shelves = [(ShelfResult.from_dict(outcome.shelf.to_dict(), outcome.shelf_path), outcome.shelf_path)
                       ] if outcome.shelf is not None else []
            for note in output.write_html(html_path, docs, [s for s, _ in sweeps], [p for _, p in sweeps],
                                          shelves=shelves):
                on_note(f"note: {note}")
            outcome.html = html_path
            progress.say(f"report: {html_path}")
        except OSError as exc:
            on_note(f"error: the HTML report {html_path} could not be written ({exc.strerror or exc}); "
                    f"the verdicts are in {opts.out_dir}")
    progress.say(f"results: {opts.out_dir}")
