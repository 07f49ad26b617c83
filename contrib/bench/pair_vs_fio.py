#!/usr/bin/env python3
"""The pair engine beside fio and ioping on the same targets, interleaved (a benchmark, not a test).

Targets (each engine writes the same file, QD1, one thread, random size-aligned offsets):

- tmpfs: a file in /dev/shm. A write + fdatasync costs little more than the two system calls, so
  what each engine reports is mostly its own overhead. Buffered (tmpfs has no O_DIRECT).
- disk: a file on the disk under --disk-dir (O_DIRECT): real flushes, and this machine's noise.
- nbd: a FUSE file (nbdfuse) over an nbdkit memory export whose writes wait --delay (the delay
  filter): a known latency under all three engines. Needs root and /dev/fuse; skipped otherwise.

Engines: the pair engine (write, then fdatasync, both timed), fio (psync write + fdatasync=1: the
same loop, timed in two halves), ioping (-WWW -y: O_DSYNC writes, its own loop; on a real device a
dsync write is a write with FUA or a write and a flush, on a file the same fdatasync underneath).

Per target, size and round, the engines run in rotating order; the script prints per size the median
over the rounds of each engine's mean latency per IO (what it reports) and its wall time per IO
(elapsed / IOs: everything its loop costs), the ratio pair engine / fio of the means, and the noise
floor: the spread (max-min over median) of fio's own means across rounds. A ratio inside the floor is
agreement within the noise.

    PYTHONPATH=. python3 contrib/bench/pair_vs_fio.py [--rounds 5] [--runtime 1] [--disk-dir /var/tmp]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from slogqual.tools import fio, pairbench  # noqa: E402

SIZES = [512, 4096, 65536, 1 << 20]
NBD_SIZES = [4096, 65536]
REGION = 64 << 20


def pair_run(path, size, runtime_s, direct):
    r = pairbench.run_job(pairbench.PairJob(filename=path, bs=size, region_bytes=REGION, runtime_s=runtime_s,
                                            direct=direct))
    mean = r.series["pair"].total / r.ios / 1000.0
    return mean, r.elapsed_ns / 1000.0 / r.ios, r.ios


def fio_run(path, size, runtime_s, direct):
    r = fio.run_job(fio.FioJob(bs=size, runtime_s=runtime_s, filename=path, region_bytes=REGION, direct=direct))
    return r.write_lat.mean + r.sync_lat.mean, r.runtime_ms * 1000.0 / r.ios, r.ios


def ioping_run(path, size, runtime_s, direct):
    # -B: one line "count total_ns iops bps min_ns avg_ns max_ns mdev_ns requests run_ns"
    argv = ["ioping", "-B", "-q", "-i", "0", "-w", f"{runtime_s:g}", "-s", str(size), "-S", str(REGION),
            "-WWW", "-y"] + (["-D"] if direct else []) + [path]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()
    count, avg_ns, run_ns = int(out[0]), float(out[5]), float(out[9])
    return avg_ns / 1000.0, run_ns / 1000.0 / count, count


ENGINES = [("pair", pair_run), ("fio", fio_run), ("ioping", ioping_run)]


def bench(name, path, sizes, args, direct):
    engines = [(n, f) for n, f in ENGINES if n != "ioping" or shutil.which("ioping")]
    rows = []
    for size in sizes:
        got = {n: [] for n, _ in engines}
        for i in range(args.rounds):
            order = engines[i % len(engines):] + engines[:i % len(engines)]
            for n, fn in order:
                got[n].append(fn(path, size, args.runtime, direct))
        med = {n: [statistics.median(x[j] for x in v) for j in range(3)] for n, v in got.items()}
        fio_means = [x[0] for x in got["fio"]]
        floor = (max(fio_means) - min(fio_means)) / statistics.median(fio_means)
        rows.append((size, med, floor))
    print(f"\n{name} ({path}, {'O_DIRECT' if direct else 'buffered'}), median of {args.rounds} rounds x "
          f"{args.runtime:g} s:\n")
    print("| size | pair mean µs | fio mean µs | ioping mean µs | pair/fio | fio noise floor | "
          "pair wall µs/IO | fio wall µs/IO | ioping wall µs/IO | IOs pair / fio / ioping |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size, med, floor in rows:
        io = med.get("ioping", [float("nan")] * 3)
        print(f"| {size} | {med['pair'][0]:.2f} | {med['fio'][0]:.2f} | {io[0]:.2f} | "
              f"{med['pair'][0] / med['fio'][0]:.3f} | ±{floor / 2:.1%} | {med['pair'][1]:.2f} | {med['fio'][1]:.2f} | "
              f"{io[1]:.2f} | {med['pair'][2]:.0f} / {med['fio'][2]:.0f} / {io[2]:.0f} |")
    sys.stdout.flush()


def scratch(directory):
    fd, path = tempfile.mkstemp(prefix="slogqual-bench-", dir=directory)
    with os.fdopen(fd, "wb") as fh:  # allocated, so O_DIRECT overwrites do not allocate
        chunk = b"\xa5" * (1 << 20)
        for _ in range(REGION >> 20):
            fh.write(chunk)
        fh.flush()
        os.fsync(fh.fileno())
    return path


def nbd_mount(delay):
    mnt = tempfile.mkdtemp(prefix="slogqual-bench-fuse-")
    proc = subprocess.Popen(["nbdfuse", mnt, "[", "nbdkit", "--filter=delay", "memory", str(REGION),
                             f"delay-write={delay}", "]"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not os.path.exists(os.path.join(mnt, "nbd")):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("nbdfuse did not mount")
        time.sleep(0.05)
    return mnt, proc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=float, default=1.0)
    ap.add_argument("--tmpfs-dir", default="/dev/shm")
    ap.add_argument("--disk-dir", default="/var/tmp")
    ap.add_argument("--delay", default="1ms", help="nbdkit delay-write for the nbd target")
    ap.add_argument("--targets", default="tmpfs,disk,nbd")
    args = ap.parse_args()
    ioping = subprocess.run(["ioping", "-v"], capture_output=True, text=True).stdout.strip() \
        if shutil.which("ioping") else "ioping missing (left out)"
    print(f"pair engine: {pairbench.check_version().text}; fio: {fio.check_version().text}; {ioping}; "
          f"kernel {os.uname().release}; {os.cpu_count()} CPUs", flush=True)
    targets = args.targets.split(",")
    for name, directory, direct in (("tmpfs", args.tmpfs_dir, False), ("disk", args.disk_dir, True)):
        if name in targets:
            path = scratch(directory)
            try:
                bench(name, path, SIZES, args, direct)
            finally:
                os.unlink(path)
    if "nbd" in targets:
        if os.geteuid() != 0 or not os.path.exists("/dev/fuse") or not shutil.which("nbdfuse"):
            print("\nnbd: skipped (needs root, /dev/fuse and nbdfuse)")
            return
        mnt, proc = nbd_mount(args.delay)
        try:
            bench(f"nbd, nbdkit memory with delay-write={args.delay} through nbdfuse", os.path.join(mnt, "nbd"),
                  NBD_SIZES, args, False)
        finally:
            subprocess.run(["umount", mnt], capture_output=True)
            proc.wait(timeout=30)
            os.rmdir(mnt)


if __name__ == "__main__":
    main()
