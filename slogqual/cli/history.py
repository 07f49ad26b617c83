"""slogqual history and slogqual import json: arguments and printing only.

Queries, selection of runs and recording are in slogqual/store.py; ``compare --baseline`` is
slogqual/cli/compare.py, judging in slogqual/analysis/compare.py.
"""

from __future__ import annotations

import json
import sys
from typing import Optional, Sequence

from tabulate import tabulate

from slogqual import limits, store
from slogqual.cli.options import STORE, in_range, named
from slogqual.store import KINDS, Store

STORE_HELP = ("result store: a path (SQLite) or postgresql://USER@HOST/DB (default: $SLOGQUAL_STORE or "
              "~/.local/share/slogqual/results.sqlite)")


def register(sub) -> None:
    p = sub.add_parser("history", help="list past sweeps, scenarios, qualifications and power-cut tests from the result "
                                        "store",
                       description="Runs recorded in the result store (SQLite or PostgreSQL), oldest first, keyed by model, serial "
                                   "and firmware.")
    p.add_argument("--model", type=named("a model"), help="only runs of this model")
    p.add_argument("--serial", type=named("a serial"), help="only runs of this serial")
    p.add_argument("--firmware", type=named("a firmware"), help="only runs of this firmware")
    p.add_argument("--kind", choices=KINDS, help="only this kind of run")
    p.add_argument("--store", type=STORE, metavar="PATH|URL", help=STORE_HELP)
    p.add_argument("--show", type=in_range(limits.STORE_ID), metavar="ID", help="print the stored JSON document of run ID")
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


# --- import ---------------------------------------------------------------------------------------

def record_files(paths: Sequence[str], store_path: Optional[str]) -> int:
    """slogqual import json FILE...: every document (or list of documents) into the store."""
    docs = store.read_documents(paths)
    ids = store.record_documents(docs, store_path)
    for d, rid in zip(docs, ids):
        print(f"{d.path}: {store.kind_of(d.document)} " + (f"recorded as run {rid}" if rid else "already in the store"), file=sys.stderr)
    return 0


def register_import_json(isub) -> None:
    """`slogqual import json FILE...` (registered by slogqual/cli/import_cmd.py)."""
    j = isub.add_parser("json", help="slogqual result documents (sweeps, scenarios, qualifications, power-cut "
                                     "tests) into the result store")
    j.add_argument("files", nargs="+", metavar="RESULT.json")
    j.add_argument("--store", type=STORE, metavar="PATH|URL", help=STORE_HELP)
    j.set_defaults(func=lambda args: record_files(args.files, args.store))


def add_store_arguments(parser) -> None:
    """--store / --no-store for commands that also record their results (import diskinfo)."""
    parser.add_argument("--store", type=STORE, metavar="PATH|URL", help=STORE_HELP)
    parser.add_argument("--no-store", action="store_true", help="do not record the results in the result store")


def record_results(args, results, paths) -> None:
    """Record imported sweeps unless --no-store; a store failure is one line, never an exit code."""
    if not getattr(args, "no_store", False):
        store.record_results_or_warn(results, paths, getattr(args, "store", None))
