"""How sure a mean is: the 95 % confidence interval of the pair mean by batch means. Pure functions.

Consecutive IOs of one device are correlated (a garbage-collection pause slows a run of them, a
write cache fills and drains), so the textbook interval sd/sqrt(n) of independent samples is too
narrow. Batch means (Law & Kelton, *Simulation Modeling and Analysis*, ch. 9.5.3): cut the run into
``BATCHES`` consecutive batches of equal size, take each batch's mean; with batches long against the
correlation, the batch means are nearly independent and normal, and

    half-width = t(0.975, k-1) * sd(batch means) / sqrt(k)

is the interval of the grand mean. The IOs left over when n is not a multiple of k are the *first*
ones (dropped from the interval only; the point's mean uses every IO).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence

BATCHES = 30
MIN_PER_BATCH = 2  # fewer than 60 IOs: no interval (it would say little, and say it wrongly)

# Student's t, two-sided 95 % (0.975 quantile), by degrees of freedom; BATCHES - 1 = 29 is what runs.
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
         10: 2.228, 14: 2.145, 19: 2.093, 24: 2.064, 29: 2.045}


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with df degrees of freedom (from the table; a df between
    table rows takes the next smaller row, which is wider: conservative)."""
    if df < 1:
        raise ValueError("no degrees of freedom")
    return _T975[max(k for k in _T975 if k <= df)]


@dataclass
class Interval:
    """The 95 % confidence interval of a mean, in the samples' unit divided by the divisor."""

    mean: float
    half_width: float
    batches: int
    per_batch: int

    @property
    def relative(self) -> float:
        """Half-width over the mean (0.02 is ±2 %); infinite for a zero mean."""
        return self.half_width / self.mean if self.mean > 0 else math.inf

    def to_dict(self) -> Dict[str, Any]:
        return {"lo": _r(self.mean - self.half_width), "hi": _r(self.mean + self.half_width),
                "half_width": _r(self.half_width), "relative": _r(self.relative, 5),
                "method": "batch means", "batches": self.batches, "per_batch": self.per_batch}


def _r(v: float, digits: int = 3) -> float:
    return float(f"{v:.{digits}f}") if math.isfinite(v) else v


def mean_interval(values: Sequence[float], divisor: float = 1, batches: int = BATCHES) -> Optional[Interval]:
    """The batch-means 95 % interval of the mean of values (None below batches * MIN_PER_BATCH values)."""
    n = len(values)
    per = n // batches
    if per < MIN_PER_BATCH:
        return None
    skip = n - per * batches
    sums = [math.fsum(values[skip + i * per: skip + (i + 1) * per]) for i in range(batches)]
    return from_batch_sums(sums, per, math.fsum(values), n, divisor)


def from_batch_sums(sums: Sequence[float], per: int, total: float, n: int, divisor: float = 1) -> Optional[Interval]:
    """mean_interval from the batches' sums (``per`` values each) and the sum of all n values: what the
    pair engine computes in C. Integer sums (ns, below 2**53) give mean_interval's figures exactly:
    float() of an exact sum is what math.fsum rounds it to. None below MIN_PER_BATCH values a batch."""
    batches = len(sums)
    if per < MIN_PER_BATCH:
        return None
    means = [float(s) / per for s in sums]
    grand = math.fsum(means) / batches
    var = math.fsum((m - grand) ** 2 for m in means) / (batches - 1)
    half = t975(batches - 1) * math.sqrt(var / batches)
    return Interval(mean=float(total) / n / divisor, half_width=half / divisor, batches=batches, per_batch=per)


def more_time(interval: Optional[Interval], target: float, elapsed_s: float) -> float:
    """How much longer to run for the interval to shrink to ``target`` (relative half-width): the
    half-width falls as 1/sqrt(time), so the total needed is elapsed * (relative/target)^2. Without an
    interval yet (too few IOs), as long again."""
    if interval is None or not math.isfinite(interval.relative):
        return elapsed_s
    if interval.relative <= target:
        return 0.0
    return elapsed_s * ((interval.relative / target) ** 2 - 1)
