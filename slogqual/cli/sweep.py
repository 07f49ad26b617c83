"""slogqual sweep: QD1 sync-write sweeps of one or more targets."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import List, Optional

from slogqual import limits, paths, store
from slogqual import target as targets
from slogqual.errors import ResultWriteError, SlogqualError, UsageError
from slogqual.progress import Progress
from slogqual.report.text import diskinfo_lines, sweep_table
from slogqual.results import SWEEP_SCHEMA_PREFIX, STATUS_COMPLETE, SweepResult
from slogqual.sweep import SweepParams, SyncWriteSweep, claim_all, same_target, tray_refusal, load_for_resume, note_resume, resume_target
from slogqual.sweep import DEFAULT_MAX_RUNTIME_S, ENGINE_AUTO, ENGINE_PAIR, ENGINES
from slogqual.analysis.overtime import DEFAULT_INTERVAL_MS
from slogqual.tools import fio, pairbench
from slogqual.units import DEFAULT_SIZES, KiB, parse_percent, parse_sizes, parse_sustain

SUSTAIN_DEFAULT_SIZE = 128 * KiB  # a ZIL log block of a large sync write; an NFS copy's ingest
from slogqual.cli.options import in_range
from slogqual.cli.history import STORE_HELP
from slogqual.store.backends import is_url
from slogqual.outputs import check_output


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
                        "percentiles are upper bounds (default for --mode dsync and nbd:// targets)")
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
    p.add_argument("-o", "--output", metavar="PATH",
                   help="result file (one target) or directory (several); default: slogqual-sweep-NAME-TIME.json here")
    p.add_argument("--force", action="store_true",
                   help="let -o replace an existing file that is not a slogqual sweep result")
    p.add_argument("--resume", metavar="RESULT", help="continue an interrupted sweep from its result file")
    p.add_argument("--store", metavar="PATH|URL", help=STORE_HELP)
    p.add_argument("--format", choices=("table", "json", "diskinfo"), default="table", help="what to print on stdout")
    p.add_argument("--json", action="store_true", help="print the result document(s) (same as --format json)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=run)


def _name_of(spec: Optional[str]) -> str:
    return paths.file_stem(spec, "target") if spec else "scratch"


def _output_paths(args, specs: List[Optional[str]]) -> List[str]:
    stamp = time.strftime("%Y%m%dT%H%M%S")
    names = [f"slogqual-sweep-{_name_of(s)}-{stamp}.json" for s in specs]
    if len(set(names)) != len(names):
        names = [f"slogqual-sweep-{i}-{_name_of(s)}-{stamp}.json" for i, s in enumerate(specs, 1)]
    if not args.output:
        return [os.path.abspath(n) for n in names]
    out = args.output
    if len(specs) == 1 and not (os.path.isdir(out) or out.endswith("/")):
        parent = os.path.dirname(os.path.abspath(out))
        if not os.path.isdir(parent):
            raise UsageError(f"{out}: directory {parent} does not exist")
        return [os.path.abspath(out)]
    if os.path.exists(out) and not os.path.isdir(out):
        raise UsageError(f"{out} is a file: with several targets -o names a directory (one result per target)")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{out}: cannot make the output directory ({exc.strerror or exc})") from None
    return [os.path.join(os.path.abspath(out), n) for n in names]


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


def _engines(params: SweepParams, kinds: List[str]):
    """(fio version, pair engine version) of the engines that will measure targets of these kinds, each
    checked (the pair engine built, on first use from a source tree) before anything is written; fio is
    needed only where it measures (--mode dsync, NBD, --engine fio), "" where it does not."""
    engines = {params.engine_for_kind(k) for k in kinds}
    fio_version = fio.check_version().text if engines - {ENGINE_PAIR} else ""
    engine_version = pairbench.check_version().text if ENGINE_PAIR in engines else ""
    return fio_version, engine_version


def run(args) -> int:
    progress = Progress(quiet=args.quiet)
    argv = ["slogqual", *sys.argv[1:]]
    result_store = store.Store(args.store)  # a bad --store / $SLOGQUAL_STORE is refused now (nothing opened yet)

    if args.resume:
        if args.targets or args.sizes or args.engine != ENGINE_AUTO or any(
                v is not None for v in (args.precision, args.max_runtime, args.sustain, args.interval)):
            raise UsageError("--resume takes its target, sizes, engine and options from the result file")
        result = load_for_resume(args.resume)
        if result.status == STATUS_COMPLETE and all(result.point(s) for s in result.params["sizes"]):
            progress.say(f"{args.resume}: already complete")
            _emit(args, [result])
            return 0
        try:
            params = SweepParams.from_dict(result.params)
        except UsageError as exc:
            raise UsageError(f"{args.resume}: {exc}") from None
        fio_version, engine_version = _engines(params, [result.target.get("kind")])
        note_resume(result, fio_version, argv, engine_version)
        tgt = resume_target(result, os.getcwd())
        params.check_target(tgt)
        plan = [(tgt, os.path.abspath(args.resume), result)]
    else:
        params = _validate(args)
        specs: List[Optional[str]] = list(args.targets) or [None]
        outputs = _output_paths(args, specs)
        largest = max(params.sizes)
        # Resolve every target before measuring any: bad input costs nothing.
        resolved = [targets.resolve(s, largest) if s else None for s in specs]
        for t in resolved:
            if t:
                params.check_target(t)
        same_target(resolved)
        # ... and every output: never a target, the store, a device node, or a file that is not ours
        protect = [(t.path, "a target of this sweep") for t in resolved if t and not targets.is_nbd_uri(t.path)]
        if not is_url(result_store.location):
            protect.append((result_store.location, "the result store"))
        for out in outputs:
            check_output(out, "sweep result", SWEEP_SCHEMA_PREFIX, protect, force=args.force)
        fio_version, engine_version = _engines(params, [t.kind if t else targets.KIND_SCRATCH for t in resolved])
        plan = []
        for spec, tgt, out in zip(specs, resolved, outputs):
            plan.append((tgt if tgt else targets.create_scratch(os.getcwd(), largest), out, None))

    done: List[SweepResult] = []
    worst = 0
    claims = contextlib.ExitStack()
    try:
        # Every target passes the interlocks before any is written: a tray is all or nothing.
        tray = [tgt for tgt, _, _ in plan]
        refused = claim_all(claims, tray, args.destroy_data)
        if refused and not args.skip_refused:
            raise tray_refusal(refused, tray)
        for tgt, exc in refused:
            print(f"slogqual: skipped {tgt.path} (--skip-refused): {exc}", file=sys.stderr)
            worst = max(worst, exc.exit_code)
        if refused and len(refused) == len(plan):
            print("slogqual: every target was refused: nothing left to sweep", file=sys.stderr)
        plan = [(t, o, p) for t, o, p in plan if all(t is not r for r, _ in refused)]
    except BaseException as exc:
        claims.close()
        for tgt, _, _ in plan:
            targets.remove_scratch(tgt)
        if not isinstance(exc, KeyboardInterrupt):
            raise
        print("slogqual: interrupted; measured sizes are kept, continue with --resume", file=sys.stderr)
        return 130
    try:
        for tgt, out, previous in plan:
            try:
                for note in tgt.notes:
                    progress.say(f"note: {note}")
                sweep = SyncWriteSweep(tgt, params, out, progress, result=previous,
                                       fio_version=fio_version, argv=argv, engine_version=engine_version)
                for w in (previous.warnings if previous else []):
                    progress.say(f"WARNING: {w}")
                result = sweep.run()
                for w in result.warnings:
                    progress.say(f"WARNING: {w}")
                done.append(result)
                progress.say(f"result: {out}")
                store.record_or_warn(result.to_dict(), out, store_path=args.store)  # history / compare --baseline
            except ResultWriteError as exc:
                # The result file cannot be written: what was measured goes to stdout instead.
                print(f"slogqual: {exc}; the result, marked failed, follows on stdout", file=sys.stderr)
                json.dump(exc.document, sys.stdout, indent=2)
                print()
                worst = max(worst, exc.exit_code)
            except SlogqualError as exc:
                # One target failing (or refused) does not stop the others; its result file
                # keeps every size measured before the failure.
                print(f"slogqual: {exc}", file=sys.stderr)
                if os.path.exists(out):
                    print(f"slogqual: partial result kept: {out} (continue with --resume)", file=sys.stderr)
                worst = max(worst, exc.exit_code)
            finally:
                targets.remove_scratch(tgt)
    except KeyboardInterrupt:
        claims.close()
        for tgt, out, _ in plan:
            targets.remove_scratch(tgt)
        print("slogqual: interrupted; measured sizes are kept, continue with --resume", file=sys.stderr)
        return 130
    claims.close()
    if done:
        _emit(args, done)
    return worst
