#!/usr/bin/env python3
"""Does slogqual measure what raw fio measures? (a benchmark, not a test)

For each round, in alternating order, run `slogqual sweep` and a hand-written raw fio
command with the same parameters on the same target, and compare the mean latency of a
write plus its flush per size. Prints, per size, the median of each side over the rounds,
their ratio, and at 4 KiB the difference in microseconds, plus slogqual's wall-clock
cost per size beyond fio's own runtime.

    python3 contrib/bench/overhead.py                     # a file on this filesystem and one on /dev/shm
    python3 contrib/bench/overhead.py --target /dev/sdX   # a block device (destroys its data!)

Targets from the issue: ratio within +-3 % per size, and <= 1 us at 4 KiB on a zero-latency target
(/dev/shm: tmpfs, where write+flush costs only the syscalls).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

SIZES = [512, 4096, 65536, 1 << 20]


def raw_fio(target, size, runtime_s, region):
    # Written out by hand on purpose: an independent statement of the diskinfo-style job.
    argv = ["fio", "--name=raw", "--output-format=json", "--filename=" + target, "--ioengine=psync",
            "--rw=randwrite", f"--bs={size}", "--direct=1", "--fdatasync=1", "--iodepth=1", "--numjobs=1",
            "--time_based", f"--runtime={int(runtime_s * 1000)}ms", "--norandommap", "--randrepeat=0",
            f"--size={region}"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    job = json.loads(out[out.index("{"):])["jobs"][0]
    return (job["write"]["lat_ns"]["mean"] + job["sync"]["lat_ns"]["mean"]) / 1000.0


def slogqual(target, size, runtime_s, workdir):
    out = os.path.join(workdir, "r.json")
    argv = [sys.executable, "-m", "slogqual", "sweep", target, "--sizes", str(size), "--runtime", str(runtime_s),
            "--settle", "0", "--quiet", "--destroy-data", "-o", out]
    t0 = time.monotonic()
    subprocess.run(argv, capture_output=True, text=True, check=True)
    wall = time.monotonic() - t0
    with open(out) as fh:
        return json.load(fh)["points"][0]["lat_us"]["mean"], wall - runtime_s


def bench(target, region, rounds, runtime_s, workdir):
    rows = []
    for size in SIZES:
        ours, theirs, extra = [], [], []
        for i in range(rounds):
            order = (0, 1) if i % 2 == 0 else (1, 0)
            for which in order:
                if which == 0:
                    mean, wall_extra = slogqual(target, size, runtime_s, workdir)
                    ours.append(mean)
                    extra.append(wall_extra)
                else:
                    theirs.append(raw_fio(target, size, runtime_s, region))
        a, b = statistics.median(ours), statistics.median(theirs)
        rows.append((size, a, b, a / b, a - b, statistics.median(extra),
                     (max(theirs) - min(theirs)) / b))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", action="append", help="file or block device (repeatable)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=float, default=1.0)
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="slogqual-bench-")
    made = []
    targets = args.target
    if not targets:
        targets = []
        for d in (os.getcwd(), "/dev/shm"):
            path = os.path.join(d, f"slogqual-bench-{os.getpid()}.img")
            with open(path, "wb") as fh:
                for _ in range(64):
                    fh.write(b"\x5a" * (1 << 20))
            made.append(path)
            targets.append(path)
    try:
        print(f"fio: {subprocess.run(['fio', '--version'], capture_output=True, text=True).stdout.strip()}, "
              f"kernel {os.uname().release}, {os.cpu_count()} CPUs, {args.rounds} rounds x {args.runtime} s, "
              "medians; mode flush (write + fdatasync), QD1")
        for target in targets:
            st = os.stat(target)
            region = st.st_size if st.st_size else None
            if region is None:
                with open(target, "rb") as fh:
                    region = fh.seek(0, 2)
            print(f"\ntarget {target}")
            print(f"{'size':>8} {'slogqual us':>12} {'raw fio us':>11} {'ratio':>7} {'diff us':>8} "
                  f"{'raw spread':>10} {'wall extra s':>12}")
            for size, a, b, ratio, diff, wall_extra, spread in bench(target, region, args.rounds, args.runtime, workdir):
                print(f"{size:>8} {a:>12.2f} {b:>11.2f} {ratio:>7.3f} {diff:>8.2f} {spread:>9.1%} {wall_extra:>12.2f}")
    finally:
        for path in made:
            os.unlink(path)
        for name in os.listdir(workdir):
            os.unlink(os.path.join(workdir, name))
        os.rmdir(workdir)


if __name__ == "__main__":
    main()
