"""What a striped or mirrored log can reach, and which ceiling the measured one reached (issue #30).

A stripe spreads the ZIL's log blocks over its members, so it carries at most N x its slowest member: each
member gets its share and the slowest fills first (seed 000: four NVMe drives in MD RAID0 read 3322 MB/s,
4 x the slowest one alone, 832 MB/s). A mirror writes every block to each member: at most its slowest
member. Both stay under the ceiling of a path element every member shares (an HBA's link, a SAS wide
port, a switch's uplink), which a stripe's blocks cross once and a mirror's N times. The expected ceiling
is the lower of the two; the log vdevs' write rate at the pair's busiest step says which one it reached.

- A member's bandwidth is the advisor's (``analysis.advisor.bandwidth``): the best MiB/s of its own QD1
  write+flush sweep at 128 KiB and up (the ZIL's largest log block), from the result's ``log_sweeps``.
- Its path is the one the runner recorded (``pool.devices[dev].topology``, device.topology); the shared
  element's ceiling is ``analysis.shelf``'s link arithmetic. A path sysfs did not give is unknown.
- The measured rate is the members' zpool iostat rows in the step's window (the log section's total where
  a member's row is missing): for a mirror, per member — zpool iostat's mirror row is the sum of its
  children's writes (tests/fixtures/advisor/iscsi-4k-lab-sata-ssd-nvdimm.json: mirror-2 4,441,125 B/s,
  its members 2,222,556 and 2,222,232).

Pure functions: no file is read, no process started.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

from slogqual.analysis import advisor, shelf
from slogqual.analysis.findings import Finding, Kind, StepRef
from slogqual.results.scenario import ScenarioStep
from slogqual.results.shelf import UnitPath
from slogqual.units import MiB

# measured within this share of a ceiling "reached" it (the shelf's figure: counting error, a noisy host)
TOLERANCE = shelf.TOLERANCE


@dataclass(frozen=True)
class _Point:
    """A point of a scenario's log sweep summary, as the advisor reads a sweep point."""

    size: int
    mbps: float
    ios: Optional[int]


def member_bandwidth(entry: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """A member's bandwidth from its ``log_sweeps`` entry: {mbps, size, ios} (ios None in a summary written
    before it was kept), or None when its sweep has no size from 128 KiB up."""
    points = [_Point(int(p["size"]), float(p["mbps"]), p.get("ios"))
              for p in (entry or {}).get("points") or [] if p.get("mbps") is not None]
    best = advisor.bandwidth(points)
    return None if best is None else {"mbps": best[0], "size": best[1], "ios": best[2]}


def known_path(path: Optional[UnitPath]) -> bool:
    return path is not None and not path.error and bool(path.elements)


def shared_limit(paths: Sequence[UnitPath]) -> Optional[shelf.Shared]:
    """The element on every member's path with the lowest known ceiling; without one, the shared element
    nearest the members (their SCSI host rather than the host bridge every device hangs from)."""
    every = [s for s in shelf.shared_elements(paths) if len(s.units) == len(paths)]
    known = [s for s in every if s.ceiling]
    if known:
        return min(known, key=lambda s: s.ceiling)
    return every[-1] if every else None


def written(step: ScenarioStep, members: Sequence[str]) -> Dict[str, float]:
    """Bytes/s each member wrote in the step's window: its row (by device name) in the log section."""
    rows = {v.get("name"): v for v in step.extra.get("vdevs") or [] if v.get("section") == "logs"}
    out = {}
    for m in members:
        row = rows.get(os.path.basename(m))
        if row is not None and row.get("write_bytes_s") is not None:
            out[m] = float(row["write_bytes_s"])
    return out


def log_rate(step: ScenarioStep, layout: str, members: Sequence[str]) -> Optional[float]:
    """MiB/s of log blocks the pair took in the step (a mirror's each member wrote): None unmeasured."""
    per = written(step, members)
    if len(per) == len(members):
        total: Optional[float] = sum(per.values())
    else:
        total = step.log_write_bytes_s
    if total is None:
        return None
    return total / MiB / (len(members) if layout == "mirror" else 1)


def reached(measured: float, expected: float, by: str, tolerance: float = TOLERANCE) -> str:
    """``by`` (members, shared-path) when measured is within tolerance of the expected ceiling; short
    below it; above it when measured passes it (the members' QD1 sweeps understate them)."""
    if measured > (1 + tolerance) * expected:
        return "above"
    return by if measured >= (1 - tolerance) * expected else "short"


def _members(members: Sequence[str], bandwidths: Dict[str, Dict[str, Any]],
             step: ScenarioStep) -> List[Dict[str, Any]]:
    """Each member: its bandwidth (member_bandwidth) and what it wrote in the step (MiB/s, None unknown)."""
    per = written(step, members)
    return [dict(bandwidths[m], device=m, written_mbps=per[m] / MiB if m in per else None) for m in members]


def _shared_figures(layout: str, n: int, paths: Dict[str, Optional[UnitPath]]) -> Dict[str, Any]:
    """The members' topology (recorded or unknown), the element they share and the ceiling it sets on
    what the log takes (a mirror's blocks cross it n times)."""
    if not all(known_path(p) for p in paths.values()):
        return {"topology": "unknown", "shared": None, "shared_ceiling_mbps": None}
    limit = shared_limit(list(paths.values()))
    ceiling = limit.ceiling / MiB / (n if layout == "mirror" else 1) if limit and limit.ceiling else None
    return {"topology": "recorded", "shared": limit.to_dict() if limit else None, "shared_ceiling_mbps": ceiling}


def finding(layout: str, config: str, candidate: Optional[str], steps: Sequence[ScenarioStep],
            members: Sequence[str], bandwidths: Dict[str, Optional[Dict[str, Any]]],
            paths: Dict[str, Optional[UnitPath]], tolerance: float = TOLERANCE) -> Optional[Finding]:
    """The PAIR_CEILING finding of one mirror/stripe curve, at its step with the highest log rate; None
    when a member's bandwidth or every step's log rate is unknown."""
    if len(members) < 2 or any(bandwidths.get(m) is None for m in members):
        return None
    rated = [(r, s) for r, s in ((log_rate(s, layout, members), s) for s in steps) if r is not None]
    if not rated:
        return None
    measured, step = max(rated, key=lambda rs: rs[0])
    slowest = min(members, key=lambda m: bandwidths[m]["mbps"])
    by_members = bandwidths[slowest]["mbps"] * (len(members) if layout == "stripe" else 1)
    shared = _shared_figures(layout, len(members), {m: paths.get(m) for m in members})
    by_path = shared["shared_ceiling_mbps"]
    by = "shared-path" if by_path is not None and by_path < by_members else "members"
    expected = by_path if by == "shared-path" else by_members
    figures = dict(shared, log=layout, metric="mbps", config=config, threads=step.threads,
                   members=_members(members, bandwidths, step), slowest=slowest,
                   slowest_mbps=bandwidths[slowest]["mbps"], members_ceiling_mbps=by_members,
                   expected_mbps=expected, expected_by=by, measured_mbps=measured, of_expected=measured / expected,
                   reached=reached(measured, expected, by, tolerance), tolerance=tolerance)
    return Finding(Kind.PAIR_CEILING, figures, (StepRef(config, candidate, step.threads),))
