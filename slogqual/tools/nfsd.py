"""rpc.nfsd (nfs-utils): the Linux kernel NFS server's thread count, and the state /proc/fs/nfsd shows.

``rpc.nfsd N`` starts (or resizes to) N kernel server threads; ``rpc.nfsd 0`` stops them. The count in
force is /proc/fs/nfsd/threads, which is what a result records. The NFSv4 grace and lease times are
written there before the server starts (only by a run that starts it): a freshly started server
refuses new NFSv4 OPENs for its grace period, 90 s by default.
"""

from __future__ import annotations

import os
from typing import List, Optional

from slogqual.errors import UsageError
from slogqual.tools import mount as _mount
from slogqual.tools import spawn as _run

PROGRAM = "rpc.nfsd"
PROC_NFSD = "/proc/fs/nfsd"
MAX_THREADS = 1024


def threads_argv(n: int) -> List[str]:
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_THREADS:
        raise UsageError(f"nfsd threads: a whole number from 1 to {MAX_THREADS}, not {n!r}")
    return [PROGRAM, str(n)]


def _read(name: str, root: str = PROC_NFSD) -> Optional[str]:
    try:
        with open(os.path.join(root, name), encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return None


def threads(root: str = PROC_NFSD) -> Optional[int]:
    """The kernel server's thread count now (0: not running); None where /proc/fs/nfsd is not mounted."""
    value = _read("threads", root)
    try:
        return _run.whole(value) if value is not None else None
    except ValueError:  # isdigit() took '²', which int() cannot read, and '١', which it can
        return None


def versions(root: str = PROC_NFSD) -> Optional[str]:
    """'+3 +4 +4.1 +4.2' style list of the versions the server offers."""
    return _read("versions", root)


def write(name: str, value: str, root: str = PROC_NFSD) -> None:
    with open(os.path.join(root, name), "w", encoding="utf-8") as fh:
        fh.write(value)


def set_threads(n: int, timeout: float = 60) -> None:
    _run.run_checked(threads_argv(n), timeout=timeout)


def nfsd_fs(root: str = PROC_NFSD) -> _mount.Mount:
    """The nfsd control filesystem, where a host without the nfs-server service has none mounted
    (mounted and unmounted through slogqual.tools.mount)."""
    return _mount.Mount("nfsd", root, "nfsd")


def mountd_argv() -> List[str]:
    """rpc.mountd in the foreground (-F), ended by its PID: knfsd's export cache upcalls (v3 and v4)."""
    return ["rpc.mountd", "-F"]


def rpcbind_argv() -> List[str]:
    """rpcbind in the foreground (-f), its registrations kept across restarts (-w): NFSv3 needs it."""
    return ["rpcbind", "-f", "-w"]


def mountd() -> _run.Background:
    """rpc.mountd as a helper of slogqual's (not yet started), ended by its PID."""
    return _run.Background(mountd_argv(), grace_s=10)


def rpcbind() -> _run.Background:
    """rpcbind as a helper of slogqual's (not yet started), ended by its PID."""
    return _run.Background(rpcbind_argv(), grace_s=10)
