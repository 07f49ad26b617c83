"""The interlocks' shared rules (device/interlock.py): what a ZFS label on a device means, the imported
pools from several sources, and Linux's label check through them. The label region is real
(tests/fixtures/zfslabel: pool 'sqlabel', exported); the files around it are constructed."""

import gzip
import os

import pytest

from conftest import FIXTURES
from slogqual.device import interlock, linux_safety, zfslabel
from slogqual.device.interlock import POOL, SIGNATURE
from slogqual.kernel import sysfs


def label(pool="tank", state="active"):
    return zfslabel.Label(index=0, offset=0, pool=pool, pool_guid=1, state=state)


@pytest.mark.parametrize("labels,imported,code,message", [
    ([label()], {"tank"}, POOL, "/dev/sdb belongs to the imported ZFS pool 'tank'"),
    ([label(state=None)], {"tank"}, POOL, "/dev/sdb belongs to the imported ZFS pool 'tank'"),
    ([label(state="exported")], {"tank"}, SIGNATURE, "/dev/sdb carries 1 ZFS label(s) of pool 'tank' (exported)"),
    ([label(state="destroyed")] * 4, {"tank"}, SIGNATURE,
     "/dev/sdb carries 4 ZFS label(s) of pool 'tank' (destroyed)"),
    ([label()], {"other"}, SIGNATURE, "/dev/sdb carries 1 ZFS label(s) of pool 'tank' (active)"),
    ([label()], set(), SIGNATURE, "/dev/sdb carries 1 ZFS label(s) of pool 'tank' (active)"),
    ([label()], None, SIGNATURE, "/dev/sdb carries 1 ZFS label(s) of pool 'tank' (active)"),
    ([label(pool=None, state=None)], {"tank"}, SIGNATURE, "/dev/sdb carries 1 ZFS label(s)"),
    ([label(pool=None), label(state=None)], {"tank"}, POOL, "/dev/sdb belongs to the imported ZFS pool 'tank'"),
])
def test_what_a_zfs_label_means(labels, imported, code, message):
    f = interlock.zfs_label_finding("sdb", labels, imported)
    assert (f.code, f.message) == (code, message)
    assert f.overridable == (code == SIGNATURE)  # a member of an imported pool: --destroy-data never overrides


def test_imported_pools_joins_the_sources_that_answer():
    assert interlock.imported_pools([]) is None
    assert interlock.imported_pools([lambda: None, lambda: None]) is None  # ZFS absent: no pool imported
    assert interlock.imported_pools([lambda: None, lambda: set()]) == set()
    assert interlock.imported_pools([lambda: {"a"}, lambda: None, lambda: {"b", "a"}]) == {"a", "b"}


def _labelled(path):
    with gzip.open(os.path.join(FIXTURES, "zfslabel", "label0-nvlist-pool-sqlabel-exported.bin.gz")) as fh:
        nvlist = fh.read()
    with open(path, "wb") as fh:
        fh.truncate(4 * zfslabel.LABEL_SIZE)
        fh.seek(zfslabel.NVLIST_OFFSET)
        fh.write(nvlist)
    return str(path)


def test_label_findings_ask_for_the_pools_once_and_only_where_a_label_is(tmp_path):
    blank = tmp_path / "blank"
    blank.write_bytes(b"\0" * 4 * zfslabel.LABEL_SIZE)
    asked = []

    def imported():
        asked.append(1)
        return {"sqlabel"}

    assert interlock.zfs_label_findings([(str(blank), "blank"), (str(tmp_path / "gone"), "gone")], imported) == []
    assert asked == []  # no label, no zpool run
    found = interlock.zfs_label_findings([(_labelled(tmp_path / "a"), "a"), (_labelled(tmp_path / "b"), "b")],
                                         imported)
    assert asked == [1]
    # the fixture's labels say 'exported': a signature even though a pool of that name is imported
    assert [(f.code, f.message) for f in found] == [
        (SIGNATURE, "/dev/a carries 1 ZFS label(s) of pool 'sqlabel' (exported)"),
        (SIGNATURE, "/dev/b carries 1 ZFS label(s) of pool 'sqlabel' (exported)")]


def test_linux_asks_for_the_imported_pools_before_reading_labels(tmp_path, monkeypatch):
    # as before the interlocks shared their rule: Linux asks (kstat, zpool list) on every check
    asked = []
    monkeypatch.setattr(linux_safety, "imported_pool_names", lambda: asked.append(1) or None)
    blank = tmp_path / "blank"
    blank.write_bytes(b"\0" * 4 * zfslabel.LABEL_SIZE)
    info = sysfs.BlockInfo(name="blank", devnum="7:99", syspath=str(tmp_path))
    assert linux_safety.check_pools(info, str(blank)) == [] and asked == [1]
    info = sysfs.BlockInfo(name="loop99", devnum="7:99", syspath=str(tmp_path))
    (f,) = linux_safety.check_pools(info, _labelled(tmp_path / "disk"))
    assert (f.code, f.message) == (SIGNATURE, "/dev/loop99 carries 1 ZFS label(s) of pool 'sqlabel' (exported)")
