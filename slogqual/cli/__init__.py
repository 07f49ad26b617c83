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
import sys
from typing import List, Optional

from slogqual import __version__, process

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
    "advise", "host",
]


# Each command word and the module that registers it. A command line names one: only its module is imported
# (a lab guest under TCG spent 9 s importing all of them for `slogqual --version`; each slogqual a lab job
# starts pays it). No command word (--help, a typo): all of them, for the list of choices.
COMMANDS = {
    "sweep": "sweep", "devices": "devices", "inspect": "devices", "lab": "lab", "scenario": "scenario",
    "plot": "plot", "import": "import_cmd", "compare": "compare", "report": "report", "export": "export",
    "qualify": "qualify", "history": "history", "fleet": "fleet", "store": "store_cmd", "powercut": "powercut",
    "advise": "advise", "host-probe": "host",
}


def _modules_for(argv: Optional[List[str]]) -> List[str]:
    """The modules to import for this command line: its command word's, or all when it has none we know."""
    argv = sys.argv[1:] if argv is None else argv
    words = [a for a in argv if not a.startswith("-")]
    if words and words[0] in COMMANDS:
        return [COMMANDS[words[0]]]
    if not words and "--version" in argv:
        return []
    return COMMAND_MODULES


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, like every other bad input
        self.exit(2, f"slogqual: error: {message}\n")


def build_parser(argv: Optional[List[str]] = None, every: bool = False) -> argparse.ArgumentParser:
    """The parser for this command line (only its command's subparser), or with ``every`` all of them."""
    parser = _Parser(prog="slogqual", description="Qualify devices as ZFS SLOG (separate intent log) devices.")
    parser.add_argument("--version", action="version", version=f"slogqual {__version__}")
    parser.add_argument("--debug", action="store_true", help="log every external command run")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in (COMMAND_MODULES if every else _modules_for(argv)):
        importlib.import_module(f"slogqual.cli.{name}").register(sub)
    return parser


def entry() -> None:
    """The process entry point (the `slogqual` console script and `python -m slogqual`); ``main`` is the
    callable one. How the process ends after main() returned: slogqual.process.end."""
    process.end(main)


def main(argv: Optional[List[str]] = None) -> int:
    """Parse, run the subcommand, return its exit status (slogqual.process.run_main: typed errors are one
    line and their exit code, Ctrl-C/SIGTERM 130, a closed stdout 141)."""
    return process.run_main(lambda: _main(argv))


def _main(argv: Optional[List[str]]) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING, format="%(name)s: %(message)s")
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    return process.one_line(lambda: args.func(args))
