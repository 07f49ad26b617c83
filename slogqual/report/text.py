"""Text renderings of a sweep: a tabulate table, and FreeBSD diskinfo -wS lines."""

from __future__ import annotations

from typing import List, Optional

from tabulate import tabulate

from slogqual.results import LAT_BASIS_FLUSH_BOUND, SweepResult
from slogqual.units import size_label


def _num(v: Optional[float], fmt: str = "{:.1f}") -> str:
    return "-" if v is None else fmt.format(v)


def sweep_title(result: SweepResult) -> str:
    dev = result.device or {}
    name = " ".join(str(x) for x in (dev.get("vendor"), dev.get("model")) if x) or result.target.get("path")
    p = result.params
    sustain = p.get("sustain") or {}
    if sustain.get("duration_s") is not None:
        how = f"sustain={sustain['duration_s']:g}s"
    elif sustain.get("bytes") is not None:
        how = f"sustain={sustain['bytes']}B"
    else:
        how = f"runtime={p.get('runtime_s')}s"
        if p.get("precision") is not None:
            how += f" precision=±{p['precision']:.1%} (max {p.get('max_runtime_s')}s)"
    return (f"{name} ({result.target.get('kind')}, {result.target.get('path')}): "
            f"mode={p.get('mode')}{' engine=pair' if p.get('engine') == 'pair' else ''} "
            f"{how} direct={p.get('direct')} [{result.status}]")


def sweep_table(result: SweepResult) -> str:
    rows = []
    bound = False
    with_ci = any(pt.mean_ci95_us for pt in result.points)
    for pt in result.points:
        mark = "*" if pt.lat_basis == LAT_BASIS_FLUSH_BOUND else ""
        bound = bound or bool(mark)
        ci = ([f"±{pt.mean_ci95_us['half_width']:.1f}" if pt.mean_ci95_us else "-"] if with_ci else [])
        rows.append([size_label(pt.size), _num(pt.lat_us.mean), *ci, _num(pt.lat_us.p99) + mark,
                     _num(pt.lat_us.max) + mark, _num(pt.iops, "{:.0f}"), _num(pt.mbps, "{:.2f}"), pt.ios])
    headers = ["size", "mean µs", *(["95% CI"] if with_ci else []), "p99 µs", "max µs", "IOPS", "MiB/s", "IOs"]
    lines: List[str] = [sweep_title(result), tabulate(rows, headers=headers, disable_numparse=True,
                                                      colalign=("right",) * len(headers))]
    if bound:
        lines.append("* write+flush upper bound from fio's separate write and flush percentiles (mean is exact)")
    if with_ci:
        lines.append("95% CI: half-width of the 95 % confidence interval of the mean (batch means, 30 batches)")
    temps = [(pt.thermal["temperature_c"] or {}) for pt in result.points if pt.thermal and pt.thermal.get("available")]
    if temps:
        first, last = temps[0].get("before"), temps[-1].get("after")
        throttled = any(pt.thermal.get("throttled") for pt in result.points if pt.thermal)
        source = next(pt.thermal.get("source") for pt in result.points if pt.thermal and pt.thermal.get("available"))
        lines.append(f"thermal ({source}): {first if first is not None else '?'} °C before the first size, "
                     f"{last if last is not None else '?'} °C after the last; "
                     + ("a throttling counter rose (see the warnings)" if throttled else "no throttling counter rose"))
    for pt in result.points:
        for note in pt.notes:
            lines.append(f"{size_label(pt.size)}: {note}")
        if pt.collapse:
            lines.append(f"{size_label(pt.size)} sustained: {pt.collapse['why']}")
    for note in result.notes:
        lines.append(f"note: {note}")
    for w in result.warnings:
        lines.append(f"WARNING: {w}")
    if result.error:
        lines.append(f"error: {result.error}")
    return "\n".join(lines)


def diskinfo_usec_per_io(pt) -> float:
    """diskinfo's usec/IO: elapsed time over the IOs done (dt * 1e6 / count in slogbench()), the
    same timing its Mbytes/s comes from, so the two columns agree as they do in diskinfo. fio's
    latency mean is slightly lower: it leaves out fio's own time between IOs."""
    if pt.runtime_ms and pt.ios:
        return pt.runtime_ms * 1000.0 / pt.ios
    return pt.lat_us.mean


def diskinfo_lines(result: SweepResult) -> str:
    """The 'Synchronous random writes:' block exactly as diskinfo.c slogbench() prints it."""
    out = ["Synchronous random writes:"]
    for pt in result.points:
        out.append("\t%4.4g kbytes: " % (pt.size / 1024)
                   + "%8.1f usec/IO = %8.1f Mbytes/s" % (diskinfo_usec_per_io(pt), pt.mbps))
    return "\n".join(out)
