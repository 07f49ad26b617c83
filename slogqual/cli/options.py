"""Argument types shared by the subcommands: checked by argparse, so a bad value is one line and exit 2
before anything is claimed, opened or written."""

from __future__ import annotations

import argparse
import math
import os
import re

from slogqual.errors import UsageError
from slogqual.limits import Range


def seconds(text: str) -> float:
    """A finite, non-negative number of seconds. `inf`, `nan` and `1e309` (which float() turns into
    inf) are refused here: they would reach fio and the result document, where JSON has no word for them."""
    value = _number(text, "seconds")
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{shown(text)} is not a finite number of seconds")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value


# What a number is written as: ASCII digits, a point, an exponent. float() and int() would also read
# '١٢٣' (Arabic-Indic digits), '1_000' and 'infinity'; none of them is a figure a command line means.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_WHOLE = re.compile(r"[+-]?[0-9]+", re.ASCII)


def shown(text: str) -> str:
    """``text`` quoted for a refusal, at most 40 characters of it."""
    return repr(text) if len(text) <= 40 else f"{text[:40]!r}…"


def named(what: str):
    """An argparse type for an option that names something (a file, a directory, a store, a model to
    match): '' (an unset variable in a script: -o "$OUT") is refused, not taken as the option left out."""
    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"{shown(text)} is empty: name {what}")
        return text
    return parse


STORE = named("a store (a file or a postgresql:// URL)")  # --store


def _not_a(text: str, what: str) -> argparse.ArgumentTypeError:
    if any(ch.isdigit() and not ch.isascii() for ch in text):
        return argparse.ArgumentTypeError(f"{shown(text)} is not {what} in ASCII digits (0-9)")
    if text.strip().lower().lstrip("+-") in ("inf", "infinity", "nan"):
        return argparse.ArgumentTypeError(f"{shown(text)} is not a finite number")
    return argparse.ArgumentTypeError(f"{shown(text)} is not {what}")


def _number(text: str, unit: str) -> float:
    """A decimal number in ASCII; infinite when it is written too large for a float (1e309, 400 digits)."""
    if not _DECIMAL.fullmatch(text.strip()):
        raise _not_a(text, f"a number of {unit}" if unit else "a number")
    return float(text)


def in_range(r: Range):
    """An argparse type for a number in ``r`` (slogqual.limits: the one definition of each range, which
    the scenario and profile loaders check too); the refusal names the range."""
    def parse(text: str):
        out = argparse.ArgumentTypeError(f"{shown(text)} is out of range ({r.allowed()})")
        if r.size:
            from slogqual.units import parse_size
            try:
                value = parse_size(text)
            except UsageError as exc:
                raise argparse.ArgumentTypeError(str(exc)) from None
            except ValueError:  # int() of more digits than Python converts (4300)
                raise out from None
        elif r.integer:
            if not _WHOLE.fullmatch(text.strip()):
                raise _not_a(text, "a whole number")
            if len(text.strip()) > 40:  # out of every range, and int() refuses past 4300 digits
                raise out
            value = int(text)
        else:
            value = _number(text, r.unit)
        if not r.contains(value):
            raise out
        return value
    return parse


def in_range_list(r: Range):
    """An argparse type for a comma-separated list of numbers each in ``r`` (advise --threads 1,2,4,8):
    sorted, each once."""
    one = in_range(r)

    def parse(text: str):
        parts = [p for p in text.split(",") if p.strip()]
        if not parts:
            raise argparse.ArgumentTypeError(f"{shown(text)}: give numbers separated by commas, e.g. 1,2,4,8")
        return sorted({one(p) for p in parts})
    return parse


def bounded(lo: float, hi: float, unit: str = "seconds", above: bool = False):
    """An argparse type: a finite number from ``lo`` (or above it, with ``above``) to ``hi``."""
    return in_range(Range(lo, hi, unit, above=above))


def count(lo: int, hi: int, unit: str = ""):
    """An argparse type: a whole number from ``lo`` to ``hi`` (the range named in the refusal)."""
    return in_range(Range(lo, hi, unit, integer=True))


def size_range(lo: int, hi: int):
    """An argparse type: a size in bytes (units.parse_size: 64m, 1g) from ``lo`` to ``hi``, the range
    named in the refusal in the same words (a huge size overflowed a truncate or left an empty file)."""
    return in_range(Range(lo, hi, size=True))


def guard_output_dir(path: str, option: str) -> str:
    """A directory the command will make and fill (lab --output): refused now if it or the nearest
    existing directory above it is not a directory (an existing file: a traceback after the run).
    Returns the absolute path."""
    path = os.path.abspath(path)
    probe = path
    while not os.path.exists(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        where = "" if probe == path else f" ({probe} is not a directory)"
        raise UsageError(f"{option} {path}: not a directory{where}")
    return path


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
    protect += store.protected(getattr(args, "store", None))
    return check_output(str(path), what, ours, protect, force=getattr(args, "force", False),
                        forceable=hasattr(args, "force"))


def refuse_store(args, path, why: str) -> None:
    """UsageError when ``path`` is the result store slogqual resolves (--store, $SLOGQUAL_STORE or the
    default), by real path or by device and inode: a target that ``why`` would destroy."""
    from slogqual import store

    store.refuse_overwrite(path, why, getattr(args, "store", None))


def add_path_ceiling(p) -> None:
    """--path-ceiling, the same for every command that analyses shared paths (sweep and qualify --probe,
    scenario run's striped and mirrored logs)."""
    p.add_argument("--path-ceiling", action="append", default=[], metavar="ELEMENT=RATE",
                   help="declare the ceiling (bytes/s, k/m/g binary: 2400m) of a path element that sysfs cannot "
                        "rate (a virtio or RAID HBA, an expander's uplink, a throttled port): ELEMENT is its name "
                        "as the path shows it (host0, 0000:03:00.0, expander-0:1) or DEVICE:KIND, the element of "
                        "that kind nearest DEVICE (/dev/sdb:scsi-host); repeatable; recorded as declared")
