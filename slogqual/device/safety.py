"""The safety interlocks: never write to a device that is in use, and never two writers at once.

A destructive run claims its target with :func:`claim_for_writing`. For a block
device the claim, in this order:

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

On FreeBSD (disks are character devices, GEOM providers) the checks are FreeBSD's own and the
hold is an O_RDWR open instead of O_EXCL: see device/freebsd_safety.py. ``host`` (a
tools/freebsd/host.Host) says where FreeBSD's programs run; giving one selects the FreeBSD path.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Iterator, List, Optional, Set

from slogqual.device import zfslabel
from slogqual import paths
from slogqual.errors import RefusedError, ToolError, UsageError
from slogqual.tools import blkid, findmnt, procfs, sysfs, wipefs

LOCK_DIRS = ("/run/slogqual/locks",)

# Finding codes
MOUNTED, SWAP, HOLDERS, ROOT, POOL, BUSY, LOCKED = "mounted", "swap", "holders", "root", "pool", "busy", "locked"
OPEN = "open"
READ_ONLY = "read-only"  # the kernel's ro flag: not overridable, nothing can be written

# Processes that open every block device briefly after it changes (udev's watch rule); not users.
TRANSIENT_PROBERS = {"systemd-udevd", "(udev-worker)", "udevd"}
SIGNATURE, PARTITIONS, PROBE = "signature", "partitions", "probe"
OVERRIDABLE = {SIGNATURE, PARTITIONS, PROBE}


@dataclass
class Finding:
    code: str
    message: str

    @property
    def overridable(self) -> bool:
        return self.code in OVERRIDABLE


@dataclass
class Claim:
    """Held for the duration of a destructive run."""

    path: str
    kind: str  # block | file | nbd
    devnum: Optional[str] = None
    lock_path: Optional[str] = None
    overridden: List[str] = field(default_factory=list)  # signature findings accepted by --destroy-data
    notes: List[str] = field(default_factory=list)


def refusal_line(path: str, findings: List[Finding], destroy_data: bool) -> str:
    reasons = list(dict.fromkeys(f.message for f in findings))
    line = f"refusing {path}: " + "; ".join(reasons)
    if all(f.overridable for f in findings) and not destroy_data:
        line += " (name it with --destroy-data to overwrite it)"
    elif any(f.overridable for f in findings) and not destroy_data:
        line += " (--destroy-data would not override all of these)"
    return line


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
                comm = (sysfs.read(os.path.join(proc, pid, "comm")) or "?")
                if comm in TRANSIENT_PROBERS:
                    break  # udev's blkid probe after a close-for-write: reads for milliseconds, then closes
                users.append(f"pid {pid} ({comm})")
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


def imported_pool_names() -> Optional[Set[str]]:
    """Imported ZFS pools: the SPL kstat tree (no program needed) and, where installed, ``zpool list``.
    None when neither source exists (ZFS not loaded and no zpool): then no pool can be imported."""
    names = zfslabel.imported_pools()
    found = set(names) if names is not None else None
    from slogqual.tools import run as _run

    if _run.which("zpool"):
        try:
            from slogqual.tools import zpool

            found = (found or set()) | set(zpool.pools())
        except Exception:  # zpool present but unusable (no module loaded): the kstat answer stands
            pass
    return found


def check_pools(info: sysfs.BlockInfo, path: str, root: str = sysfs.SYS) -> List[Finding]:
    """ZFS labels on the device or its partitions: a member of an imported pool refuses always,
    any other label is a signature (overridable)."""
    findings: List[Finding] = []
    imported = imported_pool_names()
    targets = [(path, info.name)] + [(f"/dev/{p}", p) for p in info.partitions]
    for dev, name in targets:
        try:
            labels = zfslabel.read_labels(dev)
        except OSError:
            continue
        if not labels:
            continue
        pool = next((l.pool for l in labels if l.pool), None)
        state = next((l.state for l in labels if l.state), None)
        if pool and imported and pool in imported and state in ("active", None):
            findings.append(Finding(POOL, f"/dev/{name} belongs to the imported ZFS pool {pool!r}"))
        else:
            findings.append(Finding(SIGNATURE, f"/dev/{name} carries {len(labels)} ZFS label(s)"
                                    + (f" of pool {pool!r} ({state})" if pool else "")))
    return findings


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


def _freebsd(host) -> bool:
    return host is not None or sys.platform.startswith("freebsd")


def inspect(path: str, root: str = sysfs.SYS, host=None) -> List[Finding]:
    """Every finding for path, without locking or opening it exclusively (for listings)."""
    pk = paths.kind_of(path, freebsd=_freebsd(host))
    if pk.kind == paths.KIND_NBD:
        return []
    if pk.kind == paths.KIND_FILE:
        return [] if _freebsd(host) else check_file(path, pk.st, root)
    if _freebsd(host):
        from slogqual.device import freebsd_safety
        from slogqual.tools.freebsd.host import LIVE

        return freebsd_safety.findings(path, host or LIVE, for_listing=True)
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


# --- the lock -----------------------------------------------------------------------------------

def _lock_dir() -> str:
    for d in LOCK_DIRS:
        try:
            os.makedirs(d, mode=0o755, exist_ok=True)
            if os.access(d, os.W_OK):
                return d
        except OSError:
            continue
    d = os.path.join(tempfile.gettempdir(), f"slogqual-locks-{os.getuid()}")
    os.makedirs(d, mode=0o700, exist_ok=True)
    return d


def lock_name(path: str) -> str:
    if paths.is_nbd_uri(path):
        return "nbd-" + hashlib.sha256(path.encode()).hexdigest()[:16] + ".lock"
    st = os.stat(path)
    if stat.S_ISBLK(st.st_mode):
        return f"blk-{os.major(st.st_rdev)}-{os.minor(st.st_rdev)}.lock"
    if stat.S_ISCHR(st.st_mode):  # a FreeBSD disk: devfs gives each device its own st_rdev
        return f"chr-{st.st_rdev:x}.lock"
    return f"file-{st.st_dev}-{st.st_ino}.lock"


@contextlib.contextmanager
def device_lock(path: str, lock_dir: Optional[str] = None) -> Iterator[str]:
    """Exclusive non-blocking flock keyed by the device number (or inode, or URI)."""
    d = lock_dir or _lock_dir()
    lp = os.path.join(d, lock_name(path))
    fd = os.open(lp, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
            try:
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            except OSError:
                holder = "?"
            raise RefusedError(f"refusing {path}: another slogqual run (pid {holder}) is writing it "
                               f"(lock {lp})") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        try:
            yield lp
        finally:
            try:
                os.ftruncate(fd, 0)
            except OSError:
                pass
    finally:
        os.close(fd)  # closing releases the flock


def lock_holder(path: str, lock_dir: Optional[str] = None) -> Optional[int]:
    """The pid written in ``path``'s slogqual lock while that lock is held, else None (a helper process
    such as the powercut writer checks with it that its parent claimed the device it is told to write)."""
    try:
        lp = os.path.join(lock_dir or _lock_dir(), lock_name(path))
        fd = os.open(lp, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                return None
            text = os.pread(fd, 64, 0).decode(errors="replace").strip()
            return int(text) if text.isdigit() else None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None  # nobody holds it
    finally:
        os.close(fd)


# --- the claim ------------------------------------------------------------------------------------

@contextlib.contextmanager
def claim_for_writing(path: str, destroy_data: bool, lock_dir: Optional[str] = None,
                      root: str = sysfs.SYS, exclusive: bool = True, host=None) -> Iterator[Claim]:
    """Run every interlock and hold the device for a destructive run, or raise RefusedError.

    destroy_data overrides only the "carries a signature / partition table" findings.
    exclusive=False (pool building): the exclusive open is still tried, as a check, but released at
    once, because ``zpool create`` must open the device exclusively itself; the slogqual lock stays.
    host: FreeBSD's programs (tools/freebsd/host.py); given, or on FreeBSD, the FreeBSD interlocks run.
    """
    pk = paths.kind_of(path, freebsd=_freebsd(host))
    if pk.kind == paths.KIND_NBD:
        with device_lock(path, lock_dir) as lp:
            yield Claim(path=path, kind="nbd", lock_path=lp)
        return
    st = pk.st
    if pk.kind == paths.KIND_FILE:
        with device_lock(path, lock_dir) as lp:
            # FreeBSD: swap files are md(4) vnode devices, not files swapctl lists; nothing to check here
            findings = [] if _freebsd(host) else check_file(path, st, root)
            if findings:
                raise RefusedError(refusal_line(path, findings, destroy_data))
            yield Claim(path=path, kind="file", lock_path=lp)
        return
    if _freebsd(host):
        with _claim_freebsd(path, destroy_data, lock_dir, exclusive, host) as claim:
            yield claim
        return
    devnum = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    with device_lock(path, lock_dir) as lp:
        info = sysfs.block_info(devnum, root)
        if info is None:
            raise RefusedError(f"refusing {path}: block device {devnum} is not in sysfs, so its use cannot be checked")
        hard = check_in_use(info, root)
        pools = check_pools(info, path, root)
        hard += [f for f in pools if not f.overridable]
        soft = [f for f in pools if f.overridable] + check_signatures(info, path)
        if hard or (soft and not destroy_data):
            raise RefusedError(refusal_line(path, hard + soft, destroy_data))
        try:
            excl = os.open(path, os.O_RDONLY | os.O_EXCL)
        except OSError as exc:
            if exc.errno == errno.EBUSY:
                raise RefusedError(f"refusing {path}: the kernel reports it busy (an exclusive open failed: it is "
                                   "mounted, swap, an md/dm/ZFS member or opened exclusively by another program)") from None
            if exc.errno in (errno.EACCES, errno.EPERM):
                raise UsageError(f"{path}: permission denied (writing a block device needs root)") from None
            raise
        if not exclusive:
            os.close(excl)
            excl = None
        try:
            claim = Claim(path=path, kind="block", devnum=devnum, lock_path=lp,
                          overridden=[f.message for f in soft])
            if soft:
                claim.notes.append(f"--destroy-data: overwriting {path} ("
                                   + "; ".join(dict.fromkeys(f.message for f in soft)) + ")")
            yield claim
        finally:
            if excl is not None:
                os.close(excl)


@contextlib.contextmanager
def _claim_freebsd(path: str, destroy_data: bool, lock_dir: Optional[str], exclusive: bool, host) -> Iterator[Claim]:
    from slogqual.device import freebsd_safety
    from slogqual.tools.freebsd.host import LIVE

    with device_lock(path, lock_dir) as lp:
        found = freebsd_safety.findings(path, host or LIVE)
        hard = [f for f in found if not f.overridable]
        soft = [f for f in found if f.overridable]
        if hard or (soft and not destroy_data):
            raise RefusedError(refusal_line(path, hard + soft, destroy_data))
        held = freebsd_safety.hold(path)
        if not exclusive:  # zpool create must take the disk exclusively, which our write open would block
            os.close(held)
            held = None
        try:
            claim = Claim(path=path, kind="block", devnum=None, lock_path=lp, overridden=[f.message for f in soft])
            if soft:
                claim.notes.append(f"--destroy-data: overwriting {path} ("
                                   + "; ".join(dict.fromkeys(f.message for f in soft)) + ")")
            yield claim
        finally:
            if held is not None:
                os.close(held)
