"""A slogqual library module as a helper process: this interpreter running ``python -m slogqual.X.Y ARGS``.

The powercut writer runs as a process of its own (so that a power cut that hangs its IO can be ended
by its PID, and so that it dies alone), started here like every other program slogqual runs. What runs
is a library module with a ``main(argv)`` of its own, never the command line: the CLI
(``slogqual``, ``slogqual.cli…``, ``slogqual.__main__``) is the user's door, and nothing below it
starts it by its command words (tests/test_layering.py).

It is in ``slogqual/tools/`` because it starts a process: the program is Python (this interpreter), and
this module is its door, as zpool.py is zpool's."""

from __future__ import annotations

import sys
from typing import List, Sequence

from slogqual.tools import spawn as _run

PIPE = _run.PIPE


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def check(module: str) -> str:
    """``module`` if it is a slogqual library module this door may run; else ValueError (a bug in the
    caller, not bad input: the CLI, or a name outside slogqual or not a dotted module name)."""
    parts = module.split(".") if isinstance(module, str) else []
    if len(parts) < 2 or parts[0] != "slogqual" or not all(p.isidentifier() for p in parts):
        raise ValueError(f"{module!r}: not a slogqual library module (slogqual.PACKAGE.MODULE)")
    if _under(module, "slogqual.cli") or _under(module, "slogqual.__main__"):
        raise ValueError(f"{module}: the command line is the user's door; run a library module with a "
                         "main(argv) of its own")
    return module


def argv(module: str, args: Sequence[str]) -> List[str]:
    """The argv of this interpreter running ``module`` (checked) with ``args``."""
    return [sys.executable, "-m", check(module), *[str(a) for a in args]]


def background(module: str, args: Sequence[str], **kwargs) -> _run.Background:
    """A Background (not started) of ``python -m MODULE ARGS``; kwargs as for Background."""
    return _run.Background(argv(module, args), **kwargs)
