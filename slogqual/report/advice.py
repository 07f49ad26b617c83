"""An advice (``slogqual.advice/1``) in words and rows: the tables ``slogqual advise`` prints, and the
report's section — each candidate's prediction per thread count with the limits it rests on and their IO
counts, every bound marked ``≤`` with what bounds it, and beside it the measurement where the report holds a
scenario result of the same load with the candidate as its log (analysis/advisor.verify).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tabulate import tabulate

from slogqual.analysis import advisor as A
from slogqual.report.markup import esc, items, kv, md_kv, md_table, table
from slogqual.results.advice import AdviceResult, CandidateAdvice, StepPrediction
from slogqual.results.scenario import ScenarioResult
from slogqual.units import size_label


def _f(v: Optional[float], digits: int = 0) -> str:
    if v is None:
        return "-"
    return f"{v:,.{digits}f}"


def workload_line(advice: AdviceResult) -> str:
    w = advice.workload
    return (f"workload: {w['protocol']}, {size_label(w['io_size'])} sync writes, block {size_label(w['block_size'])}, "
            f"{w['zils']} ZIL(s); data side: {advice.data['description']}")


def candidate_line(c: CandidateAdvice) -> str:
    x = c.extra
    cap = f", {x['capacity'] / (1 << 30):.2f} GiB" if x.get("capacity") else ""
    bw = x.get("bandwidth")
    return (f"{c.path} ({x.get('class') or '?'}{', ' + x['model'] if x.get('model') else ''}{cap}): "
            f"writes reach the log {x['log_write_state']}, {x['log_record_bytes_per_io']} bytes each; "
            + (f"bandwidth {bw['mbps']:.1f} MiB/s at {size_label(bw['size'])} ({bw['ios']} IOs)" if bw else
               "bandwidth not swept (no size of 128K or more)"))


STEP_HEADERS = ["threads", "batch", "lwb", "commit µs (95% CI)", "sweep IOs", "log-lat IOPS", "log-bw IOPS",
                "pool IOPS", "IOPS (range)", "IOPS if p99≤", "MiB/s", "no SLOG", "benefit", "binding"]


def predicted(s: StepPrediction) -> str:
    """The predicted IOPS, marked ``≤`` where the advisor calls it an upper bound."""
    return ("≤ " if s.extra.get("upper_bound") else "") + _f(s.iops)


def step_row(s: StepPrediction) -> List[Any]:
    x = s.extra
    lim = x["limits"]
    ci = x.get("commit_lat_ci95_us")
    rng = x.get("iops_range")
    return [s.threads, f"{x['batch']:g}", "+".join(size_label(v) for v in x["lwb_writes"]),
            _f(x["commit_lat_us"], 1) + (f" ({_f(ci[0], 1)}–{_f(ci[1], 1)})" if ci else ""),
            x["sweep_ios"], _f(lim["log_latency_iops"]), _f(lim["log_bandwidth_iops"]), _f(lim["pool_iops"]),
            predicted(s) + (f" ({_f(rng[0])}–{_f(rng[1])})" if rng else ""),
            _f(x["iops_if_p99_bound"]), _f(s.mbps, 2), _f(x["without_slog_iops"]),
            f"{x['benefit']:.2f}x" if x.get("benefit") is not None else "-", s.binding]


def after_lines(c: CandidateAdvice) -> List[str]:
    """Below a candidate's table: its knee, findings, the log space it needs, mirror and life."""
    x = c.extra
    lines = []
    k = x.get("knee")
    if k:
        lines.append(f"knee: {'at' if k['saturated'] else 'still rising at'} {k['threads']} threads ({_f(k['iops'])} IOPS)")
    lines += [f"- {A.words(f)}" for f in c.findings]
    sz = x["size"]
    lines.append(f"size: needs {sz['needed_bytes'] / (1 << 20):,.0f} MiB, {sz['recommended_bytes'] / (1 << 20):,.0f} MiB "
                 f"with the margin ({sz['txgs_held']} txgs held + {sz['txgs_with_margin'] - sz['txgs_held']} deferred "
                 f"× {sz['per_txg_bytes'] / (1 << 20):,.1f} MiB per {sz['txg_seconds']:g} s txg, at {sz['rate_basis']})")
    m = x.get("mirror")
    if m:
        lines.append(f"mirror: {m['mirror']} (see the finding above)")
    life = x.get("life")
    if life:
        years = "?" if life["years"] is None else f"{life['years']:.2g}"
        lines.append(f"life: {years} years at {life['bytes_per_day'] / 1e9:,.1f} GB a day "
                     f"({life['endurance_basis']}; {life['assumption']})")
        measured = life.get("measured_years")
        if measured:
            lines.append(f"life measured from its own wear: {measured['years_low']:.2g}–{measured['years_high']:.2g} "
                         f"years ({measured['remaining_percent']} % of its life left)")
    return lines


MODEL_NOTE = ("model: docs/advisor.md (percentiles are not predicted; 'IOPS if p99≤' is a bound, and so is an "
              "IOPS figure marked ≤)")


def table_text(advice: AdviceResult) -> str:
    """What `slogqual advise` prints."""
    lines = [workload_line(advice)]
    for c in advice.candidates:
        lines += ["", candidate_line(c), tabulate([step_row(s) for s in c.steps], headers=STEP_HEADERS,
                                                  disable_numparse=True)]
        lines += after_lines(c)
    return "\n".join(lines + ["", MODEL_NOTE])


VERIFY_HEADERS = ["candidate", "class", "threads", "predicted IOPS", "measured IOPS", "measured IOs", "error",
                  "predicted limit"]


def verify_row(r: Dict[str, Any]) -> List[Any]:
    """One row of analysis/advisor.verify: the prediction (≤ where a bound) beside the measured step."""
    return [r["candidate"], r["class"] or "?", r["threads"], ("≤ " if r.get("upper_bound") else "") + _f(r["predicted_iops"]),
            _f(r["measured_iops"]), r["measured_ios"], f"{r['error'] * 100:+.0f} %" if r["error"] is not None else "-",
            r["binding"]]


def verify_table(rows: List[Dict[str, Any]]) -> str:
    return tabulate([verify_row(r) for r in rows], headers=VERIFY_HEADERS, disable_numparse=True)


# --- the report's section --------------------------------------------------------------------------------

PROTOCOL_KIND = {"iscsi": "zvol", "nfs": "dataset"}  # what a scenario's LUNs are for each protocol


def verifies(advice: AdviceResult, scenario: ScenarioResult) -> bool:
    """Whether the scenario measured the advice's load (IO size, zvols or files) with a candidate as its log."""
    w = advice.workload
    kind = scenario.scenario.get("kind")
    return (scenario.bs == w["io_size"] and (kind is None or kind == PROTOCOL_KIND.get(w["protocol"]))
            and bool({c.path for c in advice.candidates} & set(scenario.log_paths)))


def verification(advice: AdviceResult, scenarios: Sequence[Tuple[ScenarioResult, str]]
                 ) -> List[Tuple[str, Dict[str, Any]]]:
    """(scenario path, verify row) for every scenario of the report that measured this advice's load: its
    sync=always + single-SLOG steps at the advice's thread counts, of a candidate that was its log."""
    doc = advice.to_dict()
    return [(path, r) for result, path in scenarios if verifies(advice, result)
            for r in A.verify(doc, result) if r["candidate"] in result.log_paths]


BOUND_WORDS = {
    "host-cpu": "sync=standard ran the host's CPU saturated at this thread count, and with a log the host also "
                "copies every write into the log and checksums it (host-cpu-saturated)",
    "log-only": "no data-side figure at this thread count: only the log device's limits are in it, the pool and "
                "the host can hold it lower",
}


def bound_lines(c: CandidateAdvice) -> List[str]:
    """Every figure marked ≤, with what bounds it."""
    out = []
    for s in c.steps:
        why = s.extra.get("upper_bound")
        if not why:
            continue
        busy = (s.extra.get("host_cpu") or {}).get("busy")
        out.append(f"{s.threads} threads: ≤ {_f(s.iops)} IOPS is an upper bound ({why}): {BOUND_WORDS.get(why, why)}"
                   + (f"; CPU {busy:.0%} busy" if busy is not None and why == "host-cpu" else ""))
    return out


@dataclass
class CandidateSection:
    title: str
    rows: List[List[str]]
    bounds: List[str]
    after: List[str]  # knee, findings, size, mirror, life


@dataclass
class AdviceSection:
    path: str
    result: AdviceResult
    name: str
    workload: str
    candidates: List[CandidateSection]
    verified: List[List[str]]  # [scenario file] + verify_row
    verified_headers: List[str]
    tunables: List[Tuple[str, str]]
    assumptions: List[str]
    warnings: List[str] = field(default_factory=list)


def advice_section(advice: AdviceResult, path: str,
                   scenarios: Sequence[Tuple[ScenarioResult, str]] = ()) -> AdviceSection:
    t = advice.tunables
    sources = t.get("sources") or {}
    tunables = [(k, f"{v}" + (f" ({sources[k]})" if sources.get(k) else "")) for k, v in t.items()
                if k != "sources" and v is not None]
    return AdviceSection(
        path=path, result=advice,
        name="advice: " + ", ".join(str(c.path) for c in advice.candidates),
        workload=workload_line(advice),
        candidates=[CandidateSection(candidate_line(c), [[str(v) for v in step_row(s)] for s in c.steps],
                                     bound_lines(c), after_lines(c)) for c in advice.candidates],
        verified=[[p] + [str(v) for v in verify_row(r)] for p, r in verification(advice, scenarios)],
        verified_headers=["measured in"] + VERIFY_HEADERS, tunables=tunables, assumptions=list(advice.assumptions),
        warnings=list(advice.warnings))


NOT_VERIFIED = ("Not verified here: no scenario result in this report measured this load (IO size, zvols or files) "
                "with a candidate as its single log at the advice's thread counts (`slogqual advise --verify`, or "
                "give such a result to the report).")
VERIFIED_NOTE = ("Prediction beside the measured sync=always + single-SLOG steps; error = predicted / measured − 1; "
                 "measured IOs: the writes behind the measured figure. A prediction marked ≤ is a bound: the "
                 "measurement may fall below it.")

SUMMARY_HEADERS = ["advice", "workload", "candidates", "predicted peak", "verified steps"]


def summary_row(s: AdviceSection) -> List[str]:
    peaks = []
    for c in s.result.candidates:
        top = max(c.steps, key=lambda x: x.iops, default=None)
        if top is not None:
            peaks.append(f"{c.path}: {predicted(top)} IOPS at {top.threads} threads")
    return [s.path, s.workload.split(";")[0].removeprefix("workload: "), str(len(s.result.candidates)),
            "; ".join(peaks) or "–", str(len(s.verified))]


def section_html(s: AdviceSection, n: int, charts: str) -> str:
    out = [f'<section class="advice" id="advice-{n}"><h2>{n}. {esc(s.name)}</h2>',
           f'<p class="meta">Result file {esc(s.path)} · {esc(s.result.schema)} · {esc(s.result.origin or "")}</p>',
           f"<p>{esc(s.workload)}</p>"]
    if s.warnings:
        out.append(items(s.warnings, "warnings"))
    out.append("<h3>Prediction beside measurement</h3>")
    if s.verified:
        out.append(table(s.verified_headers, s.verified, numeric_from=3) + f'<p class="meta">{esc(VERIFIED_NOTE)}</p>')
    else:
        out.append(f'<p class="meta">{esc(NOT_VERIFIED)}</p>')
    out.append(charts)
    for c in s.candidates:
        out.append(f'<h3>{esc(c.title)}</h3>' + table(STEP_HEADERS, c.rows, numeric_from=1))
        if c.bounds:
            out.append(items(c.bounds, "bounds"))
        out.append(items([x.removeprefix("- ") for x in c.after]))
    out += [f'<p class="meta">{esc(MODEL_NOTE)}</p>', "<h3>OpenZFS tunables assumed</h3>" + kv(s.tunables),
            "<h3>Assumptions</h3>" + items(s.assumptions), "</section>"]
    return "\n".join(out)


def section_md(s: AdviceSection, n: int, charts: List[str]) -> List[str]:
    out = [f"## {n}. {s.name}", "", f"Result file `{s.path}` · {s.result.schema} · {s.result.origin or ''}", "",
           s.workload, ""] + [f"- **{w}**" for w in s.warnings] + ([""] if s.warnings else [])
    out += ["### Prediction beside measurement", ""]
    out += ([md_table(s.verified_headers, s.verified, numeric_from=3), "", VERIFIED_NOTE, ""] if s.verified
            else [NOT_VERIFIED, ""])
    out += charts
    for c in s.candidates:
        out += [f"### {c.title}", "", md_table(STEP_HEADERS, c.rows, numeric_from=1), ""]
        out += [f"- {x}" for x in c.bounds] + [x if x.startswith("- ") else f"- {x}" for x in c.after] + [""]
    out += [MODEL_NOTE, "", "### OpenZFS tunables assumed", "", md_kv(s.tunables), "", "### Assumptions", ""]
    return out + [f"- {x}" for x in s.assumptions] + [""]
