"""slogqual history, and the command-line side of compare --baseline and import json: arguments and
printing only. Queries, selection and recording are in slogqual/store.py; judging in
slogqual/analysis/compare.py.
"""

from __future__ import annotations

import json
import sys
from typing import Optional, Sequence

from tabulate import tabulate

from slogqual import store
from slogqual.errors import UsageError
from slogqual.qualify import baseline as bl
from slogqual.store import KIND_QUALIFICATION, KIND_SCENARIO, KIND_SWEEP, Store
from slogqual.units import size_label


def register(sub) -> None:
    p = sub.add_parser("history", help="list past sweeps, scenarios and qualifications from the result store",
                       description="Runs recorded in the result store (SQLite), oldest first, keyed by model, serial "
                                   "and firmware.")
    p.add_argument("--model", help="only runs of this model")
    p.add_argument("--serial", help="only runs of this serial")
    p.add_argument("--firmware", help="only runs of this firmware")
    p.add_argument("--kind", choices=(KIND_SWEEP, KIND_SCENARIO, KIND_QUALIFICATION), help="only this kind of run")
    p.add_argument("--store", metavar="PATH", help="result store (default: $SLOGQUAL_STORE or "
                                                  "~/.local/share/slogqual/results.sqlite)")
    p.add_argument("--show", type=int, metavar="ID", help="print the stored JSON document of run ID")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    with Store(args.store) as st:
        if args.show is not None:
            json.dump(st.document(args.show), sys.stdout, indent=2)
            print()
            return 0
        runs = st.runs(model=args.model, serial=args.serial, kind=args.kind, firmware=args.firmware)
    if args.json:
        json.dump([r.__dict__ for r in runs], sys.stdout, indent=2)
        print()
        return 0
    if not runs:
        print(f"no runs in {st.path}" + (" matching" if (args.model or args.serial or args.kind) else ""))
        return 0
    rows = [[r.id, (r.started or r.recorded)[:19], r.kind, r.model or "-", r.serial or "-", r.firmware or "-",
             r.target or "-", r.verdict or r.status or "-", r.summary or ""] for r in runs]
    print(tabulate(rows, headers=["id", "started", "kind", "model", "serial", "firmware", "target", "status",
                                  "summary"], disable_numparse=True))
    return 0


# --- compare --baseline ---------------------------------------------------------------------------

def _fmt(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.1f}" if abs(v) >= 10 else f"{v:.3g}"


def run_baseline(spec: str, new_path: str, metric: str, store_path: Optional[str], as_json: bool,
                 k: float = bl.K_SIGMA, floor: float = bl.FLOOR) -> int:
    key = store.parse_selector(spec)
    new = store.load_sweep_or_qualification(new_path)
    found = store.stored_sweeps(key, store_path, leave_out=new)
    if not found.runs:
        raise UsageError(f"no stored sweeps of {spec} to compare with (slogqual history {'--model ' + key['model'] if 'model' in key else '--serial ' + key['serial']})")
    c = bl.compare(new, [s for _, s in found.runs], metric, k=k, floor=floor)
    if found.identical:
        c.notes.append(f"left out {len(found.identical)} stored run(s) identical to the new result")
    if as_json:
        json.dump({"schema": "slogqual.compare-baseline/1", "baseline": key, "new": new_path, "metric": c.metric.key,
                   "unit": c.metric.unit, "runs": c.runs, "k_sigma": c.k_sigma, "floor": c.floor,
                   "rows": [r.to_dict() for r in c.rows], "regressions": len(c.regressions),
                   "summary": c.summary(), "notes": c.notes}, sys.stdout, indent=2)
        print()
    else:
        print(f"baseline: {c.runs} stored sweep(s) of {spec}; new: {new_path}")
        unit = c.metric.unit
        rows = [[size_label(r.size), r.n, _fmt(r.mean), _fmt(r.sd), _fmt(min(r.values) if r.values else None),
                 _fmt(max(r.values) if r.values else None), _fmt(r.limit), _fmt(r.new),
                 r.flag.upper() if r.flag == bl.REGRESSION else r.flag] for r in c.rows]
        print(tabulate(rows, headers=["size", "runs", f"mean ({unit})", "sd", "min", "max", "limit", "new", "flag"],
                       colalign=("right",) * 8 + ("left",), disable_numparse=True))
        for note in c.notes:
            print(f"note: {note}")
        print(f"{c.metric.label}: {c.summary()}")
    return 1 if c.regressions else 0


# --- import ---------------------------------------------------------------------------------------

def record_files(paths: Sequence[str], store_path: Optional[str]) -> int:
    """slogqual import json FILE...: every document (or list of documents) into the store."""
    docs = store.read_documents(paths)
    ids = store.record_documents(docs, store_path)
    for (doc, path), rid in zip(docs, ids):
        what = store.SCHEMA_KINDS[doc["schema"]]
        print(f"{path}: {what} " + (f"recorded as run {rid}" if rid else "already in the store"), file=sys.stderr)
    return 0


def register_import_json(isub) -> None:
    """`slogqual import json FILE...` (registered by slogqual/cli/import_cmd.py)."""
    j = isub.add_parser("json", help="slogqual result documents (sweeps, scenarios, qualifications) into the "
                                     "result store")
    j.add_argument("files", nargs="+", metavar="RESULT.json")
    j.add_argument("--store", metavar="PATH", help="result store (default: $SLOGQUAL_STORE or "
                                                  "~/.local/share/slogqual/results.sqlite)")
    j.set_defaults(func=lambda args: record_files(args.files, args.store))


def add_store_arguments(parser) -> None:
    """--store / --no-store for commands that also record their results (import diskinfo)."""
    parser.add_argument("--store", metavar="PATH", help="result store (default: $SLOGQUAL_STORE or "
                                                       "~/.local/share/slogqual/results.sqlite)")
    parser.add_argument("--no-store", action="store_true", help="do not record the results in the result store")


def record_results(args, results, paths) -> None:
    """Record imported sweeps unless --no-store; a store failure is one line, never an exit code."""
    if not getattr(args, "no_store", False):
        store.record_results_or_warn(results, paths, getattr(args, "store", None))
