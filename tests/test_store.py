"""The result store: recording, listing, dedupe, and clear one-line errors for corrupt or locked files;
end to end: history lists repeated runs, compare --baseline flags a slowed device, a broken store costs
no result file."""

import json
import os
import sqlite3

import pytest

from conftest import fixture_path, load, need, slogqual
from slogqual.results import SweepResult
from slogqual.results.qualification import Identity
from slogqual.results.scenario import ScenarioResult
from slogqual.store import Store, StoreError, default_path
from slogqual.tools.nbdkit import NbdServer


def sweep(model, serial, mean, **kw):
    """sweep_doc, typed: what the store records."""
    return SweepResult.from_dict(sweep_doc(model, serial, mean, **kw))


def sweep_doc(model, serial, mean, path="/dev/x", mode="flush", sd=None, **environment):
    """A one-size sweep of 100 IOs; sd: their spread (none recorded by default); environment: e.g.
    kernel="6.1.0" (a key that decides which stored runs a baseline pools)."""
    lat = {"mean": mean, "p99": mean * 2, **({"stddev": sd} if sd is not None else {})}
    return {"schema": "slogqual.sweep/1", "source": "slogqual", "status": "complete", "error": None,
            "target": {"path": path, "kind": "block", "size": 1 << 30},
            "device": {"model": model, "serial": serial, "firmware": "F1", "class": "nvme"},
            "params": {"mode": mode, "sizes": [4096]},
            "environment": {"started": f"2026-11-22T00:00:{int(mean) % 60:02d}", **environment},
            "notes": [], "warnings": [],
            "points": [{"size": 4096, "ios": 100, "lat_us": lat, "iops": 1e6 / mean, "mbps": 4096 / mean}]}


def test_default_path_is_per_user_and_overridable(monkeypatch):
    monkeypatch.delenv("SLOGQUAL_STORE", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert default_path() == os.path.join(os.path.expanduser("~"), ".local", "share", "slogqual", "results.sqlite")
    monkeypatch.setenv("XDG_DATA_HOME", "/x")
    assert default_path() == "/x/slogqual/results.sqlite"
    monkeypatch.setenv("SLOGQUAL_STORE", "/y/s.db")
    assert default_path() == "/y/s.db"


def test_record_list_and_dedupe(tmp_path):
    with Store(str(tmp_path / "s.sqlite")) as st:
        a = st.record(sweep("M1", "S1", 50.0))
        b = st.record(sweep("M1", "S2", 55.0))
        c = st.record(sweep("M2", "S3", 500.0))
        assert a and b and c and len({a, b, c}) == 3
        assert st.record(sweep("M1", "S1", 50.0)) is None  # the same document twice: stored once
        assert [r.serial for r in st.runs(model="M1")] == ["S1", "S2"]
        assert [r.model for r in st.runs(serial="S3")] == ["M2"]
        r = st.runs(model="M2")[0]
        assert (r.kind, r.firmware, r.device_class, r.target) == ("sweep", "F1", "nvme", "/dev/x")
        assert "4K mean 500.0 µs" in r.summary
        assert st.document(c)["points"][0]["lat_us"]["mean"] == 500.0
        row = st.conn.execute("SELECT size, mean_us, iops FROM points WHERE run_id = ?", (c,)).fetchone()
        assert tuple(row) == (4096, 500.0, 2000.0)
        with pytest.raises(StoreError):  # only a typed result document is recorded
            st.record(sweep_doc("M1", "S4", 50.0))


def test_a_stored_document_nested_too_deeply_is_one_store_error_line(tmp_path):
    # synthetic (a hand edit or another tool could leave it; slogqual never writes one): a row whose
    # document is arrays nested past what Python's JSON decoder follows
    with Store(str(tmp_path / "s.sqlite")) as st:
        run_id = st.record(sweep("M1", "S1", 50.0))
        st.conn.execute("UPDATE runs SET document = ? WHERE id = ?", ("[" * 100_000 + "]" * 100_000, run_id))
        with pytest.raises(StoreError) as exc:
            st.document(run_id)
    assert str(exc.value) == (f"result store {tmp_path / 's.sqlite'}: run {run_id} holds no readable JSON document "
                              "(nested too deeply)")


def test_identity_given_by_the_user_fills_only_what_is_missing(tmp_path):
    with Store(str(tmp_path / "s.sqlite")) as st:
        st.record(sweep(None, None, 50.0), identity=Identity(model="LABEL", serial="L1", device_class="ignored-when-known"))
        r = st.runs()[0]
        assert (r.model, r.serial, r.device_class) == ("LABEL", "L1", "nvme")


def test_corrupt_store_is_one_clear_line(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not an SQLite database, it is a text file that got in the way\n" * 20)
    with pytest.raises(StoreError) as exc:
        Store(str(bad)).open()
    msg = str(exc.value)
    assert "\n" not in msg and str(bad) in msg and "not a database" in msg and "move the file aside" in msg


def test_locked_store_is_one_clear_line(tmp_path):
    path = str(tmp_path / "s.sqlite")
    Store(path).open().close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        st = Store(path, timeout=0.2)
        with pytest.raises(StoreError) as exc:
            st.open()
            st.record(sweep("M", "S", 10.0))
        assert "locked" in str(exc.value) and path in str(exc.value) and "\n" not in str(exc.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_history_cli_on_a_corrupt_store(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"garbage" * 500)
    proc = slogqual("history", "--store", bad)
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1 and "not a database" in proc.stderr


# --- end to end on nbdkit targets ----------------------------------------------------------------

PROFILE = """\
name = "store-test"
sizes = ["4k"]
[[criterion]]
check = "lat_us.mean @ 4k <= 100000"
"""
FAST = ["--round-runtime", "0.2", "--max-rounds", "0", "--runtime", "0.3", "--settle", "0", "--quiet", "--no-html"]


def _server(delay=None):
    return NbdServer(plugin="memory", plugin_args=["size=64M"], filters=["delay"] if delay else [],
                     filter_args={"wdelay": delay} if delay else {})


@pytest.fixture
def profile(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text(PROFILE)
    return p


def _qualify(uri, out, profile, store, *extra, env=None):
    return slogqual("qualify", uri, "--profile", profile, "--out", out, "--store", store, "--model", "NBD-Q",
                    "--serial", "unit-1", *FAST, *extra, env=env)


@pytest.mark.integration
@need("fio", "nbdkit")
def test_corrupt_or_locked_store_costs_no_result(tmp_path, profile):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not sqlite " * 400)
    with _server() as srv:
        proc = _qualify(srv.uri, tmp_path / "o1", profile, bad)
    assert proc.returncode == 0  # the verdict decides the exit code; the store error is said loudly
    errors = [ln for ln in proc.stderr.splitlines() if "result store" in ln]
    assert len(errors) == 1 and str(bad) in errors[0] and "not a database" in errors[0]
    doc = load(tmp_path / "o1" / "nbd.qualification.json")
    assert doc["verdict"] == "pass" and doc["store"]["recorded"] is False and "not a database" in doc["store"]["error"]
    assert os.path.exists(tmp_path / "o1" / "nbd.sweep.json")

    locked = tmp_path / "locked.sqlite"
    Store(str(locked)).open().close()
    holder = sqlite3.connect(str(locked), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with _server() as srv:
            proc = _qualify(srv.uri, tmp_path / "o2", profile, locked)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    errors = [ln for ln in proc.stderr.splitlines() if "result store" in ln]
    assert proc.returncode == 0 and len(errors) == 1 and "locked" in errors[0]
    doc = load(tmp_path / "o2" / "nbd.qualification.json")
    assert doc["verdict"] == "pass" and "locked" in doc["store"]["error"]
    with Store(str(locked)) as st:
        assert st.runs() == []  # nothing half-written


def test_reimporting_the_same_log_is_the_same_result(tmp_path):
    a = sweep_doc("M", "S", 10.0)
    a["environment"]["imported_at"] = "2026-11-22T01:00:00+00:00"
    b = json.loads(json.dumps(a))
    b["environment"]["imported_at"] = "2026-11-22T02:00:00+00:00"
    with Store(str(tmp_path / "s.sqlite")) as st:
        assert st.record(SweepResult.from_dict(a)) and st.record(SweepResult.from_dict(b)) is None
        assert len(st.runs()) == 1


def test_a_scenario_result_is_filed_under_its_host_start_and_first_log_s_slot(tmp_path):
    """The recorded scenario result (tests/fixtures/qualify) read as its typed document: the row's host and
    start are its environment's, its device the first --log candidate. The slot: CONSTRUCTED, a PCI address
    given to that candidate's link (the lab's devices have none); the store's backfill of old rows reads
    the document alone and finds the same."""
    from slogqual.store.documents import filed

    doc = load(fixture_path("qualify", "scenario-iscsi-4k-randwrite-lab-quick.json"))
    slotted = json.loads(json.dumps(doc))
    first = slotted["pool"]["log"][0]
    slotted["pool"]["devices"][first]["link"] = {"kind": "pcie", "address": "0000:00:04.0"}
    with Store(str(tmp_path / "s.sqlite")) as st:
        st.record(ScenarioResult.from_dict(doc))
        st.record(ScenarioResult.from_dict(slotted))
        rows = st.runs(kind="scenario")
    assert [(r.host, r.started, r.target, r.slot) for r in rows] == \
        [("slogqual-lab", doc["environment"]["started"], first, None),
         ("slogqual-lab", doc["environment"]["started"], first, "0000:00:04.0")]
    f = filed(ScenarioResult.from_dict(slotted))
    assert (f.host, f.slot) == ("slogqual-lab", "0000:00:04.0")
