"""The log candidates' own sweeps beside a scenario: sizes, matching sweep files to --log devices,
measuring them with real fio, and the verdict that weighs the log vdev's bandwidth against them."""

import json
import os

import pytest

from conftest import fixture_path, need, slogqual
from slogqual.analysis.scaling import Curve, LogEvidence, Step, SweepFigure, log_evidence, sweep_at, verdict
from slogqual.errors import UsageError
from slogqual.pool import log_sweeps
from slogqual.report.scenario import current as analyse
from slogqual.analysis.findings import Kind
from slogqual.report import wording
from slogqual.progress import Progress
from slogqual.results.scenario import ScenarioResult

KiB = 1024
SCENARIO_FIX = fixture_path("scenario", "iscsi-4k-randwrite-lab-quick-2candidates.json")


def test_sizes_cover_the_load_and_the_zil_blocks():
    assert log_sweeps.sizes_for(4 * KiB) == [4 * KiB << i for i in range(6)]  # 4K .. 128K
    assert log_sweeps.sizes_for(512) == [512 << i for i in range(9)]  # 512 .. 128K
    assert log_sweeps.sizes_for(1 << 20)[-1] == 1 << 20 and log_sweeps.sizes_for(1 << 20)[0] == 4 * KiB
    assert log_sweeps.sizes_for(12 * KiB)[:2] == [4 * KiB, 8 * KiB]


def test_sweep_at_interpolates_log_log_between_swept_sizes():
    pts = [SweepFigure(4 * KiB, 1.0, 4000), SweepFigure(16 * KiB, 4.0, 4000), SweepFigure(128 * KiB, 20.0, 6400)]
    mid = sweep_at(pts, 8 * KiB)  # halfway between 4K and 16K on a log scale
    assert mid.size == 8 * KiB and mid.mbps == pytest.approx(2.0) and mid.lat_mean_us == pytest.approx(4000)
    assert sweep_at(pts, 16 * KiB) == pts[1]
    assert sweep_at(pts, 1024) == pts[0] and sweep_at(pts, 1 << 20) == pts[2]  # outside: the nearest end
    assert sweep_at(pts, None) is None and sweep_at([], 4096) is None


def _slog_curve(log_bytes_s, log_ops_s):
    c = Curve("sync=always + SLOG", "always", "single", candidate="/dev/x")
    c.steps = [Step(threads=2, iops=400, mbps=1.6, log_write_bytes_s=log_bytes_s / 2, log_write_ops_s=log_ops_s / 2),
               Step(threads=8, iops=900, mbps=3.5, log_write_bytes_s=log_bytes_s, log_write_ops_s=log_ops_s)]
    return c


def test_log_evidence_uses_the_size_the_log_vdev_saw():
    sweep = [SweepFigure(4 * KiB, 0.9, 4400), SweepFigure(16 * KiB, 3.4, 4600), SweepFigure(128 * KiB, 18.0, 7000)]
    ev = log_evidence(_slog_curve(4_902_888, 328), "iops", sweep, 4 * KiB)
    assert ev.sweep.size == round(4_902_888 / 328) and ev.observed_size == pytest.approx(4_902_888 / 328)
    assert 0.9 * 3.4 < ev.sweep.mbps < 3.4  # just under 16 KiB
    assert ev.observed_mbps == pytest.approx(4_902_888 / 2 ** 20)
    # no iostat ops: fall back to the load's IO size
    assert log_evidence(_slog_curve(0, 0), "iops", sweep, 4 * KiB).sweep.size == 4 * KiB


def test_verdict_names_log_bandwidth_from_the_log_vdev():
    slog = _slog_curve(4_902_888, 328)
    noslog = Curve("sync=always, no SLOG", "always", "none", [Step(2, 188, 0.7), Step(8, 468, 1.8)])
    # constructed: a sync=standard still scaling, so the pool/host is not at its limit
    rising = Curve("sync=standard", "standard", "none", [Step(2, 1353, 5.3), Step(8, 4000, 15.6)])
    at = LogEvidence(SweepFigure(16 * KiB, 3.4, 4600), observed_mbps=4.68, observed_size=14948)
    v = verdict([rising, slog, noslog], "iops", log=at)
    x = v.limit.figures
    assert v.limit.kind is Kind.LOG_BANDWIDTH and x["size_basis"] == "log-vdev" and not x["interpolated"]
    assert (x["size"], x["observed_mbps"], x["sweep_mbps"], x["observed_size"]) == (16 * KiB, 4.68, 3.4, 14948)
    assert wording.limit(v.findings) == ("log device bandwidth: 4.7 MiB/s written to the log vdev in 15 KiB writes, at or above "
                            "its QD1 sync-write sweep at 16 KiB (3.4 MiB/s)")
    # the lab's sync=standard, flat from 2 threads, the SLOG curve still rising on that plateau: the log
    # device is not named the bottleneck, its bandwidth is said beside the pool/host ceiling
    std = Curve("sync=standard", "standard", "none", [Step(2, 1353, 5.3), Step(8, 1227, 4.8)])
    v = verdict([std, slog, noslog], "iops", log=at)
    assert v.limit.kind is Kind.RISING_ON_PLATEAU and v.limit.figures["log_too"]["observed_mbps"] == 4.68
    assert wording.limit(v.findings).startswith("not reached: sync=always + SLOG still grew at its last thread step "
                                                "(8 threads, 900 IOPS); sync=standard, which writes no ZIL, stopped "
                                                "scaling at 2 threads")
    assert wording.limit(v.findings).endswith("the log vdev wrote 4.7 MiB/s there, at or above its QD1 sync-write sweep at 16 KiB "
                                 "(3.4 MiB/s), so the log device is at its limit too")
    # a log vdev far below its sweep is not named by bandwidth
    below = LogEvidence(SweepFigure(16 * KiB, 30.0, 460), observed_mbps=4.68, observed_size=14948)
    assert verdict([rising, slog, noslog], "iops", log=below).limit.kind is not Kind.LOG_BANDWIDTH
    assert verdict([std, slog, noslog], "iops", log=below).limit.figures["log_too"] is None
    # when the SLOG keeps up with sync=standard, the pool is the limit whatever the log's sweep says
    fast = Curve("sync=always + SLOG", "always", "single", [Step(8, 1300, 5.1, log_write_bytes_s=4.9e6,
                                                                  log_write_ops_s=328)])
    assert verdict([std, fast, noslog], "iops", log=at).limit.kind is Kind.POOL_BOUND


def _sweep_doc(path, target, points):
    doc = {"schema": "slogqual.sweep/1", "source": "slogqual", "status": "complete", "target": {"path": target},
           "params": {"mode": "flush", "runtime_s": 1.0}, "environment": {}, "device": {"model": "X"},
           "points": [{"size": s, "ios": 100, "iops": mb * 2 ** 20 / s, "mbps": mb,
                       "lat_us": {"mean": s / (mb * 2 ** 20) * 1e6, "p99": None}} for s, mb in points]}
    with open(path, "w") as fh:
        json.dump(doc, fh)
    return str(path)


def test_from_files_matches_by_device_and_refuses_strangers(tmp_path):
    dev = tmp_path / "disk.img"
    dev.write_bytes(b"")
    link = tmp_path / "by-id-link"
    link.symlink_to(dev)
    ok = _sweep_doc(tmp_path / "a.json", str(link), [(4096, 1.0)])
    got = log_sweeps.from_files([ok], [str(dev)])
    assert list(got) == [str(dev)] and got[str(dev)]["points"][0]["mbps"] == 1.0
    assert got[str(dev)]["source"] == os.path.abspath(ok)
    other = _sweep_doc(tmp_path / "b.json", "/dev/not-a-candidate", [(4096, 1.0)])
    with pytest.raises(UsageError, match="not one of the --log devices"):
        log_sweeps.from_files([other], [str(dev)])
    with pytest.raises(UsageError, match="a second sweep"):
        log_sweeps.from_files([ok, ok], [str(dev)])
    empty = _sweep_doc(tmp_path / "c.json", str(dev), [])
    with pytest.raises(UsageError, match="no measured sizes"):
        log_sweeps.from_files([empty], [str(dev)])


def test_analysis_with_the_candidates_sweeps():
    """The recorded two-candidate lab run, with sweep summaries for its log devices: each candidate's
    verdict reads its own sweep at the size its log vdev was written with."""
    with open(SCENARIO_FIX) as fh:
        doc = json.load(fh)
    doc["log_sweeps"] = {
        "/dev/sdc": {"points": [{"size": 4096, "mbps": 0.9, "lat_mean_us": 4400.0},
                                {"size": 16384, "mbps": 3.4, "lat_mean_us": 4600.0},
                                {"size": 131072, "mbps": 18.0, "lat_mean_us": 6900.0}]},
        "/dev/pmem0": {"points": [{"size": 4096, "mbps": 35.0, "lat_mean_us": 110.0},
                                  {"size": 8192, "mbps": 62.0, "lat_mean_us": 125.0},
                                  {"size": 16384, "mbps": 110.0, "lat_mean_us": 140.0}]},
    }
    a = analyse(ScenarioResult.from_dict(doc))
    by = {c["device"]: c for c in a["candidates"]}
    sata, pmem = by["/dev/sdc"], by["/dev/pmem0"]
    # sdc's peak (8 threads) wrote 4.9 MB/s to the log vdev in ~15 KiB writes; its sweep there ~3.3 MiB/s
    assert sata["log_sweep"]["sweep_size"] == round(4902888 / 328)
    assert sata["log_sweep"]["observed_log_write_size"] == pytest.approx(4902888 / 328, rel=0.01)
    # sync=standard is flat from 2 threads in this run (issue #19): pool/host-bound, never the log device as
    # THE bottleneck; the log vdev at its sweep's bandwidth is said beside it
    assert sata["bottleneck"].startswith("not reached: sync=always + SLOG still grew at its last thread step")
    assert "sync=standard, which writes no ZIL, stopped scaling at 2 threads" in sata["bottleneck"]
    assert "the log vdev wrote 4.7 MiB/s there, at or above its QD1 sync-write sweep" in sata["bottleneck"]
    # the NVDIMM's log vdev ran far below its sweep: not a bandwidth limit
    assert 4096 < pmem["log_sweep"]["sweep_size"] < 16384
    assert "log device bandwidth" not in pmem["bottleneck"] and "at its limit too" not in pmem["bottleneck"]
    # without sweeps the candidates carry none
    doc.pop("log_sweeps")
    assert all(c["log_sweep"] is None for c in analyse(ScenarioResult.from_dict(doc))["candidates"])


@pytest.mark.integration
@need("fio")
def test_measure_sweeps_each_candidate_once(tmp_path):
    """Real fio on a file standing in for a log device: the sweep is written beside the result and
    summarised; a candidate already swept is not measured again (resume)."""
    dev = tmp_path / "log0.img"
    with open(dev, "wb") as fh:
        fh.truncate(64 << 20)
    out = str(tmp_path / "scenario.json")
    got = log_sweeps.measure([str(dev)], 4 * KiB, True, out, Progress(quiet=True), "fio-3.33", None, {})
    entry = got[str(dev)]
    assert entry["source"] == str(tmp_path / "scenario.log0.sweep.json") and os.path.exists(entry["source"])
    assert [p["size"] for p in entry["points"]] == log_sweeps.sizes_for(4 * KiB)
    assert entry["status"] == "complete" and all(p["mbps"] > 0 and p["lat_mean_us"] > 0 for p in entry["points"])
    mtime = os.stat(entry["source"]).st_mtime_ns
    again = log_sweeps.measure([str(dev)], 4 * KiB, True, out, Progress(quiet=True), "fio-3.33", None, got)
    assert again == got and os.stat(entry["source"]).st_mtime_ns == mtime


def test_cli_refuses_log_sweep_with_lab(tmp_path):
    sweep = _sweep_doc(tmp_path / "s.json", "/dev/sdz", [(4096, 1.0)])
    proc = slogqual("scenario", "run", "iscsi-4k-randwrite", "--lab", "--log-sweep", sweep, cwd=tmp_path)
    assert proc.returncode == 2 and "--sweep-logs" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
