"""Preconditioning before the steady-state rounds (after SNIA SSS PTS).

- ``none``: measure the device as found (a fresh-out-of-box SSD flatters itself).
- ``quick``: a bounded sequential fill: 128 KiB writes over the first ``QUICK_BYTES`` of the device
  (all of it when smaller), once. Enough to move a new device off its empty-FTL fast path at the
  offsets the sweep writes to; not a full SNIA purge-and-fill.
- ``full``: SNIA's workload-independent preconditioning: the whole device written twice with
  sequential 128 KiB writes.

The fill goes through fio like every other write (:func:`slogqual.tools.fio.run_fill`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Dict, Optional

from slogqual.errors import UsageError
from slogqual.sweep.target import KIND_NBD, Target
from slogqual.tools import fio
from slogqual.units import GiB, MiB

MODES = ("none", "quick", "full")
QUICK_BYTES = 1 * GiB


@dataclass
class Preconditioning:
    mode: str
    bytes_: int = 0  # span filled
    loops: int = 0
    written: int = 0  # bytes fio reports written
    seconds: float = 0.0
    mbps: float = 0.0
    note: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return {"mode": self.mode, "span_bytes": self.bytes_, "loops": self.loops, "written_bytes": self.written,
                "seconds": round(self.seconds, 3), "mbps": round(self.mbps, 2), "note": self.note}


def plan(mode: str, capacity: Optional[int], quick_bytes: int = QUICK_BYTES) -> Preconditioning:
    if mode not in MODES:
        raise UsageError(f"unknown preconditioning {mode!r}: use one of {', '.join(MODES)}")
    if mode == "none":
        return Preconditioning("none", note="not preconditioned: the device was measured as found")
    if not capacity:
        raise UsageError("cannot precondition a target of unknown size (install nbdinfo for NBD exports)")
    if mode == "quick":
        span = min(capacity, quick_bytes)
        note = (f"quick: one sequential pass over the first {span // MiB} MiB"
                + ("" if span == capacity else f" of {capacity // MiB} MiB"))
        return Preconditioning("quick", bytes_=span, loops=1, note=note)
    return Preconditioning("full", bytes_=capacity, loops=2,
                           note=f"full: the whole device ({capacity // MiB} MiB) written twice, sequential 128 KiB")


def run(target: Target, mode: str, quick_bytes: int = QUICK_BYTES) -> Preconditioning:
    pc = plan(mode, target.size, quick_bytes)
    if pc.mode == "none":
        return pc
    bs = 128 * 1024
    if pc.bytes_ < bs:
        raise UsageError(f"{target.path}: {pc.bytes_} bytes is too small to precondition")
    fill = fio.FioFill(bytes_=pc.bytes_, loops=pc.loops, bs=bs,
                       uri=target.path if target.kind == KIND_NBD else None,
                       filename=None if target.kind == KIND_NBD else target.path,
                       direct=target.direct)
    t0 = time.monotonic()
    r = fio.run_fill(fill)
    pc.seconds = time.monotonic() - t0
    pc.written = int(r.ios) * bs
    pc.mbps = r.bw_bytes / MiB
    return pc
