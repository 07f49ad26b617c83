"""Units measured at the same time (issue #30, a shelf at once): one worker thread per unit, and what an
interrupt does to them. ``slogqual sweep --parallel``, ``slogqual qualify --parallel`` and the together
half of ``--probe`` all run their units through ``at_once``.

Signals land in the main thread only. There an interrupt (KeyboardInterrupt: Ctrl-C, or SIGTERM as the CLI
turns it) sets the stop event every worker was handed; each program a worker is running at that moment is
killed (``tools.spawn.stopped_by``) and raises KeyboardInterrupt in that worker, as an interrupt does to a
lone run in the main thread, so each unit ends (and saves) what it has as a lone run would. ``at_once``
then waits for every started worker and raises the interrupt again.
"""

from __future__ import annotations

import threading
from typing import Callable, List, Optional, Sequence

from slogqual.tools.spawn import stopped_by

Worker = Callable[[threading.Event], None]
POLL_S = 0.2


def _wait(done: threading.Event) -> None:
    # an event, not Thread.join: an interrupt inside join() marks a running thread as ended (CPython 3.11,
    # bpo-45274's fix), and the process would leave with a unit half measured
    while not done.wait(POLL_S):
        pass


def at_once(workers: Sequence[Worker], name: str = "slogqual-unit",
            on_interrupt: Optional[Callable[[], None]] = None) -> None:
    """Run every worker in a thread of its own, all started together, and wait for all of them.

    A worker takes the stop event and ends its unit itself: its errors are its unit's, caught inside.
    An exception that escapes a worker anyway (a bug) is raised here once every worker has ended; a
    KeyboardInterrupt that escapes one after the stop is the interrupt, already being raised."""
    stop = threading.Event()
    finished = [threading.Event() for _ in workers]
    escaped: List[BaseException] = []

    def run(i: int) -> None:
        try:
            with stopped_by(stop):
                workers[i](stop)
        except KeyboardInterrupt:
            if not stop.is_set():
                escaped.append(KeyboardInterrupt())
        except BaseException as exc:  # handed to the caller's thread below, never lost in this one
            escaped.append(exc)
        finally:
            finished[i].set()

    threads = [threading.Thread(target=run, args=(i,), name=f"{name}-{i}", daemon=True) for i in range(len(workers))]
    try:  # an interrupt at any moment from the first start on: every started worker stops
        for t in threads:
            t.start()
        for done in finished:
            _wait(done)
    except KeyboardInterrupt:
        stop.set()
        if on_interrupt is not None:
            on_interrupt()
        for t, done in zip(threads, finished):
            if t.ident is not None:
                _wait(done)
        raise
    if escaped:
        raise escaped[0]
