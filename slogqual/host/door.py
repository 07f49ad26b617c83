"""The host probe as a library call: ``run_probe(request)`` -> ``HostProbeResult`` (issue #37).

What this host's ZFS can do with a perfect log, at the workload's own shape: a throwaway pool (the
slogqual- prefix, torn down on every exit) whose data vdevs and log are files in a RAM file system,
``sync=always``, the load at each thread count (the scenario engine's steps: fio, the ZIL kstats, zpool
iostat, /proc/stat); then the copy into that RAM alone (fio on a file there, at two sizes) so that the
analysis (slogqual.analysis.host) can take the RAM devices' copies out of the CPU and of the time. Seconds,
not minutes: short steps, no log sweep, no identification of devices that are only files.

With ``log`` (``--log DEVICE``, the candidate): the log pass after them, the same load and passes on a pool
of RAM data files with the candidate as its log, so its driver's and interrupts' CPU at the pool's concurrency
is measured in ZFS's own (slogqual.analysis.host, "the log pass"); the data are RAM files there whatever
``data`` says, so that the pass is the host with this log, never the pool itself.

The steps run ``repeats`` times over (each pass its own pool), and each thread count keeps its best pass: a
ceiling is what the host can do, and one pass in a fresh lab guest ran low — six probes one after another
in one guest gave 1,159 / 1,289 / 1,420 / 1,389 / 1,347 / 1,347 IOPS at one writer, and at four writers
1,190–1,911 with no order (docs/advisor.md).

Bad input and a host without ZFS are one line before anything is written (UsageError, exit 2).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
from dataclasses import dataclass, field
from typing import List, Optional

from slogqual import environment, owned
from slogqual.analysis import host as host_analysis
from slogqual.errors import SlogqualError, ToolError, UsageError
from slogqual.outputs import check_output, json_document
from slogqual.pool.builder import LAYOUTS, POOL_PREFIX
from slogqual.pool.engine import PoolScenarioRun, new_result
from slogqual.pool.scenario import PoolConfig, Scenario
from slogqual.progress import PassProgress, Progress
from slogqual.results import schema, write_json_atomic
from slogqual.results.host import CopyCost, HostProbeResult, HostStep, HostWorkload, LogPass
from slogqual.results.scenario import ScenarioResult
from slogqual.kernel import procfs
from slogqual.tools import fio, findmnt
from slogqual.tools import zfs as _zfs
from slogqual.tools import zpool as _zpool
from slogqual.units import MiB

PROTOCOLS = ("iscsi", "nfs")
RAM_FILESYSTEMS = ("tmpfs", "ramfs")
DIR_PREFIX = "slogqual-host-"
DATA_FILES = 4  # a stripe of four: the data side far from the limit (txg sync into RAM)
VDEV_BYTES = 1 << 30  # sparse; only what the load writes takes RAM
LOG_BYTES = 256 * MiB  # the RAM log: ZIL blocks are freed at each txg and the space used again
LUN_BYTES = 256 * MiB
COPY_SIZES = (4096, 131072)  # the smallest and largest log block
COPY_BYTES = 256 * MiB
CONFIG = PoolConfig("sync=always + perfect log", sync="always", log="single")
LOG_PASS_CONFIG = PoolConfig("sync=always + the candidate log", sync="always", log="single")  # the log pass's


@dataclass
class HostProbeRequest:
    protocol: str = "iscsi"
    bs: int = 4096
    block_size: Optional[int] = None  # volblocksize (iscsi, default 16K) / recordsize (nfs, default 128K)
    threads: List[int] = field(default_factory=lambda: [1, 4, 16])  # all writers at each step
    zils: int = 1  # zvols (iscsi) or datasets (nfs)
    write_sync: Optional[str] = None  # default: none for iscsi, dsync for nfs (stable writes)
    runtime_s: float = 3.0
    ramp_s: float = 1.0
    repeats: int = 3  # passes over the thread counts, each its own pool; each count keeps its best (module doc)
    ram_dir: str = "/dev/shm"
    output: str = ""
    argv: Optional[List[str]] = None
    data: List[str] = field(default_factory=list)  # the pool's own data disks (else files in RAM)
    layout: str = "stripe"
    destroy_data: bool = False
    log: Optional[str] = None  # the candidate log: the log pass (module doc); None: the RAM log alone
    record_in_store: bool = True  # as every run: `advise --host store:ID` reads it back


def check(req: HostProbeRequest) -> HostProbeRequest:
    """The request with its defaults filled, or one line why not."""
    if req.protocol not in PROTOCOLS:
        raise UsageError(f"--protocol {req.protocol!r}: use one of {', '.join(PROTOCOLS)}")
    if not req.threads or any(t < 1 for t in req.threads):
        raise UsageError("--threads: one or more writer counts, each at least 1")
    if any(t % req.zils for t in req.threads):
        raise UsageError(f"--threads {','.join(map(str, req.threads))}: each a multiple of --zils {req.zils} "
                         "(the writers spread evenly over the intent logs)")
    if req.repeats < 1:
        raise UsageError("--repeats: one pass over the thread counts at least")
    if not req.output:
        raise UsageError("-o/--output: where to write the host document")
    if not os.path.isdir(req.ram_dir):
        raise UsageError(f"--ram-dir {req.ram_dir}: no such directory (a tmpfs mount: the probe's vdevs live in RAM)")
    block = req.block_size or (16384 if req.protocol == "iscsi" else 131072)
    write_sync = req.write_sync or ("none" if req.protocol == "iscsi" else "dsync")
    if req.layout not in LAYOUTS:
        raise UsageError(f"--layout {req.layout!r}: use one of {', '.join(LAYOUTS)}")
    if req.log and os.path.realpath(req.log) in {os.path.realpath(d) for d in req.data}:
        raise UsageError(f"--log {req.log}: also among --data; the candidate log is a device of its own")
    return HostProbeRequest(protocol=req.protocol, bs=req.bs, block_size=block, threads=sorted(set(req.threads)),
                            zils=req.zils, write_sync=write_sync, runtime_s=req.runtime_s, ramp_s=req.ramp_s,
                            repeats=req.repeats, ram_dir=req.ram_dir, output=req.output, argv=req.argv, data=list(req.data),
                            layout=req.layout, destroy_data=req.destroy_data, record_in_store=req.record_in_store,
                            log=req.log)


def ram_filesystem(directory: str) -> Optional[str]:
    """The file system type the directory lives on, where findmnt says it; None unknown."""
    if not findmnt.available():
        return None
    real = os.path.realpath(directory)
    best = None
    for m in findmnt.mounts():
        target = m.target.rstrip("/") or "/"
        if real == target or real.startswith(target + "/") or target == "/":
            if best is None or len(target) > len(best.target.rstrip("/") or "/"):
                best = m
    return best.fstype if best else None


def require_zfs() -> str:
    """OpenZFS's userland version, or one line saying this host has no ZFS to probe."""
    try:
        versions = _zfs.openzfs_versions()
        _zpool.check_version()
    except ToolError as exc:
        raise UsageError(f"host probe: no ZFS on this host ({exc}); run it where the pool will live") from None
    if not versions.get("module"):
        raise UsageError("host probe: the zfs command is here but no ZFS kernel module is loaded")
    return versions.get("userland") or ""


def scenario_for(req: HostProbeRequest) -> Scenario:
    kind = "zvol" if req.protocol == "iscsi" else "dataset"
    per_zil = sorted({t // req.zils for t in req.threads})
    return Scenario(name=f"host-probe-{req.protocol}", kind=kind, luns=req.zils, lun_size=LUN_BYTES,
                    rw="randwrite", bs=req.bs, write_sync=req.write_sync, threads=per_zil,
                    runtime_s=req.runtime_s, ramp_s=req.ramp_s, configs=[CONFIG],
                    description="the host probe: the data disks given, a log file in RAM" if req.data else
                    "the host probe: every vdev a file in RAM",
                    volblocksize=req.block_size if kind == "zvol" else None,
                    recordsize=req.block_size if kind == "dataset" else None, source="slogqual host-probe")


def _sparse(path: str, size: int) -> str:
    with open(path, "wb") as fh:
        fh.truncate(size)
    return path


def measure_copy(directory: str) -> Optional[CopyCost]:
    """The CPU one write into this RAM costs, at the smallest and largest log block (fio, /proc/stat): each
    run writes COPY_BYTES sequentially through a new sparse file, so every write lands on pages not yet
    there, as the probe's vdev writes do (ZFS allocates anew: copy-on-write) — the page's allocation and
    zeroing are part of the copy's cost, which a rewrite of pages that exist leaves out."""
    ios, cpu_s = [], []
    for size in COPY_SIZES:
        path = _sparse(os.path.join(directory, f"copy-{size}"), COPY_BYTES)
        before = procfs.cpu_times()
        r = fio.run_fill(fio.FioFill(bytes_=COPY_BYTES, bs=size, iodepth=1, filename=path, direct=False,
                                     name="slogqual-host-copy"))
        after = procfs.cpu_times()
        os.unlink(path)
        if before is None or after is None:  # FreeBSD: no /proc/stat — the ceiling rests on the path alone
            return None
        ios.append(r.ios)
        cpu_s.append((after - before).busy / procfs.USER_HZ)
    cost = host_analysis.fit_copy(COPY_SIZES, ios, cpu_s)
    # the same bytes again over the pages the largest size's run made: a copy into memory that exists (what
    # vdev_file's borrowed linear buffer costs), less the per-write part
    size = COPY_SIZES[-1]
    path = os.path.join(directory, "copy-again")
    _sparse(path, COPY_BYTES)
    fill = fio.FioFill(bytes_=COPY_BYTES, bs=size, iodepth=1, filename=path, direct=False, name="slogqual-host-copy")
    fio.run_fill(fill)  # the pages made
    before = procfs.cpu_times()
    r = fio.run_fill(fill)
    after = procfs.cpu_times()
    os.unlink(path)
    if before is not None and after is not None and r.ios:
        per = (after - before).busy / procfs.USER_HZ / r.ios
        cost.borrow_per_byte_s = max(0.0, per - cost.per_write_s) / size
    return cost


def _log_rates(s, logs, ramp_s: float):
    """(log writes a second, log bytes a second, basis) of a step: zpool iostat's over the measured window, unless
    its window saw no log write while the ZIL kstats counted log blocks over the step — a slowed guest's one
    report inside a 2-second window covered a stalled second (slowed lab tier, 2026-11-29: 0 writes in the window,
    1,146 log blocks in the step); then the kstats' count over fio's run (ramp and runtime)."""
    writes = float(sum(v["write_ops_s"] for v in logs)) if logs else None
    written = float(sum(v["write_bytes_s"] for v in logs)) if logs else None
    blocks, span = s.zil.slog_count, (s.extra.get("runtime_ms") or 0) / 1000 + ramp_s
    if not writes and blocks and s.zil.slog_bytes and span > 0:
        return blocks / span, s.zil.slog_bytes / span, "zil-kstats"
    return writes, written, "iostat" if logs else None


def _step(s, ram_data: bool = True, ramp_s: float = 0.0) -> HostStep:
    """A HostStep from one measured step of the probe's scenario (ScenarioStep). The data vdevs' writes count
    (as copies to take out) only where they were RAM files; the pool's own disks write by DMA."""
    vdevs = s.extra.get("vdevs") or []
    logs = [v for v in vdevs if v.get("section") == "logs" and v.get("depth") == 1]
    disks = [v for v in vdevs if v.get("section") == "data" and v.get("depth") == 1]
    data = disks if ram_data else []
    cpu = s.extra.get("cpu") or {}
    log_writes_s, log_bytes_s, log_basis = _log_rates(s, logs, ramp_s)
    return HostStep(threads=s.threads, ios=s.ios, iops=s.iops, lat_us=float(s.lat_us.mean or 0.0),
                    longest_write_us=s.lat_us.max,
                    cpu_busy=cpu.get("busy_share"), cpus=cpu.get("cpus"),
                    log_writes_s=log_writes_s, log_bytes_s=log_bytes_s, log_basis=log_basis,
                    data_writes_s=float(sum(v["write_ops_s"] for v in data)) if data else None,
                    data_bytes_s=float(sum(v["write_bytes_s"] for v in data)) if data else None,
                    txg_writes_s=float(sum(v["write_ops_s"] for v in disks)) if disks else None,
                    txg_bytes_s=float(sum(v["write_bytes_s"] for v in disks)) if disks else None,
                    itx=s.zil.itx_count, lwbs=s.zil.slog_count, commits=s.zil.commit_writer_count,
                    commit_calls=s.zil.commit_count)


def pass_steps(results: List[ScenarioResult], copy: Optional[CopyCost], ramp_s: float, ram_data: bool = True,
               log_pass: bool = False) -> List[List[HostStep]]:
    """Each measured pass's steps with their figures (slogqual.analysis.host): the one composition, for the probe
    and for anything that re-reads its recorded passes. ``ram_data``: the data vdevs were RAM files (their writes
    are copies); ``log_pass``: the log was the candidate device (its data files always RAM, its log no copy)."""
    return [host_analysis.steps_from([_step(s, ram_data=ram_data or log_pass, ramp_s=ramp_s) for s in r.steps], copy,
                                     log_in_ram=not log_pass) for r in results]


def run_probe(req: HostProbeRequest, progress: Optional[Progress] = None) -> HostProbeResult:
    req = check(req)
    output = check_output(req.output, "host document", json_document(schema.prefix(schema.HOST)))
    fstype = ram_filesystem(req.ram_dir)
    if fstype is not None and fstype not in RAM_FILESYSTEMS:
        raise UsageError(f"--ram-dir {req.ram_dir} is on {fstype}, not in RAM (tmpfs): the probe's vdevs must "
                         "cost no device time")
    for n in range(1, req.repeats + 1):  # every pass's document passes the guard before anything is written
        for name in [scenario_path(output, n)] + ([log_scenario_path(output, n)] if req.log else []):
            check_output(name, "the host probe's scenario result", json_document(schema.prefix(schema.SCENARIO)))
    userland = require_zfs()
    progress = progress or Progress(quiet=True)
    fio_version = fio.check_version().text
    owned.remove_stale(req.ram_dir, DIR_PREFIX)  # what a killed probe left (its pool went with its files)
    work = owned.make_dir(DIR_PREFIX, req.ram_dir)
    passes: List[ScenarioResult] = []
    log_passes: List[ScenarioResult] = []
    with contextlib.ExitStack() as claims:
        from slogqual import device as _device

        for dev in req.data + ([req.log] if req.log else []):  # the interlocks, before anything is written
            claims.enter_context(_device.claim_for_writing(dev, req.destroy_data, exclusive=False))
        identity = _identity(req.log) if req.log else {}
        each = PassProgress(progress, req.repeats * (2 if req.log else 1))
        runs = [(n, None) for n in range(1, req.repeats + 1)] + [(n, req.log) for n in range(1, req.repeats + 1)
                                                                   if req.log]
        failed = None  # a log pass that failed after another had run: what was measured is kept, the failure said
        for i, (n, log) in enumerate(runs, 1):
            each.n = i
            try:
                out = log_scenario_path(output, n) if log else scenario_path(output, n)
                (log_passes if log else passes).append(_measure(req, work, fstype, fio_version, out, each, log))
            except SlogqualError as exc:
                if not log or not log_passes:
                    raise
                # the log device failed under the load (draw 47166: the emulated NVMe timed out, was reset and
                # removed in pass 2; pass 3 could not create its pool, and the probe lost all it had measured)
                failed = {"pass": n, "error": str(exc)}
            finally:
                shutil.rmtree(work, ignore_errors=True)
            work = owned.make_dir(DIR_PREFIX, req.ram_dir)  # the next pass's files, or the copy's
            if failed:
                break
    try:
        copy = measure_copy(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    derived = pass_steps(passes, copy, req.ramp_s, ram_data=not req.data)
    with_log = pass_steps(log_passes, copy, req.ramp_s, log_pass=True)
    log_pass = LogPass(device=req.log, identity=identity, steps=host_analysis.best_of(with_log),
                       passes=with_log if len(with_log) > 1 else [],
                       pass_scenarios=[log_scenario_path(output, n) for n in range(1, len(with_log) + 1)],
                       failed=failed) \
        if req.log else None
    doc = HostProbeResult(
        workload=HostWorkload(protocol=req.protocol, bs=req.bs, block_size=req.block_size, write_sync=req.write_sync,
                              zils=req.zils, threads=list(req.threads)),
        ram={"directory": req.ram_dir, "filesystem": fstype, "data_files": 0 if req.data else DATA_FILES,
             "vdev_bytes": VDEV_BYTES, "log_bytes": LOG_BYTES, "data_devices": list(req.data), "layout": req.layout},
        copy=copy, steps=host_analysis.best_of(derived),
        environment=dict(environment.collect(fio_version, req.argv), openzfs_userland=userland),
        runtime_s=req.runtime_s, ramp_s=req.ramp_s, scenario=scenario_path(output, 1),
        passes=derived if len(derived) > 1 else [],
        pass_scenarios=[scenario_path(output, n) for n in range(1, len(derived) + 1)] if len(derived) > 1 else [],
        log_pass=log_pass, status="failed" if failed else "complete")
    write_json_atomic(output, doc.to_dict())
    if req.record_in_store:
        from slogqual import store
        store.record_or_warn(doc, output)
    if failed:
        raise SlogqualError(f"the log pass {failed['pass']} failed: {failed['error']} — the {len(log_passes)} log "
                            f"pass(es) before it and the host's passes are in {output}")
    return doc


def scenario_path(output: str, n: int) -> str:
    """Pass ``n``'s scenario document beside the host document (the first keeps the one-pass name)."""
    return output + (".scenario.json" if n == 1 else f".scenario.pass{n}.json")


def log_scenario_path(output: str, n: int) -> str:
    """The log pass ``n``'s scenario document beside the host document."""
    return output + (".log.scenario.json" if n == 1 else f".log.scenario.pass{n}.json")


def _identity(path: str) -> dict:
    """Which device the log pass wrote (model, serial), as far as slogqual.device tells."""
    from slogqual import device as _device

    try:
        rec = _device.identify(path)
    except SlogqualError:
        return {}
    return {k: getattr(rec, k, None) for k in ("model", "serial") if getattr(rec, k, None)}


def _measure(req: HostProbeRequest, work: str, fstype: Optional[str], fio_version: str, scenario_out: str,
             progress: Progress, log_device: Optional[str] = None) -> ScenarioResult:
    """The probe's pool and its steps: the data disks given (else files in RAM), a log file in RAM; or, with
    ``log_device`` (the log pass), data files in RAM whatever was given and that device as the log."""
    ram_data = not req.data or log_device is not None
    data = [_sparse(os.path.join(work, f"data{i}"), VDEV_BYTES) for i in range(DATA_FILES)] if ram_data \
        else list(req.data)
    log = log_device or _sparse(os.path.join(work, "log"), LOG_BYTES)
    sc = scenario_for(req)
    if log_device:
        sc = dataclasses.replace(sc, description="the host probe's log pass: data files in RAM, the candidate log",
                                 configs=[LOG_PASS_CONFIG])
    files = (data if ram_data else []) + ([] if log_device else [log])
    ident = {p: {"path": p, "kind": "file", "filesystem": fstype} if p in files else {"path": p} for p in data + [log]}
    result: ScenarioResult = new_result(sc, False, "stripe" if ram_data else req.layout, data, [log],
                                        fio_version, req.argv, ident)
    result.origin = "slogqual host-probe"
    PoolScenarioRun(sc, result, scenario_out, progress, f"{POOL_PREFIX}host-{os.getpid()}").run()
    return result


__all__ = ["HostProbeRequest", "run_probe", "check", "SlogqualError"]
