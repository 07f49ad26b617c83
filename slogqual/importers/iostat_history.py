"""A recorded ``zpool iostat -T u -vpy POOL INTERVAL`` read as the sync write rate its log vdevs carried,
report by report (``slogqual advise --rate-history``): what the advisor sizes a log for (the busiest
interval) and wears it by (the mean)."""

from __future__ import annotations

from slogqual.analysis.advisor import RateHistory
from slogqual.errors import ToolOutputError, UsageError
from slogqual.paths import require_regular
from slogqual.tools import zpool

MAX_BYTES = 64 << 20  # a day of 1 s reports of a wide pool is a few MB; more is not a recording of one pool


def read(path: str, option: str = "--rate-history") -> RateHistory:
    """The log vdevs' write rate per report of the recording at ``path``. Bad input (not a regular file,
    unreadable, not zpool iostat -vp output, a pool without a log vdev): UsageError, one line."""
    require_regular(path, option)
    try:
        with open(path, errors="replace") as fh:
            text = fh.read(MAX_BYTES)
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        reports = zpool.parse_iostat_stream(text)
    except ToolOutputError as exc:
        raise UsageError(f"{path}: not a zpool iostat -vp recording ({exc})") from None
    rates = zpool.log_write_rates(reports)
    if not rates:
        raise UsageError(f"{path}: no log vdev in any of its {len(reports)} reports: a pool without a SLOG shows no "
                         "sync write rate of its own in zpool iostat; give --rate")
    return RateHistory(path, [float(r) for r in rates], zpool.report_interval_s(reports))
