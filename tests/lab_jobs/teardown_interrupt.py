"""Runs INSIDE a lab guest (see tests/test_scenario_lab.py): interrupt a scenario run while its own
`zpool create`, then its own `zpool destroy`, is running, and record what is left in
$SLOGQUAL_LAB_OUT/teardown.json.

These are the two moments a random interrupt rarely hits and a naive teardown gets wrong: the kernel
has made the pool but zpool has not returned yet (so the runner never learnt it exists), or the
pool is half torn down when the interrupt kills `zpool destroy`.

    python3 teardown_interrupt.py [SEED]
"""

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

from leftovers import leftovers  # beside this file

devs = os.environ["SLOGQUAL_LAB_DEVICES"].split()
outdir = os.environ.get("SLOGQUAL_LAB_OUT", ".")
seed = int(sys.argv[1]) if len(sys.argv) > 1 else random.randrange(1 << 30)
rng = random.Random(seed)
SCENARIO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interrupt-zvol.toml")  # short steps


def _children(parent: int):
    """PIDs of ``parent``'s children: one read of /proc/PID/task/PID/children (CONFIG_PROC_CHILDREN)
    where the kernel has it, a scan of /proc otherwise. The watch polls every few milliseconds on the
    guest's single TCG vCPU; a full /proc scan each time would steal the CPU from the run it watches."""
    try:
        with open(f"/proc/{parent}/task/{parent}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except FileNotFoundError:
        pass
    except OSError:
        return []
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                if int(fh.read().rsplit(")", 1)[1].split()[1]) == parent:
                    found.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return found


def zpool_child(parent: int, verb: str):
    """PID of a `zpool VERB slogqual-…` process started by ``parent``, or None."""
    for pid in _children(parent):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        if (len(argv) > 2 and os.path.basename(argv[0]) == b"zpool" and argv[1] == verb.encode()
                and any(a.startswith(b"slogqual-") for a in argv[2:])):
            return pid
    return None


def interrupt_during(verb: str, result: str):
    proc = subprocess.Popen(["slogqual", "scenario", "run", "--quiet", "--destroy-data", SCENARIO,
                             "--quick", "-o", result, "--data", devs[0], devs[1], "--log", devs[2]])
    deadline, child = time.monotonic() + 600, None
    while time.monotonic() < deadline and proc.poll() is None:
        child = zpool_child(proc.pid, verb)
        if child:
            break
        time.sleep(0.002)
    delay = rng.uniform(0.0, 0.3)  # somewhere inside the command: before or after the kernel acted
    time.sleep(delay)
    alive = child is not None and os.path.exists(f"/proc/{child}")
    proc.send_signal(signal.SIGINT)
    rc = proc.wait(timeout=300)
    return {"verb": verb, "seen": child is not None, "child_alive_at_signal": alive, "delay_s": delay, "rc": rc,
            "left": leftovers(),
            # the pools' mount directories (mkdtemp, slogqual-POOL-…)
            "mount_roots": sorted(e for e in os.listdir(tempfile.gettempdir()) if e.startswith("slogqual-"))}


report = {"seed": seed, "runs": [interrupt_during("create", os.path.join(outdir, "create.json")),
                                 interrupt_during("destroy", os.path.join(outdir, "destroy.json"))]}
with open(os.path.join(outdir, "teardown.json"), "w") as fh:
    json.dump(report, fh, indent=2)
print(json.dumps(report))
