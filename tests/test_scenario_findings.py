"""The scenario analysis as facts (analysis.findings): on every recorded lab run, the kinds and figures
it finds, the steps they rest on, and that the words (slogqual.report.wording) are those the analysis
wrote before it kept facts — word for word where the run's stored analysis is of version 6."""

import json

import pytest

from conftest import fixture_path
from slogqual.analysis import scenario as scenario_analysis
from slogqual.report import scenario as scenario_words
from slogqual.analysis.findings import CANDIDATES, EFFECTS, LIMITS, PROBLEMS, Finding, Kind, StepRef
from slogqual.report import wording
from slogqual.results.scenario import ScenarioResult

TWO = fixture_path("scenario", "iscsi-4k-randwrite-lab-quick-2candidates.json")
NVDIMM = fixture_path("scenario", "iscsi-4k-randwrite-lab-quick-nvdimm.json")
LIO = fixture_path("scenario", "iscsi-4k-randwrite-lio-lab-quick.json")
NFS = fixture_path("scenario", "nfs-sync-knfsd-lab-quick.json")
WIDE = fixture_path("scenario", "wide-128k-lab-capped-nvdimm256m.json")
QUALIFY = fixture_path("qualify", "scenario-iscsi-4k-randwrite-lab-quick.json")
# written by analysis version 6, the rules of today before findings were kept
V6 = [fixture_path("advisor", n) for n in ("iscsi-128k-seqwrite-lab-nvdimm.json", "iscsi-4k-lab-sata-ssd-nvdimm.json",
                                           "wide-128k-lab-capped-nvdimm-slowed.json")]


def analysed(path):
    return scenario_words.worded(scenario_analysis.analyse(ScenarioResult.load(path)))


def facts(a):
    return scenario_analysis.findings(a)


def kinds(fs):
    return [f.kind for f in fs]


def only(fs, kind):
    (f,) = [f for f in fs if f.kind is kind]
    return f


@pytest.mark.parametrize("path", V6)
def test_version_6_analyses_are_written_again_word_for_word_with_the_facts_beside(path):
    stored = ScenarioResult.load(path).analysis
    assert stored["version"] == 6
    now = analysed(path)
    assert now["version"] == scenario_analysis.ANALYSIS_VERSION == 12  # 11 reads an unthrottled step as 10 did, 12 an unstalled one as 11
    renamed = (Kind.HOST_LIMIT.value, Kind.UNATTRIBUTED.value)

    def host_named(entry):  # version 9 names the host where a SLOG peak ran its CPU saturated (issue #37); version
        # 10 says the log device by elimination as such, or that nothing measured tells it from the pool and host
        return any(f["kind"] in renamed or (f["kind"] == Kind.LOG_BOUND.value and f["figures"].get("basis") ==
                                            "elimination") for f in entry.get("findings") or [])

    def words(a, named):  # version 8 adds a pair's "ceiling" (analysis.pair_ceiling); every other word is version 6's
        out = {k: v for k, v in a.items() if k not in ("findings", "version") and not (k == "bottleneck" and named(a))}
        for key in ("candidates", "pairs"):
            out[key] = [{k: v for k, v in c.items() if k not in ("findings", "ceiling")
                         and not (k == "bottleneck" and named(c))} for c in a[key]]
        return out
    assert words(now, host_named) == words(stored, lambda e: host_named(now) if e is stored else any(
        host_named(c) and c["device"] == e.get("device") for c in now["candidates"]))
    olds = {c.get("device"): c["bottleneck"] for c in stored["candidates"]}
    for entry, old in [(now, stored["bottleneck"])] + [(c, olds.get(c.get("device"))) for c in now["candidates"]]:
        if not host_named(entry):
            continue
        (f,) = [f for f in entry["findings"] if f["kind"] in renamed + (Kind.LOG_BOUND.value,)]
        if f["kind"] == Kind.HOST_LIMIT.value:  # what version 6 said there was the log device or "not reached"
            assert f["figures"]["cpu_busy"] >= 0.9 or f["figures"]["log_share"] < 0.5
            assert entry["bottleneck"].startswith("the host, not the log device")
        elif f["kind"] == Kind.UNATTRIBUTED.value:
            assert old.startswith("the log device:") and entry["bottleneck"].startswith("not told apart:")
        else:  # the same words, with what they rest on
            assert entry["bottleneck"].startswith(old + " (by elimination")
    # every sentence stored is the wording of a stored fact
    fs = facts(now)
    assert now["verdict"] == wording.effect(fs) and now["bottleneck"] == wording.limit(fs)
    assert now["details"] == [wording.word(f) for f in fs if f.kind in (Kind.SATURATED_AT, Kind.KNEE)]
    for c in now["candidates"]:
        cf = [Finding.from_dict(d) for d in c["findings"]]
        assert c["verdict"] == wording.effect(cf) and c["bottleneck"] == wording.limit(cf)


def test_two_candidates_lab_run_pool_host_bound():
    """One guest vCPU: sync=standard 1,353 then 1,227 IOPS, flat from 2 threads; the NVDIMM SLOG 1,089
    then 907 on that plateau; the SATA SSD 424 then 920 (still rising); sync=always without a SLOG 468."""
    a = analysed(TWO)
    fs = facts(a)
    assert kinds(fs) == [Kind.SPEEDUP, Kind.HOST_BOUND, Kind.SATURATED_AT, Kind.KNEE, Kind.SLOWER]
    effect, limit = fs[0], fs[1]
    assert effect.figures["benefit"] == pytest.approx(1088.66 / 468.18, rel=1e-4)
    assert effect.figures["of_standard"] == pytest.approx(0.805, abs=1e-3) and effect.figures["flat_threads"] == 2
    assert limit.figures["flat_threads"] == 2 and limit.figures["slog_flat_threads"] == 2
    assert [t for t, _ in limit.figures["flat_steps"]] == [2, 8] and limit.figures["log_too"] is None
    assert limit.steps == (StepRef("sync=standard", None, 2), StepRef("sync=standard", None, 8),
                           StepRef("sync=always + SLOG", "/dev/pmem0", 2), StepRef("sync=always + SLOG", "/dev/pmem0", 8))
    slower = fs[-1]
    assert (slower.figures["slower"], slower.figures["faster"], slower.figures["threads"]) == ("/dev/sdc", "/dev/pmem0", 2)
    assert slower.figures["factor"] == pytest.approx(1.591, abs=1e-3) and slower.figures["last"] == 8
    by = {c["device"]: kinds(Finding.from_dict(d) for d in c["findings"]) for c in a["candidates"]}
    assert by == {"/dev/pmem0": [Kind.SPEEDUP, Kind.HOST_BOUND, Kind.SATURATED_AT, Kind.KNEE],
                  "/dev/sdc": [Kind.SPEEDUP, Kind.RISING_ON_PLATEAU, Kind.SATURATED_AT, Kind.KNEE]}
    # golden: the words of this run, as `slogqual scenario` prints them
    assert a["verdict"] == ("The SLOG makes sync=always 2.3x faster (1089 vs 468 IOPS at peak), reaching 80% of "
                            "sync=standard — which is itself flat from 2 threads: pool/host-bound, not a limit of the "
                            "log device.")
    assert a["bottleneck"] == ("pool/host-bound: sync=standard, which writes no ZIL, stopped scaling at 2 threads "
                               "(2 threads 1353, 8 threads 1227 IOPS) and sync=always + SLOG stopped scaling at 2 "
                               "threads (peak 1089 IOPS, 80% of sync=standard's peak) on that plateau: the pool or the "
                               "host (CPU, initiator) caps both, so this run does not show the log device's limit")


@pytest.mark.parametrize("path, of_standard", [(NVDIMM, 0.961), (LIO, 0.967)])
def test_one_nvdimm_local_and_over_iscsi_keeps_up_with_sync_standard(path, of_standard):
    fs = facts(analysed(path))
    assert kinds(fs) == [Kind.SPEEDUP, Kind.POOL_BOUND, Kind.SATURATED_AT, Kind.KNEE]
    assert fs[1].figures["of_standard"] == pytest.approx(of_standard, abs=1e-3)
    assert fs[1].figures["peak"] / fs[1].figures["baseline_peak"] == pytest.approx(fs[1].figures["of_standard"])


def test_nfs_sync_load_tells_nothing_apart_without_a_sweep_and_judges_no_sync_standard_slog():
    a = analysed(NFS)
    fs = facts(a)
    # O_DSYNC: sync=standard goes through the ZIL, so it rules out neither the pool nor the host, and the run had
    # no sweep of its log: the SLOG curve's flat top is not told apart (version 10; it was "the log device")
    assert kinds(fs) == [Kind.SPEEDUP, Kind.UNATTRIBUTED, Kind.KNEE]
    assert fs[0].figures["of_standard"] is None  # O_DSYNC: sync=standard goes through the ZIL, no ceiling
    assert (fs[1].figures["threads"], fs[1].figures["zil_free_scaling"]) == (2, False)
    assert a["bottleneck"].startswith("not told apart: sync=always + SLOG stops scaling at 2 threads (12 MiB/s); no run "
                                      "without the ZIL (sync=standard) still scaling rules out the pool or the host")
    # sync=standard + SLOG of an O_DSYNC load commits through the ZIL too: judged against sync=standard without a
    # log (version 9; it was "nothing to judge" beside the other candidate's benefit, issue #37), never the headline
    by_sync = {c["sync"]: c for c in a["candidates"]}
    assert [kinds(Finding.from_dict(d) for d in c["findings"]) for c in a["candidates"]] == \
        [[Kind.SPEEDUP, Kind.UNATTRIBUTED, Kind.KNEE]] * 2
    doc = ScenarioResult.load(NFS)
    peak = {cfg: max(s.iops for s in doc.steps if s.config == cfg) for cfg in {s.config for s in doc.steps}}
    std_slog = by_sync["standard"]
    (effect,) = [Finding.from_dict(d) for d in std_slog["findings"] if d["kind"] == Kind.SPEEDUP.value]
    assert effect.figures["benefit"] == pytest.approx(peak[std_slog["config"]] / peak["sync=standard"])
    assert std_slog["verdict"].startswith("The SLOG makes sync=standard")
    assert a["verdict"] == by_sync["always"]["verdict"] and "nothing to judge" not in a["verdict"]


def test_wide_pool_faster_without_slog_spills_and_names_the_slower_log():
    fs = facts(analysed(WIDE))
    assert kinds(fs) == [Kind.FASTER_WITHOUT_SLOG, Kind.NOT_REACHED, Kind.KNEE, Kind.SPILL, Kind.SPILL,
                         Kind.SLOWER_IS_BOTTLENECK]
    assert fs[0].figures["benefit"] == pytest.approx(0.809, abs=1e-3)
    spills = [f for f in fs if f.kind is Kind.SPILL]
    assert [(f.figures["candidate"], f.figures["threads"]) for f in spills] == [("/dev/pmem0", 2), ("/dev/pmem0", 32)]
    assert spills[1].figures["share"] == pytest.approx(0.433, abs=1e-3)
    assert spills[1].figures["normal_bytes"] == 375151152 and spills[1].figures["slog_bytes"] == 491543152
    slower = fs[-1]
    assert (slower.figures["slower"], slower.figures["threads"]) == ("/dev/sdg", 32)
    assert slower.figures["factor"] == pytest.approx(1.287, abs=1e-3)


def test_the_qualify_fixture_still_rises_on_the_plateau():
    fs = facts(analysed(QUALIFY))
    assert kinds(fs) == [Kind.SPEEDUP, Kind.RISING_ON_PLATEAU, Kind.SATURATED_AT, Kind.KNEE]
    x = fs[1].figures
    assert (x["peak_threads"], x["flat_threads"]) == (8, 2) and x["peak"] == pytest.approx(625.797, abs=1e-3)


def test_findings_are_stored_as_json_and_read_back():
    a = analysed(TWO)
    again = json.loads(json.dumps(a))
    assert facts(again) == facts(a)
    assert scenario_analysis.findings(ScenarioResult.load(TWO).analysis) == []  # before facts were kept


def test_every_kind_is_worded_and_belongs_to_one_group():
    groups = [LIMITS, EFFECTS, (Kind.SATURATED_AT, Kind.KNEE, Kind.WRITE_THROTTLE), PROBLEMS, CANDIDATES]
    for kind in Kind:
        assert sum(kind in g for g in groups) == (2 if kind is Kind.NOTHING_TO_JUDGE else 1), kind
        assert kind is Kind.NOTHING_TO_JUDGE or kind in wording.WORDS, kind


STALLED = fixture_path("advisor", "check", "test-47166", "lab", "nvme-iscsi-4k", "host.json.log.scenario.pass2.json")


def test_a_step_whose_write_outlasted_the_kernel_s_io_timeout_is_a_stalled_problem_and_no_other_step_is():
    """Recorded (draw 47166, the NVMe iSCSI's host probe, its log pass's second pass): at 16 writers the emulated NVMe
    stopped answering — a write took 93 s, the kernel log kept beside it (command timeout at 30 s, abort, reset,
    disabled). The analysis finds it as a problem (``stalled``: the step measured the device's error handling, not the
    pool) with its figures and step, in words; its 1 and 4 writers' steps (slowest 9 and 34 ms) and every recorded
    scenario of the draw's pools are no stall."""
    r = ScenarioResult.load(STALLED)
    a = scenario_words.worded(scenario_analysis.analyse(r))
    (f,) = [f for f in facts(a) if f.kind is Kind.STALLED]
    assert Kind.STALLED in PROBLEMS
    step = next(s for s in r.steps if s.threads == 16)
    assert f.figures["threads"] == 16 and f.figures["longest_write_s"] == pytest.approx(step.lat_us.max / 1e6, abs=1e-3)
    assert f.figures["longest_write_s"] > f.figures["timeout_s"] == 30.0
    assert f.steps == (StepRef(step.config, step.candidate, 16),)
    assert wording.word(f).startswith(f"{step.config} [{step.candidate}]: a write at 16 threads took {step.lat_us.max / 1e6:,.1f} s — past "
                                      "the kernel's 30-s I/O timeout")
    assert any("took 93.2 s" in p for p in a["problems"])
    import glob
    import os
    runs = glob.glob(os.path.join(os.path.dirname(STALLED), "..", "*", "run.json"))
    assert len(runs) == 6  # the draw's pools that ran
    for path in runs:
        assert not [f for f in facts(scenario_analysis.analyse(ScenarioResult.load(path))) if f.kind is Kind.STALLED]
