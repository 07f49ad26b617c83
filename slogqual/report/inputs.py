"""Loading the result documents that plots, reports, comparisons and exports read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Sequence, Tuple

from slogqual.errors import UsageError
from slogqual.results import SweepResult, load_json, load_sweep
from slogqual.results import schema as S
from slogqual.results.powercut import PowercutResult
from slogqual.results.shelf import ShelfResult


def load_results(paths: Sequence[str]) -> List[SweepResult]:
    """Every path must hold one slogqual.sweep/1 document (a sweep or an import)."""
    if not paths:
        raise UsageError("give at least one RESULT.json")
    return [load_sweep(p) for p in paths]


@dataclass
class ReportInputs:
    """What ``slogqual report`` reads, each with its path, in the order given."""

    sweeps: List[Tuple[SweepResult, str]] = field(default_factory=list)
    powercuts: List[Tuple[PowercutResult, str]] = field(default_factory=list)
    shelves: List[Tuple[ShelfResult, str]] = field(default_factory=list)  # together vs alone (--probe)


def load_report_results(paths: Sequence[str]) -> ReportInputs:
    """Sweeps, power-cut results and shelf documents; anything else is bad input."""
    if not paths:
        raise UsageError("give at least one RESULT.json")
    got = ReportInputs()
    for p in paths:
        doc = load_json(p)
        family = S.family(str(doc.get("schema", ""))) if isinstance(doc, dict) else None
        if family == S.family(S.POWERCUT):
            got.powercuts.append((PowercutResult.from_dict(doc, p), p))
        elif family == S.family(S.SWEEP):
            got.sweeps.append((SweepResult.from_dict(doc, p), p))
        elif family == S.family(S.SHELF):
            got.shelves.append((ShelfResult.from_dict(doc, p), p))
        else:
            schema = doc.get("schema") if isinstance(doc, dict) else f"a JSON {type(doc).__name__}"
            raise UsageError(f"{p}: not a {S.SWEEP}, {S.POWERCUT} or {S.SHELF} document (schema: {schema!r})")
    return got
