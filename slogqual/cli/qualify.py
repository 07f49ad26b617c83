"""slogqual qualify: PASS or FAIL for each device against a profile, with the evidence."""

from __future__ import annotations

import os
import sys
import time
from typing import List, Optional

from slogqual.results.powercut import PowercutResult
from slogqual.errors import UsageError
from slogqual.progress import Progress
from slogqual.qualify import precondition, profile as profiles, steady
from slogqual.qualify import output
from slogqual.qualify.run import DeviceRun, Options, load_scenario_results, scenario_documents, stems
from slogqual.report import junit
from slogqual.cli.history import STORE_HELP
from slogqual.store import Store, StoreError
from slogqual.tools import fio
from slogqual.units import parse_size, parse_sizes
from slogqual import limits
from slogqual.cli.options import add_force, guard_output, in_range
from slogqual.outputs import text_mark
from slogqual.results import schema
from slogqual.results.schema import prefix



def register(sub) -> None:
    p = sub.add_parser(
        "qualify", help="judge devices against a qualification profile: PASS/FAIL, JSON, JUnit, HTML",
        description="For each DEV in turn: identify it, optionally precondition it, run 4 KiB sync-write rounds "
                    "until a steady state (SNIA SSS PTS rule), sweep the sizes the profile needs, get the pool "
                    "scenario results it asks for, and judge every criterion. Exit 0 when every device passes "
                    "every criterion, 1 when any fails (or cannot be evaluated), 2 on bad input, 3 when a device "
                    "is refused by the safety interlocks.")
    p.add_argument("devices", nargs="+", metavar="DEV", help="block device, regular file or nbd:// URI")
    p.add_argument("--profile", required=True, metavar="NAME|FILE",
                   help="a profile in scenarios/profiles/ (" + ", ".join(profiles.builtin_names()) + ") or a TOML file")
    p.add_argument("--out", metavar="DIR", help="where results go (default: slogqual-qualify-TIME here)")
    p.add_argument("--junit", metavar="FILE", help="also write JUnit XML (one testsuite per device)")
    add_force(p, "JUnit report or result of the kind in --out")
    p.add_argument("--precondition", choices=precondition.MODES,
                   help="none, quick (a bounded sequential fill) or full (the device written twice); "
                        "default: the profile's")
    p.add_argument("--quick-bytes", default="1g", metavar="SIZE", help="span of --precondition quick (default 1g)")
    p.add_argument("--max-rounds", type=in_range(limits.MAX_ROUNDS), metavar="N",
                   help=f"steady-state rounds at most (default: the profile's, normally {steady.MAX_ROUNDS}; "
                        "0 skips the rounds)")
    p.add_argument("--round-runtime", type=in_range(limits.RUNTIME_S), metavar="SECONDS", help="seconds per steady-state round")
    p.add_argument("--sizes", help="sweep sizes (default: the profile's); must include every size a criterion names")
    p.add_argument("--runtime", type=in_range(limits.RUNTIME_S), metavar="SECONDS", help="sweep seconds per size (default: the profile's)")
    p.add_argument("--settle", type=in_range(limits.SETTLE_S), metavar="SECONDS", help="pause before each size (default: the profile's)")
    p.add_argument("--lab", action="store_true", help="run the profile's pool scenarios in the QEMU lab (--quick)")
    p.add_argument("--data", nargs="+", default=[], metavar="DEV",
                   help="data devices for the profile's pool scenarios, with DEV as the SLOG (destroys their data)")
    p.add_argument("--scenario-quick", action="store_true", help="with --data: run the scenarios' --quick variant")
    p.add_argument("--scenario-result", action="append", default=[], metavar="FILE",
                   help="a slogqual.scenario/1 result to judge scenario criteria by (repeatable)")
    p.add_argument("--powercut", metavar="FILE",
                   help="a slogqual.powercut/1 result of this device (slogqual powercut run): the power-loss verdict "
                        "becomes measured (strict-plp requires it)")
    p.add_argument("--destroy-data", action="store_true", help="confirm that the named block devices may be overwritten")
    p.add_argument("--model", help="model to file the results under when the device has none (NBD, files)")
    p.add_argument("--serial", help="serial to file the results under when the device has none (one DEV only)")
    p.add_argument("--firmware", help="firmware to file the results under when the device has none")
    p.add_argument("--store", metavar="PATH|URL", help=STORE_HELP)
    p.add_argument("--no-store", action="store_true", help="do not record the run in the result store")
    p.add_argument("--no-html", action="store_true", help="skip the HTML report")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=run)


def _guard_out_dir(args, out_dir: str, prof: profiles.Profile) -> None:
    """Every file this run will write into --out may replace only an earlier one of its kind (a re-run
    into the same directory), never someone's file of the same name, unless --force."""
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise UsageError(f"{out_dir} is not a directory: --out names the directory for the results")
    if not os.path.isdir(out_dir):
        return  # a new directory: nothing in it to replace
    planned = []
    for stem in stems(list(args.devices)):
        planned += [(f"{stem}.qualification.json", "qualification document", prefix(schema.QUALIFICATION)),
                    (f"{stem}.sweep.json", "sweep result", prefix(schema.SWEEP))]
        planned += [(f"{stem}.scenario-{n}.json", "scenario result", prefix(schema.SCENARIO))
                    for n in prof.scenarios if args.data]
    planned += [(f"scenario-{n}-lab.json", "scenario result", prefix(schema.SCENARIO))
                for n in prof.scenarios if args.lab]
    if not args.no_html:
        planned.append(("qualification.html", "HTML report", text_mark('<meta name="generator" content="slogqual',
                                                                         lines=8)))
    for name, what, ours in planned:
        guard_output(args, os.path.join(out_dir, name), what, ours, inputs=list(args.devices))


def _options(args, prof: profiles.Profile, argv: List[str], fio_version: str) -> Options:
    if args.serial and len(args.devices) > 1:
        raise UsageError("--serial labels one device: qualify the devices one at a time to give each a serial")
    if len(set(args.devices)) != len(args.devices):
        raise UsageError("a device is named twice")
    # read (and checked) before anything is written
    powercut = PowercutResult.load(args.powercut).to_dict() if args.powercut else None
    if args.lab and args.data:
        raise UsageError("--lab runs the scenarios on emulated devices: it does not take --data")
    sizes = parse_sizes(args.sizes) if args.sizes else list(prof.sizes)
    if args.sizes:
        profiles.check_sizes(prof, sizes, "--sizes")
    quick_bytes = parse_size(args.quick_bytes)
    if quick_bytes < 128 * 1024:
        raise UsageError("--quick-bytes must be at least 128k")
    out_dir = os.path.abspath(args.out or f"slogqual-qualify-{time.strftime('%Y%m%dT%H%M%S')}")
    if args.junit:  # before the output directory is made: a refused run writes nothing
        guard_output(args, args.junit, "JUnit report", text_mark('<testsuites name="slogqual', lines=2),
                     inputs=list(args.devices))
    _guard_out_dir(args, out_dir, prof)
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{out_dir}: cannot create the output directory: {exc.strerror}") from None
    if args.junit:
        parent = os.path.dirname(os.path.abspath(args.junit))
        if not os.path.isdir(parent):
            raise UsageError(f"{args.junit}: directory {parent} does not exist")
    return Options(
        profile=prof, devices=list(args.devices), out_dir=out_dir,
        precondition=args.precondition or prof.precondition, destroy_data=args.destroy_data, sizes=sizes,
        runtime_s=args.runtime if args.runtime is not None else prof.runtime_s,
        settle_s=args.settle if args.settle is not None else prof.settle_s,
        round_runtime_s=args.round_runtime if args.round_runtime is not None else prof.round_runtime_s,
        max_rounds=args.max_rounds if args.max_rounds is not None else prof.max_rounds,
        quick_bytes=quick_bytes, lab=args.lab, data=list(args.data), scenario_quick=args.scenario_quick,
        scenario_results=load_scenario_results(args.scenario_result),
        labels={"model": args.model, "serial": args.serial, "firmware": args.firmware},
        argv=argv, fio_version=fio_version,
        powercut=powercut, powercut_path=args.powercut)


def _open_store(args) -> tuple:
    if args.no_store:
        return None, None
    store = Store(args.store)
    try:
        store.open()
    except StoreError as exc:
        print(f"slogqual: error: {exc}; this run's results are written to files only", file=sys.stderr)
        return None, str(exc)
    return store, None


def _record(store: Optional[Store], store_error: Optional[str], dr: DeviceRun) -> None:
    if store is None:
        dr.doc["store"] = {"recorded": False, "error": store_error} if store_error else None
    else:
        ident = {k: dr.doc["identity"].get(k) for k in ("model", "serial", "firmware", "class")}
        try:
            ids = {}
            if dr.sweep is not None:
                ids["sweep"] = store.record(dr.sweep.to_dict(), dr.sweep_path, ident)
            for doc, path in scenario_documents(dr):
                store.record(doc, path)
            ids["qualification"] = store.record(dr.doc, dr.doc_path, ident)
            dr.doc["store"] = {"recorded": True, "path": store.path, "ids": ids}
        except StoreError as exc:
            print(f"slogqual: error: {exc}; results kept in {dr.doc_path}", file=sys.stderr)
            dr.doc["store"] = {"recorded": False, "path": store.path, "error": str(exc)}
    dr.rewrite()


def run(args) -> int:
    prof = profiles.load(args.profile)  # bad profile: one line, exit 2, before anything else
    fio_version = fio.check_version().text
    argv = ["slogqual", *sys.argv[1:]]
    opts = _options(args, prof, argv, fio_version)
    progress = Progress(quiet=args.quiet)
    store, store_error = _open_store(args)
    runs: List[DeviceRun] = []
    lab_cache: dict = {}
    interrupted = False
    try:
        for spec, stem in zip(opts.devices, stems(opts.devices)):
            progress.say(f"qualifying {spec} against {prof.name}")
            dr = DeviceRun(opts, spec, stem, progress, lab_cache)
            runs.append(dr)
            dr.run()
            _record(store, store_error, dr)
            if dr.error:
                print(f"slogqual: {spec}: {dr.error}", file=sys.stderr)
            print(output.device_table(dr.doc))
            print()
    except KeyboardInterrupt:
        interrupted = True
        print("slogqual: interrupted; the results so far are kept", file=sys.stderr)
    finally:
        if store is not None:
            store.close()
    docs = [r.doc for r in runs if r.doc]
    if len(docs) > 1:
        print("Summary")
        print(output.summary_table(docs))
    # The reports come after the verdicts are measured and saved: one that cannot be written (ENOSPC,
    # EROFS, its directory gone) is one line, and the verdict's exit code stands.
    if args.junit and docs:
        try:
            junit.write(args.junit, docs)
            progress.say(f"JUnit: {args.junit}")
        except OSError as exc:
            print(f"slogqual: error: the JUnit report {args.junit} could not be written ({exc.strerror or exc}); "
                  f"the verdicts are in {opts.out_dir}", file=sys.stderr)
    if not args.no_html and docs:
        sweeps = [(r.sweep, r.sweep_path) for r in runs if r.sweep is not None and r.sweep.points]
        html_path = os.path.join(opts.out_dir, "qualification.html")
        try:
            for note in output.write_html(html_path, docs, [s for s, _ in sweeps], [p for _, p in sweeps]):
                print(f"slogqual: note: {note}", file=sys.stderr)
            progress.say(f"report: {html_path}")
        except OSError as exc:
            print(f"slogqual: error: the HTML report {html_path} could not be written ({exc.strerror or exc}); "
                  f"the verdicts are in {opts.out_dir}", file=sys.stderr)
    progress.say(f"results: {opts.out_dir}")
    if interrupted:
        return 130
    return max((r.exit_code for r in runs), default=0)
