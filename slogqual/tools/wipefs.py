"""wipefs (util-linux), listing only: every signature on a device with its offset.

``wipefs --no-act --json DEV`` (without ``--all``) only lists; it writes
nothing. It finds signatures blkid's single answer hides: backup GPT headers,
ZFS labels (one entry per label), several filesystems at once. Empty output
means no signatures. Only this module spawns wipefs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from slogqual.tools import spawn as _run

PROGRAM = "wipefs"


@dataclass
class Signature:
    device: str
    offset: Optional[int]
    type: str
    uuid: Optional[str] = None
    label: Optional[str] = None


def available() -> bool:
    return _run.which(PROGRAM) is not None


def argv(device: str) -> List[str]:
    return [PROGRAM, "--no-act", "--json", device]


def _offset(v) -> Optional[int]:
    if v is None:
        return None
    try:
        return int(str(v), 0)
    except ValueError:
        return None


def parse(text: str) -> List[Signature]:
    """Signatures in ``wipefs -J`` output; empty text means none. ValueError on anything else."""
    if not text or not text.strip():
        return []
    doc = _run.loads_json(text, "wipefs output")
    if not isinstance(doc, dict) or not isinstance(doc.get("signatures"), list):
        raise ValueError("wipefs JSON has no 'signatures' list")
    out = []
    for s in doc["signatures"]:
        if not isinstance(s, dict) or not s.get("type"):
            continue
        out.append(Signature(device=str(s.get("device") or ""), offset=_offset(s.get("offset")),
                             type=str(s["type"]), uuid=s.get("uuid"), label=s.get("label")))
    return out


def list_signatures(device: str) -> List[Signature]:
    """ToolFailedError (wipefs's message) when wipefs cannot read the device, ToolTimeoutError when it
    hangs, ToolOutputError when its output is not wipefs JSON."""
    proc = _run.run(argv(device), timeout=60, typed_timeout=True, check=True)
    return _run.parse_output(proc, parse)
