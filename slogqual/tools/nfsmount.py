"""mount -t nfs / umount: the Linux kernel NFS client's mount of one export, on a directory of ours.

The options are the scenario's: the NFS version (4.2 or 3), ``sync`` or not, and the rest as given.
Only the mountpoint slogqual created is ever unmounted.
"""

from __future__ import annotations

from typing import List, Sequence

from slogqual.errors import UsageError
from slogqual.tools import exportfs as _exportfs
from slogqual.tools import run as _run

PROGRAM = "mount"
VERSIONS = ("4.2", "4.1", "3")


def mount_argv(server: str, export: str, mountpoint: str, version: str, options: Sequence[str]) -> List[str]:
    if version not in VERSIONS:
        raise UsageError(f"NFS version {version!r}: one of {', '.join(VERSIONS)}")
    opts = [f"vers={version}", *_exportfs.check_options(options)]
    host = f"[{server}]" if ":" in server else server
    return [PROGRAM, "-t", "nfs", "-o", ",".join(opts), f"{host}:{export}", mountpoint]


def umount_argv(mountpoint: str) -> List[str]:
    return ["umount", mountpoint]


def run(argv: List[str], timeout: float = 120) -> str:
    return _run.run_checked(argv, timeout=timeout)
