"""The allowed range of every number slogqual takes, one definition for every door it comes through.

The same quantity reaches slogqual from the command line (slogqual.cli.options turns a Range into an
argparse type), from a scenario TOML (slogqual.pool.scenario) and from a qualification profile
(slogqual.qualify.profile). Each door checks it against the Range here, so a file cannot carry what the
command line refuses (threads = 100000, runtime = 1e12, a NaN), and every refusal names the range in
the same words: "allowed: 1 to 1024 threads".

The upper ends are what cannot overflow a timer, a counter or memory, and what no real run needs; the
lower ends of the advisor's figures (a rate, hours a day) keep what is divided by them from underflowing
to a life of infinite years. Each range says why in its comment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

from slogqual.units import MAX_SIZE, MAX_SUSTAIN_S, MiB, TiB, size_label


def _plain(v: float) -> str:
    return str(int(v)) if v == int(v) else f"{v:.12f}".rstrip("0")  # 0.000001, not 1e-06


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
        if not _finite(value):
            return False
        if (self.integer or self.size) and not (isinstance(value, int) or float(value).is_integer()):
            return False
        if value > self.hi or value < self.lo or (self.above and value == self.lo):  # exact for any int
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
        if not _finite(value):
            kind = "a size in bytes" if self.size else "a whole number" if self.integer else "a number"
            return f"must be {kind}, not {shown(value)} ({self.allowed()})"
        return f"{shown(value)} is out of range ({self.allowed()})"


def _finite(value: Any) -> bool:
    """A number that is neither NaN nor infinite. An int is always finite, however long: math.isfinite
    would convert it to a float first and overflow past 1e308 (powercut --cycles 9999…: a traceback)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return isinstance(value, int) or math.isfinite(value)


def shown(value: Any) -> str:
    """``value`` for a refusal: repr, but a whole number of more than 40 digits by its length (Python
    will not even turn one of 4,300 digits into text)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** 40:
        return f"a number of about {int(abs(value).bit_length() * math.log10(2)) + 1} digits"
    return repr(value)


# --- seconds and milliseconds ---------------------------------------------------------------------
RUNTIME_S = Range(0, MAX_SUSTAIN_S, "seconds", above=True)  # --runtime, --max-runtime, --round-runtime; a day
SETTLE_S = Range(0, 3600.0, "seconds")  # --settle: an hour (beyond it time.sleep overflows on the way)
SCENARIO_RUNTIME_S = Range(1, MAX_SUSTAIN_S, "seconds")  # a scenario step: fio's runtime is whole seconds
RAMP_S = Range(0, 3600.0, "seconds")  # a scenario step's ramp before fio measures
PROBE_REPEATS = Range(1, 20, "passes", integer=True)  # host-probe --repeats: passes over the thread counts
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
# powercut run / lab powercut --cut-after: acknowledged records before a cut, each a flushed write of at least
# 4 KiB acknowledged within the writer's timeout (120 s; the lab's 300 s): a billion would take over 3 million
# flushed writes a second
CUT_AFTER = Range(1, 10 ** 9, "records", integer=True)
STORE_ID = Range(1, 2 ** 63 - 1, integer=True)  # history --show: a run's id (SQLite rowid, PostgreSQL BIGINT)

# --- sizes ----------------------------------------------------------------------------------------
SWEEP_SIZE = Range(512, MAX_SIZE, size=True, multiple=512)  # a sweep's IO size (--sizes, profile sizes)
SCENARIO_BS = Range(512, 16 * MiB, size=True, multiple=512)  # a scenario's fio bs
LUN_SIZE = Range(1 * MiB, 1024 * TiB, size=True, multiple=512)  # a scenario LUN: 1 MiB to 1 PiB
ZFS_BLOCK = Range(512, 16 * MiB, size=True, power_of_two=True)  # volblocksize, recordsize

# --- slogqual advise: the workload -----------------------------------------------------------------------
# --bs is a scenario's bs (SCENARIO_BS), --volblocksize and --recordsize are ZFS_BLOCK: the same quantities.
WRITERS = Range(1, 4096, "threads", integer=True)  # --threads, writers over all ZILs: four times nfsd's 1024
ZILS = Range(1, 4096, "intent logs", integer=True)  # --zils, zvols or datasets written: no more than writers
DATA_DISKS = Range(1, 4096, "disks", integer=True)  # --disks: beyond the largest JBOD pools (a few hundred)
# --rate in MB/s (10^6 bytes): from the least rate zpool iostat -p shows (a byte a second) to a terabyte a second,
# twenty 400 GbE links into one pool; within it a day's bytes and a txg's never leave what a float holds
RATE_MBPS = Range(1e-6, 1e6, "MB/s")
# the lwb writes of one commit (the advisor's figures, each a number in the document): 65536 are 8 GiB of
# 128 KiB log blocks, twice the 4 GiB a txg's dirty data is capped at by default (zfs_dirty_data_max_max)
COMMIT_LWBS = Range(1, 65536, "log blocks", integer=True)

# --- slogqual advise: OpenZFS tunables (module parameters; man 4 zfs) ------------------------------------
TXG_TIMEOUT_S = Range(1, 3600, "seconds", integer=True)  # zfs_txg_timeout: a uint of seconds, 0 a busy loop
# zfs_immediate_write_sz: from 16 MiB (the largest block) up every write is below it, as with any larger value
IMMEDIATE_WRITE_SZ = Range(0, 16 * MiB, size=True)
ZIL_SLOG_BULK = Range(0, TiB, size=True)  # zil_slog_bulk: a commit's bytes at sync priority; 1 TiB: any commit
# zil_maxblocksize: the kernel takes it in ZIL_MIN_BLKSZ (4 KiB) steps up to SPA_MAXBLOCKSIZE (16 MiB); the
# tunable's own reason is lowering it (36K on fragmented pools, openzfs/zfs#8865)
ZIL_MAXBLOCKSIZE = Range(4096, 16 * MiB, size=True, multiple=4096)
ZIL_MAXCOPIED = Range(0, 16 * MiB, size=True)  # zil_maxcopied: capped by the lwb's data room in the kernel
# zfs_commit_timeout_pct: a uint share of the last lwb's latency (zil.c takes at least 1); past 1000 an open lwb waits
# ten of its own latencies, no setting anyone runs
COMMIT_TIMEOUT_PCT = Range(0, 1000, "percent", integer=True)
# zfs_dirty_data_max: OpenZFS sets 10 % of RAM (at most zfs_dirty_data_max_max, 4 GiB by default); 16 MiB
# is below that of any host it runs on (slogqual's smallest lab guest, 256 MiB, has 25.6), so a smaller
# figure is a unit slip (MiB given as bytes), and a 1 TiB one a quarter of a 4 TiB host
DIRTY_DATA_MAX = Range(16 * MiB, TiB, size=True)

# --- slogqual advise: endurance ----------------------------------------------------------------------------
TBW = Range(1, 1e6, "TBW")  # --tbw: up to an exabyte; 100 DWPD (Optane's rating) × 1.6 TB × 5 years is 292 PBW
DWPD = Range(0.01, 1000, "drive writes a day")  # --dwpd: ten times Optane's 100; RAM-backed logs have no rating
WARRANTY_YEARS = Range(0.1, 50, "years")  # --warranty-years: from about a month to beyond any device's service
HOURS_PER_DAY = Range(0.01, 24, "hours")  # --hours-per-day: 36 s a day at least; a day has 24

# --- slogqual scenario run --lab ----------------------------------------------------------------------------
# a user's scenario file goes to the lab guest as one argument of its job's command line, and Linux takes at
# most 128 KiB in one argument (MAX_ARG_STRLEN); the shipped scenarios are 1 to 2 KiB
LAB_SCENARIO_FILE = Range(0, 64 * 1024, size=True)
