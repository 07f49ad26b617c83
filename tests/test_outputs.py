"""`-o` and the other outputs never replace what slogqual did not write as that kind of document:
slogqual/outputs.py and every command that writes a file. A refused run is one line, exit 2, and leaves
the destination (and every input) byte-identical."""

import os
import stat

import pytest

from conftest import fixture_path, need, slogqual
from slogqual import outputs
from slogqual.errors import UsageError

pytestmark = pytest.mark.integration

DISKINFO = fixture_path("diskinfo", "freebsd-r320683-intel710-samsung950pro.collapsed.txt")


def _refused(proc, needle):
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr


@pytest.fixture
def results(tmp_path):
    """Two real sweep results (imported from recorded FreeBSD diskinfo -wS output)."""
    proc = slogqual("import", "diskinfo", DISKINFO, "-o", tmp_path / "di.json")
    assert proc.returncode == 0, proc.stderr
    return [tmp_path / "di-1.json", tmp_path / "di-2.json"]


def test_check_output_rules(tmp_path):
    foreign = tmp_path / "notes.txt"
    foreign.write_text("mine\n")
    mine = tmp_path / "r.json"
    mine.write_text('{\n  "schema": "slogqual.sweep/1",\n  "status": "complete"\n}\n')
    assert outputs.check_output(str(tmp_path / "new.json"), "sweep result", "slogqual.sweep/") == str(tmp_path / "new.json")
    assert outputs.check_output(str(mine), "sweep result", "slogqual.sweep/")  # ours: may be replaced
    with pytest.raises(UsageError, match="not a slogqual scenario result"):
        outputs.check_output(str(mine), "scenario result", "slogqual.scenario/")  # ours, another kind
    with pytest.raises(UsageError, match="add --force"):
        outputs.check_output(str(foreign), "sweep result", "slogqual.sweep/")
    assert outputs.check_output(str(foreign), "sweep result", "slogqual.sweep/", force=True)
    with pytest.raises(UsageError, match="is the result store"):
        outputs.check_output(str(mine), "sweep result", "slogqual.sweep/", [(str(mine), "the result store")], force=True)
    with pytest.raises(UsageError, match="is a directory"):
        outputs.check_output(str(tmp_path), "sweep result", "slogqual.sweep/", force=True)
    with pytest.raises(UsageError, match="does not exist"):
        outputs.check_output(str(tmp_path / "no" / "r.json"), "sweep result", "slogqual.sweep/")
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    with pytest.raises(UsageError, match="cannot be the sweep result"):
        outputs.check_output(str(loop), "sweep result", "slogqual.sweep/", force=True)
    assert foreign.read_text() == "mine\n"


@need("gnuplot")
def test_pictures_slogqual_drew_are_marked_and_recognised(results, tmp_path):
    for ext in ("png", "svg"):
        out = tmp_path / f"p.{ext}"
        proc = slogqual("plot", *results, "-o", out)
        assert proc.returncode == 0, proc.stderr
        assert outputs.picture(str(out))
        again = slogqual("plot", *results, "-o", out, "--metric", "iops")  # ours: replaced without --force
        assert again.returncode == 0, again.stderr
    # a PNG nobody marked (a photo, another tool's chart) is not slogqual's to replace
    photo = tmp_path / "photo.png"
    data = (tmp_path / "p.png").read_bytes().replace(outputs.PNG_MARK, b"Software\0othertool")
    photo.write_bytes(data)
    _refused(slogqual("plot", *results, "-o", photo), "not a slogqual picture")
    assert photo.read_bytes() == data


@need("gnuplot")
def test_every_output_refuses_an_input_and_a_foreign_file(results, tmp_path):
    kept = [r.read_bytes() for r in results]
    foreign = tmp_path / "notes.txt"
    foreign.write_text("mine\n")
    (tmp_path / "imp-1.json").write_text("mine\n")
    cases = [
        (["plot", *results, "-o", tmp_path / "x.svg", "--script", results[0]], "is an input of this command"),
        (["plot", *results, "-o", tmp_path / "x.svg", "--script", foreign], "not a slogqual gnuplot script"),
        (["report", *results, "-o", results[1], "--force"], "is an input of this command"),
        (["report", *results, "-o", foreign], "not a slogqual report"),
        (["export", "--csv", *results, "-o", results[0], "--force"], "is an input of this command"),
        (["export", "--csv", *results, "-o", foreign], "not a slogqual CSV export"),
        # two devices in the capture: -o imp.json writes imp-1.json and imp-2.json
        (["import", "diskinfo", DISKINFO, "-o", tmp_path / "imp.json"], "imp-1.json exists and is not a slogqual"),
        (["scenario", "plot", results[0], "-o", foreign], "not a slogqual picture"),
        # before any device is claimed or identified
        (["scenario", "run", "iscsi-4k-randwrite", "--data", tmp_path / "a", tmp_path / "b", "--log", tmp_path / "c",
          "-o", foreign], "not a slogqual scenario result"),
        (["qualify", tmp_path / "dev.img", "--profile", "homelab-1gbe", "--out", tmp_path / "q", "--junit", foreign],
         "not a slogqual JUnit report"),
    ]
    for args, needle in cases:
        _refused(slogqual(*args, env={"SLOGQUAL_STORE": str(tmp_path / "store.sqlite")}), needle)
    assert foreign.read_text() == "mine\n" and [r.read_bytes() for r in results] == kept
    assert (tmp_path / "imp-1.json").read_text() == "mine\n" and not (tmp_path / "imp-2.json").exists()
    assert not (tmp_path / "q").exists() and not (tmp_path / "store.sqlite").exists()


@need("gnuplot")
def test_outputs_slogqual_wrote_are_replaced_without_force(results, tmp_path):
    for args in (["report", *results, "-o", tmp_path / "r.html"], ["report", *results, "-o", tmp_path / "r.md"],
                 ["export", "--csv", *results, "-o", tmp_path / "r.csv"]):
        for _ in range(2):
            proc = slogqual(*args)
            assert proc.returncode == 0, proc.stderr


def test_a_device_node_is_never_an_output(tmp_path, results):
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    node = tmp_path / "null"
    os.mknod(node, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # a private /dev/null
    for args in (["export", "--csv", *results, "-o", node, "--force"], ["report", *results, "-o", node, "--force"]):
        _refused(slogqual(*args), "is a device node")
    assert stat.S_ISCHR(os.stat(node).st_mode)
