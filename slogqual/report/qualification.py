"""The report's part for qualifications (``slogqual.qualification/1``): the verdict, each criterion with what
was measured, its threshold and its evidence, the steady state and its rounds — as rows independent of the
format, and as the HTML and Markdown both ``slogqual report`` and ``slogqual qualify``'s own report show.

Reads the typed document (slogqual.results.qualification): its fields, never its keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from slogqual.report.document import Verdict, scalar
from slogqual.report.markup import esc, items, kv, md_kv, md_table, table
from slogqual.results.qualification import CriterionResult, QualificationResult, Summary

RESULT_WORDS = {"pass": "PASS", "fail": "FAIL", "not-evaluated": "NOT EVALUATED"}
VERDICT_WORDS = {"pass": "PASS", "fail": "FAIL", "incomplete": "INCOMPLETE (not all criteria evaluated)",
                 "refused": "REFUSED", "error": "ERROR"}
VERDICT_TONES = {"pass": "good", "fail": "bad", "refused": "bad", "error": "bad", "incomplete": "neutral"}

def ident_line(q: QualificationResult) -> str:
    return q.who.line()


SUMMARY_HEADERS = ["device", "model", "serial", "steady state", "pass", "fail", "n/e", "verdict"]


def summary_rows(quals: Sequence[QualificationResult]) -> List[List[str]]:
    rows = []
    for q in quals:
        rows.append([q.target, q.who.model or "-", q.who.serial or "-", q.steady.label_text,
                     *map(str, (q.summary or Summary()).counts()),
                     VERDICT_WORDS.get(q.verdict, q.verdict).split(" (")[0]])
    return rows


def _measured(c: CriterionResult) -> str:
    """The figure as the judge wrote it (with its unit), else the bare value; '–' when not evaluated."""
    text = c.measured_text
    if text:
        return str(text)
    return "–" if c.measured is None else scalar(c.measured)


CRITERIA_HEADERS = ["criterion", "why", "measured", "threshold", "result", "evidence"]
ROUND_HEADERS = ["round", "IOPS", "mean µs", "p99 µs", "IOs"]
SCENARIO_HEADERS = ["scenario", "result file", "status", "note"]


@dataclass
class QualificationSection:
    path: str
    result: QualificationResult
    title: str
    verdict: Verdict
    profile: str
    precondition: str
    steady: str  # the steady state's label and its rule
    steady_missed: bool  # checked and not reached: every figure may still drift
    criteria: List[Tuple[str, List[str]]]  # (result code, row)
    rounds: List[List[str]]
    scenarios: List[List[str]]
    sweep: List[Tuple[str, str]]
    warnings: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)


def qualification_section(q: QualificationResult, path: str = "") -> QualificationSection:
    word = VERDICT_WORDS.get(q.verdict, q.verdict)
    detail = [("exit code", str(q.exit_code))] + ([("error", q.error)] if q.error else [])
    prof = q.profile
    profile = (f"Profile {prof.name}" + (f" ({prof.path}, sha256 {(prof.sha256 or '')[:12]})" if prof.path else "")
               + (f": {prof.description}" if prof.description else ""))
    steady = q.steady
    rule = steady.rule_text
    criteria = [(c.result, [c.check + (f" — {c.name}" if c.name else ""),
                            scalar(c.why), _measured(c), scalar(c.threshold_text),
                            RESULT_WORDS.get(c.result, c.result), c.detail])
                for c in q.criteria]
    rounds = [[str(r.n), f"{r.iops:,.0f}", f"{r.mean_us:,.1f}", "–" if r.p99_us is None else f"{r.p99_us:,.1f}",
               f"{r.ios:,}"] for r in steady.rounds]
    scenarios = [[scalar(s.name), scalar(s.path), scalar(s.status) or "not run", scalar(s.reason or s.note)]
                 for s in q.scenarios]
    sweep = [(k, scalar(v)) for k, v in (("path", q.sweep.path), ("status", q.sweep.status)) if v]
    pre = q.precondition
    return QualificationSection(
        path=path, result=q, title=f"{q.target} — {ident_line(q)}",
        verdict=Verdict("Qualification verdict", word, VERDICT_TONES.get(q.verdict, "neutral"), detail),
        profile=profile, precondition=(scalar(pre.note or pre.mode) if pre else "") or "-",
        steady=steady.label_text + (f" ({rule})" if rule else ""),
        steady_missed=steady.missed,
        criteria=criteria, rounds=rounds, scenarios=scenarios, sweep=sweep,
        warnings=list(q.warnings), notes=list(q.notes))


STEADY_MISSED = "Steady state was NOT reached: every figure below may still drift."


# --- HTML (slogqual report, and qualify's own report: qualify/output.write_html) ----------------------------

def _criteria_html(s: QualificationSection) -> str:
    out = ['<table class="qual"><thead><tr>' + "".join(f"<th>{esc(h)}</th>" for h in CRITERIA_HEADERS)
           + "</tr></thead><tbody>"]
    for code, row in s.criteria:
        cells = [f"<td><code>{esc(row[0])}</code></td>", f"<td>{esc(row[1])}</td>",
                 f'<td class="num">{esc(row[2])}</td>', f'<td class="num">{esc(row[3])}</td>',
                 f'<td class="{esc(code)}">{esc(row[4])}</td>', f"<td>{esc(row[5])}</td>"]
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def section_html(s: QualificationSection, anchor: str) -> str:
    q = s.result
    out = [f'<div class="qualification" id="{esc(anchor)}"><h3>{esc(s.title)}</h3>']
    if s.path:
        out.append(f'<p class="meta">Result file {esc(s.path)} · {esc(q.schema)} · {esc(q.started or "")}</p>')
    out.append(f'<div class="qverdict {esc(q.verdict)}">Verdict: <b>{esc(s.verdict.text)}</b>'
               + (f" — {esc(q.error)}" if q.error else "") + "</div>")
    out.append(f'<p class="meta">{esc(s.profile)}</p>')
    out.append(f"<p>Preconditioning: {esc(s.precondition)}. Steady state: <b>{esc(s.steady)}</b>.</p>")
    if s.steady_missed:
        out.append(items([STEADY_MISSED], "warnings"))
    out.append(_criteria_html(s))
    if s.rounds:
        out.append("<details><summary>Steady-state rounds</summary>" + table(ROUND_HEADERS, s.rounds, numeric_from=1)
                   + "</details>")
    if s.scenarios:
        out.append("<h4>Scenario results judged</h4>" + table(SCENARIO_HEADERS, s.scenarios))
    if s.sweep:
        out.append("<h4>Sweep measured</h4>" + kv(s.sweep))
    if s.warnings:
        out.append(items(s.warnings, "warnings"))
    if s.notes:
        out.append(items(s.notes))
    out.append("</div>")
    return "\n".join(out)


def qualification_html(quals: Sequence[QualificationResult], paths: Optional[Sequence[str]] = None) -> str:
    """One section: the verdicts' summary, then each qualification."""
    sections = [qualification_section(q, p) for q, p in zip(quals, paths or [""] * len(quals))]
    out = ['<section id="qualification"><h2>Qualification</h2>',
           '<table class="qual"><thead><tr>' + "".join(f"<th>{esc(h)}</th>" for h in SUMMARY_HEADERS)
           + "</tr></thead><tbody>"]
    for s, row in zip(sections, summary_rows([s.result for s in sections])):
        code = s.result.verdict if s.result.verdict in ("pass", "fail") else "not-evaluated"
        out.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row[:-1]) + f'<td class="{code}">{esc(row[-1])}</td></tr>')
    out.append("</tbody></table>")
    out += [section_html(s, f"qualification-{n}") for n, s in enumerate(sections, 1)]
    out.append("</section>")
    return "\n".join(out)


# --- Markdown ---------------------------------------------------------------------------------------------

def qualification_md(quals: Sequence[QualificationResult], paths: Sequence[str]) -> List[str]:
    sections = [qualification_section(q, p) for q, p in zip(quals, paths)]
    out = ["## Qualification", "", md_table(SUMMARY_HEADERS, summary_rows([s.result for s in sections])), ""]
    for s in sections:
        q = s.result
        out += [f"### {s.title}", "", f"Result file `{s.path}` · {q.schema} · {q.started or ''}", "",
                f"**Verdict: {s.verdict.text}**" + (f" — {q.error}" if q.error else ""), "", s.profile, "",
                f"Preconditioning: {s.precondition}. Steady state: **{s.steady}**.", ""]
        if s.steady_missed:
            out += [f"- **{STEADY_MISSED}**", ""]
        out += [md_table(CRITERIA_HEADERS, [row for _, row in s.criteria]), ""]
        if s.rounds:
            out += ["#### Steady-state rounds", "", md_table(ROUND_HEADERS, s.rounds, numeric_from=1), ""]
        if s.scenarios:
            out += ["#### Scenario results judged", "", md_table(SCENARIO_HEADERS, s.scenarios), ""]
        if s.sweep:
            out += ["#### Sweep measured", "", md_kv(s.sweep), ""]
        out += [f"- **{w}**" for w in s.warnings] + [f"- {n}" for n in s.notes]
        if s.warnings or s.notes:
            out.append("")
    return out
