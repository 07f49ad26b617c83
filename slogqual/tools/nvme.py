"""nvme (nvme-cli): Identify Controller, the Volatile Write Cache feature and the SMART/Health log.

``nvme id-ctrl -o json /dev/nvmeN`` gives model (mn), serial (sn), firmware
(fr) and ``vwc``, whose bit 0 says whether a volatile write cache is present
at all. ``nvme get-feature -f 6 /dev/nvmeN`` tells whether that cache is
currently enabled (feature 06h, bit 0 = WCE). The plain ``field : value`` text
of id-ctrl (with or without ``-H``) is parsed too, for outputs users paste.
``nvme smart-log -o json /dev/nvmeN`` (log page 02h) gives the thermal evidence: composite
temperature, the minutes spent above the warning/critical composite temperature thresholds and the
host-controlled thermal management transition counts and times (:func:`parse_smart_log`, which
reads the normal text output of nvme-cli 1.x and 2.x as well). Only this module spawns nvme.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from slogqual.tools import spawn as _run

PROGRAM = "nvme"
FEATURE_VWC = 6


@dataclass
class IdCtrl:
    model: Optional[str] = None
    serial: Optional[str] = None
    firmware: Optional[str] = None
    vid: Optional[int] = None
    vwc: Optional[int] = None  # raw field; bit 0 = volatile write cache present
    version: Optional[int] = None  # VER: 0x10200 is NVMe 1.2.0 (major << 16 | minor << 8 | tertiary)
    total_capacity: Optional[int] = None  # tnvmcap, bytes
    wctemp: Optional[int] = None  # Warning Composite Temperature Threshold, Kelvin (0: not reported)
    cctemp: Optional[int] = None  # Critical Composite Temperature Threshold, Kelvin (0: not reported)

    @property
    def vwc_present(self) -> Optional[bool]:
        return None if self.vwc is None else bool(self.vwc & 1)

    @property
    def warning_threshold_c(self) -> Optional[int]:
        return _kelvin_to_c(self.wctemp)

    @property
    def critical_threshold_c(self) -> Optional[int]:
        return _kelvin_to_c(self.cctemp)


def version() -> _run.ToolVersion:
    """'nvme version 2.3 (git 2.3)' -> (2, 3)."""
    return _run.get_version(PROGRAM, ["version"], r"nvme version (\d+)\.(\d+)")


def check_version() -> _run.ToolVersion:
    return _run.check_version(PROGRAM, version)


def available() -> bool:
    return _run.which(PROGRAM) is not None


def argv_id_ctrl(ctrl: str) -> List[str]:
    return [PROGRAM, "id-ctrl", "-o", "json", ctrl]


def argv_get_vwc(ctrl: str) -> List[str]:
    return [PROGRAM, "get-feature", ctrl, "-f", str(FEATURE_VWC)]


def argv_smart_log(ctrl_or_ns: str) -> List[str]:
    """The SMART/Health log (02h). nvme-cli asks for the controller-wide log (NSID ffffffff) whether it
    is given the controller (/dev/nvme0) or a namespace (/dev/nvme0n1)."""
    return [PROGRAM, "smart-log", "-o", "json", ctrl_or_ns]


def _num(v: Any) -> Optional[int]:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        t = v.strip().replace(",", "")
        try:
            return int(t, 0)
        except ValueError:
            try:
                return int(t, 16) if re.fullmatch(r"[0-9a-fA-F]+", t) else None
            except ValueError:
                return None
    return None


def _str(v: Any) -> Optional[str]:
    if v is None or isinstance(v, (bool, dict, list)):  # a field of the wrong type is not read
        return None
    s = str(v).strip()
    return s or None


def _from_fields(f: Dict[str, Any]) -> IdCtrl:
    return IdCtrl(model=_str(f.get("mn")), serial=_str(f.get("sn")), firmware=_str(f.get("fr")),
                  vid=_num(f.get("vid")), vwc=_num(f.get("vwc")), version=_num(f.get("ver")),
                  total_capacity=_num(f.get("tnvmcap")), wctemp=_num(f.get("wctemp")), cctemp=_num(f.get("cctemp")))


def _hex(v: Optional[str]) -> Optional[int]:
    """A field nvme-cli's text output prints in hex, with or without ``0x``: 1.x prints VER with
    ``%x`` (``10200``), 2.x with ``%#x`` (``0x10200``); both are 1.2.0, never ten thousand two hundred."""
    t = (v or "").strip()
    t = t[2:] if t[:2].lower() == "0x" else t
    return int(t, 16) if re.fullmatch(r"[0-9a-fA-F]{1,8}", t) else None


# A note after the value, as people annotate what they paste ("sn        : S5RTNC0T104269  # serial number"):
# nvme-cli itself prints none (its sn, mn and fr are the right-trimmed fields, with -H as without), so a
# '#' between blanks ends the value; one inside a word ("A#1") does not.
_NOTE_RE = re.compile(r"\s+#(\s.*)?$")


def parse_text(text: str) -> Dict[str, str]:
    """``field : value`` lines of nvme-cli's normal/-H output (bit-decode lines are skipped; a pasted
    ``# note`` after a value is not part of it)."""
    fields: Dict[str, str] = {}
    for line in (text or "").splitlines():
        m = re.match(r"^([a-z][a-z0-9_]*)\s*:\s?(.*)$", line.strip())
        if m and not line.startswith((" ", "\t")):
            fields.setdefault(m.group(1), _NOTE_RE.sub("", m.group(2)).strip())
    return fields


def _json_object(text: str, what: str) -> Dict[str, Any]:
    """The JSON object nvme-cli printed (``-o json``); ValueError naming the command otherwise."""
    doc = _run.loads_json(text, f"{what} output")
    if not isinstance(doc, dict):
        raise ValueError(f"{what} JSON is not an object")
    return doc


def parse_id_ctrl(text: str) -> IdCtrl:
    """JSON (``-o json``) or normal text. ValueError when neither yields an Identify Controller."""
    if not text or not text.strip():
        raise ValueError("empty nvme id-ctrl output")
    stripped = text.strip()
    if stripped.startswith("{"):
        ident = _from_fields(_json_object(stripped, "nvme id-ctrl"))
    else:
        fields = parse_text(stripped)
        ident = _from_fields(fields)
        ident.version = _hex(fields.get("ver"))
    if ident.model is None and ident.serial is None and ident.vwc is None:
        raise ValueError("no Identify Controller fields (mn, sn, vwc) in nvme output")
    return ident


def parse_get_vwc(text: str) -> Optional[bool]:
    """'get-feature:0x06 (Volatile Write Cache), Current value:0x00000001' -> True; None if absent.

    nvme-cli prints the value in hex, with or without the 0x prefix depending on version.
    """
    for line in (text or "").splitlines():
        if "volatile write cache" not in line.lower():
            continue
        m = re.search(r"current value\s*:\s*(?:0x)?([0-9a-fA-F]+)", line, re.IGNORECASE)
        if m:
            return bool(int(m.group(1), 16) & 1)
    return None


# --- SMART / Health Information log (02h): the thermal evidence -------------------------------------------

KELVIN_OFFSET = 273  # nvme-cli and smartctl both use 273, not 273.15
MAX_KELVIN = 0xFFFF  # a 16-bit field


def _kelvin_to_c(k: Optional[int]) -> Optional[int]:
    """Celsius of a Kelvin field; None for 0 (the spec's "not reported") or a value that cannot be one."""
    if k is None or k <= 0 or k > MAX_KELVIN:
        return None
    return k - KELVIN_OFFSET


@dataclass
class SmartLog:
    """The thermal part of an NVMe SMART/Health log. None: the log did not say (a field nvme-cli did
    not print, or printed in a form not understood), never 0."""

    temperature_c: Optional[int] = None  # composite temperature
    warning_temp_time_min: Optional[int] = None  # minutes at or above WCTEMP, over the device's life
    critical_temp_time_min: Optional[int] = None  # minutes at or above CCTEMP
    thm_temp1_trans_count: Optional[int] = None  # transitions into host-controlled thermal management level 1
    thm_temp2_trans_count: Optional[int] = None  # ... level 2 (heavier throttling)
    thm_temp1_total_time_s: Optional[int] = None  # seconds spent in HCTM level 1
    thm_temp2_total_time_s: Optional[int] = None
    sensors_c: Optional[Dict[int, int]] = None  # temperature sensor number (1-8) -> Celsius, reported ones only
    critical_warning: Optional[int] = None  # bit 1: temperature above/below a threshold right now
    # wear (the log's endurance fields, read beside the heat for slogqual.analysis.wear)
    percentage_used: Optional[int] = None  # the vendor's estimate of the rated life used, may pass 100
    data_units_written: Optional[int] = None  # host writes in units of 1000 512-byte blocks, rounded up
    form: Optional[str] = None  # "json" | "text": what was parsed

    @property
    def over_temperature_now(self) -> Optional[bool]:
        return None if self.critical_warning is None else bool(self.critical_warning & 0x2)

    def to_dict(self) -> Dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        if self.sensors_c is not None:
            d["sensors_c"] = {str(k): v for k, v in sorted(self.sensors_c.items())}
        return d


# JSON keys (nvme-cli 1.x and 2.x; some 2.x builds capitalise "Temperature") and the text labels of the
# normal output (1.x: "Warning Temperature Time", 2.x the same; lowercase snake keys in both) -> field.
_SMART_COUNTERS = {
    "warning_temp_time": "warning_temp_time_min",
    "warning temperature time": "warning_temp_time_min",
    "critical_comp_time": "critical_temp_time_min",
    "critical composite temperature time": "critical_temp_time_min",
    "thm_temp1_trans_count": "thm_temp1_trans_count",
    "thermal management t1 trans count": "thm_temp1_trans_count",
    "thm_temp2_trans_count": "thm_temp2_trans_count",
    "thermal management t2 trans count": "thm_temp2_trans_count",
    "thm_temp1_total_time": "thm_temp1_total_time_s",
    "thermal management t1 total time": "thm_temp1_total_time_s",
    "thm_temp2_total_time": "thm_temp2_total_time_s",
    "thermal management t2 total time": "thm_temp2_total_time_s",
    "critical_warning": "critical_warning",
}
# the endurance fields: 128-bit (data units) or one byte (percentage) counters, not limited to 32 bits
_WEAR_COUNTERS = {
    "percent_used": "percentage_used",  # nvme-cli 1.x JSON
    "percentage_used": "percentage_used",  # nvme-cli 2.x JSON, both versions' text
    "percentage used": "percentage_used",
    "data_units_written": "data_units_written",
    "data units written": "data_units_written",
}
_SENSOR_JSON = re.compile(r"^temperature_sensor_([1-8])$")
_SENSOR_TEXT = re.compile(r"^temperature sensor ([1-8])$")
_U32 = 0xFFFFFFFF


def _count(v: Any) -> Optional[int]:
    """A non-negative counter from JSON: an int, an integral float (nvme-cli 1.x prints 128-bit fields as
    long double), or a decimal string (some 2.x builds); None for anything else."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v if v >= 0 else None
    if isinstance(v, float):
        return int(v) if v.is_integer() and 0 <= v < 2.0 ** 128 else None
    if isinstance(v, str):
        t = v.strip().replace(",", "")
        return int(t) if re.fullmatch(r"[0-9]{1,40}", t) else None
    return None


def _text_count(value: str) -> Optional[int]:
    """'1,784,910' or '462760 (236.93 GB)' -> the leading integer."""
    m = re.match(r"^([0-9][0-9,]*)(?:\s|$|%)", value.strip())
    if not m:
        return None
    return _count(m.group(1))


def _text_temperature(value: str) -> Optional[int]:
    """'34 C', '32 C (305 Kelvin)', '33 °C (306 K, 91 °F)' -> Celsius (from the Kelvin figure when given)."""
    v = value.strip()
    m = re.search(r"(?<![\d.-])([0-9]{1,5})\s*(?:K|Kelvin)\b", v)
    if m:
        return _kelvin_to_c(int(m.group(1)))
    m = re.match(r"^(-?[0-9]{1,4})\s*(?:°\s*)?C\b", v)
    if m:
        return int(m.group(1))
    m = re.match(r"^(-?[0-9]{1,4})\s*(?:°\s*)?F\b", v)
    if m:
        return round((int(m.group(1)) - 32) * 5 / 9)
    return None


def _smart_from_json(doc: Dict[str, Any]) -> SmartLog:
    log = SmartLog(form="json")
    sensors: Dict[int, int] = {}
    for key, value in doc.items():
        k = str(key).strip().lower()
        if k == "temperature":
            log.temperature_c = _kelvin_to_c(_count(value))
        elif k in _SMART_COUNTERS:
            if k == "critical_warning" and isinstance(value, dict):  # nvme-cli 2.x -H: bits decoded
                value = next((v for kk, v in value.items() if str(kk).lower() == "value"), None)
            n = _count(value)
            setattr(log, _SMART_COUNTERS[k], n if n is None or n <= _U32 else None)
        elif k in _WEAR_COUNTERS:
            setattr(log, _WEAR_COUNTERS[k], _count(value))
        else:
            m = _SENSOR_JSON.match(k)
            if m:
                c = _kelvin_to_c(_count(value))
                if c is not None:
                    sensors[int(m.group(1))] = c
    log.sensors_c = sensors or None
    return log


def _smart_from_text(text: str) -> SmartLog:
    log = SmartLog(form="text")
    sensors: Dict[int, int] = {}
    for line in text.splitlines():
        if ":" not in line or line.lstrip().lower().startswith("smart log for"):
            continue
        label, _, value = line.partition(":")
        k = re.sub(r"\s+", " ", label.strip().lower())
        if k == "temperature":
            log.temperature_c = _text_temperature(value)
        elif k in _SMART_COUNTERS:
            n = _text_count(value)
            setattr(log, _SMART_COUNTERS[k], n if n is None or n <= _U32 else None)
        elif k in _WEAR_COUNTERS:
            setattr(log, _WEAR_COUNTERS[k], _text_count(value))
        else:
            m = _SENSOR_TEXT.match(k)
            if m:
                c = _text_temperature(value)
                if c is not None:
                    sensors[int(m.group(1))] = c
    log.sensors_c = sensors or None
    return log


_THERMAL_FIELDS = ("temperature_c", "warning_temp_time_min", "critical_temp_time_min", "thm_temp1_trans_count",
                   "thm_temp2_trans_count", "thm_temp1_total_time_s", "thm_temp2_total_time_s", "sensors_c")


def parse_smart_log(text: str) -> SmartLog:
    """``nvme smart-log`` output, JSON (``-o json``) or normal text, nvme-cli 1.x or 2.x. ValueError
    (a ToolOutputError through :func:`run.parse_text`) when it holds no thermal field at all."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty nvme smart-log output")
    stripped = text.strip()
    if stripped.startswith("{"):
        log = _smart_from_json(_json_object(stripped, "nvme smart-log"))
    else:
        log = _smart_from_text(stripped)
    if all(getattr(log, f) is None for f in _THERMAL_FIELDS):
        raise ValueError("no SMART/Health thermal fields (temperature, warning_temp_time, thm_temp*) in nvme "
                         "smart-log output")
    return log


def smart_log(ctrl: str) -> SmartLog:
    """The SMART/Health log of controller ``ctrl`` (/dev/nvmeN). ToolFailedError, ToolTimeoutError, or
    ToolOutputError when what comes back is no SMART log."""
    proc = _run.run(argv_smart_log(ctrl), timeout=30, typed_timeout=True, check=True)
    return _run.parse_output(proc, parse_smart_log)


def id_ctrl(ctrl: str) -> IdCtrl:
    """ToolFailedError, ToolTimeoutError or ToolOutputError when no Identify Controller comes back."""
    proc = _run.run(argv_id_ctrl(ctrl), timeout=30, typed_timeout=True, check=True)
    return _run.parse_output(proc, parse_id_ctrl)


def get_vwc_enabled(ctrl: str) -> Optional[bool]:
    """Whether the volatile write cache is on; None when the controller does not answer feature 06h
    (a failing exit: not every controller implements it). ToolTimeoutError when nvme hangs."""
    proc = _run.run(argv_get_vwc(ctrl), timeout=30, typed_timeout=True)
    if proc.returncode != 0:
        return None
    return parse_get_vwc(proc.stdout)
