"""Issue #28: the store (or a device, or someone's file) destroyed through paths nobody named — a powercut
writer's target or journal, a recorder's journal, the PNGs beside a Markdown report, the temporary file of an
atomic write. Each refusal is one line and exit 2 (3 for a read-only device, as sweep says), and what it
protects is byte-identical afterwards."""

import json
import os
import resource
import stat
import subprocess
import sys

import pytest

from conftest import ROOT, fixture_path, need
from slogqual.report import junit
from slogqual import results as R

pytestmark = pytest.mark.integration

RUN = bytes(range(16)).hex()
STORE_BYTES = b"SQLite format 3\x00" + bytes(range(256)) * 16
DISKINFO = fixture_path("diskinfo", "freebsd-r320683-intel710-samsung950pro.collapsed.txt")


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # /dev/zero read whole ends here, not in OOM


def cli(*args, store, timeout=20):
    """The real CLI in a child with 1 GiB of address space and a deadline: a hang or a memory hog fails
    the test instead of the machine."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               SLOGQUAL_STORE=str(store))
    try:
        return subprocess.run([sys.executable, "-m", "slogqual", *map(str, args)], capture_output=True, text=True,
                              env=env, timeout=timeout, preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:
        pytest.fail(f"slogqual {' '.join(map(str, args))} hung")


def refused(proc, needle, code=2):
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in proc.stderr, proc.stderr


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "results.sqlite"
    path.write_bytes(STORE_BYTES)
    return path


@pytest.fixture
def target(tmp_path):
    path = tmp_path / "dev.img"
    path.write_bytes(bytes(1 << 20))
    return path


def _write(target, *journal):
    return ["powercut", "write", target, "--run-id", RUN, "--cycle", "1", "--sizes", "4k", *journal]


@pytest.mark.parametrize("how", ["itself", "symlink", "hard link"])
def test_the_powercut_writer_refuses_the_store_as_its_target(tmp_path, store, how):
    named = {"itself": store, "symlink": tmp_path / "s", "hard link": tmp_path / "h"}[how]
    if how == "symlink":
        named.symlink_to(store)
    elif how == "hard link":
        os.link(store, named)
    journal = tmp_path / "acks.jsonl"
    refused(cli(*_write(named, "--journal", journal), store=store), "is the result store")
    assert store.read_bytes() == STORE_BYTES and not journal.exists()


def _journals(tmp_path, store):
    """Journals no one may append to: (path, what the refusal says, the bytes it must keep or None)."""
    theirs = tmp_path / "theirs.json"
    theirs.write_text('{"mine": 1}\n')
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    node = tmp_path / "blk"
    os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(60, 0))  # a block node no driver answers (local use)
    link = tmp_path / "to-store"
    link.symlink_to(store)
    return [(store, "is the result store"), (link, "is the result store"), (theirs, "not a slogqual powercut journal"),
            (fifo, "is a FIFO"), (node, "is a device node"), ("/dev/zero", "is a device node")]


def test_the_powercut_writer_appends_to_no_file_but_a_journal(tmp_path, store, target):
    theirs_before = '{"mine": 1}\n'
    for journal, needle in _journals(tmp_path, store):
        refused(cli(*_write(target, "--journal", journal), store=store), needle)
    assert store.read_bytes() == STORE_BYTES and (tmp_path / "theirs.json").read_text() == theirs_before
    assert target.read_bytes() == bytes(1 << 20)


def test_the_recorder_appends_to_no_file_but_a_journal(tmp_path, store):
    for journal, needle in _journals(tmp_path, store):
        refused(cli("powercut", "record", "--listen", "127.0.0.1:0", "--journal", journal, store=store, timeout=10),
                needle)
    assert store.read_bytes() == STORE_BYTES and (tmp_path / "theirs.json").read_text() == '{"mine": 1}\n'


def test_a_journal_is_appended_to_again(tmp_path, store, target):
    journal = tmp_path / "acks.jsonl"
    for cycle in ("1", "2"):
        proc = cli("powercut", "write", target, "--run-id", RUN, "--cycle", cycle, "--sizes", "4k",
                   "--journal", journal, store=store, timeout=60)
        assert proc.returncode == 0, proc.stderr
    assert {ln.split('"cycle": ')[1][0] for ln in journal.read_text().splitlines()} == {"1", "2"}


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "directory"])
def test_verify_reads_no_journal_that_is_not_a_file(tmp_path, store, target, kind):
    journal = {"fifo": tmp_path / "fifo", "/dev/zero": "/dev/zero", "directory": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(journal)
    refused(cli("powercut", "verify", target, "--run-id", RUN, "--journal", journal, store=store),
            "not a powercut journal")


def test_a_journal_line_without_end_is_not_read_whole(tmp_path, store, target):
    journal = tmp_path / "long.jsonl"
    with open(journal, "wb") as fh:
        fh.write(b'{"op": "begin", "run": "' + RUN.encode() + b'", "cycle": 1, "sizes": [4096], "target": "x"}\n')
        fh.write(b"x" * (3 << 20) + b"\n" + b'{"op": "end", "run": "r", "cycle": 1}\n')
    refused(cli("powercut", "verify", target, "--run-id", RUN, "--journal", journal, store=store),
            "longer than")


def _blocked_device(tmp_path):
    node = tmp_path / "gone"
    os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(60, 0))
    return node


def test_powercut_run_and_sweep_answer_alike_for_a_device_the_os_will_not_open(tmp_path, store):
    node = _blocked_device(tmp_path)
    sweep = cli("sweep", node, "--sizes", "4k", "--destroy-data", "--quiet", store=store)
    run = cli("powercut", "run", node, "--cut-cmd", "true", "--destroy-data", "--quiet", "-o", tmp_path / "r.json",
              store=store)
    refused(sweep, str(node))
    refused(run, str(node))
    assert run.stderr == sweep.stderr
    assert not (tmp_path / "r.json").exists() and store.read_bytes() == STORE_BYTES


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a read-only loop device)")
@need("losetup")
def test_powercut_run_refuses_a_read_only_device_as_sweep_does(tmp_path, store):
    img = tmp_path / "ro.img"
    img.write_bytes(bytes(8 << 20))
    made = subprocess.run(["losetup", "-f", "--show", "-r", img], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"no loop device: {made.stderr.strip()}")
    dev = made.stdout.strip()
    try:
        sweep = cli("sweep", dev, "--sizes", "4k", "--destroy-data", "--quiet", store=store)
        run = cli("powercut", "run", dev, "--cut-cmd", "true", "--destroy-data", "--quiet", "--cut-after", "4",
                  "-o", tmp_path / "r.json", store=store)
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)
    refused(sweep, "read-only", code=3)
    refused(run, "read-only", code=3)
    assert run.stderr == sweep.stderr
    assert img.read_bytes() == bytes(8 << 20) and not (tmp_path / "r.json").exists()


@pytest.fixture
def results(tmp_path):
    proc = cli("import", "diskinfo", DISKINFO, "-o", tmp_path / "di.json", store=tmp_path / "unused.sqlite")
    assert proc.returncode == 0, proc.stderr
    return [tmp_path / "di-1.json", tmp_path / "di-2.json"]


@need("gnuplot")
def test_a_markdown_reports_charts_are_outputs_too(tmp_path, store, results):
    (tmp_path / "rep-latency.png").symlink_to(store)
    refused(cli("report", *results, "-o", tmp_path / "rep.md", store=store, timeout=60), "is the result store")
    assert store.read_bytes() == STORE_BYTES and not (tmp_path / "rep.md").exists()


@need("gnuplot")
def test_a_markdown_report_draws_its_charts_beside_it(tmp_path, store, results):
    proc = cli("report", *results, "-o", tmp_path / "rep.md", store=store, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "rep-latency.png").read_bytes().startswith(b"\x89PNG")
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


@need("gnuplot")
def test_a_reports_temporary_file_is_never_a_planted_symlink(tmp_path, store, results):
    (tmp_path / "rep.html.tmp").symlink_to(store)
    proc = cli("report", *results, "-o", tmp_path / "rep.html", store=store, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert store.read_bytes() == STORE_BYTES and not os.path.islink(tmp_path / "rep.html")


def test_fleet_html_temporary_file_is_never_a_planted_symlink(tmp_path, results):
    db = tmp_path / "fleet.sqlite"
    doc = json.loads(results[0].read_text())
    doc["device"] = {"model": "M", "serial": "S-1", "firmware": "1", "class": "ssd"}
    results[0].write_text(json.dumps(doc))
    imported = cli("import", "json", results[0], store=db)
    assert imported.returncode == 0, imported.stderr
    kept = db.read_bytes()
    (tmp_path / "f.html.tmp").symlink_to(db)
    proc = cli("fleet", "--html", tmp_path / "f.html", store=db, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert db.read_bytes() == kept and not os.path.islink(tmp_path / "f.html")


@pytest.mark.parametrize("write", [
    lambda p: junit.write(p, []),
    lambda p: R.write_text_atomic(p, "text\n"),
    lambda p: R.write_json_atomic(p, {"schema": "x"}),
])
def test_every_atomic_write_ignores_a_planted_temporary_name(tmp_path, write):
    victim = tmp_path / "victim"
    victim.write_bytes(STORE_BYTES)
    out = tmp_path / "out.xml"
    (tmp_path / "out.xml.tmp").symlink_to(victim)
    write(str(out))
    assert victim.read_bytes() == STORE_BYTES and out.is_file() and not out.is_symlink()
    assert sorted(os.listdir(tmp_path)) == ["out.xml", "out.xml.tmp", "victim"]
