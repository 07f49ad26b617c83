"""The powercut writer: numbered, checksummed records, each written and flushed, each acknowledged record
reported to the recorder at once.

The pair is the sweep's: a write (O_DIRECT where the target takes it) followed by ``fdatasync`` — a
device cache flush on a block device, an NBD flush through nbdfuse. A record counts as acknowledged only
once both returned; then, and only then, it is sent to the recorder and printed (``ack SEQ``) on stdout
for the process that will cut the power. The writer runs in a process of its own (``slogqual powercut
write``, started by ``powercut run``) so that a cut that leaves its IO hanging costs nothing but it.
"""

from __future__ import annotations

import errno
import mmap
import os
import sys
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, TextIO

from slogqual.errors import MeasurementError
from slogqual.powercut import records as R
from slogqual.powercut.recorder import RecorderClient


@dataclass
class WriteOutcome:
    acknowledged: int
    direct: bool
    why: str  # how it ended: "area full", or the error of the first write/flush that failed


def open_for_records(path: str) -> tuple:
    """(fd, direct): O_DIRECT when the target takes it (block devices, most filesystems), else buffered
    (FUSE, tmpfs) — each record is flushed either way."""
    flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0)
    direct = getattr(os, "O_DIRECT", 0)
    if direct:
        try:
            return os.open(path, flags | direct), True
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                raise
    return os.open(path, flags), False



def write_records(path: str, run_id: bytes, cycle: int, sizes: Sequence[int], limit: int,
                  client: Optional[RecorderClient], on_ack: Callable[[int], None] = lambda seq: None) -> WriteOutcome:
    """Write records 0 … limit-1 of ``cycle`` until the area is full or a write or flush fails (the cut).
    ``client`` hears every acknowledged record first, then ``on_ack(seq)``."""
    run = run_id.hex()
    try:
        fd, direct = open_for_records(path)
    except OSError as exc:
        raise MeasurementError(f"{path}: cannot open for writing: {exc.strerror or exc}") from None
    buf = mmap.mmap(-1, max(sizes))  # page-aligned, as O_DIRECT wants
    view = memoryview(buf)
    acked, why = 0, "area full"
    try:
        if client is not None:
            client.send({"op": "begin", "run": run, "cycle": cycle, "sizes": list(sizes), "target": path})
        for seq, offset, size in R.slots(limit, sizes):
            buf[:size] = R.encode(run_id, cycle, seq, size)
            stage = "write"
            try:
                done = os.pwrite(fd, view[:size], offset)
                if done != size:
                    raise OSError(errno.EIO, f"short write ({done} of {size} bytes)")
                stage = "flush"
                os.fdatasync(fd)
            except OSError as exc:
                why = f"the {stage} of record {seq} failed: {exc.strerror or exc}"
                break
            acked += 1
            if client is not None:
                client.send({"op": "ack", "run": run, "cycle": cycle, "seq": seq})
            on_ack(seq)
        if client is not None:
            try:
                client.send({"op": "end", "run": run, "cycle": cycle, "why": why})
            except MeasurementError:
                pass
    finally:
        view.release()
        buf.close()
        try:
            os.close(fd)
        except OSError:
            pass
    return WriteOutcome(acknowledged=acked, direct=direct, why=why)


def print_ack(out: TextIO = sys.stdout) -> Callable[[int], None]:
    def ack(seq: int) -> None:
        out.write(f"ack {seq}\n")
        out.flush()
    return ack
