"""Steady state after SNIA SSS PTS: the rule (a pure function) and the rounds that feed it.

SNIA's Solid State Storage Performance Test Specification calls a tracked variable y
(here: 4 KiB QD1 sync-write IOPS, one value per round) steady when, over a measurement
window of the last five rounds,

1. the data excursion ``max(y) - min(y)`` is at most 20 % of the window's mean, and
2. the excursion of the least-squares line through the window, ``|slope| * (x_last - x_first)``,
   is at most 10 % of the window's mean (x = round number, so the span is window - 1 rounds).

(SNIA SSS PTS 2.0.1, definition of Steady State: "Max(y)-Min(y) within the Measurement Window is no
more than 20% of the Ave(y)", and "Max(y)-Min(y), where Max(y) and Min(y) are the maximum and minimum
values on the best linear curve fit of the y-values within the Measurement Window, is within 10% of
Ave(y)". On a straight line those are its two ends, hence |slope| times the span.)

Rounds continue until both hold or a maximum (SNIA: 25) is reached; a result without steady
state is marked so, never dropped. At QD1 IOPS is the reciprocal of the mean latency, so the
verdict is the same whichever of the two is tracked; IOPS is what SNIA tracks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

WINDOW = 5
RANGE_FRACTION = 0.20
SLOPE_FRACTION = 0.10
MAX_ROUNDS = 25


@dataclass
class SteadyCheck:
    """The rule applied to one window."""

    reached: bool
    window: List[float]
    mean: float
    excursion: float  # max - min
    slope: float  # least-squares slope per round
    slope_excursion: float  # |slope| * (len(window) - 1)
    range_limit: float
    slope_limit: float
    reason: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return {"reached": self.reached, "window": list(self.window), "mean": self.mean,
                "excursion": self.excursion, "slope": self.slope, "slope_excursion": self.slope_excursion,
                "range_limit": self.range_limit, "slope_limit": self.slope_limit, "reason": self.reason}


def least_squares_slope(ys: Sequence[float], xs: Optional[Sequence[float]] = None) -> float:
    """Slope of the ordinary least-squares line through (x, y); x defaults to 0, 1, 2, ..."""
    n = len(ys)
    if n < 2:
        return 0.0
    xs = list(range(n)) if xs is None else list(xs)
    mx = sum(xs) / n
    my = sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def check(values: Sequence[float], window: int = WINDOW, range_fraction: float = RANGE_FRACTION,
          slope_fraction: float = SLOPE_FRACTION) -> SteadyCheck:
    """Apply the SNIA rule to the last ``window`` values (fewer values: not reached)."""
    if window < 2:
        raise ValueError("a steady-state window needs at least 2 rounds")
    w = [float(v) for v in values[-window:]]
    if len(w) < window:
        return SteadyCheck(False, w, sum(w) / len(w) if w else 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                           reason=f"{len(w)} of {window} rounds")
    mean = sum(w) / window
    excursion = max(w) - min(w)
    slope = least_squares_slope(w)
    slope_exc = abs(slope) * (window - 1)
    range_limit = range_fraction * abs(mean)
    slope_limit = slope_fraction * abs(mean)
    problems = []
    if mean <= 0:
        problems.append("window mean is not positive")
    if excursion > range_limit:
        problems.append(f"range {excursion:.4g} > {range_fraction * 100:g}% of mean {mean:.4g}")
    if slope_exc > slope_limit:
        problems.append(f"slope excursion {slope_exc:.4g} > {slope_fraction * 100:g}% of mean {mean:.4g}")
    reached = not problems
    return SteadyCheck(reached, w, mean, excursion, slope, slope_exc, range_limit, slope_limit,
                       reason="within both limits" if reached else "; ".join(problems))


@dataclass
class Round:
    n: int
    iops: float
    mean_us: float
    p99_us: Optional[float]
    ios: int

    def to_dict(self) -> Dict[str, Any]:
        return {"round": self.n, "iops": self.iops, "mean_us": self.mean_us, "p99_us": self.p99_us, "ios": self.ios}


@dataclass
class SteadyState:
    """The record of the rounds (what every output reports about steady state)."""

    size: int
    round_runtime_s: float
    max_rounds: int
    window: int = WINDOW
    range_fraction: float = RANGE_FRACTION
    slope_fraction: float = SLOPE_FRACTION
    rounds: List[Round] = field(default_factory=list)
    reached: bool = False
    at_round: Optional[int] = None
    last_check: Optional[SteadyCheck] = None
    checked: bool = True  # False when no rounds were asked for (max_rounds 0)

    @property
    def label(self) -> str:
        if not self.checked:
            return "not checked"
        if self.reached:
            return f"reached (round {self.at_round})"
        return f"NOT reached in {len(self.rounds)} rounds"

    def to_dict(self) -> Dict[str, Any]:
        return {
            "checked": self.checked,
            "reached": self.reached,
            "label": self.label,
            "at_round": self.at_round,
            "tracked": "iops",
            "size": self.size,
            "round_runtime_s": self.round_runtime_s,
            "max_rounds": self.max_rounds,
            "rule": {"window": self.window, "range_fraction": self.range_fraction,
                     "slope_fraction": self.slope_fraction,
                     "text": f"last {self.window} rounds: max-min <= {self.range_fraction * 100:g}% of their mean "
                             f"and |least-squares slope| x {self.window - 1} rounds <= "
                             f"{self.slope_fraction * 100:g}% of their mean (SNIA SSS PTS)"},
            "rounds": [r.to_dict() for r in self.rounds],
            "last_check": self.last_check.to_dict() if self.last_check else None,
        }


def run_rounds(state: SteadyState, measure: Callable[[int], Round],
               on_round: Optional[Callable[[Round, SteadyCheck], None]] = None) -> SteadyState:
    """Measure rounds until the rule holds or max_rounds; measure(n) does round n."""
    if state.max_rounds <= 0:
        state.checked = False
        return state
    for n in range(1, state.max_rounds + 1):
        r = measure(n)
        state.rounds.append(r)
        c = check([x.iops for x in state.rounds], state.window, state.range_fraction, state.slope_fraction)
        state.last_check = c
        if on_round:
            on_round(r, c)
        if c.reached:
            state.reached, state.at_round = True, n
            break
    return state
