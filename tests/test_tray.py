"""A tray of targets is all or nothing: every target passes the interlocks before any target is written
(issue #30). Real loop devices (one mounted, one free) and the real CLI; what the free target holds is
read back byte for byte."""

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from test_safety import loops  # noqa: F401 (the loop-device fixture, defined once)
from slogqual.device import interlock

pytestmark = pytest.mark.integration

FAST = ["--sizes", "4k", "--runtime", "0.2", "--settle", "0", "--quiet"]


def sweep(*args, cwd=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.pathsep + \
        env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "slogqual", "sweep", *map(str, args)], capture_output=True,
                          text=True, env=env, cwd=cwd)


def digest(dev):
    h = hashlib.sha256()
    with open(dev, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def needs_fio():
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")


def unlocked(dev):
    """Nobody holds the device's slogqual lock after the run (no unit left claimed)."""
    return interlock.lock_holder(dev) is None


@pytest.mark.parametrize("order", ["mounted-first", "free-first"])
def test_one_refused_target_refuses_the_whole_tray_and_nothing_is_written(loops, tmp_path, order):  # noqa: F811
    needs_fio()
    mounted, free = loops.new(), loops.new()
    loops.mkfs(mounted)
    mnt = loops.mount(mounted)
    before = digest(free)
    targets = [mounted, free] if order == "mounted-first" else [free, mounted]
    out = tmp_path / "out"
    p = sweep(*targets, *FAST, "--destroy-data", "-o", out)
    assert p.returncode == 3, p.stderr
    assert digest(free) == before  # the free target was not written
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert f"refusing {mounted}" in lines[0] and f"is mounted at {mnt}" in lines[0]
    assert "--skip-refused" in lines[0] and free in lines[0]  # says what was not swept, and how to go on
    assert not out.exists()  # no result of any target, not even their directory
    assert p.stdout == ""
    assert unlocked(free) and unlocked(mounted)


def test_skip_refused_sweeps_the_rest_and_says_what_it_skipped(loops, tmp_path):  # noqa: F811
    needs_fio()
    mounted, free = loops.new(), loops.new()
    loops.mkfs(mounted)
    loops.mount(mounted)
    before = digest(free)
    out = tmp_path / "out"
    p = sweep(mounted, free, *FAST, "--destroy-data", "--skip-refused", "--json", "-o", out)
    assert p.returncode == 3, p.stderr  # a target was refused: still said by the exit code
    assert f"skipped {mounted}" in p.stderr and "is mounted at" in p.stderr
    doc = json.loads(p.stdout)
    assert doc["target"]["path"] == free and doc["status"] == "complete"
    (name,) = os.listdir(out)
    assert json.loads((out / name).read_text())["target"]["path"] == free
    assert digest(free) != before  # the free one was swept
    assert unlocked(free) and unlocked(mounted)


def test_skip_refused_with_every_target_refused_measures_nothing(loops, tmp_path):  # noqa: F811
    needs_fio()
    a = loops.new()
    loops.mkfs(a)
    loops.mount(a)
    p = sweep(a, *FAST, "--destroy-data", "--skip-refused", "-o", tmp_path / "r.json")
    assert p.returncode == 3
    assert f"skipped {a}" in p.stderr and "nothing left to sweep" in p.stderr
    assert not (tmp_path / "r.json").exists()


def test_a_target_named_twice_is_bad_input(tmp_path):
    img = tmp_path / "t.img"
    img.write_bytes(b"\0" * (8 << 20))
    link = tmp_path / "alias.img"
    link.symlink_to(img)
    p = sweep(img, link, *FAST, "-o", tmp_path / "out")
    assert p.returncode == 2
    assert "named twice" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_a_file_under_a_hard_link_is_one_target(tmp_path):
    img = tmp_path / "t.img"
    img.write_bytes(b"\0" * (8 << 20))
    os.link(img, tmp_path / "hard.img")
    p = sweep(img, tmp_path / "hard.img", *FAST, "--parallel", "-o", tmp_path / "out")
    assert p.returncode == 2, p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert str(img) in line and str(tmp_path / "hard.img") in line and "named twice" in line
    assert img.read_bytes() == b"\0" * (8 << 20) and not (tmp_path / "out").exists()


def test_a_refused_sweep_makes_no_output_directory_and_a_sweep_makes_it(tmp_path):
    a, b = tmp_path / "a.img", tmp_path / "b.img"
    for f in (a, b):
        f.write_bytes(b"\0" * (8 << 20))
    small = tmp_path / "small.img"
    small.write_bytes(b"\0" * (64 << 10))
    out = tmp_path / "new" / "dir"
    for refused in ([a, tmp_path / "missing.img"], [a, small, "--sizes", "1m"], [a, b, "--parallel", "--sustain", "9s"]):
        p = sweep(*FAST, *refused, "-o", out)  # the last --sizes is the one taken
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert not (tmp_path / "new").exists(), refused
    p = sweep(a, b, *FAST, "-o", out)
    assert p.returncode == 0, p.stderr
    assert len(os.listdir(out)) == 2  # made, once nothing refused the run


def same_file_loop(loops, dev):
    """A second loop device on the image file of ``dev`` (detached with the others)."""
    from test_safety import run

    again = run("losetup", "-f", "--show", loops.image_of(dev)).stdout.strip()
    loops.devs.append(again)
    return again


@pytest.mark.parametrize("at_once", [True, False])
def test_two_loop_devices_on_one_file_are_one_storage_and_nothing_is_written(loops, tmp_path, at_once):  # noqa: F811
    a = loops.new()
    b = same_file_loop(loops, a)
    image = loops.image_of(a)
    before = digest(image)
    out = tmp_path / "out"
    for tray in ([a, b], [image, b]):  # two loop devices; the file and a loop device on it
        p = sweep(*tray, *FAST, "--destroy-data", *(["--parallel"] if at_once else []), "-o", out)
        assert p.returncode == 2, p.stderr
        (line,) = p.stderr.strip().splitlines()
        assert line.startswith(f"slogqual: {tray[0]} and {tray[1]} are one storage, the file {os.path.realpath(image)}")
        assert digest(image) == before and not out.exists()
        assert unlocked(a) and unlocked(b)


def test_a_partition_and_its_disk_are_refused_two_partitions_are_swept(loops, tmp_path):  # noqa: F811
    dev = loops.new()
    p1, p2 = loops.partition(dev)
    before = digest(loops.image_of(dev))
    out = tmp_path / "out"
    for tray in ([dev, p1], [p2, dev]):
        p = sweep(*tray, *FAST, "--destroy-data", "--parallel", "-o", out)
        assert p.returncode == 2, p.stderr
        (line,) = p.stderr.strip().splitlines()
        part = p1 if tray[0] == dev else p2
        assert line.startswith(f"slogqual: {part} is part of {dev}, a partition of {os.path.basename(dev)}:"), line
        assert digest(loops.image_of(dev)) == before and not out.exists()
    p = sweep(p1, p2, *FAST, "--destroy-data", "--parallel", "-o", out)  # each its own part of the disk
    assert p.returncode == 0, p.stderr
    assert len(os.listdir(out)) == 2 and digest(loops.image_of(dev)) != before


# --- the door below the CLI (issue #27): slogqual.sweep.door.run_sweeps, on real files ----------------------

def _request(targets, out, **kw):
    from slogqual.sweep.engine import SweepParams
    from slogqual.sweep.door import SweepRequest

    params = SweepParams(mode="flush", sizes=[4096], runtime_s=0.2, settle_s=0)
    return SweepRequest(targets=[str(t) for t in targets], params=params, output=str(out), record_in_store=False,
                        **kw)


def test_the_door_refuses_a_tray_with_a_target_another_run_holds(tmp_path):
    from slogqual.errors import RefusedError
    from slogqual.sweep.door import run_sweeps

    held, free = tmp_path / "held.img", tmp_path / "free.img"
    for f in (held, free):
        f.write_bytes(b"\0" * (8 << 20))
    with interlock.device_lock(str(held)):  # another slogqual run is writing it (this process's lock)
        with pytest.raises(RefusedError) as ei:
            run_sweeps(_request([free, held], tmp_path / "out"))
    assert f"refusing {held}: another slogqual run" in str(ei.value) and str(free) in str(ei.value)
    assert free.read_bytes() == b"\0" * (8 << 20)  # the free target, first in the tray, was not written
    assert not (tmp_path / "out").exists()  # made only once the tray is claimed
    assert unlocked(str(free))  # its claim was released with the refusal


def test_the_door_skips_the_held_target_and_sweeps_the_other(tmp_path):
    from slogqual.sweep.door import run_sweeps

    held, free = tmp_path / "held.img", tmp_path / "free.img"
    for f in (held, free):
        f.write_bytes(b"\0" * (8 << 20))
    heard = []
    with interlock.device_lock(str(held)):
        outcome = run_sweeps(_request([held, free], tmp_path / "out", skip_refused=True), on_unit=heard.append)
    assert [(u.path, u.skipped) for u in outcome.units] == [(str(held), True), (str(free), False)]
    assert [u.path for u in heard] == [str(held), str(free)]  # told as each ended, the skipped one first
    assert outcome.exit_code == 3 and "another slogqual run" in outcome.skipped[0].error
    (result,) = outcome.results
    assert result.target["path"] == str(free) and result.status == "complete" and result.point(4096)
    assert held.read_bytes() == b"\0" * (8 << 20)
    assert unlocked(str(free))


# --- a shelf at once: --parallel ------------------------------------------------------------------------------

def _iso(t):
    from datetime import datetime
    return datetime.fromisoformat(t).timestamp()


def _keys(doc, path=""):
    """Every key path of a document (what its structure is, whatever its figures)."""
    if isinstance(doc, dict):
        return {k for key, v in doc.items() for k in {f"{path}.{key}"} | _keys(v, f"{path}.{key}")}
    if isinstance(doc, list) and doc and isinstance(doc[0], dict):
        return set().union(*(_keys(v, f"{path}[]") for v in doc))
    return set()


def test_parallel_units_are_measured_at_once_each_writing_a_lone_runs_document(tmp_path):
    files = [tmp_path / f"{n}.img" for n in "abc"]
    for f in files:
        f.write_bytes(b"\0" * (16 << 20))
    sizes = "4k,64k,1m"
    p = sweep(*files, "--parallel", "--sizes", sizes, "--runtime", "0.5", "--settle", "0", "--quiet", "--json",
              "-o", tmp_path / "out")
    assert p.returncode == 0, p.stderr
    docs = json.loads(p.stdout)
    assert [d["target"]["path"] for d in docs] == [str(f) for f in files]  # in the order named
    assert all(d["status"] == "complete" and len(d["points"]) == 3 for d in docs)
    # at once: every unit's first size began before any unit's last size ended (one after the other, the
    # last unit's first size would begin after the first unit's last ended)
    first_starts = [_iso(d["points"][0]["started"]) for d in docs]
    last_ends = [_iso(d["points"][-1]["started"]) + d["points"][-1]["runtime_ms"] / 1000 for d in docs]
    assert max(first_starts) < min(last_ends)
    # each document is the one a lone run writes: the same structure, the same params
    lone = sweep(files[0], "--sizes", sizes, "--runtime", "0.5", "--settle", "0", "--quiet", "--json",
                 "-o", tmp_path / "lone.json")
    assert lone.returncode == 0, lone.stderr
    alone = json.loads(lone.stdout)
    # a point's notes (too few IOs) and its interval (none from too few IOs for 30 batches) follow its figures
    def shape(doc):
        return {k for k in _keys(doc) if not k.startswith((".points[].notes", ".points[].mean_ci95_us"))}
    assert shape(docs[0]) == shape(alone)
    assert docs[0]["params"] == alone["params"] and docs[0]["target"] == alone["target"]


def test_parallel_is_bad_input_with_one_target_resume_or_an_open_ended_size(tmp_path):
    a, b = tmp_path / "a.img", tmp_path / "b.img"
    for f in (a, b):
        f.write_bytes(b"\0" * (8 << 20))
    for args, words in (([a], "two or more"), ([a, b, "--sustain", "10s"], "not --sustain"),
                        ([a, b, "--precision", "2%"], "not --sustain or --precision"),
                        (["--resume", tmp_path / "x.json"], "--resume")):
        p = sweep(*args, "--parallel", "--quiet", "-o", tmp_path / "out")
        assert p.returncode == 2 and words in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert a.read_bytes() == b"\0" * (8 << 20)


def test_parallel_interrupted_leaves_every_unit_resumable_and_none_claimed(tmp_path):
    import signal
    import time

    files = [tmp_path / f"{n}.img" for n in "ab"]
    for f in files:
        f.write_bytes(b"\0" * (16 << 20))
    out = tmp_path / "out"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.pathsep + \
        env.get("PYTHONPATH", "")
    proc = subprocess.Popen([sys.executable, "-m", "slogqual", "sweep", *map(str, files), "--parallel", "--sizes",
                             "4k,8k,16k,32k,64k,128k", "--runtime", "0.5", "--settle", "0", "--quiet", "-o", str(out)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while True:  # both units have measured a size: they run at once
        docs = [json.loads((out / n).read_text()) for n in (os.listdir(out) if out.exists() else [])
                if n.endswith(".json")]
        if len(docs) == 2 and all(d["points"] for d in docs):
            break
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the units made no progress"
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)  # slogqual alone, not its engines: each unit stops after its size
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    names = sorted(os.listdir(out))
    docs = [json.loads((out / n).read_text()) for n in names]
    assert all(d["status"] in ("interrupted", "complete") for d in docs), [d["status"] for d in docs]
    assert all(unlocked(str(f)) for f in files)
    for n in names:
        done = sweep("--resume", out / n, "--quiet")
        assert done.returncode == 0, done.stderr
        doc = json.loads((out / n).read_text())
        assert doc["status"] == "complete" and len(doc["points"]) == 6
