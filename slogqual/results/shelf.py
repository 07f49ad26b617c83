"""The shelf's typed facts (issue #30): the path from the host to each unit as sysfs (Linux) or
camcontrol, devinfo and pciconf (FreeBSD) show it (``UnitPath``: its elements, each with the link it
negotiated), and what slogqual.analysis.shelf makes of a shelf's figures on those paths
(``ShelfAnalysis``: the shared elements with their ceilings, the findings as kinds with their figures).
Built by slogqual.device.topology and slogqual.device.freebsd_topology (the paths) and
slogqual.analysis.shelf (the analysis); words for people are slogqual.report.shelf's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional

# element kinds
PCI_HOST, PCI_BRIDGE, PCI_FUNCTION = "pci-host-bridge", "pci-bridge", "pci-function"
SCSI_HOST, SAS_PORT, SAS_EXPANDER, SAS_END_DEVICE = "scsi-host", "sas-port", "sas-expander", "sas-end-device"
ATA_PORT, NVME_CONTROLLER, VIRTIO = "ata-port", "nvme-controller", "virtio"

# what read a path (UnitPath.source): Linux's sysfs; FreeBSD's camcontrol (devlist -v, and the disk's identify or
# inquiry for its own link) with devinfo -rv and pciconf -lvc for the PCI part above the SIM
SOURCE_SYSFS, SOURCE_CAMCONTROL = "sysfs", "camcontrol"


@dataclass
class Link:
    """A negotiated link: ``kind`` pcie (rate in GT/s per lane), sas or sata (Gbit/s per lane)."""

    kind: str
    rate: Optional[float]  # per lane, as negotiated; None: not trained or not reported ("Unknown")
    lanes: Optional[int]
    max_rate: Optional[float] = None  # what the element can do
    max_lanes: Optional[int] = None
    rates: List[Optional[float]] = field(default_factory=list)  # a SAS port: each phy's negotiated rate
    evidence: str = ""

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Link":
        return cls(kind=d["kind"], rate=d.get("rate"), lanes=d.get("lanes"), max_rate=d.get("max_rate"),
                   max_lanes=d.get("max_lanes"), rates=list(d.get("rates") or []), evidence=d.get("evidence", ""))

    def text(self) -> str:
        unit = "GT/s" if self.kind == "pcie" else "Gb/s"
        rate = f"{self.rate:g} {unit}" if self.rate else "unknown speed"
        lanes = f"x{self.lanes}" if self.lanes else "x?"
        return f"{self.kind.upper() if self.kind != 'pcie' else 'PCIe'} {rate} {lanes}"


@dataclass
class Element:
    kind: str
    name: str  # sysfs's directory name: 0000:03:00.0, host0, port-0:0, ata3; FreeBSD: ahci0@pci0:1:0:0, ahcich0
    key: str  # what tells two units' elements apart or the same: its path under /sys/devices (FreeBSD: see
    # device/freebsd_topology.py)
    link: Optional[Link] = None
    pci_class: Optional[str] = None
    vendor: Optional[str] = None
    device: Optional[str] = None
    description: Optional[str] = None  # what people call it (lspci -tv's, pciconf -lv's names), where known
    declared_ceiling: Optional[float] = None  # bytes/s a user declared for it (analysis.path_ceiling)
    declared: Optional[str] = None  # ... as the --path-ceiling they gave

    def label(self) -> str:
        what = {PCI_HOST: "PCI host bridge", PCI_BRIDGE: "PCIe port", PCI_FUNCTION: "PCI function",
                SCSI_HOST: "SCSI host", SAS_PORT: "SAS port", SAS_EXPANDER: "SAS expander",
                SAS_END_DEVICE: "SAS end device", ATA_PORT: "ATA port", NVME_CONTROLLER: "NVMe controller",
                VIRTIO: "virtio device"}.get(self.kind, self.kind)
        return f"{what} {self.name}" + (f" ({self.description})" if self.description else "")

    def to_dict(self) -> Dict[str, Any]:
        d = asdict(self)
        return {k: v for k, v in d.items() if v is not None}

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Element":
        return cls(kind=d["kind"], name=d["name"], key=d["key"],
                   link=Link.from_dict(d["link"]) if d.get("link") else None, pci_class=d.get("pci_class"),
                   vendor=d.get("vendor"), device=d.get("device"), description=d.get("description"),
                   declared_ceiling=d.get("declared_ceiling"), declared=d.get("declared"))


@dataclass
class UnitPath:
    """A block device's path from the host down: ``elements`` in that order (the host bridge first)."""

    device: str  # /dev/NAME
    elements: List[Element] = field(default_factory=list)
    syspath: str = ""  # the device's directory under /sys/devices (FreeBSD: its SIM's newbus path)
    error: Optional[str] = None  # why there is no path (a file, a loop device, not in sysfs)
    notes: List[str] = field(default_factory=list)  # what of the path is unknown, and why
    source: Optional[str] = None  # SOURCE_SYSFS or SOURCE_CAMCONTROL; None in paths recorded before it was kept

    @property
    def slot(self) -> Optional[Element]:
        """The element nearest the unit that has a link of its own: its slot (the NVMe controller's PCI
        function, the expander phy's port, the ATA port, the HBA for a direct-attached disk)."""
        for e in reversed(self.elements):
            if e.link is not None:
                return e
        return None

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"device": self.device, "syspath": self.syspath,
                             "elements": [e.to_dict() for e in self.elements]}
        if self.error:
            d["error"] = self.error
        if self.notes:
            d["notes"] = list(self.notes)
        if self.source:
            d["source"] = self.source
        return d

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "UnitPath":
        return cls(device=d["device"], elements=[Element.from_dict(e) for e in d.get("elements") or []],
                   syspath=d.get("syspath", ""), error=d.get("error"), notes=list(d.get("notes") or []),
                   source=d.get("source"))


# --- the shelf document read back (slogqual.shelf/1: sweep --probe, qualify --parallel --probe) ----------


@dataclass
class ProbedSize:
    """One size of a shelf document: the units' sum alone, their aggregate together, the findings'
    words as the analysis wrote them."""

    size: int
    alone_sum: float
    together: Optional[float]
    findings: List[str] = field(default_factory=list)
    depth: int = 1  # writes in flight per unit (1: write + flush pairs; more: shelf_probe's fio round)

    @property
    def label(self) -> str:
        from slogqual.units import size_label

        return size_label(self.size) + (f" QD{self.depth}" if self.depth != 1 else "")


@dataclass
class ShelfResult:
    """A ``slogqual.shelf/1`` document as the reports read it: the units, their paths, each size."""

    units: List[str]
    paths: List[UnitPath]
    runtime_s: float
    started: str = ""
    sizes: List[ProbedSize] = field(default_factory=list)

    @classmethod
    def from_dict(cls, doc: Any, source: str = "<document>") -> "ShelfResult":
        from slogqual.results import schema as S
        from slogqual.results.device import check_topology

        doc = S.upgrade(doc, S.SHELF, source)
        c = S.Checker(source)
        units = c.texts(doc, "units", required=True)
        paths = []
        for i, p in enumerate(c.items(doc, "paths")):
            check_topology(c, c.table(p, f"paths[{i}]"), f"paths[{i}]")
            paths.append(UnitPath.from_dict(p))
        sizes = []
        for i, s in enumerate(c.items(doc, "sizes")):
            w = f"sizes[{i}]"
            s = c.table(s, w)
            a = c.obj(s, "analysis", w)
            words = []
            for j, f in enumerate(c.items(a, "findings", f"{w}.analysis", required=False)):
                words.append(c.text(c.table(f, f"{w}.analysis.findings[{j}]"), "words", f"{w}.analysis.findings[{j}]"))
            sizes.append(ProbedSize(c.integer(s, "size", w, minimum=1), c.number(a, "alone_sum", f"{w}.analysis"),
                                    c.number(a, "together", f"{w}.analysis", required=False), words,
                                    c.integer(s, "depth", w, required=False, minimum=1) or 1))
        return cls(units, paths, c.number(doc, "runtime_s", minimum=0), c.text(doc, "started", required=False) or "",
                   sizes)
