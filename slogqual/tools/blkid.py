"""blkid (util-linux): low-level probing for filesystem, RAID, LVM, ZFS and partition-table signatures.

``blkid -p -o export DEV`` reads the device itself (not the blkid cache) and
prints KEY=value lines. Exit status 2 means "nothing found"; 8 means the probe
found more than one signature and would not choose ("ambivalent"), which for
a safety check is as good as a signature. Only this module spawns blkid.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from slogqual.errors import ToolTimeoutError
from slogqual.tools import spawn as _run

PROGRAM = "blkid"

RC_FOUND = 0
RC_NOTHING = 2
RC_AMBIVALENT = 8


@dataclass
class Probe:
    device: str
    found: bool
    values: Dict[str, str] = field(default_factory=dict)
    ambivalent: bool = False
    error: Optional[str] = None  # set when the probe itself failed (permission, no device)

    @property
    def type(self) -> Optional[str]:
        return self.values.get("TYPE")

    @property
    def pttype(self) -> Optional[str]:
        return self.values.get("PTTYPE")

    def signatures(self) -> List[str]:
        """Human names of what was found, e.g. ['ext4 filesystem', 'dos partition table']."""
        out = []
        if self.type:
            usage = self.values.get("USAGE")
            out.append(f"{self.type} {usage}" if usage and usage != "other" else self.type)
        if self.pttype:
            out.append(f"{self.pttype} partition table")
        if self.ambivalent and not out:
            out.append("several conflicting signatures (blkid: ambivalent result)")
        return out


def available() -> bool:
    return _run.which(PROGRAM) is not None


def argv(device: str) -> List[str]:
    # -p low-level probe, no cache; -o export KEY=value lines; -u/-s defaults probe
    # filesystems, RAID and LVM members and partition tables.
    return [PROGRAM, "-p", "-o", "export", device]


def parse_export(text: str) -> Dict[str, str]:
    values: Dict[str, str] = {}
    for line in (text or "").splitlines():
        line = line.strip()
        if not line or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip()
        if key and key.replace("_", "").isalnum() and key.upper() == key:
            values[key] = value.strip()
    return values


def from_result(device: str, returncode: int, stdout: str, stderr: str) -> Probe:
    if returncode == RC_NOTHING:
        return Probe(device=device, found=False)
    if returncode == RC_AMBIVALENT:
        return Probe(device=device, found=True, ambivalent=True, values=parse_export(stdout))
    if returncode != RC_FOUND:
        msg = (stderr or "").strip().splitlines()
        return Probe(device=device, found=False, error=msg[-1] if msg else f"blkid exited {returncode}")
    values = parse_export(stdout)
    found = bool(values.get("TYPE") or values.get("PTTYPE"))
    return Probe(device=device, found=found, values=values,
                 error=None if found or values else "blkid exited 0 but printed nothing it could parse")


def probe(device: str) -> Probe:
    """The probe; a failing or hanging blkid is recorded in ``Probe.error`` (the caller decides what
    an unprobed device means), a missing one is ToolMissingError."""
    try:
        proc = _run.run(argv(device), timeout=60, typed_timeout=True)
    except ToolTimeoutError as exc:
        return Probe(device=device, found=False, error=str(exc))
    return from_result(device, proc.returncode, proc.stdout, proc.stderr)
