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

from slogqual import __version__
from slogqual.errors import SlogqualError

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
    "qualify", "history",
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


def main(argv: Optional[List[str]] = None) -> int:
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
    except KeyboardInterrupt:
        print("slogqual: interrupted", file=sys.stderr)
        return 130
