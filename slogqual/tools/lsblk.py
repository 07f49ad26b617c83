"""lsblk (util-linux): block devices as JSON (``lsblk -J -b -O``).

Only this module spawns lsblk. Parsing tolerates older util-linux releases
(``mountpoint`` instead of ``mountpoints``, sizes as strings, missing columns)
and reports what it could not read instead of failing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from slogqual.tools import spawn as _run

PROGRAM = "lsblk"


@dataclass
class LsblkDevice:
    name: str
    kname: Optional[str] = None
    path: Optional[str] = None
    devnum: Optional[str] = None  # "MAJ:MIN"
    type: Optional[str] = None  # disk, part, loop, rom, lvm, crypt, raid1 ...
    size: Optional[int] = None  # bytes
    model: Optional[str] = None
    vendor: Optional[str] = None
    serial: Optional[str] = None
    revision: Optional[str] = None
    wwn: Optional[str] = None
    transport: Optional[str] = None  # lsblk TRAN: sata, sas, nvme, usb, iscsi, fc ...
    rotational: Optional[bool] = None
    logical_sector: Optional[int] = None
    physical_sector: Optional[int] = None
    fstype: Optional[str] = None
    pttype: Optional[str] = None
    mountpoints: List[str] = field(default_factory=list)
    read_only: Optional[bool] = None
    children: List["LsblkDevice"] = field(default_factory=list)

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()


def version() -> _run.ToolVersion:
    """'lsblk from util-linux 2.38.1' -> (2, 38): major.minor is what device records keep."""
    return _run.get_version(PROGRAM, ["--version"], r"util-linux (\d+)\.(\d+)")


def available() -> bool:
    return _run.which(PROGRAM) is not None


def argv(path: Optional[str] = None) -> List[str]:
    cmd = [PROGRAM, "-J", "-b", "-O"]
    if path:
        cmd.append(path)
    return cmd


def _str(v: Any) -> Optional[str]:
    if v is None or isinstance(v, (bool, dict, list)):  # a field of the wrong type is not read
        return None
    s = str(v).strip()
    return s or None


def _int(v: Any) -> Optional[int]:
    if v is None or isinstance(v, bool):
        return None
    try:
        return _run.whole(str(v).strip())
    except ValueError:
        return None


def _bool(v: Any) -> Optional[bool]:
    if isinstance(v, bool):
        return v
    if v in ("1", 1):
        return True
    if v in ("0", 0):
        return False
    return None


def _device(d: Dict[str, Any]) -> LsblkDevice:
    mps = d.get("mountpoints")
    if mps is None and "mountpoint" in d:
        mps = [d.get("mountpoint")]
    if not isinstance(mps, list):  # a field of the wrong type is not read
        mps = []
    children = d.get("children")
    dev = LsblkDevice(
        name=_str(d.get("name")) or "?",
        kname=_str(d.get("kname")),
        path=_str(d.get("path")),
        devnum=_str(d.get("maj:min")),
        type=_str(d.get("type")),
        size=_int(d.get("size")),
        model=_str(d.get("model")),
        vendor=_str(d.get("vendor")),
        serial=_str(d.get("serial")),
        revision=_str(d.get("rev")),
        wwn=_str(d.get("wwn")),
        transport=_str(d.get("tran")),
        rotational=_bool(d.get("rota")),
        logical_sector=_int(d.get("log-sec")),
        physical_sector=_int(d.get("phy-sec")),
        fstype=_str(d.get("fstype")),
        pttype=_str(d.get("pttype")),
        mountpoints=[m for m in mps if isinstance(m, str) and m],
        read_only=_bool(d.get("ro")),
    )
    dev.children = [_device(c) for c in (children if isinstance(children, list) else []) if isinstance(c, dict)]
    return dev


def parse(text: str) -> List[LsblkDevice]:
    """Top-level devices of ``lsblk -J`` output. Raises ValueError on text that is not lsblk JSON."""
    if not text or not text.strip():
        raise ValueError("empty lsblk output")
    doc = _run.loads_json(text, "lsblk output")
    if not isinstance(doc, dict) or not isinstance(doc.get("blockdevices"), list):
        raise ValueError("lsblk JSON has no 'blockdevices' list")
    return [_device(d) for d in doc["blockdevices"] if isinstance(d, dict)]


def query(path: Optional[str] = None) -> List[LsblkDevice]:
    """Run lsblk (for one device, or all): ToolFailedError with lsblk's own message when it fails,
    ToolTimeoutError when it hangs, ToolOutputError when its output is not lsblk JSON."""
    proc = _run.run(argv(path), timeout=30, typed_timeout=True, check=True)
    return _run.parse_output(proc, parse)
