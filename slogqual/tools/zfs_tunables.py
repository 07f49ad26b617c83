"""The OpenZFS module parameters that decide what reaches a log device, read from the running kernel:
Linux ``/sys/module/zfs/parameters/<name>`` (one value per file), FreeBSD ``sysctl vfs.zfs.…``.

The names are OpenZFS's ``ZFS_MODULE_PARAM(scope, prefix, name, …)`` declarations (module/zfs/zil.c,
zfs_log.c, txg.c, dsl_pool.c): Linux joins prefix and name (``zil_`` + ``slog_bulk``), FreeBSD makes a
sysctl of the scope (``zfs_zil`` -> ``vfs.zfs.zil.slog_bulk``). A parameter the kernel does not have (an
older OpenZFS: ``zil_maxcopied`` is 2.2's) is left out, so the caller keeps its default and says so.
"""

from __future__ import annotations

import os
import sys
from typing import Dict, Optional

from slogqual.tools import spawn as _run

LINUX_ROOT = "/sys/module/zfs/parameters"

#: the advisor's tunable -> (Linux module parameter, FreeBSD sysctl)
PARAMETERS = {
    "zfs_immediate_write_sz": ("zfs_immediate_write_sz", "vfs.zfs.immediate_write_sz"),
    "zil_slog_bulk": ("zil_slog_bulk", "vfs.zfs.zil.slog_bulk"),
    "zil_maxblocksize": ("zil_maxblocksize", "vfs.zfs.zil.maxblocksize"),
    "zil_maxcopied": ("zil_maxcopied", "vfs.zfs.zil.maxcopied"),
    "zfs_txg_timeout": ("zfs_txg_timeout", "vfs.zfs.txg.timeout"),
    "zfs_dirty_data_max": ("zfs_dirty_data_max", "vfs.zfs.dirty_data_max"),
}


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


def where() -> str:
    return "sysctl vfs.zfs" if sys.platform.startswith("freebsd") else LINUX_ROOT
