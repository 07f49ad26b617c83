"""Runs INSIDE the lab guest (from zfs_guest.py): slogqual.pool.held_open against the real failure it
prevents. A zvol's first open must take the pool namespace lock and returns ERESTARTSYS (errno 512) once
zvol_open_timeout_ms has passed without it. With that timeout at 0, a second pool (on a file) exported and
imported over and over keeps the lock: an import holds it through its whole load, asleep on its reads, so
the lock's holder is off the CPU and any vCPU count, host speed or preemption model sees it taken. Two
zvols are opened in turn, one held open by HeldOpen and one that nothing holds, so that both meet the lock
at the same moments: the unheld one fails with 512 again and again, and the held one must never fail, over
at least HELD_FACTOR times as many opens as there were per unheld failure (were the held opens as likely to
fail, none failing would have a chance of e**-5, under 1 %).

(Its forms before: until 2026-11-29 shell loops of `zpool list`, each process taking the lock once — the first
failure came after 1,100-15,500 opens, 1.3-23 s in six runs, and the held phase ran three times as long; then
three `zpool list -H 0.001` processes taking the lock every millisecond, one open in 9-106 failing here over
six runs, but none in 3,102 on the CI machine of stop 44: `zpool list` holds the lock only on the CPU, and
whether an open meets it taken depends on when the holder is preempted. docs/lab.md has the figures.)

    python3 held_open_contention.py DEVICE      (writes held.json in the working directory)
"""

import collections
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

from slogqual.pool.held_open import HeldOpen

POOL = "slogqual-held"
HELD, UNHELD = "/dev/zvol/slogqual-held/lun0", "/dev/zvol/slogqual-held/lun1"
LOCK_POOL = "slogqual-held-lock"  # the pool whose imports keep the namespace lock
PARAM = "/sys/module/zfs/parameters/zvol_open_timeout_ms"

AT_LEAST_S = 3.0  # open both for at least this long ...
# ... until the unheld one failed this often (the two are opened in turn, so the held one's HELD_FACTOR times the
# opens per failure needs HELD_FACTOR failures anyway: the slowed lab tier's run 23 stopped at 5 of 532) ...
MIN_FAILURES = HELD_FACTOR = 5
# ... and the held one was opened HELD_FACTOR times the opens per unheld failure ...
AT_MOST_S = 60.0  # ... but no longer than this


def open_close(path: str, tally: dict) -> None:
    """Open and close ``path`` as fio does (for writing); count the outcome in ``tally``."""
    try:
        os.close(os.open(path, os.O_WRONLY))
        tally["ok"] += 1
    except OSError as exc:
        tally[str(exc.errno)] += 1


def paired_opens():
    """Opens of the held zvol and the unheld one, one after the other (so both meet the lock at the same
    moments), until the relation can be judged or AT_MOST_S has passed; the two tallies and the seconds."""
    held, unheld, start = collections.Counter(), collections.Counter(), time.monotonic()
    while True:
        open_close(UNHELD, unheld)
        open_close(HELD, held)
        took = time.monotonic() - start
        failures = sum(v for k, v in unheld.items() if k != "ok")
        per_failure = sum(unheld.values()) / max(1, failures)
        if took >= AT_MOST_S or (took >= AT_LEAST_S and failures >= MIN_FAILURES
                                 and sum(held.values()) >= HELD_FACTOR * per_failure):
            return held, unheld, round(took, 3)


class ImportLoop:
    """Export and import LOCK_POOL until stopped; counts the commands started (one cycle can outlast the
    opens: the importer shares the one vCPU with them)."""

    def __init__(self, directory: str):
        self.directory, self.commands, self.error = directory, 0, None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        try:
            while not self._stop.is_set():
                self.commands += 1
                subprocess.run(["zpool", "export", LOCK_POOL], check=True)
                self.commands += 1
                subprocess.run(["zpool", "import", "-d", self.directory, LOCK_POOL], check=True)
        except BaseException as exc:  # said by __exit__: opens measured without the loop prove nothing
            self.error = exc

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()  # ends imported: an export/import pair is never cut in two
        if self.error is not None and exc[0] is None:
            raise RuntimeError(f"the export/import loop stopped: {self.error}")


subprocess.run(["zpool", "create", "-f", POOL, sys.argv[1]], check=True)
report = {}
lock_dir = tempfile.mkdtemp(prefix="slogqual-held-lock-", dir="/var/tmp")
lock_file = os.path.join(lock_dir, "vdev0")
try:
    for lun in ("lun0", "lun1"):
        subprocess.run(["zfs", "create", "-V", "64M", f"{POOL}/{lun}"], check=True)
    with open(lock_file, "wb") as fh:
        fh.truncate(128 << 20)
    subprocess.run(["zpool", "create", "-f", LOCK_POOL, lock_file], check=True)
    subprocess.run(["udevadm", "settle"], check=True)
    report["zvol_open_timeout_ms"] = int(open(PARAM).read())
    with open(PARAM, "w") as fh:
        fh.write("0")
    try:
        with HeldOpen([HELD]), ImportLoop(lock_dir) as loop:
            held, unheld, took = paired_opens()
            commands = loop.commands
    finally:
        with open(PARAM, "w") as fh:
            fh.write(str(report["zvol_open_timeout_ms"]))
    report["seconds"], report["lock_pool_commands"] = took, commands
    for name, tally in (("not_held", unheld), ("held", held)):
        report[name] = {"opens_ok": tally.pop("ok", 0), "failed": dict(tally), "seconds": took}
    report["held"]["factor"] = HELD_FACTOR
finally:
    subprocess.run(["zpool", "destroy", LOCK_POOL])
    subprocess.run(["zpool", "destroy", POOL])
    if os.path.exists(lock_file):
        os.unlink(lock_file)
    os.rmdir(lock_dir)
with open("held.json", "w") as fh:
    json.dump(report, fh, indent=1)
print(json.dumps(report))
