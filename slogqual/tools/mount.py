"""mount(8) and umount(8): the one door every mount and unmount slogqual makes goes through.

What is mounted is a :class:`Mount` (device, mountpoint, filesystem type, options as mount -o takes
them), whoever builds it: the NFS client mount (tools/nfsmount.py on Linux, tools/freebsd/nfsserver.py
on FreeBSD, each with its own NFS options), the nfsd control filesystem (tools/nfsd.py). The same type
is what FreeBSD's ``mount -p`` lists (tools/freebsd/mount.py parses it). Unmounts are by mount point
only, lazily (``umount -l``) as a fallback where the caller asks for it: the powercut emulation's FUSE
mount, which a writer may still hold.

Programs run through :func:`slogqual.tools.spawn.run`, or a FreeBSD :class:`~slogqual.tools.freebsd.host.Host`
where one is given (its tests drive the same code with recorded answers); a failing exit is
ToolFailedError with the program's last complaint, a hang ToolTimeoutError, as for every tool.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from typing import TYPE_CHECKING, List, Optional, Sequence

from slogqual.tools import spawn as _run

if TYPE_CHECKING:  # only for the annotation: a FreeBSD host is handed in, never made here
    from slogqual.tools.freebsd.host import Host

PROGRAM = "mount"
UMOUNT = "umount"


@dataclass(frozen=True)
class Mount:
    """One mount: ``device`` (a path, ``server:/export``, a pseudo name such as ``nfsd``), where it is
    mounted, its filesystem type ('' to let mount find it) and its options, comma-separated as
    ``mount -o`` and fstab(5) take them ('' for none)."""

    device: str
    mountpoint: str
    fstype: str = ""
    options: str = ""

    def argv(self) -> List[str]:
        return [PROGRAM, *(["-t", self.fstype] if self.fstype else []), *(["-o", self.options] if self.options else []),
                self.device, self.mountpoint]


def umount_argv(mountpoint: str, lazy: bool = False) -> List[str]:
    """``lazy``: detach now, clean up when the last user is gone (Linux ``umount -l``)."""
    return [UMOUNT, *(["-l"] if lazy else []), mountpoint]


def table_argv() -> List[str]:
    """FreeBSD's mounted filesystems in fstab(5) format (``mount -p``; Linux reads findmnt instead)."""
    return [PROGRAM, "-p"]


def _finished(argv: Sequence[str], timeout: float, host: Optional["Host"]) -> subprocess.CompletedProcess:
    if host is not None:
        return host.run(argv, timeout=timeout)
    return _run.run(argv, timeout=timeout, typed_timeout=True)


def run(argv: Sequence[str], timeout: float = 120, host: Optional["Host"] = None) -> subprocess.CompletedProcess:
    """argv's finished run; a failing exit is ToolFailedError with its complaint."""
    proc = _finished(argv, timeout, host)
    if proc.returncode != 0:
        raise _run.failure(list(proc.args), proc.returncode, proc.stderr or "", proc.stdout or "")
    return proc


def mount(what: Mount, timeout: float = 120, host: Optional["Host"] = None) -> Mount:
    """Mount ``what``; it is returned once mounted."""
    run(what.argv(), timeout=timeout, host=host)
    return what


def umount(mountpoint: str, timeout: float = 120, host: Optional["Host"] = None, lazy_fallback: bool = False) -> None:
    """Unmount ``mountpoint``. With ``lazy_fallback`` a failing unmount (a busy mount) is tried again
    lazily, and only when that fails too is it ToolFailedError (the lazy attempt's complaint, else the
    first one's)."""
    proc = _finished(umount_argv(mountpoint), timeout, host)
    if proc.returncode == 0:
        return
    if not lazy_fallback:
        raise _run.failure(list(proc.args), proc.returncode, proc.stderr or "", proc.stdout or "")
    lazy = _finished(umount_argv(mountpoint, lazy=True), timeout, host)
    if lazy.returncode != 0:
        raise _run.failure(list(lazy.args), lazy.returncode, lazy.stderr or proc.stderr)
