"""Advise again, on this host, from a check's recorded sweeps and host probe (the FITTING draw only: a test
draw's advice is the one its guest wrote before the pool ran). Writes NAME/advice.json anew.

    python3 contrib/advisor_check/readvise.py OUTDIR
"""

import json
import os
import subprocess
import sys


def main(argv):
    out = argv[0]
    plan = json.load(open(os.path.join(out, "plan.json")))
    if not plan.get("fit"):
        print("not a fitting draw: its advice stands as written before the pool", file=sys.stderr)
        return 2
    for c in plan["configs"]:
        d = os.path.join(out, "lab", c["name"])
        subprocess.run([sys.executable, "-m", "slogqual", "advise", "--log", os.path.join(d, "log.sweep.json"),
                        "--data", *[os.path.join(d, "data.sweep.json")] * len(c["data"]), "--layout", c["layout"],
                        "--protocol", c["protocol"], "--bs", c["bs"], "--threads", ",".join(map(str, c["threads"])),
                        "--tunables", "defaults", "--host", os.path.join(d, "host.json"), "--force",
                        "-o", os.path.join(d, "advice.json")], check=True, stdout=subprocess.DEVNULL)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
