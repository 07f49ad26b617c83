"""The result store on both backends: a real PostgreSQL (tests/pgserver.py starts Debian's server on a
unix socket, as the 'postgres' user) and SQLite. Migrations once and safely, concurrent writers that lose
and duplicate nothing, the same answers from import / history / compare --baseline on both, a role that
may only insert and select, and one clear line (never a password) for every bad store."""

import json
import os
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import FIXTURES, ROOT, need, slogqual
from slogqual.results import SweepResult
from slogqual.store import Store, StoreError, digest_of
from slogqual.store import backends
from test_store import sweep_doc


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    """A fresh, empty store of each backend."""
    if request.param == "sqlite":
        return str(tmp_path / "s.sqlite")
    return request.getfixturevalue("pg_url")


def versions(url):
    with Store(url) as st:
        with st._tx(write=False) as tx:
            return [r["version"] for r in tx.query("SELECT version FROM schema_version ORDER BY version")]


def test_a_fresh_store_is_created_once_and_then_only_read(store_url):
    proc = slogqual("store", "migrate", "--store", store_url)
    assert proc.returncode == 0 and "schema version 2 (created)" in proc.stdout, proc.stderr
    proc = slogqual("store", "migrate", "--store", store_url)
    assert "schema version 2 (up to date)" in proc.stdout
    assert versions(store_url) == [1, 2]  # one row per migration, however often it was opened
    with Store(store_url) as st:
        assert st.migrated == (2, 2) and st.schema_version() == backends.SCHEMA_VERSION


def test_a_store_of_a_newer_schema_says_upgrade_slogqual(store_url):
    Store(store_url).open().close()
    with Store(store_url) as st:
        with st._tx() as tx:
            tx.execute("INSERT INTO schema_version (version) VALUES (?)", (7,))
    proc = slogqual("history", "--store", store_url)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert "schema version 7 is newer than this slogqual's (2): upgrade slogqual" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_sqlite_store_of_version_1_is_migrated_and_its_hosts_filled_in(tmp_path):
    path = str(tmp_path / "old.sqlite")
    conn = sqlite3.connect(path, isolation_level=None)  # the schema slogqual wrote before schema_version
    for stmt in backends._statements(backends._V1, "sqlite"):
        conn.execute(stmt)
    conn.execute("PRAGMA user_version = 1")
    doc = sweep_doc("M", "S", 50.0, host="labhost-7")
    conn.execute("INSERT INTO runs (kind, model, serial, digest, document) VALUES ('sweep', 'M', 'S', ?, ?)",
                 (digest_of(doc), json.dumps(doc)))
    conn.close()
    with Store(path) as st:
        assert st.migrated == (1, 2)
        assert [(r.host, r.serial) for r in st.runs()] == [("labhost-7", "S")]
        assert st.record(SweepResult.from_dict(doc), as_read=doc) is None  # the same run, already there
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 2  # older slogqual refuses it


# --- concurrency ---------------------------------------------------------------------------------------

WORKER = """
import os, sys, time
sys.path.insert(0, {root!r})
go = sys.argv[1]
while not os.path.exists(go):
    time.sleep(0.005)
from slogqual.cli import main
sys.exit(main(sys.argv[2:]))
"""


def test_eight_importers_and_a_migration_at_once_store_400_runs_exactly(store_url, tmp_path):
    """8 processes import 50 runs each into a fresh store at the same moment while a ninth runs the
    migration: all 400 stored once, none lost, none twice; importing them again stores nothing."""
    files, expected = [], set()
    for p in range(8):
        mine = []
        for i in range(50):
            doc = sweep_doc("CONC", f"P{p}-{i:02d}", 40.0 + p + i / 100)
            f = tmp_path / f"p{p}-{i}.json"
            f.write_text(json.dumps(doc))
            expected.add(digest_of(doc))
            mine.append(str(f))
        files.append(mine)
    go = tmp_path / "go"
    script = WORKER.format(root=ROOT)
    argvs = [["import", "json", *mine, "--store", store_url] for mine in files]
    argvs.insert(4, ["store", "migrate", "--store", store_url])
    procs = [subprocess.Popen([sys.executable, "-c", script, str(go), *a], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for a in argvs]
    time.sleep(1.0)  # every interpreter up and waiting
    go.write_text("go")
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 9, [o[1][-500:] for o in outs]
    recorded = [ln for _, err in outs for ln in err.splitlines() if "recorded as run" in ln]
    assert len(recorded) == 400 and len({ln.rsplit(" ", 1)[1] for ln in recorded}) == 400  # 400 distinct ids
    with Store(store_url) as st:
        runs = st.runs()
        assert len(runs) == 400 and {r.digest for r in runs} == expected
        assert len(st.points([r.id for r in runs])) == 400
    assert versions(store_url) == [1, 2]
    again = slogqual("import", "json", *files[3], "--store", store_url)
    assert again.returncode == 0 and again.stderr.count("already in the store") == 50
    with Store(store_url) as st:
        assert len(st.runs()) == 400


# --- the same answers on both --------------------------------------------------------------------------

def _fixture_files(tmp_path):
    """Sweeps of MODEL-X (three like runs, one on another kernel), a real qualification and a real
    scenario result from tests/fixtures."""
    files = []
    for i, (mean, kernel) in enumerate(((100.0, "6.1.0"), (101.0, "6.1.0"), (40.0, "6.8.0"), (99.0, "6.1.0"))):
        f = tmp_path / f"r{i}.json"
        f.write_text(json.dumps(sweep_doc("MODEL-X", f"S{i}", mean, sd=10.0, kernel=kernel, host="h1")))
        files.append(str(f))
    files.append(os.path.join(FIXTURES, "qualify", "qualification-nbd-memory-952d1d3.json"))
    files.append(os.path.join(FIXTURES, "qualify", "scenario-iscsi-4k-randwrite-lab-quick.json"))
    return files


def _answers(url, files, new, tmp_path):
    out = {}
    first = slogqual("import", "json", *files, "--store", url)
    again = slogqual("import", "json", files[0], files[-1], "--store", url)
    out["import"] = (first.returncode, first.stderr, again.returncode, again.stderr)
    hist = slogqual("history", "--store", url, "--json")
    runs = json.loads(hist.stdout)
    for r in runs:
        r.pop("recorded")  # the moment of recording differs, nothing else may
    out["history"] = runs
    out["history_table"] = slogqual("history", "--store", url, "--model", "MODEL-X").stdout
    out["show"] = slogqual("history", "--store", url, "--show", "5").stdout
    for fmt in ((), ("--json",)):
        c = slogqual("compare", "--baseline", "model:MODEL-X", new, "--store", url, *fmt)
        out[f"compare{fmt}"] = (c.returncode, c.stdout, c.stderr)
    return out


def test_import_history_and_compare_give_the_same_answers_on_sqlite_and_postgresql(tmp_path, pg_url):
    files = _fixture_files(tmp_path)
    new = tmp_path / "new.json"
    new.write_text(json.dumps(sweep_doc("MODEL-X", "S9", 130.0, sd=10.0, kernel="6.1.0", host="h1")))
    lite = _answers(str(tmp_path / "s.sqlite"), files, str(new), tmp_path)
    pg = _answers(pg_url, files, str(new), tmp_path)
    assert lite["import"][1].count("recorded as run") == 6 and lite["import"][3].count("already in the store") == 2
    assert len(lite["history"]) == 6 and {r["kind"] for r in lite["history"]} == {"sweep", "scenario", "qualification"}
    assert lite["compare()"][0] == 1 and "REGRESSION" in lite["compare()"][1]  # 130 µs against a pool of ~100
    assert "left out run 3" in lite["compare()"][1]
    assert json.loads(lite["show"])["schema"] == "slogqual.qualification/1"
    assert [r["host"] for r in lite["history"] if r["kind"] == "sweep"] == ["h1"] * 4
    assert lite == pg


# --- roles, bad stores ------------------------------------------------------------------------------------

def test_a_role_that_may_only_insert_and_select_uses_a_migrated_store(pg_server, tmp_path):
    pg_server.sql(["DROP ROLE IF EXISTS sq_owner_t", "DROP ROLE IF EXISTS sq_lab_t"])
    pg_server.sql(["CREATE ROLE sq_owner_t LOGIN", "CREATE ROLE sq_lab_t LOGIN PASSWORD 'lab-secret-42'"])
    db = pg_server.new_database(owner="sq_owner_t")
    owner, lab = pg_server.url(db, "sq_owner_t"), pg_server.url(db, "sq_lab_t", "lab-secret-42")
    # before the owner has created the tables, the lab role is told what to do, in one line, no password
    proc = slogqual("history", "--store", lab)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "slogqual store migrate" in proc.stderr
    assert "lab-secret-42" not in proc.stderr + proc.stdout and "sq_lab_t:***@" in proc.stderr
    assert slogqual("store", "migrate", "--store", owner).returncode == 0
    pg_server.sql([f"GRANT CONNECT ON DATABASE {db} TO sq_lab_t", "GRANT USAGE ON SCHEMA public TO sq_lab_t",
                   "GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA public TO sq_lab_t"], database=db, user="sq_owner_t")
    f = tmp_path / "r.json"
    f.write_text(json.dumps(sweep_doc("M", "S1", 50.0, host="h1")))
    proc = slogqual("import", "json", f, "--store", lab)
    assert proc.returncode == 0 and "recorded as run 1" in proc.stderr, proc.stderr
    assert "lab-secret-42" not in proc.stderr
    proc = slogqual("history", "--store", lab, "--json")
    assert [r["serial"] for r in json.loads(proc.stdout)] == ["S1"]
    pg_server.sql(["REVOKE INSERT ON ALL TABLES IN SCHEMA public FROM sq_lab_t"], database=db, user="sq_owner_t")
    f.write_text(json.dumps(sweep_doc("M", "S2", 50.0, host="h1")))
    proc = slogqual("import", "json", f, "--store", lab)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "permission denied" in proc.stderr


@pytest.mark.parametrize("url, exit_code, words", [
    ("mysql://u:pw-9731@db/x", 2, "bad store URL mysql://u:***@db/x"),
    ("postgresql://u:pw-9731@127.0.0.1:1/x", 1, "result store postgresql://u:***@127.0.0.1:1/x: connection failed"),
    ("postgresql://u@/x?host=/nonexistent-dir&password=pw-9731", 1, "password=***"),
    ("postgresql://u@h/x?nosuchoption=1&password=pw-9731", 2, "bad store URL"),
])
def test_a_bad_or_unreachable_store_is_one_line_without_the_password(url, exit_code, words):
    for argv in (["history"], ["import", "json", os.path.join(FIXTURES, "qualify",
                                                               "qualification-nbd-memory-952d1d3.json")],
                 ["fleet"], ["store", "info"]):
        proc = slogqual(*argv, "--store", url)
        assert proc.returncode == exit_code, (argv, proc.stderr)
        assert proc.stderr.count("\n") == 1 and words in proc.stderr, proc.stderr
        assert "pw-9731" not in proc.stderr + proc.stdout and "Traceback" not in proc.stderr


def test_store_error_class_is_what_callers_catch():
    with pytest.raises(StoreError):
        Store("mysql://x/y")


@pytest.mark.integration
@need("fio", "nbdkit")
def test_qualify_records_host_identity_profile_and_verdict_in_postgresql(tmp_path, pg_url):
    """A real qualification (fio against nbdkit's memory plugin) recorded straight into PostgreSQL."""
    from test_store import PROFILE, _qualify, _server
    profile = tmp_path / "p.toml"
    profile.write_text(PROFILE)
    with _server() as srv:
        proc = _qualify(srv.uri, tmp_path / "o", profile, pg_url, "--firmware", "FW9")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "o" / "nbd.qualification.json").read_text())
    assert doc["store"]["recorded"] is True and doc["store"]["path"] == pg_url
    runs = json.loads(slogqual("history", "--store", pg_url, "--json").stdout)
    assert sorted(r["kind"] for r in runs) == ["qualification", "sweep"]
    q = next(r for r in runs if r["kind"] == "qualification")
    assert (q["model"], q["serial"], q["firmware"], q["profile"], q["verdict"]) == \
        ("NBD-Q", "unit-1", "FW9", "store-test", "pass")
    assert all(r["host"] == doc["environment"]["host"] and r["host"] for r in runs)
    assert json.loads(slogqual("history", "--store", pg_url, "--show", q["id"]).stdout) == \
        {k: v for k, v in doc.items() if k != "store"} | {"store": None}
