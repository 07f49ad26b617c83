"""The power-cut test in the lab (issue #16): three emulated SSDs that look the same to the guest (SATA,
write cache on) — nbdkit's cache filter with cache=unsafe (flushes ignored), cache=writeback (flushes
honoured), no cache filter (nothing volatile) — written in a real guest, their power cut by SIGKILL of
their nbdkit and of QEMU, their media verified afterwards.

Marked ``lab``; skipped with the reason when the lab image is not built or we are not root. Asserted:
the lying device FAILS with every cycle's lost records counted, the other two PASS with 0 lost, the
journals (the recorder) and the results agree, the guest's own device records cannot tell the three
apart, and nothing is left behind — also after a SIGINT at a seeded random moment.
"""

import glob
import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from conftest import need_lab

from slogqual.powercut.recorder import cycles_of, load_journal

pytestmark = pytest.mark.lab

CLASSES = ["lying-ssd", "consumer-ssd", "plp-ssd"]
CUT_AFTER = 24


@pytest.fixture(autouse=True)
def _lab_ready():
    need_lab()


def _ours_running(marker):
    """Processes (pid, argv) whose command line mentions ``marker``."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if any(marker in a for a in argv) and os.path.basename(argv[0]) in ("nbdkit", "qemu-system-x86_64"):
            found.append((int(pid), argv))
    return found


def _mem_dirs():
    return set(glob.glob("/dev/shm/slogqual-lab-mem-*"))


def _leaked_mem_dirs(before):
    """NVDIMM memory directories that appeared and whose owner is gone: another lane's live guest
    (tests/lanes.py) has one of its own, owned by a process that still runs."""
    from slogqual import owned

    return {d for d in _mem_dirs() - before if owned.owner(d) is not None and not owned.pid_alive(owned.owner(d))}


def test_a_power_cut_tells_apart_what_the_cache_bit_cannot(tmp_path):
    labtmp = tmp_path / "labtmp"
    labtmp.mkdir()
    out = tmp_path / "out"
    mem_before = _mem_dirs()
    env = dict(os.environ, SLOGQUAL_LAB_TMP=str(labtmp))
    proc = subprocess.run([sys.executable, "-m", "slogqual", "lab", "powercut", *CLASSES, "--cycles", "2",
                           "--cut-after", str(CUT_AFTER), "-o", str(out), "--json"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    docs = {d["target"]["lab_class"]: d for d in json.loads(proc.stdout)}
    assert sorted(docs) == sorted(CLASSES)

    for name, doc in docs.items():
        assert doc["status"] == "complete" and len(doc["cycles"]) == 2, (name, doc.get("error"))
        assert doc["target"]["kind"] == "emulated"  # qualify --powercut never takes it for a real device
        index = int(doc["target"]["path"].split(":")[1])
        for cy in doc["cycles"]:
            # the cut came only once every device had CUT_AFTER acknowledged records
            assert cy["acknowledged"] >= CUT_AFTER, (name, cy)
            assert cy["intact"] + cy["lost"] == cy["acknowledged"]
            # what the result counts is what the guest's writer told the recorder (its journal on the share)
            journal = out / f"cycle-{cy['cycle']}" / f"journal-{index}.jsonl"
            held = cycles_of(load_journal(str(journal)).handle({"op": "query", "run": doc["run_id"]}))
            assert len(held[cy["cycle"]]["acked"]) == cy["acknowledged"] == cy["recorder_acknowledged"]
            assert held[cy["cycle"]]["ended"] is None  # the writer never finished: the power went first

    lying = docs["lying-ssd"]
    assert lying["verdict"] == "fail"
    index = int(lying["target"]["path"].split(":")[1])
    for cy in lying["cycles"]:
        # cache=unsafe ignored every flush: nothing acknowledged reached the medium before the cut
        assert cy["lost"] == cy["acknowledged"] > 0
        journal = out / f"cycle-{cy['cycle']}" / f"journal-{index}.jsonl"
        acked = set(cycles_of(load_journal(str(journal)).handle({"op": "query", "run": lying["run_id"]}))
                    [cy["cycle"]]["acked"])
        assert cy["lost_records"] and {r["seq"] for r in cy["lost_records"]} <= acked  # each one named
    for name in ("consumer-ssd", "plp-ssd"):
        assert docs[name]["verdict"] == "pass", name
        assert all(cy["lost"] == 0 and cy["intact"] == cy["acknowledged"] for cy in docs[name]["cycles"]), name

    # the guest's device records: the same ATA write-cache word for all three — the bit cannot tell a
    # lying cache from an honest one; only the cut did
    caches = {name: (doc["device"] or {}).get("write_cache", {}).get("verdict") for name, doc in docs.items()}
    assert len(set(caches.values())) == 1 and None not in caches.values(), caches
    assert all(doc["device"]["model"].startswith("SLOGQUAL LAB") for doc in docs.values())

    # nothing left: no nbdkit or QEMU of ours, no job directory, no backing files in memory
    assert _ours_running("slogqual-powercut-") == [] and _ours_running(str(labtmp)) == []
    assert list(labtmp.iterdir()) == []
    assert _leaked_mem_dirs(mem_before) == set()


def test_sigint_at_a_seeded_moment_leaves_nothing_and_keeps_what_was_verified(tmp_path):
    seed = int(os.environ.get("SLOGQUAL_TEST_SEED", "16"))
    rng = random.Random(seed)
    labtmp = tmp_path / "labtmp"
    labtmp.mkdir()
    out = tmp_path / "out"
    mem_before = _mem_dirs()
    env = dict(os.environ, SLOGQUAL_LAB_TMP=str(labtmp))
    proc = subprocess.Popen([sys.executable, "-m", "slogqual", "lab", "powercut", "lying-ssd", "plp-ssd",
                             "--cycles", "3", "--cut-after", str(CUT_AFTER), "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        # a moment in the first or second cycle's guest, after it booted: seeded, so a failure repeats
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None and not _ours_running(str(labtmp)):
            time.sleep(0.2)
        time.sleep(rng.uniform(0.0, 40.0))
        if proc.poll() is not None:
            pytest.skip(f"seed {seed}: the run ended before its moment (set SLOGQUAL_TEST_SEED)")
        seen = _ours_running("slogqual-powercut-") + _ours_running(str(labtmp))
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err[-2000:]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (_ours_running("slogqual-powercut-") or _ours_running(str(labtmp))):
        time.sleep(0.2)
    assert _ours_running("slogqual-powercut-") == [] and _ours_running(str(labtmp)) == [], seen
    assert list(labtmp.iterdir()) == []
    assert _leaked_mem_dirs(mem_before) == set()
    # the results say interrupted and keep every cycle verified before the signal
    for path in sorted(out.glob("*.powercut.json")):
        doc = json.loads(path.read_text())
        assert doc["status"] == "interrupted", (path, doc["status"])
        assert doc["verdict"] in ("fail", "incomplete")
        assert len(doc["cycles"]) < 3
