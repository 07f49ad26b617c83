"""The host probe (issue #37): its refusals here (this host has no ZFS module), its figures from a probe
recorded in the lab guest (tests/fixtures/host/), and the advisor bounded by them."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from slogqual.analysis import host as host_analysis
from slogqual.results.host import HostProbeResult

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "host")


def slogqual(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "slogqual", *args], capture_output=True, text=True, env=env, cwd=cwd)


def test_a_host_without_zfs_gets_one_line_and_exit_2_and_nothing_written(tmp_path):
    out = tmp_path / "host.json"
    bare = tmp_path / "bin"
    bare.mkdir()
    os.symlink(sys.executable, bare / "python3")
    for env in (None, dict(os.environ, PATH=str(bare))):  # this host's zfs command without a module; no zfs at all
        p = slogqual("host-probe", "--protocol", "nfs", "--bs", "64k", "-o", str(out), env=env, cwd=tmp_path)
        assert p.returncode == 2, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1 and "ZFS" in p.stderr, p.stderr
        assert not out.exists() and sorted(os.listdir(tmp_path)) == ["bin"]


def test_a_ram_dir_that_is_not_in_ram_is_refused_before_anything(tmp_path):
    out = tmp_path / "host.json"
    p = slogqual("host-probe", "--ram-dir", str(tmp_path), "-o", str(out), cwd=tmp_path)
    fs = subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "--target", str(tmp_path)], capture_output=True,
                        text=True).stdout.strip()
    if fs in ("tmpfs", "ramfs"):
        pytest.skip(f"{tmp_path} is on {fs} here")
    assert p.returncode == 2 and "not in RAM" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not out.exists()


@pytest.mark.parametrize("args, words", [
    (["--threads", "1,3", "--zils", "2"], "multiple of --zils"),
    (["--ram-dir", "/nonexistent-slogqual"], "no such directory"),
    (["--bs", "4q"], "--bs"),
])
def test_bad_input_is_one_line(tmp_path, args, words):
    p = slogqual("host-probe", *args, "-o", str(tmp_path / "h.json"), cwd=tmp_path)
    assert p.returncode == 2 and words in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not (tmp_path / "h.json").exists()


def test_the_copy_cost_fit_takes_the_per_write_and_per_byte_parts_apart():
    # two sizes, the per-write CPU: 40 us at 4 KiB, 200 us at 128 KiB -> a + b*size through both
    c = host_analysis.fit_copy([4096, 131072], [1000, 500], [0.040, 0.100])
    assert c.one(4096) == pytest.approx(40e-6) and c.one(131072) == pytest.approx(200e-6)
    assert c.per_byte_s > 0 and c.per_write_s > 0
    # noise that would make the per-byte part negative puts it all per write
    c = host_analysis.fit_copy([4096, 8192], [1000, 1000], [0.050, 0.049])
    assert c.per_byte_s == 0 and c.per_write_s == pytest.approx(49.5e-6)
