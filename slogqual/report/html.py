"""One self-contained HTML report: inline CSS and inline SVG charts drawn by gnuplot, no script.

A lab mails or archives the single file; it shows the same in any browser,
offline, years later. Charts come from :mod:`slogqual.report.plot` through the
gnuplot svg terminal and are inlined with their element ids made unique per
chart (gnuplot reuses the same ids in every picture).
"""

from __future__ import annotations

import datetime
import html
import itertools
import os
import re
import tempfile
from dataclasses import dataclass
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from slogqual import __version__
from slogqual.analysis.classes import REFERENCE_CLASSES, fmt_band
from slogqual.report import advice as advice_part
from slogqual.report import charts as chart_jobs
from slogqual.report import classes as class_words
from slogqual.report import plot as plots
from slogqual.report import scenario as scenario_part
from slogqual.report.document import (SUMMARY_HEADERS, DeviceSection, SharedPaths, ShelfSection, all_warnings,
                                      device_section, shared_paths, shelf_section, summary_row)
from slogqual.report.inputs import ReportInputs
from slogqual.report.markup import esc as _e
from slogqual.report.markup import verdict_boxes
from slogqual.report.markup import kv as _kv
from slogqual.report.markup import table as _table
from slogqual.report.powercut import POWERCUT_SUMMARY_HEADERS, PowercutSection, powercut_section, powercut_summary_row
from slogqual.report.qualification import qualification_html
from slogqual.results import SWEEP_SCHEMA, SweepResult
from slogqual.results import schema as S
from slogqual.results.advice import AdviceResult
from slogqual.results.powercut import PowercutResult
from slogqual.results.qualification import QualificationResult
from slogqual.results.scenario import ScenarioResult
from slogqual.results.shelf import ShelfResult

CHART_SIZE = (960, 540)


@dataclass
class Chart:
    key: str
    caption: str
    svg: str  # inline-ready <svg> element
    notes: List[str]


def inline_svg(svg_text: str, prefix: str, caption: str = "") -> str:
    """gnuplot's standalone SVG file -> an <svg> element fit for inlining in HTML."""
    text = re.sub(r"<\?xml[^>]*\?>", "", svg_text)
    text = re.sub(r"<!DOCTYPE[^>]*>", "", text, flags=re.S)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    ids = {m.group(2) for m in re.finditer(r"""\bid=(['"])([^'"]+)\1""", text)}
    for ident in sorted(ids, key=len, reverse=True):
        esc = re.escape(ident)
        text = re.sub(rf"""\bid=(['"]){esc}\1""", rf"id=\g<1>{prefix}-{ident}\g<1>", text)
        text = re.sub(rf"""href=(['"])#{esc}\1""", rf"href=\g<1>#{prefix}-{ident}\g<1>", text)
        text = re.sub(rf"url\(#{esc}\)", f"url(#{prefix}-{ident})", text)
    # Scale with the page: keep the viewBox, drop the fixed pixel size.
    text = re.sub(r"<svg\b([^>]*?)\swidth=\"[^\"]*\"", r"<svg\1", text, count=1)
    text = re.sub(r"<svg\b([^>]*?)\sheight=\"[^\"]*\"", r"<svg\1", text, count=1)
    text = re.sub(r"<title>.*?</title>", f'<title id="{prefix}-title">{html.escape(caption or "chart")}</title>',
                  text, count=1, flags=re.S)
    text = text.replace("<svg", f'<svg class="chart" role="img" aria-labelledby="{prefix}-title"', 1)
    return text.strip()


def svg_charts(jobs: Sequence[chart_jobs.ChartJob], size: Tuple[int, int] = CHART_SIZE) -> List[Chart]:
    """Each chart drawn by gnuplot as SVG and made fit for inlining (its ids prefixed with its key)."""
    charts: List[Chart] = []
    with tempfile.TemporaryDirectory(prefix="slogqual-report-") as tmp:
        for job in jobs:
            out = os.path.join(tmp, f"{job.key}.svg")
            plots.draw(job.script(out, "svg", size), out)
            with open(out, encoding="utf-8") as fh:
                charts.append(Chart(job.key, job.caption, inline_svg(fh.read(), f"c-{job.key}", job.caption), job.notes))
    return charts


def render_charts(results: Sequence[SweepResult], bands: bool = True,
                  size: Tuple[int, int] = CHART_SIZE) -> List[Chart]:
    """The sweeps' charts: latency, p99 (when any has percentiles), ops/s and MiB/s against IO size."""
    return svg_charts(chart_jobs.sweep_jobs(results, bands=bands), size)


CSS = """
:root { --ink:#1d2329; --muted:#5b6670; --line:#d9dee3; --bad:#b3261e; --bad-bg:#fdecea; --good:#1e6b34;
        --good-bg:#e7f4ea; --neutral-bg:#f1f3f5; }
* { box-sizing: border-box; }
body { font: 14px/1.45 "DejaVu Sans", "Segoe UI", Helvetica, Arial, sans-serif; color: var(--ink);
       margin: 0 auto; padding: 24px 32px 48px; max-width: 1180px; background: #fff; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 19px; margin: 32px 0 8px; border-bottom: 2px solid var(--line);
padding-bottom: 4px; } h3 { font-size: 16px; margin: 20px 0 6px; }
.meta { color: var(--muted); margin: 0 0 16px; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.kv th { width: 190px; }
figure { margin: 12px 0 24px; } figcaption { color: var(--muted); font-size: 13px; margin-top: 4px; }
svg.chart { width: 100%; height: auto; max-width: 960px; border: 1px solid var(--line); display: block; }
.verdicts { display: flex; flex-wrap: wrap; gap: 10px; margin: 8px 0 12px; }
.verdict { border-radius: 6px; padding: 8px 12px; min-width: 260px; flex: 1 1 260px; background: var(--neutral-bg); }
.verdict.bad { background: var(--bad-bg); border-left: 5px solid var(--bad); }
.verdict.good { background: var(--good-bg); border-left: 5px solid var(--good); }
.verdict.neutral { border-left: 5px solid #98a2ab; }
.verdict b { display: block; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.verdict small { display: block; color: var(--muted); margin-top: 2px; }
.class { font-size: 15px; background: #eef4fb; border-left: 5px solid #4e79a7; padding: 8px 12px; margin: 8px 0; }
ul.warnings li { color: var(--bad); } ul.notes li { color: var(--muted); }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: -1px; margin-right: 6px; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
.qual td.pass { background: var(--good-bg); color: var(--good); font-weight: 600; }
.qual td.fail { background: var(--bad-bg); color: var(--bad); font-weight: 600; }
.qual td.not-evaluated { background: var(--neutral-bg); font-weight: 600; }
.qverdict { font-size: 17px; padding: 8px 12px; border-radius: 6px; margin: 8px 0; }
.qverdict.pass { background: var(--good-bg); border-left: 5px solid var(--good); }
.qverdict.fail, .qverdict.refused, .qverdict.error { background: var(--bad-bg); border-left: 5px solid var(--bad); }
.qverdict.incomplete { background: var(--neutral-bg); border-left: 5px solid #98a2ab; }
ul.bounds li { color: var(--muted); font-style: italic; }
section.scenario table, section.advice table { display: block; max-width: 100%; overflow-x: auto; }
"""


def _device_html(s: DeviceSection, n: int) -> str:
    r = s.result
    out = [f'<section class="device" id="device-{n}">', f"<h2>{n}. {_e(s.name)}</h2>",
           f'<p class="meta">Result file {_e(s.path)} · source {_e(r.source)} · status {_e(r.status)}'
           + (f" · error: {_e(r.error)}" if r.error else "") + "</p>"]
    out.append(verdict_boxes(s.verdicts))
    out.append(f'<p class="class"><strong>Class:</strong> {_e(class_words.summary(s.classification))}</p>')
    for note in class_words.notes(s.classification):
        out.append(f'<p class="meta">{_e(note)}</p>')
    warnings = all_warnings(r)
    if warnings:
        out.append("<h3>Warnings</h3><ul class=\"warnings\">" + "".join(f"<li>{_e(w)}</li>" for w in warnings) + "</ul>")
    out.append("<h3>Device identity</h3>" + _kv(s.identity))
    out.append("<h3>Results per IO size</h3>" + _table(s.point_headers, s.point_rows, numeric_from=1))
    if s.upper_bound_percentiles:
        out.append('<p class="meta">Percentiles and max of write+flush pairs are upper bounds; the mean is exact '
                   "(docs/results.md, lat_basis).</p>")
    if r.source == "diskinfo":
        out.append('<p class="meta">diskinfo prints only the mean; IO counts marked ~ follow from its loop '
                   "(batches of 250 writes until 1 s has passed).</p>")
    out.append("<h3>Parameters</h3>" + _kv(s.params))
    out.append("<h3>Environment</h3>" + _kv(s.environment))
    if r.notes:
        out.append("<h3>Notes</h3><ul class=\"notes\">" + "".join(f"<li>{_e(x)}</li>" for x in r.notes) + "</ul>")
    out.append("</section>")
    return "\n".join(out)


def _powercut_html(s: PowercutSection, n: int) -> str:
    out = [f'<section class="powercut" id="device-{n}">', f"<h2>{n}. {_e(s.name)}</h2>",
           f'<p class="meta">Result file {_e(s.path)} · slogqual.powercut/1 · status {_e(s.result.status)}</p>',
           verdict_boxes([s.verdict] + ([s.power_loss] if s.power_loss else []))]
    out.append(f'<p class="class"><strong>How the power was cut:</strong> {_e(s.caveat)}</p>')
    out.append("<h3>Cycles</h3>" + _table(s.cycle_headers, s.cycle_rows))
    out.append('<p class="meta">intact: the record read back whole; torn: its header, a payload that does not '
               "match; stale: another cycle's or run's record in its place; missing: no valid header. "
               "Lost = torn + stale + missing (docs/powercut.md).</p>")
    if s.lost_rows:
        out.append(f"<h3>First lost records ({len(s.lost_rows)} of {s.lost_total})</h3>" + _table(s.lost_headers, s.lost_rows))
    out.append("<h3>Method</h3>" + _kv(s.method_rows))
    out.append("<h3>Device</h3>" + _kv(s.identity))
    out.append("<h3>Run</h3>" + _kv(s.run_rows))
    if s.notes:
        out.append("<h3>Notes</h3><ul class=\"notes\">" + "".join(f"<li>{_e(x)}</li>" for x in s.notes) + "</ul>")
    out.append("</section>")
    return "\n".join(out)


def _shared_html(shared: SharedPaths) -> str:
    out = ['<section id="shared-paths"><h2>Shared paths</h2>', f'<p class="meta">{_e(shared.lead)}</p>']
    if shared.rows:
        out.append(_table(shared.headers, shared.rows))
        if shared.sentences:
            out.append('<ul class="notes">' + "".join(f"<li>{_e(x)}</li>" for x in shared.sentences) + "</ul>")
    else:
        out.append(f"<p>The {shared.units} units with a path to hardware share no element of it.</p>")
    out.append("</section>")
    return "\n".join(out)


def _shelf_html(s: ShelfSection, n: int) -> str:
    r = s.result
    out = [f'<section class="shelf" id="shelf-{n}"><h2>Together vs alone: {_e(", ".join(r.units))}</h2>',
           f'<p class="meta">Result file {_e(s.path)} · slogqual.shelf/1 · {_e(r.started)} · each unit alone, then '
           f"all at once, {r.runtime_s:g} s per size (QD1 write + flush pairs, the pair engine)</p>"]
    if s.shared:
        out.append("<h3>What they share</h3>" + _table(s.shared_headers, s.shared))
    out.append(_table(s.size_headers, s.sizes, numeric_from=1))
    if s.findings:
        out.append('<ul class="warnings">' + "".join(f"<li>{_e(x)}</li>" for x in s.findings) + "</ul>")
    out.append("</section>")
    return "\n".join(out)


def _figure(c: Chart, n: int) -> str:
    return (f'<figure id="chart-{_e(c.key)}">{c.svg}<figcaption>Figure {n}. {_e(c.caption)}'
            + "".join(f"<br>{_e(x)}" for x in c.notes) + "</figcaption></figure>")


def _figures(charts: Sequence[Chart], numbers: Iterator[int]) -> str:
    return "\n".join(_figure(c, next(numbers)) for c in charts)


# What the report's opening line says of each kind it holds.
INTRO = {
    "sweeps": "Single-threaded (QD1) synchronous writes, each followed by a cache flush, as the ZFS intent log "
              "writes them. ",
    "cuts": "Power-cut tests: numbered, checksummed records written and flushed one by one, the power cut, then "
            "every acknowledged record read back. ",
    "scenarios": "Pool scenarios: a throwaway pool under each configuration, the load's IOPS and latency per thread "
                 "step, the ZIL's kstats per step. ",
    "advices": "Advice: what each log candidate's own sweep predicts for a pool's sync=always writes, beside the "
               "measurement where this report holds one. ",
    "qualifications": "Qualifications: each device judged against a profile's criteria. ",
}


def intro(counts: Mapping[str, int]) -> str:
    return "".join(words for kind, words in INTRO.items() if counts.get(kind))


def build_html(results: Sequence[SweepResult], paths: Sequence[str], charts: Sequence[Chart],
               title: Optional[str] = None, bands: bool = True,
               powercuts: Sequence[Tuple[PowercutResult, str]] = (),
               shelves: Sequence[Tuple[ShelfResult, str]] = (),
               scenarios: Sequence[Tuple[ScenarioResult, str]] = (),
               advices: Sequence[Tuple[AdviceResult, str]] = (),
               qualifications: Sequence[Tuple[QualificationResult, str]] = (),
               figures: Optional[Mapping[str, Sequence[Chart]]] = None) -> str:
    """The report. ``charts``: the sweeps'; ``figures``: those of each scenario and advice, by the key
    report/charts.report_jobs gives them (``scenarioN``, ``adviceN``)."""
    figures = figures or {}
    sections = [device_section(r, p) for r, p in zip(results, paths)]
    cuts = [powercut_section(r, p) for r, p in powercuts]
    scens = [scenario_part.scenario_section(r, p) for r, p in scenarios]
    advs = [advice_part.advice_section(a, p, scenarios) for a, p in advices]
    names = ([q.target for q, _ in qualifications] + [s.name for s in sections] + [c.name for c in cuts]
             + [s.name for s in scens] + [a.name for a in advs])
    names = list(dict.fromkeys(names))  # a qualification and its own sweep name one device
    title = title or ("SLOG qualification: " + ", ".join(names[:4]) + (" …" if len(names) > 4 else ""))
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    counts = {"sweeps": len(sections), "cuts": len(cuts), "scenarios": len(scens), "advices": len(advs),
              "qualifications": len(qualifications)}
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f'<meta name="generator" content="slogqual {_e(__version__)}">',
           f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
           f"<h1>{_e(title)}</h1>",
           f'<p class="meta">Generated {_e(now)} by slogqual {_e(__version__)} from {sum(counts.values())} '
           f"result(s). {_e(intro(counts).strip())}</p>"]
    if qualifications:
        out.append(qualification_html([q for q, _ in qualifications], [p for _, p in qualifications]))
    out.append("<h2>Summary</h2>")
    if sections:
        out.append(_table(SUMMARY_HEADERS, [summary_row(s) for s in sections], numeric_from=99))
    if cuts:
        out.append(_table(POWERCUT_SUMMARY_HEADERS, [powercut_summary_row(c) for c in cuts]))
    if scens:
        out.append(_table(scenario_part.SUMMARY_HEADERS, [scenario_part.summary_row(s) for s in scens]))
    if advs:
        out.append(_table(advice_part.SUMMARY_HEADERS, [advice_part.summary_row(a) for a in advs]))
    bad = [(s.name, w) for s in sections for w in all_warnings(s.result)]
    if bad:
        out.append('<ul class="warnings">' + "".join(f"<li><strong>{_e(n)}:</strong> {_e(w)}</li>" for n, w in bad)
                   + "</ul>")
    shared = shared_paths(results)
    if shared is not None:
        out.append(_shared_html(shared))
    for n, (shelf_result, shelf_path) in enumerate(shelves, 1):
        out.append(_shelf_html(shelf_section(shelf_result, shelf_path), n))
    numbers = itertools.count(1)
    if sections:
        out.append("<h2>Charts</h2>")
        if not charts:
            out.append('<p class="meta">No measured points to chart.</p>')
    out.append(_figures(charts, numbers))
    if bands and sections:
        out.append("<h3>Reference classes (shaded bands)</h3>")
        out.append("<table><thead><tr><th>class</th><th>small-IO latency band</th><th>the talk says</th>"
                   "<th>examples</th></tr></thead><tbody>")
        for c in REFERENCE_CLASSES:
            out.append(f'<tr><td><span class="swatch" style="background:{_e(c.colour)}"></span>{_e(c.name)}</td>'
                       f"<td>{_e(fmt_band(c))}</td><td>{_e(c.quoted)}</td><td>{_e(c.examples)}</td></tr>")
        out.append("</tbody></table><p class=\"meta\">Bands from the SDC 2019 talk \"Real-world Performance "
                   "Advantages of NVDIMM and NVMe\" (single-threaded sync writes); a quoted \"~X\" is drawn as X/2 "
                   "to 2X. Guidance for the eye, not pass/fail limits.</p>")
    n = itertools.count(1)
    out += [_device_html(s, next(n)) for s in sections] + [_powercut_html(c, next(n)) for c in cuts]
    out += [scenario_part.section_html(s, next(n), _figures(figures.get(f"scenario{i}", ()), numbers))
            for i, s in enumerate(scens, 1)]
    out += [advice_part.section_html(a, next(n), _figures(figures.get(f"advice{i}", ()), numbers))
            for i, a in enumerate(advs, 1)]
    schemas = ", ".join(x for x, there in ((S.QUALIFICATION, qualifications), (SWEEP_SCHEMA, sections),
                                           (S.POWERCUT, cuts), (S.SHELF, shelves), (S.SCENARIO, scens),
                                           (S.ADVICE, advs)) if there)
    out.append(f"<footer>slogqual {_e(__version__)} · schema {_e(schemas or SWEEP_SCHEMA)} · this file is "
               "self-contained (no scripts, no external resources).</footer></body></html>")
    return "\n".join(x for x in out if x) + "\n"


def report_html(got: ReportInputs, title: Optional[str] = None, bands: bool = True) -> str:
    """``slogqual report``'s HTML of every document given: the charts drawn, the sections written."""
    figures: Dict[str, List[Chart]] = {k: svg_charts(jobs) for k, jobs in chart_jobs.report_jobs(got, bands).items()}
    sweeps = got.charted_sweeps()
    return build_html([r for r, _ in sweeps], [p for _, p in sweeps], figures.pop("sweeps"), title=title, bands=bands,
                      powercuts=got.powercuts, shelves=got.shelves, scenarios=got.scenarios, advices=got.advices,
                      qualifications=got.qualifications, figures=figures)
