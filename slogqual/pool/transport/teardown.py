"""Undo steps run in reverse, every one of them, whatever happens in between.

A transport records an undo step for each thing it made, right after making it. Teardown runs them
last-first; a step that fails is reported on stderr and the others still run; Ctrl-C or SIGTERM during
the teardown is held until the teardown is done, then raised. (Before it was held, a seeded interrupt
in the lab landed inside a normal teardown's `iscsiadm --logout`: the step was abandoned and the
session stayed, and so did its node record.)
"""

from __future__ import annotations

import sys
from typing import Callable, List, Tuple

from slogqual import interrupts
from slogqual.errors import SlogqualError


class Undo:
    def __init__(self) -> None:
        self.steps: List[Tuple[str, Callable[[], None]]] = []
        self.failures: List[str] = []

    def push(self, what: str, step: Callable[[], None]) -> None:
        self.steps.append((what, step))

    def run(self) -> None:
        with interrupts.held():  # each step is bounded by its tools' timeouts
            self._run_steps()

    def _run_steps(self) -> None:
        interrupted = False  # a KeyboardInterrupt raised by a step itself (outside the main thread's hold)
        while self.steps:
            what, step = self.steps.pop()
            try:
                step()
            except KeyboardInterrupt:
                interrupted = True
                self.failures.append(f"{what}: interrupted")
            except (SlogqualError, OSError) as exc:
                self.failures.append(f"{what}: {exc}")
        for failure in self.failures:
            print(f"slogqual: teardown: could not {failure}", file=sys.stderr)
        if interrupted:
            raise KeyboardInterrupt
