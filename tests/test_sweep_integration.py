"""slogqual sweep end to end with real fio on files, loop devices and nbdkit targets."""

import json
import os
import pathlib
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import ROOT, load, need, needs_root, slogqual
from slogqual.tools.nbdkit import NbdServer

pytestmark = [pytest.mark.integration, need("fio")]

FAST = ["--runtime", "0.3", "--settle", "0"]


def test_stale_scratch_files_of_dead_runs_are_removed_and_named(tmp_path):
    """SIGKILL (or a kill during the fill) leaves slogqual-scratch-PID.img behind; the next default sweep
    in that directory removes it and says so, and leaves a live run's scratch file alone."""
    dead = subprocess.Popen(["true"])
    dead.wait()  # its pid is free now
    stale = tmp_path / f"slogqual-scratch-{dead.pid}.img"
    stale.write_bytes(b"\0" * (1 << 20))
    live = tmp_path / f"slogqual-scratch-{os.getpid()}.img"  # this test's own process: alive
    live.write_bytes(b"x")
    proc = slogqual("sweep", "--sizes", "4k", *FAST, "--quiet", "-o", tmp_path / "r.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not stale.exists() and live.read_bytes() == b"x"
    assert f"removed {stale.name}" in proc.stdout  # --quiet: in the printed result's notes
    assert any(n.startswith(f"removed {stale.name}") for n in load(tmp_path / "r.json")["notes"])


def test_default_target_is_a_scratch_file_that_is_removed(tmp_path):
    out = tmp_path / "r.json"
    proc = slogqual("sweep", "--sizes", "4k,64k", *FAST, "-o", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = load(out)
    assert doc["schema"] == "slogqual.sweep/1" and doc["status"] == "complete"
    assert doc["target"]["kind"] == "scratch" and doc["target"]["size"] >= 64 << 20
    assert [p["size"] for p in doc["points"]] == [4096, 65536]
    assert all(p["ios"] > 0 and p["lat_us"]["mean"] > 0 and p["iops"] > 0 for p in doc["points"])
    env = doc["environment"]
    # the pair engine measured: its version is recorded; fio did not run, so none is claimed for it
    assert env["pairbench_version"] == "pairbench 3" and env["fio_version"] == ""
    assert env["kernel"] and env["slogqual_version"]
    assert doc["params"]["mode"] == "flush" and doc["params"]["iodepth"] == 1
    assert not [f for f in os.listdir(tmp_path) if f.startswith("slogqual-scratch")]
    # progress on stderr names the size and step with an ETA; the table goes to stdout
    assert "4K (1/2) ETA" in proc.stderr and "64K (2/2) ETA" in proc.stderr
    assert "mean µs" in proc.stdout and "64K" in proc.stdout


def test_file_target_json_and_quiet(tmp_path):
    img = tmp_path / "t.img"
    img.write_bytes(b"\0" * (16 << 20))
    proc = slogqual("sweep", img, "--sizes", "512,8k", *FAST, "--json", "--quiet", "-o", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    doc = json.loads(proc.stdout)
    assert doc["target"] == {"path": str(img), "kind": "file", "size": 16 << 20}
    assert doc == load(tmp_path / "r.json")
    # the host's CPU per write+flush of each point: what a log's own path takes from ZFS (advise --host)
    for p in doc["points"]:
        cpu = p["cpu"]
        assert cpu["ios"] == p["ios"] and 0 < cpu["busy_share"] <= 1 and cpu["s_per_io"] >= 0


def test_dsync_mode_and_diskinfo_format(tmp_path):
    img = tmp_path / "t.img"
    img.write_bytes(b"\0" * (16 << 20))
    proc = slogqual("sweep", img, "--sizes", "512,4k", "--mode", "dsync", *FAST, "--format", "diskinfo",
                    "--quiet", "-o", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1] == "Synchronous random writes:"
    assert lines[2].startswith("\t 0.5 kbytes: ") and lines[3].startswith("\t   4 kbytes: ")
    assert " usec/IO = " in lines[2] and lines[2].endswith(" Mbytes/s")
    doc = load(tmp_path / "r.json")
    assert all(p["lat_basis"] == "completion" and "flush_lat_us" not in p for p in doc["points"])


def test_several_targets_write_one_result_each(tmp_path):
    a, b = tmp_path / "a.img", tmp_path / "b.img"
    for f in (a, b):
        f.write_bytes(b"\0" * (8 << 20))
    proc = slogqual("sweep", a, b, "--sizes", "4k", *FAST, "--quiet", "-o", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    docs = [load(tmp_path / "out" / f) for f in sorted(os.listdir(tmp_path / "out"))]
    assert sorted(d["target"]["path"] for d in docs) == [str(a), str(b)]


@pytest.mark.parametrize("args,text", [
    (["/nonexistent/disk"], "no such file or device"),
    (["--sizes", "1000"], "not a multiple of 512"),
    (["--sizes", "16m"], "above 8 MiB"),
    (["--mode", "fua"], "unknown mode"),
    (["--runtime", "0"], "--runtime"),
    (["--sizes", "4k,zz"], "bad size"),
    # not finite: would reach fio and the result document (JSON has no inf/nan) after the claim
    (["--runtime", "inf"], "not a finite number"),
    (["--runtime", "1e309"], "out of range"),
    (["--settle", "nan"], "not a finite number"),
    (["--settle", "-1"], "out of range"),
    # silently meant "all 15 sizes" / dropped the empty entry / took a fullwidth digit
    (["--sizes", ""], "at least one size"),
    (["--sizes", "4k,,8k"], "empty entry"),
    (["--sizes", "\uff14k"], "bad size"),
    # silently ran a scratch sweep here
    ([""], "empty target"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, text):
    proc = slogqual("sweep", *args, "--quiet", cwd=tmp_path)
    assert proc.returncode == 2
    assert text in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert os.listdir(tmp_path) == []  # nothing created, nothing measured


def test_target_too_small_for_the_sizes(tmp_path):
    img = tmp_path / "small.img"
    img.write_bytes(b"\0" * 65536)
    proc = slogqual("sweep", img, "--sizes", "4k,1m", "--quiet", cwd=tmp_path)
    assert proc.returncode == 2 and "too small" in proc.stderr


def test_directory_target_is_rejected(tmp_path):
    proc = slogqual("sweep", tmp_path, "--quiet", cwd=tmp_path)
    assert proc.returncode == 2 and "not a block device" in proc.stderr


def test_allow_large_lets_16m_through(tmp_path):
    img = tmp_path / "t.img"
    img.write_bytes(b"\0" * (32 << 20))
    proc = slogqual("sweep", img, "--sizes", "16m", "--allow-large", *FAST, "--quiet", "-o", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stderr
    assert load(tmp_path / "r.json")["points"][0]["size"] == 16 << 20


def _fake_fio(tmp_path, version_line):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "fio"
    fake.write_text(f"#!/bin/sh\necho {version_line}\n")
    fake.chmod(0o755)
    return str(bindir)


def test_fio_too_old(tmp_path):
    path = _fake_fio(tmp_path, "fio-2.2.10") + os.pathsep + os.environ["PATH"]
    proc = slogqual("sweep", "--engine", "fio", "--quiet", env={"PATH": path}, cwd=tmp_path)
    assert proc.returncode == 2 and "too old" in proc.stderr and len(proc.stderr.splitlines()) == 1


def test_fio_missing(tmp_path):
    path = os.pathsep.join(os.path.dirname(p) for p in (sys.executable,))
    proc = slogqual("sweep", "--engine", "fio", "--quiet", env={"PATH": path}, cwd=tmp_path)
    assert proc.returncode == 2 and "fio not found" in proc.stderr
    assert not [f for f in os.listdir(tmp_path) if f.startswith("slogqual-")]  # refused before any write


@needs_root
def test_block_device_needs_destroy_data_then_sweeps(loop_device, tmp_path):
    proc = slogqual("sweep", loop_device, "--sizes", "4k", *FAST, "--quiet", "-o", tmp_path / "r.json")
    assert proc.returncode == 3 and loop_device in proc.stderr and "--destroy-data" in proc.stderr
    assert not (tmp_path / "r.json").exists()
    proc = slogqual("sweep", loop_device, "--sizes", "4k,1m", *FAST, "--destroy-data", "--quiet",
                    "-o", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stderr
    doc = load(tmp_path / "r.json")
    assert doc["target"]["kind"] == "block" and doc["target"]["size"] == 64 << 20
    assert doc["params"]["direct"] is True


@needs_root
def test_read_only_device_is_refused_with_exit_3_and_inspect_says_read_only(tmp_path):
    """README: read-only devices are refused outright, by the interlocks (exit 3); `inspect` and
    `devices` must not call one free."""
    img = tmp_path / "ro.img"
    img.write_bytes(b"\0" * (8 << 20))
    dev = subprocess.run(["losetup", "-f", "--show", "-r", str(img)], capture_output=True, text=True, check=True).stdout.strip()
    try:
        proc = slogqual("sweep", dev, "--sizes", "4k", "--destroy-data", "--quiet", cwd=tmp_path)
        assert proc.returncode == 3 and dev in proc.stderr and "read-only" in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
        assert os.listdir(tmp_path) == ["ro.img"]
        shown = slogqual("inspect", dev)
        assert shown.returncode == 0 and "safety: read-only" in shown.stdout, shown.stdout
    finally:
        subprocess.run(["losetup", "-d", dev])


@need("nbdkit")
def test_nbd_delay_shows_in_mean_latency(tmp_path):
    """An nbdkit delay filter adds 2 ms to each write: the sweep must see about that much more.

    Plain and delayed runs alternate twice and each side keeps its lowest mean, so a burst of load
    from elsewhere on this 2-core machine during one run cannot hide (or fake) the difference."""
    img = tmp_path / "n.img"
    img.write_bytes(b"\0" * (16 << 20))
    means = {"plain": {}, "slow": {}}
    write_p50 = {"plain": {}, "slow": {}}
    for round_ in range(2):
        for name, filters, fargs in (("plain", [], {}), ("slow", ["delay"], {"wdelay": "2ms"})):
            with NbdServer("file", [str(img)], filters=filters, filter_args=fargs, socket_dir=str(tmp_path)) as srv:
                out = tmp_path / f"{name}{round_}.json"
                proc = slogqual("sweep", srv.uri, "--sizes", "512,4k", "--runtime", "0.5", "--settle", "0",
                                "--quiet", "-o", out)
                assert proc.returncode == 0, proc.stderr
                doc = load(out)
                assert doc["target"]["kind"] == "nbd" and doc["target"]["size"] == 16 << 20
                assert doc["params"]["engine"] == "nbd"
                for p in doc["points"]:
                    means[name][p["size"]] = min(means[name].get(p["size"], 1e12), p["lat_us"]["mean"])
                    write_p50[name][p["size"]] = min(write_p50[name].get(p["size"], 1e12), p["write_lat_us"]["p50"])
    for size in (512, 4096):
        extra = means["slow"][size] - means["plain"][size]
        assert 1500 < extra < 50000, (size, means)
        assert write_p50["slow"][size] - write_p50["plain"][size] > 1500, (size, write_p50)


@need("nbdkit")
def test_enospc_is_exit_1_with_the_cause(tmp_path):
    with NbdServer("full", ["16M"], socket_dir=str(tmp_path)) as srv:
        proc = slogqual("sweep", srv.uri, "--sizes", "4k", *FAST, "--quiet", "-o", tmp_path / "r.json")
    assert proc.returncode == 1 and "No space left on device" in proc.stderr
    doc = load(tmp_path / "r.json")
    assert doc["status"] == "failed" and "No space left" in doc["error"] and doc["points"] == []


def _wait_for_points(path, n, proc, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            doc = load(path)  # always valid JSON: results are replaced atomically
            if len(doc["points"]) >= n:
                return doc
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("sweep made no progress")


def _start(args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.Popen([sys.executable, "-m", "slogqual", *map(str, args)], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@need("nbdkit")
def test_eio_mid_run_keeps_measured_sizes_and_resume_completes(tmp_path):
    """IO errors start after the first size (nbdkit error filter + trigger file): exit 1,
    earlier sizes kept; once the errors stop, --resume measures exactly the rest."""
    trigger = tmp_path / "fail-now"
    out = tmp_path / "r.json"
    sizes = "4k,8k,16k,32k"
    with NbdServer("memory", ["32M"], filters=["error"], socket_dir=str(tmp_path),
                   filter_args={"error-pwrite": "EIO", "error-pwrite-rate": "100%",
                                "error-pwrite-file": str(trigger)}) as srv:
        proc = _start(["sweep", srv.uri, "--sizes", sizes, "--runtime", "0.5", "--settle", "0.2", "--quiet",
                       "-o", out], tmp_path)
        _wait_for_points(out, 1, proc)
        trigger.touch()
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 1, err
        assert "Input/output error" in err and "--resume" in err
        doc = load(out)
        assert doc["status"] == "failed" and 1 <= len(doc["points"]) < 4
        kept = {p["size"]: p for p in doc["points"]}
        trigger.unlink()
        done = slogqual("sweep", "--resume", out, "--runtime", "0.3", "--settle", "0", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = load(out)
    assert doc["status"] == "complete" and doc["error"] is None
    assert [p["size"] for p in doc["points"]] == [4096, 8192, 16384, 32768]
    for size, p in kept.items():  # measured points are kept, not re-measured
        assert doc["points"][[q["size"] for q in doc["points"]].index(size)] == p
    assert len(doc["environment"]["resumed"]) == 1


def test_sigint_saves_interrupted_result_and_resume_finishes(tmp_path):
    out = tmp_path / "r.json"
    proc = _start(["sweep", "--sizes", "4k,8k,16k,32k,64k", "--runtime", "0.5", "--settle", "0.3", "-o", out], tmp_path)
    _wait_for_points(out, 1, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    doc = load(out)
    assert doc["status"] == "interrupted" and 1 <= len(doc["points"]) < 5
    assert not [f for f in os.listdir(tmp_path) if f.startswith("slogqual-scratch")]
    done = slogqual("sweep", "--resume", out, "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = load(out)
    assert doc["status"] == "complete" and len(doc["points"]) == 5
    assert not [f for f in os.listdir(tmp_path) if f.startswith("slogqual-scratch")]


def test_resume_of_complete_result_measures_nothing(tmp_path):
    out = tmp_path / "r.json"
    assert slogqual("sweep", "--sizes", "4k", *FAST, "--quiet", "-o", out, cwd=tmp_path).returncode == 0
    before = out.read_text()
    proc = slogqual("sweep", "--resume", out, cwd=tmp_path)
    assert proc.returncode == 0 and "already complete" in proc.stderr and out.read_text() == before


@pytest.mark.parametrize("engine", ["fio", "pair"])
def test_sigint_to_slogqual_alone_leaves_no_fio_behind(tmp_path, engine):
    """A scripted caller signals only slogqual's pid: the engine it started (fio, or the pair engine) must
    not go on writing."""
    out = tmp_path / "r.json"
    img = tmp_path / "t.img"
    img.write_bytes(b"\0" * (16 << 20))
    proc = _start(["sweep", img, "--engine", engine, "--sizes", "4k,8k", "--runtime", "30", "--settle", "0",
                   "--quiet", "-o", out], tmp_path)
    program = "fio" if engine == "fio" else "pairbench"
    deadline = time.monotonic() + 30
    fio_pids = []
    while time.monotonic() < deadline and not fio_pids:
        fio_pids = [int(p) for p in os.listdir("/proc") if p.isdigit()
                    and os.path.basename(_cmd(p).split("\0")[0]).startswith(program) and str(img) in _cmd(p)]
        time.sleep(0.05)
    assert fio_pids, f"{program} never started"
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)  # to slogqual only, not its process group
    proc.communicate(timeout=30)
    assert proc.returncode == 130
    time.sleep(0.5)
    assert [p for p in fio_pids if os.path.exists(f"/proc/{p}") and _state(p) != "Z"] == []
    assert load(out)["status"] == "interrupted"


def _cmd(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


def _state(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_a_finished_sweep_is_recorded_in_the_store(tmp_path):
    store = tmp_path / "store.sqlite"
    img = tmp_path / "t.img"
    img.write_bytes(b"\0" * (8 << 20))
    proc = slogqual("sweep", img, "--sizes", "4k", *FAST, "--quiet", "-o", tmp_path / "r.json",
                    env={"SLOGQUAL_STORE": str(store)})
    assert proc.returncode == 0, proc.stderr
    hist = slogqual("history", "--kind", "sweep", "--json", "--store", store)
    assert hist.returncode == 0, hist.stderr
    runs = json.loads(hist.stdout)
    assert len(runs) == 1 and runs[0]["path"] == str(tmp_path / "r.json")
    # a broken store is one line and does not cost the result or the exit code
    (tmp_path / "bad.sqlite").write_bytes(b"not a database" * 100)
    proc = slogqual("sweep", img, "--sizes", "4k", *FAST, "--quiet", "-o", tmp_path / "r2.json",
                    env={"SLOGQUAL_STORE": str(tmp_path / "bad.sqlite")})
    assert proc.returncode == 0 and (tmp_path / "r2.json").exists()
    assert len([ln for ln in proc.stderr.splitlines() if "store" in ln]) == 1


# ---- -o never destroys (what slogqual did not write as a sweep result is not replaced) --------------

def _refused(proc, needle):
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr


def test_output_onto_the_target_or_the_store_is_refused_and_both_stay_byte_identical(tmp_path):
    img = tmp_path / "t.img"
    img.write_bytes(os.urandom(1 << 20))
    before = img.read_bytes()
    _refused(slogqual("sweep", img, "--sizes", "4k", *FAST, "--quiet", "-o", img, "--force"), "a target of this sweep")
    assert img.read_bytes() == before
    store = tmp_path / "store.sqlite"
    store.write_bytes(b"SQLite format 3\0" + os.urandom(4096))
    kept = store.read_bytes()
    _refused(slogqual("sweep", img, "--sizes", "4k", *FAST, "--quiet", "-o", store, "--force",
                      env={"SLOGQUAL_STORE": str(store)}), "the result store")
    assert store.read_bytes() == kept and img.read_bytes() == before


def test_output_onto_another_file_needs_force_and_onto_a_result_does_not(tmp_path):
    img = tmp_path / "t.img"
    img.write_bytes(b"\0" * (4 << 20))
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    _refused(slogqual("sweep", img, "--sizes", "4k", *FAST, "--quiet", "-o", notes), "not a slogqual sweep result")
    assert notes.read_text() == "my notes\n"
    proc = slogqual("sweep", img, "--sizes", "4k", *FAST, "--quiet", "-o", notes, "--force")
    assert proc.returncode == 0, proc.stderr
    assert load(notes)["schema"] == "slogqual.sweep/1"
    again = slogqual("sweep", img, "--sizes", "4k", *FAST, "--quiet", "-o", notes)  # a sweep result: ours to replace
    assert again.returncode == 0, again.stderr


def test_output_onto_a_device_node_or_fifo_is_refused_even_with_force(tmp_path):
    img = tmp_path / "t.img"
    img.write_bytes(b"\0" * (4 << 20))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    _refused(slogqual("sweep", img, "--sizes", "4k", *FAST, "--quiet", "-o", fifo, "--force"), "is a FIFO")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    if os.geteuid() == 0:
        node = tmp_path / "null"
        os.mknod(node, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # a private /dev/null
        _refused(slogqual("sweep", img, "--sizes", "4k", *FAST, "--quiet", "-o", node, "--force"), "is a device node")
        assert stat.S_ISCHR(os.stat(node).st_mode)


def test_several_targets_onto_an_existing_file_is_one_line(tmp_path):
    a, b = tmp_path / "a.img", tmp_path / "b.img"
    for f in (a, b):
        f.write_bytes(b"\0" * (4 << 20))
    out = tmp_path / "out.json"
    out.write_text("{}")
    _refused(slogqual("sweep", a, b, "--sizes", "4k", *FAST, "--quiet", "-o", out), "-o names a directory")


def test_resume_of_a_fifo_does_not_hang(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    _refused(slogqual("sweep", "--resume", fifo, "--quiet", timeout=60), "not a regular file")


@needs_root
def test_result_file_that_cannot_be_written_fails_the_run_in_one_line_and_keeps_the_points(tmp_path):
    """ENOSPC on the result file's own filesystem (a 4 KiB tmpfs: the first save fits, a later one does
    not): exit 1, one line, no traceback, and the document — marked failed, with what was measured —
    on stdout instead of lost. The paths are short and fixed in length: the document names them, and a
    longer test directory (xdist's popen-gwN/) made even the first save not fit."""
    tmp_path = pathlib.Path(tempfile.mkdtemp(prefix="sq-enospc-"))
    small = tmp_path / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "slogqual-test", str(small)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        img = tmp_path / "t.img"
        img.write_bytes(b"\0" * (8 << 20))
        proc = slogqual("sweep", img, "--sizes", "4k,8k,16k,32k", *FAST, "--quiet", "--json", "-o", small / "r.json")
        assert proc.returncode == 1, (proc.returncode, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "cannot write the result file" in lines[0] and "No space left" in lines[0], lines
        doc = json.loads(proc.stdout)
        assert doc["status"] == "failed" and "No space left" in doc["error"]
        assert doc["points"] and all(p["ios"] > 0 for p in doc["points"])  # what was measured is kept
    finally:
        subprocess.run(["umount", str(small)])
        shutil.rmtree(tmp_path, ignore_errors=True)


@need("nbdkit")
def test_dsync_on_nbd_is_refused_before_anything_is_written(tmp_path):
    """It was refused by the fio wrapper only after the result file was saved as running, with advice to
    resume that could never succeed."""
    with NbdServer("memory", ["size=16M"], socket_dir=str(tmp_path)) as srv:
        proc = slogqual("sweep", srv.uri, "--mode", "dsync", "--sizes", "4k", *FAST, "--quiet", "-o", tmp_path / "r.json")
    assert proc.returncode == 2 and "--mode dsync needs a file or block device" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "resume" not in proc.stderr
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("field,value,needle", [("mode", "bogus", "unknown mode"), ("sizes", [3000], "multiple of 512"),
                                                ("sizes", [], "sizes"), ("sizes", ["4k"], "sizes"),
                                                ("runtime_s", -1, "runtime"), ("mode", None, "unknown mode")])
def test_resume_file_with_bad_params_is_refused_before_anything_is_written(tmp_path, field, value, needle):
    out = tmp_path / "r.json"
    img = tmp_path / "t.img"
    img.write_bytes(b"\0" * (8 << 20))
    assert slogqual("sweep", img, "--sizes", "4k,8k", *FAST, "--quiet", "-o", out).returncode == 0
    doc = load(out)
    doc["status"] = "interrupted"
    doc["points"] = doc["points"][:1]
    doc["params"][field] = value
    out.write_text(json.dumps(doc))
    before = out.read_bytes()
    proc = slogqual("sweep", "--resume", out, "--quiet")
    assert proc.returncode == 2 and needle in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "continue with --resume" not in proc.stderr
    assert out.read_bytes() == before  # not rewritten as running


def _wait_for_scratch(tmp_path, proc, timeout=60):
    """Until the scratch fill has started (the file exists and holds data)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [f for f in os.listdir(tmp_path) if f.startswith("slogqual-scratch")]
        if found and os.path.getsize(tmp_path / found[0]) > 0:
            return found[0]
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.005)
    raise AssertionError("the scratch fill did not start")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_the_scratch_fill(tmp_path, sig):
    """A signal at a random (seeded, printed) moment within 0.3 s of the scratch file's fill starting (the
    fill, or the sweep just after it on a fast disk): SIGTERM/SIGINT end with
    130 and remove the scratch file; SIGKILL leaves it, and the next default sweep here removes it and
    says so. Either way no scratch file outlives the next run."""
    import random
    seed = int(os.environ.get("SLOGQUAL_TEST_SEED") or random.randrange(1 << 30))
    print(f"seed {seed}")
    delay = random.Random(seed).uniform(0, 0.3)
    out = tmp_path / "r.json"
    # --runtime 1: the sweep after the fill outlasts the 0.3 s window (with 0.2 s the pair engine sometimes
    # finished inside it, and the test could only skip)
    proc = _start(["sweep", "--sizes", "4k", "--runtime", "1", "--settle", "0", "-o", out], tmp_path)
    name = _wait_for_scratch(tmp_path, proc)
    time.sleep(delay)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    if proc.returncode == 0:  # the whole run finished inside the delay: nothing was interrupted
        pytest.skip(f"seed {seed}: the run ended before the signal")
    left = [f for f in os.listdir(tmp_path) if f.startswith("slogqual-scratch")]
    if sig == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL and left == [name], (seed, left)
    else:
        assert proc.returncode == 130 and "Traceback" not in err, (seed, err)
        assert left == [], (seed, left)
    if out.exists():  # whatever was saved is a document, never half of one
        assert load(out)["status"] in ("interrupted", "running", "complete"), seed
    again = slogqual("sweep", "--sizes", "4k", *FAST, "--quiet", "-o", tmp_path / "again.json", cwd=tmp_path)
    assert again.returncode == 0, (seed, again.stderr)
    if sig == signal.SIGKILL:
        notes = load(tmp_path / "again.json")["notes"]
        assert any(name in n for n in notes), (seed, notes)  # the stale file is named as it is removed
    assert not [f for f in os.listdir(tmp_path) if f.startswith("slogqual-scratch")], seed


def _engines_writing(target):
    """PIDs of pair engines (pairbench…) whose argv names ``target`` and that still run (not zombies)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
            with open(f"/proc/{pid}/stat") as fh:
                state = fh.read().rsplit(") ", 1)[1][0]
        except OSError:
            continue
        if os.path.basename(argv[0]).startswith(b"pairbench") and str(target).encode() in argv and state != "Z":
            found.append(int(pid))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigkill_of_a_precision_sweep_leaves_nothing_behind(tmp_path):
    """kill -9 of `sweep --precision 2%` at a random (seeded, printed) moment while the pair engine writes
    a file target: no engine of that run lives on, the target is not written after the kill, the
    device lock is free, the result is a document or absent, and the next run (which can claim the
    device at once) removes the samples directories that killed runs left."""
    import random

    from slogqual.device.interlock import lock_holder
    seed = int(os.environ.get("SLOGQUAL_TEST_SEED") or random.randrange(1 << 30))
    print(f"seed {seed}")
    delay = random.Random(seed).uniform(0, 1.0)
    img = tmp_path / "t.img"
    img.write_bytes(b"\0" * (16 << 20))
    tmp = tmp_path / "tmp"  # the runs' temporary directory: where samples directories go
    tmp.mkdir()
    gone = subprocess.Popen(["true"])
    gone.wait()
    planted = tmp / "slogqual-pair-killed"  # a samples directory as a killed run leaves it
    planted.mkdir()
    (planted / "owner.pid").write_text(f"{gone.pid}\n")
    (planted / "samples").write_bytes(b"SQPAIR2\n")
    out = tmp_path / "r.json"
    env = dict(os.environ, PYTHONPATH=ROOT, TMPDIR=str(tmp))
    # --runtime 3: the engine writes for at least 3 s, so it is mid-run when the signal comes
    proc = subprocess.Popen([sys.executable, "-m", "slogqual", "sweep", str(img), "--sizes", "4k", "--precision",
                             "2%", "--runtime", "3", "--max-runtime", "20", "--settle", "0", "--quiet", "-o", str(out)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    engines = []
    try:
        deadline = time.monotonic() + 30
        while not engines:
            assert proc.poll() is None, (seed, proc.communicate())
            assert time.monotonic() < deadline, "the pair engine did not start"
            time.sleep(0.01)
            engines = _engines_writing(img)
        time.sleep(delay)
        proc.kill()
        proc.wait(timeout=30)
        deadline = time.monotonic() + 2  # the death signal is sent at once; let the kernel deliver it
        while _engines_writing(img) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _engines_writing(img) == [], (seed, "the pair engine outlived the SIGKILLed sweep")
        before = os.stat(img)
        time.sleep(1)
        after = os.stat(img)
        assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size), \
            (seed, "the target was written after the kill")
        assert lock_holder(str(img)) is None, seed
        if out.exists():  # whatever was saved is a document, never half of one
            doc = load(out)
            assert doc["schema"] == "slogqual.sweep/1" and doc["status"] in ("running", "complete"), seed
        again = slogqual("sweep", img, "--sizes", "4k", *FAST, "--quiet", "-o", tmp_path / "again.json",
                         env={"TMPDIR": str(tmp)})
        assert again.returncode == 0, (seed, again.stderr)  # the device is free at once
        assert not [n for n in os.listdir(tmp) if n.startswith("slogqual-pair-")], seed
    finally:
        for pid in engines:  # the old bug's orphan: ended by its PID, never by name
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def test_a_target_that_shrinks_under_the_run_is_named_and_fails_the_run(tmp_path):
    """A regular file truncated while the sweep writes it (issue #28): the engine would grow it back and
    the run end "complete". The sweep notices the change (size, inode), says so on stderr and in the
    document's warnings, ends with exit 1 and status failed, and keeps the points measured before it."""
    img = tmp_path / "t.img"
    img.write_bytes(b"\0" * (16 << 20))
    out = tmp_path / "r.json"
    proc = _start(["sweep", img, "--sizes", "4k,8k,16k,32k", "--runtime", "1", "--settle", "0", "-o", out],
                  tmp_path)
    first = _wait_for_points(out, 1, proc)
    os.truncate(img, 1 << 20)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    doc = load(out)
    assert doc["status"] == "failed" and "changed under the run" in doc["error"]
    changed = [w for w in doc["warnings"] if "changed under the run" in w]
    # seen while short (size …, shrank) or, when the engine had already grown it back to its old size
    # before a look, by the hole the cut left in a file that had none
    assert len(changed) == 1 and ((f"size {16 << 20} -> " in changed[0] and "shrank" in changed[0])
                                  or "a hole at offset" in changed[0]), doc["warnings"]
    assert 1 <= len(doc["points"]) < 4
    assert doc["points"][0] == first["points"][0]  # what was measured before the change is kept as it was
    lost = [s for s in (4096, 8192, 16384, 32768) if s not in [p["size"] for p in doc["points"]]]
    assert f"while {lost[0] // 1024}K was measured" in changed[0]  # the point it happened in is named
    assert f"WARNING: {changed[0]}" in err and err.strip().splitlines()[-2].startswith("slogqual: ")


def test_a_file_cut_and_grown_back_to_its_old_size_is_still_a_changed_target(tmp_path):
    """The engine's writes can grow a truncated file back to exactly its old size before anyone looks:
    the hole the cut left tells (a unit check of target.identity / identity_changes on a real file)."""
    from slogqual.sweep.target import KIND_FILE, Target, identity, identity_changes

    img = tmp_path / "t.img"
    img.write_bytes(b"\1" * (4 << 20))
    t = Target(path=str(img), kind=KIND_FILE, size=4 << 20)
    before = identity(t, holes=True)
    assert identity_changes(before, identity(t, holes=True)) == []
    os.truncate(img, 1 << 20)
    with open(img, "r+b") as fh:  # what a write at the old end does
        fh.seek((4 << 20) - 4096)
        fh.write(b"\2" * 4096)
    now = identity(t, holes=True)
    assert now["size"] == before["size"] and now["st_ino"] == before["st_ino"]
    changes = identity_changes(before, now)
    assert len(changes) == 1 and changes[0].startswith(f"a hole at offset {1 << 20} "), changes
    (tmp_path / "new.img").write_bytes(b"\1" * (4 << 20))
    os.replace(tmp_path / "new.img", img)  # another file at the same path, same size
    assert any("another file is at the path" in c for c in identity_changes(before, identity(t, holes=True)))
