"""slogqual scenario: pool scenarios (list, show, run; --lab for the QEMU guest)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import List

from slogqual.errors import SlogqualError, UsageError
from slogqual.pool import log_sweeps
from slogqual.pool.builder import LAYOUTS, POOL_PREFIX, ZFS_APIS, safe_name
from slogqual.pool.runner import SCENARIO_SCHEMA, PoolScenarioRun, load_document, new_document
from slogqual.pool.scenario import builtin_names, load_scenario
from slogqual.progress import Progress
from slogqual.tools import fio
from slogqual.units import size_label
from slogqual.cli.options import add_force, guard_output
from slogqual.outputs import picture, text_mark

SCENARIO_SCHEMA_PREFIX = SCENARIO_SCHEMA.rsplit("/", 1)[0] + "/"  # any version: what -o may replace

DEFAULT_LAB_DEVICES = {"data": ["hdd", "hdd"], "log": ["sata-ssd", "nvdimm"]}
LAB_DEVICE_ENV = "SLOGQUAL_LAB_DEVICES"


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
    r = ss.add_parser("run", help="run a scenario on named devices (destroys their data) or in the lab")
    r.add_argument("scenario", nargs="?", metavar="NAME|FILE")
    r.add_argument("--data", nargs="+", default=[], metavar="DEV", help="data vdev devices")
    r.add_argument("--log", nargs="+", default=[], metavar="DEV", help="log (SLOG) candidate devices")
    r.add_argument("--layout", choices=LAYOUTS, default="stripe", help="data vdev layout (default stripe)")
    r.add_argument("--quick", action="store_true", help="few steps, short runtime (CI, demos)")
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
    r.add_argument("--lab-data", nargs="+", metavar="CLASS", help="lab classes of the data devices")
    r.add_argument("--lab-log", nargs="+", metavar="CLASS", help="lab classes of the log devices")
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
    doc = load_document(args.result)
    metric = args.metric or (doc.get("analysis") or {}).get("metric") or "iops"
    scaling_plot.render(doc, metric, args.output, keep_script=args.script)
    print(f"slogqual: wrote {args.output}", file=sys.stderr)
    return 0


def _lab_paths(specs: List[str]) -> List[str]:
    """Inside the lab guest, 'lab:N' names the N-th emulated device (from $SLOGQUAL_LAB_DEVICES)."""
    env = os.environ.get(LAB_DEVICE_ENV, "").split()
    out = []
    for spec in specs:
        if spec.startswith("lab:"):
            i = int(spec[4:])
            if i >= len(env):
                raise UsageError(f"{spec}: the lab guest has {len(env)} device(s)")
            out.append(env[i])
        else:
            out.append(spec)
    return out


def _print(doc, as_json: bool) -> None:
    if as_json:
        print(json.dumps(doc, indent=2))
        return
    from tabulate import tabulate
    rows = [[s["config"] + (f" [{s['candidate']}]" if s.get("candidate") and len(doc["pool"]["log"]) > 1 else ""),
             s["threads"], f"{s['iops']:.0f}", f"{s['mbps']:.1f}",
             f"{s['lat_us']['p99'] or 0:.0f}", s["zil"]["slog_bytes"], s["zil"]["normal_bytes"]] for s in doc["steps"]]
    print(f"{doc['scenario']['name']} ({'quick' if doc['quick'] else 'full'}), pool {doc['pool']['layout']} "
          f"of {len(doc['pool']['data'])}, log {', '.join(doc['pool']['log']) or '-'} [{doc['status']}]")
    print(tabulate(rows, headers=["configuration", "threads", "IOPS", "MiB/s", "p99 µs", "ZIL→log B", "ZIL→pool B"],
                   disable_numparse=True))
    a = doc.get("analysis")
    if a:
        print(f"\nverdict: {a['verdict']}\nbottleneck: {a['bottleneck']}")
        for c in a.get("candidates") or []:
            if len(a["candidates"]) > 1:
                print(f"log candidate {c['name']}: {c['verdict']}")
            ev = c.get("log_sweep")
            if ev:
                seen = (f"; at the peak its log vdev took {ev['observed_log_mbps']:.1f} MiB/s"
                        + (f" in {ev['observed_log_write_size'] / 1024:.0f} KiB writes" if ev.get("observed_log_write_size")
                           else "") if ev.get("observed_log_mbps") is not None else "")
                print(f"log candidate {c['name']}: QD1 sweep at {size_label(ev['sweep_size'])}: "
                      f"{ev['sweep_mbps']:.1f} MiB/s, {ev['sweep_lat_mean_us']:.0f} µs mean{seen}")
        if a.get("slower_log"):
            print(a["slower_log"])
    for w in doc.get("warnings") or []:
        print(f"WARNING: {w}")


def _run_in_lab(args) -> int:
    from slogqual.cli import main as slogqual_main
    data = args.lab_data or DEFAULT_LAB_DEVICES["data"]
    logs = args.lab_log or DEFAULT_LAB_DEVICES["log"]
    if args.data or args.log:
        raise UsageError("--lab uses emulated devices: name their classes with --lab-data/--lab-log, not --data/--log")
    name = safe_name(os.path.basename(args.scenario or "scenario")).removesuffix(".toml")
    out = os.path.abspath(args.output or f"slogqual-scenario-{name}-lab-{time.strftime('%Y%m%dT%H%M%S')}.json")
    guard_output(args, out, "scenario result", SCENARIO_SCHEMA_PREFIX)
    outdir = out + ".lab"
    scenario = os.path.abspath(args.scenario) if os.path.exists(args.scenario) else args.scenario
    inner = ["slogqual", "scenario", "run", scenario, "--destroy-data", "-o", "result.json",
             "--data", *[f"lab:{i}" for i in range(len(data))],
             "--log", *[f"lab:{len(data) + i}" for i in range(len(logs))]]
    if args.quick:
        inner.append("--quick")
    if args.quiet:
        inner.append("--quiet")
    if args.sweep_logs:
        inner.append("--sweep-logs")
    if args.log_sweep:
        raise UsageError("--log-sweep names sweeps of host devices; in the lab use --sweep-logs")
    argv = ["lab", "run", "--quiet", "-o", outdir, *[a for c in data + logs for a in ("--device", c)], "--", *inner]
    rc = slogqual_main(argv)
    produced = os.path.join(outdir, "result.json")
    if os.path.exists(produced):
        stem = out[:-5] if out.endswith(".json") else out
        for i in range(len(logs)):  # the log candidates' sweeps (--sweep-logs) go beside the result
            sweep = os.path.join(outdir, f"result.log{i}.sweep.json")
            if os.path.exists(sweep):
                os.replace(sweep, f"{stem}.log{i}.sweep.json")
        _relocate_sweeps(produced, stem)
        os.replace(produced, out)
        print(f"slogqual: result: {out}", file=sys.stderr)
        doc = load_document(out)
        if doc.get("status") == "complete":
            from slogqual import store
            store.record_or_warn(doc, out)  # the guest's own store is gone with the guest
        _print(doc, args.json)
    return rc


def _relocate_sweeps(result_path: str, stem: str) -> None:
    """The result names each log sweep by its path in the guest: point it at the host copy."""
    from slogqual.results import load_json, write_json_atomic
    doc = load_json(result_path)
    changed = False
    for entry in (doc.get("log_sweeps") or {}).values():
        src = entry.get("source") or ""
        name = os.path.basename(src)
        if name.startswith("result.log") and name.endswith(".sweep.json"):
            entry["source"] = stem + name[len("result"):]
            changed = True
    if changed:
        write_json_atomic(result_path, doc)


def cmd_run(args) -> int:
    if args.lab:
        if not args.scenario:
            raise UsageError("name a scenario")
        return _run_in_lab(args)
    fio_version = fio.check_version()
    progress = Progress(quiet=args.quiet)
    argv = ["slogqual", *sys.argv[1:]]
    if args.resume:
        output = os.path.abspath(args.resume)
        doc = load_document(output)
        if doc["status"] == "complete":
            progress.say(f"{output}: already complete")
            _print(doc, args.json)
            return 0
        scenario = load_scenario(doc["scenario"]["source"])
        if doc["quick"]:
            scenario = scenario.quick()
        data, logs = doc["pool"]["data"], doc["pool"]["log"]
    else:
        if not args.scenario:
            raise UsageError("name a scenario (slogqual scenario list) or a TOML file")
        scenario = load_scenario(args.scenario)
        if args.quick:
            scenario = scenario.quick()
        data, logs = _lab_paths(args.data), _lab_paths(args.log)
        if not data:
            raise UsageError("name the data devices with --data (or use --lab)")
        if any(c.uses_slog for c in scenario.configs) and not logs:
            raise UsageError("this scenario has SLOG configurations: name the candidate(s) with --log")
        if len(set(data + logs)) != len(data + logs):
            raise UsageError("a device is named twice")
        output = os.path.abspath(args.output or f"slogqual-scenario-{scenario.name}-{time.strftime('%Y%m%dT%H%M%S')}.json")
        guard_output(args, output, "scenario result", SCENARIO_SCHEMA_PREFIX, inputs=data + logs)
        doc = None
    from slogqual import device as _device
    with contextlib.ExitStack() as stack:
        for dev in data + logs:  # the interlocks, for every device, before anything is written
            stack.enter_context(_device.claim_for_writing(dev, args.destroy_data, exclusive=False))
        if doc is None:
            identities = {}
            for dev in data + logs:
                try:
                    identities[dev] = _device.identify(dev).to_dict()
                except SlogqualError as exc:
                    identities[dev] = {"path": dev, "error": str(exc)}
            doc = new_document(scenario, args.quick, args.layout, data, logs, fio_version, argv, identities)
            doc["log_sweeps"] = log_sweeps.from_files(args.log_sweep, logs)
            doc["sweep_logs"] = bool(args.sweep_logs)
        else:
            doc.setdefault("log_sweeps", {}).update(log_sweeps.from_files(args.log_sweep, logs))
            doc["sweep_logs"] = bool(doc.get("sweep_logs") or args.sweep_logs)
        # no '.' in a pool name: FreeBSD's kstat sysctl nodes are dot-separated (tools/kstat.objset_oid)
        pool_name = f"{POOL_PREFIX}{safe_name(scenario.name).replace('.', '-')}-{os.getpid()}"
        run = PoolScenarioRun(scenario, doc, output, progress, pool_name, zfs_api=args.zfs_api)
        try:
            run.run()
        except KeyboardInterrupt:
            print(f"slogqual: interrupted; finished steps are kept in {output}, continue with --resume",
                  file=sys.stderr)
            return 130
        except SlogqualError:
            print(f"slogqual: finished steps are kept in {output} (continue with --resume)", file=sys.stderr)
            raise
    progress.say(f"result: {output}")
    from slogqual import store
    store.record_or_warn(doc, output)  # history / compare --baseline
    _print(doc, args.json)
    return 0
