"""Copy a draw's recordings into the repository's fixtures: the files tests/test_advisor_check.py and
tests/test_host_probe.py read, nothing of the guest's console or the lab's own run files.

    python3 contrib/advisor_check/keep.py OUT tests/fixtures/advisor/check/test-SEED

OUT is run.py's output folder. From it: plan.json and prediction.txt (written before the run), and for each
configuration of the plan its sweeps, the host probe's document and every pass's scenario (a warm-up's too, where
one ran: draw 28045), the advice written before the pool, the pool's run and the verification. A configuration
whose pool did not run (no run.json: the probe or the pool failed) keeps its job's log and the guest's kernel log as
well, which say why.
Refuses a destination that exists: a fixture is recorded once.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import sys

TOP = ("plan.json", "prediction.txt")
EACH = ("advice.json", "advice.txt", "check.toml", "data.sweep.json", "host.json", "log.sweep.json", "run.json",
        "verify.txt")
PROBE_DOCUMENTS = "host.json.*scenario*.json"  # every pass's, the log passes', a warm-up's (draw 28045)
LOST = ("log.txt", "dmesg.txt")  # where the pool did not run: why


def plan_files(out: str) -> list:
    """(source, path under the destination) of every file to keep, in order."""
    with open(os.path.join(out, "plan.json")) as fh:
        plan = json.load(fh)
    files = [(os.path.join(out, name), name) for name in TOP]
    for c in plan["configs"]:
        d = os.path.join(out, "lab", c["name"])
        names = [n for n in EACH if os.path.exists(os.path.join(d, n))]
        names += sorted(os.path.basename(p) for p in glob.glob(os.path.join(d, PROBE_DOCUMENTS)))
        if "run.json" not in names:
            names += [n for n in LOST if os.path.exists(os.path.join(d, n))]
        files += [(os.path.join(d, n), os.path.join("lab", c["name"], n)) for n in names]
    return files


def main(argv) -> int:
    if len(argv) != 2:
        print("usage: keep.py OUT DEST", file=sys.stderr)
        return 2
    out, dest = argv
    if not os.path.exists(os.path.join(out, "prediction.txt")):
        print(f"keep.py: {out}: no prediction.txt — a draw is kept with what was written before it ran",
              file=sys.stderr)
        return 2
    if os.path.exists(dest):
        print(f"keep.py: {dest} exists: a fixture is recorded once", file=sys.stderr)
        return 2
    files = plan_files(out)
    for src, rel in files:
        os.makedirs(os.path.dirname(os.path.join(dest, rel)) or dest, exist_ok=True)
        shutil.copy2(src, os.path.join(dest, rel))
    print(f"{len(files)} files into {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
