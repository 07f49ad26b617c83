"""slogqual export --csv: the points of one or more results as CSV."""

from __future__ import annotations

import os
import sys

from slogqual.cli.options import add_force, guard_output, named
from slogqual.errors import UsageError
from slogqual.outputs import text_mark
from slogqual.report.export import COLUMNS
from slogqual.report.export import to_csv
from slogqual.report.inputs import load_results


def register(sub) -> None:
    p = sub.add_parser("export", help="export result points (CSV) for spreadsheets and acceptance scripts",
                       description="Write every point of the given results, one row per result and size.")
    p.add_argument("results", nargs="+", metavar="RESULT.json")
    p.add_argument("--csv", action="store_true", help="CSV (the only format so far; required)")
    p.add_argument("-o", "--output", type=named("a CSV file (without -o: stdout)"), metavar="FILE.csv", help="write here instead of stdout")
    add_force(p, "CSV export")
    p.set_defaults(func=run)


def run(args) -> int:
    if not args.csv:
        raise UsageError("export needs a format: --csv")
    if args.output:
        guard_output(args, args.output, "CSV export", text_mark(",".join(COLUMNS), lines=1), inputs=args.results)
    results = load_results(args.results)
    text = to_csv(results, [os.path.basename(p) for p in args.results])
    if args.output:
        with open(args.output, "w", newline="") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0
