"""CSV export of sweep points: one row per (result, size), every figure the schema holds."""

from __future__ import annotations

import csv
import io
from typing import List, Optional, Sequence

from slogqual.report.plot import series_label
from slogqual.results import SweepResult
from slogqual.units import size_label

COLUMNS = [
    "result", "device", "target", "source", "mode", "size", "size_label", "ios",
    "lat_mean_us", "lat_p50_us", "lat_p99_us", "lat_p999_us", "lat_max_us", "lat_min_us", "lat_stddev_us",
    "lat_basis", "iops", "mbps", "runtime_ms",
]


def _v(x: Optional[float]) -> str:
    return "" if x is None else repr(float(x)) if isinstance(x, float) else str(x)


def to_csv(results: Sequence[SweepResult], names: Sequence[str]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r, name in zip(results, names):
        label = series_label(r)
        for p in r.points:
            lat = p.lat_us
            w.writerow([
                name, label, (r.target or {}).get("path", ""), r.source, r.params.get("mode", ""),
                p.size, size_label(p.size), p.ios,
                _v(lat.mean), _v(lat.p50), _v(lat.p99), _v(lat.p999), _v(lat.max), _v(lat.min), _v(lat.stddev),
                p.lat_basis, _v(p.iops), _v(p.mbps), _v(p.runtime_ms),
            ])
    return buf.getvalue()


def rows(text: str) -> List[dict]:
    """Read back what to_csv wrote (for tests and scripts)."""
    return list(csv.DictReader(io.StringIO(text)))
