"""nbdfuse: an NBD export as a regular file (MOUNTPOINT/nbd) through FUSE, and umount to take it away.

Used by the powercut emulation (slogqual/powercut): a write to the file is an NBD write and an
``fdatasync`` of it an NBD flush, so a writer on this host drives an nbdkit export (with or without
its cache filter) the way a filesystem drives a disk, without the kernel's nbd client (which needs a
loadable module). The mount is a context manager: unmounted and nbdfuse ended by its own PID on exit,
also on error and Ctrl-C, after the server behind it was killed (the power cut) too.

Killed by SIGKILL, slogqual cannot unmount: nbdfuse gets SIGTERM then (it unmounts as it ends), and a
mount left all the same is ended by the next mount made here (and by the next ``powercut run``). The mount
point is ``mnt`` in a directory ``slogqual-powercut-mnt-<pid>-…`` whose name and ``owner.pid`` name the
run (slogqual.owned): only those of dead runs are unmounted, never a mount slogqual did not make.
"""

from __future__ import annotations

import logging
import os
import signal
from typing import List, Optional

from slogqual.errors import ToolError
from slogqual.tools import mount as _mount
from slogqual import owned as _owned
from slogqual.tools import spawn as _run

PROGRAM = "nbdfuse"
FILE_NAME = "nbd"  # nbdfuse's default name for the file under the mount point
MOUNT_PREFIX = "slogqual-powercut-mnt-"  # the directory slogqual makes (owner.pid inside) ...
MOUNT_DIR = "mnt"  # ... and the mount point in it

log = logging.getLogger("slogqual.tools.nbdfuse")


def version() -> _run.ToolVersion:
    """'nbdfuse 1.14.2' -> (1, 14, 2)."""
    return _run.get_version(PROGRAM, ["--version"], r"nbdfuse (\d+)\.(\d+)(?:\.(\d+))?")


def check_version() -> _run.ToolVersion:
    return _run.check_version(PROGRAM, version)


def umount(mountpoint: str, timeout: float = 15.0) -> None:
    """Unmount (through slogqual.tools.mount); a busy mount (a writer still holds the file) is detached
    lazily. ToolFailedError when neither works, ToolTimeoutError when umount hangs."""
    _mount.umount(mountpoint, timeout=timeout, lazy_fallback=True)


def is_mounted(mountpoint: str) -> bool:
    """Whether ``mountpoint`` is a mount point now (its device differs from its parent's)."""
    try:
        return os.stat(mountpoint).st_dev != os.stat(os.path.dirname(os.path.abspath(mountpoint))).st_dev
    except OSError:
        # a FUSE mount whose server died answers ENOTCONN: still mounted
        return os.path.isdir(os.path.dirname(os.path.abspath(mountpoint)))


def _present(path: str) -> bool:
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError:  # ENOTCONN: a FUSE mount whose server is gone
        pass
    return True


def _unmount_and_remove(owner_dir: str) -> None:
    """Unmount the mount point in a dead run's directory and remove what it made, one name at a time
    (never a tree: were the unmount to fail, it would be the device's contents). OSError leaves it."""
    mountpoint = os.path.join(owner_dir, MOUNT_DIR)
    if _present(mountpoint) and is_mounted(mountpoint):
        try:
            umount(mountpoint)
        except ToolError as exc:
            raise OSError(str(exc)) from None
    if _present(mountpoint):
        os.rmdir(mountpoint)
    try:
        os.unlink(os.path.join(owner_dir, _owned.OWNER_FILE))
    except FileNotFoundError:
        pass  # killed while removing it, or before writing it: the owner was read from the name
    os.rmdir(owner_dir)


def remove_stale_mounts(base: Optional[str] = None) -> List[str]:
    """The mounts (and their directories) of powercut runs that were killed before they could unmount:
    ended, and their directories returned. Only directories named MOUNT_PREFIX… whose owner.pid names a
    process that is gone, in ``base`` (the temporary directory by default)."""
    removed = _owned.remove_stale(base, MOUNT_PREFIX, _unmount_and_remove)
    for path in removed:
        log.warning("unmounted and removed %s: the FUSE mount of a slogqual run that was killed", path)
    return removed


class FuseMount:
    """``nbdfuse MOUNTPOINT --unix SOCKET`` in the foreground; ``path`` is the file to write."""

    def __init__(self, socket: str, mountpoint: Optional[str] = None):
        self.socket = socket
        self._own_dir: Optional[str] = None  # the owner directory made here, when no mountpoint was given
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
        remove_stale_mounts()
        if self.mountpoint is None:
            self._own_dir = _owned.make_dir(MOUNT_PREFIX)
            self.mountpoint = os.path.join(self._own_dir, MOUNT_DIR)
            os.mkdir(self.mountpoint, 0o700)
        # SIGTERM when slogqual dies: nbdfuse unmounts as it ends
        self.process = _run.Background(self.argv(), grace_s=5.0, death_signal=signal.SIGTERM)
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
            if self._own_dir is not None:
                try:
                    _unmount_and_remove(self._own_dir)  # unmounted above: what is left is the directories
                    self._own_dir = None
                except OSError:
                    pass  # still mounted after all: leave the directory rather than fail the clean-up

    def __enter__(self) -> "FuseMount":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
