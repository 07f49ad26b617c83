"""What a qualification prints and writes besides its JSON: tables and the HTML report.

The HTML is the project's report (:mod:`slogqual.report.html`) of the devices' sweeps, with a
qualification section (verdicts, criteria, steady state) placed before its summary.
"""

from __future__ import annotations

import html
from typing import Any, Dict, List, Optional, Sequence

from tabulate import tabulate

from slogqual.results import SweepResult, write_text_atomic

RESULT_WORDS = {"pass": "PASS", "fail": "FAIL", "not-evaluated": "NOT EVALUATED"}
VERDICT_WORDS = {"pass": "PASS", "fail": "FAIL", "incomplete": "INCOMPLETE (not all criteria evaluated)",
                 "refused": "REFUSED", "error": "ERROR"}


def _ident_line(doc: Dict[str, Any]) -> str:
    ident = doc.get("identity") or {}
    parts = [f"{k} {ident[k]}" for k in ("model", "serial", "firmware", "class") if ident.get(k)]
    return ", ".join(parts) or "no identity"


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


def summary_rows(docs: Sequence[Dict[str, Any]]) -> List[List[str]]:
    rows = []
    for d in docs:
        s = d.get("summary") or {}
        ident = d.get("identity") or {}
        rows.append([d["target"], ident.get("model") or "-", ident.get("serial") or "-",
                     (d.get("steady_state") or {}).get("label", "not checked"),
                     str(s.get("pass", 0)), str(s.get("fail", 0)), str(s.get("not-evaluated", 0)),
                     VERDICT_WORDS.get(d["verdict"], d["verdict"]).split(" (")[0]])
    return rows


SUMMARY_HEADERS = ["device", "model", "serial", "steady state", "pass", "fail", "n/e", "verdict"]


def summary_table(docs: Sequence[Dict[str, Any]]) -> str:
    return tabulate(summary_rows(docs), headers=SUMMARY_HEADERS, disable_numparse=True)


# --- HTML -----------------------------------------------------------------------------------------

_CSS = """
.qual td.pass { background: var(--good-bg); color: var(--good); font-weight: 600; }
.qual td.fail { background: var(--bad-bg); color: var(--bad); font-weight: 600; }
.qual td.not-evaluated { background: var(--neutral-bg); font-weight: 600; }
.qverdict { font-size: 17px; padding: 8px 12px; border-radius: 6px; margin: 8px 0; }
.qverdict.pass { background: var(--good-bg); border-left: 5px solid var(--good); }
.qverdict.fail, .qverdict.refused, .qverdict.error { background: var(--bad-bg); border-left: 5px solid var(--bad); }
.qverdict.incomplete { background: var(--neutral-bg); border-left: 5px solid #98a2ab; }
"""


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def qualification_html(docs: Sequence[Dict[str, Any]]) -> str:
    out = [f"<style>{_CSS}</style>", '<section id="qualification"><h2>Qualification</h2>']
    if docs:
        prof = docs[0]["profile"]
        out.append(f'<p class="meta">Profile <b>{_e(prof["name"])}</b> ({_e(prof.get("path"))}, sha256 '
                   f'{_e((prof.get("sha256") or "")[:12])}). {_e(prof.get("description"))}</p>')
    out.append('<table class="qual"><thead><tr>' + "".join(f"<th>{_e(h)}</th>" for h in SUMMARY_HEADERS)
               + "</tr></thead><tbody>")
    for d, row in zip(docs, summary_rows(docs)):
        cells = "".join(f"<td>{_e(c)}</td>" for c in row[:-1])
        out.append(f'<tr>{cells}<td class="{_e(d["verdict"] if d["verdict"] in ("pass", "fail") else "not-evaluated")}">'
                   f"{_e(row[-1])}</td></tr>")
    out.append("</tbody></table>")
    for d in docs:
        steady = d.get("steady_state") or {}
        pre = d.get("precondition") or {}
        out.append(f"<h3>{_e(d['target'])} — {_e(_ident_line(d))}</h3>")
        word = VERDICT_WORDS.get(d["verdict"], d["verdict"])
        out.append(f'<div class="qverdict {_e(d["verdict"])}">Verdict: <b>{_e(word)}</b>'
                   + (f" — {_e(d['error'])}" if d.get("error") else "") + "</div>")
        out.append(f"<p>Preconditioning: {_e(pre.get('note') or pre.get('mode') or '-')}. Steady state: "
                   f"<b>{_e(steady.get('label', 'not checked'))}</b>"
                   + (f" ({_e(steady['rule']['text'])})" if steady.get("rule") else "") + ".</p>")
        if steady.get("checked") and not steady.get("reached"):
            out.append('<ul class="warnings"><li>Steady state was NOT reached: every figure below may still '
                       "drift.</li></ul>")
        out.append('<table class="qual"><thead><tr><th>criterion</th><th>why</th><th>measured</th><th>threshold</th>'
                   "<th>result</th><th>detail</th></tr></thead><tbody>")
        for c in d.get("criteria") or []:
            out.append(f"<tr><td><code>{_e(c['check'])}</code>" + (f"<br>{_e(c['name'])}" if c.get("name") else "")
                       + f"</td><td>{_e(c.get('why'))}</td><td class=\"num\">{_e(c['measured_text'])}</td>"
                       f"<td class=\"num\">{_e(c['threshold_text'])}</td>"
                       f"<td class=\"{_e(c['result'])}\">{_e(RESULT_WORDS[c['result']])}</td>"
                       f"<td>{_e(c.get('detail'))}</td></tr>")
        out.append("</tbody></table>")
        if steady.get("rounds"):
            out.append("<details><summary>Steady-state rounds</summary><table><thead><tr><th>round</th>"
                       "<th class=\"num\">IOPS</th><th class=\"num\">mean µs</th><th class=\"num\">IOs</th></tr>"
                       "</thead><tbody>" + "".join(
                           f"<tr><td>{r['round']}</td><td class=\"num\">{r['iops']:.0f}</td>"
                           f"<td class=\"num\">{r['mean_us']:.1f}</td><td class=\"num\">{r['ios']}</td></tr>"
                           for r in steady["rounds"]) + "</tbody></table></details>")
    out.append("</section>")
    return "\n".join(out)


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
