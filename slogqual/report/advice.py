"""An advice (``slogqual.advice/1``) in words and rows: the tables ``slogqual advise`` prints, and the
report's section — each candidate's prediction per thread count with the limits it rests on and their IO
counts, every bound marked ``≤`` with what bounds it, and beside it the measurement where the report holds a
scenario result of the same load with the candidate as its log (analysis/advisor.verify).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from tabulate import tabulate

from slogqual.analysis import advisor as A
from slogqual.analysis import wear
from slogqual.versions import openzfs_series
from slogqual.report.markup import esc, items, kv, md_kv, md_table, table
from slogqual.results.advice import AdviceResult, CandidateAdvice, StepPrediction
from slogqual.results.scenario import ScenarioResult
from slogqual.units import size_label


def _f(v: Optional[float], digits: int = 0) -> str:
    if v is None:
        return "-"
    return f"{v:,.{digits}f}"


def workload_line(advice: AdviceResult) -> str:
    w = advice.workload
    return (f"workload: {w['protocol']}, {size_label(w['io_size'])} sync writes, block {size_label(w['block_size'])}, "
            f"{w['zils']} ZIL(s); data side: {advice.data['description']}")


def candidate_line(c: CandidateAdvice) -> str:
    cap = f", {c.capacity / (1 << 30):.2f} GiB" if c.capacity else ""
    bw = c.bandwidth
    return (f"{c.path} ({c.device_class or '?'}{', ' + c.model if c.model else ''}{cap}): "
            f"writes reach the log {c.log_write_state}, {c.log_record_bytes_per_io} bytes each; "
            + (f"bandwidth {bw.mbps:.1f} MiB/s at {size_label(bw.size)} ({bw.ios} IOs)" if bw else
               "bandwidth not swept (no size of 128K or more)"))


STEP_HEADERS = ["threads", "batch", "lwb", "commit µs (95% CI)", "sweep IOs", "log-lat IOPS", "log-bw IOPS",
                "pool IOPS", "IOPS (range)", "IOPS if p99≤", "MiB/s", "no SLOG", "benefit", "binding"]


def predicted(s: StepPrediction) -> str:
    """The predicted IOPS, marked ``≤`` where the advisor calls it an upper bound."""
    return ("≤ " if s.upper_bound else "~" if s.extrapolated else "") + _f(s.iops)


def step_row(s: StepPrediction) -> List[Any]:
    lim, ci, rng = s.limits, s.commit_lat_ci95_us, s.iops_range
    return [s.threads, f"{s.batch:g}", "+".join(size_label(v) for v in s.lwb_writes),
            _f(s.commit_lat_us, 1) + (f" ({_f(ci[0], 1)}–{_f(ci[1], 1)})" if ci else ""),
            s.sweep_ios, _f(lim.log_latency_iops), _f(lim.log_bandwidth_iops), _f(lim.pool_iops),
            predicted(s) + (f" ({_f(rng[0])}–{_f(rng[1])})" if rng else ""),
            _f(s.iops_if_p99_bound), _f(s.mbps, 2), _f(s.without_slog_iops),
            f"{s.benefit:.2f}x" if s.benefit is not None else "-", s.binding]


def after_lines(c: CandidateAdvice) -> List[str]:
    """Below a candidate's table: its knee, findings, the log space it needs, mirror and life."""
    lines = []
    k = c.knee
    if k:
        lines.append(f"knee: {'at' if k.saturated else 'still rising at'} {k.threads} threads ({_f(k.iops)} IOPS)")
    lines += [f"- {finding_words(f)}" for f in c.findings]
    lines += [f"- {x}" for x in extrapolated_lines(c)]
    sz = c.size
    lines.append(f"size: needs {sz.needed_bytes / (1 << 20):,.0f} MiB, {sz.recommended_bytes / (1 << 20):,.0f} MiB "
                 f"with the margin ({sz.txgs_held} txgs held + {sz.txgs_with_margin - sz.txgs_held} deferred "
                 f"× {sz.per_txg_bytes / (1 << 20):,.1f} MiB per {sz.txg_seconds:g} s txg, at {sz.rate_basis})")
    if c.mirror:
        lines.append(f"mirror: {c.mirror.mirror} (see the finding above)")
    life = c.life
    if life:
        years = "?" if life.years is None else f"{life.years:.2g}"
        lines.append(f"life: {years} years at {life.bytes_per_day / 1e9:,.1f} GB a day "
                     f"({life.endurance_basis}; {life.assumption})")
        measured = life.measured_years
        if measured:
            lines.append(f"life measured from its own wear: {measured['years_low']:.2g}–{measured['years_high']:.2g} "
                         f"years ({measured['remaining_percent']} % of its life left)")
    return lines


MODEL_NOTE = ("model: docs/advisor.md (percentiles are not predicted; 'IOPS if p99≤' is a bound, and so is an "
              "IOPS figure marked ≤)")


def table_text(advice: AdviceResult) -> str:
    """What `slogqual advise` prints."""
    lines = first_lines(advice) + [zfs_line(advice.tunables), workload_line(advice)]
    for c in advice.candidates:
        lines += ["", candidate_line(c), tabulate([step_row(s) for s in c.steps], headers=STEP_HEADERS,
                                                  disable_numparse=True)]
        lines += after_lines(c)
    if advice.special is not None:
        lines += ["", *special_lines(advice.special)]
    return "\n".join(lines + ["", MODEL_NOTE])


SPECIAL_SETTING_WORDS = {
    "2.4-special-is-slog": "OpenZFS 2.4+, zil_special_is_slog=1 (default)",
    "2.4-special-not-slog": "OpenZFS 2.4+, zil_special_is_slog=0",
    "before-2.4": "before OpenZFS 2.4",
}


def _special_cell(s) -> str:
    if s.iops is None:
        return "-"
    return ("≤ " if s.upper_bound else "~" if s.extrapolated else "") + _f(s.iops)


def zfs_line(tunables: Dict[str, Any]) -> str:
    """Which OpenZFS the advice is for, where that came from, and what the model's 2.3 sources mean for it."""
    version = tunables.get("zfs_version")
    source = (tunables.get("sources") or {}).get("zfs_version", "given")
    if not version:
        return ("OpenZFS: unknown (give --zfs VERSION, or advise where the pool's module is loaded): the model "
                "follows 2.3's sources (zfs_log_write, zvol_log_write, the lwb sizes)")
    found = openzfs_series(version) or (0, 0)
    head = f"OpenZFS {version} ({source}): "
    if found < (2, 3):
        return head + "older than the 2.3 sources the model follows; its figures are not checked for this release"
    if found == (2, 3):
        return head + "the release whose sources the model follows"
    return head + ("the model follows 2.3's sources; 2.4 counts the ZIL's record headers in its write throttle "
                   "(openzfs/zfs#17373) and allocates closed log blocks exactly (#17613, RAIDZ/dRAID logs): "
                   "neither changes a single or mirrored log's lwb sizes")


def special_lines(sp) -> List[str]:
    """Special vdev or SLOG? (analysis.advisor_special): the ZIL on the special vdev under each OpenZFS setting,
    each log candidate beside it, and why the special's figures are bounds."""
    threads = [s.threads for s in sp.settings["2.4-special-is-slog"]]
    rows = [[SPECIAL_SETTING_WORDS[name] + (" ← this pool" if name == sp.applies else ""),
             *[_special_cell(s) for s in steps]] for name, steps in sp.settings.items()]
    for v in sp.versus:
        by = {r["threads"]: r for r in v["steps"]}
        rows.append([f"dedicated log {v['path'] or v['sweep']} ({v['class'] or '?'})",
                     *[(("≤ " if by[n]["log_upper_bound"] else "") + _f(by[n]["log_iops"])) if n in by else "-"
                       for n in threads]])
    lo, hi = sp.lab_ratio or (None, None)
    lines = [f"special vdev or SLOG? the ZIL on the special vdev {sp.path or sp.sweep} ({sp.device_class or '?'}), "
             "IOPS by writers:",
             tabulate(rows, headers=["", *[str(n) for n in threads]], disable_numparse=True),
             "On 2.4 the special vdev takes the ZIL as a log would, but it also writes the pool's metadata and small "
             "blocks at every txg sync: its figures are upper bounds (≤), the same device as a dedicated log"
             + (f"; measured in the lab at {lo:.2f}-{hi:.2f}x of that (docs/scenarios.md)." if lo else ".")]
    if sp.indirect_without_slog:
        lines.append("With zil_special_is_slog=0, and before 2.4, this load's writes are logged indirectly and wait "
                     "for the data disks: as without a log.")
    else:
        lines.append("Before 2.4 the ZIL stays off the special vdev (log vdev, then the data vdevs): as without a log.")
    for v in sp.versus:
        faster = [r for r in v["steps"] if r["ratio"] >= 1.2]
        if faster:
            lines.append(f"{v['path'] or v['sweep']}: a dedicated log "
                         f"{min(r['ratio'] for r in faster):.1f}x the special vdev's bound at "
                         f"{', '.join(str(r['threads']) for r in faster)} writer(s).")
        else:
            lines.append(f"{v['path'] or v['sweep']}: nowhere above 1.2x the special vdev's bound — on 2.4 a dedicated "
                         "log of it adds little over the special vdev, if anything (to measure it: a scenario with "
                         "log = \"special\" beside log = \"single\", docs/scenarios.md).")
    return lines


# --- the document's words: every sentence of an advice is made here ----------------------------------------

ASSUMPTIONS = [
    "Every sync write reaches the log as zfs_log_write/zvol_log_write decide (OpenZFS 2.3): with a log vdev "
    "nothing goes indirect unless logbias=throughput; a record is 192 bytes plus the data rounded to 8.",
    "A commit writes the records of half the writers waiting on one ZIL (at least one) as log write blocks "
    "(lwb, full blocks of zil_maxblocksize then the rest rounded up to 4 KiB) and flushes once.",
    "A commit costs the candidate's swept mean write+flush latency at the last lwb's size (log-log between swept "
    "sizes) plus the write-only latency of the earlier full lwbs; the spread is the sweep's 95 % interval of "
    "that mean; 'iops_if_p99_bound' is the figure if every commit took the sweep's p99 (a bound, not a "
    "measured percentile).",
    "The log device completes one commit at a time, as its QD1 sweep measured, whichever ZIL it comes from: "
    "a device that overlaps commits does better (the prediction is then low).",
    "The log's bandwidth is its best MiB/s at swept sizes of 128 KiB and more; without such a size it is not "
    "known and no step is called log-bandwidth-bound. A step is log-bandwidth-bound when at least half of a "
    "commit's bytes go in lwb writes of a size at which the device's QD1 write+flush already runs at 90 % of "
    "that bandwidth.",
    "The data side caps the prediction with its sync=standard figure at the same thread count (measured in a "
    "scenario result, or from the data devices' sweeps a bandwidth bound); the host's CPU is part of a measured "
    "ceiling, not of the log model.",
]


def _mib(b: float) -> str:
    return f"{b / (1 << 20):,.0f} MiB" if b >= 10 * (1 << 20) else f"{b / (1 << 20):.1f} MiB"


def figure_basis(b: A.FigureBasis) -> str:
    """Where a data-side figure comes from ('measured: run.json, sync=standard, nearest step (8 threads)')."""
    if b.source == "scenario":
        words = f"measured: {b.name}, " + ("sync=standard" if b.sync == "standard" else "sync=always, no SLOG")
        if b.o_dsync:
            words += " (O_DSYNC writes: through the ZIL, on the data disks)"
    else:
        words = f"bound from the sweep of {b.name} ({b.layout} of {b.disks})" + (
            ", bandwidth" if b.zil is None else f", ZIL {b.zil} on the data vdevs")
    if b.nearest is not None:
        words += f", nearest step ({b.nearest} threads)"
    if b.between is not None:
        words += f", interpolated between {b.between[0]} and {b.between[1]} threads"
    return words


def data_origin(d: A.DataOrigin) -> str:
    """The data side's description."""
    if d.source == "scenario":
        return f"{d.name}: {d.layout} of {d.disks} data devices"
    if d.source == "sweeps":
        return f"{d.layout} of {d.disks} × {d.name}"
    return "no data side given: the log alone"


def rate_basis(r: A.RateBasis) -> str:
    """The rate a size or a life rests on."""
    if r.kind == "history-peak":
        return (f"the busiest of {r.intervals} intervals of {r.source}: the log vdevs wrote "
                f"{r.peak_bytes_s / A.MB:.2f} MB/s (mean {r.mean_bytes_s / A.MB:.2f})")
    if r.kind == "history-mean":
        return f"the mean of {r.intervals} intervals of {r.source}, {r.mean_bytes_s / A.MB:.2f} MB/s"
    if r.kind == "required":
        return f"the required rate, {r.rate_mbps:g} MB/s"
    return f"the predicted peak, {r.mib_s:.1f} MiB/s at {r.threads} threads" + (
        f" (an upper bound: {r.upper_bound})" if r.upper_bound else "")


def endurance_basis(e: A.EnduranceBasis) -> str:
    if e.kind == "tbw":
        return f"rated {e.tbw:g} TBW"
    if e.kind == "dwpd":
        return f"rated {e.dwpd:g} DWPD × {e.capacity} bytes × 365 × {e.warranty_years:g} years"
    return "measured: the device's percentage used over its sweep"


def wear_words(worn: Dict[str, Any]) -> str:
    """What the device's own counters said over its sweep's longest point (analysis.wear), in words."""
    w, size = worn["written_bytes"], worn.get("size")
    at = f" at {size} bytes per write" if size else ""
    parts = []
    if worn.get("counted_ratio") is not None:
        counter = wear.COUNTERS.get(worn.get("counter") or "data_units_written")  # a summary before SATA/SAS: NVMe's
        parts.append(f"it counted {worn['counted_ratio']:.2f} x the {w} bytes its sweep wrote{at} as host writes"
                     + (f" (its {counter})" if counter else ""))
    if worn.get("bytes_per_percent"):
        c = worn["bytes_per_percent"]
        parts.append(f"its percentage used moved {worn['percentage_used_delta']} over {w} bytes: one per cent of "
                     f"its life costs {c['low']}–{c['high']} bytes, its own write amplification included")
    elif worn.get("percentage_used_delta") is not None:
        parts.append(f"its percentage used moved {worn['percentage_used_delta']} over {w} bytes{at}: too few "
                     "writes to measure what a per cent costs (a longer --sustain run would)")
    return "; ".join(parts)


def wear_assumption(a: A.WearAssumption) -> str:
    if a.worn is None:
        return ("the device's own write amplification is 1 (not measured: a --sustain run with wear read "
                "before and after would measure it)")
    said = wear_words(a.worn)
    return said if a.measured else f"the device's own write amplification is 1 (not measured); {said}"


MIRROR_CALLS = {
    A.Kind.POWER_LOSS_UNSAFE.value: "no: not a SLOG",
    A.Kind.UNMIRRORED_EXPOSURE.value: "your call: the exposure is bounded",
    A.Kind.NO_POWER_LOSS_EVIDENCE.value: "unknown until the device's power-loss behaviour is known",
}
NO_EVIDENCE = {
    "emulated": "its power-cut test was emulated (nbdkit), which says nothing of this device",
    "incomplete": "its power-cut test did not finish",
    "none": "no power-cut result was given",
}


# --- a finding in one sentence (the document keeps kind and figures beside it) ----------------------------

def _threads(f: Dict[str, Any]) -> str:
    return ", ".join(str(x) for x in f.get("threads") or [])


def _log_latency(f: Dict[str, Any]) -> str:
    x = f["figures"][-1]
    timed = [y for y in f["figures"] if str(y.get("batch_basis") or "").startswith("commit-timeout")]
    gathered = ", ".join(f"{y['batch']:.1f} of {y['threads']} writers" for y in timed)
    batch = (f"; the log's flush stops its queue, so one commit at a time, each of the records the commit timeout "
             f"gathers ({gathered})") if timed else ""
    return (f"log-latency-bound at {_threads(f)} threads: each commit waits for the log's write+flush "
            f"({x['commit_lat_us']:.0f} µs for lwb writes of " + "+".join(size_label(v) for v in x["lwb_writes"])
            + f", from {x['sweep_ios']} swept IOs){batch}; "
            f"{x['iops']:.0f} IOPS at {x['threads']} threads")


def _log_bandwidth(f: Dict[str, Any]) -> str:
    x = f["figures"][-1]
    return (f"log-bandwidth-bound at {_threads(f)} threads: {x['lwbs']} lwb write(s) per commit of up to "
            f"{size_label(x['lwb_write'])} run the log at its best MiB/s; {x['mbps']:.1f} MiB/s at {x['threads']} threads")


def _pool(f: Dict[str, Any]) -> str:
    x = f["figures"][-1]
    return (f"pool-bound at {_threads(f)} threads: the data side carries {x['pool_iops']:.0f} IOPS at {x['threads']} threads "
            f"({x['pool_basis']}), below the log's {x['log_latency_iops']:.0f}")


def _indirect(f: Dict[str, Any]) -> str:
    return (f"indirect-bypass at {_threads(f)} threads: logbias=throughput sends the data to the data vdevs and only "
            "block pointers to the log; the log device does not set the pace")


def _no_benefit(f: Dict[str, Any]) -> str:
    x = f["figures"][0]
    return (f"no-benefit: {x['iops']:.0f} IOPS with the log vs {x['without_slog_iops']:.0f} without it at "
            f"{x['threads']} threads ({x['benefit']:.2f}x)")


def _too_small(f: Dict[str, Any]) -> str:
    x = f["figures"][0]
    return (f"log-too-small: {_mib(x['capacity'])} holds less than the recommended {_mib(x['recommended_bytes'])} "
            f"(needed {_mib(x['needed_bytes'])}: 3 txgs at {x['rate_basis']})"
            + ("; the ZIL will spill to the data vdevs" if x["spills"] else ""))


def _short_life(f: Dict[str, Any]) -> str:
    x = f["figures"][0]
    return (f"short-life: {x['years']:.2g} years at {x['bytes_per_day'] / 1e9:,.1f} GB a day against a "
            f"{x['warranty_years']:g}-year rating")


def _unsafe(f: Dict[str, Any]) -> str:
    x = f["figures"][0]
    return (f"power-loss-unsafe: a {x['method']} power cut lost {x['lost']} of {x['acknowledged']} acknowledged "
            f"writes ({x['cycles']} cycle(s), {x['source']}); every cut can lose up to {_mib(x['exposure_bytes'])} "
            f"(the last {x['window_s']:g} s at {x['rate_basis']}), and a mirror of two such devices loses them "
            "from both sides at once — mirroring does not make it a SLOG")


def _exposure(f: Dict[str, Any]) -> str:
    x = f["figures"][0]
    return (f"unmirrored-exposure: power cuts lost none of {x['acknowledged']} acknowledged writes "
            f"({x['cycles']} {x['method']} cycle(s)). Unmirrored, a failed log costs speed only while the host "
            f"runs; writes are lost only if the host crashes while the log is failed — at most the last "
            f"{x['window_s']:g} s of sync writes ({_mib(x['exposure_bytes'])} at {x['rate_basis']}), and the pool "
            "then imports only with `zpool import -m`. Mirror it if that is worth a second device")


def _no_evidence(f: Dict[str, Any]) -> str:
    x = f["figures"][0]
    return (f"no-power-loss-evidence: {x['why']}; whether the log keeps acknowledged writes at a power cut "
            f"matters before mirroring it (slogqual powercut). Unmirrored, a crash while the log is failed "
            f"loses at most the last {x['window_s']:g} s of sync writes ({_mib(x['exposure_bytes'])} at "
            f"{x['rate_basis']})")


def _host_saturated(f: Dict[str, Any]) -> str:
    figs = f["figures"]
    x = figs[-1]
    bounds = [str(y["threads"]) for y in figs if y["upper_bound"]]
    return (f"host-cpu-saturated at {_threads(f)} threads: sync=standard ran the host's CPU {x['busy'] * 100:.0f} % busy "
            f"({x['us_per_io']:,.0f} µs of CPU per IO at {x['threads']} threads): its figure is the host's pace"
            + (f"; at {', '.join(bounds)} threads it is the prediction, and an upper bound: with a log the host "
               "also copies every write into the log and checksums it" if bounds else ""))


def _extrapolated(f: Dict[str, Any]) -> str:
    x = f["figures"][0]
    return ("extrapolated: lwb sizes " + ", ".join(size_label(s) for s in x["sizes"]) + " lie outside the swept "
            "sizes (" + ", ".join(size_label(s) for s in x["swept"]) + "); sweep them for a measured figure")


def _host_bound(f: Dict[str, Any]) -> str:
    x = f["figures"][-1]
    lp = x.get("host_log_pass_iops")
    which = ("the host probe's pass with this log: its ZFS and this log's driver at the writers' concurrency, the "
             "RAM data's copies taken out" if lp is not None and lp <= x["iops"] * 1.0005 else
             "the host probe: its ZFS with a perfect log, the RAM copies taken out")
    return (f"host-bound at {_threads(f)} threads: this host's own ceiling ({which}) is below what the log could "
            f"take — ≤ {x['iops']:.0f} IOPS at {x['threads']} threads, where the log alone would give "
            f"{x['log_latency_iops']:.0f}")


def _measured_pass(x: Dict[str, Any], key: str, busy_words: str) -> str:
    """'N IOPS at T threads (the median of a/b/c, at least K IOs a pass; its CPU B % busy…)' of a probe's passes
    stored under ``key`` (log_pass, probe_pool)."""
    each = "/".join(f"{v:,.0f}" for v in x.get(f"{key}_each_iops") or [])
    busy = x.get(f"{key}_busy")
    return (f"{x[f'{key}_measured_iops']:,.0f} IOPS at {x['threads']} threads (the median of {each}, at least "
            f"{x[f'{key}_ios']:,} IOs a pass"
            + (f"; its CPU {busy * 100:.0f} % busy{busy_words}" if busy is not None else "") + ")")


def _log_pass_bound(f: Dict[str, Any]) -> str:
    x = f["figures"][-1]
    why = (": one writer alone, whose own path (ZFS's work and this log's, in a row) set its pace, busy or not"
           if x.get("log_pass_alone") else ": the log, not the host, set its pace")
    return (f"log-pass-bound at {_threads(f)} threads: the host probe's pass with this log ran this load at "
            + _measured_pass(x, "log_pass", why)
            + f", below the {x['log_latency_iops']:,.0f} its sweep and the model's batching give; the pool runs "
            "at it unless its data side is slower (the pass's data were files in RAM)")


def _log_stalled(f: Dict[str, Any]) -> str:
    figs = f["figures"]
    x = max(figs, key=lambda y: y["longest_write_s"])
    where = "; ".join(f"{y['threads']} writers in pass {y['pass']} of {y['passes']}" for y in figs)
    return (f"log-stalled: in the host probe's pass with this log a write took {x['longest_write_s']:,.1f} s — past "
            f"the kernel's {x['timeout_s']:.0f}-s I/O timeout, which aborts the command and resets the device "
            f"({where}); for as long, every sync write of a pool with this log waits. Those steps are no figure "
            "of the host's or the log's pace and are left out; the kernel log says what the device did")


def _probe_pool_bound(f: Dict[str, Any]) -> str:
    x = f["figures"][-1]
    return (f"probe-pool-bound at {_threads(f)} threads: the host probe's own pool — these data disks, a log in "
            "RAM — ran this load at " + _measured_pass(x, "probe_pool", ": the CPU set its pace")
            + ". This log is written by the CPU, as the probe's RAM log is, so that pool is this pool: its figure "
            f"is the prediction, below the {x['log_latency_iops']:,.0f} the log's sweep gives")


FINDING_WORDS: Dict[str, Callable[[Dict[str, Any]], str]] = {
    A.Kind.HOST.value: _host_bound, A.Kind.LOG_PASS.value: _log_pass_bound,
    A.Kind.PROBE_POOL.value: _probe_pool_bound,
    A.Kind.LOG_LATENCY.value: _log_latency, A.Kind.LOG_BANDWIDTH.value: _log_bandwidth, A.Kind.POOL.value: _pool,
    A.Kind.INDIRECT.value: _indirect, A.Kind.NO_BENEFIT.value: _no_benefit, A.Kind.LOG_TOO_SMALL.value: _too_small,
    A.Kind.SHORT_LIFE.value: _short_life, A.Kind.POWER_LOSS_UNSAFE.value: _unsafe,
    A.Kind.UNMIRRORED_EXPOSURE.value: _exposure, A.Kind.NO_POWER_LOSS_EVIDENCE.value: _no_evidence,
    A.Kind.HOST_SATURATED.value: _host_saturated, A.Kind.EXTRAPOLATED.value: _extrapolated,
    A.Kind.LOG_STALLED.value: _log_stalled,
}


def finding_words(f: Dict[str, Any]) -> str:
    """A finding of the document (its kind, threads and figures, facts worded) in one sentence; a kind this
    slogqual does not know is said by its name."""
    said = FINDING_WORDS.get(f["kind"])
    return said(f) if said else f["kind"]


# --- the document ------------------------------------------------------------------------------------------

_FACTS: Dict[type, Callable[[Any], Any]] = {
    A.FigureBasis: figure_basis, A.DataOrigin: data_origin, A.RateBasis: rate_basis,
    A.EnduranceBasis: endurance_basis, A.WearAssumption: wear_assumption,
    A.MirrorCall: lambda m: MIRROR_CALLS[m.kind], A.NoEvidence: lambda n: NO_EVIDENCE[n.why],
    A.Warned: lambda w: f"{w.candidate}: {finding_words(worded(w.finding))}",
}


def worded(x: Any) -> Any:
    """``x`` (the advisor's facts, a dict or a list of them) with every fact worded where the document holds
    its sentence; a copy, the facts left as they are."""
    if isinstance(x, dict):
        return {k: worded(v) for k, v in x.items()}
    if isinstance(x, list):
        return [worded(v) for v in x]
    said = _FACTS.get(type(x))
    return said(x) if said else x


def document(facts: Dict[str, Any]) -> Dict[str, Any]:
    """The ``slogqual.advice/1`` document of analysis/advisor.advise's facts: every sentence made, the model's
    assumptions after the data side — what ``slogqual advise`` writes and prints."""
    out: Dict[str, Any] = {}
    for key, value in facts.items():
        out[key] = worded(value)
        if key == "data":
            out["assumptions"] = list(ASSUMPTIONS)
    return out


VERIFY_HEADERS = ["candidate", "class", "threads", "predicted IOPS", "measured IOPS", "measured IOs", "error",
                  "predicted limit"]


def verify_row(r: Dict[str, Any]) -> List[Any]:
    """One row of analysis/advisor.verify: the prediction (≤ where a bound) beside the measured step."""
    return [r["candidate"], r["class"] or "?", r["threads"], ("≤ " if r.get("upper_bound") else "") + _f(r["predicted_iops"]),
            _f(r["measured_iops"]), r["measured_ios"], f"{r['error'] * 100:+.0f} %" if r["error"] is not None else "-",
            r["binding"]]


def verify_table(rows: List[Dict[str, Any]]) -> str:
    return tabulate([verify_row(r) for r in rows], headers=VERIFY_HEADERS, disable_numparse=True)


# --- the report's section --------------------------------------------------------------------------------

PROTOCOL_KIND = {"iscsi": "zvol", "nfs": "dataset"}  # what a scenario's LUNs are for each protocol


def verifies(advice: AdviceResult, scenario: ScenarioResult) -> bool:
    """Whether the scenario measured the advice's load (IO size, zvols or files) with a candidate as its log."""
    w = advice.workload
    kind = scenario.scenario.kind
    return (scenario.bs == w["io_size"] and (kind is None or kind == PROTOCOL_KIND.get(w["protocol"]))
            and bool({c.path for c in advice.candidates} & set(scenario.log_paths)))


def verification(advice: AdviceResult, scenarios: Sequence[Tuple[ScenarioResult, str]]
                 ) -> List[Tuple[str, Dict[str, Any]]]:
    """(scenario path, verify row) for every scenario of the report that measured this advice's load: its
    sync=always + single-SLOG steps at the advice's thread counts, of a candidate that was its log."""
    return [(path, r) for result, path in scenarios if verifies(advice, result)
            for r in A.verify(advice, result) if r["candidate"] in result.log_paths]


BOUND_WORDS = {
    "host-cpu": "sync=standard ran the host's CPU saturated at this thread count, and with a log the host also "
                "copies every write into the log and checksums it (host-cpu-saturated)",
    "log-only": "no data-side figure at this thread count: only the log device's limits are in it, the pool and "
                "the host can hold it lower",
    "data-sweeps": "the data side is its devices' QD1 sweeps (their bandwidth over the bytes each write dirties): "
                   "no figure of the pool's own writes at the txg's queue depth nor, without a host probe, of the "
                   "host's path between a write and the log, which can hold it lower (give --scenario, a measured "
                   "pool)",
    "log-concurrency": "more writers than one per intent log: the model's upper end of how many commits the log "
                       "takes at once and how full (every writer its own log block where flushes queue; where a "
                       "flush stops the queue, one commit at a time of all the ZIL's writers, or for large records "
                       "of as many as the commit timeout gathers)",
    "host-ceiling": "the host probe's ceiling binds: this host's ZFS with a perfect log, the RAM copies taken out "
                    "(slogqual host-probe), which no log device can pass — or, where the probe ran a pass with this "
                    "log (--log), the lower ceiling of that pass, this log's own CPU at the writers' concurrency in it",
}

# Where the host probe was given: its ceiling and measured batching are in every figure.
HOST_FIGURE = ("host figure: the host probe ({source}) — each figure is the least of the log device, the data side "
               "and this host's own ceiling; batching (records per commit) and the software path ({path}) measured")

# The first line of an advice with no measured pool (issue #37): its figures rest on no host figure.
NO_HOST_FIGURE = ("no host figure: this host's ZFS was not measured with this load (no --scenario result), so "
                  "every figure below is an upper bound (≤), not a prediction; the host's CPU and the path "
                  "between a write and the log can hold the pool 3-4x lower")


def _other_device(x: Optional[Dict[str, Any]]) -> str:
    """Why the probe's log pass is not a candidate's: it ran with another device (the facts of log_pass_of)."""
    if not x:
        return "another device"
    if x.get("by") == "serial":
        return f"the pass ran with serial {x.get('pass')}, this sweep's device is serial {x.get('sweep')}"
    return f"the pass ran with {x.get('pass')}, this sweep's device is {x.get('sweep')}, neither with a serial"


def first_lines(advice: AdviceResult) -> List[str]:
    """What the advice's figures rest on for the host: the probe, a measured pool, or nothing (said first)."""
    host = advice.extra.get("host")
    if host:
        paths = [s["path_us"] for s in host.get("steps") or [] if s.get("path_us")]
        lines = [HOST_FIGURE.format(source=host.get("source") or "given",
                                    path=f"{paths[0]:.0f} µs at its fewest writers" if paths else "unknown")]
        failed = (host.get("log_pass") or {}).get("failed")
        if failed:
            lines.append(f"the host probe's log pass {failed.get('pass')} failed ({failed.get('error')}): its figures "
                         "are from the passes before it")
        for c in advice.candidates:
            lp = c.host_log_pass
            if lp is None:
                continue
            lines.append(f"host probe's log pass with {lp.device}: " + (
                f"{c.path}'s host ceiling is also that pass's (this log's CPU at the writers' concurrency)" if lp.used
                else f"not taken for {c.path} ({_other_device(lp.other_device)})"))
        return lines
    return [NO_HOST_FIGURE] if advice.data.get("source") != "scenario" else []


def extrapolated_lines(c: CandidateAdvice) -> List[str]:
    """Figures that rest on lwb sizes the sweep never wrote: neither a prediction nor a bound (issue #37)."""
    return [f"{s.threads} threads: {_f(s.iops)} IOPS rests on log blocks of "
            f"{', '.join(size_label(x) for x in s.extrapolated)} the sweep never wrote — neither a prediction nor a "
            f"bound; sweep the log up to {size_label(max(s.extrapolated))}" for s in c.steps if s.extrapolated]


def bound_lines(c: CandidateAdvice) -> List[str]:
    """Every figure marked ≤, with what bounds it."""
    out = []
    for s in c.steps:
        why = s.upper_bound
        if not why:
            continue
        busy = s.host_cpu.busy if s.host_cpu else None
        out.append(f"{s.threads} threads: ≤ {_f(s.iops)} IOPS is an upper bound ({why}): {BOUND_WORDS.get(why, why)}"
                   + (f"; CPU {busy:.0%} busy" if busy is not None and why == "host-cpu" else ""))
    return out


@dataclass
class CandidateSection:
    title: str
    rows: List[List[str]]
    bounds: List[str]
    after: List[str]  # knee, findings, size, mirror, life


@dataclass
class AdviceSection:
    path: str
    result: AdviceResult
    name: str
    workload: str
    candidates: List[CandidateSection]
    verified: List[List[str]]  # [scenario file] + verify_row
    verified_headers: List[str]
    tunables: List[Tuple[str, str]]
    assumptions: List[str]
    warnings: List[str] = field(default_factory=list)


def advice_section(advice: AdviceResult, path: str,
                   scenarios: Sequence[Tuple[ScenarioResult, str]] = ()) -> AdviceSection:
    t = advice.tunables
    sources = t.get("sources") or {}
    tunables = [(k, f"{v}" + (f" ({sources[k]})" if sources.get(k) else "")) for k, v in t.items()
                if k != "sources" and v is not None]
    return AdviceSection(
        path=path, result=advice,
        name="advice: " + ", ".join(str(c.path) for c in advice.candidates),
        workload=workload_line(advice),
        candidates=[CandidateSection(candidate_line(c), [[str(v) for v in step_row(s)] for s in c.steps],
                                     bound_lines(c), after_lines(c)) for c in advice.candidates],
        verified=[[p] + [str(v) for v in verify_row(r)] for p, r in verification(advice, scenarios)],
        verified_headers=["measured in"] + VERIFY_HEADERS, tunables=tunables, assumptions=list(advice.assumptions),
        warnings=list(advice.warnings))


NOT_VERIFIED = ("Not verified here: no scenario result in this report measured this load (IO size, zvols or files) "
                "with a candidate as its single log at the advice's thread counts (`slogqual advise --verify`, or "
                "give such a result to the report).")
VERIFIED_NOTE = ("Prediction beside the measured sync=always + single-SLOG steps; error = predicted / measured − 1; "
                 "measured IOs: the writes behind the measured figure. A prediction marked ≤ is a bound: the "
                 "measurement may fall below it.")

SUMMARY_HEADERS = ["advice", "workload", "candidates", "predicted peak", "verified steps"]


def summary_row(s: AdviceSection) -> List[str]:
    peaks = []
    for c in s.result.candidates:
        top = max(c.steps, key=lambda x: x.iops, default=None)
        if top is not None:
            peaks.append(f"{c.path}: {predicted(top)} IOPS at {top.threads} threads")
    return [s.path, s.workload.split(";")[0].removeprefix("workload: "), str(len(s.result.candidates)),
            "; ".join(peaks) or "–", str(len(s.verified))]


def section_html(s: AdviceSection, n: int, charts: str) -> str:
    out = [f'<section class="advice" id="advice-{n}"><h2>{n}. {esc(s.name)}</h2>',
           f'<p class="meta">Result file {esc(s.path)} · {esc(s.result.schema)} · {esc(s.result.origin or "")}</p>',
           f"<p>{esc(s.workload)}</p>"]
    if s.warnings:
        out.append(items(s.warnings, "warnings"))
    out.append("<h3>Prediction beside measurement</h3>")
    if s.verified:
        out.append(table(s.verified_headers, s.verified, numeric_from=3) + f'<p class="meta">{esc(VERIFIED_NOTE)}</p>')
    else:
        out.append(f'<p class="meta">{esc(NOT_VERIFIED)}</p>')
    out.append(charts)
    for c in s.candidates:
        out.append(f'<h3>{esc(c.title)}</h3>' + table(STEP_HEADERS, c.rows, numeric_from=1))
        if c.bounds:
            out.append(items(c.bounds, "bounds"))
        out.append(items([x.removeprefix("- ") for x in c.after]))
    out += [f'<p class="meta">{esc(MODEL_NOTE)}</p>', "<h3>OpenZFS tunables assumed</h3>" + kv(s.tunables),
            "<h3>Assumptions</h3>" + items(s.assumptions), "</section>"]
    return "\n".join(out)


def section_md(s: AdviceSection, n: int, charts: List[str]) -> List[str]:
    out = [f"## {n}. {s.name}", "", f"Result file `{s.path}` · {s.result.schema} · {s.result.origin or ''}", "",
           s.workload, ""] + [f"- **{w}**" for w in s.warnings] + ([""] if s.warnings else [])
    out += ["### Prediction beside measurement", ""]
    out += ([md_table(s.verified_headers, s.verified, numeric_from=3), "", VERIFIED_NOTE, ""] if s.verified
            else [NOT_VERIFIED, ""])
    out += charts
    for c in s.candidates:
        out += [f"### {c.title}", "", md_table(STEP_HEADERS, c.rows, numeric_from=1), ""]
        out += [f"- {x}" for x in c.bounds] + [x if x.startswith("- ") else f"- {x}" for x in c.after] + [""]
    out += [MODEL_NOTE, "", "### OpenZFS tunables assumed", "", md_kv(s.tunables), "", "### Assumptions", ""]
    return out + [f"- {x}" for x in s.assumptions] + [""]
