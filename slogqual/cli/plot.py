"""slogqual plot: gnuplot pictures of sweeps (latency, ops/s, MiB/s, p99 against IO size)."""

from __future__ import annotations

import sys

from slogqual.cli.options import add_force, guard_output, named
from slogqual.errors import UsageError
from slogqual.outputs import picture, text_mark
from slogqual.report import overtime_plot
from slogqual.report import plot as plots
from slogqual.units import parse_size
from slogqual.report.inputs import load_results


def _size(text: str):
    try:
        w, h = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise UsageError(f"bad --size {text!r}: use WIDTHxHEIGHT in pixels, e.g. 1000x600") from None
    if not (200 <= w <= 10000 and 150 <= h <= 10000):
        raise UsageError(f"--size {text} is out of range (200x150 to 10000x10000)")
    return w, h


def register(sub) -> None:
    p = sub.add_parser("plot", help="draw sweeps with gnuplot: a metric against IO size, log-log, one line per device",
                       description="Draw one or more sweep results (slogqual sweep or import) with gnuplot, "
                                   "one line per result, the device model (or path) in the key.")
    p.add_argument("results", nargs="+", metavar="RESULT.json")
    p.add_argument("--over-time", action="store_true",
                   help="latency (mean, p99, max) and bandwidth per interval over the run of one size of one "
                        "pair-engine sweep (a --sustain run, or the size given with --bs)")
    p.add_argument("--bs", metavar="SIZE", help="with --over-time: the IO size to draw (e.g. 4k)")
    p.add_argument("-o", "--output", type=named("a picture file"), required=True, metavar="FILE.png|FILE.svg", help="picture to write")
    p.add_argument("--metric", choices=sorted(plots.METRICS), default="latency",
                   help="latency (mean, default), p99, iops (writes per second) or mbps (MiB/s)")
    p.add_argument("--bands", action="store_true",
                   help="shade the reference device classes of the SDC 2019 talk (latency, p99 and iops only)")
    p.add_argument("--label", action="append", metavar="TEXT",
                   help="key title for each result, in order (default: device model, else path)")
    p.add_argument("--title", help="chart title")
    p.add_argument("--size", default="1000x600", metavar="WxH", help="picture size in pixels (default 1000x600)")
    p.add_argument("--format", choices=plots.FORMATS, help="png or svg (default: from the file name)")
    p.add_argument("--script", type=named("a gnuplot script file"), metavar="FILE.gp", help="also keep the generated gnuplot script")
    add_force(p, "picture or gnuplot script")
    p.set_defaults(func=run)


def run(args) -> int:
    size = _size(args.size)
    fmt = plots.output_format(args.output, args.format)
    guard_output(args, args.output, "picture", picture, inputs=args.results)
    if args.script:
        guard_output(args, args.script, "gnuplot script", text_mark("# slogqual"), inputs=args.results)
    if args.bs is not None and not args.over_time:
        raise UsageError("--bs chooses the size of --over-time; give --over-time too")
    if args.over_time:
        return _over_time(args, fmt, size)
    results = load_results(args.results)
    spec = plots.build_spec(results, args.metric, bands=args.bands, labels=args.label, title=args.title)
    if args.bands and not spec.bands:
        print(f"slogqual: note: no reference bands on a {args.metric} axis", file=sys.stderr)
    for note in spec.notes:
        print(f"slogqual: note: {note}", file=sys.stderr)
    plots.render(spec, args.output, fmt, size, keep_script=args.script)
    print(args.output)
    return 0


def _over_time(args, fmt, size) -> int:
    if len(args.results) != 1:
        raise UsageError(f"--over-time draws one result, not {len(args.results)}")
    if args.metric != "latency" or args.bands:
        raise UsageError("--over-time draws latency and bandwidth together: --metric and --bands do not apply")
    bs = parse_size(args.bs) if args.bs is not None else None
    result = load_results(args.results)[0]
    spec = overtime_plot.build_spec(result, bs, label=(args.label or [None])[0], title=args.title)
    if spec.point.collapse and spec.point.collapse.get("why"):
        print(f"slogqual: {spec.point.collapse['why']}", file=sys.stderr)
    overtime_plot.render(spec, args.output, fmt, size, keep_script=args.script)
    print(args.output)
    return 0
