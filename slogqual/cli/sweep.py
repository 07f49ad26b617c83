"""slogqual sweep: QD1 sync-write sweeps of one or more targets."""

from __future__ import annotations

import json
import sys
from typing import List

from slogqual import limits, store
from slogqual.errors import UsageError
from slogqual.process import EXIT_INTERRUPTED
from slogqual.progress import Progress
from slogqual.report import shelf as shelf_words
from slogqual.report.text import diskinfo_lines, sweep_table
from slogqual.results import SweepResult
from slogqual.sweep.engine import SweepParams
from slogqual.sweep.engine import DEFAULT_MAX_RUNTIME_S, ENGINE_AUTO, ENGINES
from slogqual.sweep.door import SweepRequest, UnitOutcome, run_sweeps
from slogqual.analysis.overtime import DEFAULT_INTERVAL_MS
from slogqual.tools import fio
from slogqual.units import DEFAULT_SIZES, KiB, parse_percent, parse_sizes, parse_sustain

SUSTAIN_DEFAULT_SIZE = 128 * KiB  # a ZIL log block of a large sync write; an NFS copy's ingest
from slogqual.cli.options import STORE, add_path_ceiling, in_range, named
from slogqual.cli.history import STORE_HELP


def register(sub) -> None:
    p = sub.add_parser("sweep", help="QD1 synchronous-write sweep, 512 B to 8 MiB (like diskinfo -wS)",
                       description="For each TARGET (block device, regular file, nbd:// or nbd+unix:// URI; "
                                   "default: a scratch file in the current directory) and each IO size, run "
                                   "single-threaded QD1 synchronous random writes with fio.")
    p.add_argument("targets", nargs="*", metavar="TARGET")
    p.add_argument("--sizes", help="comma-separated IO sizes, e.g. 4k,128k,1m (default: 512 B ... 8 MiB, 15 sizes)")
    p.add_argument("--mode", default="flush",
                   help="flush: write then fdatasync per IO, O_DIRECT (default, what the ZIL and diskinfo do); "
                        "dsync: O_DSYNC writes")
    p.add_argument("--engine", choices=ENGINES, default=ENGINE_AUTO,
                   help="pair: slogqual's pair engine times every write+flush, exact percentiles (default in flush "
                        "mode on files and block devices); fio: fio's separate write and flush histograms, "
                        "percentiles are upper bounds (default for --mode dsync and nbd:// targets, and where no pair "
                        "engine was installed and no cc can build one: the result and stderr then say so)")
    p.add_argument("--runtime", type=in_range(limits.RUNTIME_S), default=1.0, metavar="SECONDS", help="per size (default 1, like diskinfo)")
    p.add_argument("--settle", type=in_range(limits.SETTLE_S), default=1.0, metavar="SECONDS",
                   help="sync and pause before each size (default 1, like diskinfo)")
    p.add_argument("--precision", metavar="PCT",
                   help="pair engine: run each size until the 95 %% interval of the pair mean is within ±PCT (e.g. "
                        "2%%; batch means), at least --runtime and at most --max-runtime")
    p.add_argument("--max-runtime", type=in_range(limits.RUNTIME_S), default=None, metavar="SECONDS",
                   help=f"with --precision: the most one size may run (default {DEFAULT_MAX_RUNTIME_S:g})")
    p.add_argument("--sustain", metavar="DURATION|BYTES",
                   help="pair engine: write one size (default 128k) for a duration (90s, 10min, 1h) or an amount "
                        "(20G) and report latency over time and where bandwidth fell below half of its first 10 s")
    p.add_argument("--interval", type=in_range(limits.INTERVAL_MS), default=None, metavar="MS",
                   help="latency over time: milliseconds per interval (default 100)")
    p.add_argument("--allow-large", action="store_true", help="allow sizes above 8 MiB")
    p.add_argument("--destroy-data", action="store_true",
                   help="confirm that the named block devices may be overwritten")
    p.add_argument("--skip-refused", action="store_true",
                   help="with several targets: sweep those that pass the safety interlocks and name the refused "
                        "ones (default: one refusal refuses the whole run, nothing written; exit 3 either way)")
    p.add_argument("--parallel", action="store_true",
                   help="measure the targets at the same time (a shelf at once), each writing the result a lone "
                        "run writes; a fixed --runtime per size (not --sustain or --precision)")
    p.add_argument("--probe", action="store_true",
                   help="after the sweeps: each target alone, then all at once, at 128 KiB ... 8 MiB (those of "
                        "--sizes, when it has any), then 1 MiB at 8 writes in flight without a flush (fio); where the "
                        "aggregate stopped on the path the units share, and any unit slower than its identical "
                        "siblings with its slot and link (a shelf document beside the results)")
    add_path_ceiling(p)
    p.add_argument("-o", "--output", type=named("a result file or directory"), metavar="PATH",
                   help="result file (one target) or directory (several); default: slogqual-sweep-NAME-TIME.json here")
    p.add_argument("--force", action="store_true",
                   help="let -o replace an existing file that is not a slogqual sweep result")
    p.add_argument("--resume", type=named("the result file to continue"), metavar="RESULT", help="continue an interrupted sweep from its result file")
    p.add_argument("--store", type=STORE, metavar="PATH|URL", help=STORE_HELP)
    p.add_argument("--format", choices=("table", "json", "diskinfo"), default="table", help="what to print on stdout")
    p.add_argument("--json", action="store_true", help="print the result document(s) (same as --format json)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=run)


def _validate(args) -> SweepParams:
    if any(not t.strip() for t in args.targets):
        raise UsageError("an empty target name: give a device, a file or an nbd URI (or no target at all for a "
                         "scratch file here)")
    if args.mode not in fio.MODES:
        raise UsageError(f"unknown mode {args.mode!r}: use one of {', '.join(fio.MODES)}")
    sustain_s = sustain_bytes = None
    if args.sustain is not None:
        kind, amount = parse_sustain(args.sustain)
        sustain_s, sustain_bytes = (amount, None) if kind == "duration" else (None, amount)
    if args.sizes is not None:
        sizes = parse_sizes(args.sizes, args.allow_large)
    else:
        sizes = [SUSTAIN_DEFAULT_SIZE] if args.sustain is not None else list(DEFAULT_SIZES)
    if args.max_runtime is not None and args.precision is None:
        raise UsageError("--max-runtime caps --precision; give --precision too")
    params = SweepParams(mode=args.mode, sizes=sizes, runtime_s=args.runtime, settle_s=args.settle,
                         engine=args.engine,
                         precision=parse_percent(args.precision) if args.precision is not None else None,
                         max_runtime_s=args.max_runtime if args.max_runtime is not None else max(
                             DEFAULT_MAX_RUNTIME_S, args.runtime),
                         sustain_s=sustain_s, sustain_bytes=sustain_bytes,
                         interval_ms=args.interval if args.interval is not None else DEFAULT_INTERVAL_MS)
    params.validate()
    return params


def _emit(args, results: List[SweepResult]) -> None:
    fmt = "json" if args.json else args.format
    if fmt == "json":
        docs = [r.to_dict() for r in results]
        json.dump(docs[0] if len(docs) == 1 else docs, sys.stdout, indent=2)
        print()
    elif fmt == "diskinfo":
        for r in results:
            print(r.target.get("path"))
            print(diskinfo_lines(r))
            print()
    else:
        print("\n\n".join(sweep_table(r) for r in results))


def _say_unit(unit: UnitOutcome) -> None:
    """A target that ended badly, as it ends: its error (and what is kept) on stderr; a result that could
    not be written follows on stdout."""
    if unit.skipped:
        print(f"slogqual: skipped {unit.path} (--skip-refused): {unit.error}", file=sys.stderr)
    elif unit.unsaved is not None:
        print(f"slogqual: {unit.error}; the result, marked failed, follows on stdout", file=sys.stderr)
        json.dump(unit.unsaved, sys.stdout, indent=2)
        print()
    elif unit.error:
        print(f"slogqual: {unit.error}", file=sys.stderr)
        if unit.partial_kept:
            print(f"slogqual: partial result kept: {unit.output} (continue with --resume)", file=sys.stderr)


def run(args) -> int:
    progress = Progress(quiet=args.quiet)
    store.Store(args.store)  # a bad --store / $SLOGQUAL_STORE is refused first (nothing opened yet)
    request = SweepRequest(targets=list(args.targets), output=args.output, resume=args.resume,
                           destroy_data=args.destroy_data, skip_refused=args.skip_refused, parallel=args.parallel,
                           probe=args.probe, path_ceilings=list(args.path_ceiling), force=args.force,
                           store=args.store, argv=["slogqual", *sys.argv[1:]])
    if args.resume:
        if args.targets or args.sizes or args.engine != ENGINE_AUTO or any(
                v is not None for v in (args.precision, args.max_runtime, args.sustain, args.interval)):
            raise UsageError("--resume takes its target, sizes, engine and options from the result file")
    else:
        request.params = _validate(args)
    try:
        outcome = run_sweeps(request, progress, on_unit=_say_unit)
    except KeyboardInterrupt:
        print("slogqual: interrupted; measured sizes are kept, continue with --resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    if outcome.already_complete:
        progress.say(f"{args.resume}: already complete")
    if outcome.skipped and len(outcome.skipped) == len(outcome.units):
        print("slogqual: every target was refused: nothing left to sweep", file=sys.stderr)
    if outcome.results:
        _emit(args, outcome.results)
    if outcome.shelf is not None and not args.json and args.format == "table":
        print()
        print(shelf_words.shelf_table(outcome.shelf))
    return outcome.exit_code
