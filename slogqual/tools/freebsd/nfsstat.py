"""nfsstat(1) on FreeBSD: ``nfsstat -m``, the options in force on each NFS client mount.

usr.bin/nfsstat/nfsstat.c prints, per mount, ``server:/path on /mountpoint`` and then one line of the
options the kernel client runs with (nfscl_retopts()): ``nfsv3`` or ``nfsv4,minorversion=N``, the
transport, ``hard``/``soft``, ``rsize=``, ``wsize=``, ``readahead=``, ``wcommitsize=``, ``timeout=`` ...
They are read into the same form as Linux's /proc/self/mountstats (slogqual.kernel.procfs.NfsMountStats):
``opts`` keeps every option as printed and adds the Linux names ``vers`` ('3', '4.2') and ``proto``
('tcp') so one reader serves both. Per-op counters are not part of this listing (``ops`` is empty).
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional

from slogqual.kernel.procfs import NfsMountStats

PROGRAM = "nfsstat"

_HEAD = re.compile(r"^(\S+:\S*) on (/.*?)\s*$")


def argv() -> List[str]:
    return [PROGRAM, "-m"]


def _opts(line: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for item in line.strip().split(","):
        if item:
            k, _, v = item.partition("=")
            out[k.strip()] = v.strip()
    if "nfsv4" in out:
        minor = out.get("minorversion")
        out["vers"] = f"4.{minor}" if minor and minor.isdigit() else "4"
    elif "nfsv3" in out:
        out["vers"] = "3"
    elif "nfsv2" in out:
        out["vers"] = "2"
    proto = next((p for p in ("tcp", "udp") if p in out), None)
    if proto:
        out["proto"] = proto
    return out


def parse(text: str) -> List[NfsMountStats]:
    """The mounts of ``nfsstat -m`` (empty text: none). ValueError on a mount line without its options
    line, or a line that is neither."""
    mounts: List[NfsMountStats] = []
    pending: Optional[NfsMountStats] = None
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            continue
        m = _HEAD.match(line)
        if m and pending is None:
            pending = NfsMountStats(m.group(1), m.group(2), "nfs", {}, {})
            continue
        if pending is None or " " in line or "=" not in line and "," not in line:
            raise ValueError(f"nfsstat -m: unexpected line {line[:80]!r}")
        pending.opts = _opts(line)
        mounts.append(pending)
        pending = None
    if pending is not None:
        raise ValueError(f"nfsstat -m: no options line for {pending.mountpoint}")
    return mounts


def find(text: str, mountpoint: str) -> Optional[NfsMountStats]:
    return next((m for m in parse(text) if m.mountpoint == mountpoint), None)
