"""gnuplot scripts for pool scenarios: throughput (or p99 latency) against total threads, one line per
configuration (and per log candidate or log pair), as in the SDC 2019 talk's pool charts.

Shares the sweep plots' styles, quoting, formats and the one gnuplot door (slogqual.report.plot,
slogqual.tools.gnuplot); only the axes differ: threads on a log2 x axis.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from slogqual.analysis.scenario import step_label
from slogqual.errors import UsageError
from slogqual.report.plot import DEFAULT_SIZE, FORMATS, _q, output_format, preamble, style
from slogqual.tools import gnuplot
from slogqual.outputs import mark_picture
from slogqual.results.scenario import ScenarioResult

METRICS = {
    "iops": ("IOPS", lambda s: s.iops),
    "mbps": ("MiB/s", lambda s: s.mbps),
    "p99": ("p99 latency (µs)", lambda s: s.p99_us),
}


def series(result: ScenarioResult, metric: str) -> List[Tuple[str, List[Tuple[int, float]]]]:
    """[(label, [(threads, value)])] in the order the configurations were run."""
    if metric not in METRICS:
        raise UsageError(f"unknown metric {metric!r}: use one of {', '.join(METRICS)}")
    get = METRICS[metric][1]
    out: Dict[str, List[Tuple[int, float]]] = {}
    for s in result.steps:
        label = step_label(result, s)  # a log candidate, a mirrored or striped pair: each its own line
        v = get(s)
        if v is not None and v > 0:
            out.setdefault(label, []).append((s.threads, float(v)))
    return [(k, sorted(v)) for k, v in out.items()]


def script(result: ScenarioResult, metric: str, output: str, fmt: str, size=DEFAULT_SIZE) -> str:
    if fmt not in FORMATS:
        raise UsageError(f"unknown plot format {fmt!r}: use png or svg")
    ser = series(result, metric)
    if not ser:
        raise UsageError("the scenario result has no measured steps to plot")
    ylabel = METRICS[metric][0]
    threads = sorted({t for _, pts in ser for t, _ in pts})
    values = [v for _, pts in ser for _, v in pts]
    out: List[str] = []
    w = out.append
    w(f"# slogqual scenario plot: {metric} against threads, {len(ser)} series")
    out += preamble(output, fmt, size, f"{result.name}{' (quick)' if result.quick else ''}: {ylabel} vs threads")
    w("set logscale x 2")
    w(f"set xrange [{threads[0] / 1.3:g}:{threads[-1] * 1.3:g}]")
    w("set xtics (" + ", ".join(f"{_q(str(t))} {t}" for t in threads) + ") nomirror")
    w(f"set yrange [0:{max(values) * 1.15:g}]")
    w(f'set xlabel "total threads ({result.luns} LUNs)"')
    w(f"set ylabel {_q(ylabel)} noenhanced")
    w("set tics out scale 0.8")
    w('set grid xtics ytics lc rgb "#d8d8d8" lw 1')
    w("set border 3 lc rgb \"#555555\"")
    w("set key outside right top vertical Left reverse noenhanced samplen 3 spacing 1.1 font \",9\"")
    for i, (_, pts) in enumerate(ser):
        w(f"$d{i} << EOD")
        for t, v in pts:
            w(f"{t} {v:.6g}")
        w("EOD")
    clauses = []
    for i, (label, _) in enumerate(ser):
        colour, dash, pt = style(i)
        clauses.append(f"$d{i} using 1:2 with linespoints lw 2 lc rgb \"{colour}\" dt {dash} pt {pt} ps 0.9 "
                       f"title {_q(label)}")
    w("plot \\\n    " + ", \\\n    ".join(clauses))
    w("unset output")
    return "\n".join(out) + "\n"


def render(result: ScenarioResult, metric: str, output: str, fmt: Optional[str] = None,
           keep_script: Optional[str] = None) -> str:
    fmt = output_format(output, fmt)
    text = script(result, metric, output, fmt)
    gnuplot.check_version()
    gnuplot.run_script(text, output, keep_script=keep_script)
    mark_picture(output)  # so that a later -o onto it may replace it (slogqual/outputs.py)
    return text
