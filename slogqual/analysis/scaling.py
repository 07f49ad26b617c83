"""Thread-scaling curves of pool scenarios: knee, SLOG benefit, bottleneck, and the verdict.

Pure functions over measured steps (no processes, no files). A curve is one pool configuration's
throughput at each thread step; the verdict compares the configurations the way the SDC 2019 talk
does: sync=standard is the ceiling, sync=always without a SLOG the floor, and the SLOG is judged by
where it lands between them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

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
    log: str  # none | single | mirror | stripe
    steps: List[Step] = field(default_factory=list)
    candidate: Optional[str] = None  # the log device of a single-SLOG curve, when candidates are compared

    @property
    def uses_slog(self) -> bool:
        return self.log != "none"


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


def _steps_words(steps: Sequence[Step], metric: str, unit: str) -> str:
    return ", ".join(f"{s.threads} threads {s.value(metric):.0f}" for s in steps) + f" {unit}"


def peak(steps: Sequence[Step], metric: str) -> Optional[Step]:
    return max(steps, key=lambda s: s.value(metric)) if steps else None


def ratios(a: Curve, b: Curve, metric: str) -> Dict[int, float]:
    """a/b at each thread count both curves measured."""
    bvals = {s.threads: s.value(metric) for s in b.steps}
    return {s.threads: s.value(metric) / bvals[s.threads]
            for s in a.steps if s.threads in bvals and bvals[s.threads] > 0}


def roles(curves: Sequence[Curve]) -> Dict[str, Curve]:
    """baseline (sync=standard, no log), slog (sync=always with a log), noslog (sync=always, none)."""
    found: Dict[str, Curve] = {}
    for c in curves:
        role = ("baseline" if c.sync == "standard" and not c.uses_slog else
                "slog" if c.sync == "always" and c.uses_slog else
                "noslog" if c.sync == "always" and not c.uses_slog else None)
        if role and role not in found:
            found[role] = c
    return found


def log_usage_problems(curve: Curve) -> List[str]:
    """Loud one-liners where the kstats contradict the configuration."""
    problems = []
    for s in curve.steps:
        if s.slog_bytes is None:
            continue
        if curve.uses_slog and curve.sync == "always" and s.slog_bytes == 0:
            to_pool = s.normal_bytes if s.normal_bytes is not None else "an unknown number of"
            problems.append(f"{curve.config}: the SLOG received no ZIL bytes at {s.threads} threads "
                            f"({to_pool} bytes went to the main pool): logbias=throughput, "
                            "writes at or above zfs_immediate_write_sz, or a misconfigured pool — "
                            "this step does not measure the SLOG")
        spilled = _spill_share(s)
        if curve.uses_slog and curve.sync == "always" and s.slog_bytes > 0 and spilled is not None \
                and spilled > SPILL_SHARE:
            who = f"{curve.config}" + (f" [{curve.candidate}]" if curve.candidate else "")
            problems.append(f"{who}: {spilled:.0%} of the ZIL's bytes at {s.threads} threads went to the main pool "
                            f"({s.normal_bytes} of {s.normal_bytes + s.slog_bytes}): the log vdev had no room for "
                            "them — the ZIL holds its blocks until their transaction group is synced and the space "
                            "is reusable two groups later, several groups' writes (~15 s at the default zfs_txg_timeout) — "
                            "so this step partly measures the data vdevs; a larger log device for this load")
        if not curve.uses_slog and s.slog_bytes > 0:
            problems.append(f"{curve.config}: {s.slog_bytes} ZIL bytes went to a log vdev in a configuration "
                            "without one: the pool is not what the scenario declared")
    return problems


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


def _mib(v: float) -> str:
    return f"{v:.0f}" if v >= 10 else f"{v:.1f}"


def _size_words(size: float) -> str:
    return f"{size / 1024:.0f} KiB" if size >= 1024 else f"{size:.0f} B"


def _log_too(matches_bw: bool, observed: Optional[float], sweep_mbps: Optional[float], bs_label: str) -> str:
    """Beside a pool/host verdict: measured evidence that the log device is at its own limit too (said,
    never as THE bottleneck), else that this run does not show the log's limit."""
    if matches_bw and observed is not None and sweep_mbps is not None:
        return (f"; the log vdev wrote {_mib(observed)} MiB/s there, at or above its QD1 sync-write sweep at "
                f"{bs_label} ({_mib(sweep_mbps)} MiB/s), so the log device is at its limit too")
    return ", so this run does not show the log device's limit"


@dataclass
class Verdict:
    sentence: str  # what the user acts on
    bottleneck: str  # in plain words
    benefit_at_peak: Optional[float] = None  # slog peak / noslog peak
    of_standard_at_peak: Optional[float] = None  # slog peak / baseline peak
    details: List[str] = field(default_factory=list)  # knees and other context
    problems: List[str] = field(default_factory=list)  # evidence contradicting the configuration


def verdict(curves: Sequence[Curve], metric: str, log_sweep_mbps: Optional[float] = None,
            log_sweep_lat_us: Optional[float] = None, bs_label: str = "", load_is_sync: bool = False,
            log: Optional[LogEvidence] = None) -> Verdict:
    """What the SLOG bought for this load, and what limits it.

    load_is_sync: the load's own writes are synchronous (O_DSYNC, as NFS clients ask): then
    sync=standard goes through the ZIL too and is no ZIL-free ceiling to compare with.

    log_sweep_mbps / log_sweep_lat_us: the log device's QD1 sweep at the scenario's write size, when
    known, to name the log device as the limit with numbers rather than by elimination.

    log: the same from the log vdev's own writes (log_evidence); it takes precedence, comparing the
    bandwidth iostat saw on the log vdev with the sweep at the size it was written with.
    """
    unit = "IOPS" if metric == "iops" else "MiB/s"
    r = roles(curves)
    slog, noslog, base = r.get("slog"), r.get("noslog"), r.get("baseline")
    if not slog or not slog.steps:
        return Verdict("No sync=always configuration with a SLOG was measured: nothing to judge.", "unknown")
    ps = peak(slog.steps, metric)
    pn = peak(noslog.steps, metric) if noslog and noslog.steps else None
    pb = peak(base.steps, metric) if base and base.steps and not load_is_sync else None
    benefit = ps.value(metric) / pn.value(metric) if pn and pn.value(metric) > 0 else None
    of_std = ps.value(metric) / pb.value(metric) if pb and pb.value(metric) > 0 else None
    details = []
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
        details.append(f"{base.config}: stopped scaling at {flat.threads} threads "
                       f"({_steps_words(flat.steps, metric, unit)})")
    k = knee(slog.steps, metric)
    if k:
        details.append(f"{slog.config}: knee at {k.threads} threads ({k.value:.0f} {unit})"
                       if k.saturated else f"{slog.config}: still scaling at {k.threads} threads ({k.value:.0f} {unit})")
    observed = ps.mbps
    if log is not None:
        log_sweep_mbps, log_sweep_lat_us = log.sweep.mbps, log.sweep.lat_mean_us
        bs_label = _size_words(log.sweep.size) + ("" if log.sweep.size & (log.sweep.size - 1) == 0 else
                                                  ", interpolated between swept sizes")
        observed = log.observed_mbps
    matches_bw = (observed is not None and log_sweep_mbps is not None and log_sweep_mbps > 0
                  and observed >= (1 - MATCH) * log_sweep_mbps
                  and (log is not None or observed <= (1 + MATCH) * log_sweep_mbps))
    if of_std is not None and of_std >= 1 - SAME:  # the log costs nothing, whatever its own limit
        bottleneck = "the pool, not the log: the SLOG keeps up with sync=standard"
    elif host_bound:  # never the log device while the ZIL-free run is flat at the same step
        bottleneck = (f"pool/host-bound: sync=standard, which writes no ZIL, stopped scaling at {flat.threads} "
                      f"threads ({_steps_words(flat.steps, metric, unit)}) and {slog.config} stopped scaling at "
                      f"{slog_flat.threads} threads (peak {ps.value(metric):.0f} {unit}"
                      + (f", {of_std:.0%} of sync=standard's peak" if of_std is not None else "")
                      + ") on that plateau: the pool or the host (CPU, initiator) caps both")
        bottleneck += _log_too(matches_bw, observed, log_sweep_mbps, bs_label)
    elif rising_on_plateau:
        bottleneck = (f"not reached: {slog.config} still grew at its last thread step ({ps.threads} threads, "
                      f"{ps.value(metric):.0f} {unit}); sync=standard, which writes no ZIL, stopped scaling at "
                      f"{flat.threads} threads ({_steps_words(flat.steps, metric, unit)}), the pool/host ceiling "
                      "it can reach at most; add thread steps")
        if matches_bw:
            bottleneck += _log_too(matches_bw, observed, log_sweep_mbps, bs_label)
    elif matches_bw and log is not None:
        bottleneck = (f"log device bandwidth: {_mib(observed)} MiB/s written to the log vdev"
                      + (f" in {_size_words(log.observed_size)} writes" if log.observed_size else "")
                      + f", at or above its QD1 sync-write sweep at {bs_label} ({_mib(log_sweep_mbps)} MiB/s)")
    elif matches_bw:
        bottleneck = (f"log device bandwidth: {ps.mbps:.0f} MiB/s, matching its sweep at {bs_label} "
                      f"({log_sweep_mbps:.0f} MiB/s)")
    elif k and k.saturated:
        bottleneck = f"the log device: {slog.config} stops scaling at {k.threads} threads"
        if log_sweep_lat_us:
            bottleneck += f" (its QD1 sync write at {bs_label} takes {log_sweep_lat_us:.0f} µs)"
    else:
        bottleneck = "not reached: throughput still grew at the last thread step; add steps"

    if benefit is not None and benefit < 1 - SAME:
        sentence = (f"For this workload the pool is faster with no SLOG: sync=always reaches "
                    f"{pn.value(metric):.0f} {unit} without it and {ps.value(metric):.0f} {unit} with it.")
    elif benefit is not None and benefit <= 1 + SAME:
        sentence = (f"The SLOG buys nothing here: sync=always peaks at {ps.value(metric):.0f} {unit} with it "
                    f"and {pn.value(metric):.0f} {unit} without.")
    elif benefit is not None:
        sentence = (f"The SLOG makes sync=always {benefit:.1f}x faster ({ps.value(metric):.0f} vs "
                    f"{pn.value(metric):.0f} {unit} at peak)")
        sentence += (f", reaching {of_std:.0%} of sync=standard." if of_std is not None else ".")
        if host_bound and of_std is not None:
            sentence = (sentence[:-1] + f" — which is itself flat from {flat.threads} threads: pool/host-bound, "
                        "not a limit of the log device.")
    else:
        sentence = f"sync=always with the SLOG peaks at {ps.value(metric):.0f} {unit} (no run without a SLOG to compare)."
    problems = [p for c in curves for p in log_usage_problems(c)]
    return Verdict(sentence=sentence, bottleneck=bottleneck, benefit_at_peak=benefit,
                   of_standard_at_peak=of_std, details=details, problems=problems)


def slower_candidate(curves: Sequence[Curve], names: Dict[Optional[str], str], metric: str,
                     flat: Optional[Flat] = None) -> Optional[str]:
    """With several log candidates measured under the same load: which one limits sync=always, in a
    sentence. Candidates are ranked by the geometric mean of their throughput ratios at the thread
    steps both measured — one step where both are pool-bound does not decide it, as a peak would. Curves
    that cross (each candidate more than SAME ahead at some step) are said to cross, with both steps.

    flat: where sync=standard stopped scaling (``saturation``). When the step that shows the candidates
    furthest apart lies on that plateau, the slower one is named slower, never the bottleneck: the
    pool or host was at its limit at that step too."""
    cs = [c for c in curves if c.steps]
    if len(cs) < 2:
        return None
    unit = "IOPS" if metric == "iops" else "MiB/s"

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
    name_s, name_f = names.get(slow.candidate, slow.candidate), names.get(fast.candidate, fast.candidate)
    per = ratios(fast, slow, metric)
    t = max(per, key=per.get)
    vs = {s.threads: s.value(metric) for s in slow.steps}
    vf = {s.threads: s.value(metric) for s in fast.steps}
    lo = min(per, key=per.get)
    if per[t] > 1 + SAME and per[lo] < 1 - SAME:
        # each is ahead by more than a step can vary somewhere: a mean ratio near 1 would call them alike
        # (the lab's wide pool: capped log 36.8 -> 42.6 MiB/s, NVDIMM 30.7 -> 61.0 from 2 to 32 threads)
        return (f"The log candidates' curves cross: {name_s} is faster at {lo} threads ({vs[lo]:.0f} vs "
                f"{vf[lo]:.0f} {unit}), {name_f} at {t} threads ({vf[t]:.0f} vs {vs[t]:.0f} {unit}); which one "
                f"limits sync=always depends on the load's thread count, so neither is named the bottleneck.")
    if factor <= 1 + SAME:
        return f"The log candidates perform alike under this load ({name_s}, {name_f}): neither is the bottleneck."
    figures = (f"sync=always with it reaches 1/{factor:.1f} of the throughput with {name_f} (geometric mean over "
               f"the thread steps; at {t} threads {vs[t]:.0f} vs {vf[t]:.0f} {unit})")
    if flat is not None and t >= flat.threads:
        last = max(per)
        return (f"The log device {name_s} is the slower one: {figures}. Not named the bottleneck: pool/host-bound — "
                f"sync=standard, which writes no ZIL, stopped scaling at {flat.threads} threads "
                f"({_steps_words(flat.steps, metric, unit)}), so at these steps the pool or host was at its limit "
                f"too (at {last} threads {vs[last]:.0f} vs {vf[last]:.0f} {unit}).")
    return f"The slower log device {name_s} is the bottleneck: {figures}."
