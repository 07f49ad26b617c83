"""The log candidates' own QD1 sync-write sweeps, kept with a scenario result.

A scenario says how fast the pool went with each SLOG; the log device's sweep says how fast that
device can take the ZIL's writes one at a time. With both, the verdict can name the log device's
bandwidth as the limit with numbers (scaling.log_evidence). The sweeps come from earlier
``slogqual sweep`` results (``--log-sweep FILE``) or are measured on the candidates before the pools
are built (``--sweep-logs``); either way the scenario document keeps a summary per device under
``log_sweeps`` and names the full sweep document it came from.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence

from slogqual.errors import UsageError
from slogqual.progress import Progress
from slogqual.results import STATUS_COMPLETE, SweepResult, load_sweep
from slogqual.units import KiB

# The ZIL writes log blocks of up to 128 KiB (zil_maxblocksize) gathered from the load's records,
# so the sizes a log device sees run from the load's IO size up to there.
ZIL_BLOCK_MAX = 128 * KiB
SMALLEST = 4 * KiB


def sizes_for(load_bs: int) -> List[int]:
    """Powers of two from min(load IO size, 4 KiB) to max(load IO size, 128 KiB)."""
    lo, hi = min(load_bs, SMALLEST), max(load_bs, ZIL_BLOCK_MAX)
    out, s = [], 1 << (lo.bit_length() - 1)
    while s <= hi:
        out.append(s)
        s <<= 1
    return out


def summary(result: SweepResult, source: str) -> Dict[str, Any]:
    """What the scenario keeps of one sweep: its points' bandwidth and latency, and where it came from."""
    dev = result.device or {}
    return {
        "source": source,
        "target": result.target.get("path"),
        "model": dev.get("model"),
        "status": result.status,
        "mode": result.params.get("mode"),
        "runtime_s": result.params.get("runtime_s"),
        "points": [{"size": p.size, "mbps": p.mbps, "iops": p.iops, "ios": p.ios, "lat_mean_us": p.lat_us.mean,
                    "lat_p99_us": p.lat_us.p99, "lat_basis": p.lat_basis} for p in result.points],
    }


def _same_device(a: str, b: str) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b) or os.path.samefile(a, b)
    except OSError:
        return False


def from_files(paths: Sequence[str], logs: Sequence[str]) -> Dict[str, Dict[str, Any]]:
    """{log device: summary} from sweep result files, each matched to a --log device by its target."""
    out: Dict[str, Dict[str, Any]] = {}
    for path in paths:
        result = load_sweep(path)
        target = result.target.get("path") or ""
        match = [d for d in logs if _same_device(d, target)]
        if not match:
            raise UsageError(f"{path}: a sweep of {target or 'an unnamed target'}, which is not one of the "
                             f"--log devices ({', '.join(logs)})")
        if match[0] in out:
            raise UsageError(f"{path}: a second sweep of {match[0]}")
        if not result.points:
            raise UsageError(f"{path}: the sweep has no measured sizes")
        out[match[0]] = summary(result, os.path.abspath(path))
    return out


def measure(logs: Sequence[str], load_bs: int, quick: bool, output: str, progress: Progress,
            fio_version: str, argv: Optional[List[str]], done: Dict[str, Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """Sweep each log candidate not in ``done`` (the scenario holds its devices already claimed),
    writing each sweep next to the scenario result as ``<result>.log<N>.sweep.json``."""
    from slogqual.sweep import target as targets
    from slogqual.sweep.engine import SweepParams, SyncWriteSweep

    sizes = sizes_for(load_bs)
    params = SweepParams(mode="flush", sizes=sizes, runtime_s=1.0 if quick else 5.0, settle_s=0.5 if quick else 1.0)
    out = dict(done)
    stem = output[:-5] if output.endswith(".json") else output
    for i, dev in enumerate(logs):
        if dev in out and out[dev].get("status") == STATUS_COMPLETE:
            continue
        path = f"{stem}.log{i}.sweep.json"
        progress.say(f"sweeping log candidate {dev} ({len(sizes)} sizes) before the pools")
        result = SyncWriteSweep(targets.resolve(dev, max(sizes)), params, path, progress=progress,
                                fio_version=fio_version, argv=argv).run()
        out[dev] = summary(result, path)
    return out
