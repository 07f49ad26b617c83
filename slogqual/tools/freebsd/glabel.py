"""glabel(8): ``glabel status``, the labels GEOM's LABEL class made and the provider each one is on.

A header ``Name  Status  Components`` and one line per label, ``NAME  STATUS  COMPONENT``
(``gpt/rootfs  N/A  ada0p2``, ``diskid/DISK-S1E33M3X  N/A  ada0``). Labels come from on-disk
metadata (glabel's own, UFS volume names and ids, GPT labels and UUIDs, msdosfs/ext2fs/ntfs/iso9660
volume names) or, for ``diskid/``, from the disk's serial number alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List

from slogqual.tools import spawn as _run

PROGRAM = "glabel"

_HEADER = re.compile(r"^Name\s+Status\s+Components\s*$")


@dataclass(frozen=True)
class Label:
    name: str  # gpt/rootfs
    status: str
    component: str  # the provider it is on: ada0p2

    @property
    def kind(self) -> str:
        """The label's directory under /dev: gpt, gptid, diskid, ufs, ufsid, label, msdosfs, ..."""
        return self.name.split("/", 1)[0] if "/" in self.name else ""


def argv_status() -> List[str]:
    return [PROGRAM, "status"]


def parse(text: str) -> List[Label]:
    """ValueError on a line that is not ``name status component``. The header is skipped where it is
    (excerpts quoted without it parse too)."""
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    if lines and _HEADER.match(lines[0].strip()):
        lines = lines[1:]
    out: List[Label] = []
    for raw in lines:
        f = raw.split()
        if len(f) != 3:
            raise ValueError(f"unexpected glabel status line {raw.strip()[:80]!r}")
        out.append(Label(name=f[0], status=f[1], component=f[2]))
    return out


def status(host=None) -> List[Label]:
    from slogqual.tools.freebsd.host import LIVE

    proc = (host or LIVE).run(argv_status())
    if proc.returncode != 0:
        raise _run.failure(proc.args, proc.returncode, proc.stderr, proc.stdout)
    return _run.parse_output(proc, parse)
