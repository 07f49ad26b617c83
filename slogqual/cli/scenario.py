"""slogqual scenario: pool scenarios (list, show, run; --lab for the QEMU guest)."""

from __future__ import annotations

import json
import os
import sys
import time

from slogqual.report import scenario as scenario_report, wording
from slogqual.errors import ResultWriteError, SlogqualError, UsageError
from slogqual.pool.builder import LAYOUTS, ZFS_APIS, safe_name
from slogqual.pool.door import ScenarioRequest, run_scenario
from slogqual.pool.scenario import builtin_names, load_scenario
from slogqual.process import EXIT_INTERRUPTED
from slogqual.progress import Progress
from slogqual.results.scenario import ScenarioResult
from slogqual.cli.lab import select_zfs, zfs_option
from slogqual.units import size_label
from slogqual import limits
from slogqual.cli.options import add_force, add_path_ceiling, guard_output, in_range, in_range_list
from slogqual.outputs import picture, text_mark





def register(sub) -> None:
    p = sub.add_parser("scenario", help="pool scenarios: what a SLOG really buys a pool",
                       description="Build a throwaway pool, add the candidate as SLOG and drive sync-write loads "
                                   "under several configurations, with ZIL kstat evidence.")
    ss = p.add_subparsers(dest="scenario_command", metavar="SCENARIO_COMMAND")
    ls = ss.add_parser("list", help="the shipped scenarios")
    ls.set_defaults(func=cmd_list)
    sh = ss.add_parser("show", help="a scenario's parameters (as JSON)")
    sh.add_argument("scenario", metavar="NAME|FILE")
    sh.add_argument("--quick", action="store_true")
    sh.set_defaults(func=cmd_show)
    pl = ss.add_parser("plot", help="draw a scenario result: a metric against threads, a line per configuration")
    pl.add_argument("result", metavar="RESULT.json")
    pl.add_argument("-o", "--output", required=True, metavar="FILE.png|FILE.svg")
    pl.add_argument("--metric", choices=("iops", "mbps", "p99"), help="default: the scenario's own (IOPS up to "
                                                                       "16 KiB writes, MiB/s above)")
    pl.add_argument("--script", metavar="FILE", help="also keep the gnuplot script")
    add_force(pl, "picture or gnuplot script")
    pl.set_defaults(func=cmd_plot)
    co = ss.add_parser("cost", help="the protocol's cost: a local result vs the same load over iSCSI/NFS, per step",
                       description="Match the steps of a local scenario result and of the same load run over a "
                                   "transport (configuration, log candidate, threads): IOPS ratio and latency added "
                                   "per IO, and whether the SLOG's benefit survives the protocol.")
    co.add_argument("local", metavar="LOCAL.json", help="the scenario result run locally (transport local)")
    co.add_argument("transport", metavar="TRANSPORT.json", help="the same load's result over iscsi or nfs")
    co.add_argument("--json", action="store_true", help="print the comparison as JSON")
    co.set_defaults(func=cmd_cost)
    r = ss.add_parser("run", help="run a scenario on named devices (destroys their data) or in the lab")
    r.add_argument("scenario", nargs="?", metavar="NAME|FILE")
    r.add_argument("--data", nargs="+", default=[], metavar="DEV", help="data vdev devices")
    r.add_argument("--log", nargs="+", default=[], metavar="DEV", help="log (SLOG) candidate devices")
    r.add_argument("--layout", choices=LAYOUTS, default="stripe", help="data vdev layout (default stripe)")
    r.add_argument("--quick", action="store_true", help="few steps, short runtime (CI, demos)")
    ld = r.add_argument_group("the load (each in place of the scenario's value, and --quick's; recorded in the "
                              "result)")
    ld.add_argument("--bs", type=in_range(limits.SCENARIO_BS), metavar="SIZE", help="IO size, e.g. 16k")
    ld.add_argument("--threads", type=in_range_list(limits.THREADS), metavar="N,N,...",
                    help="threads per LUN at each step, e.g. 1,2,4,8")
    ld.add_argument("--luns", type=in_range(limits.LUNS), metavar="N", help="zvols (or file groups) written")
    ld.add_argument("--runtime", type=in_range(limits.SCENARIO_RUNTIME_S), metavar="SECONDS",
                    help="seconds measured per step")
    ld.add_argument("--ramp", type=in_range(limits.RAMP_S), metavar="SECONDS",
                    help="seconds before each step is measured")
    r.add_argument("--zfs-api", choices=ZFS_APIS, default="auto",
                   help="create zvols/datasets with libzfs_core (pyzfs) or the zfs command; auto: pyzfs when "
                        "importable (Debian's /usr/bin/python3)")
    r.add_argument("--log-sweep", nargs="+", default=[], metavar="SWEEP.json",
                   help="earlier `slogqual sweep` results of the --log devices (matched by path), for the verdict "
                        "to weigh the log vdev's bandwidth against")
    r.add_argument("--sweep-logs", action="store_true",
                   help="sweep each log candidate (QD1 sync writes, 4 KiB..128 KiB) before building the pools, for "
                        "the same purpose; kept next to the result as RESULT.logN.sweep.json")
    r.add_argument("--destroy-data", action="store_true", help="confirm the named devices may be overwritten")
    r.add_argument("-o", "--output", metavar="FILE", help="result file (default slogqual-scenario-NAME-TIME.json)")
    r.add_argument("--resume", metavar="RESULT", help="continue an interrupted run")
    r.add_argument("--lab", action="store_true",
                   help="run in the lab guest on emulated devices (default: data hdd hdd, log sata-ssd nvdimm)")
    zfs_option(r)
    r.add_argument("--lab-data", nargs="+", metavar="CLASS", help="lab classes of the data devices")
    r.add_argument("--lab-log", nargs="+", metavar="CLASS",
                   help="lab classes of the log devices (with two or more, the striped and mirrored log "
                        "configurations run per pair; with one they are skipped)")
    r.add_argument("--lab-timeout", type=in_range(limits.TIMEOUT_S), metavar="S",
                   help="with --lab: give up on the guest after S seconds (default 3600), keeping what its tasks "
                        "were blocked on (OUTPUT.lab/lab-hang.txt)")
    r.add_argument("--clients", default="", metavar="HOST[:PORT],...",
                   help="drive each step from these fio servers (`fio --server` on each client host; the LUNs are "
                        "split among them; per-client and merged figures are kept)")
    r.add_argument("--fio-servers", type=in_range(limits.FIO_SERVERS), default=0, metavar="N",
                   help="start N fio servers on 127.0.0.1 for the run and drive each step with them (the lab's "
                        "clients)")
    add_path_ceiling(r)
    r.add_argument("--json", action="store_true", help="print the result document")
    add_force(r, "scenario result")
    r.add_argument("--quiet", action="store_true", help="no progress on stderr")
    r.set_defaults(func=cmd_run)
    p.set_defaults(func=lambda args: (p.print_help(sys.stderr), 2)[1])


def cmd_list(args) -> int:
    for name in builtin_names():
        s = load_scenario(name)
        print(f"{name:24} {s.description}")
    return 0


def cmd_show(args) -> int:
    s = load_scenario(args.scenario)
    print(json.dumps((s.quick() if args.quick else s).to_dict(), indent=2))
    return 0


def cmd_plot(args) -> int:
    from slogqual.report import scaling_plot
    guard_output(args, args.output, "picture", picture, inputs=[args.result])
    if args.script:
        guard_output(args, args.script, "gnuplot script", text_mark("# slogqual"), inputs=[args.result])
    result = ScenarioResult.load(args.result)
    metric = args.metric or (scenario_report.current(result) or {}).get("metric") or "iops"
    scaling_plot.render(result, metric, args.output, keep_script=args.script)
    print(f"slogqual: wrote {args.output}", file=sys.stderr)
    return 0


def cmd_cost(args) -> int:
    from slogqual.analysis import transport as transport_analysis
    local, remote = ScenarioResult.load(args.local), ScenarioResult.load(args.transport)
    try:
        cost = wording.cost_worded(transport_analysis.compare(local, remote, local_name=args.local,
                                                              transport_name=args.transport))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps(cost.to_dict(), indent=2))
        return 0
    from tabulate import tabulate
    t = cost.transport_words

    def num(v, fmt) -> str:
        return "?" if v is None else format(v, fmt)

    load = cost.load
    print(f"protocol cost: {cost.local_scenario} (local, {args.local}) vs {cost.transport_scenario} "
          f"(over {t}, {args.transport}); {size_label(load.bs)} {load.rw}, {load.luns} "
          f"{'zvols' if load.kind == 'zvol' else 'files'}, write_sync {load.write_sync}")
    for c in cost.candidates:
        print(f"log candidate: {c.local_label} locally ↔ {c.transport_label} over {t}: paired by {c.matched_by}")
    for lone, where in ((cost.unmatched_candidates.local, "locally"), (cost.unmatched_candidates.transport, f"over {t}")):
        for c in lone:
            print(f"log candidate {c} {where}: no counterpart, its steps are not compared")
    rows = [[m.label, m.threads, f"{m.local_iops:.0f}", f"{m.transport_iops:.0f}",
             "?" if m.iops_ratio is None else f"{m.iops_ratio:.2f} ±{m.ratio_error:.2f}",
             num(m.added_us_per_io, "+.0f"), f"{m.local_ios}/{m.transport_ios}"] for m in cost.steps]
    print(tabulate(rows, headers=["configuration", "threads", "local IOPS", f"{t} IOPS", f"ratio ({t}/local)",
                                  "added µs/IO", f"IOs local/{t}"], disable_numparse=True))
    for c in cost.configs:
        if c.iops_ratio_gm is None:
            continue
        print(f"{c.label}: over {t} {c.iops_ratio_gm:.2f}x of the local IOPS (geometric mean; "
              f"{c.iops_ratio_min:.2f}..{c.iops_ratio_max:.2f}), "
              f"{num(c.added_us_min, '+.0f')}..{num(c.added_us_max, '+.0f')} µs per IO "
              f"(threads {', '.join(map(str, c.threads))})")
    for u in cost.unmatched_steps:
        side = "locally" if u.side == "local" else f"over {t}"
        cand = f" [{u.candidate}]" if u.candidate else ""
        print(f"not compared: {u.config}{cand} at {u.threads} threads {side}: {u.why}")
    for d in cost.differences:
        print(f"differs besides the transport: {d}")
    for b in cost.slog_benefit:
        print(f"\nSLOG benefit: {b.sentence}")
    return 0


def _print(result: ScenarioResult, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result.to_dict(), indent=2))
        return
    from tabulate import tabulate
    words = scenario_report
    print(words.headline(result))
    print(tabulate(words.cli_rows(result), headers=words.CLI_HEADERS, disable_numparse=True))
    for line in words.verdict_lines(result):  # today's rules on the measured steps
        print(line)
    for w in result.warnings:
        print(f"WARNING: {w}")


def _overrides(args) -> dict:
    """The load's shape given on the command line (pool.scenario.OVERRIDES), None where not given."""
    return {"bs": args.bs, "threads": args.threads, "luns": args.luns, "runtime": args.runtime, "ramp": args.ramp}


def _run_in_lab(args) -> int:
    from slogqual.lab import scenario as lab_scenario
    select_zfs(args)  # --zfs: the lab of that OpenZFS (else $SLOGQUAL_LAB_ZFS, else 2.3)
    if args.data or args.log:
        raise UsageError("--lab uses emulated devices: name their classes with --lab-data/--lab-log, not --data/--log")
    if args.log_sweep:
        raise UsageError("--log-sweep names sweeps of host devices; in the lab use --sweep-logs")
    if args.resume:
        raise UsageError("--resume continues a run on host devices; a lab run starts a fresh guest (run it again)")
    if args.path_ceiling:
        raise UsageError("--path-ceiling names elements of host devices' paths; in the lab use `slogqual lab run "
                         "--path` and run the scenario in the guest")
    name = safe_name(os.path.basename(args.scenario)).removesuffix(".toml")
    out = os.path.abspath(args.output or f"slogqual-scenario-{name}-lab-{time.strftime('%Y%m%dT%H%M%S')}.json")
    request = lab_scenario.LabScenarioRequest(
        scenario=args.scenario, output=out, force=args.force, quick=args.quick, measure_log_sweeps=args.sweep_logs,
        quiet=args.quiet, data=args.lab_data or lab_scenario.DEFAULT_DATA,
        logs=args.lab_log or lab_scenario.DEFAULT_LOG, layout=args.layout, overrides=_overrides(args),
        progress=None if args.quiet else sys.stderr,
        **({"timeout": float(args.lab_timeout)} if args.lab_timeout is not None else {}))
    outcome = lab_scenario.run_scenario(request)
    print(f"slogqual: result: {outcome.path}", file=sys.stderr)
    _print(outcome.document, args.json)
    return outcome.job_status if outcome.job_status is not None else 1


def cmd_run(args) -> int:
    if getattr(args, "zfs", "") and not args.lab:
        raise UsageError("--zfs picks the lab's OpenZFS: it goes with --lab (on host devices the loaded module runs)")
    if args.lab_timeout is not None and not args.lab:
        raise UsageError("--lab-timeout bounds the lab guest: it goes with --lab")
    if args.lab:
        if not args.scenario:
            raise UsageError("name a scenario")
        return _run_in_lab(args)
    if args.resume:
        output = args.resume
    else:
        if not args.scenario:
            raise UsageError("name a scenario (slogqual scenario list) or a TOML file")
        name = safe_name(os.path.basename(args.scenario)).removesuffix(".toml")
        output = os.path.abspath(args.output or f"slogqual-scenario-{name}-{time.strftime('%Y%m%dT%H%M%S')}.json")
    request = ScenarioRequest(scenario=args.scenario or "", data=args.data, logs=args.log, output=output,
                              layout=args.layout, quick=args.quick, zfs_api=args.zfs_api,
                              log_sweep_files=args.log_sweep, measure_log_sweeps=args.sweep_logs,
                              destroy_data=args.destroy_data, resume=bool(args.resume), force=args.force,
                              clients=[c for c in args.clients.split(",") if c.strip()],
                              fio_servers=args.fio_servers, path_ceilings=list(args.path_ceiling),
                              overrides=_overrides(args), argv=["slogqual", *sys.argv[1:]])
    progress = Progress(quiet=args.quiet)
    try:
        outcome = run_scenario(request, progress)
    except KeyboardInterrupt:
        print(f"slogqual: interrupted; finished steps are kept in {os.path.abspath(output)}, continue with --resume",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    except ResultWriteError as exc:  # the result file cannot be written: what was measured goes to stdout
        print(f"slogqual: {exc}; the result, marked failed, follows on stdout", file=sys.stderr)
        print(json.dumps(exc.document, indent=2))
        return exc.exit_code
    except SlogqualError as exc:
        if os.path.exists(output) and not isinstance(exc, UsageError):
            print(f"slogqual: finished steps are kept in {os.path.abspath(output)} (continue with --resume)",
                  file=sys.stderr)
        raise
    if outcome.already_complete:
        progress.say(f"{outcome.path}: already complete")
    else:
        progress.say(f"result: {outcome.path}")
    _print(outcome.document, args.json)
    return 0
