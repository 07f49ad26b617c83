"""Both lab OpenZFS versions' own files (issue #39), recorded in the lab guest by tests/fixtures/record_zfs_versions.sh
(tests/fixtures/zfs_versions/VERSION/: /proc/spl/kstat/zfs/zil after a small sync write load on a pool with a log
vdev, /sys/module/zfs/version, the module parameters slogqual reads or sets). Read with slogqual's own readers:
the same ZIL counters on both, a parameter only where its release brought it, and what the version string says
agrees with what the module has."""

import os

import pytest

from slogqual.tools import kstat, zfs_tunables

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "zfs_versions")
VERSIONS = sorted(os.listdir(ROOT)) if os.path.isdir(ROOT) else []


def version_of(v):
    with open(os.path.join(ROOT, v, "version")) as fh:
        return fh.read().strip()


def test_both_versions_are_recorded():
    assert [zfs_tunables.series(version_of(v)) for v in VERSIONS] == [(2, 3), (2, 4)]


@pytest.mark.parametrize("v", VERSIONS)
def test_the_zil_kstat_reads_alike_and_the_log_vdev_took_the_records(v):
    stats = kstat.ZilStats.from_kstat(kstat.read_kstat(os.path.join(ROOT, v, "zil.txt")))
    assert stats.commit_count > 0 and stats.itx_count > 0
    assert stats.slog_bytes > 0  # a pool with a log vdev: its blocks counted as slog on both releases
    raw = kstat.read_kstat(os.path.join(ROOT, v, "zil.txt"))
    for name in ("zil_commit_error_count", "zil_commit_stall_count", "zil_commit_suspend_count"):
        assert name in raw  # the commit-failure counters both releases have


@pytest.mark.parametrize("v", VERSIONS)
def test_a_parameter_is_there_exactly_where_its_release_brought_it(v):
    root = os.path.join(ROOT, v, "parameters")
    values = zfs_tunables.read_linux(root)
    assert set(values) == set(zfs_tunables.PARAMETERS)  # the advisor's tunables, on both
    for key in zfs_tunables.VERSIONED:
        found = zfs_tunables.read_one(key, root)
        assert (found is not None) is zfs_tunables.has(key, version_of(v)), (key, v)
    assert zfs_tunables.read_one("zfs_dio_enabled", root) == 1  # Direct IO on, Linux's default since 2.3
    if zfs_tunables.has("zil_special_is_slog", version_of(v)):
        assert zfs_tunables.read_one("zil_special_is_slog", root) == 1  # 2.4's default: the special as a SLOG
