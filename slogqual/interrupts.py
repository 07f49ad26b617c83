"""Holding Ctrl-C/SIGTERM over a short step that must not be cut in half.

Some external steps cannot be undone if they are killed midway: an ``iscsiadm --login`` killed by an
interrupt leaves iscsid to finish the login on its own, after the teardown has looked for a session
(the lab's interrupt test found such a session left over, twice). Inside ``held()`` a SIGINT or SIGTERM
is noted, not acted on; on leaving, the previous handlers are back and the noted signal is raised again,
so it lands as it would have — a KeyboardInterrupt in the caller, the teardown then undoing a step that
finished. Keep what is held short and bounded by its own timeout.

``redeliver_lost_interrupt`` is the other half: a KeyboardInterrupt that lands in a callback the
interpreter cannot raise into (a weakref callback of the import machinery, a ``__del__``) is printed as
"Exception ignored ... Traceback" and lost. Installed as ``sys.unraisablehook`` it sends the signal
again instead, so the interrupt still ends the run, in one line.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from typing import Iterator, List

_HELD = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def held() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; signals land there anyway
        return
    noted: List[int] = []
    previous = {sig: signal.getsignal(sig) for sig in _HELD}
    try:
        for sig in _HELD:
            signal.signal(sig, lambda signum, frame: noted.append(signum))
    except BaseException:  # a signal between two of these: the handlers as they were, then it lands
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        raise
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if noted:
            signal.raise_signal(noted[0])


def redeliver_lost_interrupt(unraisable) -> None:
    """A ``sys.unraisablehook``: a lost KeyboardInterrupt is sent again as a SIGINT, from a short-lived
    thread once this hook has returned (raised inside the hook it would land in the hook, which is
    itself a place Python cannot raise from: measured, 1 of 150 runs then ended 0 with a traceback).
    Anything else goes to the interpreter's own hook."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt) or unraisable.exc_type is KeyboardInterrupt:
        threading.Thread(target=_send_sigint_soon, name="slogqual-interrupt-again", daemon=True).start()
        return
    sys.__unraisablehook__(unraisable)


def _send_sigint_soon() -> None:
    time.sleep(0.01)  # the main thread is out of the callback by then; if not, this hook runs once more
    os.kill(os.getpid(), signal.SIGINT)
