"""Runs INSIDE a lab guest: the guest's CPU a write costs on each raw NVMe and SAS device, plain fio (psync, O_DIRECT)
with and without an fsync after every write, at 1, 4 and 16 jobs, 8K and 128K — the device's own CPU at a
concurrency no QD1 sweep has (docs/advisor.md, "Model 4"). Writes $SLOGQUAL_LAB_OUT/raw_cpu.json.

    slogqual lab run --memory 2048 -q -d hdd -d sas-ssd -d nvme -o OUT -- python3 "$PWD"/contrib/advisor_check/raw_cpu.py
"""

import glob
import json
import os
import subprocess


def ticks():
    """(busy, idle) ticks of all CPUs so far (/proc/stat; idle = idle + iowait)."""
    v = [int(x) for x in open("/proc/stat").readline().split()[1:9]]
    return v[0] + v[1] + v[2] + v[5] + v[6] + v[7], v[3] + v[4]


def attr(block, name):
    try:
        return open(os.path.join(block, "device", name)).read().strip()
    except OSError:
        return ""


def main():
    blocks = {os.path.basename(b): attr(b, "vendor") + " " + attr(b, "model") for b in sorted(glob.glob("/sys/block/*"))}
    targets = [d for d in blocks if d.startswith("nvme")] + [d for d in blocks if "SAS" in blocks[d]]
    rows = []
    for dev in targets:
        for bs in ("8k", "128k"):
            for jobs in (1, 4, 16):
                for mode in ("fsync", "nosync"):
                    argv = ["fio", "--name=raw", f"--filename=/dev/{dev}", "--rw=randwrite", f"--bs={bs}", "--direct=1",
                            "--ioengine=psync", f"--numjobs={jobs}", "--group_reporting", "--time_based",
                            "--runtime=4", "--size=256M", "--output-format=json"] + (["--fsync=1"] if mode == "fsync" else [])
                    a = ticks()
                    r = subprocess.run(argv, capture_output=True, text=True)
                    b = ticks()
                    w = json.loads(r.stdout[r.stdout.index("{"):])["jobs"][0]["write"]
                    busy, idle = b[0] - a[0], b[1] - a[1]
                    row = {"dev": dev, "bs": bs, "jobs": jobs, "mode": mode, "ios": w["total_ios"], "iops": round(w["iops"]),
                           "busy": round(busy / (busy + idle), 3),
                           "cpu_us_per_io": round(busy * 1e6 / os.sysconf("SC_CLK_TCK") / w["total_ios"], 1)}
                    print(json.dumps(row), flush=True)
                    rows.append(row)
    with open(os.path.join(os.environ.get("SLOGQUAL_LAB_OUT", "."), "raw_cpu.json"), "w") as fh:
        json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
