"""Progress lines on stderr for long work: what is running, step i/N, and an ETA."""

from __future__ import annotations

import sys
import time
from typing import Optional, TextIO


def format_duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """One line per step. The ETA is the mean duration of finished steps times the
    steps left (an a-priori estimate until the first step has finished)."""

    def __init__(self, stream: Optional[TextIO] = None, quiet: bool = False):
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self._durations = []
        self._t0: Optional[float] = None

    def reset(self) -> None:
        self._durations = []

    def eta(self, steps_left: int, estimate_s: float) -> float:
        per_step = sum(self._durations) / len(self._durations) if self._durations else estimate_s
        return per_step * steps_left

    def begin(self, what: str, index: int, total: int, estimate_s: float) -> None:
        self._t0 = time.monotonic()
        left = total - index + 1
        self.say(f"{what} ({index}/{total}) ETA {format_duration(self.eta(left, estimate_s))}")

    def end(self, summary: str) -> None:
        if self._t0 is not None:
            self._durations.append(time.monotonic() - self._t0)
            self._t0 = None
        self.say(f"  {summary}")

    def say(self, text: str) -> None:
        if not self.quiet:
            print(f"slogqual: {text}", file=self.stream, flush=True)


class UnitProgress(Progress):
    """A unit's progress in a run of several units at once: each line says which unit it is about."""

    def __init__(self, path: str, parent: Progress):
        super().__init__(parent.stream, parent.quiet)
        self.path = path

    def end(self, summary: str) -> None:
        super().end(f"{self.path}: {summary.strip()}")


class PassProgress(Progress):
    """Several passes over the same steps (the host probe's ``--repeats``): each line says which pass (where
    there is more than one), the ETA counts the passes still to come, and every finished step of every pass
    informs it (a pass's start does not forget them)."""

    def __init__(self, parent: Progress, passes: int):
        super().__init__(parent.stream, parent.quiet)
        self.passes, self.n = passes, 1

    def reset(self) -> None:
        pass  # the steps of the passes before are the best estimate of this one's

    def begin(self, what: str, index: int, total: int, estimate_s: float) -> None:
        self._t0 = time.monotonic()
        left = total - index + 1 + (self.passes - self.n) * total
        which = f"pass {self.n}/{self.passes}: " if self.passes > 1 else ""
        self.say(f"{which}{what} ({index}/{total}) ETA {format_duration(self.eta(left, estimate_s))}")
