#!/usr/bin/env python3
"""The pair engine's per-IO cost beside fio's, on a tmpfs file (a benchmark, not a test).

On tmpfs (/dev/shm) a write + fdatasync costs little more than the two system calls, so what each engine
reports there is mostly its own overhead: the time it adds around the IO it times. Per round and size,
in alternating order, both engines run the same job (QD1, buffered — tmpfs has no O_DIRECT — random
size-aligned offsets, write then fdatasync) on the same file, and the script prints per size the median
over the rounds of:

- wall µs/IO: the engine's elapsed time divided by its IO count (everything the loop costs per IO);
- pair µs: the mean write+flush latency the engine reports (what it times);
- the ratio pair engine / fio of each.

    PYTHONPATH=. python3 contrib/bench/pair_vs_fio.py [--rounds 5] [--runtime 1] [--dir /dev/shm]
"""

import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from slogqual.tools import fio, pairbench  # noqa: E402

SIZES = [512, 4096, 65536, 1 << 20]
REGION = 64 << 20


def pair_run(path, size, runtime_s):
    r = pairbench.run_job(pairbench.PairJob(filename=path, bs=size, region_bytes=REGION, runtime_s=runtime_s,
                                            direct=False))
    wall = r.elapsed_ns / 1000.0 / r.ios
    mean = (sum(r.write_ns) + sum(r.flush_ns)) / r.ios / 1000.0
    return wall, mean, r.ios


def fio_run(path, size, runtime_s):
    r = fio.run_job(fio.FioJob(bs=size, runtime_s=runtime_s, filename=path, region_bytes=REGION, direct=False))
    wall = r.runtime_ms * 1000.0 / r.ios
    return wall, r.write_lat.mean + r.sync_lat.mean, r.ios


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=float, default=1.0)
    ap.add_argument("--dir", default="/dev/shm")
    args = ap.parse_args()
    print(f"pair engine: {pairbench.check_version().text}; fio: {fio.check_version().text}; "
          f"{args.rounds} rounds x {args.runtime:g} s per size and engine, on {args.dir}", file=sys.stderr)
    fd, path = tempfile.mkstemp(prefix="slogqual-bench-", dir=args.dir)
    try:
        os.ftruncate(fd, REGION)
        os.close(fd)
        rows = []
        for size in SIZES:
            got = {"pair": [], "fio": []}
            for i in range(args.rounds):
                order = [("pair", pair_run), ("fio", fio_run)]
                for name, fn in (order if i % 2 == 0 else order[::-1]):
                    got[name].append(fn(path, size, args.runtime))
            med = {k: [statistics.median(x[j] for x in v) for j in range(3)] for k, v in got.items()}
            rows.append((size, med["pair"], med["fio"]))
        print("| size | pair engine wall µs/IO | fio wall µs/IO | ratio | pair engine mean µs | fio mean µs | ratio | "
              "IOs/s pair engine | IOs/s fio |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for size, p, f in rows:
            print(f"| {size} | {p[0]:.2f} | {f[0]:.2f} | {p[0] / f[0]:.3f} | {p[1]:.2f} | {f[1]:.2f} | "
                  f"{p[1] / f[1]:.3f} | {p[2] / args.runtime:.0f} | {f[2] / args.runtime:.0f} |")
    finally:
        os.unlink(path)


if __name__ == "__main__":
    main()
