"""The charts of a report, independent of the format: what each shows and the gnuplot script that draws it.

The HTML report draws each as SVG and inlines it (report/html.py), the Markdown report as a PNG file beside
itself (report/markdown.py); both through the one gnuplot door (report/plot.draw). The scripts are the
existing ones: sweep curves (report/plot.py), a scenario's configurations against threads
(report/scaling_plot.py), an advice's prediction beside its measurement (report/advice_plot.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from slogqual.analysis.scenario import metric_for
from slogqual.report import advice_plot, scaling_plot
from slogqual.report.advice import verification
from slogqual.report.inputs import ReportInputs
from slogqual.report import plot as plots
from slogqual.results import SweepResult
from slogqual.results.advice import AdviceResult
from slogqual.results.scenario import ScenarioResult

Size = Tuple[int, int]


@dataclass
class ChartJob:
    key: str  # unique in the report: the figure's anchor, and part of a Markdown chart's file name
    caption: str
    script: Callable[[str, str, Size], str]  # (output, format, size) -> the gnuplot script
    notes: List[str] = field(default_factory=list)


SWEEP_CHARTS = [("latency", "Mean latency of a synchronous write (write + cache flush) against IO size"),
                ("p99", "99th percentile latency against IO size"),
                ("iops", "Synchronous writes per second against IO size (QD1)"),
                ("mbps", "Bandwidth of synchronous writes against IO size (QD1)")]


def sweep_jobs(results: Sequence[SweepResult], bands: bool = True) -> List[ChartJob]:
    """Latency, p99 (when any result has percentiles), ops/s and MiB/s against IO size, every sweep a line."""
    results = [r for r in results if r.points]  # a sweep that failed before its first size has no curve
    if not results:
        return []
    jobs = []
    for metric, caption in SWEEP_CHARTS:
        if metric == "p99" and not any(p.lat_us.p99 is not None for r in results for p in r.points):
            continue
        spec = plots.build_spec(results, metric, bands=bands)
        jobs.append(ChartJob(metric, caption, lambda out, fmt, size, spec=spec: plots.script(spec, out, fmt, size),
                             spec.notes))
    return jobs


SCENARIO_WORDS = {"iops": "IOPS", "mbps": "MiB/s", "p99": "99th percentile latency"}


def scenario_jobs(n: int, result: ScenarioResult, metric: str) -> List[ChartJob]:
    """The scenario's own metric and its p99 latency against total threads, a line per configuration."""
    if not any(s.iops > 0 for s in result.steps):
        return []
    wanted = [metric] + (["p99"] if any(s.p99_us for s in result.steps) else [])
    return [ChartJob(f"scenario{n}-{m}", f"{result.name}: {SCENARIO_WORDS[m]} against total threads, a line per "
                                         "configuration",
                     lambda out, fmt, size, m=m: scaling_plot.script(result, m, out, fmt, size)) for m in wanted]


def advice_job(n: int, advice: AdviceResult, rows: Optional[Sequence[Dict[str, Any]]] = None) -> List[ChartJob]:
    """Predicted IOPS against threads per candidate, its range as error bars; the measured steps beside it."""
    if not any(c.steps for c in advice.candidates):
        return []
    caption = "Predicted sync=always IOPS against threads" + (", the measured steps as open circles" if rows else "")
    return [ChartJob(f"advice{n}", caption,
                     lambda out, fmt, size: advice_plot.script(advice, out, fmt, rows or None, size))]


def report_jobs(got: ReportInputs, bands: bool = True) -> Dict[str, List[ChartJob]]:
    """Every chart of a report, by the part it belongs to: ``sweeps`` (one set for every sweep, the
    qualifications' included), ``scenarioN`` and ``adviceN`` (N counting each kind from 1)."""
    out = {"sweeps": sweep_jobs([r for r, _ in got.charted_sweeps()], bands=bands)}
    for n, (result, _) in enumerate(got.scenarios, 1):
        out[f"scenario{n}"] = scenario_jobs(n, result, metric_for(result.bs))
    for n, (advice, _) in enumerate(got.advices, 1):
        out[f"advice{n}"] = advice_job(n, advice, [r for _, r in verification(advice, got.scenarios)])
    return out
