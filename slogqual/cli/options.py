"""Argument types shared by the subcommands: checked by argparse, so a bad value is one line and exit 2
before anything is claimed, opened or written."""

from __future__ import annotations

import argparse
import math


def seconds(text: str) -> float:
    """A finite, non-negative number of seconds. `inf`, `nan` and `1e309` (which float() turns into
    inf) are refused here: they would reach fio and the result document, where JSON has no word for them."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number of seconds")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value
