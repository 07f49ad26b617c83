"""The report's section for a power-cut result (``slogqual.powercut/1``): independent of HTML or Markdown.

How the power was cut comes first and an emulated run says so in its verdict (analysis/powercut.py):
an emulated cut shows the method works, never that a device is safe. For a real device the power-loss
verdict (analysis/powerloss.py) is judged from its record with this power cut as evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from slogqual.analysis import powercut as A
from slogqual.analysis import powerloss
from slogqual.report.document import IDENTITY_KEYS, Verdict, _power_loss, scalar
from slogqual.results.powercut import PowercutResult


@dataclass
class PowercutSection:
    name: str
    path: str
    doc: Dict[str, Any]
    method: str  # emulation | real | external
    verdict: Verdict
    caveat: str
    power_loss: Optional[Verdict]
    method_rows: List[Tuple[str, str]]
    identity: List[Tuple[str, str]]
    cycle_headers: List[str]
    cycle_rows: List[List[str]]
    lost_headers: List[str]
    lost_rows: List[List[str]]
    run_rows: List[Tuple[str, str]]
    notes: List[str]
    lost_total: int = 0


def _name(doc: Dict[str, Any]) -> str:
    dev = doc.get("device") if isinstance(doc.get("device"), dict) else {}
    model = " ".join(str(dev[k]) for k in ("vendor", "model") if dev.get(k))
    path = (doc.get("target") or {}).get("path", "?")
    if A.method_of(doc) == A.METHOD_EMULATION:
        return f"power cut, emulated device ({path})"
    return f"power cut, {model or path}"


def _identity(doc: Dict[str, Any]) -> List[Tuple[str, str]]:
    dev = doc.get("device") if isinstance(doc.get("device"), dict) else {}
    rows = [(label, scalar(dev[key])) for key, label in IDENTITY_KEYS
            if dev.get(key) not in (None, "", [], {})]
    if dev.get("error"):
        rows.append(("Identification", scalar(dev["error"])))
    target = doc.get("target") or {}
    rows.append(("Target", f"{target.get('path', '?')} ({target.get('kind', '?')})"))
    if not dev:
        rows.append(("Device record", "none (an emulated device has none; verify does not identify)"))
    return rows


def powercut_section(result: PowercutResult, path: str) -> PowercutSection:
    doc = result.to_dict()
    method = A.method_of(doc)
    text, tone = A.verdict_words(doc)
    verdict = Verdict("Power-cut verdict", text, tone, [("method", A.method_short(doc)),
                                                        ("counts", A.counts_text(doc))])
    power_loss = None
    if method == A.METHOD_REAL and isinstance(result.device, dict) and not result.device.get("error"):
        power_loss = _power_loss("Power loss", powerloss.judge(result.device, None, result))
    run_rows = [(k, scalar(doc.get(k))) for k in ("run_id", "status", "started", "finished", "host", "slogqual")
                if doc.get(k) not in (None, "")]
    if doc.get("error"):
        run_rows.append(("error", scalar(doc["error"])))
    return PowercutSection(name=_name(doc), path=path, doc=doc, method=method, verdict=verdict,
                           caveat=A.CAVEAT[method], power_loss=power_loss, method_rows=A.method_rows(doc),
                           identity=_identity(doc), cycle_headers=list(A.CYCLE_HEADERS), cycle_rows=A.cycle_rows(doc),
                           lost_headers=list(A.LOST_HEADERS), lost_rows=A.lost_rows(doc), run_rows=run_rows,
                           notes=[str(n) for n in result.notes], lost_total=A.totals(doc)["lost"])


POWERCUT_SUMMARY_HEADERS = ["power-cut test", "method", "verdict", "cycles", "acknowledged", "lost"]


def powercut_summary_row(s: PowercutSection) -> List[str]:
    t = A.totals(s.doc)
    return [s.name, A.method_short(s.doc), s.verdict.text.split(":")[0],
            f"{len(s.doc.get('cycles') or [])} of {s.doc.get('expected_cycles')}", str(t["acknowledged"]),
            str(t["lost"])]
