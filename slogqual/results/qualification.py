"""The ``slogqual.qualification/1`` document (docs/qualify.md), typed.

One per device and qualification run: the verdict and exit code, the identity, the profile it was
judged against, the measurements (preconditioning, steady-state rounds, the sweep document, the
scenario results it used, by path) and one judgement per criterion. ``QualificationResult.load``
validates a file and names the first bad key; ``to_dict`` gives back the document unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from slogqual.results import load_json
from slogqual.results import schema as S

VERDICTS = ("pass", "fail", "incomplete", "refused", "error")
RESULTS = ("pass", "fail", "not-evaluated")


@dataclass
class CriterionResult:
    check: str
    result: str
    measured: Any  # a number, a verdict word, or None when not evaluated
    detail: str
    extra: Dict[str, Any] = field(default_factory=dict)  # the criterion's parsed form and texts
    order: Tuple[str, ...] = ()  # the keys as the document read had them (written back so)

    _MODELLED = ("check", "result", "measured", "detail")

    @classmethod
    def from_dict(cls, d: Any, where: str, c: S.Checker) -> "CriterionResult":
        d = c.table(d, where)
        measured = d.get("measured")
        if not (measured is None or isinstance(measured, (int, float, str)) and not isinstance(measured, bool)):
            raise c.fail(f"{where}.measured", "must be a number, a word or null")
        return cls(check=c.text(d, "check", where), result=c.text(d, "result", where, choices=RESULTS),
                   measured=measured, detail=c.text(d, "detail", where, required=False) or "",
                   extra={k: v for k, v in d.items() if k not in cls._MODELLED}, order=tuple(d))

    def to_dict(self) -> Dict[str, Any]:
        d = {"check": self.check, "result": self.result, "measured": self.measured, "detail": self.detail,
             **self.extra}
        out = {k: d[k] for k in self.order if k in d}
        out.update((k, v) for k, v in d.items() if k not in out)
        return out


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
    profile: Dict[str, Any]
    criteria: List[CriterionResult]
    sweep: Dict[str, Any]  # {"path", "status", "document"}: the sweep measured for this qualification
    scenarios: List[Dict[str, Any]]
    error: Optional[str] = None
    identity: Optional[Dict[str, Any]] = None  # model, serial, firmware the store files it under
    device: Optional[Dict[str, Any]] = None  # the device record (slogqual.device), power-loss evidence included
    precondition: Optional[Dict[str, Any]] = None  # how the device was filled before measuring
    steady_state: Optional[Dict[str, Any]] = None  # the steady-state rounds and whether it was reached
    rules: Optional[Dict[str, Any]] = None  # the versions of the rules that judged it (judge, scenario analysis)
    summary: Optional[Dict[str, Any]] = None  # criteria counted by result
    warnings: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    environment: Optional[Dict[str, Any]] = None  # host, kernel, tool versions, argv
    started: Optional[str] = None
    finished: Optional[str] = None
    store: Optional[Dict[str, Any]] = None  # where the run was recorded (None: not recorded)
    extra: Dict[str, Any] = field(default_factory=dict)  # keys of a newer writer, kept as they came
    schema: str = S.QUALIFICATION
    absent: Tuple[str, ...] = ()  # optional keys the document read did not have (written back without them)

    @classmethod
    def from_dict(cls, doc: Any, source: str = "<document>") -> "QualificationResult":
        doc = S.upgrade(doc, S.QUALIFICATION, source)
        c = S.Checker(source)
        profile = c.obj(doc, "profile")
        c.text(profile, "name", "profile")
        sweep = c.obj(doc, "sweep")
        sweep_doc = c.obj(sweep, "document", "sweep", required=False)
        if sweep_doc is not None:
            got = sweep_doc.get("schema")
            if got != S.SWEEP:
                raise c.fail("sweep.document.schema", f"must be {S.SWEEP}, not {got!r}")
        scenarios = c.items(doc, "scenarios")
        for i, s in enumerate(scenarios):
            c.text(c.table(s, f"scenarios[{i}]"), "name", f"scenarios[{i}]")
        tables = {k: c.obj(doc, k, required=False) for k in ("identity", "device", "precondition", "steady_state",
                                                             "rules", "summary", "environment", "store")}
        return cls(verdict=c.text(doc, "verdict", choices=VERDICTS), exit_code=c.integer(doc, "exit_code", minimum=0),
                   target=c.text(doc, "target"), name=c.text(doc, "name"), profile=profile,
                   criteria=[CriterionResult.from_dict(x, f"criteria[{i}]", c)
                             for i, x in enumerate(c.items(doc, "criteria"))],
                   sweep=sweep, scenarios=scenarios, error=c.text(doc, "error", required=False),
                   warnings=c.texts(doc, "warnings"), notes=c.texts(doc, "notes"),
                   started=c.text(doc, "started", required=False), finished=c.text(doc, "finished", required=False),
                   **tables, extra={k: v for k, v in doc.items() if k not in _KEYS}, schema=doc["schema"],
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
            d[key] = [x.to_dict() for x in value] if key == "criteria" else value
        d.update(self.extra)
        return d
