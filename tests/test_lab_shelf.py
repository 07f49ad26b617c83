"""A shelf in the lab (issue #30): three identical SAS SSDs behind one shared path — a QEMU throttle group,
the HBA's ceiling — one of them in a slower slot (a cap of its own), and a fourth on the common HBA in a slot
of its own as fast as the path (its own cap at the path's ceiling: alone, it runs as its siblings do).

Each device alone runs at its own speed (the siblings and the fourth at the path's ceiling, the slow slot at
its cap); all at once, the three behind the path share its ceiling (within the counting error and QEMU's
burst), far below the sum of their alone figures; the fourth keeps its speed. (An unthrottled fourth ran at
what the guest's one vCPU carries: in the slowed lab tier, starved, all four at once were held by that CPU,
the fourth too — 10.1 MB/s alone, 3.4 together — and nothing showed the path. Capped, the fourth asks the
guest for no more than the path's three do.) The guest's sysfs shows which
devices share a SCSI host: the path's own HBA. The figures are fio's (QD1 O_DIRECT writes, each followed
by fdatasync), one fio run with a job per device for "together". Then slogqual itself, `sweep --parallel
--probe` on the same four, the HBA's ceiling declared (`--path-ceiling`: a virtio HBA has no link speed in
sysfs): each unit's result as a lone sweep writes it, and the shelf document names the HBA the three share (its
SCSI host, and the PCI function under it) with its declared ceiling as what held them while the fourth kept
its speed — capped at it in the higher-queue-depth round — and the unit in the slower slot."""

import json
import os

import pytest

from conftest import ROOT, need_lab, slogqual

pytestmark = pytest.mark.lab

MiB = 1 << 20
# far below what one device carries alone in a guest: 95 MiB/s here unslowed; 9 MiB/s at the least in the slowed
# lab tier beside other test suites, where an 8 MiB/s ceiling was too high to show (3.2 MiB/s on one unit alone)
CEILING = 3 * MiB
SLOW = 3 * MiB // 4
BS = "128k"
SECONDS = 5
PROBE_SECONDS = 3  # slogqual's own probe: each unit alone, then all at once, this long each
# the HBA's ceiling as slogqual is told it (--path-ceiling: the guest's sysfs gives a virtio HBA no link speed)
DECLARED = f"{CEILING // MiB}m"
# QEMU's throttle bucket lets a tenth of a second's worth through on top (throttle.c: max = avg / 10)
BURST = 1 + 0.1 / SECONDS


def _bw(path, name=None):
    """{job name: (bytes/s, IOs)} of a fio JSON result."""
    with open(path) as fh:
        doc = json.load(fh)
    return {j["jobname"]: (j["write"]["bw_bytes"], j["write"]["total_ios"]) for j in doc["jobs"]}


def test_a_shared_path_caps_its_units_together_and_a_slow_slot_is_slower_alone(tmp_path):
    need_lab()
    out = tmp_path / "out"
    proc = slogqual("lab", "run", "-q", "-o", str(out), "--path", f"hba0={CEILING}",
                    "--device", "sas-ssd@hba0", "--device", "sas-ssd@hba0", "--device", f"sas-ssd@hba0:{SLOW}",
                    "--device", f"sas-ssd:{CEILING}", "--", "sh", "-c",
                    f"sh {os.path.join(ROOT, 'tests', 'lab_jobs', 'shelf_probe.sh')} {BS} {SECONDS} && "
                    "mkdir -p sweep && set -- $SLOGQUAL_LAB_DEVICES && "
                    f"slogqual sweep \"$@\" --parallel --probe --sizes {BS} --runtime {PROBE_SECONDS} "
                    f"--path-ceiling \"$1:scsi-host={DECLARED}\" "
                    "--settle 0 --destroy-data -o sweep --quiet --format table", timeout=900)
    assert proc.returncode == 0, (out / "lab-console.log").read_text()[-3000:] if out.exists() else proc.stderr
    devs = json.loads((out / "lab-devices.json").read_text())
    topo = json.loads((out / "lab-topology.json").read_text())
    assert topo["paths"] == [{"name": "hba0", "ceiling_bytes_s": CEILING}]
    names = [os.path.basename(d["path"]) for d in devs]  # in --device order
    alone = {n: _bw(out / f"alone-{n}.json")[n] for n in names}
    together = _bw(out / "together.json")
    fast, slow, outside = names[:2], names[2], names[3]
    figures = {"alone": alone, "together": together}
    # a guest too starved to carry the path's ceiling on one unit alone shows no shared ceiling: said, not judged
    # (slowed run 17, beside another lab guest and a hog per core: 0.13 and 0.54 MiB/s alone on a 3 MiB/s path,
    # 5 and 22 IOs — asking for the IO count first failed the run over what this skip is for)
    for n in fast:
        if alone[n][0] < 0.8 * CEILING:
            pytest.skip(f"this guest carried {alone[n][0] / MiB:.1f} MiB/s on {n} alone, below the path's "
                        f"{CEILING / MiB:.0f} MiB/s ceiling: too slow to show a shared ceiling ({figures})")
    for n in names:  # every figure rests on enough IOs for a counting error of a few per cent
        assert alone[n][1] >= 16 and together[n][1] >= 4, figures
    # alone: the siblings at the path's ceiling (not above it), the slow slot at its own cap
    for n in fast:
        assert alone[n][0] <= CEILING * BURST * 1.05, figures
    assert alone[slow][0] <= SLOW * BURST * 1.05 and alone[slow][0] < 0.5 * min(alone[n][0] for n in fast), figures
    # its own slot, as fast as the path: never above its cap, and at the path's speed in one of its runs in this
    # guest — fio's alone and together, slogqual's probe alone at both depths (below) — a five-second run alone can
    # lose a third to a hiccup of the guest's one vCPU (landing CI of stop 42: 2.03 MiB/s alone, 78 IOs, while its
    # siblings just ran 3.05 and 3.04 and it ran 2.92 together; slowed run 24: 1.57 alone and 2.29 together, then
    # 3.06 and 3.13 in the probe); a slot capped lower is below 0.8 of the path in every one of them
    (shelf_path,) = (out / "sweep").glob("slogqual-shelf-*.json")
    probed = [size["alone"][f"/dev/{outside}"] for size in json.loads(shelf_path.read_text())["sizes"]]
    assert max(alone[outside][0], together[outside][0], *probed) >= 0.8 * CEILING, (figures, probed)
    assert max(alone[outside][0], together[outside][0]) <= CEILING * BURST * 1.05, figures
    # together: the three behind the path share its ceiling, far below the sum of their alone figures
    shared = sum(together[n][0] for n in names[:3])
    summed = sum(alone[n][0] for n in names[:3])
    assert shared <= CEILING * BURST * 1.05 and shared < 0.7 * summed, figures
    # the unit outside the path is not held back as they are: its share of its speed alone beats theirs by the
    # margin the analysis asks of a held group (shelf.groups_held: at most 1 - 2 x 15 % of the outside's) —
    # a relation, since a starved guest's one vCPU takes some of every unit's speed at once (slowed: 79 %)
    assert shared / summed < 0.7 * together[outside][0] / alone[outside][0], figures
    # sysfs: the three behind the path share a SCSI host, the fourth sits on another
    hosts = {n: next(p for p in (out / f"sysfs-{n}.txt").read_text().strip().split("/") if p.startswith("host"))
             for n in names}
    assert len({hosts[n] for n in names[:3]}) == 1 and hosts[outside] != hosts[names[0]], hosts

    # slogqual's own view: a sweep of the four at once, then its together-vs-alone probe
    sweeps = {}
    for f in (out / "sweep").glob("*.json"):
        doc = json.loads(f.read_text())
        if doc.get("schema", "").startswith("slogqual.sweep/"):
            assert doc["status"] == "complete" and doc["points"][0]["ios"] > 0, doc["points"]
            sweeps[os.path.basename(doc["target"]["path"])] = doc
    assert sorted(sweeps) == sorted(names)
    (shelf_doc,) = [json.loads(f.read_text()) for f in (out / "sweep").glob("slogqual-shelf-*.json")]
    qd1, deep = shelf_doc["sizes"]  # the sweep's 128 KiB, write + flush pairs; then 1 MiB, 8 in flight, no flush
    assert (qd1["size"], qd1.get("depth", 1), deep["size"], deep["depth"]) == (128 << 10, 1, 1 << 20, 8), shelf_doc
    behind = sorted(f"/dev/{n}" for n in names[:3])
    element = f"SCSI host {hosts[names[0]]}"
    for size in (qd1, deep):
        findings = size["analysis"]["findings"]
        probe = {"size": size["size"], "alone": size["alone"], "together": size["together"],
                 "findings": [f["words"] for f in findings]}
        alone_fast = min(size["alone"][f"/dev/{n}"] for n in fast)
        if alone_fast < 0.8 * CEILING:
            pytest.skip(f"slogqual's probe carried {alone_fast / MiB:.1f} MiB/s on a unit alone, below the path's "
                        f"{CEILING / MiB:.0f} MiB/s ceiling ({probe})")
        # the three behind the HBA lost together while the fourth kept its speed: what holds them is named, with
        # its declared ceiling; capped where they reached it (within the shelf's 15 %), else held below it
        group = [f for f in findings if f["kind"] in ("capped-by-shared-element", "held-behind-shared-element")
                 and sorted(f["units"]) == behind]
        assert len(group) == 1 and group[0]["element"]["label"] == element, (probe, hosts)
        g = group[0]
        assert g["element"]["declared"] == f"/dev/{names[0]}:scsi-host={DECLARED}", g
        assert g["element"]["ceiling"] == CEILING and "declared" in g["words"], g
        assert g["figures"]["ratio"] < 0.7 * g["figures"]["outside_ratio"], probe
        assert g["figures"]["pci_function"].startswith("PCI function "), g
        if size is deep:  # 8 writes in flight per unit ask more of the path than it carries: they reach it
            # (no upper bound on of_ceiling here: at 1 MiB for 3 s one IO more or less per unit is ~10 % of it)
            assert g["kind"] == "capped-by-shared-element", probe
        slow_found = [f for f in findings if f["kind"] in ("slow-unit", "slow-unit-link")]
        assert [f["units"] for f in slow_found] == [[f"/dev/{slow}"]], probe
