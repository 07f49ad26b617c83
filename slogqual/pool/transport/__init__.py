"""Scenario transports: how the load reaches the pool.

``local`` (fio on the ZFS host, against the zvols or the dataset: what scenarios always did),
``iscsi`` (the zvols behind the kernel iSCSI target, fio on the initiator's disks) and ``nfs`` (the
dataset exported by the kernel NFS server, fio on the client's mount), all over loopback. Each is a
context manager that sets up on entry, yields the paths fio writes and a record of its own
configuration for the result, and tears down on exit whatever it made: on success, error, Ctrl-C and
SIGTERM. Every name it makes carries the pool's ``slogqual-`` name; it refuses to start where one of
its names is taken and never removes what it did not make.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

TRANSPORTS = ("local", "iscsi", "nfs")
IQN_PREFIX = "iqn.2003-01.org.slogqual:"
LOOPBACK = "127.0.0.1"
ISCSI_PORT = 3260


@dataclass(frozen=True)
class TransportConfig:
    """A scenario's transport and its settings (docs/scenarios.md)."""

    kind: str = "local"
    nfs_version: str = "4.2"
    nfs_threads: Optional[int] = None  # None: the server's count as it is (8 when slogqual starts it)
    nfs_mount_options: tuple = ("hard",)
    iscsi_write_cache: Optional[bool] = None  # None: what LIO makes of the zvol (recorded either way)

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"kind": self.kind}
        if self.kind == "nfs":
            out.update(nfs_version=self.nfs_version, nfs_threads=self.nfs_threads,
                       nfs_mount_options=list(self.nfs_mount_options))
        if self.kind == "iscsi":
            out.update(iscsi_write_cache=self.iscsi_write_cache)
        return out


@dataclass
class Attached:
    """What a transport gives the load: the paths fio writes (block devices or one directory) and the
    transport's record for the result document."""

    targets: List[str]
    record: Dict[str, Any] = field(default_factory=dict)


def iqn_for(pool_name: str) -> str:
    """Our target's IQN: the pool's slogqual- name under slogqual's own naming authority."""
    if not pool_name.startswith("slogqual-"):
        raise ValueError(f"pool name {pool_name!r} lacks the slogqual- prefix")
    # RFC 3722 names: lower-case letters, digits, '-', '.', ':'
    return IQN_PREFIX + re.sub(r"[^a-z0-9.:-]", "-", pool_name.lower())


def backstore_name(pool_name: str, lun: int) -> str:
    return f"{pool_name}-lun{lun}"


def fsid_for(pool_name: str) -> int:
    """A stable NFS fsid for this run's export: the pool name's digest (unique per run: the name
    carries the pid), kept below 2**31 and away from 0 (the NFSv4 root)."""
    import zlib

    return zlib.crc32(pool_name.encode()) % 0x7FFFFFFE + 1


def attach(config: TransportConfig, pool_name: str, targets: List[str]):
    """The context manager of ``config.kind`` over the scenario's targets (zvol devices, or one dataset
    mountpoint): yields an ``Attached`` with the paths fio writes. On FreeBSD the ctld/iscsictl and
    nfsd/mountd modules, on Linux the LIO/open-iscsi and knfsd ones."""
    from slogqual import paths

    if paths.is_freebsd() and config.kind == "iscsi":
        from slogqual.pool.transport import freebsd_iscsi
        return freebsd_iscsi.attach(pool_name, targets, write_cache=config.iscsi_write_cache)
    if paths.is_freebsd() and config.kind == "nfs":
        from slogqual.pool.transport import freebsd_nfs
        return freebsd_nfs.attach(pool_name, targets[0], version=config.nfs_version,
                                  threads=config.nfs_threads, mount_options=config.nfs_mount_options)
    if config.kind == "iscsi":
        from slogqual.pool.transport import iscsi
        return iscsi.attach(pool_name, targets, write_cache=config.iscsi_write_cache)
    if config.kind == "nfs":
        from slogqual.pool.transport import nfs
        return nfs.attach(pool_name, targets[0], fsid_for(pool_name), version=config.nfs_version,
                          threads=config.nfs_threads, mount_options=config.nfs_mount_options)
    from slogqual.pool.transport import local
    return local.attach(targets)
