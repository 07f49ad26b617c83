"""The sync-write sweep: QD1 synchronous writes at every IO size, one engine run each.

Two engines: the pair engine (slogqual.tools.pairbench, the default in flush mode on files and block
devices) times every write and its flush, so every figure is exact (lat_basis "pair"); fio (--mode dsync,
NBD targets, or --engine fio) times them separately (lat_basis "write+flush": percentiles are bounds).
Where the pair engine cannot be had (none installed, no cc to build it), the default measures with fio
and says so: params.pair_unavailable, a note, and one line on stderr.

The result document is saved (atomically) before the first size and after every
size, so a killed run loses at most the size in progress and can be resumed.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple

from slogqual import environment, limits
from slogqual.errors import MeasurementError, RefusedError, ResultWriteError, SlogqualError, UsageError
from slogqual.progress import Progress
from slogqual.results import schema
from slogqual.results import (
    LAT_BASIS_COMPLETION,
    LAT_BASIS_FLUSH_BOUND,
    LAT_BASIS_PAIR,
    STATUS_COMPLETE,
    STATUS_FAILED,
    STATUS_INTERRUPTED,
    STATUS_RUNNING,
    LatencyStats,
    SweepPoint,
    SweepResult,
    load_sweep,
    save_sweep,
)
from slogqual.sweep.target import KIND_BLOCK, KIND_NBD, KIND_SCRATCH, Target
from slogqual.sweep import target as targets
from slogqual.analysis import overtime, percentiles, precision
from slogqual.report import powerloss
from slogqual.analysis import wear
from slogqual.analysis import host as host_analysis
from slogqual.kernel import procfs
from slogqual.report import sweep as sweep_words
from slogqual.tools import fio, pairbench
from slogqual.units import MAX_SUSTAIN_BYTES, MiB, size_label

# Below this many IOs a point's percentiles mean little; the point says so.
FEW_IOS = 10

ENGINE_AUTO, ENGINE_PAIR, ENGINE_FIO = "auto", "pair", "fio"
ENGINES = (ENGINE_PAIR, ENGINE_FIO)

DEFAULT_MAX_RUNTIME_S = 30.0  # --precision: the most one size may run
SUSTAIN_CAP_S = 24 * 3600.0  # --sustain BYTES: the most it may run
MAX_RUNTIME_S = limits.RUNTIME_S.hi  # --runtime, --max-runtime, --sustain DURATION: a day per size at most
MAX_SETTLE_S = limits.SETTLE_S.hi  # --settle: an hour (beyond it time.sleep overflows on the way)


@dataclass
class SweepParams:
    mode: str = "flush"
    sizes: List[int] = field(default_factory=list)
    runtime_s: float = 1.0
    settle_s: float = 1.0
    engine: str = ENGINE_AUTO  # auto: pair in flush mode on a file or block device, fio otherwise
    precision: Optional[float] = None  # --precision: relative half-width of the pair mean's 95 % interval
    max_runtime_s: float = DEFAULT_MAX_RUNTIME_S  # ... and the most one size may run for it
    sustain_s: Optional[float] = None  # --sustain DURATION: one size for this long
    sustain_bytes: Optional[int] = None  # --sustain BYTES: one size until this many bytes are written
    interval_ms: float = overtime.DEFAULT_INTERVAL_MS  # latency over time: aggregate per interval
    # auto's question, asked once per run: why the pair engine cannot be had here ("": it can; None: not asked)
    _pair_unavailable: Optional[str] = field(default=None, init=False, repr=False, compare=False)
    _fallback_told: bool = field(default=False, init=False, repr=False, compare=False)

    @property
    def sustained(self) -> bool:
        return self.sustain_s is not None or self.sustain_bytes is not None

    @property
    def pair_only(self) -> List[str]:
        """The options given that only the pair engine measures (--precision, --sustain): with them a
        missing engine is refused without offering --engine fio, which they refuse too."""
        return [name for name, given in (("--precision", self.precision is not None), ("--sustain", self.sustained))
                if given]

    def engine_for(self, target: Target) -> str:
        """The engine that measures target: ENGINE_PAIR or ENGINE_FIO."""
        return self.engine_for_kind(target.kind)

    def engine_for_kind(self, kind: str) -> str:
        if self.engine != ENGINE_AUTO:
            return self.engine
        return ENGINE_FIO if self.mode != "flush" or kind == KIND_NBD or self.fallback(kind) else ENGINE_PAIR

    def fallback(self, kind: str) -> str:
        """Why auto measures a target of this kind with fio where it would use the pair engine: the
        engine cannot be had here (none installed or built before, no cc to build it, or cc failing);
        "" when auto uses the pair engine, or fio anyway. Asked once (building the engine when cc is
        there, as its first use would). --precision and --sustain need the pair engine: for them auto
        never falls back (its missing engine is then the error, naming what to install)."""
        if self.engine != ENGINE_AUTO or self.mode != "flush" or kind == KIND_NBD or self.precision is not None \
                or self.sustained:
            return ""
        if self._pair_unavailable is None:
            self._pair_unavailable = pairbench.unavailable()
        return self._pair_unavailable

    def to_dict(self, target: Target) -> Dict[str, Any]:
        d = self._base_dict(target)
        if d["engine"] == ENGINE_PAIR:
            d["interval_ms"] = self.interval_ms
        elif self.fallback(target.kind):
            d["pair_unavailable"] = self.fallback(target.kind)  # auto measured with fio: why not the pair engine
        if self.precision is not None:
            d["precision"] = self.precision
            d["max_runtime_s"] = self.max_runtime_s
        if self.sustained:
            d["sustain"] = {"duration_s": self.sustain_s, "bytes": self.sustain_bytes}
        return d

    def _base_dict(self, target: Target) -> Dict[str, Any]:
        if self.engine_for(target) == ENGINE_PAIR:
            engine = ENGINE_PAIR
        else:
            engine = "nbd" if target.kind == KIND_NBD else "psync"  # fio's ioengine, as before the pair engine
        flush = ("fsync (NBD_CMD_FLUSH)" if target.kind == KIND_NBD else "fdatasync")
        if engine == ENGINE_PAIR and os.uname().sysname == "FreeBSD":
            flush = "DIOCGFLUSH" if target.kind == KIND_BLOCK else "fsync"
        return {
            "mode": self.mode,
            "sizes": list(self.sizes),
            "runtime_s": self.runtime_s,
            "settle_s": self.settle_s,
            "engine": engine,
            "direct": target.direct,
            "iodepth": 1,
            "numjobs": 1,
            "offsets": "random, size-aligned",
            "region_bytes": target.size,
            "flush": flush if self.mode == "flush" else "O_DSYNC",
        }

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "SweepParams":
        try:
            sustain = d.get("sustain") or {}
            params = cls(mode=d["mode"], sizes=list(d["sizes"]), runtime_s=float(d["runtime_s"]),
                         settle_s=float(d.get("settle_s", 1.0)),
                         # a document from before the pair engine names fio's ioengine (psync, nbd) here
                         engine=ENGINE_PAIR if d.get("engine") == ENGINE_PAIR else ENGINE_FIO,
                         precision=None if d.get("precision") is None else float(d["precision"]),
                         max_runtime_s=float(d.get("max_runtime_s", DEFAULT_MAX_RUNTIME_S)),
                         sustain_s=None if sustain.get("duration_s") is None else float(sustain["duration_s"]),
                         sustain_bytes=None if sustain.get("bytes") is None else int(sustain["bytes"]),
                         interval_ms=float(d.get("interval_ms", overtime.DEFAULT_INTERVAL_MS)))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise UsageError(f"the sweep's params are malformed ({exc!r})") from None
        params.validate()
        return params

    def validate(self) -> None:
        """What the command line checks, for parameters read from a file (--resume): refused here, before
        any claim or write, instead of by fio after the result was saved as running."""
        if self.mode not in fio.MODES:
            raise UsageError(f"unknown mode {self.mode!r}: use one of {', '.join(fio.MODES)}")
        if not self.sizes or any(isinstance(s, bool) or not isinstance(s, int) or s <= 0 or s % 512
                                 or s > MAX_RESUME_SIZE for s in self.sizes):
            raise UsageError(f"sizes {self.sizes!r}: each a whole number of bytes, a multiple of 512, at most 1 GiB")
        if not (math.isfinite(self.runtime_s) and self.runtime_s > 0):
            raise UsageError(f"runtime {self.runtime_s!r}: must be a finite number of seconds above 0")
        if not (math.isfinite(self.settle_s) and self.settle_s >= 0):
            raise UsageError(f"settle {self.settle_s!r}: must be a finite, non-negative number of seconds")
        if self.engine not in ENGINES + (ENGINE_AUTO,):
            raise UsageError(f"unknown engine {self.engine!r}: use one of {', '.join(ENGINES)}")
        if self.engine == ENGINE_PAIR and self.mode != "flush":
            raise UsageError(f"--engine pair measures write+flush pairs: it does --mode flush only, not {self.mode}")
        pair_only = self.pair_only
        if pair_only and (self.mode != "flush" or self.engine == ENGINE_FIO):
            raise UsageError(f"{' and '.join(pair_only)} need the pair engine (--mode flush, not --engine fio)")
        if self.precision is not None and not (math.isfinite(self.precision) and 0 < self.precision < 1):
            raise UsageError(f"precision {self.precision!r}: a relative half-width above 0 and below 100 %, "
                             "e.g. 2%")
        if not (math.isfinite(self.max_runtime_s) and self.max_runtime_s >= self.runtime_s):
            raise UsageError(f"--max-runtime {self.max_runtime_s!r} s must be finite and at least --runtime "
                             f"({self.runtime_s:g} s)")
        if self.sustain_s is not None and self.sustain_bytes is not None:
            raise UsageError("--sustain is a duration or a byte count, not both")
        if self.sustain_s is not None and not (math.isfinite(self.sustain_s) and self.sustain_s > 0):
            raise UsageError(f"--sustain {self.sustain_s!r} s: must be a finite duration above 0")
        if self.sustain_bytes is not None and (isinstance(self.sustain_bytes, bool) or self.sustain_bytes <= 0):
            raise UsageError(f"--sustain {self.sustain_bytes!r} bytes: must be above 0")
        if self.sustained and len(self.sizes) != 1:
            raise UsageError(f"--sustain writes one size, not {len(self.sizes)} (give one with --sizes, "
                             "default 128k)")
        if self.sustained and self.precision is not None:
            raise UsageError("--sustain runs for a duration or a byte count; --precision does not apply")
        for name, value, top in (("--runtime", self.runtime_s, MAX_RUNTIME_S), ("--settle", self.settle_s, MAX_SETTLE_S),
                                 ("--max-runtime", self.max_runtime_s, MAX_RUNTIME_S),
                                 ("--sustain", self.sustain_s or 0, MAX_RUNTIME_S)):
            if value > top:
                raise UsageError(f"{name} {value:g} s: at most {top:g} s")
        if self.sustain_bytes is not None and self.sustain_bytes > MAX_SUSTAIN_BYTES:
            raise UsageError(f"--sustain {self.sustain_bytes} bytes: at most {MAX_SUSTAIN_BYTES} (1 PiB)")
        if not (math.isfinite(self.interval_ms)
                and overtime.MIN_INTERVAL_MS <= self.interval_ms <= overtime.MAX_INTERVAL_MS):
            raise UsageError(f"--interval {self.interval_ms!r} ms: allowed {overtime.MIN_INTERVAL_MS:g} to "
                             f"{overtime.MAX_INTERVAL_MS:g} ms")
        longest = self.longest_s()
        if overtime.interval_count(longest, self.interval_ms) > overtime.MAX_INTERVALS:
            raise UsageError(f"--interval {self.interval_ms:g} ms: a run of {longest:g} s would make more than "
                             f"{overtime.MAX_INTERVALS} intervals; give at least "
                             f"{longest * 1000 / overtime.MAX_INTERVALS:g} ms")

    def longest_s(self) -> float:
        """The longest one size may run: what bounds its intervals."""
        if self.sustain_s is not None:
            return self.sustain_s
        if self.sustain_bytes is not None:
            return SUSTAIN_CAP_S
        return max(self.runtime_s, self.max_runtime_s if self.precision is not None else 0)

    def check_target(self, target: Target) -> None:
        """A mode the target's engine cannot do is bad input, found before anything is written."""
        if self.mode == "dsync" and target.kind == KIND_NBD:
            raise UsageError(f"{target.path}: --mode dsync needs a file or block device: fio's nbd engine has no "
                             "FUA/O_DSYNC writes (use --mode flush)")
        if self.engine == ENGINE_PAIR and target.kind == KIND_NBD:
            raise UsageError(f"{target.path}: --engine pair needs a file or block device (NBD targets use fio)")
        if (self.precision is not None or self.sustained) and target.kind == KIND_NBD:
            raise UsageError(f"{target.path}: --precision and --sustain need the pair engine, which needs a file "
                             "or block device (NBD targets use fio)")


MAX_RESUME_SIZE = 1 << 30  # --allow-large lets sizes above 8 MiB through; nothing sane is above this


# --- device hooks: identity and the safety interlocks (slogqual.device) ----------------------

@contextlib.contextmanager
def claim_target(target: Target, destroy_data: bool) -> Iterator[None]:
    """Hold the right to write target destructively for the duration, or refuse.

    slogqual.device.claim_for_writing runs every interlock (mounted, swap, holders, root,
    imported pool, signatures) and holds the per-device lock and an O_EXCL open until the
    sweep ends; signatures it was told to overwrite become notes of the result. A block
    device additionally needs --destroy-data even when it carries no signature.
    """
    from slogqual import device

    with device.claim_for_writing(target.path, destroy_data) as claim:
        if target.kind == KIND_BLOCK and not destroy_data:
            raise RefusedError(f"refusing to write {target.path}: a sweep destroys the data on a block device; "
                               "name it with --destroy-data to confirm")
        target.notes.extend(n for n in claim.notes if n not in target.notes)
        yield


def claim_all(stack: contextlib.ExitStack, tray: List[Target], destroy_data: bool) -> List[Tuple[Target, RefusedError]]:
    """Claim every target of a tray before any is written: each claim that succeeds is entered on
    ``stack`` and held until the stack closes; the refused targets are returned with their refusals, in
    the tray's order. The caller decides: refuse the whole run (close the stack, nothing was written) or
    sweep the claimed ones (--skip-refused)."""
    refused: List[Tuple[Target, RefusedError]] = []
    for target in tray:
        try:
            stack.enter_context(claim_target(target, destroy_data))
        except RefusedError as exc:
            refused.append((target, exc))
    return refused


def same_target(tray: List[Optional[Target]], done: str = "swept") -> None:
    """A target named twice (under two names: a symlink, a by-id path) is bad input: its second claim
    would be refused by the first, and one device is not two units."""
    from slogqual.device import interlock

    seen: Dict[str, str] = {}
    for target in tray:
        if target is None:
            continue
        try:
            key = interlock.lock_name(target.path)
        except OSError:
            continue  # gone already: its claim says so
        if key in seen:
            raise UsageError(f"{target.path}: named twice (also as {seen[key]}); a target is {done} once")
        seen[key] = target.path


def tray_refusal(refused: List[Tuple[Target, RefusedError]], tray: List[Target],
                 does: str = "sweeps") -> RefusedError:
    """One line for a tray refused as a whole: every refusal, and the targets not measured because of them
    (``does``: what --skip-refused does with the rest, "sweeps" or "qualifies")."""
    line = "; ".join(str(exc) for _, exc in refused)
    spared = [t.path for t in tray if all(t is not r for r, _ in refused)]
    if spared:
        line += (f"; nothing written, not to {', '.join(spared)} either (a tray is all or nothing: "
                 f"--skip-refused {does} the rest)")
    return RefusedError(line)


def describe_target(target: Target) -> Optional[Dict[str, Any]]:
    """The device identity record (slogqual.device/1, as `slogqual inspect --json` prints it)."""
    from slogqual import device

    try:
        return device.identify(target.path).to_dict()
    except Exception as exc:  # identification must not cost the measurement; say why it is missing
        return {"schema": schema.DEVICE, "path": target.path, "error": f"identification failed: {exc}",
                "warnings": []}


def thermal_snapshot(target: Target):
    """The device's thermal state now (slogqual.device.thermal), or None for files, loop devices, NBD
    and anything with no hardware to ask; a tool failing gives a snapshot that says why, never an error."""
    if target.kind != KIND_BLOCK:
        return None
    from slogqual.device import thermal

    return thermal.snapshot(target.path)


def device_warnings(device: Optional[Dict[str, Any]]) -> List[str]:
    return list((device or {}).get("warnings") or [])


# --- measurement ------------------------------------------------------------------------------

def _capped(value: Optional[float], ceiling: float) -> Optional[float]:
    # fio's percentiles are histogram bucket values (about 1.5 % wide) and can sit a
    # little above the exact maximum it also reports; no percentile exceeds the max.
    return None if value is None else min(value, ceiling)


def _stats(lat: fio.FioLatency) -> LatencyStats:
    return LatencyStats(mean=lat.mean, p50=_capped(lat.pct(50.0), lat.max), p99=_capped(lat.pct(99.0), lat.max),
                        p999=_capped(lat.pct(99.9), lat.max), max=lat.max, min=lat.min, stddev=lat.stddev)


def _bound(write: fio.FioLatency, flush: fio.FioLatency, q: float) -> Optional[float]:
    # Union bound: P(W+F > a+b) <= P(W > a) + P(F > b); with a, b the ((1+q)/2)-quantiles
    # the right side is 1-q, so a+b bounds the q-quantile of W+F from above.
    half = (100.0 + q) / 2.0
    a, b = write.pct(half), flush.pct(half)
    return None if a is None or b is None else a + b


def point_from_fio(size: int, r: fio.FioWriteResult, started: str) -> SweepPoint:
    if r.sync_lat is not None:
        w, f = r.write_lat, r.sync_lat
        top = w.max + f.max
        lat = LatencyStats(mean=w.mean + f.mean, p50=_capped(_bound(w, f, 50.0), top),
                           p99=_capped(_bound(w, f, 99.0), top), p999=_capped(_bound(w, f, 99.9), top), max=top)
        point = SweepPoint(size=size, ios=r.ios, lat_us=lat, iops=r.iops, mbps=r.bw_bytes / MiB,
                           runtime_ms=r.runtime_ms, lat_basis=LAT_BASIS_FLUSH_BOUND,
                           write_lat_us=_stats(w), flush_lat_us=_stats(f), started=started)
    else:
        point = SweepPoint(size=size, ios=r.ios, lat_us=_stats(r.write_lat), iops=r.iops,
                           mbps=r.bw_bytes / MiB, runtime_ms=r.runtime_ms,
                           lat_basis=LAT_BASIS_COMPLETION, started=started)
    if r.ios < FEW_IOS:
        point.notes.append(f"only {r.ios} IOs: percentiles are not meaningful; raise --runtime")
    return point


def _exact(s: pairbench.Series) -> LatencyStats:
    x = percentiles.from_moments(s.n, s.total, s.squares, s.min, s.max, s.percentiles, 1000)  # ns -> µs
    return LatencyStats(mean=x.mean, min=x.min, max=x.max, stddev=x.stddev, **x.percentiles)


def point_from_pair(size: int, r: pairbench.PairResult, started: str,
                    interval_ms: float = overtime.DEFAULT_INTERVAL_MS) -> SweepPoint:
    """A point of the pair engine from the summaries it computed over every IO: every figure (pair,
    write, flush) exact, the batch-means 95 % interval of the pair mean, and latency over time per
    interval_ms. The same figures, to the last bit, that percentiles.summarize, precision.mean_interval
    and overtime.aggregate give on the raw samples (tests/test_pair_summaries.py)."""
    elapsed_s = r.elapsed_ns / 1e9
    pair = r.series["pair"]
    point = SweepPoint(size=size, ios=r.ios, lat_us=_exact(pair), iops=r.ios / elapsed_s,
                       mbps=r.bytes_written / elapsed_s / MiB, runtime_ms=r.elapsed_ns / 1e6,
                       lat_basis=LAT_BASIS_PAIR, write_lat_us=_exact(r.series["write"]),
                       flush_lat_us=_exact(r.series["flush"]), started=started)
    interval = precision.from_batch_sums(r.batches.sums, r.batches.per, pair.total, pair.n, 1000)
    if interval is not None:
        point.mean_ci95_us = interval.to_dict()
    t = r.intervals
    point.over_time = overtime.from_sums(interval_ms, t.end_ns, size, t.ios, t.sums, t.p99, t.max).to_dict()
    if r.ios < FEW_IOS:
        point.notes.append(f"only {r.ios} IOs: percentiles are not meaningful; raise --runtime")
    return point


def point_cpu(quiet: Optional[procfs.CpuTimes], before: Optional[procfs.CpuTimes],
              after: Optional[procfs.CpuTimes], ios: int) -> Optional[Dict[str, Any]]:
    """The host's CPU per write+flush of a point (analysis.host.write_cpu); None without /proc/stat."""
    if quiet is None or before is None or after is None:
        return None
    settled, measured = before - quiet, after - before
    return host_analysis.write_cpu(settled.busy, settled.total, measured.busy, measured.total, after.cpus, ios,
                                   procfs.USER_HZ)


def settle(seconds: float, stop: Optional[threading.Event] = None) -> None:
    """diskinfo's T0(): flush dirty data system-wide and let the device go idle. ``stop`` (a unit of a
    parallel run) cuts the pause as an interrupt cuts a lone run's sleep."""
    os.sync()
    if seconds > 0:
        if stop is None:
            time.sleep(seconds)
        elif stop.wait(seconds):
            raise KeyboardInterrupt
        os.sync()


WATCH_INTERVAL_S = 0.1  # how often the target's identity is looked at while an engine writes it


class TargetWatch:
    """The target's identity (device, inode, size: target.identity) as the run found it, looked at again
    every WATCH_INTERVAL_S while an engine writes (``with watch:``) and after every size (``check``).

    Polling matters: a regular file truncated under the run is grown back by the engine as soon as it
    writes near the old end, so a look only between sizes can find the size it started with. The poll
    stats the path only (a disk's kernel size is read between sizes: on FreeBSD that is a diskinfo)."""

    def __init__(self, target: Target, interval_s: float = WATCH_INTERVAL_S):
        self.target = target
        self.interval_s = interval_s
        self.changes: List[str] = []
        try:
            self.start = targets.identity(target, holes=True)
        except (OSError, SlogqualError):  # nothing to compare against: the engine's errors say the rest
            self.start = None
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def check(self, kernel_size: bool = True) -> List[str]:
        """What changed since the start (the first change seen, kept even when undone since); [] if nothing.
        ``kernel_size`` (between sizes): a disk's size from the kernel and a file's holes too."""
        if self.start is None:
            return []
        try:
            now = targets.identity(self.target, kernel_size, holes=kernel_size)
        except FileNotFoundError:
            now = None
        except (OSError, SlogqualError):  # a transient failure to look is not a change
            return self.changes
        found = targets.identity_changes(self.start, now)
        if found and not self.changes:
            self.changes = found
        return self.changes

    def _poll(self) -> None:
        while not self._stop.wait(self.interval_s) and not self.check(kernel_size=False):
            pass

    def __enter__(self) -> "TargetWatch":
        if self.start is not None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._poll, name="slogqual-target-watch", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None


_TOLD = threading.Lock()  # the units of a --parallel run share their params: one of them says the fallback


def fallback_note(why: str) -> str:
    """The words for a sweep that auto measured with fio (why: SweepParams.fallback)."""
    return (f"measured with fio: {why}; fio times each write and its flush apart, so write+flush percentiles "
            "and max are upper bounds (marked *, the mean exact); cc or a wheel carrying the engine gives exact "
            "figures")


class SyncWriteSweep:
    """Measure one target at every size of params, saving the result after each size."""

    def __init__(self, target: Target, params: SweepParams, output: str,
                 progress: Optional[Progress] = None, result: Optional[SweepResult] = None,
                 fio_version: str = "", argv: Optional[List[str]] = None, engine_version: str = "",
                 stop: Optional[threading.Event] = None):
        self.target = target
        self.stop = stop  # set: stop as an interrupt would (a sweep in a worker thread of slogqual.sweep.at_once)
        self.params = params
        self.output = output
        self.progress = progress or Progress(quiet=True)
        self.fio_version = fio_version
        self.argv = argv
        self.result = result
        self.engine = params.engine_for(target)
        # every pair-engine result records the engine's version, whoever builds the document (a qualification
        # and a scenario's log sweeps made their own and recorded none)
        self.engine_version = engine_version or (pairbench.check_version(fio_instead=not self.params.pair_only).text
                                                if self.engine == ENGINE_PAIR else "")

    def _new_result(self) -> SweepResult:
        device = describe_target(self.target)
        env = environment.collect(self.fio_version, self.argv)
        if self.engine == ENGINE_PAIR:
            env["pairbench_version"] = self.engine_version
        return SweepResult(
            target=self.target.to_dict(),
            params=self.params.to_dict(self.target),
            environment=env,
            device=device,
            notes=list(self.target.notes),
            warnings=device_warnings(device),
        )

    def _job(self, size: int) -> fio.FioJob:
        if self.target.kind == KIND_NBD:
            return fio.FioJob(bs=size, runtime_s=self.params.runtime_s, mode=self.params.mode, uri=self.target.path)
        return fio.FioJob(bs=size, runtime_s=self.params.runtime_s, mode=self.params.mode,
                          filename=self.target.path, region_bytes=self.target.size, direct=self.target.direct)

    def _measure(self, size: int, started: str) -> SweepPoint:
        if self.engine == ENGINE_PAIR:
            return self._measure_pair(size, started)
        return point_from_fio(size, fio.run_job(self._job(size)), started)

    def _measure_pair(self, size: int, started: str) -> SweepPoint:
        p = self.params
        runtime = p.runtime_s
        if p.sustained:
            runtime = p.sustain_s if p.sustain_s is not None else SUSTAIN_CAP_S
        job = pairbench.PairJob(filename=self.target.path, bs=size, region_bytes=self.target.size,
                                runtime_s=runtime, direct=self.target.direct, max_bytes=p.sustain_bytes or 0,
                                precision=p.precision, max_runtime_s=p.max_runtime_s, interval_ms=p.interval_ms)
        r = pairbench.run_job(job)  # with --precision the engine runs until the interval is narrow enough
        point = point_from_pair(size, r, started, p.interval_ms)
        if p.precision is not None:
            achieved = point.mean_ci95_us["relative"] if point.mean_ci95_us else None
            met = achieved is not None and achieved <= p.precision
            point.precision = {"target": p.precision, "achieved": achieved, "met": met, "rounds": r.rounds,
                               "max_runtime_s": p.max_runtime_s}
            if not met:
                got = "no interval (too few IOs)" if achieved is None else f"±{achieved:.1%}"
                point.notes.append(f"--precision {p.precision:.1%} not reached within {p.max_runtime_s:g} s: "
                                   f"{got} after {r.elapsed_ns / 1e9:.1f} s")
        if p.sustained:
            point.collapse = sweep_words.collapse_dict(overtime.collapse(overtime.OverTime.from_dict(point.over_time),
                                                                         size))
        return point

    def _save(self, result: SweepResult) -> None:
        """Rewrite the result file; if that fails, the run is over: failed, with the reason, in memory."""
        try:
            save_sweep(self.output, result)
        except OSError as exc:
            result.status = STATUS_FAILED
            result.error = f"cannot write the result file {self.output}: {exc.strerror or exc}"
            raise ResultWriteError(result.error, result.to_dict()) from None

    def _target_changed(self, result: SweepResult, size: int, changed: List[str]) -> None:
        """The target is not the one the run started on: a warning in the document and on stderr, and
        the run failed with that as its error. The point of ``size`` was measured on a target that
        changed under it and is not kept; the points before it are."""
        what = "; ".join(changed)
        kept = len(result.points)
        warning = (f"{self.target.path} changed under the run while {size_label(size)} was measured: {what}; "
                   f"the {size_label(size)} point is discarded, the {kept} measured before it are kept")
        result.warnings.append(warning)
        self.progress.say(f"WARNING: {warning}")
        result.status = STATUS_FAILED
        result.error = (f"{self.target.path}: the target changed under the run ({what}) while "
                        f"{size_label(size)} was measured; {kept} point(s) kept")

    def _tell_fallback(self, result: SweepResult) -> None:
        """Auto measures with fio because the pair engine cannot be had: the document's notes say so and
        what it costs (a prebuilt document, a qualification's, too), stderr once per run."""
        why = self.params.fallback(self.target.kind)
        if not why:
            return
        note = fallback_note(why)
        if note not in result.notes:
            result.notes.append(note)
        with _TOLD:
            told, self.params._fallback_told = self.params._fallback_told, True
        if not told:
            self.progress.say(f"note: {note}")

    def run(self) -> SweepResult:
        if self.result is None:
            self.result = self._new_result()
        result = self.result
        if self.engine == ENGINE_PAIR and not result.environment.get("pairbench_version"):
            result.environment["pairbench_version"] = self.engine_version
        self._tell_fallback(result)
        todo = [s for s in self.params.sizes if result.point(s) is None]
        estimate = self.params.runtime_s + self.params.settle_s + 0.3
        if self.params.sustain_s is not None:
            estimate = self.params.sustain_s + self.params.settle_s
        # from the first "running" on disk, an interrupt leaves "interrupted" there: a SIGTERM between that save and
        # the loop (TargetWatch's reads, under a loaded host) left a document saying "running" after exit 130
        # (tests/test_cli_process.py, a cold CI run, seed 3264462)
        try:
            result.status, result.error = STATUS_RUNNING, None
            self._save(result)
            if self.params.sustain_bytes is not None:
                self.progress.say(f"sustained run: until {self.params.sustain_bytes} bytes are written "
                                  f"(at most {SUSTAIN_CAP_S / 3600:g} h); no ETA before it ends")
            self.progress.reset()
            watch = TargetWatch(self.target)
            for i, size in enumerate(todo, 1):
                if self.stop is not None and self.stop.is_set():
                    raise KeyboardInterrupt
                self.progress.begin(f"{self.target.path} {size_label(size)}", i, len(todo), estimate)
                quiet = procfs.cpu_times()
                settle(self.params.settle_s, self.stop)
                started = environment.now_iso()
                before = thermal_snapshot(self.target)
                try:
                    with watch:
                        cpu_before = procfs.cpu_times()
                        point = self._measure(size, started)
                        point.cpu = point_cpu(quiet, cpu_before, procfs.cpu_times(), point.ios)
                except MeasurementError as exc:
                    result.status, result.error = STATUS_FAILED, str(exc)
                    changed = watch.check()
                    if not changed:
                        self._save(result)
                        raise
                    # the engine failed on a target that changed under it: that is the cause to name
                    self._target_changed(result, size, changed)
                    result.error += f" (the engine then failed: {exc})"
                    self._save(result)
                    raise MeasurementError(result.error) from exc
                changed = watch.check()
                if changed:
                    self._target_changed(result, size, changed)
                    self._save(result)
                    raise MeasurementError(result.error)
                if before is not None:
                    after = thermal_snapshot(self.target)
                    point.thermal = sweep_words.thermal_summary(before, after)
                    point.wear = wear.summary(before.to_dict(), after.to_dict(), point.ios * size) if after else None
                    for w in point.thermal["warnings"]:
                        result.warnings.append(f"{size_label(size)}: {w}")
                        self.progress.say(f"WARNING: {size_label(size)}: {w}")
                result.add_point(point)
                self._save(result)
                ci = f" ±{point.mean_ci95_us['half_width']:.2f}" if point.mean_ci95_us else ""
                self.progress.end(f"{size_label(size)}: {point.lat_us.mean:.1f}{ci} us mean, "
                                  f"{point.iops:.0f} IOPS, {point.mbps:.1f} MiB/s ({point.ios} IOs)")
                if point.collapse:
                    self.progress.say(f"  {point.collapse['why']}")
        except KeyboardInterrupt:
            result.status = STATUS_INTERRUPTED
            self._save(result)
            raise
        if result.device and not result.device.get("error") and self.params.mode == "flush":
            # the power-loss verdict now weighs the flush cost this sweep measured (analysis.powerloss)
            result.device = powerloss.with_evidence(result.device, sweep=result.to_dict())
        result.status = STATUS_COMPLETE
        self._save(result)
        return result


def resume_target(result: SweepResult, scratch_dir: str) -> Target:
    """The target of an unfinished sweep, checked again before any write."""
    recorded = result.target
    largest = max(result.params["sizes"])
    if recorded.get("kind") == KIND_SCRATCH:
        return targets.create_scratch(scratch_dir, largest)
    target = targets.resolve(recorded["path"], largest)
    if recorded.get("size") is not None and target.size is not None and target.size != recorded["size"]:
        raise UsageError(f"{target.path}: now {target.size} bytes, the sweep started on {recorded['size']}; "
                         "start a new sweep")
    if target.kind != recorded.get("kind"):
        raise UsageError(f"{target.path}: is now a {target.kind}, the sweep started on a {recorded.get('kind')}")
    return target


def load_for_resume(path: str) -> SweepResult:
    """An unfinished sweep's document, refused when it cannot be resumed (an import)."""
    result = load_sweep(path)
    if result.source != "slogqual":
        raise UsageError(f"{path}: a {result.source} import cannot be resumed")
    # What resume_target and the sweep read from the document, checked as the loader checks the rest.
    c = schema.Checker(path)
    c.text(result.target, "kind", "target", required=False)
    if result.target.get("kind") != KIND_SCRATCH:
        c.text(result.target, "path", "target")
    c.integer(result.target, "size", "target", required=False, minimum=0)
    sizes = c.items(result.params, "sizes", "params")
    if not sizes:
        raise c.fail("params.sizes", "is empty: nothing to resume")
    for i, size in enumerate(sizes):
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise c.fail(f"params.sizes[{i}]", f"must be a size in bytes, not {size!r}")
    return result


def note_resume(result: SweepResult, fio_version: str, argv: Optional[List[str]], engine_version: str = "") -> None:
    """Record this resumption in the document, and warn where the measuring program changed since."""
    env = result.environment
    entry = {"started": environment.now_iso(), "fio_version": fio_version,
             "kernel": environment.collect(fio_version, argv)["kernel"], "argv": list(argv or [])}
    if engine_version:
        entry["pairbench_version"] = engine_version
    env.setdefault("resumed", []).append(entry)
    for key, now in (("fio_version", fio_version), ("pairbench_version", engine_version)):
        if env.get(key) and now and env[key] != now:
            result.warnings.append(f"resumed with {now}; earlier points were measured with {env[key]}")
