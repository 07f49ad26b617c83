"""FreeBSD disks (character devices) as sweep targets: the target resolver and the safety interlocks,
run on outputs of FreeBSD's programs recorded on real machines (tests/fixtures/freebsd/SOURCES.md).

The code path is the one a FreeBSD run takes — target.resolve and device.claim_for_writing, the
functions `slogqual sweep` calls — with a recorded host (tools/freebsd/host.py) answering each argv with
its capture and a directory of its own standing for /dev. In it each disk node is a symlink to the
host's /dev/zero, a real character device (reads zeros, takes a write open), so kind_of, the lock, the
ZFS label reader and the O_RDWR hold all work on a real node. The captures come from different
machines; a test combines them where a disk name matches and says so. Where a test needs an output
no capture shows (a `gpart show -p` or `glabel status` that prints nothing), the empty output is
constructed and marked so.
"""

import gzip
import os
import sys

import pytest

from conftest import FIXTURES
from slogqual import device, paths
from slogqual.sweep import target
from slogqual.device import freebsd_safety, interlock, zfslabel
from slogqual.errors import RefusedError, UsageError
from slogqual.tools import zpool
from slogqual.tools.freebsd import host as bsdhost

FIX = os.path.join(FIXTURES, "freebsd")

GEOM = ("geom", "disk", "list")
GPART = ("gpart", "show", "-p")
GLABEL = ("glabel", "status")
MOUNT = ("mount", "-p")
SWAP = ("swapctl", "-l")
ZPOOL = tuple(zpool.list_argv())

NONE_PRINTED = ""  # constructed: a program that found nothing prints nothing (no capture of that exists)


def cap(name):
    with open(os.path.join(FIX, name), encoding="utf-8") as fh:
        return fh.read()


def machine(dev_dir, over=None):
    """Recorded outputs: a TrueNAS machine's `geom disk list` (nvd0 r1w1e2, ada0 r1w1e3, da0 r0w0e0), an
    Azure VM's `mount -p` (/dev/label/rootfs on /, /dev/da1s1 on /mnt/resource), a `swapctl -l` with
    /dev/ada0s1b; no partition tables and no labels unless a test gives them."""
    out = {GEOM: cap("geom-disk-list-truenas-nvd0-ada0-da0.txt"), GPART: NONE_PRINTED, GLABEL: NONE_PRINTED,
           MOUNT: cap("mount-p-azure.txt"), SWAP: cap("swapctl-l-ada0s1b.txt")}
    out.update(over or {})
    return bsdhost.recorded(out, dev_dir)


def claim(path, host, tmp_path, destroy_data=False):
    return device.claim_for_writing(path, destroy_data, lock_dir=str(tmp_path), host=host)


def test_a_clean_disk_is_claimed_and_held_open_for_writing(dev, tmp_path):
    path = dev("da0")  # TrueNAS's USB disk: Mode r0w0e0, no table, not mounted, not swap
    with claim(path, machine(dev.dir), tmp_path, destroy_data=True) as c:
        assert c.kind == "block" and c.lock_path.endswith(".lock") and not c.overridden
        held = [fd for fd in os.listdir("/proc/self/fd") if os.path.realpath(f"/proc/self/fd/{fd}") == "/dev/zero"]
        assert held  # the O_RDWR hold on the node, kept for the run
    assert freebsd_safety.findings(path, machine(dev.dir)) == []


def test_a_mounted_partition_refuses_even_with_destroy_data(dev, tmp_path):
    # Azure: glabel says label/rootfs is da0p2, mount -p that /dev/label/rootfs is /
    path = dev("da0")
    host = machine(dev.dir, {GLABEL: cap("glabel-status-azure.txt")})
    with pytest.raises(RefusedError) as exc:
        with claim(path, host, tmp_path, destroy_data=True):
            pytest.fail("claimed a disk whose partition is mounted")
    assert "/dev/label/rootfs (on da0p2) is mounted at / (ufs)" in str(exc.value)


def test_active_swap_on_a_slice_refuses_even_with_destroy_data(dev, tmp_path):
    path = dev("ada0")
    with pytest.raises(RefusedError, match=r"/dev/ada0s1b \(on ada0\) is active swap"):
        with claim(path, machine(dev.dir), tmp_path, destroy_data=True):
            pytest.fail("claimed a disk with active swap")


def test_a_disk_geom_holds_exclusively_or_open_for_writing_refuses_always(dev, tmp_path):
    path = dev("nvd0")  # TrueNAS's boot NVMe: Mode r1w1e2
    with pytest.raises(RefusedError) as exc:
        with claim(path, machine(dev.dir), tmp_path, destroy_data=True):
            pytest.fail("claimed a disk GEOM holds")
    msg = str(exc.value)
    assert "/dev/nvd0 is open for writing (GEOM Mode r1w1e2)" in msg
    assert "/dev/nvd0 is held exclusively (GEOM Mode r1w1e2" in msg


def test_partitions_and_labels_hold_the_disk_unless_destroy_data(dev, tmp_path):
    # a VPS's `gpart show -p` (da0: GPT, da0p1 freebsd-boot, da0p2 freebsd-zfs) with Azure's labels
    # (gptid on da0p1, label/rootfs on da0p2, label/swap on da0p3) and a mount table without them
    path = dev("da0")
    host = machine(dev.dir, {GPART: cap("gpart-show-p-vps-da0.txt"), GLABEL: cap("glabel-status-azure.txt"),
                               MOUNT: NONE_PRINTED})
    with pytest.raises(RefusedError) as exc:
        with claim(path, host, tmp_path):
            pytest.fail("claimed a partitioned disk without --destroy-data")
    msg = str(exc.value)
    assert "has partitions da0p1, da0p2 (GPT)" in msg and "(name it with --destroy-data" in msg
    assert "label/rootfs (on da0p2)" in msg and "gptid/" not in msg  # gptid names a table entry, nothing more
    with claim(path, host, tmp_path, destroy_data=True) as c:
        assert any("has partitions da0p1, da0p2" in o for o in c.overridden)
        assert c.notes and c.notes[0].startswith(f"--destroy-data: overwriting {path}")


def _label_partition(dev_dir, name):
    """A partition node that is a regular file holding, at label 0's nvlist offset, the real nvlist region of
    a ZFS label (tests/fixtures/zfslabel: pool 'sqlabel', exported). The file around it is constructed."""
    with gzip.open(os.path.join(FIXTURES, "zfslabel", "label0-nvlist-pool-sqlabel-exported.bin.gz")) as fh:
        nvlist = fh.read()
    p = os.path.join(dev_dir, name)
    with open(p, "wb") as fh:
        fh.truncate(4 * zfslabel.LABEL_SIZE)
        fh.seek(zfslabel.NVLIST_OFFSET)
        fh.write(nvlist)
    return p


def test_a_zfs_label_on_a_partition_refuses_unless_destroy_data(dev, tmp_path):
    path = dev("da0")
    _label_partition(dev.dir, "da0p2")
    host = machine(dev.dir, {GPART: cap("gpart-show-p-vps-da0.txt"), ZPOOL: cap("../zpool/list-Hp.txt")})
    with pytest.raises(RefusedError) as exc:
        with claim(path, host, tmp_path):
            pytest.fail("claimed a disk carrying a ZFS label")
    assert "/dev/da0p2 carries 1 ZFS label(s) of pool 'sqlabel' (exported)" in str(exc.value)
    found = freebsd_safety.findings(path, host)
    assert [f.code for f in found if "ZFS" in f.message] == [interlock.SIGNATURE]  # pool 'p' is imported, not sqlabel


def test_a_disk_geom_does_not_list_is_refused_in_one_line(dev, tmp_path):
    path = dev("ada0p2")
    with pytest.raises(RefusedError, match=r"^refusing .*ada0p2: is not a disk GEOM lists"):
        with claim(path, machine(dev.dir), tmp_path, destroy_data=True):
            pass


def test_a_program_that_fails_refuses(dev, tmp_path):
    path = dev("da0")
    host = machine(dev.dir, {MOUNT: (1, "", "mount: something went wrong\n")})
    with pytest.raises(RefusedError, match="cannot read the mount table"):
        with claim(path, host, tmp_path, destroy_data=True):
            pass


def test_the_sweep_claim_takes_the_freebsd_path_on_freebsd(dev, tmp_path, monkeypatch):
    # what `slogqual sweep` calls (sweep.claim_target -> device.claim_for_writing), with the platform
    # saying FreeBSD and the live host answering from the recordings
    from slogqual.sweep import engine as sweep

    path = dev("nvd0")
    monkeypatch.setattr(bsdhost, "LIVE", machine(dev.dir))
    monkeypatch.setattr(interlock, "LOCK_DIRS", (str(tmp_path),))
    monkeypatch.setattr(sys, "platform", "freebsd14")
    t = target.Target(path=path, kind=target.KIND_BLOCK, size=1 << 30)
    with pytest.raises(RefusedError, match="is held exclusively"):
        with sweep.claim_target(t, destroy_data=True):
            pytest.fail("claimed")


# --- the target resolver ----------------------------------------------------------------------------------

def test_resolve_takes_a_freebsd_disk_and_sizes_it_with_diskinfo(dev):
    path = dev("ada1")
    host = bsdhost.recorded({("diskinfo", "-v", path): cap("diskinfo-v-hgst-hdn726060ale614.txt")}, dev.dir)
    t = target.resolve(path, 1 << 20, host=host)
    assert t.kind == target.KIND_BLOCK and t.size == 6001175126016


def test_resolve_refuses_a_disk_smaller_than_the_writes(dev):
    path = dev("ada1")
    host = bsdhost.recorded({("diskinfo", "-v", path): cap("diskinfo-v-hgst-hdn726060ale614.txt")}, dev.dir)
    with pytest.raises(UsageError, match="too small"):
        target.resolve(path, 8 * 6001175126016, host=host)


def test_linux_refuses_a_character_device_in_one_line():
    with pytest.raises(UsageError) as exc:
        target.resolve("/dev/null", 4096)
    assert "character device" in str(exc.value) and "\n" not in str(exc.value)
    assert paths.kind_of("/dev/null", freebsd=True).kind == paths.KIND_BLOCK


# --- names ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("provider,base", [
    ("da1s1", "da1"), ("ada0s1b", "ada0"), ("ada0p3.eli", "ada0"), ("label/rootfs", None), ("da10", None),
    ("da1", "da1"), ("ada0p2", "ada0"), ("da1x", None)])
def test_stacked_on(provider, base):
    assert freebsd_safety.stacked_on(provider, {"da1", "ada0"}) == base


def test_provider_name():
    assert freebsd_safety.provider_name("/dev/diskid/DISK-X") == "diskid/DISK-X"
    with pytest.raises(UsageError):
        freebsd_safety.provider_name("/tmp/x")


def test_the_listing_reports_without_claiming(dev):
    # `slogqual devices`' safety column: the same findings, nothing locked or held, an unknown disk reported
    host = machine(dev.dir)
    codes = {f.code for f in device.safety_findings(dev("nvd0"), host=host)}
    assert codes == {interlock.OPEN, interlock.HOLDERS}
    assert device.safety_findings(dev("da0"), host=host) == []
    assert "not a disk GEOM lists" in device.safety_findings(dev("ada0p2"), host=host)[0].message
