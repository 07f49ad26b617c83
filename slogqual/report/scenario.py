"""A pool scenario result (``slogqual.scenario/1``) in words and rows: the table and verdict lines
``slogqual scenario run`` prints, and the report's section — every configuration's steps (IOPS, latency,
IO count), the verdict recomputed from them by today's rules (analysis/scenario.current, worded here and by
report/wording.py) and the ZIL's evidence per step: the kstat deltas and where the log writes went.

analysis.scenario returns facts (findings with their figures); ``worded`` makes every sentence a reader sees
of them — the verdict, the bottleneck, the details, the problems, the slower candidate, each pair's
comparison with the best single log and its ceiling. The stored analysis keeps the sentences beside the
facts for readers of older documents; they are made here, at the edge, from the same findings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from slogqual.analysis import scenario as scenario_analysis
from slogqual.analysis.findings import DETAILS, PROBLEMS, Finding, Kind, of_kind
from slogqual.report import wording
from slogqual.report.document import Verdict, scalar
from slogqual.report.markup import items, kv, md_kv, md_table, md_verdicts, table, verdict_boxes, esc
from slogqual.results.scenario import ScenarioResult, ScenarioStep
from slogqual.units import size_label


def known(n: Any) -> Any:
    """A ZIL counter: null in the document (the kstat lacked the row) is '?', not blank."""
    return "?" if n is None else n


# --- what `slogqual scenario run` prints -----------------------------------------------------------------

def headline(result: ScenarioResult) -> str:
    return (f"{result.name} ({'quick' if result.quick else 'full'}), pool {result.layout} "
            f"of {len(result.data_paths)}, log {', '.join(result.log_paths) or '-'} [{result.status}]")


CLI_HEADERS = ["configuration", "threads", "IOPS", "MiB/s", "p99 µs", "ZIL→log B", "ZIL→pool B"]


def cli_rows(result: ScenarioResult) -> List[List[Any]]:
    return [[scenario_analysis.step_label(result, s), s.threads, f"{s.iops:.0f}", f"{s.mbps:.1f}",
             f"{s.p99_us or 0:.0f}", known(s.slog_bytes), known(s.normal_bytes)] for s in result.steps]


def candidate_lines(a: Dict[str, Any]) -> List[str]:
    """Each log candidate's verdict (when several) and its own sweep beside what its log vdev took."""
    out = []
    for c in a.get("candidates") or []:
        if len(a["candidates"]) > 1:
            out.append(f"log candidate {c['name']}: {c['verdict']}")
        ev = c.get("log_sweep")
        if ev:
            seen = (f"; at the peak its log vdev took {ev['observed_log_mbps']:.1f} MiB/s"
                    + (f" in {ev['observed_log_write_size'] / 1024:.0f} KiB writes" if ev.get("observed_log_write_size")
                       else "") if ev.get("observed_log_mbps") is not None else "")
            out.append(f"log candidate {c['name']}: QD1 sweep at {size_label(ev['sweep_size'])}: "
                       f"{ev['sweep_mbps']:.1f} MiB/s, {ev['sweep_lat_mean_us']:.0f} µs mean{seen}")
    return out


def pair_lines(a: Dict[str, Any]) -> List[str]:
    """The slower candidate, and each mirrored or striped pair's verdict, ratio and ceiling."""
    out = [a["slower_log"]] if a.get("slower_log") else []
    for p in a.get("pairs") or []:
        out.append(f"{p['log']} log pair {p['name']} ({p['config']}): {p['verdict']}")
        out += [f"{p['log']} log pair {p['name']}: {p[said]}" for said in ("versus_single", "ceiling") if p.get(said)]
    return out


def special_lines(a: Dict[str, Any]) -> List[str]:
    """Each special-vdev configuration's ZIL: where its blocks went, and against the SLOG and no log."""
    return [f"ZIL on the special vdev {e['device']} ({e['config']}): {line}" for e in a.get("special") or []
            for line in e.get("said") or []]


def verdict_lines(result: ScenarioResult) -> List[str]:
    """What the run printed after its table: the verdict by today's rules (a complete result only)."""
    a = current(result)
    if not (a and result.complete):
        return []
    return (["", f"verdict: {a['verdict']}", f"bottleneck: {a['bottleneck']}"] + candidate_lines(a) + pair_lines(a)
            + special_lines(a))


# --- the report's section --------------------------------------------------------------------------------

STEP_HEADERS = ["configuration", "threads", "IOs", "IOPS", "MiB/s", "mean µs", "p99 µs", "ZIL commits",
                "ZIL→log B", "ZIL→pool B", "to the log", "log vdev MiB/s"]


def _n(v: Optional[float], digits: int = 0) -> str:
    return "–" if v is None else f"{v:,.{digits}f}"


def _count(n: Optional[int]) -> str:
    return "?" if n is None else f"{n:,}"


def _share(s: ScenarioStep) -> str:
    """The ZIL's bytes that went to the log vdevs, of all it wrote over the step."""
    if s.slog_bytes is None or s.normal_bytes is None:
        return "?"
    total = s.slog_bytes + s.normal_bytes
    return f"{s.slog_bytes / total:.1%}" if total else "none written"


def step_row(result: ScenarioResult, s: ScenarioStep) -> List[str]:
    log_mbps = None if s.log_write_bytes_s is None else s.log_write_bytes_s / (1 << 20)
    return [scenario_analysis.step_label(result, s), str(s.threads), f"{s.ios:,}", _n(s.iops), _n(s.mbps, 2),
            _n(s.lat_us.mean, 1), _n(s.p99_us, 1), _count(s.zil.commit_count), _count(s.slog_bytes),
            _count(s.normal_bytes), _share(s), _n(log_mbps, 2)]


@dataclass
class ScenarioSection:
    path: str
    result: ScenarioResult
    name: str
    metric: str
    verdicts: List[Verdict]
    said: List[str]  # candidates' and pairs' verdicts, the evidence of their own sweeps
    details: List[str]
    problems: List[str]
    rule_note: str
    step_rows: List[List[str]]
    load: List[Tuple[str, str]]
    pool: List[Tuple[str, str]]
    environment: List[Tuple[str, str]]
    warnings: List[str] = field(default_factory=list)

    step_headers: List[str] = field(default_factory=lambda: list(STEP_HEADERS))


ZIL_NOTE = ("ZIL commits, ZIL→log B and ZIL→pool B are the ZIL kstats' deltas over each step (zil_commit_count, "
            "zil_itx_metaslab_slog_bytes, zil_itx_metaslab_normal_bytes); 'to the log' is the share of the ZIL's "
            "bytes the log vdevs took, 'log vdev MiB/s' what zpool iostat saw them write. '?': the kstat lacked "
            "the row. IOs: the writes fio completed in the step, behind its IOPS and latency.")


def _device(result: ScenarioResult, path: str) -> str:
    model = result.device(path).model
    return f"{path} ({model})" if model else path


def scenario_section(result: ScenarioResult, path: str) -> ScenarioSection:
    a = current(result)
    metric = (a or {}).get("metric") or scenario_analysis.metric_for(result.bs)
    if a and result.complete:
        verdicts = [Verdict("Scenario verdict", a["verdict"], "neutral"), Verdict("Bottleneck", a["bottleneck"], "neutral")]
        said, details, problems = candidate_lines(a) + pair_lines(a) + special_lines(a), list(a.get("details") or []), list(a.get("problems") or [])
    else:
        why = f"the run is {result.status}" + (f": {result.error}" if result.error else "")
        verdicts = [Verdict("Scenario verdict", f"none: {why} (its steps so far are below)", "neutral")]
        said, details, problems = [], [], []
    stored = scenario_analysis.stored_version(result)
    rule_note = (f"The verdict is recomputed from the measured steps by today's rules (scenario analysis version "
                 f"{scenario_analysis.ANALYSIS_VERSION}" + (f"; the document stored version {stored}'s" if stored and
                                                              stored != scenario_analysis.ANALYSIS_VERSION else "")
                 + ").")
    sc = result.scenario
    load = [("load", f"{size_label(result.bs)} {scalar(sc.rw)}, {result.luns} "
                     f"{'zvol LUNs' if sc.kind == 'zvol' else 'files'}, write_sync {result.write_sync}"),
            ("block size", size_label(sc.volblocksize) if sc.volblocksize else
             (size_label(sc.recordsize) if sc.recordsize else "–")),
            ("threads per LUN", scalar(sc.threads)), ("runtime per step (s)", scalar(sc.runtime_s)),
            ("run", "quick" if result.quick else "full"), ("scenario", result.source)]
    pool = [("layout", f"{result.layout} of {len(result.data_paths)}: {', '.join(result.data_paths)}"),
            ("log candidates", ", ".join(_device(result, p) for p in result.log_paths) or "none")]
    if result.pool.ashift is not None:
        pool.append(("ashift", str(result.pool.ashift)))
    if result.pool.zfs_api:
        pool.append(("zvols/datasets made with", result.pool.zfs_api))
    env = result.environment
    environment = [(k, scalar(v)) for k, v in (("host", env.host), ("os", env.os), ("kernel", env.kernel),
                                               ("cpu", env.cpu), ("cpus", env.cpus), ("fio", env.fio_version),
                                               ("OpenZFS module", env.openzfs_module), ("slogqual version", env.slogqual_version),
                                               ("started", env.started)) if v not in (None, "")]
    return ScenarioSection(path=path, result=result, name=f"scenario {result.name}" + (" (quick)" if result.quick else ""),
                           metric=metric, verdicts=verdicts, said=said, details=details, problems=problems,
                           rule_note=rule_note, step_rows=[step_row(result, s) for s in result.steps], load=load,
                           pool=pool, environment=environment, warnings=list(result.warnings))


SUMMARY_HEADERS = ["scenario", "pool", "log candidates", "steps", "status", "verdict"]


def summary_row(s: ScenarioSection) -> List[str]:
    r = s.result
    return [s.name, f"{r.layout} of {len(r.data_paths)}", ", ".join(r.log_paths) or "none", str(len(r.steps)),
            r.status, s.verdicts[0].text]


def _meta(s: ScenarioSection) -> str:
    return f"Result file {s.path} · {s.result.schema} · status {s.result.status}"


def section_html(s: ScenarioSection, n: int, charts: str) -> str:
    out = [f'<section class="scenario" id="scenario-{n}"><h2>{n}. {esc(s.name)}</h2>',
           f'<p class="meta">{esc(_meta(s))}</p>', verdict_boxes(s.verdicts)]
    if s.said:
        out.append(items(s.said))
    if s.details:
        out.append("<h3>Details</h3>" + items(s.details))
    if s.problems or s.warnings:
        out.append("<h3>Problems and warnings</h3>" + items(s.problems + s.warnings, "warnings"))
    out.append(f'<p class="meta">{esc(s.rule_note)}</p>')
    out.append(charts)
    out.append("<h3>Steps: every configuration's curve, with the ZIL's evidence</h3>"
               + table(s.step_headers, s.step_rows, numeric_from=1))
    out.append(f'<p class="meta">{esc(ZIL_NOTE)}</p>')
    out += ["<h3>Load</h3>" + kv(s.load), "<h3>Pool</h3>" + kv(s.pool), "<h3>Environment</h3>" + kv(s.environment),
            "</section>"]
    return "\n".join(out)


def section_md(s: ScenarioSection, n: int, charts: List[str]) -> List[str]:
    out = [f"## {n}. {s.name}", "", _meta(s), ""] + md_verdicts(s.verdicts) + [""]
    out += [f"- {x}" for x in s.said] + ([""] if s.said else [])
    if s.details:
        out += ["### Details", ""] + [f"- {x}" for x in s.details] + [""]
    if s.problems or s.warnings:
        out += ["### Problems and warnings", ""] + [f"- **{x}**" for x in s.problems + s.warnings] + [""]
    out += [f"_{s.rule_note}_", ""] + charts
    out += ["### Steps: every configuration's curve, with the ZIL's evidence", "",
            md_table(s.step_headers, s.step_rows, numeric_from=1), "", ZIL_NOTE, "",
            "### Load", "", md_kv(s.load), "", "### Pool", "", md_kv(s.pool), "",
            "### Environment", "", md_kv(s.environment), ""]
    return out


# --- the words of the analysis (stored beside its facts, and what every reader shows) -------------------------

# the finding that compares the log candidates (scaling.slower_candidate): one of these kinds, at most one
_SLOWER = (Kind.CROSSES, Kind.ALIKE, Kind.SLOWER, Kind.SLOWER_IS_BOTTLENECK)


def _insert_after(d: Dict[str, Any], key: str, words: Dict[str, Any]) -> Dict[str, Any]:
    """``d`` with ``words`` placed right after ``key`` (where the stored documents have always had them)."""
    out: Dict[str, Any] = {}
    for k, v in d.items():
        out[k] = v
        if k == key:
            out.update(words)
    if key not in d:
        out.update(words)
    return out


def _facts(entry: Dict[str, Any]) -> List[Finding]:
    return [Finding.from_dict(f) for f in entry.get("findings") or []]


def _verdict(findings: List[Finding]) -> Dict[str, str]:
    return {"verdict": wording.effect(findings), "bottleneck": wording.limit(findings)}


def _candidate(entry: Dict[str, Any]) -> Dict[str, Any]:
    return _insert_after(entry, "peak", _verdict(_facts(entry)))


def _pair(entry: Dict[str, Any]) -> Dict[str, Any]:
    found = _facts(entry)
    vs = of_kind(found, (Kind.PAIR_VERSUS_SINGLE,))
    ceiling = of_kind(found, (Kind.PAIR_CEILING,))
    out = _insert_after(entry, "peak", _verdict(found))
    out["versus_single"] = wording.word(vs[0]) if vs else None
    out["ceiling"] = wording.word(ceiling[0]) if ceiling else None
    return out


def _mib(n: Optional[float]) -> str:
    return "?" if n is None else f"{n / (1 << 20):.2f} MiB"


def _ratios(steps: List[Dict[str, Any]], key: str, metric: str) -> str:
    return ", ".join(f"{r[key]:.2f}x at {r['threads']} threads" for r in steps if r.get(key) is not None) \
        or f"no step at the same thread count ({metric})"


def special_said(e: Dict[str, Any]) -> List[str]:
    """The words of one special-vdev entry (analysis.special): the ZIL's bytes and where they went, then the
    comparison with the dedicated SLOG of the same device and with no log, step by step."""
    steps, metric = e.get("steps") or [], e.get("metric") or "iops"
    zil = [r["zil_bytes"] for r in steps if r.get("zil_bytes") is not None]
    param = e.get("zil_special_is_slog")
    out = [f"zil_special_is_slog={'?' if param is None else param}; the ZIL wrote "
           f"{_mib(sum(zil)) if zil else '? (the kstat lacked the rows)'} over {len(steps)} step(s), "
           f"{_mib(e['slog_class_bytes'])} of it counted as slog"
           + (" (2.4 counts the special vdev's ZIL blocks as normal)" if not e.get("slog_class_bytes") else
              ": a log class this pool does not have — this module did not count as 2.4 does")]
    for r in steps:
        share = "?" if r.get("special_share") is None else f"{r['special_share']:.0%}"
        out.append(f"{r['threads']} threads: zpool iostat saw the special vdev write "
                   f"{_mib(r.get('special_write_bytes_s'))}/s and the data vdevs {_mib(r.get('data_write_bytes_s'))}/s "
                   f"({share} of their writes on the special vdev; txg writes included)")
    if e.get("slog_config"):
        out.append(f"against the dedicated SLOG of the same device ({e['slog_config']}): "
                   f"{_ratios(steps, 'of_slog', metric)} its {metric}")
    else:
        out.append("no dedicated SLOG of the same device measured at this sync: nothing to compare with")
    if e.get("none_config"):
        out.append(f"against no log ({e['none_config']}): {_ratios(steps, 'of_none', metric)} its {metric}")
    else:
        out.append("no configuration without a log measured at this sync: nothing to compare with")
    return out


def worded(facts: Dict[str, Any]) -> Dict[str, Any]:
    """An analysis (analysis.scenario.analyse) with its sentences, in the stored layout."""
    found = _facts(facts)
    top = _insert_after(facts, "metric", _verdict(found))
    top = _insert_after(top, "knees", {"details": [wording.word(f) for f in of_kind(found, DETAILS)],
                                       "problems": [wording.word(f) for f in of_kind(found, PROBLEMS)]})
    top["candidates"] = [_candidate(c) for c in facts.get("candidates") or []]
    top["pairs"] = [_pair(p) for p in facts.get("pairs") or []]
    slower = of_kind(found, _SLOWER)
    if slower:
        top = _insert_after(top, "pairs", {"slower_log": wording.word(slower[0])})
    if facts.get("special"):
        top["special"] = [dict(e, said=special_said(e)) for e in facts["special"]]
    return top


def current(result: ScenarioResult) -> Optional[Dict[str, Any]]:
    """What readers show: today's rules on the measured steps (analysis.scenario.current), in words."""
    facts = scenario_analysis.current(result)
    return worded(facts) if facts is not None else None
