"""Judging criteria against what was measured: pure functions over result documents.

A criterion ends PASS, FAIL or NOT-EVALUATED. Not evaluated means the figure does not exist
(the scenario did not run, the size was not measured, the analysis has no such figure); the
reason is given and no value is made up. A device is qualified only when every criterion passed.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from slogqual.analysis import scenario as scenario_analysis
from slogqual.report import scenario as scenario_report
from slogqual.qualify.profile import (KIND_DEVICE, KIND_SCENARIO, KIND_STEADY, KIND_SWEEP, SCENARIO_METRICS,
                                      Criterion)
from slogqual.results import LAT_BASIS_FLUSH_BOUND, LAT_BASIS_PAIR, SweepResult
from slogqual.results.qualification import SteadyStateRecord, Summary
from slogqual.results.scenario import AnalysisRecord, ScenarioResult
from slogqual.units import size_label

# Bump when a rule changes the result a criterion gets from the same measurements; every
# qualification document records the version that judged it ("rules").
RULES_VERSION = 2  # 2: scenario criteria judged on today's analysis of the measured steps

PASS, FAIL, NOT_EVALUATED = "pass", "fail", "not-evaluated"

VERDICT_PASS = "pass"
VERDICT_FAIL = "fail"
VERDICT_INCOMPLETE = "incomplete"  # nothing failed, but something could not be evaluated
VERDICT_REFUSED = "refused"
VERDICT_ERROR = "error"

_OPS = {"<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt,
        "==": operator.eq, "!=": operator.ne}


@dataclass
class ScenarioEvidence:
    """What a scenario criterion is judged on: the scenario result (None where there is none, and why),
    where it came from, and a note on how it ended."""

    document: Optional[ScenarioResult] = None
    source: Optional[str] = None  # 'file X', 'the QEMU lab (--quick)', 'a pool on ...'
    path: Optional[str] = None
    note: Optional[str] = None
    reason: Optional[str] = None  # why there is no document


@dataclass
class Judgement:
    criterion: Criterion
    result: str
    measured: Any = None  # the number or verdict compared; None when not evaluated
    detail: str = ""

    @property
    def threshold_text(self) -> str:
        c = self.criterion
        if isinstance(c.threshold, tuple):
            return f"in {', '.join(c.threshold)}"
        if isinstance(c.threshold, float):
            return f"{c.op} {fmt_number(c.threshold)}{(' ' + c.unit) if c.unit else ''}"
        return f"{c.op} {c.threshold}"

    @property
    def measured_text(self) -> str:
        if self.measured is None:
            return "-"
        if isinstance(self.measured, (int, float)) and not isinstance(self.measured, bool):
            return f"{fmt_number(self.measured)}{(' ' + self.criterion.unit) if self.criterion.unit else ''}"
        return str(self.measured)

    def message(self) -> str:
        """One line: what was measured against what was required."""
        c = self.criterion
        if self.result == NOT_EVALUATED:
            return f"{c.check}: not evaluated: {self.detail}"
        word = "meets" if self.result == PASS else "misses"
        return f"{c.check}: measured {self.measured_text}, {word} threshold {self.threshold_text}" + \
            (f" ({self.detail})" if self.detail else "")

    def to_dict(self) -> Dict[str, Any]:
        d = self.criterion.to_dict()
        d.update({"result": self.result, "measured": self.measured, "measured_text": self.measured_text,
                  "threshold_text": self.threshold_text, "detail": self.detail, "message": self.message()})
        return d


def fmt_number(v: float) -> str:
    if v == int(v) and abs(v) < 1e15:
        return f"{int(v):,}"
    if abs(v) >= 100:
        return f"{v:,.1f}"
    return f"{v:.3g}"


def _compare(c: Criterion, measured: Any) -> bool:
    if c.op == "in":
        return measured in c.threshold
    return bool(_OPS[c.op](measured, c.threshold))


def judge_sweep(c: Criterion, sweep: Optional[SweepResult]) -> Judgement:
    if sweep is None:
        return Judgement(c, NOT_EVALUATED, detail="no sweep was run")
    point = sweep.point(c.size)
    if point is None:
        why = f"the sweep has no {size_label(c.size)} point"
        if sweep.error:
            why += f" ({sweep.error})"
        return Judgement(c, NOT_EVALUATED, detail=why)
    if "." in c.metric:
        group, stat = c.metric.split(".", 1)
        stats = getattr(point, group)
        value = None if stats is None else getattr(stats, stat)
    else:
        value = getattr(point, c.metric)
    if value is None:
        return Judgement(c, NOT_EVALUATED, detail=f"the {size_label(c.size)} point has no {c.metric}")
    ok = _compare(c, value)
    detail = f"{point.ios} IOs"
    if c.metric.startswith("lat_us.") and c.metric not in ("lat_us.mean", "lat_us.min", "lat_us.stddev"):
        if point.lat_basis == LAT_BASIS_FLUSH_BOUND:
            detail += "; write+flush percentile is an upper bound"
            if not ok:
                detail += " (the true value may be lower: see write_lat_us/flush_lat_us)"
        elif point.lat_basis == LAT_BASIS_PAIR:
            detail += "; exact: every write+flush pair timed"
    ci = point.mean_ci95_us
    if c.metric == "lat_us.mean" and ci and c.op in ("<", "<=", ">", ">="):
        detail += f"; 95 % interval of the mean {ci['lo']:.1f}–{ci['hi']:.1f} µs"
        if ci["lo"] <= c.threshold <= ci["hi"]:
            detail += " holds the threshold: too close to call, measure longer (--precision)"
    return Judgement(c, PASS if ok else FAIL, value, detail)


def judge_device(c: Criterion, device: Optional[Dict[str, Any]]) -> Judgement:
    if not device:
        return Judgement(c, NOT_EVALUATED, detail="the device could not be identified")
    reason = ""
    if c.metric == "class":
        value = device.get("class")
    elif c.metric == "transport":
        value = device.get("transport")
    elif c.metric == "power_loss":
        pl = device.get("power_loss") or {}
        value = pl.get("verdict")
        reason = f"{pl.get('text', '')} [{pl.get('basis', '?')}]"
        if value is not None and value != "protected-measured" and not pl.get("measured"):
            reason += "; a power cut measures it: slogqual powercut, then qualify --powercut FILE"
    elif c.metric == "controller_link":
        cl = device.get("controller_link")
        value, reason = (cl.get("verdict"), cl.get("reason") or "") if cl else ("none", "no controller link")
    else:
        sect = device.get(c.metric) or {}
        value, reason = sect.get("verdict"), sect.get("reason") or ""
    if value is None:
        return Judgement(c, NOT_EVALUATED, detail=f"the device record has no {c.metric}")
    return Judgement(c, PASS if _compare(c, value) else FAIL, value, reason)


def judge_steady(c: Criterion, steady: Optional[SteadyStateRecord]) -> Judgement:
    if steady is None or not steady.checked:
        return Judgement(c, NOT_EVALUATED, detail="no steady-state rounds were run")
    value = "reached" if steady.reached else "not-reached"
    return Judgement(c, PASS if _compare(c, value) else FAIL, value, steady.label or "")


def judge_scenario(c: Criterion, scenarios: Dict[str, ScenarioEvidence]) -> Judgement:
    entry = scenarios.get(c.scenario)
    if entry is None or entry.document is None:
        why = (entry.reason if entry else None) or \
            "no result of this scenario (give --scenario-result FILE, --lab or --data)"
        return Judgement(c, NOT_EVALUATED, detail=why)
    result = entry.document
    # today's analysis of the measured steps; only a complete run's figures are judged
    analysis = (AnalysisRecord.of(scenario_report.current(result)) if result.complete else result.stored_analysis) \
        or AnalysisRecord()
    key = SCENARIO_METRICS[c.metric]
    value = analysis.figure(key)
    if value is None:
        why = f"the scenario result has no analysis.{key}"
        if not result.complete:
            why += f" (status {result.status}" + (f": {result.error}" if result.error else "") + ")"
        if analysis.problems:
            why += f": {analysis.problems[0]}"
        elif analysis.verdict:
            why += f": {analysis.verdict}"
        return Judgement(c, NOT_EVALUATED, detail=why)
    notes = [f"from {entry.source or 'a file'}"]
    if result.quick:
        notes.append("quick run")
    if entry.note:
        notes.append(entry.note)
    return Judgement(c, PASS if _compare(c, float(value)) else FAIL, float(value), "; ".join(notes))


def judge_all(criteria: List[Criterion], sweep: Optional[SweepResult], device: Optional[Dict[str, Any]],
              steady: Optional[SteadyStateRecord], scenarios: Dict[str, ScenarioEvidence]) -> List[Judgement]:
    out = []
    for c in criteria:
        if c.kind == KIND_SWEEP:
            out.append(judge_sweep(c, sweep))
        elif c.kind == KIND_DEVICE:
            out.append(judge_device(c, device))
        elif c.kind == KIND_STEADY:
            out.append(judge_steady(c, steady))
        elif c.kind == KIND_SCENARIO:
            out.append(judge_scenario(c, scenarios))
        else:  # pragma: no cover - the profile loader admits no other kind
            raise ValueError(c.kind)
    return out


def verdict_of(judgements: List[Judgement]) -> str:
    results = {j.result for j in judgements}
    if FAIL in results:
        return VERDICT_FAIL
    if NOT_EVALUATED in results:
        return VERDICT_INCOMPLETE
    return VERDICT_PASS


def counts(judgements: List[Judgement]) -> Summary:
    n = {k: sum(1 for j in judgements if j.result == k) for k in (PASS, FAIL, NOT_EVALUATED)}
    return Summary(passed=n[PASS], failed=n[FAIL], not_evaluated=n[NOT_EVALUATED])
