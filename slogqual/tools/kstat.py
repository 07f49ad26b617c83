"""OpenZFS kstats on Linux: ``/proc/spl/kstat/zfs/...`` files, parsed into typed values.

A kstat file is a header line of numbers, a ``name type data`` column line, then one row per
statistic. Types 0-6 are integers (KSTAT_DATA_CHAR … UINT64), 7 is a string (e.g. ``dataset_name``
of an objset kstat). The ZIL's evidence lives in ``/proc/spl/kstat/zfs/zil`` (all pools) and
``/proc/spl/kstat/zfs/<pool>/objset-0x<id>`` (one dataset or zvol): ``zil_commit_count``,
``zil_itx_metaslab_slog_{count,bytes}`` (log records written to a SLOG) against
``zil_itx_metaslab_normal_{count,bytes}`` (to the main pool).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, Optional, Union

from slogqual.errors import MeasurementError

KSTAT_ROOT = "/proc/spl/kstat/zfs"
ZIL_GLOBAL = os.path.join(KSTAT_ROOT, "zil")
KSTAT_DATA_STRING = 7

Value = Union[int, str]


def parse_kstat(text: str) -> Dict[str, Value]:
    """{name: value} of one kstat file; integers for numeric types, str for strings."""
    out: Dict[str, Value] = {}
    lines = text.splitlines()
    started = False
    for line in lines:
        parts = line.split(None, 2)
        if not started:
            if parts[:3] == ["name", "type", "data"]:
                started = True
            continue
        if len(parts) < 2:
            continue
        name, typ = parts[0], parts[1]
        data = parts[2].strip() if len(parts) > 2 else ""
        try:
            t = int(typ)
        except ValueError:
            continue
        if t == KSTAT_DATA_STRING:
            out[name] = data
        else:
            try:
                out[name] = int(data)
            except ValueError:
                out[name] = data
    if not started:
        raise MeasurementError("not a kstat file (no 'name type data' line)")
    return out


def read_kstat(path: str) -> Dict[str, Value]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return parse_kstat(fh.read())
    except FileNotFoundError:
        raise MeasurementError(f"{path} does not exist (is the zfs module loaded?)") from None


def objset_path(pool: str, objsetid: int) -> str:
    return os.path.join(KSTAT_ROOT, pool, f"objset-0x{objsetid:x}")


@dataclass(frozen=True)
class ZilStats:
    """The ZIL counters slogqual reports (from the global or an objset kstat)."""

    commit_count: int
    commit_writer_count: int
    itx_count: int
    slog_count: int
    slog_bytes: int
    normal_count: int
    normal_bytes: int

    @classmethod
    def from_kstat(cls, ks: Dict[str, Value]) -> "ZilStats":
        def g(name: str) -> int:
            v = ks.get(name, 0)
            return v if isinstance(v, int) else 0

        return cls(
            commit_count=g("zil_commit_count"),
            commit_writer_count=g("zil_commit_writer_count"),
            itx_count=g("zil_itx_count"),
            slog_count=g("zil_itx_metaslab_slog_count"),
            slog_bytes=g("zil_itx_metaslab_slog_bytes"),
            normal_count=g("zil_itx_metaslab_normal_count"),
            normal_bytes=g("zil_itx_metaslab_normal_bytes"),
        )

    def __sub__(self, other: "ZilStats") -> "ZilStats":
        return ZilStats(*(a - b for a, b in zip(self.astuple(), other.astuple())))

    def astuple(self):
        return (self.commit_count, self.commit_writer_count, self.itx_count, self.slog_count, self.slog_bytes,
                self.normal_count, self.normal_bytes)

    def as_dict(self) -> Dict[str, int]:
        names = ("commit_count", "commit_writer_count", "itx_count", "slog_count", "slog_bytes", "normal_count",
                 "normal_bytes")
        return dict(zip(names, self.astuple()))

    @property
    def slog_share(self) -> Optional[float]:
        """Fraction of ZIL bytes that went to a SLOG; None when the ZIL wrote nothing."""
        total = self.slog_bytes + self.normal_bytes
        return self.slog_bytes / total if total else None


def zil_stats(pool: Optional[str] = None, objsetid: Optional[int] = None) -> ZilStats:
    path = objset_path(pool, objsetid) if pool and objsetid is not None else ZIL_GLOBAL
    return ZilStats.from_kstat(read_kstat(path))
