"""What a sweep writes to: a disk, a regular file, an NBD export, or a scratch file.

A disk is a block device on Linux and a character device on FreeBSD (paths.kind_of); there its
size comes from ``diskinfo`` and a write open refused by GEOM means something holds it.

Resolution checks everything that can be checked before any write (existence,
permission, size against the largest IO size, O_DIRECT support) so that bad
input fails with one line and exit code 2 before anything is measured.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from slogqual import owned as _owned
from slogqual import paths
from slogqual.errors import RefusedError, SlogqualError, UsageError
from slogqual.kernel import sysfs
from slogqual.tools import nbdkit
from slogqual.units import MiB


KIND_BLOCK = paths.KIND_BLOCK
KIND_FILE = paths.KIND_FILE
KIND_NBD = paths.KIND_NBD
KIND_SCRATCH = "scratch"

# A scratch file holds this many of the largest writes, so random offsets really vary.
SCRATCH_SLOTS = 32
SCRATCH_MIN = 64 * MiB


@dataclass
class Target:
    path: str  # filesystem path, or the URI for nbd
    kind: str
    size: Optional[int]
    direct: bool = True
    notes: List[str] = field(default_factory=list)

    @property
    def is_uri(self) -> bool:
        return self.kind == KIND_NBD

    def to_dict(self) -> Dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "size": self.size}


is_nbd_uri = paths.is_nbd_uri


def check_writable(path: str, kind: str, freebsd: bool = False) -> None:
    """Open for writing (writing nothing): mode bits alone mislead root, and a read-only
    loop device, an immutable file or a read-only mount refuse only at open time."""
    try:
        fd = os.open(path, os.O_WRONLY)
    except PermissionError as exc:
        if freebsd and kind == KIND_BLOCK and exc.errno == errno.EPERM:
            # GEOM's g_access: no writer while another consumer holds the disk exclusively
            raise RefusedError(f"refusing {path}: GEOM refuses to open it for writing (EPERM: something holds it "
                               "exclusively: a mounted filesystem, swap, a ZFS pool or a GEOM class); "
                               "nothing was written") from None
        who = ", usually root" if kind == KIND_BLOCK else ""
        raise UsageError(f"{path}: permission denied (writing needs write access{who})") from None
    except OSError as exc:
        if exc.errno == errno.EROFS and kind == KIND_BLOCK:
            raise RefusedError(f"refusing {path}: the device is read-only ({exc.strerror}); nothing was written") from None
        raise UsageError(f"{path}: cannot open for writing: {exc.strerror}") from None
    os.close(fd)
    if kind == KIND_BLOCK and not freebsd and _block_read_only(path):
        # an interlock like the others (exit 3, docs/sweep.md's "Read-only devices are refused outright")
        raise RefusedError(f"refusing {path}: the device is read-only (kernel ro flag); nothing was written")


def _block_read_only(path: str) -> bool:
    # Linux lets a read-only block device be opened for writing; only the writes fail.
    rdev = os.stat(path).st_rdev
    info = sysfs.block_info(f"{os.major(rdev)}:{os.minor(rdev)}")
    return bool(info and info.read_only)


def device_size(path: str, host=None) -> int:
    """The size of a file or device: where its end is (block devices have no st_size). A FreeBSD disk
    (a character device) says its size through ``diskinfo`` (mediasize); host: where that runs
    (tools/freebsd/host.py), given or on FreeBSD."""
    if (host is not None or paths.is_freebsd()) and stat.S_ISCHR(os.stat(path).st_mode):
        from slogqual.tools.freebsd import diskinfo

        try:
            size = diskinfo.describe(path, host).mediasize
        except SlogqualError as exc:
            raise UsageError(f"{path}: cannot read its size ({exc})") from None
        if size is None:
            raise UsageError(f"{path}: diskinfo -v gave no mediasize")
        return size
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)


def probe_direct(path: str, opener: Callable[[str, int], int] = os.open) -> Optional[str]:
    """None if O_DIRECT opens work on path; otherwise the reason they do not."""
    flag = getattr(os, "O_DIRECT", 0)
    if not flag:
        return "this platform has no O_DIRECT"
    try:
        fd = opener(path, os.O_WRONLY | flag)
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            return f"the filesystem of {path} does not support O_DIRECT"
        raise
    os.close(fd)
    return None


def _apply_direct_probe(target: Target, opener=os.open) -> None:
    reason = probe_direct(target.path, opener)
    if reason:
        target.direct = False
        target.notes.append(f"O_DIRECT unavailable ({reason}): writes go through the page cache; "
                            "each fdatasync/O_DSYNC still forces them to the device")


def resolve(spec: str, largest_io: int, host=None) -> Target:
    """Turn a command-line TARGET into a checked Target (no writes). host: FreeBSD's programs
    (tools/freebsd/host.py); given, or on FreeBSD, character devices are disks sized by diskinfo."""
    if is_nbd_uri(spec):
        try:
            size = nbdkit.export_size(spec)
        except SlogqualError as exc:
            raise UsageError(str(exc)) from None
        target = Target(path=spec, kind=KIND_NBD, size=size, direct=False)
        if size is None:
            target.notes.append("export size unknown (nbdinfo not installed): not checked against the IO sizes")
    else:
        freebsd = host is not None or paths.is_freebsd()
        pk = paths.kind_of(spec, freebsd=freebsd)  # the one vocabulary (paths.py): disk or file here
        kind, st = pk.kind, pk.st
        check_writable(spec, kind, freebsd)
        try:
            size = device_size(spec, host) if kind == KIND_BLOCK else st.st_size
        except PermissionError:
            raise UsageError(f"{spec}: permission denied") from None
        target = Target(path=spec, kind=kind, size=size)
        _apply_direct_probe(target)
    if target.size is not None and target.size < largest_io:
        raise UsageError(f"{spec}: {target.size} bytes is too small for {largest_io}-byte writes")
    return target


def scratch_size(largest_io: int) -> int:
    return max(SCRATCH_MIN, SCRATCH_SLOTS * largest_io)


SCRATCH_RE = re.compile(r"^slogqual-scratch-([0-9]+)\.img$")


def remove_stale_scratch(directory: str) -> List[str]:
    """Scratch files in ``directory`` whose run is gone (SIGKILL, a power cut, a kill during the fill):
    removed, and their names returned so that the caller can say so. A file whose pid is alive belongs
    to a run still going and is left alone — except one that carries this process's own pid, which
    cannot be ours yet (a pid reused after a crash)."""
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        m = SCRATCH_RE.match(name)
        if not m:
            continue
        pid = int(m.group(1))
        if pid != os.getpid() and _owned.pid_alive(pid):
            continue
        try:
            os.unlink(os.path.join(directory, name))
            removed.append(name)
        except OSError:
            pass
    return sorted(removed)


def create_scratch(directory: str, largest_io: int) -> Target:
    """A preallocated scratch file in directory, removed by remove_scratch().

    It is filled with data rather than left sparse so that the sweep measures
    overwrites, not block allocation by the filesystem. Scratch files of runs
    that died without removing theirs are removed first (and named in the notes).
    """
    stale = remove_stale_scratch(directory)
    size = scratch_size(largest_io)
    try:
        free = os.statvfs(directory).f_bavail * os.statvfs(directory).f_frsize
    except OSError as exc:
        raise UsageError(f"{directory}: {exc.strerror}") from None
    if free < size + 16 * MiB:
        raise UsageError(f"{directory}: {free // MiB} MiB free, a scratch file needs {size // MiB} MiB")
    path = os.path.join(os.path.abspath(directory), f"slogqual-scratch-{os.getpid()}.img")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except PermissionError:
        raise UsageError(f"{directory}: permission denied (cannot create the scratch file)") from None
    try:
        chunk = bytes(range(256)) * (MiB // 256)
        for _ in range(size // MiB):
            os.write(fd, chunk)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(path)
        raise
    os.close(fd)
    target = Target(path=path, kind=KIND_SCRATCH, size=size)
    for name in stale:
        target.notes.append(f"removed {name}: the scratch file of an earlier run that ended without removing it")
    _apply_direct_probe(target)
    return target


def remove_scratch(target: Target) -> None:
    if target.kind == KIND_SCRATCH:
        try:
            os.unlink(target.path)
        except FileNotFoundError:
            pass


def first_hole(path: str) -> Optional[int]:
    """Where a regular file's first hole starts (its size when it has none), or None where SEEK_HOLE is
    not there. Not for a poll during a measurement: on ZFS it may force the pending transaction out."""
    if not hasattr(os, "SEEK_HOLE"):
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.lseek(fd, 0, os.SEEK_HOLE)
    except OSError:
        return None
    finally:
        os.close(fd)


def identity(target: Target, kernel_size: bool = True, holes: bool = False) -> Optional[Dict[str, int]]:
    """What makes the target the one a sweep started on: its device and inode numbers and its size
    (a regular file's st_size; a disk's size as the kernel reports it, with ``kernel_size``); with
    ``holes``, a regular file's first hole (first_hole). None for an NBD export (no inode to stat).
    Raises OSError when the path is gone."""
    if target.kind == KIND_NBD:
        return None
    st = os.stat(target.path)
    hole = None
    if target.kind == KIND_BLOCK:
        size = device_size(target.path) if kernel_size else None
    else:
        size = st.st_size
        hole = first_hole(target.path) if holes else None
    return {"st_dev": st.st_dev, "st_ino": st.st_ino, "size": size, "first_hole": hole}


def identity_changes(before: Dict[str, int], now: Optional[Dict[str, int]]) -> List[str]:
    """What differs between two identity() records, in words ('size 16777216 -> 1048576 bytes');
    None for ``now``: the path is gone. A size of None (not read) is not compared."""
    if now is None:
        return ["the path no longer exists"]
    out = []
    if now["st_dev"] != before["st_dev"] or now["st_ino"] != before["st_ino"]:
        out.append(f"another file is at the path now (device/inode {before['st_dev']}/{before['st_ino']} -> "
                   f"{now['st_dev']}/{now['st_ino']})")
    if None not in (now["size"], before["size"]) and now["size"] != before["size"]:
        way = "shrank" if now["size"] < before["size"] else "grew"
        out.append(f"size {before['size']} -> {now['size']} bytes ({way})")
    # A file with no hole that has one now was cut and written past the cut again: truncated and grown
    # back by the engine's writes (the size alone can be back to what it was), or a range punched out.
    was_whole = before.get("first_hole") is not None and before["size"] is not None \
        and before["first_hole"] >= before["size"]
    if was_whole and now.get("first_hole") is not None and now["size"] is not None \
            and now["first_hole"] < now["size"] and not out:
        out.append(f"a hole at offset {now['first_hole']} of a file that had none: it was cut (truncated or "
                   "punched) and written past the cut again")
    return out


# --- one storage under two units (issue #40) ------------------------------------------------------------------

Key = Tuple[Any, ...]


@dataclass
class Storage:
    """What a target's writes land on, as the kernel tells it, to find two units of a tray that are one.
    ``same``: keys that name this very storage (its device number or device and inode; a loop device's
    backing file or device; a whole disk's WWN, or its model and serial), each with how it reads in a line;
    ``within``: keys of the storages it is a part of (a partition's whole disk, and what that disk is)."""

    path: str
    same: Dict[Key, str] = field(default_factory=dict)
    within: Dict[Key, str] = field(default_factory=dict)


_DEPTH = 8  # a loop device on a partition of a loop device ...: far deeper than anyone stacks them


def storage_of(target: Target, root: str = sysfs.SYS) -> Optional[Storage]:
    """The storage of a resolved target; None for an NBD export (no device or inode here) and for a path
    gone since it was resolved (its claim says so)."""
    if target.kind == KIND_NBD:
        return None
    try:
        st = os.stat(target.path)
    except OSError:
        return None
    if stat.S_ISBLK(st.st_mode):
        return device_storage(f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}", target.path, root)
    if stat.S_ISCHR(st.st_mode):  # a FreeBSD disk: devfs gives each device its own st_rdev
        return Storage(target.path, {("chr", st.st_rdev): f"device {st.st_rdev:#x}"})
    return Storage(target.path, {_file_key(st): _file_words(target.path, st)})


def _file_key(st: os.stat_result) -> Key:
    return ("file", st.st_dev, st.st_ino)


def _file_words(path: str, st: os.stat_result) -> str:
    return f"the file {path} (device/inode {st.st_dev}/{st.st_ino})"


def device_storage(devnum: str, path: str, root: str = sysfs.SYS, depth: int = 0) -> Storage:
    """The storage of block device MAJ:MIN (at ``path``) as sysfs under ``root`` describes it: a loop
    device is its backing file (or device), a partition lies within its whole disk, a whole disk is also
    its WWN and its model and serial. An NVMe namespace is not its controller's serial: the namespaces of
    one controller share it and are separate storage (each has its own WWN)."""
    own: Key = ("dev", devnum)
    info = sysfs.block_info(devnum, root)
    name = info.name if info else devnum
    found = Storage(path, {own: f"block device {devnum} ({name})"})
    if info is None or depth >= _DEPTH:
        return found
    backing = None if info.is_partition else info.loop_backing_file  # a partition's is its disk's
    if backing and not backing.endswith(" (deleted)"):  # a deleted backing file has no path to stat
        try:
            st = os.stat(backing)
        except OSError:
            st = None
        if st is not None and stat.S_ISBLK(st.st_mode):
            under = device_storage(f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}", backing, root, depth + 1)
            found.same.update(under.same)
            found.within.update(under.within)
        elif st is not None:
            found.same[_file_key(st)] = _file_words(backing, st)
    if info.is_partition and info.parent:
        disk_devnum = sysfs.read(os.path.join(os.path.dirname(info.syspath), "dev"))  # its disk's directory
        if disk_devnum:
            whole = device_storage(disk_devnum, info.parent, root, depth + 1)
            for key, words in list(whole.same.items()) + list(whole.within.items()):
                found.within[key] = f"a partition of {info.parent}" + ("" if key == ("dev", disk_devnum) else
                                                                       f", which is {words}")
        return found
    if info.wwid:
        found.same[("wwid", info.wwid)] = f"the disk with WWN {info.wwid}"
    if info.serial and not info.nvme_ctrl:
        found.same[("serial", info.model or "", info.serial)] = \
            f"the disk with serial {info.serial}" + (f" ({info.model})" if info.model else "")
    return found


_ONCE = "a tray takes each storage once (one device would be {} as two units); nothing was written"


def shared_storage(a: Storage, b: Storage, done: str = "swept") -> Optional[str]:
    """The line that refuses ``a`` and ``b`` as two units of one tray, naming both and what they share;
    None when they are separate storage (two partitions of one disk are: each its own part of it)."""
    for key, words in a.same.items():
        if key in b.same:
            return f"{a.path} and {b.path} are one storage, {words}: {_ONCE.format(done)}"
    for inner, outer in ((a, b), (b, a)):
        for key, words in inner.within.items():
            if key in outer.same:
                return f"{inner.path} is part of {outer.path}, {words}: {_ONCE.format(done)}"
    return None


def one_storage(tray: List[Optional[Target]], done: str = "swept", root: str = sysfs.SYS) -> None:
    """Bad input (UsageError), before anything is written: two units of a tray that are one storage
    (two loop devices on one file, one file under two names, one disk through two nodes) or one a part of
    the other (a partition and its disk): one device would be measured twice and called two."""
    found = [s for s in (storage_of(t, root) for t in tray if t is not None) if s is not None]
    for i, a in enumerate(found):
        for b in found[i + 1:]:
            line = shared_storage(a, b, done)
            if line:
                raise UsageError(line)
