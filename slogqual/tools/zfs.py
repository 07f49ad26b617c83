"""The ``zfs`` command: argv builders and parsers of its scripted (``-Hp``) output."""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence

from slogqual.tools import spawn as _run

PROGRAM = "zfs"


def version() -> _run.ToolVersion:
    """The userland's version: ``zfs --version`` prints 'zfs-2.3.2-2~bpo12+2' first (see zpool.version)."""
    return _run.get_version(PROGRAM, ["--version"], r"^zfs-(\d+)\.(\d+)(?:\.(\d+))?")


def check_version() -> _run.ToolVersion:
    return _run.check_version(PROGRAM, version)


def parse_versions(stdout: str) -> Dict[str, Optional[str]]:
    """``zfs --version``: 'zfs-2.3.2-2~bpo12+2' (userland) and 'zfs-kmod-2.3.2-2~bpo12+2' (the loaded
    module; absent when none is loaded, and then the command exits 1)."""
    out: Dict[str, Optional[str]] = {"userland": None, "module": None}
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("zfs-kmod-"):
            out["module"] = line[len("zfs-kmod-"):]
        elif line.startswith("zfs-") and out["userland"] is None:
            out["userland"] = line[len("zfs-"):]
    return out


def openzfs_versions() -> Dict[str, Optional[str]]:
    """The OpenZFS userland and module versions, as every document that touched ZFS records them;
    what could not be read is None, with the reason under "error"."""
    proc = _run.run([PROGRAM, "--version"], timeout=30, typed_timeout=True)
    found: Dict[str, Optional[str]] = dict(parse_versions(proc.stdout or ""))
    if found["userland"] is None or found["module"] is None:
        err = (proc.stderr or "").strip().splitlines()
        found["error"] = err[-1] if err else f"zfs --version exited {proc.returncode}"
    return found


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
            raise _run.parse_failed(PROGRAM, None, text, f"unexpected zfs get line {line!r}")
        out[parts[0]] = parts[1]
    return out


def zfs(argv: List[str], timeout: float = 300) -> str:
    """stdout of a zfs command; ToolFailedError / ToolTimeoutError (MeasurementErrors) otherwise."""
    return _run.run_checked(argv, timeout=timeout)


def create(name: str, **kw) -> None:
    zfs(create_argv(name, **kw))


def set_props(name: str, properties: Mapping[str, str]) -> None:
    zfs(set_argv(name, properties))


def get(name: str, properties: Sequence[str]) -> Dict[str, str]:
    argv = get_argv(name, properties)
    return _run.parse_text(PROGRAM, argv, zfs(argv), parse_get)


def parse_objsetid(text: str) -> int:
    """The objsetid of ``zfs get -Hp -o property,value objsetid`` (ToolOutputError when it is not there
    or not a number; it was a bare KeyError, shown as "unreadable output: 'objsetid'")."""
    value = parse_get(text).get("objsetid")
    try:
        return _run.whole((value or "").strip())
    except ValueError:
        raise _run.parse_failed(PROGRAM, None, text, f"no objsetid number in zfs get output (got {value!r})") from None


def objsetid(name: str) -> int:
    argv = get_argv(name, ["objsetid"])
    return _run.parse_text(PROGRAM, argv, zfs(argv), parse_objsetid)


def destroy(name: str, recursive: bool = False) -> None:
    zfs(destroy_argv(name, recursive))


def mount(name: str) -> None:
    zfs(mount_argv(name))
