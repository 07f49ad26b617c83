"""The report's section for a power-cut result (``slogqual.powercut/1``), independent of HTML or Markdown,
and the result's words: the verdict's sentence and tone, each method's caveat, the method, cycle and
lost-record rows (what the power cut says is analysis/powercut.py's).

How the power was cut comes first and an emulated run says so in its verdict:
an emulated cut shows the method works, never that a device is safe. For a real device the power-loss
verdict (analysis/powerloss.py) is judged from its record with this power cut as evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from slogqual.analysis import powercut as A
from slogqual.report import powerloss
from slogqual.report.document import IDENTITY_KEYS, Verdict, _power_loss, scalar
from slogqual.results.powercut import PowercutResult

CAVEAT = {
    A.METHOD_EMULATION: "EMULATED: nbdkit served a backing file and its SIGKILL was the power cut. This shows the "
                        "method tells a device that drops flushed data from one that keeps it; it says nothing "
                        "about any real device (docs/powercut.md).",
    A.METHOD_REAL: "A real power cut by the user's command. A pass is evidence for this device and firmware over "
                   "these cuts, not a guarantee: a device that passes five cuts may fail the sixth.",
    A.METHOD_EXTERNAL: "Verified afterwards (slogqual powercut verify): slogqual did not make this cut, so whether "
                       "it was a real power cut or an emulated one is not recorded in this result.",
}


def verdict_words(doc: Dict[str, Any]) -> Tuple[str, str]:
    """(text, tone) of the result's verdict; tone bad / good / neutral as the report colours it. An
    emulated pass is neutral: it shows the method works, not that a device is safe."""
    verdict = str(doc.get("verdict") or "incomplete")
    t = A.totals(doc)
    kind = A.method_of(doc)
    tag = " (emulated)" if kind == A.METHOD_EMULATION else ""
    if verdict == "fail":
        return f"FAIL{tag}: {t['lost']} of {t['acknowledged']} acknowledged records lost", "bad"
    if verdict == "pass":
        return (f"PASS{tag}: all {t['acknowledged']} acknowledged records intact after "
                f"{len(doc.get('cycles') or [])} cut(s)"), ("good" if kind == A.METHOD_REAL else "neutral")
    why = doc.get("error") or f"status {doc.get('status')}"
    return f"INCOMPLETE{tag}: {why}", "neutral"


def method_rows(doc: Dict[str, Any]) -> List[Tuple[str, str]]:
    """How the power was cut and the records written, as (name, value) rows."""
    m = doc.get("method") if isinstance(doc.get("method"), dict) else {}
    rows = [("method", method_short(doc)), ("cut", str(m.get("cut") or "not recorded"))]
    if m.get("restore"):
        rows.append(("restore", str(m["restore"])))
    if m.get("emulation"):
        rows.append(("emulated device", str(m.get("emulation_means") or m["emulation"])))
    for key, label in (("recorder", "recorder"), ("cut_after", "cut after (acknowledged records)"),
                       ("flush", "flush"), ("direct", "O_DIRECT")):
        if m.get(key) not in (None, ""):
            rows.append((label, "yes" if m[key] is True else "no" if m[key] is False else str(m[key])))
    sizes = m.get("sizes") or []
    if sizes:
        rows.append(("record sizes", ", ".join(f"{s // 1024}K" if s % 1024 == 0 else f"{s} B" for s in sizes)))
    return rows


CYCLE_HEADERS = ["cycle", "acknowledged", "intact", "torn", "stale", "missing", "lost", "how the writer ended"]


def cycle_rows(doc: Dict[str, Any]) -> List[List[str]]:
    """One row per cycle, then the totals."""
    rows = []
    for cy in doc.get("cycles") or []:
        lost = int(cy.get("torn") or 0) + int(cy.get("stale") or 0) + int(cy.get("missing") or 0)
        rows.append([str(cy.get("cycle"))] + [str(int(cy.get(k) or 0)) for k in A.COUNTS[:-1]]
                    + [str(lost), str(cy.get("writer_end") or "")])
    t = A.totals(doc)
    rows.append(["total"] + [str(t[k]) for k in A.COUNTS] + [""])
    return rows


LOST_HEADERS = ["cycle", "record", "offset", "size", "state"]


def lost_rows(doc: Dict[str, Any], limit: int = 10) -> List[List[str]]:
    """The first ``limit`` lost records (the document keeps the first 100 of each cycle)."""
    out = []
    for cy in doc.get("cycles") or []:
        for r in cy.get("lost_records") or []:
            if len(out) == limit:
                return out
            out.append([str(cy.get("cycle")), str(r.get("seq")), str(r.get("offset")), str(r.get("size")),
                        str(r.get("state"))])
    return out


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
    text, tone = verdict_words(doc)
    verdict = Verdict("Power-cut verdict", text, tone, [("method", method_short(doc)),
                                                        ("counts", counts_text(doc))])
    power_loss = None
    if method == A.METHOD_REAL and isinstance(result.device, dict) and not result.device.get("error"):
        power_loss = _power_loss("Power loss", powerloss.judge(result.device, None, result))
    run_rows = [(k, scalar(doc.get(k))) for k in ("run_id", "status", "started", "finished", "host", "slogqual")
                if doc.get(k) not in (None, "")]
    if doc.get("error"):
        run_rows.append(("error", scalar(doc["error"])))
    return PowercutSection(name=_name(doc), path=path, doc=doc, method=method, verdict=verdict,
                           caveat=CAVEAT[method], power_loss=power_loss, method_rows=method_rows(doc),
                           identity=_identity(doc), cycle_headers=list(CYCLE_HEADERS), cycle_rows=cycle_rows(doc),
                           lost_headers=list(LOST_HEADERS), lost_rows=lost_rows(doc), run_rows=run_rows,
                           notes=[str(n) for n in result.notes], lost_total=A.totals(doc)["lost"])


POWERCUT_SUMMARY_HEADERS = ["power-cut test", "method", "verdict", "cycles", "acknowledged", "lost"]


def powercut_summary_row(s: PowercutSection) -> List[str]:
    t = A.totals(s.doc)
    return [s.name, method_short(s.doc), s.verdict.text.split(":")[0],
            f"{len(s.doc.get('cycles') or [])} of {s.doc.get('expected_cycles')}", str(t["acknowledged"]),
            str(t["lost"])]


# --- the one line of a power-cut result (the store's summary, `slogqual history`) -------------------------

def method_short(doc: Dict[str, Any]) -> str:
    """'emulated (nbdkit cache=unsafe)', 'real power cut' or 'external cut, verified afterwards'."""
    kind = A.method_of(doc)
    if kind == A.METHOD_EMULATION:
        how = (doc.get("method") or {}).get("emulation")
        return f"emulated ({A.EMULATION_SHORT.get(how, how or 'nbdkit')})"
    if kind == A.METHOD_REAL:
        return "real power cut"
    return "external cut, verified afterwards"


def counts_text(doc: Dict[str, Any]) -> str:
    t = A.totals(doc)
    return (f"{len(doc.get('cycles') or [])} of {doc.get('expected_cycles', '?')} cycle(s), "
            f"{t['acknowledged']} acknowledged, {t['intact']} intact, {t['lost']} lost "
            f"(torn {t['torn']}, stale {t['stale']}, missing {t['missing']})")


def summary(doc: Dict[str, Any]) -> str:
    """One line for the store and ``slogqual history``: how the power was cut, then the counts."""
    return f"{method_short(doc)}: {counts_text(doc)}"
