"""The report's section for a power-cut result (``slogqual.powercut/1``), independent of HTML or Markdown,
and the result's words: the verdict's sentence and tone, each method's caveat, the method, cycle and
lost-record rows (what the power cut says is analysis/powercut.py's).

How the power was cut comes first and an emulated run says so in its verdict:
an emulated cut shows the method works, never that a device is safe. For a real device the power-loss
verdict (analysis/powerloss.py) is judged from its record with this power cut as evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

from slogqual.analysis import powercut as A
from slogqual.report import powerloss
from slogqual.report.document import IDENTITY_KEYS, Verdict, _power_loss, scalar
from slogqual.results.powercut import COUNTS, PowercutResult

CAVEAT = {
    A.METHOD_EMULATION: "EMULATED: nbdkit served a backing file and its SIGKILL was the power cut. This shows the "
                        "method tells a device that drops flushed data from one that keeps it; it says nothing "
                        "about any real device (docs/powercut.md).",
    A.METHOD_REAL: "A real power cut by the user's command. A pass is evidence for this device and firmware over "
                   "these cuts, not a guarantee: a device that passes five cuts may fail the sixth.",
    A.METHOD_EXTERNAL: "Verified afterwards (slogqual powercut verify): slogqual did not make this cut, so whether "
                       "it was a real power cut or an emulated one is not recorded in this result.",
}


def verdict_words(result: PowercutResult) -> Tuple[str, str]:
    """(text, tone) of the result's verdict; tone bad / good / neutral as the report colours it. An
    emulated pass is neutral: it shows the method works, not that a device is safe."""
    verdict = str(result.verdict or "incomplete")
    t = A.totals(result)
    kind = A.method_of(result)
    tag = " (emulated)" if kind == A.METHOD_EMULATION else ""
    if verdict == "fail":
        return f"FAIL{tag}: {t['lost']} of {t['acknowledged']} acknowledged records lost", "bad"
    if verdict == "pass":
        return (f"PASS{tag}: all {t['acknowledged']} acknowledged records intact after "
                f"{len(result.cycles)} cut(s)"), ("good" if kind == A.METHOD_REAL else "neutral")
    why = result.error or f"status {result.status}"
    return f"INCOMPLETE{tag}: {why}", "neutral"


_SETTING_LABELS = {"recorder": "recorder", "cut_after": "cut after (acknowledged records)", "flush": "flush",
                   "direct": "O_DIRECT"}


def method_rows(result: PowercutResult) -> List[Tuple[str, str]]:
    """How the power was cut and the records written, as (name, value) rows."""
    rows = [("method", method_short(result)), ("cut", str(result.cut or "not recorded"))]
    if result.restore:
        rows.append(("restore", str(result.restore)))
    if result.emulation:
        rows.append(("emulated device", str(result.emulation_means or result.emulation)))
    for key, value in result.method_settings:
        if value not in (None, ""):
            rows.append((_SETTING_LABELS[key], "yes" if value is True else "no" if value is False else str(value)))
    sizes = result.sizes
    if sizes:
        rows.append(("record sizes", ", ".join(f"{s // 1024}K" if s % 1024 == 0 else f"{s} B" for s in sizes)))
    return rows


CYCLE_HEADERS = ["cycle", "acknowledged", "intact", "torn", "stale", "missing", "lost", "how the writer ended"]


def cycle_rows(result: PowercutResult) -> List[List[str]]:
    """One row per cycle, then the totals."""
    rows = []
    for cy in result.cycles:
        rows.append([str(cy.cycle)] + [str(getattr(cy, k)) for k in COUNTS[:-1]]
                    + [str(cy.lost), str(cy.writer_end or "")])
    t = A.totals(result)
    rows.append(["total"] + [str(t[k]) for k in COUNTS] + [""])
    return rows


LOST_HEADERS = ["cycle", "record", "offset", "size", "state"]


def lost_rows(result: PowercutResult, limit: int = 10) -> List[List[str]]:
    """The first ``limit`` lost records (the document keeps the first 100 of each cycle)."""
    out = []
    for cy in result.cycles:
        for r in cy.records_lost:
            if len(out) == limit:
                return out
            out.append([str(cy.cycle), str(r.seq), str(r.offset), str(r.size), str(r.state)])
    return out


@dataclass
class PowercutSection:
    name: str
    path: str
    result: PowercutResult
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


def _name(result: PowercutResult) -> str:
    dev = result.device if isinstance(result.device, dict) else {}
    model = " ".join(str(dev[k]) for k in ("vendor", "model") if dev.get(k))
    if A.method_of(result) == A.METHOD_EMULATION:
        return f"power cut, emulated device ({result.target_path})"
    return f"power cut, {model or result.target_path}"


def _identity(result: PowercutResult) -> List[Tuple[str, str]]:
    dev = result.device if isinstance(result.device, dict) else {}
    rows = [(label, scalar(dev[key])) for key, label in IDENTITY_KEYS
            if dev.get(key) not in (None, "", [], {})]
    if dev.get("error"):
        rows.append(("Identification", scalar(dev["error"])))
    rows.append(("Target", f"{result.target_path} ({result.target_kind})"))
    if not dev:
        rows.append(("Device record", "none (an emulated device has none; verify does not identify)"))
    return rows


def powercut_section(result: PowercutResult, path: str) -> PowercutSection:
    method = A.method_of(result)
    text, tone = verdict_words(result)
    verdict = Verdict("Power-cut verdict", text, tone, [("method", method_short(result)),
                                                        ("counts", counts_text(result))])
    power_loss = None
    if method == A.METHOD_REAL and isinstance(result.device, dict) and not result.device.get("error"):
        power_loss = _power_loss("Power loss", powerloss.judge(result.device, None, result))
    run = zip(("run_id", "status", "started", "finished", "host", "slogqual"),
              (result.run_id, result.status, result.started, result.finished, result.host, result.version))
    run_rows = [(k, scalar(v)) for k, v in run if v not in (None, "")]
    if result.error:
        run_rows.append(("error", scalar(result.error)))
    return PowercutSection(name=_name(result), path=path, result=result, method=method, verdict=verdict,
                           caveat=CAVEAT[method], power_loss=power_loss, method_rows=method_rows(result),
                           identity=_identity(result), cycle_headers=list(CYCLE_HEADERS),
                           cycle_rows=cycle_rows(result), lost_headers=list(LOST_HEADERS),
                           lost_rows=lost_rows(result), run_rows=run_rows,
                           notes=[str(n) for n in result.notes], lost_total=A.totals(result)["lost"])


POWERCUT_SUMMARY_HEADERS = ["power-cut test", "method", "verdict", "cycles", "acknowledged", "lost"]


def powercut_summary_row(s: PowercutSection) -> List[str]:
    t = A.totals(s.result)
    return [s.name, method_short(s.result), s.verdict.text.split(":")[0],
            f"{len(s.result.cycles)} of {s.result.expected_cycles}", str(t["acknowledged"]), str(t["lost"])]


# --- the one line of a power-cut result (the store's summary, `slogqual history`) -------------------------

def method_short(result: PowercutResult) -> str:
    """'emulated (nbdkit cache=unsafe)', 'real power cut' or 'external cut, verified afterwards'."""
    kind = A.method_of(result)
    if kind == A.METHOD_EMULATION:
        how = result.emulation
        return f"emulated ({A.EMULATION_SHORT.get(how, how or 'nbdkit')})"
    if kind == A.METHOD_REAL:
        return "real power cut"
    return "external cut, verified afterwards"


def counts_text(result: PowercutResult) -> str:
    t = A.totals(result)
    return (f"{len(result.cycles)} of {result.expected_cycles} cycle(s), "
            f"{t['acknowledged']} acknowledged, {t['intact']} intact, {t['lost']} lost "
            f"(torn {t['torn']}, stale {t['stale']}, missing {t['missing']})")


def summary(result: PowercutResult) -> str:
    """One line for the store and ``slogqual history``: how the power was cut, then the counts."""
    return f"{method_short(result)}: {counts_text(result)}"
