"""`slogqual advise --advice ADVICE.json --verify RESULT`: a saved advice checked against a result run since,
without repeating the options it was made with; and the log size reckoned from a figure the advice itself
calls an upper bound (issue #37). The inputs are the lab's recorded sweeps and scenario result
(tests/fixtures/advisor, README there)."""

import copy
import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from conftest import fixture_path
from slogqual import cli
from slogqual.analysis import advisor as A
from slogqual.report import advice as words
from slogqual.cli import advise as advise_cli
from slogqual.results import load_sweep
from slogqual.results.scenario import ScenarioResult

F = lambda name: fixture_path("advisor", name)  # noqa: E731
ISCSI_4K = F("iscsi-4k-lab-sata-ssd-nvdimm.json")
SATA_SWEEP = F("iscsi-4k-lab.log0-sata-ssd.sweep.json")
NVDIMM_SWEEP = F("iscsi-4k-lab.log1-nvdimm.sweep.json")
NONE = A.DataSide("none", "no data side")


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = cli.main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def saved(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLOGQUAL_STORE", str(tmp_path / "store.sqlite"))
    made = ["advise", "--log", SATA_SWEEP, NVDIMM_SWEEP, "--scenario", ISCSI_4K, "--tunables", "defaults"]
    code, out, err = run(made + ["--verify", ISCSI_4K, "-o", tmp_path / "advice.json"])
    assert code == 0, err
    return {"path": tmp_path / "advice.json", "made": made, "stdout": out, "stderr": err}


def test_a_saved_advice_verifies_as_the_advice_made_with_every_option(saved):
    code, out, err = run(["advise", "--advice", saved["path"], "--verify", ISCSI_4K])
    assert code == 0, err
    assert out == saved["stdout"] and err == saved["stderr"]  # the same table, the same rows, the same warnings
    assert "prediction vs " in out and "/dev/sdc" in out.split("prediction vs ")[1]
    code, out, _ = run(["advise", "--advice", saved["path"], "--json"])
    assert code == 0 and json.loads(out) == json.loads(saved["path"].read_text())  # the document as saved


@pytest.mark.parametrize("extra, words", [
    (["--bs", "4k"], "no --bs (advise again without --advice to change them)"),
    (["--log", SATA_SWEEP], "no --log"),
    (["--scenario", ISCSI_4K], "no --scenario"),
    (["--tunables", "host"], "no --tunables"),
    (["--warranty-years", "3"], "no --warranty-years"),
    (["-o", "again.json"], "is saved already: no -o"),
])
def test_a_model_input_beside_a_saved_advice_is_refused_in_one_line(saved, extra, words):
    code, out, err = run(["advise", "--advice", saved["path"], "--verify", ISCSI_4K, *extra])
    assert code == 2 and err.count("\n") == 1 and words in err and out == "", err
    assert not (saved["path"].parent / "again.json").exists()


def test_neither_sweeps_nor_a_saved_advice_is_refused_and_a_non_advice_is_named(saved):
    code, _, err = run(["advise", "--verify", ISCSI_4K])
    assert code == 2 and err == "slogqual: give the log candidates' sweeps with --log (or a saved advice with --advice)\n"
    code, _, err = run(["advise", "--advice", ISCSI_4K, "--verify", ISCSI_4K])
    assert code == 2 and "not a slogqual.advice/1 document" in err and err.count("\n") == 1


def test_every_option_of_advise_is_a_model_input_or_says_what_to_do_with_one():
    """A new model option must join MODEL_INPUTS, or a saved advice would take it and ignore it."""
    parser = cli.build_parser(["advise"])
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices["advise"]
    dests = {a.dest for a in sub._actions} - {"help"}
    outside = {"verify", "advice", "json", "output", "plot", "force", "store"}
    assert dests - outside == set(advise_cli.MODEL_INPUTS)


# --- the log's size from a bound -------------------------------------------------------------------------

def test_a_size_reckoned_from_an_upper_bound_says_so_and_claims_no_spill():
    """With no data side every log-bound figure is an upper bound (``log-only``): the log size reckoned from
    the peak is one too, and a capacity below it is no evidence of a spill. At a rate given (or recorded),
    the same capacity below the needed size is a spill, as the lab measured it (tests/test_advisor.py)."""
    small = copy.deepcopy(load_sweep(NVDIMM_SWEEP))
    small.device["capacity"] = 256 << 20  # what-if: the class as it was when the lab measured a 43 % spill
    w = A.Workload("iscsi", 131072, 131072, [2, 8])
    cand = words.document(A.advise([("nv256", small)], w, A.Tunables(), NONE))["candidates"][0]
    peak = max(cand["steps"], key=lambda s: s["iops"])
    assert peak["upper_bound"] == "log-only"
    size = cand["size"]
    assert size["upper_bound"] == "log-only" and size["rate_basis"].endswith("(an upper bound: log-only)")
    (f,) = [f for f in cand["findings"] if f["kind"] == "log-too-small"]
    x = f["figures"][0]
    assert x["capacity"] < x["needed_bytes"] and not x["spills"] and x["upper_bound"] == "log-only"
    assert "will spill" not in words.finding_words(f) and "an upper bound" in words.finding_words(f)
    rated = words.document(A.advise([("nv256", small)], A.Workload(**{**w.__dict__, "rate_mbps": 64 * (1 << 20) / 1e6}),
                                    A.Tunables(), NONE))["candidates"][0]
    (f,) = [f for f in rated["findings"] if f["kind"] == "log-too-small"]
    assert f["figures"][0]["spills"] and rated["size"]["upper_bound"] is None and "will spill" in words.finding_words(f)


def test_a_size_from_a_host_bound_peak_is_a_bound_and_one_from_a_prediction_is_not():
    """The recorded 4 KiB lab run: the NVDIMM's figures are the guest CPU's pace (``host-cpu``), the SATA SSD's
    are predictions (log-latency-bound); each size says which it rests on."""
    data = A.data_from_scenario(ScenarioResult.load(ISCSI_4K), "iscsi-4k")
    w = A.Workload("iscsi", 4096, 16384, [2, 8], zils=2)
    sata, nv = words.document(A.advise([("sata", load_sweep(SATA_SWEEP)), ("nv", load_sweep(NVDIMM_SWEEP))], w,
                                       A.Tunables(), data))["candidates"]
    assert {s["upper_bound"] for s in nv["steps"]} == {"host-cpu"} and nv["size"]["upper_bound"] == "host-cpu"
    assert {s["upper_bound"] for s in sata["steps"]} == {None} and sata["size"]["upper_bound"] is None
    assert "upper bound" not in sata["size"]["rate_basis"]
