"""The slogqual command line: argument parsing and wiring only.

Each subcommand lives in its own module in this package exposing
``register(subparsers)`` (which adds its parser and sets ``func``) so that
features stay independent. Errors become one line on stderr and the exit
code that :mod:`slogqual.errors` assigns to them.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import signal
import sys
from typing import List, Optional

from slogqual import __version__, interrupts
from slogqual.errors import SlogqualError

EXIT_INTERRUPTED = 130  # Ctrl-C or SIGTERM: what was measured is kept, what slogqual made is torn down
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE  # what a shell reports for a program that SIGPIPE ended

# Modules in slogqual.cli that provide subcommands, in --help order.
COMMAND_MODULES = [
    "sweep",
    "devices",
    "lab",
    "scenario",
    "plot",
    "import_cmd",
    "compare",
    "report",
    "export",
    "qualify", "history", "fleet", "store_cmd",
    "powercut",
    "advise",
]


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, like every other bad input
        self.exit(2, f"slogqual: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="slogqual", description="Qualify devices as ZFS SLOG (separate intent log) devices.")
    parser.add_argument("--version", action="version", version=f"slogqual {__version__}")
    parser.add_argument("--debug", action="store_true", help="log every external command run")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(f"slogqual.cli.{name}").register(sub)
    return parser


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


def entry() -> None:
    """The process entry point (the `slogqual` console script and `python -m slogqual`); ``main`` is the
    callable one. Once main() has returned, the work is done and its end is final:

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


def main(argv: Optional[List[str]] = None) -> int:
    try:
        # First, inside the try: from here on a signal at any moment (parsing, importing a subcommand's
        # modules, measuring) ends in one line and exit 130, never a traceback or a silent -15. A Ctrl-C
        # that lands in a callback Python cannot raise into (CI: the import machinery's weakref callback
        # printed "Exception ignored ... KeyboardInterrupt") is raised again, not printed and lost.
        sys.unraisablehook = interrupts.redeliver_lost_interrupt
        signal.signal(signal.SIGTERM, _terminate_as_interrupt)
        code = _main(argv)
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


def _main(argv: Optional[List[str]]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING, format="%(name)s: %(message)s")
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except SlogqualError as exc:
        print(f"slogqual: {exc}", file=sys.stderr)
        return exc.exit_code
