"""Mirrored and striped log pairs in pool scenarios (issue #19): which pools a run builds, the skip and the
up-front refusal, resume, the analysis (a pair curve is never a single candidate's SLOG) and the labels.

The documents are the real lab results of tests/fixtures/scenario (README there). Where a test needs pair
steps, it CONSTRUCTS them by copying the real NVDIMM single-log steps, relabelling them as a stripe or a
mirror and scaling their figures (said at each place); no lab run of a pair is recorded yet.
"""

import copy
import json

import pytest

from conftest import fixture_path
from slogqual.analysis import scenario as scenario_analysis
from slogqual.report import scenario as scenario_words
from slogqual.analysis.scenario import step_label
from slogqual.errors import UsageError
from slogqual.pool import variants
from slogqual.pool.engine import PoolScenarioRun
from slogqual.pool.scenario import load_scenario
from slogqual.progress import Progress
from slogqual.report import scaling_plot
from slogqual.results.scenario import PoolRecord, ScenarioEnvironment, ScenarioParams, ScenarioResult, ScenarioStep
from slogqual.analysis import scenario as _scenario_facts
from slogqual.report.scenario import worded as _worded


def analyse(result):
    """The stored analysis: the facts (analysis.scenario) with their words (report.scenario)."""
    return _worded(_scenario_facts.analyse(result))

TWO = fixture_path("scenario", "iscsi-4k-randwrite-lab-quick-2candidates.json")  # logs /dev/sdc, /dev/pmem0
ONE = fixture_path("scenario", "iscsi-4k-randwrite-lab-quick-nvdimm.json")  # log /dev/pmem0
STRIPE, MIRROR = "sync=always + striped SLOG", "sync=always + mirrored SLOG"


def load(path):
    with open(path) as fh:
        return json.load(fh)


def with_pairs(doc, factors=((STRIPE, "stripe", 1.8), (MIRROR, "mirror", 0.96)), candidate=None, devices=None,
               first=True):
    """CONSTRUCTED: the real NVDIMM single-log steps copied as pair steps, throughput scaled by a factor.
    ``first``: put them before the real steps (where the analysis once took a pair curve as 'the slog')."""
    devices = devices or list(doc["pool"]["log"])
    made = []
    for config, log, factor in factors:
        for s in doc["steps"]:
            if s["log"] == "single" and s["candidate"] == "/dev/pmem0":
                t = copy.deepcopy(s)
                t.update(config=config, log=log, candidate=candidate, iops=s["iops"] * factor, mbps=s["mbps"] * factor,
                         log_devices=(["mirror"] if log == "mirror" else []) + devices)
                made.append(t)
    doc["steps"] = made + doc["steps"] if first else doc["steps"] + made
    return doc


def runner(doc, tmp_path, scenario="iscsi-4k-randwrite"):
    result = (ScenarioResult.from_dict(doc, "r.json") if "schema" in doc else  # a real result, else its pool alone
              ScenarioResult(status="running", scenario=ScenarioParams(), quick=True, pool=doc["pool"],
                             environment=ScenarioEnvironment(), steps=[]))
    return PoolScenarioRun(load_scenario(scenario).quick(), result, str(tmp_path / "r.json"), Progress(quiet=True),
                           "slogqual-t-1")


def typed(doc):
    return ScenarioResult.from_dict(copy.deepcopy(doc), "constructed.json")


def shape(vs):
    return [(v.config.name, v.candidate, v.logs) for v in vs]


# --- which pools a run builds ---------------------------------------------------------------------------

def test_one_candidate_runs_the_single_log_and_skips_the_pairs_with_a_reason(tmp_path):
    run = runner({"steps": [], "pool": PoolRecord(layout="stripe", data=[], log=["/dev/a"])}, tmp_path)
    assert shape(run.variants()) == [("sync=standard", None, ()), ("sync=always + SLOG", "/dev/a", ("/dev/a",)),
                                     ("sync=always, no SLOG", None, ())]
    skipped = run.skipped()
    assert [(k["config"], k["log"]) for k in skipped] == [(STRIPE, "stripe"), (MIRROR, "mirror")]
    assert all("two --log candidates" in k["reason"] and "has 1" in k["reason"] for k in skipped)
    assert variants.skip_warning(skipped[0]).startswith(STRIPE + ": a striped log needs two")


def test_two_candidates_run_each_pair_configuration_once_with_today_s_label(tmp_path):
    run = runner({"steps": [], "pool": PoolRecord(layout="stripe", data=[], log=["/dev/a", "/dev/b"])}, tmp_path)
    assert shape(run.variants()) == [
        ("sync=standard", None, ()),
        ("sync=always + SLOG", "/dev/a", ("/dev/a",)), ("sync=always + SLOG", "/dev/b", ("/dev/b",)),
        ("sync=always, no SLOG", None, ()),
        (STRIPE, None, ("/dev/a", "/dev/b")), (MIRROR, None, ("/dev/a", "/dev/b"))]
    assert run.skipped() == []


def test_three_candidates_run_every_pair_labelled_with_both_devices(tmp_path):
    pool = PoolRecord(layout="stripe", data=["/dev/d"], log=["/dev/a", "/dev/b", "/dev/c"], ashift=12)
    run = runner({"steps": [], "pool": pool}, tmp_path)
    pairs = [v for v in run.variants() if variants.needs_pair(v.config)]
    assert shape(pairs) == [(config, f"{x} + {y}", (x, y)) for config in (STRIPE, MIRROR)
                            for x, y in (("/dev/a", "/dev/b"), ("/dev/a", "/dev/c"), ("/dev/b", "/dev/c"))]
    # the pool gets exactly the pair: zpool's grammar from the carried devices, not from the label
    from slogqual.pool.builder import log_vdevs
    assert [log_vdevs(v.config.log, list(v.logs)) for v in pairs[:1] + pairs[3:4]] == \
        [["/dev/a", "/dev/b"], ["mirror", "/dev/a", "/dev/b"]]
    assert run._pool(pairs[4].config, list(pairs[4].logs)).logs == ["mirror", "/dev/a", "/dev/c"]


# --- refused before anything is touched ------------------------------------------------------------------

PAIRS_ONLY = """name = "pairs-only"
kind = "zvol"
luns = 2
lun_size = "64M"
rw = "randwrite"
bs = "4k"
threads = [1, 2]
runtime = 5
[[config]]
name = "std"
[[config]]
name = "striped"
sync = "always"
log = "stripe"
[[config]]
name = "mirrored"
sync = "always"
log = "mirror"
"""


def test_a_scenario_whose_every_slog_is_a_pair_is_refused_with_one_log_before_anything(tmp_path):
    from slogqual.lab.scenario import LabScenarioRequest, run_scenario as run_in_lab
    from slogqual.pool.door import ScenarioRequest, _plan, run_scenario

    toml = tmp_path / "pairs-only.toml"
    toml.write_text(PAIRS_ONLY)
    out = tmp_path / "r.json"
    with pytest.raises(UsageError) as exc:
        run_scenario(ScenarioRequest(scenario=str(toml), data=["/dev/null"], logs=["/dev/zero"], output=str(out)))
    assert "every SLOG configuration of pairs-only is a mirror or stripe" in str(exc.value)
    assert "\n" not in str(exc.value) and not out.exists()
    with pytest.raises(UsageError, match="name two or more log candidates"):  # before a lab guest boots
        run_in_lab(LabScenarioRequest(scenario=str(toml), output=str(out), logs=["nvdimm"]))
    assert not out.exists()
    # two candidates pass the planning checks; a shipped scenario with a single-log configuration too
    assert _plan(ScenarioRequest(scenario=str(toml), data=["/dev/null"], logs=["/dev/zero", "/dev/full"],
                                 output=str(out))).logs == ["/dev/zero", "/dev/full"]
    assert _plan(ScenarioRequest(scenario="iscsi-4k-randwrite", quick=True, data=["/dev/null"], logs=["/dev/zero"],
                                 output=str(out))).logs == ["/dev/zero"]


# --- resume ----------------------------------------------------------------------------------------------

def test_a_one_log_result_completes_with_the_skip_recorded_and_warned(tmp_path):
    """The real one-log lab result, marked interrupted, resumed under today's scenario (with the pair
    configurations): every measurable step is done, so no pool is built; the pairs are skipped and said."""
    doc = load(ONE)
    doc["status"], doc["analysis"], doc["warnings"] = "interrupted", None, []
    run = runner(doc, tmp_path)
    done = run.run()
    assert done.status == "complete" and len(done.steps) == 6  # nothing measured again
    assert [k.config for k in done.skipped] == [STRIPE, MIRROR]
    assert done.warnings == [variants.skip_warning(k.to_dict()) for k in done.skipped]
    saved = ScenarioResult.load(str(tmp_path / "r.json"))
    assert saved.skipped == done.skipped and saved.warnings == done.warnings and saved.to_dict() == done.to_dict()


def test_resume_knows_finished_pair_steps(tmp_path):
    """CONSTRUCTED pair steps on the real two-candidate result: with two logs they carry no candidate; with
    three, each pair its label — a finished pair is not measured again, the others are still due."""
    doc = with_pairs(load(TWO))
    run = runner(doc, tmp_path)
    assert all(run._done(c, None, t) for c in (STRIPE, MIRROR) for t in (1, 4))
    run.result.status = "interrupted"
    assert run.run().status == "complete" and len(run.result.steps) == 12  # all done: no pool was built

    three = with_pairs(load(TWO), factors=((STRIPE, "stripe", 1.5),), candidate="/dev/sdc + /dev/pmem0")
    three["pool"]["log"] = ["/dev/sdc", "/dev/pmem0", "/dev/sdd"]
    run = runner(three, tmp_path)
    due = {(v.config.name, v.candidate) for v in run.variants()
           if variants.needs_pair(v.config) and not all(run._done(v.config.name, v.candidate, t) for t in (1, 4))}
    assert (STRIPE, "/dev/sdc + /dev/pmem0") not in due
    assert {(STRIPE, "/dev/sdc + /dev/sdd"), (STRIPE, "/dev/pmem0 + /dev/sdd"),
            (MIRROR, "/dev/sdc + /dev/pmem0")} <= due


# --- analysis --------------------------------------------------------------------------------------------

def test_a_pair_curve_is_never_a_single_candidate_s_slog():
    """The bug analysis v4 fixes: a stripe curve sitting before the single-log curves was what each single
    candidate's verdict judged. With a (CONSTRUCTED) pair present, every single-candidate figure is as it
    is without it."""
    plain = analyse(typed(load(TWO)))
    mixed = analyse(typed(with_pairs(load(TWO), first=True)))
    for key in ("verdict", "bottleneck", "slog_benefit_at_peak", "slog_of_standard_at_peak", "slower_log"):
        assert mixed[key] == plain[key], key
    assert mixed["candidates"] == [dict(c) for c in plain["candidates"]]
    assert plain["pairs"] == [] and len(mixed["pairs"]) == 2


def test_pair_entries_say_what_the_pair_buys_against_the_best_single_log():
    """CONSTRUCTED pairs: the stripe at 1.8x the NVDIMM's real steps, the mirror at 0.96x."""
    d = with_pairs(load(TWO))
    a = analyse(typed(d))
    stripe, mirror = a["pairs"]  # fastest first
    best = a["candidates"][0]
    assert best["device"] == "/dev/pmem0"
    assert stripe["config"] == STRIPE and stripe["log"] == "stripe" and stripe["devices"] == ["/dev/sdc", "/dev/pmem0"]
    assert stripe["peak"] == pytest.approx(1.8 * best["peak"]) and stripe["of_best_single"] == pytest.approx(1.8)
    assert stripe["best_single"] == "/dev/pmem0"
    (vs,) = [f for f in stripe["findings"] if f["kind"] == "pair-versus-single"]
    assert vs["figures"]["ratio"] == pytest.approx(1.8) and vs["figures"]["single"] == "/dev/pmem0"
    assert [r["threads"] for r in vs["steps"]] == [2]  # the pair's peak step
    assert stripe["versus_single"] == ("The striped pair reaches 1.8x the best single log, /dev/pmem0 "
                                       "(1960 vs 1089 IOPS at peak).")
    assert stripe["slog_benefit_at_peak"] > best["slog_benefit_at_peak"] > 1  # over no SLOG, as measured
    assert stripe["verdict"].startswith("The SLOG makes sync=always")
    assert mirror["log"] == "mirror" and mirror["devices"] == ["/dev/sdc", "/dev/pmem0"]
    assert mirror["of_best_single"] == pytest.approx(0.96)
    assert mirror["versus_single"].startswith("The mirrored pair costs 4% against the best single log")
    assert "within the 10%" in mirror["versus_single"]
    # the top-level figures stay the best single candidate's
    assert a["slog_benefit_at_peak"] == best["slog_benefit_at_peak"] and a["verdict"] == best["verdict"]
    assert {STRIPE, MIRROR} <= set(a["knees"])


def test_without_a_single_log_the_best_pair_speaks_and_has_nothing_to_be_compared_with():
    d = with_pairs(load(TWO))
    d["steps"] = [s for s in d["steps"] if s["log"] != "single"]
    a = analyse(typed(d))
    assert a["candidates"] == [] and [p["config"] for p in a["pairs"]] == [STRIPE, MIRROR]
    assert a["verdict"] == a["pairs"][0]["verdict"]
    assert all(p["best_single"] is None and p["versus_single"] is None for p in a["pairs"])


def test_older_stored_analyses_still_load_and_are_recomputed_with_today_s_rules():
    for path, stored in ((TWO, 1), (ONE, 3)):  # before the field; the pool/host-bound version
        r = ScenarioResult.load(path)
        assert scenario_analysis.stored_version(r) == stored
        now = scenario_words.current(r)
        assert now["version"] == scenario_analysis.ANALYSIS_VERSION == 12 and now["pairs"] == []
        assert [c["device"] for c in now["candidates"]] == [c["device"] for c in r.analysis["candidates"]]


# --- labels ----------------------------------------------------------------------------------------------

def test_pair_steps_are_labelled_with_layout_and_devices_in_table_and_plot(capsys):
    from slogqual.cli.scenario import _print
    d = typed(with_pairs(load(TWO), first=False))  # CONSTRUCTED pair steps, see with_pairs
    pair = next(s for s in d.steps if s.log == "stripe")
    assert step_label(d, pair) == f"{STRIPE} [stripe: /dev/sdc + /dev/pmem0]"
    titles = [t for t, _ in scaling_plot.series(d, "iops")]
    assert titles == ["sync=standard", "sync=always + SLOG [/dev/sdc]", "sync=always + SLOG [/dev/pmem0]",
                      "sync=always, no SLOG", f"{STRIPE} [stripe: /dev/sdc + /dev/pmem0]",
                      f"{MIRROR} [mirror: /dev/sdc + /dev/pmem0]"]
    _print(d, False)
    out = capsys.readouterr().out
    assert f"{MIRROR} [mirror: /dev/sdc + /dev/pmem0]" in out
    assert "stripe log pair /dev/sdc (SLOGQUAL LAB SATA SSD) + /dev/pmem0: The striped pair reaches 1.8x" in out


def test_scenario_cost_keeps_the_pairs_of_three_candidates_apart():
    from slogqual.analysis.transport import _candidate
    d = ScenarioResult.load(TWO)
    pair = d.steps[0]
    pair = ScenarioStep.measured(dict(pair.to_dict(), log="stripe", candidate="/dev/a + /dev/b"))
    assert _candidate(d, pair) == "/dev/a + /dev/b"
    pair = ScenarioStep.measured(dict(pair.to_dict(), log="mirror", candidate=None))
    assert _candidate(d, pair) is None  # two candidates: matched by config


def test_one_device_in_two_configurations_is_not_compared_with_itself():
    # recorded: nfs-sync over knfsd in the lab, one log device in sync=always + SLOG and sync=standard +
    # SLOG; analysis 5 and before said "The log candidates perform alike under this load (/dev/pmem0,
    # /dev/pmem0)"
    doc = json.loads(open(fixture_path("scenario", "nfs-sync-knfsd-lab-quick.json")).read())
    assert "/dev/pmem0, /dev/pmem0" in doc["analysis"]["slower_log"]
    assert "slower_log" not in scenario_words.worded(scenario_analysis.analyse(typed(doc)))
