"""slogqual import diskinfo: FreeBSD diskinfo -wS output into slogqual.sweep/1 documents."""

from __future__ import annotations

import json
import os
import sys
from typing import List

from slogqual.analysis.classes import classify
from slogqual.cli.options import add_force, guard_output, named
from slogqual.errors import UsageError
from slogqual.importers import diskinfo
from slogqual.report import classes as class_words
from slogqual.report.text import sweep_table
from slogqual.results import SWEEP_SCHEMA_PREFIX, SweepResult, save_sweep


def register(sub) -> None:
    p = sub.add_parser("import", help="read other tools' results (FreeBSD diskinfo -wS) into slogqual results",
                       description="Convert results of other tools into slogqual.sweep/1 documents.")
    isub = p.add_subparsers(dest="import_kind", metavar="KIND", parser_class=type(p))
    d = isub.add_parser("diskinfo", help="FreeBSD diskinfo -wS output (padded or whitespace-collapsed, "
                                         "with or without the verbose header, one or several devices)")
    d.add_argument("file", metavar="FILE", help="a file holding diskinfo -wS output ('-' for stdin)")
    d.add_argument("-o", "--output", type=named("a result file"), metavar="RESULT.json",
                   help="write the result here; several devices go to RESULT-1.json, RESULT-2.json, ... "
                        "(default: print the JSON document, or a list of them, on stdout)")
    d.add_argument("--name", type=named("a label"), action="append", metavar="LABEL",
                   help="a label for each device in the file, in order (for output without a header)")
    d.add_argument("--skip-garbage", action="store_true",
                   help="pass over lines that are not diskinfo output (they are listed in the result notes)")
    d.add_argument("--table", action="store_true", help="print a table of each device instead of JSON")
    add_force(d, "sweep result")
    d.set_defaults(func=run_diskinfo)
    # --- the result store (logic in slogqual/cli/history.py) ---
    from slogqual.cli import history
    history.add_store_arguments(d)
    history.register_import_json(isub)
    p.set_defaults(func=lambda args: (_ for _ in ()).throw(UsageError("import needs a KIND: diskinfo or json")))


def _outputs(path: str, results: List[SweepResult]) -> List[str]:
    if len(results) == 1:
        return [path]
    stem, ext = os.path.splitext(path)
    return [f"{stem}-{i}{ext or '.json'}" for i in range(1, len(results) + 1)]


def run_diskinfo(args) -> int:
    if args.file == "-":
        results = diskinfo.import_text(sys.stdin.read(), "<stdin>", skip_garbage=args.skip_garbage,
                                       labels=args.name or ())
    else:
        results = diskinfo.import_file(args.file, skip_garbage=args.skip_garbage, labels=args.name or ())
    if args.output:
        for path in _outputs(args.output, results):
            guard_output(args, path, "sweep result", SWEEP_SCHEMA_PREFIX, inputs=[args.file])
    for r in results:
        for w in r.warnings:
            print(f"slogqual: warning: {r.target.get('label') or r.target['path']}: {w}", file=sys.stderr)
    if args.output:
        for r, path in zip(results, _outputs(args.output, results)):
            save_sweep(path, r)
            c = classify(r)
            print(f"{path}: {len(r.points)} sizes, {class_words.summary(c)}", file=sys.stderr)
    from slogqual.cli import history  # --- the result store ---
    history.record_results(args, results, _outputs(args.output, results) if args.output else [None] * len(results))
    if args.table:
        for r in results:
            print(sweep_table(r))
            print()
    elif not args.output:
        docs = [r.to_dict() for r in results]
        json.dump(docs[0] if len(docs) == 1 else docs, sys.stdout, indent=2)
        print()
    return 0
