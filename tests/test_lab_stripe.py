"""A striped log behind one shared path, in the lab (issue #30): "a stripe of two logs behind the shared cap
reaches the cap, not 2x".

Two `sas-ssd` log devices sit behind one shared path (a QEMU throttle group, `--path`), each with a cap of its
own (`CLASS@PATH:RATE`) below the path's, the path's below twice one member's: MEMBER_CAP 2.5 MiB/s each,
PATH_CAP 3 MiB/s, so one member alone runs at its own cap, the stripe of both at the path's, and twice a
member (5 MiB/s) is out of reach. The path's ceiling is declared to slogqual (`--path-ceiling`), as a user
who knows an element sysfs cannot rate would. The data disk (`hdd`) is not behind the path. The guest runs
tests/lab_jobs/stripe-128k.toml (one `sync=always + striped SLOG` step of 128 KiB writes, then one mirrored) with
--sweep-logs, so the result holds each member's own sweep (its bandwidth: analysis.advisor.bandwidth) and each device's
path as the guest's sysfs shows it (pool.devices[dev].topology).

What is asserted: each member alone swept at its own cap; the stripe's log vdevs wrote at the path's cap
(zpool iostat, within 15 %, as the wide-128k test holds a capped log to its cap) and well below twice a
member; the pair-ceiling finding says the stripe reached the shared path's ceiling — the declared one, since
the guest's sysfs gives no link speed for a virtio HBA (tests/test_shelf.py, the recorded lab tree) — not 2 x
its slowest member, and names the element both members' paths share and the data disk's does not: the path's
own virtio-scsi HBA, whose SCSI host it is. lab-topology.json, what the host built, is the ground truth the
measured rate is held to.

Run it (root, the lab image built by contrib/lab/build.sh):
    python3 -m pytest -q -p no:xdist tests/test_lab_stripe.py
"""

import json
import os

import pytest

from conftest import ROOT, need_lab, slogqual
from slogqual.report import scenario as scenario_words
from slogqual.analysis.findings import Finding, Kind
from slogqual.results.scenario import ScenarioResult

pytestmark = pytest.mark.lab

MiB = 1 << 20
MEMBER_CAP = 5 * MiB // 2  # each log device's own cap: a slot slower than the path
PATH_CAP = 3 * MiB  # the shared path: above one member, below two
TOLERANCE = 0.15  # a log vdev "at" a cap: zpool iostat's 1 s reports over 10 s, QEMU's burst on top
SCENARIO = os.path.join(ROOT, "tests", "lab_jobs", "stripe-128k.toml")
# the guest's sysfs gives a virtio HBA no link speed: its ceiling is declared, as a user who knows it would
DECLARED = f"lab:1:scsi-host={PATH_CAP // MiB}m"


def test_a_stripe_of_two_logs_behind_a_shared_cap_reaches_the_cap_not_twice_a_member(tmp_path):
    need_lab()
    out = tmp_path / "out"
    member = f"sas-ssd@stripe0:{MEMBER_CAP}"
    proc = slogqual("lab", "run", "-q", "-o", str(out), "--path", f"stripe0={PATH_CAP}", "--device", "hdd",
                    "--device", member, "--device", member, "--",
                    "slogqual", "scenario", "run", SCENARIO, "--data", "lab:0", "--log", "lab:1", "lab:2",
                    "--quick", "--sweep-logs", "--destroy-data", "--quiet", "-o", "stripe.json",
                    "--path-ceiling", DECLARED, timeout=900)
    assert proc.returncode == 0, (out / "lab-console.log").read_text()[-3000:] if out.exists() else proc.stderr
    topo = json.loads((out / "lab-topology.json").read_text())
    assert topo["paths"] == [{"name": "stripe0", "ceiling_bytes_s": PATH_CAP}]  # what the host built
    result = ScenarioResult.load(str(out / "stripe.json"))
    assert result.complete, result.error
    data, members = result.data_paths[0], result.log_paths

    # alone: each member's own sweep at 128 KiB is at its own cap (the path, higher, does not hold one alone)
    swept = {m: next(p for p in result.log_sweeps[m]["points"] if p["size"] == 128 * 1024) for m in members}
    figures = {m: (p["mbps"], p.get("ios")) for m, p in swept.items()}
    for m, p in swept.items():
        if p["mbps"] * MiB < 0.8 * MEMBER_CAP:
            pytest.skip(f"this guest swept {m} at {p['mbps']:.2f} MiB/s alone, below its {MEMBER_CAP / MiB:g} MiB/s "
                        f"cap: too slow to show a shared path's ceiling ({figures})")
        assert p["mbps"] * MiB <= (1 + TOLERANCE) * MEMBER_CAP, figures

    # together: the stripe's log vdevs at the path's cap, not at twice a member
    (step,) = [s for s in result.steps if s.log == "stripe"]
    analysis = scenario_words.current(result)
    assert step.log_devices == members and step.slog_bytes, step.to_dict()
    assert analysis["problems"] == [], analysis["problems"]  # the ZIL stayed on the log vdevs (no spill)
    rows = {v["name"]: v["write_bytes_s"] for v in step.extra["vdevs"] if v["section"] == "logs"}
    assert sorted(rows) == sorted(os.path.basename(m) for m in members), rows  # a row per member, nothing else
    measured = sum(rows.values())
    seen = {"measured": measured / MiB, "rows": rows, "swept": figures}
    assert abs(measured - PATH_CAP) <= TOLERANCE * PATH_CAP, seen
    assert measured < 0.75 * sum(p["mbps"] for p in swept.values()) * MiB, seen  # far from 2 x a member
    assert all(b > 0.25 * PATH_CAP for b in rows.values()), seen  # both members took their share: a stripe

    # the finding: the stripe reached the shared path's (declared) ceiling, below 2 x its slowest member, and
    # the element both members share named
    (entry,) = [p for p in analysis["pairs"] if p["log"] == "stripe"]
    (found,) = [Finding.from_dict(f) for f in entry["findings"] if f["kind"] == Kind.PAIR_CEILING.value]
    x = found.figures
    assert x["measured_mbps"] * MiB == pytest.approx(measured)
    assert x["members_ceiling_mbps"] == pytest.approx(2 * min(p["mbps"] for p in swept.values()))
    assert x["topology"] == "recorded" and x["shared_ceiling_mbps"] == pytest.approx(PATH_CAP / MiB), x
    assert x["expected_by"] == "shared-path" and x["reached"] == "shared-path", x
    shared = x["shared"]
    assert shared["kind"] == "scsi-host" and sorted(shared["units"]) == sorted(members), x
    assert shared["declared"] == DECLARED and shared["ceiling"] == PATH_CAP, x
    paths = {d: [e.key for e in result.topology(d).elements] for d in members + [data]}
    assert all(shared["key"] in paths[m] for m in members) and shared["key"] not in paths[data], paths
    assert f"{shared['label']} (declared {DECLARED})" in entry["ceiling"], entry["ceiling"]
    stored = [p for p in result.analysis["pairs"] if p["log"] == "stripe"]
    assert [p["ceiling"] for p in stored] == [entry["ceiling"]]  # what the run itself stored and printed

    # mirrored: zpool iostat's log section shows the mirror and its two legs, which wrote the same ZIL blocks
    # (the mirror's own row is the legs' sum: its depth-1 row, the legs depth 2)
    (mstep,) = [s for s in result.steps if s.log == "mirror"]
    assert mstep.log_devices == ["mirror"] + members and mstep.slog_bytes, mstep.to_dict()
    logs = [v for v in mstep.extra["vdevs"] if v["section"] == "logs"]
    assert [v["depth"] for v in logs] == [1, 2, 2] and logs[0]["name"].startswith("mirror"), logs
    a, b = (v["write_bytes_s"] for v in logs[1:])
    assert a > 0 and b > 0 and abs(a - b) <= TOLERANCE * max(a, b), (a, b, logs)
    # behind the one path both legs' writes cross it: the legs' sum at the path's cap, each leg at half of it, and
    # the mirror's pair-ceiling finding says the shared path, not the slowest member, held it
    assert abs(logs[0]["write_bytes_s"] - PATH_CAP) <= TOLERANCE * PATH_CAP, logs
    (mirror,) = [p for p in analysis["pairs"] if p["log"] == "mirror"]
    (mfound,) = [Finding.from_dict(f) for f in mirror["findings"] if f["kind"] == Kind.PAIR_CEILING.value]
    assert mfound.figures["reached"] == "shared-path", mfound.figures
