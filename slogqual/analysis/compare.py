"""Compare sweeps size by size: a change is reported only when it is significant and large enough.

The one compare of slogqual: ``slogqual compare A.json B.json`` and ``slogqual compare --baseline``
(the stored runs of a model, pooled) both judge here, with the constants below. Pure functions on
result documents; nothing here starts a process or touches a file.

Each sweep point records how many IOs stand behind it (``ios``) and their spread
(``lat_us.stddev``). A difference of mean latencies is judged with Welch's t-test (unequal variances,
Welch–Satterthwaite degrees of freedom), two-sided at ``ALPHA`` = 5 % (95 % confidence), as pyperf
judges its samples (pyperf/_compare.py). A size is flagged only when the difference is significant
*and* the worse/better factor is larger than ``1 + MIN_EFFECT`` (10 %): with thousands of IOs per point a
2 % drift is "significant" yet no regression worth a gate. Otherwise the row says "not significant" or
"significant, under 10%" (the words of a comparison — each row's flag, its rule, summary and notes — are
slogqual/report/compare.py's; here the facts).

A side without spread (a diskinfo import records means only; a point of one IO has none) is judged on
the mean alone (``basis`` :data:`BASIS_MEAN`, beside :data:`BASIS_WELCH`): a change is flagged only when
the worse/better factor exceeds ``1 + MEAN_ALONE_FLOOR``, the measured run-to-run repeatability of a
1 s mean write+flush latency (or ``1 + min_effect`` if that is larger); inside it the row is
"no significant change (mean alone)". "Cannot judge" is left for a row with no usable value (a
percentile, which has no spread and is never judged; a missing or non-positive value), and for a
comparison with no size in both: :attr:`Comparison.outcome` says so, and the CLI gives it its own exit
code.

In flush mode (``lat_basis`` ``write+flush``) fio times the write and the fdatasync separately and
never the pair, so the pair's standard deviation is not recorded; sd(write) + sd(flush) bounds it
from above (|cov| <= sd·sd), which makes the test conservative there, and the output says so.

"Worse" is measured the same way for every metric: the ratio of the worse value to the better one.
For a latency that is B/A when B is higher; for ops/s or MiB/s it is A/B when B is lower. ops/s and
MiB/s are totals of a run, not per-IO samples: their significance is that of the mean latency of the
same IOs (at QD1 ops/s is the reciprocal of the mean latency). A percentile (p99) carries no spread
of its own and cannot be pooled, so it is shown and never judged.

A baseline pools only stored runs measured like the new one (:data:`POOL_KEYS`: target kind, mode,
runtime, O_DIRECT, fio version, kernel, host, source) and names the runs it left out and why. Pooling
is exact: the combined n, mean and variance are those of the concatenated IOs (:func:`pool`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from slogqual.errors import UsageError
from slogqual.results import LAT_BASIS_FLUSH_BOUND, SweepPoint, SweepResult
from slogqual.results import schema as S

ALPHA = 0.05  # two-sided: a difference is significant at 95 % confidence
MIN_EFFECT = 0.10  # a significant change smaller than this is not flagged (the old fixed threshold)
TEST = "Welch's t-test"

# Mean alone: a change of a mean, with no spread to test it against, is flagged only beyond this (a
# factor of 1 + MEAN_ALONE_FLOOR either way). It is the repeatability limit (ISO 5725's r = 1.96·√2·σ,
# the 95 % bound of the difference of two runs; repeatability_limit below) of the per-size mean
# write+flush latency of a 1 s run, as diskinfo -wS reports it, measured with the pair engine
# (diskinfo's loop: write, flush, timed together): 6 sweeps of one scratch file at 4K, 128K and 1M,
# 1 s per size, on this project's busy 2-core VM (a ZFS module build and test suites beside it):
# σ of ln(mean) 0.461 pooled over the sizes (15 degrees of freedom), exp(2.77 × 0.461) - 1 = 2.593.
# A quiet, dedicated device repeats better; this floor is the honest one of the machine it was
# measured on. The runs are tests/fixtures/compare/ (the test recomputes this from them); the
# command and every figure are in docs/reports.md, "Mean alone".
MEAN_ALONE_FLOOR = 2.59

COMPARE_SCHEMA = S.COMPARE  # both forms: a baseline comparison is one whose A is a pool of stored runs

# the verdict of one size
REGRESSION = "regression"
IMPROVEMENT = "improvement"
NOT_SIGNIFICANT = "not significant"
UNDER_FLOOR = "under the minimum effect"  # significant, but smaller than MIN_EFFECT
WITHIN_FLOOR = "no significant change (mean alone)"  # no spread, and the change inside the mean-alone floor
CANNOT_JUDGE = "cannot judge"  # no usable value (row.why says which)
ONLY_A = "only in A"
ONLY_B = "only in B"

# what a judged row rests on
BASIS_WELCH = "welch"  # n, mean and spread on both sides: Welch's t-test and the minimum effect
BASIS_MEAN = "mean alone"  # a side without spread: the means against the mean-alone floor

# why a row cannot be judged
WHY_PERCENTILE = "a percentile"
WHY_NO_VALUE = "no usable value"

# what a whole comparison comes to (the CLI's exit code: 1, EXIT_CANNOT_JUDGE, 0)
OUTCOME_REGRESSION = "regression"
OUTCOME_CANNOT_JUDGE = "cannot judge"
OUTCOME_NO_REGRESSION = "no regression"

# the metadata that must agree for stored runs to be pooled: (name, path in the sweep document)
POOL_KEYS: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ("target kind", ("target", "kind")),
    ("mode", ("params", "mode")),
    ("runtime", ("params", "runtime_s")),
    ("direct", ("params", "direct")),
    ("fio version", ("environment", "fio_version")),
    ("kernel", ("environment", "kernel")),
    ("host", ("environment", "host")),
    ("source", ("source",)),
)


# --- samples: n, mean and spread of one point's IOs, and pools of them -------------------------------

@dataclass(frozen=True)
class Sample:
    """The latencies (µs) of the IOs behind one point, or behind one size of a pool of runs."""

    n: int
    mean: float
    sd: Optional[float]  # sample standard deviation (n - 1); None when not recorded
    sd_bound: bool = False  # sd is an upper bound (write+flush pairs)
    seconds: Optional[float] = None  # time the IOs took (ios / iops): for pooled ops/s and MiB/s
    mib: Optional[float] = None  # MiB written
    runs: int = 1

    @property
    def judgeable(self) -> bool:
        return self.sd is not None and self.n >= 2 and math.isfinite(self.sd)


def sample_of(p: SweepPoint) -> Sample:
    sd, bound = p.lat_us.stddev if p.lat_us else None, False
    if sd is None and p.lat_basis == LAT_BASIS_FLUSH_BOUND and p.write_lat_us and p.flush_lat_us \
            and p.write_lat_us.stddev is not None and p.flush_lat_us.stddev is not None:
        sd, bound = p.write_lat_us.stddev + p.flush_lat_us.stddev, True
    seconds = p.ios / p.iops if p.ios > 0 and p.iops and p.iops > 0 else None
    return Sample(n=p.ios, mean=p.lat_us.mean, sd=sd, sd_bound=bound, seconds=seconds,
                  mib=p.mbps * seconds if seconds is not None and p.mbps is not None else None)


def pool(samples: Sequence[Sample]) -> Sample:
    """The samples as one: exactly the n, mean and sd of all their IOs put together.

    mean = Σ nᵢ·mᵢ / N;  (N - 1)·s² = Σ (nᵢ - 1)·sᵢ² + Σ nᵢ·(mᵢ - mean)²
    """
    if not samples:
        raise ValueError("no samples to pool")
    n = sum(s.n for s in samples)
    mean = math.fsum(s.n * s.mean for s in samples) / n
    sd: Optional[float] = None
    if n > 1 and all(s.sd is not None for s in samples):
        ss = math.fsum((s.n - 1) * s.sd ** 2 + s.n * (s.mean - mean) ** 2 for s in samples)
        sd = math.sqrt(ss / (n - 1))
    seconds = math.fsum(s.seconds for s in samples) if all(s.seconds is not None for s in samples) else None
    mib = math.fsum(s.mib for s in samples) if all(s.mib is not None for s in samples) else None
    return Sample(n=n, mean=mean, sd=sd, sd_bound=any(s.sd_bound for s in samples), seconds=seconds, mib=mib,
                  runs=sum(s.runs for s in samples))


def repeatability_limit(means_by_size: Sequence[Sequence[float]], confidence: float = 1 - ALPHA) -> float:
    """The floor a mean-alone change must pass, from repeated runs: per size, the means of the runs.

    Latencies scale, so the spread is taken of ln(mean): σ is pooled over the sizes (each size's own
    mean taken out, Σ (kᵢ - 1) degrees of freedom), and the limit is ISO 5725's repeatability limit
    r = z·√2·σ (z = 1.96 at 95 %), the bound of the difference of two runs; returned as a change,
    exp(r) - 1 (2.59 is a factor of 3.59). How MEAN_ALONE_FLOOR was derived.
    """
    ss, df = 0.0, 0
    for means in means_by_size:
        logs = [math.log(m) for m in means]
        centre = math.fsum(logs) / len(logs)
        ss += math.fsum((x - centre) ** 2 for x in logs)
        df += len(logs) - 1
    if df < 1:
        raise ValueError("a repeatability needs at least two runs of one size")
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    return math.exp(z * math.sqrt(2.0) * math.sqrt(ss / df)) - 1.0


# --- the test ------------------------------------------------------------------------------------------

def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 1e-15
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 20000):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with df degrees of freedom (df need not be an integer)."""
    if math.isinf(t):
        return 0.0
    if df > 1e5:  # the 95 % critical values of t and normal differ by 2e-5 here (1.96001 vs 1.95996)
        return 2.0 * (1.0 - NormalDist().cdf(abs(t)))
    a, b = df / 2.0, 0.5
    x, y = df / (df + t * t), t * t / (df + t * t)  # the regularized I_x(df/2, 1/2) is the p-value
    if y == 0.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(y))
    if x < (a + 1.0) / (a + b + 2.0):
        return min(1.0, front * _betacf(a, b, x) / a)
    return max(0.0, 1.0 - front * _betacf(b, a, y) / b)


@dataclass(frozen=True)
class Welch:
    t: float  # (mean B - mean A) / standard error
    df: float
    p: float
    alpha: float = ALPHA

    @property
    def significant(self) -> bool:
        return self.p < self.alpha


def welch(a: Sample, b: Sample, alpha: float = ALPHA) -> Optional[Welch]:
    """Welch's t-test on two samples' n, mean and sd; None when either has no spread or n < 2."""
    if not (a.judgeable and b.judgeable):
        return None
    va, vb = a.sd ** 2 / a.n, b.sd ** 2 / b.n
    diff = b.mean - a.mean
    if va + vb == 0.0:  # no spread at all on either side: any difference is beyond the noise
        return Welch(0.0 if diff == 0 else math.copysign(math.inf, diff), a.n + b.n - 2.0,
                     1.0 if diff == 0 else 0.0, alpha)
    t = diff / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (a.n - 1) + vb ** 2 / (b.n - 1))
    return Welch(t, df, t_two_sided_p(t, df), alpha)


# --- metrics ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CompareMetric:
    key: str
    label: str
    unit: str
    value: Callable[[SweepPoint], Optional[float]]
    higher_is_worse: bool
    of_pool: Optional[Callable[[Sample], Optional[float]]] = None  # None: not derivable from a pool

    @property
    def judged(self) -> bool:
        """Means and run totals can be judged; a percentile has no recorded spread."""
        return self.of_pool is not None


def _per_second(x: Optional[float], s: Sample) -> Optional[float]:
    return None if x is None or not s.seconds else x / s.seconds


METRICS: Dict[str, CompareMetric] = {
    "latency": CompareMetric("latency", "mean latency", "µs", lambda p: p.lat_us.mean if p.lat_us else None, True,
                             lambda s: s.mean),
    "p99": CompareMetric("p99", "p99 latency", "µs", lambda p: p.lat_us.p99 if p.lat_us else None, True),
    "iops": CompareMetric("iops", "writes/s", "ops/s", lambda p: p.iops, False, lambda s: _per_second(s.n, s)),
    "mbps": CompareMetric("mbps", "bandwidth", "MiB/s", lambda p: p.mbps, False, lambda s: _per_second(s.mib, s)),
}


def metric_of(key: str) -> CompareMetric:
    if key not in METRICS:
        raise UsageError(f"unknown metric {key!r}: use one of {', '.join(METRICS)}")
    return METRICS[key]


def parse_threshold(text: str) -> float:
    """'10%' -> 0.10, '0.1' -> 0.10; must be above 0."""
    m = re.match(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(%?)\s*$", str(text))
    if not m:
        raise UsageError(f"bad threshold {text!r}: use a percentage like 10% or a fraction like 0.1")
    value = float(m.group(1)) / (100.0 if m.group(2) else 1.0)
    if value <= 0:
        raise UsageError(f"threshold {text} must be above zero")
    return value


def worse_factor(metric: CompareMetric, a: float, b: float) -> float:
    """> 1 when B is worse than A, < 1 when better; the same scale for every metric."""
    if metric.higher_is_worse:
        return b / a
    return a / b


# --- rows and comparisons --------------------------------------------------------------------------------

@dataclass
class CompareRow:
    size: int
    a: Optional[float]  # the metric's value: A, or the pool of baseline runs
    b: Optional[float]
    a_sample: Optional[Sample] = None
    b_sample: Optional[Sample] = None
    test: Optional[Welch] = None
    flag: str = ""
    basis: Optional[str] = None  # BASIS_WELCH or BASIS_MEAN for a judged row
    floor: Optional[float] = None  # basis mean alone: the floor applied (max of MEAN_ALONE_FLOOR, min_effect)
    why: Optional[str] = None  # CANNOT_JUDGE: WHY_PERCENTILE or WHY_NO_VALUE

    @property
    def ratio(self) -> Optional[float]:
        if self.a is None or self.b is None or self.a == 0:
            return None
        return self.b / self.a

    @property
    def change_pct(self) -> Optional[float]:
        """The change B vs A in percent — reported only for a flagged (significant, large) change."""
        r = self.ratio
        if r is None or self.flag not in (REGRESSION, IMPROVEMENT):
            return None
        return (r - 1.0) * 100.0

    def to_dict(self) -> Dict[str, Any]:
        def side(s: Optional[Sample]) -> Optional[Dict[str, Any]]:
            return None if s is None else {"n": s.n, "mean_us": s.mean, "sd_us": s.sd,
                                           "sd_upper_bound": s.sd_bound, "runs": s.runs}
        t = self.test
        return {"size": self.size, "a": self.a, "b": self.b, "ratio": self.ratio, "change_pct": self.change_pct,
                "flag": self.flag, "significant": None if t is None else t.significant,
                "t": None if t is None or math.isinf(t.t) else t.t, "df": None if t is None else t.df,
                "p": None if t is None else t.p, "basis": self.basis, "floor": self.floor, "why": self.why,
                "a_latency": side(self.a_sample), "b_latency": side(self.b_sample)}


def judge(row: CompareRow, metric: CompareMetric, min_effect: float = MIN_EFFECT, alpha: float = ALPHA) -> None:
    """Set row.test, row.flag and row.basis: the one rule for both compares."""
    x, y = row.a, row.b
    if not metric.judged:
        row.flag, row.why = CANNOT_JUDGE, WHY_PERCENTILE
        return
    if row.a_sample is None or row.b_sample is None or x is None or y is None \
            or not (0 < x < math.inf and 0 < y < math.inf):
        row.flag, row.why = CANNOT_JUDGE, WHY_NO_VALUE
        return
    f = worse_factor(metric, x, y)
    row.test = welch(row.a_sample, row.b_sample, alpha)
    if row.test is None:  # a side without spread: the means alone, against the method's repeatability
        row.basis, row.floor = BASIS_MEAN, max(MEAN_ALONE_FLOOR, min_effect)
        row.flag = _beyond(f, row.floor) or WITHIN_FLOOR
        return
    row.basis = BASIS_WELCH
    if not row.test.significant:
        row.flag = NOT_SIGNIFICANT
    else:
        row.flag = _beyond(f, min_effect) or UNDER_FLOOR


def _beyond(f: float, effect: float) -> Optional[str]:
    """REGRESSION or IMPROVEMENT when the worse/better factor f is beyond 1 + effect either way."""
    return REGRESSION if f > 1.0 + effect else IMPROVEMENT if f < 1.0 / (1.0 + effect) else None


@dataclass
class LeftOut:
    """A stored run the baseline did not pool, and why: each pooling key it differs in, as (name, the new
    run's value, its value)."""

    label: str
    reasons: List[Tuple[str, Any, Any]]


@dataclass(frozen=True)
class Note:
    """What a comparison notes beside its rows (report/compare words it): a side that is an ``import``
    (``side``: A, B, or the new result; ``what``: its source), a side with ``no-values`` of the metric, a
    ``percentile`` metric (``flush_bounds``: a side's write+flush percentiles are upper bounds), the
    ``spread-bound`` sides (``sides``) whose spread is sd(write) + sd(flush), a pooling ``key`` A and B
    differ in (``what``: its name, ``values``: A's and B's), ``identical`` stored runs left out
    (``count``)."""

    kind: str
    side: Optional[str] = None
    what: Optional[str] = None
    sides: Tuple[str, ...] = ()
    values: Tuple[Any, ...] = ()
    count: int = 0


@dataclass
class Comparison:
    metric: CompareMetric
    min_effect: float
    rows: List[CompareRow]
    notes: List[Note] = field(default_factory=list)
    alpha: float = ALPHA
    a_name: str = "A"
    b_name: str = "B"
    pooled: List[str] = field(default_factory=list)  # baseline: the runs pooled
    left_out: List[LeftOut] = field(default_factory=list)  # baseline: the runs not pooled, with reasons

    @property
    def runs(self) -> int:
        return len(self.pooled)

    @property
    def regressions(self) -> List[CompareRow]:
        return [r for r in self.rows if r.flag == REGRESSION]

    @property
    def improvements(self) -> List[CompareRow]:
        return [r for r in self.rows if r.flag == IMPROVEMENT]

    @property
    def shared(self) -> List[CompareRow]:
        """The rows of the sizes measured on both sides."""
        return [r for r in self.rows if r.flag not in (ONLY_A, ONLY_B)]

    @property
    def unjudged(self) -> List[CompareRow]:
        return [r for r in self.rows if r.flag == CANNOT_JUDGE]

    @property
    def mean_floor(self) -> float:
        """The floor a row judged on the mean alone is held to."""
        return max(MEAN_ALONE_FLOOR, self.min_effect)

    @property
    def outcome(self) -> str:
        """A regression at any size; else "cannot judge" when no size is in both or any size in both could
        not be judged; else no regression."""
        if self.regressions:
            return OUTCOME_REGRESSION
        if not self.shared or self.unjudged:
            return OUTCOME_CANNOT_JUDGE
        return OUTCOME_NO_REGRESSION


def _row(size: int, a: Optional[float], b: Optional[float], sa: Optional[Sample], sb: Optional[Sample],
         metric: CompareMetric, min_effect: float, alpha: float) -> CompareRow:
    """One size: measured on one side only (a missing sample), or judged."""
    row = CompareRow(size, a, b, sa, sb)
    if sb is None:
        row.flag = ONLY_A
    elif sa is None:
        row.flag = ONLY_B
    else:
        judge(row, metric, min_effect, alpha)
    return row


def _spread_notes(rows: Sequence[CompareRow], names: Tuple[str, str]) -> List[Note]:
    bounded = [name for name, samples in zip(names, ([r.a_sample for r in rows], [r.b_sample for r in rows]))
               if any(s is not None and s.sd_bound for s in samples)]
    return [Note("spread-bound", sides=tuple(bounded))] if bounded else []


def compare(a: SweepResult, b: SweepResult, metric: str = "latency", min_effect: float = MIN_EFFECT,
            alpha: float = ALPHA) -> Comparison:
    """B judged against A at every size either measured."""
    m = metric_of(metric)
    pa, pb = {p.size: p for p in a.points}, {p.size: p for p in b.points}
    rows: List[CompareRow] = []
    for size in sorted(set(pa) | set(pb)):
        x, y = pa.get(size), pb.get(size)
        rows.append(_row(size, m.value(x) if x else None, m.value(y) if y else None,
                         sample_of(x) if x else None, sample_of(y) if y else None, m, min_effect, alpha))
    notes: List[Note] = []
    for name, r, pts in (("A", a, pa), ("B", b, pb)):
        if r.source != "slogqual":
            notes.append(Note("import", side=name, what=r.source))
        if pts and all(m.value(p) is None for p in pts.values()):
            notes.append(Note("no-values", side=name, what=m.label))
    if not m.judged:
        bases = [{p.lat_basis for p in r.points} for r in (a, b)]
        notes.append(Note("percentile", what=m.label))
        if any(LAT_BASIS_FLUSH_BOUND in x for x in bases):
            notes.append(Note("flush-percentiles"))
    notes += _spread_notes(rows, ("A", "B"))
    for name, va, vb in key_differences(a, b):
        notes.append(Note("key", what=name, values=(va, vb)))
    return Comparison(m, min_effect, rows, notes, alpha)


# --- baselines: like runs pooled ---------------------------------------------------------------------------

def pool_key(r: SweepResult) -> Dict[str, Any]:
    doc = {"target": r.target, "params": r.params, "environment": r.environment, "source": r.source}
    out: Dict[str, Any] = {}
    for name, path in POOL_KEYS:
        v: Any = doc
        for k in path:
            v = v.get(k) if isinstance(v, dict) else None
        out[name] = v
    return out


def key_differences(a: SweepResult, b: SweepResult) -> List[Tuple[str, Any, Any]]:
    """(name, value in a, value in b) for every pooling key on which the two differ."""
    ka, kb = pool_key(a), pool_key(b)
    return [(name, ka[name], kb[name]) for name, _ in POOL_KEYS if ka[name] != kb[name]]


def against_baseline(new: SweepResult, stored: Sequence[Tuple[str, SweepResult]], metric: str = "latency",
                     min_effect: float = MIN_EFFECT, alpha: float = ALPHA) -> Comparison:
    """The new sweep judged against the pool of the stored runs measured like it.

    ``stored`` is (label, sweep) pairs; a run whose :data:`POOL_KEYS` differ from the new run's is left
    out and named with its reasons. Per size the like runs' points are pooled exactly (:func:`pool`);
    a pool's percentiles cannot be derived from its runs', so only means and totals are compared.
    """
    m = metric_of(metric)
    if not m.judged:
        raise UsageError(f"--baseline cannot use {m.label}: a pool's percentiles cannot be derived from its runs' "
                         f"percentiles; use --metric latency (the mean), iops or mbps")
    like: List[Tuple[str, SweepResult]] = []
    left_out: List[LeftOut] = []
    for label, r in stored:
        diffs = key_differences(new, r)
        if diffs:
            left_out.append(LeftOut(label, diffs))
        else:
            like.append((label, r))
    pn = {p.size: p for p in new.points}
    sizes = sorted(set(pn) | {p.size for _, r in like for p in r.points})
    rows: List[CompareRow] = []
    for size in sizes:
        points = [r.point(size) for _, r in like if r.point(size) is not None]
        base = pool([sample_of(p) for p in points]) if points else None
        x = pn.get(size)
        rows.append(_row(size, m.of_pool(base) if base else None, m.value(x) if x else None, base,
                         sample_of(x) if x else None, m, min_effect, alpha))
    notes: List[Note] = []
    if new.source != "slogqual":
        notes.append(Note("import", side="new", what=new.source))
    notes += _spread_notes(rows, ("baseline", "new"))
    return Comparison(m, min_effect, rows, notes, alpha, "baseline", "new", [label for label, _ in like], left_out)
