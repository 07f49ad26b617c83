"""Loading the result documents that plots, reports, comparisons and exports read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Sequence, Tuple

from slogqual.errors import UsageError
from slogqual.results import SweepResult, load_json, load_sweep, schema_of
from slogqual.results import schema as S
from slogqual.results.advice import AdviceResult
from slogqual.results.powercut import PowercutResult
from slogqual.results.qualification import QualificationResult
from slogqual.results.scenario import ScenarioResult
from slogqual.results.shelf import ShelfResult


def load_results(paths: Sequence[str]) -> List[SweepResult]:
    """Every path must hold one slogqual.sweep/1 document (a sweep or an import)."""
    if not paths:
        raise UsageError("give at least one RESULT.json")
    return [load_sweep(p) for p in paths]


@dataclass
class ReportInputs:
    """What ``slogqual report`` reads, each typed with its path, in the order given."""

    sweeps: List[Tuple[SweepResult, str]] = field(default_factory=list)
    powercuts: List[Tuple[PowercutResult, str]] = field(default_factory=list)
    shelves: List[Tuple[ShelfResult, str]] = field(default_factory=list)  # together vs alone (--probe)
    scenarios: List[Tuple[ScenarioResult, str]] = field(default_factory=list)
    advices: List[Tuple[AdviceResult, str]] = field(default_factory=list)
    qualifications: List[Tuple[QualificationResult, str]] = field(default_factory=list)

    def charted_sweeps(self) -> List[Tuple[SweepResult, str]]:
        """The sweeps given, then each qualification's own sweep (the evidence of its sweep criteria) that is
        not among them."""
        out = list(self.sweeps)
        for q, path in self.qualifications:
            where = f"{path} (its sweep{', ' + q.sweep.path if q.sweep.path else ''})"
            sweep = q.sweep_result(where)
            if sweep is not None and all(sweep.to_dict() != r.to_dict() for r, _ in out):
                out.append((sweep, where))
        return out


# Every kind slogqual report shows: its schema, the type that reads it and the list it goes to.
KINDS = ((S.SWEEP, SweepResult, "sweeps"), (S.POWERCUT, PowercutResult, "powercuts"), (S.SHELF, ShelfResult, "shelves"),
         (S.SCENARIO, ScenarioResult, "scenarios"), (S.ADVICE, AdviceResult, "advices"),
         (S.QUALIFICATION, QualificationResult, "qualifications"))


def load_report_results(paths: Sequence[str]) -> ReportInputs:
    """Every document kind slogqual writes and reads back; anything else is bad input, one line."""
    if not paths:
        raise UsageError("give at least one RESULT.json")
    got = ReportInputs()
    for p in paths:
        doc = load_json(p)
        family = S.family(str(schema_of(doc, ""))) if isinstance(doc, dict) else None
        kind = next((k for k in KINDS if S.family(k[0]) == family), None)
        if kind is None:
            schema = schema_of(doc) if isinstance(doc, dict) else f"a JSON {type(doc).__name__}"
            names = [k[0] for k in KINDS]
            raise UsageError(f"{p}: not a {', '.join(names[:-1])} or {names[-1]} document (schema: {schema!r})")
        getattr(got, kind[2]).append((kind[1].from_dict(doc, p), p))
    return got
