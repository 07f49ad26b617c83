"""slogqual compare: two sweeps side by side, per size, with regressions flagged (exit 1)."""

from __future__ import annotations

import json
import sys

from tabulate import tabulate

from slogqual.analysis import compare as cmp
from slogqual.errors import UsageError
from slogqual.report.plot import series_label
from slogqual.report.inputs import load_results
from slogqual.units import size_label


def register(sub) -> None:
    p = sub.add_parser("compare", help="compare two results per size; exit 1 when a regression is flagged",
                       description="Compare result B against baseline A at every IO size: both values, the "
                                   "ratio B/A, and a flag where B is worse (regression) or better (improvement) "
                                   "by more than the threshold. Exit code 1 when any regression is flagged.")
    p.add_argument("a", metavar="A.json", help="the baseline")
    p.add_argument("b", metavar="B.json", nargs="?", help="the result to judge")
    # --- the result store as the baseline (logic in slogqual/cli/history.py) ---
    p.add_argument("--baseline", metavar="model:M",
                   help="compare A.json with the stored sweeps of this model (or serial:S) and flag regressions "
                        "beyond their spread: slogqual compare --baseline model:M NEW.json")
    p.add_argument("--store", metavar="PATH", help="result store for --baseline (default: $SLOGQUAL_STORE or "
                                                  "~/.local/share/slogqual/results.sqlite)")
    p.add_argument("--metric", choices=sorted(cmp.METRICS), default="latency",
                   help="latency (mean, default), p99, iops or mbps")
    p.add_argument("--threshold", default="10%", help="flag changes beyond this (default 10%%; 0.1 also works)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.set_defaults(func=run)


def _fmt(v):
    return "-" if v is None else f"{v:.1f}" if v >= 10 else f"{v:.3g}"


def run(args) -> int:
    if args.baseline:  # --- the result store as the baseline (slogqual/cli/history.py) ---
        from slogqual.cli import history
        if args.b:
            raise UsageError("--baseline judges one result against the store: give only NEW.json")
        return history.run_baseline(args.baseline, args.a, args.metric, args.store, args.json)
    if not args.b:
        raise UsageError("give A.json and B.json (or --baseline model:M NEW.json)")
    threshold = cmp.parse_threshold(args.threshold)
    a, b = load_results([args.a, args.b])
    c = cmp.compare(a, b, args.metric, threshold)
    if args.json:
        json.dump({
            "schema": "slogqual.compare/1",
            "a": args.a, "b": args.b, "metric": c.metric.key, "unit": c.metric.unit, "threshold": threshold,
            "rows": [{"size": r.size, "a": r.a, "b": r.b, "ratio": r.ratio, "flag": r.flag or None} for r in c.rows],
            "regressions": len(c.regressions), "improvements": len(c.improvements),
            "summary": c.summary(), "notes": c.notes,
        }, sys.stdout, indent=2)
        print()
    else:
        print(f"A: {args.a} ({series_label(a)})")
        print(f"B: {args.b} ({series_label(b)})")
        rows = [[size_label(r.size), _fmt(r.a), _fmt(r.b), "-" if r.ratio is None else f"{r.ratio:.3f}",
                 "-" if r.change_pct is None else f"{r.change_pct:+.1f}%", r.flag.upper() if r.flag == cmp.REGRESSION
                 else r.flag] for r in c.rows]
        unit = c.metric.unit
        print(tabulate(rows, headers=["size", f"A {c.metric.label} ({unit})", f"B ({unit})", "B/A", "change", "flag"],
                       colalign=("right", "right", "right", "right", "right", "left"), disable_numparse=True))
        for note in c.notes:
            print(f"note: {note}")
        print(c.summary())
    return 1 if c.regressions else 0
