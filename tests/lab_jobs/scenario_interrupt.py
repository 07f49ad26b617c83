"""Runs INSIDE a lab guest (see tests/test_scenario_lab.py): interrupt a scenario at a random step,
record what is left, resume it, and write the evidence to $SLOGQUAL_LAB_OUT/interrupt.json.

    python3 scenario_interrupt.py [SEED [SCENARIO [OPTION ...]]]

SCENARIO is a TOML file beside this one or a shipped scenario's name (run --quick); the OPTIONs go to
`slogqual scenario run` as they are (e.g. --fio-servers 2). With a transport scenario (the shipped
iscsi-4k-randwrite-lio) the transport's leftovers (sessions, targets, mounts, exports, daemons) are
recorded beside the pools'.
"""

import json
import os
import random
import signal
import subprocess
import sys
import time

from leftovers import leftovers, protocol_leftovers  # beside this file

devs = os.environ["SLOGQUAL_LAB_DEVICES"].split()
outdir = os.environ.get("SLOGQUAL_LAB_OUT", ".")
result_path = os.path.join(outdir, "r.json")
seed = int(sys.argv[1]) if len(sys.argv) > 1 else random.randrange(1 << 30)
rng = random.Random(seed)
# interrupt-zvol.toml beside this file: iscsi-4k-randwrite's shape with short steps; one log candidate:
# 3 configurations x 2 thread steps
NAME = sys.argv[2] if len(sys.argv) > 2 else "interrupt-zvol.toml"
SCENARIO = os.path.join(os.path.dirname(os.path.abspath(__file__)), NAME) if NAME.endswith(".toml") else NAME
OPTIONS = sys.argv[3:]
total = 6
k = rng.randint(1, total - 1)  # interrupt once k steps are finished ...
extra = rng.uniform(0.0, 3.0)  # ... and this much later: in a step, a pool build or a teardown


def load():
    with open(result_path) as fh:
        return json.load(fh)


base = ["slogqual", "scenario", "run", "--quiet", "--destroy-data"]
proc = subprocess.Popen(base + [SCENARIO, "--quick", "-o", result_path, *OPTIONS,
                                "--data", devs[0], devs[1], "--log", devs[2]])
deadline = time.monotonic() + 900
while time.monotonic() < deadline:
    if os.path.exists(result_path) and len(load()["steps"]) >= k:
        break
    if proc.poll() is not None:
        break
    time.sleep(0.1)
time.sleep(extra)
proc.send_signal(signal.SIGINT)
rc = proc.wait(timeout=300)
interrupted = load()
left = leftovers()
protocols_left = protocol_leftovers()
resume = subprocess.run(base + ["--resume", result_path], capture_output=True, text=True)
final = load()
report = {
    "seed": seed, "k": k, "extra_s": extra, "interrupt_rc": rc,
    "interrupted_status": interrupted["status"], "interrupted_steps": interrupted["steps"],
    "left_after_interrupt": left, "resume_rc": resume.returncode, "resume_stderr": resume.stderr[-2000:],
    "final_status": final["status"], "final_steps": final["steps"],
    "left_after_resume": leftovers(),
    "protocols_left_after_interrupt": protocols_left, "protocols_left_after_resume": protocol_leftovers(),
}
with open(os.path.join(outdir, "interrupt.json"), "w") as fh:
    json.dump(report, fh, indent=2)
print(f"interrupt test: seed {seed}, interrupted after {k} steps + {extra:.1f} s: rc {rc}, "
      f"{len(interrupted['steps'])} steps kept; resume rc {resume.returncode}, {len(final['steps'])} steps")
