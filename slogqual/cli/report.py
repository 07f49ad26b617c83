"""slogqual report: one self-contained HTML file (or Markdown) for a lab to mail or archive."""

from __future__ import annotations

import os

from slogqual.cli.options import add_force, guard_output
from slogqual.errors import UsageError
from slogqual.outputs import picture, text_mark
from slogqual.report import html as html_report
from slogqual.report import markdown as md_report
from slogqual.report.inputs import load_report_results
from slogqual.results import write_text_atomic


def register(sub) -> None:
    p = sub.add_parser("report", help="write a report of sweeps, power-cut tests and together-vs-alone (shelf) "
                                       "results: HTML with inline charts (default) or Markdown",
                       description="Charts (gnuplot), tables, device identity, link and write-cache verdicts, "
                                   "environment and parameters of the given results, in one file.")
    p.add_argument("results", nargs="+", metavar="RESULT.json")
    p.add_argument("-o", "--output", required=True, metavar="report.html|report.md")
    p.add_argument("--format", choices=("html", "md"), help="default: from the file name (.md -> md, else html)")
    p.add_argument("--title", help="report title")
    p.add_argument("--no-bands", action="store_true", help="leave the reference class bands out of the charts")
    add_force(p, "report")
    p.set_defaults(func=run)


def run(args) -> int:
    fmt = args.format or ("md" if args.output.lower().endswith((".md", ".markdown")) else "html")
    directory = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(directory):
        raise UsageError(f"cannot write {args.output}: no directory {directory}")
    # the HTML report names its generator in a meta tag (line 4), the Markdown report in its third line
    guard_output(args, args.output, "report", text_mark('<meta name="generator" content="slogqual', lines=8)
                 if fmt == "html" else text_mark("by slogqual"), inputs=args.results)
    if fmt == "md":  # the charts beside it are outputs too
        for chart in md_report.chart_paths(args.output):
            guard_output(args, chart, "report chart", picture, inputs=[*args.results, args.output])
    got = load_report_results(args.results)
    results, paths = [r for r, _ in got.sweeps], [p for _, p in got.sweeps]
    bands = not args.no_bands
    if fmt == "html":
        charts = html_report.render_charts(results, bands=bands)
        text = html_report.build_html(results, paths, charts, title=args.title, bands=bands, powercuts=got.powercuts,
                                      shelves=got.shelves)
    else:
        charts = md_report.render_chart_files(results, args.output, bands=bands)
        text = md_report.build_markdown(results, paths, charts, title=args.title, bands=bands,
                                        powercuts=got.powercuts, shelves=got.shelves)
    write_text_atomic(args.output, text)
    print(args.output)
    return 0
