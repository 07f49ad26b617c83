"""`slogqual qualify A B … --parallel` (issue #30, a shelf at once): the devices measured at the same time,
each judged and written as a lone run would; a tray claimed all or nothing (--skip-refused names what it
skipped); an interrupt at a seeded random moment leaves no device claimed and every sweep resumable.
Real files and the real CLI; the refusals on real loop devices (one mounted), as tests/test_tray.py."""

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, load, need, slogqual
from test_safety import loops  # noqa: F401 (the loop-device fixture, defined once)
from test_tray import digest, same_file_loop, unlocked
from slogqual.device import interlock

pytestmark = [pytest.mark.integration, need("fio")]

# A budget no file misses (the verdict does not hang on a loaded host's figures); two steady-state rounds,
# fewer than SNIA's window of five, so "not reached" whatever the figures.
PROFILE = """\
name = "loose"
sizes = ["4k", "64k", "1m"]

[[criterion]]
check = "lat_us.mean @ 4k <= 1000000"
why = "any device meets it: the test is about the run, not the device"
"""
FAST = ["--runtime", "0.5", "--settle", "0", "--round-runtime", "0.2", "--max-rounds", "2",
        "--precondition", "quick", "--quick-bytes", "4m", "--no-store", "--quiet"]


@pytest.fixture
def profile(tmp_path):
    path = tmp_path / "loose.toml"
    path.write_text(PROFILE)
    return str(path)


def files(tmp_path, names=("a", "b"), mib=64):
    out = []
    for n in names:
        f = tmp_path / f"{n}.img"
        with open(f, "wb") as fh:
            fh.truncate(mib << 20)
        out.append(f)
    return out


# --- each document is a lone run's, but for its figures and timing ---------------------------------------

# The mask, path by path ([] is any list item): what differs between two runs of the same device because
# the device was measured again (its figures, and sentences made of them) or at another moment, and the
# command line, which names the other devices of the run. Everything else must be equal.
FIGURES = {
    ".criteria[].measured", ".criteria[].measured_text", ".criteria[].detail", ".criteria[].message",
    ".steady_state.rounds[].iops", ".steady_state.rounds[].mean_us", ".steady_state.rounds[].p99_us",
    ".steady_state.rounds[].ios", ".steady_state.last_check.window", ".steady_state.last_check.mean",
    ".precondition.mbps",
    # a point's figures; its notes and interval follow from its IO count (too few IOs: neither)
    ".points[].lat_us", ".points[].write_lat_us", ".points[].flush_lat_us", ".points[].iops", ".points[].mbps",
    ".points[].ios", ".points[].over_time", ".points[].mean_ci95_us", ".points[].notes", ".points[].cpu",
}
TIMING = {".started", ".finished", ".environment.started", ".points[].started", ".points[].runtime_ms",
          ".precondition.seconds"}
COMMAND_LINE = {".environment.argv"}
MASK = FIGURES | TIMING | COMMAND_LINE
FLUSH_COST = "flush cost"  # the power-loss evidence worded from the sweep's flush figure


def masked(doc, path=""):
    """The document without its masked keys: whether one is there at all follows from the figures too (a
    point with too few IOs — a busy host — has no interval, no latency over time); the sweep document
    embedded in a qualification is masked as a sweep file is (its paths start again at the root)."""
    if isinstance(doc, dict):
        if doc.get("name") == FLUSH_COST and "says" in doc:
            doc = dict(doc, says="<masked: flush figure>")
        return {k: masked(v, "" if f"{path}.{k}" == ".sweep.document" else f"{path}.{k}") for k, v in doc.items()
                if f"{path}.{k}" not in MASK}
    if isinstance(doc, list):
        return [masked(v, path + "[]") for v in doc]
    return doc


def test_the_mask_is_narrow():
    doc = {"verdict": "pass", "started": "t", "points": [{"size": 4096, "iops": 1.0, "lat_basis": "pair"}],
           "sweep": {"document": {"started": "t", "status": "complete", "points": [{"size": 8192, "mbps": 2.0}]}},
           "device": {"power_loss": {"evidence": [{"name": FLUSH_COST, "says": "1 µs"},
                                                  {"name": "write cache", "says": "write back"}]}}}
    m = masked(doc)
    assert m["verdict"] == "pass" and "started" not in m
    assert m["points"] == [{"size": 4096, "lat_basis": "pair"}]
    assert m["sweep"]["document"] == {"status": "complete", "points": [{"size": 8192}]}
    assert m["device"]["power_loss"]["evidence"][1]["says"] == "write back"  # only the flush figure's sentence


def test_parallel_devices_are_measured_at_once_each_judged_and_written_as_a_lone_run(tmp_path, profile):
    a, b = files(tmp_path)
    out, lone = tmp_path / "together", tmp_path / "lone"
    p = slogqual("qualify", a, b, "--profile", profile, "--parallel", "--out", out, *FAST)
    assert p.returncode == 0, p.stderr
    alone = slogqual("qualify", a, "--profile", profile, "--out", lone, *FAST)
    assert alone.returncode == 0, alone.stderr
    docs = {f: load(out / f"{f.name}.qualification.json") for f in (a, b)}
    sweeps = [load(out / f"{f.name}.sweep.json") for f in (a, b)]
    # at once: every device's first size began before any device's last size ended
    first = [_iso(s["points"][0]["started"]) for s in sweeps]
    last = [_iso(s["points"][-1]["started"]) + s["points"][-1]["runtime_ms"] / 1000 for s in sweeps]
    assert max(first) < min(last), (first, last)
    # each as a lone run: the same document but for the mask (the output directory named as the lone run's)
    together = json.loads(json.dumps(docs[a]).replace(str(out), str(lone)))
    single = load(lone / f"{a.name}.qualification.json")
    assert masked(together) == masked(single)
    assert masked(sweeps[0]) == masked(load(lone / f"{a.name}.sweep.json"))
    assert together["verdict"] == "pass" and docs[b]["verdict"] == "pass"
    assert together["sweep"]["status"] == "complete" and len(sweeps[1]["points"]) == 3


def _iso(t):
    from datetime import datetime
    return datetime.fromisoformat(t).timestamp()


def test_parallel_with_one_device_is_a_lone_run(tmp_path, profile):
    (a,) = files(tmp_path, ["a"])
    p = slogqual("qualify", a, "--profile", profile, "--parallel", "--out", tmp_path / "o", *FAST)
    assert p.returncode == 0, p.stderr
    assert load(tmp_path / "o" / "a.img.qualification.json")["verdict"] == "pass"


def test_probe_measures_the_devices_alone_and_together_after_their_qualification(tmp_path, profile):
    a, b = files(tmp_path)
    out = tmp_path / "o"
    p = slogqual("qualify", a, b, "--profile", profile, "--parallel", "--probe", "--out", out, *FAST,
                 "--runtime", "0.2")  # the last --runtime counts: 0.2 s per size, alone and together
    assert p.returncode == 0, p.stderr
    shelf = load(out / "shelf.json")
    assert shelf["schema"] == "slogqual.shelf/1" and shelf["units"] == [str(a), str(b)]
    # the QD1 write + flush sizes, then the higher-queue-depth round at 1 MiB (shelf_probe.DEPTH)
    assert [(s["size"], s.get("depth", 1)) for s in shelf["sizes"]] == [
        (128 << 10, 1), (256 << 10, 1), (512 << 10, 1), (1 << 20, 1), (2 << 20, 1), (4 << 20, 1), (8 << 20, 1),
        (1 << 20, 8)]
    assert all(s["together"].keys() == s["alone"].keys() == {str(a), str(b)} for s in shelf["sizes"])
    assert all(p["error"].endswith("is not a block device: it has no path to hardware") for p in shelf["paths"])
    assert "together vs alone" in p.stdout  # the table after the verdicts
    page = (out / "qualification.html").read_text()
    assert f"Together vs alone: {a}, {b}" in page and 'id="qualification"' in page
    # the verdicts are the devices' own, as without --probe
    assert [load(out / f"{f.name}.qualification.json")["verdict"] for f in (a, b)] == ["pass", "pass"]


def test_tray_options_are_bad_input_before_anything_is_written(tmp_path, profile):
    a, b = files(tmp_path)
    alias = tmp_path / "alias.img"
    alias.symlink_to(a)
    for args, words in (([a, b, "--skip-refused"], "--skip-refused goes with --parallel"),
                        ([a, b, "--probe"], "--probe goes with --parallel"),
                        ([a, "--parallel", "--probe"], "two or more"),
                        ([a, alias, "--parallel"], "named twice"),
                        ([a, tmp_path / "missing.img", "--parallel"], "missing.img")):
        p = slogqual("qualify", *args, "--profile", profile, "--out", tmp_path / "o", *FAST)
        assert p.returncode == 2 and words in p.stderr and len(p.stderr.strip().splitlines()) == 1, (args, p.stderr)
        assert not (tmp_path / "o").exists()
    assert a.read_bytes() == b"\0" * (64 << 20)


def test_the_output_directory_is_made_only_once_nothing_refuses_the_run(tmp_path, profile):
    """--out NEW: a run refused while planning (a JUnit file in a missing directory, an output directory
    under a file) or at the tray's claims (--parallel, a device another run holds) leaves no directory;
    a run that starts makes it, and a lone run's refused device is judged REFUSED inside it."""
    a, b = files(tmp_path)
    out = tmp_path / "new" / "o"
    blocker = tmp_path / "file"
    blocker.write_text("")
    for args, words in ((["--out", out, "--junit", tmp_path / "missing" / "j.xml"], "missing does not exist"),
                        (["--out", out, "--parallel", "--junit", tmp_path / "missing" / "j.xml"], "does not exist"),
                        (["--out", blocker / "o"], f"({blocker} is not a writable directory)")):
        p = slogqual("qualify", a, b, "--profile", profile, *args, *FAST)
        assert p.returncode == 2 and words in p.stderr and len(p.stderr.strip().splitlines()) == 1, (args, p.stderr)
        assert not (tmp_path / "new").exists() and not (tmp_path / "missing").exists()
    with interlock.device_lock(str(b)):  # another slogqual run is writing b (this process's lock)
        p = slogqual("qualify", a, b, "--profile", profile, "--parallel", "--out", out, *FAST)
        assert p.returncode == 3 and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert not (tmp_path / "new").exists()
        p = slogqual("qualify", b, "--profile", profile, "--out", out, "--no-html", *FAST)  # in turn: REFUSED
        assert p.returncode == 3, p.stderr
    assert os.listdir(out) == ["b.img.qualification.json"]
    assert load(out / "b.img.qualification.json")["verdict"] == "refused"
    assert a.read_bytes() == b.read_bytes() == b"\0" * (64 << 20)


def test_two_loop_devices_on_one_file_are_one_device_and_nothing_is_written(loops, tmp_path, profile):  # noqa: F811
    a = loops.new()
    b = same_file_loop(loops, a)
    before = digest(loops.image_of(a))
    out = tmp_path / "out"
    p = slogqual("qualify", a, b, "--profile", profile, "--parallel", "--destroy-data", "--out", out, *FAST)
    assert p.returncode == 2, p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert f"{a} and {b} are one storage" in line and "would be qualified as two units" in line
    assert digest(loops.image_of(a)) == before and not out.exists()
    assert unlocked(a) and unlocked(b)


# --- all or nothing -----------------------------------------------------------------------------------

def test_one_refused_device_refuses_the_whole_tray_and_nothing_is_written(loops, tmp_path, profile):  # noqa: F811
    mounted, free = loops.new(), loops.new()
    loops.mkfs(mounted)
    mnt = loops.mount(mounted)
    before = digest(free)
    out = tmp_path / "out"
    p = slogqual("qualify", free, mounted, "--profile", profile, "--parallel", "--destroy-data", "--out", out, *FAST)
    assert p.returncode == 3, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert f"refusing {mounted}" in lines[0] and f"is mounted at {mnt}" in lines[0]
    assert f"not to {free} either" in lines[0] and "--skip-refused qualifies the rest" in lines[0]
    assert digest(free) == before  # the free device, first in the tray, was not written
    assert not out.exists()  # no document of any device, not even their directory
    assert p.stdout == ""
    assert unlocked(free) and unlocked(mounted)


def test_skip_refused_qualifies_the_rest_and_names_what_it_skipped(loops, tmp_path, profile):  # noqa: F811
    mounted, free = loops.new(), loops.new()
    loops.mkfs(mounted)
    loops.mount(mounted)
    before = digest(free)
    out = tmp_path / "out"
    p = slogqual("qualify", mounted, free, "--profile", profile, "--parallel", "--skip-refused", "--destroy-data",
                 "--out", out, *FAST)
    assert p.returncode == 3, p.stderr  # a device was refused: still said by the exit code
    assert f"slogqual: skipped {mounted} (--skip-refused): refusing {mounted}" in p.stderr
    assert "is mounted at" in p.stderr
    name = {d: os.path.basename(d) for d in (mounted, free)}
    refused, measured = (load(out / f"{name[d]}.qualification.json") for d in (mounted, free))
    assert refused["verdict"] == "refused" and refused["sweep"]["path"] is None  # judged as its lone run would be
    assert not (out / f"{name[mounted]}.sweep.json").exists()
    assert measured["verdict"] == "pass" and measured["sweep"]["status"] == "complete"
    assert digest(free) != before
    assert unlocked(free) and unlocked(mounted)


def test_the_door_refuses_a_tray_with_a_device_another_run_holds_and_skips_it_when_asked(tmp_path, profile):
    from slogqual.errors import RefusedError
    from slogqual.qualify.door import QualifyRequest, qualify

    held, free = files(tmp_path, ["held", "free"])
    fast = dict(runtime_s=0.2, settle_s=0, max_rounds=0, record_in_store=False, html=False)
    with interlock.device_lock(str(held)):  # another slogqual run is writing it (this process's lock)
        with pytest.raises(RefusedError) as ei:
            qualify(QualifyRequest([str(free), str(held)], profile, out_dir=str(tmp_path / "o1"), parallel=True,
                                   **fast))
        assert f"refusing {held}: another slogqual run" in str(ei.value) and str(free) in str(ei.value)
        assert not (tmp_path / "o1").exists() and unlocked(str(free))  # not even the output directory
        notes = []
        outcome = qualify(QualifyRequest([str(held), str(free)], profile, out_dir=str(tmp_path / "o2"),
                                         parallel=True, skip_refused=True, **fast), on_note=notes.append)
    assert outcome.skipped == [str(held)] and outcome.exit_code == 3
    assert [d.verdict for d in outcome.documents] == ["refused", "pass"]
    assert any(n.startswith(f"skipped {held} (--skip-refused): refusing {held}") for n in notes), notes
    assert held.read_bytes() == b"\0" * (64 << 20)
    assert unlocked(str(free))


# --- an interrupt ---------------------------------------------------------------------------------------

def _naming(text):
    """Living processes (not zombies) whose command line holds text: an engine still writing a unit."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read()
            with open(f"/proc/{pid}/stat") as fh:
                state = fh.read().rsplit(") ", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if text.encode() in argv and state != "Z" and int(pid) != os.getpid():
            found.append(int(pid))
    return found


def test_sigint_at_a_seeded_random_moment_leaves_no_device_claimed_and_every_sweep_resumable(tmp_path, profile):
    seed = int(os.environ.get("SLOGQUAL_TEST_SEED", "0")) or random.randrange(1 << 24)
    rng = random.Random(seed)
    a, b = files(tmp_path)
    sizes = "4k,8k,16k,32k,64k,128k"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    reached = []  # where each device was when the interrupt landed
    for run in range(2):
        out = tmp_path / f"out{run}"
        proc = subprocess.Popen([sys.executable, "-m", "slogqual", "qualify", str(a), str(b), "--profile", profile,
                                 "--parallel", "--sizes", sizes, "--out", str(out), *FAST], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not all(interlock.lock_holder(str(f)) == proc.pid for f in (a, b)):  # the tray is claimed
            assert proc.poll() is None, (seed, proc.communicate())
            assert time.monotonic() < deadline, (seed, "the tray was never claimed")
            time.sleep(0.02)
        # claimed, then: the fill (4 MiB), two 0.2 s rounds, six 0.5 s sizes: 3.4 s at the least
        time.sleep(rng.uniform(0.0, 2.5))
        proc.send_signal(signal.SIGINT)  # slogqual alone, as a kill would; every unit must end its engines
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130 and "Traceback" not in err, (seed, proc.returncode, err)
        assert unlocked(str(a)) and unlocked(str(b)), seed
        assert not _naming(str(tmp_path)), (seed, "an engine outlived the run")
        for f in (a, b):
            doc = load(out / f"{f.name}.qualification.json")
            assert doc["verdict"] == "error" and doc["error"] == "interrupted", (seed, doc["verdict"], doc["error"])
            sweep = out / f"{f.name}.sweep.json"
            if not sweep.exists():  # interrupted before its sweep began (the fill, the rounds)
                assert doc["sweep"]["path"] is None, seed
                reached.append("before its sweep")
                continue
            assert load(sweep)["status"] == "interrupted" == doc["sweep"]["status"], seed
            reached.append(f"{len(load(sweep)['points'])} of 6 sizes")
            done = slogqual("sweep", "--resume", sweep, "--quiet")
            assert done.returncode == 0, (seed, done.stderr)
            resumed = load(sweep)
            assert resumed["status"] == "complete" and len(resumed["points"]) == 6, seed
    print(f"seed {seed}: interrupted at {reached}")
