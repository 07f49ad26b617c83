"""What the scenario analysis found, as facts: a kind, its figures and the steps it rests on.

analysis.scaling decides; it returns findings, never sentences. slogqual.report.wording is the one
module that turns a finding into words (the CLI table, the stored ``analysis``, qualify's details, the
reports). A stored analysis keeps both: ``findings`` (these, as ``to_dict`` writes them) and the words.

Figures are plain numbers and names (JSON as they stand). ``metric`` is ``iops`` or ``mbps``; a curve
is named by its configuration (``config``) and, with several log candidates, its ``candidate``; a
thread count is total threads. ``steps`` names every measured step a finding rests on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Dict, List, Optional, Tuple


class Kind(str, Enum):
    # what limits sync=always with the SLOG (one per verdict: the "bottleneck")
    NOTHING_TO_JUDGE = "nothing-to-judge"  # no sync=always configuration with a SLOG was measured
    POOL_BOUND = "pool-bound"  # the SLOG keeps up with sync=standard (within SAME): the pool is the limit
    HOST_BOUND = "host-bound"  # sync=standard (no ZIL) flat at or before the SLOG curve's flat step
    RISING_ON_PLATEAU = "rising-on-plateau"  # the SLOG curve still rose at its last step, on that plateau
    LOG_BANDWIDTH = "log-bandwidth"  # the log vdev wrote at (or above) its device's own sweep bandwidth
    LOG_BOUND = "log-bound"  # the SLOG curve stops scaling while sync=standard does not
    NOT_REACHED = "not-reached"  # still rising at the last thread step
    HOST_LIMIT = "host-limit"  # the SLOG's peak ran the host's CPU saturated, or the log far below its sweep
    # the SLOG curve stops scaling, but nothing measured tells the log device from the pool or the host: no
    # sweep of the log, and no ZIL-free run still scaling (or one, with the host's CPU busy)
    UNATTRIBUTED = "unattributed"
    # what the SLOG bought sync=always (one per verdict: the "verdict" sentence)
    FASTER_WITHOUT_SLOG = "faster-without-slog"
    BUYS_NOTHING = "buys-nothing"
    SPEEDUP = "speedup"
    NO_COMPARISON = "no-comparison"  # no sync=always run without a SLOG to compare with
    # context (the "details")
    SATURATED_AT = "saturated-at"  # a curve (sync=standard) stopped scaling from a step
    KNEE = "knee"  # the first step after which doubling threads buys < 10 % (or still scaling)
    WRITE_THROTTLE = "write-throttle"  # a curve's steps where the write throttle sent transactions to wait
    # evidence contradicting the configuration (the "problems")
    SLOG_UNUSED = "slog-unused"  # a SLOG configuration's log vdev got no ZIL bytes
    SPILL = "spill"  # more than SPILL_SHARE of the ZIL's bytes went to the main pool: a log too small
    LOG_WITHOUT_SLOG = "log-without-slog"  # ZIL bytes to a log vdev in a configuration without one
    STALLED = "stalled"  # a write of the step outlasted the kernel's I/O timeout: a device stopped answering
    # several log candidates of one sync=always configuration
    CROSSES = "crosses"  # each candidate more than SAME ahead at some step
    ALIKE = "alike"  # within SAME (geometric mean of the ratios)
    SLOWER = "slower"  # slower, at a step where sync=standard was flat: not named the bottleneck
    SLOWER_IS_BOTTLENECK = "slower-is-bottleneck"
    # a mirrored or striped log pair against the best single log of the same sync
    PAIR_VERSUS_SINGLE = "pair-versus-single"
    # what a striped or mirrored log could reach (its slowest member x N for a stripe, that member for a
    # mirror, or the ceiling of a path element every member shares, whichever is lower) and what it reached
    PAIR_CEILING = "pair-ceiling"


# The kinds a verdict's bottleneck may be, and its sentence.
LIMITS = (Kind.NOTHING_TO_JUDGE, Kind.POOL_BOUND, Kind.HOST_BOUND, Kind.RISING_ON_PLATEAU, Kind.LOG_BANDWIDTH,
          Kind.LOG_BOUND, Kind.NOT_REACHED, Kind.HOST_LIMIT, Kind.UNATTRIBUTED)
EFFECTS = (Kind.NOTHING_TO_JUDGE, Kind.FASTER_WITHOUT_SLOG, Kind.BUYS_NOTHING, Kind.SPEEDUP, Kind.NO_COMPARISON)
DETAILS = (Kind.SATURATED_AT, Kind.KNEE, Kind.WRITE_THROTTLE)
PROBLEMS = (Kind.SLOG_UNUSED, Kind.SPILL, Kind.LOG_WITHOUT_SLOG, Kind.STALLED)
CANDIDATES = (Kind.CROSSES, Kind.ALIKE, Kind.SLOWER, Kind.SLOWER_IS_BOTTLENECK, Kind.PAIR_VERSUS_SINGLE,
              Kind.PAIR_CEILING)


@dataclass(frozen=True)
class StepRef:
    """One measured step: its curve (configuration, log candidate) and total threads."""

    config: str
    candidate: Optional[str]
    threads: int

    def to_dict(self) -> Dict[str, Any]:
        return {"config": self.config, "candidate": self.candidate, "threads": self.threads}


@dataclass(frozen=True)
class Finding:
    kind: Kind
    figures: Dict[str, Any] = field(default_factory=dict)
    steps: Tuple[StepRef, ...] = ()

    def to_dict(self) -> Dict[str, Any]:
        return {"kind": self.kind.value, "figures": self.figures, "steps": [s.to_dict() for s in self.steps]}

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Finding":
        return cls(Kind(d["kind"]), dict(d.get("figures") or {}),
                   tuple(StepRef(s["config"], s.get("candidate"), int(s["threads"])) for s in d.get("steps") or []))


def of_kind(findings: List[Finding], kinds: Tuple[Kind, ...]) -> List[Finding]:
    return [f for f in findings if f.kind in kinds]


def one(findings: List[Finding], kinds: Tuple[Kind, ...]) -> Finding:
    """The single finding of ``kinds`` (a verdict has exactly one limit and one effect)."""
    found = of_kind(findings, kinds)
    if len(found) != 1:
        raise ValueError(f"expected one finding of {[k.value for k in kinds]}, found {[f.kind.value for f in found]}")
    return found[0]
