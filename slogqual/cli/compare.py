"""slogqual compare: two sweeps (or one sweep and the stored runs of its model) per size; a change is
flagged only when significant and at least the minimum effect, or on the mean alone beyond the
mean-alone floor where a side records no spread (exit 1 on a regression, EXIT_CANNOT_JUDGE when
nothing could be judged, 0 otherwise).

Arguments and printing only: the rule is slogqual/analysis/compare.py, its words and table
slogqual/report/compare.py; the stored runs come from slogqual/store.py.
"""

from __future__ import annotations

import json
import sys
from typing import Optional

from slogqual import store
from slogqual.cli.history import STORE_HELP
from slogqual.cli.options import STORE, named
from slogqual.analysis import compare as cmp
from slogqual.errors import UsageError
from slogqual.process import EXIT_CANNOT_JUDGE
from slogqual.report import compare as compare_words
from slogqual.report.inputs import load_results
from slogqual.report.plot import series_label


def register(sub) -> None:
    p = sub.add_parser("compare", help="compare two results per size; exit 1 when a regression is flagged, "
                                       f"{EXIT_CANNOT_JUDGE} when it cannot judge",
                       description="Compare result B against baseline A at every IO size: both means with their "
                                   "spread and IO counts, Welch's t-test on the mean latency (95%%), and a flag "
                                   "where B is significantly worse (regression) or better (improvement) by more "
                                   "than the minimum effect. Where a side records no spread (a diskinfo import), "
                                   "the means alone are judged against the measured run-to-run repeatability of a "
                                   f"1 s mean (±{cmp.MEAN_ALONE_FLOOR * 100:g}%%). Exit code 1 when any regression "
                                   f"is flagged; {EXIT_CANNOT_JUDGE} when no regression is flagged but no size is "
                                   "in both or a size in both cannot be judged (a percentile, a missing value); "
                                   "0 otherwise.")
    p.add_argument("a", metavar="A.json", help="the baseline")
    p.add_argument("b", metavar="B.json", nargs="?", help="the result to judge")
    p.add_argument("--baseline", type=named("the stored runs to compare with (model:M)"), metavar="model:M",
                   help="judge A.json against the pooled stored sweeps of this model (or serial:S) measured like "
                        "it: slogqual compare --baseline model:M NEW.json")
    p.add_argument("--store", type=STORE, metavar="PATH|URL", help=STORE_HELP + ' (for --baseline)')
    p.add_argument("--metric", choices=sorted(cmp.METRICS), default="latency",
                   help="latency (mean, default), iops, mbps, or p99 (shown, not judged: a percentile has no "
                        "recorded spread)")
    p.add_argument("--min-effect", "--threshold", dest="threshold", default=f"{cmp.MIN_EFFECT * 100:g}%",
                   help=f"flag a significant change only when larger than this (default {cmp.MIN_EFFECT * 100:g}%%; "
                        f"0.1 also works)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.set_defaults(func=run)


def _print(c: cmp.Comparison, runs_column: bool = False) -> None:
    for line in compare_words.text(c, runs_column):
        print(line)


def run(args) -> int:
    min_effect = cmp.parse_threshold(args.threshold)
    if args.baseline:
        if args.b:
            raise UsageError("--baseline judges one result against the store: give only NEW.json")
        return run_baseline(args.baseline, args.a, args.metric, args.store, args.json, min_effect)
    if not args.b:
        raise UsageError("give A.json and B.json (or --baseline model:M NEW.json)")
    a, b = load_results([args.a, args.b])
    c = cmp.compare(a, b, args.metric, min_effect)
    if args.json:
        json.dump({"schema": cmp.COMPARE_SCHEMA, "a": args.a, "b": args.b, **compare_words.comparison_dict(c)},
                  sys.stdout, indent=2)
        print()
    else:
        print(f"A: {args.a} ({series_label(a)})")
        print(f"B: {args.b} ({series_label(b)})")
        _print(c)
    return exit_code(c)


def exit_code(c: cmp.Comparison) -> int:
    """1 a regression, EXIT_CANNOT_JUDGE nothing (or not everything) could be judged, 0 no regression."""
    return {cmp.OUTCOME_REGRESSION: 1, cmp.OUTCOME_CANNOT_JUDGE: EXIT_CANNOT_JUDGE}.get(c.outcome, 0)


def run_baseline(spec: str, new_path: str, metric: str, store_path: Optional[str], as_json: bool,
                 min_effect: float = cmp.MIN_EFFECT) -> int:
    key = store.parse_selector(spec)
    new = store.load_sweep_or_qualification(new_path)
    cmp.metric_of(metric)
    found = store.stored_sweeps(key, store_path, leave_out=new)
    if not found.runs:
        raise UsageError(f"no stored sweeps of {spec} to compare with (slogqual history "
                         f"{'--model ' + key['model'] if 'model' in key else '--serial ' + key['serial']})")
    c = cmp.against_baseline(new, [(store.run_label(r), s) for r, s in found.runs], metric, min_effect)
    if not c.pooled:
        raise UsageError(f"none of the {len(found.runs)} stored sweep(s) of {spec} was measured like {new_path} "
                         f"(left out " + "; ".join(compare_words.left_out_text(x) for x in c.left_out) + ")")
    if found.identical:
        c.notes.append(cmp.Note("identical", count=len(found.identical)))
    if as_json:
        json.dump({"schema": cmp.COMPARE_SCHEMA, "baseline": key, "new": new_path, "runs": c.runs,
                   "pooled": c.pooled,
                   "left_out": [{"run": x.label, "reasons": compare_words.reasons(x)} for x in c.left_out],
                   "identical": [r.id for r in found.identical], **compare_words.comparison_dict(c)}, sys.stdout,
                  indent=2)
        print()
    else:
        print(f"baseline: {c.runs} stored sweep(s) of {spec}, pooled; new: {new_path}")
        for label in c.pooled:
            print(f"  pooled {label}")
        for x in c.left_out:
            print(f"  left out {compare_words.left_out_text(x)}")
        print("  (a pool's mean and spread are those of all its IOs together; a pool has no percentiles, so means "
              "are compared)")
        _print(c, runs_column=True)
    return exit_code(c)
