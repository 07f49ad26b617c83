"""What a qualification prints and writes besides its JSON: tables and the HTML report.

The HTML is the project's report (:mod:`slogqual.report.html`) of the devices' sweeps, with a
qualification section (verdicts, criteria, steady state) placed before its summary.
"""

from __future__ import annotations

import html
from typing import Any, List, Optional, Sequence

from tabulate import tabulate

from slogqual.report.qualification import (RESULT_WORDS, SUMMARY_HEADERS, VERDICT_WORDS, qualification_html,
                                          summary_rows)
from slogqual.results import SweepResult, write_text_atomic
from slogqual.results.qualification import QualificationResult


def device_table(q: QualificationResult) -> str:
    steady = q.steady
    dev = q.device_identity
    lines = [f"{q.target} ({q.who.line()}) — profile {q.profile.name}"]
    if q.device:
        lines.append(f"write cache: {(dev.write_cache or {}).get('verdict', '-')}; "
                     f"link: {(dev.link or {}).get('verdict', '-')}")
    lines.append(f"preconditioning: {q.precondition.mode if q.precondition else '-'}; steady state: {steady.label_text}")
    if q.error:
        lines.append(f"{q.verdict}: {q.error}")
    rows = [[c.name or c.check, c.measured_text, c.threshold_text, RESULT_WORDS[c.result], c.detail or ""]
            for c in q.criteria]
    lines.append(tabulate(rows, headers=["criterion", "measured", "threshold", "result", "detail"],
                          disable_numparse=True))
    for w in q.warnings:
        lines.append(f"WARNING: {w}")
    mark = " [steady state NOT reached]" if steady.missed else ""
    lines.append(f"verdict: {VERDICT_WORDS.get(q.verdict, q.verdict)}{mark}")
    return "\n".join(lines)


def summary_table(quals: Sequence[QualificationResult]) -> str:
    return tabulate(summary_rows(quals), headers=SUMMARY_HEADERS, disable_numparse=True)


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def write_html(path: str, quals: Sequence[QualificationResult], sweeps: Sequence[SweepResult],
               sweep_paths: Sequence[str], title: Optional[str] = None, shelves: Sequence[tuple] = ()) -> List[str]:
    """Write the report; notes on what could not be drawn (returned, never raised). ``shelves``:
    (results.shelf.ShelfResult, path) of --probe."""
    from slogqual.errors import SlogqualError
    from slogqual.report import html as html_report

    notes: List[str] = []
    section = qualification_html(quals)
    title = title or ("SLOG qualification (" + (quals[0].profile.name if quals else "-") + "): "
                      + ", ".join(q.target for q in quals[:4]) + (" …" if len(quals) > 4 else ""))
    text = None
    if sweeps:
        try:
            charts = html_report.render_charts(sweeps)
        except SlogqualError as exc:
            charts = []
            notes.append(f"report without charts: {exc}")
        text = html_report.build_html(sweeps, sweep_paths, charts, title=title, shelves=shelves)
        marker = "<h2>Summary</h2>"
        if marker in text:
            text = text.replace(marker, section + "\n" + marker, 1)
        else:
            text = text.replace("<footer>", section + "\n<footer>", 1)
    if text is None:  # no device got as far as a sweep: the verdicts alone
        text = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + _e(title)
                + f"</title><style>{html_report.CSS}</style></head><body><h1>{_e(title)}</h1>\n{section}\n"
                "</body></html>\n")
    write_text_atomic(path, text)
    return notes
