"""A comparison of sweeps (analysis/compare.py) in words and rows: each size's flag, the rule it was judged by,
the summary, the notes, the runs a baseline left out, the table and the JSON document ``slogqual compare``
prints. The one place a comparison becomes English.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from tabulate import tabulate

from slogqual.analysis import compare as cmp
from slogqual.units import size_label


def _floor_text(c: cmp.Comparison) -> str:
    return f"floor ±{c.mean_floor * 100:g}%"


def flag_text(c: cmp.Comparison, row: cmp.CompareRow) -> str:
    """A size's verdict: '+15.0% REGRESSION', 'not significant', 'only in B', ..."""
    if row.flag == cmp.ONLY_A:
        return f"only in {c.a_name}"
    if row.flag == cmp.ONLY_B:
        return f"only in {c.b_name}"
    if row.flag == cmp.UNDER_FLOOR:
        return f"significant, under {c.min_effect * 100:g}%"
    if row.flag == cmp.WITHIN_FLOOR:
        return f"no significant change (mean alone, {_floor_text(c)})"
    if row.flag == cmp.CANNOT_JUDGE:
        return f"cannot judge ({row.why})"
    if row.flag in (cmp.REGRESSION, cmp.IMPROVEMENT):
        text = f"{row.change_pct:+.1f}% " + (row.flag.upper() if row.flag == cmp.REGRESSION else row.flag)
        return text + (f" (mean alone, {_floor_text(c)})" if row.basis == cmp.BASIS_MEAN else "")
    return row.flag


def rule(c: cmp.Comparison) -> str:
    """The rule the rows were judged by."""
    text = (f"{cmp.TEST} on the mean latency of the IOs (n, mean, sd), two-sided at {(1 - c.alpha) * 100:g}% "
            f"confidence; a change is flagged when significant and larger than {c.min_effect * 100:g}%")
    if any(r.basis == cmp.BASIS_MEAN for r in c.rows):
        text += (f"; where a side records no spread, on the mean alone: flagged when larger than "
                 f"±{c.mean_floor * 100:g}% (the measured run-to-run repeatability of a 1 s mean)")
    return text


def summary(c: cmp.Comparison) -> str:
    """What the comparison comes to, in one line."""
    both = c.shared
    if not both:
        return f"cannot judge: no size measured in both {c.a_name} and {c.b_name}"
    unjudged = c.unjudged
    if len(unjudged) == len(both):
        return f"cannot judge any of {len(both)} size(s): " + (
            "no spread is recorded for a percentile" if not c.metric.judged else cmp.WHY_NO_VALUE)
    count = {flag: sum(r.flag == flag for r in both) for flag in (cmp.NOT_SIGNIFICANT, cmp.UNDER_FLOOR,
                                                                   cmp.WITHIN_FLOOR)}
    parts = []
    for what, rows in (("regression", c.regressions), ("improvement", c.improvements)):
        for basis, beyond in ((cmp.BASIS_WELCH, f"beyond {c.min_effect * 100:g}%"),
                              (cmp.BASIS_MEAN, f"on the mean alone beyond ±{c.mean_floor * 100:g}%")):
            these = [r for r in rows if r.basis == basis]
            if these:
                parts.append(f"{len(these)} {what}(s) {beyond} (" + ", ".join(size_label(r.size) for r in these) + ")")
    judged = len(both) - len(unjudged)
    floor_only = not parts and judged == count[cmp.WITHIN_FLOOR]  # nothing flagged, every size on the mean alone
    if floor_only:
        parts.append(f"no significant change at {judged} size(s) judged on the mean alone ({_floor_text(c)})")
    elif not parts:
        parts.append(f"no significant change beyond {c.min_effect * 100:g}% at {judged} size(s)")
    if count[cmp.NOT_SIGNIFICANT]:
        parts.append(f"{count[cmp.NOT_SIGNIFICANT]} not significant")
    if count[cmp.UNDER_FLOOR]:
        parts.append(f"{count[cmp.UNDER_FLOOR]} significant but under {c.min_effect * 100:g}%")
    if count[cmp.WITHIN_FLOOR] and not floor_only:
        parts.append(f"{count[cmp.WITHIN_FLOOR]} within the mean-alone {_floor_text(c)}")
    if unjudged:
        parts.append(f"{len(unjudged)} {cmp.CANNOT_JUDGE}")
    return "; ".join(parts)


def note_words(n: cmp.Note) -> str:
    """A note beside the rows."""
    if n.kind == "import" and n.side == "new":
        return f"the new result is a {n.what} import: mean only, no spread recorded; judged on the mean alone"
    if n.kind == "import":
        return (f"{n.side} is a {n.what} import: mean only, about 1 s per size, no spread recorded; judged on the "
                "mean alone")
    if n.kind == "no-values":
        return f"{n.side} has no {n.what} values"
    if n.kind == "percentile":
        return (f"{n.what} is a percentile: no spread is recorded for it, so it is shown, not judged "
                "(--metric latency judges the means)")
    if n.kind == "flush-percentiles":
        return "write+flush percentiles are upper bounds (docs/results.md)"
    if n.kind == "spread-bound":
        return (f"{' and '.join(n.sides)}: flush mode records no spread of the write+flush pair; sd(write) + "
                "sd(flush) is used (marked ≤), an upper bound, so the test is conservative there")
    if n.kind == "key":
        return f"A and B differ in {n.what}: A {n.values[0]}, B {n.values[1]} (the comparison includes that difference)"
    if n.kind == "identical":
        return f"left out {n.count} stored run(s) identical to the new result"
    return n.kind


def reasons(x: cmp.LeftOut) -> List[str]:
    """Why a stored run was not pooled: each key it differs in, its value and the new run's."""
    return [f"{name} {theirs} (new: {new})" for name, new, theirs in x.reasons]


def left_out_text(x: cmp.LeftOut) -> str:
    return f"{x.label}: " + "; ".join(reasons(x))


def comparison_dict(c: cmp.Comparison) -> Dict[str, Any]:
    """The comparison as ``slogqual compare --json`` prints it: figures, rows, and its rule, summary and notes."""
    return {"metric": c.metric.key, "unit": c.metric.unit, "test": cmp.TEST, "alpha": c.alpha,
            "min_effect": c.min_effect, "threshold": c.min_effect, "mean_alone_floor": c.mean_floor,
            "rule": rule(c), "rows": [r.to_dict() for r in c.rows], "regressions": len(c.regressions),
            "improvements": len(c.improvements), "cannot_judge": len(c.unjudged),
            "outcome": c.outcome, "summary": summary(c), "notes": [note_words(n) for n in c.notes]}


def _fmt(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.1f}" if abs(v) >= 10 else f"{v:.3g}"


def _sd(s: Optional[cmp.Sample]) -> str:
    if s is None or s.sd is None:
        return "-"
    return ("≤" if s.sd_bound else "") + _fmt(s.sd)


def _pair(a: str, b: str) -> str:
    return f"{a}/{b}"


def table(c: cmp.Comparison, runs_column: bool = False) -> str:
    """The rows of a comparison as a text table: values, spread, IO counts, t, and the verdict."""
    unit, an, bn = c.metric.unit, c.a_name, c.b_name
    headers: List[str] = ["size"] + (["runs"] if runs_column else []) + [
        f"{an} {c.metric.label} ({unit})", f"{bn} ({unit})", _pair(f"IOs {an}", bn),
        _pair(f"lat sd {an}", bn) + " (µs)", "t", "change"]
    rows = []
    for r in c.rows:
        t = r.test
        rows.append([size_label(r.size)] + ([r.a_sample.runs if r.a_sample else 0] if runs_column else []) + [
            _fmt(r.a), _fmt(r.b),
            _pair(str(r.a_sample.n) if r.a_sample else "-", str(r.b_sample.n) if r.b_sample else "-"),
            _pair(_sd(r.a_sample), _sd(r.b_sample)),
            "-" if t is None else ("inf" if t.t > 1e6 else "-inf" if t.t < -1e6 else f"{t.t:.1f}"),
            flag_text(c, r)])
    return tabulate(rows, headers=headers, colalign=("right",) * (len(headers) - 1) + ("left",),
                    disable_numparse=True)


def text(c: cmp.Comparison, runs_column: bool = False) -> List[str]:
    """What ``slogqual compare`` prints under its header: the table, the notes, the rule and the summary."""
    return ([table(c, runs_column)] + [f"note: {note_words(n)}" for n in c.notes]
            + [f"rule: {rule(c)}", f"{c.metric.label}: {summary(c)}"])
