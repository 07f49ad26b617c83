"""Loading the result documents that plots, reports, comparisons and exports read."""

from __future__ import annotations

from typing import List, Sequence

from slogqual.errors import UsageError
from slogqual.results import SweepResult, load_sweep


def load_results(paths: Sequence[str]) -> List[SweepResult]:
    """Every path must hold one slogqual.sweep/1 document (a sweep or an import)."""
    if not paths:
        raise UsageError("give at least one RESULT.json")
    return [load_sweep(p) for p in paths]
