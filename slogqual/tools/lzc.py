"""libzfs_core through pyzfs (Debian's python3-pyzfs): the one door to it.

pyzfs has no pool API and (in OpenZFS 2.3) no property get/set or listing, so slogqual uses it for
what it does well — creating zvols and filesystems with their creation-time properties, testing
existence, destroying — and the zpool/zfs commands for the rest. It is importable only from the
Python it was packaged for (Debian's /usr/bin/python3), so `available()` decides at run time.
"""

from __future__ import annotations

from typing import Dict, Optional, Union

from slogqual.errors import MeasurementError

try:  # pragma: no cover - depends on the interpreter
    import libzfs_core as _lzc
except ImportError:  # the pyenv/venv Python, or no OpenZFS userland
    _lzc = None

Prop = Union[int, str]


def available() -> bool:
    return _lzc is not None


def _require():
    if _lzc is None:
        raise MeasurementError("libzfs_core (python3-pyzfs) is not importable from this Python")
    return _lzc


def _props(props: Dict[str, Prop]) -> Dict[bytes, Prop]:
    # nvlist keys are bytes; numeric properties go in as integers, the rest as bytes
    return {k.encode(): (v if isinstance(v, int) else str(v).encode()) for k, v in props.items()}


def create(name: str, ds_type: str, props: Optional[Dict[str, Prop]] = None) -> None:
    lzc = _require()
    try:
        lzc.lzc_create(name.encode(), ds_type=ds_type, props=_props(props or {}))
    except Exception as exc:  # pyzfs raises its own exception tree (ZFSError subclasses)
        raise MeasurementError(f"lzc_create {name} ({ds_type}) failed: {type(exc).__name__}: {exc}") from None


def create_zvol(name: str, volsize: int, volblocksize: Optional[int] = None) -> None:
    props: Dict[str, Prop] = {"volsize": int(volsize)}
    if volblocksize:
        props["volblocksize"] = int(volblocksize)
    create(name, "zvol", props)


def create_filesystem(name: str, props: Optional[Dict[str, Prop]] = None) -> None:
    create(name, "zfs", props)


def exists(name: str) -> bool:
    return bool(_require().lzc_exists(name.encode()))
