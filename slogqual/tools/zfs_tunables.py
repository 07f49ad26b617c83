"""The OpenZFS module parameters that decide what reaches a log device, read from the running kernel:
Linux ``/sys/module/zfs/parameters/<name>`` (one value per file), FreeBSD ``sysctl vfs.zfs.…``.

The names are OpenZFS's ``ZFS_MODULE_PARAM(scope, prefix, name, …)`` declarations (module/zfs/zil.c,
zfs_log.c, txg.c, dsl_pool.c): Linux joins prefix and name (``zil_`` + ``slog_bulk``), FreeBSD makes a
sysctl of the scope (``zfs_zil`` -> ``vfs.zfs.zil.slog_bulk``). A parameter the kernel does not have (an
older OpenZFS: ``zil_maxcopied`` is 2.2's) is left out, so the caller keeps its default and says so.

``VERSIONED``: the parameters a pool scenario reads or sets, with the OpenZFS release that brought each
(``zil_special_is_slog`` 2.4, openzfs/zfs#17505; ``zfs_dio_enabled`` 2.3, Direct IO), named as each OS names
them; ``since`` says whether a module version has one, and says "unknown" of a version it cannot read.
``setting`` writes one for a while and puts the value it found back.
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass
from typing import Dict, Iterator, Optional, Tuple

from slogqual.versions import openzfs_series
from slogqual.tools import spawn as _run

LINUX_ROOT = "/sys/module/zfs/parameters"

#: the advisor's tunable -> (Linux module parameter, FreeBSD sysctl)
PARAMETERS = {
    "zfs_immediate_write_sz": ("zfs_immediate_write_sz", "vfs.zfs.immediate_write_sz"),
    "zil_slog_bulk": ("zil_slog_bulk", "vfs.zfs.zil.slog_bulk"),
    "zil_maxblocksize": ("zil_maxblocksize", "vfs.zfs.zil.maxblocksize"),
    "zil_maxcopied": ("zil_maxcopied", "vfs.zfs.zil.maxcopied"),
    "zfs_txg_timeout": ("zfs_txg_timeout", "vfs.zfs.txg.timeout"),
    "zfs_commit_timeout_pct": ("zfs_commit_timeout_pct", "vfs.zfs.commit_timeout_pct"),
    "zfs_dirty_data_max": ("zfs_dirty_data_max", "vfs.zfs.dirty_data_max"),
}



@dataclass(frozen=True)
class Parameter:
    """One module parameter as each OS names it, and the OpenZFS release (major, minor) that brought it."""

    linux: str  # /sys/module/zfs/parameters/<linux>
    freebsd: str  # sysctl <freebsd>
    since: Tuple[int, int]

    def name(self, system: str = "") -> str:
        """The name on ``system`` (platform.system(): 'Linux', 'FreeBSD'; '' this host)."""
        system = system or ("FreeBSD" if sys.platform.startswith("freebsd") else "Linux")
        return self.freebsd if system == "FreeBSD" else self.linux


#: what a pool scenario reads or sets, by its Linux name (module/zfs/zil.c, module/os/*/zfs/zfs_vnops_os.c)
VERSIONED = {
    # 1: a pool with a special vdev and no log vdev writes its ZIL there as to a SLOG (records copied into log
    # blocks); 0: the ZIL still allocates there, large writes go indirect as without a SLOG (2.4, #17505)
    "zil_special_is_slog": Parameter("zil_special_is_slog", "vfs.zfs.zil.special_is_slog", (2, 4)),
    # 1 (Linux's default; FreeBSD's is 0): an O_DIRECT write to a dataset is written in place and logged
    # indirectly, never copied into the ZIL (2.3, Direct IO)
    "zfs_dio_enabled": Parameter("zfs_dio_enabled", "vfs.zfs.dio_enabled", (2, 3)),
}

series = openzfs_series  # (2, 4) of "2.4.4-1~bpo13+1" (slogqual.versions)


def has(key: str, version: Optional[str]) -> Optional[bool]:
    """Whether the OpenZFS module of ``version`` has the parameter; None when the version is unknown."""
    found = series(version)
    return None if found is None else found >= VERSIONED[key].since


def _number(text: str) -> Optional[int]:
    try:
        return _run.whole(text.strip())
    except ValueError:
        return None


def read_linux(root: str = LINUX_ROOT) -> Optional[Dict[str, int]]:
    """{tunable: value} from the module's parameter files; None when the zfs module is not loaded."""
    if not os.path.isdir(root):
        return None
    out: Dict[str, int] = {}
    for key, (name, _) in PARAMETERS.items():
        try:
            with open(os.path.join(root, name), encoding="ascii", errors="replace") as fh:
                value = _number(fh.read())
        except OSError:
            continue
        if value is not None:
            out[key] = value
    return out


def parse_sysctl(values: Dict[str, str]) -> Dict[str, int]:
    """{tunable: value} from ``sysctl`` output already split into {name: value} (tools/freebsd/sysctl)."""
    by_oid = {oid: key for key, (_, oid) in PARAMETERS.items()}
    out: Dict[str, int] = {}
    for oid, text in values.items():
        key = by_oid.get(oid)
        value = _number(text) if key else None
        if value is not None:
            out[key] = value
    return out


def read_freebsd() -> Optional[Dict[str, int]]:
    from slogqual.errors import ToolError
    from slogqual.tools.freebsd import sysctl

    values: Dict[str, str] = {}
    for _, oid in PARAMETERS.values():  # one by one: sysctl fails the whole call on an OID it does not know
        try:
            values.update(sysctl.get(oid))
        except (ToolError, OSError, ValueError):
            continue
    return parse_sysctl(values) or None


def read_host() -> Optional[Dict[str, int]]:
    """The running kernel's values, or None where it has no OpenZFS loaded."""
    if sys.platform.startswith("freebsd"):
        return read_freebsd()
    return read_linux()


VERSION_FILE = "/sys/module/zfs/version"
VERSION_SYSCTL = "vfs.zfs.version.module"


def module_version(path: str = VERSION_FILE) -> Optional[str]:
    """The loaded OpenZFS module's version ('2.4.4-1~bpo13+1'): /sys/module/zfs/version on Linux, sysctl
    vfs.zfs.version.module on FreeBSD; None where no module is loaded or it cannot be read."""
    if sys.platform.startswith("freebsd"):
        from slogqual.errors import ToolError
        from slogqual.tools.freebsd import sysctl

        try:
            return sysctl.get(VERSION_SYSCTL).get(VERSION_SYSCTL) or None
        except (ToolError, OSError, ValueError):
            return None
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return fh.read().strip() or None
    except OSError:
        return None


def where() -> str:
    return "sysctl vfs.zfs" if sys.platform.startswith("freebsd") else LINUX_ROOT


def read_one(key: str, root: str = LINUX_ROOT) -> Optional[int]:
    """One of ``VERSIONED`` from the running kernel; None where it has no such parameter."""
    if sys.platform.startswith("freebsd"):
        from slogqual.errors import ToolError
        from slogqual.tools.freebsd import sysctl

        oid = VERSIONED[key].freebsd
        try:
            return _number(sysctl.get(oid).get(oid, ""))
        except (ToolError, OSError, ValueError):
            return None
    try:
        with open(os.path.join(root, VERSIONED[key].linux), encoding="ascii", errors="replace") as fh:
            return _number(fh.read())
    except OSError:
        return None


def write_one(key: str, value: int, root: str = LINUX_ROOT) -> None:
    """Set one of ``VERSIONED`` in the running kernel (root only); OSError / ToolError when it cannot be."""
    if sys.platform.startswith("freebsd"):
        from slogqual.tools.freebsd import sysctl

        sysctl.set_value(VERSIONED[key].freebsd, str(int(value)))
        return
    with open(os.path.join(root, VERSIONED[key].linux), "w", encoding="ascii") as fh:
        fh.write(f"{int(value)}\n")


@contextlib.contextmanager
def setting(key: str, value: int, root: str = LINUX_ROOT) -> Iterator[Optional[int]]:
    """``key`` at ``value`` inside the block, the value found put back after it (on an error or an interrupt
    too); yields the value found. A kernel without the parameter: MeasurementError naming it and where."""
    from slogqual.errors import MeasurementError

    found = read_one(key, root)
    if found is None:
        raise MeasurementError(f"this kernel's OpenZFS has no {VERSIONED[key].name()} ({where() if root == LINUX_ROOT else root})")
    try:
        write_one(key, value, root)
    except OSError as exc:
        raise MeasurementError(f"cannot set {VERSIONED[key].name()} to {value}: {exc.strerror or exc}") from None
    try:
        yield found
    finally:
        if found != value:
            write_one(key, found, root)
