"""The mount door (slogqual.tools.mount): the argv every mount and unmount is built as, and the tool
contract on a real mount(8)/umount(8) that fails (a mount point that does not exist, a directory that
is not mounted: refused by util-linux for root and users alike, nothing is mounted). A real mount and
unmount of a small tmpfs where the suite runs as root."""

import os

import pytest

from conftest import need
from slogqual.errors import ToolFailedError
from slogqual.tools import mount, nfsd, nfsmount
from slogqual.tools import spawn as _run
from slogqual.tools.freebsd import mount as freebsd_mount
from slogqual.tools.freebsd import nfsserver


def test_the_argv_of_each_mount_slogqual_makes():
    assert nfsd.nfsd_fs().argv() == ["mount", "-t", "nfsd", "nfsd", "/proc/fs/nfsd"]
    assert mount.Mount("/dev/x", "/m").argv() == ["mount", "/dev/x", "/m"]  # no -t, no -o when not given
    linux_nfs = nfsmount.nfs_mount("127.0.0.1", "/p", "/m", "3", ["hard"])
    assert linux_nfs.argv() == nfsmount.mount_argv("127.0.0.1", "/p", "/m", "3", ["hard"]) == [
        "mount", "-t", "nfs", "-o", "vers=3,hard", "127.0.0.1:/p", "/m"]
    freebsd_nfs = nfsserver.nfs_mount("127.0.0.1", "/p", "/m", "3", ["hard"])
    assert freebsd_nfs.argv() == ["mount", "-t", "nfs", "-o", "nfsv3,hard", "127.0.0.1:/p", "/m"]
    assert mount.umount_argv("/m") == ["umount", "/m"]
    assert mount.umount_argv("/m", lazy=True) == ["umount", "-l", "/m"]
    assert freebsd_mount.argv() == mount.table_argv() == ["mount", "-p"]


def test_mount_and_umount_have_one_entry_each_with_true_advice_per_platform():
    for program in ("mount", "umount"):
        linux, freebsd = _run.install_advice(program, "linux"), _run.install_advice(program, "freebsd14")
        assert linux.startswith("Debian: apt-get install mount") and "not used" not in linux
        assert freebsd == "FreeBSD: in the base system"
    assert "nfs-common" in _run.install_advice("mount", "linux")  # mount.nfs, the NFS client's helper


def test_a_program_listed_twice_in_the_table_is_refused():
    req = _run.PROGRAMS["mount"]
    with pytest.raises(ValueError, match="mount twice"):
        _run._by_program([req, req])


@need("mount")
def test_a_failing_mount_is_the_tools_failed_error(tmp_path):
    target = tmp_path / "absent-mountpoint"
    what = mount.Mount(str(tmp_path / "absent-device"), str(target), "ext4", "ro")
    with pytest.raises(ToolFailedError) as caught:
        mount.mount(what, timeout=30)
    exc = caught.value
    assert exc.program == "mount" and exc.argv == what.argv() and exc.returncode not in (0, None)
    assert exc.stderr_tail and str(exc).startswith("mount -t ext4… failed: ")
    assert not target.exists()


@need("umount")
def test_a_failing_umount_is_the_tools_failed_error_and_the_lazy_fallback_is_tried(tmp_path):
    with pytest.raises(ToolFailedError) as caught:
        mount.umount(str(tmp_path), timeout=30)
    assert caught.value.argv == ["umount", str(tmp_path)] and str(tmp_path) in caught.value.stderr_tail
    with pytest.raises(ToolFailedError) as caught:
        mount.umount(str(tmp_path), timeout=30, lazy_fallback=True)
    assert caught.value.argv == ["umount", "-l", str(tmp_path)]  # the second attempt's complaint
    assert str(tmp_path) in caught.value.stderr_tail


@pytest.mark.integration
@need("mount", "umount")
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (mounting a tmpfs)")
def test_a_tmpfs_is_mounted_and_unmounted_through_the_door(tmp_path):
    target = tmp_path / "mnt"
    target.mkdir()
    what = mount.Mount("slogqual-test", str(target), "tmpfs", "size=1m")
    try:
        assert mount.mount(what, timeout=30) == what
        assert os.path.ismount(target)
        (target / "f").write_bytes(b"x")
    finally:
        if os.path.ismount(target):
            mount.umount(str(target), timeout=30)
    assert not os.path.ismount(target) and not (target / "f").exists()
