"""diskinfo(8) ``diskinfo -v DEV``: the verbose description block.

Each line is ``<value>\\t# <name>`` (usr.sbin/diskinfo/diskinfo.c prints
``"\\t%-12s\\t# Disk descr.\\n"`` and so on); the first line names the device.
Web pages often collapse the tabs to single spaces, so the split is on the last
`` # `` of a line. Only the description block is parsed here; the ``-wS``
sync-write results are read by slogqual's diskinfo importer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from slogqual.tools import spawn as _run

PROGRAM = "diskinfo"


@dataclass
class DiskInfo:
    device: Optional[str] = None
    sectorsize: Optional[int] = None
    mediasize: Optional[int] = None
    stripesize: Optional[int] = None
    descr: Optional[str] = None
    ident: Optional[str] = None
    attachment: Optional[str] = None
    physical_path: Optional[str] = None
    trim: Optional[bool] = None
    rotation_rate: Optional[int] = None  # rpm; 0 = non-rotating; None = "Unknown"/absent
    rotation_raw: Optional[str] = None
    fields: Dict[str, str] = field(default_factory=dict)


def argv(device: str) -> List[str]:
    return [PROGRAM, "-v", device]


_LINE = re.compile(r"^\s*(.*?)\s+#\s+(.+?)\s*$")


def _int(v: Optional[str]) -> Optional[int]:
    if v is None:
        return None
    m = re.match(r"^([0-9]+)$", v.strip())
    return int(m.group(1)) if m else None


def parse(text: str) -> DiskInfo:
    """ValueError if no ``value # name`` line is found at all."""
    info = DiskInfo()
    for raw in (text or "").splitlines():
        if not raw.strip():
            continue
        m = _LINE.match(raw)
        if not m:
            if info.device is None and not info.fields and "#" not in raw:
                info.device = raw.strip().strip('"')
            continue
        value, name = m.group(1).strip(), m.group(2).strip()
        info.fields[name] = value
    if not info.fields:
        raise ValueError("no diskinfo -v lines ('<value> # <name>') found")
    f = info.fields

    def get(*names: str) -> Optional[str]:
        for n in names:
            for k, v in f.items():
                if k.lower().startswith(n.lower()):
                    return v
        return None

    info.sectorsize = _int(get("sectorsize"))
    info.mediasize = _int(get("mediasize in bytes"))
    info.stripesize = _int(get("stripesize"))
    info.descr = get("Disk descr") or None
    info.ident = get("Disk ident") or None
    info.attachment = get("Attachment") or None
    info.physical_path = get("Physical path") or None
    trim = get("TRIM/UNMAP support")
    info.trim = None if trim is None else trim.lower().startswith("yes")
    info.rotation_raw = get("Rotation rate in RPM")
    info.rotation_rate = _int(info.rotation_raw)
    return info


def describe(device: str, host=None) -> DiskInfo:
    """``diskinfo -v device``; host: where the program runs (tools/freebsd/host.py)."""
    from slogqual.tools.freebsd.host import LIVE

    proc = (host or LIVE).run(argv(device), timeout=60)
    if proc.returncode != 0:
        raise _run.failure(proc.args, proc.returncode, proc.stderr, proc.stdout)
    return _run.parse_output(proc, parse)
