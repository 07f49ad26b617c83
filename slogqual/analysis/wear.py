"""Wear read before and after a measurement (issue #29): what the device itself counted of the bytes slogqual
wrote, and how far its own endurance estimate moved — the evidence behind a log device's predicted life.

NVMe's SMART/Health log (the only standard source slogqual reads; slogqual.device.thermal takes it with the
heat) has two endurance fields: **Data Units Written**, host writes in units of 1000 512-byte blocks, each
reading rounded up (NVMe Base Specification, SMART / Health Information log page 02h), and **Percentage
Used**, the vendor's estimate of the rated life used, in whole per cent (it may pass 100). What neither
says is the flash's own write amplification: the NAND writes are not in the standard log. So:

- ``counted_ratio``: the bytes the device counted against the bytes written (the difference of two
  rounded-up readings is exact to one unit, 512,000 bytes; given from 100 units written on, ±1 %). Near 1,
  the device counts host writes as slogqual made them; a ratio far from 1 means its counter is not what
  it claims (or something else wrote it meanwhile).
- ``percentage_used`` moved by Δ whole per cent over W bytes: the true use lies between Δ-1 and Δ+1 per
  cent (each reading truncated to a whole number), so one per cent of the rated life costs between
  W/(Δ+1) and W/(Δ-1) bytes; from Δ ≥ 2 on that is a measured endurance, with both ends given. Δ of 0 or 1
  says only that a per cent costs more than W/2 bytes: too few writes to measure one.

Pure functions on snapshot dictionaries (ThermalSnapshot.to_dict); no process is started.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence

UNIT_BYTES = 512_000  # one NVMe data unit: 1000 blocks of 512 bytes
RATIO_MIN_UNITS = 100  # below 100 units written the one-unit rounding is more than 1 %: no ratio
MEASURED_MIN_STEPS = 2  # percentage used must move by at least this many per cent to bound a per cent's cost


def summary(before: Mapping[str, Any], after: Mapping[str, Any], written_bytes: int) -> Optional[Dict[str, Any]]:
    """The wear one measurement caused, from the snapshots before and after it and the bytes it wrote; None
    when neither snapshot pair reports an endurance field."""
    units = (before.get("data_units_written"), after.get("data_units_written"))
    used = (before.get("percentage_used"), after.get("percentage_used"))
    have_units, have_used = None not in units, None not in used
    if not (have_units or have_used):
        return None
    out: Dict[str, Any] = {"source": after.get("source"), "written_bytes": int(written_bytes)}
    if have_units:
        counted = (units[1] - units[0]) * UNIT_BYTES
        enough = written_bytes >= RATIO_MIN_UNITS * UNIT_BYTES
        out.update(data_units_written={"before": units[0], "after": units[1]}, device_counted_bytes=counted,
                   resolution_bytes=UNIT_BYTES, counted_ratio=round(counted / written_bytes, 4) if enough else None)
    if have_used:
        delta = used[1] - used[0]
        out.update(percentage_used={"before": used[0], "after": used[1]}, percentage_used_delta=delta)
        if delta >= MEASURED_MIN_STEPS and written_bytes > 0:
            out["bytes_per_percent"] = {"low": round(written_bytes / (delta + 1)),
                                        "high": round(written_bytes / (delta - 1))}
    return out


def evidence(points: Sequence[Any]) -> Optional[Dict[str, Any]]:
    """The wear evidence of a sweep: the summary of its point that wrote the most (a --sustain run's one
    size, or the sweep's largest), with that point's size; None when no point has one."""
    best = None
    for p in points:
        w = getattr(p, "wear", None)
        if w and (best is None or w["written_bytes"] > best[1]["written_bytes"]):
            best = (p.size, w)
    if best is None:
        return None
    return dict(best[1], size=best[0])


def measured_life(wear: Mapping[str, Any], bytes_per_day: float) -> Optional[Dict[str, Any]]:
    """Years until the device's percentage used reaches 100 at ``bytes_per_day``, from its own measured cost
    of a per cent (``bytes_per_percent``, both ends): {"years_low", "years_high", "remaining_percent"};
    None without a measured cost or a rate."""
    cost = wear.get("bytes_per_percent")
    used = (wear.get("percentage_used") or {}).get("after")
    if not cost or used is None or bytes_per_day <= 0:
        return None
    remaining = max(0, 100 - used)
    return {"remaining_percent": remaining,
            "years_low": round(remaining * cost["low"] / bytes_per_day / 365, 3),
            "years_high": round(remaining * cost["high"] / bytes_per_day / 365, 3)}
