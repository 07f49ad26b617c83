"""Advise again, on this host, from a check's recorded sweeps and host probe (the FITTING draw only: a test
draw's advice is the one its guest wrote before the pool ran). Writes NAME/advice.json anew.

    python3 contrib/advisor_check/readvise.py OUTDIR
"""

import json
import os
import subprocess
import sys


def advise_argv(d, c, out, force=False):
    """The `slogqual advise` command line that predicts configuration ``c`` of a check from its recorded inputs in
    ``d`` (its log's and data disk's sweeps, its host probe), written to ``out`` — the one the guest ran."""
    return [sys.executable, "-m", "slogqual", "advise", "--log", os.path.join(d, "log.sweep.json"),
            "--data", *[os.path.join(d, "data.sweep.json")] * len(c["data"]), "--layout", c["layout"],
            "--protocol", c["protocol"], "--bs", c["bs"], "--threads", ",".join(map(str, c["threads"])),
            "--tunables", "defaults", "--host", os.path.join(d, "host.json"), *(["--force"] if force else []),
            "-o", str(out)]


def main(argv):
    out = argv[0]
    plan = json.load(open(os.path.join(out, "plan.json")))
    if not plan.get("fit"):
        print("not a fitting draw: its advice stands as written before the pool", file=sys.stderr)
        return 2
    for c in plan["configs"]:
        d = os.path.join(out, "lab", c["name"])
        subprocess.run(advise_argv(d, c, os.path.join(d, "advice.json"), force=True), check=True,
                       stdout=subprocess.DEVNULL)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
