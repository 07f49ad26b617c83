"""Model 2 of the advisor (issue #37): on a log whose cache flush stops its queue (ATA), one ZIL's small records
go in as many a commit as the commit timeout gathers (analysis.advisor._timeout_batch, zil.c's
zfs_commit_timeout_pct). The relations the derivation gives, and the recorded lab pools it was made from
(tests/fixtures/advisor/check: model 2 was made after looking at their HDD steps, so these are fitting evidence,
not a test of it — docs/advisor.md has the unfitted draw)."""

import json
import math
import os

import pytest

from conftest import ROOT
from slogqual.analysis import advisor
from slogqual.results import load_sweep
from slogqual.results.host import HostProbeResult

CHECK = os.path.join(ROOT, "tests", "fixtures", "advisor", "check")
HDD_ISCSI = sorted(os.path.join(CHECK, d, "lab", "hdd-iscsi-4k") for d in os.listdir(CHECK)
                   if os.path.isdir(os.path.join(CHECK, d, "lab", "hdd-iscsi-4k")))


def _inputs(d):
    sweep = load_sweep(os.path.join(d, "log.sweep.json"))
    with open(os.path.join(d, "host.json")) as fh:
        host = HostProbeResult.from_dict(json.load(fh))
    w = advisor.Workload("iscsi", 4096, 16384, [1, 4, 16], zils=1)
    return sweep, host, w, advisor.log_shape(w, advisor.Tunables(), slog=True)


def test_the_batch_grows_with_the_writers_the_timeout_and_a_cheaper_write_and_never_passes_the_writers():
    sweep, _, _, shape = _inputs(HDD_ISCSI[0])
    t = advisor.Tunables()
    b = {n: advisor._timeout_batch(sweep, shape, t, n, 800.0) for n in (2, 4, 16, 64)}
    assert all(1.0 < b[n] <= n for n in b) and b[2] < b[4] < b[16] < b[64], b
    longer = advisor.Tunables(zfs_commit_timeout_pct=40)
    assert advisor._timeout_batch(sweep, shape, longer, 16, 800.0) > b[16]
    assert advisor._timeout_batch(sweep, shape, t, 16, 400.0) > b[16]  # half the CPU a write: more join
    # a timeout of 0 is the kernel's 1 % (MAX(pct, 1)): a few records still
    assert 1.0 < advisor._timeout_batch(sweep, shape, advisor.Tunables(zfs_commit_timeout_pct=0), 16, 800.0) < b[16]


def test_the_batch_rests_on_the_sweeps_write_flush_at_the_commits_own_lwb():
    """The batch is the fixed point: the timeout's formula at the device time of the lwb that batch fills."""
    sweep, _, _, shape = _inputs(HDD_ISCSI[0])
    t = advisor.Tunables()
    b = advisor._timeout_batch(sweep, shape, t, 16, 800.0)
    writes = advisor.lwb_writes(int(-(-b * shape.bytes_per_io // 1)), t)
    device_us = max(advisor.sweep_at(sweep.points, x).mean_us for x in writes)
    pct = t.zfs_commit_timeout_pct / 100.0
    assert b == pytest.approx(min(16.0, (1.0 + math.sqrt(1.0 + 4.0 * pct * 16 * device_us / 800.0)) / 2.0), abs=2e-3)
    assert 1.0 < b < 16.0


# recorded draws whose 16-writer batch is off the pool's records per log write by more than 20 %, each by name with
# what it measured (never absorbed into a wider tolerance): draws 28045 and 7470 (unfitted, 2026-12-01) put 5.22 and
# 5.88 records in a log write where the timeout's batch is 6.61 and 7.16 (+27, +22 %); the other test draws after
# model 2 within -12 … +16 %. Their figures at 16 writers held all the same (log-pass-bound: model 5 measures it)
BATCH_OFF = {"test-28045": 0.27, "test-7470": 0.22}


@pytest.mark.parametrize("d", HDD_ISCSI, ids=lambda d: d.split(os.sep)[-3])
def test_the_advice_for_an_ata_log_takes_its_batch_from_the_timeout_and_predicts_not_bounds(d):
    """On every recorded HDD log under the iSCSI-like load: at 4 and 16 writers the batch is the timeout's, the
    figure a prediction (no longer the all-the-writers upper end), the log's latency its limit unless the host
    binds; at 16 writers the batch within 20 % of the records per log write the pool measured (4.8-6.7), but
    where BATCH_OFF names the draw and how far off it was."""
    sweep, host, w, _ = _inputs(d)
    data = advisor.DataSide("none", advisor.DataOrigin("none"))
    pred = advisor.predict_candidate("hdd", sweep, w, advisor.Tunables(), data, host=host)
    steps = {s["threads"]: s for s in pred["steps"]}
    assert steps[1]["batch_basis"] == "one-writer"
    with open(os.path.join(d, "run.json")) as fh:
        run = {s["threads"]: s for s in json.load(fh)["steps"]}
    for n in (4, 16):
        s = steps[n]
        assert s["batch_basis"] == "commit-timeout" and 1.0 < s["batch"] < n, s
        assert s["upper_bound"] in (None, "log-only"), s
    measured = run[16]["iops"] / run[16]["log_write_ops_s"]
    off = abs(steps[16]["batch"] / measured - 1)
    named = BATCH_OFF.get(d.split(os.sep)[-3])
    assert off <= 0.20 if named is None else abs(off - named) < 0.005, (steps[16]["batch"], measured, off)


def test_a_flush_that_queues_several_zils_and_large_records_keep_the_upper_end():
    sweep, host, _, _ = _inputs(HDD_ISCSI[0])
    t = advisor.Tunables()
    data = advisor.DataSide("none", advisor.DataOrigin("none"))
    two = advisor.Workload("iscsi", 4096, 16384, [16], zils=2)  # several ZILs on one ATA log: not measured
    (s,) = advisor.predict_candidate("hdd", sweep, two, t, data, host=host)["steps"]
    assert s["batch_basis"] == "all-the-writers" and s["batch"] == 8
    big = advisor.Workload("nfs", 65536, 131072, [16], zils=1)  # need-copy records fill their block first
    (s,) = advisor.predict_candidate("hdd", sweep, big, t, data, host=host)["steps"]
    assert s["batch_basis"] == "commit-timeout-full" and s["upper_bound"] in ("log-concurrency", "host-ceiling", "log-only")


def test_the_timeout_is_an_option_a_host_value_or_the_default_and_the_document_says_which(tmp_path):
    """--zfs-commit-timeout-pct wins over the host's and the default (10); a longer timeout gathers more records
    a commit on an ATA log at 16 writers, so the advice rises; the document records the value and its source."""
    import subprocess
    import sys

    d = HDD_ISCSI[0]
    base = [sys.executable, "-m", "slogqual", "advise", "--log", os.path.join(d, "log.sweep.json"), "--protocol",
            "iscsi", "--bs", "4k", "--threads", "16", "--host", os.path.join(d, "host.json"), "--tunables", "defaults",
            "--json"]
    docs = {}
    for pct in (None, "10", "30"):
        p = subprocess.run(base + (["--zfs-commit-timeout-pct", pct] if pct else []), capture_output=True, text=True,
                           cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        docs[pct] = json.loads(p.stdout)
    iops = {k: v["candidates"][0]["steps"][0]["iops"] for k, v in docs.items()}
    assert iops[None] == iops["10"] < iops["30"], iops
    assert docs[None]["tunables"]["zfs_commit_timeout_pct"] == 10
    assert docs[None]["tunables"]["sources"]["zfs_commit_timeout_pct"].startswith("default")
    assert docs["30"]["tunables"]["zfs_commit_timeout_pct"] == 30
    assert docs["30"]["tunables"]["sources"]["zfs_commit_timeout_pct"] == "option"
    assert docs[None]["model_version"] == advisor.MODEL_VERSION >= 2
