"""slogqual report: one self-contained HTML file (or Markdown) for a lab to mail or archive."""

from __future__ import annotations

import os

from slogqual.cli.options import add_force, guard_output, named
from slogqual.errors import UsageError
from slogqual.outputs import picture, text_mark
from slogqual.report import charts
from slogqual.report import html as html_report
from slogqual.report import markdown as md_report
from slogqual.report.inputs import load_report_results
from slogqual.results import write_text_atomic


def register(sub) -> None:
    p = sub.add_parser("report", help="write a report of every document slogqual writes — sweeps, power-cut tests, "
                                       "together-vs-alone (shelf), scenario results, advice and qualifications: "
                                       "HTML with inline charts (default) or Markdown",
                       description="Charts (gnuplot), tables, verdicts and their evidence, device identity, "
                                   "environment and parameters of the given results, in one file.")
    p.add_argument("results", nargs="+", metavar="RESULT.json")
    p.add_argument("-o", "--output", type=named("a report file"), required=True, metavar="report.html|report.md")
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
    got = load_report_results(args.results)
    bands = not args.no_bands
    if fmt == "html":
        text = html_report.report_html(got, title=args.title, bands=bands)
    else:
        jobs = charts.report_jobs(got, bands=bands)
        for job in (j for group in jobs.values() for j in group):  # the charts beside it are outputs too
            guard_output(args, md_report.chart_path(args.output, job.key), "report chart", picture,
                         inputs=[*args.results, args.output])
        text = md_report.report_markdown(got, args.output, jobs, title=args.title, bands=bands)
    write_text_atomic(args.output, text)
    print(args.output)
    return 0
