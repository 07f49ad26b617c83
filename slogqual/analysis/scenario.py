"""The analysis of a pool scenario result: knees, what the SLOG bought, the verdict — a pure function
of the measured steps and the scenario's parameters, both kept in the document.

Everything here reads a ``results.scenario.ScenarioResult``, never the document's dict. Readers (the
table, the plot, qualify's criteria, the store's summary) call ``current(result)``, which
recomputes it with today's rules; a stored ``analysis`` is what the run printed, labelled with the
``ANALYSIS_VERSION`` that produced it.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from slogqual.analysis import pair_ceiling
from slogqual.analysis import pairs as _pairs
from slogqual.analysis import scaling
from slogqual.analysis import special as _special
from slogqual.analysis.findings import PROBLEMS, Finding
from slogqual.results.scenario import ScenarioResult, ScenarioStep

# Bump when a rule changes what a verdict, benefit or knee says for the same measurements.
# 1: the analysis written before this field existed (documents without "version"); 2: knee remarks in
# "details", per-candidate verdicts, log-sweep evidence; 3: "pool/host-bound" (never the log device) where
# sync=standard stopped scaling at or before the SLOG curve's peak (scaling.saturation, IO counts); 4: every
# SLOG curve is judged against the no-log curves only (a mirror/stripe curve was taken as a single
# candidate's SLOG before), mirrored/striped pairs get their own entries in "pairs"; 5: a SLOG step whose ZIL
# sent more than 1 % of its bytes to the main pool (a log too small for the load) is a problem; 6: log
# candidates whose curves cross (each more than 10 % ahead at some step) are said to cross, not "alike", and
# only one sync=always configuration's candidates are compared (never one device's two configurations); 7:
# the facts beside the words — ``findings`` (kind, figures, steps: analysis.findings) at the top level and per
# candidate and pair; every sentence is the same as version 6 wrote for the same measurements; 8: each
# mirrored/striped pair whose members' sweeps reach 128 KiB gets a ``pair-ceiling`` finding and its words in
# ``ceiling`` (analysis.pair_ceiling: N x the slowest member for a stripe, the slowest for a mirror, or a
# path element every member shares, and which one the log vdevs reached); every other key and sentence is
# version 7's for the same measurements. Results recorded before it lack the members' paths (pool.devices'
# ``topology``): their pairs' shared element is "unknown", and their stored analyses keep what they said.
# 9 (issue #37): the host named (``host-limit``) where a SLOG curve's peak ran the host's CPU >= 90 % busy
# or its log vdev below half its own sweep at that size, rather than the log device or "not reached"; an
# O_DSYNC load's sync=standard + SLOG curve is judged against sync=standard without a log (it was "nothing
# to judge"), and the headline verdict is the fastest sync=always candidate's.
# (Issue #39: ``special`` — the special-vdev curves, analysis.special — is added only where a result has them,
# which no earlier result can; every key and sentence of the others is version 9's, so the version stands.)
# 10 (issue #37): the log device is named where a SLOG curve stops scaling only on evidence — its sweep, or by
# elimination (sync=standard, no ZIL, still scaling past that step and the host's CPU below 75 % busy; said so in
# the words) — else ``unattributed``: "not told apart", with what was missing. Version 9 named the log device
# of a run with neither (an NVDIMM NFS-like run at 84-88 % CPU, advisor draw 5203).
# 11 (issue #37): a ``write-throttle`` detail where a curve's steps recorded transactions the write throttle sent
# to wait (the step's ``write_throttle``, the dmu_tx kstat); every other key and sentence is version 10's (results
# recorded before it have no such counts).
# 12: a ``stalled`` problem where a step's slowest write outlasted the kernel's I/O timeout (30 s: a device stopped
# answering and was aborted or reset; the step measured that, not the pool); every other key and sentence is version
# 11's.
ANALYSIS_VERSION = 12


def metric_for(bs: int) -> str:
    """Small writes are judged in IOPS, large ones in bandwidth."""
    return "iops" if bs <= 16 * 1024 else "mbps"


def sweep_figures(entry: Optional[Dict[str, Any]]) -> List[scaling.SweepFigure]:
    """A log candidate's sweep summary (the document's ``log_sweeps`` entry) as figures."""
    return [scaling.SweepFigure(size=int(p["size"]), mbps=float(p["mbps"]), lat_mean_us=float(p["lat_mean_us"]))
            for p in (entry or {}).get("points") or [] if p.get("mbps") is not None]


def curves(result: ScenarioResult) -> List[scaling.Curve]:
    by: Dict[tuple, scaling.Curve] = {}
    for s in result.steps:
        key = (s.config, s.candidate)
        if key not in by:
            by[key] = scaling.Curve(s.config, s.sync, s.log, candidate=s.candidate)
        throttle = s.write_throttle
        by[key].steps.append(scaling.Step(threads=s.threads, iops=s.iops, mbps=s.mbps, lat_p99_us=s.p99_us,
                                          slog_bytes=s.slog_bytes, normal_bytes=s.normal_bytes,
                                          log_write_bytes_s=s.log_write_bytes_s, log_write_ops_s=s.log_write_ops_s,
                                          ios=s.ios, cpu_busy=s.cpu_busy,
                                          throttle_waited=throttle.waited if throttle else None,
                                          throttle_assigned=throttle.assigned if throttle else None,
                                          longest_write_us=s.lat_us.max))
    return list(by.values())


def pair_steps(result: ScenarioResult) -> Dict[tuple, List[ScenarioStep]]:
    """(config, candidate) of each mirror/stripe curve -> its steps."""
    by: Dict[tuple, List[ScenarioStep]] = {}
    for s in result.steps:
        if s.log in _pairs.PAIR_LOGS:
            by.setdefault((s.config, s.candidate), []).append(s)
    return by


def pair_devices(result: ScenarioResult) -> Dict[tuple, List[str]]:
    """(config, candidate) of each mirror/stripe curve -> its log devices (analysis.pairs.devices_of)."""
    return {k: _pairs.devices_of(v, result.log_paths) for k, v in pair_steps(result).items()}


def pair_ceilings(result: ScenarioResult) -> Dict[tuple, Finding]:
    """(config, candidate) of each mirror/stripe curve -> what it could reach and what it reached
    (analysis.pair_ceiling), where its members' sweeps and its log vdevs' writes say."""
    out = {}
    for key, steps in pair_steps(result).items():
        members = _pairs.devices_of(steps, result.log_paths)
        found = pair_ceiling.finding(
            steps[0].log, key[0], key[1], steps, members,
            {m: pair_ceiling.member_bandwidth(result.log_sweeps.get(m)) for m in members},
            {m: result.topology(m) for m in members})
        if found is not None:
            out[key] = found
    return out


def step_label(result: ScenarioResult, step: ScenarioStep) -> str:
    """A step's curve as tables and plots name it: the configuration; with several log candidates, the
    single log's device; for a mirror or stripe, the layout and both devices ('[stripe: /dev/a + /dev/b]')."""
    if step.log in _pairs.PAIR_LOGS:
        devs = _pairs.devices_of([step], result.log_paths)
        what = " + ".join(devs) or step.candidate or ""
        return f"{step.config} [{step.log}" + (f": {what}]" if what else "]")
    several = len(result.log_paths) > 1
    return step.config + (f" [{step.candidate}]" if several and step.candidate else "")


def _device_name(result: ScenarioResult, path: str) -> str:
    model = result.device(path).model
    return f"{path} ({model})" if model else path


def _evidence_dict(ev: Optional[scaling.LogEvidence]) -> Optional[Dict[str, Any]]:
    if ev is None:
        return None
    return {"sweep_size": ev.sweep.size, "sweep_mbps": ev.sweep.mbps, "sweep_lat_mean_us": ev.sweep.lat_mean_us,
            "observed_log_mbps": ev.observed_mbps, "observed_log_write_size": ev.observed_size}


def compared_candidates(singles: List[scaling.Curve]) -> List[scaling.Curve]:
    """The curves the slower-candidate sentence compares: those of the first sync=always single-log
    configuration measured with two or more candidates. A candidate is never compared with itself (a
    scenario with `sync=standard + SLOG` beside `sync=always + SLOG` has two curves of one device)."""
    by_config: Dict[str, List[scaling.Curve]] = {}
    for c in singles:
        if c.sync == "always":
            by_config.setdefault(c.config, []).append(c)
    return next((g for g in by_config.values() if len({c.candidate for c in g}) >= 2), [])


def analyse(result: ScenarioResult) -> Dict[str, Any]:
    """Knees, the SLOG's benefit and the verdict; with several log candidates, one verdict each and
    the slower candidate named; each mirrored or striped log pair its own verdict and its ratio to the
    best single log (``pairs``). Every SLOG curve is judged against the no-log curves alone. Top-level
    figures are those of the best single candidate (of the best pair when the result has no single log).
    Where the result holds a candidate's own sweep (``log_sweeps``), its verdict weighs the log vdev's
    bandwidth against it. Reads only ``scenario``, ``pool``, ``steps`` and ``log_sweeps``."""
    bs = result.bs
    load_is_sync = result.write_sync != "none"
    metric = metric_for(bs)
    cs = curves(result)
    # what a SLOG curve is judged against: never another SLOG, nor the ZIL on a special vdev (analysis.special)
    common = [c for c in cs if not c.uses_slog and c.log != _special.SPECIAL]
    singles = [c for c in cs if c.log == "single"]
    pair_curves = [c for c in cs if _pairs.is_pair(c)]
    names = {c.candidate: _device_name(result, c.candidate) for c in singles if c.candidate}
    sweeps = result.log_sweeps

    def judge(c: scaling.Curve, ev: Optional[scaling.LogEvidence] = None) -> scaling.Verdict:
        if c.sync == "standard" and load_is_sync:
            # an O_DSYNC load commits through the ZIL under sync=standard too: its log curve is judged against
            # sync=standard without a log, as sync=always + SLOG is against sync=always without one
            return scaling.verdict(common + [c], metric, load_bs=bs, load_is_sync=True, log=ev, sync="standard")
        return scaling.verdict(common + [c], metric, load_bs=bs, load_is_sync=load_is_sync, log=ev)

    def single_evidence(c: scaling.Curve) -> Optional[scaling.LogEvidence]:
        return scaling.log_evidence(c, metric, sweep_figures(sweeps.get(c.candidate)), bs)

    per = []
    for c in singles:
        ev = single_evidence(c)
        v = judge(c, ev)
        pk = scaling.peak(c.steps, metric)
        per.append({"device": c.candidate, "name": names.get(c.candidate, c.candidate), "config": c.config,
                    "sync": c.sync, "peak": pk.value(metric) if pk else None, "slog_benefit_at_peak": v.benefit_at_peak,
                    "slog_of_standard_at_peak": v.of_standard_at_peak, "log_sweep": _evidence_dict(ev),
                    "findings": verdict_facts(v)})
    per.sort(key=lambda d: -(d["peak"] or 0))
    pair_entries = _pairs.entries(pair_curves, pair_devices(result), per, judge, lambda d: _device_name(result, d),
                                  metric, pair_ceilings(result))
    # the headline is the fastest sync=always candidate's (a sync=standard + SLOG curve of an O_DSYNC load is
    # judged beside it, never in its place)
    headline = next((d for d in per if d["sync"] == "always"), per[0] if per else None)
    best = [c for c in singles if headline and (c.candidate, c.config) == (headline["device"], headline["config"])] \
        or singles[:1]
    if best:
        v = judge(best[0], single_evidence(best[0]))
    elif pair_curves:  # no single log measured: the best pair speaks for the result
        top = pair_entries[0]
        v = judge(next(c for c in pair_curves if (c.config, c.candidate) == (top["config"], top["candidate"])))
    else:
        v = scaling.verdict(common, metric, load_bs=bs, load_is_sync=load_is_sync)
    knees = {}
    for c in cs:
        k = scaling.knee(c.steps, metric)
        if k:
            named = c.candidate and (len(singles) > 1 or c.log != "single")
            knees[c.config + (f" [{c.candidate}]" if named else "")] = {
                "threads": k.threads, "value": k.value, "saturated": k.saturated}
    problems = [p for c in cs for p in scaling.usage_findings(c)]
    out = {"version": ANALYSIS_VERSION, "metric": metric, "slog_benefit_at_peak": v.benefit_at_peak,
           "slog_of_standard_at_peak": v.of_standard_at_peak, "knees": knees, "candidates": per, "pairs": pair_entries}
    base = scaling.roles(common).get("baseline")  # where the ZIL-free run stopped scaling, if it did
    flat = scaling.saturation(base.steps, metric) if base and base.steps and not load_is_sync else None
    slower = scaling.slower_candidate(compared_candidates(singles), names, metric, flat=flat)
    out["findings"] = verdict_facts(v) + [p.to_dict() for p in problems] + ([slower.to_dict()] if slower else [])
    special = _special.entries(result, metric)
    if special:
        out["special"] = special
    return out


def verdict_facts(v: scaling.Verdict) -> List[Dict[str, Any]]:
    """A verdict's effect, limit and details as stored (its problems are the result's, stored once)."""
    return [f.to_dict() for f in v.findings if f.kind not in PROBLEMS]


def findings(analysis: Optional[Dict[str, Any]]) -> List[Finding]:
    """The findings of an analysis (``current`` or a stored one of version 7 on; a pair's ``pair-ceiling``
    from version 8); [] before they were kept."""
    return [Finding.from_dict(f) for f in (analysis or {}).get("findings") or []]


def current(result: ScenarioResult) -> Optional[Dict[str, Any]]:
    """The analysis readers show: recomputed from the measurements with today's rules for a complete
    result; None for a result without steps; for an unfinished one, its steps so far."""
    if not result.steps:
        return None
    return analyse(result)


def stored_version(result: ScenarioResult) -> Optional[int]:
    """Which analysis version wrote the document's stored analysis (1 when it predates the field)."""
    a = result.analysis
    if not a:
        return None
    return int(a.get("version", 1))
