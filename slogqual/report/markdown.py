"""The report as Markdown: the same sections as the HTML, charts as PNG files beside it."""

from __future__ import annotations

import datetime
import os
from typing import List, Optional, Sequence, Tuple

from slogqual import __version__
from slogqual.analysis.classes import REFERENCE_CLASSES, fmt_band
from slogqual.report import plot as plots
from slogqual.report.document import (SUMMARY_HEADERS, DeviceSection, all_warnings, device_section, shared_paths,
                                      shelf_section, summary_row)
from slogqual.report.powercut import POWERCUT_SUMMARY_HEADERS, PowercutSection, powercut_section, powercut_summary_row
from slogqual.results import SweepResult, atomic_file
from slogqual.results.powercut import PowercutResult
from slogqual.results.shelf import ShelfResult

CHARTS = [("latency", "Mean latency per synchronous write"), ("p99", "99th percentile latency"),
          ("iops", "Synchronous writes per second"), ("mbps", "Bandwidth of synchronous writes")]


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 99) -> str:
    out = ["| " + " | ".join(_cell(h) for h in headers) + " |",
           "|" + "|".join("---:" if i >= numeric_from else "---" for i in range(len(headers))) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def md_kv(rows: Sequence[Tuple[str, str]]) -> str:
    return md_table(["", ""], rows)


def chart_path(output: str, metric: str) -> str:
    return f"{os.path.splitext(output)[0]}-{metric}.png"


def chart_paths(output: str) -> List[str]:
    """Every PNG a Markdown report at ``output`` may write beside itself (each an output to guard)."""
    return [chart_path(output, metric) for metric, _ in CHARTS]


def render_chart_files(results: Sequence[SweepResult], output: str, bands: bool = True) -> List[Tuple[str, str, List[str]]]:
    """PNG charts next to the Markdown file: [(file name, caption, notes)]."""
    out: List[Tuple[str, str, List[str]]] = []
    results = [r for r in results if r.points]  # a sweep that failed before its first size has no curve
    if not results:
        return out
    for metric, caption in CHARTS:
        if metric == "p99" and not any(p.lat_us.p99 is not None for r in results for p in r.points):
            continue
        path = chart_path(output, metric)
        spec = plots.build_spec(results, metric, bands=bands)
        with atomic_file(path, binary=True) as (_, tmp):  # gnuplot writes by name: to the temporary file
            plots.render(spec, tmp, "png")
        out.append((os.path.basename(path), caption, spec.notes))
    return out


def _device_md(s: DeviceSection, n: int) -> str:
    r = s.result
    out = [f"## {n}. {s.name}", "", f"Result file `{s.path}` · source {r.source} · status {r.status}"
           + (f" · error: {r.error}" if r.error else ""), ""]
    for v in s.verdicts:
        mark = {"bad": "**WARNING**", "good": "OK", "neutral": "–"}[v.tone]
        detail = "; ".join(f"{k}: {val}" for k, val in v.detail[:6])
        out.append(f"- **{v.label}:** {v.text} ({mark})" + (f" — {detail}" if detail else ""))
    out += ["", f"**Class:** {s.classification.summary}", ""]
    out += [f"_{note}_" for note in s.classification.notes]
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
    out = [f"## {n}. {s.name}", "", f"Result file `{s.path}` · slogqual.powercut/1 · status {s.doc.get('status')}", ""]
    for v in [s.verdict] + ([s.power_loss] if s.power_loss else []):
        mark = {"bad": "**WARNING**", "good": "OK", "neutral": "–"}[v.tone]
        detail = "; ".join(f"{k}: {val}" for k, val in v.detail[:6])
        out.append(f"- **{v.label}:** {v.text} ({mark})" + (f" — {detail}" if detail else ""))
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


def build_markdown(results: Sequence[SweepResult], paths: Sequence[str], charts: Sequence[Tuple[str, str, List[str]]],
                   title: Optional[str] = None, bands: bool = True,
                   powercuts: Sequence[Tuple[PowercutResult, str]] = (),
                   shelves: Sequence[Tuple[ShelfResult, str]] = ()) -> str:
    sections = [device_section(r, p) for r, p in zip(results, paths)]
    cuts = [powercut_section(r, p) for r, p in powercuts]
    names = [s.name for s in sections] + [c.name for c in cuts]
    title = title or ("SLOG qualification: " + ", ".join(names[:4]) + (" …" if len(names) > 4 else ""))
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    out = [f"# {title}", "", f"Generated {now} by slogqual {__version__} from {len(results) + len(cuts)} result(s). "
           + ("Single-threaded (QD1) synchronous writes, each followed by a cache flush. " if sections else "")
           + ("Power-cut tests: numbered, checksummed records written and flushed one by one, the power cut, then "
              "every acknowledged record read back." if cuts else ""), "", "## Summary", ""]
    if sections:
        out += [md_table(SUMMARY_HEADERS, [summary_row(s) for s in sections]), ""]
    if cuts:
        out += [md_table(POWERCUT_SUMMARY_HEADERS, [powercut_summary_row(c) for c in cuts]), ""]
    for s in sections:
        out += [f"- **{s.name}: {w}**" for w in all_warnings(s.result)]
    on_paths = _paths_md(results, shelves)
    if on_paths:
        out += [""] + on_paths
    if sections:
        out += ["", "## Charts", ""]
        if not charts:
            out += ["No measured points to chart.", ""]
    for n, (name, caption, notes) in enumerate(charts, 1):
        out += [f"![{caption}]({name})", "", f"_Figure {n}. {caption}._" + "".join(f" {x}" for x in notes), ""]
    if bands and sections:
        out += ["### Reference classes (shaded bands)", "",
                md_table(["class", "small-IO latency band", "the talk says", "examples"],
                         [[c.name, fmt_band(c), c.quoted, c.examples] for c in REFERENCE_CLASSES]), "",
                "Bands from the SDC 2019 talk (single-threaded sync writes); a quoted \"~X\" is drawn as X/2 to 2X.", ""]
    for n, s in enumerate(sections, 1):
        out.append(_device_md(s, n))
    for n, c in enumerate(cuts, len(sections) + 1):
        out.append(_powercut_md(c, n))
    return "\n".join(out).rstrip() + "\n"
