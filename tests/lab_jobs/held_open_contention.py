"""Runs INSIDE the lab guest (from zfs_guest.py): slogqual.pool.held_open against the real failure it
prevents. A zvol's first open must take the pool namespace lock and returns ERESTARTSYS (errno 512) once
zvol_open_timeout_ms has passed without it; with that timeout at 0 and three `zpool list` loops taking the
lock, opening a zvol that nothing holds open fails with 512 within moments. The same opens while
HeldOpen holds it must all succeed, over at least three times as many opens as the first failure took.

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


def opens(until_failure: bool, at_least: int, seconds: float):
    """Open and close the zvol (as fio does, for writing) until the first failure (until_failure) or for
    ``seconds`` and ``at_least`` opens; (opens done, failures by errno, seconds taken)."""
    ok, failed, start = 0, collections.Counter(), time.monotonic()
    while True:
        try:
            os.close(os.open(ZVOL, os.O_WRONLY))
            ok += 1
        except OSError as exc:
            failed[exc.errno] += 1
            if until_failure:
                break
        took = time.monotonic() - start
        if until_failure and took > 60:
            break
        if not until_failure and took >= seconds and ok >= at_least:
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
    loops = [subprocess.Popen(["sh", "-c", "while :; do zpool list -H > /dev/null; done"]) for _ in range(3)]
    try:
        n, failed, took = opens(True, 0, 0)
        report["not_held"] = {"opens_ok": n, "failed": failed, "seconds": took}
        with HeldOpen([ZVOL]):
            n2, failed2, took2 = opens(False, 3 * (n + 1), max(3 * took, 2.0))
        report["held"] = {"opens_ok": n2, "failed": failed2, "seconds": took2}
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
