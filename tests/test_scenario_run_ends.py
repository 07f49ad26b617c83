"""How a scenario run's result file says the run ended when it does not complete (pool/engine.py): a failure
marks it failed with the failure's one line, Ctrl-C or SIGTERM interrupted, and the file is rewritten
before the exception goes on; a result file that cannot be written is not tried again mid-run. On the
real one-log lab result (tests/fixtures/scenario/README.md), its steps CONSTRUCTED away so every step is
still to run, and the run's pools or log sweeps replaced by a raise: nothing is measured."""

import json

import pytest

from conftest import fixture_path
from slogqual.errors import MeasurementError, ResultWriteError, SlogqualError
from slogqual.pool.engine import PoolScenarioRun
from slogqual.pool.scenario import load_scenario
from slogqual.progress import Progress
from slogqual.results.scenario import ScenarioResult

ONE = fixture_path("scenario", "iscsi-4k-randwrite-lab-quick-nvdimm.json")


def _run(tmp_path, sweep_logs):
    doc = json.loads(open(ONE).read())
    doc["status"], doc["steps"], doc["analysis"] = "running", [], None  # CONSTRUCTED: nothing measured yet
    result = ScenarioResult.from_dict(doc, "r.json")
    result.sweep_logs = sweep_logs
    return PoolScenarioRun(load_scenario("iscsi-4k-randwrite").quick(), result, str(tmp_path / "r.json"),
                           Progress(quiet=True), "slogqual-t-1")


def _raise(exc):
    def raising(*_args, **_kw):
        raise exc
    return raising


def _saved(tmp_path):
    doc = json.loads((tmp_path / "r.json").read_text())
    return doc["status"], doc["error"]


@pytest.mark.parametrize("exc, status, error", [
    (MeasurementError("fio: the device went away"), "failed", "log candidate sweep: fio: the device went away"),
    # the sweep's own file could not be written: the scenario's result still can, and says so
    (ResultWriteError("cannot write the result file s.json: No space left on device", {}), "failed",
     "log candidate sweep: cannot write the result file s.json: No space left on device"),
    (KeyboardInterrupt(), "interrupted", None),
])
def test_a_log_sweep_that_ends_the_run_is_saved_as_its_end(tmp_path, monkeypatch, exc, status, error):
    run = _run(tmp_path, sweep_logs=True)
    monkeypatch.setattr(run, "measure_log_sweeps", _raise(exc))
    with pytest.raises(type(exc)):
        run.run()
    assert _saved(tmp_path) == (status, error)


@pytest.mark.parametrize("exc, status, error", [
    (SlogqualError("zpool create: no such device"), "failed", "zpool create: no such device"),
    (KeyboardInterrupt(), "interrupted", None),
])
def test_a_pool_step_that_ends_the_run_is_saved_as_its_end(tmp_path, monkeypatch, exc, status, error):
    run = _run(tmp_path, sweep_logs=False)
    monkeypatch.setattr(run, "_pool", _raise(exc))
    with pytest.raises(type(exc)):
        run.run()
    assert _saved(tmp_path) == (status, error)


def test_a_result_file_that_cannot_be_written_mid_run_is_not_written_again(tmp_path, monkeypatch):
    run = _run(tmp_path, sweep_logs=False)
    saves = []
    monkeypatch.setattr(run, "_pool", _raise(ResultWriteError("cannot write the result file r.json: EROFS", {})))
    real_save = run.save
    monkeypatch.setattr(run, "save", lambda: (saves.append(run.result.status), real_save()))
    with pytest.raises(ResultWriteError):
        run.run()
    assert saves == ["running"] and _saved(tmp_path) == ("running", None)  # the run's first save, and no other


@pytest.mark.parametrize("where", ["skipped", "variants", "reset"])
def test_an_interrupt_between_the_first_save_and_the_first_pool_is_saved_as_interrupted(tmp_path, monkeypatch, where):
    """The window a sweep was caught in once (a cold CI run, 2026-11-30: exit 130, its document "running"): after the
    run first wrote "running", before any block that measures — the plan and the progress line. The file says
    "interrupted"."""
    run = _run(tmp_path, sweep_logs=False)

    def interrupt(*_args, **_kw):
        assert _saved(tmp_path) == ("running", None)  # after the first save, as the signal was
        raise KeyboardInterrupt

    if where == "reset":
        monkeypatch.setattr(Progress, "reset", interrupt)
    else:
        monkeypatch.setattr(run, where, interrupt)
    with pytest.raises(KeyboardInterrupt):
        run.run()
    assert _saved(tmp_path) == ("interrupted", None)
