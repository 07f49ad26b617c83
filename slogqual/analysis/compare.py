"""Compare two sweeps size by size and flag changes beyond a threshold.

"Worse" is measured the same way for every metric: the ratio of the worse value
to the better one. For a latency that is B/A when B is higher; for ops/s or MiB/s
it is A/B when B is lower. At QD1 ops/s is the reciprocal of the mean latency,
so ``--metric latency`` and ``--metric iops`` flag the same sizes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

from slogqual.errors import UsageError
from slogqual.results import SweepPoint, SweepResult
from slogqual.units import size_label

REGRESSION = "regression"
IMPROVEMENT = "improvement"
ONLY_A = "only in A"
ONLY_B = "only in B"


@dataclass(frozen=True)
class CompareMetric:
    key: str
    label: str
    unit: str
    value: Callable[[SweepPoint], Optional[float]]
    higher_is_worse: bool


METRICS: Dict[str, CompareMetric] = {
    "latency": CompareMetric("latency", "mean latency", "µs", lambda p: p.lat_us.mean if p.lat_us else None, True),
    "p99": CompareMetric("p99", "p99 latency", "µs", lambda p: p.lat_us.p99 if p.lat_us else None, True),
    "iops": CompareMetric("iops", "writes/s", "ops/s", lambda p: p.iops, False),
    "mbps": CompareMetric("mbps", "bandwidth", "MiB/s", lambda p: p.mbps, False),
}


def parse_threshold(text: str) -> float:
    """'10%' -> 0.10, '0.1' -> 0.10; must be above 0."""
    m = re.match(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(%?)\s*$", str(text))
    if not m:
        raise UsageError(f"bad threshold {text!r}: use a percentage like 10% or a fraction like 0.1")
    value = float(m.group(1)) / (100.0 if m.group(2) else 1.0)
    if value <= 0:
        raise UsageError(f"threshold {text} must be above zero")
    return value


@dataclass
class CompareRow:
    size: int
    a: Optional[float]
    b: Optional[float]
    flag: str = ""

    @property
    def ratio(self) -> Optional[float]:
        if self.a is None or self.b is None or self.a == 0:
            return None
        return self.b / self.a

    @property
    def change_pct(self) -> Optional[float]:
        r = self.ratio
        return None if r is None else (r - 1.0) * 100.0


@dataclass
class Comparison:
    metric: CompareMetric
    threshold: float
    rows: List[CompareRow]
    notes: List[str] = field(default_factory=list)

    @property
    def regressions(self) -> List[CompareRow]:
        return [r for r in self.rows if r.flag == REGRESSION]

    @property
    def improvements(self) -> List[CompareRow]:
        return [r for r in self.rows if r.flag == IMPROVEMENT]

    def summary(self) -> str:
        reg, imp = self.regressions, self.improvements
        both = [r for r in self.rows if r.ratio is not None]
        if not both:
            return "no size measured in both results"
        parts = []
        if reg:
            parts.append(f"{len(reg)} regression(s) beyond {self.threshold * 100:g}% ("
                         + ", ".join(size_label(r.size) for r in reg) + ")")
        if imp:
            parts.append(f"{len(imp)} improvement(s) beyond {self.threshold * 100:g}% ("
                         + ", ".join(size_label(r.size) for r in imp) + ")")
        if not parts:
            parts.append(f"no change beyond {self.threshold * 100:g}% at {len(both)} size(s)")
        return "; ".join(parts)


def worse_factor(metric: CompareMetric, a: float, b: float) -> float:
    """> 1 when B is worse than A, < 1 when better; the same scale for every metric."""
    if metric.higher_is_worse:
        return b / a
    return a / b


def compare(a: SweepResult, b: SweepResult, metric: str = "latency", threshold: float = 0.10) -> Comparison:
    if metric not in METRICS:
        raise UsageError(f"unknown metric {metric!r}: use one of {', '.join(METRICS)}")
    m = METRICS[metric]
    va = {p.size: m.value(p) for p in a.points}
    vb = {p.size: m.value(p) for p in b.points}
    rows: List[CompareRow] = []
    notes: List[str] = []
    for size in sorted(set(va) | set(vb)):
        x, y = va.get(size), vb.get(size)
        row = CompareRow(size, x, y)
        if size not in vb:
            row.flag = ONLY_A
        elif size not in va:
            row.flag = ONLY_B
        elif x is not None and y is not None and x > 0 and y > 0:
            f = worse_factor(m, x, y)
            if f > 1.0 + threshold:
                row.flag = REGRESSION
            elif f < 1.0 / (1.0 + threshold):
                row.flag = IMPROVEMENT
        rows.append(row)
    for name, r, vals in (("A", a, va), ("B", b, vb)):
        if r.source != "slogqual":
            notes.append(f"{name} is a {r.source} import: mean only, about 1 s per size")
        if vals and all(v is None for v in vals.values()):
            notes.append(f"{name} has no {m.label} values")
    if metric == "p99":
        bases = [{p.lat_basis for p in r.points} for r in (a, b)]
        if bases[0] != bases[1]:
            notes.append("the p99 figures are of different kinds: " + ", ".join(
                f"{n} {'/'.join(sorted(x))}" for n, x in zip("AB", bases)) + " (write+flush percentiles are upper bounds)")
    if a.params.get("mode") != b.params.get("mode"):
        notes.append(f"write modes differ: A {a.params.get('mode')}, B {b.params.get('mode')}")
    return Comparison(m, threshold, rows, notes)
