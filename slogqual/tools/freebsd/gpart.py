"""gpart(8): ``gpart show -p``, every partition table GEOM's PART class knows.

Per table a header ``=>  first  size  PROVIDER  SCHEME  (human size)  [CORRUPT]`` and then one line
per entry, ``start  size  NAME  TYPE  [attributes]  (human size)``, or ``start size - free - (size)``
for unallocated space. With ``-p`` NAME is the partition's provider name (``ada0p2``, ``da0s1``,
``da0s1a``), which is how mounts and swap name it. A BSD label inside an MBR slice is a table of
its own whose provider is the slice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List

from slogqual.tools import spawn as _run

PROGRAM = "gpart"

_HEADER = re.compile(r"^=>\s+([0-9]+)\s+([0-9]+)\s+(\S+)\s+(\S+)\s+\(([^)]*)\)(?:\s+\[(\w+)\])?\s*$")
_ENTRY = re.compile(r"^([0-9]+)\s+([0-9]+)\s+(\S+)\s+(\S+)(?:\s+\[([^\]]*)\])?\s+\(([^)]*)\)\s*$")
_FREE = re.compile(r"^([0-9]+)\s+([0-9]+)\s+- free -\s+\(([^)]*)\)\s*$")


@dataclass(frozen=True)
class Partition:
    name: str  # provider name: ada0p2
    type: str  # freebsd-zfs, efi, !12
    start: int
    size: int  # sectors


@dataclass
class Table:
    provider: str  # the disk (or slice) the table is on
    scheme: str  # GPT, MBR, BSD
    state: str = ""  # CORRUPT when gpart says so
    partitions: List[Partition] = field(default_factory=list)


def argv_show() -> List[str]:
    return [PROGRAM, "show", "-p"]


def _provider_name(name: str, provider: str) -> str:
    """An entry's NAME as ``-p`` prints it: the table's provider and a suffix (da0 -> da0p2, da0s1 ->
    da0s1a). Without ``-p`` gpart prints the index (``2``), with ``-l`` the label: neither names the
    partition's provider, so the output is refused rather than matched by a name it does not hold."""
    if name.isdecimal():
        raise ValueError(f"partition of {provider} named by its index {name!r}: this is gpart show without -p, "
                         f"and slogqual needs gpart show -p (provider names such as {provider}p{name})")
    if not name.startswith(provider) or name == provider:
        raise ValueError(f"partition {name!r} is not named after its table's provider {provider!r}: "
                         "slogqual needs gpart show -p (provider names), not -l (labels)")
    return name


def parse(text: str) -> List[Table]:
    """ValueError on a line that is neither a table header, an entry nor free space, and on entries not
    named by their provider (output of ``gpart show`` without ``-p``, or with ``-l``)."""
    tables: List[Table] = []
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            continue
        m = _HEADER.match(line)
        if m:
            tables.append(Table(provider=m.group(3), scheme=m.group(4), state=m.group(6) or ""))
            continue
        if _FREE.match(line) and tables:
            continue
        m = _ENTRY.match(line)
        if m and tables:
            tables[-1].partitions.append(Partition(name=_provider_name(m.group(3), tables[-1].provider),
                                                   type=m.group(4), start=int(m.group(1)), size=int(m.group(2))))
            continue
        raise ValueError(f"unexpected gpart show -p line {line[:80]!r}")
    return tables


def show(host=None) -> List[Table]:
    from slogqual.tools.freebsd.host import LIVE

    proc = (host or LIVE).run(argv_show())
    if proc.returncode != 0:
        raise _run.failure(proc.args, proc.returncode, proc.stderr, proc.stdout)
    return _run.parse_output(proc, parse)
