"""Judging criteria, verdicts and JUnit XML, on documents built in the test (the baseline rule is
slogqual/analysis/compare.py, tested in tests/test_compare.py)."""

import dataclasses
import xml.etree.ElementTree as ET

from slogqual.qualify import judge
from slogqual.qualify import profile as P
from slogqual.report import junit
from slogqual.results import LatencyStats, SweepPoint, SweepResult


def sweep(points, mode="flush", basis="completion"):
    r = SweepResult(target={"path": "x", "kind": "file", "size": 1 << 30}, params={"mode": mode, "sizes": []},
                    environment={})
    for size, mean, p99, mbps in points:
        r.add_point(SweepPoint(size=size, ios=1000, lat_us=LatencyStats(mean=mean, p99=p99), iops=1e6 / mean,
                               mbps=mbps, lat_basis=basis))
    return r


def crit(text):
    return P.parse_check(text, ["iscsi-4k-randwrite"])


def test_sweep_criteria_pass_fail_and_not_evaluated():
    s = sweep([(4096, 40.0, 90.0, 97.6), (131072, 120.0, 300.0, 1041.0)])
    j = judge.judge_sweep(crit("lat_us.p99 @ 4k <= 100"), s)
    assert j.result == judge.PASS and j.measured == 90.0 and "90 µs" in j.message()
    j = judge.judge_sweep(crit("mbps @ 128k >= 1190"), s)
    assert j.result == judge.FAIL and j.measured == 1041.0
    assert "measured 1,041 MiB/s, misses threshold >= 1,190 MiB/s" in j.message()
    j = judge.judge_sweep(crit("mbps @ 1m >= 1190"), s)
    assert j.result == judge.NOT_EVALUATED and j.measured is None and "no 1M point" in j.detail
    j = judge.judge_sweep(crit("lat_us.p99 @ 4k <= 100"), None)
    assert j.result == judge.NOT_EVALUATED


def test_flush_mode_percentile_says_it_is_an_upper_bound():
    s = sweep([(4096, 40.0, 120.0, 97.6)], basis="write+flush")
    j = judge.judge_sweep(crit("lat_us.p99 @ 4k <= 100"), s)
    assert j.result == judge.FAIL and "upper bound" in j.detail


def test_pair_engine_points_are_exact_and_a_mean_inside_its_interval_is_too_close_to_call():
    s = sweep([(4096, 98.0, 99.0, 40.0)], basis="pair")
    p = s.point(4096)
    p.lat_us.p9999 = 180.0
    p.mean_ci95_us = {"lo": 95.0, "hi": 101.0, "half_width": 3.0}
    j = judge.judge_sweep(crit("lat_us.p99 @ 4k <= 100"), s)
    assert j.result == judge.PASS and "exact" in j.detail and "bound" not in j.detail
    j = judge.judge_sweep(crit("lat_us.p99.99 @ 4k <= 150"), s)
    assert j.result == judge.FAIL and j.measured == 180.0
    j = judge.judge_sweep(crit("lat_us.mean @ 4k <= 100"), s)
    assert j.result == judge.PASS and "95.0–101.0" in j.detail and "too close to call" in j.detail
    j = judge.judge_sweep(crit("lat_us.mean @ 4k <= 120"), s)
    assert j.result == judge.PASS and "too close" not in j.detail
    # a fio point has no p90: not evaluated, never a made-up value
    j = judge.judge_sweep(crit("lat_us.p90 @ 4k <= 100"), sweep([(4096, 40.0, 90.0, 97.6)], basis="write+flush"))
    assert j.result == judge.NOT_EVALUATED


def test_power_loss_criterion_needs_the_measured_verdict():
    from slogqual.report import powerloss
    from slogqual.results.powercut import CycleResult, PowercutResult
    # an enterprise SATA SSD: write cache on, 30 µs flush; PLP or an ignored flush cannot be told apart
    rec = {"class": "sata-ssd", "transport": "sata",
           "write_cache": {"verdict": "volatile-cache-enabled", "reason": "WCE on"}}
    sweep = {"params": {"mode": "flush"}, "points": [{"size": 4096, "ios": 5000, "flush_lat_us": {"mean": 30.0},
                                                       "write_lat_us": {"mean": 40.0}}]}
    inferred = powerloss.with_evidence(rec, sweep=sweep)
    j = judge.judge_device(crit("power_loss == protected"), inferred)
    assert j.result == judge.FAIL and j.measured == "protected-or-flush-ignored" and "slogqual powercut" in j.detail
    # CONSTRUCTED: two real cuts of 32 acknowledged records each, none lost
    cycles = [CycleResult(cycle=n, acknowledged=32, intact=32, torn=0, stale=0, missing=0) for n in (1, 2)]
    powercut = PowercutResult(run_id="ab", target={"path": "/dev/sdz"}, cycles=cycles, expected_cycles=2,
                              method={"cut": "--cut-cmd ipmitool chassis power cycle"}, status="complete",
                              verdict="pass")
    measured = powerloss.with_evidence(rec, sweep=sweep, powercut=powercut)
    j = judge.judge_device(crit("power_loss == protected-measured"), measured)
    assert j.result == judge.PASS and "[measured]" in j.detail
    says = [e["says"] for e in measured["power_loss"]["evidence"] if e["name"] == "power-cut test"]
    assert says == ["PASS: 2 cycle(s), 64 acknowledged records, 0 lost (torn 0, stale 0, missing 0); "
                    "cut: --cut-cmd ipmitool chassis power cycle; run ab"]
    lost = powerloss.with_evidence(rec, sweep=sweep, powercut=dataclasses.replace(powercut, verdict="fail"))
    assert judge.judge_device(crit("power_loss == protected"), lost).measured == "flushes-not-honoured"
    assert judge.judge_device(crit("power_loss == protected"), rec).result == judge.NOT_EVALUATED  # no verdict yet


def test_device_criteria_use_the_record_verdicts():
    rec = {"class": "nvme", "write_cache": {"verdict": "no-volatile-cache", "reason": "vwc 0"},
           "link": {"verdict": "below-capability", "reason": "x2 of x4"}, "controller_link": None}
    assert judge.judge_device(crit("write_cache == no-volatile-cache"), rec).result == judge.PASS
    j = judge.judge_device(crit("link == full"), rec)
    assert j.result == judge.FAIL and j.measured == "below-capability" and j.detail == "x2 of x4"
    assert judge.judge_device(crit("class in nvme, optane"), rec).result == judge.PASS
    assert judge.judge_device(crit("controller_link != below-capability"), rec).result == judge.PASS
    rec["write_cache"] = {"verdict": "unknown", "reason": "no tool"}
    assert judge.judge_device(crit("write_cache == no-volatile-cache"), rec).result == judge.FAIL
    assert judge.judge_device(crit("link == full"), None).result == judge.NOT_EVALUATED


def test_scenario_criteria_never_invent_a_value():
    c = crit("slog_benefit @ iscsi-4k-randwrite >= 2")
    j = judge.judge_scenario(c, {})
    assert j.result == judge.NOT_EVALUATED and j.measured is None and "--scenario-result" in j.detail
    j = judge.judge_scenario(c, {"iscsi-4k-randwrite": judge.ScenarioEvidence(reason="the lab is not available: x")})
    assert j.result == judge.NOT_EVALUATED and j.detail == "the lab is not available: x"
    # a real lab result (tests/fixtures/qualify) whose SLOG steps are taken out: today's analysis of
    # what is left has no benefit to judge, whatever the stored analysis says
    from conftest import fixture_path, load
    from slogqual.results.scenario import ScenarioResult
    full = load(fixture_path("qualify", "scenario-iscsi-4k-randwrite-lab-quick.json"))
    doc = dict(full, steps=[s for s in full["steps"] if s["log"] == "none"],
               analysis=dict(full["analysis"], slog_benefit_at_peak=3.4))
    j = judge.judge_scenario(c, {"iscsi-4k-randwrite": judge.ScenarioEvidence(ScenarioResult.from_dict(doc))})
    assert j.result == judge.NOT_EVALUATED and j.measured is None
    assert "No sync=always configuration with a SLOG was measured" in j.detail
    failed = dict(full, status="failed", error="zpool create failed: no ZFS module", analysis=None)
    j = judge.judge_scenario(c, {"iscsi-4k-randwrite": judge.ScenarioEvidence(ScenarioResult.from_dict(failed))})
    assert j.result == judge.NOT_EVALUATED and "status failed: zpool create failed" in j.detail
    j = judge.judge_scenario(c, {"iscsi-4k-randwrite": judge.ScenarioEvidence(ScenarioResult.from_dict(full),
                                                                               source="file s.json")})
    assert j.measured == full["analysis"]["slog_benefit_at_peak"] and "quick run" in j.detail
    assert j.result == (judge.PASS if j.measured >= 2 else judge.FAIL)


def test_steady_state_criterion():
    c = crit("steady_state == reached")
    from slogqual.results.qualification import SteadyStateRecord as Steady
    assert judge.judge_steady(c, Steady(checked=True, reached=True, label="reached (round 5)")).result == judge.PASS
    assert judge.judge_steady(c, Steady(checked=True, reached=False, label="NOT")).result == judge.FAIL
    assert judge.judge_steady(c, Steady(checked=False)).result == judge.NOT_EVALUATED
    assert judge.judge_steady(c, None).result == judge.NOT_EVALUATED


def test_verdict_needs_every_criterion_to_pass():
    s = sweep([(4096, 40.0, 90.0, 97.6)])
    ok = judge.judge_sweep(crit("lat_us.p99 @ 4k <= 100"), s)
    bad = judge.judge_sweep(crit("lat_us.mean @ 4k <= 10"), s)
    ne = judge.judge_scenario(crit("slog_benefit @ iscsi-4k-randwrite >= 2"), {})
    assert judge.verdict_of([ok]) == judge.VERDICT_PASS
    assert judge.verdict_of([ok, ne]) == judge.VERDICT_INCOMPLETE
    assert judge.verdict_of([ok, ne, bad]) == judge.VERDICT_FAIL
    assert judge.counts([ok, ne, bad]).to_dict() == {"pass": 1, "fail": 1, "not-evaluated": 1}


def _doc(target, verdict, results, error=None, reached=True):
    """A qualification as qualify makes it (typed), with only what JUnit shows."""
    from slogqual.results.qualification import (CriterionResult, Identity, ProfileRecord, QualificationResult,
                                                SteadyStateRecord, SweepReference)
    crits = [CriterionResult(check=f"lat_us.mean @ 4k <= {i}", name=None, result=r, measured_text="5 µs",
                             threshold_text=f"<= {i} µs", message=f"m{i}", detail="d", why="w")
             for i, r in enumerate(results)]
    return QualificationResult(target=target, name=target.strip("/").replace("/", "_"), verdict=verdict, error=error,
                               exit_code=0, identity=Identity(model="M", serial="S"), profile=ProfileRecord(name="p"),
                               criteria=crits, sweep=SweepReference(), scenarios=[],
                               steady_state=SteadyStateRecord(checked=True, reached=reached,
                                                              label="reached (round 5)" if reached
                                                              else "NOT reached in 6 rounds"),
                               warnings=[], started="2026-11-22T00:00:00+00:00")


def test_junit_one_suite_per_device_one_case_per_criterion(tmp_path):
    docs = [_doc("/dev/a", "pass", ["pass", "pass"]),
            _doc("/dev/b", "fail", ["pass", "fail", "not-evaluated"], reached=False),
            _doc("/dev/c", "refused", ["not-evaluated", "not-evaluated"], error="refusing /dev/c: mounted")]
    path = tmp_path / "j.xml"
    junit.write(str(path), docs)
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("7", "1", "2", "1")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["/dev/a (M S)", "/dev/b (M S)", "/dev/c (M S)"]
    assert [len(s.findall("testcase")) for s in suites] == [2, 3, 2]
    failure = suites[1].findall("testcase")[1].find("failure")
    assert failure.get("message") == "measured 5 µs, threshold <= 1 µs"
    props = {p.get("name"): p.get("value") for p in suites[1].find("properties")}
    assert props["verdict"] == "fail" and props["steady_state_reached"] == "false"
    assert "NOT reached" in props["steady_state"]
    assert suites[2].findall("testcase")[0].find("error").get("message") == "refusing /dev/c: mounted"
    assert suites[1].findall("testcase")[2].find("skipped") is not None
