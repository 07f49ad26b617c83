"""The qualification run: identify, precondition, steady state, sweep, scenarios, judge — per device.

Each device ends with its own ``slogqual.qualification/1`` document (docs/qualify.md), written
even when the device was refused or failed part-way. One device failing does not stop the next.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from slogqual.report import powerloss
from slogqual import environment, paths
from slogqual.analysis import scenario as scenario_analysis
from slogqual.sweep import target as targets
from slogqual.errors import RefusedError, SlogqualError, UsageError
from slogqual.pool.door import ScenarioRequest, run_scenario
from slogqual.process import EXIT_INTERRUPTED
from slogqual.progress import Progress
from slogqual.qualify import judge, steady
from slogqual.qualify import precondition as precond
from slogqual.qualify.judge import ScenarioEvidence
from slogqual.qualify.profile import Profile
from slogqual.results import DeviceIdentity, SweepResult, write_json_atomic
from slogqual.results.qualification import (CriterionResult, Identity, Precondition, ProfileRecord, QualificationResult,
                                            Rules, ScenarioEntry, SteadyStateRecord, SweepReference)
from slogqual.results.powercut import PowercutResult
from slogqual.results.scenario import ScenarioEnvironment, ScenarioResult
from slogqual.sweep.engine import SweepParams, SyncWriteSweep, claim_target, point_from_fio
from slogqual.sweep.target import KIND_NBD, Target
from slogqual.tools import fio
from slogqual.units import size_label



@dataclass
class Options:
    profile: Profile
    devices: List[str]
    out_dir: str
    precondition: str = "none"
    destroy_data: bool = False
    sizes: List[int] = field(default_factory=list)
    runtime_s: float = 1.0
    settle_s: float = 1.0
    round_runtime_s: float = 1.0
    max_rounds: int = steady.MAX_ROUNDS
    quick_bytes: int = precond.QUICK_BYTES
    lab: bool = False
    data: List[str] = field(default_factory=list)
    scenario_quick: bool = False
    scenario_overrides: Dict[str, float] = field(default_factory=dict)  # --scenario-runtime, --scenario-ramp
    scenario_results: Dict[str, ScenarioEvidence] = field(default_factory=dict)  # name -> --scenario-result
    labels: Dict[str, str] = field(default_factory=dict)  # model/serial/firmware given by the user
    argv: List[str] = field(default_factory=list)
    fio_version: str = ""
    powercut: Optional[PowercutResult] = None  # --powercut FILE
    powercut_path: Optional[str] = None
    parallel: bool = False  # the devices measured at once, a tray claimed all or nothing (qualify.door)
    skip_refused: bool = False  # --parallel: qualify the devices that pass the interlocks, skip the others
    targets: List[Target] = field(default_factory=list)  # --parallel: every device resolved while planning
    shelf_output: Optional[str] = None  # --probe: where the together-vs-alone document goes
    ceilings: List[Any] = field(default_factory=list)  # --path-ceiling: analysis.path_ceiling.Declaration
    # --probe: each device's path (results.shelf.UnitPath) by target path, read once while planning with
    # the ceilings set, handed to the probe
    unit_paths: Dict[str, Any] = field(default_factory=dict)


def load_scenario_results(paths: List[str]) -> Dict[str, ScenarioEvidence]:
    """--scenario-result FILE...: name -> the result (a ScenarioResult), its source and path; bad files are bad
    input."""
    out: Dict[str, ScenarioEvidence] = {}
    for path in paths:
        result = ScenarioResult.load(path)  # validated: a bad key is named
        name = result.name
        if name in out:
            raise UsageError(f"{path}: a second result of scenario {name!r} (first: {out[name].path})")
        out[name] = ScenarioEvidence(document=result, source=f"file {path}", path=os.path.abspath(path))
    return out


def largest_size(opts: Options) -> int:
    """The largest write of a device's run (the sweep's sizes and the steady-state rounds'): what its
    target must hold."""
    return max(opts.sizes + [opts.profile.steady_size])


def file_stem(spec: str) -> str:
    return paths.file_stem(spec, "device")


def stems(specs: List[str]) -> List[str]:
    names = [file_stem(s) for s in specs]
    if len(set(names)) == len(names):
        return names
    return [f"{i}-{n}" for i, n in enumerate(names, 1)]


# --- scenarios ------------------------------------------------------------------------------------

def _lab_unavailable() -> str:
    try:
        from slogqual.lab import image as lab_image
        from slogqual.lab import runner as lab_runner
    except Exception as exc:  # the lab package is absent or broken in this install
        return f"the lab is not available ({type(exc).__name__}: {exc})"
    reason = lab_image.missing_reason()
    if reason:
        return f"the lab is not available: {reason}"
    try:
        lab_runner.require_host()
    except SlogqualError as exc:
        return f"the lab is not available: {exc}"
    return ""


def _entry(run, path: str) -> ScenarioEvidence:
    """A scenario criterion's evidence from a scenario run: its document, or why there is none.

    A failing scenario run must not cost the other criteria and devices: its error becomes the
    entry's reason (with the steps it kept, if any); an interrupt still ends the qualification."""
    try:
        outcome = run()
    except Exception as exc:  # a broken scenario run (even a bug) must not cost the other criteria
        if not isinstance(exc, SlogqualError):
            return ScenarioEvidence(reason=f"the scenario run crashed: {type(exc).__name__}: {exc}")
        if os.path.exists(path):
            try:
                kept: Optional[ScenarioResult] = ScenarioResult.load(path)
            except SlogqualError:  # no result, or not one the loader takes
                kept = None
            if kept is not None and kept.steps:
                return ScenarioEvidence(document=kept, path=path,
                                        note=f"the scenario run stopped: {exc} (status {kept.status})")
        return ScenarioEvidence(reason=f"the scenario run failed: {exc}")
    entry = ScenarioEvidence(document=outcome.document, path=outcome.path)
    if outcome.job_status not in (None, 0):
        entry.note = (f"the scenario run ended with exit code {outcome.job_status} "
                      f"(status {outcome.document.status})")
    return entry


def scenario_entries(opts: Options, spec: str, stem: str, lab_cache: Dict[str, ScenarioEvidence],
                     progress: Progress) -> Dict[str, ScenarioEvidence]:
    out: Dict[str, ScenarioEvidence] = {}
    for name in opts.profile.scenarios:
        if name in opts.scenario_results:
            out[name] = opts.scenario_results[name]
        elif opts.lab:
            if name not in lab_cache:
                why = _lab_unavailable()
                if why:
                    lab_cache[name] = ScenarioEvidence(reason=why)
                else:
                    path = os.path.join(opts.out_dir, f"scenario-{name}-lab.json")
                    progress.say(f"scenario {name}: running in the lab (--quick)")
                    from slogqual.lab import scenario as lab_scenario
                    req = lab_scenario.LabScenarioRequest(scenario=name, output=path, quick=True, quiet=True,
                                                          overrides=dict(opts.scenario_overrides))
                    entry = _entry(lambda: lab_scenario.run_scenario(req), path)
                    entry.source = "the QEMU lab (--quick)"
                    entry.note = entry.note or "measured on the lab's emulated devices, not on the device under test"
                    lab_cache[name] = entry
            out[name] = lab_cache[name]
        elif opts.data:
            path = os.path.join(opts.out_dir, f"{stem}.scenario-{name}.json")
            progress.say(f"scenario {name}: data {' '.join(opts.data)}, log {spec}")
            req = ScenarioRequest(scenario=name, data=list(opts.data), logs=[spec], output=path,
                                  quick=opts.scenario_quick, overrides=dict(opts.scenario_overrides),
                                  destroy_data=opts.destroy_data,
                                  origin=f"slogqual qualify (profile {opts.profile.name}, device {spec})",
                                  argv=opts.argv)
            entry = _entry(lambda: run_scenario(req), path)  # quiet: its progress is not this run's
            entry.source = f"a pool on {' '.join(opts.data)}"
            out[name] = entry
        else:
            out[name] = ScenarioEvidence(reason="no scenario result: give --scenario-result FILE, --lab, or --data DEV...")
    return out


# --- one device -----------------------------------------------------------------------------------

def _identity(record: Optional[Dict[str, Any]], labels: Dict[str, str]) -> Identity:
    """The identity the store files the device under: the device record's, else the user's labels."""
    known = DeviceIdentity.of(record)
    ident = Identity()
    for key in Identity.KEYS[1:]:
        attr = Identity._attr(key)
        value = getattr(known, attr)
        if value and value != "unknown":
            ident.sources[key] = "device record"
        elif labels.get(key):
            value = labels[key]
            ident.sources[key] = f"--{key} (given by the user)"
        setattr(ident, attr, value)
    return ident


class DeviceRun:
    def __init__(self, opts: Options, spec: str, stem: str, progress: Progress,
                 lab_cache: Dict[str, ScenarioEvidence]):
        self.opts, self.spec, self.stem, self.progress, self.lab_cache = opts, spec, stem, progress, lab_cache
        self.doc_path = os.path.join(opts.out_dir, f"{stem}.qualification.json")
        self.sweep_path = os.path.join(opts.out_dir, f"{stem}.sweep.json")
        self.record: Optional[Dict[str, Any]] = None
        self.sweep: Optional[SweepResult] = None
        self.steady: Optional[steady.SteadyState] = None
        self.pre: Optional[precond.Preconditioning] = None
        self.scenarios: Dict[str, ScenarioEvidence] = {}
        self.error: Optional[str] = None
        self.exit_code = 0
        self.verdict = ""
        self.judgements: List[judge.Judgement] = []
        self.notes: List[str] = []
        self.warnings: List[str] = []
        self.started = environment.now_iso()
        self.doc: Optional[QualificationResult] = None
        self.write_failed = False

    # The measurement steps, all inside the claim.
    def _rounds(self, target: Target) -> steady.SteadyState:
        p = self.opts.profile
        st = steady.SteadyState(size=p.steady_size, round_runtime_s=self.opts.round_runtime_s,
                                max_rounds=self.opts.max_rounds, window=p.window,
                                range_fraction=p.range_fraction, slope_fraction=p.slope_fraction)

        def measure(n: int) -> steady.Round:
            job = (fio.FioJob(bs=p.steady_size, runtime_s=self.opts.round_runtime_s, mode=p.mode, uri=target.path)
                   if target.kind == KIND_NBD else
                   fio.FioJob(bs=p.steady_size, runtime_s=self.opts.round_runtime_s, mode=p.mode,
                              filename=target.path, region_bytes=target.size, direct=target.direct))
            pt = point_from_fio(p.steady_size, fio.run_job(job), environment.now_iso())
            return steady.Round(n, pt.iops, pt.lat_us.mean, pt.lat_us.p99, pt.ios)

        def report(r: steady.Round, c: steady.SteadyCheck) -> None:
            self.progress.say(f"{self.spec}: steady state round {r.n}/{st.max_rounds}: {r.iops:.0f} IOPS, "
                              f"{r.mean_us:.1f} µs mean" + (" — reached" if c.reached else ""))

        return steady.run_rounds(st, measure, report)

    def _measure(self, target: Target, stop: Optional[threading.Event] = None) -> None:
        opts, p = self.opts, self.opts.profile
        self.pre = precond.plan(opts.precondition, target.size, opts.quick_bytes)
        if self.pre.mode != "none":
            self.progress.say(f"{self.spec}: preconditioning ({self.pre.note})")
            self.pre = precond.run(target, opts.precondition, opts.quick_bytes)
            self.progress.say(f"  wrote {self.pre.written // (1 << 20)} MiB in {self.pre.seconds:.1f} s "
                              f"({self.pre.mbps:.0f} MiB/s)")
        self.steady = self._rounds(target)
        params = SweepParams(mode=p.mode, sizes=list(opts.sizes), runtime_s=opts.runtime_s, settle_s=opts.settle_s)
        result = SweepResult(target=target.to_dict(), params=params.to_dict(target),
                             environment=environment.collect(opts.fio_version, opts.argv),
                             device=self.record, notes=list(target.notes),
                             warnings=list((self.record or {}).get("warnings") or []))
        result.notes.append(f"measured by slogqual qualify (profile {p.name}); preconditioning: "
                            f"{self.pre.mode}; steady state: {self.steady.label}")
        if self.steady.checked and not self.steady.reached:
            result.warnings.append(f"STEADY STATE NOT REACHED in {len(self.steady.rounds)} rounds of "
                                   f"{size_label(p.steady_size)} writes: the figures may still drift")
        sweep = SyncWriteSweep(target, params, self.sweep_path, self.progress, result=result,
                               fio_version=opts.fio_version, argv=opts.argv, stop=stop)
        self.sweep = result
        sweep.run()

    def identify(self, target: Optional[Target] = None) -> Target:
        """The device's target (resolved here unless given) and its identity record; an identity that
        cannot be read is a note, a target that cannot be resolved the device's error (raised)."""
        from slogqual import device as _device

        if target is None:
            target = targets.resolve(self.spec, largest_size(self.opts))
        try:
            self.record = _device.identify(self.spec).to_dict()
        except SlogqualError as exc:
            self.notes.append(f"device identity unavailable: {exc}")
        for w in (self.record or {}).get("warnings") or []:
            self.progress.say(f"WARNING: {w}")
        return target

    def failed(self, exc: SlogqualError) -> None:
        """The device's run ended on ``exc``: refused by the interlocks, or an error."""
        verdict = judge.VERDICT_REFUSED if isinstance(exc, RefusedError) else judge.VERDICT_ERROR
        self.error, self.exit_code, self.verdict = str(exc), exc.exit_code, verdict

    def interrupted(self) -> QualificationResult:
        """Ctrl-C or SIGTERM: what was measured is judged and saved, the document says so."""
        self.error, self.exit_code, self.verdict = "interrupted", EXIT_INTERRUPTED, judge.VERDICT_ERROR
        return self._finish()

    def measure(self, target: Target, stop: Optional[threading.Event] = None) -> None:
        """Precondition, steady state and sweep of a claimed target; a failure is the device's error.
        ``stop``: the device is one of several measured at once (slogqual.sweep.at_once)."""
        try:
            self._measure(target, stop)
        except SlogqualError as exc:
            self.failed(exc)

    def run(self) -> QualificationResult:
        """The lone run: identify, claim, measure, then the scenarios and the verdict."""
        claimed = False
        try:
            target = self.identify()
            with claim_target(target, self.opts.destroy_data):  # every interlock, the lock, --destroy-data
                claimed = True
                self._measure(target)
        except SlogqualError as exc:
            self.failed(exc)
        except KeyboardInterrupt:
            self.interrupted()
            raise
        return self.conclude(claimed)

    def conclude(self, claimed: bool) -> QualificationResult:
        """After the measurement, with the device released: the scenarios (where it was measured far
        enough) and the verdict."""
        if not self.error or (claimed and self.sweep is not None and self.sweep.points):
            # Scenarios need the device free again (the scenario run claims it itself).
            try:
                self.scenarios = scenario_entries(self.opts, self.spec, self.stem, self.lab_cache, self.progress)
            except SlogqualError as exc:
                self.notes.append(f"scenarios: {exc}")
        return self._finish()

    def _powercut_for_this_device(self) -> Optional[PowercutResult]:
        """The --powercut result if it is about this device: never an emulated run (it measured an
        emulation, not this device), and only when its serial, or else its path, is this device's."""
        pc, path = self.opts.powercut, self.opts.powercut_path
        if not pc:
            return None
        if pc.emulation:
            self.notes.append(f"--powercut {path}: an emulated power cut ({pc.emulation}) says "
                              f"nothing of {self.spec}; not used")
            return None
        mine = (self.record or {}).get("serial")
        theirs = (pc.device or {}).get("serial")
        if mine and theirs:
            if mine != theirs:
                self.notes.append(f"--powercut {path}: measured serial {theirs}, this device is {mine}; not used")
                return None
            return pc
        if os.path.realpath(pc.target_path) == os.path.realpath(self.spec):
            return pc
        self.notes.append(f"--powercut {path}: measured {pc.target_path}, not {self.spec} "
                          "(and no serial to match); not used")
        return None

    def _finish(self) -> QualificationResult:
        p = self.opts.profile
        if self.record:
            # the power-loss verdict from everything known now: the sweep's flush cost, a power cut
            self.record = powerloss.with_evidence(self.record, sweep=self.sweep.to_dict() if self.sweep else None,
                                                  powercut=self._powercut_for_this_device())
        steady_state = SteadyStateRecord.made(self.steady.to_dict(), "steady_state") if self.steady else None
        self.judgements = judge.judge_all(p.criteria, self.sweep, self.record, steady_state, self.scenarios)
        if self.error:
            for j in self.judgements:
                if j.result == judge.NOT_EVALUATED:
                    j.detail = f"{self.verdict}: {self.error}"
        if not self.verdict:
            self.verdict = judge.verdict_of(self.judgements)
            self.exit_code = 0 if self.verdict == judge.VERDICT_PASS else 1
        if self.steady and self.steady.checked and not self.steady.reached:
            self.warnings.append(f"steady state NOT reached in {len(self.steady.rounds)} rounds: "
                                 "every figure of this qualification is marked so")
        warnings = list((self.record or {}).get("warnings") or []) + self.warnings
        self.doc = QualificationResult(
            verdict=self.verdict, exit_code=self.exit_code, error=self.error, target=self.spec, name=self.stem,
            identity=_identity(self.record, self.opts.labels), device=self.record,
            profile=ProfileRecord.made(p.to_dict(), "profile"),
            precondition=Precondition.made(self.pre.to_dict(), "precondition") if self.pre else None,
            steady_state=steady_state,
            sweep=SweepReference(path=self.sweep_path if self.sweep is not None else None,
                                 status=self.sweep.status if self.sweep is not None else None,
                                 document=self.sweep.to_dict() if self.sweep is not None else None),
            scenarios=[ScenarioEntry(name=n, source=e.source, path=e.path,
                                     status=e.document.status if e.document else None, reason=e.reason, note=e.note)
                       for n, e in self.scenarios.items()],
            criteria=[CriterionResult.made(j.to_dict(), f"criteria[{i}]") for i, j in enumerate(self.judgements)],
            # which rules produced the verdicts above (a reader with newer rules can tell)
            rules=Rules(judge=judge.RULES_VERSION, scenario_analysis=scenario_analysis.ANALYSIS_VERSION),
            summary=judge.counts(self.judgements), warnings=warnings, notes=self.notes,
            environment=ScenarioEnvironment.collected(environment.collect(self.opts.fio_version, self.opts.argv)),
            started=self.started, finished=environment.now_iso(), store=None)
        self.rewrite()
        return self.doc

    def rewrite(self) -> None:
        """Save the document; one that cannot be written (ENOSPC, EROFS) is one line, the run's exit
        code at least 1, and the verdicts still printed (they are in memory)."""
        try:
            write_json_atomic(self.doc_path, self.doc.to_dict())
        except OSError as exc:
            if not self.write_failed:  # said once, however often the document is saved
                say_error(f"error: cannot write {self.doc_path}: {exc.strerror or exc}")
            self.write_failed = True
            self.exit_code = max(self.exit_code, 1)
            self.doc.exit_code = self.exit_code


def scenario_documents(run: DeviceRun) -> List[Tuple[ScenarioResult, Optional[str]]]:
    """(result, path) of the scenario results this device's run used, as the store records them."""
    return [(e.document, e.path) for e in run.scenarios.values() if e.document is not None]


def say_error(text: str) -> None:
    print(f"slogqual: {text}", file=sys.stderr)
