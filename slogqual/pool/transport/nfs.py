"""transport = "nfs" on Linux: the scenario's dataset exported by knfsd, mounted by the kernel client on loopback.

Setup, each step's undo recorded as soon as it is done: the nfsd filesystem at /proc/fs/nfsd (when not
mounted), rpcbind (NFSv3) and rpc.mountd when none runs, the server threads (``rpc.nfsd N``: started
with short NFSv4 grace and lease times when slogqual starts the server, else resized only when the
scenario names a count, and put back after), ``exportfs -o OPTS 127.0.0.1:/dataset`` (never
/etc/exports), and ``mount -t nfs -o vers=V,...`` on a ``slogqual-<pool>-nfs-`` directory. Teardown
unmounts, unexports, restores the thread count and stops what it started.

The export is ``sync`` (the server commits a stable write before replying): what the scenario then
measures is the client's choice, stable writes (O_DSYNC, or the ``sync`` mount option) or UNSTABLE
writes with COMMIT (fsync); the client's WRITE/COMMIT counts of /proc/self/mountstats say which.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
from typing import Callable, Iterator, List, Optional, Sequence

from slogqual.errors import UsageError
from slogqual.pool.transport import LOOPBACK, Attached
from slogqual.pool.transport.teardown import Undo
from slogqual.tools import exportfs as _exportfs
from slogqual.tools import mount as _mount
from slogqual.tools import nfsd as _nfsd
from slogqual.tools import nfsmount as _nfsmount
from slogqual.kernel import procfs as _procfs
from slogqual.tools import spawn as _run

EXPORT_OPTIONS = ("rw", "sync", "no_root_squash", "no_subtree_check", "insecure")
DEFAULT_THREADS = 8  # nfs-utils' own default (RPCNFSDCOUNT)
QUICK_GRACE_S = 10  # the kernel's minimum for nfsv4gracetime/nfsv4leasetime
NFSD_FS_TIMEOUT_S = 300.0  # the (un)mount of /proc/fs/nfsd: run_checked's default, as rpc.nfsd gets here


def export_options(fsid: int) -> List[str]:
    # fsid: a ZFS dataset's export needs a stable id; ours is unique per run (the pool name's pid)
    return [*EXPORT_OPTIONS, f"fsid={fsid}"]


def setup_plan(path: str, mountpoint: str, version: str, mount_options: Sequence[str], fsid: int,
               threads: Optional[int]) -> List[List[str]]:
    """The argv lists in order, as far as they do not depend on what already runs."""
    plan = []
    if threads is not None:
        plan.append(_nfsd.threads_argv(threads))
    plan.append(_exportfs.export_argv(LOOPBACK, path, export_options(fsid)))
    plan.append(_nfsmount.mount_argv(LOOPBACK, path, mountpoint, version, mount_options))
    return plan


def find_mount(mountpoint: str) -> Optional[_procfs.NfsMountStats]:
    try:
        with open(_procfs.MOUNTSTATS, encoding="utf-8") as fh:
            text = fh.read()
    except OSError:
        return None
    return next((m for m in _procfs.parse_mountstats(text) if m.mountpoint == mountpoint), None)


def _daemon(undo: Undo, comm: str, helper: Callable[[], _run.Background], started: List[str]) -> None:
    if not _procfs.running(comm):
        bg = helper().start()
        undo.push(f"stop the {comm} slogqual started", bg.stop)
        started.append(comm)


def _stop_statd() -> None:
    for pid in _procfs.pids_named("rpc.statd"):
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            continue  # it ended on its own meanwhile


@contextlib.contextmanager
def attach(pool_name: str, path: str, fsid: int, version: str = "4.2", threads: Optional[int] = None,
           mount_options: Sequence[str] = ("hard",)) -> Iterator[Attached]:
    """Export ``path`` (the dataset's mountpoint) and mount it; yields the mount directory."""
    if not os.path.isabs(path):
        raise UsageError(f"NFS export {path!r}: an absolute path")
    _exportfs.check_options(mount_options)
    undo = Undo()
    started: List[str] = []
    try:
        if _nfsd.threads() is None:
            _mount.mount(_nfsd.nfsd_fs(), timeout=NFSD_FS_TIMEOUT_S)
            undo.push(f"unmount {_nfsd.PROC_NFSD}", lambda: _mount.umount(_nfsd.PROC_NFSD, timeout=NFSD_FS_TIMEOUT_S))
        # rpcbind for every version: rpc.nfsd registers NFSv3 (on by default) with it, and without one it
        # ends "unable to set any sockets for nfsd" (measured in the lab: a 4.2 attach after a 3 one)
        _daemon(undo, "rpcbind", _nfsd.rpcbind, started)
        _daemon(undo, "rpc.mountd", _nfsd.mountd, started)
        before = _nfsd.threads() or 0
        want = threads if threads is not None else (DEFAULT_THREADS if before == 0 else None)
        if before == 0:
            # only a stopped server takes these; a running one keeps its own
            for name in ("nfsv4leasetime", "nfsv4gracetime"):
                _nfsd.write(name, str(QUICK_GRACE_S))
        if want is not None and want != before:
            _nfsd.set_threads(want)
            undo.push(f"put the nfsd threads back to {before}", lambda: _nfsd.set_threads(before))
        # undo steps recorded before their step (an interrupt while exportfs or mount runs must not leave
        # the export or the mount behind: the iSCSI transport's lesson from a seeded SIGINT in the lab)
        undo.push(f"unexport {path}", lambda: _exportfs.exportfs(_exportfs.unexport_argv(LOOPBACK, path)))
        _exportfs.exportfs(_exportfs.export_argv(LOOPBACK, path, export_options(fsid)))
        mountpoint = tempfile.mkdtemp(prefix=f"{pool_name}-nfs-")
        undo.push(f"remove {mountpoint}", lambda: os.rmdir(mountpoint))
        statd_before = _procfs.running("rpc.statd")
        undo.push("stop the rpc.statd our NFSv3 mount started",
                  lambda: not statd_before and _procfs.running("rpc.statd") and _stop_statd())
        undo.push(f"unmount {mountpoint}", lambda: os.path.ismount(mountpoint) and
                  _mount.umount(mountpoint, timeout=_nfsmount.TIMEOUT_S))
        _mount.mount(_nfsmount.nfs_mount(LOOPBACK, path, mountpoint, version, mount_options),
                     timeout=_nfsmount.TIMEOUT_S)
        if not statd_before and _procfs.running("rpc.statd"):
            # mount.nfs starts rpc.statd for NFSv3 locking (start-statd) when none runs: ours to end,
            # after the unmount (measured in the lab: it outlived the scenario otherwise)
            started.append("rpc.statd")
        mounted = find_mount(mountpoint)
        record = {
            "kind": "nfs", "server": "knfsd", "export": f"{LOOPBACK}:{path}",
            "export_options": export_options(fsid), "mountpoint": mountpoint,
            "mount_options_requested": [f"vers={version}", *mount_options],
            "mount_options": mounted.opts if mounted else None, "nfsd_threads": _nfsd.threads(),
            "nfsd_threads_before": before, "nfsd_versions": _nfsd.versions(),
            "daemons_started": started, "kernel": os.uname().release,
        }
        yield Attached([mountpoint], record)
    finally:
        undo.run()
