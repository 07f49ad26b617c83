"""nbdkit: serve a file or RAM disk over NBD on a Unix socket, optionally slowed down.

Used by the tests (targets with a known added latency, injected IO errors, a full
disk) and by the lab (device classes). The server is a context manager: it is
ended by its own PID on exit, also on error and Ctrl-C, and its socket removed. It
ends with slogqual too (--exit-with-parent); the socket directory of a run that was
killed (slogqual-nbd-<pid>-…, owner.pid inside) is removed by the next server started there.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import urllib.parse
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from slogqual.errors import ToolFailedError, UsageError
from slogqual import owned as _owned
from slogqual.tools import spawn as _run

PROGRAM = "nbdkit"
SOCKET_PREFIX = "slogqual-nbd-"
SOCKET_NAME = "nbd.sock"
UNIX_PATH_MAX = 107  # sun_path's 108 bytes, the last a NUL
PID_MAX = 4194304  # Linux's largest pid_max: the widest pid a directory name can carry
SHORT_BASE = "/tmp"  # where a socket goes when the temporary directory is too deep for one


def version() -> _run.ToolVersion:
    """'nbdkit 1.32.5' -> (1, 32, 5)."""
    return _run.get_version(PROGRAM, ["--version"], r"nbdkit (\d+)\.(\d+)(?:\.(\d+))?")


def check_version() -> _run.ToolVersion:
    return _run.check_version(PROGRAM, version)


def nbdinfo_version() -> _run.ToolVersion:
    """'nbdinfo 1.14.2' -> (1, 14, 2) (nbdinfo comes with libnbd)."""
    return _run.get_version("nbdinfo", ["--version"], r"nbdinfo (\d+)\.(\d+)(?:\.(\d+))?")


def socket_base(base: Optional[str] = None) -> str:
    """Where a socket directory goes: ``base`` (the temporary directory by default), unless a socket there
    would pass sun_path's 107 bytes (a deep test or job directory): then the short SHORT_BASE."""
    where = base or tempfile.gettempdir()
    longest = os.path.join(where, f"{SOCKET_PREFIX}{PID_MAX}-XXXXXXXX", SOCKET_NAME)
    return where if len(os.fsencode(longest)) <= UNIX_PATH_MAX else SHORT_BASE


def remove_stale_sockets(base: Optional[str] = None) -> List[str]:
    """The socket directories (slogqual-nbd-…) in ``base`` (the temporary directory by default), and where its
    sockets would go instead (``socket_base``), of runs that were killed before they could remove them:
    removed, and returned. Only those whose owner is a process that is gone (slogqual.owned)."""
    out: List[str] = []
    for where in dict.fromkeys([base or tempfile.gettempdir(), socket_base(base)]):
        out += _owned.remove_stale(where, SOCKET_PREFIX, lambda path: shutil.rmtree(path, ignore_errors=True))
    return out


@dataclass
class NbdServer:
    """An nbdkit process: ``plugin`` with its args, behind ``filters`` with theirs."""

    plugin: str  # e.g. "file", "memory", "full"
    plugin_args: List[str] = field(default_factory=list)  # e.g. ["/tmp/x.img"] or ["size=64M"]
    filters: List[str] = field(default_factory=list)  # e.g. ["delay"]
    filter_args: Dict[str, str] = field(default_factory=dict)  # e.g. {"wdelay": "2ms"}
    socket_dir: Optional[str] = None
    process: Optional[_run.Background] = None
    socket: Optional[str] = None

    def argv(self) -> List[str]:
        argv = [PROGRAM, "--foreground", "--exit-with-parent", "--unix", self.socket]
        argv += [f"--filter={f}" for f in self.filters]
        argv += [self.plugin, *self.plugin_args]
        argv += [f"{k}={v}" for k, v in self.filter_args.items()]
        return argv

    @property
    def uri(self) -> str:
        return f"nbd+unix:///?socket={self.socket}"

    @property
    def pid(self) -> Optional[int]:
        return self.process.pid if self.process else None

    def start(self, timeout: float = 15.0) -> "NbdServer":
        """Start nbdkit and wait for its socket: ToolMissingError/ToolTooOldError before anything
        runs, ToolFailedError (its last words) when it exits first, ToolTimeoutError when it is
        still without a socket after ``timeout`` seconds."""
        check_version()
        base = socket_base(self.socket_dir)
        remove_stale_sockets(self.socket_dir)
        self._tmpdir = _owned.make_dir(SOCKET_PREFIX, base)
        self.socket = os.path.join(self._tmpdir, SOCKET_NAME)
        self.process = _run.Background(self.argv())
        try:
            self.process.start()
            self.process.wait_until(lambda: os.path.exists(self.socket), timeout, "create its socket")
        except BaseException:
            self.stop()
            raise
        return self

    def power_cut(self) -> None:
        """SIGKILL nbdkit by its PID: whatever it held in memory (its cache filter's blocks) is gone, as a
        device's volatile cache is in a power cut. ``stop()`` still reaps it and removes the socket."""
        if self.process is not None:
            self.process.kill()

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
        self._cleanup()

    def _cleanup(self) -> None:
        tmpdir = getattr(self, "_tmpdir", None)
        if tmpdir and os.path.isdir(tmpdir):
            for name in os.listdir(tmpdir):
                os.unlink(os.path.join(tmpdir, name))
            os.rmdir(tmpdir)
            self._tmpdir = None

    def __enter__(self) -> "NbdServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _size(text: str) -> int:
    return _run.whole(text.strip())  # a size: no sign


def export_size(uri: str) -> Optional[int]:
    """Size of an NBD export in bytes via nbdinfo, or None when nbdinfo is absent. ToolFailedError
    ('cannot reach URI: ...') when nbdinfo cannot connect, ToolTimeoutError when it hangs,
    ToolOutputError when it prints no size."""
    if _run.which("nbdinfo") is None:
        return None
    proc = _run.run(["nbdinfo", "--size", uri], timeout=30, typed_timeout=True)
    if proc.returncode != 0:
        msg = (proc.stderr or "").strip().splitlines()
        raise _run.failure(proc.args, proc.returncode, proc.stderr,
                           message=f"cannot reach {uri}: {msg[-1] if msg else 'nbdinfo failed'}")
    return _run.parse_output(proc, _size)


def unix_socket(uri: str) -> Optional[str]:
    """The socket path of an ``nbd+unix://`` (or ``nbds+unix://``) URI's ``socket=``; None for another
    scheme or a URI without one."""
    parts = urllib.parse.urlsplit(uri)
    if not parts.scheme.endswith("+unix"):
        return None
    found = urllib.parse.parse_qs(parts.query).get("socket")
    return found[0] if found else None


def check_reachable(uri: str) -> None:
    """UsageError (one line, exit 2) when the export at ``uri`` cannot be reached: an ``nbd+unix`` URI
    without a socket, or whose socket is absent or not a socket; a server nbdinfo cannot connect to or
    that refuses the export. Without nbdinfo only the socket is checked. ToolTimeoutError when nbdinfo
    hangs."""
    parts = urllib.parse.urlsplit(uri)
    if parts.scheme.endswith("+unix"):
        sock = unix_socket(uri)
        if not sock:
            raise UsageError(f"{uri}: an nbd+unix URI names its socket (nbd+unix:///?socket=PATH)")
        try:
            st = os.stat(sock)
        except OSError as exc:
            raise UsageError(f"{uri}: socket {sock}: {exc.strerror or exc}") from None
        if not stat.S_ISSOCK(st.st_mode):
            raise UsageError(f"{uri}: {sock} is not a socket")
    try:
        export_size(uri)
    except ToolFailedError as exc:
        raise UsageError(str(exc)) from None
