"""Read ZFS vdev labels directly, so a pool member is recognised even without ZFS installed.

A vdev carries four 256 KiB labels: two at the start (offsets 0 and 256 KiB)
and two at the end of the device (size rounded down to 256 KiB, minus 512 KiB
and minus 256 KiB). Each holds, at offset 16 KiB, an XDR-encoded nvlist of
112 KiB describing the pool (name, pool_guid, state, txg, vdev_tree). Only the
few pairs slogqual needs are decoded: a string or uint64 nvpair is
``encoded_size decoded_size name_len name(padded to 4) type nelem value``.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import List, Optional

LABEL_SIZE = 256 * 1024
NVLIST_OFFSET = 16 * 1024
NVLIST_SIZE = 112 * 1024

DATA_TYPE_UINT64 = 8
DATA_TYPE_STRING = 9

POOL_STATES = {0: "active", 1: "exported", 2: "destroyed", 3: "spare", 4: "l2cache", 5: "uninitialized",
               6: "unavail", 7: "potentially active"}


@dataclass
class Label:
    index: int  # 0..3
    offset: int
    pool: Optional[str]
    pool_guid: Optional[int]
    state: Optional[str]


def _key(name: str, dtype: int) -> bytes:
    raw = name.encode()
    pad = (-len(raw)) % 4
    return struct.pack(">I", len(raw)) + raw + b"\0" * pad + struct.pack(">II", dtype, 1)


def _string(buf: bytes, name: str) -> Optional[str]:
    i = buf.find(_key(name, DATA_TYPE_STRING))
    if i < 0:
        return None
    j = i + len(_key(name, DATA_TYPE_STRING))
    if j + 4 > len(buf):
        return None
    (n,) = struct.unpack(">I", buf[j:j + 4])
    if n > 4096 or j + 4 + n > len(buf):
        return None
    return buf[j + 4:j + 4 + n].decode("utf-8", "replace")


def _uint64(buf: bytes, name: str) -> Optional[int]:
    k = _key(name, DATA_TYPE_UINT64)
    i = buf.find(k)
    if i < 0 or i + len(k) + 8 > len(buf):
        return None
    (v,) = struct.unpack(">Q", buf[i + len(k):i + len(k) + 8])
    return v


def parse_nvlist_region(buf: bytes, index: int = 0, offset: int = 0) -> Optional[Label]:
    """A Label if buf (a label's nvlist region) holds a ZFS pool description, else None."""
    guid = _uint64(buf, "pool_guid")
    name = _string(buf, "name")
    if guid is None and name is None:
        return None
    state = _uint64(buf, "state")
    return Label(index=index, offset=offset, pool=name, pool_guid=guid,
                 state=POOL_STATES.get(state, str(state)) if state is not None else None)


def label_offsets(size: int) -> List[int]:
    aligned = size - (size % LABEL_SIZE)
    offs = [0, LABEL_SIZE]
    if aligned >= 4 * LABEL_SIZE:
        offs += [aligned - 2 * LABEL_SIZE, aligned - LABEL_SIZE]
    return offs


def read_labels(path: str, size: Optional[int] = None) -> List[Label]:
    """Labels found on path (read-only; O_DIRECT is not needed for this)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if size is None:
            size = os.lseek(fd, 0, os.SEEK_END)
        found = []
        for i, off in enumerate(label_offsets(size)):
            try:
                buf = os.pread(fd, NVLIST_SIZE, off + NVLIST_OFFSET)
            except OSError:
                continue
            lab = parse_nvlist_region(buf, i, off)
            if lab is not None:
                found.append(lab)
        return found
    finally:
        os.close(fd)


def imported_pools(kstat_dir: str = "/proc/spl/kstat/zfs") -> Optional[List[str]]:
    """Names of imported pools from the SPL kstat tree (Linux); None when ZFS is not loaded."""
    if not os.path.isdir(kstat_dir):
        return None
    return sorted(e for e in os.listdir(kstat_dir)
                  if os.path.isdir(os.path.join(kstat_dir, e)) and os.path.exists(os.path.join(kstat_dir, e, "state")))
