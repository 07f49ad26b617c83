"""The words of a scenario result's analysis: analysis.scenario returns facts (findings with their
figures), this module makes every sentence a reader sees of them — the verdict, the bottleneck, the
details, the problems, the slower candidate, each pair's comparison with the best single log and its
ceiling. The stored analysis keeps the sentences beside the facts for readers of older documents; they
are made here, at the edge, from the same findings.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from slogqual.analysis import scenario as scenario_analysis
from slogqual.analysis.findings import DETAILS, PROBLEMS, Finding, Kind, of_kind
from slogqual.report import wording
from slogqual.results.scenario import ScenarioResult

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
    return top


def current(result: ScenarioResult) -> Optional[Dict[str, Any]]:
    """What readers show: today's rules on the measured steps (analysis.scenario.current), in words."""
    facts = scenario_analysis.current(result)
    return worded(facts) if facts is not None else None
