"""The ``slogqual.qualification/1`` document (docs/qualify.md), typed.

One per device and qualification run: the verdict and exit code, the identity, the profile it was
judged against, the measurements (preconditioning, steady-state rounds, the sweep document, the
scenario results it used, by path) and one judgement per criterion. ``QualificationResult.load``
validates a file and names the first bad key; ``to_dict`` gives back the document unchanged (byte for
byte as results.write_json_atomic writes it). Every table of it is a type (results.Table): qualify
makes the document as this object and every reader (qualify's tables, JUnit, the report, the store)
reads its fields, never its keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Optional, Tuple

from slogqual.results import DeviceIdentity, SweepResult, Table, load_json
from slogqual.results import schema as S
from slogqual.results.scenario import ScenarioEnvironment

VERDICTS = ("pass", "fail", "incomplete", "refused", "error")
RESULTS = ("pass", "fail", "not-evaluated")


@dataclass
class CriterionResult(Table):
    """One criterion of the profile (qualify.profile.Criterion's keys) and how it was judged (qualify.judge)."""

    KEYS: ClassVar[Tuple[str, ...]] = ("check", "name", "why", "kind", "metric", "size", "scenario", "op",
                                       "threshold", "unit", "line", "result", "measured", "measured_text",
                                       "threshold_text", "detail", "message")

    check: str = ""
    result: str = ""
    measured: Any = None  # a number, a verdict word, or None when not evaluated
    detail: str = ""
    name: Optional[str] = None  # the profile's name for the criterion
    why: Optional[str] = None  # the profile's reason for it
    kind: Optional[str] = None  # sweep, device, steady, scenario
    metric: Optional[str] = None
    size: Optional[int] = None
    scenario: Optional[str] = None
    op: Optional[str] = None
    threshold: Any = None  # a number, a word, or the words of "in"
    unit: Optional[str] = None
    line: Optional[int] = None  # of the profile file
    measured_text: Optional[str] = None  # the figure with its unit, as the judge wrote it
    threshold_text: Optional[str] = None
    message: Optional[str] = None  # one line: what was measured against what was required

    @classmethod
    def _typed(cls, d: Dict[str, Any], c: S.Checker, where: str) -> Dict[str, Any]:
        measured = d.get("measured")
        if not (measured is None or isinstance(measured, (int, float, str)) and not isinstance(measured, bool)):
            raise c.fail(f"{where}.measured", "must be a number, a word or null")
        return {"check": c.text(d, "check", where), "result": c.text(d, "result", where, choices=RESULTS),
                "detail": c.text(d, "detail", where, required=False) or ""}


@dataclass
class Identity(Table):
    """``identity``: what the store files the device under, and where each figure came from."""

    KEYS: ClassVar[Tuple[str, ...]] = ("sources", "model", "serial", "firmware", "class")
    NAMES: ClassVar[Dict[str, str]] = {"class": "device_class"}

    sources: Dict[str, str] = field(default_factory=dict)  # key -> "device record" or "--serial (given by the user)"
    model: Optional[str] = None
    serial: Optional[str] = None
    firmware: Optional[str] = None
    device_class: Optional[str] = None

    def line(self) -> str:
        """'model M, serial S, firmware F, class C' (what is known), else 'no identity'."""
        parts = [f"{k} {v}" for k, v in (("model", self.model), ("serial", self.serial), ("firmware", self.firmware),
                                        ("class", self.device_class)) if v]
        return ", ".join(parts) or "no identity"


@dataclass
class ProfileRecord(Table):
    """``profile``: the profile judged against (qualify.profile.Profile.to_dict), its file and digest."""

    KEYS: ClassVar[Tuple[str, ...]] = ("name", "path", "sha256", "description", "sizes", "runtime_s", "settle_s",
                                       "mode", "precondition", "steady_state", "criteria")

    name: str = ""
    path: Optional[str] = None  # the TOML file ('' or a shipped profile's own)
    sha256: Optional[str] = None
    description: Optional[str] = None
    sizes: Optional[List[int]] = None
    runtime_s: Optional[float] = None
    settle_s: Optional[float] = None
    mode: Optional[str] = None
    precondition: Optional[str] = None
    steady_state: Optional[Dict[str, Any]] = None  # the profile's steady-state rule, as its file set it
    criteria: Optional[List[Dict[str, Any]]] = None  # as the profile parsed them (the judged ones: ``criteria``)

    @classmethod
    def _typed(cls, d: Dict[str, Any], c: S.Checker, where: str) -> Dict[str, Any]:
        return {"name": c.text(d, "name", where)}


@dataclass
class Precondition(Table):
    """``precondition``: how the device was filled before measuring (qualify.precondition)."""

    KEYS: ClassVar[Tuple[str, ...]] = ("mode", "span_bytes", "loops", "written_bytes", "seconds", "mbps", "note")

    mode: Optional[str] = None  # none, quick, full
    span_bytes: Optional[int] = None
    loops: Optional[int] = None
    written_bytes: Optional[int] = None
    seconds: Optional[float] = None
    mbps: Optional[float] = None
    note: Optional[str] = None


@dataclass
class SteadyRule(Table):
    """``steady_state.rule``: the SNIA rule the rounds were judged by, and in words."""

    KEYS: ClassVar[Tuple[str, ...]] = ("window", "range_fraction", "slope_fraction", "text")

    window: Optional[int] = None
    range_fraction: Optional[float] = None
    slope_fraction: Optional[float] = None
    text: Optional[str] = None


@dataclass
class SteadyRound(Table):
    """One steady-state round (qualify.steady.Round)."""

    KEYS: ClassVar[Tuple[str, ...]] = ("round", "iops", "mean_us", "p99_us", "ios")
    NAMES: ClassVar[Dict[str, str]] = {"round": "n"}

    n: Optional[int] = None
    iops: Optional[float] = None
    mean_us: Optional[float] = None
    p99_us: Optional[float] = None
    ios: Optional[int] = None


@dataclass
class SteadyCheck(Table):
    """``steady_state.last_check``: the rule applied to the last rounds (qualify.steady.SteadyCheck)."""

    KEYS: ClassVar[Tuple[str, ...]] = ("reached", "window", "mean", "excursion", "slope", "slope_excursion",
                                       "range_limit", "slope_limit", "reason")

    reached: Optional[bool] = None
    window: Optional[List[float]] = None  # the rounds' figures judged
    mean: Optional[float] = None
    excursion: Optional[float] = None
    slope: Optional[float] = None
    slope_excursion: Optional[float] = None
    range_limit: Optional[float] = None
    slope_limit: Optional[float] = None
    reason: Optional[str] = None


@dataclass
class SteadyStateRecord(Table):
    """``steady_state``: the rounds before the sweep and whether the device reached steady state."""

    KEYS: ClassVar[Tuple[str, ...]] = ("checked", "reached", "label", "at_round", "tracked", "size", "round_runtime_s",
                                       "max_rounds", "rule", "rounds", "last_check")

    checked: Optional[bool] = None  # False when no rounds were asked for
    reached: Optional[bool] = None
    label: Optional[str] = None  # 'reached (round 5)', 'NOT reached in 6 rounds', 'not checked'
    at_round: Optional[int] = None
    tracked: Optional[str] = None  # the figure the rule follows (iops)
    size: Optional[int] = None
    round_runtime_s: Optional[float] = None
    max_rounds: Optional[int] = None
    rule: Optional[SteadyRule] = None
    rounds: List[SteadyRound] = field(default_factory=list)
    last_check: Optional[SteadyCheck] = None

    @classmethod
    def _typed(cls, d: Dict[str, Any], c: S.Checker, where: str) -> Dict[str, Any]:
        return {"checked": c.get(d, "checked", where, (bool,), required=False),
                "reached": c.get(d, "reached", where, (bool,), required=False),
                "label": c.text(d, "label", where, required=False),
                "rule": SteadyRule.optional(d, "rule", c, where), "rounds": SteadyRound.each(d, "rounds", c, where),
                "last_check": SteadyCheck.optional(d, "last_check", c, where)}

    @property
    def missed(self) -> bool:
        """Checked and not reached: every figure of the qualification may still drift."""
        return bool(self.checked and not self.reached)

    @property
    def label_text(self) -> str:
        """The label, 'not checked' where there is none."""
        return self.label if self.label is not None else "not checked"

    @property
    def rule_text(self) -> Optional[str]:
        return self.rule.text if self.rule is not None else None


@dataclass
class SweepReference(Table):
    """``sweep``: the sweep measured for this qualification: its file, its status and the document."""

    KEYS: ClassVar[Tuple[str, ...]] = ("path", "status", "document")

    path: Optional[str] = None
    status: Optional[str] = None
    document: Optional[Dict[str, Any]] = None  # the slogqual.sweep/1 document, as written: ``result()`` reads it

    @classmethod
    def _typed(cls, d: Dict[str, Any], c: S.Checker, where: str) -> Dict[str, Any]:
        doc = c.obj(d, "document", where, required=False)
        if doc is not None and doc.get("schema") != S.SWEEP:
            raise c.fail(f"{where}.document.schema", f"must be {S.SWEEP}, not {doc.get('schema')!r}")
        return {"document": doc}

    def result(self, source: str = "the qualification's sweep") -> Optional[SweepResult]:
        """The sweep, typed (None where the device got no sweep)."""
        return SweepResult.from_dict(self.document, source) if self.document else None


@dataclass
class ScenarioEntry(Table):
    """One of ``scenarios``: a scenario result a criterion was judged on, or why there is none."""

    KEYS: ClassVar[Tuple[str, ...]] = ("name", "source", "path", "status", "reason", "note")

    name: str = ""
    source: Optional[str] = None  # 'file X', 'the QEMU lab (--quick)', 'a pool on ...'
    path: Optional[str] = None
    status: Optional[str] = None  # the scenario result's status; None when there is none
    reason: Optional[str] = None  # why there is none
    note: Optional[str] = None

    @classmethod
    def _typed(cls, d: Dict[str, Any], c: S.Checker, where: str) -> Dict[str, Any]:
        return {"name": c.text(d, "name", where)}


@dataclass
class Rules(Table):
    """``rules``: the versions of the rules that judged it (a reader with newer rules can tell)."""

    KEYS: ClassVar[Tuple[str, ...]] = ("judge", "scenario_analysis")

    judge: Optional[int] = None  # qualify.judge.RULES_VERSION
    scenario_analysis: Optional[int] = None  # analysis.scenario.ANALYSIS_VERSION


@dataclass
class Summary(Table):
    """``summary``: the criteria counted by result."""

    KEYS: ClassVar[Tuple[str, ...]] = ("pass", "fail", "not-evaluated")
    NAMES: ClassVar[Dict[str, str]] = {"pass": "passed", "fail": "failed", "not-evaluated": "not_evaluated"}

    passed: Optional[int] = None
    failed: Optional[int] = None
    not_evaluated: Optional[int] = None

    @classmethod
    def _typed(cls, d: Dict[str, Any], c: S.Checker, where: str) -> Dict[str, Any]:
        return {cls._attr(k): c.integer(d, k, where, required=False, minimum=0) for k in cls.KEYS}

    def counts(self) -> Tuple[int, int, int]:
        """(pass, fail, not evaluated), 0 where the document has no count."""
        return self.passed or 0, self.failed or 0, self.not_evaluated or 0


@dataclass
class StoreRecord(Table):
    """``store``: where the run was recorded, or why it was not."""

    KEYS: ClassVar[Tuple[str, ...]] = ("recorded", "path", "ids", "error")

    recorded: bool = False
    path: Optional[str] = None  # the store (a password in a URL is ***)
    ids: Optional[Dict[str, Optional[int]]] = None  # "sweep", "qualification" -> run id (None: already stored)
    error: Optional[str] = None


# The document's keys in the order the qualification writes them (slogqual.qualify.engine); every one a field.
_KEYS = ("schema", "verdict", "exit_code", "error", "target", "name", "identity", "device", "profile", "precondition",
         "steady_state", "sweep", "scenarios", "criteria", "rules", "summary", "warnings", "notes", "environment",
         "started", "finished", "store")
# Keys a document of an earlier version may lack (it is read and written back without them).
_OPTIONAL = ("identity", "device", "precondition", "steady_state", "rules", "summary", "warnings", "notes",
             "environment", "started", "finished", "store")


@dataclass
class QualificationResult:
    verdict: str
    exit_code: int
    target: str
    name: str
    profile: ProfileRecord
    criteria: List[CriterionResult]
    sweep: SweepReference
    scenarios: List[ScenarioEntry]
    error: Optional[str] = None
    identity: Optional[Identity] = None  # model, serial, firmware the store files it under
    device: Optional[Dict[str, Any]] = None  # the device record (slogqual.device), power-loss evidence included
    precondition: Optional[Precondition] = None  # how the device was filled before measuring
    steady_state: Optional[SteadyStateRecord] = None  # the steady-state rounds and whether it was reached
    rules: Optional[Rules] = None  # the versions of the rules that judged it (judge, scenario analysis)
    summary: Optional[Summary] = None  # criteria counted by result
    warnings: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    environment: Optional[ScenarioEnvironment] = None  # host, kernel, tool versions, argv
    started: Optional[str] = None
    finished: Optional[str] = None
    store: Optional[StoreRecord] = None  # where the run was recorded (None: not recorded)
    extra: Dict[str, Any] = field(default_factory=dict)  # keys of a newer writer, kept as they came
    schema: str = S.QUALIFICATION
    absent: Tuple[str, ...] = ()  # optional keys the document read did not have (written back without them)

    # --- what readers ask of it ----------------------------------------------------------------------
    @property
    def steady(self) -> SteadyStateRecord:
        """The steady state (not checked where the document has none)."""
        return self.steady_state if self.steady_state is not None else SteadyStateRecord()

    @property
    def who(self) -> Identity:
        """The identity (every field None where the document has none)."""
        return self.identity if self.identity is not None else Identity()

    @property
    def device_identity(self) -> DeviceIdentity:
        return DeviceIdentity.of(self.device)

    @property
    def host(self) -> Optional[str]:
        return self.environment.host if self.environment is not None else None

    @property
    def broken(self) -> bool:
        """Refused or broken before the figures existed (not a verdict on the figures)."""
        return self.verdict in ("refused", "error")

    def sweep_result(self, source: str = "the qualification's sweep") -> Optional[SweepResult]:
        return self.sweep.result(source)

    @classmethod
    def from_dict(cls, doc: Any, source: str = "<document>") -> "QualificationResult":
        doc = S.upgrade(doc, S.QUALIFICATION, source)
        c = S.Checker(source)
        c.obj(doc, "profile")
        c.obj(doc, "sweep")
        c.items(doc, "scenarios")
        c.items(doc, "criteria")
        return cls(verdict=c.text(doc, "verdict", choices=VERDICTS), exit_code=c.integer(doc, "exit_code", minimum=0),
                   target=c.text(doc, "target"), name=c.text(doc, "name"),
                   profile=ProfileRecord.from_dict(doc["profile"], c, "profile"),
                   criteria=CriterionResult.each(doc, "criteria", c),
                   sweep=SweepReference.from_dict(doc["sweep"], c, "sweep"),
                   scenarios=ScenarioEntry.each(doc, "scenarios", c), error=c.text(doc, "error", required=False),
                   identity=Identity.optional(doc, "identity", c), precondition=Precondition.optional(doc, "precondition", c),
                   steady_state=SteadyStateRecord.optional(doc, "steady_state", c),
                   rules=Rules.optional(doc, "rules", c), summary=Summary.optional(doc, "summary", c),
                   environment=ScenarioEnvironment.from_dict(doc["environment"], c)
                   if doc.get("environment") is not None else None,
                   store=StoreRecord.optional(doc, "store", c),
                   warnings=c.texts(doc, "warnings"), notes=c.texts(doc, "notes"),
                   started=c.text(doc, "started", required=False), finished=c.text(doc, "finished", required=False),
                   device=c.obj(doc, "device", required=False), extra={k: v for k, v in doc.items() if k not in _KEYS}, schema=doc["schema"],
                   absent=tuple(k for k in _OPTIONAL if k not in doc))

    @classmethod
    def load(cls, path: str) -> "QualificationResult":
        return cls.from_dict(load_json(path), path)

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {}
        for key in _KEYS:
            if key in self.absent:
                continue
            value = getattr(self, key)
            if isinstance(value, list):
                d[key] = [x.to_dict() if isinstance(x, Table) else x for x in value]
            else:
                d[key] = value.to_dict() if isinstance(value, (Table, ScenarioEnvironment)) else value
        d.update(self.extra)
        return d
