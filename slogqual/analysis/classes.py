"""Reference device classes (BRIEF.md "Reference figures", from the SDC 2019 talk) and a classifier.

The talk quotes single-threaded sync-write latency at small IO sizes per class,
sometimes as a range ("10–30 ms", "20–30 µs") and sometimes as an approximate
value ("~1 ms", "~0.1 ms", "~2.5 µs"). A band here is the quoted range, or
half to twice an approximate value, widened to the ops/s the talk gives for the
same class where that reaches further. Bands are guidance for a reader's eye and
for plain words (slogqual.report.classes), not pass/fail limits.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace
from typing import List, Optional, Sequence, Tuple

from slogqual.results import SweepResult
from slogqual.units import KiB


@dataclass(frozen=True)
class RefClass:
    key: str
    name: str  # plain words, used as "<name>-class"
    lat_lo_us: float
    lat_hi_us: float
    quoted: str  # what the talk says
    examples: str
    colour: str  # band fill in plots and reports

    @property
    def iops_lo(self) -> float:
        return 1e6 / self.lat_hi_us

    @property
    def iops_hi(self) -> float:
        return 1e6 / self.lat_lo_us

    def contains(self, lat_us: float) -> bool:
        return self.lat_lo_us <= lat_us <= self.lat_hi_us


# Fastest first.
REFERENCE_CLASSES: List[RefClass] = [
    RefClass("nvdimm", "NVDIMM", 1.25, 5.0, "~2.5 µs, ~400k ops/s (mirrored to the partner controller)",
             "16 GB NVDIMM", "#b07aa1"),
    RefClass("nvme", "enterprise NVMe / Optane", 10.0, 40.0,
             "20–30 µs, 60–80k ops/s; Optane tens of µs, ~100k ops/s",
             "PM1725a, SN150, SSD 750, Optane 900P, Optane M.2", "#59a14f"),
    RefClass("sas", "enterprise SAS SSD", 50.0, 200.0, "~0.1 ms, ~10k ops/s; capped by 6/12G SAS at large sizes",
             "HGST SS300, SSD800MH, ZeusRAM", "#4e79a7"),
    RefClass("sata", "SATA flash", 500.0, 2000.0,
             "~1 ms, ~1,000 ops/s: consumer and enterprise SATA SSDs, consumer NVMe, SSHD",
             "MX300, DC S3700 (PLP), 960 EVO (no PLP), SSHD", "#f28e2b"),
    RefClass("hdd", "7.2K HDD", 8000.0, 30000.0, "10–30 ms, ~60–120 ops/s", "2.5\" laptop HDD, 10 TB helium HDD",
             "#9c755f"),
]

SMALL_IO_MAX = 4 * KiB  # "small IO" for the class: the ZIL's common 4K-and-under writes
PLATEAU_FRACTION = 0.9  # within 10% of the peak counts as on the plateau
RISING_STEP = 1.10  # still gaining more than 10% per doubling at the largest size
FALL_FRACTION = 0.7  # the largest size below 70% of the peak: bandwidth falls off


def fmt_us(us: float) -> str:
    """138.3 -> '138 µs', 2092.9 -> '2.09 ms', 2.5 -> '2.5 µs'."""
    if us >= 1e6:
        return f"{us / 1e6:.3g} s"
    if us >= 1000:
        return f"{us / 1000:.3g} ms"
    return f"{us:.3g} µs"


def fmt_band(c: RefClass) -> str:
    return f"{fmt_us(c.lat_lo_us)}–{fmt_us(c.lat_hi_us)}"


def by_key(key: str) -> RefClass:
    for c in REFERENCE_CLASSES:
        if c.key == key:
            return c
    raise KeyError(key)


@dataclass(frozen=True)
class BandwidthShape:
    """How the bandwidth runs over the swept sizes: still ``rising`` at the largest, peaking and ``falls``
    off, ``highest`` at the largest, or ``capped`` on a plateau from ``start_size`` up."""

    kind: str
    peak_mbps: float
    peak_size: int
    last_mbps: float
    last_size: int
    start_size: Optional[int] = None


@dataclass
class Classification:
    """Which reference class a sweep's curve matches (slogqual.report.classes says it in plain words)."""

    small_io_latency_us: Optional[float]
    small_io_sizes: List[int]
    class_key: Optional[str]  # the band it falls in, or the nearest
    in_band: bool
    peak_mbps: Optional[float] = None
    plateau_from: Optional[int] = None
    place: str = "none"  # the latency: "in" a band, "below" every band, "above" every band, "between" two; none
    between: Optional[Tuple[str, str]] = None  # "between": the faster class and the slower one
    stack: Optional[str] = None  # a target that is not one physical device: its kind (STACK_KINDS)
    bandwidth: Optional[BandwidthShape] = None  # None: fewer than three sizes with a bandwidth

    @property
    def judged_above_small(self) -> bool:
        """No point at 4K or below: the class is judged at the smallest size swept."""
        return bool(self.small_io_sizes) and self.small_io_sizes[0] > SMALL_IO_MAX


def _place(lat: float) -> Tuple[str, str, Optional[Tuple[str, str]]]:
    """(where the latency falls, the class it is judged, the classes around it): in a band, below or above
    every band, or between two (nearer the one it is judged)."""
    for c in REFERENCE_CLASSES:
        if c.contains(lat):
            return "in", c.key, None
    fastest, slowest = REFERENCE_CLASSES[0], REFERENCE_CLASSES[-1]
    if lat < fastest.lat_lo_us:
        return "below", fastest.key, None
    if lat > slowest.lat_hi_us:
        return "above", slowest.key, None
    for faster, slower in zip(REFERENCE_CLASSES, REFERENCE_CLASSES[1:]):
        if faster.lat_hi_us < lat < slower.lat_lo_us:
            d_fast = math.log(lat / faster.lat_hi_us)
            d_slow = math.log(slower.lat_lo_us / lat)
            near = faster if d_fast <= d_slow else slower
            return "between", near.key, (faster.key, slower.key)
    raise AssertionError("bands cover the axis")  # pragma: no cover


def _bandwidth(result: SweepResult) -> Optional[BandwidthShape]:
    pts = [p for p in result.points if p.mbps and p.mbps > 0]
    if len(pts) < 3:
        return None
    peak = max(pts, key=lambda p: p.mbps)
    last, prev = pts[-1], pts[-2]
    shape = BandwidthShape("", peak.mbps, peak.size, last.mbps, last.size)
    if last is peak and last.mbps > prev.mbps * RISING_STEP:
        return replace(shape, kind="rising")
    if last.mbps < FALL_FRACTION * peak.mbps:
        return replace(shape, kind="falls")
    start = next(p for p in pts if p.mbps >= PLATEAU_FRACTION * peak.mbps)
    if start is last:
        return replace(shape, kind="highest")
    return replace(shape, kind="capped", start_size=start.size)


STACK_KINDS = ("file", "scratch", "nbd", "loop", "virtual")


def _stack_target(result: SweepResult) -> Optional[str]:
    """The kind of a target that is not one physical device (a file, an nbd export, a virtual disk)."""
    kind = (result.target or {}).get("kind")
    dev = result.device if isinstance(result.device, dict) else {}
    dev_class, transport = dev.get("class"), dev.get("transport")
    return next((k for k in (kind, transport, dev_class) if k in STACK_KINDS), None)


def classify(result: SweepResult) -> Classification:
    """Which reference class a sweep's curve matches."""
    pts = [p for p in result.points if p.lat_us and p.lat_us.mean and p.lat_us.mean > 0]
    if not pts:
        return Classification(None, [], None, False)
    small = [p for p in pts if p.size <= SMALL_IO_MAX] or [pts[0]]
    lat = statistics.median(p.lat_us.mean for p in small)
    place, key, between = _place(lat)
    bw = _bandwidth(result)
    return Classification(lat, [p.size for p in small], key, place == "in", bw.peak_mbps if bw else None,
                          bw.start_size if bw else None, place, between, _stack_target(result), bw)


def classes_for_axis(lo: float, hi: float, metric: str) -> Sequence[RefClass]:
    """Bands that overlap a plotted y range (µs for latency metrics, ops/s for iops)."""
    out = []
    for c in REFERENCE_CLASSES:
        a, b = (c.lat_lo_us, c.lat_hi_us) if metric != "iops" else (c.iops_lo, c.iops_hi)
        if b >= lo and a <= hi:
            out.append(c)
    return out
