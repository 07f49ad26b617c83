"""The safety interlocks' vocabulary, shared by Linux's and FreeBSD's: what a finding is, when one
refuses, the refusal line, the per-device lock, the claim a destructive run holds, and what a ZFS label
on a device means.

The platform modules beside this one (device/linux_safety.py, device/freebsd_safety.py) supply only the
platform's facts — what is mounted, swap, held or open, which pools are imported, which signatures a
device carries — as findings, and the platform's way of holding a device during the run; the claim
itself runs here, once for both. slogqual.device.claim_for_writing picks the platform.

A claim of a block device, in this order: the lock (a second slogqual on the same device, under any of
its names, is refused); the platform's findings (any that --destroy-data cannot override refuses; the
others refuse unless destroy_data); the platform's hold, kept for the run (or released at once for a
pool build, whose ``zpool create`` must open the device exclusively itself).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, List, Optional, Set, Tuple

from slogqual import paths
from slogqual.device import zfslabel
from slogqual.errors import RefusedError

LOCK_DIRS = ("/run/slogqual/locks",)

# Finding codes
MOUNTED, SWAP, HOLDERS, ROOT, POOL, BUSY, LOCKED = "mounted", "swap", "holders", "root", "pool", "busy", "locked"
OPEN = "open"
READ_ONLY = "read-only"  # the kernel's ro flag: not overridable, nothing can be written
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


# --- what a ZFS label on a device means ---------------------------------------------------------------

def imported_pools(sources: Iterable[Callable[[], Optional[Set[str]]]]) -> Optional[Set[str]]:
    """The pools the platform's sources (in order) say are imported, together; None when no source
    could answer at all (ZFS absent: then no pool can be imported). A source answers None when it
    cannot say (its program missing or failing)."""
    found: Optional[Set[str]] = None
    for source in sources:
        names = source()
        if names is not None:
            found = (found or set()) | set(names)
    return found


def zfs_label_finding(name: str, labels: List[zfslabel.Label], imported: Optional[Set[str]]) -> Finding:
    """The finding for the ZFS labels read on /dev/name: a member of an imported pool (its labels say
    the pool, and an active state or none) refuses always; any other label — an exported or destroyed
    pool's, or one naming no pool — is a signature, overridable with --destroy-data."""
    pool = next((lab.pool for lab in labels if lab.pool), None)
    state = next((lab.state for lab in labels if lab.state), None)
    if pool and imported and pool in imported and state in ("active", None):
        return Finding(POOL, f"/dev/{name} belongs to the imported ZFS pool {pool!r}")
    return Finding(SIGNATURE, f"/dev/{name} carries {len(labels)} ZFS label(s)"
                   + (f" of pool {pool!r} ({state})" if pool else ""))


def zfs_label_findings(targets: Iterable[Tuple[str, str]],
                       imported: Callable[[], Optional[Set[str]]]) -> List[Finding]:
    """ZFS labels on each (node to read, name under /dev to report) that carries any; a node that
    cannot be read is skipped. imported() is asked once, at the first node with labels."""
    findings: List[Finding] = []
    pools: Optional[Set[str]] = None
    asked = False
    for node, name in targets:
        try:
            labels = zfslabel.read_labels(node)
        except OSError:
            continue
        if not labels:
            continue
        if not asked:
            pools, asked = imported(), True
        findings.append(zfs_label_finding(name, labels, pools))
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
def claim_uri(path: str, lock_dir: Optional[str] = None) -> Iterator[Claim]:
    """An NBD URI: the lock only (what serves the export is not this machine's to check)."""
    with device_lock(path, lock_dir) as lp:
        yield Claim(path=path, kind="nbd", lock_path=lp)


@contextlib.contextmanager
def claim_file(path: str, destroy_data: bool, lock_dir: Optional[str],
               findings_of: Callable[[], List[Finding]]) -> Iterator[Claim]:
    """A regular file: the lock, then the platform's findings on it (any refuses)."""
    with device_lock(path, lock_dir) as lp:
        findings = findings_of()
        if findings:
            raise RefusedError(refusal_line(path, findings, destroy_data))
        yield Claim(path=path, kind="file", lock_path=lp)


@contextlib.contextmanager
def claim_block(path: str, destroy_data: bool, lock_dir: Optional[str], exclusive: bool,
                findings_of: Callable[[], List[Finding]], hold: Callable[[str], int],
                devnum: Optional[str] = None) -> Iterator[Claim]:
    """A block device (a FreeBSD disk): the lock; the platform's findings, asked inside the lock (they
    may raise RefusedError themselves); the platform's hold on the device, a descriptor kept open for
    the run, or closed at once when not exclusive (the slogqual lock stays)."""
    with device_lock(path, lock_dir) as lp:
        found = findings_of()
        hard = [f for f in found if not f.overridable]
        soft = [f for f in found if f.overridable]
        if hard or (soft and not destroy_data):
            raise RefusedError(refusal_line(path, hard + soft, destroy_data))
        held: Optional[int] = hold(path)
        if not exclusive:
            os.close(held)
            held = None
        try:
            claim = Claim(path=path, kind="block", devnum=devnum, lock_path=lp,
                          overridden=[f.message for f in soft])
            if soft:
                claim.notes.append(f"--destroy-data: overwriting {path} ("
                                   + "; ".join(dict.fromkeys(f.message for f in soft)) + ")")
            yield claim
        finally:
            if held is not None:
                os.close(held)
