"""A recorded ``zpool iostat -T u -vpy POOL INTERVAL`` read as the sync write rate its log vdevs carried,
report by report (``slogqual advise --rate-history``): what the advisor sizes a log for (the busiest
interval) and wears it by (the mean).

The recording is read whole, in pieces of whole reports (a day of 1 s reports of a small pool is about
100 MB), up to MAX_BYTES; a larger one is refused with that limit named, never read in part. Each line is
checked as zpool writes it: figures in ASCII digits that a 64-bit counter holds, time stamps (-T u) that
never go back; a line that breaks one is named."""

from __future__ import annotations

import os
import re
from typing import List, Optional, Tuple

from slogqual import limits
from slogqual.analysis.advisor import MB, RateHistory
from slogqual.errors import ToolOutputError, UsageError
from slogqual.paths import require_regular
from slogqual.tools import zpool
from slogqual.units import GiB, size_label

# 1 GiB: a day of 1 s reports of a pool of about a hundred disks (-v prints a row per vdev, ~115 bytes);
# read in pieces, so memory holds one piece and a figure per report, whatever the length
MAX_BYTES = 1 * GiB
PIECE_LINES = 50_000  # the lines parsed at once (about 5 MB), cut only where a report's table ends
MAX_FIGURE = (1 << 64) - 1  # zpool iostat -p prints uint64 counters and rates
_LONG_FIGURE = re.compile(r"(?<!\S)[0-9]{20,}(?!\S)", re.ASCII)  # a figure as long as 2^64's 20 digits, or longer


def read(path: str, option: str = "--rate-history") -> RateHistory:
    """The log vdevs' write rate per report of the recording at ``path``. Bad input (not a regular file,
    unreadable, larger than MAX_BYTES, not zpool iostat -vp output, a figure or time line zpool cannot have
    written, a pool without a log vdev): UsageError, one line."""
    require_regular(path, option)
    rates: List[int] = []
    stamps: List[int] = []
    count = 0
    try:
        with open(path, errors="replace") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_BYTES:
                raise _too_large(path, size)
            piece: List[str] = []
            last: Optional[Tuple[int, int]] = None  # (time stamp, line number) of the latest time line
            chars = rules = 0
            for number, line in enumerate(fh, 1):
                chars += len(line)
                if chars > MAX_BYTES:  # grown while read
                    raise _too_large(path, chars)
                stamp = _checked(line, number, path)
                if stamp is not None:
                    if last is not None and stamp < last[0]:
                        raise UsageError(f"{path} line {number}: time {stamp} is before line {last[1]}'s {last[0]}: "
                                         "its reports go back in time (two recordings joined, or a clock set back); "
                                         "give one recording, in order")
                    last = (stamp, number)
                piece.append(line)
                if line.startswith("----"):  # a report's table is between two rules (zpool.parse_iostat_stream)
                    rules += 1
                    if rules % 2 == 0 and len(piece) >= PIECE_LINES:  # a report ends here: cut
                        count += _parse(piece, path, rates, stamps)
                        piece = []
            count += _parse(piece, path, rates, stamps)
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not rates:
        raise UsageError(f"{path}: no log vdev in any of its {count} reports: a pool without a SLOG shows no "
                         "sync write rate of its own in zpool iostat; give --rate")
    peak = max(rates)
    if peak > limits.RATE_MBPS.hi * MB:
        raise UsageError(f"{path}: its log vdevs wrote {peak} bytes/s in a report, more than a log carries "
                         f"(rate {limits.RATE_MBPS.allowed()})")
    return RateHistory(path, [float(r) for r in rates], _interval(stamps))


def _too_large(path: str, size: int) -> UsageError:
    return UsageError(f"{path}: {size:,} bytes, more than the {MAX_BYTES:,} ({size_label(MAX_BYTES)}) of recording "
                      "advise reads (a day of 1 s reports of a pool of a hundred disks); record at a longer interval, "
                      "or give the part of it to size for")


def _checked(line: str, number: int, path: str) -> Optional[int]:
    """The time stamp of a -T u time line (digits alone), else None; UsageError naming the line where a
    figure is not in ASCII digits (int() would read '١٢٣' as 123) or is more than a 64-bit counter holds."""
    if not line.isascii():
        for word in line.split():
            if any(ch.isdigit() and not ch.isascii() for ch in word):
                raise UsageError(f"{path} line {number}: {word[:40]!r} is not in ASCII digits: not zpool iostat's "
                                 "output")
    for long in _LONG_FIGURE.findall(line):
        if len(long) > 20 or int(long) > MAX_FIGURE:
            raise UsageError(f"{path} line {number}: a figure of {len(long)} digits, more than zpool's 64-bit "
                             "counters hold: not zpool iostat's output")
    alone = line.strip()
    return int(alone) if alone.isdigit() else None


def _parse(piece: List[str], path: str, rates: List[int], stamps: List[int]) -> int:
    """Parse ``piece`` (whole reports, each from its time line): its log rates and time stamps appended;
    returns how many reports it held."""
    if not piece:
        return 0
    try:
        reports = zpool.parse_iostat_stream("".join(piece))
    except ToolOutputError as exc:
        raise UsageError(f"{path}: not a zpool iostat -vp recording ({exc})") from None
    rates.extend(zpool.log_write_rates(reports))
    stamps.extend(r.time for r in reports if r.time is not None)
    return len(reports)


def _interval(stamps: List[int]) -> Optional[float]:
    """The seconds between reports (zpool.report_interval_s over every piece's time stamps)."""
    return zpool.report_interval_s([zpool.IostatReport(t, []) for t in stamps])
