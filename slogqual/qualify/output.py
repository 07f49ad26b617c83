"""What a qualification prints and writes besides its JSON: tables and the HTML report.

The HTML is the project's report (:mod:`slogqual.report.html`) of the devices' sweeps, with a
qualification section (verdicts, criteria, steady state) placed before its summary.
"""

from __future__ import annotations

import html
from typing import Any, Dict, List, Optional, Sequence

from tabulate import tabulate

from slogqual.report.qualification import (RESULT_WORDS, SUMMARY_HEADERS, VERDICT_WORDS, ident_line as _ident_line,
                                          qualification_html, summary_rows)
from slogqual.results import SweepResult, write_text_atomic


def device_table(doc: Dict[str, Any]) -> str:
    steady = doc.get("steady_state") or {}
    pre = doc.get("precondition") or {}
    dev = doc.get("device") or {}
    lines = [f"{doc['target']} ({_ident_line(doc)}) — profile {doc['profile']['name']}"]
    if dev:
        lines.append(f"write cache: {(dev.get('write_cache') or {}).get('verdict', '-')}; "
                     f"link: {(dev.get('link') or {}).get('verdict', '-')}")
    lines.append(f"preconditioning: {pre.get('mode', '-')}; steady state: {steady.get('label', 'not checked')}")
    if doc.get("error"):
        lines.append(f"{doc['verdict']}: {doc['error']}")
    rows = [[c.get("name") or c["check"], c["measured_text"], c["threshold_text"], RESULT_WORDS[c["result"]],
             c.get("detail") or ""] for c in doc.get("criteria") or []]
    lines.append(tabulate(rows, headers=["criterion", "measured", "threshold", "result", "detail"],
                          disable_numparse=True))
    for w in doc.get("warnings") or []:
        lines.append(f"WARNING: {w}")
    mark = "" if steady.get("reached") or not steady.get("checked") else " [steady state NOT reached]"
    lines.append(f"verdict: {VERDICT_WORDS.get(doc['verdict'], doc['verdict'])}{mark}")
    return "\n".join(lines)


def summary_table(docs: Sequence[Dict[str, Any]]) -> str:
    return tabulate(summary_rows(docs), headers=SUMMARY_HEADERS, disable_numparse=True)


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def write_html(path: str, docs: Sequence[Dict[str, Any]], sweeps: Sequence[SweepResult],
               sweep_paths: Sequence[str], title: Optional[str] = None, shelves: Sequence[tuple] = ()) -> List[str]:
    """Write the report; notes on what could not be drawn (returned, never raised). ``shelves``:
    (results.shelf.ShelfResult, path) of --probe."""
    from slogqual.errors import SlogqualError
    from slogqual.report import html as html_report

    notes: List[str] = []
    section = qualification_html(docs)
    title = title or ("SLOG qualification (" + (docs[0]["profile"]["name"] if docs else "-") + "): "
                      + ", ".join(d["target"] for d in docs[:4]) + (" …" if len(docs) > 4 else ""))
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
