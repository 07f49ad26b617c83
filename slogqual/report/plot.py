"""gnuplot scripts for sweep curves: a metric against IO size, log-log, one series per result.

Building the script is pure (text in, text out) so its axes, ticks and series
are tested without running anything; :func:`render` hands it to
:mod:`slogqual.tools.gnuplot`. Data travel inside the script as datablocks, so a
script file is a complete, re-runnable record of the picture.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from slogqual.analysis.classes import REFERENCE_CLASSES, RefClass, fmt_band, fmt_us
from slogqual.errors import UsageError
from slogqual.results import LAT_BASIS_FLUSH_BOUND, SweepPoint, SweepResult
from slogqual.tools import gnuplot
from slogqual.units import MAX_SIZE, MIN_SIZE, size_label
from slogqual.outputs import mark_picture

# Colour-blind-safe 8-colour cycle (Tableau 10 without the two greys), then dashes change.
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#17becf", "#8c564b", "#e377c2"]
DASHES = ["solid", "(12,6)", "(4,4)", "(12,5,3,5)", "(2,3)"]
POINTS = [7, 5, 9, 11, 13, 15, 4, 6]  # filled circle, square, triangles, diamond, pentagon, open ...

FORMATS = ("png", "svg")
DEFAULT_SIZE = (1000, 600)


@dataclass(frozen=True)
class Metric:
    key: str
    title: str
    ylabel: str
    value: Callable[[SweepPoint], Optional[float]]
    unit: str  # "us", "ops", "mibs"
    bands: bool  # reference bands make sense on this axis


def _p99(p: SweepPoint) -> Optional[float]:
    return p.lat_us.p99 if p.lat_us else None


METRICS: Dict[str, Metric] = {
    "latency": Metric("latency", "Synchronous write latency", "mean latency per synchronous write",
                      lambda p: p.lat_us.mean if p.lat_us else None, "us", True),
    "p99": Metric("p99", "Synchronous write latency, 99th percentile", "99th percentile latency", _p99, "us", True),
    "iops": Metric("iops", "Synchronous writes per second", "synchronous writes per second (QD1)",
                   lambda p: p.iops, "ops", True),
    "mbps": Metric("mbps", "Synchronous write bandwidth", "MiB/s (QD1)", lambda p: p.mbps, "mibs", False),
}


@dataclass
class Series:
    label: str
    points: List[Tuple[int, float]]
    source: str = "slogqual"


@dataclass
class PlotSpec:
    metric: Metric
    series: List[Series]
    bands: bool = False
    title: Optional[str] = None
    notes: List[str] = field(default_factory=list)  # e.g. series left out, upper-bound percentiles


def series_label(result: SweepResult) -> str:
    """Model from the device record, else the user's label, else the target path."""
    dev = result.device or {}
    for key in ("model", "descr"):
        value = dev.get(key) if isinstance(dev, dict) else None
        if isinstance(value, dict):
            value = value.get("value")
        if value:
            return str(value).strip()
    target = result.target or {}
    return str(target.get("label") or target.get("path") or "unknown device")


def build_spec(results: Sequence[SweepResult], metric: str = "latency", bands: bool = False,
               labels: Optional[Sequence[str]] = None, title: Optional[str] = None) -> PlotSpec:
    if metric not in METRICS:
        raise UsageError(f"unknown metric {metric!r}: use one of {', '.join(METRICS)}")
    m = METRICS[metric]
    if not results:
        raise UsageError("nothing to plot: give at least one result")
    if labels is not None and len(labels) != len(results):
        raise UsageError(f"{len(labels)} labels for {len(results)} results")
    names = list(labels) if labels is not None else [series_label(r) for r in results]
    # The same model twice (two drives, or before/after): tell them apart by path.
    for name in set(names):
        idx = [i for i, n in enumerate(names) if n == name]
        if len(idx) > 1 and labels is None:
            for i in idx:
                path = (results[i].target or {}).get("path")
                names[i] = f"{name} ({path})" if path and path != name else f"{name} #{idx.index(i) + 1}"
    spec = PlotSpec(metric=m, series=[], bands=bands and m.bands, title=title)
    for r, name in zip(results, names):
        pts = [(p.size, m.value(p)) for p in r.points]
        pts = [(s, v) for s, v in pts if v is not None and v > 0]
        if not pts:
            spec.notes.append(f"{name}: no {m.key} values (source {r.source}), left out")
            continue
        if metric == "p99" and any(p.lat_basis == LAT_BASIS_FLUSH_BOUND for p in r.points):
            spec.notes.append(f"{name}: p99 of write+flush pairs is an upper bound (see docs/results.md)")
        spec.series.append(Series(name, pts, r.source))
    if not spec.series:
        raise UsageError(f"none of the results has {m.key} values to plot")
    return spec


def _q(text: str) -> str:
    """A gnuplot double-quoted string (noenhanced text)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def _decades(lo: float, hi: float) -> List[float]:
    a = math.floor(math.log10(lo))
    b = math.ceil(math.log10(hi))
    return [10.0 ** e for e in range(a, b + 1)]


def _ytick_label(v: float, unit: str) -> str:
    if unit == "us":
        return fmt_us(v)
    if unit == "ops":
        for div, suf in ((1e6, "M"), (1e3, "k")):
            if v >= div:
                return f"{v / div:.3g}{suf}"
        return f"{v:.3g}"
    return f"{v:,.0f}" if v >= 1 else f"{v:.3g}"


def style(i: int) -> Tuple[str, str, int]:
    """(colour, dashtype, pointtype) of series i: colours cycle first, then dashes."""
    cycle = i // len(COLOURS)
    return COLOURS[i % len(COLOURS)], DASHES[cycle % len(DASHES)], POINTS[(i + cycle) % len(POINTS)]


def x_ticks(max_size: int = MAX_SIZE) -> List[int]:
    ticks, s = [], MIN_SIZE
    while s <= max(max_size, MAX_SIZE):
        ticks.append(s)
        s *= 2
    return ticks


def preamble(output: str, fmt: str, size: Tuple[int, int], title: str) -> List[str]:
    """reset, terminal, output, encoding and title: the opening every slogqual chart shares."""
    width, height = size
    if fmt == "png":
        terminal = f'set terminal pngcairo size {width},{height} enhanced font "DejaVu Sans,10" background rgb "white"'
    else:
        terminal = f'set terminal svg size {width},{height} font "DejaVu Sans,10" background rgb "white"'
    return ["reset", terminal, f"set output {_q(output)}", "set encoding utf8",
            f"set title {_q(title)} noenhanced font \",12\""]


def script(spec: PlotSpec, output: str, fmt: str, size: Tuple[int, int] = DEFAULT_SIZE) -> str:
    """The complete gnuplot script that draws spec into output."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown plot format {fmt!r}: use png or svg")
    m = spec.metric
    values = [v for s in spec.series for _, v in s.points]
    lo, hi = min(values), max(values)
    bands: List[RefClass] = []
    if spec.bands:
        bands = list(REFERENCE_CLASSES)
        edges = [e for c in bands for e in ((c.lat_lo_us, c.lat_hi_us) if m.unit == "us" else (c.iops_lo, c.iops_hi))]
        lo, hi = min(lo, *edges), max(hi, *edges)
    ylo, yhi = lo / 1.6, hi * 1.6
    max_size = max(s for ser in spec.series for s, _ in ser.points)
    xt = x_ticks(max_size)
    out: List[str] = []
    w = out.append
    w("# slogqual plot: %s against IO size, %d series" % (m.key, len(spec.series)))
    out += preamble(output, fmt, size, spec.title or f"{m.title} vs IO size (QD1, one thread)")
    w("set logscale xy 10")
    w(f"set xrange [{xt[0] / 1.25:g}:{xt[-1] * 1.25:g}]")
    w(f"set yrange [{ylo:g}:{yhi:g}]")
    w('set xlabel "IO size (bytes, binary units)"')
    w(f"set ylabel {_q(m.ylabel)} noenhanced")
    w("set xtics (" + ", ".join(f"{_q(size_label(s))} {s}" for s in xt) + ") nomirror")
    w("set mxtics default")
    w("set ytics (" + ", ".join(f"{_q(_ytick_label(v, m.unit))} {v:g}" for v in _decades(ylo, yhi)) + ") nomirror")
    w("set mytics 10")
    w("set tics out scale 0.8")
    w('set grid xtics ytics mytics lc rgb "#d8d8d8" lw 1, lc rgb "#eeeeee" lw 0.5')
    w("set border 3 lc rgb \"#555555\"")
    w("set key outside right top vertical Left reverse noenhanced samplen 3 spacing 1.1 font \",9\"")
    # Key outside on the right: gnuplot sizes the right margin to the longest title (and adds
    # columns when the entries outgrow the height).
    for n, c in enumerate(bands, 1):
        a, b = (c.lat_lo_us, c.lat_hi_us) if m.unit == "us" else (c.iops_lo, c.iops_hi)
        w(f"set object {n} rect from graph 0, first {a:g} to graph 1, first {b:g} behind "
          f'fc rgb "{c.colour}" fs transparent solid 0.13 noborder')
        mid = math.sqrt(a * b)
        text = f"{c.name} ({fmt_band(c)})" if m.unit == "us" else f"{c.name} ({_ytick_label(a, 'ops')}–{_ytick_label(b, 'ops')} ops/s)"
        w(f"set label {n} {_q(text)} at graph 0.01, first {mid:g} left front noenhanced "
          f'font ",8" tc rgb "#444444"')
    for i, s in enumerate(spec.series):
        w(f"$d{i} << EOD")
        for size, value in s.points:
            w(f"{size} {value:.6g}")
        w("EOD")
    clauses = []
    for i, s in enumerate(spec.series):
        colour, dash, pt = style(i)
        clauses.append(f"$d{i} using 1:2 with linespoints lw 2 lc rgb \"{colour}\" dt {dash} pt {pt} ps 0.9 "
                       f"title {_q(s.label)}")
    w("plot \\\n    " + ", \\\n    ".join(clauses))
    w("unset output")
    return "\n".join(out) + "\n"


def output_format(path: str, fmt: Optional[str] = None) -> str:
    if fmt:
        return fmt
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if ext not in FORMATS:
        raise UsageError(f"{path}: cannot tell the picture format from the name: end it in .png or .svg")
    return ext


def render(spec: PlotSpec, output: str, fmt: Optional[str] = None, size: Tuple[int, int] = DEFAULT_SIZE,
           keep_script: Optional[str] = None) -> str:
    """Draw spec into output with gnuplot; returns the script that did it."""
    fmt = output_format(output, fmt)
    return draw(script(spec, output, fmt, size), output, keep_script)


def draw(text: str, output: str, keep_script: Optional[str] = None) -> str:
    """Run a chart's gnuplot script (the one gnuplot door) and mark the picture as slogqual's, so a later
    -o onto it may replace it (slogqual/outputs.py); returns the script."""
    gnuplot.check_version()
    gnuplot.run_script(text, output, keep_script=keep_script)
    mark_picture(output)
    return text
