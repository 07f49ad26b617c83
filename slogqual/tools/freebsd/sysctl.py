"""sysctl(8) on FreeBSD: ``sysctl kern.disks`` (disk names) and ``name: value`` lines generally.

``sysctl NAME`` prints ``NAME: value``; ``sysctl -n NAME`` the value alone.
"""

from __future__ import annotations

from typing import Dict, List

from slogqual.tools import spawn as _run

PROGRAM = "sysctl"


def argv(*names: str) -> List[str]:
    return [PROGRAM, *names]


def parse(text: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for line in (text or "").splitlines():
        name, sep, value = line.partition(":")
        name = name.strip()
        if sep and name and " " not in name and "." in name:
            out[name] = value.strip()
    return out


def disks(text: str) -> List[str]:
    """Disk names from ``sysctl kern.disks`` output (or ``-n``'s bare list)."""
    values = parse(text)
    raw = values.get("kern.disks")
    if raw is None:
        stripped = (text or "").strip()
        raw = stripped if stripped and ":" not in stripped else ""
    return raw.split()


def get(*names: str) -> Dict[str, str]:
    proc = _run.run(argv(*names), timeout=30, typed_timeout=True, check=True)
    return _run.parse_output(proc, parse)


def set_value(name: str, value: str) -> None:
    """``sysctl NAME=VALUE`` (root): ToolFailedError when the kernel refuses it."""
    _run.run([PROGRAM, f"{name}={value}"], timeout=30, typed_timeout=True, check=True)
