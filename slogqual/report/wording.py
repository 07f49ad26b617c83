"""The words of the scenario analysis' findings: the one place a finding (analysis.findings) becomes
English. The stored ``analysis`` (its verdict, bottleneck, details, problems, slower_log), the
``slogqual scenario`` table, qualify's criteria details and JUnit, and the reports all read these words.

Pure functions: a finding in, a sentence out. ``word(finding)`` words any kind; ``verdict_words``
gives a verdict's sentence, bottleneck, details and problems. The protocol-cost comparison's words
(analysis.transport's facts: the transport, each pairing, unmatched step, difference and SLOG-benefit entry)
are made here too, by ``cost_worded`` before ``slogqual scenario cost`` prints or writes it.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

from slogqual.analysis import shelf, transport
from slogqual.report.shelf import ceiling_text, gb_s
from slogqual.analysis.findings import DETAILS, EFFECTS, LIMITS, PROBLEMS, Finding, Kind, of_kind, one
from slogqual.results.cost import BenefitCause, BenefitEntry, CostCandidate, CostResult, UnmatchedCostStep
from slogqual.results.shelf import UnitPath
from slogqual.units import size_label


def _unit(f: Finding) -> str:
    return "IOPS" if f.figures.get("metric", "iops") == "iops" else "MiB/s"


def _mib(v: float) -> str:
    return f"{v:.0f}" if v >= 10 else f"{v:.1f}"


def _size_words(size: float) -> str:
    return f"{size / 1024:.0f} KiB" if size >= 1024 else f"{size:.0f} B"


def _steps(pairs: Sequence[Sequence[float]], unit: str) -> str:
    return ", ".join(f"{t} threads {v:.0f}" for t, v in pairs) + f" {unit}"


def _at_size(x: Dict[str, Any]) -> str:
    """The size a sweep was read at: the log vdev's write size ('12 KiB', interpolated or not) or the load's."""
    size = x.get("size")
    if x.get("size_basis") == "log-vdev":
        return _size_words(size) + (", interpolated between swept sizes" if x.get("interpolated") else "")
    return size_label(size) if size else ""


def _log_too(log_too: Optional[Dict[str, Any]]) -> str:
    """Beside a pool/host verdict: measured evidence that the log device is at its own limit too (said,
    never as THE bottleneck), else that this run does not show the log's limit."""
    if log_too and log_too.get("observed_mbps") is not None and log_too.get("sweep_mbps") is not None:
        return (f"; the log vdev wrote {_mib(log_too['observed_mbps'])} MiB/s there, at or above its QD1 sync-write "
                f"sweep at {_at_size(log_too)} ({_mib(log_too['sweep_mbps'])} MiB/s), so the log device is at its "
                "limit too")
    return ", so this run does not show the log device's limit"


# --- what limits sync=always with the SLOG -------------------------------------------------------------

def _nothing(f: Finding) -> str:
    return "unknown"


def _pool_bound(f: Finding) -> str:
    return "the pool, not the log: the SLOG keeps up with sync=standard"


def _host_bound(f: Finding) -> str:
    x, unit = f.figures, _unit(f)
    return (f"pool/host-bound: sync=standard, which writes no ZIL, stopped scaling at {x['flat_threads']} "
            f"threads ({_steps(x['flat_steps'], unit)}) and {x['config']} stopped scaling at "
            f"{x['slog_flat_threads']} threads (peak {x['peak']:.0f} {unit}"
            + (f", {x['of_standard']:.0%} of sync=standard's peak" if x.get("of_standard") is not None else "")
            + ") on that plateau: the pool or the host (CPU, initiator) caps both" + _log_too(x.get("log_too")))


def _rising_on_plateau(f: Finding) -> str:
    x, unit = f.figures, _unit(f)
    return (f"not reached: {x['config']} still grew at its last thread step ({x['peak_threads']} threads, "
            f"{x['peak']:.0f} {unit}); sync=standard, which writes no ZIL, stopped scaling at "
            f"{x['flat_threads']} threads ({_steps(x['flat_steps'], unit)}), the pool/host ceiling "
            "it can reach at most; add thread steps" + (_log_too(x["log_too"]) if x.get("log_too") else ""))


def _log_bandwidth(f: Finding) -> str:
    x = f.figures
    if x.get("size_basis") == "log-vdev":
        return (f"log device bandwidth: {_mib(x['observed_mbps'])} MiB/s written to the log vdev"
                + (f" in {_size_words(x['observed_size'])} writes" if x.get("observed_size") else "")
                + f", at or above its QD1 sync-write sweep at {_at_size(x)} ({_mib(x['sweep_mbps'])} MiB/s)")
    return (f"log device bandwidth: {x['observed_mbps']:.0f} MiB/s, matching its sweep at {_at_size(x)} "
            f"({x['sweep_mbps']:.0f} MiB/s)")


def _log_bound(f: Finding) -> str:
    x = f.figures
    words = f"the log device: {x['config']} stops scaling at {x['threads']} threads"
    if x.get("sweep_lat_us"):
        words += f" (its QD1 sync write at {_at_size(x)} takes {x['sweep_lat_us']:.0f} µs)"
    elif x.get("basis") == "elimination":
        words += (" (by elimination: sync=standard, which writes no ZIL, still scaled"
                  + (f" and the host's CPU was {x['cpu_busy']:.0%} busy" if x.get("cpu_busy") is not None else "")
                  + "; no sweep of the log was given)")
    return words


def _unattributed(f: Finding) -> str:
    x, unit = f.figures, _unit(f)
    busy = f", the host's CPU {x['cpu_busy']:.0%} busy" if x.get("cpu_busy") is not None else ""
    if x.get("zil_free_scaling"):  # the CPU share is said here, once, as the reason: not in the figures too
        busy, why = "", f"sync=standard still scaled, but the host's CPU was {x['cpu_busy']:.0%} busy"
    else:
        why = "no run without the ZIL (sync=standard) still scaling rules out the pool or the host"
    return (f"not told apart: {x['config']} stops scaling at {x['threads']} threads ({x['value']:.0f} {unit}{busy}); "
            f"{why}, and no sweep of the log device was given to compare its writes with — the log device, "
            "the pool or the host could each have set it (sweep the log: --sweep-logs in the lab, --log-sweep)")


def _not_reached(f: Finding) -> str:
    return "not reached: throughput still grew at the last thread step; add steps"


def _host_limit(f: Finding) -> str:
    x, unit = f.figures, _unit(f)
    why = []
    if x.get("cpu_saturated"):
        why.append(f"its CPU was {x['cpu_busy']:.0%} busy")
    if x.get("log_share") is not None:
        why.append(f"the log vdev wrote {_mib(x['observed_mbps'])} MiB/s, {x['log_share']:.0%} of its QD1 "
                   f"sync-write sweep at {_at_size(x)} ({_mib(x['sweep_mbps'])} MiB/s)")
    busy = "" if x.get("cpu_saturated") or x.get("cpu_busy") is None else f" (CPU {x['cpu_busy']:.0%} busy)"
    return (f"the host, not the log device: at {x['config']}'s peak ({x['threads']} threads, {x['peak']:.0f} "
            f"{unit}{busy}) " + " and ".join(why) + "; the software path between a write and the log set the pace")


def _write_throttle(f: Finding) -> str:
    x = f.figures
    held = [(t, w, a, sh) for t, w, a, sh in x["steps"] if w]
    said = ", ".join(f"{sh:.0%} at {t} threads ({w} of {a})" for t, w, a, sh in held)
    return (f"the write throttle held back transactions of {x['config']}: {said} — the pool's dirty data passed "
            "zfs_delay_min_dirty_percent of zfs_dirty_data_max, its txg sync behind the writers (the dmu_tx kstat, "
            "every pool's transactions)")


# --- what the SLOG bought -------------------------------------------------------------------------------

def _nothing_sentence(f: Finding) -> str:
    return "No sync=always configuration with a SLOG was measured: nothing to judge."


def _sync(f: Finding) -> str:
    """The sync setting a verdict judged the SLOG under (an O_DSYNC load's sync=standard + SLOG: "standard")."""
    return f"sync={f.figures.get('sync', 'always')}"


def _faster_without(f: Finding) -> str:
    x, unit = f.figures, _unit(f)
    return (f"For this workload the pool is faster with no SLOG: {_sync(f)} reaches "
            f"{x['noslog_peak']:.0f} {unit} without it and {x['peak']:.0f} {unit} with it.")


def _buys_nothing(f: Finding) -> str:
    x, unit = f.figures, _unit(f)
    return (f"The SLOG buys nothing here: {_sync(f)} peaks at {x['peak']:.0f} {unit} with it "
            f"and {x['noslog_peak']:.0f} {unit} without.")


def _speedup(f: Finding) -> str:
    x, unit = f.figures, _unit(f)
    words = f"The SLOG makes {_sync(f)} {x['benefit']:.1f}x faster ({x['peak']:.0f} vs {x['noslog_peak']:.0f} {unit} at peak)"
    if x.get("of_standard") is None:
        return words + "."
    words += f", reaching {x['of_standard']:.0%} of sync=standard"
    if x.get("flat_threads") is not None:
        return words + (f" — which is itself flat from {x['flat_threads']} threads: pool/host-bound, "
                        "not a limit of the log device.")
    return words + "."


def _no_comparison(f: Finding) -> str:
    return (f"{_sync(f)} with the SLOG peaks at {f.figures['peak']:.0f} {_unit(f)} "
            "(no run without a SLOG to compare).")


# --- details and problems -------------------------------------------------------------------------------

def _saturated_at(f: Finding) -> str:
    x = f.figures
    return f"{x['config']}: stopped scaling at {x['threads']} threads ({_steps(x['steps'], _unit(f))})"


def _knee(f: Finding) -> str:
    x, unit = f.figures, _unit(f)
    where = "knee at" if x["saturated"] else "still scaling at"
    return f"{x['config']}: {where} {x['threads']} threads ({x['value']:.0f} {unit})"


def _slog_unused(f: Finding) -> str:
    x = f.figures
    to_pool = x["normal_bytes"] if x.get("normal_bytes") is not None else "an unknown number of"
    return (f"{x['config']}: the SLOG received no ZIL bytes at {x['threads']} threads "
            f"({to_pool} bytes went to the main pool): logbias=throughput, "
            "writes at or above zfs_immediate_write_sz, or a misconfigured pool — "
            "this step does not measure the SLOG")


def _curve(x: Dict[str, Any]) -> str:
    """A curve by its configuration, and its log candidate where the figures name one."""
    return x["config"] + (f" [{x['candidate']}]" if x.get("candidate") else "")


def _spill(f: Finding) -> str:
    x = f.figures
    return (f"{_curve(x)}: {x['share']:.0%} of the ZIL's bytes at {x['threads']} threads went to the main pool "
            f"({x['normal_bytes']} of {x['normal_bytes'] + x['slog_bytes']}): the log vdev had no room for "
            "them — the ZIL holds its blocks until their transaction group is synced and the space "
            "is reusable two groups later, several groups' writes (~15 s at the default zfs_txg_timeout) — "
            "so this step partly measures the data vdevs; a larger log device for this load")


def _stalled(f: Finding) -> str:
    x = f.figures
    return (f"{_curve(x)}: a write at {x['threads']} threads took {x['longest_write_s']:,.1f} s — past the kernel's "
            f"{x['timeout_s']:.0f}-s I/O timeout, which aborts the command and resets the device: a device of the "
            "pool stopped answering, and for as long every sync write waited; this step measured that, not the "
            "pool (the kernel log says which device and what it did)")


def _log_without_slog(f: Finding) -> str:
    x = f.figures
    return (f"{x['config']}: {x['slog_bytes']} ZIL bytes went to a log vdev in a configuration "
            "without one: the pool is not what the scenario declared")


# --- several log candidates -----------------------------------------------------------------------------

def _crosses(f: Finding) -> str:
    x, unit = f.figures, _unit(f)
    (s_lo, f_lo), (f_t, s_t) = x["slower_ahead"], x["faster_ahead"]
    return (f"The log candidates' curves cross: {x['slower_name']} is faster at {x['slower_ahead_at']} threads "
            f"({s_lo:.0f} vs {f_lo:.0f} {unit}), {x['faster_name']} at {x['faster_ahead_at']} threads ({f_t:.0f} vs "
            f"{s_t:.0f} {unit}); which one limits sync=always depends on the load's thread count, so neither is "
            "named the bottleneck.")


def _alike(f: Finding) -> str:
    x = f.figures
    return (f"The log candidates perform alike under this load ({x['slower_name']}, {x['faster_name']}): "
            "neither is the bottleneck.")


def _slower_figures(f: Finding) -> str:
    x, unit = f.figures, _unit(f)
    slow, fast = x["values"]
    return (f"sync=always with it reaches 1/{x['factor']:.1f} of the throughput with {x['faster_name']} (geometric "
            f"mean over the thread steps; at {x['threads']} threads {slow:.0f} vs {fast:.0f} {unit})")


def _slower(f: Finding) -> str:
    x, unit = f.figures, _unit(f)
    slow, fast = x["last_values"]
    return (f"The log device {x['slower_name']} is the slower one: {_slower_figures(f)}. Not named the bottleneck: "
            f"pool/host-bound — sync=standard, which writes no ZIL, stopped scaling at {x['flat_threads']} threads "
            f"({_steps(x['flat_steps'], unit)}), so at these steps the pool or host was at its limit "
            f"too (at {x['last']} threads {slow:.0f} vs {fast:.0f} {unit}).")


def _slower_is_bottleneck(f: Finding) -> str:
    return f"The slower log device {f.figures['slower_name']} is the bottleneck: {_slower_figures(f)}."


SHAPE = {"mirror": "mirrored pair", "stripe": "striped pair"}


def _pair_versus_single(f: Finding) -> str:
    x, unit = f.figures, _unit(f)
    ratio, shape = x["ratio"], SHAPE.get(x["log"], "pair")
    figures = f"({x['peak']:.0f} vs {x['single_peak']:.0f} {unit} at peak)"
    if ratio >= 1:
        words = f"the {shape} reaches {ratio:.1f}x the best single log, {x['single_name']} {figures}"
    else:
        words = f"the {shape} costs {1 - ratio:.0%} against the best single log, {x['single_name']} {figures}"
    if abs(ratio - 1) <= x["same_within"]:
        words += f" — within the {x['same_within']:.0%} a step's measurement can vary"
    return words[0].upper() + words[1:] + "."


def _element(shared: Dict[str, Any]) -> str:
    if shared.get("declared"):
        return f"{shared['label']} (declared {shared['declared']})"
    return shared["label"] + (f" ({shared['link']})" if shared.get("link") else "")


def _members_ceiling(x: Dict[str, Any]) -> str:
    """N x the slowest member (a stripe) or the slowest member (a mirror), with where its figure comes from."""
    n, slowest = len(x["members"]), next(m for m in x["members"] if m["device"] == x["slowest"])
    who = (f"{x['slowest']} ({_mib(x['slowest_mbps'])} MiB/s, the best of its QD1 sync-write sweep from "
           f"{_size_words(slowest['size'])})")
    if x["log"] == "mirror":
        return f"{_mib(x['members_ceiling_mbps'])} MiB/s, its slowest member {who}: a mirror writes every block to each"
    return f"{_mib(x['members_ceiling_mbps'])} MiB/s, {n} x its slowest member {who}"


def _shared_ceiling(x: Dict[str, Any]) -> str:
    """The ceiling of the element every member's path crosses, as what the log can take through it."""
    n, shared = len(x["members"]), x["shared"]
    words = f"{_mib(x['shared_ceiling_mbps'])} MiB/s, the ceiling of {_element(shared)}, on every member's path"
    if x["log"] == "mirror":
        words += f" (1/{n} of its {_mib(shared['ceiling'] / (1 << 20))} MiB/s: a mirror's blocks cross it {n} times)"
    return words


def _paths_said(x: Dict[str, Any]) -> str:
    """What the members' recorded paths add beside a ceiling that is not theirs."""
    if x["topology"] == "unknown":
        return "; the members' paths were not recorded, so a ceiling they share is unknown"
    shared = x["shared"]
    if shared is None:
        return "; no element of their paths is shared"
    if x["shared_ceiling_mbps"] is None:
        return f"; they share {_element(shared)}, whose ceiling its path does not give (--path-ceiling declares one)"
    if x["expected_by"] == "members":
        return f"; the {_mib(x['shared_ceiling_mbps'])} MiB/s of {_element(shared)}, which they share, is higher"
    return ""


def _pair_reached(x: Dict[str, Any]) -> str:
    within = f"{x['tolerance']:.0%}"
    if x["reached"] == "members":
        return f"it reached its members' ceiling (within {within})"
    if x["reached"] == "shared-path":
        return f"it reached the shared path's ceiling (within {within}), not its members'"
    if x["reached"] == "above":
        return (f"it went above that by more than {within}: the members' QD1 sweeps understate what they take "
                "from the ZIL's log writes in flight at once")
    if x["expected_by"] == "members":
        return f"it stopped short of it by more than {within}: its members' bandwidth did not hold it"
    return f"it stopped short of it by more than {within}: neither ceiling held it"


def _pair_ceiling(f: Finding) -> str:
    x = f.figures
    ceiling = _shared_ceiling(x) if x["expected_by"] == "shared-path" else _members_ceiling(x)
    below = (f", below {_members_ceiling(x)}" if x["expected_by"] == "shared-path" else "")
    return (f"The {SHAPE.get(x['log'], 'pair')}'s log vdevs took {_mib(x['measured_mbps'])} MiB/s at {x['threads']} "
            f"threads, {x['of_expected']:.0%} of what it can take: {ceiling}{below}{_paths_said(x)}; "
            f"{_pair_reached(x)}.")


WORDS: Dict[Kind, Callable[[Finding], str]] = {
    Kind.POOL_BOUND: _pool_bound, Kind.HOST_BOUND: _host_bound, Kind.RISING_ON_PLATEAU: _rising_on_plateau,
    Kind.LOG_BANDWIDTH: _log_bandwidth, Kind.LOG_BOUND: _log_bound, Kind.NOT_REACHED: _not_reached, Kind.HOST_LIMIT: _host_limit,
    Kind.UNATTRIBUTED: _unattributed, Kind.WRITE_THROTTLE: _write_throttle,
    Kind.FASTER_WITHOUT_SLOG: _faster_without, Kind.BUYS_NOTHING: _buys_nothing, Kind.SPEEDUP: _speedup,
    Kind.NO_COMPARISON: _no_comparison, Kind.SATURATED_AT: _saturated_at, Kind.KNEE: _knee,
    Kind.SLOG_UNUSED: _slog_unused, Kind.SPILL: _spill, Kind.LOG_WITHOUT_SLOG: _log_without_slog,
    Kind.STALLED: _stalled,
    Kind.CROSSES: _crosses, Kind.ALIKE: _alike, Kind.SLOWER: _slower, Kind.SLOWER_IS_BOTTLENECK: _slower_is_bottleneck,
    Kind.PAIR_VERSUS_SINGLE: _pair_versus_single, Kind.PAIR_CEILING: _pair_ceiling,
}


def word(f: Finding) -> str:
    """A finding in words. NOTHING_TO_JUDGE is both a limit ('unknown') and an effect: see limit/effect."""
    if f.kind is Kind.NOTHING_TO_JUDGE:
        return _nothing_sentence(f)
    return WORDS[f.kind](f)


def limit(findings: List[Finding]) -> str:
    """The bottleneck of a verdict's findings, in plain words."""
    f = one(findings, LIMITS)
    return _nothing(f) if f.kind is Kind.NOTHING_TO_JUDGE else word(f)


def effect(findings: List[Finding]) -> str:
    """The sentence to act on: what the SLOG bought sync=always."""
    return word(one(findings, EFFECTS))


def verdict_words(findings: List[Finding]) -> Dict[str, Any]:
    """``verdict``, ``bottleneck``, ``details`` and ``problems`` of a verdict's findings, as stored."""
    return {"verdict": effect(findings), "bottleneck": limit(findings),
            "details": [word(f) for f in of_kind(findings, DETAILS)],
            "problems": [word(f) for f in of_kind(findings, PROBLEMS)]}


# --- the SLOG's benefit over a transport (analysis.transport, `slogqual scenario cost`) ------------------

def _x(v: float) -> str:
    return f"{v:.1f}x" if v >= 1.05 or v < 0.95 else f"{v:.2f}x"


def benefit_over_transport(e: BenefitEntry, words: str) -> str:
    """The sentence of one ``slog_benefit`` entry of a protocol-cost comparison: its ``state`` with the
    speed-ups at peak, the cause it shows (``why``) and the thread steps that read otherwise."""
    if e.no_slog_configuration:
        return (f"The SLOG's benefit over {words} cannot be judged: no sync=always "
                "configuration with a SLOG was measured on both sides.")
    state, b_l, b_t = e.state, e.local_at_peak, e.transport_at_peak
    if state == BenefitEntry.UNKNOWN:
        missing = "locally" if b_l is None else f"over {words}"
        return (f"The SLOG's benefit over {words} cannot be judged: {e.noslog_config or 'sync=always without a SLOG'} "
                f"and {e.label} were not both measured {missing} at matching steps.")
    dev = e.candidate_transport
    (sl, nl), (st, nt) = e.peak_iops.local, e.peak_iops.transport
    what = (f"sync=always with the SLOG{' ' + dev if dev else ''} over sync=always without one, at peak: "
            f"{st:.0f} vs {nt:.0f} IOPS over {words}, {sl:.0f} vs {nl:.0f} locally")
    figures = f"{_x(b_t)} over {words} vs {_x(b_l)} locally ({what})"
    if state == "none locally":
        s = f"The SLOG bought nothing locally: {figures}; there is no benefit for {words} to keep."
    elif state == "survives":
        s = f"The SLOG's benefit survives {words}: {figures}."
    else:
        s = (f"The SLOG's benefit is gone over {words}: " if state == "gone" else
             f"The SLOG's benefit shrinks over {words}: ") + figures + _cause(e.why, words) + "."
    others = [f"at {p.threads} threads {_x(p.transport)} vs {_x(p.local)} ({p.state})"
              for p in e.at_threads if p.state != state]
    if others:
        s += " At matched threads: " + "; ".join(others) + "."
    return s


def _cause(why: Optional[BenefitCause], words: str) -> str:
    if not why:
        return ""
    if why.cause == BenefitCause.PROTOCOL:
        return (f": the protocol, not the log, is the limit — over {words} sync=always + SLOG reaches "
                f"{why.of_standard:.0%} of sync=standard, which writes no ZIL")
    return (f": over {words} the configuration with the SLOG keeps {why.slog_kept:.2f}x of its local IOPS, the one "
            f"without {why.noslog_kept:.2f}x (geometric means over the matched thread steps) — the protocol's cost "
            "per IO weighs most on the faster configuration")


# --- the path from the host, and what units share on it (analysis.shelf) ---------------------------------

def unit_path(path: UnitPath) -> str:
    """A unit's path from the host down, each element with its link and ceiling; or why it has none."""
    if path.error and not path.elements:
        return path.error
    steps = []
    for e in path.elements:
        ceiling = shelf.ceiling_bytes(e.link)
        link = f" ({e.link.text()}{', ' + gb_s(ceiling) if ceiling else ''})" if e.link else ""
        declared = f" (declared {e.declared})" if e.declared else ""
        steps.append(e.label() + link + declared)
    return " › ".join(steps) if steps else "no element on its path"


def ceiling_words(s: shelf.Shared) -> str:
    """What an element's link carries at most, or why slogqual cannot say."""
    if s.ceiling is not None:
        return gb_s(s.ceiling)
    if s.link:
        return f"not known ({s.link}: its rate or lanes were not reported)"
    return "none read (no link of its own)"


def shared_element(s: shelf.Shared, host: Optional[str] = None) -> str:
    """One sentence: the element, its ceiling, the units behind it."""
    where = f" on {host}" if host else ""
    units = ", ".join(s.units)
    if s.ceiling is not None:
        return (f"{s.label}{where} ({ceiling_text(s)}) carries {len(s.units)} units, {units}: together they get no more "
                f"than its ceiling of {gb_s(s.ceiling)}")
    return f"{s.label}{where} is on the path of {len(s.units)} units, {units}; its ceiling: {ceiling_words(s)}"


SHARED_LEAD = ("Elements on the path from the host that two units or more share (read from sysfs by "
               "slogqual.device.topology): the units behind one element together get no more than its link's "
               "ceiling (rate x lanes x encoding).")


def transport_words(t: transport.TransportName) -> str:
    """'iSCSI', 'NFSv3', 'locally', ... for sentences."""
    words = transport.TRANSPORT_WORDS.get(t.kind, t.kind)
    if t.kind == "nfs" and t.nfs_version:
        words += f"v{t.nfs_version}"
    return words


def pairing_words(p: transport.Pairing) -> str:
    """How two log candidates were paired ('the same path and class (nvdimm)')."""
    if p.rule == "device":
        how = f"the same device ({p.ident[0]} {p.ident[1]})"
    elif p.rule == "path":
        how = f"the same path and class ({p.device_class})" if p.device_class else "the same path (no class recorded)"
    elif p.rule == "class":
        how = f"the same class ({p.device_class})" + (", in order of position" if p.in_order else "")
    else:
        how = "position (no device class recorded on either side)"
    if p.models:
        how += f"; models differ: {p.models[0]} vs {p.models[1]}"
    return how


def unmatched_words(u: transport.Unmatched, words: str) -> str:
    """Why a step has no counterpart over the transport (``words``) or locally."""
    where = f"over {words}" if u.side == "local" else "locally"
    if u.reason == "candidate":
        return f"log candidate {u.candidate} has no counterpart {where}"
    if u.reason == "no-config":
        return f"no configuration named {u.config!r} {where}"
    if u.reason == "shape":
        (sync, log, logbias), other = u.shapes
        return (f"{u.config!r} is sync={sync} log={log} logbias={logbias} locally "
                f"but sync={other[0]} log={other[1]} logbias={other[2]} {where}")
    if u.reason == "differs":
        return "configuration differs locally (see the local side)"
    return f"not measured at {u.threads} threads {where}"


def difference_words(d: transport.Difference) -> str:
    """What differs between a local run and its run over a transport, besides the transport."""
    if d.kind == "scenario":
        return (f"scenario {d.key}: {transport.shown(d.key, d.local)} locally vs "
                f"{transport.shown(d.key, d.transport)} over the transport")
    if d.kind == "pool":
        return f"pool {d.key}: {d.local} vs {d.transport}"
    if d.kind == "data":
        return f"data vdevs: {', '.join(map(str, d.local)) or '-'} vs {', '.join(map(str, d.transport)) or '-'}"
    if d.kind == "openzfs":
        return f"OpenZFS module: {d.local or 'unrecorded'} vs {d.transport or 'unrecorded'}"
    if d.kind == "day":
        return f"run on {d.local} vs {d.transport}"
    if d.kind == "quick":
        return f"quick: {d.local} vs {d.transport}"
    if d.kind == "incomplete":
        return f"the {d.key} run is {d.local}: its missing steps show as unmatched"
    return f"{d.key}: {d.local} vs {d.transport}"  # host, kernel, cpu


def cost_worded(cost: transport.ProtocolCost) -> CostResult:
    """A protocol-cost comparison (analysis.transport.compare) as the ``slogqual.cost/1`` document: the
    transport, each pairing, each unmatched step, each difference and each SLOG-benefit entry in words."""
    words = transport_words(cost.transport_name)
    return CostResult(
        sources=cost.sources, transport=cost.transport, transport_words=words, load=cost.load,
        local_scenario=cost.local_scenario, transport_scenario=cost.transport_scenario,
        candidates=[CostCandidate(local=c.local, transport=c.transport, matched_by=pairing_words(c.pairing),
                                  local_label=c.local_label, transport_label=c.transport_label)
                    for c in cost.candidates],
        unmatched_candidates=cost.unmatched_candidates, steps=cost.steps,
        unmatched_steps=[UnmatchedCostStep(side=u.side, config=u.config, candidate=u.candidate, threads=u.threads,
                                           why=unmatched_words(u.why, words)) for u in cost.unmatched_steps],
        configs=cost.configs, differences=[difference_words(d) for d in cost.differences],
        slog_benefit=[e.worded(benefit_over_transport(e, words)) for e in cost.slog_benefit])
