"""The ``slogqual.qualification/1`` document (docs/qualify.md), typed.

One per device and qualification run: the verdict and exit code, the identity, the profile it was
judged against, the measurements (preconditioning, steady-state rounds, the sweep document, the
scenario results it used, by path) and one judgement per criterion. ``QualificationResult.load``
validates a file and names the first bad key; ``to_dict`` gives back the document unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

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

    _MODELLED = ("check", "result", "measured", "detail")

    @classmethod
    def from_dict(cls, d: Any, where: str, c: S.Checker) -> "CriterionResult":
        d = c.table(d, where)
        measured = d.get("measured")
        if not (measured is None or isinstance(measured, (int, float, str)) and not isinstance(measured, bool)):
            raise c.fail(f"{where}.measured", "must be a number, a word or null")
        return cls(check=c.text(d, "check", where), result=c.text(d, "result", where, choices=RESULTS),
                   measured=measured, detail=c.text(d, "detail", where, required=False) or "",
                   extra={k: v for k, v in d.items() if k not in cls._MODELLED})

    def to_dict(self) -> Dict[str, Any]:
        return {"check": self.check, "result": self.result, "measured": self.measured, "detail": self.detail,
                **self.extra}


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
    extra: Dict[str, Any] = field(default_factory=dict)
    schema: str = S.QUALIFICATION

    _MODELLED = ("schema", "verdict", "exit_code", "target", "name", "profile", "criteria", "sweep", "scenarios",
                 "error")

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
        return cls(verdict=c.text(doc, "verdict", choices=VERDICTS), exit_code=c.integer(doc, "exit_code", minimum=0),
                   target=c.text(doc, "target"), name=c.text(doc, "name"), profile=profile,
                   criteria=[CriterionResult.from_dict(x, f"criteria[{i}]", c)
                             for i, x in enumerate(c.items(doc, "criteria"))],
                   sweep=sweep, scenarios=scenarios, error=c.text(doc, "error", required=False),
                   extra={k: v for k, v in doc.items() if k not in cls._MODELLED}, schema=doc["schema"])

    @classmethod
    def load(cls, path: str) -> "QualificationResult":
        return cls.from_dict(load_json(path), path)

    def to_dict(self) -> Dict[str, Any]:
        return {"schema": self.schema, "verdict": self.verdict, "exit_code": self.exit_code, "error": self.error,
                "target": self.target, "name": self.name, "profile": self.profile, "sweep": self.sweep,
                "scenarios": self.scenarios, "criteria": [x.to_dict() for x in self.criteria], **self.extra}
