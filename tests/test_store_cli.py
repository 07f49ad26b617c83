"""The store through the commands that share it: import json, history, compare --baseline on real
nbdkit targets whose delay is raised between runs."""

import json
import os

import pytest

from conftest import need, slogqual
from slogqual.results import schema
from test_store import FAST, PROFILE, _server, profile, sweep_doc  # noqa: F401 (profile: a fixture)



def _qualify(uri, out, profile, store, *extra):
    return slogqual("qualify", uri, "--profile", profile, "--out", out, "--store", store, "--model", "NBD-Q",
                    "--serial", "unit-1", *FAST, *extra)


def two_sweep_files(tmp_path):
    """Two sweep results of MODEL-X units S0 and S1 (means 50 and 52 µs)."""
    files = []
    for i, mean in enumerate((50.0, 52.0)):
        p = tmp_path / f"r{i}.json"
        p.write_text(json.dumps(sweep_doc("MODEL-X", f"S{i}", mean)))
        files.append(p)
    return files


def test_import_json_and_history_cli(tmp_path):
    files = two_sweep_files(tmp_path)
    store = tmp_path / "s.sqlite"
    proc = slogqual("import", "json", *files, "--store", store)
    assert proc.returncode == 0, proc.stderr
    proc = slogqual("import", "json", files[0], "--store", store)
    assert proc.returncode == 0 and "already in the store" in proc.stderr
    proc = slogqual("history", "--model", "MODEL-X", "--store", store, "--json")
    runs = json.loads(proc.stdout)
    assert [r["serial"] for r in runs] == ["S0", "S1"] and all(r["kind"] == "sweep" for r in runs)


def test_compare_baseline_pools_like_runs_names_the_rest_and_judges_significance(tmp_path):
    """Three stored sweeps of MODEL-X, one on another kernel: the baseline pools the two like runs (200 IOs),
    names the third with its reason, and calls a small difference "not significant"."""
    store = tmp_path / "s.sqlite"
    stored = [sweep_doc("MODEL-X", "S0", 100.0, sd=10.0, kernel="6.1.0"),
              sweep_doc("MODEL-X", "S1", 101.0, sd=10.0, kernel="6.1.0"),
              sweep_doc("MODEL-X", "S2", 40.0, sd=10.0, kernel="6.8.0")]
    files = []
    for i, doc in enumerate(stored):
        files.append(tmp_path / f"r{i}.json")
        files[-1].write_text(json.dumps(doc))
    assert slogqual("import", "json", *files, "--store", store).returncode == 0
    new, slow = tmp_path / "new.json", tmp_path / "slow.json"
    new.write_text(json.dumps(sweep_doc("MODEL-X", "S3", 102.0, sd=10.0, kernel="6.1.0")))
    slow.write_text(json.dumps(sweep_doc("MODEL-X", "S3", 150.0, sd=10.0, kernel="6.1.0")))
    proc = slogqual("compare", "--baseline", "model:MODEL-X", new, "--store", store)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "baseline: 2 stored sweep(s) of model:MODEL-X, pooled" in out
    assert "pooled run 1 (" in out and "pooled run 2 (" in out
    assert "left out run 3 (" in out and "serial S2): kernel 6.8.0 (new: 6.1.0)" in out
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("4K"))
    assert "200/100" in line and line.rstrip().endswith("not significant")
    proc = slogqual("compare", "--baseline", "model:MODEL-X", slow, "--store", store, "--json")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["schema"] == schema.COMPARE and doc["runs"] == 2 and doc["regressions"] == 1
    assert [x["reasons"] for x in doc["left_out"]] == [["kernel 6.8.0 (new: 6.1.0)"]]
    assert doc["rows"][0]["a"] == pytest.approx(100.5) and doc["rows"][0]["a_latency"]["n"] == 200
    proc = slogqual("compare", "--baseline", "model:MODEL-X", slow, "--store", store, "--metric", "p99")
    assert proc.returncode == 2 and "percentiles" in proc.stderr
    # nothing stored was measured like a run on a third kernel: exit 2, and why
    other = tmp_path / "other.json"
    other.write_text(json.dumps(sweep_doc("MODEL-X", "S4", 100.0, sd=10.0, kernel="6.9.0")))
    proc = slogqual("compare", "--baseline", "model:MODEL-X", other, "--store", store)
    assert proc.returncode == 2 and "none of the 3 stored sweep(s)" in proc.stderr and "kernel 6.1.0" in proc.stderr


@pytest.mark.integration
@need("fio", "nbdkit")
def test_history_lists_runs_and_compare_baseline_flags_the_slowed_device(tmp_path, profile):
    store = tmp_path / "store.sqlite"
    for i in range(2):
        with _server() as srv:  # the same target, fresh each run, as a lab re-tests a device
            proc = _qualify(srv.uri, tmp_path / f"base{i}", profile, store)
        assert proc.returncode == 0, proc.stderr
    proc = slogqual("history", "--model", "NBD-Q", "--store", store)
    assert proc.returncode == 0
    lines = [ln for ln in proc.stdout.splitlines() if "NBD-Q" in ln]
    assert len(lines) == 4 and sum(" sweep " in ln for ln in lines) == 2
    assert sum(" qualification " in ln for ln in lines) == 2 and all("unit-1" in ln for ln in lines)
    # the delay is raised: the device now takes 20 ms more per write (2 ms was lost in the noise of a host at load
    # ~10, whose undelayed device took 4.6 ms a write)
    with _server("20ms") as srv:
        proc = _qualify(srv.uri, tmp_path / "slow", profile, store)
    assert proc.returncode == 0, proc.stderr  # still within this loose profile
    new = tmp_path / "slow" / "nbd.sweep.json"
    proc = slogqual("compare", "--baseline", "model:NBD-Q", new, "--store", store)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "REGRESSION" in proc.stdout and "2 stored sweep(s)" in proc.stdout
    # a baseline run compared with its own model is within the spread (itself left out)
    proc = slogqual("compare", "--baseline", "model:NBD-Q", tmp_path / "base1" / "nbd.sweep.json", "--store", store,
                    "--json")
    doc = json.loads(proc.stdout)
    assert doc["runs"] == 2 and any("identical" in n for n in doc["notes"])  # the slow run and base0 remain
    # a qualification document works as the new result too
    proc = slogqual("compare", "--baseline", "model:NBD-Q", tmp_path / "slow" / "nbd.qualification.json",
                    "--store", store)
    assert proc.returncode == 1
    proc = slogqual("compare", "--baseline", "model:NOPE", new, "--store", store)
    assert proc.returncode == 2 and "no stored sweeps" in proc.stderr


def test_import_diskinfo_fills_the_store(tmp_path):
    from conftest import fixture_path
    store = tmp_path / "s.sqlite"
    log = fixture_path("diskinfo", "freebsd-r320683-intel710-samsung950pro.padded.txt")
    proc = slogqual("import", "diskinfo", log, "-o", tmp_path / "r.json", "--store", store)
    assert proc.returncode == 0, proc.stderr
    runs = json.loads(slogqual("history", "--store", store, "--json").stdout)
    assert len(runs) == 2 and all(r["kind"] == "sweep" and r["source"] == "diskinfo" for r in runs)
    assert sorted(os.path.basename(r["path"]) for r in runs) == ["r-1.json", "r-2.json"]
    # the same log again: nothing new; --no-store: nothing at all
    slogqual("import", "diskinfo", log, "-o", tmp_path / "again.json", "--store", store)
    assert len(json.loads(slogqual("history", "--store", store, "--json").stdout)) == 2
    other = tmp_path / "other.sqlite"
    slogqual("import", "diskinfo", log, "-o", tmp_path / "n.json", "--store", other, "--no-store")
    assert not other.exists()


def test_unreadable_stored_documents_and_impossible_ids_are_one_line(tmp_path):
    """A row whose document is not JSON (a hand edit, another tool) and an id beyond SQLite's integers:
    one line and the store's exit code, not a traceback — for history --show and compare --baseline. An id the
    store does not hold is what the user asked for: bad input, exit 2."""
    import sqlite3

    files = two_sweep_files(tmp_path)
    store = tmp_path / "s.sqlite"
    assert slogqual("import", "json", *files, "--store", store).returncode == 0
    for run_id in ("99999999999999999999", "0", "-3"):  # beyond the store's 64-bit ids: refused as parsed
        proc = slogqual("history", "--store", store, "--show", run_id)
        assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
            f"slogqual: error: argument --show: '{run_id}' is out of range (allowed: 1 to {2 ** 63 - 1})"], proc.stderr
    proc = slogqual("history", "--store", store, "--show", str(2 ** 63 - 1))  # an id the store could hold
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        f"slogqual: result store {store}: no run {2 ** 63 - 1}"], proc.stderr
    with sqlite3.connect(store) as db:
        db.execute("UPDATE runs SET document = 'not json {' WHERE id = 1")
    proc = slogqual("history", "--store", store, "--show", "1")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "run 1 holds no readable JSON document" in proc.stderr
    proc = slogqual("compare", "--baseline", "model:MODEL-X", files[1], "--store", store)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "run 1 holds no readable JSON document" in proc.stderr


@pytest.mark.integration
def test_sweep_records_into_the_store_it_is_given_and_refuses_a_bad_one_first(tmp_path):
    """sweep --store PATH records there (not in the default store); a store that names nothing usable
    is one line, exit 2, before any target is touched; -o onto the given store is refused."""
    target = tmp_path / "t.img"
    target.write_bytes(b"\0" * (8 << 20))
    store = tmp_path / "lab.sqlite"
    env = {"XDG_DATA_HOME": str(tmp_path / "default-home")}
    proc = slogqual("sweep", target, "--sizes", "4k", "--runtime", "0.2", "--settle", "0", "--quiet",
                    "-o", tmp_path / "r.json", "--store", store, env=env)
    assert proc.returncode == 0, proc.stderr
    proc = slogqual("history", "--store", store, "--json", env=env)
    runs = json.loads(proc.stdout)
    assert len(runs) == 1 and runs[0]["kind"] == "sweep"
    assert not (tmp_path / "default-home").exists()  # nothing went to the default store
    before = target.read_bytes()[:4096]
    proc = slogqual("sweep", target, "--sizes", "4k", "--runtime", "0.2", "--quiet", "-o", tmp_path / "r2.json",
                    "--store", "mysql://db/x", env=env)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "store" in proc.stderr
    assert not (tmp_path / "r2.json").exists() and target.read_bytes()[:4096] == before
    proc = slogqual("sweep", target, "--sizes", "4k", "--quiet", "-o", store, "--force", "--store", store, env=env)
    assert proc.returncode == 2 and "result store" in proc.stderr
