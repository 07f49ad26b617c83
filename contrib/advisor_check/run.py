"""The advisor against configurations nobody fitted (issue #37): draw them by a seed, boot one lab guest with
every device they need, and in it make each prediction before its pool runs (guest_job.py).

    python3 contrib/advisor_check/run.py SEED OUTDIR [--fit] [--slowed] [--first N] [--only NAME,...] [--runtime S]
    python3 contrib/advisor_check/run.py --plan PLAN.json OUTDIR [--slowed] [--only NAME,...] [--runtime S]

The draw: each log class of LOG_CLASSES x each load of LOADS, in a seeded order, each with a seeded layout
(stripe or mirror) of DATA hdd data disks; writers 1, 4 and 16. --fit draws FIT_COUNT configurations of
FIT_CLASSES at FIT_THREADS writers instead: the recordings a model may be fitted on, never a test point. The plan is written to
OUTDIR/plan.json before the guest boots; `python3 contrib/advisor_check/table.py OUTDIR` makes the table.
--first N keeps the first N configurations of the seeded order (a short draw: each costs the guest ~3 minutes);
--only NAME[,NAME] the named ones.
--runtime S: the pools' steps and the host probe's that long (default 5 s and the probe's own 3 s): a 5-second step
is one txg period, and whether a txg sync falls inside it is chance (docs/advisor.md, draw 9413).
--plan PLAN.json runs a plan written by hand instead of a draw (an experiment: its own devices and configurations,
in draw()'s form; contrib/advisor_check/plans/): never a test point of the model, since nobody drew it.
--slowed runs the whole draw on a host slowed as the lab tier's proof is (tests/conftest.SlowHost: a busy-looping
process per host core and fio's sync writes on the host's disk); what they got is written to OUTDIR/slowed.json.
"""

import json
import os
import random
import subprocess
import sys

LOG_CLASSES = ("hdd", "sas-ssd", "nvme", "nvdimm")
FIT_CLASSES = ("sata-ssd", "nvme", "nvdimm")  # the fitting draw: another class beside, other writer counts
FIT_THREADS = [2, 8]
LOADS = (("iscsi", "4k"), ("nfs", "64k"))
LAYOUTS = ("stripe", "mirror")
DATA = 2
FIT_COUNT = 3
HERE = os.path.dirname(os.path.abspath(__file__))


def draw(seed: int, fit: bool):
    rng = random.Random(seed)
    combos = [(c, p, bs) for c in (FIT_CLASSES if fit else LOG_CLASSES) for p, bs in LOADS]
    rng.shuffle(combos)
    if fit:
        combos = combos[:FIT_COUNT]
    devices = ["hdd"] * DATA  # indices 0..DATA-1: the data disks, shared by every configuration
    configs = []
    for cls, protocol, bs in combos:
        devices.append(cls)
        configs.append({"name": f"{cls}-{protocol}-{bs}", "log": len(devices) - 1, "data": list(range(DATA)),
                        "layout": rng.choice(LAYOUTS), "protocol": protocol, "bs": bs,
                        "threads": FIT_THREADS if fit else [1, 4, 16]})
    return {"seed": seed, "fit": fit, "devices": devices, "configs": configs, "runtime": 5, "ramp": 1}


def main(argv):
    if argv[0] == "--plan":  # an experiment's plan, written by hand
        with open(argv[1]) as fh:
            plan = dict(json.load(fh), plan_file=os.path.abspath(argv[1]))
        out = os.path.abspath(argv[2])
        argv = argv[3:]
    else:
        seed, out = int(argv[0]), os.path.abspath(argv[1])
        plan = draw(seed, "--fit" in argv)
    if "--first" in argv or "--only" in argv:
        if "--first" in argv:
            plan["configs"] = plan["configs"][:int(argv[argv.index("--first") + 1])]
            plan["first"] = len(plan["configs"])
        if "--only" in argv:  # named configurations of the draw, e.g. to run again one a draw lost
            names = argv[argv.index("--only") + 1].split(",")
            unknown = sorted(set(names) - {c["name"] for c in plan["configs"]})
            if unknown:
                print(f"run.py: --only: not in this draw: {', '.join(unknown)}", file=sys.stderr)
                return 2
            plan["configs"] = [c for c in plan["configs"] if c["name"] in names]
            plan["only"] = names
        used = sorted({i for c in plan["configs"] for i in c["data"] + [c["log"]]})
        keep = {old: new for new, old in enumerate(used)}  # only the devices the kept configurations use
        plan["devices"] = [plan["devices"][i] for i in used]
        for c in plan["configs"]:
            c["log"], c["data"] = keep[c["log"]], [keep[i] for i in c["data"]]
    if "--runtime" in argv:  # longer steps, for the pools and the host probe alike (several txg periods)
        plan["runtime"] = plan["probe_runtime"] = float(argv[argv.index("--runtime") + 1])
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "plan.json"), "w") as fh:
        json.dump(plan, fh, indent=2)
    print(json.dumps([(c["name"], c["layout"]) for c in plan["configs"]]))
    if "--draw-only" in argv:
        return 0
    cmd = [sys.executable, "-m", "slogqual", "lab", "run", "--memory", "2048", "--quiet", "-o", os.path.join(out, "lab")]
    for d in plan["devices"]:
        cmd += ["-d", d]
    cmd += ["--", "python3", os.path.join(HERE, "guest_job.py"), json.dumps(plan)]
    if "--slowed" not in argv:
        return subprocess.run(cmd).returncode
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests"))
    from conftest import SlowHost  # the lab tier's own slowed host, so the two are slowed alike

    os.makedirs(os.path.join(out, "busy-disk"), exist_ok=True)
    slow = SlowHost(os.path.join(out, "busy-disk"))
    try:
        code = subprocess.run(cmd).returncode
    finally:
        with open(os.path.join(out, "slowed.json"), "w") as fh:
            json.dump(slow.stop(), fh, indent=2)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
