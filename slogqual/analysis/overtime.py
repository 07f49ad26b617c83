"""Latency and bandwidth over time from the pair engine's per-IO samples: pure functions.

A point's distribution hides *when* the slow IOs came. A consumer SSD absorbs writes in its SLC cache
at full speed and then, once the cache is full or garbage collection starts, drops to a fraction of
it: the long tail of a sweep point, and the ingest rate of a long NFS copy through a SLOG. The
aggregates below keep that shape: per fixed interval of engine time (default 100 ms) the IOs that
*started* in it, their mean, p99 (nearest rank, a measured sample) and max pair latency, and the
bandwidth (bytes of those IOs over the interval).

Documents store the aggregates column-wise (``OverTime.to_dict``): a ten-minute sustained run is 6,000
intervals, a few hundred kilobytes of JSON, where the raw samples would be tens of megabytes.
"""

from __future__ import annotations

import bisect
import math
import operator
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from slogqual import limits
from slogqual.analysis import percentiles

DEFAULT_INTERVAL_MS = 100
# The narrowest interval: aggregate and from_sums cut at whole ns and the pair engine refuses a step of 0
# (1e-7 ms rounds to 0 ns: a division by zero after the run); below 1 ms an interval holds one or two
# IOs of the fastest device, and a run is a million intervals per 17 minutes.
MIN_INTERVAL_MS = limits.INTERVAL_MS.lo
MAX_INTERVAL_MS = limits.INTERVAL_MS.hi  # an hour: wider than any run is one interval
MAX_INTERVALS = 1_000_000  # per point: each interval is a line of the engine's output and six JSON numbers


def interval_count(duration_s: float, interval_ms: float) -> int:
    """How many intervals a run of ``duration_s`` makes (the last one partial)."""
    return math.ceil(duration_s * 1000 / interval_ms)
BASELINE_S = 10.0  # the collapse is measured against the bandwidth of the first 10 seconds
COLLAPSE_FRACTION = 0.5  # ... falling below half of it
WINDOW_S = 1.0  # ... over a sliding window this long (one slow flush in 100 ms is not a collapse)

COLUMNS = ("t_s", "ios", "mean_us", "p99_us", "max_us", "mbps")


@dataclass
class OverTime:
    """Per-interval aggregates; column i of every list is interval i (starting at ``t_s[i]``)."""

    interval_ms: float
    end_s: Optional[float] = None  # the run's end: the last interval may be shorter than interval_ms
    t_s: List[float] = field(default_factory=list)
    ios: List[int] = field(default_factory=list)
    mean_us: List[Optional[float]] = field(default_factory=list)
    p99_us: List[Optional[float]] = field(default_factory=list)
    max_us: List[Optional[float]] = field(default_factory=list)
    mbps: List[float] = field(default_factory=list)  # MiB/s

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"interval_ms": self.interval_ms, "end_s": self.end_s}
        for key in COLUMNS:
            d[key] = list(getattr(self, key))
        return d

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "OverTime":
        return cls(interval_ms=float(d["interval_ms"]), end_s=d.get("end_s"), **{key: list(d.get(key) or []) for key in COLUMNS})

    def __len__(self) -> int:
        return len(self.t_s)


def _round(v: float, digits: int = 3) -> float:
    return float(f"{v:.{digits}f}")


def aggregate(start_ns: Sequence[int], write_ns: Sequence[int], flush_ns: Sequence[int], size: int,
              interval_ms: float = DEFAULT_INTERVAL_MS, elapsed_ns: Optional[int] = None,
              pairs: Optional[Sequence[int]] = None) -> OverTime:
    """Aggregate samples into intervals of ``interval_ms`` by each IO's start time.

    Every interval from 0 to the end of the run is present, an interval in which no IO started too
    (ios 0, latencies None, bandwidth 0: a device that stalled for a second shows as a gap, not as
    nothing). ``elapsed_ns`` (the engine's run time) sets the end; without it, the end of the last IO.
    ``pairs`` (write + flush per IO) when the caller has them already.
    """
    if not (len(start_ns) == len(write_ns) == len(flush_ns)):
        raise ValueError("start, write and flush samples differ in length")
    if interval_ms <= 0 or not math.isfinite(interval_ms):
        raise ValueError(f"interval {interval_ms!r} ms must be a positive number")
    step = int(round(interval_ms * 1e6))
    pairs_all = list(pairs) if pairs is not None else list(map(operator.add, write_ns, flush_ns))
    if len(pairs_all) != len(start_ns):
        raise ValueError("pairs and samples differ in length")
    end = elapsed_ns if elapsed_ns is not None else max(map(operator.add, start_ns, pairs_all), default=0)
    count = max(1, -(-int(end) // step))
    starts = list(start_ns)
    if starts == sorted(starts):
        # the engine's IOs follow each other (QD1): the start times ascend, so each interval's IOs are a
        # slice found by bisection, and the work per sample stays in C
        cuts = [0] + [bisect.bisect_left(starts, i * step) for i in range(1, count)] + [len(starts)]
        buckets = [pairs_all[a:b] for a, b in zip(cuts, cuts[1:])]
    else:  # samples out of order (not from the engine): one by one
        buckets = [[] for _ in range(count)]
        for s, p in zip(starts, pairs_all):
            buckets[min(int(s) // step, count - 1)].append(p)  # the last partial interval keeps its IOs
    sums, p99s, maxes = [], [], []
    for pairs in buckets:
        pairs.sort()
        sums.append(math.fsum(pairs))
        p99s.append(percentiles.nearest_rank(pairs, 99.0) if pairs else None)
        maxes.append(pairs[-1] if pairs else None)
    return from_sums(interval_ms, int(end), size, [len(b) for b in buckets], sums, p99s, maxes)


def from_sums(interval_ms: float, end_ns: int, size: int, ios: Sequence[int], sums: Sequence[float],
              p99_ns: Sequence[Optional[int]], max_ns: Sequence[Optional[int]]) -> OverTime:
    """The OverTime of intervals given by their IOs, the sum of their pair ns, their p99 and max pair
    ns (None for an interval without IOs): aggregate's arithmetic, for the pair engine, which computes
    these in C. Integer sums (below 2**53) give aggregate's figures exactly."""
    step = int(round(interval_ms * 1e6))
    count = len(ios)
    out = OverTime(interval_ms=interval_ms, end_s=_round(end_ns / 1e9, 6))
    for i, n in enumerate(ios):
        span_ns = min(step, end_ns - i * step) if i == count - 1 and end_ns > i * step else step
        out.t_s.append(_round(i * step / 1e9, 6))
        out.ios.append(n)
        out.mbps.append(_round(n * size / (span_ns / 1e9) / (1 << 20)))
        if n:
            out.mean_us.append(_round(float(sums[i]) / n / 1000))
            out.p99_us.append(_round(p99_ns[i] / 1000))
            out.max_us.append(_round(max_ns[i] / 1000))
        else:
            out.mean_us.append(None)
            out.p99_us.append(None)
            out.max_us.append(None)
    return out


@dataclass
class Collapse:
    """Where bandwidth first fell below ``fraction`` of its level over the first ``baseline_s`` (the
    document's ``why`` says it: slogqual/report/sweep.collapse_dict)."""

    baseline_mbps: float
    baseline_s: float
    fraction: float
    window_s: float
    t_s: Optional[float]  # the first interval below the threshold in the first window below it; None: never
    bytes_before: Optional[int]  # bytes written before that window started
    lowest_window_mbps: Optional[float]  # the slowest window after the baseline (how deep it went)
    evaluated: bool  # False: the run was too short to have a baseline and a window after it
    run_s: float = 0.0  # how long the run lasted, its full intervals (said, not stored)
    baseline_exact: Optional[float] = None  # baseline_mbps before it was rounded (said, not stored)

    _SAID_ONLY = ("run_s", "baseline_exact")

    def to_dict(self) -> Dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in self._SAID_ONLY}


def collapse(over: OverTime, size: int, baseline_s: float = BASELINE_S, fraction: float = COLLAPSE_FRACTION,
             window_s: float = WINDOW_S) -> Collapse:
    """The first sliding window of ``window_s`` after the first ``baseline_s`` whose bandwidth is below
    ``fraction`` of the baseline's, and the bytes written before it. Windows slide by one interval;
    the run must last at least baseline_s + window_s to be evaluated. A last interval shorter than the
    others (the run ended inside it) is left out: its few IOs are not a slowdown."""
    step_s = over.interval_ms / 1000
    per_window = max(1, int(round(window_s / step_s)))
    n_base = int(round(baseline_s / step_s))
    mib = 1 << 20
    full = len(over)
    if over.end_s is not None and full and over.end_s < over.t_s[-1] + step_s * (1 - 1e-9):
        full -= 1
    if full < n_base + per_window or n_base == 0:
        return Collapse(baseline_mbps=0.0, baseline_s=baseline_s, fraction=fraction, window_s=window_s,
                        t_s=None, bytes_before=None, lowest_window_mbps=None, evaluated=False, run_s=full * step_s)
    base_bytes = sum(over.ios[:n_base]) * size
    baseline = base_bytes / (n_base * step_s) / mib
    threshold = baseline * fraction
    window_ios = sum(over.ios[n_base:n_base + per_window])
    lowest, found = None, None
    for start in range(n_base, full - per_window + 1):
        if start > n_base:
            window_ios += over.ios[start + per_window - 1] - over.ios[start - 1]
        rate = window_ios * size / (per_window * step_s) / mib
        lowest = rate if lowest is None else min(lowest, rate)
        if found is None and rate < threshold:
            found = start
    if found is None:
        return Collapse(baseline_mbps=_round(baseline), baseline_s=baseline_s, fraction=fraction, window_s=window_s,
                        t_s=None, bytes_before=None, lowest_window_mbps=_round(lowest), evaluated=True,
                        run_s=full * step_s, baseline_exact=baseline)
    # The window's start can precede the drop by up to a window; the time reported is that of the
    # first interval inside the window that is itself below the threshold (one must be: the window's
    # mean is below it).
    found = next(i for i in range(found, found + per_window)
                 if over.ios[i] * size / step_s / mib < threshold)
    before = sum(over.ios[:found]) * size
    return Collapse(baseline_mbps=_round(baseline), baseline_s=baseline_s, fraction=fraction, window_s=window_s,
                    t_s=over.t_s[found], bytes_before=before, lowest_window_mbps=_round(lowest), evaluated=True,
                    run_s=full * step_s, baseline_exact=baseline)
