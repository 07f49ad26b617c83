"""The safety interlocks' facts on FreeBSD, where a disk is a GEOM provider behind a character device
node, and the O_RDWR hold. The vocabulary, the lock and the claim are device/interlock.py's;
slogqual.device.claim_for_writing picks this module on FreeBSD, or when given a FreeBSD host.

Linux's sources (sysfs holders, /proc/self/mountinfo, /proc/swaps, an O_EXCL open) do not exist
here; FreeBSD's own do, each read through its tool module with the outputs coming from ``host``
(tools/freebsd/host.py: the live programs, or recorded ones in the tests — the same code path):

* ``geom disk list``: the disk's access counts, Mode ``rXwYeZ`` (the sums over every GEOM consumer).
  ``w>0`` is open for writing, ``e>0`` held exclusively — a mounted filesystem, swap, a ZFS vdev,
  gmirror/graid/geli/gmultipath and every other class that attaches to it holds its consumer
  exclusively. Either refuses always. (The counts include what is open on the disk's partitions:
  PART passes its partitions' opens down to the disk.)
* ``gpart show -p``: the partition tables on the disk, and on its slices (a BSD label in an MBR
  slice): partitions refuse unless --destroy-data, as on Linux.
* ``glabel status``: labels on the disk or its partitions. ``diskid/`` names the disk by its serial
  and stores nothing on it; ``gpt/``, ``gptid/`` name partition entries (counted with the
  partitions); any other (``ufs/``, ``ufsid/``, ``label/``, ``msdosfs/``, ...) is metadata on the
  disk: a signature, overridable.
* ``mount -p`` and ``swapctl -l``: a mount or swap device that is the disk, one of its partitions,
  a label of either, or a provider stacked on one of them by name (``ada0p3.eli``,
  ``label/bigdiskp1``) refuses always.
* ZFS labels read from the disk's and its partitions' own nodes (device/zfslabel.py); a member of an
  imported pool (``zpool list``) refuses always, any other label unless --destroy-data
  (interlock.zfs_label_finding, the rule Linux's labels follow too).

There is no O_EXCL hold: FreeBSD's GEOM ignores O_EXCL on a device open (sys/geom/geom_dev.c,
g_dev_open: ``#ifdef notyet e = flags & O_EXCL``). What it does enforce is that nobody opens a
provider for writing while someone holds it exclusively, and nobody takes it exclusively while
someone has it open for writing (g_access: EPERM). So the claim opens the disk O_RDWR, writing
nothing, and keeps it open for the run: the open fails if anything holds the disk exclusively, and
while it is held no mount, swapon, zpool import/create, gmirror or geli attach can take the disk.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from dataclasses import dataclass, field
from typing import Iterator, List, Optional, Set

from slogqual import paths
from slogqual.device import interlock
from slogqual.device.interlock import HOLDERS, MOUNTED, OPEN, PARTITIONS, SIGNATURE, SWAP, Claim, Finding
from slogqual.errors import RefusedError, ToolError, UsageError
from slogqual.tools import zpool
from slogqual.tools import spawn as _run
from slogqual.tools.freebsd import geom, glabel, gpart, mount, swapctl
from slogqual.tools.freebsd import host as freebsd_host
from slogqual.tools.freebsd.host import LIVE, Host

# What a provider stacked on another is called after it: a partition (p1, s1, s1a, a), a class
# suffix (.eli, .nop), in any sequence. "ada1" + "0" (ada10) is another disk, not one of these.
_DERIVED = re.compile(r"(?:[ps][0-9]+|[a-h](?![a-z0-9])|\.[A-Za-z0-9_]+)+")

# Labels that put no metadata of their own on the disk: diskid/ is the serial number; gpt/ and
# gptid/ are the partition table's entries, reported with the partitions.
_PASSIVE_LABELS = {"diskid", "gpt", "gptid"}


def provider_name(path: str, dev: str = "/dev") -> str:
    """``/dev/ada0`` -> ``ada0``, ``/dev/diskid/DISK-X`` -> ``diskid/DISK-X``: the GEOM provider a node
    under dev stands for. UsageError for a path elsewhere (no GEOM name to check it by)."""
    full = os.path.normpath(os.path.abspath(path))
    root = os.path.normpath(os.path.abspath(dev))
    rel = os.path.relpath(full, root)
    if rel.startswith("..") or rel == ".":
        raise UsageError(f"{path}: not a device node under {dev} (FreeBSD disks are /dev/ada0, /dev/da0, "
                         "/dev/nvd0, /dev/nda0)")
    return rel


def stacked_on(provider: str, names: Set[str]) -> Optional[str]:
    """The name in names that provider is, or is stacked on by its name (ada0p3.eli on ada0p3)."""
    if provider in names:
        return provider
    for n in sorted(names, key=len, reverse=True):
        if provider.startswith(n) and _DERIVED.fullmatch(provider[len(n):]):
            return n
    return None


@dataclass
class DiskView:
    """What FreeBSD's programs say about one disk."""

    name: str
    disk: Optional[geom.GeomDisk] = None
    partitions: List[gpart.Partition] = field(default_factory=list)
    schemes: List[str] = field(default_factory=list)
    labels: List[glabel.Label] = field(default_factory=list)  # on the disk or its partitions
    names: Set[str] = field(default_factory=set)  # the disk, its partitions, their labels


def view(name: str, host: Host, problems: List[str]) -> DiskView:
    """The disk's GEOM picture; a program that fails adds to problems (the caller refuses on them)."""
    v = DiskView(name=name, names={name})
    try:
        v.disk = next((d for d in geom.disk_list(host=host) if d.name == name), None)
    except ToolError as exc:
        problems.append(f"cannot read GEOM's disks ({exc})")
    try:
        tables = gpart.show(host)
    except ToolError as exc:
        problems.append(f"cannot read the partition tables ({exc})")
        tables = []
    done: Set[str] = set()
    grew = True
    while grew:  # the disk's table, then tables on its slices (a BSD label in an MBR slice), ...
        grew = False
        for t in tables:
            if t.provider in v.names and t.provider not in done:
                done.add(t.provider)
                grew = True
                v.schemes.append(t.scheme if t.provider == name else f"{t.scheme} in {t.provider}")
                for p in t.partitions:
                    if p.name not in v.names:
                        v.partitions.append(p)
                        v.names.add(p.name)
    try:
        for lab in glabel.status(host):
            if stacked_on(lab.component, v.names):
                v.labels.append(lab)
        v.names.update(lab.name for lab in v.labels)
    except ToolError as exc:
        problems.append(f"cannot read the GEOM labels ({exc})")
    return v


def _zpool_list_pools(host: Host) -> Optional[Set[str]]:
    """Pools ``zpool list`` shows imported; None when zpool is missing or fails (ZFS not loaded)."""
    try:
        proc = host.run(zpool.list_argv())
    except ToolError:
        return None
    if proc.returncode != 0:
        return None
    try:
        return {p.name for p in _run.parse_output(proc, zpool.parse_list)}
    except ToolError:
        return None


def imported_pool_names(host: Host) -> Optional[Set[str]]:
    """Imported ZFS pools: ``zpool list`` (FreeBSD has no kstat tree to read them from without it)."""
    return interlock.imported_pools([lambda: _zpool_list_pools(host)])


def findings(path: str, host: Host = LIVE, for_listing: bool = False) -> List[Finding]:
    """Every finding for the disk at path, without opening it for writing. for_listing: a disk GEOM does
    not know is reported, not refused."""
    name = provider_name(path, host.dev)
    problems: List[str] = []
    v = view(name, host, problems)
    out: List[Finding] = [Finding(OPEN, p) for p in problems]
    if v.disk is None and not problems:
        msg = (f"{path} is not a disk GEOM lists (geom disk list): on FreeBSD slogqual writes whole disks, "
               "not partitions or labels")
        if not for_listing:
            raise RefusedError(f"refusing {path}: {msg[len(path) + 1:]}")
        out.append(Finding(OPEN, msg))
    counts = v.disk.open_counts if v.disk else None
    if v.disk is not None and counts is None:
        out.append(Finding(OPEN, f"/dev/{name}: GEOM did not give its access counts (Mode {v.disk.mode!r})"))
    elif counts and counts["w"] > 0:
        out.append(Finding(OPEN, f"/dev/{name} is open for writing (GEOM Mode {v.disk.mode})"))
    if counts and counts["e"] > 0:
        out.append(Finding(HOLDERS, f"/dev/{name} is held exclusively (GEOM Mode {v.disk.mode}: a mounted "
                                    "filesystem, swap, a ZFS pool, or a GEOM class such as gmirror, graid or "
                                    "geli is using it)"))
    where = {lab.name: lab.component for lab in v.labels}  # a label is on this provider

    def on(dev_name: str, base: str) -> str:
        below = where.get(base, base)
        return "" if below == dev_name else f" (on {below})"

    try:
        for m in mount.mounts(host):
            dev_name = mount.device_name(m.device)  # the kernel names them under /dev
            base = stacked_on(dev_name, v.names) if dev_name else None
            if base:
                out.append(Finding(MOUNTED, f"{m.device}{on(dev_name, base)} is mounted at {m.mountpoint} "
                                            f"({m.fstype})"))
    except ToolError as exc:
        out.append(Finding(MOUNTED, f"cannot read the mount table ({exc})"))
    try:
        for s in swapctl.swaps(host):
            dev_name = mount.device_name(s.device)
            base = stacked_on(dev_name, v.names) if dev_name else None
            if base:
                out.append(Finding(SWAP, f"{s.device}{on(dev_name, base)} is active swap"))
    except ToolError as exc:
        out.append(Finding(SWAP, f"cannot read the swap devices ({exc})"))
    if v.partitions:
        out.append(Finding(PARTITIONS, "has partitions " + ", ".join(p.name for p in v.partitions)
                           + f" ({', '.join(v.schemes)})"))
    for lab in v.labels:
        if lab.kind not in _PASSIVE_LABELS:
            out.append(Finding(SIGNATURE, f"carries the label {lab.name} (on {lab.component})"))
    out += _pool_findings(name, v, host)
    return out


def _pool_findings(name: str, v: DiskView, host: Host) -> List[Finding]:
    """ZFS labels on the disk's and its partitions' nodes; the imported pools are asked only once a
    label is found (zpool is a program run, on a host that may have no ZFS)."""
    targets = [(os.path.join(host.dev, dev_name), dev_name) for dev_name in [name] + [p.name for p in v.partitions]]
    return interlock.zfs_label_findings(targets, lambda: imported_pool_names(host))


def hold(path: str) -> int:
    """Open path O_RDWR (writing nothing) and return the descriptor, kept for the run: GEOM then refuses
    anyone an exclusive open of the disk. RefusedError when GEOM refuses us (someone holds it)."""
    try:
        return os.open(path, os.O_RDWR)
    except OSError as exc:
        if exc.errno == errno.EPERM:
            raise RefusedError(f"refusing {path}: GEOM refuses to open it for writing (EPERM: something holds "
                               "it exclusively: a mounted filesystem, swap, a ZFS pool or a GEOM class)") from None
        if exc.errno == errno.EACCES:
            raise UsageError(f"{path}: permission denied (writing a disk needs root)") from None
        if exc.errno == errno.EROFS:
            raise RefusedError(f"refusing {path}: the device is read-only ({exc.strerror}); nothing was written") from None
        raise


# --- the claim ------------------------------------------------------------------------------------

def inspect(path: str, host: Optional[Host] = None) -> List[Finding]:
    """Every finding for path, without locking or holding it (for listings); a disk GEOM does not know
    is reported, not refused. host: FreeBSD's programs, the live ones unless given."""
    pk = paths.kind_of(path, freebsd=True)
    if pk.kind in (paths.KIND_NBD, paths.KIND_FILE):
        return []
    return findings(path, host or freebsd_host.LIVE, for_listing=True)


@contextlib.contextmanager
def claim_for_writing(path: str, destroy_data: bool, lock_dir: Optional[str] = None, exclusive: bool = True,
                      host: Optional[Host] = None) -> Iterator[Claim]:
    """Run every interlock and hold the disk for a destructive run, or raise RefusedError.

    destroy_data overrides only the "carries a signature / partition table" findings. exclusive=False
    (pool building): the hold is released at once, because ``zpool create`` must take the disk
    exclusively, which our write open would block; the slogqual lock stays. host: FreeBSD's programs,
    the live ones (looked up at the call) unless given.
    """
    pk = paths.kind_of(path, freebsd=True)
    if pk.kind == paths.KIND_NBD:
        with interlock.claim_uri(path, lock_dir) as claim:
            yield claim
        return
    if pk.kind == paths.KIND_FILE:
        # swap files are md(4) vnode devices, not files swapctl lists; nothing to check here
        with interlock.claim_file(path, destroy_data, lock_dir, lambda: []) as claim:
            yield claim
        return
    programs = host or freebsd_host.LIVE
    with interlock.claim_block(path, destroy_data, lock_dir, exclusive, lambda: findings(path, programs),
                               hold) as claim:
        yield claim
