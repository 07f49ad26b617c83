"""Calibrate the lab's relative device classes in the guest, at boot, before the job.

A class with ``bandwidth_share`` (slogqual.lab.devices) has no cap of its own: its nbdkit runs the rate
filter with a ``rate-file`` in the job directory and no rate, so it starts uncapped. stage2.sh runs this
module in the guest once the devices are found: for each such device it measures the device's 128 KiB
QD1 write+flush rate with fio (the sweep's own load at 128 KiB: O_DIRECT, an fdatasync per write), writes
``share x that rate`` into the rate file (the share of what this guest on this host carries, so the
shape holds on a slow host as on a fast one: issue #26), waits for nbdkit to read it, and measures again
to show that the cap holds. What it measured and set goes to ``/lab/calibration.json``; the host copies
it into the run's results (``lab-calibration.json``) and a lab scenario's result (``lab.calibration``).

The measurement writes over the device, which is fine: it is an empty RAM disk of the run, before the
job has touched it (a power-cut class, whose medium is verified afterwards, cannot be calibrated).

Run as ``python3 -m slogqual.lab.calibrate`` with ``LAB_CALIBRATE`` ("index:node:share ...") and
``SLOGQUAL_LAB_DEVICES_JSON`` (the guest paths by index) in the environment; ``/lab`` is the job share.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from typing import Dict, List, Optional, Tuple

from slogqual.errors import SlogqualError, UsageError
from slogqual.units import KiB

CALIBRATION_BS = 128 * KiB  # the size whose bandwidth the capped classes stand for (a log's large writes)
MEASURE_S = 2.0  # uncapped, per window: ~800-1,060 IOs of 128 KiB here, ~400-620 with every core hogged
# The best of three windows: a guest beside another lane's guest (tests/lanes.py) measured 9.3 MiB/s in one
# 3 s window where it had done 43 the run before; contention only ever lowers what the device can carry.
MEASURE_WINDOWS = 3
SETTLE_S = 1.5  # nbdkit reads its rate file "after a short delay" (nbdkit-rate-filter(1))
VERIFY_S = 4.0  # capped: the rate filter's half-second bucket adds at most 0.5/4 = 12.5 % to the average
VERIFY_SLACK = 1.3  # a capped run above 1.3 x the cap means the cap did not take: the boot fails
MIN_CAP_BYTES_S = 64 * KiB  # below this nbdkit's rate filter would starve the job; refuse to boot with it


@dataclass
class Calibration:
    """One relative class's calibration in one guest: what the device did uncapped, and its cap."""

    index: int  # device index (--device order)
    node: str  # QEMU node id (the rate file's name)
    path: str  # the device in the guest
    share: float
    bs: int
    measured_bytes_s: float  # uncapped 128 KiB QD1 write+flush rate
    measured_ios: int
    measured_s: float
    cap_bytes_s: int  # share x measured
    verified_bytes_s: float  # the same load, capped
    verified_ios: int
    verified_s: float
    windows: List[List[float]] = None  # every uncapped window: [bytes/s, IOs, seconds]; the best is measured_*

    def to_dict(self) -> Dict:
        return asdict(self)


def cap_for(measured_bytes_s: float, share: float) -> int:
    """The cap (bytes/s) for a device that measured ``measured_bytes_s`` uncapped: ``share`` of it."""
    if not 0 < share < 1:
        raise UsageError(f"a bandwidth share must be above 0 and below 1, not {share:g}")
    return int(measured_bytes_s * share)


def parse_spec(text: str) -> List[Tuple[int, str, float]]:
    """``LAB_CALIBRATE``: "index:node:share ..." -> [(index, node, share)]."""
    out = []
    for item in text.split():
        parts = item.split(":")
        if len(parts) != 3:
            raise UsageError(f"LAB_CALIBRATE: {item!r} is not index:node:share")
        try:
            out.append((int(parts[0]), parts[1], float(parts[2])))
        except ValueError:
            raise UsageError(f"LAB_CALIBRATE: {item!r} is not index:node:share") from None
    return out


def spec(entries: List[Tuple[int, str, float]]) -> str:
    return " ".join(f"{i}:{node}:{share!r}" for i, node, share in entries)


def rate_file(lab_dir: str, node: str) -> str:
    """Where a calibrated device's rate file is: ``<job dir>/rate/<node>`` (the guest's /lab/rate/<node>)."""
    return os.path.join(lab_dir, "rate", node)


def write_rate(path: str, bytes_s: int) -> None:
    """The rate filter's file, atomically (as its manual asks): bits per second."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="ascii") as fh:
        fh.write(f"{int(bytes_s) * 8}\n")
    os.replace(tmp, path)


def _measure(path: str, seconds: float):
    from slogqual.tools import fio

    r = fio.run_job(fio.FioJob(bs=CALIBRATION_BS, runtime_s=seconds, mode="flush", filename=path, direct=True,
                               name="slogqual-calibrate"))
    return r.bw_bytes, r.ios, r.runtime_ms / 1000.0


def calibrate(entries: List[Tuple[int, str, float]], paths: Dict[int, str], lab_dir: str,
              say=lambda text: None) -> List[Calibration]:
    out = []
    for index, node, share in entries:
        path = paths.get(index)
        if not path:
            raise SlogqualError(f"calibration: device {index} has no path in the guest")
        windows = [_measure(path, MEASURE_S) for _ in range(MEASURE_WINDOWS)]
        bw, ios, secs = max(windows)
        cap = cap_for(bw, share)
        if cap < MIN_CAP_BYTES_S:
            raise SlogqualError(f"calibration: device {index} ({path}) wrote 128 KiB at {bw / 2**20:.2f} MiB/s "
                                f"uncapped ({ios} IOs); a {share:g} share of it is below the least cap the lab sets")
        write_rate(rate_file(lab_dir, node), cap)
        time.sleep(SETTLE_S)
        vbw, vios, vsecs = _measure(path, VERIFY_S)
        say(f"calibration: device {index} ({path}): {bw / 2**20:.1f} MiB/s uncapped ({ios} IOs of 128 KiB), "
            f"cap {share:g} x that = {cap / 2**20:.1f} MiB/s, capped {vbw / 2**20:.1f} MiB/s ({vios} IOs)")
        if vbw > VERIFY_SLACK * cap:
            raise SlogqualError(f"calibration: device {index} ({path}) still wrote {vbw / 2**20:.1f} MiB/s after its "
                                f"cap of {cap / 2**20:.1f} MiB/s was set: nbdkit did not take the rate file")
        out.append(Calibration(index=index, node=node, path=path, share=share, bs=CALIBRATION_BS,
                               measured_bytes_s=bw, measured_ios=ios, measured_s=secs, cap_bytes_s=cap,
                               verified_bytes_s=vbw, verified_ios=vios, verified_s=vsecs,
                               windows=[list(w) for w in windows]))
    return out


def load(path: str) -> List[Dict]:
    """A run's calibration.json ([] when the run calibrated nothing or the file is unreadable)."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return []
    return doc if isinstance(doc, list) else []


def main(argv: Optional[List[str]] = None) -> int:
    lab_dir = os.environ.get("LAB_DIR", "/lab")
    try:
        entries = parse_spec(os.environ.get("LAB_CALIBRATE", ""))
        with open(os.environ["SLOGQUAL_LAB_DEVICES_JSON"], encoding="utf-8") as fh:
            paths = {int(d["index"]): d["path"] for d in json.load(fh)}
        result = calibrate(entries, paths, lab_dir, say=lambda t: print(f"slogqual-lab: {t}", flush=True))
    except (SlogqualError, OSError, KeyError, ValueError) as exc:
        print(f"slogqual-lab: calibration failed: {exc}", file=sys.stderr, flush=True)
        return 1
    tmp = os.path.join(lab_dir, "calibration.json.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump([c.to_dict() for c in result], fh, indent=1)
    os.replace(tmp, os.path.join(lab_dir, "calibration.json"))
    return 0


if __name__ == "__main__":  # pragma: no cover - run in the guest by stage2.sh
    sys.exit(main())
