"""Special vdev or SLOG? (issue #39): `advise --special SWEEP` on recorded lab sweeps (tests/fixtures/advisor/check/
test-2026: the emulated NVMe, SAS SSD and hdd of the advisor check, swept in the lab guest). Relations only: on 2.4
the special's figures are the same device's dedicated-log figures held as upper bounds; with zil_special_is_slog=0
a load ZFS logs indirectly without a SLOG falls back to the no-log figure, one it copies does not; before 2.4 it is
the no-log figure; each candidate is set beside the special."""

import json
import os
import subprocess
import sys

import pytest

from slogqual.results.advice import AdviceResult
from slogqual.results.schema import DocumentError

LAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "advisor", "check", "test-2026", "lab")
NVME = os.path.join(LAB, "nvme-iscsi-4k", "log.sweep.json")
SAS = os.path.join(LAB, "sas-ssd-iscsi-4k", "log.sweep.json")
HDD = os.path.join(LAB, "nvme-iscsi-4k", "data.sweep.json")


def advise(tmp_path, *args):
    out = tmp_path / "advice.json"
    p = subprocess.run([sys.executable, "-m", "slogqual", "advise", *args, "--data", HDD, HDD, "--layout", "stripe",
                        "--tunables", "defaults", "--threads", "1,4,16", "-o", str(out)],
                       capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    return p.stdout, json.loads(out.read_text())


@pytest.mark.parametrize("protocol,bs,indirect", [("iscsi", "4k", False), ("nfs", "64k", True)])
def test_the_special_is_the_same_device_as_a_log_held_as_a_bound_and_no_log_where_zfs_would_not_use_it(
        tmp_path, protocol, bs, indirect):
    text, doc = advise(tmp_path, "--log", SAS, NVME, "--special", NVME, "--protocol", protocol, "--bs", bs)
    sp = doc["special"]
    assert sp["class"] == "nvme" and sp["indirect_without_slog"] is indirect
    nvme = next(c for c in doc["candidates"] if c["class"] == "nvme")
    on, off, before = (sp["settings"][k] for k in ("2.4-special-is-slog", "2.4-special-not-slog", "before-2.4"))
    for s, log, no, b in zip(on, nvme["steps"], off, before):
        assert s["threads"] == log["threads"] and s["iops"] == log["iops"]  # the same device, the same model
        assert s["upper_bound"]  # never a prediction: the special also takes metadata and small blocks
        assert b["iops"] == log["without_slog_iops"] and b["binding"] == "as-without-log"
        assert no == (b if indirect else s)
    for v in sp["versus"]:
        cand = next(c for c in doc["candidates"] if c["sweep"] == v["sweep"])
        for r, s in zip(v["steps"], cand["steps"]):
            assert r["ratio"] == pytest.approx(s["iops"] / r["special_iops"], abs=1e-3)
    assert "special vdev or SLOG?" in text and "before OpenZFS 2.4" in text
    assert AdviceResult.from_dict(json.loads(json.dumps(doc))).to_dict() == doc  # typed, round trip


def test_an_unknown_setting_in_a_saved_advice_is_refused_naming_it(tmp_path):
    _, doc = advise(tmp_path, "--log", SAS, "--special", NVME, "--protocol", "iscsi", "--bs", "4k")
    doc["special"]["settings"]["2.5-guess"] = []
    with pytest.raises(DocumentError, match="2.5-guess"):
        AdviceResult.from_dict(doc)


@pytest.mark.parametrize("zfs,setting", [("2.4.4", "2.4-special-is-slog"), ("2.3", "before-2.4"), (None, None)])
def test_the_openzfs_the_pool_runs_is_said_and_picks_the_special_s_setting(tmp_path, zfs, setting):
    text, doc = advise(tmp_path, "--log", SAS, "--special", NVME, "--protocol", "iscsi", "--bs", "4k",
                       *(["--zfs", zfs] if zfs else []))
    assert doc["tunables"]["zfs_version"] == zfs and doc["special"]["applies"] == setting
    assert doc["tunables"]["sources"]["zfs_version"] == ("option" if zfs else "unknown")  # --tunables defaults
    line = text.splitlines()[1]  # after the host line: which OpenZFS the advice is for, never guessed
    assert line.startswith(f"OpenZFS {zfs} (option)" if zfs else "OpenZFS: unknown (give --zfs VERSION")
    marked = [l for l in text.splitlines() if "← this pool" in l]
    assert len(marked) == (1 if setting else 0)


def test_a_version_that_names_none_is_one_line_before_anything_is_written(tmp_path):
    p = subprocess.run([sys.executable, "-m", "slogqual", "advise", "--log", SAS, "--protocol", "iscsi", "--bs", "4k",
                        "--threads", "1", "--zfs", "latest", "-o", str(tmp_path / "a.json")],
                       capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr == "slogqual: --zfs latest: not an OpenZFS version (e.g. 2.3 or 2.4.4)\n"
    assert not (tmp_path / "a.json").exists()


def test_the_module_version_is_read_as_the_lab_guests_recorded_it(tmp_path):
    from conftest import fixture_path
    from slogqual.tools import zfs_tunables

    for series in ("2.3", "2.4"):
        found = zfs_tunables.module_version(fixture_path("zfs", series, "sys-module-zfs-version.txt"))
        assert zfs_tunables.series(found) == tuple(int(x) for x in series.split("."))
    assert zfs_tunables.module_version(str(tmp_path / "no-module")) is None  # no module loaded: unknown
