"""A sweep's reference class (analysis/classes.py) in plain words: where its small-IO latency falls among the
bands, how its bandwidth runs over the sizes, and the note when no point was 4K or below — as the report's
device section and ``slogqual import`` say it.
"""

from __future__ import annotations

from typing import List

from slogqual.analysis.classes import SMALL_IO_MAX, Classification, by_key, fmt_band, fmt_us
from slogqual.units import size_label


def latency_words(c: Classification) -> str:
    if c.place == "none":
        return "no latency measured"
    lat, judged = fmt_us(c.small_io_latency_us), by_key(c.class_key)
    if c.place == "in":
        words = f"{judged.name}-class small-IO latency ({lat}; band {fmt_band(judged)})"
    elif c.place == "below":
        words = (f"small-IO latency of {lat} is below every reference class (NVDIMM is ~2.5 µs): "
                 "check that the flushes reach stable media")
    elif c.place == "above":
        words = f"small-IO latency of {lat} is slower than the 7.2K HDD class ({fmt_band(judged)})"
    else:
        faster, slower = (by_key(k) for k in c.between)
        words = (f"small-IO latency of {lat} lies between the {faster.name} class ({fmt_band(faster)}) "
                 f"and the {slower.name} class ({fmt_band(slower)}), nearer {judged.name}")
    if c.stack:
        return f"a {c.stack} target (the class of the whole stack under it): {words}"
    return words


def bandwidth_words(c: Classification) -> str:
    b = c.bandwidth
    if b is None:
        return ""
    if b.kind == "rising":
        return f"bandwidth still rising at {size_label(b.last_size)} ({b.last_mbps:.0f} MiB/s): no cap reached"
    if b.kind == "falls":
        return (f"bandwidth peaks at {b.peak_mbps:.0f} MiB/s at {size_label(b.peak_size)} and falls to "
                f"{b.last_mbps:.0f} MiB/s at {size_label(b.last_size)}")
    if b.kind == "highest":
        return f"bandwidth highest at {size_label(b.last_size)} ({b.last_mbps:.0f} MiB/s)"
    return f"bandwidth-capped at ~{b.peak_mbps:.0f} MiB/s from {size_label(b.start_size)} up"


def summary(c: Classification) -> str:
    """The class in one line: the latency's words, then the bandwidth's."""
    return "; ".join(w for w in (latency_words(c), bandwidth_words(c)) if w)


def notes(c: Classification) -> List[str]:
    if c.judged_above_small:
        return [f"no point at {size_label(SMALL_IO_MAX)} or below: the class is judged at "
                f"{size_label(c.small_io_sizes[0])}"]
    return []
