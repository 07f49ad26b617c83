"""Which pools a scenario run builds: each configuration with the log devices it gets.

A single-SLOG configuration (and a special-vdev one, ``log = "special"``: the candidate as the pool's special
vdev) runs once per --log candidate, so the candidates are compared on the same
pool and load. A mirror or stripe of two logs runs once per PAIR of candidates (in the order given):
with exactly two candidates that is one run, labelled as before (no candidate), so results of that
shape resume unchanged; with three or more each pair is its own run, labelled with both devices. With
fewer than two candidates a pair configuration cannot be built: it is skipped, and the skip is said.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from slogqual.analysis.pairs import PAIR_LOGS  # the log layouts that take two devices
from slogqual.errors import UsageError
from slogqual.pool.scenario import PoolConfig, Scenario
PAIR_JOIN = " + "


@dataclass(frozen=True)
class Variant:
    """One pool to build: the configuration, the step label's candidate (None: no candidate to name) and
    the log devices the pool gets (carried, never parsed back out of the label)."""

    config: PoolConfig
    candidate: Optional[str]
    logs: Tuple[str, ...] = field(default_factory=tuple)


def needs_pair(config: PoolConfig) -> bool:
    return config.log in PAIR_LOGS


def pair_label(devices: Sequence[str]) -> str:
    """A pair step's candidate text: both devices, e.g. '/dev/a + /dev/b'."""
    return PAIR_JOIN.join(devices)


def skip_reason(config: PoolConfig, logs: Sequence[str]) -> str:
    shape = "mirrored" if config.log == "mirror" else "striped"
    return (f"a {shape} log needs two --log candidates and this run has {len(logs)}: "
            f"not run (name two or more to measure it)")


def plan(configs: Sequence[PoolConfig], logs: Sequence[str]) -> Tuple[List[Variant], List[Dict[str, Any]]]:
    """(the variants in run order, the skipped pair configurations as {config, log, reason})."""
    logs = list(logs)
    out: List[Variant] = []
    skipped: List[Dict[str, Any]] = []
    for c in configs:
        if c.log in ("single", "special") and len(logs) > 1:  # special: each candidate the special vdev
            out += [Variant(c, dev, (dev,)) for dev in logs]
        elif c.log in ("single", "special"):
            out.append(Variant(c, logs[0] if logs else None, tuple(logs[:1])))
        elif needs_pair(c) and len(logs) < 2:
            skipped.append({"config": c.name, "log": c.log, "reason": skip_reason(c, logs)})
        elif needs_pair(c) and len(logs) == 2:
            out.append(Variant(c, None, tuple(logs)))  # today's label: results of this shape resume unchanged
        elif needs_pair(c):
            out += [Variant(c, pair_label(p), tuple(p)) for p in itertools.combinations(logs, 2)]
        else:
            out.append(Variant(c, None, ()))
    return out, skipped


def skip_warning(entry: Dict[str, Any]) -> str:
    """A skipped configuration as the result's warning line."""
    return f"{entry['config']}: {entry['reason']}"


def all_slogs_need_pairs(configs: Sequence[PoolConfig]) -> bool:
    """Every configuration built with a candidate (a SLOG, or the special vdev) is a mirror or stripe of two
    logs (and there is at least one)."""
    slogs = [c for c in configs if c.needs_candidate]
    return bool(slogs) and all(needs_pair(c) for c in slogs)


def check_log_count(scenario: Scenario, count: int) -> None:
    """Refuse, before any device is claimed or guest booted, a run that would measure no SLOG at all:
    every SLOG configuration is a pair and fewer than two candidates are named. A scenario with other
    SLOG configurations runs those and records the pair configurations as skipped (``plan``)."""
    if all_slogs_need_pairs(scenario.configs) and count < 2:
        raise UsageError(f"every SLOG configuration of {scenario.name} is a mirror or stripe of two logs: "
                         f"name two or more log candidates (given {count})")
