"""The allowed range of every number slogqual takes, one definition for every door it comes through.

The same quantity reaches slogqual from the command line (slogqual.cli.options turns a Range into an
argparse type), from a scenario TOML (slogqual.pool.scenario) and from a qualification profile
(slogqual.qualify.profile). Each door checks it against the Range here, so a file cannot carry what the
command line refuses (threads = 100000, runtime = 1e12, a NaN), and every refusal names the range in
the same words: "allowed: 1 to 1024 threads".

The upper ends are what cannot overflow a timer, a counter or memory, and what no real run needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

from slogqual.units import MAX_SIZE, MAX_SUSTAIN_S, MiB, TiB, size_label


def _plain(v: float) -> str:
    return str(int(v)) if v == int(v) else f"{v:g}"


@dataclass(frozen=True)
class Range:
    """A closed range ``lo`` .. ``hi`` (``above``: ``lo`` itself excluded) of numbers in ``unit``;
    ``integer``: whole numbers only; ``size``: a size in bytes (labelled 4K, 1M), a multiple of
    ``multiple``; ``power_of_two``: a power of two (ZFS block sizes)."""

    lo: float
    hi: float
    unit: str = ""
    integer: bool = False
    above: bool = False
    size: bool = False
    multiple: int = 1
    power_of_two: bool = False

    def allowed(self) -> str:
        """'allowed: 1 to 1024 threads', 'allowed: above 0 to 86400 seconds', 'allowed: 512 to 16M, …'"""
        if self.size:
            text = f"allowed: {size_label(int(self.lo))} to {size_label(int(self.hi))}"
            if self.power_of_two:
                text += ", a power of two"
            elif self.multiple > 1:
                text += f", a multiple of {self.multiple}"
            return text
        text = f"allowed: {'above ' if self.above else ''}{_plain(self.lo)} to {_plain(self.hi)} {self.unit}"
        return text.rstrip()

    def contains(self, value: float) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return False
        if (self.integer or self.size) and not (isinstance(value, int) or float(value).is_integer()):
            return False
        if value > self.hi or value < self.lo or (self.above and value == self.lo):
            return False
        if self.size and int(value) % self.multiple:
            return False
        if self.power_of_two and (int(value) & (int(value) - 1)):
            return False
        return True

    def why_not(self, value: Any) -> Optional[str]:
        """None when ``value`` is in the range; otherwise the reason, naming the range. A bool is not a
        number here (TOML's true would be 1), nor are NaN and infinity (TOML has both)."""
        if self.contains(value):
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            kind = "a size in bytes" if self.size else "a whole number" if self.integer else "a number"
            return f"must be {kind}, not {value!r} ({self.allowed()})"
        return f"{value!r} is out of range ({self.allowed()})"


# --- seconds and milliseconds ---------------------------------------------------------------------
RUNTIME_S = Range(0, MAX_SUSTAIN_S, "seconds", above=True)  # --runtime, --max-runtime, --round-runtime; a day
SETTLE_S = Range(0, 3600.0, "seconds")  # --settle: an hour (beyond it time.sleep overflows on the way)
SCENARIO_RUNTIME_S = Range(1, MAX_SUSTAIN_S, "seconds")  # a scenario step: fio's runtime is whole seconds
RAMP_S = Range(0, 3600.0, "seconds")  # a scenario step's ramp before fio measures
INTERVAL_MS = Range(1.0, 3600 * 1000.0, "ms")  # --interval (slogqual.analysis.overtime)
TIMEOUT_S = Range(0, 7 * 24 * 3600.0, "seconds", above=True)  # lab --timeout: a week, time.sleep takes it

# --- counts ---------------------------------------------------------------------------------------
MAX_ROUNDS = Range(0, 1000, integer=True)  # steady-state rounds: far above a steady state worth waiting for
WINDOW = Range(2, 1000, "rounds", integer=True)  # the steady-state window: at most as many rounds as may run
PERCENT = Range(0, 100, "%")  # steady-state range_pct and slope_pct
THREADS = Range(1, 1024, "threads", integer=True)  # per LUN per step: each a fio job (a process or thread)
LUNS = Range(1, 256, "LUNs", integer=True)  # zvols or files of a scenario: each created, filled and shared
NFS_THREADS = Range(1, 1024, "threads", integer=True)  # nfsd threads
FIO_SERVERS = Range(0, 64, integer=True)  # --fio-servers: each a process and a port on loopback
MEMORY_MB = Range(256, 64 * 1024, "MiB", integer=True)  # a guest with OpenZFS needs 256 MiB
CPUS = Range(1, 64, integer=True)  # guest vCPUs

# --- sizes ----------------------------------------------------------------------------------------
SWEEP_SIZE = Range(512, MAX_SIZE, size=True, multiple=512)  # a sweep's IO size (--sizes, profile sizes)
SCENARIO_BS = Range(512, 16 * MiB, size=True, multiple=512)  # a scenario's fio bs
LUN_SIZE = Range(1 * MiB, 1024 * TiB, size=True, multiple=512)  # a scenario LUN: 1 MiB to 1 PiB
ZFS_BLOCK = Range(512, 16 * MiB, size=True, power_of_two=True)  # volblocksize, recordsize
