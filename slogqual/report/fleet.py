"""The fleet view as text tables, as one self-contained HTML file with gnuplot charts (the latency-vs-size
band of every model's units) and as the JSON ``slogqual fleet --json`` prints; the rules, deviations and notes
in words. The numbers and the rules themselves are slogqual/analysis/fleet.py."""

from __future__ import annotations

import datetime
import os
import tempfile
from typing import Any, Dict, List, Sequence, Tuple

from tabulate import tabulate

from slogqual import __version__
from slogqual.analysis import fleet as F
from slogqual.report import plot as plots
from slogqual.report import wording
from slogqual.report.html import CSS, Chart, _e, _table, inline_svg
from slogqual.tools import gnuplot
from slogqual.units import size_label

SLOW_COLOUR = "#d62728"
UNIT_COLOUR = "#9aa5b1"
BAND_COLOUR = "#1f77b4"
CHART_SIZE = (960, 500)


def _n(v) -> str:
    if v is None:
        return "-"
    return f"{v:,.1f}" if abs(v) >= 10 else f"{v:.3g}"


# --- the words: each rule, a deviation, a host, a note -----------------------------------------------------

OUTLIER_RULE = (f"robust z = (x - median) / ({F.MAD_SCALE} x MAD) over the model's units (MAD floored at "
                f"{F.MAD_FLOOR:.0%} of the median); |z| > {F.Z_LIMIT:g} is an outlier (Iglewicz-Hoaglin); "
                f"a model needs >= {F.MIN_UNITS} units")
HOST_RULE = (f"a host with >= {F.MIN_HOST_UNITS} units, every one slow in its model, is flagged as the host "
             f"(slot, HBA, PCIe); its units are not called bad")
FIRMWARE_RULE = (f"each firmware against the firmware most units run: Welch's t-test on the units' figures, "
                 f"two-sided at {1 - F.cmp.ALPHA:.0%}; called when significant and larger than "
                 f"{F.cmp.MIN_EFFECT:.0%}; units on a flagged host left out")


def deviation_text(d: F.Deviation) -> str:
    return (f"{d.figure.label} {_n(d.value)} {d.figure.unit} vs model median {_n(d.median)} "
            f"({d.change_pct:+.0f}%, z {d.z:+.1f})")


def host_text(h: F.HostFinding) -> str:
    return f"{len(h.slow)} of {len(h.units)} units slow"


def notes(fleet: F.Fleet) -> List[str]:
    return [f"{model}: {n} unit(s), fewer than {F.MIN_UNITS}: no outliers judged" for model, n in fleet.few]


def fleet_dict(fleet: F.Fleet) -> Dict[str, Any]:
    """The fleet as ``slogqual fleet --json`` prints it: its rules, figures and notes."""
    return {"rules": {"outlier": OUTLIER_RULE, "host": HOST_RULE, "firmware": FIRMWARE_RULE}, **F.to_dict(fleet),
            "notes": notes(fleet)}


# --- rows shared by text and HTML ------------------------------------------------------------------------

def model_rows(fleet: F.Fleet) -> Tuple[List[str], List[List[str]]]:
    profiles = sorted({p for m in fleet.models for p in m.verdicts})
    headers = ["model", "units", "hosts", "firmware"] + [f"{p} pass/fail" for p in profiles]
    rows = []
    for m in fleet.models:
        fw = ", ".join(f"{f} ({n})" for f, n in sorted(m.firmwares.items()))
        row = [m.model, str(len(m.units)), str(len(m.hosts)), fw]
        for p in profiles:
            c = m.verdicts.get(p, {})
            other = sum(n for v, n in c.items() if v not in ("pass", "fail"))
            row.append(f"{c.get('pass', 0)}/{c.get('fail', 0)}" + (f" (+{other} other)" if other else "")
                       if c else "-")
        rows.append(row)
    return headers, rows


def figure_rows(fleet: F.Fleet) -> Tuple[List[str], List[List[str]]]:
    headers = ["model", "figure", "units", "median", "spread (1.4826 MAD)", "min", "max", "unit"]
    rows = []
    for m in fleet.models:
        for fig in F.FIGURES:
            d = m.figures.get(fig.key)
            if d is None:
                continue
            rows.append([m.model, fig.label, str(d.n), _n(d.median), _n(1.4826 * d.mad), _n(d.lo), _n(d.hi), fig.unit])
    return headers, rows


def outlier_rows(fleet: F.Fleet) -> Tuple[List[str], List[List[str]]]:
    headers = ["model", "serial", "host", "slot / path", "firmware", "", "why"]
    rows = []
    for o in fleet.outliers:
        u = o.unit
        rows.append([u.model, u.serial or "-", u.host or "-", ", ".join(x for x in (u.slot, u.target) if x) or "-",
                     u.firmware or "-", "SLOW" if o.slow else "fast", "; ".join(deviation_text(d) for d in o.deviations)])
    return headers, rows


def host_rows(fleet: F.Fleet) -> Tuple[List[str], List[List[str]]]:
    headers = ["host", "units", "slow units", "", "units (model serial @ slot / path)"]
    rows = []
    for h in fleet.hosts:
        rows.append([h.host, str(len(h.units)), str(len(h.slow)), "HOST SLOW" if h.flagged else "ok",
                     "; ".join(f"{u.model} {u.name}" + (f" @ {', '.join(x for x in (u.slot, u.target) if x)}"
                                                         if (u.slot or u.target) else "") for u in h.units)])
    return headers, rows


def firmware_rows(fleet: F.Fleet) -> Tuple[List[str], List[List[str]]]:
    headers = ["model", "firmware", "vs", "figure", "units", "mean", "vs mean", "change", "p", "verdict"]
    rows = []
    for r in fleet.firmware:
        change = r.change_pct
        rows.append([r.model, r.firmware, r.reference, r.figure.label, f"{r.n}/{r.ref_n}", _n(r.mean),
                     _n(r.ref_mean), "-" if change is None else f"{change:+.1f}%",
                     "-" if r.test is None else f"{r.test.p:.3g}", r.verdict])
    return headers, rows


def shared_rows(fleet: F.Fleet) -> Tuple[List[str], List[List[str]]]:
    headers = ["host", "element", "link", "ceiling", "units behind it"]
    rows = [[host, sh.label, sh.link or "-", wording.ceiling_words(sh), ", ".join(sh.units)]
            for host, sh in fleet.shared]
    return headers, rows


NO_SHARED = "none: no host has two units with a recorded path to hardware that share an element"


def text(fleet: F.Fleet, store_name: str) -> str:
    out = [f"fleet of {sum(len(m.units) for m in fleet.models)} unit(s), {len(fleet.models)} model(s), "
           f"{len(fleet.hosts)} host(s) in {store_name}", ""]
    for title, (headers, rows), empty in (
            ("models", model_rows(fleet), "no units"),
            ("figures across units (each unit's latest sweep)", figure_rows(fleet), "no sweeps"),
            ("outliers", outlier_rows(fleet), "none: every unit within its model's distribution"),
            ("hosts", host_rows(fleet), "no hosts"),
            ("shared paths (what a host's units share on their paths from the host)", shared_rows(fleet), NO_SHARED),
            ("firmware", firmware_rows(fleet), "no model runs more than one firmware")):
        out.append(f"== {title}")
        out.append(tabulate(rows, headers=headers, disable_numparse=True) if rows else f"({empty})")
        out.append("")
    flagged = fleet.flagged_hosts
    out.append("flagged hosts: " + (", ".join(f"{h.host} ({host_text(h)})" for h in flagged) if flagged else "none"))
    out.append("outlier units: " + (", ".join(f"{o.unit.model} {o.unit.name} on {o.unit.where}"
                                              for o in fleet.outliers) if fleet.outliers else "none"))
    for note in notes(fleet):
        out.append(f"note: {note}")
    out.append(f"rule (outliers): {OUTLIER_RULE}")
    out.append(f"rule (hosts): {HOST_RULE}")
    out.append(f"rule (firmware): {FIRMWARE_RULE}")
    return "\n".join(out)


# --- the band chart -------------------------------------------------------------------------------------

def _yticks(lo: float, hi: float) -> List[float]:
    """Decades; with 1-2-5 steps between them when the range spans less than two decades."""
    decades = plots._decades(lo, hi)
    if hi / lo >= 100:
        return decades
    return [d * k for d in decades for k in (1, 2, 5) if lo <= d * k <= hi]


def band_script(m: F.ModelSummary, slow: Dict[str, str], output: str, fmt: str,
                size: Tuple[int, int] = CHART_SIZE) -> str:
    """gnuplot script: min-max band of the units' mean latency against IO size, the median, every unit
    thin (outliers and units on a flagged host in red, with their serial)."""
    values = [v for u in m.units for v in u.lat_us.values() if v > 0]
    ylo, yhi = min(values) / 1.6, max(values) * 1.6
    xt = plots.x_ticks(max(s for u in m.units for s in u.lat_us))
    out = [f"# slogqual fleet: {m.model}, {len(m.units)} units"]
    out += plots.preamble(output, fmt, size, f"{m.model}: mean sync-write latency of {len(m.units)} units vs IO size")
    out += ["set logscale xy 10", f"set xrange [{xt[0] / 1.25:g}:{xt[-1] * 1.25:g}]", f"set yrange [{ylo:g}:{yhi:g}]",
            'set xlabel "IO size (bytes, binary units)"', 'set ylabel "mean latency per synchronous write"',
            "set xtics (" + ", ".join(f"{plots._q(size_label(s))} {s}" for s in xt) + ") nomirror",
            "set ytics (" + ", ".join(f"{plots._q(plots._ytick_label(v, 'us'))} {v:g}"
                                      for v in _yticks(ylo, yhi)) + ") nomirror",
            "set mytics 10", "set tics out scale 0.8",
            'set grid xtics ytics mytics lc rgb "#d8d8d8" lw 1, lc rgb "#eeeeee" lw 0.5',
            'set border 3 lc rgb "#555555"',
            'set key outside right top vertical Left reverse noenhanced samplen 3 spacing 1.1 font ",9"']
    out.append("$band << EOD")
    out += [f"{s} {lo:.6g} {mid:.6g} {hi:.6g}" for s, lo, mid, hi in m.band]
    out.append("EOD")
    clauses = []
    if m.band:
        clauses.append(f'$band using 1:2:4 with filledcurves fc rgb "{BAND_COLOUR}" fs transparent solid 0.18 '
                       f'noborder title "all units (min-max)"')
    grey_titled = False
    for i, u in enumerate(m.units):
        pts = sorted(u.lat_us.items())
        if not pts:
            continue
        out.append(f"$u{i} << EOD")
        out += [f"{s} {v:.6g}" for s, v in pts]
        out.append("EOD")
        if u.name in slow:
            label = plots._q(f"{u.name} ({u.host or '?'}): {slow[u.name]}")
            clauses.append(f'$u{i} using 1:2 with linespoints lw 2 lc rgb "{SLOW_COLOUR}" pt 7 ps 0.6 title {label}')
        else:
            title = "title \"each unit\"" if not grey_titled else "notitle"
            grey_titled = True
            clauses.append(f'$u{i} using 1:2 with lines lw 1 lc rgb "{UNIT_COLOUR}" {title}')
    if m.band:
        clauses.append(f'$band using 1:3 with linespoints lw 2.5 lc rgb "{BAND_COLOUR}" pt 7 ps 0.7 title "median"')
    out.append("plot \\\n    " + ", \\\n    ".join(clauses))
    out.append("unset output")
    return "\n".join(out) + "\n"


def render_charts(fleet: F.Fleet) -> List[Chart]:
    slow_names = {o.unit.name: "outside" for o in fleet.outliers}
    slow_names.update({u.name: "host flagged" for h in fleet.flagged_hosts for u in h.units})
    charts: List[Chart] = []
    with tempfile.TemporaryDirectory(prefix="slogqual-fleet-") as tmp:
        for n, m in enumerate(fleet.models, 1):
            if not any(u.lat_us for u in m.units):
                continue
            out = os.path.join(tmp, f"m{n}.svg")
            gnuplot.check_version()
            gnuplot.run_script(band_script(m, slow_names, out, "svg"), out)
            caption = (f"{m.model}: mean latency of a synchronous write against IO size, {len(m.units)} units; "
                       f"the band spans all units, the blue line is their median; red: outliers and units on a "
                       f"flagged host")
            with open(out, encoding="utf-8") as fh:
                charts.append(Chart(f"model-{n}", caption, inline_svg(fh.read(), f"f{n}", caption), []))
    return charts


# --- HTML ----------------------------------------------------------------------------------------------

FLEET_CSS = """
.finding { border-radius: 6px; padding: 8px 12px; margin: 8px 0; background: var(--bad-bg);
           border-left: 5px solid var(--bad); }
.ok { border-radius: 6px; padding: 8px 12px; margin: 8px 0; background: var(--good-bg); border-left: 5px solid var(--good); }
p.rule { color: var(--muted); font-size: 12px; }
"""


def _shared_html(fleet: F.Fleet) -> str:
    """Which units of a host share what on their paths: the element, its ceiling, the units behind it."""
    headers, rows = shared_rows(fleet)
    out = ['<h2 id="shared-paths">Shared paths</h2>', f'<p class="meta">{_e(wording.SHARED_LEAD)}</p>']
    if not rows:
        return "\n".join(out + [f'<p class="meta">{_e(NO_SHARED)}</p>'])
    out.append(_table(headers, rows))
    out.append('<ul class="notes">' + "".join(f"<li>{_e(wording.shared_element(sh, host))}</li>"
                                              for host, sh in fleet.shared if sh.ceiling is not None) + "</ul>")
    return "\n".join(out)


def build_html(fleet: F.Fleet, charts: Sequence[Chart], store_name: str, title: str = "") -> str:
    title = title or "SLOG fleet: " + ", ".join(m.model for m in fleet.models[:4]) + (" …" if len(fleet.models) > 4 else "")
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    units = sum(len(m.units) for m in fleet.models)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f'<meta name="generator" content="slogqual {_e(__version__)}">',
           f"<title>{_e(title)}</title><style>{CSS}{FLEET_CSS}</style></head><body>",
           f"<h1>{_e(title)}</h1>",
           f'<p class="meta">Generated {_e(now)} by slogqual {_e(__version__)} from the result store {_e(store_name)}: '
           f"{units} unit(s) of {len(fleet.models)} model(s) on {len(fleet.hosts)} host(s); each unit's latest "
           f"sweep and its latest verdict per profile.</p>", "<h2>Findings</h2>"]
    for h in fleet.flagged_hosts:
        out.append(f'<div class="finding"><strong>Host {_e(h.host)}</strong>: every unit slow ({_e(host_text(h))}) — '
                   f"look at the host (slot, HBA, PCIe), not the units: "
                   + _e("; ".join(f"{u.model} {u.name} @ {u.slot or u.target or '?'}" for u in h.units)) + "</div>")
    for o in fleet.outliers:
        u = o.unit
        out.append(f'<div class="finding"><strong>{_e(u.model)} {_e(u.name)}</strong> on {_e(u.where)} '
                   f"({'slow' if o.slow else 'fast'}): " + _e("; ".join(deviation_text(d) for d in o.deviations)) + "</div>")
    if not fleet.flagged_hosts and not fleet.outliers:
        out.append('<div class="ok">Every unit within its model\'s distribution; no host flagged.</div>')
    for title_, (headers, rows), numeric in (("Models", model_rows(fleet), 1),
                                             ("Figures across units", figure_rows(fleet), 2)):
        out.append(f"<h2>{title_}</h2>")
        out.append(_table(headers, rows, numeric_from=numeric) if rows else '<p class="meta">none</p>')
    out.append("<h2>Latency against IO size, per model</h2>")
    for n, c in enumerate(charts, 1):
        out.append(f'<figure id="chart-{_e(c.key)}">{c.svg}<figcaption>Figure {n}. {_e(c.caption)}</figcaption></figure>')
    for title_, (headers, rows), empty in (("Outliers", outlier_rows(fleet), "none"),
                                           ("Hosts", host_rows(fleet), "none"),
                                           ("Firmware", firmware_rows(fleet), "no model runs more than one firmware")):
        if title_ == "Firmware":
            out.append(_shared_html(fleet))
        out.append(f"<h2>{title_}</h2>")
        out.append(_table(headers, rows) if rows else f'<p class="meta">{_e(empty)}</p>')
    out += [f'<p class="rule">{_e(x)}</p>' for x in notes(fleet)]
    out += [f'<p class="rule">Rule ({k}): {_e(v)}</p>' for k, v in (("outliers", OUTLIER_RULE), ("hosts", HOST_RULE),
                                                                    ("firmware", FIRMWARE_RULE))]
    out.append(f"<footer>slogqual {_e(__version__)} · fleet view · this file is self-contained "
               "(no scripts, no external resources).</footer></body></html>")
    return "\n".join(out) + "\n"

