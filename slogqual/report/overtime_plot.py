"""gnuplot script for latency over time: one size of one pair-engine sweep, per interval.

Two panels on one time axis: latency per interval (mean, p99, max; log scale) above, bandwidth per
interval below with the first-10-seconds level, half of it, and the collapse point of a sustained run
(analysis.overtime.collapse) marked. Shares the sweep charts' preamble, quoting and gnuplot door.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

from slogqual.analysis import overtime
from slogqual.errors import UsageError
from slogqual.report.plot import COLOURS, DEFAULT_SIZE, FORMATS, _q, draw, output_format, preamble, series_label
from slogqual.results import SweepPoint, SweepResult
from slogqual.units import size_label


@dataclass
class OverTimeSpec:
    label: str
    point: SweepPoint
    over: overtime.OverTime
    title: Optional[str] = None


def pick_point(result: SweepResult, size: Optional[int]) -> SweepPoint:
    """The point to draw: the given size, else the only point (a --sustain run has one)."""
    with_data = [p for p in result.points if p.over_time]
    if not with_data:
        raise UsageError("no latency over time in this result: it comes from the pair engine "
                         "(slogqual sweep in flush mode, pair engine, slogqual 0.2 or later)")
    if size is None:
        if len(with_data) > 1:
            raise UsageError("the result has several sizes with latency over time ("
                             + ", ".join(size_label(p.size) for p in with_data) + "): choose one with --bs")
        return with_data[0]
    for p in with_data:
        if p.size == size:
            return p
    raise UsageError(f"no {size_label(size)} point with latency over time in the result (has "
                     + ", ".join(size_label(p.size) for p in with_data) + ")")


def build_spec(result: SweepResult, size: Optional[int] = None, label: Optional[str] = None,
               title: Optional[str] = None) -> OverTimeSpec:
    point = pick_point(result, size)
    try:
        over = overtime.OverTime.from_dict(point.over_time)
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"the {size_label(point.size)} point's over_time is malformed ({exc})") from None
    if not len(over):
        raise UsageError(f"the {size_label(point.size)} point has no intervals to draw")
    return OverTimeSpec(label=label or series_label(result), point=point, over=over, title=title)


def _rows(over: overtime.OverTime) -> List[Tuple[float, ...]]:
    return list(zip(over.t_s, over.mean_us, over.p99_us, over.max_us, over.mbps, over.ios))


def script(spec: OverTimeSpec, output: str, fmt: str, size: Tuple[int, int] = DEFAULT_SIZE) -> str:
    if fmt not in FORMATS:
        raise UsageError(f"unknown plot format {fmt!r}: use png or svg")
    over, point = spec.over, spec.point
    step = over.interval_ms / 1000
    end = over.end_s if over.end_s is not None else over.t_s[-1] + step
    title = spec.title or (f"{spec.label}: {size_label(point.size)} write+flush pairs over time "
                           f"({point.ios} IOs, {over.interval_ms:g} ms intervals)")
    out: List[str] = []
    w = out.append
    w(f"# slogqual plot --over-time: {size_label(point.size)}, {len(over)} intervals")
    out += preamble(output, fmt, size, title)
    w("$d << EOD")
    w("# t_s mean_us p99_us max_us mibs ios (NaN: no IO started in the interval)")
    for t, mean, p99, mx, mbps, ios in _rows(over):
        cells = [f"{t + step / 2:.6g}"] + [f"{v:.6g}" if v is not None else "NaN" for v in (mean, p99, mx)]
        w(" ".join(cells + [f"{mbps:.6g}", str(ios)]))
    w("EOD")
    w("set datafile missing NaN")
    w("unset title")  # the preamble's title goes to the whole picture, not to each panel
    w(f"set multiplot layout 2,1 title {_q(title)} noenhanced font \",12\" margins 0.09,0.97,0.09,0.9 "
      "spacing 0,0.06")
    w(f"set xrange [0:{end:.6g}]")
    w("set tics out scale 0.8 nomirror")
    w("set border 3 lc rgb \"#555555\"")
    w('set grid xtics ytics lc rgb "#d8d8d8" lw 1')
    w("set key inside right top horizontal noenhanced font \",9\"")
    # latency panel
    w("set logscale y 10")
    w('set ylabel "pair latency (µs)" noenhanced')
    w('set format x ""')
    w("plot $d using 1:4 with lines lw 1 lc rgb \"#bbbbbb\" title \"max\", \\\n"
      f"     $d using 1:3 with lines lw 1.5 lc rgb \"{COLOURS[1]}\" title \"p99\", \\\n"
      f"     $d using 1:2 with lines lw 2 lc rgb \"{COLOURS[0]}\" title \"mean\"")
    # bandwidth panel
    w("unset logscale y")
    w("set format x \"%g\"")
    w('set xlabel "time since the start (s)"')
    w('set ylabel "MiB/s per interval" noenhanced')
    w("set yrange [0:*]")
    collapse = point.collapse or {}
    extra = []
    if collapse.get("evaluated") and collapse.get("baseline_mbps"):
        base = float(collapse["baseline_mbps"])
        half = base * float(collapse.get("fraction", overtime.COLLAPSE_FRACTION))
        first_s = float(collapse.get("baseline_s", overtime.BASELINE_S))
        extra.append(f"{base:.6g} with lines dt (8,4) lw 1 lc rgb \"#555555\" "
                     f"title {_q(f'first {first_s:g} s: {base:.1f} MiB/s')}")
        extra.append(f"{half:.6g} with lines dt (2,3) lw 1 lc rgb \"{COLOURS[1]}\" "
                     f"title {_q(f'half: {half:.1f} MiB/s')}")
        if collapse.get("t_s") is not None:
            t = float(collapse["t_s"])
            w(f"set arrow 1 from {t:.6g}, graph 0 to {t:.6g}, graph 1 nohead lw 1.5 lc rgb \"{COLOURS[1]}\" front")
            w(f"set label 1 {_q(f'below half at {t:.1f} s')} at {t:.6g}, graph 0.6 left offset 0.5,0 "
              f"front noenhanced font \",9\" tc rgb \"{COLOURS[1]}\"")
    plot = [f"$d using 1:5 with steps lw 1.5 lc rgb \"{COLOURS[2]}\" title \"MiB/s\""] + extra
    w("plot " + ", \\\n     ".join(plot))
    w("unset multiplot")
    w("unset output")
    return "\n".join(out) + "\n"


def render(spec: OverTimeSpec, output: str, fmt: Optional[str] = None, size: Tuple[int, int] = DEFAULT_SIZE,
           keep_script: Optional[str] = None) -> str:
    fmt = output_format(output, fmt)
    return draw(script(spec, output, fmt, size), output, keep_script)
