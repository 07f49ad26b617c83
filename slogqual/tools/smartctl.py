"""smartctl (smartmontools) in JSON mode: identity, rotation, link speed and ATA/SCSI write cache.

``smartctl --json=c -i -g wcache DEV`` (``-i`` only for NVMe, where
``-g wcache`` does not apply). smartctl's exit status is a bit mask: bits 0
and 1 mean the command line or the device open failed, the higher bits are
about the disk's health and do not make the identity less true. Only this
module spawns smartctl.

Thermal and wear evidence (:func:`health`): ``smartctl --json=c -i -A -l devstat -l ssd -l error DEV``
adds the current temperature (``temperature.current``, ATA/SCSI/NVMe; SCSI also its trip
point) and, for NVMe, the SMART/Health log (``nvme_smart_health_information_log``:
temperature in Celsius, warning/critical composite temperature minutes, the
temperature sensors) and, from smartctl 7.5, ``nvme_composite_temperature_threshold``
(warning/critical). smartctl prints the thermal management transition counts
and times in its text output only (nvmeprint.cpp writes them with pout(), not
into the JSON tree), so for NVMe nvme-cli is the better source
(slogqual.tools.nvme.smart_log). The text of ``smartctl -a``/``-x`` (what a
smartctl older than 7.0 prints, and what most pasted reports are) is read by
:func:`parse_health_text` into the same SmartHealth, transition counts included.

Wear (read with the heat, compared by slogqual.analysis.wear), from the same run: NVMe's Percentage Used and
Data Units Written (the health log); an ATA device's Device Statistics (``-l devstat``: page 1 Logical
Sectors Written, page 7 Percentage Used Endurance Indicator); a SCSI device's Solid State Media log page
(``-l ssd``: its Percentage Used Endurance Indicator) and its Write Error Counter log page's total bytes
processed (``-l error``). smartctl hands each ``-l`` to the protocol it belongs to and ignores it for the
others (smartctl.cpp fills separate ATA, SCSI and NVMe option sets), so one argv serves every device. A log
the device does not have costs nothing but its absence: smartctl says so in text that ``--json`` drops
(``pout``), and a log read that fails sets exit status bit 2 (FAILSMART), which, like every bit above 1,
leaves the document usable.
"""

from __future__ import annotations

import math
import re
import subprocess
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from slogqual.errors import ToolTooOldError
from slogqual.tools import spawn as _run

if TYPE_CHECKING:  # only for the annotation: a FreeBSD host is handed in, never made here
    from slogqual.tools.freebsd.host import Host

PROGRAM = "smartctl"

EXIT_CMDLINE = 1 << 0
EXIT_OPEN = 1 << 1


@dataclass
class Speed:
    text: Optional[str]  # "6.0 Gb/s"
    gbps: Optional[float]


@dataclass
class SmartInfo:
    protocol: Optional[str] = None  # ATA | SCSI | NVMe
    device_type: Optional[str] = None  # sat, scsi, nvme, usbsunplus ...
    model: Optional[str] = None
    vendor: Optional[str] = None
    family: Optional[str] = None
    serial: Optional[str] = None
    firmware: Optional[str] = None
    capacity: Optional[int] = None
    logical_block_size: Optional[int] = None
    physical_block_size: Optional[int] = None
    rotation_rate: Optional[int] = None  # rpm; 0 = solid state
    form_factor: Optional[str] = None
    scsi_transport: Optional[str] = None  # "SAS (SPL-4)"
    link_max: Optional[Speed] = None
    link_current: Optional[Speed] = None
    write_cache_enabled: Optional[bool] = None
    exit_status: Optional[int] = None
    errors: List[str] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        """The device was opened and identified (the exit status bits 0/1 are clear)."""
        if self.exit_status is not None and self.exit_status & (EXIT_CMDLINE | EXIT_OPEN):
            return False
        return bool(self.model or self.serial or self.protocol)


VERSION_RE = r"smartctl (\d+)\.(\d+)"


def version(host: Optional["Host"] = None) -> _run.ToolVersion:
    """'smartctl 7.3 2022-02-28 r5338 ...' -> (7, 3); host: a FreeBSD host's smartctl (tools/freebsd/host.py)."""
    if host is not None:
        return host.version(PROGRAM, ["--version"], VERSION_RE)
    return _run.get_version(PROGRAM, ["--version"], VERSION_RE)


def check_version(host: Optional["Host"] = None) -> _run.ToolVersion:
    return _run.check_version(PROGRAM, version if host is None else lambda: version(host))


def available() -> bool:
    return _run.which(PROGRAM) is not None


def argv(device: str, nvme: bool = False) -> List[str]:
    cmd = [PROGRAM, "--json=c", "-i"]
    if not nvme:
        cmd += ["-g", "wcache"]
    return cmd + [device]


def argv_health(device: str) -> List[str]:
    """Identity (for the protocol and an ATA device's logical sector size), the SMART attributes / NVMe health
    log, which carry the temperature, and the wear logs (see the module's docstring): ``-l devstat`` (ATA
    only; all its pages, so page 1's sectors written too, not only the page 7 that ``-l ssd`` asks of ATA),
    ``-l ssd`` (SCSI's Solid State Media page) and ``-l error`` (SCSI's error counter log, with the bytes
    written). Kept apart from :func:`argv`: identification needs none of it, and -A is slower on some ATA
    bridges."""
    return [PROGRAM, "--json=c", "-i", "-A", "-l", "devstat", "-l", "ssd", "-l", "error", device]


def _number(v: Any) -> Optional[float]:
    """A finite JSON number (not a bool, not Infinity/NaN/1e999); None otherwise."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return v if math.isfinite(v) else None


def _speed(d: Any) -> Optional[Speed]:
    if not isinstance(d, dict):
        return None
    text = _s(d.get("string"))
    gbps = None
    ups, bpu = _number(d.get("units_per_second")), _number(d.get("bits_per_unit"))
    if ups is not None and bpu is not None:
        gbps = ups * bpu / 1e9
    elif isinstance(text, str):
        m = re.match(r"\s*([0-9.]+)\s*Gb/s", text)
        if m:
            gbps = float(m.group(1))
    return Speed(text=text, gbps=gbps)


def _s(v: Any) -> Optional[str]:
    if v is None or isinstance(v, (dict, list)):
        return None
    s = str(v).strip()
    return s or None


def _i(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _document(text: str):
    """(document, exit status, error messages) of smartctl JSON; ValueError on text that is not a smartctl
    JSON object. A field of the wrong type is not read."""
    if not text or not text.strip():
        raise ValueError("empty smartctl output")
    doc = _run.loads_json(text, "smartctl output")
    if not isinstance(doc, dict):
        raise ValueError("smartctl JSON is not an object")
    meta = doc.get("smartctl") if isinstance(doc.get("smartctl"), dict) else {}
    messages = meta.get("messages")
    errors = [str(m["string"]) for m in (messages if isinstance(messages, list) else [])
              if isinstance(m, dict) and m.get("severity") == "error" and m.get("string")]
    return doc, _i(meta.get("exit_status")), errors


def parse(text: str) -> SmartInfo:
    """Parse smartctl JSON. Raises ValueError on text that is not a smartctl JSON object."""
    doc, exit_status, errors = _document(text)
    info = SmartInfo()
    info.exit_status = exit_status
    info.errors.extend(errors)
    dev = doc.get("device") if isinstance(doc.get("device"), dict) else {}
    info.protocol = _s(dev.get("protocol"))
    info.device_type = _s(dev.get("type"))
    # SCSI: the product alone (scsi_model_name is vendor + product; the vendor has its own field)
    info.model = _s(doc.get("model_name")) or _s(doc.get("scsi_product")) or _s(doc.get("scsi_model_name"))
    info.vendor = _s(doc.get("scsi_vendor"))
    info.family = _s(doc.get("model_family"))
    info.serial = _s(doc.get("serial_number"))
    info.firmware = _s(doc.get("firmware_version")) or _s(doc.get("scsi_revision"))
    cap = doc.get("user_capacity")
    if isinstance(cap, dict):
        info.capacity = _i(cap.get("bytes"))
    if info.capacity is None:
        info.capacity = _i(doc.get("nvme_total_capacity"))
    info.logical_block_size = _i(doc.get("logical_block_size"))
    info.physical_block_size = _i(doc.get("physical_block_size"))
    info.rotation_rate = _i(doc.get("rotation_rate"))
    ff = doc.get("form_factor")
    if isinstance(ff, dict):
        info.form_factor = _s(ff.get("name"))
    tp = doc.get("scsi_transport_protocol")
    if isinstance(tp, dict):
        info.scsi_transport = _s(tp.get("name"))
    spd = doc.get("interface_speed")
    if isinstance(spd, dict):
        info.link_max = _speed(spd.get("max"))
        info.link_current = _speed(spd.get("current"))
    wc = doc.get("write_cache")
    if isinstance(wc, dict) and isinstance(wc.get("enabled"), bool):
        info.write_cache_enabled = wc["enabled"]
    return info


@dataclass
class SmartHealth:
    """Temperatures and, for NVMe, the thermal counters smartctl's JSON carries; the device's wear where it
    reports it in a standard log. None: not reported."""

    protocol: Optional[str] = None
    temperature_c: Optional[int] = None  # temperature.current (or the NVMe log's composite temperature)
    drive_trip_c: Optional[int] = None  # SCSI: temperature.drive_trip
    warning_temp_time_min: Optional[int] = None  # NVMe: minutes at or above WCTEMP
    critical_temp_time_min: Optional[int] = None  # NVMe: minutes at or above CCTEMP
    sensors_c: Optional[Dict[int, int]] = None  # NVMe: sensor number (1-8) -> Celsius
    critical_warning: Optional[int] = None  # NVMe
    warning_threshold_c: Optional[int] = None  # NVMe WCTEMP (7.5 JSON, or the text's "Warning  Comp. Temp. Threshold")
    critical_threshold_c: Optional[int] = None  # NVMe CCTEMP
    thm_temp1_trans_count: Optional[int] = None  # NVMe, text output only
    thm_temp2_trans_count: Optional[int] = None
    thm_temp1_total_time_s: Optional[int] = None
    thm_temp2_total_time_s: Optional[int] = None
    percentage_used: Optional[int] = None  # NVMe health log; SCSI Solid State Media; ATA Device Statistics page 7
    data_units_written: Optional[int] = None  # NVMe, units of 1000 512-byte blocks
    logical_sectors_written: Optional[int] = None  # ATA Device Statistics page 1: a count of logical sectors
    logical_sector_bytes: Optional[int] = None  # ATA: the logical sector those are counted in
    write_bytes_processed: Optional[int] = None  # SCSI Write Error Counter: bytes, to the nearest 10^6
    form: str = "json"  # "json" | "text": what was parsed
    exit_status: Optional[int] = None
    errors: List[str] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        """The device was opened and reported a temperature or an NVMe thermal counter."""
        if self.exit_status is not None and self.exit_status & (EXIT_CMDLINE | EXIT_OPEN):
            return False
        return any(v is not None for v in (self.temperature_c, self.warning_temp_time_min,
                                            self.critical_temp_time_min, self.sensors_c))


def _celsius(v: Any) -> Optional[int]:
    """A plausible Celsius reading (smartctl has already converted from Kelvin)."""
    n = _i(v)
    return n if n is not None and -273 < n < 1000 else None


def _counter(v: Any) -> Optional[int]:
    n = _i(v)
    return n if n is not None and n >= 0 else None


def parse_health(text: str) -> SmartHealth:
    """Temperatures from smartctl JSON (any of -a, -x, -A, --all). ValueError on text that is not a
    smartctl JSON object; a document without temperatures is a SmartHealth that is not ``usable``."""
    doc, exit_status, errors = _document(text)
    h = SmartHealth()
    h.exit_status = exit_status
    h.errors.extend(errors)
    dev = doc.get("device") if isinstance(doc.get("device"), dict) else {}
    h.protocol = _s(dev.get("protocol"))
    temp = doc.get("temperature")
    if isinstance(temp, dict):
        h.temperature_c = _celsius(temp.get("current"))
        h.drive_trip_c = _celsius(temp.get("drive_trip"))
    log = doc.get("nvme_smart_health_information_log")
    if isinstance(log, dict):
        if h.temperature_c is None:
            h.temperature_c = _celsius(log.get("temperature"))
        h.warning_temp_time_min = _counter(log.get("warning_temp_time"))
        h.critical_temp_time_min = _counter(log.get("critical_comp_time"))
        h.critical_warning = _counter(log.get("critical_warning"))
        h.percentage_used = _counter(log.get("percentage_used"))
        h.data_units_written = _counter(log.get("data_units_written"))
        sensors = log.get("temperature_sensors")
        if isinstance(sensors, list):
            # smartctl writes sensor i at index i-1, leaving null for one that does not report
            found = {i + 1: _celsius(v) for i, v in enumerate(sensors[:8])}
            h.sensors_c = {n: c for n, c in found.items() if c is not None} or None
    if h.percentage_used is None:  # a SCSI/SAS SSD's Solid State Media log page (SBC-3): the same estimate
        h.percentage_used = _counter(doc.get("scsi_percentage_used_endurance_indicator"))
    _ata_wear(doc, h)
    h.write_bytes_processed = _scsi_write_bytes(doc)
    limits = doc.get("nvme_composite_temperature_threshold")  # smartctl 7.5: {"warning": 70, "critical": 85}
    if isinstance(limits, dict):
        h.warning_threshold_c = _positive_celsius(limits.get("warning"))
        h.critical_threshold_c = _positive_celsius(limits.get("critical"))
    return h


# ATA Device Statistics (General Purpose Log 04h, ACS-2 on): a statistic is its page and byte offset there.
_DEVSTAT_SECTORS_WRITTEN = (1, 0x18)  # General Statistics: Logical Sectors Written (host writes, 6 bytes)
_DEVSTAT_PERCENTAGE_USED = (7, 0x08)  # Solid State Device Statistics: Percentage Used Endurance Indicator
# The vendor attributes of -A are not read for wear. Their ID, unit and even smartctl's name for them differ by
# vendor and model: 241 "Total_LBAs_Written" counts 512-byte sectors on a Samsung 860 EVO (its raw value equals
# its Device Statistics' Logical Sectors Written, tests/fixtures/smartctl/sata-ssd-samsung-860evo-devstat.json)
# but 32 MiB units on a Dell-certified Intel S3520 (there it equals 225 Host_Writes_32MiB: prometheus-community/
# smartctl_exporter testdata/sat-Dell_Certified_Intel_S3520_Series_SSDs-SSDSCKJB240G7R-sdm.json), and GiB on
# others; 177 Wear_Leveling_Count, 233 Media_Wearout_Indicator, 231 SSD_Life_Left and 202 Percent_Lifetime_Remain
# are normalised (100 down to 1, or 0) by a rule each vendor keeps to itself, some in steps, some floored, and
# 202's raw value is the used per cent on some drives. The Device Statistics say the same things in one
# standard unit each; a drive without them has no wear here rather than a guessed one.


def _device_statistics(doc: Dict[str, Any]) -> Dict[Tuple[int, int], int]:
    """The known values of smartctl's ``ata_device_statistics`` (``-l devstat``), by (page, offset). smartctl
    lists every statistic the device supports; a value counts only with its valid flag set (the device may
    support one it does not know yet)."""
    stats = doc.get("ata_device_statistics")
    pages = stats.get("pages") if isinstance(stats, dict) else None
    found: Dict[Tuple[int, int], int] = {}
    for page in pages if isinstance(pages, list) else []:
        table = page.get("table") if isinstance(page, dict) else None
        number = _i(page.get("number")) if isinstance(page, dict) else None
        for entry in table if isinstance(table, list) and number is not None else []:
            if not isinstance(entry, dict) or not isinstance(entry.get("flags"), dict):
                continue
            offset, value = _i(entry.get("offset")), _counter(entry.get("value"))
            if entry["flags"].get("valid") is True and offset is not None and value is not None:
                found[(number, offset)] = value
    return found


def _ata_wear(doc: Dict[str, Any], h: SmartHealth) -> None:
    """An ATA device's sectors written (with the logical sector size of the same document's identity, which
    they are counted in) and, when no other log gave one, its Percentage Used Endurance Indicator."""
    stats = _device_statistics(doc)
    sectors, size = stats.get(_DEVSTAT_SECTORS_WRITTEN), _i(doc.get("logical_block_size"))
    if sectors is not None and size is not None and size > 0:
        h.logical_sectors_written, h.logical_sector_bytes = sectors, size
    if h.percentage_used is None:
        h.percentage_used = stats.get(_DEVSTAT_PERCENTAGE_USED)


_GIGABYTES_TEXT = re.compile(r"[0-9]+\.[0-9]{3}")


def _scsi_write_bytes(doc: Dict[str, Any]) -> Optional[int]:
    """Bytes written as a SCSI device counts them: its Write Error Counter log page's total bytes processed
    (SPC parameter 0005h), which smartctl (``-l error``) prints as 10^9 bytes with three decimals
    ("2473.166", scsiprint.cpp: "%.3f" of the count / 1e9), so each reading is to the nearest 10^6 bytes.
    A reading of 0.000 is not one: smartctl prints it too for a device without the parameter. Any other form
    (a JSON number) is not read: its precision would be unknown."""
    log = doc.get("scsi_error_counter_log")
    write = log.get("write") if isinstance(log, dict) else None
    text = write.get("gigabytes_processed") if isinstance(write, dict) else None
    if not isinstance(text, str) or not _GIGABYTES_TEXT.fullmatch(text):
        return None
    return int(text.replace(".", "")) * 1_000_000 or None


def _positive_celsius(v: Any) -> Optional[int]:
    """A threshold: 0 is the NVMe "not reported"."""
    c = _celsius(v)
    return c if c is not None and c > 0 else None


# "Label:   value" lines of smartctl's NVMe text (nvmeprint.cpp) -> SmartHealth field
_TEXT_COUNTERS = {
    "critical warning": "critical_warning",
    "percentage used": "percentage_used",
    "data units written": "data_units_written",
    "warning comp. temperature time": "warning_temp_time_min",
    "critical comp. temperature time": "critical_temp_time_min",
    "thermal temp. 1 transition count": "thm_temp1_trans_count",
    "thermal temp. 2 transition count": "thm_temp2_trans_count",
    "thermal temp. 1 total time": "thm_temp1_total_time_s",
    "thermal temp. 2 total time": "thm_temp2_total_time_s",
}
_TEXT_TEMPERATURES = {"temperature": "temperature_c", "warning comp. temp. threshold": "warning_threshold_c",
                      "critical comp. temp. threshold": "critical_threshold_c"}
_U32 = 0xFFFFFFFF


def _text_number(value: str) -> Optional[int]:
    """'0x09' -> 9; '62,288,091 [31.8 TB]', '16%', '29.947.983', '16 829 004 [8,61 TB]' -> the integer before
    any bracket (smartctl groups digits by locale: ',', '.', ' ', or another separator)."""
    v = value.split("[", 1)[0].strip().rstrip("%").strip()
    if re.fullmatch(r"0x[0-9a-fA-F]+", v):
        return int(v, 16)
    if not re.fullmatch(r"[0-9](?:[0-9]|[^\w\s]|\s)*", v) or not v[-1].isdigit():
        return None
    return int(re.sub(r"\D", "", v))


def _text_celsius(value: str) -> Optional[int]:
    """'38 Celsius', '57 C' -> 38, 57."""
    m = re.match(r"^\s*(-?[0-9]{1,4})\s*(?:Celsius|C)\b", value)
    return _celsius(int(m.group(1))) if m else None


def parse_health_text(text: str) -> SmartHealth:
    """The SMART/Health Information (NVMe Log 0x02) section of ``smartctl -a``/``-x`` text, and the
    composite temperature thresholds of its information section. ValueError when no such section is there
    (an ATA/SCSI report, a device smartctl could not open, garbage)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty smartctl output")
    if not re.search(r"^SMART/Health Information \(NVMe Log 0x02", text, re.MULTILINE):
        raise ValueError("no 'SMART/Health Information (NVMe Log 0x02)' section in smartctl text")
    h = SmartHealth(protocol="NVMe", form="text")
    sensors: Dict[int, int] = {}
    for line in text.splitlines():
        label, sep, value = line.partition(":")
        if not sep:
            continue
        k = re.sub(r"\s+", " ", label.strip().lower())
        if k in _TEXT_COUNTERS:
            n = _text_number(value)
            cap = None if k in ("percentage used", "data units written") else _U32
            setattr(h, _TEXT_COUNTERS[k], n if n is not None and (cap is None or n <= cap) else None)
        elif k in _TEXT_TEMPERATURES:
            c = _text_celsius(value)
            if k != "temperature" and c is not None and c <= 0:
                c = None
            setattr(h, _TEXT_TEMPERATURES[k], c)
        else:
            m = re.fullmatch(r"temperature sensor ([1-8])", k)
            c = _text_celsius(value) if m else None
            if m and c is not None:
                sensors[int(m.group(1))] = c
    h.sensors_c = sensors or None
    return h


def argv_health_text(device: str) -> List[str]:
    """``smartctl -a DEV``: the text form, for a smartctl without JSON (before 7.0)."""
    return [PROGRAM, "-a", device]


def _finished(argv: List[str], host: Optional["Host"]) -> subprocess.CompletedProcess:
    if host is not None:
        return host.run(argv, timeout=60)
    return _run.run(argv, timeout=60, typed_timeout=True)


def health(device: str, host: Optional["Host"] = None) -> SmartHealth:
    """Run :func:`argv_health` on device for its temperatures and wear; a smartctl without JSON (ToolTooOldError
    from the version check) is asked for its ``-a`` text instead, read by :func:`parse_health_text`
    (NVMe only: an ATA/SCSI text report raises ToolOutputError). ToolTimeoutError when it hangs,
    ToolOutputError when its output cannot be read; a device smartctl cannot open is a SmartHealth that
    is not ``usable`` (``errors`` says why). host: where smartctl runs on FreeBSD (tools/freebsd/host.py:
    the live programs, or recorded ones in the tests); None, this host through run.run."""
    try:
        check_version() if host is None else check_version(host)  # this host's call is unchanged
    except ToolTooOldError:
        return _run.parse_output(_finished(argv_health_text(device), host), parse_health_text)
    return _run.parse_output(_finished(argv_health(device), host), parse_health)


def query(device: str, nvme: bool = False) -> SmartInfo:
    """Run smartctl on device. Its exit status bits land in the result (``usable``); ToolTooOldError
    for a smartctl without JSON, ToolTimeoutError when it hangs, ToolOutputError when its output
    cannot be parsed at all."""
    check_version()
    proc = _run.run(argv(device, nvme=nvme), timeout=60, typed_timeout=True)
    return _run.parse_output(proc, parse)
