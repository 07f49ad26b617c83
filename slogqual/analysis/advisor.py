"""The SLOG advisor (issue #29): from a log candidate's own QD1 write+flush sweep, predict what it does
for a pool's ``sync=always`` writes — IOPS and MiB/s per thread count, what limits it, the log space the
load needs and how long the device lasts. Pure functions: documents in, the advice's facts out (the
document with its sentences is slogqual/report/advice.document's); no process is started and no file is
touched here (the CLI loads, words and writes).

The model follows how OpenZFS writes its intent log. What was read, in OpenZFS's sources (the 2.2/2.3
line the lab runs, 2.3.2: ``module/zfs/zil.c`` with slim log blocks and the
``zil_itx_metaslab_*_write`` kstats, ``zfs_log.c``, ``zvol.c``):

- ``zfs_log_write`` (datasets, NFS) picks each write's record state: ``WR_INDIRECT`` when
  ``logbias=throughput``, or when the pool has no log vdev (``!spa_has_slogs``) and the write is at
  least ``zfs_immediate_write_sz`` (32768); otherwise ``WR_COPIED`` for a write to be committed (the
  data copied into the record) or ``WR_NEED_COPY`` (copied at commit time, split over log blocks); a
  ``WR_COPIED`` record larger than ``zil_max_copied_data`` (``zil_maxcopied``, 7680) becomes
  ``WR_NEED_COPY``. ``zvol_log_write`` (zvols, iSCSI) is the same except its no-SLOG indirect rule:
  the write is at least ``volblocksize`` AND ``volblocksize > zvol_immediate_write_sz`` (32768).
  So **with a SLOG, nothing goes indirect unless logbias=throughput**: every byte of every sync write
  is written to the log. An indirect record holds only a block pointer; ``zil_lwb_commit`` has
  ``zl_get_data`` (dmu_sync) write the data block to the data vdevs as a child of the log write.
- ``zil_commit`` -> ``zil_commit_writer`` -> ``zil_process_commit_list`` assigns the waiting records
  (itxs) of ONE ZIL — one per dataset or zvol — to log write blocks (lwb, ``zil_lwb_assign``), which
  ``zil_lwb_write_issue`` writes; ``zil_lwb_write_done`` then issues a cache flush (``zio_flush``) to
  every vdev the lwb touched, deferring it to the next lwb when this one has no commit waiter
  (``zil_lwb_flush_defer``); waiters are woken in ``zil_lwb_flush_vdevs_done``. A commit therefore
  costs a write and a flush, what the sweep measures.
- Block size: ``zil_lwb_write_close`` picks the next lwb's size from ``zil_block_buckets`` (4K, 12K,
  36K, 68K, 128K) on the bytes the commit used, at most ``zil_maxblocksize`` (131072); a slim lwb
  (``ZIO_CHECKSUM_ZILOG2``) is written rounded up to ``ZIL_MIN_BLKSZ`` (4096) of what it holds
  (``zio_shrink`` in ``zil_lwb_write_issue``). A record is ``sizeof (lr_write_t)`` = 192 bytes plus its
  data rounded to 8; an lwb carries a ``zil_chain_t`` (184 bytes).
- ``zil_slog_bulk`` (64 MiB in this zil.c; 768 KiB before 2.2) only lowers the lwb writes' IO priority
  (``ZIO_PRIORITY_ASYNC_WRITE`` once ``zl_cur_used`` exceeds it) — it does not move writes off the log.

The lab's own evidence for commit batching (tests/fixtures/advisor/iscsi-4k-lab-sata-ssd-nvdimm.json):
with 4 writers per zvol on the 3 ms SATA SSD, 1,958 IOs went in 1,024 log blocks (1.9 records per
commit, half the writers); with 1 writer per zvol, 1,159 IOs in 1,379 blocks (no batching). The model
takes half the waiting writers of a ZIL per commit (the others wait for the commit in flight and join
the next), at least one. With a host probe (model 2, docs/advisor.md), on a log whose flush stops its queue
(ATA), one ZIL's batch is what ``zfs_commit_timeout_pct`` of the last block's latency gathers
(``zil_commit_waiter``): ``_timeout_batch``.

The host. A scenario result's steps carry the host's CPU busy share (``/proc/stat`` over the step). Where
the ``sync=standard`` step at a thread count ran the host's CPU at least ``HOST_SATURATED`` busy, that
figure is the host's pace as much as the pool's, and with a log the host also copies every write's data
into the log (``zfs_log_write``/``zvol_log_write`` copy it into the itx, ``zil_lwb_commit`` into the lwb
buffer) and checksums each lwb, work ``sync=standard`` never does: a pool-bound figure there is an upper
bound (``upper_bound: "host-cpu"``), not a prediction (finding ``host-cpu-saturated``, with the CPU
seconds per IO that step measured). Adding those CPU seconds to each commit's time was tried and dropped,
measured: it fitted one slowed lab run and made two others worse (docs/advisor.md).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Dict, List, Optional, Sequence, Tuple

from slogqual import limits
from slogqual.analysis import host as host_analysis
from slogqual.analysis import scaling, wear
from slogqual.analysis import advisor_special
from slogqual.results import SweepPoint, SweepResult
from slogqual.results.advice import AdviceResult
from slogqual.results.host import HostProbeResult, HostStep
from slogqual.results.powercut import PowercutResult
from slogqual.results.scenario import ScenarioResult
from slogqual.units import size_label

# Bump when the model changes what it predicts for the same inputs.
MODEL_VERSION = 7  # 2: an ATA log's records per commit from the commit timeout; 3: a figure the data sweeps
#                    bind is their upper bound with a host probe too (issue #37); 4: the host's ceiling is
#                    also the probe's log pass's, where it ran with this log (host-probe --log); 5: where that
#                    pass's CPU had room, what it measured with this log is a limit too (log-pass-bound); 6: a
#                    log the CPU writes (pmem), the probe's own pool on these data disks with its RAM log measured
#                    this pool (probe-pool-bound); 7: one writer alone, what the log pass measured is a limit
#                    whatever its CPU (log-pass-bound)

PROTOCOLS = ("iscsi", "nfs")
LAYOUTS = ("stripe", "mirror", "raidz1", "raidz2", "raidz3")
LOGBIASES = ("latency", "throughput")

LR_WRITE_BYTES = 192  # sizeof (lr_write_t): lr_t (32) + foid/offset/length/blkoff (32) + blkptr_t (128)
ZIL_CHAIN_BYTES = 184  # sizeof (zil_chain_t): pad, next blkptr, nused, embedded checksum
ZIL_MIN_BLKSZ = 4096  # a slim lwb is written rounded up to this
TXG_CONCURRENT_STATES = 3  # open, quiescing, syncing
TXG_DEFER_SIZE = 2  # freed blocks are allocatable again two txgs later
LARGE = 128 * 1024  # the sweep's sizes from here on give the log device's bandwidth (zil_maxblocksize)
AT_BANDWIDTH = 0.9  # lwb writes at which the device delivers this share of its best MiB/s: bandwidth-bound
NO_BENEFIT = 1.10  # a SLOG within 10 % of no SLOG (scaling.SAME) buys nothing
HOST_SATURATED = 0.9  # a sync=standard step whose host CPU was this busy ran at the host's pace (module doc)
MB = 1_000_000  # --rate is in MB/s, decimal, as drives' specifications and network links say


class Kind(str, Enum):
    """What a finding says, as a value a program can key on."""

    LOG_LATENCY = "log-latency-bound"  # each commit waits for the log's write+flush at its lwb size
    HOST = "host-bound"  # the host probe's ceiling: this host's ZFS with a perfect log (advise --host)
    LOG_PASS = "log-pass-bound"  # the probe's log pass measured this log at these writers, its CPU with room
    PROBE_POOL = "probe-pool-bound"  # a pmem log: the probe's pool on these data disks, its log in RAM, is this pool
    LOG_BANDWIDTH = "log-bandwidth-bound"  # the lwb writes run at >= 90 % of the log's best MiB/s
    POOL = "pool-bound"  # the data side's ceiling (sync=standard measured, or the data vdevs' bandwidth)
    INDIRECT = "indirect-bypass"  # logbias=throughput: the data goes to the data vdevs, the log gets pointers
    NO_BENEFIT = "no-benefit"  # with the log no faster (or slower) than without it
    LOG_TOO_SMALL = "log-too-small"  # capacity below the txg arithmetic's figure
    SHORT_LIFE = "short-life"  # rated endurance used up before the warranty period ends
    EXTRAPOLATED = "extrapolated"  # an lwb size outside the swept sizes
    HOST_SATURATED = "host-cpu-saturated"  # sync=standard saturated the host's CPU: commits wait; figures are bounds
    POWER_LOSS_UNSAFE = "power-loss-unsafe"  # a real cut lost acknowledged writes: a mirror of two loses them too
    UNMIRRORED_EXPOSURE = "unmirrored-exposure"  # what an unmirrored log can lose, and only when
    NO_POWER_LOSS_EVIDENCE = "no-power-loss-evidence"  # no real cut of this device: the first question is open
    LOG_STALLED = "log-stalled"  # in the probe's log pass a write to this log outlasted the kernel's I/O timeout


@dataclass
class Tunables:
    """The OpenZFS settings that decide what reaches the log, with their defaults (2.3)."""

    zfs_immediate_write_sz: int = 32768
    zil_slog_bulk: int = 64 * 1024 * 1024
    logbias: str = "latency"
    zil_maxblocksize: int = 131072
    zil_maxcopied: int = 7680
    zfs_txg_timeout: float = 5.0
    # an open log block waits this share of the last one's latency for more records before it is written, where
    # the ZIL's writers run in parallel (zil.c: zil_commit_waiter, zl_parallel); 10 in 2.2-2.4
    zfs_commit_timeout_pct: int = 10
    zfs_dirty_data_max: Optional[int] = None  # bytes; None: not given (the per-txg figure is rate x timeout)
    zfs_version: Optional[str] = None  # the OpenZFS the pool runs (--zfs, or this host's module); None: unknown
    zil_special_is_slog: Optional[int] = None  # 2.4's, where this host's module has it; None: not read
    #: where each value came from ("option", "host /sys/module/zfs/parameters", "default"); empty: not said
    sources: Dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        d = dict(self.__dict__)
        if not self.sources:
            d.pop("sources")
        return d


@dataclass
class RateHistory:
    """The sync write rate a pool's log carried, from a recorded ``zpool iostat -T u -vpy POOL INTERVAL``: the
    log vdevs' bytes/s in each report. Sizing takes the busiest interval (the log must hold its txgs), life
    the mean (what a day writes)."""

    source: str
    rates: List[float]  # bytes/s per interval
    interval_s: Optional[float] = None

    @property
    def peak(self) -> float:
        return max(self.rates)

    @property
    def mean(self) -> float:
        return sum(self.rates) / len(self.rates)

    def to_dict(self) -> Dict[str, Any]:
        return {"source": self.source, "intervals": len(self.rates), "interval_s": self.interval_s,
                "peak_bytes_s": round(self.peak, 1), "mean_bytes_s": round(self.mean, 1)}


@dataclass
class Workload:
    protocol: str  # iscsi (zvols) | nfs (a dataset)
    io_size: int  # bytes per write
    block_size: int  # volblocksize (iscsi) / recordsize (nfs)
    threads: List[int]  # total concurrent writers at each step
    zils: int = 1  # independent intent logs the writers spread over (zvols; one dataset = 1)
    rate_mbps: Optional[float] = None  # MB/s of sync writes the log must carry (sizing and life)
    rate_history: Optional[RateHistory] = None  # or the log's own recorded rate (sizing: peak, life: mean)

    def to_dict(self) -> Dict[str, Any]:
        d = dict(self.__dict__, threads=list(self.threads))
        if self.rate_history is None:
            del d["rate_history"]  # as documents before it had it
        else:
            d["rate_history"] = self.rate_history.to_dict()
        return d


@dataclass
class Endurance:
    tbw: Optional[float] = None  # rated terabytes written (10^12 bytes)
    dwpd: Optional[float] = None  # rated drive writes per day over warranty_years
    warranty_years: float = 5.0
    hours_per_day: float = 24.0  # hours a day the rate is carried

    def to_dict(self) -> Dict[str, Any]:
        return dict(self.__dict__)


# ---------------------------------------------------------------- what a sentence of the document rests on
# The advice document keeps a sentence where people read one (a figure's basis, the rate a size rests on, a
# warning). The model puts these facts in those places; slogqual.report.advice.document words them before
# the document is written, the one place the advice's words are made.

@dataclass(frozen=True)
class FigureBasis:
    """Where a data-side figure comes from: a step of a scenario result (``sync`` "standard", or "always"
    without a log vdev) or a bound from a data device's sweep (its bandwidth, or the ZIL's ``zil`` record
    state on the data vdevs); at another thread count the ``nearest`` step's figure, or one interpolated
    ``between`` two steps."""

    source: str  # "scenario" | "sweeps"
    name: str  # the scenario result, or the slowest data device's sweep
    sync: Optional[str] = None
    o_dsync: bool = False  # a sync=standard step of an O_DSYNC load: through the ZIL, on the data disks
    layout: Optional[str] = None
    disks: Optional[int] = None
    zil: Optional[str] = None  # sweeps: None for the bandwidth bound
    nearest: Optional[int] = None
    between: Optional[Tuple[int, int]] = None


@dataclass(frozen=True)
class DataOrigin:
    """What the data side is: a scenario result's pool, a layout of data devices' sweeps, or none."""

    source: str  # "scenario" | "sweeps" | "none"
    name: Optional[str] = None
    layout: Optional[str] = None
    disks: Optional[int] = None


@dataclass(frozen=True)
class RateBasis:
    """The rate a size or a life rests on: the busiest interval (``history-peak``) or the mean
    (``history-mean``) of a recorded rate history, the ``required`` --rate, or the ``predicted`` peak."""

    kind: str
    rate_mbps: Optional[float] = None  # required: MB/s
    mib_s: Optional[float] = None  # predicted: MiB/s at ``threads``
    threads: Optional[int] = None
    source: Optional[str] = None  # history: the recording
    intervals: Optional[int] = None
    peak_bytes_s: Optional[float] = None
    mean_bytes_s: Optional[float] = None
    upper_bound: Optional[str] = None  # predicted: why that peak is an upper bound (its ``upper_bound``), or None


@dataclass(frozen=True)
class EnduranceBasis:
    """How the endurance a life is reckoned by was had: rated ``tbw``, rated ``dwpd`` of the capacity over the
    warranty, or ``measured`` from the device's percentage used over its sweep."""

    kind: str
    tbw: Optional[float] = None
    dwpd: Optional[float] = None
    capacity: Optional[int] = None
    warranty_years: Optional[float] = None


@dataclass(frozen=True)
class WearAssumption:
    """What a life assumes of the device's own write amplification: 1, not measured — with what its counters
    said over its sweep (``worn``: analysis.wear.evidence) where it read them — or, ``measured``, what they
    measured."""

    worn: Optional[Dict[str, Any]] = None
    measured: bool = False


@dataclass(frozen=True)
class MirrorCall:
    """Mirror the log or not, as its power-loss finding (``kind``) decides."""

    kind: str


@dataclass(frozen=True)
class NoEvidence:
    """Why a candidate has no power-loss evidence: its test was ``emulated``, ``incomplete``, or ``none`` given."""

    why: str


@dataclass(frozen=True)
class Warned:
    """A finding the advice warns of, with the candidate (its path, else its sweep) it is of."""

    candidate: str
    finding: Dict[str, Any]


@dataclass
class Ceiling:
    """A data-side figure at one thread count: measured (a scenario step) or a bound from sweeps."""

    threads: int
    iops: float
    mbps: float
    ios: Optional[int] = None
    basis: Optional[FigureBasis] = None
    cpu_busy: Optional[float] = None  # the host's CPU busy share over the step (measured steps only)
    cpu_s_per_io: Optional[float] = None  # the host's CPU seconds per IO there: busy share x CPUs / IOPS

    def to_dict(self) -> Dict[str, Any]:
        d = dict(self.__dict__)
        for k in ("cpu_busy", "cpu_s_per_io"):  # a bound from sweeps has no host figure: absent, as before
            if d[k] is None:
                d.pop(k)
        return d

    @property
    def host_saturated(self) -> bool:
        return self.cpu_busy is not None and self.cpu_s_per_io is not None and self.cpu_busy >= HOST_SATURATED


@dataclass
class DataSide:
    source: str  # "scenario", "sweeps" or "none"
    description: DataOrigin
    ceiling: List[Ceiling] = field(default_factory=list)  # sync=standard (no ZIL): what the pool/host carries
    without_slog: List[Ceiling] = field(default_factory=list)  # sync=always, no log vdev
    layout: Optional[str] = None
    disks: Optional[int] = None

    def to_dict(self) -> Dict[str, Any]:
        return {"source": self.source, "description": self.description, "layout": self.layout, "disks": self.disks,
                "ceiling": [c.to_dict() for c in self.ceiling],
                "without_slog": [c.to_dict() for c in self.without_slog]}


class AdviceInputError(ValueError):
    """Input the model cannot use; the CLI turns it into one line and exit 2."""


# ---------------------------------------------------------------- sweep figures

@dataclass
class Fig:
    """A sweep's figures at one size (interpolated between swept sizes where needed)."""

    size: int
    mean_us: float
    lo_us: Optional[float]
    hi_us: Optional[float]
    p99_us: Optional[float]
    write_us: Optional[float]
    ios: int
    extrapolated: bool = False
    cpu_us: Optional[float] = None  # the host's CPU per write+flush (the sweep's point.cpu), where measured


def _ci(p: SweepPoint) -> Tuple[Optional[float], Optional[float]]:
    ci = p.mean_ci95_us
    if ci and ci.get("lo") is not None and ci.get("hi") is not None:
        return float(ci["lo"]), float(ci["hi"])
    sd = p.lat_us.stddev
    if sd is not None and p.ios > 1:  # two standard errors of the mean (IOs taken as independent)
        half = 2 * sd / math.sqrt(p.ios)
        return max(p.lat_us.mean - half, 0.0), p.lat_us.mean + half
    return None, None


def _fig(p: SweepPoint) -> Fig:
    lo, hi = _ci(p)
    return Fig(size=p.size, mean_us=p.lat_us.mean, lo_us=lo, hi_us=hi, p99_us=p.lat_us.p99,
               write_us=p.write_lat_us.mean if p.write_lat_us else None, ios=p.ios,
               cpu_us=p.cpu["s_per_io"] * 1e6 if p.cpu and p.cpu.get("s_per_io") is not None else None)


def _mix(a: Optional[float], b: Optional[float], f: float) -> Optional[float]:
    if a is None or b is None:
        return None
    if a > 0 and b > 0:
        return math.exp(math.log(a) + f * (math.log(b) - math.log(a)))
    return a + f * (b - a)


def sweep_at(points: Sequence[SweepPoint], size: int) -> Fig:
    """The sweep's write+flush figures at ``size``: log-log between the swept sizes around it; below the
    smallest, the smallest (a smaller write costs no more: an upper bound); above the largest, the largest
    scaled by size (its bandwidth held: marked extrapolated)."""
    pts = sorted(points, key=lambda p: p.size)
    if size <= pts[0].size:
        f = _fig(pts[0])
        f.extrapolated = size < pts[0].size
        f.size = size
        return f
    if size >= pts[-1].size:
        f = _fig(pts[-1])
        if size == pts[-1].size:
            return f
        k = size / pts[-1].size
        scale = lambda v: None if v is None else v * k  # noqa: E731
        return Fig(size=size, mean_us=f.mean_us * k, lo_us=scale(f.lo_us), hi_us=scale(f.hi_us),
                   p99_us=scale(f.p99_us), write_us=scale(f.write_us), ios=f.ios, extrapolated=True,
                   cpu_us=scale(f.cpu_us))
    for lo, hi in zip(pts, pts[1:]):
        if lo.size == size:
            return _fig(lo)
        if lo.size < size < hi.size:
            a, b = _fig(lo), _fig(hi)
            f = (math.log(size) - math.log(lo.size)) / (math.log(hi.size) - math.log(lo.size))
            return Fig(size=size, mean_us=_mix(a.mean_us, b.mean_us, f), lo_us=_mix(a.lo_us, b.lo_us, f),
                       hi_us=_mix(a.hi_us, b.hi_us, f), p99_us=_mix(a.p99_us, b.p99_us, f),
                       write_us=_mix(a.write_us, b.write_us, f), ios=min(a.ios, b.ios),
                       cpu_us=_mix(a.cpu_us, b.cpu_us, f))
    return _fig(pts[-1])


def bandwidth(points: Sequence[SweepPoint]) -> Optional[Tuple[float, int, int]]:
    """The log device's bandwidth: its best MiB/s at the sizes from 128 KiB up (zil_maxblocksize, the
    largest lwb) as (MiB/s, size, IOs); None when the sweep has no such size (then its bandwidth is not
    measured, and no finding says log-bandwidth-bound)."""
    large = [p for p in points if p.size >= LARGE and p.mbps > 0]
    if not large:
        return None
    best = max(large, key=lambda p: p.mbps)
    return best.mbps, best.size, best.ios


def check_log_sweep(sweep: SweepResult, name: str) -> None:
    """A log candidate's sweep must measure what a commit does: complete, in flush mode, with points."""
    if not sweep.points:
        raise AdviceInputError(f"{name}: the sweep has no measured sizes")
    mode = (sweep.params or {}).get("mode", "flush")
    if mode != "flush":
        raise AdviceInputError(f"{name}: a sweep in mode {mode!r}; the advisor needs write+flush sweeps "
                               "(slogqual sweep --mode flush, the default), as the ZIL writes then flushes")
    if sweep.status != "complete":
        raise AdviceInputError(f"{name}: the sweep is {sweep.status}, not complete")
    for p in sweep.points:  # every figure is divided by it: a write+flush takes time
        if not p.lat_us.mean or p.lat_us.mean <= 0:
            raise AdviceInputError(f"{name}: its {size_label(p.size)} point has a mean latency of "
                                   f"{p.lat_us.mean} µs: not a measured write+flush")


def capacity_of(sweep: SweepResult) -> Optional[int]:
    dev = sweep.device or {}
    cap = dev.get("capacity") or (sweep.target or {}).get("size")
    return int(cap) if cap else None


# ---------------------------------------------------------------- what reaches the log

@dataclass
class LogShape:
    state: str  # copied | need-copy | indirect
    bytes_per_io: int  # record bytes each write puts in the log
    pieces: int  # records per write (a need-copy write split over lwbs)


def log_shape(w: Workload, t: Tunables, slog: bool) -> LogShape:
    """What one sync write puts in the log, by zfs_log_write's / zvol_log_write's rules (module doc)."""
    io = w.io_size
    if t.logbias == "throughput":
        indirect = True
    elif slog:
        indirect = False
    elif w.protocol == "iscsi":  # zvol_log_write: resid >= blocksize && blocksize > zvol_immediate_write_sz
        indirect = io >= w.block_size and w.block_size > t.zfs_immediate_write_sz
    else:  # zfs_log_write: resid >= zfs_immediate_write_sz
        indirect = io >= t.zfs_immediate_write_sz
    if indirect:  # one record per data block, each a block pointer
        pieces = max(1, math.ceil(io / w.block_size))
        return LogShape("indirect", LR_WRITE_BYTES * pieces, pieces)
    data = -(-io // 8) * 8
    if io <= t.zil_maxcopied:
        return LogShape("copied", LR_WRITE_BYTES + data, 1)
    per_piece = t.zil_maxblocksize - ZIL_CHAIN_BYTES - LR_WRITE_BYTES
    pieces = max(1, math.ceil(data / per_piece))
    return LogShape("need-copy", data + LR_WRITE_BYTES * pieces, pieces)


def lwb_writes(payload: int, t: Tunables) -> List[int]:
    """The lwb writes a commit of ``payload`` record bytes makes: full blocks of zil_maxblocksize, the
    last rounded up to ZIL_MIN_BLKSZ with its chain header (slim lwbs)."""
    per = t.zil_maxblocksize - ZIL_CHAIN_BYTES
    n = lwb_count(payload, t)
    last = payload - (n - 1) * per
    tail = min(t.zil_maxblocksize, -(-(last + ZIL_CHAIN_BYTES) // ZIL_MIN_BLKSZ) * ZIL_MIN_BLKSZ)
    return [t.zil_maxblocksize] * (n - 1) + [tail]


def lwb_count(payload: int, t: Tunables) -> int:
    """How many lwb writes (lwb_writes) a commit of ``payload`` record bytes makes."""
    return max(1, math.ceil(payload / (t.zil_maxblocksize - ZIL_CHAIN_BYTES)))


def batch(threads: int, zils: int) -> float:
    """Records per commit: half the writers waiting on one ZIL (the others wait for the commit in flight
    and go in the next), at least one — see the module doc for the lab's kstat evidence."""
    return max(1.0, threads / max(zils, 1) / 2.0)


# ---------------------------------------------------------------- data side

def _at_threads(cs: Sequence[Ceiling], threads: int) -> Optional[Ceiling]:
    """A data-side figure at ``threads``: the step itself, log-log between steps, else the nearest end
    (basis says which)."""
    pts = sorted(cs, key=lambda c: c.threads)
    if not pts:
        return None
    for c in pts:
        if c.threads == threads:
            return c
    if threads < pts[0].threads or threads > pts[-1].threads:
        end = pts[0] if threads < pts[0].threads else pts[-1]
        return Ceiling(threads, end.iops, end.mbps, end.ios, replace(end.basis, nearest=end.threads),
                       end.cpu_busy, end.cpu_s_per_io)
    for a, b in zip(pts, pts[1:]):
        if a.threads < threads < b.threads:
            f = (math.log(threads) - math.log(a.threads)) / (math.log(b.threads) - math.log(a.threads))
            return Ceiling(threads, _mix(a.iops, b.iops, f), _mix(a.mbps, b.mbps, f), min(a.ios or 0, b.ios or 0) or None,
                           replace(a.basis, between=(a.threads, b.threads)),
                           _mix(a.cpu_busy, b.cpu_busy, f), _mix(a.cpu_s_per_io, b.cpu_s_per_io, f))
    return pts[-1]


def data_from_scenario(result: ScenarioResult, name: str) -> DataSide:
    """The data side as measured: a scenario result's sync=standard steps (no ZIL: the pool and host's
    ceiling — unless its load writes with O_DSYNC, which sends every write through the ZIL anyway) and its
    sync=always steps without a log vdev."""
    def ceilings(sync: str) -> List[Ceiling]:
        return [Ceiling(s.threads, s.iops, s.mbps, s.ios, FigureBasis("scenario", name, sync=sync), *_host_cpu(s))
                for s in result.steps if s.sync == sync and s.log == "none"]

    std, nolog = ceilings("standard"), ceilings("always")
    if (result.scenario.write_sync or "none") != "none":
        # the load asks for every write to be stable (O_DSYNC/O_SYNC, as NFS's stable writes): sync=standard
        # commits each one through the ZIL too — on the data disks without a log vdev, like sync=always. It is
        # not the pool's ZIL-free ceiling (this result measured none) but another figure without a log vdev
        nolog = nolog or [Ceiling(c.threads, c.iops, c.mbps, c.ios, replace(c.basis, o_dsync=True), c.cpu_busy,
                                  c.cpu_s_per_io) for c in std]
        std = []
    if not std and not nolog:
        raise AdviceInputError(f"{name}: the scenario result has no sync=standard or sync=always-without-SLOG "
                               "steps to take the data side from")
    disks = len(result.data_paths)
    return DataSide("scenario", DataOrigin("scenario", name, result.layout, disks), std, nolog,
                    layout=result.layout, disks=disks or None)


def _host_cpu(step: Any) -> Tuple[Optional[float], Optional[float]]:
    """(busy share, CPU seconds per IO) of the host over a measured step; (None, None) unrecorded."""
    cpu = step.extra.get("cpu") or {}
    busy, cpus = cpu.get("busy_share"), cpu.get("cpus")
    if busy is None or not cpus or not step.iops:
        return None, None
    return busy, busy * cpus / step.iops


def _layout_factor(layout: str, disks: int) -> Tuple[float, int]:
    """(bandwidth in units of one disk, commits the data vdevs serve at once) of a layout."""
    if layout == "stripe":
        return float(disks), disks
    if layout == "mirror":
        return 1.0, 1
    parity = int(layout[-1])
    if disks <= parity:
        raise AdviceInputError(f"a {layout} needs more than {parity} disks, not {disks}")
    return float(disks - parity), 1


def data_from_sweeps(sweeps: Sequence[Tuple[str, SweepResult]], layout: str, disks: int, w: Workload,
                     t: Tunables) -> DataSide:
    """The data side predicted from the data devices' sweeps (the slowest device speaks for all: a stripe
    runs at its slowest member). sync=standard: the layout's bandwidth over the bytes each write dirties
    (a bound: QD1 sweeps do not measure the pool's aggregated writes). sync=always without a log vdev: the
    ZIL's lwbs on the data vdevs, or indirect writes of whole blocks, at the data devices' latency."""
    if layout not in LAYOUTS:
        raise AdviceInputError(f"unknown layout {layout!r}: use one of {', '.join(LAYOUTS)}")
    if disks < 1:
        raise AdviceInputError("the data side needs at least one disk")
    units, parallel = _layout_factor(layout, disks)
    slowest = max(sweeps, key=lambda s: sweep_at(s[1].points, 4096).mean_us)
    name, sw = slowest
    bw = bandwidth(sw.points)
    dirtied = max(w.io_size, w.block_size) if w.io_size < w.block_size else w.io_size
    basis = FigureBasis("sweeps", name, layout=layout, disks=disks)
    std, nolog = [], []
    shape = log_shape(w, t, slog=False)
    for n in w.threads:
        if bw is not None:
            pool_bps = bw[0] * (1 << 20) * units
            iops = pool_bps / dirtied
            std.append(Ceiling(n, iops, iops * w.io_size / (1 << 20), bw[2], basis))
        b = batch(n, w.zils)
        writes = lwb_writes(int(b * shape.bytes_per_io), t)
        commit = sum(sweep_at(sw.points, s).mean_us for s in writes)
        if shape.state == "indirect":  # the data block is written beside the lwb, the commit waits for both
            commit = max(commit, sweep_at(sw.points, max(w.io_size, w.block_size)).mean_us)
        iops = b * min(parallel, w.zils) / (commit / 1e6)
        if bw is not None:
            per_io = dirtied + (0 if shape.state == "indirect" else shape.bytes_per_io)
            iops = min(iops, bw[0] * (1 << 20) * units / per_io)
        nolog.append(Ceiling(n, iops, iops * w.io_size / (1 << 20), sweep_at(sw.points, writes[-1]).ios,
                             replace(basis, zil=shape.state)))
    return DataSide("sweeps", DataOrigin("sweeps", name, layout, disks), std, nolog, layout=layout, disks=disks)


# ---------------------------------------------------------------- the prediction

def _iops(b: float, us: Optional[float]) -> Optional[float]:
    return b / (us / 1e6) if us else None


def _binding(shape: LogShape, ceiling: Optional[Ceiling], without: Optional[Ceiling], lat_limit: float,
             bw_limit: Optional[float], at_bw: bool, host: Optional[float] = None,
             log_pass: Optional[float] = None, probe_pool: Optional[float] = None) -> Tuple[float, Kind]:
    """(the figure, the limit that sets it) of one step: the least of the limits, named. ``log_pass``: what the
    host probe's log pass measured with this log where its CPU had room (_log_pass_rate): the log's own limit on
    this host, measured, where it is below the sweep's. ``probe_pool``: what the probe's own pool measured where it
    is this pool (_probe_pool_rate): the host's and the log's pace measured together, so the host's ceiling, which
    the same probe gives with the copies taken out, is not put beneath it."""
    log_limit = min(x for x in (lat_limit, bw_limit) if x is not None)
    if shape.state == "indirect":
        return (without.iops if without else (ceiling.iops if ceiling else log_limit)), Kind.INDIRECT
    kind = None
    for rate, k in ((log_pass, Kind.LOG_PASS), (probe_pool, Kind.PROBE_POOL)):
        if rate is not None and rate < log_limit:
            log_limit, kind = rate, k
    if host is not None and host < log_limit and kind != Kind.PROBE_POOL and (ceiling is None or host < ceiling.iops):
        return host, Kind.HOST
    if ceiling is not None and ceiling.iops < log_limit:
        return ceiling.iops, Kind.POOL
    if kind is not None:
        return log_limit, kind
    bandwidth_bound = at_bw or (bw_limit is not None and bw_limit <= lat_limit)
    return log_limit, (Kind.LOG_BANDWIDTH if bandwidth_bound else Kind.LOG_LATENCY)


def _log_pass_rate(lp: Optional[Any], n: int) -> Optional[Dict[str, Any]]:
    """What the probe's log pass measured at ``n`` writers (model 5; _pass_rate's facts); None without a log pass
    at n. Its data were RAM files and its log this device, so where its CPU had room (``usable``: busy below
    HOST_SATURATED) the log set its pace: that rate is what this log does on this host at this load, measured at
    the pool's concurrency, which the sweep's QD1 write+flush and the model's batching only estimate; the pool runs
    at it unless its data side is slower. Where the CPU was saturated its rate is the RAM copies' as much as the
    log's (the pass's CPU ceiling, copies out, stands for it: _host_ceiling) — but not with one writer (model 7,
    ``alone``): a writer alone shares no CPU with another; each write waits for its own commit, so its path (ZFS's
    work, this log's driver and device, in a row) sets its pace, busy or not, and the log pass ran that very path;
    the RAM data's copies are its txg's, in the background. Usable whatever its CPU there."""
    rate = _pass_rate(lp.passes or [lp.steps], n) if lp is not None else None
    if rate is not None and n == 1 and not rate["usable"]:
        return dict(rate, usable=True, alone=True)
    return rate


def _probe_pool_rate(host: Optional[HostProbeResult], sweep: SweepResult, data: "DataSide",
                     n: int) -> Optional[Dict[str, Any]]:
    """What the probe's own pool measured at ``n`` writers (model 6; _pass_rate's facts), where that pool is this
    one: the log is one the CPU writes (pmem: its writes are stores and cache-line flushes, as the probe's RAM log's
    are copies), and the probe ran on the data disks themselves (``host-probe --data``) in this layout. Where its
    CPU was saturated (``usable``: median busy at least HOST_SATURATED) its rate is this pool's CPU cost with this
    log, copies, checksums and the data disks' writes all in it: the pool runs at it. Where the CPU had room the
    data disks set the pace, and a probe step of seconds holds their txg syncs by chance (a pool's step of more
    seconds holds more): not usable. None otherwise: a DMA log's writes cost the CPU no copy, so the RAM log's pool
    is not its pool."""
    if host is None or not _cpu_writes(sweep):
        return None
    disks = host.ram.get("data_devices") or []
    if not disks or (data.layout and host.ram.get("layout") != data.layout) or (data.disks and len(disks) != data.disks):
        return None
    rate = _pass_rate(host.passes or [host.steps], n)
    return dict(rate, usable=rate["busy"] is not None and rate["busy"] >= HOST_SATURATED) if rate else None


def _pass_rate(passes: Sequence[Sequence[HostStep]], n: int) -> Optional[Dict[str, Any]]:
    """What a probe's passes measured at ``n`` writers: the median of their IOPS, each pass's, the fewest IOs of a
    pass and the median busy share of the CPU (``usable``: below HOST_SATURATED); a pass whose step at n stalled
    is left out (the log-stalled finding says it). None where none ran n."""
    passes = [p for p in passes if p]
    # a pass whose own step at n stalled (a write past the kernel's I/O timeout) measured the device's error
    # handling
    stalled = [p for p in passes if any(s.threads == n and s.stalled for s in p)]
    at = [s for s in (host_analysis.at_threads(p, n) for p in passes if p not in stalled)
          if s is not None and s.iops and s.threads == n]
    if not at:
        return None
    busy = [s.cpu_busy for s in at if s.cpu_busy is not None]
    busy_mid = statistics.median(busy) if busy else None
    return {"iops": statistics.median(s.iops for s in at), "each": [s.iops for s in at], "ios": min(s.ios for s in at),
            "busy": busy_mid,
            "usable": busy_mid is not None and busy_mid < HOST_SATURATED}


def _host_batch(host: Optional[HostProbeResult], n: int, zils: int) -> Tuple[float, str, Optional[HostStep]]:
    """(records per commit, where that came from, the host probe's step at n): measured by the probe's ZIL
    kstats where it ran this thread count (or between two it ran), else the assumption (batch)."""
    hs = host_analysis.at_threads(host.steps, n) if host is not None else None
    if hs is not None and hs.records_per_commit:
        return max(1.0, hs.records_per_commit), "host-probe", hs
    return batch(n, zils), "assumed", hs


# Transports whose cache flush is a queued command: writes keep flowing while a flush runs (NVMe's Flush, SCSI's
# SYNCHRONIZE CACHE, a pmem region's own flush). ATA's FLUSH CACHE EXT is not queued: the drive drains its queue
# and takes no new write until the flush is done, so an ATA log serves one commit at a time.
PARALLEL_FLUSH_TRANSPORTS = ("nvme", "sas", "scsi", "pmem", "nvdimm", "virtio")


def _parallel_flushes(sweep: SweepResult) -> bool:
    dev = sweep.device or {}
    return (dev.get("transport") or "").lower() in PARALLEL_FLUSH_TRANSPORTS or \
        (dev.get("class") or "").lower() in ("nvme", "nvdimm", "optane")


def _cpu_writes(sweep: SweepResult) -> bool:
    """A log whose writes the CPU makes (persistent memory: stores and cache-line flushes, no DMA)."""
    dev = sweep.device or {}
    return (dev.get("transport") or "").lower() in ("pmem", "nvdimm") or (dev.get("class") or "").lower() == "nvdimm"


def _path_us(host: Optional[HostProbeResult]) -> Optional[float]:
    """The software path between a write and its log, uncontended: the host probe's at its fewest writers."""
    return host_analysis.uncontended_path(host.steps) if host is not None else None


def _host_commits(sweep: SweepResult, n: int, zils: int) -> Tuple[float, str, Optional[int]]:
    """(records per commit, its basis, commits in flight at once or None) of the host-aware model."""
    per_zil = n / max(zils, 1)
    if per_zil <= 1:
        return 1.0, "one-writer", None
    if _parallel_flushes(sweep):
        return 1.0, "parallel", n
    # the upper end: every writer of the ZIL in the commit (measured: 1.9 records a log block at 2 writers on
    # the lab's SATA SSD at 4 KiB, contrib/advisor_check fitting draw 1129)
    return max(1.0, per_zil), "all-the-writers", max(1, zils)


def _timeout_batch(sweep: SweepResult, shape: LogShape, t: Tunables, n: int, cpu_us: float) -> float:
    """Records per commit where one commit at a time is on a serial-flush log
    and the open log block closes on the commit timeout, not full (small copied records): zil.c keeps the block
    open for zfs_commit_timeout_pct of the last block's latency (issue to flush done, its wait on the device
    included). The writers a finished block wakes come back one after another, each after its CPU work (cpu_us:
    the host probe's CPU per write), so a block gathers 1 + T/cpu_us records; with every writer waiting in one of
    n/b blocks in flight on the device, a block's latency is (n/b) x D and T = pct x (n/b) x D, whence
    b = (1 + sqrt(1 + 4 pct n D / cpu_us)) / 2, at most n. D is the sweep's write+flush at the commit's own lwb
    size, so the two are solved together (a fixed point: b grows the lwb, the lwb's D grows b)."""
    pct = max(t.zfs_commit_timeout_pct, 1) / 100.0
    b = 1.0
    for _ in range(32):
        writes = lwb_writes(int(math.ceil(b * shape.bytes_per_io)), t)
        device_us = max(sweep_at(sweep.points, x).mean_us for x in writes)
        nxt = min(float(n), (1.0 + math.sqrt(1.0 + 4.0 * pct * n * device_us / cpu_us)) / 2.0)
        if abs(nxt - b) < 1e-3:
            b = nxt
            break
        b = nxt
    return b


def _host_latency_limit(sweep: SweepResult, shape: LogShape, t: Tunables, n: int, b: float, path: float,
                        commit: float, concurrency: Optional[int]) -> Tuple[float, float]:
    """(the log's latency limit, the commit time it rests on) of the host-aware model: every writer's own commit,
    overlapping (Little's law: n writers, each the software path and its lwb's write+flush), and where a flush
    stops the queue at most one commit of b records per ZIL at a time on the device."""
    one = lwb_writes(shape.bytes_per_io, t)
    alone = path + max(sweep_at(sweep.points, x).mean_us for x in one)
    limit = n / (alone / 1e6)
    if concurrency is not None and not _parallel_flushes(sweep):
        limit = min(limit, concurrency * b / ((commit - path) / 1e6))
    return limit, (alone if concurrency is None else commit)


def log_pass_of(host: Optional[HostProbeResult], sweep: SweepResult) -> Tuple[Optional[Any], Optional[Dict[str, str]]]:
    """(the probe's log pass, None) where it ran with this sweep's device; (None, the mismatch) where it ran with
    another: their serials differ (``{"by": "serial", "pass": …, "sweep": …}``), or where neither has one (a QEMU
    NVDIMM) their paths (``"by": "path"``); (None, None) where there is none."""
    lp = host.log_pass if host is not None else None
    if lp is None or not lp.steps:
        return None, None
    ours, theirs = (sweep.device or {}).get("serial"), lp.identity.get("serial")
    if ours and theirs and str(ours) != str(theirs):
        return None, {"by": "serial", "pass": str(theirs), "sweep": str(ours)}
    path = (sweep.target or {}).get("path")
    if not ours and not theirs and path and lp.device and path != lp.device:
        return None, {"by": "path", "pass": lp.device, "sweep": path}
    return lp, None


def _host_ceiling(hs: Optional[HostStep], sweep: SweepResult, figs: Sequence[Fig], write_flush_us: float,
                  b: float, lps: Optional[HostStep] = None) -> Optional[float]:
    """The host probe's ceiling at this step, with the CPU the log device itself takes per IO added to ZFS's
    own: the probe's log was RAM, a real log's driver and interrupts (in the lab: the device's emulation on the
    guest's vCPU) cost CPU per write+flush, which the sweep measured (``point.cpu``). Where the sweep has no
    CPU figure, a pmem log's write+flush time counts as CPU (its writes are the CPU's own stores). Where the
    probe's log pass ran with this log (``lps``, its step here), its ceiling too, the lower of the two: that
    pass measured the log's CPU at the pool's concurrency in ZFS's own, which a QD1 sweep does not see
    (model 4, docs/advisor.md)."""
    ram = _ram_log_ceiling(hs, sweep, figs, write_flush_us, b)
    with_log = lps.cpu_ceiling_iops if lps is not None else None
    limits = [c for c in (ram, with_log) if c]
    return min(limits) if limits else None


def _ram_log_ceiling(hs: Optional[HostStep], sweep: SweepResult, figs: Sequence[Fig], write_flush_us: float,
                     b: float) -> Optional[float]:
    """The RAM-log probe's ceiling at this step with the log's swept CPU added (_host_ceiling)."""
    if hs is None or not hs.ceiling_iops:
        return None
    cpus = hs.cpus or 1
    if figs and all(f.cpu_us is not None for f in figs) and hs.cpu_ceiling_iops:
        device_s = sum(f.cpu_us for f in figs) / 1e6 / b
        cpu = 1.0 / (1.0 / hs.cpu_ceiling_iops + device_s / cpus)
        return min(c for c in (cpu, hs.path_ceiling_iops) if c)
    if _cpu_writes(sweep):
        return 1.0 / (1.0 / hs.ceiling_iops + (write_flush_us / 1e6) / b / cpus)
    return hs.ceiling_iops


def _predict_step(n: int, sweep: SweepResult, bw: Optional[Tuple[float, int, int]], shape: LogShape, w: Workload,
                  t: Tunables, data: DataSide, host: Optional[HostProbeResult] = None) -> Tuple[Dict[str, Any], set]:
    """One thread count's prediction (the step's dict) and the lwb sizes it took from outside the sweep."""
    b, batch_basis, hs = _host_batch(host, n, w.zils)
    path = _path_us(host) or 0.0
    concurrency = None
    if host is not None:  # the host-aware model (docs/advisor.md, "The host's own ceiling")
        b, batch_basis, concurrency = _host_commits(sweep, n, w.zils)
        cpu_us = 1e6 / hs.cpu_ceiling_iops if hs is not None and hs.cpu_ceiling_iops else None
        if batch_basis == "all-the-writers" and w.zils == 1 and shape.state in ("copied", "need-copy") and cpu_us:
            # one ZIL on a serial-flush log: the commit timeout sets the batch (_timeout_batch, model 2), a
            # prediction for small (copied) records, whose block closes on the timeout; large (need-copy) ones fill
            # their block before it, so there it is the upper end; several ZILs sharing one such log were never
            # measured and keep model 1's upper end (all the writers)
            b = _timeout_batch(sweep, shape, t, n, cpu_us)
            batch_basis = "commit-timeout" if shape.state == "copied" else "commit-timeout-full"
    writes = lwb_writes(int(math.ceil(b * shape.bytes_per_io)), t)
    at = {s: sweep_at(sweep.points, s) for s in set(writes)}  # a long commit is many lwbs of one size
    figs = [at[s] for s in writes]
    last = figs[-1]
    ceiling = _at_threads(data.ceiling, n)
    without = _at_threads(data.without_slog, n)
    # one flush per commit (zil_lwb_flush_defer): the earlier full lwbs cost their write only
    head = sum((f.write_us if f.write_us is not None else f.mean_us) for f in figs[:-1])
    if concurrency is not None:
        # the lwbs of one commit are issued together and written at once (the queue), then one flush
        head = 0.0
        last = max(figs, key=lambda f: f.mean_us)
    # the software path (host probe) before the device's time: the copy, the lwb, the checksum, the queue
    head += path
    commit = head + last.mean_us
    commit_lo = head + last.lo_us if last.lo_us is not None else None
    commit_hi = head + last.hi_us if last.hi_us is not None else None
    commit_p99 = head + last.p99_us if last.p99_us is not None else None
    lat_limit = _iops(b, commit)
    if host is not None:
        lat_limit, commit = _host_latency_limit(sweep, shape, t, n, b, path, commit, concurrency)
    bytes_per_io = sum(writes) / b
    bw_limit = bw[0] * (1 << 20) / bytes_per_io if bw else None
    # bandwidth-bound: most of the commit's bytes go in lwb writes at sizes where the device already runs
    # at AT_BANDWIDTH of its best MiB/s (its QD1 write+flush at that size)
    at_bw_bytes = sum(s for s, f in zip(writes, figs)
                      if bw and not f.extrapolated and s / (f.mean_us / 1e6) / (1 << 20) >= AT_BANDWIDTH * bw[0])
    lp = log_pass_of(host, sweep)[0]
    lps = host_analysis.at_threads(lp.steps, n) if lp is not None else None
    host_ceiling = _host_ceiling(hs, sweep, figs, last.mean_us, b, lps)
    measured = _log_pass_rate(lp, n)
    probe_pool = _probe_pool_rate(host, sweep, data, n)
    value, binding = _binding(shape, ceiling, without, lat_limit, bw_limit, at_bw_bytes >= 0.5 * sum(writes),
                              host_ceiling, measured["iops"] if measured and measured["usable"] else None,
                              probe_pool["iops"] if probe_pool and probe_pool["usable"] else None)
    log_bound = binding in (Kind.LOG_LATENCY, Kind.LOG_BANDWIDTH)
    saturated = ceiling is not None and ceiling.host_saturated
    rng = None

    def lat_at(c: float) -> float:
        """The log's latency limit at another commit time (the sweep's interval, its p99), by the same rule as
        the figure: with overlapping commits (the host-aware model) the software path is not in each one's time."""
        if host is not None and concurrency is not None:
            return _host_latency_limit(sweep, shape, t, n, b, path, c, concurrency)[0]
        return _iops(b, c)

    if log_bound and commit_lo is not None and commit_hi is not None:
        cap = bw_limit if bw_limit is not None else float("inf")
        rng = [min(lat_at(commit_hi), cap), min(lat_at(commit_lo), cap)]
    step = {
        "threads": n, "batch": round(b, 3), "batch_basis": batch_basis, "path_us": round(path, 1) if path else None,
        "lwb_writes": writes, "log_bytes_per_io": round(bytes_per_io, 1),
        "commit_lat_us": round(commit, 2),
        "commit_lat_ci95_us": [round(commit_lo, 2), round(commit_hi, 2)] if commit_lo is not None else None,
        "sweep_ios": min(f.ios for f in figs),
        "limits": {"log_latency_iops": round(lat_limit, 1),
                   "log_bandwidth_iops": round(bw_limit, 1) if bw_limit is not None else None,
                   "pool_iops": round(ceiling.iops, 1) if ceiling else None,
                   "pool_basis": ceiling.basis if ceiling else None,
                   "pool_ios": ceiling.ios if ceiling else None,
                   "host_iops": round(host_ceiling, 1) if host_ceiling else None,
                   "host_log_pass_iops": round(lps.cpu_ceiling_iops, 1) if lps and lps.cpu_ceiling_iops else None,
                   **({"log_pass_measured_iops": round(measured["iops"], 1),
                       "log_pass_each_iops": [round(x, 1) for x in measured["each"]], "log_pass_ios": measured["ios"],
                       "log_pass_busy": round(measured["busy"], 4) if measured["busy"] is not None else None,
                       **({"log_pass_alone": True} if measured.get("alone") else {})}
                      if measured else {}),
                   **({"probe_pool_measured_iops": round(probe_pool["iops"], 1),
                       "probe_pool_each_iops": [round(x, 1) for x in probe_pool["each"]],
                       "probe_pool_ios": probe_pool["ios"],
                       "probe_pool_busy": round(probe_pool["busy"], 4) if probe_pool["busy"] is not None else None}
                      if probe_pool else {})},
        "iops": round(value, 1), "iops_range": [round(x, 1) for x in rng] if rng else None,
        "iops_if_p99_bound": round(min(lat_at(commit_p99), value), 1) if commit_p99 and log_bound else None,
        "mbps": round(value * w.io_size / (1 << 20), 3), "binding": binding.value,
        "without_slog_iops": round(without.iops, 1) if without else None,
        "without_slog_basis": without.basis if without else None,
        "benefit": round(value / without.iops, 3) if without and without.iops > 0 else None,
        "host_cpu": {"busy": round(ceiling.cpu_busy, 4), "us_per_io": round(ceiling.cpu_s_per_io * 1e6, 1)}
        if saturated else None,
        # sync=standard's figure was the host's CPU, which the log's copy of every byte makes busier still
        "upper_bound": _upper_bound(binding, saturated, ceiling, shape, host is not None),
    }
    if concurrency is not None and log_bound and not step["upper_bound"] and batch_basis != "commit-timeout":
        # more writers than one per ZIL: how many commits fly at once, and how full, is the model's upper
        # end (every writer its own lwb on a device whose flushes queue; all the ZIL's writers in a commit
        # where a flush stops the queue) — the recorded pools ran at or below it (docs/advisor.md)
        step["upper_bound"] = "log-concurrency"
    outside = {f.size for f in figs if f.extrapolated}
    if outside:  # a figure from sizes the sweep never wrote is neither a prediction nor a bound (issue #37)
        step["upper_bound"] = None
        step["extrapolated"] = sorted(outside)
    return step, outside


def predict_candidate(name: str, sweep: SweepResult, w: Workload, t: Tunables, data: DataSide,
                      endurance: Optional[Endurance] = None, host: Optional[HostProbeResult] = None) -> Dict[str, Any]:
    """One candidate's prediction: per thread count the three limits, the binding one, the figure with
    its spread; the knee, the benefit, the findings, the size and the life."""
    check_log_sweep(sweep, name)
    shape = log_shape(w, t, slog=True)
    bw = bandwidth(sweep.points)
    steps: List[Dict[str, Any]] = []
    extrapolated: set = set()
    for n in w.threads:
        step, outside = _predict_step(n, sweep, bw, shape, w, t, data, host)
        steps.append(step)
        extrapolated |= outside
    curve = [scaling.Step(threads=s["threads"], iops=s["iops"], mbps=s["mbps"]) for s in steps]
    k = scaling.knee(curve, "iops")
    peak = max(steps, key=lambda s: s["iops"])
    findings = _findings(steps, peak, extrapolated, sweep)
    size = sizing(w, t, shape, peak, capacity_of(sweep))
    if size.get("finding"):
        findings.append(size.pop("finding"))
    life = lifetime(size.get("life_rate_bytes_s", size["log_rate_bytes_s"]), endurance, capacity_of(sweep),
                    size.get("life_rate_basis", size["rate_basis"]), wear.evidence(sweep.points))
    if life and life.get("finding"):
        findings.append(life.pop("finding"))
    dev = sweep.device or {}
    lp, lp_why = log_pass_of(host, sweep)
    stall = _log_stalled(lp)
    if stall:
        findings.append(stall)
    lp_given = host.log_pass if host is not None and host.log_pass is not None else None
    return {
        "host_log_pass": {"device": lp_given.device, "identity": dict(lp_given.identity), "used": lp is not None,
                          "other_device": lp_why} if lp_given else None,
        "path": (sweep.target or {}).get("path"), "sweep": name, "model": dev.get("model") or dev.get("product"),
        "class": dev.get("class"), "capacity": capacity_of(sweep),
        "sweep_sizes": [p.size for p in sweep.points],
        "bandwidth": {"mbps": round(bw[0], 3), "size": bw[1], "ios": bw[2]} if bw else None,
        "log_write_state": shape.state, "log_record_bytes_per_io": shape.bytes_per_io,
        "steps": steps, "knee": {"threads": k.threads, "iops": round(k.value, 1), "saturated": k.saturated} if k else None,
        "peak": {"threads": peak["threads"], "iops": peak["iops"], "mbps": peak["mbps"]},
        "findings": findings, "size": size, "life": life,
    }


def _log_stalled(lp: Optional[Any]) -> Optional[Dict[str, Any]]:
    """The log-stalled finding: each step of the probe's log pass (every pass) in which a write to this log outlasted
    the kernel's I/O timeout — the device stopped answering under the pool's own load, which a QD1 sweep does not
    see and which stops every sync write of a pool for as long; None where none did."""
    if lp is None:
        return None
    passes = lp.passes or [lp.steps]
    stalled = [(n, s) for n, p in enumerate(passes, 1) for s in p if s.stalled]
    if not stalled:
        return None
    return {"kind": Kind.LOG_STALLED.value, "threads": sorted({s.threads for _, s in stalled}),
            "figures": [{"threads": s.threads, "pass": n, "passes": len(passes), "longest_write_s":
                         round(s.longest_write_us / 1e6, 3), "iops": round(s.iops, 1), "ios": s.ios,
                         "timeout_s": host_analysis.STALLED_WRITE_S} for n, s in stalled]}


def _upper_bound(binding: Kind, saturated: bool, ceiling: Optional[Ceiling], shape: LogShape,
                 host: bool = False) -> Optional[str]:
    """Why a step's figure is an upper bound rather than a prediction, or None: ``host-cpu`` (sync=standard
    saturated the host's CPU, and a log adds the copy of every write to it), ``log-only`` (no data-side figure
    at all: the pool and the host could hold it lower; only the log device's limits are in it), ``data-sweeps``
    (the data side is its devices' sweeps: no figure of the pool's writes at the txg's queue depth, nor without a
    host probe of the host, which can hold it lower)."""
    if shape.state == "indirect":
        return None
    if binding == Kind.HOST:
        return "host-ceiling"  # the probe's ceiling is itself an upper bound (slogqual.analysis.host)
    if saturated and binding == Kind.POOL:
        return "host-cpu"
    if ceiling is None and binding in (Kind.LOG_LATENCY, Kind.LOG_BANDWIDTH):
        return "log-only"
    if ceiling is not None and ceiling.basis.source == "sweeps" and (not host or binding == Kind.POOL):
        # the data devices' QD1 sweeps measure neither the pool's aggregated writes nor the host between a
        # write and its log (issue #37: a --data advice 3-4x above what the pool ran, the guest 94-99 % busy):
        # whichever limit binds, the figure is the least of those known, an upper bound. A host probe measures
        # the host, not the data side at the txg's queue depth: where the sweeps' figure binds, the figure rests
        # on it and is the same bound (model 3; docs/advisor.md)
        return "data-sweeps"
    return None


def _findings(steps: List[Dict[str, Any]], peak: Dict[str, Any], extrapolated: set,
              sweep: SweepResult) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    by: Dict[str, List[Dict[str, Any]]] = {}
    for s in steps:
        by.setdefault(s["binding"], []).append(s)
    for kind, ss in by.items():
        out.append({"kind": kind, "threads": [s["threads"] for s in ss],
                    "figures": [{"threads": s["threads"], "iops": s["iops"], "mbps": s["mbps"],
                                 "lwb_write": max(s["lwb_writes"]), "lwb_writes": s["lwb_writes"],
                                 "lwbs": len(s["lwb_writes"]),
                                 "commit_lat_us": s["commit_lat_us"], "sweep_ios": s["sweep_ios"],
                                 "batch": s["batch"], "batch_basis": s["batch_basis"],
                                 **s["limits"]} for s in ss]})
    if peak.get("benefit") is not None and peak["benefit"] < NO_BENEFIT:
        out.append({"kind": Kind.NO_BENEFIT.value, "threads": [peak["threads"]],
                    "figures": [{"threads": peak["threads"], "iops": peak["iops"],
                                 "without_slog_iops": peak["without_slog_iops"], "benefit": peak["benefit"]}]})
    host = [s for s in steps if s.get("host_cpu")]
    if host:
        out.append({"kind": Kind.HOST_SATURATED.value, "threads": [s["threads"] for s in host],
                    "figures": [{"threads": s["threads"], "busy": s["host_cpu"]["busy"],
                                 "us_per_io": s["host_cpu"]["us_per_io"],
                                 "upper_bound": s["upper_bound"] is not None} for s in host]})
    if extrapolated:
        out.append({"kind": Kind.EXTRAPOLATED.value, "threads": [],
                    "figures": [{"sizes": sorted(extrapolated), "swept": [p.size for p in sweep.points]}]})
    return out


def sizing(w: Workload, t: Tunables, shape: LogShape, peak: Dict[str, Any], capacity: Optional[int]) -> Dict[str, Any]:
    """The log space the load needs, by the txg arithmetic: a log block is held until its txg has synced —
    up to TXG_CONCURRENT_STATES (3) txgs of sync writes are open, quiescing or syncing — and the space it
    frees is allocatable again TXG_DEFER_SIZE (2) txgs later, so 3 txgs' worth are needed and 5 recommended
    (the margin). A txg lasts up to zfs_txg_timeout; it holds at most zfs_dirty_data_max of dirty data
    where given. Lab evidence (docs/lab.md): 256 MiB at 64 MiB/s of 128 KiB writes (needed 960 MiB) sent
    43 % of the ZIL to the data disks; 2 GiB (recommended 1,600 MiB) 0.015 %."""
    ratio = shape.bytes_per_io / w.io_size
    h = w.rate_history
    bound = None  # why the rate, and so the size, is an upper bound (the peak's ``upper_bound``), or None
    if h is not None:  # the log's own bytes: its records' overhead is in them already
        log_rate = h.peak
        data_rate = log_rate / ratio
        basis = RateBasis("history-peak", source=h.source, intervals=len(h.rates), peak_bytes_s=h.peak,
                          mean_bytes_s=h.mean)
    else:
        if w.rate_mbps is not None:
            data_rate = w.rate_mbps * MB
            basis = RateBasis("required", rate_mbps=w.rate_mbps)
        else:
            data_rate = peak["mbps"] * (1 << 20)
            bound = peak.get("upper_bound")  # a bound, not a prediction: so is every size reckoned from it
            basis = RateBasis("predicted", mib_s=peak["mbps"], threads=peak["threads"], upper_bound=bound)
        log_rate = data_rate * ratio
    per_txg = log_rate * t.zfs_txg_timeout
    capped = t.zfs_dirty_data_max is not None and per_txg > t.zfs_dirty_data_max
    if capped:
        per_txg = float(t.zfs_dirty_data_max)
    needed = per_txg * TXG_CONCURRENT_STATES
    recommended = per_txg * (TXG_CONCURRENT_STATES + TXG_DEFER_SIZE)
    out: Dict[str, Any] = {
        "rate_basis": basis, "data_rate_bytes_s": round(data_rate, 1), "log_bytes_per_data_byte": round(ratio, 4),
        "log_rate_bytes_s": round(log_rate, 1), "txg_seconds": t.zfs_txg_timeout,
        "per_txg_bytes": round(per_txg), "per_txg_capped_by_dirty_data_max": capped,
        "txgs_held": TXG_CONCURRENT_STATES, "txgs_with_margin": TXG_CONCURRENT_STATES + TXG_DEFER_SIZE,
        "needed_bytes": round(needed), "recommended_bytes": round(recommended), "capacity": capacity,
        "upper_bound": bound,
    }
    if h is not None:  # a day writes the mean, not the busiest interval
        out["life_rate_bytes_s"] = round(h.mean, 1)
        out["life_rate_basis"] = replace(basis, kind="history-mean")
    if capacity is not None and capacity < recommended:
        out["finding"] = {"kind": Kind.LOG_TOO_SMALL.value, "threads": [],
                          "figures": [{"capacity": capacity, "needed_bytes": round(needed),
                                       "recommended_bytes": round(recommended),
                                       # below an upper bound of the need is no evidence of a spill
                                       "spills": capacity < needed and bound is None, "rate_basis": basis,
                                       "upper_bound": bound}]}
    return out


def _rated(e: Optional[Endurance], capacity: Optional[int]) -> Optional[Tuple[float, EnduranceBasis]]:
    """The rated endurance in bytes and how it was reckoned; None when none was given."""
    if e is None or (e.tbw is None and e.dwpd is None):
        return None
    if e.tbw is not None:
        return e.tbw * 1e12, EnduranceBasis("tbw", tbw=e.tbw)
    if not capacity:
        raise AdviceInputError("--dwpd needs the device's capacity, which its sweep does not record; give --tbw")
    return (e.dwpd * capacity * 365 * e.warranty_years,
            EnduranceBasis("dwpd", dwpd=e.dwpd, capacity=capacity, warranty_years=e.warranty_years))


def lifetime(log_rate: float, e: Optional[Endurance], capacity: Optional[int], basis: Any,
             worn: Optional[Dict[str, Any]] = None) -> Optional[Dict[str, Any]]:
    """Years until the rated endurance is written at ``log_rate`` (bytes/s to the log), and — where the
    candidate's sweep read the device's wear before and after (``worn``: analysis.wear.evidence) — what the
    device's own counters say: its measured cost of a per cent of life when its percentage used moved
    enough (then the years from it, both ends, and without a rating the lower end is the answer)."""
    rated = _rated(e, capacity)
    hours = e.hours_per_day if e else 24.0
    warranty = e.warranty_years if e else Endurance().warranty_years
    per_day = log_rate * 3600 * hours
    measured = wear.measured_life(worn, per_day) if worn else None
    if rated is None and measured is None:
        return None
    if rated is not None:
        years = rated[0] / (per_day * 365) if per_day > 0 else None
        out: Dict[str, Any] = {"rated_bytes": round(rated[0]), "endurance_basis": rated[1]}
    else:
        years = measured["years_low"]
        out = {"rated_bytes": None, "endurance_basis": EnduranceBasis("measured")}
    assumption = WearAssumption(dict(worn), bool(measured)) if worn else WearAssumption()
    out.update({"bytes_per_day": round(per_day), "rate_basis": basis, "hours_per_day": hours,
                "years": round(years, 3) if years else None, "warranty_years": warranty, "assumption": assumption})
    if worn:
        out["wear"] = dict(worn)
    if measured:
        out["measured_years"] = measured
    if years is not None and years < warranty:
        out["finding"] = {"kind": Kind.SHORT_LIFE.value, "threads": [],
                          "figures": [{"years": round(years, 2), "warranty_years": warranty,
                                       "bytes_per_day": round(per_day), "rated_bytes": out["rated_bytes"]}]}
    return out


@dataclass
class PowerLoss:
    """A candidate's power-loss evidence: a ``slogqual.powercut/1`` result of the same device."""

    verdict: str  # pass | fail | incomplete (results.powercut)
    method: str  # real | external | emulation (analysis.powercut.method_of)
    acknowledged: int
    lost: int
    cycles: int
    source: str  # the result file

    def to_dict(self) -> Dict[str, Any]:
        return dict(self.__dict__)


def power_by_candidate(results: Sequence[Tuple[str, PowercutResult]],
                       logs: Sequence[Tuple[str, SweepResult]]) -> Dict[str, PowerLoss]:
    """Each power-cut result (source, slogqual.powercut/1 result) matched to the candidate whose sweep
    wrote the same device (by real path, or by serial where both record one); one that matches no
    candidate, or a second for one candidate, is an input error."""
    import os

    from slogqual.analysis.powercut import method_of, totals

    out: Dict[str, PowerLoss] = {}
    for source, result in results:
        target = os.path.normpath(result.target_path or "/nonexistent")
        serial = (result.device or {}).get("serial")
        match = [name for name, sw in logs if os.path.normpath((sw.target or {}).get("path") or ".") == target
                 or (serial and (sw.device or {}).get("serial") == serial)]
        if not match:
            raise AdviceInputError(f"--powercut {source}: its target {target} is none of the log candidates' devices")
        t = totals(result)
        for name in match:
            if name in out:
                raise AdviceInputError(f"--powercut {source}: {name} has a power-cut result already ({out[name].source})")
            out[name] = PowerLoss(verdict=result.verdict or "incomplete", method=method_of(result),
                                  acknowledged=t["acknowledged"], lost=t["lost"], cycles=len(result.cycles),
                                  source=source)
    return out


def mirror_advice(data_rate: float, rate_basis: RateBasis, t: Tunables, power: Optional[PowerLoss]) -> Dict[str, Any]:
    """Mirror or not, said plainly. What an unmirrored log costs: while the host runs, a failed log costs
    speed only (the ZIL writes its blocks to the data vdevs again, and every acknowledged write is still in
    memory, bound for its txg). Acknowledged writes are lost only when the host crashes (power, panic)
    while the log is failed or with it — they were on the log alone: at most the sync writes of the txgs not
    yet synced, TXG_CONCURRENT_STATES txgs of up to zfs_txg_timeout each (a bound, not a measurement). The
    pool then will not import until ``zpool import -m`` discards the missing log ("Recent transactions can
    be lost because the log device will be discarded", zpool-import(8), OpenZFS 2.3; openzfs/zfs#2099:
    nothing is lost without a crash). A device that loses acknowledged writes at a power cut loses them at
    every cut, and a mirror of two such devices loses them from both sides at once: mirroring does not
    make it a SLOG."""
    window = TXG_CONCURRENT_STATES * t.zfs_txg_timeout
    exposure = data_rate * window
    figs: Dict[str, Any] = {"window_s": window, "exposure_bytes": round(exposure), "rate_basis": rate_basis}
    out: Dict[str, Any] = {"power_loss": power.to_dict() if power else None, **figs}
    if power is not None and power.method != "emulation" and power.lost > 0:
        out["finding"] = {"kind": Kind.POWER_LOSS_UNSAFE.value, "threads": [],
                          "figures": [dict(figs, lost=power.lost, acknowledged=power.acknowledged,
                                           cycles=power.cycles, method=power.method, source=power.source)]}
        out["mirror"] = MirrorCall(Kind.POWER_LOSS_UNSAFE.value)
    elif power is not None and power.method != "emulation" and power.verdict == "pass":
        out["finding"] = {"kind": Kind.UNMIRRORED_EXPOSURE.value, "threads": [],
                          "figures": [dict(figs, acknowledged=power.acknowledged, cycles=power.cycles,
                                           method=power.method, source=power.source)]}
        out["mirror"] = MirrorCall(Kind.UNMIRRORED_EXPOSURE.value)
    else:
        why = NoEvidence("emulated" if power is not None and power.method == "emulation"
                         else "incomplete" if power is not None else "none")
        out["finding"] = {"kind": Kind.NO_POWER_LOSS_EVIDENCE.value, "threads": [],
                          "figures": [dict(figs, why=why, source=power.source if power else None)]}
        out["mirror"] = MirrorCall(Kind.NO_POWER_LOSS_EVIDENCE.value)
    return out


def advise(candidates: Sequence[Tuple[str, SweepResult]], w: Workload, t: Tunables, data: DataSide,
           endurance: Optional[Endurance] = None, origin: Optional[str] = None,
           power: Optional[Dict[str, PowerLoss]] = None, host: Optional[HostProbeResult] = None,
           host_source: Optional[str] = None, special: Optional[Tuple[str, SweepResult]] = None) -> Dict[str, Any]:
    """The ``slogqual.advice/1`` document's facts (a dict; slogqual.report.advice.document makes the document
    of it, its words and assumptions, and slogqual.results.advice types that). ``power``: the candidates'
    power-loss evidence by sweep name (the mirror advice; every candidate gets one). ``special``: the pool's
    special vdev device's sweep (analysis.advisor_special: the ZIL on it beside each candidate)."""
    from slogqual.results.schema import ADVICE

    check_workload(w, t)
    if not candidates:
        raise AdviceInputError("give at least one log candidate's sweep")
    if host is not None:
        # the ceiling and the path derived anew from the probe's measured figures: the model's, not the
        # derivation a document was written with
        host = replace(host, steps=host_analysis.steps_from(host.steps, host.copy))
        check_host(host, w)
    cands = [predict_candidate(name, sw, w, t, data, endurance, host) for name, sw in candidates]
    for (name, _sw), c in zip(candidates, cands):
        size = c["size"]
        m = mirror_advice(size["data_rate_bytes_s"], size["rate_basis"], t, (power or {}).get(name))
        c["findings"].append(m.pop("finding"))
        c["mirror"] = m
    warnings: List[Warned] = []
    for c in cands:
        for f in c["findings"]:
            if f["kind"] in (Kind.LOG_TOO_SMALL.value, Kind.SHORT_LIFE.value, Kind.EXTRAPOLATED.value,
                             Kind.POWER_LOSS_UNSAFE.value):
                warnings.append(Warned(c["path"] or c["sweep"], f))
    return {"schema": ADVICE, "model_version": MODEL_VERSION, "workload": w.to_dict(), "tunables": t.to_dict(),
            "endurance": endurance.to_dict() if endurance else None, "data": data.to_dict(),
            "candidates": cands, "warnings": warnings, "origin": origin,
            **({"host": host_summary(host, host_source)} if host is not None else {}),
            **({"special": _special(special, w, t, data, cands, host)} if special is not None else {})}


def _special(special: Tuple[str, SweepResult], w: Workload, t: Tunables, data: DataSide,
             cands: List[Dict[str, Any]], host: Optional[HostProbeResult]) -> Dict[str, Any]:
    """Special vdev or SLOG? The special device as a log by this model, set beside the candidates by
    analysis.advisor_special."""
    model = predict_candidate(special[0], special[1], w, t, data, None, host)
    # zil_special_is_slog=0 makes the special no SLOG: what zfs_log_write / zvol_log_write do without one
    return advisor_special.answer(model, log_shape(w, t, slog=False).state == "indirect", cands,
                                  advisor_special.applies(t.zfs_version, t.zil_special_is_slog))


def check_host(host: HostProbeResult, w: Workload) -> None:
    """The host probe must have run this load's shape: another shape's ceiling answers another question."""
    hw = host.workload
    if (hw.protocol, hw.bs) != (w.protocol, w.io_size):
        raise AdviceInputError(f"the host probe ran {hw.protocol} {size_label(hw.bs)} writes; this advice is for "
                               f"{w.protocol} {size_label(w.io_size)}: probe this load (slogqual host-probe --protocol "
                               f"{w.protocol} --bs {size_label(w.io_size)})")
    if not any(s.ceiling_iops for s in host.steps):
        raise AdviceInputError("the host probe has no step with a ceiling (no copy cost or no log writes measured)")


def host_summary(host: HostProbeResult, source: Optional[str]) -> Dict[str, Any]:
    """What the advice took from the host probe, for its document."""
    return {"source": source, "status": host.status, "workload": host.workload.to_dict(),
            "steps": [{"threads": s.threads, "iops": round(s.iops, 1), "ios": s.ios,
                       "ceiling_iops": round(s.ceiling_iops, 1) if s.ceiling_iops else None,
                       "records_per_commit": round(s.records_per_commit, 3) if s.records_per_commit else None,
                       "path_us": round(s.path_us, 1) if s.path_us else None,
                       "zfs_cpu_us_per_io": round(s.zfs_cpu_s_per_io * 1e6, 1) if s.zfs_cpu_s_per_io else None}
                      for s in host.steps],
            # the log pass (host-probe --log): its device and, per writer count, ZFS's and that log's CPU a write
            "log_pass": {"device": host.log_pass.device, "identity": dict(host.log_pass.identity),
                         "steps": [{"threads": s.threads, "iops": round(s.iops, 1), "ios": s.ios,
                                    "ceiling_iops": round(s.ceiling_iops, 1) if s.ceiling_iops else None,
                                    "zfs_cpu_us_per_io": round(s.zfs_cpu_s_per_io * 1e6, 1)
                                    if s.zfs_cpu_s_per_io else None} for s in host.log_pass.steps],
                         "failed": dict(host.log_pass.failed) if host.log_pass.failed else None}
            if host.log_pass is not None else None}


def check_workload(w: Workload, t: Tunables) -> None:
    if w.protocol not in PROTOCOLS:
        raise AdviceInputError(f"unknown protocol {w.protocol!r}: use iscsi (zvols) or nfs (a dataset)")
    if not w.io_size or w.io_size <= 0:
        raise AdviceInputError("the workload needs its IO size (--bs)")
    if not w.block_size or w.block_size <= 0:
        raise AdviceInputError("the workload needs its block size (--volblocksize for iscsi, --recordsize for nfs)")
    if not w.threads or any(n < 1 for n in w.threads):
        raise AdviceInputError("the workload needs thread counts of at least 1 (--threads 1,2,4)")
    if w.zils < 1:
        raise AdviceInputError("--zils must be at least 1")
    if w.rate_mbps is not None and not (w.rate_mbps > 0 and math.isfinite(w.rate_mbps)):
        raise AdviceInputError(f"--rate must be a positive number of MB/s, not {w.rate_mbps:g}")
    if w.rate_mbps is not None and w.rate_history is not None:
        raise AdviceInputError("give the rate as --rate or as --rate-history, not both")
    if w.rate_history is not None and not (w.rate_history.rates and w.rate_history.peak > 0):
        raise AdviceInputError(f"{w.rate_history.source}: its log vdevs wrote nothing in any interval: no rate to "
                               "size or wear a log by")
    if t.logbias not in LOGBIASES:
        raise AdviceInputError(f"unknown logbias {t.logbias!r}: use latency or throughput")
    if t.zil_maxblocksize < 4096 or t.zfs_txg_timeout <= 0 or t.zfs_immediate_write_sz < 0:
        raise AdviceInputError("tunables out of range: zil_maxblocksize >= 4096, zfs_txg_timeout > 0")
    # every lwb write of every step is a figure of the document (and of the data side's): bounded in all
    per_io = max(log_shape(w, t, slog).bytes_per_io for slog in (True, False))
    lwbs = [lwb_count(int(math.ceil(batch(n, w.zils) * per_io)), t) for n in w.threads]
    if not limits.COMMIT_LWBS.contains(sum(lwbs)):
        raise AdviceInputError(
            f"{max(w.threads)} writers of {size_label(w.io_size)} over {w.zils} ZIL(s) commit {max(lwbs):,} log blocks "
            f"of {size_label(t.zil_maxblocksize)} at a time ({sum(lwbs):,} over the {len(w.threads)} thread counts): "
            f"more than the model lists ({limits.COMMIT_LWBS.allowed()}); give fewer --threads, more --zils or a "
            "larger --zil-maxblocksize")


# ---------------------------------------------------------------- prediction vs measurement

def verify(advice: AdviceResult, scenario: ScenarioResult) -> List[Dict[str, Any]]:
    """Prediction beside the measured sync=always + single-SLOG steps of a scenario result, per candidate
    (matched by device path) and thread count: both IOPS, the error and the measured IO count."""
    rows = []
    several = len(scenario.log_paths) > 1
    for c in advice.candidates:
        pred = {s.threads: s for s in c.steps}
        for s in scenario.steps:
            if s.sync != "always" or s.log != "single":
                continue
            if several and s.candidate != c.path:
                continue
            p = pred.get(s.threads)
            if p is None:
                continue
            rows.append({"candidate": c.path, "class": c.device_class, "threads": s.threads,
                         "predicted_iops": p.iops, "measured_iops": round(s.iops, 1), "measured_ios": s.ios,
                         "error": round(p.iops / s.iops - 1, 3) if s.iops else None,
                         "binding": p.binding, "upper_bound": p.upper_bound})
    return rows
