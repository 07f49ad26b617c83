"""slogqual qualify: PASS or FAIL for each device against a profile, with the evidence."""

from __future__ import annotations

import sys

from slogqual import limits
from slogqual.cli.history import STORE_HELP
from slogqual.cli.options import STORE, add_force, add_path_ceiling, in_range, named
from slogqual.progress import Progress
from slogqual.qualify import output, precondition, profile as profiles, steady
from slogqual.qualify.door import QualifyRequest, plan, qualify
from slogqual.units import parse_size, parse_sizes



def register(sub) -> None:
    p = sub.add_parser(
        "qualify", help="judge devices against a qualification profile: PASS/FAIL, JSON, JUnit, HTML",
        description="For each DEV in turn: identify it, optionally precondition it, run 4 KiB sync-write rounds "
                    "until a steady state (SNIA SSS PTS rule), sweep the sizes the profile needs, get the pool "
                    "scenario results it asks for, and judge every criterion. Exit 0 when every device passes "
                    "every criterion, 1 when any fails (or cannot be evaluated), 2 on bad input, 3 when a device "
                    "is refused by the safety interlocks.")
    p.add_argument("devices", type=named("a device"), nargs="+", metavar="DEV", help="block device, regular file or nbd:// URI")
    p.add_argument("--profile", type=named("a profile"), required=True, metavar="NAME|FILE",
                   help="a profile in scenarios/profiles/ (" + ", ".join(profiles.builtin_names()) + ") or a TOML file")
    p.add_argument("--out", type=named("a directory"), metavar="DIR", help="where results go (default: slogqual-qualify-TIME here)")
    p.add_argument("--junit", type=named("a file"), metavar="FILE", help="also write JUnit XML (one testsuite per device)")
    add_force(p, "JUnit report or result of the kind in --out")
    p.add_argument("--precondition", choices=precondition.MODES,
                   help="none, quick (a bounded sequential fill) or full (the device written twice); "
                        "default: the profile's")
    p.add_argument("--quick-bytes", default="1g", metavar="SIZE", help="span of --precondition quick (default 1g)")
    p.add_argument("--max-rounds", type=in_range(limits.MAX_ROUNDS), metavar="N",
                   help=f"steady-state rounds at most (default: the profile's, normally {steady.MAX_ROUNDS}; "
                        "0 skips the rounds)")
    p.add_argument("--round-runtime", type=in_range(limits.RUNTIME_S), metavar="SECONDS", help="seconds per steady-state round")
    p.add_argument("--sizes", type=named("sizes, e.g. 4k,128k"), help="sweep sizes (default: the profile's); must include every size a criterion names")
    p.add_argument("--runtime", type=in_range(limits.RUNTIME_S), metavar="SECONDS", help="sweep seconds per size (default: the profile's)")
    p.add_argument("--settle", type=in_range(limits.SETTLE_S), metavar="SECONDS", help="pause before each size (default: the profile's)")
    p.add_argument("--lab", action="store_true", help="run the profile's pool scenarios in the QEMU lab (--quick)")
    p.add_argument("--data", type=named("a device"), nargs="+", default=[], metavar="DEV",
                   help="data devices for the profile's pool scenarios, with DEV as the SLOG (destroys their data)")
    p.add_argument("--scenario-quick", action="store_true", help="with --data: run the scenarios' --quick variant")
    p.add_argument("--scenario-runtime", type=in_range(limits.SCENARIO_RUNTIME_S), metavar="SECONDS",
                   help="with --data or --lab: seconds measured per scenario step, in place of the scenario's (and "
                        "--quick's); recorded in the scenario result")
    p.add_argument("--scenario-ramp", type=in_range(limits.RAMP_S), metavar="SECONDS",
                   help="with --data or --lab: seconds before each scenario step is measured, likewise")
    p.add_argument("--scenario-result", type=named("a file"), action="append", default=[], metavar="FILE",
                   help="a slogqual.scenario/1 result to judge scenario criteria by (repeatable)")
    p.add_argument("--powercut", type=named("a file"), metavar="FILE",
                   help="a slogqual.powercut/1 result of this device (slogqual powercut run): the power-loss verdict "
                        "becomes measured (strict-plp requires it)")
    p.add_argument("--destroy-data", action="store_true", help="confirm that the named block devices may be overwritten")
    p.add_argument("--parallel", action="store_true",
                   help="measure the devices at the same time (a shelf at once), each judged and written as a lone "
                        "run would; every device passes the safety interlocks before any is written (one refusal "
                        "refuses the run, exit 3); the scenarios follow, device by device")
    p.add_argument("--skip-refused", action="store_true",
                   help="with --parallel: qualify the devices that pass the safety interlocks and name the refused "
                        "ones, each judged REFUSED (exit 3 either way)")
    p.add_argument("--probe", action="store_true",
                   help="with --parallel: after the measurement, each device alone, then all at once, at 128 KiB ... "
                        "8 MiB and at 1 MiB with 8 writes in flight, and where the aggregate stopped on the path they "
                        "share (shelf.json in --out)")
    add_path_ceiling(p)
    p.add_argument("--model", type=named("a model"), help="model to file the results under when the device has none (NBD, files)")
    p.add_argument("--serial", type=named("a serial"), help="serial to file the results under when the device has none (one DEV only)")
    p.add_argument("--firmware", type=named("a firmware"), help="firmware to file the results under when the device has none")
    p.add_argument("--store", type=STORE, metavar="PATH|URL", help=STORE_HELP)
    p.add_argument("--no-store", action="store_true", help="do not record the run in the result store")
    p.add_argument("--no-html", action="store_true", help="skip the HTML report")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=run)


def _request(args) -> QualifyRequest:
    return QualifyRequest(
        devices=list(args.devices), profile=args.profile, out_dir=args.out or "", junit=args.junit, force=args.force,
        precondition=args.precondition, quick_bytes=parse_size(args.quick_bytes), max_rounds=args.max_rounds,
        round_runtime_s=args.round_runtime, sizes=parse_sizes(args.sizes) if args.sizes else None,
        runtime_s=args.runtime, settle_s=args.settle, lab=args.lab, data=list(args.data),
        scenario_quick=args.scenario_quick,
        scenario_overrides={k: v for k, v in (("runtime", args.scenario_runtime), ("ramp", args.scenario_ramp))
                            if v is not None},
        scenario_results=list(args.scenario_result), powercut=args.powercut,
        destroy_data=args.destroy_data, labels={"model": args.model, "serial": args.serial, "firmware": args.firmware},
        store=args.store, record_in_store=not args.no_store, html=not args.no_html,
        argv=["slogqual", *sys.argv[1:]], parallel=args.parallel, skip_refused=args.skip_refused, probe=args.probe,
        path_ceilings=list(args.path_ceiling))


def run(args) -> int:
    req = _request(args)
    opts = plan(req)  # bad input: one line, before anything is written

    def device_done(dr) -> None:
        print(output.device_table(dr.doc))
        print()

    outcome = qualify(req, opts, Progress(quiet=args.quiet), on_device=device_done,
                      on_note=lambda line: print(f"slogqual: {line}", file=sys.stderr))
    if len(outcome.documents) > 1:
        print("Summary")
        print(output.summary_table(outcome.documents))
    if outcome.shelf is not None:
        from slogqual.report.shelf import shelf_table

        print()
        print(shelf_table(outcome.shelf))
    return outcome.exit_code
