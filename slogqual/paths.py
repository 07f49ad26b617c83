"""What a path on the command line is, worked out once, in one vocabulary; and the one way a device
or scenario name becomes part of a file or pool name.

A TARGET/DEV is an NBD URI (fio's nbd engine, libnbd's URI schemes), a disk or a regular file;
anything else is bad input. A disk is a block device on Linux and a character device on FreeBSD
(GEOM providers have no block nodes); both are KIND_BLOCK here. The sweep's target, the device identification and the safety
interlocks all ask ``kind_of``, so they agree on what they are looking at and say the same thing
when it is none of these.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from dataclasses import dataclass
from typing import Optional

from slogqual.errors import UsageError

# libnbd's URI schemes (nbd_connect_uri(3)), all of which fio's nbd engine passes through
NBD_SCHEMES = ("nbd://", "nbds://", "nbd+unix://", "nbds+unix://", "nbd+vsock://", "nbds+vsock://")

KIND_NBD = "nbd"
KIND_BLOCK = "block"
KIND_FILE = "file"

def require_regular(path: str, what: str = "file") -> None:
    """Refuse, before it is opened, an input that is not a regular file: a directory (a traceback from
    open), a FIFO (waits for a writer forever), /dev/zero (read until memory runs out). A path that
    does not exist is left to the caller's open, which says so in its own words."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:  # a symlink loop, a name too long, 'F/' on a file
        raise UsageError(f"{path[:200]}: cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or special file"
        raise UsageError(f"{path}: {kind}, not a regular {what}")


NOT_A_TARGET = "not a block device, regular file or nbd:// URI"
CHAR_ON_LINUX = "a character device; on Linux disks are block devices, character-device disks are FreeBSD's"


def is_freebsd(platform: Optional[str] = None) -> bool:
    return (platform or sys.platform).startswith("freebsd")


def is_nbd_uri(spec: str) -> bool:
    return spec.startswith(NBD_SCHEMES)


@dataclass(frozen=True)
class PathKind:
    path: str
    kind: str  # KIND_NBD | KIND_BLOCK (a disk: block device on Linux, character device on FreeBSD) | KIND_FILE
    st: Optional[os.stat_result] = None  # None for an NBD URI

    @property
    def devnum(self) -> Optional[str]:
        """'major:minor' of a block device (its sysfs name), else None."""
        if self.kind != KIND_BLOCK or self.st is None or not stat.S_ISBLK(self.st.st_mode):
            return None
        return f"{os.major(self.st.st_rdev)}:{os.minor(self.st.st_rdev)}"


def kind_of(spec: str, freebsd: Optional[bool] = None) -> PathKind:
    """One stat of ``spec`` and its kind; UsageError (one line) for anything that cannot be a target.
    freebsd (default: this platform's answer) makes a character device a disk."""
    if is_nbd_uri(spec):
        return PathKind(spec, KIND_NBD)
    try:
        st = os.stat(spec)
    except FileNotFoundError:
        raise UsageError(f"{spec[:200]}: no such file or device") from None
    except PermissionError:
        raise UsageError(f"{spec[:200]}: permission denied") from None
    except OSError as exc:  # 'F/' on a file, a symlink loop, a name too long
        raise UsageError(f"{spec[:200]}: {exc.strerror or exc}") from None
    if stat.S_ISBLK(st.st_mode):
        return PathKind(spec, KIND_BLOCK, st)
    if stat.S_ISREG(st.st_mode):
        return PathKind(spec, KIND_FILE, st)
    if stat.S_ISCHR(st.st_mode):
        if is_freebsd() if freebsd is None else freebsd:
            return PathKind(spec, KIND_BLOCK, st)
        raise UsageError(f"{spec[:200]}: {NOT_A_TARGET} ({CHAR_ON_LINUX})")
    raise UsageError(f"{spec[:200]}: {NOT_A_TARGET}")


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str, default: str = "") -> str:
    """``text`` with every run of characters outside [A-Za-z0-9._-] made one '_': safe in a file
    name and in a ZFS pool or dataset name."""
    return _UNSAFE.sub("_", text) or default


def file_stem(spec: Optional[str], default: str) -> str:
    """The part of an output file's name that says which target it is about: 'nbd' for a URI,
    the path's last component otherwise (``default`` when there is none)."""
    if not spec:
        return default
    if is_nbd_uri(spec):
        return "nbd"
    return safe_name(os.path.basename(spec.rstrip("/")), default)
