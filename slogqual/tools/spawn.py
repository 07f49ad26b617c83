"""The one place slogqual starts external programs, and the contract every tool module keeps.

In the manner of OCRmyPDF's ``subprocess`` module: every spawn goes through here (logged per
program), a missing program is one typed error with install advice for the OS at hand, minimum
versions and install advice live in one table (PROGRAMS), and a program that is missing, too old,
hangs, fails or prints garbage becomes a typed error carrying ``program``, ``argv`` and the tail of
its stderr (slogqual.errors: ToolMissingError, ToolTooOldError, ToolTimeoutError, ToolFailedError,
ToolOutputError; their exit codes are explained there).

A tool module (fio.py, zpool.py, nbdkit.py, ...) is the one door to its program:

* ``version() -> ToolVersion``, read by :func:`get_version`;
* ``check_version() -> ToolVersion``: :func:`check_version` against PROGRAMS;
* actions that build an argv list and call :func:`run` with ``typed_timeout=True`` (or
  :func:`run_checked`), turn a failing exit into :func:`failure` and parse with
  :func:`parse_output`, so garbage is a ToolOutputError rather than a crash;
* long-lived helpers (nbdkit today) through :class:`Background`: started from an argv list,
  ended by their own PID.

Every process started here dies with slogqual, even when slogqual is killed by SIGKILL and has no
chance to end it (:func:`die_with_parent`: PR_SET_PDEATHSIG on Linux, PROC_PDEATHSIG_CTL on FreeBSD):
a killed sweep leaves no engine writing a device whose lock it no longer holds.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import IO, Any, Callable, Dict, Iterator, Mapping, Optional, Sequence, Tuple, TypeVar

from slogqual.errors import (ToolFailedError, ToolMissingError, ToolOutputError, ToolTimeoutError, ToolTooOldError,
                             stderr_tail)

# What callers of popen() need to hand it and to catch from it, so that only tools/ imports subprocess.
DEVNULL, PIPE, STDOUT = subprocess.DEVNULL, subprocess.PIPE, subprocess.STDOUT
Popen = subprocess.Popen
TimeoutExpired = subprocess.TimeoutExpired
CompletedProcess = subprocess.CompletedProcess

log = logging.getLogger("slogqual.tools")

T = TypeVar("T")


# --- what slogqual needs of each program, and where to get it ----------------------------------------------

@dataclass(frozen=True)
class Requirement:
    """One program: the oldest version slogqual works with (None: any that runs), what needs that
    version, and how to install it on Debian and on FreeBSD."""

    program: str
    minimum: Optional[Tuple[int, ...]]
    needed_for: str
    debian: str
    freebsd: str


_LINUX_ONLY = "not used on FreeBSD"
_FREEBSD_ONLY = "not used on Linux"
_FREEBSD_BASE = "in the base system"

def _by_program(requirements: Sequence[Requirement]) -> Dict[str, Requirement]:
    """The table by program name; a program listed twice is a mistake (the later entry would silently
    win, as 'mount' once did with FreeBSD-only advice given on Linux), refused when slogqual loads."""
    table: Dict[str, Requirement] = {}
    for req in requirements:
        if req.program in table:
            raise ValueError(f"tools.spawn.PROGRAMS lists {req.program} twice")
        table[req.program] = req
    return table


PROGRAMS: Dict[str, Requirement] = _by_program((
    Requirement("fio", (3, 19), "the nbd ioengine (nbd:// targets)",
                "apt-get install fio", "pkg install fio"),
    Requirement("pairbench", (3,), "the pair engine (write+flush timed per IO; slogqual/native/pairbench.c)",
                "built by pip install, or on first use, with cc: apt-get install gcc libc6-dev",
                "built by pip install, or on first use, with cc (" + _FREEBSD_BASE + ")"),
    Requirement("cc", None, "building the pair engine from slogqual/native/pairbench.c",
                "apt-get install gcc libc6-dev", _FREEBSD_BASE + " (clang)"),  # the way without: pairbench
    Requirement("gnuplot", (5, 0), "datablocks, dashtype and the pngcairo/svg terminals",
                "apt-get install gnuplot-nox", "pkg install gnuplot-lite"),
    Requirement("nbdkit", (1, 12), "the rate filter of the lab's device classes (delay, error, memory, full: older)",
                "apt-get install nbdkit", "pkg install nbdkit"),
    Requirement("nbdinfo", None, "the size of an nbd:// export",
                "apt-get install libnbd-bin", "pkg install libnbd"),
    Requirement("nbdfuse", None, "the powercut emulation (an NBD export as a regular file, flushes as NBD flushes)",
                "apt-get install libnbd-bin", "pkg install libnbd"),
    Requirement("mount", None, "the NFS client mount of transport = \"nfs\" scenarios and the nfsd filesystem "
                "(Linux); the NFS client mount and the safety interlocks' mount table (mount -p, FreeBSD)",
                "apt-get install mount nfs-common", _FREEBSD_BASE),
    Requirement("umount", None, "unmounting the powercut emulation's FUSE mount and the NFS client mount",
                "apt-get install mount", _FREEBSD_BASE),
    Requirement("qemu-system-x86_64", (4, 2), "-fsdev multidevs=remap (the lab's 9p root share)",
                "apt-get install qemu-system-x86", "pkg install qemu-nox11"),
    Requirement("zpool", (2, 2), "per-dataset ZIL kstats (the zil_* rows of objset-0x..., the SLOG evidence)",
                "apt-get install zfsutils-linux (contrib)",
                _FREEBSD_BASE + " (OpenZFS 2.2 from FreeBSD 14.0; on 13.x: pkg install openzfs openzfs-kmod)"),
    Requirement("zfs", (2, 2), "per-dataset ZIL kstats (the zil_* rows of objset-0x..., the SLOG evidence)",
                "apt-get install zfsutils-linux (contrib)",
                _FREEBSD_BASE + " (OpenZFS 2.2 from FreeBSD 14.0; on 13.x: pkg install openzfs openzfs-kmod)"),
    Requirement("smartctl", (7, 0), "JSON output (--json)",
                "apt-get install smartmontools", "pkg install smartmontools"),
    Requirement("nvme", None, "Identify Controller, feature 06h (volatile write cache) and the SMART/Health log",
                "apt-get install nvme-cli", "not on FreeBSD: nvmecontrol (" + _FREEBSD_BASE + ") is used instead"),
    Requirement("lsblk", None, "device identity", "apt-get install util-linux", _LINUX_ONLY + " (geom, diskinfo)"),
    Requirement("blkid", None, "signature probes", "apt-get install util-linux", _LINUX_ONLY),
    Requirement("wipefs", None, "signature listing (--no-act)", "apt-get install util-linux", _LINUX_ONLY),
    Requirement("findmnt", None, "the mount table", "apt-get install util-linux", _LINUX_ONLY),
    Requirement("lspci", None, "PCIe links sysfs does not show, and the names of PCI functions (lspci -tv)",
                "apt-get install pciutils", _LINUX_ONLY),
    Requirement("udevadm", None, "waiting for zvol device nodes", "apt-get install udev",
                _LINUX_ONLY + " (devfs makes zvol nodes at once)"),
    Requirement("modprobe", None, "loading LIO's core (target_core_mod) for transport = \"iscsi\" scenarios, "
                "where it is not loaded (the target itself is written to configfs)",
                "apt-get install kmod", _LINUX_ONLY + " (ctld)"),
    Requirement("iscsiadm", None, "the iSCSI initiator of transport = \"iscsi\" scenarios",
                "apt-get install open-iscsi", _LINUX_ONLY + " (iscsictl)"),
    Requirement("iscsid", None, "the iSCSI initiator daemon iscsiadm talks to (started by slogqual if none runs)",
                "apt-get install open-iscsi", _LINUX_ONLY + " (iscsictl)"),
    Requirement("rpc.mountd", None, "the export cache of knfsd (started by slogqual if none runs)",
                "apt-get install nfs-kernel-server", _LINUX_ONLY + " (mountd)"),
    Requirement("rpcbind", None, "NFSv3's port mapper (started by slogqual if none runs)",
                "apt-get install rpcbind", _FREEBSD_BASE),
    Requirement("exportfs", None, "the knfsd export of transport = \"nfs\" scenarios",
                "apt-get install nfs-kernel-server", _LINUX_ONLY + " (mountd with a private exports file)"),
    Requirement("rpc.nfsd", None, "the knfsd threads of transport = \"nfs\" scenarios",
                "apt-get install nfs-kernel-server", _LINUX_ONLY + " (nfsd)"),
    Requirement("ctld", None, "the iSCSI target of transport = \"iscsi\" scenarios", _FREEBSD_ONLY + " (LIO through configfs)",
                _FREEBSD_BASE),
    Requirement("iscsictl", None, "the iSCSI initiator of transport = \"iscsi\" scenarios",
                _FREEBSD_ONLY + " (iscsiadm)", _FREEBSD_BASE),
    Requirement("nfsd", None, "the NFS server of transport = \"nfs\" scenarios", _FREEBSD_ONLY + " (rpc.nfsd)",
                _FREEBSD_BASE),
    Requirement("ctladm", None, "the CTL LUNs read back in transport = \"iscsi\" scenarios",
                _FREEBSD_ONLY + " (LIO through configfs)", _FREEBSD_BASE),
    Requirement("nfsstat", None, "the NFS client mount options read back in transport = \"nfs\" scenarios",
                _FREEBSD_ONLY + " (/proc/self/mountstats)", _FREEBSD_BASE),
    Requirement("pgrep", None, "whether a ctld/iscsid/mountd/nfsd/rpcbind already runs (FreeBSD transports)",
                _FREEBSD_ONLY + " (/proc)", _FREEBSD_BASE),
    Requirement("mountd", None, "the NFS exports of transport = \"nfs\" scenarios", _FREEBSD_ONLY + " (exportfs)",
                _FREEBSD_BASE),
    Requirement("camcontrol", None, "ATA/SCSI identity, and the bus a disk is on (devlist -v)",
                _FREEBSD_ONLY + " (smartctl, sysfs)", _FREEBSD_BASE),
    Requirement("devinfo", None, "the path from the host to a disk (the newbus tree)", _FREEBSD_ONLY + " (sysfs)",
                _FREEBSD_BASE),
    Requirement("diskinfo", None, "disk identity and size", _FREEBSD_ONLY + " (sysfs, lsblk)", _FREEBSD_BASE),
    Requirement("geom", None, "disk identity and the safety interlocks (access counts)",
                _FREEBSD_ONLY + " (sysfs, lsblk)", _FREEBSD_BASE),
    Requirement("nvmecontrol", None, "NVMe identity, and the SMART/Health log (thermal and wear evidence)",
                _FREEBSD_ONLY + " (nvme-cli)", _FREEBSD_BASE),
    Requirement("pciconf", None, "the PCIe links of NVMe drives and of the PCI functions on a disk's path",
                _FREEBSD_ONLY + " (sysfs, lspci)", _FREEBSD_BASE),
    Requirement("gpart", None, "the safety interlocks (partition tables)", _FREEBSD_ONLY + " (sysfs)", _FREEBSD_BASE),
    Requirement("glabel", None, "the safety interlocks (GEOM labels)", _FREEBSD_ONLY + " (blkid)", _FREEBSD_BASE),
    Requirement("swapctl", None, "the safety interlocks (swapctl -l)", _FREEBSD_ONLY + " (/proc/swaps)",
                _FREEBSD_BASE),
    Requirement("sysctl", None, "disk list and ZFS kstats", _FREEBSD_ONLY + " (sysfs, /proc/spl/kstat)",
                _FREEBSD_BASE),
))


def _platform(platform: Optional[str] = None) -> str:
    p = platform or sys.platform
    return "freebsd" if p.startswith("freebsd") else "linux" if p.startswith("linux") else p


def install_advice(program: str, platform: Optional[str] = None) -> str:
    """'Debian: apt-get install fio' on Linux, 'FreeBSD: pkg install fio' on FreeBSD, both elsewhere;
    '' for a program not in PROGRAMS."""
    req = PROGRAMS.get(os.path.basename(program))
    if req is None:
        return ""
    p = _platform(platform)
    if p == "linux":
        return f"Debian: {req.debian}"
    if p == "freebsd":
        return f"FreeBSD: {req.freebsd}"
    return f"Debian: {req.debian}; FreeBSD: {req.freebsd}"


def _with_advice(message: str, program: str) -> str:
    advice = install_advice(program)
    return f"{message} ({advice})" if advice else message


# --- helpers die with slogqual ---------------------------------------------------------------------------

PR_SET_PDEATHSIG = 1  # linux/prctl.h
P_PID, PROC_PDEATHSIG_CTL = 0, 11  # FreeBSD sys/wait.h, sys/procctl.h


@functools.lru_cache(maxsize=None)
def _death_signal_setter() -> Optional[Callable[[int], object]]:
    """The libc call that asks for ``sig`` when the parent dies, resolved once in slogqual (a child
    between fork and exec only calls it); None where there is none."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if sys.platform.startswith("linux"):
            prctl = libc.prctl
            return lambda sig: prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if sys.platform.startswith("freebsd"):
            procctl = libc.procctl
            return lambda sig: procctl(P_PID, 0, PROC_PDEATHSIG_CTL, ctypes.byref(ctypes.c_int(sig)))
    except (OSError, AttributeError):
        pass
    return None


def die_with_parent(sig: int = signal.SIGKILL, then: Optional[Callable[[], None]] = None) -> Callable[[], None]:
    """A ``preexec_fn``: the child gets ``sig`` when slogqual dies, by SIGKILL too (the death signal
    survives exec). It is asked for in the child, and the child checks right after that its parent is
    still the one that started it: a slogqual killed between fork and the request would send nothing.
    Linux sends it when the parent *thread* ends: start helpers from the thread that outlives them.
    ``then``: the caller's own preexec_fn, run after."""
    parent = os.getpid()
    setter = _death_signal_setter()

    def preexec() -> None:
        if setter is not None:
            setter(int(sig))
        if os.getppid() != parent:
            os.kill(os.getpid(), sig)
        if then is not None:
            then()

    return preexec


# --- finding and running ----------------------------------------------------------------------------------

def which(program: str) -> Optional[str]:
    return shutil.which(program)


def require(program: str) -> str:
    """The path of program; ToolMissingError (with install advice) when it is not on PATH."""
    path = shutil.which(program)
    if path is None:
        raise ToolMissingError(_with_advice(f"{program} not found on PATH", program), program=program)
    return path


def _name(argv: Sequence[str]) -> str:
    return os.path.basename(str(argv[0]))


def _cannot_execute(argv: Sequence[str], exc: OSError) -> ToolMissingError:
    return ToolMissingError(_with_advice(f"{argv[0]} cannot be run: {exc.strerror or exc}", _name(argv)),
                            program=_name(argv), argv=argv)


def _text(data) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data or ""


def _last_line(*texts: str) -> str:
    for text in texts:
        lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
        if lines:
            return lines[-1]
    return ""


def timed_out(argv: Sequence[str], timeout: Optional[float], stderr="", what: str = "") -> ToolTimeoutError:
    """The error for a program that did not finish in time ('fio did not finish within 60 s at bs=4096')."""
    secs = f" within {timeout:g} s" if timeout is not None else ""
    return ToolTimeoutError(f"{_name(argv)} did not finish{secs}{' ' + what if what else ''}", program=_name(argv),
                            timeout=timeout, argv=argv, stderr=_text(stderr))


def failure(argv: Sequence[str], returncode: Optional[int], stderr: str = "", stdout: str = "",
            message: Optional[str] = None) -> ToolFailedError:
    """The error for a failing exit: 'zpool create tank… failed: <its last line of complaint>' unless a
    message is given. stdout is the fallback complaint for programs that print errors there."""
    if message is None:
        complaint = _last_line(stderr, stdout) or f"exit status {returncode}"
        message = f"{' '.join(str(a) for a in argv[:3])}… failed: {complaint}"
    return ToolFailedError(message, program=_name(argv), returncode=returncode, argv=argv, stderr=stderr or stdout)


def parse_failed(program: str, argv: Optional[Sequence[str]], text: str, why: str, stderr: str = "") -> ToolOutputError:
    """The error for output the parser cannot read ('unexpected zpool list line ...'); argv may be None
    for text that did not come from a run here. Raise it: ``raise _run.parse_failed(...) from None``."""
    return ToolOutputError(f"{program}: unreadable output: {why}", program=program, why=why,
                           excerpt=(text or "")[:200], argv=argv, stderr=stderr)


_WHOLE = re.compile(r"[0-9]+", re.ASCII)
_SIGNED = re.compile(r"-?[0-9]+", re.ASCII)


def whole(text: str, signed: bool = False) -> int:
    """A whole number as a program prints it: ASCII digits (with ``signed``, a leading '-'), nothing
    else. int() would also read '١٢٣' (Arabic-Indic digits), '1_000', ' 12\n' and '+12', none of which
    a program means as a figure. ValueError otherwise, which parse_text turns into the program's
    ToolOutputError."""
    if not (_SIGNED if signed else _WHOLE).fullmatch(text):
        raise ValueError(f"{text[:40]!r} is not a whole number in ASCII digits")
    return int(text)


def loads_json(text: str, what: str) -> Any:
    """The JSON document a program printed; ValueError naming ``what`` ('lsblk output') when it is not
    JSON, or is nested deeper than Python's decoder can follow (its RecursionError, which is no
    ValueError and would otherwise pass every parser's ``except`` as a traceback)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} is not JSON ({exc.msg})") from None
    except RecursionError:
        raise ValueError(f"{what} is JSON nested too deeply to read") from None


def parse_text(program: str, argv: Optional[Sequence[str]], text: str, parser: Callable[..., T], *args,
               stderr: str = "", **kwargs) -> T:
    """``parser(text, ...)`` for the output of ``argv``: the ValueError (JSONDecodeError included),
    LookupError, TypeError, ArithmeticError (int() of an Infinity, a zero divisor) or RecursionError
    (a structure nested too deeply) of a parser that cannot read it becomes ToolOutputError naming the
    program and argv, as does a parser's own ToolOutputError that did not know the argv."""
    try:
        return parser(text, *args, **kwargs)
    except ToolOutputError as exc:
        if exc.argv or not argv:
            raise
        raise parse_failed(program, argv, text, exc.why, stderr=stderr) from None
    except (ValueError, LookupError, TypeError, ArithmeticError) as exc:
        raise parse_failed(program, argv, text, str(exc) or type(exc).__name__, stderr=stderr) from None
    except RecursionError:  # a parser walking a structure nested deeper than Python's stack
        raise parse_failed(program, argv, text, "nested too deeply to read", stderr=stderr) from None


def parse_output(proc: subprocess.CompletedProcess, parser: Callable[..., T], *args, **kwargs) -> T:
    """:func:`parse_text` of a finished run's stdout."""
    return parse_text(_name(proc.args), proc.args, proc.stdout, parser, *args, stderr=proc.stderr or "", **kwargs)


# --- a worker thread's programs, cut by its stop event ----------------------------------------------------

_worker = threading.local()
_POLL_S = 0.2


@contextlib.contextmanager
def stopped_by(stop: threading.Event) -> Iterator[None]:
    """In the calling thread, while inside: a program :func:`run` starts is killed once ``stop`` is set,
    and run() raises KeyboardInterrupt. That is what an interrupt does to a program the main thread runs
    (subprocess.run kills it on the way out); signals land in the main thread only, so a worker thread of a
    run that measures units at once (slogqual.sweep.at_once) is told by the event instead, and its unit ends as
    a lone run's would."""
    previous = getattr(_worker, "stop", None)
    _worker.stop = stop
    try:
        yield
    finally:
        _worker.stop = previous


def _run_stoppable(argv: Sequence[str], stop: threading.Event, timeout: Optional[float],
                   input: Optional[str], **kwargs) -> subprocess.CompletedProcess:
    """subprocess.run, waiting in short slices so that ``stop`` can end the program."""
    deadline = None if timeout is None else time.monotonic() + timeout
    with subprocess.Popen(argv, **kwargs) as proc:
        while True:
            if stop.is_set():
                proc.kill()
                proc.communicate()
                raise KeyboardInterrupt
            left = _POLL_S if deadline is None else max(0.0, min(_POLL_S, deadline - time.monotonic()))
            try:
                out, err = proc.communicate(input, timeout=left)
                return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
            except subprocess.TimeoutExpired:
                input = None  # sent with the first wait; communicate() refuses it again
                if deadline is not None and time.monotonic() >= deadline:
                    proc.kill()
                    out, err = proc.communicate()
                    raise subprocess.TimeoutExpired(proc.args, timeout, out, err) from None


def run(
    argv: Sequence[str],
    *,
    check: bool = False,
    timeout: Optional[float] = None,
    typed_timeout: bool = False,
    env: Optional[Mapping[str, str]] = None,
    input: Optional[str] = None,
    death_signal: int = signal.SIGKILL,
) -> subprocess.CompletedProcess:
    """Run argv (a list, never a shell string) and capture text output.

    A program not on PATH is ToolMissingError. A run past ``timeout`` is killed and raises
    subprocess.TimeoutExpired, or ToolTimeoutError (with what it wrote on stderr) when
    ``typed_timeout``. ``check=True`` turns a non-zero exit into ToolFailedError. The program gets
    ``death_signal`` when slogqual dies (:func:`die_with_parent`). Inside :func:`stopped_by` the program
    is killed when the worker's stop event is set (KeyboardInterrupt).
    """
    argv = [str(a) for a in argv]
    require(argv[0])
    plog = log.getChild(_name(argv))
    plog.debug("run: %s", " ".join(argv))
    kwargs: Dict[str, Any] = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=dict(env) if env is not None else None, preexec_fn=die_with_parent(death_signal))
    stop = getattr(_worker, "stop", None)
    try:
        if stop is not None:
            proc = _run_stoppable(argv, stop, timeout, input,
                                  stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL, **kwargs)
        else:
            proc = subprocess.run(argv, timeout=timeout, input=input,
                                  stdin=None if input is not None else subprocess.DEVNULL, **kwargs)
    except subprocess.TimeoutExpired as exc:
        plog.debug("timed out after %s s", timeout)
        if typed_timeout:
            raise timed_out(argv, timeout, exc.stderr) from None
        raise
    except (FileNotFoundError, PermissionError) as exc:
        raise _cannot_execute(argv, exc) from None
    if proc.returncode != 0:
        plog.debug("exit %s, stderr: %s", proc.returncode, stderr_tail(proc.stderr))
        if check:
            raise failure(argv, proc.returncode, proc.stderr, proc.stdout)
    return proc


def run_checked(argv: Sequence[str], timeout: Optional[float] = 300) -> str:
    """Run argv and return its stdout; a non-zero exit is ToolFailedError (a MeasurementError) carrying
    the program's last line of complaint, a timeout ToolTimeoutError (for tools whose failure ends
    the measurement: zpool, zfs)."""
    return run(argv, timeout=timeout, typed_timeout=True, check=True).stdout


def popen(argv: Sequence[str], death_signal: int = signal.SIGKILL, **kwargs) -> subprocess.Popen:
    """Start a long-running helper; the caller owns its lifetime (or use :class:`Background`). It gets
    ``death_signal`` when slogqual dies (:func:`die_with_parent`; a ``preexec_fn`` given runs after)."""
    argv = [str(a) for a in argv]
    require(argv[0])
    log.getChild(_name(argv)).debug("popen: %s", " ".join(argv))
    kwargs["preexec_fn"] = die_with_parent(death_signal, kwargs.get("preexec_fn"))
    try:
        return subprocess.Popen(argv, **kwargs)
    except (FileNotFoundError, PermissionError) as exc:
        raise _cannot_execute(argv, exc) from None


# --- versions -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ToolVersion:
    """A program's version: ``version`` the numbers compared, ``text`` the program's own first line
    ('fio-3.33', 'QEMU emulator version 7.2.22 (Debian ...)'); ``str()`` is the dotted version."""

    program: str
    version: Tuple[int, ...]
    text: str

    def __str__(self) -> str:
        return ".".join(str(v) for v in self.version)


def parse_version(text: str, regex: str) -> Optional[tuple]:
    """The numbers of ``regex``'s groups in ``text``; its \\d are ASCII digits (re.ASCII)."""
    m = re.search(regex, text, flags=re.MULTILINE | re.ASCII)
    if not m:
        return None
    return tuple(int(x) for x in m.groups() if x is not None)


def version_from(proc: subprocess.CompletedProcess, program: str, regex: str) -> ToolVersion:
    """The version a finished ``program --version``-like run printed (stdout and stderr), the numbers being
    regex's groups; ToolOutputError when there is none. Its exit status is not looked at: zfs/zpool
    --version print the userland version, then fail (status 1) when the kernel module is not loaded."""
    text = (proc.stdout or "") + (proc.stderr or "")
    ver = parse_version(text, regex)
    if ver is None:
        raise parse_failed(program, proc.args, text, f"no version in {text.strip()[:80]!r}", stderr=proc.stderr)
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return ToolVersion(program, ver, first)


@functools.lru_cache(maxsize=None)
def _version(path: str, program: str, args: Tuple[str, ...], regex: str) -> ToolVersion:
    return version_from(run([program, *args], timeout=30, typed_timeout=True), program, regex)


def get_version(program: str, args: Sequence[str], regex: str) -> ToolVersion:
    """The version of ``program`` as ``program *args`` prints it, the numbers being regex's groups
    (cached per installed binary). ToolMissingError when it is not there, ToolOutputError when no
    version is in what it printed, ToolTimeoutError when it hangs."""
    path = require(program)
    return _version(path, program, tuple(args), regex)


clear_version_cache = _version.cache_clear


def check_version(program: str, read: Callable[[], ToolVersion]) -> ToolVersion:
    """``read()`` (a module's version function) checked against PROGRAMS[program].minimum.

    ToolTooOldError, with the found and needed versions and install advice, when it is older or when
    its version cannot be read (found None); ToolMissingError when it is not installed."""
    req = PROGRAMS[program]
    try:
        found = read()
    except ToolOutputError as exc:
        need = ".".join(map(str, req.minimum)) if req.minimum else "any"
        raise ToolTooOldError(_with_advice(f"cannot tell which version of {program} this is ({exc.why}); slogqual "
                                           f"needs {program} {need} or newer", program),
                              program=program, found=None, needed=req.minimum or (), argv=exc.argv,
                              stderr=exc.stderr_tail) from None
    if req.minimum and found.version < req.minimum:
        need = ".".join(map(str, req.minimum))
        raise ToolTooOldError(_with_advice(f"{program} {found} ({found.text}) is too old: slogqual needs {program} "
                                           f"{need} or newer, for {req.needed_for}", program),
                              program=program, found=found.version, needed=req.minimum)
    return found


# --- long-lived helpers ------------------------------------------------------------------------------------

class Background:
    """A long-lived helper process (nbdkit now; QEMU, ``zpool iostat`` streams and fio servers can
    move here): started from an argv list, ended by its own PID (SIGTERM, ``grace_s`` to exit,
    then SIGKILL), never by name.

    Its stderr goes to an unlinked temporary file rather than a pipe: a chatty helper can never
    block on a pipe nobody reads, and its last lines are at hand when it dies (``stderr_tail()``).
    Use it as a context manager, or call ``start()`` and ``stop()``.
    """

    def __init__(self, argv: Sequence[str], *, grace_s: float = 10.0, stdout=DEVNULL,
                 env: Optional[Mapping[str, str]] = None, stdin=DEVNULL, capture_stdout: bool = False,
                 stderr_to_stdout: bool = False, new_session: bool = False,
                 preexec_fn: Optional[Callable[[], None]] = None, death_signal: int = signal.SIGKILL):
        """``capture_stdout``: stdout to an unlinked temporary file too, read with ``stdout_text()``
        after ``stop()`` (a stream such as ``zpool iostat`` that must never block on a full pipe).
        ``stderr_to_stdout``: one stream (QEMU's serial console and its own complaints); ``stdin``,
        ``stdout`` as for subprocess (PIPE to read it live, None to inherit a terminal).
        ``death_signal``: what it gets when slogqual dies, by SIGKILL too (SIGTERM for a helper that
        must tidy up: nbdfuse unmounts, QEMU ends its guest)."""
        self.argv = [str(a) for a in argv]
        self.program = _name(self.argv)
        self.grace_s = grace_s
        self.proc: Optional[subprocess.Popen] = None
        self._stdout = stdout
        self._stdin = stdin
        self._env = dict(env) if env is not None else None
        self._capture = capture_stdout
        self._merge = stderr_to_stdout
        self._new_session = new_session
        self._preexec = preexec_fn
        self._death_signal = death_signal
        self._stderr: Optional[IO[bytes]] = None
        self._out: Optional[IO[bytes]] = None
        self._tail = ""

    def start(self) -> "Background":
        if not self._merge:
            self._stderr = tempfile.TemporaryFile(prefix=f"slogqual-{self.program}-")
        if self._capture:
            self._out = tempfile.TemporaryFile(prefix=f"slogqual-{self.program}-out-")
        try:
            self.proc = popen(self.argv, stdin=self._stdin, stdout=self._out if self._capture else self._stdout,
                              stderr=STDOUT if self._merge else self._stderr, env=self._env,
                              start_new_session=self._new_session, preexec_fn=self._preexec,
                              death_signal=self._death_signal)
        except BaseException:
            self._close()
            if self._out is not None:
                self._out.close()
                self._out = None
            raise
        return self

    @property
    def stdout(self):
        """The pipe to read a ``stdout=PIPE`` helper's output from, as it comes."""
        return self.proc.stdout if self.proc else None

    def wait(self, timeout: Optional[float] = None) -> int:
        """Wait for it to exit by itself; ToolTimeoutError (it keeps running) after ``timeout``."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise ToolTimeoutError(f"{self.program} did not exit within {timeout:g} s", program=self.program,
                                   timeout=timeout, argv=self.argv, stderr=self.stderr_tail()) from None

    def stdout_text(self) -> str:
        """Everything a ``capture_stdout`` helper wrote (complete once it has stopped)."""
        if self._out is None:
            return ""
        self._out.seek(0)
        return self._out.read().decode("utf-8", errors="replace")

    @property
    def pid(self) -> Optional[int]:
        return self.proc.pid if self.proc else None

    @property
    def returncode(self) -> Optional[int]:
        return self.proc.poll() if self.proc else None

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stderr_tail(self) -> str:
        if self._stderr is None:
            return self._tail
        self._stderr.seek(0)
        return stderr_tail(self._stderr.read())

    def exited_error(self, when: str = "") -> ToolFailedError:
        """The error for a helper that ended when it should not have (its status and last words)."""
        rc = self.returncode
        tail = self.stderr_tail()
        last = tail.splitlines()[-1] if tail else f"exit status {rc}"
        return ToolFailedError(f"{self.program} exited{' ' + when if when else ''}: {last}", program=self.program,
                               returncode=rc, argv=self.argv, stderr=tail)

    def wait_until(self, ready: Callable[[], bool], timeout: float, what: str, poll_s: float = 0.02) -> None:
        """Poll ``ready()`` until true. ToolFailedError if the helper exits first; ToolTimeoutError
        (after stopping it) if ``timeout`` seconds pass: '<program> did not <what> within N s'."""
        deadline = time.monotonic() + timeout
        while not ready():
            if not self.running():
                raise self.exited_error(f"before it could {what}")
            if time.monotonic() > deadline:
                self.stop()
                raise ToolTimeoutError(f"{self.program} did not {what} within {timeout:g} s", program=self.program,
                                       timeout=timeout, argv=self.argv, stderr=self._tail)
            time.sleep(poll_s)

    def kill(self) -> None:
        """SIGKILL it by its PID now, with no grace (the power cut of an emulated device); ``stop()``
        still reaps it and closes its files."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()

    def stop(self) -> Optional[int]:
        """End it by its PID if it still runs; its exit status (None if it never started)."""
        if self.proc is None:
            self._close()
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=self.grace_s)
            except subprocess.TimeoutExpired:
                log.getChild(self.program).warning("pid %s ignored SIGTERM for %g s: killing it", self.proc.pid,
                                                   self.grace_s)
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._close()
        return self.proc.returncode

    def _close(self) -> None:
        if self._stderr is not None:
            self._tail = self.stderr_tail()
            self._stderr.close()
            self._stderr = None

    def __enter__(self) -> "Background":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        if self._out is not None:
            self._out.close()
            self._out = None
