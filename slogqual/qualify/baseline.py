"""Compare a new sweep with the stored runs of the same model: regressions beyond their spread.

A fixed percentage is wrong both ways: a device whose runs scatter by 30 % would be flagged for
noise, and a device that never moves by more than 1 % would get a 9 % slowdown for free. So the
limit is drawn from the stored runs themselves, per size:

    limit = max(worst stored value, mean ± K·sd) × (1 + floor)      (K = 3, floor = 5 %)

"worst" and "±" in the metric's bad direction (higher latency, lower IOPS/MiB/s). The floor keeps a
handful of nearly identical runs from turning timer jitter into a regression. With a single stored
run there is no spread: the limit is that run's value × (1 + fallback) (10 %), and the table says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from slogqual.analysis.compare import METRICS, CompareMetric
from slogqual.errors import UsageError
from slogqual.results import SweepResult
from slogqual.units import size_label

K_SIGMA = 3.0
FLOOR = 0.05
FALLBACK = 0.10

REGRESSION, IMPROVEMENT, WITHIN, NO_BASELINE = "regression", "improvement", "", "no baseline"


@dataclass
class BaselineRow:
    size: int
    values: List[float]
    new: Optional[float]
    limit: Optional[float] = None
    better_limit: Optional[float] = None
    flag: str = ""
    rule: str = ""

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> Optional[float]:
        return sum(self.values) / len(self.values) if self.values else None

    @property
    def sd(self) -> Optional[float]:
        n = len(self.values)
        if n < 2:
            return None
        m = sum(self.values) / n
        return math.sqrt(sum((v - m) ** 2 for v in self.values) / (n - 1))

    def to_dict(self) -> Dict[str, Any]:
        return {"size": self.size, "n": self.n, "baseline": self.values, "mean": self.mean, "sd": self.sd,
                "min": min(self.values) if self.values else None, "max": max(self.values) if self.values else None,
                "limit": self.limit, "new": self.new, "flag": self.flag or None, "rule": self.rule}


@dataclass
class BaselineComparison:
    metric: CompareMetric
    rows: List[BaselineRow]
    runs: int
    notes: List[str] = field(default_factory=list)
    k_sigma: float = K_SIGMA
    floor: float = FLOOR

    @property
    def regressions(self) -> List[BaselineRow]:
        return [r for r in self.rows if r.flag == REGRESSION]

    def summary(self) -> str:
        reg = self.regressions
        imp = [r for r in self.rows if r.flag == IMPROVEMENT]
        judged = [r for r in self.rows if r.limit is not None and r.new is not None]
        if not judged:
            return "no size measured both in the new run and in the stored runs"
        parts = []
        if reg:
            parts.append(f"{len(reg)} regression(s) beyond the stored runs' spread ("
                         + ", ".join(size_label(r.size) for r in reg) + ")")
        if imp:
            parts.append(f"{len(imp)} improvement(s) (" + ", ".join(size_label(r.size) for r in imp) + ")")
        if not parts:
            parts.append(f"within the stored runs' spread at {len(judged)} size(s)")
        return "; ".join(parts)


def limits(values: Sequence[float], higher_is_worse: bool, k: float = K_SIGMA, floor: float = FLOOR,
           fallback: float = FALLBACK) -> tuple:
    """(worse limit, better limit, rule text) for one size's stored values."""
    n = len(values)
    if n == 0:
        raise ValueError("no values")
    if n == 1:
        v = values[0]
        if higher_is_worse:
            return v * (1 + fallback), v / (1 + fallback), f"one stored run: no spread, fixed {fallback * 100:g}%"
        return v / (1 + fallback), v * (1 + fallback), f"one stored run: no spread, fixed {fallback * 100:g}%"
    m = sum(values) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in values) / (n - 1))
    rule = f"{n} runs: max(worst, mean±{k:g}sd)×(1+{floor * 100:g}%)"
    if higher_is_worse:
        return max(max(values), m + k * sd) * (1 + floor), min(min(values), m - k * sd) / (1 + floor), rule
    return min(min(values), m - k * sd) / (1 + floor), max(max(values), m + k * sd) * (1 + floor), rule


def compare(new: SweepResult, baseline: Sequence[SweepResult], metric: str = "latency", k: float = K_SIGMA,
            floor: float = FLOOR, fallback: float = FALLBACK) -> BaselineComparison:
    if metric not in METRICS:
        raise UsageError(f"unknown metric {metric!r}: use one of {', '.join(METRICS)}")
    m = METRICS[metric]
    notes: List[str] = []
    usable = []
    for b in baseline:
        if b.params.get("mode") != new.params.get("mode"):
            notes.append(f"left out a stored run in {b.params.get('mode')} mode (the new run is "
                         f"{new.params.get('mode')})")
            continue
        usable.append(b)
    rows: List[BaselineRow] = []
    for p in new.points:
        x = m.value(p)
        values = [v for v in (m.value(b.point(p.size)) if b.point(p.size) else None for b in usable) if v is not None]
        row = BaselineRow(p.size, values, x)
        if not values or x is None:
            row.flag = NO_BASELINE
        else:
            worse, better, row.rule = limits(values, m.higher_is_worse, k, floor, fallback)
            row.limit, row.better_limit = worse, better
            if (x > worse) if m.higher_is_worse else (x < worse):
                row.flag = REGRESSION
            elif (x < better) if m.higher_is_worse else (x > better):
                row.flag = IMPROVEMENT
        rows.append(row)
    if new.source != "slogqual":
        notes.append(f"the new result is a {new.source} import: mean only")
    return BaselineComparison(m, rows, len(usable), notes, k, floor)
