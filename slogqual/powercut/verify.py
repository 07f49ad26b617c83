"""Verify after the power returned: read every acknowledged record's slot and classify it
(records.classify: intact, torn, stale, missing). Reads only; bypasses the page cache (O_DIRECT on a
block device, the cache dropped for a file) so that what is counted is what the media holds."""

from __future__ import annotations

import errno
import mmap
import os
import stat
from typing import Iterable, Sequence

from slogqual import paths
from slogqual.errors import MeasurementError, UsageError
from slogqual.powercut import records as R


def _open(path: str):
    kind = paths.kind_of(path)  # a disk (block device; FreeBSD: character device, raw) or a regular file
    if kind.kind == paths.KIND_NBD:
        raise UsageError(f"{path}: verify reads a device path or a file, not a URI")
    block = kind.kind == paths.KIND_BLOCK and stat.S_ISBLK(kind.st.st_mode)  # a Linux block device: O_DIRECT
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
    if block and getattr(os, "O_DIRECT", 0):
        try:
            return os.open(path, flags | os.O_DIRECT), True
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                raise MeasurementError(f"{path}: cannot open for reading: {exc.strerror or exc}") from None
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise MeasurementError(f"{path}: cannot open for reading: {exc.strerror or exc}") from None
    if hasattr(os, "posix_fadvise"):
        try:
            os.fdatasync(fd)
        except OSError:
            pass
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        except OSError:
            pass
    return fd, False


def verify_cycle(path: str, run_id: bytes, cycle: int, sizes: Sequence[int], acked: Iterable[int]) -> R.Tally:
    """The tally of one cycle's acknowledged records as the device holds them now."""
    tally = R.Tally()
    fd, _direct = _open(path)
    buf = mmap.mmap(-1, max(sizes))
    view = memoryview(buf)
    try:
        for seq in sorted(set(acked)):
            offset, size = R.offset_of(seq, sizes), R.size_of(seq, sizes)
            try:
                n = os.preadv(fd, [view[:size]], offset)
            except OSError as exc:
                raise MeasurementError(f"{path}: reading record {seq} at {offset} failed: {exc.strerror or exc}") \
                    from None
            tally.add(seq, offset, size, R.classify(bytes(view[:n]), run_id, cycle, seq, size))
    finally:
        view.release()
        buf.close()
        os.close(fd)
    return tally
