"""Exact percentiles of raw samples (the pair engine's per-IO latencies): pure functions.

Definition (nearest rank): of n samples sorted ascending x[1] <= ... <= x[n], the q-th percentile
(0 < q <= 100) is x[k] with k = ceil(q/100 * n), the smallest sample such that at least q % of the
samples are at or below it; q = 0 is the minimum. Every percentile is a measured sample, never an
interpolation, so p100 is the maximum and percentiles never exceed it. The rank is computed in
integers (q resolved to 1/10000 of a percent) so that 99.9 % of 1000 samples is rank
999 exactly, not 999.0000000001 rounded up to 1000.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Dict, Optional, Sequence

# The percentiles the pair engine reports, as stored in documents (key -> q in %).
REPORTED = (("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p999", 99.9), ("p9999", 99.99))

_SCALE = 10000  # q is resolved to 1/10000 of a percent: 99.99 -> 999900


def rank(q: float, n: int) -> int:
    """The 1-based nearest rank of the q-th percentile among n samples (ValueError for n < 1 or q
    outside [0, 100])."""
    if n < 1:
        raise ValueError("no samples")
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile {q!r} outside 0..100")
    qi = int(round(q * _SCALE))
    return max(1, -(-qi * n // (100 * _SCALE)))  # ceil(q/100 * n), in integers


def nearest_rank(sorted_values: Sequence[float], q: float) -> float:
    """The q-th percentile of ascending ``sorted_values`` (nearest rank, see the module text)."""
    return sorted_values[rank(q, len(sorted_values)) - 1]


@dataclass
class Summary:
    """Exact figures of a sample set, in the samples' unit."""

    n: int
    mean: float
    min: float
    max: float
    stddev: float  # population standard deviation
    percentiles: Dict[str, float]


def summarize(values: Sequence[float], divisor: float = 1) -> Optional[Summary]:
    """Mean, min, max, stddev and the REPORTED percentiles of values, each divided by divisor
    (1000 for ns -> µs: 107329 ns is 107.329 µs, where * 1e-3 would give 107.32900000000001); None for
    no values."""
    n = len(values)
    if n == 0:
        return None
    ordered = sorted(values)
    # Sums by C-level iteration: the pair engine gives millions of samples per size on a fast device.
    # Integer samples (ns, the engine's) give the variance exactly: (n*sum(x^2) - sum(x)^2) / n^2 in
    # integers; other samples use exactly rounded float sums, E[x^2] - mean^2 clamped at 0.
    ranked = {key: nearest_rank(ordered, q) for key, q in REPORTED}
    if all(isinstance(v, int) for v in ordered[:1] + ordered[-1:]) and isinstance(ordered[n // 2], int):
        return from_moments(n, sum(ordered), sum(map(operator.mul, ordered, ordered)), ordered[0], ordered[-1],
                            ranked, divisor)
    total = math.fsum(ordered)
    var = max(0.0, math.fsum(map(operator.mul, ordered, ordered)) / n - (total / n) ** 2)
    return Summary(n=n, mean=total / n / divisor, min=ordered[0] / divisor, max=ordered[-1] / divisor,
                   stddev=math.sqrt(var) / divisor, percentiles={key: v / divisor for key, v in ranked.items()})


def from_moments(n: int, total: int, squares: int, minimum: int, maximum: int, ranked: Dict[str, int],
                 divisor: float = 1) -> Summary:
    """The Summary of n >= 1 integer samples from their exact sum and sum of squares, their extremes and
    their REPORTED percentiles by key (what the pair engine computes in C): summarize's arithmetic, so
    the same samples give the same figures to the last bit."""
    var = (n * squares - total * total) / (n * n)
    return Summary(n=n, mean=total / n / divisor, min=minimum / divisor, max=maximum / divisor,
                   stddev=math.sqrt(var) / divisor, percentiles={key: ranked[key] / divisor for key, _q in REPORTED})
