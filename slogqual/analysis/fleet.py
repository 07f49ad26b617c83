"""The fleet view: many units of each model, measured on many hosts; which unit, which host, which firmware
stands out. Pure functions on :class:`Unit` records (slogqual/store/fleet.py builds them from a store).

Rules (each also stated in every output, in the words of slogqual/report/fleet.py's RULES):

* **Distribution** of a figure across a model's units: median and MAD (median absolute deviation);
  the spread shown is the MAD scaled to a standard deviation (× 1.4826, exact for a normal distribution).
* **Outlier**: a unit whose figure has a robust z = (x − median) / (1.4826 × MAD) beyond ±3.5 — the
  modified z-score of Iglewicz and Hoaglin. Median and MAD are not moved by the outliers themselves, as
  mean and standard deviation are. The MAD is floored at 2 % of the median, so that units that are all
  but identical do not turn 1 % of noise into an outlier. A model needs at least 3 units to be judged.
  Slow: latency above, or bandwidth below; fast: the other way.
* **Host**: a host with at least 2 units, every one of them slow, is flagged as the host (a slot, an HBA,
  its PCIe, its kernel): its units are listed under it, not as bad units. A host with one unit cannot
  be told from its unit.
* **Firmware**: a model's units split by firmware; every other firmware is compared with the firmware
  that most of its units run, figure by figure, with Welch's t-test on the units' figures
  (slogqual/analysis/compare.py, two-sided, 95 %); a difference is called only when significant and larger
  than the minimum effect (10 %). Units on a flagged host are left out (their figures are the host's).
* **Shared paths**: per host, every element of its units' recorded paths from the host (device record's
  ``topology``: PCIe ports, the HBA, SAS ports and expanders) that two units or more share, with its link's
  ceiling (slogqual/analysis/shelf.py): the units behind it together get no more than that.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from slogqual.analysis import compare as cmp
from slogqual.analysis import shelf
from slogqual.results.shelf import UnitPath

Z_LIMIT = 3.5
MAD_SCALE = 1.4826  # MAD -> standard deviation of a normal distribution
MAD_FLOOR = 0.02  # of the median
MIN_UNITS = 3
MIN_HOST_UNITS = 2



@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    size: int
    field: str  # "lat" (mean latency, µs) or "mbps"
    unit: str
    worse_high: bool  # latency: higher is worse; bandwidth: lower is worse


FIGURES: Tuple[Figure, ...] = (
    Figure("lat_4k", "4 KiB mean latency", 4096, "lat", "µs", True),
    Figure("lat_128k", "128 KiB mean latency", 131072, "lat", "µs", True),
    Figure("mbps_4k", "4 KiB bandwidth", 4096, "mbps", "MiB/s", False),
    Figure("mbps_128k", "128 KiB bandwidth", 131072, "mbps", "MiB/s", False),
)


@dataclass
class Unit:
    """One device: its latest sweep's figures and its latest verdict per profile."""

    model: str
    serial: Optional[str]
    firmware: Optional[str] = None
    host: Optional[str] = None
    target: Optional[str] = None
    slot: Optional[str] = None
    run_id: Optional[int] = None
    started: Optional[str] = None
    lat_us: Dict[int, float] = field(default_factory=dict)  # size -> mean latency of a sync write
    mbps: Dict[int, float] = field(default_factory=dict)
    verdicts: Dict[str, str] = field(default_factory=dict)  # profile -> verdict
    topology: Optional[UnitPath] = None  # its path from the host, as its latest run recorded it

    @property
    def name(self) -> str:
        return self.serial or f"{self.host or '?'}:{self.target or '?'}"

    @property
    def where(self) -> str:
        """host, slot/path: where to go and look."""
        place = ", ".join(x for x in (self.slot, self.target) if x)
        return f"{self.host or 'unknown host'}" + (f" ({place})" if place else "")

    def value(self, fig: Figure) -> Optional[float]:
        v = (self.lat_us if fig.field == "lat" else self.mbps).get(fig.size)
        return v if v is not None and math.isfinite(v) and v > 0 else None


@dataclass
class Distribution:
    n: int
    median: float
    mad: float
    spread: float  # MAD x 1.4826, floored
    lo: float
    hi: float

    def to_dict(self) -> Dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Deviation:
    figure: Figure
    value: float
    median: float
    z: float

    @property
    def slow(self) -> bool:
        return (self.z > 0) == self.figure.worse_high

    @property
    def change_pct(self) -> float:
        """The value against the model's median, in per cent (0 where the median is 0)."""
        return (self.value / self.median - 1) * 100 if self.median else 0.0

    def to_dict(self) -> Dict[str, Any]:
        return {"figure": self.figure.key, "value": self.value, "median": self.median, "z": self.z,
                "slow": self.slow}


@dataclass
class Outlier:
    unit: Unit
    deviations: List[Deviation]

    @property
    def slow(self) -> bool:
        return any(d.slow for d in self.deviations)


@dataclass
class HostFinding:
    host: str
    units: List[Unit]
    slow: List[Outlier]
    flagged: bool


@dataclass
class FirmwareRow:
    model: str
    firmware: str
    reference: str
    figure: Figure
    n: int
    ref_n: int
    mean: Optional[float]
    ref_mean: Optional[float]
    test: Optional[cmp.Welch]
    verdict: str

    @property
    def change_pct(self) -> Optional[float]:
        if self.mean is None or not self.ref_mean:
            return None
        return (self.mean / self.ref_mean - 1) * 100


@dataclass
class ModelSummary:
    model: str
    units: List[Unit]
    hosts: List[str]
    firmwares: Dict[str, int]
    verdicts: Dict[str, Dict[str, int]]  # profile -> verdict -> units
    figures: Dict[str, Distribution]
    band: List[Tuple[int, float, float, float]]  # (size, min, median, max) of mean latency across units
    judged: bool  # enough units for outliers


@dataclass
class Fleet:
    models: List[ModelSummary]
    outliers: List[Outlier]  # units outside their model's distribution, hosts' units excluded
    hosts: List[HostFinding]
    firmware: List[FirmwareRow]
    few: List[Tuple[str, int]] = field(default_factory=list)  # (model, units) too few to judge outliers in
    shared: List[Tuple[str, shelf.Shared]] = field(default_factory=list)  # (host, element its units share)

    @property
    def flagged_hosts(self) -> List[HostFinding]:
        return [h for h in self.hosts if h.flagged]


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


def mad(xs: Sequence[float]) -> float:
    m = median(xs)
    return median([abs(x - m) for x in xs])


def distribution(xs: Sequence[float]) -> Distribution:
    m, d = median(xs), mad(xs)
    return Distribution(len(xs), m, d, max(MAD_SCALE * d, MAD_FLOOR * abs(m)), min(xs), max(xs))


def robust_z(x: float, dist: Distribution) -> float:
    return (x - dist.median) / dist.spread if dist.spread > 0 else 0.0


def _unit_key(u: Unit) -> Tuple[str, str]:
    return (u.model, u.name)


def analyse(units: Sequence[Unit]) -> Fleet:
    by_model: Dict[str, List[Unit]] = {}
    for u in units:
        by_model.setdefault(u.model, []).append(u)
    models: List[ModelSummary] = []
    deviations: Dict[Tuple[str, str], List[Deviation]] = {}
    few: List[Tuple[str, int]] = []
    for model in sorted(by_model):
        us = sorted(by_model[model], key=lambda u: u.name)
        figures: Dict[str, Distribution] = {}
        for fig in FIGURES:
            values = [v for v in (u.value(fig) for u in us) if v is not None]
            if values:
                figures[fig.key] = distribution(values)
        judged = len(us) >= MIN_UNITS
        if not judged:
            few.append((model, len(us)))
        else:
            for u in us:
                for fig in FIGURES:
                    v, dist = u.value(fig), figures.get(fig.key)
                    if v is None or dist is None or dist.n < MIN_UNITS:
                        continue
                    z = robust_z(v, dist)
                    if abs(z) > Z_LIMIT:
                        deviations.setdefault(_unit_key(u), []).append(Deviation(fig, v, dist.median, z))
        sizes = sorted({s for u in us for s in u.lat_us})
        band = []
        for s in sizes:
            vs = [u.lat_us[s] for u in us if u.lat_us.get(s)]
            if len(vs) >= 2:
                band.append((s, min(vs), median(vs), max(vs)))
        verdicts: Dict[str, Dict[str, int]] = {}
        for u in us:
            for profile, verdict in u.verdicts.items():
                counts = verdicts.setdefault(profile, {})
                counts[verdict] = counts.get(verdict, 0) + 1
        firmwares: Dict[str, int] = {}
        for u in us:
            firmwares[u.firmware or "unknown"] = firmwares.get(u.firmware or "unknown", 0) + 1
        models.append(ModelSummary(model, us, sorted({u.host or "unknown" for u in us}), firmwares, verdicts,
                                   figures, band, judged))
    # hosts: every unit slow -> the host
    by_host: Dict[str, List[Unit]] = {}
    for u in units:
        by_host.setdefault(u.host or "unknown", []).append(u)
    hosts: List[HostFinding] = []
    on_flagged = set()
    for host in sorted(by_host):
        hu = sorted(by_host[host], key=lambda u: (u.model, u.name))
        slow = [Outlier(u, deviations[_unit_key(u)]) for u in hu
                if any(d.slow for d in deviations.get(_unit_key(u), []))]
        flagged = host != "unknown" and len(hu) >= MIN_HOST_UNITS and len(slow) == len(hu)
        if flagged:
            on_flagged.update(_unit_key(u) for u in hu)
        hosts.append(HostFinding(host, hu, slow, flagged))
    outliers = [Outlier(u, deviations[_unit_key(u)]) for m in models for u in m.units
                if _unit_key(u) in deviations and _unit_key(u) not in on_flagged]
    firmware = _firmware(models, on_flagged)
    return Fleet(models, outliers, hosts, firmware, few, shared_paths(units))


def shared_paths(units: Sequence[Unit]) -> List[Tuple[str, shelf.Shared]]:
    """(host, element) for every element of a host's paths that two of its units or more share, each unit
    named by model and serial. Units without a known host are left out: their paths' keys (sysfs paths)
    name an element on one machine only."""
    paths = [(u.host, UnitPath(f"{u.model} {u.name}", u.topology.elements)) for u in
             sorted(units, key=lambda u: (u.host or "", u.model, u.name)) if u.host and u.topology is not None]
    return [(host or "", s) for host, s in shelf.shared_on_hosts(paths)]


def _sample(values: Sequence[float]) -> cmp.Sample:
    n = len(values)
    return cmp.Sample(n=n, mean=statistics.fmean(values), sd=statistics.stdev(values) if n >= 2 else None)


def _firmware(models: Sequence[ModelSummary], left_out: set) -> List[FirmwareRow]:
    rows: List[FirmwareRow] = []
    for m in models:
        groups: Dict[str, List[Unit]] = {}
        for u in m.units:
            if _unit_key(u) not in left_out:
                groups.setdefault(u.firmware or "unknown", []).append(u)
        if len(groups) < 2:
            continue
        # the reference: the firmware most of the model's units run (counted before leaving any out)
        reference = sorted(groups, key=lambda f: (-m.firmwares.get(f, 0), f))[0]
        for fw in sorted(groups):
            if fw == reference:
                continue
            for fig in FIGURES:
                a = [v for v in (u.value(fig) for u in groups[reference]) if v is not None]
                b = [v for v in (u.value(fig) for u in groups[fw]) if v is not None]
                if not a or not b:
                    continue
                sa, sb = _sample(a), _sample(b)
                test = cmp.welch(sa, sb)
                if test is None:
                    verdict = "cannot judge (fewer than 2 units on a side)"
                elif not test.significant:
                    verdict = cmp.NOT_SIGNIFICANT
                else:
                    worse = (sb.mean > sa.mean) == fig.worse_high
                    effect = abs(sb.mean / sa.mean - 1) if sa.mean else math.inf
                    if effect <= cmp.MIN_EFFECT:
                        verdict = cmp.UNDER_FLOOR
                    else:
                        verdict = "slower" if worse else "faster"
                rows.append(FirmwareRow(m.model, fw, reference, fig, sb.n, sa.n, sb.mean, sa.mean, test, verdict))
    return rows


def _finite(v: Optional[float]) -> Optional[float]:
    return v if v is not None and math.isfinite(v) else None  # JSON has no infinity


def to_dict(fleet: Fleet) -> Dict[str, Any]:
    """The fleet's figures (report/fleet.fleet_dict puts its rules and notes in words around them)."""
    def unit(u: Unit) -> Dict[str, Any]:
        return {"model": u.model, "serial": u.serial, "firmware": u.firmware, "host": u.host, "target": u.target,
                "slot": u.slot, "run": u.run_id, "started": u.started, "verdicts": u.verdicts,
                "figures": {f.key: u.value(f) for f in FIGURES}}

    return {
        "models": [{"model": m.model, "units": len(m.units), "hosts": m.hosts, "firmware": m.firmwares,
                    "verdicts": m.verdicts, "judged": m.judged,
                    "figures": {k: d.to_dict() for k, d in m.figures.items()},
                    "band": [{"size": s, "min": lo, "median": mid, "max": hi} for s, lo, mid, hi in m.band],
                    "unit_list": [unit(u) for u in m.units]} for m in fleet.models],
        "outliers": [{**unit(o.unit), "slow": o.slow, "deviations": [d.to_dict() for d in o.deviations]}
                     for o in fleet.outliers],
        "hosts": [{"host": h.host, "units": len(h.units), "slow_units": len(h.slow), "flagged": h.flagged,
                   "unit_list": [unit(u) for u in h.units]} for h in fleet.hosts],
        "firmware": [{"model": r.model, "firmware": r.firmware, "reference": r.reference, "figure": r.figure.key,
                      "units": r.n, "reference_units": r.ref_n, "mean": r.mean, "reference_mean": r.ref_mean,
                      "change_pct": r.change_pct, "t": _finite(r.test.t) if r.test else None,
                      "p": r.test.p if r.test else None, "verdict": r.verdict} for r in fleet.firmware],
        "shared_paths": [{"host": host, "element": s.label, "kind": s.kind, "link": s.link,
                          "ceiling_bytes_s": s.ceiling, "units": list(s.units)} for host, s in fleet.shared],
    }
