"""Runs INSIDE a lab guest (contrib/advisor_check/run.py boots it): for each configuration of a plan, the
advisor's prediction made and written BEFORE the pool runs, then the pool measured, then the two compared.

    python3 guest_job.py PLAN

PLAN (JSON text: the host's files are not the guest's): {"configs": [{"name", "log": guest index, "data": [indices], "layout", "protocol", "bs",
"threads": [..]}], "runtime": s, "ramp": s[, "probe_runtime": s]}. Each configuration's files go to $SLOGQUAL_LAB_OUT/NAME/:
log.sweep.json, data.sweep.json (one data disk: the slowest speaks for all; they are one class),
host.json (slogqual host-probe, the same load on the same data disks with a RAM log, then its log pass: the
candidate as the log on RAM data files), advice.json + advice.txt (written before the pool exists,
with the time), run.json (slogqual scenario run: sync=always + the log, at each writer count), verify.txt; where the
probe or the pool's run failed or hung (killed after its timeout), dmesg.txt (the kernel log's last 300 lines).
"""

import json
import os
import subprocess
import sys
import time

import check_toml  # contrib/advisor_check/check_toml.py, beside this file

devs = os.environ["SLOGQUAL_LAB_DEVICES"].split()
out = os.environ.get("SLOGQUAL_LAB_OUT", ".")
plan = json.loads(sys.argv[1])
SIZES = "4k,8k,16k,32k,64k,128k,256k,512k"


# a step that runs this long has hung (draw 47166: the NVDIMM NFS's log pass finished its three steps and its pool
# never came down, the guest idle for 35 minutes); killed, the configuration's kernel log kept and the draw goes on
SWEEP_TIMEOUT_S, PROBE_TIMEOUT_S, POOL_TIMEOUT_S = 900, 1200, 1200


def run(argv, log, timeout=None, **kw):
    print("+", " ".join(argv), file=log, flush=True)
    try:
        return subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, timeout=timeout, **kw).returncode
    except subprocess.TimeoutExpired:
        print(f"advisor check: timed out after {timeout} s, killed", file=log, flush=True)
        return 124


def keep_dmesg(d):
    """The guest's kernel log's last lines beside a configuration whose step failed or hung."""
    with open(os.path.join(d, "dmesg.txt"), "w") as fh:
        dmesg = subprocess.run(["dmesg"], capture_output=True, text=True).stdout.splitlines()
        fh.write("\n".join(dmesg[-300:]) + "\n")


def toml(c, path):
    with open(path, "w") as fh:
        fh.write(check_toml.text(c, plan["runtime"], plan["ramp"]))


for c in plan["configs"]:
    d = os.path.join(out, c["name"])
    os.makedirs(d, exist_ok=True)
    log_dev, data = devs[c["log"]], [devs[i] for i in c["data"]]
    threads = ",".join(map(str, c["threads"]))
    with open(os.path.join(d, "log.txt"), "w") as log:
        t0 = time.time()
        for dev, name in ((log_dev, "log"), (data[0], "data")):
            run(["slogqual", "sweep", dev, "--sizes", SIZES, "--destroy-data", "--quiet", "-o",
                 os.path.join(d, f"{name}.sweep.json")], log, timeout=SWEEP_TIMEOUT_S)
        probe_runtime = ["--runtime", str(plan["probe_runtime"])] if plan.get("probe_runtime") else []
        if run(["slogqual", "host-probe", "--protocol", c["protocol"], "--bs", c["bs"], "--threads", threads,
                *probe_runtime, "--data", *data, "--layout", c["layout"], "--log", log_dev, "--destroy-data", "--quiet",
                "-o", os.path.join(d, "host.json")], log, timeout=PROBE_TIMEOUT_S) != 0:
            keep_dmesg(d)  # a hang (124) or a failure: a log device gone under the load says why only there
        with open(os.path.join(d, "advice.txt"), "w") as fh:
            fh.write(f"written {time.strftime('%Y-%m-%dT%H:%M:%S')} before the pool\n")
            fh.flush()
            subprocess.run(["slogqual", "advise", "--log", os.path.join(d, "log.sweep.json"), "--data",
                            *[os.path.join(d, "data.sweep.json")] * len(data), "--layout", c["layout"],
                            "--protocol", c["protocol"], "--bs", c["bs"], "--threads", threads, "--tunables", "host",
                            "--host", os.path.join(d, "host.json"), "-o", os.path.join(d, "advice.json")],
                           stdout=fh, stderr=subprocess.STDOUT)
        toml(c, os.path.join(d, "check.toml"))
        rc = run(["slogqual", "scenario", "run", os.path.join(d, "check.toml"), "--data", *data, "--log", log_dev,
                  "--layout", c["layout"], "--destroy-data", "--quiet", "-o", os.path.join(d, "run.json")], log,
                 timeout=POOL_TIMEOUT_S)
        if rc != 0:  # the guest's kernel log's last lines: draw 50152's NVMe vanished and nothing said why
            keep_dmesg(d)
        with open(os.path.join(d, "verify.txt"), "w") as fh:
            subprocess.run(["slogqual", "advise", "--advice", os.path.join(d, "advice.json"), "--verify",
                            os.path.join(d, "run.json")], stdout=fh, stderr=subprocess.STDOUT)
        print(f"{c['name']}: {time.time() - t0:.0f} s", file=log, flush=True)
    print(f"advisor check: {c['name']} done", flush=True)
