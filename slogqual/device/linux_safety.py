"""The safety interlocks' facts on Linux: what is mounted, swap, held, open, the root filesystem's stack,
the imported pools, the signatures; and the O_EXCL hold. The vocabulary, the lock and the claim are
device/interlock.py's; slogqual.device.claim_for_writing picks this module on Linux.

A claim of a block device (interlock.claim_block), in this order:

1. takes an exclusive ``flock`` on ``/run/slogqual/locks/blk-MAJ-MIN.lock``, so a
   second slogqual on the same device (under any of its names) is refused;
2. checks the device and all its partitions: mounted (by device number, and by
   source path for btrfs), active swap, holders (md, dm, LVM, bcache), the root
   filesystem's device stack, a label of an imported ZFS pool; these refuse
   always;
3. probes for signatures: ``blkid -p``, ``wipefs --no-act``, kernel partitions
   and slogqual's own ZFS label reader; these refuse unless ``destroy_data``;
4. opens the device ``O_RDONLY|O_EXCL`` and keeps it open for the whole run:
   the kernel then refuses any new mount, swapon, md/dm assembly or pool import
   of it (they all claim the device exclusively), and an open that fails with
   EBUSY means some kernel user holds it that the checks above did not name.

Refusal is a :class:`RefusedError` with one line naming the device and every
reason, before anything is written. Regular files get the lock and a check that
they are not active swap or a loop device's backing file; NBD URIs get the lock.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import Iterator, List, Optional, Set

from slogqual import paths
from slogqual.device import interlock, zfslabel
from slogqual.device.interlock import HOLDERS, MOUNTED, OPEN, PARTITIONS, PROBE, READ_ONLY, ROOT, SIGNATURE, SWAP
from slogqual.device.interlock import Claim, Finding
from slogqual.errors import RefusedError, ToolError, UsageError
from slogqual.kernel import procfs, sysfs
from slogqual.tools import blkid, findmnt, wipefs, zpool
from slogqual.tools import spawn as _run

# Processes that open every block device briefly after it changes (udev's watch rule); not users. The programs
# udev's rules run for such an event (ata_id, scsi_id, blkid, cdrom_id) are its children and just as brief: the
# lab's sweep of a disk a destroyed pool had just released was refused over "pid 3775 (ata_id)".
TRANSIENT_PROBERS = {"systemd-udevd", "(udev-worker)", "udevd"}


def _parent(pid: str, proc: str) -> Optional[str]:
    """The parent pid of ``pid`` from /proc/PID/stat (its 4th field, after the parenthesised comm)."""
    text = sysfs.read(os.path.join(proc, pid, "stat")) or ""
    rest = text.rpartition(")")[2].split()
    return rest[1] if len(rest) > 1 and rest[1].isdigit() else None


def transient_prober(pid: str, proc: str = "/proc") -> bool:
    """Whether ``pid`` is udev itself or a program one of udev's workers runs for an event."""
    if (sysfs.read(os.path.join(proc, pid, "comm")) or "?") in TRANSIENT_PROBERS:
        return True
    parent = _parent(pid, proc)
    return parent is not None and (sysfs.read(os.path.join(proc, parent, "comm")) or "?") in TRANSIENT_PROBERS


# --- the individual checks (block devices) -----------------------------------------------------

def _devnum_of_name(name: str, root: str = sysfs.SYS) -> Optional[str]:
    return sysfs.read(os.path.join(root, "class", "block", name, "dev"))


def _dm_name(name: str, root: str = sysfs.SYS) -> str:
    n = sysfs.read(os.path.join(root, "class", "block", name, "dm", "name"))
    md = sysfs.read(os.path.join(root, "class", "block", name, "md", "level"))
    if n:
        return f"{name} ({n})"
    if md:
        return f"{name} ({md})"
    return name


def device_set(info: sysfs.BlockInfo, root: str = sysfs.SYS) -> dict:
    """{devnum: name} of the device and its partitions."""
    out = {info.devnum: info.name}
    for p in info.partitions:
        dn = _devnum_of_name(p, root)
        if dn:
            out[dn] = p
    return out


def _under(devnum: str, root: str, seen: Optional[Set[str]] = None) -> Set[str]:
    """devnum plus every block device below it (slaves, recursively; a partition's disk)."""
    seen = seen if seen is not None else set()
    if devnum in seen:
        return seen
    seen.add(devnum)
    info = sysfs.block_info(devnum, root)
    if info is None:
        return seen
    if info.is_partition and info.parent:
        dn = _devnum_of_name(info.parent, root)
        if dn:
            _under(dn, root, seen)
    for s in info.slaves:
        dn = _devnum_of_name(s, root)
        if dn:
            _under(dn, root, seen)
    return seen


def open_by_processes(devnums: Set[str], proc: str = "/proc") -> List[str]:
    """'pid N (comm)' of every other process holding one of devnums open (needs root to see all)."""
    me = os.getpid()
    users = []
    try:
        pids = [p for p in os.listdir(proc) if p.isdigit() and int(p) != me]
    except OSError:
        return users
    for pid in pids:
        fddir = os.path.join(proc, pid, "fd")
        try:
            fds = os.listdir(fddir)
        except OSError:
            continue
        for fd in fds:
            try:
                st = os.stat(os.path.join(fddir, fd))
            except OSError:
                continue
            if stat.S_ISBLK(st.st_mode) and f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}" in devnums:
                if transient_prober(pid, proc):
                    break  # udev's probe after a close-for-write: reads for milliseconds, then closes
                users.append(f"pid {pid} ({sysfs.read(os.path.join(proc, pid, 'comm')) or '?'})")
                break
    return users


def check_in_use(info: sysfs.BlockInfo, root: str = sysfs.SYS) -> List[Finding]:
    """Mounted, swap, holders, root: the findings --destroy-data never overrides."""
    findings: List[Finding] = []
    devs = device_set(info, root)
    try:
        mounts = findmnt.mounts()
    except ValueError as exc:
        findings.append(Finding(MOUNTED, f"cannot read the mount table ({exc})"))
        mounts = []
    root_devnum = None
    for m in mounts:
        dn = m.devnum if m.devnum in devs else None
        if dn is None and m.source.startswith("/dev/"):
            src = sysfs.devnum_of(m.source)
            dn = src if src in devs else None
        if dn is not None:
            findings.append(Finding(MOUNTED, f"/dev/{devs[dn]} is mounted at {m.target} ({m.fstype})"))
        if m.target == "/":
            root_devnum = m.devnum if m.devnum and not m.devnum.startswith("0:") else sysfs.devnum_of(m.source)
    try:
        for s in procfs.swaps():
            dn = sysfs.devnum_of(s.filename)
            if dn in devs:
                findings.append(Finding(SWAP, f"/dev/{devs[dn]} is active swap"))
    except ValueError as exc:
        findings.append(Finding(SWAP, f"cannot read the swap table ({exc})"))
    for dn, name in devs.items():
        pinfo = info if dn == info.devnum else sysfs.block_info(dn, root)
        if pinfo and pinfo.holders:
            findings.append(Finding(HOLDERS, f"/dev/{name} is held by " + ", ".join(_dm_name(h, root) for h in pinfo.holders)))
    users = open_by_processes(set(devs))
    if users:
        findings.append(Finding(OPEN, f"/dev/{info.name} is open in " + ", ".join(users[:5])
                                + (f" and {len(users) - 5} more" if len(users) > 5 else "")))
    if root_devnum:
        stack = _under(root_devnum, root)
        hit = [devs[d] for d in devs if d in stack]
        if hit:
            findings.append(Finding(ROOT, f"/dev/{hit[0]} backs the root filesystem"))
    return findings


def _kstat_pools() -> Optional[Set[str]]:
    """The SPL kstat tree's pools (no program needed); None when ZFS is not loaded."""
    names = zfslabel.imported_pools()
    return set(names) if names is not None else None


def _zpool_list_pools() -> Optional[Set[str]]:
    """``zpool list``'s pools where zpool is installed; None when it is not, or is unusable (no module
    loaded): then the kstat answer stands."""
    if not _run.which("zpool"):
        return None
    try:
        return set(zpool.pools())
    except Exception:
        return None


def imported_pool_names() -> Optional[Set[str]]:
    """Imported ZFS pools: the SPL kstat tree and, where installed, ``zpool list``.
    None when neither source exists (ZFS not loaded and no zpool): then no pool can be imported."""
    return interlock.imported_pools([_kstat_pools, _zpool_list_pools])


def check_pools(info: sysfs.BlockInfo, path: str, root: str = sysfs.SYS) -> List[Finding]:
    """ZFS labels on the device or its partitions (interlock.zfs_label_finding says what each means).
    The imported pools are asked first, whether or not a label is found."""
    imported = imported_pool_names()
    targets = [(path, info.name)] + [(f"/dev/{p}", p) for p in info.partitions]
    return interlock.zfs_label_findings(targets, lambda: imported)


def check_signatures(info: sysfs.BlockInfo, path: str) -> List[Finding]:
    """blkid -p and wipefs --no-act, plus the kernel's partitions. All overridable."""
    findings: List[Finding] = []
    seen: List[str] = []
    probed = False
    if blkid.available():
        pr = blkid.probe(path)
        if pr.error is None:
            probed = True
            seen += pr.signatures()
    if wipefs.available():
        try:
            sigs = wipefs.list_signatures(path)
            probed = True
            for s in sigs:
                label = s.type + (f" at offset {s.offset:#x}" if s.offset is not None else "")
                if not any(x.split()[0] == s.type for x in seen):
                    seen.append(label)
        except ToolError:
            pass
    if not probed:
        findings.append(Finding(PROBE, "cannot probe it for filesystem/RAID/partition signatures "
                                       "(blkid and wipefs are missing or failed)"))
    if seen:
        findings.append(Finding(SIGNATURE, "carries " + ", ".join(dict.fromkeys(seen))))
    if info.partitions:
        findings.append(Finding(PARTITIONS, "has partitions " + ", ".join(info.partitions)))
    return findings


def inspect(path: str, root: str = sysfs.SYS) -> List[Finding]:
    """Every finding for path, without locking or opening it exclusively (for listings)."""
    pk = paths.kind_of(path, freebsd=False)
    if pk.kind == paths.KIND_NBD:
        return []
    if pk.kind == paths.KIND_FILE:
        return check_file(path, pk.st, root)
    info = sysfs.block_info(pk.devnum, root)
    if info is None:
        raise UsageError(f"{path}: not in sysfs")
    found = check_in_use(info, root) + check_pools(info, path, root) + check_signatures(info, path)
    if info.read_only:  # a sweep refuses it (target.py); a listing must not call it free
        found.insert(0, Finding(READ_ONLY, f"{path} is read-only (kernel ro flag)"))
    return found


def check_file(path: str, st: os.stat_result, root: str = sysfs.SYS) -> List[Finding]:
    findings: List[Finding] = []
    key = (st.st_dev, st.st_ino)
    try:
        for s in procfs.swaps():
            try:
                sst = os.stat(s.filename)
            except OSError:
                continue
            if (sst.st_dev, sst.st_ino) == key:
                findings.append(Finding(SWAP, "is an active swap file"))
    except ValueError as exc:
        findings.append(Finding(SWAP, f"cannot read the swap table ({exc})"))
    for name in sysfs.block_devices(root):
        if not name.startswith("loop"):
            continue
        backing = sysfs.read(os.path.join(root, "class", "block", name, "loop", "backing_file"))
        if not backing:
            continue
        try:
            bst = os.stat(backing)
        except OSError:
            continue
        if (bst.st_dev, bst.st_ino) == key:
            findings.append(Finding(HOLDERS, f"backs the loop device /dev/{name}"))
    return findings


# --- the claim ------------------------------------------------------------------------------------

def hold(path: str) -> int:
    """Open path O_RDONLY|O_EXCL and return the descriptor, kept for the run: the kernel then refuses
    every new exclusive user. RefusedError when the kernel reports it busy."""
    try:
        return os.open(path, os.O_RDONLY | os.O_EXCL)
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            raise RefusedError(f"refusing {path}: the kernel reports it busy (an exclusive open failed: it is "
                               "mounted, swap, an md/dm/ZFS member or opened exclusively by another program)") from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise UsageError(f"{path}: permission denied (writing a block device needs root)") from None
        raise


def block_findings(path: str, devnum: str, root: str = sysfs.SYS) -> List[Finding]:
    """What the claim checks on a block device: in use, ZFS labels, signatures (in that order)."""
    info = sysfs.block_info(devnum, root)
    if info is None:
        raise RefusedError(f"refusing {path}: block device {devnum} is not in sysfs, so its use cannot be checked")
    return check_in_use(info, root) + check_pools(info, path, root) + check_signatures(info, path)


@contextlib.contextmanager
def claim_for_writing(path: str, destroy_data: bool, lock_dir: Optional[str] = None,
                      root: str = sysfs.SYS, exclusive: bool = True) -> Iterator[Claim]:
    """Run every interlock and hold the device for a destructive run, or raise RefusedError.

    destroy_data overrides only the "carries a signature / partition table" findings.
    exclusive=False (pool building): the exclusive open is still tried, as a check, but released at
    once, because ``zpool create`` must open the device exclusively itself; the slogqual lock stays.
    """
    pk = paths.kind_of(path, freebsd=False)
    if pk.kind == paths.KIND_NBD:
        with interlock.claim_uri(path, lock_dir) as claim:
            yield claim
        return
    st = pk.st
    if pk.kind == paths.KIND_FILE:
        with interlock.claim_file(path, destroy_data, lock_dir, lambda: check_file(path, st, root)) as claim:
            yield claim
        return
    devnum = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    with interlock.claim_block(path, destroy_data, lock_dir, exclusive, lambda: block_findings(path, devnum, root),
                               hold, devnum=devnum) as claim:
        yield claim
