"""How a slogqual process ends: the exit-code contract of every slogqual program, the CLI
(``slogqual.cli``) and the library modules run as programs of their own (``python -m
slogqual.powercut.writer``).

``run_main(body)`` runs ``body()`` and turns what happens into an exit status: a SlogqualError is one
line on stderr and the exit code slogqual.errors assigns to it; Ctrl-C or SIGTERM (at any moment from
here on) is "slogqual: interrupted" and 130; a closed stdout (``… | head -1``) is 141 with no traceback.
``end(code)`` leaves the process with that status (see its notes on the interpreter's shutdown).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Callable

from slogqual import interrupts
from slogqual.errors import SlogqualError

EXIT_INTERRUPTED = 130  # Ctrl-C or SIGTERM: what was measured is kept, what slogqual made is torn down
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE  # what a shell reports for a program that SIGPIPE ended
EXIT_CANNOT_JUDGE = 4  # slogqual compare: nothing to judge (no size in both, or a size without a usable value)


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (one of someone else's counts: not ours to judge)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


def _terminate_as_interrupt(signum, frame):
    """SIGTERM ends a run the way Ctrl-C does: the result is saved as interrupted, everything slogqual
    made is torn down (the finally blocks and context managers run), exit 130."""
    raise KeyboardInterrupt


def _silence_stdout() -> None:
    """After a write to a closed pipe: point stdout at /dev/null, so the interpreter's own flush at exit
    does not fail again and print 'Exception ignored ... BrokenPipeError'."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def one_line(body: Callable[[], int]) -> int:
    """``body()``'s status, or a SlogqualError's: one line on stderr (``slogqual: …``) and its exit code."""
    try:
        return int(body() or 0)
    except SlogqualError as exc:
        print(f"slogqual: {exc}", file=sys.stderr)
        return exc.exit_code


def run_main(body: Callable[[], int]) -> int:
    """The exit status of ``body()`` (which turns its own SlogqualErrors into one line, see one_line)."""
    try:
        # First, inside the try: from here on a signal at any moment (parsing, importing a subcommand's
        # modules, measuring) ends in one line and exit 130, never a traceback or a silent -15. A Ctrl-C
        # that lands in a callback Python cannot raise into (CI: the import machinery's weakref callback
        # printed "Exception ignored ... KeyboardInterrupt") is raised again, not printed and lost.
        sys.unraisablehook = interrupts.redeliver_lost_interrupt
        signal.signal(signal.SIGTERM, _terminate_as_interrupt)
        code = body()
        sys.stdout.flush()  # a pipe's stdout is block-buffered: a closed reader shows here, not at exit
        return code
    except KeyboardInterrupt:
        return _interrupted()
    except BrokenPipeError:
        # The reader of stdout went away (`slogqual ... --json | head -1`): end quietly, as Unix programs
        # do. A measuring command has written its result file as it went, before its final print.
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as exc:
        if _caused_by_interrupt(exc):
            return _interrupted()
        raise


def end(main: Callable[[], int]) -> None:
    """The process entry point: run ``main`` (a run_main wrapper) and leave with its status. Once main()
    has returned, the work is done and its end is final:

    * later SIGINT/SIGTERM are ignored: during the interpreter's shutdown CPython puts the default
      dispositions back, and a signal then would kill the process with no word and a status of -2/-15;
    * after an interrupt the process leaves through ``os._exit(130)`` (streams flushed first, the
      teardown already done by the finally blocks on the way out): CPython kills itself with SIGINT at
      exit once a KeyboardInterrupt escaped code run by ``exec`` of a string — dataclasses and namedtuple
      build their methods that way, so a Ctrl-C while a module is imported sets it — even when slogqual
      caught the interrupt afterwards. (Measured before this: 6 of 20 interrupts at random moments of
      `scenario list` ended as -2, some after printing 'interrupted'; after it, 240 of 240 ended as 130 or 0.)"""
    code = EXIT_INTERRUPTED  # unless main() gets to hand back its own
    try:
        code = main()
    except KeyboardInterrupt:
        pass  # the signal fell in the instant between main()'s return and the next lines
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if code == EXIT_INTERRUPTED:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    sys.exit(code)


def _interrupted() -> int:
    try:
        print("slogqual: interrupted", file=sys.stderr)
    except (OSError, ValueError):
        pass
    return EXIT_INTERRUPTED


def _caused_by_interrupt(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt stands behind ``exc``: Python 3.11 re-raises an exception from a
    descriptor's __set_name__ as RuntimeError, so Ctrl-C while a dataclass is being built (importing
    a module) arrives as "RuntimeError: Error calling __set_name__ on 'Field' instance ..."."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False
