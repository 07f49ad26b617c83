"""The power-loss verdict: will an acknowledged sync write survive a power cut? From evidence, each piece
named, never a guess presented as a fact (docs/powercut.md).

Pure: the device record (``slogqual.device/1``), optionally the flush figures of a sweep point and
optionally a ``slogqual.powercut/1`` result in, ``{"verdict", "text", "basis", "measured", "safe",
"evidence": [{"name", "says"}]}`` out — ``text`` and each ``says`` as facts (``VerdictText``, ``Says``):
slogqual/report/powerloss.py words them, and a record stores the words. The pieces:

- the write cache the device reports: NVMe ``vwc`` and feature 06h, the ATA/SCSI write cache (smartctl,
  the SCSI WCE bit), the kernel's ``queue/write_cache``;
- persistent memory (a pmem/NVDIMM namespace and its platform persistence domain);
- the measured flush cost from the device's sweep: a flush that costs almost nothing while a volatile
  cache is on is either a protected cache (power-loss protection) or a flush that is ignored — the
  figure cannot tell which, and the verdict says both;
- the power-cut test, when it was run: the only piece that *measures* survival.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional

if TYPE_CHECKING:
    from slogqual.results.powercut import PowercutResult

PROTECTED_MEASURED = "protected-measured"
HONOURED = "volatile-cache-flushes-honoured"
NOT_HONOURED = "flushes-not-honoured"
NO_VOLATILE = "no-volatile-cache"
PMEM = "persistent-memory"
PROTECTED_OR_IGNORED = "protected-or-flush-ignored"
VOLATILE_UNMEASURED = "volatile-cache-unmeasured"
UNKNOWN = "unknown"

VERDICTS = (PROTECTED_MEASURED, HONOURED, NOT_HONOURED, NO_VOLATILE, PMEM, PROTECTED_OR_IGNORED, VOLATILE_UNMEASURED,
            UNKNOWN)

CHEAP_FLUSH_US = 100.0  # below: the flush did (almost) nothing the media had to do
COSTLY_FLUSH_US = 500.0  # above: the flush made the device do work (a cache written back)


def _wc_source_name(line: str) -> str:
    low = line.lower()
    if low.startswith("nvme"):
        return "NVMe volatile write cache (Identify vwc, feature 06h)"
    if low.startswith("smartctl") or low.startswith("camcontrol"):
        return "ATA/SCSI write cache"
    if low.startswith("sysfs scsi_disk"):
        return "SCSI write cache (WCE)"
    if low.startswith("kernel"):
        return "kernel queue/write_cache"
    if low.startswith("nvdimm") or "persistence_domain" in low:
        return "persistent memory"
    if low.startswith("conflict"):
        return "write cache conflict"
    return "write cache"


def flush_from_sweep(sweep: Optional[Dict[str, Any]], size: int = 4096) -> Optional[Dict[str, Any]]:
    """The flush figures of a sweep document (``slogqual.sweep/1`` in flush mode): the point at ``size``,
    else the smallest one that has them. None when the sweep has no flush figures."""
    if not isinstance(sweep, dict) or (sweep.get("params") or {}).get("mode") != "flush":
        return None
    points = [p for p in sweep.get("points") or [] if isinstance(p, dict)
              and isinstance((p.get("flush_lat_us") or {}).get("mean"), (int, float))]
    if not points:
        return None
    pick = next((p for p in points if p.get("size") == size), None) or min(points, key=lambda p: p.get("size") or 0)
    write = (pick.get("write_lat_us") or {}).get("mean")
    return {"size": pick.get("size"), "flush_us": float(pick["flush_lat_us"]["mean"]),
            "write_us": float(write) if isinstance(write, (int, float)) else None,
            "ios": pick.get("ios"), "source": "sweep"}


@dataclass(frozen=True)
class VerdictText:
    """The verdict's sentence: its code, and how it was had (the basis: measured, reported, inferred)."""

    verdict: str
    basis: str


@dataclass(frozen=True)
class Says:
    """What a piece of evidence says, as facts: the record's ``write-cache-verdict`` (``verdict``, ``reason``),
    ``no-write-cache-state``, ``pmem`` (``emulated``), the ``flush`` cost (``flush_us``, ``write_us``, ``size``,
    ``source``; ``reading``: ``void`` when the kernel drops flushes, else ``cheap-volatile``, ``cheap``,
    ``costly`` or ``neither``), or a ``power-cut`` test's (``verdict``, ``cycles``, ``counts``: acknowledged,
    lost, torn, stale, missing; the ``cut`` command or the ``emulation``, ``run_id``)."""

    kind: str
    verdict: Optional[str] = None
    reason: Optional[str] = None
    emulated: bool = False
    flush_us: Optional[float] = None
    write_us: Optional[float] = None
    size: Any = None
    source: Optional[str] = None
    reading: Optional[str] = None
    cycles: int = 0
    counts: Optional[Dict[str, int]] = None
    cut: Optional[str] = None
    emulation: Optional[str] = None
    run_id: Optional[str] = None


def _powercut_says(pc: PowercutResult) -> Says:
    return Says("power-cut", verdict=pc.verdict, cycles=len(pc.cycles), counts=dict(pc.totals),
                cut=pc.method.get("cut"), emulation=pc.emulation, run_id=pc.run_id)


def judge(device: Dict[str, Any], flush: Optional[Dict[str, Any]] = None,
          powercut: Optional[PowercutResult] = None) -> Dict[str, Any]:
    """The verdict with its named evidence (module docstring)."""
    ev: List[Dict[str, str]] = []
    wc = device.get("write_cache") or {}
    wcv = wc.get("verdict")
    transport = device.get("transport")
    volatile = {"volatile-cache-enabled": True, "no-volatile-cache": False}.get(wcv)
    for line in wc.get("evidence") or []:
        ev.append({"name": _wc_source_name(line), "says": line})
    if wc.get("reason"):
        ev.append({"name": "write-cache verdict", "says": Says("write-cache-verdict", verdict=wcv, reason=wc["reason"])})
    elif not wc.get("evidence"):
        ev.append({"name": "write cache", "says": Says("no-write-cache-state")})
    pmem = transport == "pmem" or device.get("class") == "nvdimm"
    if pmem:
        ev.append({"name": "persistent memory", "says": Says("pmem", emulated=bool(device.get("emulated")))})
    kernel = (wc.get("kernel") or "").lower()
    flush_void = kernel.startswith("write through")
    cheap = costly = False
    if flush is not None:
        f_us = flush.get("flush_us")
        if flush_void:
            reading = "void"
        else:
            cheap, costly = f_us < CHEAP_FLUSH_US, f_us > COSTLY_FLUSH_US
            reading = ("cheap-volatile" if cheap and volatile else "cheap" if cheap else "costly" if costly
                       else "neither")
        ev.append({"name": "flush cost", "says": Says("flush", flush_us=f_us, write_us=flush.get("write_us"),
                                                      size=flush.get("size"), source=flush.get("source", "sweep"),
                                                      reading=reading)})
    pc_verdict = None
    if powercut is not None:
        pc_verdict = powercut.verdict
        ev.append({"name": "power-cut test", "says": _powercut_says(powercut)})

    def out(code: str, basis: str, safe: Optional[bool]) -> Dict[str, Any]:
        return {"verdict": code, "text": VerdictText(code, basis), "basis": basis, "measured": basis == "measured",
                "safe": safe, "evidence": ev}

    if pc_verdict == "fail":
        return out(NOT_HONOURED, "measured", False)
    if pc_verdict == "pass":
        if volatile and costly:
            return out(HONOURED, "measured", True)
        return out(PROTECTED_MEASURED, "measured", True)
    if pmem:
        return out(PMEM, "reported", None if device.get("emulated") else True)
    if volatile is False:
        return out(NO_VOLATILE, "reported", True)
    if volatile:
        if cheap:
            return out(PROTECTED_OR_IGNORED, "inferred", None)
        if costly:
            return out(HONOURED, "inferred", None)
        return out(VOLATILE_UNMEASURED, "reported", None)
    return out(UNKNOWN, "none", None)


def with_evidence(device: Dict[str, Any], sweep: Optional[Dict[str, Any]] = None,
                  powercut: Optional[PowercutResult] = None) -> Dict[str, Any]:
    """The device record with ``power_loss`` judged again from what is known now: the sweep (its flush
    figures) and the power-cut result, when there are any (its words: report/powerloss.with_evidence, what
    the sweep and qualify call once they have measured); the record itself is not changed."""
    rec = dict(device)
    rec["power_loss"] = judge(device, flush_from_sweep(sweep), powercut)
    return rec


def meets_measured_plp(power_loss: Optional[Dict[str, Any]]) -> bool:
    """What a profile demanding PLP (strict-plp) should ask: survival measured by a power cut."""
    return bool(power_loss) and power_loss.get("verdict") == PROTECTED_MEASURED and power_loss.get("measured") is True
