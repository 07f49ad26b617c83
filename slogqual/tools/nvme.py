"""nvme (nvme-cli): Identify Controller and the Volatile Write Cache feature.

``nvme id-ctrl -o json /dev/nvmeN`` gives model (mn), serial (sn), firmware
(fr) and ``vwc``, whose bit 0 says whether a volatile write cache is present
at all. ``nvme get-feature -f 6 /dev/nvmeN`` tells whether that cache is
currently enabled (feature 06h, bit 0 = WCE). The plain ``field : value`` text
of id-ctrl (with or without ``-H``) is parsed too, for outputs users paste.
Only this module spawns nvme.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from slogqual.tools import run as _run

PROGRAM = "nvme"
FEATURE_VWC = 6


@dataclass
class IdCtrl:
    model: Optional[str] = None
    serial: Optional[str] = None
    firmware: Optional[str] = None
    vid: Optional[int] = None
    vwc: Optional[int] = None  # raw field; bit 0 = volatile write cache present
    version: Optional[int] = None
    total_capacity: Optional[int] = None  # tnvmcap, bytes

    @property
    def vwc_present(self) -> Optional[bool]:
        return None if self.vwc is None else bool(self.vwc & 1)


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
                  total_capacity=_num(f.get("tnvmcap")))


def parse_text(text: str) -> Dict[str, str]:
    """``field : value`` lines of nvme-cli's normal/-H output (bit-decode lines are skipped)."""
    fields: Dict[str, str] = {}
    for line in (text or "").splitlines():
        m = re.match(r"^([a-z][a-z0-9_]*)\s*:\s?(.*)$", line.strip())
        if m and not line.startswith((" ", "\t")):
            fields.setdefault(m.group(1), m.group(2).strip())
    return fields


def parse_id_ctrl(text: str) -> IdCtrl:
    """JSON (``-o json``) or normal text. ValueError when neither yields an Identify Controller."""
    if not text or not text.strip():
        raise ValueError("empty nvme id-ctrl output")
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            doc = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ValueError(f"nvme id-ctrl output is not valid JSON ({exc.msg})") from None
        if not isinstance(doc, dict):
            raise ValueError("nvme id-ctrl JSON is not an object")
        ident = _from_fields(doc)
    else:
        ident = _from_fields(parse_text(stripped))
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
