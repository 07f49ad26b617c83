"""geom(8) ``geom disk list [NAME]``: disks as GEOM sees them.

Per provider: Mediasize (bytes), Sectorsize, Stripesize (the physical sector
for 512e disks), Mode (rXwYeZ: the sums of every consumer's read, write and exclusive
access counts, sys/geom/geom_subr.c g_access(); e>0 means something holds the disk
exclusively: a mounted filesystem, swap, a ZFS vdev, gmirror/graid/geli and the like, and
w>0 that something has it open for writing), descr (model), ident
(serial), lunid, rotationrate (0 = non-rotating, "unknown" when not reported).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional

from slogqual.tools import spawn as _run

PROGRAM = "geom"


@dataclass
class GeomDisk:
    name: str
    mediasize: Optional[int] = None
    sectorsize: Optional[int] = None
    stripesize: Optional[int] = None
    mode: Optional[str] = None
    descr: Optional[str] = None
    ident: Optional[str] = None
    lunid: Optional[str] = None
    rotationrate: Optional[int] = None  # None: not reported / "unknown"
    rotationrate_raw: Optional[str] = None

    @property
    def open_counts(self) -> Optional[Dict[str, int]]:
        m = re.fullmatch(r"r([0-9]+)w([0-9]+)e([0-9]+)", self.mode or "")
        if not m:
            return None
        return {"r": int(m.group(1)), "w": int(m.group(2)), "e": int(m.group(3))}


def argv(name: Optional[str] = None) -> List[str]:
    return [PROGRAM, "disk", "list"] + ([name] if name else [])


def _int(text: Optional[str]) -> Optional[int]:
    if text is None:
        return None
    m = re.match(r"\s*([0-9]+)", text)
    return int(m.group(1)) if m else None


def parse(text: str) -> List[GeomDisk]:
    """Every 'Geom name:' block. Keys are matched case-insensitively; unknown keys are ignored."""
    disks: List[GeomDisk] = []
    cur: Optional[GeomDisk] = None
    for raw in (text or "").splitlines():
        line = raw.strip()
        m = re.match(r"^Geom name:\s*(\S+)", line)
        if m:
            cur = GeomDisk(name=m.group(1))
            disks.append(cur)
            continue
        if cur is None or ":" not in line:
            continue
        key, _, value = line.partition(":")
        key = re.sub(r"^[0-9]+\.\s*", "", key).strip().lower()
        value = value.strip()
        if key == "mediasize":
            cur.mediasize = _int(value)
        elif key == "sectorsize":
            cur.sectorsize = _int(value)
        elif key == "stripesize":
            cur.stripesize = _int(value)
        elif key == "mode":
            cur.mode = value or None
        elif key == "descr":
            cur.descr = value or None
        elif key == "ident":
            cur.ident = value if value and value != "(null)" else None
        elif key == "lunid":
            cur.lunid = value or None
        elif key == "rotationrate":
            cur.rotationrate_raw = value or None
            cur.rotationrate = _int(value)
    return disks


def disk_list(name: Optional[str] = None, host=None) -> List[GeomDisk]:
    """Every disk (or the one named) as GEOM sees it; host: where the program runs (tools/freebsd/host.py)."""
    from slogqual.tools.freebsd.host import LIVE

    proc = (host or LIVE).run(argv(name))
    if proc.returncode != 0:
        raise _run.failure(proc.args, proc.returncode, proc.stderr, proc.stdout)
    return _run.parse_output(proc, parse)
