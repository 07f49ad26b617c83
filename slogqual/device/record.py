"""The device identity record: what was measured, and how sure we are of each part.

A record is built from several tools; every field is either known (with its
source in ``sources``) or listed in ``unknown`` with the reason. Nothing is
guessed silently. ``to_dict()`` is the JSON that ``slogqual inspect --json``
prints and that every sweep result embeds under ``device`` (docs/devices.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from slogqual.report import powerloss
from slogqual.results import schema

RECORD_SCHEMA = schema.DEVICE

CLASSES = ("hdd", "sshd", "sata-ssd", "sas-ssd", "nvme", "optane", "nvdimm", "virtual", "unknown")
TRANSPORTS = ("sata", "sas", "scsi", "nvme", "pmem", "virtio", "loop", "nbd", "file", "usb", "md", "dm",
              "ram", "unknown")

WC_NONE = "no-volatile-cache"
WC_ENABLED = "volatile-cache-enabled"
WC_UNKNOWN = "unknown"

LINK_OK = "ok"
LINK_DEGRADED = "below-capability"
LINK_UNKNOWN = "unknown"
LINK_NA = "not-applicable"


@dataclass
class LinkEnd:
    speed: Optional[str] = None  # as the source printed it: "8.0 GT/s PCIe", "6.0 Gb/s"
    rate: Optional[float] = None  # GT/s (PCIe) or Gb/s (SATA/SAS)
    width: Optional[int] = None  # lanes (PCIe)

    def to_dict(self) -> Dict[str, Any]:
        return {"speed": self.speed, "rate": self.rate, "width": self.width}


@dataclass
class Link:
    kind: Optional[str] = None  # pcie | sata | sas
    scope: Optional[str] = None  # device (NVMe function) | controller (the HBA the disk hangs off)
    address: Optional[str] = None  # PCI address
    current: LinkEnd = field(default_factory=LinkEnd)
    max: LinkEnd = field(default_factory=LinkEnd)
    verdict: str = LINK_UNKNOWN
    reason: Optional[str] = None
    evidence: List[str] = field(default_factory=list)

    def to_dict(self) -> Dict[str, Any]:
        return {"kind": self.kind, "scope": self.scope, "address": self.address,
                "current": self.current.to_dict(), "max": self.max.to_dict(),
                "verdict": self.verdict, "reason": self.reason, "evidence": list(self.evidence)}


@dataclass
class WriteCache:
    verdict: str = WC_UNKNOWN
    reason: Optional[str] = None
    evidence: List[str] = field(default_factory=list)
    kernel: Optional[str] = None  # Linux queue/write_cache: "write back" | "write through"

    def to_dict(self) -> Dict[str, Any]:
        return {"verdict": self.verdict, "reason": self.reason, "evidence": list(self.evidence),
                "kernel": self.kernel}


@dataclass
class DeviceRecord:
    path: str
    kind: str = "block"  # block | file | nbd
    name: Optional[str] = None
    devnum: Optional[str] = None
    partition_of: Optional[str] = None
    model: Optional[str] = None
    vendor: Optional[str] = None
    serial: Optional[str] = None
    firmware: Optional[str] = None
    wwn: Optional[str] = None
    capacity: Optional[int] = None
    logical_sector: Optional[int] = None
    physical_sector: Optional[int] = None
    transport: str = "unknown"
    rotational: Optional[bool] = None
    rotation_rate: Optional[int] = None
    device_class: str = "unknown"
    class_evidence: List[str] = field(default_factory=list)
    emulated: Optional[bool] = None
    link: Link = field(default_factory=Link)
    controller_link: Optional[Link] = None  # PCIe link of the HBA a SATA/SAS disk hangs off
    write_cache: WriteCache = field(default_factory=WriteCache)
    unknown: Dict[str, str] = field(default_factory=dict)
    sources: Dict[str, str] = field(default_factory=dict)
    tools: Dict[str, str] = field(default_factory=dict)  # tool -> "used" | "absent" | "failed: why"
    tool_versions: Dict[str, str] = field(default_factory=dict)  # tool -> "7.3" for the tools used
    notes: List[str] = field(default_factory=list)
    platform: Optional[str] = None
    # the path from the host (results.shelf.UnitPath): sysfs on Linux, camcontrol / devinfo / pciconf on FreeBSD
    topology: Optional[Dict[str, Any]] = None

    def set(self, name: str, value: Any, source: str) -> None:
        """Set field name from source unless already known; clears it from unknown."""
        if value is None or value == "":
            return
        attr = "device_class" if name == "class" else name
        if getattr(self, attr) in (None, "", "unknown"):
            setattr(self, attr, value)
            self.sources[name] = source
            self.unknown.pop(name, None)

    def prefer(self, name: str, value: Any, source: str) -> None:
        """Set field name from source even if known: the device's own answer (ATA IDENTIFY, NVMe Identify)
        beats the kernel's SCSI-translated copy (sysfs truncates an ATA model to 16 and firmware to 4 chars)."""
        if value is None or value == "":
            return
        old = getattr(self, name)
        if old not in (None, "") and old != value:
            self.notes.append(f"{name}: {source} says {value!r}, {self.sources.get(name)} said {old!r}")
        setattr(self, name, value)
        self.sources[name] = source
        self.unknown.pop(name, None)

    def mark_unknown(self, name: str, why: str) -> None:
        attr = "device_class" if name == "class" else name
        if getattr(self, attr, None) in (None, "", "unknown") and name not in self.unknown:
            self.unknown[name] = why

    def warnings(self) -> List[str]:
        """Loud one-line warnings the sweep prints and records with the result."""
        out = []
        if self.write_cache.verdict == WC_ENABLED and self.transport == "pmem":
            out.append(f"VOLATILE CPU CACHE in front of {self.path}: writes are durable only once flushed, and only "
                       "if the NVDIMM and its platform really persist them (an emulated NVDIMM does not)")
        elif self.write_cache.verdict == WC_ENABLED:
            out.append(f"VOLATILE WRITE CACHE ENABLED on {self.path}: acknowledged sync writes survive a power "
                       "cut only if the cache is protected (PLP) or flushes are honoured; not measured "
                       "(slogqual powercut measures it)")
        for line in self.write_cache.evidence:
            if line.startswith("CONFLICT"):
                out.append(f"{self.path}: {line}")
        if self.link.verdict == LINK_DEGRADED:
            where = "its controller's" if self.link.scope == "controller" else "its"
            out.append(f"LINK BELOW CAPABILITY on {self.path}: {where} {self.link.kind or ''} link runs at "
                       f"{_end(self.link.current)} but can do {_end(self.link.max)}; bandwidth is capped"
                       + (" (some devices lower the link when idle: re-check under load)" if self.link.kind == "pcie" else ""))
        cl = self.controller_link
        if cl is not None and cl.verdict == LINK_DEGRADED:
            out.append(f"LINK BELOW CAPABILITY on the controller of {self.path} ({cl.address}): PCIe at "
                       f"{_end(cl.current)} but can do {_end(cl.max)}; every disk behind it is capped")
        return out

    def power_loss(self) -> Dict[str, Any]:
        """The power-loss verdict from what the record itself holds (the ``power_loss`` of ``to_dict``); the
        sweep's flush cost and a power-cut result join it where they exist (analysis.powerloss.with_evidence;
        report/powerloss words it)."""
        return powerloss.judge(self._fields())

    def to_dict(self) -> Dict[str, Any]:
        d = self._fields()
        d["power_loss"] = self.power_loss()
        return d

    def _fields(self) -> Dict[str, Any]:
        return {
            "schema": RECORD_SCHEMA,
            "path": self.path,
            "kind": self.kind,
            "name": self.name,
            "devnum": self.devnum,
            "partition_of": self.partition_of,
            "model": self.model,
            "vendor": self.vendor,
            "serial": self.serial,
            "firmware": self.firmware,
            "wwn": self.wwn,
            "capacity": self.capacity,
            "logical_sector": self.logical_sector,
            "physical_sector": self.physical_sector,
            "transport": self.transport,
            "rotational": self.rotational,
            "rotation_rate": self.rotation_rate,
            "class": self.device_class,
            "class_evidence": list(self.class_evidence),
            "emulated": self.emulated,
            "link": self.link.to_dict(),
            "controller_link": self.controller_link.to_dict() if self.controller_link else None,
            "write_cache": self.write_cache.to_dict(),
            "unknown": dict(self.unknown),
            "sources": dict(self.sources),
            "tools": dict(self.tools),
            "tool_versions": dict(self.tool_versions),
            "notes": list(self.notes),
            "warnings": self.warnings(),
            "platform": self.platform,
            "topology": self.topology,
        }


def _end(e: LinkEnd) -> str:
    parts = []
    if e.rate is not None:
        parts.append(f"{e.rate:g} {'GT/s' if e.width is not None or (e.speed or '').find('GT') >= 0 else 'Gb/s'}")
    elif e.speed:
        parts.append(e.speed)
    if e.width is not None:
        parts.append(f"x{e.width}")
    return " ".join(parts) or "?"
