"""transport = "nfs" on FreeBSD: the scenario's dataset exported by nfsd/mountd from a private exports
file, mounted by the kernel client on loopback.

Setup, each step's undo recorded as soon as it is done: a private 0700 directory
``slogqual-<pool>-nfs-XXXX`` holding our exports file (the dataset to 127.0.0.1 only, -maproot=root,
and a ``V4:`` line making it the NFSv4 root) and the mount directory; ``mountd -S FILE`` (never
/etc/exports); ``nfsd -t -n N``; ``mount -t nfs -o nfsv3|nfsv4,...``, read back with ``nfsstat -m`` (the
options the client runs with: version, rsize/wsize, hard, in the Linux mountstats form). Teardown in reverse: unmount,
SIGTERM to our nfsd and mountd (their pidfiles /var/run/nfsd.pid and /var/run/mountd.pid, theirs to
write since no other runs), the directory.

Refused before anything is made: a mountd already running (mountd(8) loads its exports files into the
kernel in place of every export there, and registers with rpcbind: a second one would unexport the
system's shares), an nfsd already running (one master nfsd per host), and no rpcbind (mountd and nfsd
register with it; start it with ``service rpcbind onestart`` — slogqual does not, it writes no pidfile).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from typing import Callable, Iterator, List, Optional, Sequence

from slogqual.errors import UsageError
from slogqual.pool.transport import LOOPBACK, Attached
from slogqual.pool.transport import freebsd_daemon as _daemon
from slogqual.pool.transport.teardown import Undo
from slogqual.tools import mount as _mount
from slogqual.tools import spawn as _run
from slogqual.tools.freebsd import nfsserver as _nfs
from slogqual.tools.freebsd import nfsstat as _nfsstat
from slogqual.tools.freebsd.host import LIVE, Host

DEFAULT_THREADS = 8
MOUNTD_PIDFILE = "/var/run/mountd.pid"
NFSD_PIDFILE = "/var/run/nfsd.pid"
EXPORT_OPTIONS = ("-maproot=root",)


def find_mount(host: Host, mountpoint: str):
    """The client mount at ``mountpoint`` as ``nfsstat -m`` reports it (procfs.NfsMountStats), or None."""
    argv = _nfsstat.argv()
    mounts = _run.parse_text(_nfsstat.PROGRAM, argv, _daemon.checked(host, argv), _nfsstat.parse)
    return next((m for m in mounts if m.mountpoint == mountpoint), None)


@contextlib.contextmanager
def attach(pool_name: str, path: str, version: str = "4.2", threads: Optional[int] = None,
           mount_options: Sequence[str] = ("hard",), host: Host = LIVE,
           read: Callable[[str], str] = _daemon.read_file,
           sleep: Callable[[float], None] = time.sleep) -> Iterator[Attached]:
    """Export ``path`` (the dataset's mountpoint) and mount it; yields the mount directory."""
    if not os.path.isabs(path):
        raise UsageError(f"NFS export {path!r}: an absolute path")
    want = threads if threads is not None else DEFAULT_THREADS
    exports_text = _nfs.exports(path, LOOPBACK, EXPORT_OPTIONS)  # bad input refused before anything runs
    nfsd_argv = _nfs.nfsd_argv(want)
    _daemon.refuse_if_running(host, "mountd", "mountd replaces the kernel's exports with its files'")
    _daemon.refuse_if_running(host, "nfsd", "one nfsd per host")
    if not _daemon.running(host, "rpcbind"):
        raise UsageError("NFS on FreeBSD needs rpcbind (mountd and nfsd register with it): "
                         "service rpcbind onestart")
    undo = Undo()
    started: List[str] = []
    try:
        workdir = tempfile.mkdtemp(prefix=f"{pool_name}-nfs-")  # mkdtemp: mode 0700
        undo.push(f"remove {workdir}", lambda: shutil.rmtree(workdir, ignore_errors=True))
        exports_path = os.path.join(workdir, "exports")
        fd = os.open(exports_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(exports_text)
        mountpoint = os.path.join(workdir, "mnt")
        os.mkdir(mountpoint, 0o700)
        _daemon.start(host, undo, "mountd", _nfs.mountd_argv(exports_path), MOUNTD_PIDFILE, read=read,
                      started=started, sleep=sleep)
        _daemon.start(host, undo, "nfsd", nfsd_argv, NFSD_PIDFILE, read=read, started=started, sleep=sleep)
        mount = _mount.mount(_nfs.nfs_mount(LOOPBACK, path, mountpoint, version, mount_options), host=host)
        undo.push(f"unmount {mountpoint}", lambda: _mount.umount(mountpoint, host=host))
        mounted = find_mount(host, mountpoint)
        record = {
            "kind": "nfs", "server": "FreeBSD nfsd", "export": f"{LOOPBACK}:{path}",
            "exports": exports_text, "mountpoint": mountpoint, "mount_argv": mount.argv(),
            "mount_options_requested": mount.options.split(","), "nfsd_threads": want,
            "mount_options": mounted.opts if mounted else None,
            "daemons_started": started,
        }
        yield Attached([mountpoint], record)
    finally:
        undo.run()
