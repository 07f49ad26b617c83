"""Scenario files (shipped and broken ones) and the scaling analysis on synthetic curves."""

import pytest

from slogqual.analysis.findings import Kind
from slogqual.analysis.scaling import Curve, Step, knee, ratios, usage_findings, verdict
from slogqual.report import wording
from slogqual.errors import UsageError
from slogqual.pool.scenario import builtin_names, load_scenario, parse_scenario


def test_shipped_scenarios_load():
    assert {"iscsi-4k-randwrite", "iscsi-128k-seqwrite", "nfs-sync"} <= set(builtin_names())
    s = load_scenario("iscsi-4k-randwrite")
    assert (s.kind, s.luns, s.bs, s.rw, s.threads) == ("zvol", 8, 4096, "randwrite", [1, 2, 4, 8, 16, 32])
    assert [(c.sync, c.log) for c in s.configs] == [("standard", "none"), ("always", "single"), ("always", "none"),
                                                    ("always", "stripe"), ("always", "mirror")]
    for name in ("iscsi-4k-randwrite", "iscsi-128k-seqwrite"):  # the talk's two-log shapes (issue #19)
        assert {c.log for c in load_scenario(name).configs} == {"none", "single", "stripe", "mirror"}
    q = s.quick()
    assert q.threads == [1, 4] and q.luns == 2 and q.runtime_s == 5 and q.configs == s.configs
    assert load_scenario("iscsi-128k-seqwrite").luns == 12
    nfs = load_scenario("nfs-sync")
    assert nfs.kind == "dataset" and nfs.write_sync == "dsync" and nfs.recordsize == 128 << 10


GOOD = {"name": "t", "kind": "zvol", "luns": 2, "lun_size": "64M", "rw": "randwrite", "bs": "4k",
        "threads": [1, 2], "runtime": 5, "config": [{"name": "a", "sync": "always", "log": "single"}]}


@pytest.mark.parametrize("change,key", [
    ({"thread": [1]}, "thread"),
    ({"luns": 0}, "luns"),
    ({"bs": "3000"}, "bs"),
    ({"threads": [4, 2]}, "threads"),
    ({"threads": []}, "threads"),
    ({"kind": "lun"}, "kind"),
    ({"recordsize": "128k"}, "recordsize"),
    ({"config": [{"name": "a", "sync": "sometimes"}]}, "config[0].sync"),
    ({"config": [{"name": "a", "logg": "single"}]}, "config[0].logg"),
    ({"config": [{"name": "a"}, {"name": "a"}]}, "config[1].name"),
    ({"config": []}, "config"),
    ({"quick": {"runtime": 0}}, "quick.runtime"),
    ({"runtime": float("inf")}, "runtime"),  # TOML has inf and nan
    ({"ramp": float("nan")}, "ramp"),
    ({"lun_size": "1k"}, "lun_size"),
])
def test_bad_scenarios_name_the_file_and_key(change, key):
    doc = dict(GOOD, **change)
    with pytest.raises(UsageError) as exc:
        parse_scenario(doc, "my.toml")
    msg = str(exc.value)
    assert msg.startswith("my.toml: key '" + key + "'") and "\n" not in msg


def test_missing_key_and_bad_toml(tmp_path):
    doc = dict(GOOD)
    del doc["runtime"]
    with pytest.raises(UsageError, match="key 'runtime' is missing"):
        parse_scenario(doc, "x.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n")
    with pytest.raises(UsageError, match="not valid TOML"):
        load_scenario(str(bad))
    with pytest.raises(UsageError, match="shipped ones are"):
        load_scenario("no-such-scenario")


def curve(name, sync, log, values, metric="iops"):
    steps = [Step(threads=t, iops=v if metric == "iops" else v * 10, mbps=v if metric == "mbps" else v / 100)
             for t, v in values]
    return Curve(name, sync, log, steps)


def test_knee_is_where_doubling_stops_paying():
    steps = curve("c", "always", "single", [(1, 1000), (2, 1900), (4, 3500), (8, 3700), (16, 3750)]).steps
    k = knee(steps, "iops")
    assert (k.threads, k.saturated) == (4, True)
    rising = curve("c", "always", "single", [(1, 100), (2, 200), (4, 400)]).steps
    assert knee(rising, "iops").saturated is False and knee(rising, "iops").threads == 4
    # uneven steps: 1 -> 4 threads is two doublings; 30 % more in total is < 10 % per doubling? no: 14 %
    assert knee(curve("c", "a", "n", [(1, 100), (4, 130)]).steps, "iops").saturated is False
    assert knee(curve("c", "a", "n", [(1, 100), (4, 115)]).steps, "iops").saturated is True


TALK_4K = [  # shaped like the SDC 2019 iSCSI 4 KiB curves: standard high, SAS SSD SLOG knee, no SLOG low
    curve("sync=standard", "standard", "none", [(8, 9000), (16, 17000), (32, 30000), (64, 40000), (128, 42500)]),
    curve("sync=always + SLOG", "always", "single", [(8, 4000), (16, 6500), (32, 7000), (64, 7100), (128, 7150)]),
    curve("sync=always, no SLOG", "always", "none", [(8, 700), (16, 900), (32, 1000), (64, 1000), (128, 1000)]),
]


def test_verdict_slog_helps_but_is_the_bottleneck():
    v = verdict(TALK_4K, "iops", log_sweep_lat_us=95.0, load_bs=4096)
    assert v.benefit_at_peak == pytest.approx(7.15)
    assert v.of_standard_at_peak == pytest.approx(7150 / 42500)
    assert v.effect.kind is Kind.SPEEDUP and v.effect.figures["benefit"] == pytest.approx(7.15)
    assert v.effect.figures["of_standard"] == pytest.approx(7150 / 42500) and v.effect.figures["flat_threads"] is None
    assert v.limit.kind is Kind.LOG_BOUND
    assert (v.limit.figures["threads"], v.limit.figures["sweep_lat_us"], v.limit.figures["size"]) == (16, 95.0, 4096)
    assert [(r.config, r.threads) for r in v.limit.steps] == [("sync=always + SLOG", t) for t in (16, 32, 64, 128)]
    # golden words: the sentence and the bottleneck as the table prints them
    assert wording.effect(v.findings) == ("The SLOG makes sync=always 7.2x faster (7150 vs 1000 IOPS at peak), "
                                          "reaching 17% of sync=standard.")
    assert wording.limit(v.findings) == ("the log device: sync=always + SLOG stops scaling at 16 threads "
                                         "(its QD1 sync write at 4K takes 95 µs)")


def test_verdict_pool_faster_without_slog_and_bandwidth_match():
    curves = [
        curve("sync=standard", "standard", "none", [(12, 1500), (24, 2500), (48, 2750)], "mbps"),
        curve("sync=always + SLOG", "always", "single", [(12, 400), (24, 408), (48, 410)], "mbps"),
        curve("sync=always, no SLOG", "always", "none", [(12, 500), (24, 800), (48, 900)], "mbps"),
    ]
    v = verdict(curves, "mbps", log_sweep_mbps=405.0, load_bs=131072)
    assert v.effect.kind is Kind.FASTER_WITHOUT_SLOG
    assert (v.effect.figures["peak"], v.effect.figures["noslog_peak"]) == (410, 900)
    assert v.limit.kind is Kind.LOG_BANDWIDTH and v.limit.figures["size_basis"] == "load"
    assert (v.limit.figures["observed_mbps"], v.limit.figures["sweep_mbps"]) == (410, 405.0)
    assert wording.limit(v.findings) == "log device bandwidth: 410 MiB/s, matching its sweep at 128K (405 MiB/s)"
    assert wording.effect(v.findings) == ("For this workload the pool is faster with no SLOG: sync=always reaches "
                                          "900 MiB/s without it and 410 MiB/s with it.")


def test_verdict_slog_keeps_up_with_standard():
    curves = [curve("std", "standard", "none", [(1, 100), (2, 200)]),
              curve("nv", "always", "single", [(1, 98), (2, 195)]),
              curve("no", "always", "none", [(1, 20), (2, 30)])]
    v = verdict(curves, "iops")
    assert v.limit.kind is Kind.POOL_BOUND and v.limit.figures["of_standard"] == pytest.approx(0.975)
    assert v.effect.kind is Kind.SPEEDUP and v.effect.figures["benefit"] == pytest.approx(6.5)
    assert wording.limit(v.findings) == "the pool, not the log: the SLOG keeps up with sync=standard"


def test_unused_slog_is_reported_loudly():
    c = curve("sync=always + SLOG", "always", "single", [(1, 100)])
    c.steps[0].slog_bytes, c.steps[0].normal_bytes = 0, 123456
    (f,) = usage_findings(c)
    assert f.kind is Kind.SLOG_UNUSED and f.figures["normal_bytes"] == 123456 and f.figures["threads"] == 1
    assert "received no ZIL bytes" in wording.word(f) and "123456" in wording.word(f)
    ok = curve("sync=always + SLOG", "always", "single", [(1, 100)])
    ok.steps[0].slog_bytes = 4096
    assert usage_findings(ok) == []
    ghost = curve("sync=always, no SLOG", "always", "none", [(1, 100)])
    ghost.steps[0].slog_bytes = 4096
    (f,) = usage_findings(ghost)
    assert f.kind is Kind.LOG_WITHOUT_SLOG and f.figures["slog_bytes"] == 4096 and "without one" in wording.word(f)


def test_ratios_only_at_common_steps():
    a = curve("a", "always", "single", [(1, 100), (2, 300), (4, 400)])
    b = curve("b", "always", "none", [(1, 50), (4, 100)])
    assert ratios(a, b, "iops") == {1: 2.0, 4: 4.0}


def test_knee_remarks_are_details_not_problems():
    v = verdict(TALK_4K, "iops")
    assert v.problems == [] and [(d.kind, d.figures["threads"]) for d in v.details] == \
        [(Kind.SATURATED_AT, 64), (Kind.KNEE, 16)]
    assert v.details[1].figures["saturated"] is True
    assert wording.word(v.details[1]) == "sync=always + SLOG: knee at 16 threads (6500 IOPS)"
    c = curve("sync=always + SLOG", "always", "single", [(1, 100)])
    c.steps[0].slog_bytes, c.steps[0].normal_bytes = 0, 10
    assert [p.kind for p in verdict([c], "iops").problems] == [Kind.SLOG_UNUSED]


def test_slower_candidate_is_named_by_mean_ratio_not_peak():
    from slogqual.analysis.scaling import slower_candidate
    # shaped like a lab run: the NVDIMM is 2.6x faster at 2 threads, both pool-bound at 8
    sata = curve("s", "always", "single", [(2, 424), (8, 920)])
    pmem = curve("s", "always", "single", [(2, 1089), (8, 907)])
    sata.candidate, pmem.candidate = "/dev/sdc", "/dev/pmem0"
    names = {"/dev/sdc": "/dev/sdc (SATA SSD)", "/dev/pmem0": "/dev/pmem0 (NVDIMM)"}
    s = slower_candidate([pmem, sata], names, "iops")
    assert s.kind is Kind.SLOWER_IS_BOTTLENECK and (s.figures["slower"], s.figures["faster"]) == ("/dev/sdc", "/dev/pmem0")
    assert s.figures["factor"] == pytest.approx(1.6, abs=0.05) and (s.figures["threads"], s.figures["values"]) == (2, [424, 1089])
    assert wording.word(s) == ("The slower log device /dev/sdc (SATA SSD) is the bottleneck: sync=always with it reaches "
                               "1/1.6 of the throughput with /dev/pmem0 (NVDIMM) (geometric mean over the thread steps; "
                               "at 2 threads 424 vs 1089 IOPS).")
    # a peak comparison would be a near tie here (920 vs 1089); the order does not depend on list order
    assert slower_candidate([sata, pmem], names, "iops") == s
    a, b = curve("a", "always", "single", [(1, 100)]), curve("b", "always", "single", [(1, 105)])
    a.candidate, b.candidate = "a", "b"
    assert slower_candidate([a, b], {}, "mbps").kind is Kind.ALIKE
    assert slower_candidate([a], {}, "iops") is None


def test_pool_host_bound_when_sync_standard_saturates_too():
    # constructed, shaped like the lab run (no IO counts: the 10 % rule alone)
    curves = [curve("std", "standard", "none", [(4, 1353), (16, 1227)]),
              curve("slog", "always", "single", [(4, 1089), (16, 907)]),
              curve("no", "always", "none", [(4, 188), (16, 468)])]
    v = verdict(curves, "iops")
    x = v.limit.figures
    assert v.limit.kind is Kind.HOST_BOUND and (x["flat_threads"], x["flat_steps"]) == (4, [[4, 1353], [16, 1227]])
    assert (x["config"], x["slog_flat_threads"], x["peak"], x["log_too"]) == ("slog", 4, 1089, None)
    assert x["of_standard"] == pytest.approx(1089 / 1353)
    assert v.effect.kind is Kind.SPEEDUP and v.effect.figures["flat_threads"] == 4
    assert wording.limit(v.findings).startswith("pool/host-bound: sync=standard, which writes no ZIL, stopped "
                                                "scaling at 4 threads (4 threads 1353, 16 threads 1227 IOPS)")


def _with_ios(c, counts):
    for st, n in zip(c.steps, counts):
        st.ios = n
    return c


def test_saturation_needs_every_later_step_flat_beyond_the_counting_error():
    """Constructed curves: the rule of scaling.saturation, case by case."""
    from slogqual.analysis.scaling import saturation
    flat = saturation(curve("s", "standard", "none", [(1, 1000), (2, 1900), (4, 2000), (8, 2050)]).steps, "iops")
    assert flat.threads == 2 and [st.threads for st in flat.steps] == [2, 4, 8]
    # a dip and a rise again is not flat; one step alone shows no trend; a curve still rising is not flat
    assert saturation(curve("s", "standard", "none", [(1, 1000), (2, 1000), (4, 2000)]).steps, "iops") is None
    assert saturation(curve("s", "standard", "none", [(4, 1000)]).steps, "iops") is None
    assert saturation(curve("s", "standard", "none", [(1, 1000), (4, 2000)]).steps, "iops") is None
    # +5 % over one doubling: flat when the IO counts pin it down (±2 %), not when they cannot (±20 %)
    few = _with_ios(curve("s", "standard", "none", [(2, 1000), (4, 1050)]), [200, 210])
    many = _with_ios(curve("s", "standard", "none", [(2, 1000), (4, 1050)]), [20000, 21000])
    assert saturation(few.steps, "iops") is None and saturation(many.steps, "iops").threads == 2


def test_the_log_device_is_still_named_when_sync_standard_keeps_scaling():
    # constructed: sync=standard grows 2.5x from 2 to 8 threads, the SLOG curve is flat from 2
    curves = [_with_ios(curve("std", "standard", "none", [(2, 1000), (8, 2500)]), [5000, 12500]),
              _with_ios(curve("slog", "always", "single", [(2, 900), (8, 910)]), [4500, 4550]),
              curve("no", "always", "none", [(2, 100), (8, 300)])]
    v = verdict(curves, "iops")
    assert v.limit.kind is Kind.LOG_BOUND and v.limit.figures["threads"] == 2 and v.effect.figures["flat_threads"] is None
    assert wording.limit(v.findings) == ("the log device: slog stops scaling at 2 threads (by elimination: "
                                         "sync=standard, which writes no ZIL, still scaled; no sweep of the log was given)")
    # the SLOG stops scaling (at 2) before sync=standard does (at 8), though its peak, by 1 %, is at 8
    curves[0] = curve("std", "standard", "none", [(2, 1000), (8, 2500), (16, 2550)])
    assert verdict(curves, "iops").limit.kind is Kind.LOG_BOUND
    # a SLOG curve still rising where sync=standard is flat: judged at its peak, on the plateau
    rising = [curve("std", "standard", "none", [(2, 1353), (8, 1227)]), curve("slog", "always", "single",
                                                                                [(2, 424), (8, 920)])]
    said = verdict(rising, "iops")
    x = said.limit.figures
    assert said.limit.kind is Kind.RISING_ON_PLATEAU and (x["peak_threads"], x["peak"], x["flat_threads"]) == (8, 920, 2)
    assert said.effect.kind is Kind.NO_COMPARISON
    assert wording.limit(said.findings).startswith("not reached: slog still grew at its last thread step (8 threads, "
                                                   "920 IOPS); sync=standard, which writes no ZIL, stopped scaling at 2")
    # a synchronous load: sync=standard uses the ZIL too and is no ZIL-free ceiling, so no pool/host rule
    curves[0] = curve("std", "standard", "none", [(2, 1500), (8, 1500)])
    told = verdict(curves, "iops", load_is_sync=True).limit
    assert told.kind is Kind.UNATTRIBUTED and not told.figures["zil_free_scaling"]  # nothing rules out pool or host
    assert verdict(curves, "iops", load_is_sync=True, log_sweep_lat_us=300.0).limit.kind is Kind.LOG_BOUND
    assert verdict(curves, "iops").limit.kind is Kind.HOST_BOUND


def test_slower_candidate_is_named_the_bottleneck_only_off_the_plateau():
    from slogqual.analysis.scaling import Flat, slower_candidate
    # constructed: the candidates differ most at 2 threads
    sata = curve("s", "always", "single", [(2, 424), (8, 920)])
    pmem = curve("s", "always", "single", [(2, 1089), (8, 907)])
    sata.candidate, pmem.candidate = "a", "b"
    on = Flat(threads=2, value=1353, steps=curve("x", "standard", "none", [(2, 1353), (8, 1227)]).steps)
    off = Flat(threads=8, value=1400, steps=curve("x", "standard", "none", [(8, 1400), (16, 1410)]).steps)
    said = slower_candidate([pmem, sata], {}, "iops", flat=on)
    assert said.kind is Kind.SLOWER and said.figures["slower"] == "a" and said.figures["flat_threads"] == 2
    assert (said.figures["last"], said.figures["last_values"]) == (8, [920, 907])
    assert wording.word(said).startswith("The log device a is the slower one") and \
        "Not named the bottleneck: pool/host-bound" in wording.word(said)
    assert slower_candidate([pmem, sata], {}, "iops", flat=off).kind is Kind.SLOWER_IS_BOTTLENECK


def test_synchronous_load_has_no_zil_free_ceiling():
    # nfs-sync in the lab: O_DSYNC writes, so sync=standard uses the ZIL as much as sync=always
    curves = [curve("sync=standard", "standard", "none", [(4, 8.2), (16, 16.3)], "mbps"),
              curve("sync=always + SLOG", "always", "single", [(4, 26.6), (16, 24.4)], "mbps"),
              curve("sync=always, no SLOG", "always", "none", [(4, 8.2), (16, 16.3)], "mbps")]
    v = verdict(curves, "mbps", load_is_sync=True)
    assert v.of_standard_at_peak is None and v.effect.figures["of_standard"] is None
    assert v.effect.kind is Kind.SPEEDUP and v.effect.figures["benefit"] == pytest.approx(26.6 / 16.3)
    assert v.limit.kind is not Kind.POOL_BOUND
    assert verdict(curves, "mbps").effect.figures["of_standard"] == pytest.approx(1.63, abs=0.01)  # a ceiling that is none


def test_unknown_zil_counters_are_not_read_as_zero():
    # a kstat without the counters gives null in the document: no verdict on the log's use, and an
    # unknown main-pool figure is not printed as "0 bytes"
    c = curve("sync=always + SLOG", "always", "single", [(1, 100)])
    c.steps[0].slog_bytes, c.steps[0].normal_bytes = None, None
    assert usage_findings(c) == []
    c.steps[0].slog_bytes = 0
    (f,) = usage_findings(c)
    assert f.kind is Kind.SLOG_UNUSED and f.figures["normal_bytes"] is None
    assert "an unknown number of bytes" in wording.word(f) and "(0 bytes" not in wording.word(f)


def test_a_scenario_document_with_null_zil_counters_reads_as_unknown(capsys):
    # what a run writes when the kstat lacks the rows (ZilStats.as_dict gives None): it loads, is
    # analysed without those counters and prints '?' rather than a number or a traceback
    import json

    from conftest import fixture_path
    from slogqual.analysis import scenario as scenario_analysis
    from slogqual.report import scenario as scenario_words
    from slogqual.cli import scenario as scenario_cli
    from slogqual.results.scenario import ScenarioResult
    doc = json.load(open(fixture_path("scenario", "iscsi-4k-randwrite-lab-quick-2candidates.json")))
    for s in doc["steps"]:
        s["zil"] = dict.fromkeys(s["zil"])
        s["zil_slog_share"] = None
    result = ScenarioResult.from_dict(json.loads(json.dumps(doc)))
    a = scenario_words.worded(scenario_analysis.analyse(result))
    assert not any("ZIL bytes" in p for p in a.get("problems", []))
    scenario_cli._print(result, False)
    out = capsys.readouterr().out
    rows = [ln for ln in out.splitlines() if ln.startswith("sync=")]
    assert rows and all(ln.split()[-2:] == ["?", "?"] for ln in rows), out


def test_a_log_too_small_for_the_load_is_reported_where_the_zil_spilled_to_the_pool():
    # constructed: 1 % of the ZIL's bytes to the main pool is a log header or two; more is a log vdev that
    # could not take the blocks the ZIL still held
    c = curve("sync=always + SLOG", "always", "single", [(2, 100), (32, 300)])
    c.candidate = "/dev/pmem0"
    c.steps[0].slog_bytes, c.steps[0].normal_bytes = 1_000_000, 5_000  # 0.5 %: no problem
    c.steps[1].slog_bytes, c.steps[1].normal_bytes = 600_000, 400_000
    spills = usage_findings(c)
    assert [(f.kind, f.figures["threads"], f.figures["share"]) for f in spills] == [(Kind.SPILL, 32, 0.4)]
    assert [(r.config, r.candidate, r.threads) for r in spills[0].steps] == [("sync=always + SLOG", "/dev/pmem0", 32)]
    problems = [wording.word(f) for f in spills]
    assert problems[0].startswith("sync=always + SLOG [/dev/pmem0]: 40% of the ZIL's bytes at 32 threads went to "
                                  "the main pool (400000 of 1000000)") and "a larger log device" in problems[0]
    # unknown counters say nothing; a configuration without a SLOG is not asked
    c.steps[1].normal_bytes = None
    assert usage_findings(c) == []
    noslog = curve("sync=always, no SLOG", "always", "none", [(2, 100)])
    noslog.steps[0].slog_bytes, noslog.steps[0].normal_bytes = 0, 1_000_000
    assert usage_findings(noslog) == []


def test_the_recorded_lab_run_whose_nvdimm_was_too_small_names_its_spilled_steps():
    # real lab result (tests/fixtures/scenario/README.md): a 256 MiB NVDIMM log under 64 MiB/s of 128 KiB
    # sync writes; the capped SAS SSD log beside it (40 MiB/s) kept the ZIL to itself
    import os

    from slogqual.report.scenario import current as analyse
    from slogqual.results.scenario import ScenarioResult

    path = os.path.join(os.path.dirname(__file__), "fixtures", "scenario", "wide-128k-lab-capped-nvdimm256m.json")
    result = ScenarioResult.load(path)
    capped, pmem = result.log_paths
    problems = analyse(result)["problems"]
    assert len(problems) == 2 and all(p.startswith(f"sync=always + SLOG [{pmem}]: ") for p in problems), problems
    assert "43% of the ZIL's bytes at 32 threads" in problems[1], problems
    assert not any(capped in p for p in problems)


def test_crossing_candidates_are_said_to_cross_not_alike():
    from slogqual.analysis.scaling import slower_candidate
    # the lab's wide pool, 128 KiB writes (docs/lab.md, fourth run): the capped log ahead at 2 threads, the
    # NVDIMM far ahead at 32; their mean ratio is within 10 % (sqrt(0.83 x 1.43) = 1.09), once called "alike"
    capped = curve("s", "always", "single", [(2, 36.8), (32, 42.6)], metric="mbps")
    pmem = curve("s", "always", "single", [(2, 30.7), (32, 61.0)], metric="mbps")
    capped.candidate, pmem.candidate = "/dev/sdg", "/dev/pmem0"
    said = slower_candidate([capped, pmem], {}, "mbps")
    x = said.figures
    assert said.kind is Kind.CROSSES and (x["slower"], x["slower_ahead_at"], x["slower_ahead"]) == ("/dev/sdg", 2, [36.8, 30.7])
    assert (x["faster"], x["faster_ahead_at"], x["faster_ahead"]) == ("/dev/pmem0", 32, [61.0, 42.6])
    assert [(r.candidate, r.threads) for r in said.steps] == [("/dev/sdg", 2), ("/dev/pmem0", 2), ("/dev/sdg", 32),
                                                              ("/dev/pmem0", 32)]
    assert wording.word(said).startswith("The log candidates' curves cross: /dev/sdg is faster at 2 threads (37 vs 31 "
                                         "MiB/s), /dev/pmem0 at 32 threads (61 vs 43 MiB/s)")
    assert slower_candidate([pmem, capped], {}, "mbps") == said
    # one side within the 10 % a step can vary is no crossing: the mean ratio decides as before
    capped.steps[0].mbps = 33.0
    assert slower_candidate([capped, pmem], {}, "mbps").kind is Kind.SLOWER_IS_BOTTLENECK


def test_the_host_is_named_where_the_slog_peak_ran_its_cpu_saturated_or_the_log_far_below_its_sweep():
    """CONSTRUCTED curves (analysis version 9, issue #37): the SLOG curve flattens from 4 threads, sync=standard
    (no ZIL) keeps rising, so the log device was the limit by elimination — unless the host's CPU was saturated
    at the SLOG's peak, or the log vdev wrote far below what its own sweep carries at that size."""
    from slogqual.analysis.scaling import LogEvidence, SweepFigure

    def judged(cpu=None, log=None):
        std = curve("sync=standard", "standard", "none", [(1, 500), (4, 1800), (16, 6000)])
        slog = curve("sync=always + SLOG", "always", "single", [(1, 400), (4, 1200), (16, 1250)])
        noslog = curve("sync=always, no SLOG", "always", "none", [(1, 100), (4, 300), (16, 320)])
        for s in slog.steps:
            s.cpu_busy = cpu
        return verdict([std, slog, noslog], "iops", load_bs=4096, log=log)

    assert judged().limit.kind is Kind.LOG_BOUND and judged(cpu=0.6).limit.kind is Kind.LOG_BOUND
    assert judged(cpu=0.6).limit.figures["basis"] == "elimination"
    # busy, not saturated, and no sweep of the log: the host is not ruled out, so the log device is not named
    # (issue #37: the NVDIMM NFS-like run of draw 5203 at 84-88 % busy was "the log device")
    between = judged(cpu=0.86).limit
    assert between.kind is Kind.UNATTRIBUTED and between.figures["zil_free_scaling"] and between.figures["host_busy"]
    assert wording.word(between) == (
        "not told apart: sync=always + SLOG stops scaling at 4 threads (1200 IOPS); "
        "sync=standard still scaled, but the host's CPU was 86% busy, and no sweep of the log device was given to "
        "compare its writes with — the log device, the pool or the host could each have set it (sweep the log: "
        "--sweep-logs in the lab, --log-sweep)")
    swept = judged(cpu=0.86, log=LogEvidence(SweepFigure(16384, 10.0, 1600.0), observed_mbps=9.5, observed_size=16384))
    assert swept.limit.kind is Kind.LOG_BANDWIDTH  # at its sweep: the log device, measured
    busy = judged(cpu=0.97).limit
    assert busy.kind is Kind.HOST_LIMIT and busy.figures["cpu_busy"] == 0.97 and busy.figures["cpu_saturated"]
    assert busy.figures["threads"] == 16 and busy.figures["peak"] == 1250
    assert wording.word(busy).startswith("the host, not the log device: at sync=always + SLOG's peak (16 threads, "
                                         "1250 IOPS) its CPU was 97% busy")
    # the log vdev at a fifth of its sweep at the size it was written with: the path, not the device
    slow = judged(cpu=0.5, log=LogEvidence(SweepFigure(16384, 10.0, 1600.0), observed_mbps=2.0, observed_size=16384))
    assert slow.limit.kind is Kind.HOST_LIMIT and slow.limit.figures["log_share"] == pytest.approx(0.2)
    assert not slow.limit.figures["cpu_saturated"] and "20% of its QD1 sync-write sweep" in wording.word(slow.limit)
    # at its sweep's bandwidth the log device is the limit, however busy the CPU
    full = judged(cpu=0.97, log=LogEvidence(SweepFigure(16384, 10.0, 1600.0), observed_mbps=9.5, observed_size=16384))
    assert full.limit.kind is Kind.LOG_BANDWIDTH
