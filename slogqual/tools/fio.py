"""fio: the measurement engine. Builds QD1 sync-write jobs, runs them, parses JSON.

Only this module spawns fio. A job is one IO size against one target; the
sweep (slogqual.sweep.engine) strings jobs together.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from slogqual.errors import MeasurementError, ToolTimeoutError, UsageError
from slogqual.tools import spawn as _run

PROGRAM = "fio"
# fio 3.19 is the first release with the nbd engine; JSON lat_ns/sync sections are older.
MIN_VERSION = _run.PROGRAMS[PROGRAM].minimum

# Percentiles fio is asked for. 75, 99.5 and 99.95 are there for the union bound of
# flush mode (docs/results.md): p(q) of write+flush <= p((1+q)/2) of each part.
PERCENTILES = (50.0, 75.0, 99.0, 99.5, 99.9, 99.95)

MODES = ("flush", "dsync")


@dataclass
class FioJob:
    """One QD1, one-thread, one-job synchronous random-write job."""

    bs: int
    runtime_s: float
    mode: str = "flush"  # flush: write then fdatasync per IO; dsync: O_DSYNC writes
    filename: Optional[str] = None  # file or block device (psync engine)
    uri: Optional[str] = None  # nbd:// or nbd+unix:// (nbd engine)
    region_bytes: Optional[int] = None  # --size: span of the random offsets
    direct: bool = True
    name: str = "slogqual"

    @property
    def engine(self) -> str:
        return "nbd" if self.uri else "psync"


@dataclass
class FioLatency:
    """A fio latency section (lat_ns), converted to microseconds."""

    n: int
    mean: float
    min: float
    max: float
    stddev: float
    percentiles: Dict[float, float] = field(default_factory=dict)

    def pct(self, q: float) -> Optional[float]:
        return self.percentiles.get(q)


@dataclass
class FioWriteResult:
    ios: int
    runtime_ms: float
    iops: float
    bw_bytes: float
    write_lat: FioLatency
    sync_lat: Optional[FioLatency]
    error: int
    fio_version: str
    options: Dict[str, str] = field(default_factory=dict)
    ended_ms: Optional[int] = None  # fio's "timestamp_ms": when it wrote the report, i.e. the run's end
    # fio's completion latency (clat_ns: write_lat less the submission), where the report has it; what
    # the lab self-test's evidence shows (slogqual.lab.selftest)
    write_clat: Optional[FioLatency] = None


def _escape_filename(path: str) -> str:
    # fio separates several files with ':'; a literal colon must be escaped.
    return path.replace("\\", "\\\\").replace(":", "\\:")


def build_argv(job: FioJob) -> List[str]:
    if job.mode not in MODES:
        raise UsageError(f"unknown mode {job.mode!r}: use one of {', '.join(MODES)}")
    runtime_ms = max(1, int(round(job.runtime_s * 1000)))
    argv = [
        "fio",
        f"--name={job.name}",
        "--output-format=json",
        "--rw=randwrite",
        f"--bs={job.bs}",
        "--iodepth=1",
        "--numjobs=1",
        # Jobs as threads of the one fio process: when slogqual is interrupted and kills fio, no
        # forked job process lives on writing to the device until its runtime ends.
        "--thread",
        "--time_based",
        f"--runtime={runtime_ms}ms",
        # Random offsets with repeats allowed, like diskinfo's random() % (mediasize / size).
        "--norandommap",
        "--randrepeat=0",
        "--lat_percentiles=1",
        "--percentile_list=" + ":".join(f"{p:g}" for p in PERCENTILES),
    ]
    if job.uri:
        if job.mode == "dsync":
            raise UsageError("--mode dsync needs a file or block device: fio's nbd engine has no FUA/O_DSYNC writes")
        # The nbd engine implements fsync as NBD_CMD_FLUSH and rejects fdatasync (EINVAL).
        argv += ["--ioengine=nbd", f"--uri={job.uri}", "--fsync=1"]
    else:
        argv += [
            "--ioengine=psync",
            f"--filename={_escape_filename(job.filename)}",
            "--allow_file_create=0",  # never create a file at a mistyped path
            f"--direct={1 if job.direct else 0}",
        ]
        argv += ["--fdatasync=1"] if job.mode == "flush" else ["--sync=dsync"]
    if job.region_bytes:
        argv.append(f"--size={job.region_bytes}")
    return argv


def version() -> _run.ToolVersion:
    """fio's version; ``.text`` ('fio-3.33') is what result documents record."""
    return _run.get_version(PROGRAM, ["--version"], r"fio-(\d+)\.(\d+)")


def check_version() -> _run.ToolVersion:
    """fio's version, or ToolMissingError/ToolTooOldError (exit 2) unless it is present and new enough."""
    return _run.check_version(PROGRAM, version)


def extract_json(stdout: str) -> dict:
    """The JSON object in fio's stdout; some engines print text lines before it."""
    for m in re.finditer(r"^\{", stdout, flags=re.MULTILINE):
        try:
            return _run.loads_json(stdout[m.start():], "fio output")
        except ValueError:
            continue
    raise ValueError("no JSON object in fio output")


def _latency(section: dict) -> FioLatency:
    pct = {float(k): v / 1000.0 for k, v in (section.get("percentile") or {}).items()}
    return FioLatency(
        n=int(section.get("N", 0)),
        mean=section.get("mean", 0.0) / 1000.0,
        min=section.get("min", 0) / 1000.0,
        max=section.get("max", 0) / 1000.0,
        stddev=section.get("stddev", 0.0) / 1000.0,
        percentiles=pct,
    )


def _finite(result: FioWriteResult) -> FioWriteResult:
    """ValueError when a figure is not a finite number (NaN, Infinity, 1e999): fio prints none such,
    and one would make every figure derived from it, and the document, meaningless."""
    lats = [lat for lat in (result.write_lat, result.sync_lat, result.write_clat) if lat is not None]
    figures = [("runtime", result.runtime_ms), ("iops", result.iops), ("bw_bytes", result.bw_bytes)]
    for lat in lats:
        figures += [("latency mean", lat.mean), ("latency min", lat.min), ("latency max", lat.max),
                    ("latency stddev", lat.stddev)]
        figures += [(f"percentile {q}", v) for q, v in lat.percentiles.items()]
        figures += [("percentile", q) for q in lat.percentiles]
    for name, value in figures:
        if not math.isfinite(value):
            raise ValueError(f"unexpected fio JSON: {name} is {value}")
    return result


def job_result(job: dict, fio_version: str = "", ended_ms: Optional[int] = None) -> FioWriteResult:
    """One job entry of a fio report (an entry of "jobs", or of "client_stats" in client/server mode)."""
    try:
        write = job["write"]
        sync = job.get("sync") or {}
        sync_lat = _latency(sync["lat_ns"]) if sync.get("lat_ns", {}).get("N") else None
        return _finite(FioWriteResult(
            ios=int(write["total_ios"]),
            runtime_ms=float(write.get("runtime") or job.get("job_runtime") or 0),
            iops=float(write["iops"]),
            bw_bytes=float(write["bw_bytes"]),
            write_lat=_latency(write["lat_ns"]),
            sync_lat=sync_lat,
            error=int(job.get("error", 0)),
            fio_version=fio_version if isinstance(fio_version, str) else "",
            options=dict(job.get("job options") or {}),
            ended_ms=ended_ms,
            write_clat=_latency(write["clat_ns"]) if "clat_ns" in write else None,
        ))
    # Attribute: a section not an object; Overflow: int() of an Infinity (JSON has no word for it, fio's parser takes it)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise ValueError(f"unexpected fio JSON layout: {exc!r}") from None


def parse_result(doc: dict) -> FioWriteResult:
    """Parse fio's JSON document of a single write job."""
    try:
        job = doc["jobs"][0]
        ended = int(doc["timestamp_ms"]) if doc.get("timestamp_ms") else None
        version = doc.get("fio version", "")
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise ValueError(f"unexpected fio JSON layout: {exc!r}") from None
    return job_result(job, version, ended)


_NOISE = ("fio: connected to NBD server",)


def error_line(stderr: str, fallback: str) -> str:
    """The most telling line of fio's stderr, e.g. the io_u error with its errno text."""
    lines = [ln.strip() for ln in (stderr or "").splitlines() if ln.strip() and ln.strip() not in _NOISE]
    for ln in lines:
        if "io_u error" in ln or "error=" in ln or "err=" in ln:
            return ln
    return lines[0] if lines else fallback


def job_error_text(code: int) -> str:
    """fio's job error (an errno) in words. 512 is not a user-space errno: Linux's ERESTARTSYS, which a
    zvol's open returns when it cannot get the pool's namespace lock in time (pool/held_open.py)."""
    if code == 512:
        return ("error 512 (ERESTARTSYS: on Linux, a zvol's open that did not get the pool's namespace lock "
                "within zvol_open_timeout_ms)")
    return f"error {code} ({os.strerror(code)})" if code > 0 else f"error {code}"


def interpret(stdout: str, stderr: str, returncode: int, where: str, bs: int,
              argv: Optional[Sequence[str]] = None) -> FioWriteResult:
    """Turn one fio run's output into a result, or an error naming the cause: ToolFailedError when fio
    failed (non-zero exit or an IO error in its report), ToolOutputError when it exited 0 but its
    report cannot be read, a plain MeasurementError when it wrote nothing."""
    argv = list(argv) if argv else [PROGRAM]
    try:
        result = parse_result(extract_json(stdout))
    except ValueError as exc:
        if returncode != 0:
            raise _run.failure(argv, returncode, stderr, message=f"fio failed on {where} at bs={bs}: "
                               + error_line(stderr, f"exit code {returncode}, no result")) from None
        raise _run.parse_failed(PROGRAM, argv, stdout, f"{exc} on {where} at bs={bs}", stderr=stderr) from None
    if returncode != 0 or result.error:
        raise _run.failure(argv, returncode, stderr, message=f"fio failed on {where} at bs={bs}: "
                           + error_line(stderr, job_error_text(result.error)))
    if result.ios == 0:
        raise MeasurementError(f"fio completed no writes on {where} at bs={bs}")
    return result


def _run_fio(argv: List[str], timeout: Optional[float], what: str):
    try:
        return _run.run(argv, timeout=timeout, typed_timeout=True)
    except ToolTimeoutError as exc:
        raise _run.timed_out(argv, timeout, exc.stderr_tail, what) from None


def run_job(job: FioJob, timeout: Optional[float] = None) -> FioWriteResult:
    argv = build_argv(job)
    if timeout is None:
        timeout = job.runtime_s * 3 + 120
    proc = _run_fio(argv, timeout, f"at bs={job.bs}")
    return interpret(proc.stdout, proc.stderr, proc.returncode, job.uri or job.filename, job.bs, argv)


# --- pool scenario loads: several LUNs (zvols or files), several threads each ----------------

@dataclass
class FioLoad:
    """A thread-scaled load over several LUNs, reported as one group (group_reporting)."""

    rw: str  # randwrite | write
    bs: int
    threads_per_lun: int
    runtime_s: float
    ramp_s: float = 0.0
    devices: List[str] = field(default_factory=list)  # zvol block devices, one job section each
    directory: Optional[str] = None  # dataset mountpoint: files per thread instead of devices
    files: int = 0  # with directory: file groups (LUNs)
    file_size: Optional[int] = None  # with directory: bytes per thread's file
    write_sync: str = "none"  # none | dsync | fsync
    direct: bool = True
    first_job: int = 0  # jobs are named lun<first_job+i> / file<first_job+i>: distinct across fio clients


def load_options(load: FioLoad) -> Tuple[List[str], List[Tuple[str, List[str]]]]:
    """The load as fio options without their dashes: the global ones, then (job name, its options) per
    job. One description for both forms fio takes: a command line (build_load_argv) and a job file
    (job_file, for fio's client/server mode, which takes job files only)."""
    if load.rw not in ("randwrite", "write"):
        raise UsageError(f"unknown rw {load.rw!r}")
    opts = ["group_reporting", f"rw={load.rw}", f"bs={load.bs}",
            "ioengine=psync", "iodepth=1", "thread", "time_based", f"runtime={max(1, int(load.runtime_s * 1000))}ms",
            "norandommap", "randrepeat=0", "lat_percentiles=1",
            "percentile_list=" + ":".join(f"{p:g}" for p in PERCENTILES),
            f"direct={1 if load.direct else 0}"]
    if load.ramp_s > 0:
        opts.append(f"ramp_time={max(1, int(load.ramp_s * 1000))}ms")
    if load.write_sync == "dsync":
        opts.append("sync=dsync")
    elif load.write_sync == "fsync":
        opts.append("fsync=1")
    elif load.write_sync != "none":
        raise UsageError(f"unknown write_sync {load.write_sync!r}")
    jobs: List[Tuple[str, List[str]]] = []
    if load.devices:
        opts.append("allow_file_create=0")
        for i, dev in enumerate(load.devices):
            jobs.append((f"lun{load.first_job + i}", [f"filename={_escape_filename(dev)}",
                                                      f"numjobs={load.threads_per_lun}"]))
    elif load.directory:
        # No filename: every clone of a job gets its own file (name.clone.0), like separate clients.
        opts += [f"directory={_escape_filename(load.directory)}", f"size={load.file_size}"]
        for i in range(load.files):
            jobs.append((f"file{load.first_job + i}", [f"numjobs={load.threads_per_lun}"]))
    else:
        raise UsageError("a load needs devices or a directory")
    return opts, jobs


def build_load_argv(load: FioLoad) -> List[str]:
    opts, jobs = load_options(load)
    argv = ["fio", "--output-format=json"] + [f"--{o}" for o in opts]
    for name, job_opts in jobs:
        argv += [f"--name={name}"] + [f"--{o}" for o in job_opts]
    return argv


def job_file(load: FioLoad) -> str:
    """The load as a fio job file: what ``fio --client`` sends to a server. A job file expands
    ``${VAR}`` and ends a value at a line break, so a path with either is refused."""
    opts, jobs = load_options(load)
    for o in opts + [o for _, j in jobs for o in j]:
        if "\n" in o or "\r" in o or "$" in o:
            raise UsageError(f"fio job option {o!r}: a path with a line break or '$' cannot go into a fio job file")
    lines = ["[global]", *opts]
    for name, job_opts in jobs:
        lines += ["", f"[{name}]", *job_opts]
    return "\n".join(lines) + "\n"


CHECK_JOB_BS = 4096  # check_job_argv's --bs=4k


def check_job_argv(device: str, runtime_s: int) -> List[str]:
    """`slogqual lab check`'s load: QD1 4 KiB random writes, O_DIRECT, on a (sync=always) zvol."""
    return ["fio", "--name=labcheck", f"--filename={_escape_filename(device)}", "--rw=randwrite", "--bs=4k",
            "--ioengine=psync", "--direct=1", "--iodepth=1", "--numjobs=1", "--size=64M", "--time_based",
            f"--runtime={int(runtime_s)}", "--output-format=json"]


def check_job(device: str, runtime_s: int, timeout: float = 120) -> subprocess.CompletedProcess:
    """:func:`check_job_argv` run; what fio printed and its exit status are the caller's to judge
    (``proc.args`` is the argv). A run past ``timeout`` raises subprocess.TimeoutExpired."""
    return _run.run(check_job_argv(device, runtime_s), timeout=timeout)


def run_load(load: FioLoad, timeout: Optional[float] = None) -> FioWriteResult:
    argv = build_load_argv(load)
    if timeout is None:
        timeout = (load.runtime_s + load.ramp_s) * 3 + 300
    proc = _run_fio(argv, timeout, f"(a {load.rw} load at bs={load.bs})")
    where = load.directory or ",".join(load.devices)
    return interpret(proc.stdout, proc.stderr, proc.returncode, where, load.bs, argv)


# --- preconditioning: a sequential fill (SNIA SSS PTS workload-independent preconditioning) ----

@dataclass
class FioFill:
    """Sequential writes over the first ``bytes_`` of a target, ``loops`` times, then one flush."""

    bytes_: int
    loops: int = 1
    bs: int = 128 * 1024  # SNIA's preconditioning block size
    iodepth: int = 16
    filename: Optional[str] = None
    uri: Optional[str] = None
    direct: bool = True
    name: str = "slogqual-precondition"


def build_fill_argv(fill: FioFill) -> List[str]:
    if fill.bytes_ < fill.bs:
        raise UsageError(f"a fill needs at least {fill.bs} bytes, not {fill.bytes_}")
    size = fill.bytes_ - fill.bytes_ % fill.bs
    argv = ["fio", f"--name={fill.name}", "--output-format=json", "--rw=write", f"--bs={fill.bs}",
            f"--size={size}", f"--loops={max(1, fill.loops)}", "--numjobs=1", f"--iodepth={fill.iodepth}",
            "--thread",  # as build_argv: an interrupted fill leaves no forked writer behind
            "--end_fsync=1"]
    if fill.uri:
        argv += ["--ioengine=nbd", f"--uri={fill.uri}"]
    else:
        argv += ["--ioengine=libaio" if fill.direct else "--ioengine=psync",
                 f"--filename={_escape_filename(fill.filename)}", "--allow_file_create=0",
                 f"--direct={1 if fill.direct else 0}"]
    return argv


def run_fill(fill: FioFill, timeout: Optional[float] = None) -> FioWriteResult:
    """Run the fill; its result's ios/bw/runtime say how much was written how fast."""
    argv = build_fill_argv(fill)
    proc = _run_fio(argv, timeout, "(the preconditioning fill)")
    return interpret(proc.stdout, proc.stderr, proc.returncode, fill.uri or fill.filename, fill.bs, argv)
