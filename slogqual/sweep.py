"""The sync-write sweep: QD1 synchronous writes at every IO size, one engine run each.

Two engines: the pair engine (slogqual.tools.pairbench, the default in flush mode on files and block
devices) times every write and its flush, so every figure is exact (lat_basis "pair"); fio (--mode dsync,
NBD targets, or --engine fio) times them separately (lat_basis "write+flush": percentiles are bounds).

The result document is saved (atomically) before the first size and after every
size, so a killed run loses at most the size in progress and can be resumed.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional

from slogqual import environment
from slogqual.errors import MeasurementError, RefusedError, ResultWriteError, UsageError
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
from slogqual.target import KIND_BLOCK, KIND_NBD, KIND_SCRATCH, Target
from slogqual import target as targets
from slogqual.analysis import percentiles
from slogqual.tools import fio, pairbench
from slogqual.units import MiB, size_label

# Below this many IOs a point's percentiles mean little; the point says so.
FEW_IOS = 10

ENGINE_AUTO, ENGINE_PAIR, ENGINE_FIO = "auto", "pair", "fio"
ENGINES = (ENGINE_PAIR, ENGINE_FIO)


@dataclass
class SweepParams:
    mode: str = "flush"
    sizes: List[int] = field(default_factory=list)
    runtime_s: float = 1.0
    settle_s: float = 1.0
    engine: str = ENGINE_AUTO  # auto: pair in flush mode on a file or block device, fio otherwise

    def engine_for(self, target: Target) -> str:
        """The engine that measures target: ENGINE_PAIR or ENGINE_FIO."""
        if self.engine != ENGINE_AUTO:
            return self.engine
        return ENGINE_PAIR if self.mode == "flush" and target.kind != KIND_NBD else ENGINE_FIO

    def to_dict(self, target: Target) -> Dict[str, Any]:
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
            params = cls(mode=d["mode"], sizes=list(d["sizes"]), runtime_s=float(d["runtime_s"]),
                         settle_s=float(d.get("settle_s", 1.0)),
                         # a document from before the pair engine names fio's ioengine (psync, nbd) here
                         engine=ENGINE_PAIR if d.get("engine") == ENGINE_PAIR else ENGINE_FIO)
        except (KeyError, TypeError, ValueError) as exc:
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

    def check_target(self, target: Target) -> None:
        """A mode the target's engine cannot do is bad input, found before anything is written."""
        if self.mode == "dsync" and target.kind == KIND_NBD:
            raise UsageError(f"{target.path}: --mode dsync needs a file or block device: fio's nbd engine has no "
                             "FUA/O_DSYNC writes (use --mode flush)")
        if self.engine == ENGINE_PAIR and target.kind == KIND_NBD:
            raise UsageError(f"{target.path}: --engine pair needs a file or block device (NBD targets use fio)")


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


def describe_target(target: Target) -> Optional[Dict[str, Any]]:
    """The device identity record (slogqual.device/1, as `slogqual inspect --json` prints it)."""
    from slogqual import device

    try:
        return device.identify(target.path).to_dict()
    except Exception as exc:  # identification must not cost the measurement; say why it is missing
        return {"schema": schema.DEVICE, "path": target.path, "error": f"identification failed: {exc}",
                "warnings": []}


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


def _exact(values_ns) -> LatencyStats:
    s = percentiles.summarize(values_ns, 1000)  # ns -> µs
    return LatencyStats(mean=s.mean, min=s.min, max=s.max, stddev=s.stddev, **s.percentiles)


def point_from_pair(size: int, r: pairbench.PairResult, started: str) -> SweepPoint:
    """A point of the pair engine: every figure (pair, write, flush) exact from the raw per-IO samples."""
    elapsed_s = r.elapsed_ns / 1e9
    point = SweepPoint(size=size, ios=r.ios, lat_us=_exact(r.pair_ns()), iops=r.ios / elapsed_s,
                       mbps=r.bytes_written / elapsed_s / MiB, runtime_ms=r.elapsed_ns / 1e6,
                       lat_basis=LAT_BASIS_PAIR, write_lat_us=_exact(r.write_ns), flush_lat_us=_exact(r.flush_ns),
                       started=started)
    if r.ios < FEW_IOS:
        point.notes.append(f"only {r.ios} IOs: percentiles are not meaningful; raise --runtime")
    return point


def settle(seconds: float) -> None:
    """diskinfo's T0(): flush dirty data system-wide and let the device go idle."""
    os.sync()
    if seconds > 0:
        time.sleep(seconds)
        os.sync()


class SyncWriteSweep:
    """Measure one target at every size of params, saving the result after each size."""

    def __init__(self, target: Target, params: SweepParams, output: str,
                 progress: Optional[Progress] = None, result: Optional[SweepResult] = None,
                 fio_version: str = "", argv: Optional[List[str]] = None, engine_version: str = ""):
        self.target = target
        self.params = params
        self.output = output
        self.progress = progress or Progress(quiet=True)
        self.fio_version = fio_version
        self.argv = argv
        self.result = result
        self.engine = params.engine_for(target)
        self.engine_version = engine_version

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
            job = pairbench.PairJob(filename=self.target.path, bs=size, region_bytes=self.target.size,
                                    runtime_s=self.params.runtime_s, direct=self.target.direct)
            return point_from_pair(size, pairbench.run_job(job), started)
        return point_from_fio(size, fio.run_job(self._job(size)), started)

    def _save(self, result: SweepResult) -> None:
        """Rewrite the result file; if that fails, the run is over: failed, with the reason, in memory."""
        try:
            save_sweep(self.output, result)
        except OSError as exc:
            result.status = STATUS_FAILED
            result.error = f"cannot write the result file {self.output}: {exc.strerror or exc}"
            raise ResultWriteError(result.error, result.to_dict()) from None

    def run(self) -> SweepResult:
        if self.result is None:
            self.result = self._new_result()
        result = self.result
        result.status, result.error = STATUS_RUNNING, None
        self._save(result)
        todo = [s for s in self.params.sizes if result.point(s) is None]
        estimate = self.params.runtime_s + self.params.settle_s + 0.3
        self.progress.reset()
        try:
            for i, size in enumerate(todo, 1):
                self.progress.begin(f"{self.target.path} {size_label(size)}", i, len(todo), estimate)
                settle(self.params.settle_s)
                started = environment.now_iso()
                try:
                    point = self._measure(size, started)
                except MeasurementError as exc:
                    result.status, result.error = STATUS_FAILED, str(exc)
                    self._save(result)
                    raise
                result.add_point(point)
                self._save(result)
                self.progress.end(f"{size_label(size)}: {point.lat_us.mean:.1f} us mean, "
                                  f"{point.iops:.0f} IOPS, {point.mbps:.1f} MiB/s ({point.ios} IOs)")
        except KeyboardInterrupt:
            result.status = STATUS_INTERRUPTED
            self._save(result)
            raise
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


def prepare_resume(path: str, fio_version: str, argv: Optional[List[str]]) -> SweepResult:
    result = load_sweep(path)
    if result.source != "slogqual":
        raise UsageError(f"{path}: a {result.source} import cannot be resumed")
    env = result.environment
    env.setdefault("resumed", []).append({
        "started": environment.now_iso(),
        "fio_version": fio_version,
        "kernel": environment.collect(fio_version, argv)["kernel"],
        "argv": list(argv or []),
    })
    if env.get("fio_version") and env["fio_version"] != fio_version:
        result.warnings.append(f"resumed with {fio_version}; earlier points were measured with {env['fio_version']}")
    return result
