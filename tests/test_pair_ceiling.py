"""A striped or mirrored log's ceiling (issue #30, analysis/pair_ceiling.py): N x its slowest member for a
stripe, the slowest member for a mirror, or a path element every member shares — whichever is lower — and
which one the log vdevs reached; the runner's record of each device's path it rests on.

The recorded case is a real lab result with a striped and a mirrored log and both members' own sweeps
(tests/fixtures/advisor/README.md: `iscsi-4k-lab-sata-ssd-nvdimm.json`, 4 KiB writes — the pair never asked for
bandwidth). No lab run of a bandwidth-bound pair is recorded yet, so the two other cases are CONSTRUCTED from
that result with its own typed objects (ScenarioResult, ScenarioStep via dataclasses.replace): its 8-thread
stripe step given other members, their paths and the log vdevs' rate, each figure from a seed
(/work/shared/seeds, tests/fixtures/topology/SOURCES.md) and said where it is used:

- seed 000: four NVMe drives alone 832, 1652, 1648 and 1657 MB/s, in MD RAID0 together 3322 MB/s — "the
  slowest device * number of devices" (4 x 832 = 3328); each drive in its own slot (the SYNTHETIC tree of
  tests/test_shelf.py: nothing but the host bridge is shared).
- seed 003: 14 disks behind one 4-lane SAS wide port, 3 Gb/s (IOM3, 1.2 GB/s) or 6 Gb/s (IOM6, 2.4 GB/s),
  together 1036.4 and 1548.3 MB/s; 160 MB/s per disk alone is test_shelf.py's stated assumption (the seed
  has no figure alone).

A seed's figure alone stands for the member's sweep at 128 KiB, its figure together for the log vdevs'
write rate: the relations the analysis judges are the seeds' own.
"""

import dataclasses
import json

import pytest

from conftest import fixture_path, load
from slogqual.analysis import pair_ceiling as P
from slogqual.analysis import scenario as scenario_analysis
from slogqual.report import scenario as scenario_words
from slogqual.analysis.findings import Finding, Kind, StepRef
from slogqual.device import topology as T
from slogqual.errors import UsageError
from slogqual.report import wording
from slogqual.results import DeviceIdentity
from slogqual.results.scenario import ScenarioResult

from test_device_identity import host_sys, lab_sys  # noqa: F401 (the recorded trees, unpacked once)
from test_shelf import seed000_tree, seed003_tree

RECORDED = fixture_path("advisor", "iscsi-4k-lab-sata-ssd-nvdimm.json")
STRIPE, MIRROR = "sync=always + striped SLOG", "sync=always + mirrored SLOG"
MiB, MB = 1 << 20, 1e6


def pair_entry(result, config):
    (entry,) = [p for p in scenario_words.worded(scenario_analysis.analyse(result))["pairs"] if p["config"] == config]
    return entry


def ceiling_of(entry):
    (f,) = [Finding.from_dict(d) for d in entry["findings"] if d["kind"] == Kind.PAIR_CEILING.value]
    return f


# --- the recorded pair: latency-bound, far below its members' bandwidth ---------------------------------

def test_the_recorded_stripe_and_mirror_stopped_far_short_of_their_members_bandwidth():
    doc = load(RECORDED)
    sdc_128k = next(p for p in doc["log_sweeps"]["/dev/sdc"]["points"] if p["size"] == 131072)["mbps"]
    rows = {(s["config"], s["threads"]): {v["name"]: v["write_bytes_s"] for v in s["vdevs"] if v["section"] == "logs"}
            for s in doc["steps"] if s["log"] in ("stripe", "mirror")}
    result = ScenarioResult.load(RECORDED)

    stripe = pair_entry(result, STRIPE)
    f = ceiling_of(stripe)
    x = f.figures
    assert (x["log"], x["slowest"], x["expected_by"], x["topology"], x["shared"]) == \
        ("stripe", "/dev/sdc", "members", "unknown", None)  # recorded before paths were kept
    assert x["slowest_mbps"] == sdc_128k and x["members_ceiling_mbps"] == pytest.approx(2 * sdc_128k)
    at8 = rows[(STRIPE, 8)]  # the busier of its two steps
    assert f.steps == (StepRef(STRIPE, None, 8),)
    assert x["measured_mbps"] == pytest.approx((at8["sdc"] + at8["pmem0"]) / MiB)
    assert [m["written_mbps"] for m in x["members"]] == pytest.approx([at8["sdc"] / MiB, at8["pmem0"] / MiB])
    assert x["of_expected"] == pytest.approx(x["measured_mbps"] / (2 * sdc_128k)) and x["of_expected"] < 0.1
    assert x["reached"] == "short" and x["tolerance"] == 0.15
    assert stripe["ceiling"] == wording.word(f)
    assert "2 x its slowest member /dev/sdc" in stripe["ceiling"]
    assert "paths were not recorded" in stripe["ceiling"]
    assert stripe["ceiling"].endswith("its members' bandwidth did not hold it.")

    mirror = ceiling_of(pair_entry(result, MIRROR)).figures
    at8 = rows[(MIRROR, 8)]  # a mirror's every member writes every block: the log took one member's share
    assert mirror["members_ceiling_mbps"] == sdc_128k and mirror["expected_by"] == "members"
    assert mirror["measured_mbps"] == pytest.approx((at8["sdc"] + at8["pmem0"]) / 2 / MiB)
    assert mirror["reached"] == "short"


def test_zpool_iostat_s_mirror_row_is_the_sum_of_its_members():
    """Why a mirror's rate is the members' sum over N (and why the total stands in for missing rows)."""
    for s in ScenarioResult.load(RECORDED).steps:
        if s.log == "mirror":
            logs = [v for v in s.extra["vdevs"] if v["section"] == "logs"]
            top = next(v for v in logs if v["depth"] == 1)
            assert top["write_bytes_s"] == pytest.approx(sum(v["write_bytes_s"] for v in logs if v["depth"] == 2),
                                                         rel=0.002)
            without_rows = dataclasses.replace(s, extra={k: v for k, v in s.extra.items() if k != "vdevs"})
            assert P.log_rate(without_rows, "mirror", ["/dev/sdc", "/dev/pmem0"]) == \
                pytest.approx(P.log_rate(s, "mirror", ["/dev/sdc", "/dev/pmem0"]), rel=0.002)


def test_no_finding_without_every_member_s_bandwidth():
    doc = load(RECORDED)
    doc["log_sweeps"]["/dev/sdc"]["points"] = [p for p in doc["log_sweeps"]["/dev/sdc"]["points"]
                                               if p["size"] < 131072]  # no size from 128 KiB up
    entry = pair_entry(ScenarioResult.from_dict(doc), STRIPE)
    assert entry["ceiling"] is None and Kind.PAIR_CEILING.value not in [f["kind"] for f in entry["findings"]]


# --- CONSTRUCTED from the recorded result: the seeds' stripes -------------------------------------------

def constructed(paths, alone_mb, together_bytes_s):
    """The recorded result with its 8-thread stripe step given other members (``paths``: UnitPath each, its
    device the member), each member's sweep at 128 KiB (``alone_mb`` MB/s) and the log vdevs' rate
    (``together_bytes_s``, no per-member rows); its single-log and mirror steps left out."""
    result = ScenarioResult.load(RECORDED)
    members = [p.device for p in paths]
    step = next(s for s in result.steps if s.log == "stripe" and s.threads == 8)
    extra = {k: v for k, v in step.extra.items() if k not in ("vdevs", "log_write_ops_s")}
    extra.update(log_devices=members, log_write_bytes_s=together_bytes_s)
    result.steps = [s for s in result.steps if s.log == "none"] + [dataclasses.replace(step, extra=extra)]
    result.pool.log = members
    result.pool.devices.update({p.device: DeviceIdentity.of({"path": p.device, "topology": p.to_dict()}) for p in paths})
    result.log_sweeps = {m: {"points": [{"size": 131072, "mbps": mb * MB / MiB}]} for m, mb in zip(members, alone_mb)}
    return ScenarioResult.from_dict(result.to_dict(), "constructed.json")  # checked as a loaded one is


def walked(root, names):
    out = []
    for name in names:
        path = T.walk(name, root)
        path.device = f"/dev/{name}"
        out.append(path)
    return out


def test_seed000_the_stripe_reached_four_times_its_slowest_member(tmp_path):
    paths = walked(seed000_tree(tmp_path), [f"nvme{i}n1" for i in range(4)])
    result = constructed(paths, [832, 1652, 1648, 1657], 3322 * MB)
    entry = pair_entry(result, STRIPE)
    x = ceiling_of(entry).figures
    assert (x["slowest"], x["expected_by"], x["reached"]) == ("/dev/nvme0n1", "members", "members")
    assert x["members_ceiling_mbps"] == pytest.approx(4 * 832 * MB / MiB)
    assert x["of_expected"] == pytest.approx(3322 / 3328)
    # the four slots share only the host bridge, which has no link: its ceiling is not known, never guessed
    assert x["topology"] == "recorded" and x["shared"]["label"] == "PCI host bridge pci0000:00"
    assert x["shared_ceiling_mbps"] is None and "ceiling" not in x["shared"]
    assert [m["written_mbps"] for m in x["members"]] == [None] * 4  # the seed has the array's figure only
    assert entry["ceiling"] == (
        "The striped pair's log vdevs took 3168 MiB/s at 8 threads, 100% of what it can take: 3174 MiB/s, 4 x its "
        "slowest member /dev/nvme0n1 (793 MiB/s, the best of its QD1 sync-write sweep from 128 KiB); they share "
        "PCI host bridge pci0000:00, whose ceiling its path does not give (--path-ceiling declares one); it reached "
        "its members' ceiling (within 15%).")


def test_seed003_iom3_the_stripe_stopped_at_the_shared_wide_port_not_at_n_times_its_slowest(tmp_path):
    paths = walked(seed003_tree(tmp_path, "3.0 Gbit"), [f"sd{c}" for c in "bcdefghijklmno"])
    x = ceiling_of(pair_entry(constructed(paths, [160] * 14, 1036.4 * MB), STRIPE)).figures
    assert x["members_ceiling_mbps"] == pytest.approx(14 * 160 * MB / MiB)
    assert x["shared"]["label"] == "SAS port port-0:0" and x["shared"]["link"] == "SAS 3 Gb/s x4"
    assert x["shared"]["ceiling"] == pytest.approx(1.2e9) and len(x["shared"]["units"]) == 14
    assert x["shared_ceiling_mbps"] == pytest.approx(1.2e9 / MiB)
    assert x["shared_ceiling_mbps"] < x["members_ceiling_mbps"]
    assert (x["expected_by"], x["reached"]) == ("shared-path", "shared-path")
    assert x["expected_mbps"] == x["shared_ceiling_mbps"] and x["of_expected"] == pytest.approx(1036.4e6 / 1.2e9)
    words = wording.word(Finding(Kind.PAIR_CEILING, x))
    assert "1144 MiB/s, the ceiling of SAS port port-0:0 (SAS 3 Gb/s x4), on every member's path" in words
    assert "below 2136 MiB/s, 14 x its slowest member" in words
    assert words.endswith("it reached the shared path's ceiling (within 15%), not its members'.")


def test_seed003_iom6_the_wider_port_is_higher_than_the_members_and_the_stripe_reached_neither(tmp_path):
    # the seed's IOM6 run: 1548.3 MB/s, below both 14 x 160 MB/s and the 2.4 GB/s port (its author found the cable)
    paths = walked(seed003_tree(tmp_path, "6.0 Gbit"), [f"sd{c}" for c in "bcdefghijklmno"])
    x = ceiling_of(pair_entry(constructed(paths, [160] * 14, 1548.3 * MB), STRIPE)).figures
    assert x["shared_ceiling_mbps"] == pytest.approx(2.4e9 / MiB)
    assert x["shared_ceiling_mbps"] > x["members_ceiling_mbps"]
    assert (x["expected_by"], x["reached"]) == ("members", "short")
    assert x["of_expected"] == pytest.approx(1548.3 / 2240)
    words = wording.word(Finding(Kind.PAIR_CEILING, x))
    assert "the 2289 MiB/s of SAS port port-0:0 (SAS 6 Gb/s x4), which they share, is higher" in words


def test_a_mirror_s_blocks_cross_the_shared_element_once_per_member(tmp_path):
    """CONSTRUCTED: the recorded mirror step and sweeps, its two members placed behind seed 003's IOM3 wide
    port: the port carries each block twice, so what the mirror can take through it is half its ceiling."""
    result = ScenarioResult.load(RECORDED)
    (sdb, sdc) = walked(seed003_tree(tmp_path, "3.0 Gbit"), ["sdb", "sdc"])
    sdb.device, sdc.device = "/dev/sdc", "/dev/pmem0"
    steps = [s for s in result.steps if s.log == "mirror"]
    members = ["/dev/sdc", "/dev/pmem0"]
    f = P.finding("mirror", MIRROR, None, steps, members,
                  {m: P.member_bandwidth(result.log_sweeps[m]) for m in members}, {"/dev/sdc": sdb, "/dev/pmem0": sdc})
    x = f.figures
    assert x["shared_ceiling_mbps"] == pytest.approx(1.2e9 / 2 / MiB) and x["expected_by"] == "members"
    assert x["members_ceiling_mbps"] == x["slowest_mbps"]  # a mirror: its slowest member, not 2 x


def test_reached_is_said_within_the_tolerance_on_both_sides():
    assert [P.reached(v, 100.0, "shared-path") for v in (84.9, 85.1, 114.9, 115.1)] == \
        ["short", "shared-path", "shared-path", "above"]


# --- the paths the runner records ----------------------------------------------------------------------

def test_a_path_sysfs_cannot_give_is_recorded_as_unknown(tmp_path, host_sys):  # noqa: F811
    nowhere = T.recorded("/dev/sdb", str(tmp_path / "no-sys"))
    assert nowhere["elements"] == [] and "unknown" in nowhere["error"]  # FreeBSD: no sysfs at all
    plain = tmp_path / "a-file"
    plain.write_text("")
    assert "not a block device" in T.recorded(str(plain), host_sys)["error"]


def test_a_recorded_path_is_read_back_and_a_bad_one_is_named(lab_sys):  # noqa: F811
    doc = load(RECORDED)
    path = T.walk("sda", lab_sys)  # the lab guest's virtio-scsi disk, recorded
    doc["pool"]["devices"]["/dev/sda"]["topology"] = path.to_dict()
    result = ScenarioResult.from_dict(doc)
    assert result.topology("/dev/sda") == path and result.topology("/dev/sdc") is None
    assert result.to_dict() == doc
    doc["pool"]["devices"]["/dev/sda"]["topology"]["elements"][1].pop("key")
    with pytest.raises(UsageError, match=r"pool.devices\[/dev/sda\].topology.elements\[1\].key' is missing"):
        ScenarioResult.from_dict(doc, "r.json")


def test_the_runner_keeps_the_path_each_record_carries_and_reads_only_a_missing_one(tmp_path, monkeypatch,
                                                                                     lab_sys):  # noqa: F811
    from slogqual.analysis import path_ceiling
    from slogqual.pool import door as run

    def as_identify_records(name):  # linux.identify's topology: the disk's walk, named by the path given
        path = T.walk(name, lab_sys)
        path.device = f"/dev/{name}"
        return path

    plain = str(tmp_path / "a-file")
    identities = {f"/dev/{n}": {"path": f"/dev/{n}", "topology": as_identify_records(n).to_dict()}
                  for n in ("sda", "sdb")}
    identities[plain] = {"path": plain, "error": "identification failed"}  # a record without a path
    walks, reads = [], []
    walk, recorded = T.walk, T.recorded
    monkeypatch.setattr(T, "walk", lambda *a, **kw: walks.append(a) or walk(*a, **kw))
    monkeypatch.setattr(T, "recorded", lambda d, *a, **kw: reads.append(d) or recorded(d, *a, **kw))
    ceilings = path_ceiling.parse_all(["/dev/sdb:scsi-host=3m"])
    paths = run._paths(list(identities), ceilings, identities, lab_sys)
    assert walks == [] and reads == [plain]  # the records' paths kept; the file's read, once
    # byte-equal to what the runner read for itself before: each disk's walk, the ceiling set
    expected = [as_identify_records(n) for n in ("sda", "sdb")]
    path_ceiling.apply(expected, ceilings)
    assert json.dumps([paths["/dev/sda"], paths["/dev/sdb"]]) == json.dumps([p.to_dict() for p in expected])
    assert any(e.get("declared") for e in paths["/dev/sdb"]["elements"])
    assert "not a block device" in paths[plain]["error"]


# --- a recorded bandwidth-bound stripe behind a path whose ceiling was declared ---------------------------

def test_the_recorded_lab_stripe_reached_its_declared_shared_path_not_twice_a_member():
    """tests/fixtures/advisor/README.md: two 2.5 MiB/s logs behind a 3 MiB/s throttled HBA (lab), its ceiling
    declared with --path-ceiling (a virtio HBA has no link speed in sysfs): the analysis of the recorded
    document puts the stripe at the path's ceiling, below 2 x its slowest member."""
    result = ScenarioResult.load(fixture_path("advisor", "stripe-128k-lab-declared-path.json"))
    built = load(fixture_path("advisor", "stripe-128k-lab-topology.json"))
    assert built["paths"] == [{"name": "stripe0", "ceiling_bytes_s": 3 * MiB}]
    (entry,) = scenario_words.worded(scenario_analysis.analyse(result))["pairs"]
    x = ceiling_of(entry).figures
    assert x["shared"]["declared"] == "lab:1:scsi-host=3m" and x["shared_ceiling_mbps"] == 3.0
    assert x["expected_by"] == "shared-path" and x["reached"] == "shared-path", x
    assert x["members_ceiling_mbps"] > 1.5 * x["shared_ceiling_mbps"]  # twice a member was out of reach
    assert abs(x["measured_mbps"] - 3.0) <= 0.15 * 3.0
    # the declaration is on every member's recorded path (the same element), not on the data disk's
    declared = {d for d in result.log_paths for e in result.topology(d).elements if e.declared}
    assert declared == set(result.log_paths)
    assert not any(e.declared for d in result.data_paths for e in result.topology(d).elements)
