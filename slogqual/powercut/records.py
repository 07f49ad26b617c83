"""The powercut record format and its classification: pure functions, no IO.

A record is one write of ``size`` bytes (a ZIL-like size, 4 KiB … 1 MiB, a multiple of 4 KiB) at its
own slot; slots never overlap, so every record is verified on its own. The slot of sequence number
``seq`` depends only on ``seq`` and the size list (sizes are used in turn), never on the cycle: cycle 2
writes over cycle 1's records slot by slot, so a cycle-2 record that never reached the media leaves the
cycle-1 record there, which verify calls *stale*.

Layout of a record (little-endian)::

    0   8  magic "SLOGQPC1"
    8  16  run id (random, one per run)
   24   4  cycle (1, 2, …)
   28   8  sequence number (0, 1, … within a cycle)
   36   4  size of the whole record in bytes
   40  32  SHA-256 of the payload (bytes HEADER_SIZE … size)
   72   4  CRC-32 of bytes 0 … 72 (the header checks itself)
   76  52  zero
  128   …  payload (random bytes)

What verify finds at the slot of an acknowledged record:

- ``intact``: a valid header of this run, cycle, sequence number and size, and the payload's checksum;
- ``torn``: that header, but the payload does not match its checksum (part of the write is missing);
- ``stale``: a valid header of another record (an earlier cycle or run, or another sequence number);
- ``missing``: no valid header at all (zeros, old data, a header cut short).

Everything but ``intact`` is an acknowledged record lost.
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, List, Optional, Sequence, Tuple

from slogqual.errors import UsageError

if TYPE_CHECKING:  # the document's cycle entry; imported where it is made (results/ stands below this room)
    from slogqual.results.powercut import CycleResult

MAGIC = b"SLOGQPC1"
_HEAD = struct.Struct("<8s16sIQI32s")
_CRC = struct.Struct("<I")
HEADER_SIZE = 128
ALIGN = 4096
MIN_RECORD = 4096
MAX_RECORD = 1024 * 1024
MAX_CYCLE = 2 ** 32 - 1  # the header's cycle is 32 bits
DEFAULT_SIZES = (4096, 8192, 16384, 32768, 65536, 131072)  # what the ZIL writes: 4 KiB … 128 KiB

INTACT, TORN, STALE, MISSING = "intact", "torn", "stale", "missing"
STATES = (INTACT, TORN, STALE, MISSING)
LOST_STATES = (TORN, STALE, MISSING)


@dataclass(frozen=True)
class Header:
    run_id: bytes
    cycle: int
    seq: int
    size: int
    checksum: bytes


def parse_sizes(text: str) -> List[int]:
    """``--sizes 4k,8k,128k``: the record sizes in the order given (UsageError, one line, for anything
    else: an empty entry, a bad size, a size check_sizes refuses)."""
    from slogqual.units import parse_size

    sizes = [parse_size(p) for p in text.split(",") if p.strip()] if text.strip() else []
    if not sizes or len(sizes) != len(text.split(",")):
        raise UsageError(f"--sizes {text!r}: give record sizes such as 4k,8k,128k")
    why = check_sizes(sizes)
    if why:
        raise UsageError(f"--sizes: {why}")
    return sizes


def check_sizes(sizes: Sequence[int]) -> Optional[str]:
    """Why a size list cannot be used (None when it can)."""
    if not sizes:
        return "at least one record size is needed"
    for s in sizes:
        if s % ALIGN or not MIN_RECORD <= s <= MAX_RECORD:
            return (f"record size {s} must be a multiple of 4 KiB between 4 KiB and 1 MiB "
                    "(the ZIL writes 4 KiB … 128 KiB)")
    return None


def offset_of(seq: int, sizes: Sequence[int]) -> int:
    """Byte offset of record ``seq``'s slot: sizes are used in turn, slots follow one another."""
    period = sum(sizes)
    whole, part = divmod(seq, len(sizes))
    return whole * period + sum(sizes[:part])


def size_of(seq: int, sizes: Sequence[int]) -> int:
    return sizes[seq % len(sizes)]


def capacity(area: int, sizes: Sequence[int]) -> int:
    """How many records fit in ``area`` bytes."""
    n, period = 0, sum(sizes)
    n = (area // period) * len(sizes)
    left = area - (area // period) * period
    for s in sizes:
        if left < s:
            break
        left -= s
        n += 1
    return n


def slots(count: int, sizes: Sequence[int]) -> Iterator[Tuple[int, int, int]]:
    """(seq, offset, size) of the first ``count`` records."""
    off = 0
    for seq in range(count):
        size = size_of(seq, sizes)
        yield seq, off, size
        off += size


def header_bytes(run_id: bytes, cycle: int, seq: int, size: int, checksum: bytes) -> bytes:
    head = _HEAD.pack(MAGIC, run_id, cycle, seq, size, checksum)
    return (head + _CRC.pack(zlib.crc32(head))).ljust(HEADER_SIZE, b"\0")


def encode(run_id: bytes, cycle: int, seq: int, size: int, payload: Optional[bytes] = None) -> bytes:
    """The ``size`` bytes of a record (random payload unless given)."""
    if len(run_id) != 16:
        raise ValueError("run id must be 16 bytes")
    if payload is None:
        payload = os.urandom(size - HEADER_SIZE)
    if len(payload) != size - HEADER_SIZE:
        raise ValueError(f"payload of {len(payload)} bytes for a record of {size}")
    return header_bytes(run_id, cycle, seq, size, hashlib.sha256(payload).digest()) + payload


def decode_header(buf: bytes) -> Optional[Header]:
    """The header at the start of ``buf``, or None when there is no valid one (magic or CRC wrong)."""
    if len(buf) < _HEAD.size + _CRC.size:
        return None
    head = bytes(buf[:_HEAD.size])
    magic, run_id, cycle, seq, size, checksum = _HEAD.unpack(head)
    if magic != MAGIC:
        return None
    (crc,) = _CRC.unpack(bytes(buf[_HEAD.size:_HEAD.size + _CRC.size]))
    if crc != zlib.crc32(head):
        return None
    return Header(run_id, cycle, seq, size, checksum)


def classify(buf: bytes, run_id: bytes, cycle: int, seq: int, size: int) -> str:
    """What the slot holds for the acknowledged record (run_id, cycle, seq, size): one of STATES."""
    h = decode_header(buf)
    if h is None:
        return MISSING
    if (h.run_id, h.cycle, h.seq, h.size) != (run_id, cycle, seq, size):
        return STALE
    if len(buf) < size or hashlib.sha256(bytes(buf[HEADER_SIZE:size])).digest() != h.checksum:
        return TORN
    return INTACT


@dataclass
class Tally:
    """Counts of one cycle's acknowledged records by state, and the lost ones named."""

    acknowledged: int = 0
    intact: int = 0
    torn: int = 0
    stale: int = 0
    missing: int = 0
    lost_records: List[dict] = None  # [{"seq", "offset", "size", "state"}], the first LOST_LISTED

    LOST_LISTED = 100

    def __post_init__(self):
        if self.lost_records is None:
            self.lost_records = []

    @property
    def lost(self) -> int:
        return self.torn + self.stale + self.missing

    def add(self, seq: int, offset: int, size: int, state: str) -> None:
        self.acknowledged += 1
        setattr(self, state, getattr(self, state) + 1)
        if state != INTACT and len(self.lost_records) < self.LOST_LISTED:
            self.lost_records.append({"seq": seq, "offset": offset, "size": size, "state": state})

    def cycle_result(self, cycle: int, extra: dict) -> "CycleResult":
        """The cycle's entry of the power-cut document: these counts, the lost records named, ``extra`` beside."""
        from slogqual.results.powercut import CycleResult

        return CycleResult(cycle=cycle, acknowledged=self.acknowledged, intact=self.intact, torn=self.torn,
                           stale=self.stale, missing=self.missing, lost_records=list(self.lost_records), extra=extra)

    def to_dict(self) -> dict:
        return {"acknowledged": self.acknowledged, "intact": self.intact, "torn": self.torn, "stale": self.stale,
                "missing": self.missing, "lost": self.lost, "lost_records": list(self.lost_records)}
