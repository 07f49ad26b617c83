"""Each recorded configuration's pool steps that ran the guest's CPU at least 90 % busy, beside its host probe's CPU
a write and its log's swept CPU a write+flush: what the host bound left out (docs/advisor.md, "Model 3").

    python3 contrib/advisor_check/cpu.py [CHECKDIR]     # default: tests/fixtures/advisor/check

Columns: the pool's CPU a write (busy share / IOPS), the probe's at the same writers (all, ZFS's own with the RAM
copies out, the copies), the pool's CPU past ZFS's own (`extra`), the log writes a pool IO, the log sweep's CPU a
write+flush at 8K and 128K (0: not measured)."""

import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "fixtures", "advisor", "check")
BUSY = 0.9


def rows(check):
    for d in sorted(glob.glob(os.path.join(check, "*", "lab", "*"))):
        try:
            with open(os.path.join(d, "run.json")) as a, open(os.path.join(d, "host.json")) as b, \
                    open(os.path.join(d, "log.sweep.json")) as c:
                run, host, sweep = json.load(a), json.load(b), json.load(c)
        except (OSError, ValueError):
            continue
        probe = {s["threads"]: s for s in host["steps"]}
        dev = {p["size"]: (p.get("cpu") or {}).get("s_per_io") or 0 for p in sweep["points"]}
        for st in run["steps"]:
            h = probe.get(st["threads"])
            if not h or st["cpu"]["busy_share"] < BUSY:
                continue
            pool = st["cpu"]["busy_share"] / st["iops"] * 1e6
            yield (d.split(os.sep)[-3], os.path.basename(d), st["threads"], pool, h["cpu_s_per_io"] * 1e6,
                   h["zfs_cpu_s_per_io"] * 1e6, (h.get("copy_s_per_io") or 0) * 1e6,
                   pool - h["zfs_cpu_s_per_io"] * 1e6,
                   st["log_write_ops_s"] / st["iops"] if st.get("log_write_ops_s") else None,
                   dev.get(8192, 0) * 1e6, dev.get(131072, 0) * 1e6)


def main(argv):
    print("draw | configuration | writers | pool µs/IO | probe µs/IO | ZFS µs/IO | copies µs/IO | extra µs/IO | "
          "log writes/IO | log sweep µs 8K | log sweep µs 128K")
    for r in rows(argv[0] if argv else CHECK):
        lw = f"{r[8]:.2f}" if r[8] is not None else "-"
        print(f"{r[0]} | {r[1]} | {r[2]} | {r[3]:.0f} | {r[4]:.0f} | {r[5]:.0f} | {r[6]:.0f} | {r[7]:.0f} | {lw} | "
              f"{r[9]:.0f} | {r[10]:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
