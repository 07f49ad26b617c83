"""Thread-scaling curves of pool scenarios: knee, SLOG benefit, bottleneck, and the verdict.

Pure functions over measured steps (no processes, no files). The verdict is findings (kinds with
their figures and steps: analysis.findings), never sentences; slogqual.report.wording words them. A curve is one pool configuration's
throughput at each thread step; the verdict compares the configurations the way the SDC 2019 talk
does: sync=standard is the ceiling, sync=always without a SLOG the floor, and the SLOG is judged by
where it lands between them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from slogqual.analysis import findings as F
from slogqual.analysis.findings import Finding, Kind, StepRef
from slogqual.analysis.host import STALLED_WRITE_S, stalled_write

# A doubling of threads that buys less than this much throughput is past the knee.
KNEE_GAIN_PER_DOUBLING = 0.10
# Within this fraction, two peaks are "the same" (the measurement noise of a short step).
SAME = 0.10
# A SLOG's throughput "matches" its sweep bandwidth within this fraction.
MATCH = 0.25
# Saturation of sync=standard (see saturation()): a rise must clear the knee's 10 % per doubling even at
# the top of the steps' counting interval, COUNT_SIGMAS standard errors of their IO counts wide.
COUNT_SIGMAS = 2.0
# A SLOG step whose ZIL wrote more than this share of its bytes to the main pool did not measure the log
# alone (see log_usage_problems): the log vdev had no room for the blocks the ZIL still held.
SPILL_SHARE = 0.01
# The host, not the log device, set a SLOG curve's pace where its peak step ran the host's CPU at least this
# busy (the advisor's HOST_SATURATED: a TCG guest's ZIL at 94-99 % busy reached a quarter of its log's sweep,
# issue #37) ...
HOST_SATURATED = 0.9
# ... or where the log vdev wrote less than this share of what its own QD1 sweep carries at the size it was
# written with: the device waited on the software path between the write and the log (copy, checksum, lwb,
# vdev queue), not the other way round.
FAR_BELOW_SWEEP = 0.5
# Without a sweep of the log device, a SLOG curve that stops scaling is the log device's doing only by
# elimination: a ZIL-free run (sync=standard) still scaling rules out the pool, and a host below this busy
# share rules out the host. Above it the host is not ruled out (issue #37: an NVDIMM log's NFS-like run
# stopped at 1 writer with the guest's CPU 84-88 % busy, and the verdict named the log device).
HOST_BUSY = 0.75


@dataclass
class Step:
    threads: int  # total threads (all LUNs)
    iops: float
    mbps: float  # MiB/s
    lat_p99_us: Optional[float] = None
    slog_bytes: Optional[int] = None  # ZIL bytes to log vdevs during the step (kstat delta)
    normal_bytes: Optional[int] = None  # ZIL bytes to the main pool during the step
    log_write_bytes_s: Optional[float] = None  # the log vdevs' writes over the window (zpool iostat)
    log_write_ops_s: Optional[float] = None
    ios: Optional[int] = None  # IOs fio completed in the step (the count its IOPS come from)
    cpu_busy: Optional[float] = None  # the host's CPU busy share over the step (/proc/stat)
    throttle_waited: Optional[int] = None  # transactions the write throttle sent to wait (dmu_tx kstat)
    throttle_assigned: Optional[int] = None  # transactions assigned over the step
    longest_write_us: Optional[float] = None  # the step's slowest write (fio's completion latency, max)

    @property
    def throttled_share(self) -> Optional[float]:
        """The share of the step's transactions the write throttle sent to wait; None where unrecorded."""
        if self.throttle_waited is None or not self.throttle_assigned:
            return None
        return self.throttle_waited / self.throttle_assigned

    @property
    def log_write_size(self) -> Optional[float]:
        """The log vdevs' mean write size over the window: what the log device really saw (the
        ZIL gathers records into log blocks, so it is not the load's IO size)."""
        if self.log_write_ops_s and self.log_write_bytes_s:
            return self.log_write_bytes_s / self.log_write_ops_s
        return None

    def value(self, metric: str) -> float:
        return self.iops if metric == "iops" else self.mbps


@dataclass
class Curve:
    config: str
    sync: str
    log: str  # none | single | mirror | stripe | special (the candidate as the special vdev, no log vdev)
    steps: List[Step] = field(default_factory=list)
    candidate: Optional[str] = None  # the log device of a single-SLOG curve, when candidates are compared

    @property
    def uses_slog(self) -> bool:
        return self.log not in ("none", "special")


@dataclass
class Knee:
    threads: int
    value: float
    saturated: bool  # False: throughput still grew at the last step, the knee lies beyond it


def knee(steps: Sequence[Step], metric: str, min_gain: float = KNEE_GAIN_PER_DOUBLING) -> Optional[Knee]:
    """The first step after which doubling the threads buys less than min_gain more throughput."""
    pts = sorted(steps, key=lambda s: s.threads)
    if not pts:
        return None
    for a, b in zip(pts, pts[1:]):
        va, vb = a.value(metric), b.value(metric)
        doublings = math.log2(b.threads / a.threads)
        if va <= 0 or doublings <= 0:
            continue
        gain = (vb / va) ** (1.0 / doublings) - 1.0 if vb > 0 else -1.0
        if gain < min_gain:
            return Knee(threads=a.threads, value=va, saturated=True)
    last = pts[-1]
    return Knee(threads=last.threads, value=last.value(metric), saturated=False)


@dataclass
class Flat:
    """Where a curve stopped scaling: the step it flattened at and every step from there on."""

    threads: int
    value: float
    steps: List[Step]


def _counting_error(a: Step, b: Step) -> float:
    """Relative two-sigma error of b/a from the IO counts alone: a count of n has a standard error of at
    least sqrt(n) (Poisson), so the ratio of two counts is known to about COUNT_SIGMAS*sqrt(1/n_a + 1/n_b).
    It is the least noise those counts can carry (the run-to-run spread of a lab step is larger), and 0 when
    a step has no IO count recorded."""
    if a.ios and b.ios and a.ios > 0 and b.ios > 0:
        return COUNT_SIGMAS * math.sqrt(1.0 / a.ios + 1.0 / b.ios)
    return 0.0


def _no_rise(a: Step, b: Step, metric: str, min_gain: float) -> bool:
    va, vb = a.value(metric), b.value(metric)
    doublings = math.log2(b.threads / a.threads)
    if va <= 0 or doublings <= 0:
        return False
    return (vb / va) * (1.0 + _counting_error(a, b)) < (1.0 + min_gain) ** doublings


def saturation(steps: Sequence[Step], metric: str, min_gain: float = KNEE_GAIN_PER_DOUBLING) -> Optional[Flat]:
    """The first step from which the curve no longer rises with threads, or None.

    The rule (docs/scenarios.md, "saturated"): the curve is saturated from step a when EVERY later step b
    gains less than ``min_gain`` (10 %) per doubling of threads over a, even with b/a raised by the
    counting error of their IO counts (``_counting_error``):

        (v_b / v_a) * (1 + 2 * sqrt(1/ios_a + 1/ios_b)) < 1.10 ** log2(threads_b / threads_a)

    Every later step, not only the next one (a curve that dips and rises again is not flat), and at
    least one later step (one step alone shows no trend). A step without an IO count is judged by the
    10 % alone."""
    pts = sorted(steps, key=lambda s: s.threads)
    for i, a in enumerate(pts[:-1]):
        if all(_no_rise(a, b, metric, min_gain) for b in pts[i + 1:]):
            return Flat(threads=a.threads, value=a.value(metric), steps=pts[i:])
    return None


def peak(steps: Sequence[Step], metric: str) -> Optional[Step]:
    return max(steps, key=lambda s: s.value(metric)) if steps else None


def ratios(a: Curve, b: Curve, metric: str) -> Dict[int, float]:
    """a/b at each thread count both curves measured."""
    bvals = {s.threads: s.value(metric) for s in b.steps}
    return {s.threads: s.value(metric) / bvals[s.threads]
            for s in a.steps if s.threads in bvals and bvals[s.threads] > 0}


def roles(curves: Sequence[Curve], sync: str = "always") -> Dict[str, Curve]:
    """baseline (sync=standard, no log), slog (``sync`` with a log), noslog (``sync``, none). With
    sync="standard" (an O_DSYNC load, whose sync=standard writes go through the ZIL too) there is no
    ZIL-free baseline: sync=standard without a log is the noslog curve."""
    found: Dict[str, Curve] = {}
    for c in curves:
        role = ("baseline" if sync == "always" and c.sync == "standard" and not c.uses_slog else
                "slog" if c.sync == sync and c.uses_slog else
                "noslog" if c.sync == sync and not c.uses_slog else None)
        if role and role not in found:
            found[role] = c
    return found


def usage_findings(curve: Curve) -> List[Finding]:
    """Where the kstats contradict the configuration: a SLOG that got no ZIL bytes, a ZIL that spilled to
    the main pool (a log too small for the load), ZIL bytes to a log vdev a configuration lacks; and a step in
    which a write outlasted the kernel's I/O timeout (a device stalled)."""
    found = []
    for s in curve.steps:
        ref = (_ref(curve, s),)
        who = {"config": curve.config, "candidate": curve.candidate, "threads": s.threads}
        if stalled_write(s.longest_write_us):
            # a device stopped answering: the step measured its error handling (analysis.host.STALLED_WRITE_S)
            found.append(Finding(Kind.STALLED, dict(who, longest_write_s=round(s.longest_write_us / 1e6, 3),
                                                    timeout_s=STALLED_WRITE_S, iops=s.iops, ios=s.ios), ref))
        if s.slog_bytes is None:
            continue
        if curve.uses_slog and curve.sync == "always" and s.slog_bytes == 0:
            found.append(Finding(Kind.SLOG_UNUSED, dict(who, normal_bytes=s.normal_bytes), ref))
        spilled = _spill_share(s)
        if curve.uses_slog and curve.sync == "always" and s.slog_bytes > 0 and spilled is not None \
                and spilled > SPILL_SHARE:
            found.append(Finding(Kind.SPILL, dict(who, share=spilled, normal_bytes=s.normal_bytes,
                                                  slog_bytes=s.slog_bytes), ref))
        if not curve.uses_slog and s.slog_bytes > 0:
            found.append(Finding(Kind.LOG_WITHOUT_SLOG, dict(who, slog_bytes=s.slog_bytes), ref))
    return found


def _spill_share(s: Step) -> Optional[float]:
    """The share of a step's ZIL bytes that went to the main pool, None where a counter is unknown."""
    if s.slog_bytes is None or s.normal_bytes is None or s.slog_bytes + s.normal_bytes <= 0:
        return None
    return s.normal_bytes / (s.slog_bytes + s.normal_bytes)


@dataclass
class SweepFigure:
    """One IO size of a log device's QD1 sync-write sweep."""

    size: int
    mbps: float
    lat_mean_us: float


def sweep_at(points: Sequence[SweepFigure], size: Optional[float]) -> Optional[SweepFigure]:
    """The sweep at ``size``: interpolated between the two swept sizes around it (log-log, as
    bandwidth and latency grow with size), the nearest end outside the swept range."""
    if not points or not size or size <= 0:
        return None
    pts = sorted(points, key=lambda p: p.size)
    if size <= pts[0].size:
        return pts[0]
    if size >= pts[-1].size:
        return pts[-1]
    for lo, hi in zip(pts, pts[1:]):
        if lo.size == size:
            return lo
        if lo.size < size < hi.size:
            f = (math.log(size) - math.log(lo.size)) / (math.log(hi.size) - math.log(lo.size))

            def mix(a: float, b: float) -> float:
                return math.exp(math.log(a) + f * (math.log(b) - math.log(a))) if a > 0 and b > 0 else a + f * (b - a)

            return SweepFigure(size=int(round(size)), mbps=mix(lo.mbps, hi.mbps),
                               lat_mean_us=mix(lo.lat_mean_us, hi.lat_mean_us))
    return pts[-1]


@dataclass
class LogEvidence:
    """What the SLOG curve's peak asked of the log device, beside what its sweep says it can do."""

    sweep: SweepFigure  # the sweep at the size the log vdev was written with
    observed_mbps: Optional[float] = None  # the log vdevs' write MiB/s at the peak (zpool iostat)
    observed_size: Optional[float] = None  # their mean write size then


def log_evidence(slog: Curve, metric: str, sweep: Sequence[SweepFigure], load_bs: int) -> Optional[LogEvidence]:
    """Match the SLOG curve's peak with the log device's sweep: at the mean size of the log vdev's
    writes when iostat saw them, else at the load's own IO size."""
    ps = peak(slog.steps, metric)
    if ps is None:
        return None
    size = ps.log_write_size
    fig = sweep_at(sweep, size or load_bs)
    if fig is None:
        return None
    observed = ps.log_write_bytes_s / (1 << 20) if ps.log_write_bytes_s else None
    return LogEvidence(sweep=fig, observed_mbps=observed, observed_size=size)


def _size_basis(log: Optional[LogEvidence], load_bs: Optional[int]) -> Dict[str, Any]:
    """The size the log device's sweep was read at: the log vdev's writes (log_evidence), else the load's."""
    if log is not None:
        return {"size": log.sweep.size, "size_basis": "log-vdev",
                "interpolated": log.sweep.size & (log.sweep.size - 1) != 0}
    return {"size": load_bs, "size_basis": "load", "interpolated": False}


def _ref(curve: Curve, step: Step) -> StepRef:
    return StepRef(curve.config, curve.candidate, step.threads)


def _flat_figures(base: Curve, flat: Flat, metric: str) -> Dict[str, Any]:
    return {"baseline_config": base.config, "flat_threads": flat.threads,
            "flat_steps": [[s.threads, s.value(metric)] for s in flat.steps]}


@dataclass
class Verdict:
    """What the SLOG bought and what limits it, as findings (analysis.findings): exactly one ``effect``
    (what the SLOG bought sync=always) and one ``limit`` (the bottleneck), the ``details`` beside them
    and the ``problems`` (evidence contradicting the configuration). slogqual.report.wording words them."""

    findings: List[Finding]
    benefit_at_peak: Optional[float] = None  # slog peak / noslog peak
    of_standard_at_peak: Optional[float] = None  # slog peak / baseline peak

    @property
    def effect(self) -> Finding:
        return F.one(self.findings, F.EFFECTS)

    @property
    def limit(self) -> Finding:
        return F.one(self.findings, F.LIMITS)

    @property
    def details(self) -> List[Finding]:
        return F.of_kind(self.findings, F.DETAILS)

    @property
    def problems(self) -> List[Finding]:
        return F.of_kind(self.findings, F.PROBLEMS)


def verdict(curves: Sequence[Curve], metric: str, log_sweep_mbps: Optional[float] = None,
            log_sweep_lat_us: Optional[float] = None, load_bs: Optional[int] = None, load_is_sync: bool = False,
            log: Optional[LogEvidence] = None, sync: str = "always") -> Verdict:
    """What the SLOG bought for this load, and what limits it.

    sync: the sync setting the SLOG is judged under — "always", or "standard" for an O_DSYNC load (its
    sync=standard + SLOG curve against sync=standard without a log; ``roles``).

    load_is_sync: the load's own writes are synchronous (O_DSYNC, as NFS clients ask): then
    sync=standard goes through the ZIL too and is no ZIL-free ceiling to compare with.

    log_sweep_mbps / log_sweep_lat_us: the log device's QD1 sweep at the load's IO size ``load_bs``, when
    known, to name the log device as the limit with numbers rather than by elimination.

    log: the same from the log vdev's own writes (log_evidence); it takes precedence, comparing the
    bandwidth iostat saw on the log vdev with the sweep at the size it was written with.
    """
    r = roles(curves, sync)
    slog, noslog, base = r.get("slog"), r.get("noslog"), r.get("baseline")
    if not slog or not slog.steps:
        return Verdict([Finding(Kind.NOTHING_TO_JUDGE)])
    m = {"metric": metric, **({"sync": sync} if sync != "always" else {})}
    ps = peak(slog.steps, metric)
    pn = peak(noslog.steps, metric) if noslog and noslog.steps else None
    pb = peak(base.steps, metric) if base and base.steps and not load_is_sync else None
    benefit = ps.value(metric) / pn.value(metric) if pn and pn.value(metric) > 0 else None
    of_std = ps.value(metric) / pb.value(metric) if pb and pb.value(metric) > 0 else None
    found: List[Finding] = []
    # sync=standard writes no ZIL: where it has stopped scaling, the pool or the host (CPU, the initiator)
    # is at its limit. The SLOG curve is judged at the step where it stopped scaling itself: when
    # sync=standard is already flat at that step, the same limit caps both and the log device is not named
    # (host_bound). A SLOG curve still rising at its last step on sync=standard's plateau has reached no
    # limit yet; the log device is not named then either (rising_on_plateau).
    flat = saturation(base.steps, metric) if pb is not None else None
    slog_flat = saturation(slog.steps, metric)
    host_bound = flat is not None and slog_flat is not None and slog_flat.threads >= flat.threads
    rising_on_plateau = flat is not None and slog_flat is None and ps.threads >= flat.threads
    if flat is not None:
        found.append(Finding(Kind.SATURATED_AT, dict(m, config=base.config, threads=flat.threads,
                                                     steps=[[s.threads, s.value(metric)] for s in flat.steps]),
                             tuple(_ref(base, s) for s in flat.steps)))
    k = knee(slog.steps, metric)
    if k:
        found.append(Finding(Kind.KNEE, dict(m, config=slog.config, threads=k.threads, value=k.value,
                                             saturated=k.saturated), (StepRef(slog.config, slog.candidate, k.threads),)))
    observed = ps.mbps
    if log is not None:
        log_sweep_mbps, log_sweep_lat_us = log.sweep.mbps, log.sweep.lat_mean_us
        observed = log.observed_mbps
    sized = _size_basis(log, load_bs)
    matches_bw = (observed is not None and log_sweep_mbps is not None and log_sweep_mbps > 0
                  and observed >= (1 - MATCH) * log_sweep_mbps
                  and (log is not None or observed <= (1 + MATCH) * log_sweep_mbps))
    # the log vdev at its own sweep's bandwidth, said beside a pool/host limit (never as THE bottleneck)
    log_too = dict(sized, observed_mbps=observed, sweep_mbps=log_sweep_mbps) if matches_bw else None
    peak_ref = (_ref(slog, ps),)
    host = None if matches_bw else _host_limit(m, sized, slog, ps, observed if log is not None else None,
                                               log_sweep_mbps if log is not None else None)
    if of_std is not None and of_std >= 1 - SAME:  # the log costs nothing, whatever its own limit
        limit = Finding(Kind.POOL_BOUND, dict(m, of_standard=of_std, peak=ps.value(metric), baseline_peak=pb.value(metric)),
                        peak_ref + (_ref(base, pb),))
    elif host_bound:  # never the log device while the ZIL-free run is flat at the same step
        limit = Finding(Kind.HOST_BOUND, dict(m, **_flat_figures(base, flat, metric), config=slog.config,
                                              slog_flat_threads=slog_flat.threads, peak=ps.value(metric),
                                              of_standard=of_std, log_too=log_too),
                        tuple(_ref(base, s) for s in flat.steps) + tuple(_ref(slog, s) for s in slog_flat.steps))
    elif rising_on_plateau:
        limit = Finding(Kind.RISING_ON_PLATEAU, dict(m, **_flat_figures(base, flat, metric), config=slog.config,
                                                     peak_threads=ps.threads, peak=ps.value(metric), log_too=log_too),
                        tuple(_ref(base, s) for s in flat.steps) + peak_ref)
    elif host is not None:
        limit = host
    else:
        limit = _log_limit(m, sized, slog, ps, k, observed if matches_bw else None, log_sweep_mbps, log_sweep_lat_us, log,
                           zil_free_scaling=pb is not None and (flat is None or (k is not None and flat.threads > k.threads)))
    found.insert(0, limit)

    found.insert(0, _effect(m, slog, ps, noslog, pn, base, pb, benefit, of_std,
                            flat.threads if host_bound and of_std is not None else None))
    found += [p for c in curves for p in usage_findings(c)]
    found += [t for c in curves for t in throttle_findings(c, metric)]
    return Verdict(found, benefit_at_peak=benefit, of_standard_at_peak=of_std)


def _host_limit(m: Dict[str, Any], sized: Dict[str, Any], slog: Curve, ps: Step, observed: Optional[float],
                sweep_mbps: Optional[float]) -> Optional[Finding]:
    """The host as the SLOG curve's limit: its peak ran the host's CPU saturated, or its log vdev wrote
    ``observed`` MiB/s, far below its own sweep's ``sweep_mbps`` at that size (both None where the log vdev's
    writes were not seen); None where neither holds."""
    if not _host_limited(ps, observed, sweep_mbps):
        return None
    return Finding(Kind.HOST_LIMIT, dict(m, **sized, config=slog.config, threads=ps.threads, peak=ps.value(m["metric"]),
                                         cpu_busy=ps.cpu_busy,
                                         cpu_saturated=ps.cpu_busy is not None and ps.cpu_busy >= HOST_SATURATED,
                                         observed_mbps=observed, sweep_mbps=sweep_mbps,
                                         log_share=_log_share(observed, sweep_mbps)),
                   (_ref(slog, ps),))


def throttle_findings(curve: Curve, metric: str) -> List[Finding]:
    """The write throttle's evidence on one curve: where any of its steps had transactions the throttle sent to
    wait (the pool's dirty data past zfs_delay_min_dirty_percent of its maximum: its txg sync behind the
    writers), each step's count and share of its transactions. Evidence beside the verdict,
    never the bottleneck by itself: the counts say the sync fell behind, not how long the writers waited."""
    steps = [s for s in curve.steps if s.throttled_share is not None]
    if not any(s.throttle_waited for s in steps):
        return []
    return [Finding(Kind.WRITE_THROTTLE, {"metric": metric, "config": curve.config, "candidate": curve.candidate,
                                          "steps": [[s.threads, s.throttle_waited, s.throttle_assigned,
                                                     s.throttled_share] for s in steps]},
                    tuple(_ref(curve, s) for s in steps if s.throttle_waited))]


def _log_limit(m: Dict[str, Any], sized: Dict[str, Any], slog: Curve, ps: Step, k: Optional[Knee],
               at_bandwidth: Optional[float], sweep_mbps: Optional[float], sweep_lat_us: Optional[float],
               log: Optional[LogEvidence], zil_free_scaling: bool = False) -> Finding:
    """The log device as the limit: its bandwidth where the log vdev wrote at its sweep's (``at_bandwidth``,
    the MiB/s seen), else where the SLOG curve stopped scaling — named with its sweep, or by elimination
    (``zil_free_scaling``: sync=standard measured and still scaling past the SLOG curve's knee, and the host's
    CPU below HOST_BUSY);
    else ``unattributed`` (what is missing, said) — else not reached yet."""
    if at_bandwidth is not None:
        return Finding(Kind.LOG_BANDWIDTH, dict(sized, observed_mbps=at_bandwidth, sweep_mbps=sweep_mbps,
                                                observed_size=log.observed_size if log is not None else None),
                       (_ref(slog, ps),))
    if k and k.saturated:
        at = tuple(_ref(slog, s) for s in slog.steps if s.threads >= k.threads)
        swept = bool(sweep_lat_us or sweep_mbps)
        cpu = max((s.cpu_busy for s in slog.steps if s.threads >= k.threads and s.cpu_busy is not None), default=None)
        host_busy = cpu is not None and cpu >= HOST_BUSY
        if swept or (zil_free_scaling and not host_busy):
            return Finding(Kind.LOG_BOUND, dict(m, **sized, config=slog.config, threads=k.threads,
                                                sweep_lat_us=sweep_lat_us or None,
                                                basis="sweep" if swept else "elimination", cpu_busy=cpu), at)
        return Finding(Kind.UNATTRIBUTED, dict(m, config=slog.config, threads=k.threads, value=k.value,
                                               cpu_busy=cpu, host_busy=host_busy, zil_free_scaling=zil_free_scaling),
                       at)
    return Finding(Kind.NOT_REACHED, dict(m, config=slog.config, threads=ps.threads, peak=ps.value(m["metric"])),
                   (_ref(slog, ps),))


def _log_share(observed: Optional[float], sweep_mbps: Optional[float]) -> Optional[float]:
    """What the log vdev wrote at the peak as a share of its sweep at that size; None where either is unknown."""
    return observed / sweep_mbps if observed is not None and sweep_mbps else None


def _host_limited(ps: Step, observed: Optional[float], sweep_mbps: Optional[float]) -> bool:
    """The SLOG's peak ran the host's CPU saturated, or its log vdev far below its own sweep."""
    share = _log_share(observed, sweep_mbps)
    return (ps.cpu_busy is not None and ps.cpu_busy >= HOST_SATURATED) or (share is not None and share < FAR_BELOW_SWEEP)


def _effect(m: Dict[str, Any], slog: Curve, ps: Step, noslog: Optional[Curve], pn: Optional[Step],
            base: Optional[Curve], pb: Optional[Step], benefit: Optional[float], of_std: Optional[float],
            flat_threads: Optional[int]) -> Finding:
    """What the SLOG bought at its peak against sync=always without it (and sync=standard where comparable)."""
    both = dict(m, peak=ps.value(m["metric"]), noslog_peak=pn.value(m["metric"]) if pn else None)
    refs = (_ref(slog, ps),) + ((_ref(noslog, pn),) if pn else ())
    if benefit is None:
        return Finding(Kind.NO_COMPARISON, both, refs)
    if benefit < 1 - SAME:
        return Finding(Kind.FASTER_WITHOUT_SLOG, dict(both, benefit=benefit), refs)
    if benefit <= 1 + SAME:
        return Finding(Kind.BUYS_NOTHING, dict(both, benefit=benefit), refs)
    return Finding(Kind.SPEEDUP, dict(both, benefit=benefit, of_standard=of_std, flat_threads=flat_threads),
                   refs + ((_ref(base, pb),) if of_std is not None else ()))


def slower_candidate(curves: Sequence[Curve], names: Dict[Optional[str], str], metric: str,
                     flat: Optional[Flat] = None) -> Optional[Finding]:
    """With several log candidates measured under the same load: which one limits sync=always.
    Candidates are ranked by the geometric mean of their throughput ratios at the thread steps both
    measured — one step where both are pool-bound does not decide it, as a peak would. Curves that cross
    (each candidate more than SAME ahead at some step) are found to cross, with both steps.

    flat: where sync=standard stopped scaling (``saturation``). When the step that shows the candidates
    furthest apart lies on that plateau, the slower one is found slower, never the bottleneck: the
    pool or host was at its limit at that step too."""
    cs = [c for c in curves if c.steps]
    if len(cs) < 2:
        return None

    def gm(a: Curve, b: Curve) -> Optional[float]:
        r = ratios(a, b, metric)
        vals = [v for v in r.values() if v > 0]
        return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None

    # rank by each curve's mean log-ratio against all the others
    def score(c: Curve) -> float:
        gs = [g for g in (gm(c, o) for o in cs if o is not c) if g]
        return sum(math.log(g) for g in gs) / len(gs) if gs else 0.0

    ranked = sorted(cs, key=score)
    slow, fast = ranked[0], ranked[-1]
    factor = gm(fast, slow)
    if factor is None:
        return None
    per = ratios(fast, slow, metric)
    t = max(per, key=per.get)
    vs = {s.threads: s.value(metric) for s in slow.steps}
    vf = {s.threads: s.value(metric) for s in fast.steps}
    lo = min(per, key=per.get)
    who = {"metric": metric, "slower": slow.candidate, "slower_name": names.get(slow.candidate, slow.candidate),
           "faster": fast.candidate, "faster_name": names.get(fast.candidate, fast.candidate), "factor": factor}

    def at(*threads: int) -> Tuple[StepRef, ...]:
        return tuple(StepRef(c.config, c.candidate, n) for n in threads for c in (slow, fast))

    if per[t] > 1 + SAME and per[lo] < 1 - SAME:
        # each is ahead by more than a step can vary somewhere: a mean ratio near 1 would call them alike
        # (the lab's wide pool: capped log 36.8 -> 42.6 MiB/s, NVDIMM 30.7 -> 61.0 from 2 to 32 threads)
        return Finding(Kind.CROSSES, dict(who, slower_ahead_at=lo, slower_ahead=[vs[lo], vf[lo]],
                                          faster_ahead_at=t, faster_ahead=[vf[t], vs[t]]), at(lo, t))
    if factor <= 1 + SAME:
        return Finding(Kind.ALIKE, who, at(*sorted(per)))
    widest = dict(who, threads=t, values=[vs[t], vf[t]])
    if flat is not None and t >= flat.threads:
        last = max(per)
        return Finding(Kind.SLOWER, dict(widest, flat_threads=flat.threads,
                                         flat_steps=[[s.threads, s.value(metric)] for s in flat.steps],
                                         last=last, last_values=[vs[last], vf[last]]), at(*sorted({t, last})))
    return Finding(Kind.SLOWER_IS_BOTTLENECK, widest, at(t))
