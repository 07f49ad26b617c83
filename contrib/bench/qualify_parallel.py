#!/usr/bin/env python3
"""What does `slogqual qualify --parallel` save? (a benchmark, not a test; issue #30)

Qualifies N units against one profile twice per round, in alternating order: all at once
(`qualify A B C --parallel`) and one lone run per unit (`qualify A`, `qualify B`, ...), and compares the
wall time of the one with the sum of the others'. The units are files (default, in --dir) or loop devices
over such files (--loop, root); each run gets fresh result directories, no store and no HTML report, so
both sides do the same work per unit: identify, claim, the steady-state rounds, the sweep, the verdict.

It also prints, per run, the engine time per unit (the steady-state rounds' and the sweep sizes' seconds):
what a perfectly parallel run would take is one unit's, what lone runs take is the sum. Units that share a
disk (the default: N files on one filesystem) contend for it at once, so their figures together are not
their figures alone: the median 4 KiB mean latency of each side is printed too.

    PYTHONPATH=. python3 contrib/bench/qualify_parallel.py                       # 3 files here, 3 rounds
    PYTHONPATH=. python3 contrib/bench/qualify_parallel.py --units 4 --loop --rounds 5

In the lab (real emulated units, each with its own latency, in a TCG guest):

    slogqual lab run -o bench-out --device sas-ssd --device sas-ssd --device sas-ssd -- \
        python3 contrib/bench/qualify_parallel.py --devices $SLOGQUAL_LAB_DEVICES --rounds 2
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PROFILE = """\
# the benchmark's profile: three sizes, a budget any unit meets (the verdict is not what is measured)
name = "bench"
sizes = ["4k", "128k", "1m"]
precondition = "none"

[[criterion]]
check = "lat_us.mean @ 4k <= 1000000"
"""


def qualify(units, args, out, parallel):
    argv = [sys.executable, "-m", "slogqual", "qualify", *units, "--profile", args.profile_path, "--out", out,
            "--runtime", str(args.runtime), "--settle", "0", "--round-runtime", str(args.round_runtime),
            "--max-rounds", str(args.max_rounds), "--no-store", "--no-html", "--quiet"]
    if parallel:
        argv.append("--parallel")
    if args.loop or args.devices:
        argv.append("--destroy-data")
    t0 = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"qualify failed ({proc.returncode}): {proc.stderr.strip()}")
    docs = [json.load(open(os.path.join(out, n))) for n in sorted(os.listdir(out)) if n.endswith(".qualification.json")]
    return wall, docs


def engine_s(doc):
    """Seconds the unit's engines wrote: its steady-state rounds and its sweep sizes."""
    rounds = len((doc.get("steady_state") or {}).get("rounds") or []) * doc["steady_state"].get("round_runtime_s", 0)
    sweep = sum(p["runtime_ms"] for p in doc["sweep"]["document"]["points"]) / 1000
    return rounds + sweep


def lat_4k(doc):
    return next(p["lat_us"]["mean"] for p in doc["sweep"]["document"]["points"] if p["size"] == 4096)


def make_units(args, workdir):
    files, loops = [], []
    if args.devices:  # given block devices (the lab guest's): nothing to make or remove
        return files, list(args.devices)
    for i in range(args.units):
        path = os.path.join(args.dir, f"slogqual-bench-{os.getpid()}-{i}.img")
        with open(path, "wb") as fh:
            fh.truncate(args.mib << 20)
        files.append(path)
    if args.loop:
        for f in files:
            loops.append(subprocess.run(["losetup", "-f", "--show", f], capture_output=True, text=True,
                                        check=True).stdout.strip())
    return files, loops


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--units", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default=os.getcwd(), help="where the unit files go (default: here)")
    ap.add_argument("--mib", type=int, default=128, help="size of each unit file")
    ap.add_argument("--loop", action="store_true", help="qualify loop devices over the files (root)")
    ap.add_argument("--devices", nargs="+", metavar="DEV",
                    help="qualify these block devices (destroys their data; the lab guest's $SLOGQUAL_LAB_DEVICES)")
    ap.add_argument("--profile", help="a profile name or file (default: the benchmark's own, 4k/128k/1m)")
    ap.add_argument("--runtime", type=float, default=0.5, help="sweep seconds per size")
    ap.add_argument("--round-runtime", type=float, default=0.5, help="seconds per steady-state round")
    ap.add_argument("--max-rounds", type=int, default=3, help="steady-state rounds at most")
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="slogqual-bench-")
    args.profile_path = args.profile or os.path.join(workdir, "bench.toml")
    if not args.profile:
        with open(args.profile_path, "w") as fh:
            fh.write(PROFILE)
    files, loops = make_units(args, workdir)
    units = loops or files
    args.units = len(units)
    together, alone, eng, lat_t, lat_a = [], [], [], [], []
    try:
        what = (f"block devices {' '.join(args.devices)}" if args.devices else
                f"{'loop devices over files' if args.loop else 'files'} of {args.mib} MiB in {args.dir}")
        print(f"{args.units} units ({what}), kernel {os.uname().release}, {os.cpu_count()} CPUs, {args.rounds} rounds; "
              f"sweep {args.runtime} s per size, steady state at most {args.max_rounds} x {args.round_runtime} s")
        for r in range(args.rounds):
            order = (True, False) if r % 2 == 0 else (False, True)
            for parallel in order:
                if parallel:
                    wall, docs = qualify(units, args, os.path.join(workdir, f"p{r}"), True)
                    together.append(wall)
                    lat_t += [lat_4k(d) for d in docs]
                else:
                    walls = []
                    for i, u in enumerate(units):
                        wall, docs = qualify([u], args, os.path.join(workdir, f"l{r}-{i}"), False)
                        walls.append(wall)
                        eng += [engine_s(d) for d in docs]
                        lat_a += [lat_4k(d) for d in docs]
                    alone.append(sum(walls))
            print(f"round {r + 1}: at once {together[-1]:.1f} s, lone runs {alone[-1]:.1f} s "
                  f"(ratio {together[-1] / alone[-1]:.2f}); load average {os.getloadavg()[0]:.1f}")
        t, a = statistics.median(together), statistics.median(alone)
        print(f"\nmedian wall: at once {t:.1f} s, {args.units} lone runs {a:.1f} s, ratio {t / a:.2f} "
              f"(ideal: 1/{args.units} = {1 / args.units:.2f})")
        print(f"engine time per unit (median): {statistics.median(eng):.1f} s")
        print(f"4 KiB mean latency (median over units and rounds): at once {statistics.median(lat_t):.1f} us, "
              f"alone {statistics.median(lat_a):.1f} us")
    finally:
        for dev in loops if not args.devices else []:
            subprocess.run(["losetup", "-d", dev], capture_output=True)
        for f in files:
            os.unlink(f)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
