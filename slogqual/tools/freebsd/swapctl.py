"""swapctl(8) on FreeBSD: ``swapctl -l``, the active swap devices.

A header ``Device:  <BLOCKSIZE>-blocks  Used:`` (sbin/swapon/swapon.c, the block size from
$BLOCKSIZE, 1024 by default) then one ``device  total  used`` line per device, and a ``Total`` line
when there are several.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List

from slogqual.tools import spawn as _run

PROGRAM = "swapctl"

_HEADER = re.compile(r"^Device:?\s+\S+-blocks\s+Used:?\s*$")


@dataclass(frozen=True)
class Swap:
    device: str
    blocks: int
    used: int


def argv() -> List[str]:
    return [PROGRAM, "-l"]


def parse(text: str) -> List[Swap]:
    """ValueError without the header or on a line that is not ``device total used``."""
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    if not lines:
        return []
    if not _HEADER.match(lines[0].strip()):
        raise ValueError(f"no swapctl -l header, found {lines[0].strip()[:80]!r}")
    out: List[Swap] = []
    for raw in lines[1:]:
        f = raw.split()
        try:
            if len(f) != 3:
                raise ValueError("not 3 fields")
            blocks, used = _run.whole(f[1]), _run.whole(f[2])
        except ValueError:
            raise ValueError(f"unexpected swapctl -l line {raw.strip()[:80]!r}") from None
        if f[0] == "Total":
            continue
        out.append(Swap(device=f[0], blocks=blocks, used=used))
    return out


def swaps(host=None) -> List[Swap]:
    from slogqual.tools.freebsd.host import LIVE

    proc = (host or LIVE).run(argv())
    if proc.returncode != 0:
        raise _run.failure(proc.args, proc.returncode, proc.stderr, proc.stdout)
    return _run.parse_output(proc, parse)
