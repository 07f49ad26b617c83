"""The host's own ceiling (issue #37), from the host probe's measured steps: facts, no process, no file.

The probe ran the workload on a pool whose every vdev is a file in RAM. What it measured is not yet the
host's ceiling: every write into RAM is a CPU copy, which a real log device's DMA does not cost. So:

- the copies are taken out of the CPU: ``copy_s_per_io`` is what the vdevs' writes over the step (zpool
  iostat: writes and bytes a second, log and data vdevs) cost at the measured ``CopyCost``, per IO; the
  rest, ``zfs_cpu_s_per_io``, is ZFS's own work (the itx copy, the lwb, its checksum, the vdev queue), the
  load's and the kernel's — what stays with a real log. ``cpu_ceiling = cpus / zfs_cpu_s_per_io``.
- the copy is taken out of the time: each write waited for its commit's log block to be copied into RAM
  (``lwb_bytes`` at the copy cost); what is left of its mean time is the software path between a write and
  its log, ``path_us``; no log can give the writers more than ``writers / path`` (Little's law).

The ceiling is the least of the two: an upper bound for any log on this host, at this load's shape.
Batching is measured too: ``records_per_lwb``, the writes per log write at each thread count.

The log pass (``host-probe --log DEVICE``): the same load on a pool of RAM data files with the candidate as
its log. A real log's driver, interrupts and completions cost CPU per log write that a QD1 sweep does not
see at the pool's concurrency (the recorded lab draws: 99-756 µs an IO above the RAM-log probe's ZFS CPU at
≥ 90 % busy, where the log's sweeps measured 1-400 µs a write+flush; contrib/advisor_check/cpu.py). There
only the data files' writes are copies; what is left, ``zfs_cpu_s_per_io``, is ZFS's and this log's own, and
``cpus / zfs_cpu_s_per_io`` the host's ceiling with this log. Its time is the device's: no path from it.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import List, Optional, Sequence

from slogqual.results.host import CopyCost, HostStep

LOG_SECTION = "logs"
MIN_BASELINE_TICKS = 50  # a settle shorter than half a second a CPU gives no baseline worth subtracting
# A write that took longer than this met the kernel's I/O timeout (Linux's block layer and FreeBSD's nvme(4)
# both time a command out at 30 s, then abort it and reset the controller): the step measured the device's
# error handling, not the host. A write the timeout fired on took at least that long by construction. The recorded
# lab draws: every other recorded step's slowest write ≤ 6.8 s, a slowed host included; the emulated NVMe's stalls
# 31-93 s (log passes at 16 writers, the kernel log kept; 31.2 s where the reset ended it). tests/test_host_probe.py
# holds the margin over every recorded step.
STALLED_WRITE_S = 30.0


def stalled_write(longest_write_us: Optional[float]) -> bool:
    """A step's slowest write outlasted the kernel's I/O timeout (STALLED_WRITE_S): the one rule, for the host
    probe's steps and the scenario analysis's alike."""
    return longest_write_us is not None and longest_write_us >= STALLED_WRITE_S * 1e6


def is_stalled(step: HostStep) -> bool:
    """A write of the step outlasted the kernel's I/O timeout (stalled_write)."""
    return stalled_write(step.longest_write_us)


def derive(step: HostStep, copy: Optional[CopyCost], log_in_ram: bool = True) -> HostStep:
    """``step`` with its derived figures (module doc); a figure whose inputs are unknown stays None.
    ``log_in_ram`` False: the log pass's step (its log the candidate device: module doc): the log's
    writes are no copy to take out, and its time is the device's, so no software path is derived from it."""
    out = replace(step)
    out.stalled = is_stalled(step) if step.longest_write_us is not None else None
    if step.iops <= 0 or out.stalled:  # a stalled step is the device's timeout, no figure of the host's
        return out
    if step.cpu_busy is not None and step.cpus:
        out.cpu_s_per_io = step.cpu_busy * step.cpus / step.iops
    if step.log_writes_s and step.log_bytes_s:
        out.lwb_bytes = step.log_bytes_s / step.log_writes_s
        out.records_per_lwb = step.iops / step.log_writes_s
    elif step.lwbs and step.itx:
        out.records_per_lwb = step.itx / step.lwbs
    if step.commit_calls and step.commits:
        out.records_per_commit = step.commit_calls / step.commits
    if copy is not None and out.cpu_s_per_io is not None and step.log_writes_s is not None:
        ram_log = (step.log_writes_s or 0, step.log_bytes_s or 0) if log_in_ram else (0, 0)
        copies = copy.of(ram_log[0] + (step.data_writes_s or 0), ram_log[1] + (step.data_bytes_s or 0))
        out.copy_s_per_io = copies / step.iops
        out.zfs_cpu_s_per_io = max(out.cpu_s_per_io - out.copy_s_per_io, 1e-9)
        out.cpu_ceiling_iops = step.cpus / out.zfs_cpu_s_per_io
    if copy is not None and out.lwb_bytes is not None and log_in_ram:
        # a write waits for its own lwb's copy, and — as far as the CPUs were busy — behind the other copies
        # (the data vdevs' txg writes, other lwbs) that a real device's DMA would not put on a CPU
        own = copy.one(out.lwb_bytes)
        others = max(0.0, (out.copy_s_per_io or 0.0) - own) * (step.cpu_busy or 0.0)
        wait_us = (own + others) * 1e6
        # never below a tenth of the measured time: a copy cost fitted above the write's own time says the
        # fit, not the path, is wrong there
        out.path_us = max(step.lat_us - wait_us, step.lat_us * 0.1)
    return out


def uncontended_path(steps: Sequence[HostStep]) -> Optional[float]:
    """The software path of one writer alone, µs: the fewest-writer step's path, less the wait for CPUs its
    own other writers kept busy (a path measured with the CPUs saturated by N writers is N writers' CPU work
    in a row)."""
    paths = sorted((s for s in steps if s.path_us), key=lambda s: s.threads)
    if not paths:
        return None
    s = paths[0]
    share = (s.cpu_busy or 0.0) / (s.cpus or 1)
    return s.path_us / max(1.0, s.threads * share)


def ceilings(steps: List[HostStep]) -> List[HostStep]:
    """Each step's ceiling: the least of its CPU ceiling and its writers over the UNCONTENDED software path
    (the fewest-writer step's: at more writers the path measured is mostly the wait for a CPU the RAM copies
    kept busy, which the CPU ceiling already counts)."""
    path = uncontended_path(steps)
    out = []
    for s in steps:
        s = replace(s)
        if s.stalled:
            out.append(s)
            continue
        if path:
            s.path_ceiling_iops = s.threads / (path / 1e6)
        limits = [c for c in (s.cpu_ceiling_iops, s.path_ceiling_iops) if c]
        s.ceiling_iops = min(limits) if limits else None
        out.append(s)
    return out


def fit_copy(sizes: Sequence[int], ios: Sequence[int], cpu_s: Sequence[float]) -> CopyCost:
    """The copy cost ``a + b * size`` through the per-write CPU of the runs at each size (least squares on
    two or more sizes; at one size all of it per byte)."""
    per = [c / n for c, n in zip(cpu_s, ios) if n > 0]
    xs = [float(s) for s, n in zip(sizes, ios) if n > 0]
    if len(xs) >= 2 and len(set(xs)) >= 2:
        mx, my = sum(xs) / len(xs), sum(per) / len(per)
        b = sum((x - mx) * (y - my) for x, y in zip(xs, per)) / sum((x - mx) ** 2 for x in xs)
        a = my - b * mx
        if b < 0:  # noise at two close sizes: all per write
            a, b = my, 0.0
        a = max(a, 0.0)
    else:
        a, b = 0.0, (per[0] / xs[0] if per and xs else 0.0)
    return CopyCost(per_write_s=a, per_byte_s=b, sizes=list(sizes), ios=list(ios), cpu_s=list(cpu_s))


def at_threads(steps: Sequence[HostStep], threads: int) -> Optional[HostStep]:
    """The probe's step at ``threads``; between two steps the log-log mix of their figures; outside the
    probed counts None (a ceiling is not extrapolated)."""
    pts = sorted((s for s in steps if s.ceiling_iops), key=lambda s: s.threads)
    for s in pts:
        if s.threads == threads:
            return s
    for a, b in zip(pts, pts[1:]):
        if a.threads < threads < b.threads:
            f = (math.log(threads) - math.log(a.threads)) / (math.log(b.threads) - math.log(a.threads))

            def mix(x, y):
                return None if x is None or y is None else x + (y - x) * f
            return replace(a, threads=threads, iops=mix(a.iops, b.iops), ceiling_iops=mix(a.ceiling_iops, b.ceiling_iops),
                           records_per_lwb=mix(a.records_per_lwb, b.records_per_lwb), path_us=mix(a.path_us, b.path_us),
                           records_per_commit=mix(a.records_per_commit, b.records_per_commit),
                           zfs_cpu_s_per_io=mix(a.zfs_cpu_s_per_io, b.zfs_cpu_s_per_io),
                           cpu_ceiling_iops=mix(a.cpu_ceiling_iops, b.cpu_ceiling_iops),
                           path_ceiling_iops=mix(a.path_ceiling_iops, b.path_ceiling_iops))
    return None


def steps_from(steps: List[HostStep], copy: Optional[CopyCost], log_in_ram: bool = True) -> List[HostStep]:
    return ceilings([derive(s, copy, log_in_ram) for s in steps])


def best_of(passes: Sequence[Sequence[HostStep]]) -> List[HostStep]:
    """Each thread count's step from the pass whose ceiling there is highest (a ceiling is what the host can
    do; a pass that ran lower met a host not yet warm or busy with something else: three probes in one lab
    guest ran 1,159 / 1,289 / 1,420 IOPS at one writer, the first pass lowest), with the pass's number and
    every pass's ceiling. A stalled step has no ceiling: another pass's is kept where one has. One pass: its steps
    as they are."""
    if len(passes) <= 1:
        return [replace(s) for s in (passes[0] if passes else [])]
    counts = sorted({s.threads for p in passes for s in p})
    out = []
    for t in counts:
        found = [(n, s) for n, p in enumerate(passes, 1) for s in p if s.threads == t]
        n, best = max(found, key=lambda ns: (ns[1].ceiling_iops or 0.0, ns[0]))
        out.append(replace(best, probe_pass=n, pass_ceilings_iops=[s.ceiling_iops for _, s in found]))
    return out


def write_cpu(idle_busy: int, idle_total: int, busy: int, total: int, cpus: int, ios: int,
              hz: int) -> Optional[dict]:
    """The CPU one write+flush of a QD1 sweep point took on this host, from /proc/stat's ticks: over the
    point (``busy`` of ``total`` ticks, all CPUs) less what the host was busy with anyway, the share it
    was busy over the quiet settle before the point (``idle_busy`` of ``idle_total``). What the device's
    driver and its interrupts cost (and, in the lab, the emulation of the device on the guest's vCPU): the
    CPU a real log takes from ZFS beside the probe's ceiling, which ran its log in RAM. None without ticks
    or IOs."""
    if ios <= 0 or total <= 0 or cpus <= 0:
        return None
    baseline = idle_busy / idle_total if idle_total >= MIN_BASELINE_TICKS * cpus else None
    own = busy - (baseline or 0.0) * total
    return {"busy_s": round(busy / hz, 3), "window_s": round(total / hz / cpus, 3), "cpus": cpus,
            "busy_share": round(busy / total, 4),
            "baseline_share": round(baseline, 4) if baseline is not None else None,
            "s_per_io": round(max(own, 0.0) / hz / ios, 9), "ios": ios,
            "basis": "system-less-baseline" if baseline is not None else "system"}
