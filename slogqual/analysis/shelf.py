"""A shelf of units on their paths: what they share, what each shared element can carry, where the
aggregate stopped and which unit is slower than its identical siblings (issue #30). Pure functions on
the typed facts of slogqual.results.shelf; no file is read and no process started.

Ceilings come from the negotiated link alone, payload after the line encoding:

- PCIe: 2.5 and 5 GT/s (1.x, 2.x) use 8b/10b; 8, 16 and 32 GT/s (3.x to 5.x) 128b/130b; 64 GT/s (6.x)
  FLIT mode, 242 payload bytes of 256 (an approximation: TLP and DLLP overhead, ignored at every
  generation, comes on top). A PCIe 2.0 x8 slot: 5 GT/s x 8 lanes x 8/10 / 8 = 4.0 GB/s.
- SAS: 1.5, 3, 6 and 12 Gbit/s use 8b/10b; 22.5 Gbit/s ("24G", SAS-4) 128b/150b. A 4-phy wide port of
  6 Gbit/s: 4 x 6 x 8/10 / 8 = 2.4 GB/s. SATA: 8b/10b.

The verdicts are facts (``Finding``: a kind, the figures, the units and element it rests on);
slogqual.report.shelf makes one sentence of a finding for people, and the shelf document's words.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from slogqual.results.shelf import PCI_FUNCTION, Link, UnitPath

# Finding kinds
SCALED = "scaled"  # together reached the sum of the units alone
CAPPED = "capped-by-shared-element"  # together stopped at a shared element's ceiling
SHORT = "short-of-sum"  # together stopped short and no element on the path explains it
SLOW_LINK = "slow-unit-link"  # a unit slower than its identical siblings, on a slower link than theirs
SLOW_UNIT = "slow-unit"  # ... on the same link as theirs: the unit itself (or what sysfs does not show)
HELD = "held-behind-shared-element"  # the units behind one element lost together, those outside it did not
KINDS = (SCALED, CAPPED, SHORT, SLOW_LINK, SLOW_UNIT, HELD)

TOLERANCE = 0.15  # together within 15 % of a figure "reached" it (counting error, a noisy host)
SLOW = 0.25  # a unit more than 25 % below the median of its identical siblings is slow


def encoding(link: Link) -> Optional[float]:
    """Payload bits per line bit of the link's encoding; None for a rate slogqual does not know."""
    r = link.rate
    if not r:
        return None
    if link.kind == "pcie":
        return 0.8 if r <= 5.0 else (128 / 130 if r <= 32.0 else 242 / 256)
    if link.kind in ("sas", "sata"):
        return 0.8 if r <= 12.0 else 128 / 150
    return None


def ceiling_bytes(link: Optional[Link]) -> Optional[float]:
    """What the link carries at most, in bytes/s: per-lane rate x lanes x encoding / 8. A SAS port whose
    phys negotiated different rates sums them. None when the rate or the lanes are unknown."""
    if link is None or not link.rate or not link.lanes:
        return None
    eff = encoding(link)
    if eff is None:
        return None
    rates = [r for r in link.rates if r] if link.kind == "sas" and link.rates else [link.rate] * link.lanes
    return sum(rates) * 1e9 * eff / 8


@dataclass
class UnitFigures:
    """One unit's bandwidth at one size: alone, and with every unit of the shelf at once (bytes/s).
    ``model`` and ``firmware`` tell identical siblings."""

    device: str
    alone: float
    together: Optional[float] = None
    model: Optional[str] = None
    firmware: Optional[str] = None


@dataclass
class Shared:
    """An element on the path of two units or more, with the ceiling of its link."""

    key: str
    label: str
    kind: str
    units: List[str]
    link: Optional[str] = None  # "PCIe 5 GT/s x8"
    ceiling: Optional[float] = None  # bytes/s
    declared: Optional[str] = None  # the ceiling is the user's --path-ceiling (analysis.path_ceiling), not the link's

    def to_dict(self) -> Dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class Finding:
    kind: str
    figures: Dict[str, Any] = field(default_factory=dict)
    units: List[str] = field(default_factory=list)
    element: Optional[Shared] = None

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"kind": self.kind, "figures": dict(self.figures), "units": list(self.units)}
        if self.element is not None:
            d["element"] = self.element.to_dict()
        return d


@dataclass
class ShelfAnalysis:
    units: List[str]
    alone_sum: float
    together: Optional[float]
    shared: List[Shared] = field(default_factory=list)
    findings: List[Finding] = field(default_factory=list)

    def to_dict(self) -> Dict[str, Any]:
        return {"units": list(self.units), "alone_sum": self.alone_sum, "together": self.together,
                "shared": [s.to_dict() for s in self.shared], "findings": [f.to_dict() for f in self.findings]}

    def kinds(self) -> List[str]:
        return [f.kind for f in self.findings]


def shared_elements(paths: Sequence[UnitPath]) -> List[Shared]:
    """Every element on the path of two units or more, nearest the host first, each with its link's
    ceiling; the units are named by device."""
    seen: Dict[str, Shared] = {}
    order: List[str] = []
    for path in paths:
        for e in path.elements:
            if e.key not in seen:
                seen[e.key] = _shared(e)
                order.append(e.key)
            if path.device not in seen[e.key].units:
                seen[e.key].units.append(path.device)
    return [seen[k] for k in order if len(seen[k].units) >= 2]


def _shared(e) -> Shared:
    """An element as a shelf shares it: a declared ceiling (a --path-ceiling) before its link's, which for
    the elements one is declared for is usually unknown anyway."""
    link = e.link.text() if e.link else None
    if e.declared_ceiling:
        return Shared(e.key, e.label(), e.kind, [], link, e.declared_ceiling, e.declared)
    return Shared(e.key, e.label(), e.kind, [], link, ceiling_bytes(e.link))


def shared_on_hosts(units: Sequence[Tuple[Optional[str], UnitPath]]) -> List[Tuple[Optional[str], Shared]]:
    """(host, shared element) for every element that two units or more of one host share, the hosts in
    the order first met. An element's key names it on its own host only: units of two hosts share
    nothing, whatever their paths look like. A unit named twice (two results of one device) is one."""
    by_host: Dict[Optional[str], List[UnitPath]] = {}
    for host, path in units:
        by_host.setdefault(host, []).append(path)
    return [(host, s) for host, paths in by_host.items() for s in shared_elements(paths)]


def _link_capacity(link: Optional[Link]) -> Optional[float]:
    """Rate x lanes (what compares two links of one kind), or None."""
    if link is None or not link.rate or not link.lanes:
        return None
    return link.rate * link.lanes


def slow_units(figures: Sequence[UnitFigures], paths: Dict[str, UnitPath], slow: float = SLOW) -> List[Finding]:
    """Units more than ``slow`` below the median of their identical siblings (same model and firmware;
    at least two others), each named with its slot and link, and whether its link is the reason."""
    groups: Dict[tuple, List[UnitFigures]] = {}
    for f in figures:
        groups.setdefault((f.model, f.firmware), []).append(f)
    out: List[Finding] = []
    for (model, firmware), members in groups.items():
        if len(members) < 3:
            continue
        for f in members:
            others = [m for m in members if m is not f]
            median = statistics.median(m.alone for m in others)
            if median <= 0 or f.alone >= (1 - slow) * median:
                continue
            path = paths.get(f.device)
            slot = path.slot if path else None
            figs: Dict[str, Any] = {"alone": f.alone, "siblings_median": median, "ratio": f.alone / median,
                                    "model": model, "firmware": firmware}
            kind = SLOW_UNIT
            if slot is not None:
                figs["slot"] = slot.name
                figs["link"] = slot.link.text() if slot.link else None
                mine = _link_capacity(slot.link)
                theirs = [_link_capacity(paths[m.device].slot.link) for m in others
                          if m.device in paths and paths[m.device].slot is not None]
                theirs = [t for t in theirs if t]
                if mine and theirs and mine < statistics.median(theirs):
                    kind = SLOW_LINK
                    sibling = next(paths[m.device].slot for m in others if m.device in paths
                                   and paths[m.device].slot is not None
                                   and _link_capacity(paths[m.device].slot.link) == max(theirs))
                    figs["siblings_link"] = sibling.link.text() if sibling.link else None
                    figs["link_ceiling"] = ceiling_bytes(slot.link)
                    figs["siblings_link_ceiling"] = ceiling_bytes(sibling.link)
            out.append(Finding(kind, figs, [f.device]))
    return out


def analyse(figures: Sequence[UnitFigures], paths: Sequence[UnitPath], together: Optional[float] = None,
            tolerance: float = TOLERANCE, slow: float = SLOW) -> ShelfAnalysis:
    """Where the aggregate of these units stopped, at one size, on these paths.

    Together within ``tolerance`` of the sum alone: SCALED. Short of it: the shared element on every
    unit's path with the lowest ceiling below the sum alone is named; CAPPED when together reached that
    ceiling (within tolerance), else SHORT with that ceiling as the nearest candidate (the limit is not
    on the path as read (sysfs, or FreeBSD's programs): a cable, the host, the devices' firmware). ``together``: the aggregate when
    it was measured as one figure (else the sum of each unit's share). Slow siblings come after."""
    by_device = {p.device: p for p in paths}
    names = [f.device for f in figures]
    alone_sum = sum(f.alone for f in figures)
    together_figs = [f.together for f in figures]
    if together is None and figures and all(t is not None for t in together_figs):
        together = sum(together_figs)
    shared = shared_elements([by_device[n] for n in names if n in by_device])
    result = ShelfAnalysis(names, alone_sum, together, shared)
    if together is not None and len(figures) >= 2 and alone_sum > 0:
        base = {"alone_sum": alone_sum, "together": together, "ratio": together / alone_sum}
        if together >= (1 - tolerance) * alone_sum:
            result.findings.append(Finding(SCALED, base, names))
        else:
            everyone = [s for s in shared if set(s.units) >= set(names) and s.ceiling is not None]
            limit = min(everyone, key=lambda s: s.ceiling) if everyone else None
            if limit is not None and limit.ceiling < alone_sum and together >= (1 - tolerance) * limit.ceiling:
                result.findings.append(Finding(CAPPED, {**base, "ceiling": limit.ceiling,
                                                        "of_ceiling": together / limit.ceiling}, names, limit))
            else:  # the lowest ceiling they share, if any, as the nearest candidate
                figs = dict(base)
                if limit is not None:
                    figs.update(nearest_ceiling=limit.ceiling, of_ceiling=together / limit.ceiling)
                result.findings.append(Finding(SHORT, figs, names, limit))
    result.findings.extend(groups_held(figures, shared, tolerance))
    result.findings.extend(slow_units(figures, by_device, slow))
    return result


def _deepest_by_units(figures: Sequence[UnitFigures], shared: Sequence[Shared]) -> Dict[frozenset, List[Shared]]:
    """The elements shared by some of the units but not all, grouped by the set of units behind them, nearest
    the host first (so the last of each group is the one nearest the units: an expander before its HBA)."""
    names = {f.device for f in figures}
    out: Dict[frozenset, List[Shared]] = {}
    for s in shared:
        units = frozenset(u for u in s.units if u in names)
        if 2 <= len(units) < len(names):
            out.setdefault(units, []).append(s)
    return out


def groups_held(figures: Sequence[UnitFigures], shared: Sequence[Shared],
                tolerance: float = TOLERANCE) -> List[Finding]:
    """Units behind one element (some of the shelf, not all) that lost together while the units outside it
    kept theirs (the inside's share of its sum alone at most ``1 - 2 tolerance`` of the outside's: the
    contrast outlasts a noisy host's counting error on both sides): CAPPED where the lowest ceiling on their shared path explains it, else HELD — the
    element nearest them named, though no ceiling sysfs gives explains it (a throttled or oversubscribed HBA, an expander's uplink, a switch), the
    contrast with the units outside being the evidence. Needs each unit's figure together."""
    if len(figures) < 3 or any(f.together is None for f in figures):
        return []
    out: List[Finding] = []
    for units, elements in _deepest_by_units(figures, shared).items():
        element = elements[-1]
        inside = [f for f in figures if f.device in units]
        outside = [f for f in figures if f.device not in units]
        alone_sum, together = sum(f.alone for f in inside), sum(f.together for f in inside)
        out_alone, out_together = sum(f.alone for f in outside), sum(f.together for f in outside)
        if alone_sum <= 0 or out_alone <= 0 or together >= (1 - tolerance) * alone_sum:
            continue
        figs: Dict[str, Any] = {"alone_sum": alone_sum, "together": together, "ratio": together / alone_sum,
                                "outside_units": len(outside), "outside_ratio": out_together / out_alone}
        pci = [e for e in elements if e.kind == PCI_FUNCTION]
        if pci:
            figs["pci_function"] = pci[-1].label
        with_ceiling = [e for e in elements if e.ceiling is not None]
        limit = min(with_ceiling, key=lambda e: e.ceiling) if with_ceiling else None
        if limit is not None and limit.ceiling < alone_sum and together >= (1 - tolerance) * limit.ceiling:
            out.append(Finding(CAPPED, {**figs, "ceiling": limit.ceiling, "of_ceiling": together / limit.ceiling},
                               [f.device for f in inside], limit))
        elif figs["ratio"] <= (1 - 2 * tolerance) * figs["outside_ratio"]:
            if limit is not None:
                figs.update(nearest=limit.label, nearest_ceiling=limit.ceiling, of_ceiling=together / limit.ceiling)
            out.append(Finding(HELD, figs, [f.device for f in inside], element))
    return out
