"""Evidence that the log device really took the sync writes of a step.

Two independent witnesses, both recorded with every step:
- ZIL kstats: deltas of the pool's datasets' objset kstats (Linux
  /proc/spl/kstat/zfs/<pool>/objset-0x<id>, FreeBSD sysctl kstat.zfs.<pool>.dataset.objset-0x<id>),
  or of the global zil kstat (/proc/spl/kstat/zfs/zil, sysctl kstat.zfs.misc.zil) when no objset
  kstat can be read (then other pools' traffic counts too, and the result says so);
- ``zpool iostat -vHp -y POOL T 1``, running during the step: per-vdev write ops/s and bytes/s
  averaged over the measured window, so the log vdev's own writes are visible.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from typing import Dict, List, Optional

from slogqual.errors import MeasurementError
from slogqual.tools import kstat as _kstat
from slogqual.tools import run as _run
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
                total = s if total is None else _kstat.ZilStats(*(a + b for a, b in zip(total.astuple(), s.astuple())))
            return total
        return _kstat.zil_stats()


class IostatWindow:
    """`zpool iostat` averaging over the measured window of a step, run alongside fio."""

    def __init__(self, pool: str, seconds: float):
        self.argv = _zpool.iostat_interval_argv(pool, int(round(seconds)))
        self.proc: Optional[subprocess.Popen] = None

    def start(self) -> "IostatWindow":
        self.proc = _run.popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               stdin=subprocess.DEVNULL)
        return self

    def result(self, timeout: float = 60) -> List[_zpool.VdevIO]:
        out, err = self.proc.communicate(timeout=timeout)
        if self.proc.returncode != 0:
            raise MeasurementError(f"zpool iostat failed: {(err or '').strip()[:200]}")
        return _zpool.parse_iostat_v(out)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def vdev_summary(rows: List[_zpool.VdevIO]) -> Dict[str, object]:
    """Per-vdev writes over the window, and the log section's total.

    The log total adds the top-level log vdevs (depth 1): a mirror's row already sums its legs, so
    counting the legs too would count every byte twice.
    """
    vdevs = [{"name": r.name, "section": r.section or "data", "depth": r.depth, "write_ops_s": r.write_ops,
              "write_bytes_s": r.write_bytes} for r in rows]
    log_bytes = sum(r.write_bytes for r in rows if r.section == "logs" and r.depth == 1)
    return {"vdevs": vdevs, "log_write_bytes_s": log_bytes, "log_write_ops_s": log_ops(vdevs)}


def log_ops(vdevs: Optional[List[Dict[str, object]]]) -> Optional[float]:
    """Write ops/s of the log section's top-level vdevs, from a step's ``vdevs`` list."""
    if vdevs is None:
        return None
    return sum(float(v["write_ops_s"]) for v in vdevs if v.get("section") == "logs" and v.get("depth") == 1)
