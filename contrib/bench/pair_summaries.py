#!/usr/bin/env python3
"""Is the pair engine's time the sweep's time? (a benchmark, not a test; issue #26)

Runs `slogqual sweep FILE --runtime R --settle 0 --precision 2%` on a file in tmpfs (/dev/shm: a
write and its fdatasync cost ~1-2 µs, so millions of samples per size) and compares the sweep's wall
time with its engine time, the sum of the points' runtime_ms (the time the engine spent writing and
flushing). Everything else — Python start-up, device identification, the engine's start-up, its
summaries, the result file rewritten after every size — is the overhead.

    PYTHONPATH=. python3 contrib/bench/pair_summaries.py                 # 15 sizes, 512 B ... 8 MiB
    PYTHONPATH=. python3 contrib/bench/pair_summaries.py --sizes 4k,64k --max-runtime 5

Target from the issue: wall <= 1.15 x engine time (before pairbench 3, Python summarised every sample:
338 s of wall for 169 s of engine time).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

REGION = 256 << 20  # room for 8 MiB writes at random offsets


def sweep(target, args, out):
    argv = [sys.executable, "-m", "slogqual", "sweep", target, "--runtime", str(args.runtime), "--settle", "0",
            "--precision", args.precision, "--max-runtime", str(args.max_runtime), "--quiet", "-o", out, "--force"]
    if args.sizes:
        argv += ["--sizes", args.sizes]
    t0 = time.monotonic()
    subprocess.run(argv, capture_output=True, text=True, check=True)
    wall = time.monotonic() - t0
    with open(out) as fh:
        return json.load(fh), wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default="/dev/shm", help="where the target file goes (default /dev/shm: tmpfs)")
    ap.add_argument("--sizes", help="as slogqual sweep --sizes (default: its 15 sizes)")
    ap.add_argument("--runtime", type=float, default=0.2)
    ap.add_argument("--precision", default="2%")
    ap.add_argument("--max-runtime", type=float, default=30.0)
    ap.add_argument("--rounds", type=int, default=1, help="sweeps one after the other")
    args = ap.parse_args()
    target = os.path.join(args.dir, f"slogqual-bench-{os.getpid()}.img")
    with open(target, "wb") as fh:
        for _ in range(REGION >> 20):
            fh.write(b"\x5a" * (1 << 20))
    try:
        with tempfile.TemporaryDirectory(prefix="slogqual-bench-") as workdir:
            report(target, args, os.path.join(workdir, "r.json"))
    finally:
        os.unlink(target)


def report(target, args, out):
    print(f"kernel {os.uname().release}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the "
          f"start; target {target}; --runtime {args.runtime:g} --settle 0 --precision {args.precision} "
          f"--max-runtime {args.max_runtime:g}")
    print(f"{'round':>5} {'sizes':>5} {'met':>4} {'rounds/size':>11} {'IOs':>11} {'engine s':>9} {'wall s':>7} "
          f"{'wall/engine':>11} {'overhead s':>10}")
    for i in range(1, args.rounds + 1):
        doc, wall = sweep(target, args, out)
        points = doc["points"]
        engine = sum(p["runtime_ms"] for p in points) / 1000
        rounds = [p.get("precision", {}).get("rounds", 1) for p in points]
        met = sum(1 for p in points if p.get("precision", {}).get("met"))
        ios = sum(p["ios"] for p in points)
        print(f"{i:>5} {len(points):>5} {met:>4} {min(rounds):>5}-{max(rounds):<5} {ios:>11} {engine:>9.1f} "
              f"{wall:>7.1f} {wall / engine:>11.3f} {wall - engine:>10.1f}")
    print(f"engine: {doc['environment'].get('pairbench_version')}; load average {os.getloadavg()[0]:.2f} at the end")

if __name__ == "__main__":
    main()
