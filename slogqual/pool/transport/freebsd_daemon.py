"""Daemons a FreeBSD transport starts (ctld, iscsid, rpcbind, mountd, nfsd): each forks into the
background itself and names its pid in a pidfile; slogqual ends exactly that pid. Programs run through
a :class:`slogqual.tools.freebsd.host.Host` so a test drives the same code with recorded answers."""

from __future__ import annotations

import time
from typing import Callable, List, Optional, Sequence

from slogqual.errors import MeasurementError, UsageError
from slogqual.pool.transport.teardown import Undo
from slogqual.tools import spawn as _run
from slogqual.tools.freebsd import process as _process
from slogqual.tools.freebsd.host import Host


def checked(host: Host, argv: Sequence[str], timeout: float = 120) -> str:
    """argv's stdout; a failing exit is ToolFailedError with its complaint."""
    proc = host.run(argv, timeout=timeout)
    if proc.returncode != 0:
        raise _run.failure(list(argv), proc.returncode, proc.stderr or "", proc.stdout or "")
    return proc.stdout or ""


def running(host: Host, name: str) -> bool:
    """Does a process called ``name`` run (pgrep -x: 0 found, 1 none)?"""
    argv = _process.pgrep_argv(name)
    proc = host.run(argv)
    if proc.returncode not in (0, 1):
        raise _run.failure(argv, proc.returncode, proc.stderr or "")
    return proc.returncode == 0


def refuse_if_running(host: Host, name: str, why: str) -> None:
    if running(host, name):
        raise UsageError(f"a {name} already runs on this host; slogqual will not start its own beside it ({why})")


def read_pid(read: Callable[[str], str], pidfile: str, timeout: float = 10,
             sleep: Callable[[float], None] = time.sleep) -> int:
    """The pid a daemon wrote. Waited for: pidfile(3) daemons create the file before daemon(3) and
    write the pid after it, so the parent we ran may exit before the pid is there."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            text = read(pidfile).strip()
        except OSError as exc:
            text, why = "", exc.strerror or str(exc)
        else:
            why = f"not a pid: {text[:40]!r}"
        if text.isdigit():
            return int(text)
        if time.monotonic() > deadline:
            raise MeasurementError(f"{pidfile}: {why} {timeout:g} s after the daemon started")
        sleep(0.1)


def read_file(path: str) -> str:
    with open(path, encoding="ascii") as fh:
        return fh.read()


def stop(host: Host, pid: int, what: str, timeout: float = 30, sleep: Callable[[float], None] = time.sleep) -> None:
    """SIGTERM ``pid`` (a graceful exit: ctld removes its LUNs, nfsd its threads) and wait until it is gone."""
    checked(host, _process.term_argv(pid))
    deadline = time.monotonic() + timeout
    while host.run(_process.alive_argv(pid)).returncode == 0:
        if time.monotonic() > deadline:
            raise MeasurementError(f"{what} (pid {pid}) still runs {timeout:g} s after SIGTERM")
        sleep(0.2)


def start(host: Host, undo: Undo, what: str, argv: List[str], pidfile: str,
          read: Callable[[str], str] = read_file, started: Optional[List[str]] = None,
          sleep: Callable[[float], None] = time.sleep) -> int:
    """Run a self-daemonizing ``argv``, read its pid and record its stop at once."""
    checked(host, argv)
    pid = read_pid(read, pidfile, sleep=sleep)
    undo.push(f"stop the {what} slogqual started (pid {pid})", lambda: stop(host, pid, what, sleep=sleep))
    if started is not None:
        started.append(what)
    return pid
