"""camcontrol(8): ``camcontrol identify DEV`` (ATA), ``camcontrol inquiry DEV`` (SCSI) and
``camcontrol devlist -v`` (which bus each unit is on).

Both start with CAM's announce lines, the same the kernel prints at attach
time: ``pass0: <MODEL REV> ACS-3 ATA SATA 3.x device``,
``da0: Serial Number X``, ``pass0: 600.000MB/s transfers (SATA 3.x, ...)``.
``identify`` then prints ``key  value`` lines (device model, firmware
revision, serial number, sector size, media RPM) and a feature table whose
``write cache`` row has Support and Enabled columns.

``devlist -v`` prints each CAM bus as ``scbus14 on arcmsr0 bus 0:`` — the bus, the SIM (the HBA's
driver instance: mpr0, ahcich3 for one AHCI port, nvme0 for nda disks, umass-sim0) and the SIM's own
bus number — then a line per device on it, ``<inquiry>   at scbus14 target 1 lun 0 (pass0,da0)``, the
periph names in parentheses in no fixed order (sbin/camcontrol/camcontrol.c, getdevtree).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from slogqual.tools import spawn as _run

PROGRAM = "camcontrol"

_ANNOUNCE = re.compile(r"^(\w+[0-9]+):\s+<(.*)>\s+(.*?)\s*$")
_SERIAL = re.compile(r"^(\w+[0-9]+):\s+Serial Number\s+(.*?)\s*$")
_XFER = re.compile(r"^(\w+[0-9]+):\s+([0-9.]+)MB/s transfers(?:\s*\((.*)\))?")
# A feature row: the name padded to 30 columns and one space (a 30-character name is followed by that one
# space: "Data Set Management (DSM/TRIM) yes"), then Support and Enabled, which camcontrol separates by a
# tab ("yes\tyes") that a copy may have turned into spaces, then the Value.
_FEATURE = re.compile(r"^(\S.*?)\s+(yes|no)(?:\s+(yes|no))?(?=\s|$)")
# A field row: the key padded to 21 columns and one space ("Zoned-Device Commands no").
_KEY_WIDTH = 21
# "SATA 3.x" in the announce (the device's generation) and its transfers line (the negotiated revision):
# each revision's line rate, Gbit/s; the transfers line prints it as 150.000, 300.000, 600.000 MB/s
# (sys/cam/ata/ata_all.c, ata_revision2speed)
SATA_REVISION_GBPS = {"1": 1.5, "2": 3.0, "3": 6.0}


@dataclass
class Feature:
    supported: Optional[bool]
    enabled: Optional[bool]


@dataclass
class CamInfo:
    unit: Optional[str] = None  # pass0 / da0
    inquiry: Optional[str] = None  # "<...>" contents: vendor/model and revision
    device_kind: Optional[str] = None  # "ACS-3 ATA SATA 3.x device", "Fixed Direct Access SPC-4 SCSI device"
    serial: Optional[str] = None
    transfer_mbps: Optional[float] = None  # negotiated, MB/s
    transfer_detail: Optional[str] = None  # "SATA 3.x, UDMA6, PIO 8192bytes"
    model: Optional[str] = None
    firmware: Optional[str] = None
    wwn: Optional[str] = None
    logical_sector: Optional[int] = None
    physical_sector: Optional[int] = None
    sectors: Optional[int] = None  # LBA48 (or LBA) supported sectors
    media_rpm: Optional[int] = None  # 0 for "non-rotating"
    media_rpm_raw: Optional[str] = None
    features: Dict[str, Feature] = field(default_factory=dict)
    fields: Dict[str, str] = field(default_factory=dict)

    @property
    def write_cache(self) -> Optional[Feature]:
        return self.features.get("write cache")


def is_ata(info: CamInfo) -> bool:
    """Whether an inquiry (or the kernel's announce) shows an ATA device: a SATA disk behind a SAS HBA
    answers SCSI INQUIRY through the HBA's SAT layer with vendor "ATA" (``<ATA INTEL SSDSC2BA80 0270>``),
    and CAM announces ATA devices as ``ATA-9 SATA 3.x device``."""
    vendor = (info.inquiry or "").split(None, 1)[0] if info.inquiry else ""
    return vendor == "ATA" or bool(re.search(r"\b(?:ATA(?:-[0-9]+|8-ACS)?|ACS-[0-9]+ ATA)\b.*\bdevice\b|\bSATA\b",
                                             info.device_kind or ""))


def argv_devlist() -> List[str]:
    return [PROGRAM, "devlist", "-v"]


def argv_identify(device: str) -> List[str]:
    return [PROGRAM, "identify", device]


def argv_inquiry(device: str) -> List[str]:
    return [PROGRAM, "inquiry", device]


def _yesno(v: Optional[str]) -> Optional[bool]:
    if v is None:
        return None
    v = v.strip().lower()
    return True if v == "yes" else False if v == "no" else None


def parse(text: str) -> CamInfo:
    """identify or inquiry output. ValueError when nothing recognisable is in it."""
    info = CamInfo()
    in_features = False
    for raw in (text or "").splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        m = _ANNOUNCE.match(line)
        if m and info.inquiry is None:
            info.unit, info.inquiry, info.device_kind = m.group(1), m.group(2), m.group(3)
            continue
        m = _SERIAL.match(line)
        if m:
            info.serial = info.serial or (m.group(2) or None)
            continue
        m = _XFER.match(line)
        if m:
            info.transfer_mbps = float(m.group(2))
            info.transfer_detail = m.group(3)
            continue
        if re.match(r"^Feature\s{2,}Support", line):
            in_features = True
            continue
        cols = re.split(r"\s{2,}", line.strip())
        if in_features:
            m = _FEATURE.match(line.strip())
            if m:
                info.features[m.group(1).lower()] = Feature(supported=_yesno(m.group(2)), enabled=_yesno(m.group(3)))
            elif cols:
                info.features[cols[0].lower()] = Feature(supported=None, enabled=None)
            continue
        if len(cols) == 1 and len(line) > _KEY_WIDTH + 1 and line[_KEY_WIDTH] == " " and line[_KEY_WIDTH + 1] != " ":
            cols = [line[:_KEY_WIDTH].strip(), line[_KEY_WIDTH + 1:].strip()]
        if len(cols) >= 2:
            info.fields[cols[0].lower()] = cols[1]
        elif len(cols) == 1:
            info.fields.setdefault(cols[0].lower(), "")
    f = info.fields
    info.model = f.get("device model") or None
    info.firmware = f.get("firmware revision") or None
    info.serial = f.get("serial number") or info.serial
    info.wwn = f.get("wwn") or None
    m = re.search(r"logical\s+([0-9]+),\s*physical\s+([0-9]+)", f.get("sector size", ""))
    if m:
        info.logical_sector, info.physical_sector = int(m.group(1)), int(m.group(2))
    m = re.match(r"([0-9]+)\s+sectors", f.get("lba48 supported", "") or f.get("lba supported", ""))
    if m:
        info.sectors = int(m.group(1))
    rpm = f.get("media rpm")
    info.media_rpm_raw = rpm
    if rpm:
        if rpm.strip().lower().startswith("non-rotating"):
            info.media_rpm = 0
        elif rpm.strip().isdecimal():  # not isdigit: "²" is a digit int() cannot read
            info.media_rpm = int(rpm.strip())
    if info.inquiry is None and not info.fields and not info.features:
        raise ValueError("no camcontrol identify/inquiry lines found")
    if info.model is None and info.inquiry:
        # "<ST8000VN002-2ZM188 SC60>": model, then the revision as the last word
        parts = info.inquiry.rsplit(None, 1)
        info.model = parts[0] if len(parts) == 2 else info.inquiry
        info.firmware = info.firmware or (parts[1] if len(parts) == 2 else None)
    return info


def identify(device: str) -> CamInfo:
    proc = _run.run(argv_identify(device), timeout=30, typed_timeout=True, check=True)
    return _run.parse_output(proc, parse)


def inquiry(device: str) -> CamInfo:
    proc = _run.run(argv_inquiry(device), timeout=30, typed_timeout=True, check=True)
    return _run.parse_output(proc, parse)


# --- devlist -v ------------------------------------------------------------------------------------------

_BUS = re.compile(r"^scbus(-?[0-9]+)\s+on\s+(\S+?)\s+bus\s+([0-9]+):?\s*$")
_UNIT = re.compile(r"^<(.*)>\s+at\s+scbus(-?[0-9]+)\s+target\s+(-?[0-9]+)\s+lun\s+([0-9a-fA-F]+)\s+\((.*)\)\s*$")


@dataclass
class CamUnit:
    inquiry: str  # between the angle brackets; "" for the bus's own placeholder (target -1)
    target: int
    lun: str  # as printed, hex: "0", "ffffffff"
    periphs: List[str]  # "pass0", "da0"


@dataclass
class CamBus:
    scbus: int  # -1: the transport layer's own bus (xpt0)
    sim: str  # the SIM: mpr0, ahcich3, nvme0, arcmsr0, umass-sim0
    sim_bus: int  # the SIM's bus number (mrsas has 0 and 1)
    units: List[CamUnit] = field(default_factory=list)


def parse_devlist(text: str) -> List[CamBus]:
    """``camcontrol devlist -v``: every bus with its units. ValueError without a ``scbusN on SIM bus B``
    line (plain ``devlist`` names no SIM)."""
    buses: List[CamBus] = []
    for raw in (text or "").splitlines():
        line = raw.strip()
        m = _BUS.match(line)
        if m:
            buses.append(CamBus(int(m.group(1)), m.group(2), int(m.group(3))))
            continue
        m = _UNIT.match(line)
        if m and buses and int(m.group(2)) == buses[-1].scbus:
            periphs = [p.strip() for p in m.group(5).split(",") if p.strip()]
            buses[-1].units.append(CamUnit(m.group(1), int(m.group(3)), m.group(4).lower(), periphs))
    if not buses:
        raise ValueError("no 'scbusN on SIM bus B:' lines: not camcontrol devlist -v output")
    return buses


def bus_of(buses: List[CamBus], periph: str) -> Optional[CamBus]:
    """The bus the periph (da0, ada3, nda0) is on, or None when no bus lists it."""
    return next((b for b in buses for u in b.units if periph in u.periphs), None)


def devlist(host=None) -> List[CamBus]:
    from slogqual.tools.freebsd.host import LIVE

    proc = (host or LIVE).run(argv_devlist())
    if proc.returncode != 0:
        raise _run.failure(proc.args, proc.returncode, proc.stderr, proc.stdout)
    return _run.parse_output(proc, parse_devlist)
