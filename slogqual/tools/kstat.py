"""OpenZFS kstats, parsed into typed values: Linux ``/proc/spl/kstat/zfs`` files, FreeBSD sysctls.

The write throttle's evidence is the global ``dmu_tx`` kstat (``/proc/spl/kstat/zfs/dmu_tx``, FreeBSD
``kstat.zfs.misc.dmu_tx``), counted in module/zfs/dmu_tx.c: ``dmu_tx_assigned`` every transaction assigned to a
txg, ``dmu_tx_dirty_delay`` those sent to wait because the pool's dirty data was past
``zfs_delay_min_dirty_percent`` of ``zfs_dirty_data_max`` (``dsl_pool_need_dirty_delay``; each then sleeps by
the throttle's curve, uncounted), ``dmu_tx_delay`` a row 2.3 and 2.4 keep but never bump (0 in every recording
here), ``dmu_tx_dirty_over_max`` those that found the dirty data at its
maximum and waited for a txg to sync, ``dmu_tx_wrlog_delay`` (2.2 on) those that waited because the sync writes
not yet synced passed ``zfs_wrlog_data_max``. Every pool's transactions count there: no per-pool row exists.

Linux: a kstat file is a header line of numbers, a ``name type data`` column line, then one row per
statistic. Types 0-6 are integers (KSTAT_DATA_CHAR … UINT64), 7 is a string (e.g. ``dataset_name``
of an objset kstat). The ZIL's evidence lives in ``/proc/spl/kstat/zfs/zil`` (all pools) and
``/proc/spl/kstat/zfs/<pool>/objset-0x<id>`` (one dataset or zvol): ``zil_commit_count``,
``zil_itx_metaslab_slog_{count,bytes}`` (log records written to a SLOG) against
``zil_itx_metaslab_normal_{count,bytes}`` (to the main pool). Every row is kept, known or not: the
versions differ (OpenZFS 2.4 adds ``zil_commit_crash_count`` to 2.3's rows, tests/fixtures/zfs/), and
what a caller does not ask for is no reason to fail.

FreeBSD: the same kstats are sysctl nodes. OpenZFS's FreeBSD SPL (module/os/freebsd/spl/spl_kstat.c)
names a named kstat ``kstat.<module>[.<pool>].<class>.<name>.<stat>``, so the global ZIL kstat is
``kstat.zfs.misc.zil.<stat>`` and a dataset's is ``kstat.zfs.<pool>.dataset.objset-0x<id>.<stat>``
(the mapping OpenZFS's own test suite uses, tests/zfs-tests/include/kstat.shlib). ``sysctl OID``
prints every leaf under OID as ``name: value``; the names below the OID are the Linux row names.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Dict, Optional, Union

from slogqual.errors import MeasurementError
from slogqual.tools import spawn as _run

KSTAT_ROOT = "/proc/spl/kstat/zfs"
ZIL_GLOBAL = os.path.join(KSTAT_ROOT, "zil")
DMU_TX = os.path.join(KSTAT_ROOT, "dmu_tx")
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
            t = _run.whole(typ)
        except ValueError:
            continue
        if t == KSTAT_DATA_STRING:
            out[name] = data
        else:
            try:
                out[name] = _run.whole(data, signed=True)  # INT32/INT64 rows may be negative
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


SYSCTL_ZIL_GLOBAL = "kstat.zfs.misc.zil"
SYSCTL_DMU_TX = "kstat.zfs.misc.dmu_tx"


def objset_oid(pool: str, objsetid: int) -> str:
    """The sysctl node of a dataset's kstat on FreeBSD. A dot in the pool name would split the node
    (sysctl names are dot-separated), so such a pool's kstats cannot be named: refuse it."""
    if "." in pool:
        raise MeasurementError(f"pool {pool!r}: a '.' in the name hides its kstats from sysctl")
    return f"kstat.zfs.{pool}.dataset.objset-0x{objsetid:x}"


def from_sysctl(values: Dict[str, str], oid: str) -> Dict[str, Value]:
    """{stat: value} of the kstat at sysctl node ``oid``, from ``sysctl OID``'s {name: text}.

    Leaves directly under ``oid`` are the kstat's rows; their values are integers except the string
    rows (``dataset_name``), which stay text. Nothing under ``oid`` means it is not a kstat.
    """
    prefix = oid + "."
    out: Dict[str, Value] = {}
    for name, text in values.items():
        if not name.startswith(prefix):
            continue
        stat = name[len(prefix):]
        if "." in stat:  # a deeper node is some other kstat's
            continue
        try:
            out[stat] = _run.whole(text, signed=True)
        except ValueError:
            out[stat] = text
    if not out:
        raise MeasurementError(f"sysctl {oid}: no kstat there (is the zfs module loaded?)")
    return out


def read_sysctl_kstat(oid: str) -> Dict[str, Value]:
    from slogqual.tools.freebsd import sysctl

    try:
        return from_sysctl(sysctl.get(oid), oid)
    except (ValueError, OSError) as exc:
        raise MeasurementError(f"sysctl {oid}: {exc}") from None


@dataclass(frozen=True)
class ZilStats:
    """The ZIL counters slogqual reports (from the global or an objset kstat). A counter the kstat
    does not have (an older OpenZFS, a row renamed) is None, unknown: never 0, which would read as
    "the ZIL wrote nothing there". Arithmetic with an unknown side is unknown."""

    commit_count: Optional[int]
    commit_writer_count: Optional[int]
    itx_count: Optional[int]
    slog_count: Optional[int]
    slog_bytes: Optional[int]
    normal_count: Optional[int]
    normal_bytes: Optional[int]

    @classmethod
    def from_kstat(cls, ks: Dict[str, Value]) -> "ZilStats":
        def g(name: str) -> Optional[int]:
            v = ks.get(name)
            return v if isinstance(v, int) else None

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
        return ZilStats(*(None if a is None or b is None else a - b for a, b in zip(self.astuple(), other.astuple())))

    def __add__(self, other: "ZilStats") -> "ZilStats":
        return ZilStats(*(None if a is None or b is None else a + b for a, b in zip(self.astuple(), other.astuple())))

    def astuple(self):
        return (self.commit_count, self.commit_writer_count, self.itx_count, self.slog_count, self.slog_bytes,
                self.normal_count, self.normal_bytes)

    def as_dict(self) -> Dict[str, Optional[int]]:
        """The counters by name; an unknown one is None (null in a document)."""
        names = ("commit_count", "commit_writer_count", "itx_count", "slog_count", "slog_bytes", "normal_count",
                 "normal_bytes")
        return dict(zip(names, self.astuple()))

    @property
    def slog_share(self) -> Optional[float]:
        """Fraction of ZIL bytes that went to a SLOG; None when the ZIL wrote nothing or either
        counter is unknown."""
        if self.slog_bytes is None or self.normal_bytes is None:
            return None
        total = self.slog_bytes + self.normal_bytes
        return self.slog_bytes / total if total else None


def zil_stats(pool: Optional[str] = None, objsetid: Optional[int] = None,
              platform: Optional[str] = None) -> ZilStats:
    """The ZIL counters of one dataset/zvol (pool and objsetid given) or of all pools."""
    one = pool is not None and objsetid is not None
    if (platform or sys.platform).startswith("freebsd"):
        return ZilStats.from_kstat(read_sysctl_kstat(objset_oid(pool, objsetid) if one else SYSCTL_ZIL_GLOBAL))
    return ZilStats.from_kstat(read_kstat(objset_path(pool, objsetid) if one else ZIL_GLOBAL))


@dataclass(frozen=True)
class TxStats:
    """The write throttle's counters (the global ``dmu_tx`` kstat, module doc). A row the kstat lacks is None,
    unknown (``dmu_tx_wrlog_delay`` before 2.2); arithmetic with an unknown side is unknown."""

    assigned: Optional[int]
    dirty_delay: Optional[int]  # sent to wait: dirty data past zfs_delay_min_dirty_percent
    delay: Optional[int]  # kept by 2.3 and 2.4, never bumped
    dirty_over_max: Optional[int]  # blocked until a txg synced: dirty data at zfs_dirty_data_max
    wrlog_delay: Optional[int]  # sent to wait: unsynced sync writes past zfs_wrlog_data_max

    NAMES = ("assigned", "dirty_delay", "delay", "dirty_over_max", "wrlog_delay")

    @classmethod
    def from_kstat(cls, ks: Dict[str, Value]) -> "TxStats":
        def g(name: str) -> Optional[int]:
            v = ks.get("dmu_tx_" + name)
            return v if isinstance(v, int) else None

        return cls(*(g(n) for n in cls.NAMES))

    def astuple(self):
        return (self.assigned, self.dirty_delay, self.delay, self.dirty_over_max, self.wrlog_delay)

    def __sub__(self, other: "TxStats") -> "TxStats":
        return TxStats(*(None if a is None or b is None else a - b for a, b in zip(self.astuple(), other.astuple())))

    def as_dict(self) -> Dict[str, Optional[int]]:
        return dict(zip(self.NAMES, self.astuple()))


def tx_stats(platform: Optional[str] = None) -> TxStats:
    """The write throttle's counters now, every pool's together."""
    if (platform or sys.platform).startswith("freebsd"):
        return TxStats.from_kstat(read_sysctl_kstat(SYSCTL_DMU_TX))
    return TxStats.from_kstat(read_kstat(DMU_TX))
