"""The protocol's cost: one scenario load run locally (fio on the ZFS host) and over a real transport
(iSCSI, NFS), compared step by step, and whether the SLOG's benefit survives the protocol.

Pure functions over two ``results.scenario.ScenarioResult`` (validated when they were loaded): no
process, no file. Keys the document's validation leaves free-form are read defensively. Refusals are ValueError with one line; the CLI turns it into a
UsageError (exit 2).

Matching (docs/scenarios.md, "Protocol cost"):
- the load must be the same (LOAD_KEYS: kind, luns, bs, rw, write_sync), else refused; other
  differences (volblocksize, runtime, the data vdevs' classes, the host, ...) are listed, not refused;
- steps are matched by configuration name (with the same sync/log/logbias), log candidate and threads;
- log candidates are paired as a storage engineer compares them: the same device (serial or WWN) first,
  then the same path with the same device class, then the same class (in order of position within a
  class); two known, different classes are never paired (an NVDIMM over iSCSI says nothing about a SATA
  SSD locally). Only where neither side knows a device's class are the rest paired by position. How
  each pair was made is said.
Steps left without a counterpart are reported, never dropped silently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Optional, Tuple

from slogqual.analysis import scaling
from slogqual.results.cost import (BenefitAtThreads, BenefitCause, BenefitEntry, ConfigCost, CostLoad, CostSources,
                                   CostStep, SidePair, UnmatchedCandidates)
from slogqual.results.scenario import ScenarioResult, ScenarioStep, TransportSettings
from slogqual.units import size_label

# The same load: a difference in any of these makes the comparison meaningless, so it is refused.
LOAD_KEYS = ("kind", "luns", "bs", "rw", "write_sync")
# Differences that change the figures but not what is asked of the pool: listed beside the comparison.
NOTED_KEYS = ("volblocksize", "recordsize", "lun_size", "runtime_s", "ramp_s")

# Thresholds of the SLOG-benefit sentence (docs/scenarios.md, "Protocol cost"). B is the SLOG's speed-up
# of sync=always (sync=always + SLOG over sync=always without one), locally B_l and over the transport B_t;
# e is the counting error of such a ratio from its two steps' IO counts, COUNT_SIGMAS * sqrt(1/n_a + 1/n_b)
# (scaling.COUNT_SIGMAS, as analysis/scaling.py's saturation rule uses it). Each claim that tells the user
# the SLOG stops paying must hold even at the end of the counting interval that argues against it:
#   none locally: B_l <= 1 + SAME              the SLOG bought nothing locally (scaling.verdict's rule)
#   gone:         B_t * (1 + e_t) <= 1 + SAME  over the transport it buys nothing, even raised by its error
#   shrinks:      ln(B_t * (1 + e_t)) < KEEP * ln(B_l * (1 - e_l))
#                 less than KEEP of the local speed-up's doublings is left over the transport
#   survives:     otherwise
# Doublings (logarithms), not the factor itself: 7x over iSCSI after 10x locally keeps the SLOG's case
# (85 % of the doublings), 1.5x after 3.1x does not (36 %).
SAME = scaling.SAME
KEEP = 0.75

TRANSPORT_WORDS = {"iscsi": "iSCSI", "nfs": "NFS", "local": "locally"}


# --- the facts the comparison holds where the cost document keeps words (report/wording.cost_worded) ------

@dataclass(frozen=True)
class TransportName:
    """How a run's load reached the pool: the transport's kind and, over NFS, its version."""

    kind: str
    nfs_version: Any = None


@dataclass(frozen=True)
class Pairing:
    """How two log candidates were paired: the same ``device`` (``ident``: the serial or WWN both record),
    the same ``path`` (and ``device_class``), the same ``class`` (``in_order``: one of several, by position),
    or by ``position``; ``models`` where the two are not the same model."""

    rule: str
    ident: Optional[Tuple[str, str]] = None
    device_class: Optional[str] = None
    in_order: bool = False
    models: Optional[Tuple[str, str]] = None


@dataclass(frozen=True)
class Unmatched:
    """Why a step of ``side`` has no counterpart on the other: its log ``candidate`` (a device label) has
    none, no configuration of its name (``no-config``), one of another ``shape`` (sync, log, logbias: the
    local step's and the transport's), a configuration that ``differs`` (said on the local side), or not
    measured at its ``threads``."""

    reason: str
    side: str
    candidate: Optional[str] = None
    config: Optional[str] = None
    threads: Optional[int] = None
    shapes: Optional[Tuple[Tuple[Any, Any, Any], Tuple[Any, Any, Any]]] = None


@dataclass(frozen=True)
class Difference:
    """What differs between the two runs besides the transport: a ``scenario`` parameter, a ``pool``
    property, the ``data`` vdevs' classes, the ``host``/``kernel``/``cpu``, the ``openzfs`` module, the
    ``day``, ``quick``; or a run that is not complete (``incomplete``: ``key`` its side, ``local`` its status)."""

    kind: str
    key: Optional[str] = None
    local: Any = None
    transport: Any = None


@dataclass(frozen=True)
class CandidatePair:
    """A local log candidate and its counterpart over the transport, how they were paired, and each as said."""

    local: str
    transport: str
    pairing: Pairing
    local_label: str = ""
    transport_label: str = ""


@dataclass(frozen=True)
class UnmatchedStep:
    """A step of one ``side`` (local, transport) without a counterpart on the other, and why."""

    side: str
    config: str
    candidate: Optional[str]
    threads: int
    why: Unmatched


@dataclass
class ProtocolCost:
    """What ``compare`` finds: the figures as the ``slogqual.cost/1`` document types them (results.cost), and
    beside them the facts its words are made of (the transport's name, each pairing, why each step is
    unmatched, each difference): report/wording.cost_worded makes the document."""

    sources: CostSources
    transport: str
    transport_name: TransportName
    load: CostLoad
    local_scenario: str
    transport_scenario: str
    candidates: List[CandidatePair]
    unmatched_candidates: UnmatchedCandidates
    steps: List[CostStep]
    unmatched_steps: List[UnmatchedStep]
    configs: List[ConfigCost]
    differences: List[Difference]
    slog_benefit: List[BenefitEntry]


def _settings(result: ScenarioResult) -> Optional[TransportSettings]:
    """The scenario's ``transport`` where it is a table (the document's validation leaves it free-form)."""
    t = result.scenario.transport
    return t if isinstance(t, TransportSettings) else None


def transport_kind(result: ScenarioResult) -> str:
    """How the result's load reached the pool: the scenario's ``transport.kind``, else the result's
    ``transport.config.kind``; documents from before transports existed ran locally."""
    sc = _settings(result)
    if sc is not None and sc.kind:
        return str(sc.kind)
    recorded = result.transport.kind if result.transport is not None else None
    if recorded:
        return str(recorded)
    return "local"


def named_transport(result: ScenarioResult) -> TransportName:
    """The transport of a run, for its words ('iSCSI', 'NFSv3': report/wording.transport_words)."""
    kind = transport_kind(result)
    sc = _settings(result)
    version = sc.nfs_version if kind == "nfs" and sc is not None else None
    return TransportName(kind, version)


def _param(result: ScenarioResult, name: str) -> Any:
    """A scenario parameter of LOAD_KEYS or NOTED_KEYS (each a field of results.scenario.ScenarioParams)."""
    return getattr(result.scenario, name)


def _load_value(result: ScenarioResult, key: str) -> Any:
    v = _param(result, key)
    return "none" if key == "write_sync" and v is None else v


def shown(key: str, v: Any) -> str:
    """A load or scenario parameter's value as said: sizes as 4K, 16K, ..."""
    sized = key in ("bs", "lun_size", "volblocksize", "recordsize") and isinstance(v, int) and not isinstance(v, bool)
    return size_label(v) if sized and v > 0 else str(v)


def check_same_load(local: ScenarioResult, remote: ScenarioResult, local_name: str = "local",
                    transport_name: str = "transport") -> None:
    """ValueError (one line) unless ``local`` ran locally, ``remote`` over a transport, with one load."""
    lk, rk = transport_kind(local), transport_kind(remote)
    if lk != "local":
        raise ValueError(f"{local_name} ran over {TRANSPORT_WORDS.get(lk, lk)}, not locally: "
                         "give the local run first, the transport run second")
    if rk == "local":
        raise ValueError(f"{transport_name} ran locally (transport 'local'): there is no protocol to cost; "
                         "give a run over iscsi or nfs")
    diffs = [(k, shown(k, _load_value(local, k)), shown(k, _load_value(remote, k)))
             for k in LOAD_KEYS if _load_value(local, k) != _load_value(remote, k)]
    if diffs:
        raise ValueError(f"{local_name} and {transport_name} are not the same load "
                         f"({', '.join(f'{k} {a} vs {b}' for k, a, b in diffs)}): the protocol's cost is measured on "
                         "one load")
    for name, result in ((local_name, local), (transport_name, remote)):
        if not result.steps:
            raise ValueError(f"{name} has no measured steps")


def _classes(result: ScenarioResult, paths: List[str]) -> List[Optional[str]]:
    return [result.device(p).device_class for p in paths]


def device_label(result: ScenarioResult, path: Optional[str]) -> str:
    """'/dev/pmem0 (nvdimm)', with the model where known."""
    if not path:
        return "-"
    rec = result.device(path)
    bits = [b for b in (rec.device_class, rec.model) if b]
    return f"{path} ({', '.join(map(str, bits))})" if bits else path


def differences(local: ScenarioResult, remote: ScenarioResult) -> List[Difference]:
    """What differs between the two runs besides the transport, for the user to weigh."""
    out = []
    for k in NOTED_KEYS:
        a, b = _param(local, k), _param(remote, k)
        if a != b:
            out.append(Difference("scenario", k, a, b))
    lp, rp = local.pool, remote.pool
    for k, a, b in (("layout", lp.layout, rp.layout), ("ashift", lp.ashift, rp.ashift)):
        if a != b:
            out.append(Difference("pool", k, a, b))
    lc, rc = _classes(local, local.data_paths), _classes(remote, remote.data_paths)
    if sorted(map(str, lc)) != sorted(map(str, rc)):
        out.append(Difference("data", None, tuple(lc), tuple(rc)))
    le, re_ = local.environment, remote.environment
    for k, a, b in (("host", le.host, re_.host), ("kernel", le.kernel, re_.kernel), ("cpu", le.cpu, re_.cpu)):
        if a != b:
            out.append(Difference(k, k, a, b))
    zl, zr = le.openzfs_module, re_.openzfs_module
    if zl != zr:
        out.append(Difference("openzfs", None, zl, zr))
    days = [str(e.started or "")[:10] for e in (le, re_)]
    if all(days) and days[0] != days[1]:  # other days: other host load, other guest builds
        out.append(Difference("day", None, days[0], days[1]))
    if local.quick != remote.quick:
        out.append(Difference("quick", None, local.quick, remote.quick))
    for side, result in (("local", local), ("transport", remote)):
        if not result.complete:
            out.append(Difference("incomplete", side, result.status))
    return out


def pair_candidates(local: ScenarioResult, remote: ScenarioResult) -> Tuple[List[CandidatePair], List[str], List[str]]:
    """Pairs of log candidates (local path, transport path, how they were paired), and the paths of
    each side left without a counterpart. See the module's docstring for the order of the rules."""
    left, right = local.log_paths, remote.log_paths
    pairs: List[CandidatePair] = []

    def take(a: str, b: str, how: Pairing) -> None:
        left.remove(a)
        right.remove(b)
        ma, mb = local.device(a).model, remote.device(b).model
        if ma and mb and ma != mb:  # paired by path or class, yet not the same model: the user should know
            how = replace(how, models=(ma, mb))
        pairs.append(CandidatePair(a, b, how))

    def ident(result: ScenarioResult, p: str) -> List[Tuple[str, str]]:
        rec = result.device(p)
        return [(k, str(v)) for k, v in (("serial", rec.serial), ("wwn", rec.wwn)) if v]

    for a in list(left):
        for b in list(right):
            common = set(ident(local, a)) & set(ident(remote, b))
            if common:
                take(a, b, Pairing("device", ident=sorted(common)[0]))
                break
    for a in list(left):
        ca = local.device(a).device_class
        if a in right and remote.device(a).device_class == ca:
            take(a, a, Pairing("path", device_class=ca))
    for a in list(left):
        ca = local.device(a).device_class
        if not ca:
            continue
        same = [b for b in right if remote.device(b).device_class == ca]
        if same:
            mine = [x for x in left if local.device(x).device_class == ca]
            take(a, same[0], Pairing("class", device_class=ca, in_order=not (len(same) == 1 and len(mine) == 1)))
    unknown_l = [a for a in left if not local.device(a).device_class]
    unknown_r = [b for b in right if not remote.device(b).device_class]
    if unknown_l and len(unknown_l) == len(unknown_r):
        for a, b in zip(unknown_l, unknown_r):
            take(a, b, Pairing("position"))
    return pairs, left, right


def _candidate(result: ScenarioResult, step: ScenarioStep) -> Optional[str]:
    """A single-SLOG step's log device: its ``candidate``, or the pool's only log device in documents
    that named no candidate when there was one. A mirror/stripe step of a run with three or more candidates
    names its pair ('/dev/a + /dev/b', pool.variants); such pairs are not matched across runs (the two
    runs' pairs would have to be paired device by device), so they stay apart and are listed unmatched."""
    if step.log in ("mirror", "stripe"):
        return step.candidate or None
    if step.log != "single":
        return None
    if step.candidate:
        return step.candidate
    logs = result.log_paths
    return logs[0] if len(logs) == 1 else None


def counting_error(n_a: Optional[int], n_b: Optional[int]) -> float:
    """Relative error of a ratio of two steps' figures from their IO counts alone (Poisson), as
    analysis/scaling.py uses it; 0 when a count is missing."""
    if n_a and n_b and n_a > 0 and n_b > 0:
        return scaling.COUNT_SIGMAS * math.sqrt(1.0 / n_a + 1.0 / n_b)
    return 0.0


def _mean_lat(step: ScenarioStep) -> Optional[float]:
    v = step.lat_us.mean
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _shape(step: ScenarioStep) -> Tuple[Any, Any, Any]:
    return (step.sync, step.log, step.logbias)


def _config_shape(result: ScenarioResult, name: str) -> Optional[Tuple[Any, Any, Any]]:
    return next((_shape(s) for s in result.steps if s.config == name), None)


def _label(config: str, cand_l: Optional[str], cand_t: Optional[str]) -> str:
    if cand_l is None and cand_t is None:
        return config
    return f"{config} [{cand_t}]" if cand_l == cand_t else f"{config} [{cand_l} | {cand_t}]"


def _gm(values: List[float]) -> Optional[float]:
    vals = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def survival(b_local: Optional[float], e_local: float, b_transport: Optional[float], e_transport: float) -> str:
    """none locally | gone | shrinks | survives | unknown: the rule in this module's thresholds comment."""
    if b_local is None or b_transport is None:
        return "unknown"
    if b_local <= 1 + SAME:
        return "none locally"
    if b_transport * (1 + e_transport) <= 1 + SAME:
        return "gone"
    floor = b_local * (1 - e_local)
    if floor > 1 and math.log(b_transport * (1 + e_transport)) < KEEP * math.log(floor):
        return "shrinks"
    return "survives"


def compare(local: ScenarioResult, remote: ScenarioResult, local_name: str = "local",
            transport_name: str = "transport") -> ProtocolCost:
    """The protocol's cost per matched step and configuration, the unmatched steps, the differences
    besides the transport, and the SLOG's benefit over it: facts (their words, and the ``slogqual.cost/1``
    document: report/wording.cost_worded). ValueError when the runs cannot be compared."""
    check_same_load(local, remote, local_name, transport_name)
    pairs, lone_l, lone_r = pair_candidates(local, remote)
    to_remote = {p.local: p.transport for p in pairs}

    unmatched: List[UnmatchedStep] = []
    remote_steps: Dict[tuple, ScenarioStep] = {}
    for s in remote.steps:
        remote_steps[(s.config, _candidate(remote, s), s.threads)] = s
    used = set()
    matched: List[CostStep] = []
    for s in local.steps:
        cand_l = _candidate(local, s)
        cand_t = to_remote.get(cand_l) if cand_l is not None else None
        why = None
        if cand_l is not None and cand_t is None:
            why = Unmatched("candidate", "local", candidate=device_label(local, cand_l))
        elif _config_shape(remote, s.config) is None:
            why = Unmatched("no-config", "local", config=s.config)
        elif _config_shape(remote, s.config) != _shape(s):
            why = Unmatched("shape", "local", config=s.config, shapes=(_shape(s), _config_shape(remote, s.config)))
        key = (s.config, cand_t, s.threads)
        if why is None and key not in remote_steps:
            why = Unmatched("threads", "local", threads=s.threads)
        if why:
            unmatched.append(UnmatchedStep("local", s.config, cand_l, s.threads, why))
            continue
        used.add(key)
        r = remote_steps[key]
        ratio = r.iops / s.iops if s.iops > 0 else None
        ll, lt = _mean_lat(s), _mean_lat(r)
        matched.append(CostStep(
            config=s.config, label=_label(s.config, cand_l, cand_t), sync=s.sync, log=s.log, candidate_local=cand_l,
            candidate_transport=cand_t, threads=s.threads, local_iops=s.iops, transport_iops=r.iops,
            iops_ratio=ratio, ratio_error=counting_error(s.ios, r.ios), local_ios=s.ios, transport_ios=r.ios,
            local_lat_mean_us=ll, transport_lat_mean_us=lt,
            added_us_per_io=lt - ll if ll is not None and lt is not None else None))
    from_remote = {v: k for k, v in to_remote.items()}
    for key, r in remote_steps.items():
        if key in used:
            continue
        cand_t = key[1]
        if cand_t is not None and cand_t not in from_remote:
            why = Unmatched("candidate", "transport", candidate=device_label(remote, cand_t))
        else:
            why = (Unmatched("no-config", "transport", config=r.config) if _config_shape(local, r.config) is None
                   else Unmatched("differs", "transport") if _config_shape(local, r.config) != _shape(r)
                   else Unmatched("threads", "transport", threads=r.threads))
        unmatched.append(UnmatchedStep("transport", r.config, cand_t, r.threads, why))

    return ProtocolCost(
        sources=CostSources(local=local_name, transport=transport_name), transport=transport_kind(remote),
        transport_name=named_transport(remote), load=CostLoad(**{k: _load_value(local, k) for k in LOAD_KEYS}),
        local_scenario=local.name, transport_scenario=remote.name,
        candidates=[replace(p, local_label=device_label(local, p.local),
                            transport_label=device_label(remote, p.transport)) for p in pairs],
        unmatched_candidates=UnmatchedCandidates(local=[device_label(local, p) for p in lone_l],
                                                 transport=[device_label(remote, p) for p in lone_r]),
        steps=matched, unmatched_steps=unmatched, configs=_summaries(matched),
        differences=differences(local, remote), slog_benefit=_slog_benefit(local, remote, matched))


def _summaries(matched: List[CostStep]) -> List[ConfigCost]:
    """Per configuration (and candidate pair): the IOPS ratio's geometric mean and range over the
    matched thread steps, and the range of the latency added per IO."""
    by: Dict[str, List[CostStep]] = {}
    for m in matched:
        by.setdefault(m.label, []).append(m)
    out = []
    for label, ms in by.items():
        ratios = [m.iops_ratio for m in ms if m.iops_ratio is not None]
        added = [m.added_us_per_io for m in ms if m.added_us_per_io is not None]
        out.append(ConfigCost(label=label, config=ms[0].config, threads=[m.threads for m in ms],
                              iops_ratio_gm=_gm(ratios), iops_ratio_min=min(ratios) if ratios else None,
                              iops_ratio_max=max(ratios) if ratios else None,
                              added_us_min=min(added) if added else None, added_us_max=max(added) if added else None))
    return out


def _figures(m: CostStep, side: str) -> Tuple[float, Optional[int]]:
    """A matched step's IOPS and IO count on one side (local or transport)."""
    return (m.local_iops, m.local_ios) if side == "local" else (m.transport_iops, m.transport_ios)


def _side_benefit(slog: List[CostStep], none: List[CostStep],
                  side: str) -> Tuple[Optional[float], float, Optional[CostStep], Optional[CostStep]]:
    """B and its counting error at peak: the SLOG curve's peak over the no-SLOG curve's peak."""
    if not slog or not none:
        return None, 0.0, None, None
    ps = max(slog, key=lambda s: _figures(s, side)[0])
    pn = max(none, key=lambda s: _figures(s, side)[0])
    (iops_s, ios_s), (iops_n, ios_n) = _figures(ps, side), _figures(pn, side)
    if iops_n <= 0:
        return None, 0.0, ps, pn
    return iops_s / iops_n, counting_error(ios_s, ios_n), ps, pn


def _threads(m: Optional[CostStep]) -> Optional[int]:
    return m.threads if m is not None else None


def _slog_benefit(local: ScenarioResult, remote: ScenarioResult, matched: List[CostStep]) -> List[BenefitEntry]:
    """Per paired log candidate: the SLOG's speed-up of sync=always locally and over the transport, at
    peak and at each thread count all four steps share (its sentence: report/wording.benefit_over_transport).
    Only matched steps count, so both sides are judged on the same thread steps."""
    noslog = [m for m in matched if m.sync == "always" and m.log == "none"]
    noslog_configs = sorted({m.config for m in noslog})
    if noslog_configs:
        noslog = [m for m in noslog if m.config == noslog_configs[0]]
    slog_keys = []
    for m in matched:
        if m.sync == "always" and m.log != "none" and (m.config, m.candidate_local) not in slog_keys:
            slog_keys.append((m.config, m.candidate_local))
    # sync=standard is the ZIL-free ceiling only for a load whose own writes are not synchronous (as in
    # scaling.verdict): an O_DSYNC/NFS-stable load commits through the ZIL under sync=standard too.
    load_is_sync = _load_value(remote, "write_sync") != "none"
    standard = [] if load_is_sync else [m for m in matched if m.sync == "standard" and m.log == "none"]
    out = []
    if not slog_keys:
        return [BenefitEntry.nothing_to_judge()]
    for config, cand in slog_keys:
        slog = [m for m in matched if m.config == config and m.candidate_local == cand]
        b_l, e_l, psl, pnl = _side_benefit(slog, noslog, "local")
        b_t, e_t, pst, pnt = _side_benefit(slog, noslog, "transport")
        state = survival(b_l, e_l, b_t, e_t)
        per_threads = []
        nos = {m.threads: m for m in noslog}
        for m in sorted(slog, key=lambda m: m.threads):
            n = nos.get(m.threads)
            if n is None or n.local_iops <= 0 or n.transport_iops <= 0:
                continue
            bl, bt = m.local_iops / n.local_iops, m.transport_iops / n.transport_iops
            el, et = counting_error(m.local_ios, n.local_ios), counting_error(m.transport_ios, n.transport_ios)
            per_threads.append(BenefitAtThreads(threads=m.threads, local=bl, transport=bt, local_error=el,
                                                transport_error=et, state=survival(bl, el, bt, et)))
        judged = state != BenefitEntry.UNKNOWN
        out.append(BenefitEntry.judged(
            config=config, candidate_local=cand, candidate_transport=slog[0].candidate_transport,
            label=slog[0].label, noslog_config=noslog_configs[0] if noslog_configs else None,
            local_at_peak=b_l, local_error=e_l, transport_at_peak=b_t, transport_error=e_t,
            at_threads=per_threads, state=state,
            peak_threads=SidePair(local=[_threads(psl), _threads(pnl)], transport=[_threads(pst), _threads(pnt)]),
            peak_iops=SidePair(local=[psl.local_iops, pnl.local_iops],
                               transport=[pst.transport_iops, pnt.transport_iops]) if judged else None,
            why=_why(slog, noslog, standard, pst) if state in ("gone", "shrinks") else None))
    return out


def _why(slog: List[CostStep], noslog: List[CostStep], standard: List[CostStep],
         pst: CostStep) -> Optional[BenefitCause]:
    """What the comparison shows of the cause: the protocol's ceiling where sync=always + SLOG over the
    transport reaches sync=standard over it (which writes no ZIL); else how much of its local throughput
    each configuration keeps (geometric means over the matched thread steps); None where neither is known."""
    std_t = max((m.transport_iops for m in standard), default=None)
    if std_t and pst.transport_iops >= (1 - SAME) * std_t:
        return BenefitCause.protocol(pst.transport_iops / std_t)
    gs, gn = _gm([m.iops_ratio for m in slog if m.iops_ratio]), _gm([m.iops_ratio for m in noslog if m.iops_ratio])
    if gs is not None and gn is not None:
        return BenefitCause.kept(gs, gn)
    return None
