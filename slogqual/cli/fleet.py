"""slogqual fleet: every model's units from the result store, the units and hosts that stand out, the
firmware split; tables, --json, or --html FILE. Arguments and printing only: the units come from
slogqual/store/fleet.py, the statistics from slogqual/analysis/fleet.py, the pictures from
slogqual/report/fleet.py."""

from __future__ import annotations

import json
import os
import sys

from slogqual.analysis import fleet as F
from slogqual.cli.history import STORE_HELP
from slogqual.cli.options import STORE, add_force, guard_output, named
from slogqual.errors import UsageError
from slogqual.outputs import text_mark
from slogqual.report import fleet as report
from slogqual.results import schema as S
from slogqual.results import write_text_atomic
from slogqual.store import Store
from slogqual.store.fleet import fleet_units


def register(sub) -> None:
    p = sub.add_parser("fleet", help="the fleet view: per model units, verdicts, spread; outlier units and hosts; "
                                     "firmware split (from the result store)",
                       description="Every unit's latest sweep and verdicts from the result store (usually the "
                                   "PostgreSQL store a lab's hosts share): per model the units tested, PASS/FAIL per "
                                   "profile and the distribution of 4 KiB and 128 KiB latency and bandwidth; units "
                                   "outside their model's distribution (median and MAD) with host, slot/path and "
                                   "serial; hosts whose every unit is slow; the same model split by firmware, "
                                   "judged with Welch's t-test.")
    p.add_argument("--store", type=STORE, metavar="PATH|URL", help=STORE_HELP)
    p.add_argument("--model", type=named("a model"), help="only this model")
    p.add_argument("--json", action="store_true", help="print the fleet as JSON")
    p.add_argument("--html", type=named("an HTML file"), metavar="FILE", help="also write a self-contained HTML report with gnuplot charts")
    p.add_argument("--title", help="title of the HTML report")
    add_force(p, "fleet report")
    p.set_defaults(func=run)


def run(args) -> int:
    if args.html:
        directory = os.path.dirname(os.path.abspath(args.html))
        if not os.path.isdir(directory):
            raise UsageError(f"cannot write {args.html}: no directory {directory}")
        guard_output(args, args.html, "fleet report", text_mark('<meta name="generator" content="slogqual', lines=8))
    with Store(args.store) as st:
        units = fleet_units(st, args.model)
        name = st.path
    if not units:
        raise UsageError(f"no units in {name}" + (f" of model {args.model}" if args.model else "")
                         + ": record runs with slogqual qualify/sweep --store or slogqual import json")
    fleet = F.analyse(units)
    if args.html:
        text = report.build_html(fleet, report.render_charts(fleet), name, args.title or "")
        write_text_atomic(args.html, text)
        print(f"{args.html}: fleet report", file=sys.stderr)
    if args.json:
        json.dump({"schema": S.FLEET, "store": name, **report.fleet_dict(fleet)}, sys.stdout, indent=2)
        print()
    else:
        print(report.text(fleet, name))
    return 0
