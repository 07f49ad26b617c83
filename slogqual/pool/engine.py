"""Run a pool scenario: for each configuration a fresh throwaway pool, then every thread step.

The result (``slogqual.scenario/1``, docs/scenarios.md) is a ``results.scenario.ScenarioResult`` from
the moment it is made; it is saved atomically after every step; a resumed run measures exactly the
steps it lacks. Each step records fio's figures and the
evidence of where the ZIL's writes went (kstat deltas and the per-vdev iostat of the window).
"""

from __future__ import annotations

import contextlib
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple, Type

from slogqual import environment
from slogqual.analysis import scenario as scenario_analysis
from slogqual.report import scenario as scenario_report
from slogqual.errors import MeasurementError, ResultWriteError, SlogqualError, UsageError
from slogqual.pool import evidence, log_sweeps
from slogqual.pool.held_open import HeldOpen
from slogqual.pool import transport
from slogqual.pool import variants as _variants
from slogqual.tools import fio_client
from slogqual.pool.builder import ThrowawayPool, ashift_for, data_vdevs, log_vdevs, special_vdevs, wait_for_device
from slogqual.pool.scenario import PoolConfig, Scenario
from slogqual.progress import Progress
from slogqual.results import (STATUS_COMPLETE, STATUS_FAILED, STATUS_INTERRUPTED, STATUS_RUNNING, schema,
                              write_json_atomic)
from slogqual.results.scenario import PoolRecord, ScenarioEnvironment, ScenarioResult, ScenarioStep, SkippedConfig
from slogqual.kernel import procfs
from slogqual.tools import fio
from slogqual.tools import zfs_tunables
from slogqual.units import MiB

SCENARIO_SCHEMA = schema.SCENARIO
STEP_OVERHEAD_S = 8.0  # a priori estimate per step beyond runtime+ramp (pool build amortised), for the ETA


def new_result(scenario: Scenario, quick: bool, layout: str, data: List[str], logs: List[str],
               fio_version: str, argv: Optional[List[str]], devices: Dict[str, Any]) -> ScenarioResult:
    pool = PoolRecord.new(layout=layout, data=list(data), log=list(logs), ashift=ashift_for(data + logs, devices),
                          fs_properties={"compression": "off", "atime": "off"}, devices=devices)
    return ScenarioResult.new(scenario=scenario.to_dict(), quick=quick, pool=pool,
                              environment=ScenarioEnvironment.collected(environment.collect(fio_version, argv)))


def _lat(stats: fio.FioLatency, sync: Optional[fio.FioLatency]) -> Dict[str, Optional[float]]:
    out = {"mean": stats.mean, "p50": stats.pct(50.0), "p99": stats.pct(99.0), "p999": stats.pct(99.9),
           "max": stats.max}
    if sync is not None:  # fsync-per-write loads: the pair's mean is exact, as in the sweep
        out["mean"] = stats.mean + sync.mean
        out["basis"] = "write+flush (mean exact; percentiles of the write alone)"
    return {k: (min(v, out["max"]) if isinstance(v, float) and k in ("p50", "p99", "p999") else v)
            for k, v in out.items()}


def _cpu(before: procfs.CpuTimes, after: procfs.CpuTimes,
         window: Optional[Tuple[procfs.CpuTimes, float, float]] = None) -> Dict[str, Any]:
    """The host's CPU over the step: a curve flat because the CPU was busy is not flat because of its log
    device (/proc/stat; absent where there is none). Over the measured window (``window``: the sampler's
    times inside it) where it was sampled, else over fio's whole run (file layout and ramp included:
    ``basis`` says which); the whole run's share is kept beside a window's."""
    d = after - before
    share = d.busy_share
    run = {"busy_share": None if share is None else round(share, 4), "cpus": d.cpus, "ticks": d.total,
           "source": procfs.STAT}
    if window is None or window[0].busy_share is None:
        return dict(run, basis="run")
    w, t0, t1 = window
    return {"busy_share": round(w.busy_share, 4), "cpus": w.cpus, "ticks": w.total, "source": procfs.STAT,
            "basis": "window", "window_s": round(t1 - t0, 2), "run_busy_share": run["busy_share"]}


def _bytes(n) -> str:
    """A ZIL byte count for a progress line: an unknown one (the kstat lacks the row) is 'unknown'."""
    return "unknown" if n is None else f"{n} B"


DIRECT_DATASET = ("a dataset load with O_DIRECT (fio direct=1) goes around the ZIL on OpenZFS 2.3 and later "
                  "(Direct IO, zfs_dio_enabled=1 on Linux): its writes are made in place and logged indirectly, "
                  "not the log an NFS client's writes exercise; dataset loads run buffered")


def step_load(sc: Scenario, threads: int, targets: List[str]) -> fio.FioLoad:
    """The fio load of one step: O_DIRECT on zvols (a LUN's initiator bypasses the page cache), buffered on a
    dataset's files, as an NFS server writes them. A dataset load that came out O_DIRECT is refused
    (``check_direct``)."""
    common = dict(rw=sc.rw, bs=sc.bs, threads_per_lun=threads, runtime_s=sc.runtime_s, ramp_s=sc.ramp_s,
                  write_sync=sc.write_sync)
    if sc.kind == "zvol":
        return check_direct(fio.FioLoad(devices=targets, direct=True, **common))
    # each thread its own file; the LUN's size is shared by its threads
    per_thread = max(sc.bs * 16, (sc.lun_size // threads) // sc.bs * sc.bs)
    return check_direct(fio.FioLoad(directory=targets[0], files=sc.luns, file_size=per_thread, direct=False, **common))


def check_direct(load: fio.FioLoad) -> fio.FioLoad:
    """``load``, unless it writes a dataset's files with O_DIRECT: refused in one line (DIRECT_DATASET)."""
    if load.directory and load.direct:
        raise UsageError(DIRECT_DATASET)
    return load


def check_loads(sc: Scenario) -> None:
    """Every step's load of ``sc`` as the run will build it, checked before anything is written (pool.door)."""
    targets = ["/dev/zvol/check"] * sc.luns if sc.kind == "zvol" else ["/check"]
    for t in sc.threads:
        step_load(sc, t, targets)


class PoolScenarioRun:
    def __init__(self, scenario: Scenario, result: ScenarioResult, output: str, progress: Progress,
                 pool_name: str, zfs_api: str = "auto", clients: Optional[List] = None):
        self.zfs_api = zfs_api
        self.clients = list(clients or [])  # fio_client.Endpoint: fio servers that drive each step
        self.scenario = scenario
        self.result = result
        self.output = output
        self.progress = progress
        self.pool_name = pool_name

    def variants(self) -> List[_variants.Variant]:
        """The pools to build, in order (pool.variants): a single-SLOG configuration once per --log
        candidate, a mirror/stripe once per pair of candidates, so candidates are compared on the same
        pool and load; other configurations once."""
        return _variants.plan(self.scenario.configs, self.result.log_paths)[0]

    def skipped(self) -> List[Dict[str, Any]]:
        """The pair configurations this run cannot build (fewer than two --log candidates)."""
        return _variants.plan(self.scenario.configs, self.result.log_paths)[1]

    def _done(self, config: str, candidate: Optional[str], threads_per_lun: int) -> bool:
        return any(s.config == config and s.candidate == candidate and s.threads_per_lun == threads_per_lun
                   for s in self.result.steps)

    def save(self) -> None:
        """Rewrite the result file; if that fails (ENOSPC, EROFS) the run is over, marked failed in
        memory, and the document travels with the error for the caller to put where it still can."""
        r = self.result
        try:
            write_json_atomic(self.output, r.to_dict())
        except OSError as exc:
            r.status = STATUS_FAILED
            r.error = f"cannot write the result file {self.output}: {exc.strerror or exc}"
            raise ResultWriteError(r.error, r.to_dict()) from None

    @contextlib.contextmanager
    def _saved_as_it_ends(self, failure: Tuple[Type[BaseException], ...] = (), said: str = "",
                          unsaved: Tuple[Type[BaseException], ...] = ()) -> Iterator[None]:
        """A part of the run whose end is saved: ``failure`` (exceptions of those kinds; none by default) marks the
        result failed with its message (after ``said``), Ctrl-C or SIGTERM marks it interrupted, and either way the
        result file is rewritten before the exception goes on; one of ``unsaved`` goes on as it is."""
        r = self.result
        try:
            yield
        except unsaved:
            raise
        except failure as exc:
            r.status, r.error = STATUS_FAILED, f"{said}{exc}"
            self.save()
            raise
        except KeyboardInterrupt:
            r.status = STATUS_INTERRUPTED
            self.save()
            raise

    def measure_log_sweeps(self) -> None:
        """The log candidates' own sweeps, before any pool is built (--sweep-logs); kept ones are not
        measured again on --resume."""
        r = self.result
        r.log_sweeps = log_sweeps.measure(
            r.log_paths, self.scenario.bs, r.quick, self.output, self.progress,
            r.environment.fio_version or "", r.environment.argv, r.log_sweeps)
        self.save()

    def run(self) -> ScenarioResult:
        sc, r = self.scenario, self.result
        r.status, r.error = STATUS_RUNNING, None
        # from the first "running" on disk, an interrupt leaves "interrupted" there, not only inside the blocks that
        # measure: a sweep's SIGTERM between its first save and its loop left "running" after exit 130 (a cold CI
        # run, 2026-11-30; slogqual.sweep.engine), and this run had the same window
        with self._saved_as_it_ends():
            self.save()
            with self._saved_as_it_ends((MeasurementError,), said="log candidate sweep: "):
                if r.sweep_logs:
                    self.measure_log_sweeps()
            r.skipped = [SkippedConfig.made(k, "skipped") for k in self.skipped()]
            plan = [(v, [t for t in sc.threads if not self._done(v.config.name, v.candidate, t)])
                    for v in self.variants()]
            total = sum(len(ts) for _, ts in plan)
            estimate = sc.runtime_s + sc.ramp_s + STEP_OVERHEAD_S
            self.progress.reset()
        index = 0
        # a tool failing, or missing, mid-run: the steps so far stand; a result file that cannot be written
        # has nowhere to be saved (the document goes with the error)
        with self._saved_as_it_ends((SlogqualError,), unsaved=(ResultWriteError,)):
            for variant, steps in plan:
                if not steps:
                    continue
                config, candidate = variant.config, variant.candidate
                label = config.name + (f" [{candidate}]" if candidate else "")
                with self._parameters(config), self._pool(config, list(variant.logs)) as pool:
                    r.pool.zfs_api = pool.api_name  # how the zvols/datasets were created
                    targets, datasets = self._luns(pool)
                    witness = evidence.ZilWitness(pool.name, datasets)
                    # zvols held open for the steps: fio's (and a target's) opens are then never first
                    # opens, which on Linux can fail with errno 512 on a busy pool (held_open.py)
                    with HeldOpen(targets if sc.kind == "zvol" else []), \
                            transport.attach(sc.transport, pool.name, targets) as attached:
                        # fio writes what the transport gives: the initiator's disks, the client's mount
                        r.attach(label, sc.transport.to_dict(), attached.record)
                        self.save()
                        self._steps(pool, variant, steps, attached.targets, witness, label, index, total, estimate)
                        index += len(steps)
        r.analysis = scenario_report.worded(scenario_analysis.analyse(r))
        r.warnings = list(r.stored_analysis.problems) + [_variants.skip_warning(k) for k in self.skipped()]
        r.status = STATUS_COMPLETE
        self.save()
        return r

    def _steps(self, pool: ThrowawayPool, variant: _variants.Variant, steps: List[int], targets: List[str],
               witness: evidence.ZilWitness, label: str, index: int, total: int, estimate: float) -> None:
        sc = self.scenario
        config = variant.config
        for t in steps:
            index += 1
            self.progress.begin(f"{sc.name} [{label}] {t} thread(s)/LUN x {sc.luns} LUNs",
                                index, total, estimate)
            measured = self._step(pool, config, t, targets, witness)
            measured["candidate"] = variant.candidate
            measured["transport"] = sc.transport.kind
            measured["log_devices"] = log_vdevs(config.log, list(variant.logs))
            if config.uses_special:
                measured["special_devices"] = special_vdevs(config.log, list(variant.logs))[1:]
                measured["zil_special_is_slog"] = int(config.zil_special_is_slog is not False)
            step = ScenarioStep.measured(measured)
            self.result.steps.append(step)
            self.save()
            self.progress.end(f"{step.iops:.0f} IOPS, {step.mbps:.1f} MiB/s, p99 "
                              f"{step.p99_us or 0:.0f} us; ZIL to log {_bytes(step.slog_bytes)}, "
                              f"to pool {_bytes(step.normal_bytes)}")

    @staticmethod
    def _parameters(config: PoolConfig):
        """The module parameters a configuration runs with, the values found put back after its steps: a
        special-vdev configuration's ``zil_special_is_slog`` (pool.door refused the run before OpenZFS 2.4)."""
        if not config.uses_special:
            return contextlib.nullcontext()
        return zfs_tunables.setting("zil_special_is_slog", int(config.zil_special_is_slog is not False))

    def _pool(self, config: PoolConfig, logs: List[str]) -> ThrowawayPool:
        """A pool for one variant: ``logs`` are the log devices it gets (none, the candidate, the pair; a
        special-vdev configuration's candidate is its special vdev)."""
        pool = self.result.pool
        fs_props = dict(pool.fs_properties, sync=config.sync, logbias=config.logbias)
        return ThrowawayPool(name=self.pool_name, vdevs=data_vdevs(pool.layout, pool.data) + special_vdevs(config.log, logs),
                             logs=log_vdevs(config.log, logs),
                             zfs_api=self.zfs_api,
                             properties={"ashift": str(pool.ashift)}, fs_properties=fs_props)

    def _luns(self, pool: ThrowawayPool):
        sc = self.scenario
        if sc.kind == "zvol":
            names = [pool.zvol(f"lun{i}", sc.lun_size, sc.volblocksize) for i in range(sc.luns)]
            return [wait_for_device(f"/dev/zvol/{n}") for n in names], names
        ds = pool.dataset("nfs", sc.recordsize)
        return [pool.mountpoint(ds)], [ds]

    def _load(self, threads: int, targets: List[str]) -> fio.FioLoad:
        return step_load(self.scenario, threads, targets)

    def _client_loads(self, threads: int, targets: List[str]):
        """The step's load split over the fio clients: each client a contiguous block of the LUNs (zvols /
        initiator disks, or the dataset's file groups), with the step's threads per LUN; job (and so file)
        names numbered from the block's first LUN, distinct across clients. run.py checked luns >= clients."""
        sc, n = self.scenario, len(self.clients)
        parts, start = [], 0
        for k, endpoint in enumerate(self.clients):
            count = sc.luns // n + (1 if k < sc.luns % n else 0)
            load = self._load(threads, targets)
            if sc.kind == "zvol":
                load.devices = targets[start:start + count]
            else:
                load.files = count
            load.first_job = start
            parts.append((endpoint, load))
            start += count
        return parts

    def _step(self, pool: ThrowawayPool, config: PoolConfig, threads: int, targets: List[str],
              witness: evidence.ZilWitness) -> Dict[str, Any]:
        sc = self.scenario
        started = environment.now_iso()
        before = witness.read()
        throttle = evidence.ThrottleWitness()
        tx_before = throttle.read()
        cpu_before = procfs.cpu_times()
        sampler = procfs.CpuSampler().start()
        window = evidence.IostatWindow(pool.name).start()
        try:
            t0 = time.time()
            if self.clients:
                report = fio_client.run_clients(self._client_loads(threads, targets))
                r = report.merged
            else:
                report, r = None, fio.run_load(self._load(threads, targets))
            # the measured window: fio's last runtime_s seconds (after its start-up and ramp), by its own clock
            end = r.ended_ms / 1000 if r.ended_ms else time.time()
            measured = (max(t0 + sc.ramp_s, end - sc.runtime_s), end)
            io = window.collect(*measured)
        finally:
            window.stop()
            sampler.stop()
        cpu_after = procfs.cpu_times()
        cpu_window = sampler.between(*measured)
        zil = witness.read() - before
        tx = throttle.delta(tx_before, throttle.read())
        vdevs = evidence.vdev_summary(io.rows) if io.rows else {"vdevs": [], "log_write_bytes_s": None,
                                                                  "log_write_ops_s": None}
        return {
            "config": config.name, "sync": config.sync, "log": config.log, "logbias": config.logbias,
            "threads_per_lun": threads, "threads": threads * sc.luns, "ios": r.ios, "iops": r.iops,
            "mbps": r.bw_bytes / MiB, "lat_us": _lat(r.write_lat, r.sync_lat), "runtime_ms": r.runtime_ms,
            "started": started, "zil": zil.as_dict(), "zil_source": witness.source,
            "zil_slog_share": zil.slog_share, **vdevs,
            "iostat": {"reports": io.reports, "span": io.span, "inside_window": io.inside},
            **({"cpu": _cpu(cpu_before, cpu_after, cpu_window)} if cpu_before and cpu_after else {}),
            **({"write_throttle": tx} if tx is not None else {}),
            **({"clients": [{"endpoint": c.endpoint, "ios": c.result.ios, "iops": c.result.iops,
                             "mbps": c.result.bw_bytes / MiB, "runtime_ms": c.result.runtime_ms,
                             "lat_us": _lat(c.result.write_lat, c.result.sync_lat)} for c in report.clients]}
               if report is not None else {}),
        }
