"""Loading the result documents that plots, reports, comparisons and exports read."""

from __future__ import annotations

from typing import List, Sequence, Tuple

from slogqual.errors import UsageError
from slogqual.results import SweepResult, load_json, load_sweep
from slogqual.results import schema as S
from slogqual.results.powercut import PowercutResult


def load_results(paths: Sequence[str]) -> List[SweepResult]:
    """Every path must hold one slogqual.sweep/1 document (a sweep or an import)."""
    if not paths:
        raise UsageError("give at least one RESULT.json")
    return [load_sweep(p) for p in paths]


def load_report_results(paths: Sequence[str]) -> Tuple[List[Tuple[SweepResult, str]], List[Tuple[PowercutResult, str]]]:
    """What ``slogqual report`` reads: sweeps and power-cut results, each with its path, in the order given."""
    if not paths:
        raise UsageError("give at least one RESULT.json")
    sweeps, powercuts = [], []
    for p in paths:
        doc = load_json(p)
        family = S.family(str(doc.get("schema", ""))) if isinstance(doc, dict) else None
        if family == S.family(S.POWERCUT):
            powercuts.append((PowercutResult.from_dict(doc, p), p))
        elif family == S.family(S.SWEEP):
            sweeps.append((SweepResult.from_dict(doc, p), p))
        else:
            got = doc.get("schema") if isinstance(doc, dict) else f"a JSON {type(doc).__name__}"
            raise UsageError(f"{p}: not a {S.SWEEP} or {S.POWERCUT} document (schema: {got!r})")
    return sweeps, powercuts
