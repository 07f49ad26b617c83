"""Power-cut results in the result store, history and the report (issue #16).

The documents are real `slogqual powercut` results (tests/fixtures/powercut/SOURCES.md: an emulated
cache=unsafe run that lost everything, an emulated run without a cache that lost nothing, and what
`powercut verify` wrote for an emulated writeback run); the end-to-end tests at the bottom run
`powercut run --emulate` here. Where a document is changed to build a case, the test says so.
"""

import copy
import json
import os
import subprocess
import sys
import time

import pytest

from conftest import FIXTURES, ROOT, load, need, slogqual
from slogqual.analysis import powercut as A
from slogqual.report import powercut as powercut_words
from slogqual.results.powercut import PowercutResult
from slogqual.store import KIND_POWERCUT, Store
from test_store import sweep_doc

PC = os.path.join(FIXTURES, "powercut")
UNSAFE = os.path.join(PC, "powercut-emulate-unsafe.json")
NONE = os.path.join(PC, "powercut-emulate-none.json")
VERIFY = os.path.join(PC, "powercut-verify-journal.json")
SCENARIO = os.path.join(FIXTURES, "qualify", "scenario-iscsi-4k-randwrite-lab-quick.json")


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    """A fresh, empty store of each backend (PostgreSQL: tests/pgserver.py)."""
    if request.param == "sqlite":
        return str(tmp_path / "s.sqlite")
    return request.getfixturevalue("pg_url")


# --- the words ------------------------------------------------------------------------------------------

def test_method_is_said_from_the_document_and_counts_from_the_cycles():
    def typed(doc):
        return PowercutResult.from_dict(doc)

    assert A.method_of(typed(load(UNSAFE))) == A.METHOD_EMULATION and A.method_of(typed(load(NONE))) == A.METHOD_EMULATION
    assert A.method_of(typed(load(VERIFY))) == A.METHOD_EXTERNAL  # verify did not make the cut: never "real"
    real = load(NONE)  # constructed: the same cycles as if the user's --cut-cmd had cut a device
    real["method"].update(cut="--cut-cmd ipmitool chassis power off", emulation=None, emulation_means=None)
    real["target"]["kind"] = "device"
    assert A.method_of(typed(real)) == A.METHOD_REAL
    doc = load(UNSAFE)
    assert powercut_words.summary(typed(doc)) == ("emulated (nbdkit cache=unsafe): 2 of 2 cycle(s), 48 acknowledged, "
                                                  "0 intact, 48 lost (torn 0, stale 0, missing 48)")
    tampered = copy.deepcopy(doc)  # constructed: totals that disagree with the cycles are not believed
    tampered["totals"] = {k: 0 for k in tampered["totals"]}
    assert A.totals(typed(tampered)) == A.totals(typed(doc)) == doc["totals"]
    text, tone = powercut_words.verdict_words(typed(load(NONE)))
    assert text.startswith("PASS (emulated)") and tone == "neutral"  # an emulated pass proves no device safe
    assert powercut_words.verdict_words(typed(real))[1] == "good" and powercut_words.verdict_words(typed(doc)) == (
        "FAIL (emulated): 48 of 48 acknowledged records lost", "bad")


# --- the store ------------------------------------------------------------------------------------------

def test_import_records_powercut_runs_once_on_both_backends(store_url):
    first = slogqual("import", "json", UNSAFE, NONE, VERIFY, "--store", store_url)
    assert first.returncode == 0 and first.stderr.count("powercut recorded as run") == 3, first.stderr
    again = slogqual("import", "json", UNSAFE, NONE, VERIFY, "--store", store_url)
    assert again.returncode == 0 and again.stderr.count("already in the store") == 3, again.stderr
    with Store(store_url) as st:
        runs = st.runs(kind=KIND_POWERCUT)
        assert len(runs) == 3 and len(st.runs()) == 3
        by_path = {os.path.basename(r.path): r for r in runs}
        unsafe = by_path["powercut-emulate-unsafe.json"]
        assert (unsafe.verdict, unsafe.status, unsafe.host) == ("fail", "complete", "vm")
        assert unsafe.target == load(UNSAFE)["target"]["path"] and unsafe.started == load(UNSAFE)["started"]
        assert "emulated" in unsafe.summary and "48 lost" in unsafe.summary
        assert by_path["powercut-emulate-none.json"].verdict == "pass"
        assert by_path["powercut-verify-journal.json"].summary.startswith("external cut, verified afterwards")
        assert st.document(unsafe.id) == load(UNSAFE)  # the whole document is kept


def test_a_malformed_powercut_document_is_refused_before_anything_is_stored(tmp_path):
    doc = load(UNSAFE)  # constructed: the verdict of a run that lost 48 records turned into a pass
    doc["verdict"] = "pass"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    store = tmp_path / "s.sqlite"
    proc = slogqual("import", "json", NONE, bad, "--store", store)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "verdict" in proc.stderr and "Traceback" not in proc.stderr
    assert json.loads(slogqual("history", "--store", store, "--json").stdout) == []


def test_history_shows_a_devices_powercut_runs_next_to_its_sweeps(tmp_path):
    """Constructed: the real unsafe run given the device record of the lab's SATA SSD (the SLOG of the
    real scenario fixture), and a constructed sweep of that model; the scenario is the real one."""
    log = load(SCENARIO)["pool"]["devices"]["/dev/sdc"]
    pc = load(UNSAFE)
    pc["device"] = log
    pc_file, sweep_file = tmp_path / "pc.json", tmp_path / "sweep.json"
    pc_file.write_text(json.dumps(pc))
    sweep_file.write_text(json.dumps(sweep_doc(log["model"], log["serial"], 120.0)))
    other = tmp_path / "other.json"
    other.write_text(json.dumps(sweep_doc("ANOTHER MODEL", "X1", 50.0)))
    store = tmp_path / "s.sqlite"
    proc = slogqual("import", "json", pc_file, sweep_file, SCENARIO, other, NONE, "--store", store)
    assert proc.returncode == 0, proc.stderr
    table = slogqual("history", "--store", store, "--model", log["model"]).stdout
    lines = [ln for ln in table.splitlines()[2:] if ln.strip()]
    assert sorted(ln.split()[2] for ln in lines) == ["powercut", "scenario", "sweep"], table
    row = next(ln for ln in lines if " powercut " in ln)
    assert " fail " in row and "emulated (nbdkit cache=unsafe)" in row and "48 acknowledged" in row \
        and "48 lost" in row and log["serial"] in row
    only = json.loads(slogqual("history", "--store", store, "--kind", "powercut", "--json").stdout)
    assert sorted(r["verdict"] for r in only) == ["fail", "pass"]


# --- the report -----------------------------------------------------------------------------------------

def test_markdown_report_says_method_cycles_counts_and_verdict(tmp_path):
    out = tmp_path / "r.md"
    proc = slogqual("report", UNSAFE, NONE, VERIFY, "-o", out)
    assert proc.returncode == 0, proc.stderr
    md = out.read_text()
    assert "FAIL (emulated): 48 of 48 acknowledged records lost" in md
    assert "PASS (emulated): all 48 acknowledged records intact after 2 cut(s)" in md
    assert md.count("EMULATED: nbdkit served a backing file") == 2
    assert "| 1 | 24 | 0 | 0 | 0 | 24 | 24 |" in md and "| total | 48 | 0 | 0 | 0 | 48 | 48 |" in md
    assert "| 1 | 24 | 24 | 0 | 0 | 0 | 0 |" in md  # the run without a cache: all intact
    assert "First lost records (10 of 48)" in md and "| 1 | 0 | 0 | 4096 | missing |" in md
    # what verify wrote: its cut is external, whether real or emulated is not claimed
    assert "external cut, verified afterwards" in md and "| method | real power cut |" not in md
    assert "whether it was a real power cut or an emulated one is not recorded" in md
    assert "## Charts" not in md  # no sweep, no chart to draw


def test_html_report_of_a_sweep_and_a_powercut(tmp_path):
    sweep = tmp_path / "sweep.json"
    sweep.write_text(json.dumps(sweep_doc("MODEL-X", "S1", 100.0)))  # constructed sweep beside the real cut
    out = tmp_path / "r.html"
    proc = slogqual("report", sweep, UNSAFE, "-o", out)
    assert proc.returncode == 0, proc.stderr
    html = out.read_text()
    assert "<svg" in html and 'class="powercut"' in html and 'class="device"' in html
    assert "FAIL (emulated): 48 of 48 acknowledged records lost" in html
    assert '<div class="verdict bad"><b>Power-cut verdict</b>' in html
    assert "slogqual.sweep/1, slogqual.powercut/1" in html


# --- powercut run / verify record into the store ---------------------------------------------------------

EMULATION = [pytest.mark.integration, need("nbdkit", "nbdfuse", "umount"),
             pytest.mark.skipif(os.geteuid() != 0, reason="needs root (FUSE mounts)"),
             pytest.mark.skipif(not os.path.exists("/dev/fuse"), reason="needs /dev/fuse (nbdfuse)")]


def _apply(marks):
    def wrap(f):
        for m in reversed(marks):
            f = m(f)
        return f
    return wrap


@_apply(EMULATION)
def test_powercut_run_and_verify_record_into_the_store_they_are_given(tmp_path):
    """run (with a recorder process that keeps a journal) records its result in --store; verify of the
    same run from the journal records its own, with the same counts; nothing goes to the default store."""
    store = tmp_path / "lab.sqlite"
    env = {"XDG_DATA_HOME": str(tmp_path / "home"), "SLOGQUAL_STORE": ""}
    ready, journal = tmp_path / "ready", tmp_path / "journal.jsonl"
    rec = subprocess.Popen([sys.executable, "-m", "slogqual", "powercut", "record", "--listen", "127.0.0.1:0",
                            "--journal", str(journal), "--ready-file", str(ready)],
                           env=dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not ready.exists():
            assert rec.poll() is None and time.monotonic() < deadline, "the recorder did not start"
            time.sleep(0.05)
        run = slogqual("powercut", "run", tmp_path / "back.img", "--emulate", "unsafe", "--cycles", "1",
                       "--cut-after", "16", "--size", "16m", "--quiet", "-o", tmp_path / "r.json", "--recorder",
                       ready.read_text().strip(), "--store", store, env=env, timeout=180)
    finally:
        rec.terminate()
        rec.wait(timeout=10)
    assert run.returncode == 1, run.stderr
    doc = load(tmp_path / "r.json")
    runs = json.loads(slogqual("history", "--store", store, "--json").stdout)
    assert len(runs) == 1 and runs[0]["kind"] == "powercut" and runs[0]["verdict"] == "fail"
    assert runs[0]["summary"].startswith("emulated (nbdkit cache=unsafe)")
    assert f"{doc['totals']['acknowledged']} acknowledged" in runs[0]["summary"]
    with Store(str(store)) as st:
        assert st.document(runs[0]["id"]) == doc
    again = slogqual("import", "json", tmp_path / "r.json", "--store", store)
    assert "already in the store" in again.stderr  # the run is its document: no second row
    ver = slogqual("powercut", "verify", tmp_path / "back.img", "--run-id", doc["run_id"], "--journal", journal,
                   "--store", store, "--json", env=env)
    assert ver.returncode == 1, ver.stderr
    runs = json.loads(slogqual("history", "--store", store, "--json").stdout)
    assert len(runs) == 2 and runs[1]["summary"].startswith("external cut, verified afterwards")
    assert runs[1]["verdict"] == "fail" and json.loads(ver.stdout)["totals"] == doc["totals"]
    assert not (tmp_path / "home").exists()  # nothing went to the default store


@_apply(EMULATION)
def test_a_bad_store_is_refused_in_one_line_before_anything_is_written(tmp_path):
    back = tmp_path / "back.img"
    proc = slogqual("powercut", "run", back, "--emulate", "none", "--cut-after", "8", "--size", "16m", "--quiet",
                    "-o", tmp_path / "r.json", "--store", "mysql://db/x")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "store" in proc.stderr
    assert not back.exists() and not (tmp_path / "r.json").exists()
    store = tmp_path / "s.sqlite"
    Store(str(store)).open().close()
    before = store.read_bytes()
    proc = slogqual("powercut", "run", store, "--emulate", "none", "--quiet", "-o", tmp_path / "r.json",
                    "--store", store)
    assert proc.returncode == 2 and "result store" in proc.stderr and store.read_bytes() == before
    proc = slogqual("powercut", "run", back, "--emulate", "none", "--quiet", "-o", store, "--force", "--store", store)
    assert proc.returncode == 2 and "result store" in proc.stderr and not back.exists()
    proc = slogqual("powercut", "verify", back, "--run-id", "0" * 32, "--journal", tmp_path / "j", "--store",
                    "mysql://db/x")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "store" in proc.stderr
