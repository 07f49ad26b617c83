"""pairbench: the pair engine (slogqual/native/pairbench.c). Builds its argv, runs it, reads its summaries
(and its raw samples, when asked for).

Only this module runs pairbench or the C compiler that builds it. Where the program comes from:

1. ``slogqual/native/pairbench`` next to the source: what ``pip install`` (setup.py's build_py) compiles
   into a wheel or a regular install (on Linux, static against musl with PyPI's ziglang where that is
   importable at build time, so a wheel's engine runs on any Linux of its architecture);
2. otherwise (an editable install, a source tree, a build machine without a compiler) it is compiled on
   first use with the system ``cc`` into the user's cache directory, under a name carrying the hash of
   the source, so an edited pairbench.c is rebuilt and two slogqual trees never share a stale binary.
   The compile writes a temporary file and renames it: a concurrent first use sees a whole binary or
   none. Where the cache directory cannot be written (a read-only home), the build goes to
   $TMPDIR/slogqual-UID/, used only when this user owns it with mode 0700.

Either way the binary must answer ``--version`` with VERSION; anything else is ToolTooOldError. Where
neither exists nor can be made (no cc: most appliances), ``unavailable()`` says why, and a sweep with
the default engine measures with fio instead (slogqual.sweep.engine).
"""

from __future__ import annotations

import dataclasses
import hashlib
import operator
import os
import platform
import re
import shutil
import sys
import tempfile
from array import array
from dataclasses import dataclass
from typing import Dict, List, Optional

from slogqual.errors import MeasurementError, ToolFailedError, ToolMissingError, ToolTimeoutError, ToolTooOldError
from slogqual import owned as _owned
from slogqual.tools import spawn as _run

PROGRAM = "pairbench"
COMPILER = "cc"
VERSION = _run.PROGRAMS[PROGRAM].minimum  # (3,): the argv and the output this module reads
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(HERE, "native", "pairbench.c")
PACKAGED = os.path.join(HERE, "native", "pairbench")
MAGIC = b"SQPAIR2\n"
CFLAGS = ["-O2", "-std=c99", "-Wall"]
NO_COMPILER = f"no pair engine was installed with slogqual and {COMPILER} is not on PATH to build one"
# the other way out, for a sweep that fio can measure (not --precision, --sustain or --probe, which refuse it)
OR_FIO = ", or measure with --engine fio, whose write+flush percentiles are upper bounds"

SAMPLES_PREFIX = "slogqual-pair-"  # a run's samples directory in the temporary directory (owner.pid inside)
SERIES = ("pair", "write", "flush")
PERCENTILES = ("p50", "p90", "p99", "p999", "p9999")  # slogqual.analysis.percentiles.REPORTED's keys
BATCHES = 30  # slogqual.analysis.precision.BATCHES

_N = "([0-9]+)"
_HEADER = re.compile(rf"pairbench {_N} ios={_N} elapsed_ns={_N} bytes={_N} flush=(\S+) rounds={_N}")
_BATCHES = re.compile(rf"batches per={_N} sums=([0-9]+(?:,[0-9]+){{{BATCHES - 1}}})")
_OVERTIME = re.compile(rf"overtime interval_ns={_N} end_ns={_N} count={_N}")
_BUCKET = re.compile(rf"bucket ios={_N} sum={_N} p99=([0-9]+|-) max=([0-9]+|-)")
_SERIES = re.compile(rf"series ({'|'.join(SERIES)}) n={_N} sum={_N} sumsq={_N} min={_N} max={_N} "
                     + " ".join(f"{key}={_N}" for key in PERCENTILES))


@dataclass
class PairJob:
    """One IO size on one file or block device: QD1 write + flush pairs for runtime_s (with precision,
    on until the pair mean's 95 % interval is that narrow, for at most max_runtime_s in all)."""

    filename: str
    bs: int
    region_bytes: int
    runtime_s: float
    direct: bool = True
    max_bytes: int = 0  # stop after this many bytes (0: runtime only); --sustain BYTES
    precision: Optional[float] = None  # relative half-width of the pair mean's batch-means 95 % interval
    max_runtime_s: Optional[float] = None  # ... and the most the size may run for it (default runtime_s)
    interval_ms: float = 100.0  # latency over time: the width of one interval
    samples: Optional[str] = None  # where to keep the raw per-IO samples (None: not written)

    @property
    def interval_ns(self) -> int:
        return interval_ns(self.interval_ms)


def interval_ns(interval_ms: float) -> int:
    """An interval in whole ns, as slogqual.analysis.overtime.aggregate rounds it."""
    return int(round(interval_ms * 1e6))


@dataclass
class Series:
    """One series of a run (the pair, the write or the flush), exact, in ns: the count, the sum and the
    sum of squares (integers: the mean and the variance follow exactly), the extremes and the nearest-
    rank percentiles of slogqual.analysis.percentiles.REPORTED by key."""

    n: int
    total: int
    squares: int
    min: int
    max: int
    percentiles: Dict[str, int]


@dataclass
class Batches:
    """The pair's 30 batch sums of ``per`` consecutive IOs each (the first n - 30 * per left out)."""

    per: int
    sums: List[int]


@dataclass
class Intervals:
    """Per interval of ``interval_ns`` (by the IO's start), in time order: IOs, the sum of their pair
    ns, their p99 and max pair ns (None where no IO started)."""

    interval_ns: int
    end_ns: int
    ios: List[int]
    sums: List[int]
    p99: List[Optional[int]]
    max: List[Optional[int]]


@dataclass
class RawSamples:
    """Raw per-IO samples: the i-th IO started ``start_ns[i]`` after the run began; ``write_ns[i]`` and
    ``flush_ns[i]`` are its write and flush."""

    start_ns: array
    write_ns: array
    flush_ns: array

    def pair_ns(self) -> List[int]:
        return list(map(operator.add, self.write_ns, self.flush_ns))  # C-level: millions on a fast device


@dataclass
class PairResult:
    """What the engine measured, summarised by the engine: ``series`` by name (pair, write, flush);
    ``raw`` only when asked for."""

    ios: int
    elapsed_ns: int
    bytes_written: int
    flush: str  # fdatasync | fsync | DIOCGFLUSH (none: a samples file summarised)
    version: str  # "pairbench 3"
    rounds: int  # precision checks: 1 + how often the run was extended (0: a samples file summarised)
    series: Dict[str, Series]
    batches: Batches
    intervals: Intervals
    raw: Optional[RawSamples] = None


def compile_command(source: str, output: str, compiler: str = COMPILER) -> List[str]:
    """The compiler's argv (setup.py builds the same way)."""
    return [compiler, *CFLAGS, "-o", output, source]


def _cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "slogqual")


def _source_hash() -> str:
    with open(SOURCE, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()[:16]


def _private_tmp() -> str:
    return os.path.join(tempfile.gettempdir(), f"slogqual-{os.getuid()}")


def cached_path(directory: Optional[str] = None) -> str:
    return os.path.join(directory or _cache_dir(),
                        f"pairbench-{_source_hash()}-{sys.platform}-{platform.machine()}")


def _usable_tmp(directory: str) -> bool:
    """A directory in the shared temporary directory is trusted only if this user owns it, mode 0700."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        st = os.lstat(directory)
    except OSError:
        return False
    return os.path.isdir(directory) and not os.path.islink(directory) and st.st_uid == os.getuid() \
        and st.st_mode & 0o077 == 0


def build(output: str, timeout: float = 120) -> str:
    """Compile SOURCE into output (atomically); ToolMissingError without cc (NO_COMPILER, then how to get
    one or do without), ToolFailedError when the compile fails (its last complaint in the message)."""
    if not os.path.exists(SOURCE):
        raise ToolMissingError(f"{SOURCE} is missing: reinstall slogqual", program=PROGRAM)
    if _run.which(COMPILER) is None:
        raise ToolMissingError(missing_compiler(), program=COMPILER)
    os.makedirs(os.path.dirname(output), exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".pairbench-", dir=os.path.dirname(output))
    os.close(fd)
    try:
        argv = compile_command(SOURCE, tmp)
        proc = _run.run(argv, timeout=timeout, typed_timeout=True)
        if proc.returncode != 0:
            raise _run.failure(argv, proc.returncode, proc.stderr, proc.stdout,
                               message=f"cannot build the pair engine: {COMPILER} failed: "
                                       + (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1])
        os.chmod(tmp, 0o755)
        os.replace(tmp, output)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return output


def locate(build_if_missing: bool = True) -> str:
    """The pairbench binary to run: the packaged one if present, else the cached build (made now)."""
    if os.access(PACKAGED, os.X_OK):
        return PACKAGED
    path = cached_path()
    fallback = cached_path(_private_tmp())  # a home that cannot be written (the lab guest's read-only root)
    for candidate in (path, fallback):
        if os.access(candidate, os.X_OK) and (candidate == path or _usable_tmp(_private_tmp())):
            return candidate
    if not build_if_missing:
        raise ToolMissingError(f"the pair engine is not built ({path})", program=PROGRAM)
    try:
        return build(path)
    except OSError:  # the cache directory cannot be made or written
        if not _usable_tmp(_private_tmp()):
            raise ToolMissingError(f"the pair engine cannot be built: neither {os.path.dirname(path)} nor "
                                   f"{_private_tmp()} is writable", program=PROGRAM) from None
        return build(fallback)


def missing_compiler(fio_instead: bool = True) -> str:
    """NO_COMPILER and how to get cc; with ``fio_instead``, measuring with --engine fio too (one line)."""
    return f"{NO_COMPILER} ({_run.install_advice(COMPILER)}{OR_FIO if fio_instead else ''})"


def unavailable() -> str:
    """Why the pair engine cannot be had here, in a few words ('' when it can: installed, built before,
    or built now, as locate() does): NO_COMPILER, the compiler's failure, or a cache nobody can write.
    A caller that can measure without it (fio) says this instead of failing."""
    try:
        locate()
    except ToolMissingError as exc:
        return NO_COMPILER if exc.program == COMPILER else str(exc)
    except (ToolFailedError, ToolTimeoutError) as exc:
        return str(exc)
    except OSError as exc:  # the private tmp directory would do, and then could not be written either
        return f"the pair engine cannot be built: {exc.strerror or exc}"
    return ""


def version() -> _run.ToolVersion:
    """The engine's version ('pairbench 3'); builds it first when needed."""
    return _run.get_version(locate(), ["--version"], r"^pairbench (\d+)")


def check_version(fio_instead: bool = True) -> _run.ToolVersion:
    """version(), refused (ToolTooOldError) unless it is exactly the samples format this module reads.
    ``fio_instead``: whether the caller could measure with --engine fio instead, which the refusal for
    want of cc then names; False for what needs this engine (--precision, --sustain, --probe), whose
    refusal names only how to get it."""
    try:
        found = _run.check_version(PROGRAM, version)
    except ToolMissingError as exc:
        if exc.program != COMPILER or fio_instead:
            raise
        raise ToolMissingError(missing_compiler(fio_instead=False), program=COMPILER) from None
    if found.version != VERSION:
        raise ToolTooOldError(f"{found.text} at {locate()} is not pairbench {VERSION[0]}: reinstall slogqual",
                                   program=PROGRAM, found=found.version, needed=VERSION)
    return found


def build_argv(binary: str, job: PairJob) -> List[str]:
    runtime_ms = max(1, int(round(job.runtime_s * 1000)))
    argv = [binary, "--interval-ns", str(job.interval_ns)]
    if job.samples:
        argv += ["--samples", job.samples]
    if job.max_bytes:
        argv += ["--max-bytes", str(job.max_bytes)]
    if job.precision is not None:
        most = max(runtime_ms, int(round((job.max_runtime_s or job.runtime_s) * 1000)))
        argv += ["--precision", repr(float(job.precision)), "--max-runtime-ms", str(most)]
    return argv + ["--", job.filename, str(job.bs), str(job.region_bytes), str(runtime_ms),
                   "1" if job.direct else "0"]


def summarize_argv(binary: str, samples: str, interval_ms: float, elapsed_ns: Optional[int] = None) -> List[str]:
    argv = [binary, "--summarize", "--interval-ns", str(interval_ns(interval_ms))]
    if elapsed_ns is not None:
        argv += ["--elapsed-ns", str(elapsed_ns)]
    return argv + ["--", samples]


def read_samples(data: bytes) -> tuple:
    """(start_ns, write_ns, flush_ns) arrays from a samples file's bytes; ValueError when it is not one."""
    if not data.startswith(MAGIC):
        raise ValueError("the samples file does not start with " + repr(MAGIC))
    body = data[len(MAGIC):]
    if len(body) % 24:
        raise ValueError(f"the samples file holds {len(body)} bytes after its header, not whole "
                         "(start, write, flush) records")
    values = array("Q")
    if values.itemsize != 8:  # pragma: no cover - every platform slogqual runs on has 8-byte unsigned long long
        raise ValueError("no 8-byte unsigned integer type")
    values.frombytes(body)
    if sys.byteorder != "little":
        values.byteswap()
    return values[0::3], values[1::3], values[2::3]


def _line(lines: List[str], at: int, pattern: "re.Pattern", what: str) -> "re.Match":
    text = lines[at] if at < len(lines) else "(the end of the output)"
    m = pattern.fullmatch(text)
    if not m:
        raise ValueError(f"line {at + 1}: expected {what}, got {text[:80]!r}")
    return m


def _optional(word: str) -> Optional[int]:
    return None if word == "-" else int(word)


def parse(stdout: str) -> PairResult:
    """The engine's summaries (the format in pairbench.c's header); ValueError naming the first line
    that is not what it must be, or figures that contradict each other."""
    lines = (stdout or "").splitlines()
    head = _line(lines, 0, _HEADER, "the pairbench summary line")
    ios = int(head.group(2))
    b = _line(lines, 1, _BATCHES, f"the {BATCHES} batch sums")
    o = _line(lines, 2, _OVERTIME, "the over-time header")
    count = int(o.group(3))
    if not 1 <= count <= len(lines):
        raise ValueError(f"{count} intervals announced, {len(lines)} lines in all")
    intervals = Intervals(interval_ns=int(o.group(1)), end_ns=int(o.group(2)), ios=[], sums=[], p99=[], max=[])
    for at in range(3, 3 + count):
        m = _line(lines, at, _BUCKET, "an interval")
        n, p99, top = int(m.group(1)), _optional(m.group(3)), _optional(m.group(4))
        if (n == 0) != (p99 is None) or (n == 0) != (top is None):
            raise ValueError(f"line {at + 1}: an interval with {n} IOs and p99 {m.group(3)}, max {m.group(4)}")
        intervals.ios.append(n)
        intervals.sums.append(int(m.group(2)))
        intervals.p99.append(p99)
        intervals.max.append(top)
    if sum(intervals.ios) != ios:
        raise ValueError(f"the summary says {ios} IOs, the intervals hold {sum(intervals.ios)}")
    series = {}
    for at, name in enumerate(SERIES, 3 + count):
        m = _line(lines, at, _SERIES, f"the {name} series")
        if m.group(1) != name or int(m.group(2)) != ios:
            raise ValueError(f"line {at + 1}: expected the {name} series of {ios} IOs")
        figures = [int(v) for v in m.groups()[1:]]
        series[name] = Series(n=figures[0], total=figures[1], squares=figures[2], min=figures[3], max=figures[4],
                              percentiles=dict(zip(PERCENTILES, figures[5:])))
    at = 3 + count + len(SERIES)
    if lines[at:] != ["end"]:
        raise ValueError(f"line {at + 1}: expected 'end' and nothing after it")
    if ios == 0:
        raise ValueError("a summary of no IOs")
    return PairResult(ios=ios, elapsed_ns=int(head.group(3)), bytes_written=int(head.group(4)), flush=head.group(5),
                      version=f"pairbench {head.group(1)}", rounds=int(head.group(6)), series=series,
                      batches=Batches(per=int(b.group(1)), sums=[int(v) for v in b.group(2).split(",")]),
                      intervals=intervals)


def _load_raw(argv: List[str], proc, path: str, ios: int) -> RawSamples:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise _run.parse_failed(PROGRAM, argv, proc.stdout, f"no samples file ({exc.strerror})",
                                stderr=proc.stderr) from None
    start_ns, write_ns, flush_ns = _run.parse_text(PROGRAM, argv, proc.stdout, lambda _text: read_samples(data),
                                                   stderr=proc.stderr)
    if len(write_ns) != ios:
        raise _run.parse_failed(PROGRAM, argv, proc.stdout, f"the summary says {ios} IOs, the samples file "
                                f"holds {len(write_ns)}", stderr=proc.stderr)
    return RawSamples(start_ns=start_ns, write_ns=write_ns, flush_ns=flush_ns)


def _run_engine(argv: List[str], timeout: float, what: str):
    try:
        proc = _run.run(argv, timeout=timeout, typed_timeout=True)
    except ToolTimeoutError as exc:
        raise _run.timed_out(argv, timeout, exc.stderr_tail, what) from None
    if proc.returncode != 0:
        complaint = (proc.stderr or "").strip().splitlines() or [f"exit status {proc.returncode}"]
        raise _run.failure(argv, proc.returncode, proc.stderr, message=f"the pair engine failed {what}: {complaint[-1]}")
    return proc


def run_job(job: PairJob, timeout: Optional[float] = None, binary: Optional[str] = None,
            raw: bool = False) -> PairResult:
    """Run one size and read the engine's summaries; with raw, the per-IO samples too (kept at
    job.samples when given, else read from a temporary file). ToolFailedError (the engine's one-line
    complaint) when it fails, ToolOutputError when its output cannot be read, ToolTimeoutError when it
    hangs (a device that stops answering). Samples directories of runs that were killed are removed
    first."""
    binary = binary or locate()
    if timeout is None:
        timeout = max(job.runtime_s, job.max_runtime_s or 0) * 3 + 120
    remove_stale_samples()
    workdir = _owned.make_dir(SAMPLES_PREFIX) if raw and not job.samples else None
    try:
        if workdir:
            job = dataclasses.replace(job, samples=os.path.join(workdir, "samples"))
        argv = build_argv(binary, job)
        proc = _run_engine(argv, timeout, f"on {job.filename} at bs={job.bs}")
        result = _run.parse_text(PROGRAM, argv, proc.stdout, parse, stderr=proc.stderr)
        if raw:
            result.raw = _load_raw(argv, proc, job.samples, result.ios)
    finally:
        if workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    if result.ios == 0:  # pragma: no cover - parse refuses it; the engine always completes one IO
        raise MeasurementError(f"the pair engine completed no writes on {job.filename} at bs={job.bs}")
    return result


def remove_stale_samples(base: Optional[str] = None) -> List[str]:
    """The samples directories (in ``base``, the temporary directory by default) of runs killed before
    they could remove theirs: removed, and returned."""
    return _owned.remove_stale(base, SAMPLES_PREFIX)


def summarize_file(samples: str, interval_ms: float = 100.0, elapsed_ns: Optional[int] = None,
                   binary: Optional[str] = None, timeout: float = 600) -> PairResult:
    """The engine's summaries of a samples file it wrote (or one in its format): the same figures a run
    prints. elapsed_ns: the run's engine time (the end of the timeline); without it, the end of the last IO."""
    argv = summarize_argv(binary or locate(), samples, interval_ms, elapsed_ns)
    proc = _run_engine(argv, timeout, f"on the samples file {samples}")
    return _run.parse_text(PROGRAM, argv, proc.stdout, parse, stderr=proc.stderr)
