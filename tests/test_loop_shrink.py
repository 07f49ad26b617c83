"""A block device that shrinks under the sweep (issue #28), on a real loop device: its backing file is cut
and the loop device's capacity re-read (`losetup -c`) while the pair engine writes it. The file-target
version is tests/test_sweep_integration.py::test_a_target_that_shrinks_under_the_run_is_named_and_fails_the_run.
"""

import os
import subprocess
import sys
import time

import pytest

from conftest import ROOT, load, need, needs_root

pytestmark = [pytest.mark.integration, need("fio"), needs_root]

MiB = 1 << 20
SIZES = (4096, 8192, 16384, 32768)


@pytest.fixture
def loop_over(tmp_path):
    backing = tmp_path / "loop.img"
    backing.write_bytes(b"\0" * (64 * MiB))  # written out: no hole, every block the device has is real
    r = subprocess.run(["losetup", "-f", "--show", str(backing)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"no loop device: {r.stderr.strip()}")
    dev = r.stdout.strip()
    try:
        yield dev, backing
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)


def _size(dev):
    return int(subprocess.run(["blockdev", "--getsize64", dev], capture_output=True, text=True, check=True).stdout)


def _sweep(*args):
    return subprocess.Popen([sys.executable, "-m", "slogqual", "sweep", *map(str, args)],
                            env=dict(os.environ, PYTHONPATH=ROOT), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def test_a_loop_device_that_shrinks_under_the_sweep_fails_it_and_resume_refuses_it(tmp_path, loop_over):
    """The sweep notices the kernel's size of the device changed while a size was measured: it says so on
    stderr and in the document's warnings, discards the point in progress, keeps the points measured
    before, ends with exit 1 and status failed; --resume of that document refuses in one line (exit 2),
    since the device is no longer the one the sweep started on, and leaves the document as it was."""
    dev, backing = loop_over
    assert _size(dev) == 64 * MiB
    out = tmp_path / "r.json"
    proc = _sweep(dev, "--destroy-data", "--sizes", ",".join(str(s) for s in SIZES), "--runtime", "1",
                  "--settle", "0", "-o", out)
    first = None
    deadline = time.monotonic() + 120
    while first is None:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the sweep measured nothing"
        if out.exists():
            doc = load(out)
            first = doc if doc["points"] else None
        time.sleep(0.05)
    os.truncate(backing, 16 * MiB)
    subprocess.run(["losetup", "-c", dev], check=True)  # the kernel re-reads the backing file's size
    now = _size(dev)  # 16 MiB plus whatever the engine's writes past the cut grew the file by before -c
    assert 16 * MiB <= now < 64 * MiB
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err
    doc = load(out)
    assert doc["status"] == "failed" and "changed under the run" in doc["error"], doc["error"]
    changed = [w for w in doc["warnings"] if "changed under the run" in w]
    assert len(changed) == 1 and f"size {64 * MiB} -> {now} bytes (shrank)" in changed[0], doc["warnings"]
    sizes = [p["size"] for p in doc["points"]]
    assert 1 <= len(sizes) < len(SIZES) and sizes == list(SIZES[:len(sizes)])
    assert doc["points"][0] == first["points"][0]  # measured before the change: kept as it was
    lost = SIZES[len(sizes)]
    assert f"while {lost // 1024}K was measured" in changed[0]  # the size in progress is named, not kept
    assert f"WARNING: {changed[0]}" in err and "Traceback" not in err

    kept = out.read_bytes()
    again = _sweep("--resume", out, "--destroy-data", "--quiet")
    _, err = again.communicate(timeout=120)
    assert again.returncode == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and dev in lines[0] and f"now {now} bytes" in lines[0] \
        and f"started on {64 * MiB}" in lines[0], err
    assert out.read_bytes() == kept  # nothing measured, nothing rewritten
