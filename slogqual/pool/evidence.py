"""Evidence that the log device really took the sync writes of a step.

Two independent witnesses, both recorded with every step:
- ZIL kstats: deltas of the pool's datasets' objset kstats (Linux
  /proc/spl/kstat/zfs/<pool>/objset-0x<id>, FreeBSD sysctl kstat.zfs.<pool>.dataset.objset-0x<id>),
  or of the global zil kstat (/proc/spl/kstat/zfs/zil, sysctl kstat.zfs.misc.zil) when no objset
  kstat can be read (then other pools' traffic counts too, and the result says so);
- ``zpool iostat -vHp -y POOL T 1``, running during the step: per-vdev write ops/s and bytes/s
  averaged over the measured window, so the log vdev's own writes are visible.

Beside them, the write throttle (``ThrottleWitness``: the global dmu_tx kstat's deltas over the step): how many
of the step's transactions waited because the pool's dirty data was past the throttle's threshold — the pool's
txg sync behind the writers (how long they waited, OpenZFS does not count).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional

from slogqual.results.scenario import log_ops
from slogqual.errors import MeasurementError, ToolOutputError
from slogqual.tools import kstat as _kstat
from slogqual.tools import zfs as _zfs
from slogqual.tools import zpool as _zpool


@dataclass
class ZilWitness:
    """Reads the ZIL counters that belong to a set of datasets/zvols of one pool."""

    pool: str
    datasets: List[str]

    def __post_init__(self):
        self.source = "objset"
        try:
            self._ids = [_zfs.objsetid(d) for d in self.datasets]
            self.read()
        except (MeasurementError, OSError, ValueError):
            self.source, self._ids = "global", []

    def read(self) -> _kstat.ZilStats:
        if self.source == "objset":
            total = None
            for oid in self._ids:
                s = _kstat.zil_stats(self.pool, oid)
                total = s if total is None else total + s  # an unknown counter of one makes the sum unknown
            return total
        return _kstat.zil_stats()


class ThrottleWitness:
    """Reads the write throttle's counters (tools.kstat.TxStats: the global dmu_tx kstat, every pool's
    transactions together; the only form OpenZFS keeps). None where no such kstat can be read: the step is
    measured without that evidence, never refused for it."""

    source = "global"

    def read(self) -> Optional[_kstat.TxStats]:
        try:
            return _kstat.tx_stats()
        except (MeasurementError, OSError, ValueError):
            return None

    @staticmethod
    def delta(before: Optional[_kstat.TxStats], after: Optional[_kstat.TxStats]) -> Optional[Dict[str, object]]:
        """The step's counts, as a step records them (``write_throttle``); None where either read failed."""
        if before is None or after is None:
            return None
        d = (after - before).as_dict()
        if any(v is not None and v < 0 for v in d.values()):
            return None  # the counters restarted (the module reloaded during the step): no count of the step
        return dict(d, source=ThrottleWitness.source)


class IostatWindow:
    """`zpool iostat` over the measured window of a step, run alongside fio.

    zpool prints a report every second with the time it was printed (-T u); afterwards the reports
    whose interval lies inside the measured window (after the ramp, before fio ended) are averaged.
    Matching by time rather than by when zpool was started matters under the emulated lab guest,
    where starting zpool can take seconds and a fixed-length report would miss the load.
    """

    def __init__(self, pool: str):
        self.stream = _zpool.iostat_stream(pool, 1)

    def start(self) -> "IostatWindow":
        self.stream.start()
        return self

    def collect(self, start: float, end: float) -> "IostatAverage":
        """Stop zpool (SIGTERM: it has flushed every report as it printed it) and average its reports
        over [start, end] (Unix seconds)."""
        rc = self.stream.stop()
        failed = MeasurementError(f"zpool iostat failed: {self.stream.stderr_tail().strip()[:200]}")
        try:
            reports = _zpool.parse_iostat_stream(self.stream.stdout_text())
        except ToolOutputError:
            if rc not in (0, -15):
                raise failed from None  # its own complaint says more than the text it left
            raise
        if not reports and rc not in (0, -15):
            raise failed
        return average_window(reports, start, end)

    def stop(self) -> None:
        self.stream.stop()


@dataclass
class IostatAverage:
    rows: List[_zpool.VdevIO]  # per-vdev mean rates over the reports used
    reports: int  # how many 1-second reports
    span: Optional[List[int]]  # [first report's start, last report's end] (Unix seconds)
    inside: bool  # every report used lies inside the measured window


def average_window(reports: List[_zpool.IostatReport], start: float, end: float) -> IostatAverage:
    """Mean per-vdev rates of the reports inside [start, end].

    A report printed at whole second T covers about one second ending in [T, T+1): it lies surely
    inside the window when T-1 >= start and T+1 <= end. When no report does (a window of two
    seconds or less), those overlapping the window are used and the result says so.
    """
    timed = [r for r in reports if r.time is not None and r.rows]
    inside = [r for r in timed if r.time - 1 >= int(start) and r.time + 1 <= end]
    chosen, surely = (inside, True) if inside else ([r for r in timed if start - 1 <= r.time <= end + 1], False)
    if not chosen:
        return IostatAverage(rows=[], reports=0, span=None, inside=False)
    shape = [(v.name, v.section, v.depth) for v in chosen[-1].rows]
    same = [r for r in chosen if [(v.name, v.section, v.depth) for v in r.rows] == shape]
    n = len(same)
    rows = []
    for i, v in enumerate(same[-1].rows):
        rows.append(_zpool.VdevIO(v.name, v.section, v.depth, v.alloc, v.free,
                                  round(sum(r.rows[i].read_ops for r in same) / n),
                                  round(sum(r.rows[i].write_ops for r in same) / n),
                                  round(sum(r.rows[i].read_bytes for r in same) / n),
                                  round(sum(r.rows[i].write_bytes for r in same) / n)))
    return IostatAverage(rows=rows, reports=n, span=[same[0].time - 1, same[-1].time], inside=surely)


def vdev_summary(rows: List[_zpool.VdevIO]) -> Dict[str, object]:
    """Per-vdev writes over the window, and the log section's total.

    The log total adds the top-level log vdevs (depth 1): a mirror's row already sums its legs, so
    counting the legs too would count every byte twice.
    """
    vdevs = [{"name": r.name, "section": r.section or "data", "depth": r.depth, "write_ops_s": r.write_ops,
              "write_bytes_s": r.write_bytes} for r in rows]
    log_bytes = sum(r.write_bytes for r in _zpool.log_rows(rows))
    return {"vdevs": vdevs, "log_write_bytes_s": log_bytes, "log_write_ops_s": log_ops(vdevs)}
