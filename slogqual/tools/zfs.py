"""The ``zfs`` command: argv builders and parsers of its scripted (``-Hp``) output."""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence

from slogqual.errors import MeasurementError
from slogqual.tools import run as _run


def _props(properties: Optional[Mapping[str, str]]) -> List[str]:
    argv: List[str] = []
    for k, v in (properties or {}).items():
        argv += ["-o", f"{k}={v}"]
    return argv


def create_argv(name: str, properties: Optional[Mapping[str, str]] = None, volsize: Optional[int] = None,
                sparse: bool = False, parents: bool = False) -> List[str]:
    """``zfs create`` of a filesystem, or of a volume when ``volsize`` (bytes) is given."""
    argv = ["zfs", "create"]
    if parents:
        argv.append("-p")
    if volsize is not None:
        if sparse:
            argv.append("-s")
        argv += ["-V", str(volsize)]
    argv += _props(properties)
    argv.append(name)
    return argv


def set_argv(name: str, properties: Mapping[str, str]) -> List[str]:
    return ["zfs", "set", *[f"{k}={v}" for k, v in properties.items()], name]


def get_argv(name: str, properties: Sequence[str]) -> List[str]:
    return ["zfs", "get", "-Hp", "-o", "property,value", ",".join(properties), name]


def destroy_argv(name: str, recursive: bool = False) -> List[str]:
    return ["zfs", "destroy", *(["-r"] if recursive else []), name]


def mount_argv(name: str) -> List[str]:
    return ["zfs", "mount", name]


def parse_get(text: str) -> Dict[str, str]:
    """``zfs get -Hp -o property,value`` → {property: value} ('-' stays '-')."""
    out = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            raise MeasurementError(f"unexpected zfs get line {line!r}")
        out[parts[0]] = parts[1]
    return out


def zfs(argv: List[str], timeout: float = 300) -> str:
    return _run.run_checked(argv, timeout=timeout)


def create(name: str, **kw) -> None:
    zfs(create_argv(name, **kw))


def set_props(name: str, properties: Mapping[str, str]) -> None:
    zfs(set_argv(name, properties))


def get(name: str, properties: Sequence[str]) -> Dict[str, str]:
    return parse_get(zfs(get_argv(name, properties)))


def objsetid(name: str) -> int:
    return int(get(name, ["objsetid"])["objsetid"])


def destroy(name: str, recursive: bool = False) -> None:
    zfs(destroy_argv(name, recursive))


def mount(name: str) -> None:
    zfs(mount_argv(name))
