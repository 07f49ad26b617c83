"""slogqual advise: predict what log candidates do for a pool's sync=always writes, from their own sweeps
(docs/advisor.md).

Arguments and printing only: the model is slogqual/analysis/advisor.py, the document
slogqual/results/advice.py.
"""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional, Tuple

from slogqual import limits, store
from slogqual.analysis import advisor as A
from slogqual.cli.history import STORE_HELP
from slogqual.cli.options import in_range, in_range_list
from slogqual.errors import UsageError
from slogqual.results import SweepResult, json_text, write_json_atomic
from slogqual.results import schema as S
from slogqual.importers import iostat_history
from slogqual.report import advice as advice_words
from slogqual.results.advice import AdviceResult
from slogqual.results.scenario import ScenarioResult


def register(sub) -> None:
    p = sub.add_parser("advise", help="predict a log candidate's sync=always IOPS, size and life from its sweep",
                       description="For each log candidate (a `slogqual sweep` result), predict sync=always + SLOG "
                                   "IOPS and MiB/s at each thread count from how the ZIL writes (log write blocks, "
                                   "commit batching, a flush per commit), what limits it, the log space the load "
                                   "needs and how long the device lasts. See docs/advisor.md.")
    p.add_argument("--log", nargs="+", metavar="SWEEP.json",
                   help="log candidates' sweep results (files, or store:ID for a run in the result store; a "
                        "qualification's sweep serves too); required unless --advice")
    g = p.add_argument_group("data side (one of)")
    g.add_argument("--scenario", metavar="RESULT.json",
                   help="a scenario result of the real pool: its sync=standard steps cap the prediction, its "
                        "sync=always-without-SLOG steps are the comparison (and its load is the default workload)")
    g.add_argument("--data", nargs="+", metavar="SWEEP.json", help="sweeps of the data devices")
    p.add_argument("--special", metavar="SWEEP.json",
                   help="the sweep of the pool's special vdev device (or store:ID): the ZIL on it beside each log "
                        "candidate, on OpenZFS 2.4 with zil_special_is_slog at 1 and 0, and before 2.4")
    p.add_argument("--host", metavar="HOST.json",
                   help="this host's own ceiling, from `slogqual host-probe` with the same load (a file or store:ID): "
                        "each figure becomes the least of the log, the data side and the host; batching and the "
                        "software path are the probe's measurements")
    g.add_argument("--layout", choices=A.LAYOUTS, help="with --data: the data vdevs' layout")
    g.add_argument("--disks", type=in_range(limits.DATA_DISKS),
                   help="with --data: how many data disks (default: one per --data sweep)")
    w = p.add_argument_group("workload")
    w.add_argument("--protocol", help="iscsi (zvols) or nfs (a dataset)")
    w.add_argument("--bs", type=in_range(limits.SCENARIO_BS), help="IO size of the sync writes, e.g. 4k")
    w.add_argument("--volblocksize", type=in_range(limits.ZFS_BLOCK),
                   help="iscsi: the zvols' volblocksize (default 16k)")
    w.add_argument("--recordsize", type=in_range(limits.ZFS_BLOCK), help="nfs: the dataset's recordsize (default 128k)")
    w.add_argument("--threads", type=in_range_list(limits.WRITERS),
                   help="total concurrent writers at each step, e.g. 1,2,4,8")
    w.add_argument("--zils", type=in_range(limits.ZILS),
                   help="independent intent logs the writers spread over: zvols (iscsi) or datasets (default: the "
                        "scenario's LUNs for zvols, else 1)")
    w.add_argument("--rate-history", metavar="IOSTAT.txt",
                   help="or the rate the pool's log carried: a recording of `zpool iostat -T u -vpy POOL SECONDS` "
                        "(sizing takes its busiest interval, life its mean)")
    w.add_argument("--rate", type=in_range(limits.RATE_MBPS), metavar="MB/s",
                   help="sync write rate the log must carry (for size and life; default: the predicted peak)")
    t = p.add_argument_group("OpenZFS tunables (an option given > this host's values > the defaults of 2.3)")
    t.add_argument("--tunables", choices=("auto", "host", "defaults"), default="auto",
                   help="auto (default): this host's module parameters where it has OpenZFS loaded, else 2.3's "
                        "defaults; host: refuse without them; defaults: 2.3's defaults")
    t.add_argument("--zfs", metavar="VERSION",
                   help="the OpenZFS the pool runs, e.g. 2.3 or 2.4.4 (default: this host's module with --tunables "
                        "auto/host; else unknown, and the advice says so)")
    t.add_argument("--zfs-immediate-write-sz", type=in_range(limits.IMMEDIATE_WRITE_SZ),
                   help="bytes (default 32768)")
    t.add_argument("--zil-slog-bulk", type=in_range(limits.ZIL_SLOG_BULK), help=f"bytes (default {64 << 20})")
    t.add_argument("--logbias", choices=A.LOGBIASES, help="the dataset's or zvol's logbias (default latency)")
    t.add_argument("--zil-maxblocksize", type=in_range(limits.ZIL_MAXBLOCKSIZE), help="bytes (default 131072)")
    t.add_argument("--zil-maxcopied", type=in_range(limits.ZIL_MAXCOPIED), help="bytes (default 7680)")
    t.add_argument("--zfs-txg-timeout", type=in_range(limits.TXG_TIMEOUT_S), help="seconds (default 5)")
    t.add_argument("--zfs-commit-timeout-pct", type=in_range(limits.COMMIT_TIMEOUT_PCT),
                   help="percent of the last log block's latency an open one waits for more records (default 10)")
    t.add_argument("--zfs-dirty-data-max", type=in_range(limits.DIRTY_DATA_MAX),
                   help="bytes (caps a txg's data; default: not applied, even when the host has it: give it to "
                        "apply it)")
    e = p.add_argument_group("endurance")
    e.add_argument("--tbw", type=in_range(limits.TBW), help="rated terabytes written")
    e.add_argument("--dwpd", type=in_range(limits.DWPD), help="rated drive writes per day (with the sweep's capacity)")
    e.add_argument("--warranty-years", type=in_range(limits.WARRANTY_YEARS), default=5.0)
    e.add_argument("--hours-per-day", type=in_range(limits.HOURS_PER_DAY), default=24.0,
                   help="hours a day the rate is carried (default 24)")
    e.add_argument("--powercut", action="append", metavar="RESULT.json",
                   help="a candidate's `slogqual powercut` result (repeatable; matched to --log by device path): "
                        "the mirror-or-not advice rests on it")
    p.add_argument("--verify", metavar="SCENARIO.json",
                   help="print the prediction beside the measured sync=always + SLOG steps of this scenario result")
    p.add_argument("--advice", metavar="ADVICE.json",
                   help="take the prediction from an advice saved with -o instead of computing it (with --verify: "
                        "check it against a result run since); no --log nor any other model input then")
    p.add_argument("--json", action="store_true", help="print the advice document")
    p.add_argument("-o", "--output", metavar="FILE", help="write the advice document here")
    p.add_argument("--plot", metavar="FILE.png|FILE.svg",
                   help="chart the predicted IOPS against threads (and the measured steps with --verify)")
    p.add_argument("--force", action="store_true", help="let -o replace a file that is not a slogqual advice")
    p.add_argument("--store", metavar="PATH|URL",
                   help=STORE_HELP + " (where every input given as store:ID is read from)")
    p.set_defaults(func=run, model_defaults={dest: p.get_default(dest) for dest in MODEL_INPUTS})


#: the options the prediction is computed from (a saved --advice carries them all): their dest names
MODEL_INPUTS = ("log", "scenario", "data", "layout", "disks", "protocol", "bs", "volblocksize", "recordsize",
                "threads", "zils", "rate_history", "rate", "tunables", "zfs_immediate_write_sz", "zil_slog_bulk",
                "logbias", "zil_maxblocksize", "zil_maxcopied", "zfs_txg_timeout", "zfs_commit_timeout_pct",
                "zfs_dirty_data_max", "tbw", "dwpd", "warranty_years", "hours_per_day", "powercut", "host", "special", "zfs")


def _saved(args) -> Dict[str, Any]:
    """The advice document of --advice, validated (a bad key named); refused with any model input beside it,
    which the saved prediction would silently ignore, and with -o, which would only copy it."""
    given = [d for d in MODEL_INPUTS if getattr(args, d) != args.model_defaults[d]]
    if given:
        raise UsageError(f"--advice {args.advice} is a prediction already made from its own inputs: no "
                         f"--{given[0].replace('_', '-')} (advise again without --advice to change them)")
    if args.output:
        raise UsageError(f"--advice {args.advice} is saved already: no -o")
    return AdviceResult.load(args.advice).to_dict()


def _workload(args, scenario: Optional[ScenarioResult]) -> A.Workload:
    sc = scenario.scenario if scenario is not None else None  # the parameters the scenario ran with

    def ran(name: str):
        return getattr(sc, name, None) if sc is not None else None

    protocol = args.protocol or {"zvol": "iscsi", "dataset": "nfs"}.get(ran("kind"))
    if protocol is None:
        raise UsageError("give the workload's --protocol (iscsi or nfs) and --bs, or a --scenario result to take them from")
    if protocol not in A.PROTOCOLS:
        raise UsageError(f"unknown protocol {protocol!r}: use iscsi (zvols) or nfs (a dataset)")
    bs = args.bs or ran("bs")
    if not bs:
        raise UsageError("the workload needs its IO size: --bs (e.g. 4k)")
    if protocol == "iscsi":
        block = args.volblocksize or ran("volblocksize") or 16384
    else:
        block = args.recordsize or ran("recordsize") or 131072
    luns = int(ran("luns") or 1)
    if args.threads:
        threads = args.threads
    elif ran("threads"):
        threads = [int(n) * luns for n in ran("threads")]
    else:
        raise UsageError("the workload needs its thread counts: --threads 1,2,4,8")
    zils = args.zils if args.zils is not None else (luns if protocol == "iscsi" and sc else 1)
    if args.rate is not None and args.rate_history:
        raise UsageError("give the rate as --rate or as --rate-history, not both")
    return A.Workload(protocol=protocol, io_size=int(bs), block_size=int(block), threads=threads, zils=int(zils),
                      rate_mbps=args.rate, rate_history=iostat_history.read(args.rate_history) if args.rate_history else None)


HOST_TUNABLES = ("zfs_immediate_write_sz", "zil_slog_bulk", "zil_maxblocksize", "zil_maxcopied", "zfs_txg_timeout",
                 "zfs_commit_timeout_pct")


def _tunables(args, host=None) -> A.Tunables:
    """An option given, else the host's value (``host``: tools.zfs_tunables.read_host()), else 2.3's
    default; each value's source is recorded in the document."""
    from slogqual.tools import zfs_tunables

    if args.tunables == "host" and not host:
        raise UsageError(f"--tunables host: this host has no OpenZFS module parameters ({zfs_tunables.where()})")
    use_host = host if args.tunables != "defaults" else None
    values: Dict[str, Any] = {}
    sources: Dict[str, str] = {}
    for name in HOST_TUNABLES:
        given = getattr(args, name)
        if given is not None:
            values[name] = float(given) if name == "zfs_txg_timeout" else given
            sources[name] = "option"
        elif use_host and name in use_host:
            values[name] = float(use_host[name]) if name == "zfs_txg_timeout" else use_host[name]
            sources[name] = f"host {zfs_tunables.where()}"
        else:
            sources[name] = "default (OpenZFS 2.3)"
    if args.zfs_dirty_data_max is not None:
        values["zfs_dirty_data_max"] = args.zfs_dirty_data_max
        sources["zfs_dirty_data_max"] = "option"
    sources["logbias"] = "option" if args.logbias is not None else "default (OpenZFS 2.3)"
    version, sources["zfs_version"] = _zfs_version(args, use_host is not None)
    special = zfs_tunables.read_one("zil_special_is_slog") if use_host is not None and not args.zfs else None
    if special is not None:
        sources["zil_special_is_slog"] = f"host {zfs_tunables.where()}"
    return A.Tunables(logbias=args.logbias or "latency", sources=sources, zfs_version=version,
                      zil_special_is_slog=special, **values)


def _zfs_version(args, read_host: bool) -> Tuple[Optional[str], str]:
    """(the OpenZFS version the advice is for, where it came from): --zfs, else this host's loaded module (not
    with --tunables defaults), else unknown."""
    from slogqual.tools import zfs_tunables

    if args.zfs is not None:
        if zfs_tunables.series(args.zfs) is None:
            raise UsageError(f"--zfs {args.zfs}: not an OpenZFS version (e.g. 2.3 or 2.4.4)")
        return args.zfs, "option"
    found = zfs_tunables.module_version() if read_host else None
    return (found, "host module") if found else (None, "unknown")


def _endurance(args) -> Optional[A.Endurance]:
    if args.tbw is not None and args.dwpd is not None:
        raise UsageError("give --tbw or --dwpd, not both")
    if args.tbw is None and args.dwpd is None:
        return None
    return A.Endurance(tbw=args.tbw, dwpd=args.dwpd, warranty_years=args.warranty_years,
                       hours_per_day=args.hours_per_day)


def build(args) -> Dict[str, Any]:
    """Everything checked and computed, the advisor's facts (report/advice.document words them); nothing
    written. Bad input: UsageError (exit 2)."""
    if args.scenario and args.data:
        raise UsageError("give the data side as --scenario or as --data sweeps, not both")
    if args.data and not args.layout:
        raise UsageError("--data needs --layout (stripe, mirror, raidz1, raidz2, raidz3)")
    if args.layout and not args.data:
        raise UsageError("--layout describes --data sweeps: give them")
    where, scenario = _scenario(args.scenario, args.store) if args.scenario else (None, None)
    w = _workload(args, scenario)
    from slogqual.tools import zfs_tunables

    t = _tunables(args, zfs_tunables.read_host() if args.tunables != "defaults" else None)
    endurance = _endurance(args)
    try:
        A.check_workload(w, t)
        logs = [_sweep(spec, args.store) for spec in args.log]
        for path, sw in logs:
            A.check_log_sweep(sw, path)
        if scenario is not None:
            data = A.data_from_scenario(scenario, where)
        elif args.data:
            sweeps = [_sweep(spec, args.store) for spec in args.data]
            for path, sw in sweeps:
                A.check_log_sweep(sw, path)
            data = A.data_from_sweeps(sweeps, args.layout, args.disks or len(sweeps), w, t)
        else:
            data = A.DataSide("none", A.DataOrigin("none"))
        host_where, host = _host(args.host, args.store) if getattr(args, "host", None) else (None, None)
        special = _sweep(args.special, args.store) if getattr(args, "special", None) else None
        if special is not None:
            A.check_log_sweep(special[1], special[0])
        return A.advise(logs, w, t, data, endurance, origin="slogqual advise",
                        power=_power_loss(args.powercut or [], logs, args.store), host=host, host_source=host_where,
                        special=special)
    except A.AdviceInputError as exc:
        raise UsageError(str(exc)) from None


def _sweep(spec: str, store_path: Optional[str]) -> Tuple[str, SweepResult]:
    """(where, sweep) of a --log/--data input: a sweep or qualification file, or store:ID."""
    doc, where = store.input_document(spec, store_path)
    return where, store.sweep_of(doc, where)


def _scenario(spec: str, store_path: Optional[str]) -> Tuple[str, ScenarioResult]:
    """(where, result) of a --scenario/--verify input: a scenario result file, or store:ID."""
    doc, where = store.input_document(spec, store_path)
    return where, ScenarioResult.from_dict(doc, where)


def _host(spec: str, store_path: Optional[str]):
    """(where, host probe document) of --host: a file, or store:ID."""
    from slogqual.results.host import HostProbeResult

    doc, where = store.input_document(spec, store_path)
    return where, HostProbeResult.from_dict(doc, where)


def _power_loss(specs: List[str], logs, store_path: Optional[str]) -> Dict[str, A.PowerLoss]:
    from slogqual.results.powercut import PowercutResult

    found = [store.input_document(spec, store_path) for spec in specs]
    return A.power_by_candidate([(where, PowercutResult.from_dict(doc, where)) for doc, where in found], logs)


def run(args) -> int:
    from slogqual.cli.options import guard_output

    out = plot = None
    if args.advice is None and not args.log:
        raise UsageError("give the log candidates' sweeps with --log (or a saved advice with --advice)")
    inputs = (list(args.log or []) + list(args.data or []) + list(args.powercut or [])
              + [args.special, args.scenario, args.verify, args.rate_history, args.advice])
    if args.output:
        out = guard_output(args, args.output, "advice", ours=S.prefix(S.ADVICE), inputs=inputs)
    if args.plot:
        from slogqual.outputs import picture
        from slogqual.report.plot import output_format

        output_format(args.plot)  # .png or .svg, refused now
        plot = guard_output(args, args.plot, "picture", picture, inputs=inputs + [out])
    doc = _saved(args) if args.advice else advice_words.document(build(args))
    advice = AdviceResult.from_dict(doc)
    rows = None
    if args.verify:
        rows = A.verify(advice, _scenario(args.verify, args.store)[1])
    if out:
        write_json_atomic(out, doc)
    if plot:
        from slogqual.report import advice_plot

        advice_plot.render(advice, plot, rows)
    if args.json:
        print(json_text(doc, "the advice"), end="")
    else:
        print(advice_words.table_text(advice))
        if rows is not None:
            print()
            print(f"prediction vs {args.verify} (sync=always + single SLOG):")
            print(advice_words.verify_table(rows) if rows else "no step of that result matches a candidate and thread count")
        for wmsg in advice.warnings:
            print(f"warning: {wmsg}", file=sys.stderr)
    return 0
