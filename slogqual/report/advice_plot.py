"""gnuplot script for the SLOG advisor: predicted sync=always IOPS against threads, one line per log
candidate with its range (from the sweep's 95 % interval) as error bars, the data side without a SLOG
dashed, and — given ``slogqual advise --verify`` rows — the measured steps as open points of the same
colour, so that prediction and measurement are read off one chart.

Shares the sweep and scenario charts' styles, quoting, formats and the one gnuplot door
(slogqual.report.plot, slogqual.tools.gnuplot).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from slogqual.errors import UsageError
from slogqual.outputs import mark_picture
from slogqual.report.plot import DEFAULT_SIZE, FORMATS, _q, output_format, preamble, style
from slogqual.results.advice import AdviceResult, CandidateAdvice
from slogqual.tools import gnuplot

Point = Tuple[int, float, Optional[float], Optional[float]]  # threads, IOPS, low, high


def label(c: CandidateAdvice) -> str:
    what = c.device_class or c.model or "?"
    return f"{c.path or c.sweep} ({what})"


def series(advice: AdviceResult, rows: Optional[Sequence[Dict[str, Any]]] = None):
    """[(label, predicted points, without-SLOG points, measured points)] per candidate."""
    out = []
    for c in advice.candidates:
        pred: List[Point] = []
        without: List[Point] = []
        for s in c.steps:
            rng = s.iops_range or [None, None]
            pred.append((s.threads, float(s.iops), rng[0], rng[1]))
            if s.without_slog_iops:
                without.append((s.threads, float(s.without_slog_iops), None, None))
        measured = sorted((r["threads"], float(r["measured_iops"]), None, None) for r in rows or ()
                          if r["candidate"] == c.path and r.get("measured_iops"))
        out.append((label(c), pred, without, measured))
    return out


def _block(name: str, pts: Sequence[Point]) -> List[str]:
    lines = [f"${name} << EOD"]
    for t, v, lo, hi in pts:
        lines.append(f"{t} {v:.6g} {lo if lo is not None else v:.6g} {hi if hi is not None else v:.6g}")
    lines.append("EOD")
    return lines


def script(advice: AdviceResult, output: str, fmt: str, rows: Optional[Sequence[Dict[str, Any]]] = None,
           size=DEFAULT_SIZE) -> str:
    if fmt not in FORMATS:
        raise UsageError(f"unknown plot format {fmt!r}: use png or svg")
    ser = series(advice, rows)
    threads = sorted({p[0] for _, a, b, m in ser for p in (*a, *b, *m)})
    values = [max(p[1], p[3] or 0) for _, a, b, m in ser for p in (*a, *b, *m)]
    if not threads or not values:
        raise UsageError("the advice has no predicted steps to plot")
    w = advice.workload
    out: List[str] = [f"# slogqual advise plot: predicted IOPS against threads, {len(ser)} candidate(s)"]
    out += preamble(output, fmt, size, f"SLOG advice: {w['protocol']}, {w['io_size'] // 1024} KiB sync writes, "
                                       "predicted" + (" and measured" if rows else "") + " IOPS")
    out += [
        "set logscale x 2",
        f"set xrange [{threads[0] / 1.3:g}:{threads[-1] * 1.3:g}]",
        "set xtics (" + ", ".join(f"{_q(str(t))} {t}" for t in threads) + ") nomirror",
        f"set yrange [0:{max(values) * 1.15:g}]",
        'set xlabel "total threads (concurrent sync writers)"',
        'set ylabel "IOPS (sync=always)" noenhanced',
        "set tics out scale 0.8",
        'set grid xtics ytics lc rgb "#d8d8d8" lw 1',
        'set border 3 lc rgb "#555555"',
        'set key outside right top vertical Left reverse noenhanced samplen 3 spacing 1.1 font ",9"',
    ]
    clauses = []
    for i, (name, pred, without, measured) in enumerate(ser):
        colour, dash, pt = style(i)
        out += _block(f"p{i}", pred)
        clauses.append(f"$p{i} using 1:2 with lines lw 2 lc rgb \"{colour}\" dt {dash} title {_q(name + ' predicted')}")
        clauses.append(f"$p{i} using 1:2:3:4 with yerrorbars lc rgb \"{colour}\" pt {pt} ps 0.8 notitle")
        if without and i == 0:  # the data side is the same for every candidate: drawn once
            out += _block("w", without)
            clauses.append("$w using 1:2 with linespoints lw 1.5 lc rgb \"#777777\" dt 2 pt 1 ps 0.8 "
                           "title \"without a SLOG (data side)\"")
        if measured:
            out += _block(f"m{i}", measured)
            clauses.append(f"$m{i} using 1:2 with points lc rgb \"{colour}\" pt 6 ps 1.6 lw 2 "
                           f"title {_q(name + ' measured')}")
    out.append("plot \\\n    " + ", \\\n    ".join(clauses))
    out.append("unset output")
    return "\n".join(out) + "\n"


def render(advice: AdviceResult, output: str, rows: Optional[Sequence[Dict[str, Any]]] = None,
           fmt: Optional[str] = None) -> str:
    fmt = output_format(output, fmt)
    text = script(advice, output, fmt, rows)
    gnuplot.check_version()
    gnuplot.run_script(text, output)
    mark_picture(output)  # so that a later --plot onto it may replace it (slogqual/outputs.py)
    return text
