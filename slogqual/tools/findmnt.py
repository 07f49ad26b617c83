"""findmnt (util-linux): the mount table as JSON, with each mount's device number.

``findmnt -J -l -o SOURCE,TARGET,FSTYPE,MAJ:MIN`` lists every mount of this
mount namespace. MAJ:MIN identifies the block device even when SOURCE is a
/dev/disk/by-* alias; btrfs reports an anonymous MAJ:MIN (0:NN), so SOURCE is
also kept. When findmnt is absent the kernel's /proc/self/mountinfo (which
findmnt reads too) is parsed instead. Only this module spawns findmnt.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import List, Optional

from slogqual.errors import ToolError
from slogqual.tools import spawn as _run
from slogqual.kernel.procfs import unescape_octal as _unescape

PROGRAM = "findmnt"
MOUNTINFO = "/proc/self/mountinfo"

log = logging.getLogger("slogqual.tools.findmnt")


@dataclass
class Mount:
    source: str
    target: str
    fstype: Optional[str]
    devnum: Optional[str]  # "MAJ:MIN"


def available() -> bool:
    return _run.which(PROGRAM) is not None


def argv() -> List[str]:
    return [PROGRAM, "-J", "-l", "-o", "SOURCE,TARGET,FSTYPE,MAJ:MIN"]


def parse(text: str) -> List[Mount]:
    if not text or not text.strip():
        raise ValueError("empty findmnt output")
    doc = _run.loads_json(text, "findmnt output")
    fss = doc.get("filesystems") if isinstance(doc, dict) else None
    if not isinstance(fss, list):
        raise ValueError("findmnt JSON has no 'filesystems' list")
    out: List[Mount] = []

    def walk(items):
        for fs in items:
            if not isinstance(fs, dict):
                continue
            out.append(Mount(source=str(fs.get("source") or ""), target=str(fs.get("target") or ""),
                             fstype=fs.get("fstype"), devnum=fs.get("maj:min")))
            walk(fs.get("children") or [])  # tree output, should -l be dropped

    walk(fss)
    return out


def parse_mountinfo(text: str) -> List[Mount]:
    """/proc/PID/mountinfo: 'ID PARENT MAJ:MIN ROOT TARGET OPTS [TAGS...] - FSTYPE SOURCE SUPEROPTS'."""
    out = []
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) < 10 or "-" not in parts[6:]:
            continue
        sep = parts.index("-", 6)
        if len(parts) < sep + 3:
            continue
        out.append(Mount(source=_unescape(parts[sep + 2]), target=_unescape(parts[4]),
                         fstype=parts[sep + 1], devnum=parts[2]))
    return out


def mounts() -> List[Mount]:
    """All mounts: findmnt's, or the kernel's mountinfo when findmnt is absent, fails, hangs or
    prints garbage. Raises ValueError if neither can be read."""
    if available():
        try:
            return _run.parse_output(_run.run(argv(), timeout=30, typed_timeout=True, check=True), parse)
        except ToolError as exc:
            log.debug("findmnt unusable (%s): reading %s", exc, MOUNTINFO)
    try:
        with open(MOUNTINFO) as fh:
            return parse_mountinfo(fh.read())
    except OSError as exc:
        raise ValueError(f"cannot read the mount table: {exc.strerror}") from None
