"""The write throttle as a scenario step's evidence (issue #37): the dmu_tx kstat's counts over the step
(tools.kstat.TxStats, pool.evidence.ThrottleWitness), typed in the document (results.scenario.WriteThrottle),
and a ``write-throttle`` detail where a curve's steps had transactions the throttle sent to wait.

Recorded (tests/fixtures/zfs/SOURCES.md, ``record_throttle.sh``): an NVDIMM log on a mirror of two 8 ms hdd
under the NFS-like 64 KiB load in both OpenZFS labs. With the log, 7-12 % of each step's transactions waited in
the throttle (the data is copied into the log and the txg must write it all later); without it none did (a
64 KiB write goes indirect there: its block is written at commit, little is left dirty for the txg)."""

import json

import pytest

from conftest import fixture_path, read_fixture
from test_kstat_forms import as_sysctl, parse_sysctl

from slogqual.analysis import scenario as scenario_analysis
from slogqual.analysis.findings import Finding, Kind
from slogqual.errors import SlogqualError
from slogqual.report import wording
from slogqual.results.scenario import ScenarioResult, WriteThrottle
from slogqual.tools import kstat

VERSIONS = ("2.3", "2.4")
SLOG, NONE = "sync=always + SLOG", "sync=always, no SLOG"


def recorded(version):
    return ScenarioResult.load(fixture_path("zfs", version, "throttle-scenario.json"))


@pytest.mark.parametrize("version", VERSIONS)
def test_the_dmu_tx_kstat_parses_and_its_delta_is_the_runs(version):
    before = kstat.TxStats.from_kstat(kstat.parse_kstat(read_fixture("zfs", version, "dmu_tx-before.txt")))
    after = kstat.TxStats.from_kstat(kstat.parse_kstat(read_fixture("zfs", version, "dmu_tx-after.txt")))
    assert None not in after.astuple()  # every row slogqual reads is in both versions' kstat
    d = after - before
    steps = recorded(version).steps
    # the guest ran nothing else: the run's delta covers its steps' (and the pools' set-up between them)
    assert d.assigned >= sum(s.write_throttle.assigned for s in steps) > 0
    assert d.dirty_delay >= sum(s.write_throttle.dirty_delay for s in steps) > 0


@pytest.mark.parametrize("version", VERSIONS)
def test_the_freebsd_sysctl_form_gives_the_same_counts(version):
    text = read_fixture("zfs", version, "dmu_tx-after.txt")
    bsd = parse_sysctl(as_sysctl(text, kstat.SYSCTL_DMU_TX), kstat.SYSCTL_DMU_TX)
    assert kstat.TxStats.from_kstat(bsd) == kstat.TxStats.from_kstat(kstat.parse_kstat(text))


def test_a_row_the_kstat_lacks_is_unknown_never_zero():
    text = read_fixture("zfs", "2.3", "dmu_tx-after.txt")
    older = "\n".join(ln for ln in text.splitlines() if not ln.startswith("dmu_tx_wrlog_delay"))  # before 2.2
    a = kstat.TxStats.from_kstat(kstat.parse_kstat(older))
    assert a.wrlog_delay is None and a.assigned is not None
    assert (a - a).wrlog_delay is None and (a - a).assigned == 0


@pytest.mark.parametrize("version", VERSIONS)
def test_with_the_log_the_throttle_held_writes_back_and_without_it_none(version):
    steps = recorded(version).steps
    slog = [s.write_throttle for s in steps if s.config == SLOG]
    none = [s.write_throttle for s in steps if s.config == NONE]
    assert len(slog) == len(none) == 3
    assert all(t.source == "global" and t.assigned > 0 for t in slog + none)
    assert all(t.waited_share > 0.05 for t in slog), [t.waited_share for t in slog]
    assert all(t.waited == 0 for t in none)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_analysis_says_it_for_the_curve_that_had_it_and_no_other(version):
    a = scenario_analysis.current(recorded(version))
    assert a["version"] == scenario_analysis.ANALYSIS_VERSION == 12
    found = [Finding.from_dict(f) for f in a["findings"] if f["kind"] == Kind.WRITE_THROTTLE.value]
    assert [f.figures["config"] for f in found] == [SLOG]
    (f,) = found
    assert [row[0] for row in f.figures["steps"]] == [1, 4, 16]
    assert {r.threads for r in f.steps} == {1, 4, 16}
    words = wording.word(f)
    assert words.startswith(f"the write throttle held back transactions of {SLOG}: ")
    for threads, waited, assigned, _share in f.figures["steps"]:
        assert f"at {threads} threads ({waited} of {assigned})" in words
    said = wording.verdict_words([Finding.from_dict(x) for x in a["findings"]])
    assert words in said["details"]  # said with the other details, never as the bottleneck
    assert "write throttle" not in said["bottleneck"]


def test_a_result_recorded_before_the_throttle_has_no_such_detail():
    doc = json.loads(read_fixture("zfs", "2.3", "throttle-scenario.json"))
    for s in doc["steps"]:
        del s["write_throttle"]
    r = ScenarioResult.from_dict(doc)
    a = scenario_analysis.current(r)
    assert not [f for f in a["findings"] if f["kind"] == Kind.WRITE_THROTTLE.value]
    assert all(s.write_throttle is None for s in r.steps)


@pytest.mark.parametrize("bad, key", [({"assigned": -1}, "assigned"), ({"dirty_delay": "many"}, "dirty_delay"),
                                      ({"source": 3}, "source")])
def test_a_bad_count_is_refused_naming_it(bad, key):
    doc = json.loads(read_fixture("zfs", "2.3", "throttle-scenario.json"))
    doc["steps"][0]["write_throttle"].update(bad)
    with pytest.raises(SlogqualError, match=key):
        ScenarioResult.from_dict(doc)


def test_a_step_written_again_keeps_its_counts_byte_for_byte():
    text = read_fixture("zfs", "2.4", "throttle-scenario.json")
    doc = json.loads(text)
    r = ScenarioResult.from_dict(doc)
    assert r.to_dict()["steps"] == doc["steps"]
    t = WriteThrottle.made(doc["steps"][0]["write_throttle"])
    assert t.to_dict() == doc["steps"][0]["write_throttle"]


def test_counters_that_restarted_during_a_step_give_no_count():
    from slogqual.pool.evidence import ThrottleWitness

    text = read_fixture("zfs", "2.3", "dmu_tx-after.txt")
    later = kstat.TxStats.from_kstat(kstat.parse_kstat(text))
    restarted = kstat.TxStats(1, 0, 0, 0, 0)  # the module reloaded: its counters begin again
    assert ThrottleWitness.delta(later, restarted) is None
    d = ThrottleWitness.delta(restarted, later)
    assert d["source"] == "global" and d["assigned"] == later.assigned - 1
    assert ThrottleWitness.delta(None, later) is None
