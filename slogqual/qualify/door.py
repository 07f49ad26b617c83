"""Qualification as a library call: ``qualify(request)`` -> ``QualifyOutcome`` (issue #27: a door per
capability, below the CLI).

Everything between "these devices, this profile" and "here are the verdicts" lives here: the bad-input
checks before anything is written (the profile's sizes, the output directory and every file it will hold,
the JUnit file, the power-cut result), the device runs in turn (qualify.run.DeviceRun), the result store
(every device's sweep, scenario results and qualification document), and the reports (JUnit, HTML) after
the verdicts are saved. The caller is told of each finished device (``on_device``) and of notes and
errors that do not change a verdict (``on_note``); a report that cannot be written is such a note, and
the verdicts' exit code stands.

An interrupt (Ctrl-C, SIGTERM turned into KeyboardInterrupt) ends the device loop: what was measured is
kept, the reports are written for the finished devices and ``outcome.interrupted`` is set.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

from slogqual.process import EXIT_INTERRUPTED
from slogqual.errors import UsageError
from slogqual.outputs import check_output, text_mark
from slogqual.progress import Progress
from slogqual.qualify import output
from slogqual.qualify import profile as profiles
from slogqual.qualify.run import DeviceRun, Options, load_scenario_results, scenario_documents, stems
from slogqual.results import schema
from slogqual.results.schema import prefix

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
    scenario_results: List[str] = field(default_factory=list)
    powercut: Optional[str] = None
    destroy_data: bool = False
    labels: Dict[str, Optional[str]] = field(default_factory=dict)  # model / serial / firmware to file under
    store: Optional[str] = None  # --store / $SLOGQUAL_STORE; None: the default store
    record_in_store: bool = True
    html: bool = True
    argv: List[str] = field(default_factory=list)  # the command line, for the documents


@dataclass
class QualifyOutcome:
    runs: List[DeviceRun]
    out_dir: str
    junit: Optional[str] = None  # written
    html: Optional[str] = None  # written
    interrupted: bool = False

    @property
    def documents(self) -> List[dict]:
        return [r.doc for r in self.runs if r.doc]

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
    return planned


def plan(req: QualifyRequest) -> Options:
    """The checks, in the order a user meets them, before anything is written; then the output directory
    is made. Returns the device runs' options."""
    from slogqual.results.powercut import PowercutResult
    from slogqual.tools import fio

    prof = profiles.load(req.profile)  # a bad profile: one line, before anything else
    fio_version = fio.check_version().text
    if req.labels.get("serial") and len(req.devices) > 1:
        raise UsageError("--serial labels one device: qualify the devices one at a time to give each a serial")
    if len(set(req.devices)) != len(req.devices):
        raise UsageError("a device is named twice")
    powercut = PowercutResult.load(req.powercut).to_dict() if req.powercut else None
    if req.lab and req.data:
        raise UsageError("--lab runs the scenarios on emulated devices: it does not take --data")
    sizes = list(req.sizes) if req.sizes else list(prof.sizes)
    if req.sizes:
        profiles.check_sizes(prof, sizes, "--sizes")
    if req.quick_bytes < 128 * 1024:
        raise UsageError("--quick-bytes must be at least 128k")
    out_dir = os.path.abspath(req.out_dir or f"slogqual-qualify-{time.strftime('%Y%m%dT%H%M%S')}")
    if req.junit:  # before the output directory is made: a refused run writes nothing
        _guard(req, req.junit, "JUnit report", text_mark(JUNIT_MARK, lines=2))
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise UsageError(f"{out_dir} is not a directory: --out names the directory for the results")
    if os.path.isdir(out_dir):  # only an earlier run's files of the same kind may be replaced
        for name, what, ours in _planned(req, prof):
            _guard(req, os.path.join(out_dir, name), what, ours)
    scenario_results = load_scenario_results(req.scenario_results)
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{out_dir}: cannot create the output directory: {exc.strerror}") from None
    if req.junit:
        parent = os.path.dirname(os.path.abspath(req.junit))
        if not os.path.isdir(parent):
            raise UsageError(f"{req.junit}: directory {parent} does not exist")
    return Options(
        profile=prof, devices=list(req.devices), out_dir=out_dir,
        precondition=req.precondition or prof.precondition, destroy_data=req.destroy_data, sizes=sizes,
        runtime_s=req.runtime_s if req.runtime_s is not None else prof.runtime_s,
        settle_s=req.settle_s if req.settle_s is not None else prof.settle_s,
        round_runtime_s=req.round_runtime_s if req.round_runtime_s is not None else prof.round_runtime_s,
        max_rounds=req.max_rounds if req.max_rounds is not None else prof.max_rounds,
        quick_bytes=req.quick_bytes, lab=req.lab, data=list(req.data), scenario_quick=req.scenario_quick,
        scenario_results=scenario_results,
        labels={k: req.labels.get(k) for k in ("model", "serial", "firmware")},
        argv=list(req.argv), fio_version=fio_version, powercut=powercut, powercut_path=req.powercut)


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

        if self.store is None:
            dr.doc["store"] = {"recorded": False, "error": self.error} if self.error else None
        else:
            ident = {k: dr.doc["identity"].get(k) for k in ("model", "serial", "firmware", "class")}
            try:
                ids = {}
                if dr.sweep is not None:
                    ids["sweep"] = self.store.record(dr.sweep.to_dict(), dr.sweep_path, ident)
                for doc, path in scenario_documents(dr):
                    self.store.record(doc, path)
                ids["qualification"] = self.store.record(dr.doc, dr.doc_path, ident)
                dr.doc["store"] = {"recorded": True, "path": self.store.path, "ids": ids}
            except StoreError as exc:
                self.on_note(f"error: {exc}; results kept in {dr.doc_path}")
                dr.doc["store"] = {"recorded": False, "path": self.store.path, "error": str(exc)}
        dr.rewrite()

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


def qualify(req: QualifyRequest, opts: Optional[Options] = None, progress: Optional[Progress] = None,
            on_device: Callable[[DeviceRun], None] = lambda dr: None,
            on_note: Callable[[str], None] = lambda line: None) -> QualifyOutcome:
    """Qualify every device in turn, record each in the store, then write the reports. ``opts`` is what
    ``plan(req, …)`` returned when the caller planned first."""
    from slogqual.report import junit

    opts = opts or plan(req)
    progress = progress or Progress(quiet=True)
    outcome = QualifyOutcome(runs=[], out_dir=opts.out_dir)
    recorder = _Recorder(req, on_note)
    lab_cache: dict = {}
    try:
        for spec, stem in zip(opts.devices, stems(opts.devices)):
            progress.say(f"qualifying {spec} against {opts.profile.name}")
            dr = DeviceRun(opts, spec, stem, progress, lab_cache)
            outcome.runs.append(dr)
            dr.run()
            recorder.record(dr)
            if dr.error:
                on_note(f"{spec}: {dr.error}")
            on_device(dr)
    except KeyboardInterrupt:
        outcome.interrupted = True
        on_note("interrupted; the results so far are kept")
    finally:
        recorder.close()
    docs = outcome.documents
    # The reports come after the verdicts are measured and saved: one that cannot be written (ENOSPC,
    # EROFS, its directory gone) is a note, and the verdicts' exit code stands.
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
            for note in output.write_html(html_path, docs, [s for s, _ in sweeps], [p for _, p in sweeps]):
                on_note(f"note: {note}")
            outcome.html = html_path
            progress.say(f"report: {html_path}")
        except OSError as exc:
            on_note(f"error: the HTML report {html_path} could not be written ({exc.strerror or exc}); "
                    f"the verdicts are in {opts.out_dir}")
    progress.say(f"results: {opts.out_dir}")
    return outcome
