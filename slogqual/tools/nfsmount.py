"""mount -t nfs: the Linux kernel NFS client's mount of one export, on a directory of ours.

The options are the scenario's: the NFS version (4.2 or 3), ``sync`` or not, and the rest as given.
Mounted and unmounted through the mount door (slogqual.tools.mount); only the mountpoint slogqual
created is ever unmounted.
"""

from __future__ import annotations

from typing import List, Sequence

from slogqual.errors import UsageError
from slogqual.tools import exportfs as _exportfs
from slogqual.tools import mount as _mount

PROGRAM = _mount.PROGRAM
VERSIONS = ("4.2", "4.1", "3")
TIMEOUT_S = 120.0


def nfs_mount(server: str, export: str, mountpoint: str, version: str, options: Sequence[str]) -> _mount.Mount:
    if version not in VERSIONS:
        raise UsageError(f"NFS version {version!r}: one of {', '.join(VERSIONS)}")
    opts = [f"vers={version}", *_exportfs.check_options(options)]
    host = f"[{server}]" if ":" in server else server
    return _mount.Mount(f"{host}:{export}", mountpoint, "nfs", ",".join(opts))


def mount_argv(server: str, export: str, mountpoint: str, version: str, options: Sequence[str]) -> List[str]:
    return nfs_mount(server, export, mountpoint, version, options).argv()
