"""nbdfuse: an NBD export as a regular file (MOUNTPOINT/nbd) through FUSE, and umount to take it away.

Used by the powercut emulation (slogqual/powercut): a write to the file is an NBD write and an
``fdatasync`` of it an NBD flush, so a writer on this host drives an nbdkit export (with or without
its cache filter) the way a filesystem drives a disk, without the kernel's nbd client (which needs a
loadable module). The mount is a context manager: unmounted and nbdfuse ended by its own PID on exit,
also on error and Ctrl-C, after the server behind it was killed (the power cut) too.
"""

from __future__ import annotations

import os
import tempfile
from typing import List, Optional

from slogqual.tools import run as _run

PROGRAM = "nbdfuse"
FILE_NAME = "nbd"  # nbdfuse's default name for the file under the mount point


def version() -> _run.ToolVersion:
    """'nbdfuse 1.14.2' -> (1, 14, 2)."""
    return _run.get_version(PROGRAM, ["--version"], r"nbdfuse (\d+)\.(\d+)(?:\.(\d+))?")


def check_version() -> _run.ToolVersion:
    return _run.check_version(PROGRAM, version)


def umount_argv(mountpoint: str, lazy: bool = False) -> List[str]:
    return ["umount", *(["-l"] if lazy else []), mountpoint]


def umount(mountpoint: str, timeout: float = 15.0) -> None:
    """Unmount; a busy mount (a writer still holds the file) is detached lazily. ToolFailedError when
    neither works, ToolTimeoutError when umount hangs."""
    proc = _run.run(umount_argv(mountpoint), timeout=timeout, typed_timeout=True)
    if proc.returncode == 0:
        return
    lazy = _run.run(umount_argv(mountpoint, lazy=True), timeout=timeout, typed_timeout=True)
    if lazy.returncode != 0:
        raise _run.failure(lazy.args, lazy.returncode, lazy.stderr or proc.stderr)


def is_mounted(mountpoint: str) -> bool:
    """Whether ``mountpoint`` is a mount point now (its device differs from its parent's)."""
    try:
        return os.stat(mountpoint).st_dev != os.stat(os.path.dirname(os.path.abspath(mountpoint))).st_dev
    except OSError:
        # a FUSE mount whose server died answers ENOTCONN: still mounted
        return os.path.isdir(os.path.dirname(os.path.abspath(mountpoint)))


class FuseMount:
    """``nbdfuse MOUNTPOINT --unix SOCKET`` in the foreground; ``path`` is the file to write."""

    def __init__(self, socket: str, mountpoint: Optional[str] = None):
        self.socket = socket
        self._own_dir = mountpoint is None
        self.mountpoint = mountpoint
        self.process: Optional[_run.Background] = None

    def argv(self) -> List[str]:
        return [PROGRAM, self.mountpoint, "--unix", self.socket]

    @property
    def path(self) -> str:
        return os.path.join(self.mountpoint, FILE_NAME)

    @property
    def pid(self) -> Optional[int]:
        return self.process.pid if self.process else None

    def start(self, timeout: float = 15.0) -> "FuseMount":
        """Mount and wait for the file. ToolMissingError before anything runs, ToolFailedError (its last
        words) when nbdfuse exits first (no /dev/fuse, not root), ToolTimeoutError when the file does
        not appear within ``timeout`` seconds."""
        _run.require(PROGRAM)
        if self._own_dir:
            self.mountpoint = tempfile.mkdtemp(prefix="slogqual-powercut-mnt-")
        self.process = _run.Background(self.argv(), grace_s=5.0)
        try:
            self.process.start()
            self.process.wait_until(lambda: os.path.exists(self.path), timeout, "mount the export")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Unmount (lazily when busy), end nbdfuse by its PID, remove the mount point it made."""
        try:
            if self.mountpoint and self.process is not None and is_mounted(self.mountpoint):
                umount(self.mountpoint)
        finally:
            if self.process is not None:
                self.process.stop()
            if self._own_dir and self.mountpoint and os.path.isdir(self.mountpoint):
                try:
                    os.rmdir(self.mountpoint)
                except OSError:
                    pass  # still mounted after all: leave the directory rather than fail the clean-up

    def __enter__(self) -> "FuseMount":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
