"""The report as Markdown: the same sections as the HTML, charts as PNG files beside it."""

from __future__ import annotations

import datetime
import itertools
import os
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from slogqual import __version__
from slogqual.analysis.classes import REFERENCE_CLASSES, fmt_band
from slogqual.report import advice as advice_part
from slogqual.report import charts as chart_jobs
from slogqual.report import classes as class_words
from slogqual.report import plot as plots
from slogqual.report import scenario as scenario_part
from slogqual.report.document import (SUMMARY_HEADERS, DeviceSection, all_warnings, device_section, shared_paths,
                                      shelf_section, summary_row)
from slogqual.report.html import intro
from slogqual.report.inputs import ReportInputs
from slogqual.report.markup import md_kv, md_table, md_verdicts
from slogqual.report.powercut import POWERCUT_SUMMARY_HEADERS, PowercutSection, powercut_section, powercut_summary_row
from slogqual.report.qualification import qualification_md
from slogqual.results import SweepResult, atomic_file
from slogqual.results.advice import AdviceResult
from slogqual.results.powercut import PowercutResult
from slogqual.results.qualification import QualificationResult
from slogqual.results.scenario import ScenarioResult
from slogqual.results.shelf import ShelfResult

Figure = Tuple[str, str, List[str]]  # (file name beside the report, caption, notes)


def chart_path(output: str, key: str) -> str:
    return f"{os.path.splitext(output)[0]}-{key}.png"


def png_charts(jobs: Sequence[chart_jobs.ChartJob], output: str) -> List[Figure]:
    """Each chart drawn by gnuplot as a PNG file next to the Markdown file at ``output``."""
    out: List[Figure] = []
    for job in jobs:
        path = chart_path(output, job.key)
        with atomic_file(path, binary=True) as (_, tmp):  # gnuplot writes by name: to the temporary file
            plots.draw(job.script(tmp, "png", plots.DEFAULT_SIZE), tmp)
        out.append((os.path.basename(path), job.caption, job.notes))
    return out


def _figures(charts: Sequence[Figure], numbers: Iterator[int]) -> List[str]:
    out = []
    for name, caption, notes in charts:
        out += [f"![{caption}]({name})", "", f"_Figure {next(numbers)}. {caption}._" + "".join(f" {x}" for x in notes), ""]
    return out


def _device_md(s: DeviceSection, n: int) -> str:
    r = s.result
    out = [f"## {n}. {s.name}", "", f"Result file `{s.path}` · source {r.source} · status {r.status}"
           + (f" · error: {r.error}" if r.error else ""), ""]
    out += md_verdicts(s.verdicts)
    out += ["", f"**Class:** {class_words.summary(s.classification)}", ""]
    out += [f"_{note}_" for note in class_words.notes(s.classification)]
    warnings = all_warnings(r)
    if warnings:
        out += ["### Warnings", ""] + [f"- **{w}**" for w in warnings] + [""]
    out += ["### Device identity", "", md_kv(s.identity), "", "### Results per IO size", "",
            md_table(s.point_headers, s.point_rows, numeric_from=1), ""]
    if s.upper_bound_percentiles:
        out += ["Percentiles and max of write+flush pairs are upper bounds; the mean is exact.", ""]
    if r.source == "diskinfo":
        out += ["diskinfo prints only the mean; IO counts marked ~ follow from its loop (batches of 250 writes "
                "until 1 s has passed).", ""]
    out += ["### Parameters", "", md_kv(s.params), "", "### Environment", "", md_kv(s.environment), ""]
    if r.notes:
        out += ["### Notes", ""] + [f"- {x}" for x in r.notes] + [""]
    return "\n".join(out)


def _powercut_md(s: PowercutSection, n: int) -> str:
    out = [f"## {n}. {s.name}", "", f"Result file `{s.path}` · slogqual.powercut/1 · status {s.result.status}", ""]
    out += md_verdicts([s.verdict] + ([s.power_loss] if s.power_loss else []))
    out += ["", f"**How the power was cut:** {s.caveat}", "", "### Cycles", "",
            md_table(s.cycle_headers, s.cycle_rows, numeric_from=1), "",
            "intact: the record read back whole; torn: its header, a payload that does not match; stale: another "
            "cycle's or run's record in its place; missing: no valid header. Lost = torn + stale + missing.", ""]
    if s.lost_rows:
        out += [f"### First lost records ({len(s.lost_rows)} of {s.lost_total})", "", md_table(s.lost_headers, s.lost_rows), ""]
    out += ["### Method", "", md_kv(s.method_rows), "", "### Device", "", md_kv(s.identity), "",
            "### Run", "", md_kv(s.run_rows), ""]
    if s.notes:
        out += ["### Notes", ""] + [f"- {x}" for x in s.notes] + [""]
    return "\n".join(out)


def _paths_md(results: Sequence[SweepResult], shelves: Sequence[Tuple[ShelfResult, str]]) -> List[str]:
    """The shared paths of the units and each together-vs-alone document, as Markdown lines."""
    out: List[str] = []
    shared = shared_paths(results)
    if shared is not None:
        out += ["## Shared paths", "", shared.lead, ""]
        if shared.rows:
            out += [md_table(shared.headers, shared.rows), ""] + [f"- {x}" for x in shared.sentences] + [""]
        else:
            out += [f"The {shared.units} units with a path to hardware share no element of it.", ""]
    for shelf_result, shelf_path in shelves:
        s = shelf_section(shelf_result, shelf_path)
        r = s.result
        out += [f"## Together vs alone: {', '.join(r.units)}", "",
                f"Result file `{s.path}` · slogqual.shelf/1 · {r.started} · each unit alone, then all at once, "
                f"{r.runtime_s:g} s per size (QD1 write + flush pairs, the pair engine)", ""]
        if s.shared:
            out += ["### What they share", "", md_table(s.shared_headers, s.shared), ""]
        out += [md_table(s.size_headers, s.sizes, numeric_from=1), ""] + [f"- **{x}**" for x in s.findings] + [""]
    return out


def build_markdown(results: Sequence[SweepResult], paths: Sequence[str], charts: Sequence[Figure],
                   title: Optional[str] = None, bands: bool = True,
                   powercuts: Sequence[Tuple[PowercutResult, str]] = (),
                   shelves: Sequence[Tuple[ShelfResult, str]] = (),
                   scenarios: Sequence[Tuple[ScenarioResult, str]] = (),
                   advices: Sequence[Tuple[AdviceResult, str]] = (),
                   qualifications: Sequence[Tuple[QualificationResult, str]] = (),
                   figures: Optional[Mapping[str, Sequence[Figure]]] = None) -> str:
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
    out = [f"# {title}", "", f"Generated {now} by slogqual {__version__} from {sum(counts.values())} result(s). "
           + intro(counts).strip(), ""]
    if qualifications:
        out += qualification_md([q for q, _ in qualifications], [p for _, p in qualifications])
    out += ["## Summary", ""]
    if sections:
        out += [md_table(SUMMARY_HEADERS, [summary_row(s) for s in sections]), ""]
    if cuts:
        out += [md_table(POWERCUT_SUMMARY_HEADERS, [powercut_summary_row(c) for c in cuts]), ""]
    if scens:
        out += [md_table(scenario_part.SUMMARY_HEADERS, [scenario_part.summary_row(s) for s in scens]), ""]
    if advs:
        out += [md_table(advice_part.SUMMARY_HEADERS, [advice_part.summary_row(a) for a in advs]), ""]
    for s in sections:
        out += [f"- **{s.name}: {w}**" for w in all_warnings(s.result)]
    on_paths = _paths_md(results, shelves)
    if on_paths:
        out += [""] + on_paths
    numbers = itertools.count(1)
    if sections:
        out += ["", "## Charts", ""]
        if not charts:
            out += ["No measured points to chart.", ""]
    out += _figures(charts, numbers)
    if bands and sections:
        out += ["### Reference classes (shaded bands)", "",
                md_table(["class", "small-IO latency band", "the talk says", "examples"],
                         [[c.name, fmt_band(c), c.quoted, c.examples] for c in REFERENCE_CLASSES]), "",
                "Bands from the SDC 2019 talk (single-threaded sync writes); a quoted \"~X\" is drawn as X/2 to 2X.", ""]
    n = itertools.count(1)
    out += [_device_md(s, next(n)) for s in sections] + [_powercut_md(c, next(n)) for c in cuts]
    for i, s in enumerate(scens, 1):
        out += scenario_part.section_md(s, next(n), _figures(figures.get(f"scenario{i}", ()), numbers))
    for i, a in enumerate(advs, 1):
        out += advice_part.section_md(a, next(n), _figures(figures.get(f"advice{i}", ()), numbers))
    return "\n".join(out).rstrip() + "\n"


def report_markdown(got: ReportInputs, output: str, jobs: Mapping[str, Sequence[chart_jobs.ChartJob]],
                    title: Optional[str] = None, bands: bool = True) -> str:
    """``slogqual report``'s Markdown of every document given, its charts (report/charts.report_jobs) drawn
    as PNG files beside ``output``."""
    figures: Dict[str, List[Figure]] = {k: png_charts(js, output) for k, js in jobs.items()}
    sweeps = got.charted_sweeps()
    return build_markdown([r for r, _ in sweeps], [p for _, p in sweeps], figures.pop("sweeps"), title=title,
                          bands=bands, powercuts=got.powercuts, shelves=got.shelves, scenarios=got.scenarios,
                          advices=got.advices, qualifications=got.qualifications, figures=figures)
