"""slogqual itself as a helper process: this interpreter running ``python -m slogqual ARGS``.

The powercut writer runs as a process of its own (so that a power cut that hangs its IO can be ended
by its PID, and so that it dies alone), started here like every other program slogqual runs."""

from __future__ import annotations

import sys
from typing import List, Sequence

from slogqual.tools import run as _run

PIPE = _run.PIPE


def argv(args: Sequence[str]) -> List[str]:
    return [sys.executable, "-m", "slogqual", *[str(a) for a in args]]


def background(args: Sequence[str], **kwargs) -> _run.Background:
    """A Background (not started) of ``slogqual ARGS``; kwargs as for Background."""
    return _run.Background(argv(args), **kwargs)
