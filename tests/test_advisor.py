"""The SLOG advisor (slogqual/analysis/advisor.py, slogqual advise) on real recorded sweeps and lab scenario
results (tests/fixtures/advisor/README.md): relations between candidates, the limits it names, sizing,
bad input, the document's round trip, and the prediction against what the lab measured — with the misses
beyond ±20 % listed by name (docs/advisor.md), never absorbed into a wider tolerance."""

import copy
import glob
import json
import os

import pytest

from conftest import fixture_path
from slogqual.analysis import advisor as A
from slogqual.report import advice as advice_words
from slogqual.report import scenario as scenario_words
from slogqual.cli import main
from slogqual.importers import diskinfo
from slogqual.results.powercut import PowercutResult
from slogqual.results import LatencyStats, SweepPoint, SweepResult, load_sweep
from slogqual.results.advice import AdviceResult
from slogqual.results.scenario import ScenarioResult



def F(name):
    return fixture_path("advisor", name)


CLASS_SWEEPS = {c: F(f"lab-sweep-4k-{c}.json") for c in ("hdd", "sata-ssd", "sas-ssd", "nvme", "nvdimm")}
ISCSI_4K = F("iscsi-4k-lab-sata-ssd-nvdimm.json")
SATA_SWEEP = F("iscsi-4k-lab.log0-sata-ssd.sweep.json")
NVDIMM_SWEEP = F("iscsi-4k-lab.log1-nvdimm.sweep.json")
WIDE = F("wide-128k-lab-capped-nvdimm-slowed.json")
SEQ_128K = F("iscsi-128k-seqwrite-lab-nvdimm.json")
WIDE_SWEPT = F("wide-128k-lab-swept-slowed.json")  # the same shape with both logs' own sweeps (run 12)
WIDE_SWEPT_CAPPED, WIDE_SWEPT_NVDIMM = (F(f"wide-128k-lab-swept.log{i}-{c}.sweep.json")
                                        for i, c in enumerate(("capped-ssd", "nvdimm")))
INTEL_710 = fixture_path("diskinfo", "freebsd-r320683-intel710.padded.txt")
THREADS = [1, 2, 4, 8, 16, 32, 64]
NONE = A.DataSide("none", A.DataOrigin("none"))


def read(path):
    with open(path) as fh:
        return json.load(fh)


def intel710():
    """FreeBSD r320683's `diskinfo -wS` of an Intel 710 (SATA, PLP): flat at ~171 MB/s from 256 KiB up."""
    (sweep,) = diskinfo.import_file(INTEL_710)
    return sweep


def capped_from_calibration():
    """The lab's capped-ssd as its guest measured it at boot (wide-128k-lab-calibration.json, `verified_*`:
    296 write+flush IOs of 128 KiB in 4.002 s under the cap) as a one-point sweep: the only recorded sweep
    figure of that candidate in the run whose scenario result is WIDE."""
    cal = read(F("wide-128k-lab-calibration.json"))[0]
    n, secs = cal["verified_ios"], cal["verified_s"]
    point = SweepPoint(size=cal["bs"], ios=n, lat_us=LatencyStats(mean=secs * 1e6 / n), iops=n / secs,
                       mbps=cal["verified_bytes_s"] / (1 << 20), lat_basis="write+flush")
    return SweepResult(target={"path": cal["path"], "kind": "block", "size": None}, params={"mode": "flush"},
                       environment={}, points=[point], device={"class": "capped-ssd"}, status="complete")


def typed(facts):
    """The advisor's facts as the document ``slogqual advise`` writes (report/advice words them), typed."""
    return AdviceResult.from_dict(advice_words.document(facts))


def iops(doc, i=0):
    return [s["iops"] for s in doc["candidates"][i]["steps"]]


def scenario_workload(doc):
    sc = doc["scenario"]
    return A.Workload("iscsi" if sc["kind"] == "zvol" else "nfs", sc["bs"], sc["volblocksize"] or sc["recordsize"],
                      [t * sc["luns"] for t in sc["threads"]], zils=sc["luns"] if sc["kind"] == "zvol" else 1)


# ---------------------------------------------------------------- relations

def test_nvdimm_predicts_more_iops_than_hdd_at_every_thread_count():
    w = A.Workload("iscsi", 4096, 16384, THREADS)
    doc = A.advise([(c, load_sweep(p)) for c, p in CLASS_SWEEPS.items()], w, A.Tunables(), NONE)
    by = {c["class"]: c for c in doc["candidates"]}
    hdd, nvdimm, sata = (by[k]["steps"] for k in ("hdd", "nvdimm", "sata-ssd"))
    for h, n, s in zip(hdd, nvdimm, sata):
        assert n["iops"] > 10 * h["iops"], (h, n)  # 29 µs vs 10,330 µs per 4 KiB commit in the same guest
        assert s["iops"] > h["iops"]  # 4,608 vs 10,330 µs
        assert h["binding"] == n["binding"] == "log-latency-bound"
    # from its own swept 4 KiB IO count: the hdd's figure rests on 194 IOs, the NVDIMM's on 64,512
    assert hdd[0]["sweep_ios"] == 194 and nvdimm[0]["sweep_ios"] == 64512


def test_predicted_iops_do_not_fall_with_threads_up_to_the_binding_limit():
    w = A.Workload("iscsi", 4096, 16384, THREADS, zils=2)
    for path in (SATA_SWEEP, NVDIMM_SWEEP, *CLASS_SWEEPS.values()):
        doc = A.advise([(path, load_sweep(path))], w, A.Tunables(), NONE)
        vals = iops(doc)
        assert all(b >= a for a, b in zip(vals, vals[1:])), (path, vals)
    # with the measured data side the figure is the least of the limits, never above the pool's
    data = A.data_from_scenario(ScenarioResult.load(ISCSI_4K), "iscsi")
    doc = A.advise([(SATA_SWEEP, load_sweep(SATA_SWEEP)), (NVDIMM_SWEEP, load_sweep(NVDIMM_SWEEP))],
                   scenario_workload(read(ISCSI_4K)), A.Tunables(), data)
    for c in doc["candidates"]:
        for s in c["steps"]:
            limits = [v for k, v in s["limits"].items() if k.endswith("_iops") and v is not None]
            assert s["iops"] == pytest.approx(min(limits), rel=1e-3)
            assert s["iops"] <= s["limits"]["pool_iops"] + 0.1


def test_a_bandwidth_capped_candidate_is_log_bandwidth_bound_at_large_io_and_latency_bound_at_small():
    sweep = intel710()
    big = A.advise([("intel710", sweep)], A.Workload("nfs", 1 << 20, 1 << 20, [1, 4, 16]), A.Tunables(), NONE)
    best = max(p.mbps for p in sweep.points if p.size >= 128 * 1024)  # 171.5 "Mbytes/s" at 4 MiB
    for s in big["candidates"][0]["steps"]:
        assert s["binding"] == "log-bandwidth-bound"
        assert s["mbps"] <= best * 1.01  # never above what the device's own sweep carried
        assert s["mbps"] >= 0.85 * best
    small = A.advise([("intel710", sweep)], A.Workload("nfs", 4096, 131072, [1]), A.Tunables(), NONE)
    assert small["candidates"][0]["steps"][0]["binding"] == "log-latency-bound"
    assert small["candidates"][0]["steps"][0]["commit_lat_us"] == pytest.approx(175.6, rel=0.05)  # its 8 KiB lwb
    # the lab's capped-ssd, as its guest calibrated it: named bandwidth-bound at 128 KiB, where the measured
    # analysis of the same run names the log device (it stops scaling at 2 threads)
    wide = read(WIDE)
    doc = A.advise([("capped", capped_from_calibration())], scenario_workload(wide), A.Tunables(),
                   A.data_from_scenario(ScenarioResult.from_dict(wide), "wide"))
    assert {s["binding"] for s in doc["candidates"][0]["steps"]} == {"log-bandwidth-bound"}
    measured = {c["device"]: c["bottleneck"]
                for c in scenario_words.current(ScenarioResult.from_dict(wide))["candidates"]}
    assert measured["/dev/sdg"].startswith("the log device")


@pytest.mark.parametrize("path", [ISCSI_4K, WIDE, SEQ_128K])
def test_the_data_side_of_a_scenario_result_is_its_steps_without_a_log_vdev(path):
    """From the typed result: each sync=standard and sync=always-without-SLOG step of the recorded run, as
    the file has it, and the pool's layout and data devices; a result with none of them is refused."""
    doc = read(path)
    result = ScenarioResult.load(path)
    data = A.data_from_scenario(result, "run")
    for side, sync in ((data.ceiling, "standard"), (data.without_slog, "always")):
        recorded = [s for s in doc["steps"] if s["sync"] == sync and s["log"] == "none"]
        assert [(c.threads, c.iops, c.mbps, c.ios) for c in side] == \
            [(s["threads"], s["iops"], s["mbps"], s["ios"]) for s in recorded]
        assert side and all(c.basis == A.FigureBasis("scenario", "run", sync=sync) for c in side)
        assert all(advice_words.figure_basis(c.basis) == f"measured: run, sync={sync}" + ("" if sync == "standard"
                                                                                       else ", no SLOG") for c in side)
    assert (data.layout, data.disks) == (doc["pool"]["layout"], len(doc["pool"]["data"]))
    assert advice_words.data_origin(data.description) == \
        f"run: {doc['pool']['layout']} of {len(doc['pool']['data'])} data devices"
    result.steps = [s for s in result.steps if s.log != "none"]
    with pytest.raises(A.AdviceInputError, match="^run: the scenario result has no sync=standard"):
        A.data_from_scenario(result, "run")


def test_with_a_slog_nothing_goes_indirect_unless_logbias_throughput():
    w = A.Workload("iscsi", 131072, 131072, [2])
    t = A.Tunables()
    assert A.log_shape(w, t, slog=True).state == "need-copy"
    assert A.log_shape(w, t, slog=False).state == "indirect"  # 128K >= volblocksize and volblocksize > 32K
    assert A.log_shape(A.Workload("iscsi", 131072, 16384, [2]), t, slog=False).state == "need-copy"  # 16K <= 32K
    assert A.log_shape(A.Workload("nfs", 65536, 131072, [2]), t, slog=False).state == "indirect"  # 64K >= 32K
    assert A.log_shape(A.Workload("iscsi", 4096, 16384, [2]), t, slog=True).state == "copied"
    thr = A.Tunables(logbias="throughput")
    data = A.data_from_scenario(ScenarioResult.load(SEQ_128K), "seq")
    doc = A.advise([(NVDIMM_SWEEP, load_sweep(NVDIMM_SWEEP))], w, thr, data)
    step = doc["candidates"][0]["steps"][0]
    assert step["binding"] == "indirect-bypass" and step["log_bytes_per_io"] < 4096 + 1


def test_sizing_scales_linearly_with_rate_and_matches_the_lab_spill():
    sweep = load_sweep(NVDIMM_SWEEP)  # the lab's 2 GiB NVDIMM
    w = A.Workload("iscsi", 131072, 131072, [2, 8])
    sizes = {}
    for rate in (10.0, 20.0, 40.0, 80.0):
        doc = A.advise([("nv", sweep)], A.Workload(**{**w.__dict__, "rate_mbps": rate}), A.Tunables(), NONE)
        sizes[rate] = doc["candidates"][0]["size"]
    for a, b in ((10.0, 20.0), (20.0, 40.0), (40.0, 80.0)):
        assert sizes[b]["needed_bytes"] == pytest.approx(2 * sizes[a]["needed_bytes"], rel=1e-6)
        assert sizes[b]["recommended_bytes"] == pytest.approx(2 * sizes[a]["recommended_bytes"], rel=1e-6)
    # a txg holds at most zfs_dirty_data_max: the figure stops growing there
    capped = A.advise([("nv", sweep)], A.Workload(**{**w.__dict__, "rate_mbps": 80.0}),
                      A.Tunables(zfs_dirty_data_max=64 << 20), NONE)["candidates"][0]["size"]
    assert capped["per_txg_capped_by_dirty_data_max"] and capped["needed_bytes"] == 3 * (64 << 20)
    # the lab: 64 MiB/s of 128 KiB sync writes; the 2 GiB NVDIMM spilled 0.015 %, the 256 MiB one 43 %
    lab = A.Workload(**{**w.__dict__, "rate_mbps": 64 * (1 << 20) / 1e6})
    doc = A.advise([("nv", sweep)], lab, A.Tunables(), NONE)
    assert not [f for f in doc["candidates"][0]["findings"] if f["kind"] == "log-too-small"]
    small = copy.deepcopy(sweep)
    small.device["capacity"] = 256 << 20  # what-if: the class as it was when the 43 % spill was measured
    doc = A.advise([("nv256", small)], lab, A.Tunables(), NONE)
    (f,) = [f for f in doc["candidates"][0]["findings"] if f["kind"] == "log-too-small"]
    assert f["figures"][0]["spills"] and doc["warnings"]


def test_life_is_endurance_over_the_bytes_a_day():
    sweep = load_sweep(NVDIMM_SWEEP)
    w = A.Workload("nfs", 65536, 131072, [4], rate_mbps=100.0)
    a = A.advise([("nv", sweep)], w, A.Tunables(), NONE, A.Endurance(tbw=1000))["candidates"][0]["life"]
    b = A.advise([("nv", sweep)], w, A.Tunables(), NONE, A.Endurance(tbw=2000))["candidates"][0]["life"]
    assert b["years"] == pytest.approx(2 * a["years"], rel=1e-2)
    assert a["bytes_per_day"] > 100e6 * 86400  # the log writes a record header beside each write
    d = A.advise([("nv", sweep)], w, A.Tunables(), NONE, A.Endurance(dwpd=1, warranty_years=5))["candidates"][0]
    assert d["life"]["rated_bytes"] == 2 * (1 << 30) * 365 * 5
    assert any(f["kind"] == "short-life" for f in d["findings"])  # 1 DWPD of 2 GiB against 8.6 TB a day


# ---------------------------------------------------------------- the command

def advise(*args, capsys):
    rc = main(["advise", *args])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("args,needle", [
    (["--log", ISCSI_4K, "--protocol", "iscsi", "--bs", "4k", "--threads", "1"], "not a slogqual.sweep/1 or slogqual.qualification/1 document"),
    (["--log", SATA_SWEEP, "--threads", "1,2"], "--protocol"),
    (["--log", SATA_SWEEP, "--protocol", "iscsi", "--threads", "1,2"], "IO size"),
    (["--log", SATA_SWEEP, "--protocol", "smb", "--bs", "4k", "--threads", "1"], "unknown protocol"),
    (["--log", SATA_SWEEP, "--data", SATA_SWEEP, "--protocol", "nfs", "--bs", "4k", "--threads", "1"], "--layout"),
    (["--log", SATA_SWEEP, "--scenario", SATA_SWEEP], "not a slogqual.scenario/1 document"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path, capsys, args, needle):
    """Input the command refuses after parsing; what argparse refuses (every number out of its range) is in
    tests/test_advise_edges.py."""
    out = tmp_path / "advice.json"
    rc, stdout, err = advise(*args, "-o", str(out), capsys=capsys)
    assert rc == 2 and needle in err and err.count("\n") == 1, err
    assert not out.exists() and stdout == ""


def test_a_sweep_of_the_wrong_kind_is_refused(tmp_path, capsys):
    doc = read(SATA_SWEEP)
    doc["params"]["mode"] = "dsync"  # FUA writes, no flush: not what a commit does
    bad = tmp_path / "dsync.json"
    bad.write_text(json.dumps(doc))
    rc, _, err = advise("--log", str(bad), "--protocol", "iscsi", "--bs", "4k", "--threads", "1", capsys=capsys)
    assert rc == 2 and "write+flush" in err and err.count("\n") == 1


def test_the_document_round_trips_through_o(tmp_path, capsys):
    out = tmp_path / "advice.json"
    rc, stdout, _ = advise("--log", SATA_SWEEP, NVDIMM_SWEEP, "--scenario", ISCSI_4K, "--tbw", "100", "-o", str(out),
                           capsys=capsys)
    assert rc == 0 and "log-latency-bound" in stdout and "pool-bound" in stdout
    doc = read(str(out))
    r = AdviceResult.load(str(out))
    assert r.to_dict() == doc and [c.path for c in r.candidates] == ["/dev/sdc", "/dev/pmem0"]
    # save -> load -> save gives the same file content
    again = tmp_path / "again.json"
    from slogqual.results import write_json_atomic
    write_json_atomic(str(again), r.to_dict())
    assert read(str(again)) == doc
    # and the same command again may replace its own output (it is a slogqual advice)
    assert advise("--log", SATA_SWEEP, "--scenario", ISCSI_4K, "-o", str(out), capsys=capsys)[0] == 0
    bad = copy.deepcopy(doc)
    bad["candidates"][0]["steps"][0]["binding"] = "fast"
    with pytest.raises(Exception, match=r"candidates\[0\]\.steps\[0\]\.binding"):
        AdviceResult.from_dict(bad, "x.json")


IOSTAT_HISTORY = fixture_path("zpool", "iostat-Tu-vpy-1s-stream-pmem-log.txt")


@pytest.mark.parametrize("args", [
    ["--log", SATA_SWEEP, NVDIMM_SWEEP, "--scenario", ISCSI_4K, "--tbw", "100"],
    ["--log", NVDIMM_SWEEP, "--scenario", WIDE, "--threads", "1,3,8,40", "--dwpd", "3"],
    ["--log", SATA_SWEEP, "--data", CLASS_SWEEPS["hdd"], CLASS_SWEEPS["sata-ssd"], "--layout", "raidz1", "--disks", "4",
     "--protocol", "iscsi", "--bs", "4k", "--threads", "1,2,4", "--rate-history", IOSTAT_HISTORY, "--tbw", "600"],
    ["--log", NVDIMM_SWEEP, "--protocol", "nfs", "--bs", "128k", "--threads", "1,8", "--logbias", "throughput"],
], ids=["scenario", "interpolated", "data-sweeps", "indirect"])
def test_a_written_advice_round_trips_byte_for_byte_and_reads_typed(tmp_path, capsys, args):
    """What `slogqual advise -o` writes, loaded and written again, is the same file; its candidates and steps
    read as the typed records the table and the chart read."""
    from slogqual.results import write_json_atomic

    out, again = tmp_path / "advice.json", tmp_path / "again.json"
    rc, _, err = advise(*args, "--tunables", "defaults", "-o", str(out), capsys=capsys)
    assert rc == 0, err
    r = AdviceResult.load(str(out))
    write_json_atomic(str(again), r.to_dict())
    assert again.read_bytes() == out.read_bytes()
    doc = read(str(out))
    for c, d in zip(r.candidates, doc["candidates"]):
        assert (c.path, c.device_class, c.size.needed_bytes, c.mirror.mirror) == \
            (d["path"], d["class"], d["size"]["needed_bytes"], d["mirror"]["mirror"])
        for s, e in zip(c.steps, d["steps"]):
            assert (s.threads, s.iops, s.binding, s.limits.pool_iops, s.upper_bound, s.lwb_writes) == \
                (e["threads"], e["iops"], e["binding"], e["limits"]["pool_iops"], e["upper_bound"], e["lwb_writes"])


def test_an_advice_of_another_key_order_and_fewer_keys_round_trips_as_it_was(tmp_path):
    """CONSTRUCTED from a written advice: a candidate's keys reversed, steps without the keys later versions
    added (host_cpu, upper_bound) and a key no version wrote — read and written back unchanged."""
    from slogqual.results import json_text

    w = A.Workload("iscsi", 4096, 16384, [1, 2])
    doc = advice_words.document(A.advise([("sata", load_sweep(SATA_SWEEP))], w, A.Tunables(), NONE))
    c = doc["candidates"][0]
    doc["candidates"][0] = dict(reversed(list(c.items())), later_key={"x": 1})
    for s in doc["candidates"][0]["steps"]:
        del s["host_cpu"], s["upper_bound"]
    text = json_text(doc, "advice")
    r = AdviceResult.from_dict(json.loads(text))
    assert json_text(r.to_dict(), "advice") == text
    assert r.candidates[0].steps[0].upper_bound is None and r.candidates[0].extra == {"later_key": {"x": 1}}


def test_json_is_the_document(capsys):
    rc, out, _ = advise("--log", NVDIMM_SWEEP, "--protocol", "nfs", "--bs", "64k", "--threads", "1,4", "--json",
                        capsys=capsys)
    doc = json.loads(out)
    assert rc == 0 and doc["schema"] == "slogqual.advice/1" and doc["tunables"]["zfs_immediate_write_sz"] == 32768
    assert AdviceResult.from_dict(doc).to_dict() == doc


# ---------------------------------------------------------------- prediction vs the lab

# Rows (fixture, candidate, total threads) where the predicted figure misses the measured sync=always + SLOG
# figure by more than ±20 % — measured, explained in docs/advisor.md, not hidden by a wider tolerance.
# A model change that moves a row in or out of this list fails the test until the docs say so.
KNOWN_MISSES = {
    ("iscsi-4k", "/dev/sdc", 2),    # +43 %: the 3 ms SATA SSD's commits took 4.3 ms in this slowed run; 209 of 193
    ("iscsi-4k", "/dev/sdc", 8),    # +21 %   predicted in the unslowed run 13 (+18 %), 77 of 150 in slowed run 11
    ("wide-128k", "/dev/sdg", 2),   # -43 %: one 128K calibration point; the 4K tail lwb priced at 128K's latency
    ("wide-128k", "/dev/sdg", 8),   # -25 %
}
# Rows the advisor itself marks as an upper bound (``upper_bound: host-cpu``): sync=standard ran the guest's one
# vCPU >= 90 % busy there, and with a log the host also copies every write into it. A bound is checked as one:
# the measured figure must not pass it by more than the tolerance. The 128 KiB ones are far under it (the
# copy of 128 KiB per IO halves what the saturated vCPU carries: docs/advisor.md).
KNOWN_BOUNDS = {
    ("iscsi-4k", "/dev/pmem0", 2), ("iscsi-4k", "/dev/pmem0", 8), ("seq-128k", "/dev/pmem0", 2),
    ("seq-128k", "/dev/pmem0", 8), ("wide-128k", "/dev/pmem0", 2), ("wide-128k", "/dev/pmem0", 8),
    ("wide-128k", "/dev/pmem0", 32), ("wide-swept", "/dev/pmem0", 2), ("wide-swept", "/dev/pmem0", 8),
    ("wide-swept", "/dev/pmem0", 32),
}


def error_table():
    cases = [("iscsi-4k", ISCSI_4K, [(SATA_SWEEP, load_sweep(SATA_SWEEP)), (NVDIMM_SWEEP, load_sweep(NVDIMM_SWEEP))]),
             ("seq-128k", SEQ_128K, [(NVDIMM_SWEEP, load_sweep(NVDIMM_SWEEP))]),
             ("wide-128k", WIDE, [("capped", capped_from_calibration()), (NVDIMM_SWEEP, load_sweep(NVDIMM_SWEEP))]),
             ("wide-swept", WIDE_SWEPT, [(p, load_sweep(p)) for p in (WIDE_SWEPT_CAPPED, WIDE_SWEPT_NVDIMM)])]
    rows = []
    for name, path, cands in cases:
        result = ScenarioResult.from_dict(read(path), path)
        doc = A.advise(cands, scenario_workload(read(path)), A.Tunables(), A.data_from_scenario(result, name))
        measured = {c["device"]: c["bottleneck"] for c in scenario_words.current(result)["candidates"]}
        std = {s.threads: s for s in result.steps if s.sync == "standard" and s.log == "none"}
        for r in A.verify(typed(doc), result):
            rows.append(dict(r, case=name, measured_limit=measured.get(r["candidate"], ""),
                             std_busy=std[r["threads"]].extra["cpu"]["busy_share"]))
    return rows


def test_prediction_against_the_lab_error_table():
    rows = error_table()
    print()
    print(f"{'case':10} {'candidate':11} {'class':10} {'thr':>3} {'pred':>9} {'meas':>7} {'IOs':>6} {'error':>6}  "
          "predicted limit / measured analysis")
    for r in rows:
        pred = ("≤ " if r["upper_bound"] else "") + f"{r['predicted_iops']:.0f}"
        print(f"{r['case']:10} {r['candidate']:11} {r['class'] or '?':10} {r['threads']:>3} {pred:>9} "
              f"{r['measured_iops']:>7.0f} {r['measured_ios']:>6} {r['error'] * 100:>+5.0f}%  {r['binding']} / "
              f"{r['measured_limit'][:60]}")
    assert len(rows) == 18  # every measured sync=always + single-SLOG step of the four results has a prediction
    key = {id(r): (r["case"], r["candidate"], r["threads"]) for r in rows}
    bounds = [r for r in rows if r["upper_bound"]]
    figures = [r for r in rows if not r["upper_bound"]]
    assert {key[id(r)] for r in bounds} == KNOWN_BOUNDS
    for r in bounds:  # a bound holds, and rests on its evidence: the host's CPU saturated at sync=standard
        assert r["upper_bound"] == "host-cpu" and r["std_busy"] >= A.HOST_SATURATED, r
        assert r["measured_iops"] <= 1.20 * r["predicted_iops"], r
    assert {key[id(r)] for r in figures if abs(r["error"]) > 0.20} == KNOWN_MISSES
    assert sum(abs(r["error"]) <= 0.20 for r in figures) == 4
    # the capped log swept at every lwb size (run 12) is predicted within the tolerance at every step, where its
    # one 128K calibration point (wide-128k, the misses above) priced the 4K tail lwb at 128K's latency
    swept = [r for r in figures if r["case"] == "wide-swept"]
    assert len(swept) == 3 and all(abs(r["error"]) <= 0.20 and r["binding"] == "log-bandwidth-bound" for r in swept)
    # where the measured analysis names the pool (sync=standard as fast as the SLOG), so does the prediction
    for r in rows:
        if r["measured_limit"].startswith("the pool"):
            assert r["binding"] == "pool-bound", r


def test_an_o_dsync_load_has_no_zil_free_ceiling_and_its_figures_are_the_log_s_alone():
    """nfs-sync-knfsd (tests/fixtures/scenario, a lab run): every write is O_DSYNC, so its sync=standard steps
    went through the ZIL on the data disks — no ZIL-free ceiling, not a cap on the log's figure (it was, and
    the NVDIMM was predicted below its own measured figure). They count as figures without a log vdev."""
    path = fixture_path("scenario", "nfs-sync-knfsd-lab-quick.json")
    result = ScenarioResult.from_dict(read(path), path)
    assert result.scenario["write_sync"] == "dsync"
    data = A.data_from_scenario(result, "nfs")
    assert data.ceiling == []
    always = {s.threads: s.iops for s in result.steps if s.sync == "always" and s.log == "none"}
    assert always and {c.threads: c.iops for c in data.without_slog} == always  # sync=always, no SLOG, as measured
    nv = load_sweep(NVDIMM_SWEEP)
    doc = A.advise([("nv", nv)], scenario_workload(read(path)), A.Tunables(), data)
    for st in doc["candidates"][0]["steps"]:
        # only the log device's limits are in the figure: marked an upper bound, not a prediction
        assert st["limits"]["pool_iops"] is None and st["upper_bound"] == "log-only", st
        assert st["binding"] in ("log-latency-bound", "log-bandwidth-bound")
    # a zvol load without O_DSYNC keeps its sync=standard steps as the ceiling
    assert A.data_from_scenario(ScenarioResult.from_dict(read(ISCSI_4K), ISCSI_4K), "iscsi").ceiling


RUN11 = {k: F(f"run11-{k}.json") for k in ("iscsi-4k-lab-sata-ssd-nvdimm", "iscsi-128k-seqwrite-lab-nvdimm",
                                             "iscsi-4k-randwrite-lio-lab-nvdimm", "nfs-sync-lab-nvdimm")}
RUN11_SATA, RUN11_NVDIMM = (F(f"run11-iscsi-4k-lab.log{i}-{c}.sweep.json") for i, c in enumerate(("sata-ssd", "nvdimm")))


def run11_table():
    """Slowed run 11 (tests/fixtures/advisor/README.md), recorded after the host term was chosen: each result
    with the NVDIMM's sweep from the run's iSCSI 4K guest (4 KiB ... 128 KiB) and that guest's SATA SSD sweep."""
    sata, nv = load_sweep(RUN11_SATA), load_sweep(RUN11_NVDIMM)
    rows = []
    for key, path in RUN11.items():
        result = ScenarioResult.from_dict(read(path), path)
        cands = [(RUN11_SATA, sata), (RUN11_NVDIMM, nv)] if "sata" in key else [(RUN11_NVDIMM, nv)]
        doc = A.advise(cands, scenario_workload(read(path)), A.Tunables(), A.data_from_scenario(result, key))
        rows += [dict(r, case=key) for r in A.verify(typed(doc), result)]
    return rows


RUN13 = {"iscsi-4k": (F("run13-iscsi-4k-lab-sata-ssd-nvdimm.json"), "iscsi-4k-lab"),
         "wide-128k": (F("run13-wide-128k-lab-capped-nvdimm.json"), "wide-128k-lab")}


def run13_table():
    """Run 13 (tests/fixtures/advisor/README.md): the lab unslowed, each result with its own logs' sweeps."""
    rows = []
    for case, (path, stem) in RUN13.items():
        result = ScenarioResult.from_dict(read(path), path)
        sweeps = sorted(glob.glob(F(f"run13-{stem}.log*.sweep.json")))
        doc = A.advise([(p, load_sweep(p)) for p in sweeps], scenario_workload(read(path)), A.Tunables(),
                       A.data_from_scenario(result, case))
        measured = {c["device"]: c["bottleneck"] for c in scenario_words.current(result)["candidates"]}
        rows += [dict(r, case=case, measured_limit=measured.get(r["candidate"], "")) for r in A.verify(typed(doc), result)]
    return rows


def test_an_unslowed_lab_run_is_predicted_within_the_tolerance_where_the_log_sets_the_pace():
    """docs/advisor.md, "Unslowed": the lab with no CPU hog (run 13, not fitted). Every figure the advisor gives
    as a prediction — the steps where the log device sets the pace: the SATA SSD at 4 KiB, the capped log at
    128 KiB swept at every lwb size — is within ±20 % of the measured; every other step is a bound that holds
    (the NVDIMM's, where sync=standard saturated the guest's vCPU), and names the pool where the measured
    analysis does not name the log."""
    rows = run13_table()
    assert len(rows) == 10
    figures = [r for r in rows if not r["upper_bound"]]
    assert {(r["case"], r["class"]) for r in figures} == {("iscsi-4k", "sata-ssd"), ("wide-128k", "sas-ssd")}
    assert len(figures) == 5 and all(abs(r["error"]) <= 0.20 for r in figures), figures
    for r in rows:
        if r["upper_bound"]:
            assert r["upper_bound"] == "host-cpu" and r["binding"] == "pool-bound", r
            assert r["measured_iops"] <= 1.20 * r["predicted_iops"], r
    capped = [r for r in figures if r["case"] == "wide-128k"]
    assert all(r["binding"] == "log-bandwidth-bound" for r in capped) and len(capped) == 3


def test_another_slowed_run_not_fitted():
    """docs/advisor.md, "Another slowed run": what the model gives on a run it was not chosen on. Pinned as
    measured — the SATA SSD's figures miss (its own measurement fell to a third of the first run's), three host
    bounds are passed by ~30 % (a hog's stolen time counted as the guest's busy share), the O_DSYNC NFS load's
    figures are log-only bounds, far above (no ZIL-free figure in the result)."""
    rows = run11_table()
    key = {id(r): (r["case"].split("-lab")[0], r["class"], r["threads"]) for r in rows}
    assert len(rows) == 10
    misses = {key[id(r)] for r in rows if not r["upper_bound"] and abs(r["error"]) > 0.20}
    passed = {key[id(r)] for r in rows if r["upper_bound"] and r["measured_iops"] > 1.20 * r["predicted_iops"]}
    assert misses == {("iscsi-4k", "sata-ssd", 2), ("iscsi-4k", "sata-ssd", 8)}
    assert passed == {("iscsi-128k-seqwrite", "nvdimm", 2), ("iscsi-4k-randwrite-lio", "nvdimm", 2),
                      ("iscsi-4k-randwrite-lio", "nvdimm", 8)}
    nfs = [r for r in rows if r["case"].startswith("nfs")]
    assert len(nfs) == 2 and all(r["upper_bound"] == "log-only" and r["error"] > 1 for r in nfs)
    # the run-to-run spread of the measurement itself, the same shape and step in the two slowed runs
    first = {(r["case"], r["class"], r["threads"]): r["measured_iops"] for r in error_table()}
    again = {(r["class"], r["threads"]): r["measured_iops"] for r in rows if r["case"].startswith("iscsi-4k-lab")}
    assert first[("iscsi-4k", "sata-ssd", 2)] / again[("sata-ssd", 2)] > 2.5  # 232 vs 77 IOPS


# ---------------------------------------------------------------- mirror or not (power-loss evidence)

PC = fixture_path("powercut", "")


def _power_doc(name, target_path, real):
    """A real `slogqual powercut run --emulate` result (tests/fixtures/powercut/SOURCES.md), typed; constructed: its
    target renamed to the candidate's device, and with ``real`` its method made a real cut by the user's
    command (the cycles as recorded)."""
    doc = read(os.path.join(PC, name))
    doc["target"] = {"path": target_path, "kind": "device"}
    if real:
        doc["method"].update(cut="--cut-cmd ipmitool chassis power off", emulation=None, emulation_means=None)
    return PowercutResult.from_dict(doc, name)


def _mirror(doc, i=0):
    c = doc["candidates"][i]
    return c["mirror"], [f for f in c["findings"] if f["kind"] in (
        A.Kind.POWER_LOSS_UNSAFE.value, A.Kind.UNMIRRORED_EXPOSURE.value, A.Kind.NO_POWER_LOSS_EVIDENCE.value)]


def test_mirror_advice_follows_the_power_loss_evidence_not_a_blanket_rule():
    sw = load_sweep(SATA_SWEEP)
    path = sw.target["path"]
    w = A.Workload("iscsi", 4096, 16384, [1, 2, 4], rate_mbps=40.0)
    t = A.Tunables()
    docs = {"lost": _power_doc("powercut-emulate-unsafe.json", path, real=True),
            "kept": _power_doc("powercut-emulate-none.json", path, real=True),
            "emulated": _power_doc("powercut-emulate-none.json", path, real=False)}
    out = {}
    for key, pdoc in list(docs.items()) + [("none", None)]:
        power = A.power_by_candidate([(key, pdoc)], [("sata", sw)]) if pdoc else {}
        out[key] = _mirror(A.advise([("sata", sw)], w, t, NONE, power=power))
    # a device that lost acknowledged writes at a real cut: a mirror of two loses them too — not a SLOG
    m, (f,) = out["lost"]
    assert f["kind"] == "power-loss-unsafe" and f["figures"][0]["lost"] == 48
    assert m["mirror"] == A.MirrorCall("power-loss-unsafe") and advice_words.worded(m)["mirror"].startswith("no")
    # one that kept them: the exposure of an unmirrored log is bounded and figured, the call is the user's
    m, (f,) = out["kept"]
    x = f["figures"][0]
    assert f["kind"] == "unmirrored-exposure" and x["window_s"] == 3 * t.zfs_txg_timeout
    assert x["exposure_bytes"] == round(40.0 * A.MB * x["window_s"])  # the required rate over the window
    assert "zpool import -m" in advice_words.finding_words(advice_words.worded(f))
    # an emulated cut says nothing of the device, and no result is no evidence
    for key in ("emulated", "none"):
        m, (f,) = out[key]
        assert f["kind"] == "no-power-loss-evidence" and advice_words.worded(m)["mirror"].startswith("unknown")
    assert out["emulated"][1][0]["figures"][0]["why"] == A.NoEvidence("emulated")
    assert "emulated" in advice_words.worded(out["emulated"][1][0])["figures"][0]["why"]
    # the unsafe device is a warning of the document, the others are not
    assert any("power-loss-unsafe" in wmsg for wmsg in advice_words.document(A.advise([("sata", sw)], w, t, NONE, power={
        "sata": A.power_by_candidate([("x", docs["lost"])], [("sata", sw)])["sata"]}))["warnings"])


def test_a_power_cut_result_of_another_device_is_refused():
    sw = load_sweep(SATA_SWEEP)
    doc = _power_doc("powercut-emulate-none.json", "/dev/not-a-candidate", real=True)
    with pytest.raises(A.AdviceInputError, match="none of the log candidates"):
        A.power_by_candidate([("pc.json", doc)], [("sata", sw)])
    same = _power_doc("powercut-emulate-none.json", sw.target["path"], real=True)
    with pytest.raises(A.AdviceInputError, match="already"):
        A.power_by_candidate([("a.json", same), ("b.json", same)], [("sata", sw)])


def test_advise_cli_takes_a_powercut_result_and_the_document_round_trips(tmp_path, capsys):
    sw = load_sweep(SATA_SWEEP)
    pc = tmp_path / "pc.json"
    pc.write_text(json.dumps(_power_doc("powercut-emulate-none.json", sw.target["path"], real=True).to_dict()))
    out = tmp_path / "advice.json"
    rc = main(["advise", "--log", SATA_SWEEP, "--protocol", "iscsi", "--bs", "4k", "--threads", "1,2",
               "--rate", "20", "--powercut", str(pc), "-o", str(out)])
    text = capsys.readouterr().out
    assert rc == 0 and "unmirrored-exposure" in text and "mirror: your call" in text
    doc = AdviceResult.load(str(out)).to_dict()
    assert doc == read(str(out)) and doc["candidates"][0]["mirror"]["power_loss"]["source"] == str(pc)
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps(_power_doc("powercut-emulate-none.json", "/dev/elsewhere", real=True).to_dict()))
    assert main(["advise", "--log", SATA_SWEEP, "--protocol", "iscsi", "--bs", "4k", "--threads", "1",
                 "--powercut", str(bad)]) == 2
    assert "none of the log candidates" in capsys.readouterr().err


# ---------------------------------------------------------------- the chart

def test_the_chart_draws_prediction_and_measurement_from_the_same_figures(tmp_path):
    from slogqual.report import advice_plot

    args = ["advise", "--log", SATA_SWEEP, NVDIMM_SWEEP, "--scenario", ISCSI_4K]
    doc = json.loads(_run_json(args))
    advice = AdviceResult.from_dict(doc)
    rows = A.verify(advice, ScenarioResult.load(ISCSI_4K))
    text = advice_plot.script(advice, "x.png", "png", rows)
    for c in doc["candidates"]:  # every predicted step is a data line of its candidate's block
        for s in c["steps"]:
            assert any(line.startswith(f"{s['threads']} {s['iops']:.6g} ") for line in text.splitlines())
    assert text.count(" measured\"") == len({r["candidate"] for r in rows}) > 0
    assert " measured\"" not in advice_plot.script(advice, "x.png", "png")  # no --verify: nothing measured drawn
    png = tmp_path / "advice.png"
    assert main(args + ["--verify", ISCSI_4K, "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_chart_name_without_a_picture_format_is_refused_before_anything_is_written(tmp_path, capsys):
    out, bad = tmp_path / "advice.json", tmp_path / "advice.jpg"
    assert main(["advise", "--log", SATA_SWEEP, "--protocol", "iscsi", "--bs", "4k", "--threads", "1",
                 "-o", str(out), "--plot", str(bad)]) == 2
    assert ".png or .svg" in capsys.readouterr().err and not out.exists() and not bad.exists()


def _run_json(args):
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(args + ["--json"]) == 0
    return buf.getvalue()


# ---------------------------------------------------------------- the tunables: an option, the host's, the default

def test_each_tunable_says_where_it_came_from(capsys):
    from slogqual.tools import zfs_tunables

    host = zfs_tunables.read_host()
    doc = json.loads(_run_json(["advise", "--log", SATA_SWEEP, "--protocol", "iscsi", "--bs", "4k", "--threads", "1",
                                "--zil-maxblocksize", "65536"]))
    t = doc["tunables"]
    assert t["zil_maxblocksize"] == 65536 and t["sources"]["zil_maxblocksize"] == "option"
    for name in ("zfs_immediate_write_sz", "zil_slog_bulk", "zfs_txg_timeout"):
        assert t["sources"][name] == ("default (OpenZFS 2.3)" if not host or name not in host
                                      else f"host {zfs_tunables.where()}")
    assert t["sources"]["logbias"] == "default (OpenZFS 2.3)" and t["logbias"] == "latency"
    d = json.loads(_run_json(["advise", "--log", SATA_SWEEP, "--protocol", "iscsi", "--bs", "4k", "--threads", "1",
                              "--tunables", "defaults"]))
    sources = dict(d["tunables"]["sources"])
    assert sources.pop("zfs_version") == "unknown"  # no --zfs, and defaults read nothing of this host
    assert set(sources.values()) == {"default (OpenZFS 2.3)"}
    assert AdviceResult.from_dict(d).to_dict() == d  # the sources round-trip


@pytest.mark.skipif(os.path.isdir("/sys/module/zfs"), reason="this host has OpenZFS loaded")
def test_tunables_from_a_host_without_zfs_are_refused_in_one_line(capsys):
    assert main(["advise", "--log", SATA_SWEEP, "--protocol", "iscsi", "--bs", "4k", "--threads", "1",
                 "--tunables", "host"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no OpenZFS module parameters" in err[0]


# ---------------------------------------------------------------- sizing against the lab's spill evidence

SPILL_RUNS = [fixture_path("scenario", "wide-128k-lab-capped-nvdimm256m.json"), WIDE, SEQ_128K, ISCSI_4K]


def test_a_log_below_the_needed_size_spilled_in_the_lab_and_one_above_it_did_not():
    """Every single-SLOG step the lab recorded (four runs, 16 steps; the 256 MiB NVDIMM of the run before the
    class grew to 2 GiB among them): the advisor's needed size at the step's own measured rate, against the
    log's capacity and the ZIL's kstats. Below it, more than 1 % of the ZIL's bytes went to the data vdevs
    (`zil_itx_metaslab_normal_bytes`); at or above it, less than 0.1 %."""
    t = A.Tunables()
    seen = {"spilled": 0, "kept": 0}
    for path in SPILL_RUNS:
        doc = read(path)
        sc = doc["scenario"]
        w = A.Workload("iscsi" if sc["kind"] == "zvol" else "nfs", sc["bs"],
                       sc.get("volblocksize") or sc.get("recordsize"), [1])
        shape = A.log_shape(w, t, slog=True)
        for s in doc["steps"]:
            if s["log"] != "single":
                continue
            log = s.get("candidate") or doc["pool"]["log"][0]
            capacity = doc["pool"]["devices"][log]["capacity"]
            w.rate_mbps = s["mbps"] * (1 << 20) / A.MB  # the step's own rate, in the advisor's MB/s
            size = A.sizing(w, t, shape, {"mbps": s["mbps"], "threads": s["threads"]}, capacity)
            z = s["zil"]
            share = z["normal_bytes"] / (z["slog_bytes"] + z["normal_bytes"])
            where = (os.path.basename(path), log, s["threads"], capacity, size["needed_bytes"], round(share, 4))
            if capacity < size["needed_bytes"]:
                assert share > 0.01 and size["finding"]["figures"][0]["spills"], where
                seen["spilled"] += 1
            else:
                assert share < 0.001, where
                seen["kept"] += 1
    assert seen["spilled"] == 2 and seen["kept"] == 14, seen  # both sides of the line are in the evidence


def test_the_kernels_parameters_are_read_as_the_lab_guest_wrote_them(tmp_path):
    """tests/fixtures/zfs_tunables: the parameter files of a real OpenZFS 2.3.2 module (the lab guest)."""
    from slogqual.tools import zfs_tunables

    root = fixture_path("zfs_tunables", "parameters")
    assert zfs_tunables.read_linux(root) == {
        "zfs_immediate_write_sz": 32768, "zil_slog_bulk": 64 << 20, "zil_maxblocksize": 131072,
        "zil_maxcopied": 7680, "zfs_txg_timeout": 5, "zfs_dirty_data_max": 100541644, "zfs_commit_timeout_pct": 10}
    # 2.3.2's values are the model's defaults: a host with this module changes no figure, only the sources
    t = A.Tunables()
    assert all(getattr(t, k) == v for k, v in zfs_tunables.read_linux(root).items() if k != "zfs_dirty_data_max")
    # constructed from it: an older module without zil_maxcopied (2.1) leaves it out, and a file that is not a
    # number is left out too
    older = tmp_path / "parameters"
    older.mkdir()
    for name in ("zfs_immediate_write_sz", "zil_slog_bulk", "zfs_txg_timeout"):
        (older / name).write_text(open(os.path.join(root, name)).read())
    (older / "zil_maxblocksize").write_text("not a number\n")
    assert set(zfs_tunables.read_linux(str(older))) == {"zfs_immediate_write_sz", "zil_slog_bulk", "zfs_txg_timeout"}
    assert zfs_tunables.read_linux(str(tmp_path / "absent")) is None  # no module loaded


def test_inputs_from_the_result_store_give_the_advice_their_files_give(tmp_path, capsys):
    """store:ID names a run in the result store (--store): a sweep, a qualification's sweep, a scenario."""
    from slogqual.store import Store, typed

    db = str(tmp_path / "results.sqlite")
    with Store(db) as st:
        ids = {name: st.record(typed(read(path), path), path) for name, path in
               (("sata", SATA_SWEEP), ("nvdimm", NVDIMM_SWEEP), ("scenario", ISCSI_4K))}
    common = ["--protocol", "iscsi", "--bs", "4k", "--threads", "1,2,4", "--tunables", "defaults", "--json"]
    rc, from_files, _ = advise("--log", SATA_SWEEP, NVDIMM_SWEEP, "--scenario", ISCSI_4K, *common, capsys=capsys)
    assert rc == 0
    rc, from_store, _ = advise("--log", f"store:{ids['sata']}", f"store:{ids['nvdimm']}", "--scenario",
                               f"store:{ids['scenario']}", "--store", db, *common, capsys=capsys)
    assert rc == 0
    files, stored = json.loads(from_files), json.loads(from_store)
    assert [c["sweep"] for c in stored["candidates"]] == [f"store:{ids['sata']} ({db})", f"store:{ids['nvdimm']} ({db})"]
    scenario_label = f"store:{ids['scenario']} ({db})"  # the measured pool figures name where they came from
    for a, b in zip(files["candidates"], stored["candidates"]):
        for key in ("steps", "findings", "size"):
            assert json.dumps(a[key]).replace(ISCSI_4K, scenario_label) == json.dumps(b[key]), key
    # a run the store does not hold: one line, the store's error
    rc, _, err = advise("--log", "store:999", "--store", db, *common, capsys=capsys)
    assert rc == 2 and err.count("\n") == 1 and "no run 999" in err, (rc, err)


IOSTAT = fixture_path("zpool", "iostat-Tu-vpy-1s-stream-pmem-log.txt")  # the lab's log under fio (README there)


def test_the_rate_from_a_recorded_zpool_iostat_history_sizes_by_its_peak_and_wears_by_its_mean(capsys):
    from slogqual.tools import zpool

    reports = zpool.parse_iostat_stream(open(IOSTAT).read())
    rates = zpool.log_write_rates(reports)  # pmem0's write bytes/s in each of the seven 1 s reports
    assert len(rates) == 7 and rates[2:6] == [4044357, 8898187, 7980818, 9023657] and zpool.report_interval_s(reports) == 1.0
    rc, out, err = advise("--log", SATA_SWEEP, "--protocol", "iscsi", "--bs", "4k", "--threads", "1,2",
                          "--tunables", "defaults", "--rate-history", IOSTAT, "--tbw", "600", "--json", capsys=capsys)
    assert rc == 0, err
    doc = json.loads(out)
    size, life = doc["candidates"][0]["size"], doc["candidates"][0]["life"]
    assert size["log_rate_bytes_s"] == max(rates) and size["rate_basis"].startswith("the busiest of 7 intervals of")
    assert size["per_txg_bytes"] == round(max(rates) * 5)  # zfs_txg_timeout's 5 s of the busiest interval
    assert life["bytes_per_day"] == pytest.approx(sum(rates) / len(rates) * 86400, rel=1e-6)  # a day writes the mean
    assert life["rate_basis"].startswith("the mean of 7 intervals")
    assert doc["workload"]["rate_history"]["peak_bytes_s"] == max(rates)
    # a plain --rate leaves the document as before: no rate_history key
    rc, out, _ = advise("--log", SATA_SWEEP, "--protocol", "iscsi", "--bs", "4k", "--threads", "1",
                        "--tunables", "defaults", "--rate", "9", "--json", capsys=capsys)
    assert rc == 0 and "rate_history" not in json.loads(out)["workload"]


def _without_logs(tmp_path):
    """The lab's recording with its log section cut out, as a pool without a SLOG prints its reports (DERIVED
    from the real capture: the 'logs' line and the pmem0 row under it removed from each report)."""
    lines = open(IOSTAT).read().splitlines()
    kept = [ln for ln in lines if not ln.startswith(("logs ", "  pmem0 "))]
    path = tmp_path / "no-slog.txt"
    path.write_text("\n".join(kept) + "\n")
    return str(path)


@pytest.mark.parametrize("history,extra,needle", [
    ("no-slog", [], "no log vdev in any of its 7 reports"),
    (None, ["--rate", "9"], "--rate or as --rate-history, not both"),
    ("list-Hp.txt", [], "not a zpool iostat -vp recording"),
])
def test_a_rate_history_that_cannot_serve_is_one_line_exit_2(history, extra, needle, capsys, tmp_path):
    path = _without_logs(tmp_path) if history == "no-slog" else fixture_path("zpool", history) if history else IOSTAT
    rc, _, err = advise("--log", SATA_SWEEP, "--protocol", "iscsi", "--bs", "4k", "--threads", "1",
                        "--rate-history", path, *extra, capsys=capsys)
    assert rc == 2 and err.count("\n") == 1 and needle in err, err


def test_without_a_measured_pool_every_figure_is_a_bound_and_the_first_line_says_so(capsys):
    """Issue #37: on the --data path (the data devices' sweeps) the advice has no figure of the pool or of the
    host — it ran 3-4x above what the pool measured where the host set the pace — so every figure is printed
    and stored as an upper bound with what bounds it, and the advice says so in its first line; with a
    measured pool (--scenario) the line is not there and the log-bound steps are predictions."""
    rc, out, err = advise("--log", SATA_SWEEP, "--data", CLASS_SWEEPS["hdd"], CLASS_SWEEPS["hdd"], "--layout", "stripe",
                          "--disks", "2", "--protocol", "iscsi", "--bs", "4k", "--threads", "1,4,16", "--tunables",
                          "defaults", "--json", capsys=capsys)
    assert rc == 0, err
    doc = json.loads(out)
    steps = [s for c in doc["candidates"] for s in c["steps"]]
    # these hdd sweeps stop at 4 KiB: no bandwidth, so no data-side figure at all ("log-only"); with one, the
    # pool's figure is their bandwidth over the bytes per write ("data-sweeps") — a bound either way
    assert steps and all(s["upper_bound"] in ("data-sweeps", "log-only") for s in steps), \
        [(s["threads"], s["upper_bound"]) for s in steps]
    wide = A.data_from_sweeps([("hdd", load_sweep(F("run13-wide-128k-lab.log0-capped-ssd.sweep.json")))], "stripe", 4,
                              A.Workload("iscsi", 131072, 131072, [2, 8]), A.Tunables())
    cand = A.advise([("sata", load_sweep(SATA_SWEEP))], A.Workload("iscsi", 131072, 131072, [2, 8]), A.Tunables(),
                    wide)["candidates"][0]
    assert all(s["upper_bound"] == "data-sweeps" for s in cand["steps"]), cand["steps"]
    rc, text, err = advise("--log", SATA_SWEEP, "--data", CLASS_SWEEPS["hdd"], CLASS_SWEEPS["hdd"], "--layout",
                           "stripe", "--disks", "2", "--protocol", "iscsi", "--bs", "4k", "--threads", "1,4,16",
                           "--tunables", "defaults", capsys=capsys)
    assert rc == 0 and text.splitlines()[0].startswith("no host figure: ") and "≤" in text
    rc, text, err = advise("--log", SATA_SWEEP, "--scenario", ISCSI_4K, "--tunables", "defaults", capsys=capsys)
    assert rc == 0 and not text.startswith("no host figure") and text.splitlines()[0].startswith("OpenZFS")
    assert text.splitlines()[1].startswith("workload: ")
