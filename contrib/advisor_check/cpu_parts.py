"""The pool's CPU a write as the sum of its parts, measured and compared (issue #37; an idea measured and not taken,
docs/advisor.md "The pool's CPU as the sum of its parts").

A pool's CPU a write is ZFS's own (Z), its data disks' (D) and its log's (G). Three probe pools each put one part in
RAM, where it costs a copy instead: R (RAM data, RAM log) = Z + Cd + Cg, L (RAM data, the log: host-probe's log pass)
= Z + Cd + G, M (the data disks, a RAM log: host-probe --data) = Z + D + Cg. Were the parts additive, the pool's
P = Z + D + G = M + L - R exactly, every copy cancelling, no copy model needed. This runs R, L and M, then the pool,
for each configuration of a plan, and compares.

    slogqual lab run --memory 2048 -q -d hdd -d hdd -d nvme -d sas-ssd -d hdd -o OUT -- \\
        python3 "$PWD"/contrib/advisor_check/cpu_parts.py "$(cat contrib/advisor_check/plans/cpu-parts.json)"
    python3 contrib/advisor_check/cpu_parts.py --table OUT

The plan is draw()'s form (contrib/advisor_check/run.py): devices by guest index, configurations with log, data,
layout, protocol, bs, threads. In the guest each configuration's files go to $SLOGQUAL_LAB_OUT/NAME/: rl.json
(host-probe --log: R and L), m.json (host-probe --data: M), run.json (the pool, sync=always + the log), log.txt.
"""

import json
import os
import statistics
import subprocess
import sys
import time

import check_toml  # contrib/advisor_check/check_toml.py, beside this file


def guest(plan):
    devs = os.environ["SLOGQUAL_LAB_DEVICES"].split()
    out = os.environ.get("SLOGQUAL_LAB_OUT", ".")
    for c in plan["configs"]:
        d = os.path.join(out, c["name"])
        os.makedirs(d, exist_ok=True)
        log_dev, data = devs[c["log"]], [devs[i] for i in c["data"]]
        threads = ",".join(map(str, c["threads"]))
        probe = ["slogqual", "host-probe", "--protocol", c["protocol"], "--bs", c["bs"], "--threads", threads,
                 "--destroy-data", "--quiet"]
        with open(os.path.join(d, "check.toml"), "w") as fh:  # the advisor check's own pool
            fh.write(check_toml.text(c, runtime=5, ramp=1, prefix="parts"))
        with open(os.path.join(d, "log.txt"), "w") as log:
            t0 = time.time()
            for argv in (probe + ["--log", log_dev, "-o", os.path.join(d, "rl.json")],
                         probe + ["--data", *data, "--layout", c["layout"], "-o", os.path.join(d, "m.json")],
                         ["slogqual", "scenario", "run", os.path.join(d, "check.toml"), "--data", *data, "--log",
                          log_dev, "--layout", c["layout"], "--destroy-data", "--quiet", "-o", os.path.join(d, "run.json")]):
                print("+", " ".join(argv), file=log, flush=True)
                subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, timeout=1500)
            print(f"{c['name']}: {time.time() - t0:.0f} s", file=log, flush=True)


def table(out):
    from slogqual.results.host import HostProbeResult

    def load(path):
        return HostProbeResult.from_dict(json.load(open(path)), path)

    def us(passes, n):
        each = [s.cpu_s_per_io * 1e6 for p in passes for s in p if s.threads == n and s.cpu_s_per_io]
        return statistics.median(each), [round(x) for x in each]

    print("| configuration | writers | pool IOPS | guest CPU | P µs/IO | R | L | M | M + L - R | error |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in sorted(os.listdir(out)):
        d = os.path.join(out, name)
        if not os.path.exists(os.path.join(d, "run.json")):
            continue
        rl, m = load(os.path.join(d, "rl.json")), load(os.path.join(d, "m.json"))
        for s in json.load(open(os.path.join(d, "run.json")))["steps"]:
            n, cpu = s["threads"], s["cpu"]
            pool = cpu["busy_share"] * cpu["cpus"] / s["iops"] * 1e6
            (r, re), (l, le), (mm, me) = (us(x, n) for x in (rl.passes or [rl.steps],
                                                               rl.log_pass.passes or [rl.log_pass.steps],
                                                               m.passes or [m.steps]))
            est = mm + l - r
            print(f"| {name} | {n} | {s['iops']:.0f} | {cpu['busy_share']:.0%} | {pool:.0f} | {r:.0f} {re} | {l:.0f} {le} "
                  f"| {mm:.0f} {me} | {est:.0f} | {est / pool - 1:+.0%} |")


if __name__ == "__main__":
    if sys.argv[1] == "--table":
        table(sys.argv[2])
    else:
        guest(json.loads(sys.argv[1]))
