"""Runs INSIDE the lab guest (from zfs_guest.py): slogqual.pool.held_open against the real failure it
prevents. A zvol's first open must take the pool namespace lock and returns ERESTARTSYS (errno 512) once
zvol_open_timeout_ms has passed without it; with that timeout at 0 and three `zpool list` processes taking the
lock every millisecond, opening a zvol that nothing holds open fails with 512 again and again. Their rate is
measured over a few seconds of unheld opens; the same opens while HeldOpen holds the zvol must all succeed, over
at least HELD_FACTOR times as many opens as there were per failure (were the held opens as likely to fail, none
failing would have a chance of e**-5, under 1 %).

(Until 2026-11-29 the loops were shell loops of `zpool list`, each process taking the lock once: the first
failure came after 1,100-15,500 opens, 1.3-23 s in six runs (docs/lab.md), and the held phase ran three times as long — 100 s of the shared
guest's time. A `zpool list -H 0.001` repeats in one process: one open in 27-106 failed, four runs.)

    python3 held_open_contention.py DEVICE      (writes held.json in the working directory)
"""

import collections
import json
import os
import subprocess
import sys
import time

from slogqual.pool.held_open import HeldOpen

POOL, ZVOL = "slogqual-held", "/dev/zvol/slogqual-held/lun0"
PARAM = "/sys/module/zfs/parameters/zvol_open_timeout_ms"


UNHELD_S = 3.0  # unheld opens for this long: their failures give the rate
HELD_S = 3.0  # held opens for at least this long ...
HELD_FACTOR = 5  # ... and at least this many times the opens per unheld failure


def opens(seconds: float, at_least: int = 0):
    """Open and close the zvol (as fio does, for writing) for ``seconds`` and ``at_least`` attempts;
    (opens that succeeded, failures by errno, seconds taken)."""
    ok, failed, start = 0, collections.Counter(), time.monotonic()
    while True:
        try:
            os.close(os.open(ZVOL, os.O_WRONLY))
            ok += 1
        except OSError as exc:
            failed[exc.errno] += 1
        if time.monotonic() - start >= seconds and ok + sum(failed.values()) >= at_least:
            break
    return ok, dict(failed), round(time.monotonic() - start, 3)


subprocess.run(["zpool", "create", "-f", POOL, sys.argv[1]], check=True)
report = {}
try:
    subprocess.run(["zfs", "create", "-V", "64M", f"{POOL}/lun0"], check=True)
    subprocess.run(["udevadm", "settle"], check=True)
    report["zvol_open_timeout_ms"] = int(open(PARAM).read())
    with open(PARAM, "w") as fh:
        fh.write("0")
    loops = [subprocess.Popen(["sh", "-c", "exec zpool list -H 0.001 > /dev/null"]) for _ in range(3)]
    try:
        time.sleep(0.5)  # the three are listing
        n, failed, took = opens(UNHELD_S)
        report["not_held"] = {"opens_ok": n, "failed": failed, "seconds": took}
        per_failure = (n + sum(failed.values())) / max(1, sum(failed.values()))
        with HeldOpen([ZVOL]):
            n2, failed2, took2 = opens(HELD_S, int(HELD_FACTOR * per_failure) + 1)
        report["held"] = {"opens_ok": n2, "failed": failed2, "seconds": took2, "factor": HELD_FACTOR}
    finally:
        for lp in loops:
            lp.kill()
            lp.wait()
        with open(PARAM, "w") as fh:
            fh.write(str(report["zvol_open_timeout_ms"]))
finally:
    subprocess.run(["zpool", "destroy", POOL])
with open("held.json", "w") as fh:
    json.dump(report, fh, indent=1)
print(json.dumps(report))
