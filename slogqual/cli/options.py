"""Argument types shared by the subcommands: checked by argparse, so a bad value is one line and exit 2
before anything is claimed, opened or written."""

from __future__ import annotations

import argparse
import math

from slogqual.errors import UsageError
from slogqual.store.backends import is_url


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


def add_force(parser, what: str) -> None:
    parser.add_argument("--force", action="store_true",
                        help=f"let the output replace an existing file that is not a slogqual {what}")


def guard_output(args, path, what: str, ours=None, inputs=()) -> str:
    """Check an output path before anything is done (slogqual.outputs.check_output): never one of the
    command's input files, never the result store, never a device node or FIFO, another existing file
    only with --force. Returns the absolute path."""
    from slogqual import store
    from slogqual.outputs import check_output

    protect = [(p, "an input of this command") for p in inputs if p and p != "-"]
    location = getattr(args, "store", None) or store.default_path()
    if not is_url(location):
        protect.append((location, "the result store"))
    return check_output(str(path), what, ours, protect, force=getattr(args, "force", False),
                        forceable=hasattr(args, "force"))


def refuse_store(args, path, why: str) -> None:
    """UsageError when ``path`` is the result store slogqual resolves (--store, $SLOGQUAL_STORE or the
    default), by real path or by device and inode: a target that ``why`` would destroy."""
    from slogqual import store
    from slogqual.outputs import same_file

    location = getattr(args, "store", None) or store.default_path()
    if not is_url(location) and same_file(path, location):
        raise UsageError(f"{path} is the result store: {why}")
