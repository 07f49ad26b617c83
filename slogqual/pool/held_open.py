"""Hold a scenario's zvols open while fio runs its steps on them, so that fio's opens are never first opens.

On Linux, a zvol's first open (no other opener) must take the pool's namespace lock (spa_namespace_lock);
OpenZFS 2.3 (module/os/linux/zfs/zvol_os.c, read in 2.3.2) retries for ``zvol_open_timeout_ms``
(1 s) and then returns ERESTARTSYS, which a 5.13+ kernel
no longer turns into a retry: open(2) fails with errno 512. In the lab (one TCG vCPU, 32 threads) fio
ended a step with "error 512" that way — what held the lock that long was not identified; the mechanism
was shown with the timeout at 0 (docs/lab.md). An open while another is held skips that lock, so
the runner opens each zvol here once, read-only (no udev change event on close, no effect on writes),
retrying on 512 itself, and keeps it open until the pool's teardown. Harmless on FreeBSD.
"""

from __future__ import annotations

import errno
import os
import time
from typing import Callable, List, Optional, Sequence

from slogqual import interrupts
from slogqual.errors import MeasurementError

ERESTARTSYS = 512  # Linux's kernel-internal "restart the call"; reaches user space from a zvol's open
RETRY_S = 60.0  # how long a busy pool may keep a zvol's first open failing before the run gives up
_RETRY_ERRNOS = (ERESTARTSYS, errno.EINTR)


def open_retrying(path: str, timeout_s: float = RETRY_S, opener: Callable[[str, int], int] = os.open,
                  pause_s: float = 0.05, record: Optional[List[int]] = None) -> int:
    """A read-only descriptor of ``path``, retrying while the open fails with 512 or EINTR. With
    ``record``, the descriptor is appended to it before a Ctrl-C can land: an open zvol this process
    lost track of would make the pool's destroy wait for its close forever (zpool destroy waits for
    every zvol's last close), so the open and the record are one held step (interrupts.held)."""
    deadline = time.monotonic() + timeout_s
    while True:
        with interrupts.held():
            try:
                fd = opener(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
                if record is not None:
                    record.append(fd)
                return fd
            except OSError as exc:
                failure = exc
        if failure.errno not in _RETRY_ERRNOS:
            raise MeasurementError(f"cannot open {path}: {failure.strerror or failure}") from None
        if time.monotonic() >= deadline:
            raise MeasurementError(
                f"cannot open {path}: errno {failure.errno} (ERESTARTSYS) for {timeout_s:g} s — the zvol's open "
                "could not get the pool's namespace lock within zvol_open_timeout_ms") from None
        time.sleep(pause_s)  # outside the held step: Ctrl-C ends a long wait at once


class HeldOpen:
    """``with HeldOpen(paths):`` each path open for the block's duration; closed on any exit, Ctrl-C
    included, before the block's caller goes on to destroy the pool."""

    def __init__(self, paths: Sequence[str], timeout_s: float = RETRY_S,
                 opener: Callable[[str, int], int] = os.open):
        self.paths = list(paths)
        self.timeout_s = timeout_s
        self.opener = opener
        self.fds: List[int] = []

    def __enter__(self) -> "HeldOpen":
        try:
            for p in self.paths:
                open_retrying(p, self.timeout_s, self.opener, record=self.fds)
        except BaseException:  # Ctrl-C while retrying too: nothing stays open
            self.close()
            raise
        return self

    def close(self) -> None:
        # held: a Ctrl-C between taking a descriptor off the list and closing it would leak it (a zvol's
        # last close can take a moment: it waits for the ZIL's last transaction group). A Ctrl-C can still land
        # while held() is being entered, before anything is taken off the list: then the list is closed again,
        # and the interrupt raised once every descriptor is closed (a leak seen 1 in a few hundred runs of
        # tests/test_held_open.py's random Ctrl-Cs on a busy host).
        interrupted: Optional[BaseException] = None
        while self.fds:
            try:
                with interrupts.held():
                    fds, self.fds = self.fds, []
                    for fd in fds:
                        try:
                            os.close(fd)
                        except OSError:
                            pass
            except KeyboardInterrupt as exc:
                interrupted = exc
        if interrupted is not None:
            raise interrupted

    def __exit__(self, *exc) -> None:
        self.close()
