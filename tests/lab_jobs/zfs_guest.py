"""Runs INSIDE one lab guest (devices: hdd, hdd, nvdimm) for tests/test_scenario_lab.py: every ZFS job
those tests need on that device set, one after another, so the suite pays for one guest boot (and one
warm-up of the guest's caches) instead of one per job.

Each job runs with its own output directory $SLOGQUAL_LAB_OUT/JOB/ as its SLOGQUAL_LAB_OUT and working
directory; its stdout and stderr go to JOB/log.txt, its exit status to JOB/rc, and the slogqual-named
pools and datasets that remained after it to JOB/left.json. Anything a job left is then destroyed, so
one job's failure is reported against that job and does not spill into the next.

    python3 zfs_guest.py SEED
"""

import json
import os
import subprocess
import sys
import time

from leftovers import leftovers, protocol_leftovers  # beside this file

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
JOB_TIMEOUT_S = 1200

devs = os.environ["SLOGQUAL_LAB_DEVICES"].split()
outdir = os.environ.get("SLOGQUAL_LAB_OUT", ".")
seed = sys.argv[1] if len(sys.argv) > 1 else "0"


def scenario(name):
    """A shipped scenario, quick, on the guest's devices: data hdd hdd, log nvdimm."""
    return ["slogqual", "scenario", "run", name, "--quick", "--destroy-data", "--quiet", "-o", "result.json",
            "--data", devs[0], devs[1], "--log", devs[2]]


JOBS = [
    # 3-second steps, no ramp, as the nfs-sync job below: its test reads the log vdev's zpool iostat rate, which a
    # 2-second step with no ramp left without a report inside the window (CI of the stop after 4b363f5:
    # log_write_bytes_s 0); three seconds hold two of its 1 s reports (quick's own 5 s and 1 s ramp: ~18 s more)
    ("iscsi-128k-seqwrite", scenario("iscsi-128k-seqwrite") + ["--runtime", "3", "--ramp", "0"], {}),
    # the real protocols (issue #17): knfsd + the NFS client over the guest's loopback (2-second steps: the
    # tests read the evidence, not the rate; one thread step, 8 a LUN: each configuration's pool, export and mount
    # cost ~13 s of the guest, its second step ~3 s more); LIO + open-iscsi in the iSCSI interrupt job below
    ("nfs-sync-knfsd", scenario("nfs-sync-knfsd") + ["--runtime", "2", "--ramp", "0", "--threads", "8"], {}),
    # nfs-sync through `slogqual qualify`: the scenario is a library call from qualify (no CLI inside); its steps
    # 3 s with no ramp (--scenario-runtime/--scenario-ramp over quick's 5 s and 1 s: 101 s of this guest's time
    # before, 2026-11-29), long enough for two of zpool iostat's 1 s reports of the log vdev inside each step
    ("nfs-sync", ["slogqual", "qualify", devs[2], "--profile", os.path.join(HERE, "nfs-qualify.toml"),
                  "--out", "q", "--data", devs[0], devs[1], "--scenario-quick", "--scenario-runtime", "3",
                  "--scenario-ramp", "0", "--destroy-data", "--quiet", "--settle", "0", "--no-html"], {}),
    # pyzfs is packaged for Debian's own python3, not for the interpreter slogqual runs under
    ("pool-apis", ["/usr/bin/python3", os.path.join(HERE, "pool_apis.py")], {"PYTHONPATH": REPO}),
    ("scenario-interrupt", ["python3", os.path.join(HERE, "scenario_interrupt.py"), seed], {}),
    # the shipped iscsi-4k-randwrite-lio, quick, over LIO + open-iscsi on the guest's loopback, driven by two
    # fio servers on loopback (--fio-servers 2: one LUN each) as clients would be — interrupted at a seeded
    # moment and resumed: its tests read both the interrupt's evidence and the completed result (one iSCSI
    # run, not two: a separate uninterrupted run cost ~190 s of CI under TCG)
    ("scenario-interrupt-iscsi", ["python3", os.path.join(HERE, "scenario_interrupt.py"), seed,
                                  "iscsi-4k-randwrite-lio", "--fio-servers", "2"], {}),
    ("teardown-interrupt", ["python3", os.path.join(HERE, "teardown_interrupt.py"), seed], {}),
    # the Direct IO trap (issue #39): buffered vs O_DIRECT 128 KiB writes on a dataset, the ZIL kstat of each
    ("direct-io", ["sh", os.path.join(HERE, "direct_io.sh"), devs[0], devs[2], "128"], {}),
    # the zvol held open by the scenario runner: its opens never fail with errno 512 (pool/held_open.py)
    ("held-open", ["python3", os.path.join(HERE, "held_open_contention.py"), devs[0]], {}),
]


def destroy_leftovers(left):
    for pool in left["pools"]:
        subprocess.run(["zpool", "destroy", "-f", pool], capture_output=True)


summary = {"seed": seed, "jobs": {}}
for name, argv, env in JOBS:
    jobdir = os.path.join(outdir, name)
    os.makedirs(jobdir, exist_ok=True)
    t0 = time.monotonic()
    if not os.path.exists(argv[0]) and os.sep in argv[0]:
        rc = "skip"
        with open(os.path.join(jobdir, "log.txt"), "w") as log:
            log.write(f"{argv[0]} is not on this system\n")
    else:
        with open(os.path.join(jobdir, "log.txt"), "w") as log:
            try:
                rc = subprocess.run(argv, cwd=jobdir, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    env=dict(os.environ, SLOGQUAL_LAB_OUT=jobdir, **env),
                                    timeout=JOB_TIMEOUT_S).returncode
            except subprocess.TimeoutExpired:
                log.write(f"\nzfs_guest: {name} killed after {JOB_TIMEOUT_S} s\n")
                rc = "timeout"
    summary["jobs"][name] = {"rc": rc, "seconds": round(time.monotonic() - t0, 1)}
    left = leftovers()
    with open(os.path.join(jobdir, "left.json"), "w") as fh:
        json.dump(left, fh)
    with open(os.path.join(jobdir, "protocols-left.json"), "w") as fh:
        json.dump(protocol_leftovers(), fh)
    with open(os.path.join(jobdir, "rc"), "w") as fh:
        fh.write(f"{rc}\n")
    destroy_leftovers(left)
    print(f"zfs_guest: {name}: rc {rc}, left {left}", flush=True)

with open(os.path.join(outdir, "summary.json"), "w") as fh:
    json.dump(summary, fh, indent=2)
