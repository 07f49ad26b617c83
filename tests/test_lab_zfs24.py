"""The lab on either OpenZFS version (issue #39): 2.3 (the default) or 2.4, each built and cached on its own.

The unit tests read what both versions' lab guests recorded (tests/fixtures/zfs/2.3, 2.4 and SOURCES.md): the
kstat reader takes both versions' ZIL kstats, rows it does not know included; `zfs version` there names a
userland and a module of one version; the ZIL's module parameters read. They pick a lab image by version from
a cache directory laid out as contrib/lab/build.sh lays it (manifests only: nothing boots).

The one lab test (marked ``lab``) boots the OpenZFS 2.4 guest and runs `zpool version` in it: module and
userland must agree. contrib/lab/build.sh builds 2.4 in the background after 2.3 (its default), so the test
runs after the long lab tests (marked ``zfs24``) and waits for that build; it is skipped, saying why, where the 2.4 lab is not built.
"""

import json
import os

import pytest

from conftest import need_lab, fixture_path, read_fixture, slogqual
from slogqual.errors import UsageError
from slogqual.lab import image
from slogqual.tools import kstat, zfs, zfs_tunables

VERSIONS = ("2.3", "2.4")


def _zil(series, when):
    return kstat.parse_kstat(read_fixture("zfs", series, f"zil-{when}.txt"))


# ---- what the guests recorded -----------------------------------------------------------------

@pytest.mark.parametrize("series", VERSIONS)
def test_the_zil_kstat_of_each_version_reads_with_every_row(series):
    """Every row of the recorded kstat is read (the rows of one version the other lacks too), each a number,
    and the ZIL counters slogqual reports moved as 200 O_DSYNC writes to a zvol with a log device move them."""
    text = read_fixture("zfs", series, "zil-after.txt")
    rows = [line.split()[0] for line in text.splitlines()[2:] if line.strip()]
    after, before = _zil(series, "after"), _zil(series, "before")
    assert list(after) == rows
    assert all(isinstance(v, int) for v in after.values())
    d = kstat.ZilStats.from_kstat(after) - kstat.ZilStats.from_kstat(before)
    assert None not in d.astuple()
    assert d.commit_count >= 200  # one commit per O_DSYNC write at least
    assert d.slog_count > 0 and d.slog_bytes >= 200 * 4096  # the log records went to the log device
    assert d.normal_count == 0


def test_the_versions_zil_kstats_differ_and_the_reader_keeps_the_new_rows():
    """2.4 adds zil_commit_crash_count to 2.3's rows (2.3.2 already has the error/stall/suspend counts): read
    like any other row, the reader never needing to know it; every counter ZilStats reports is in both."""
    k23, k24 = _zil("2.3", "after"), _zil("2.4", "after")
    assert set(k24) - set(k23) == {"zil_commit_crash_count"} and not set(k23) - set(k24)
    assert all(k23[f"zil_commit_{c}_count"] == 0 for c in ("error", "stall", "suspend"))
    assert all(k24[f"zil_commit_{c}_count"] == 0 for c in ("error", "stall", "suspend", "crash"))
    reported = ("zil_commit_count", "zil_commit_writer_count", "zil_itx_count", "zil_itx_metaslab_slog_count",
                "zil_itx_metaslab_slog_bytes", "zil_itx_metaslab_normal_count", "zil_itx_metaslab_normal_bytes")
    assert all(r in k23 and r in k24 for r in reported)


@pytest.mark.parametrize("series", VERSIONS)
def test_userland_and_module_are_one_version_in_each_guest(series):
    """`zfs version` and `zpool version` in the guest: the userland and the module (also /sys/module/zfs/version)
    are one OpenZFS version of that series; openzfs-versions.json is what a scenario result's
    environment.openzfs records there (tools.zfs.openzfs_versions, run in the guest)."""
    got = zfs.parse_versions(read_fixture("zfs", series, "zfs-version.txt"))
    assert got["userland"] == got["module"]
    assert image.series_of(got["module"]) == series
    assert zfs.parse_versions(read_fixture("zfs", series, "zpool-version.txt")) == got
    assert read_fixture("zfs", series, "sys-module-zfs-version.txt").strip() == got["module"]
    recorded = json.loads(read_fixture("zfs", series, "openzfs-versions.json"))
    assert {k: recorded[k] for k in ("userland", "module")} == got
    assert "error" not in recorded


@pytest.mark.parametrize("series", VERSIONS)
def test_the_zil_parameters_of_each_version_read(series):
    root = fixture_path("zfs", series, "parameters")
    names = set(os.listdir(root))
    assert {"zfs_immediate_write_sz", "zil_slog_bulk", "zil_maxblocksize", "zfs_dio_enabled"} <= names
    tun = zfs_tunables.read_linux(root)
    assert tun["zil_slog_bulk"] > 0 and tun["zfs_immediate_write_sz"] > 0
    # 2.4's: in a pool with a special vdev and no SLOG, whether the ZIL copies large writes into its records
    # as for a SLOG (1) or writes them indirectly (0) (module/zfs/zil.c, zil_write_state)
    assert ("zil_special_is_slog" in names) == (series == "2.4")


# ---- choosing a built lab by version ----------------------------------------------------------

def _build(cache, key, link, manifest, userland=False):
    """A build directory as contrib/lab/build.sh leaves it (the files LabImage checks), ``link`` pointing at it."""
    root = cache / key
    mod = root / "modules" / "lib" / "modules" / manifest["kernel_release"] / "extra"
    mod.mkdir(parents=True)
    for f in (root / "vmlinuz", root / "initrd.img", mod / "zfs.ko"):
        f.write_bytes(b"")
    if userland:
        (root / "userland" / "guest" / "usr" / "sbin").mkdir(parents=True)
        (root / "userland" / "guest" / "usr" / "sbin" / "zpool").write_text("#!/bin/sh\n")
    (root / "lab.json").write_text(json.dumps(dict(manifest, kernel="vmlinuz", initrd="initrd.img", modules="modules")))
    os.symlink(key, cache / link)
    return root


# lab.json of the 2.3 build made before the version fields (the one in the cache here), and of a 2.4 build
OLD_23 = {"schema": "slogqual.lab/1", "kernel_release": "6.1.0-56-amd64", "zfs_version": "2.3.2-2~bpo12+2"}
NEW_24 = {"schema": "slogqual.lab/1", "kernel_release": "6.1.0-56-amd64", "zfs_series": "2.4",
          "zfs_version": "2.4.4-1~bpo13+1", "zfs_module_version": "2.4.4-1~bpo13+1",
          "zfs_userland_version": "2.4.4-1~bpo13+1", "zfs_userland": "userland"}


def test_the_version_named_picks_its_build(tmp_path, monkeypatch):
    monkeypatch.delenv(image.ZFS_ENV, raising=False)
    r23 = _build(tmp_path, "k_zfs-2.3.2", "current", OLD_23)
    r24 = _build(tmp_path, "k_zfs-2.4.4", "zfs-2.4", NEW_24, userland=True)
    default = image.LabImage.load(str(tmp_path))
    assert default.root == str(r23) and default.zfs_series == "2.3" and default.userland == ""
    assert default.zfs_module_version == default.zfs_userland_version == "2.3.2-2~bpo12+2"
    assert image.LabImage.load(str(tmp_path), "2.3") == default
    v24 = image.LabImage.load(str(tmp_path), "2.4")
    assert v24.root == str(r24) and v24.userland == str(r24 / "userland")
    assert v24.zfs_module_version == v24.zfs_userland_version == "2.4.4-1~bpo13+1"
    monkeypatch.setenv(image.ZFS_ENV, "2.4")
    assert image.LabImage.load(str(tmp_path)) == v24
    assert image.LabImage.load(str(tmp_path), "2.3") == default  # the option over the environment


def test_a_version_not_built_is_one_line_naming_the_build(tmp_path, monkeypatch):
    monkeypatch.delenv(image.ZFS_ENV, raising=False)
    _build(tmp_path, "k_zfs-2.3.2", "current", OLD_23)
    assert image.missing_reason(str(tmp_path)) == ""
    why = image.missing_reason(str(tmp_path), "2.4")
    assert "OpenZFS 2.4" in why and "SLOGQUAL_LAB_ZFS=2.4 contrib/lab/build.sh" in why and "\n" not in why
    monkeypatch.setenv(image.ZFS_ENV, "2.5")
    with pytest.raises(UsageError, match="SLOGQUAL_LAB_ZFS 2.5"):
        image.LabImage.load(str(tmp_path))


def test_a_background_build_under_way_is_said_and_waited_for_and_a_failed_one_names_its_log(tmp_path, monkeypatch):
    """contrib/lab/build.sh's default builds 2.4 in the background after 2.3, its pid in zfs-2.4.building while it
    runs (a real process here: a sleep), its exit status in zfs-2.4.build.rc once over. While it runs the 2.4 lab
    is 'being built' (not 'not built'), and the tests' need_lab waits for it to end before it judges."""
    import subprocess
    import conftest
    monkeypatch.delenv(image.ZFS_ENV, raising=False)
    monkeypatch.setenv("SLOGQUAL_LAB_CACHE", str(tmp_path))
    monkeypatch.setenv("SLOGQUAL_TEST_LAB_BUILD_WAIT", "120")  # a bound on the wait, far above the sleep's 6 s
    _build(tmp_path, "k_zfs-2.3.2", "current", OLD_23)
    # the build is no child of the test run (build.sh's background job, reparented): a sleep left by a shell that
    # exits (a zombie not yet reaped counts as ended either way)
    pid = int(subprocess.run(["sh", "-c", "sleep 6 >/dev/null 2>&1 & echo $!"], capture_output=True, text=True,
                             check=True).stdout)
    try:
        (tmp_path / "zfs-2.4.building").write_text(f"{pid}\n")
        bg = image.background_build("2.4")
        assert bg["pid"] == pid and bg["rc"] is None and bg["log"] == str(tmp_path / "zfs-2.4.build.log")
        why = image.missing_reason(zfs="2.4")
        assert "being built in the background" in why and str(pid) in why, why
        if os.geteuid() == 0:  # need_lab skips at once without root, before it looks at the lab
            with pytest.raises(pytest.skip.Exception):
                conftest.need_lab(zfs="2.4")  # waits while the build runs, then: still not built, a skip
            assert image.background_build("2.4")["pid"] is None  # it did not judge before the build was over
    finally:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    assert image.background_build("2.4")["pid"] is None  # a pid file left behind by a dead build is no build
    (tmp_path / "zfs-2.4.build.rc").write_text("2\n")
    why = image.missing_reason(zfs="2.4")
    assert "background build failed (exit 2" in why and "zfs-2.4.build.log" in why and "\n" not in why, why


def test_a_link_at_the_other_version_is_refused(tmp_path, monkeypatch):
    """`current` is the 2.3 lab: one pointing at a 2.4 build is not taken for it."""
    monkeypatch.delenv(image.ZFS_ENV, raising=False)
    _build(tmp_path, "k_zfs-2.4.4", "current", NEW_24, userland=True)
    with pytest.raises(UsageError, match="lab of OpenZFS 2.4, not 2.3"):
        image.LabImage.load(str(tmp_path))


def test_a_2_4_build_without_its_userland_is_incomplete(tmp_path, monkeypatch):
    monkeypatch.delenv(image.ZFS_ENV, raising=False)
    _build(tmp_path, "k_zfs-2.4.4", "zfs-2.4", NEW_24, userland=False)
    with pytest.raises(UsageError, match=r"incomplete \(.*userland/guest/usr/sbin/zpool missing\)"):
        image.LabImage.load(str(tmp_path), "2.4")


def test_the_cli_refuses_a_version_not_built_before_writing(tmp_path):
    out = tmp_path / "out"
    env = {"SLOGQUAL_LAB_CACHE": str(tmp_path / "cache"), "SLOGQUAL_LAB_ZFS": ""}
    for argv in (["lab", "run", "--zfs", "2.4", "-d", "hdd", "-o", str(out), "--", "true"],
                 ["lab", "info", "--zfs", "2.4"]):
        r = slogqual(*argv, env=env)
        assert r.returncode == 2, r.stderr
        assert r.stderr.strip().count("\n") == 0
        assert "SLOGQUAL_LAB_ZFS=2.4 contrib/lab/build.sh" in r.stderr
    assert not out.exists()
    r = slogqual("lab", "info", "--zfs", "2.5", env=env)
    assert r.returncode == 2 and "invalid choice" in r.stderr


# ---- the 2.4 guest ----------------------------------------------------------------------------

@pytest.mark.lab
@pytest.mark.zfs24
def test_the_2_4_guest_runs_a_2_4_userland_on_its_module(tmp_path):
    need_lab(zfs="2.4")
    img = image.LabImage.load(zfs="2.4")
    out = tmp_path / "out"
    r = slogqual("lab", "run", "--zfs", "2.4", "-q", "-d", "hdd", "-o", out, "--",
                 "sh", "-c", "zpool version > zpool-version.txt; cat /sys/module/zfs/version > module.txt",
                 env={"SLOGQUAL_LAB_ZFS": ""}, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    got = zfs.parse_versions((out / "zpool-version.txt").read_text())
    assert got["userland"] == got["module"] == img.zfs_module_version == img.zfs_userland_version
    assert image.series_of(got["module"]) == "2.4"
    assert (out / "module.txt").read_text().strip() == got["module"]
