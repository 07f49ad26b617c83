"""Wear read before and after a measurement (issue #29): what the device itself counted of the bytes slogqual
wrote, and how far its own endurance estimate moved — the evidence behind a log device's predicted life.

The standard sources (slogqual.device.thermal takes them with the heat) are, per protocol:

- NVMe's SMART/Health log: **Data Units Written**, host writes in units of 1000 512-byte blocks, each reading
  rounded up (NVMe Base Specification, log page 02h), and **Percentage Used**, the vendor's estimate of the
  rated life used, in whole per cent (it may pass 100).
- ATA's Device Statistics (``smartctl -l devstat``): **Logical Sectors Written** (page 1), a count of whole
  logical sectors, and the **Percentage Used Endurance Indicator** (page 7), the same estimate as NVMe's.
- SCSI: the Solid State Media log page's **Percentage Used Endurance Indicator** (``-l ssd``) and the Write
  Error Counter log page's **total bytes processed** (``-l error``), which smartctl gives to the nearest
  10^6 bytes.

What none says is the flash's own write amplification: the NAND writes are not in the standard logs. So:

- ``counted_ratio``: the bytes the device counted against the bytes written. The difference of two readings
  is exact to one ``resolution_bytes`` (a data unit, a logical sector, 10^6 bytes); the ratio is given from
  100 of them written on (±1 %). Near 1, the device counts host writes as slogqual made them; a ratio far
  from 1 means its counter is not what it claims (or lags, or something else wrote it meanwhile).
- ``percentage_used`` moved by Δ whole per cent over W bytes: the true use lies between Δ-1 and Δ+1 per
  cent (each reading a whole number, however the device rounds), so one per cent of the rated life costs
  between W/(Δ+1) and W/(Δ-1) bytes; from Δ ≥ 2 on that is a measured endurance, with both ends given. Δ of
  0 or 1 says only that a per cent costs more than W/2 bytes: too few writes to measure one.

Pure functions on snapshot dictionaries (ThermalSnapshot.to_dict); no process is started.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

UNIT_BYTES = 512_000  # one NVMe data unit: 1000 blocks of 512 bytes
SCSI_RESOLUTION_BYTES = 1_000_000  # smartctl's "gigabytes processed" has three decimals
RATIO_MIN_UNITS = 100  # below 100 resolutions written the rounding is more than 1 %: no ratio
MEASURED_MIN_STEPS = 2  # percentage used must move by at least this many per cent to bound a per cent's cost

# The host-write counters, by the snapshot field that holds each, in the order they are looked for; what each
# is called in words.
COUNTERS = {
    "data_units_written": "NVMe Data Units Written",
    "logical_sectors_written": "ATA Device Statistics' Logical Sectors Written",
    "write_bytes_processed": "SCSI write error counter's bytes processed",
}


def _bytes_per_count(snap: Mapping[str, Any], field: str) -> Optional[Tuple[int, int]]:
    """(bytes one count of ``field`` is, the resolution of a difference of two readings in bytes)."""
    if field == "data_units_written":
        return UNIT_BYTES, UNIT_BYTES
    if field == "logical_sectors_written":
        size = snap.get("logical_sector_bytes")
        return (size, size) if isinstance(size, int) and size > 0 else None
    return 1, SCSI_RESOLUTION_BYTES


def _host_writes(before: Mapping[str, Any], after: Mapping[str, Any]) -> Optional[Tuple[str, int, int, int, int]]:
    """(field, count before, count after, bytes per count, resolution) of the first counter both snapshots
    report in the same unit; None when there is none."""
    for field in COUNTERS:
        counts = (before.get(field), after.get(field))
        unit = _bytes_per_count(after, field)
        if None in counts or unit is None or _bytes_per_count(before, field) != unit:
            continue
        return (field,) + counts + unit
    return None


def summary(before: Mapping[str, Any], after: Mapping[str, Any], written_bytes: int) -> Optional[Dict[str, Any]]:
    """The wear one measurement caused, from the snapshots before and after it and the bytes it wrote; None
    when neither snapshot pair reports an endurance field."""
    writes = _host_writes(before, after)
    used = (before.get("percentage_used"), after.get("percentage_used"))
    have_used = None not in used
    if not (writes or have_used):
        return None
    out: Dict[str, Any] = {"source": after.get("source"), "written_bytes": int(written_bytes)}
    if writes:
        field, first, last, per_count, resolution = writes
        counted = (last - first) * per_count
        enough = written_bytes >= RATIO_MIN_UNITS * resolution
        out.update({field: {"before": first, "after": last}, "counter": field, "device_counted_bytes": counted,
                    "resolution_bytes": resolution,
                    "counted_ratio": round(counted / written_bytes, 4) if enough else None})
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
