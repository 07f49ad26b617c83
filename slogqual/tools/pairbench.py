"""pairbench: the pair engine (slogqual/native/pairbench.c). Builds its argv, runs it, reads its samples.

Only this module runs pairbench or the C compiler that builds it. Where the program comes from:

1. ``slogqual/native/pairbench`` next to the source: what ``pip install`` (setup.py's build_py) compiles
   into a wheel or a regular install;
2. otherwise (an editable install, a source tree, a build machine without cc) it is compiled on first
   use with the system ``cc`` into the user's cache directory, under a name carrying the hash of the
   source, so an edited pairbench.c is rebuilt and two slogqual trees never share a stale binary. The
   compile writes a temporary file and renames it: a concurrent first use sees a whole binary or none.
   Where the cache directory cannot be written (a read-only home), the build goes to
   $TMPDIR/slogqual-UID/, used only when this user owns it with mode 0700.

Either way the binary must answer ``--version`` with VERSION; anything else is ToolTooOldError.
"""

from __future__ import annotations

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
from typing import List, Optional

from slogqual.errors import MeasurementError, ToolMissingError, ToolTimeoutError, ToolTooOldError
from slogqual.tools import run as _run

PROGRAM = "pairbench"
COMPILER = "cc"
VERSION = _run.PROGRAMS[PROGRAM].minimum  # (2,): the samples format and argv of this module
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(HERE, "native", "pairbench.c")
PACKAGED = os.path.join(HERE, "native", "pairbench")
MAGIC = b"SQPAIR2\n"
CFLAGS = ["-O2", "-std=c99", "-Wall"]

_SUMMARY = re.compile(r"^pairbench (\d+) ios=(\d+) elapsed_ns=(\d+) bytes=(\d+) flush=(\S+)\s*$", re.MULTILINE)


@dataclass
class PairJob:
    """One IO size on one file or block device: QD1 write + flush pairs for runtime_s."""

    filename: str
    bs: int
    region_bytes: int
    runtime_s: float
    direct: bool = True
    max_bytes: int = 0  # stop after this many bytes (0: runtime only); --sustain BYTES


@dataclass
class PairResult:
    """Raw per-IO samples: the i-th IO started ``start_ns[i]`` after the run began; ``write_ns[i]`` and
    ``flush_ns[i]`` are its write and flush."""

    ios: int
    elapsed_ns: int
    bytes_written: int
    flush: str  # fdatasync | fsync | DIOCGFLUSH
    write_ns: array
    flush_ns: array
    version: str  # "pairbench 2"
    start_ns: array = None

    def pair_ns(self) -> List[int]:
        return list(map(operator.add, self.write_ns, self.flush_ns))  # C-level: millions on a fast device


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
    """Compile SOURCE into output (atomically); ToolMissingError without cc, ToolFailedError when the
    compile fails (its last complaint in the message)."""
    if not os.path.exists(SOURCE):
        raise ToolMissingError(f"{SOURCE} is missing: reinstall slogqual", program=PROGRAM)
    _run.require(COMPILER)
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


def version() -> _run.ToolVersion:
    """The engine's version ('pairbench 2'); builds it first when needed."""
    return _run.get_version(locate(), ["--version"], r"^pairbench (\d+)")


def check_version() -> _run.ToolVersion:
    """version(), refused (ToolTooOldError) unless it is exactly the samples format this module reads."""
    found = _run.check_version(PROGRAM, version)
    if found.version != VERSION:
        raise ToolTooOldError(f"{found.text} at {locate()} is not pairbench {VERSION[0]}: reinstall slogqual",
                                   program=PROGRAM, found=found.version, needed=VERSION)
    return found


def build_argv(binary: str, job: PairJob, samples: str) -> List[str]:
    runtime_ms = max(1, int(round(job.runtime_s * 1000)))
    argv = [binary, job.filename, str(job.bs), str(job.region_bytes), str(runtime_ms),
            "1" if job.direct else "0", samples]
    return argv + [str(job.max_bytes)] if job.max_bytes else argv


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


def parse(stdout: str, samples: bytes) -> PairResult:
    m = _SUMMARY.search(stdout or "")
    if not m:
        raise ValueError(f"no summary line in {stdout.strip()[:80]!r}")
    start_ns, write_ns, flush_ns = read_samples(samples)
    ios = int(m.group(2))
    if len(write_ns) != ios:
        raise ValueError(f"the summary says {ios} IOs, the samples file holds {len(write_ns)}")
    return PairResult(ios=ios, elapsed_ns=int(m.group(3)), bytes_written=int(m.group(4)), flush=m.group(5),
                      write_ns=write_ns, flush_ns=flush_ns, version=f"pairbench {m.group(1)}", start_ns=start_ns)


def run_job(job: PairJob, timeout: Optional[float] = None, binary: Optional[str] = None) -> PairResult:
    """Run one size. ToolFailedError (the engine's one-line complaint) when it fails, ToolOutputError
    when its output cannot be read, ToolTimeoutError when it hangs (a device that stops answering)."""
    binary = binary or locate()
    if timeout is None:
        timeout = job.runtime_s * 3 + 120
    workdir = tempfile.mkdtemp(prefix="slogqual-pair-")
    try:
        samples = os.path.join(workdir, "samples")
        argv = build_argv(binary, job, samples)
        try:
            proc = _run.run(argv, timeout=timeout, typed_timeout=True)
        except ToolTimeoutError as exc:
            raise _run.timed_out(argv, timeout, exc.stderr_tail, f"at bs={job.bs}") from None
        if proc.returncode != 0:
            complaint = (proc.stderr or "").strip().splitlines() or [f"exit status {proc.returncode}"]
            raise _run.failure(argv, proc.returncode, proc.stderr,
                               message=f"the pair engine failed on {job.filename} at bs={job.bs}: {complaint[-1]}")
        try:
            with open(samples, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise _run.parse_failed(PROGRAM, argv, proc.stdout, f"no samples file ({exc.strerror})",
                                    stderr=proc.stderr) from None
        result = _run.parse_text(PROGRAM, argv, proc.stdout, parse, data, stderr=proc.stderr)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if result.ios == 0:
        raise MeasurementError(f"the pair engine completed no writes on {job.filename} at bs={job.bs}")
    return result
