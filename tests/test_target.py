import errno
import os

import pytest

from conftest import need
from slogqual.sweep import target as targets
from slogqual.errors import UsageError
from slogqual.kernel import sysfs


def _einval_opener(path, flags):
    if flags & os.O_DIRECT:
        raise OSError(errno.EINVAL, "Invalid argument")
    return os.open(path, flags)


def test_direct_probe_reports_a_filesystem_without_o_direct(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"\0" * 4096)
    assert targets.probe_direct(str(f)) is None  # this filesystem has O_DIRECT
    reason = targets.probe_direct(str(f), opener=_einval_opener)
    assert "does not support O_DIRECT" in reason


def test_fallback_is_recorded_as_a_note(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"\0" * 65536)
    t = targets.Target(path=str(f), kind=targets.KIND_FILE, size=65536)
    targets._apply_direct_probe(t, opener=_einval_opener)
    assert t.direct is False and "O_DIRECT unavailable" in t.notes[0] and "page cache" in t.notes[0]


def test_other_open_errors_are_not_mistaken_for_missing_o_direct(tmp_path):
    def eacces(path, flags):
        raise PermissionError(errno.EACCES, "Permission denied")
    with pytest.raises(PermissionError):
        targets.probe_direct(str(tmp_path / "f"), opener=eacces)


def test_resolve_file_and_size_checks(tmp_path):
    f = tmp_path / "t.img"
    f.write_bytes(b"\0" * (1 << 20))
    t = targets.resolve(str(f), 1 << 20)
    assert (t.kind, t.size, t.direct) == ("file", 1 << 20, True)
    with pytest.raises(UsageError, match="too small"):
        targets.resolve(str(f), 2 << 20)


def test_scratch_file_is_filled_sized_and_removed(tmp_path):
    t = targets.create_scratch(str(tmp_path), 8 << 20)
    assert t.kind == "scratch" and t.size == 256 << 20 == os.path.getsize(t.path)
    with open(t.path, "rb") as fh:
        assert fh.read(4) == b"\x00\x01\x02\x03"  # data, not a hole
    assert os.stat(t.path).st_blocks * 512 >= t.size  # allocated, so the sweep measures overwrites
    targets.remove_scratch(t)
    assert os.listdir(tmp_path) == []


def test_scratch_needs_free_space(tmp_path):
    with pytest.raises(UsageError, match="free"):
        targets.create_scratch(str(tmp_path), 1 << 50)


@need("nbdinfo")
def test_unreachable_nbd_uri_is_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cannot reach"):
        targets.resolve(f"nbd+unix:///?socket={tmp_path}/nothing.sock", 4096)


def test_nbd_uris_are_recognised():
    assert targets.is_nbd_uri("nbd://host:10809/export") and targets.is_nbd_uri("nbd+unix:///?socket=/s")
    assert not targets.is_nbd_uri("/dev/nbd0")


# --- one storage under two units (issue #40): recorded sysfs trees, real files ---------------------------------

def _sysfs(tmp_path_factory, name):
    from test_device_identity import unpack_sysfs

    return unpack_sysfs(tmp_path_factory, name)


def _second_node(root, devnum, other):
    """Another device number for the same disk, as the two paths of a multipathed disk give: a dev/block link
    of its own to the disk's directory."""
    block = os.path.join(root, "dev", "block")
    os.symlink(os.readlink(os.path.join(block, devnum)), os.path.join(block, other))


def test_one_disk_through_two_nodes_is_one_storage_by_its_wwn(tmp_path_factory):
    root = _sysfs(tmp_path_factory, "lab-qemu-guest")
    _second_node(root, "8:16", "8:32")
    sdb, sdc = targets.device_storage("8:16", "/dev/sdb", root), targets.device_storage("8:32", "/dev/sdc", root)
    line = targets.shared_storage(sdb, sdc)
    assert line.startswith("/dev/sdb and /dev/sdc are one storage, the disk with WWN t10.ATA") and "SQLHDD0001" in line
    assert "\n" not in line and "nothing was written" in line
    # the guest's other disks are separate storage
    sda, nvme = targets.device_storage("8:0", "/dev/sda", root), targets.device_storage("259:1", "/dev/nvme0n1", root)
    assert targets.shared_storage(sda, sdb) is None and targets.shared_storage(nvme, sdb) is None
    assert targets.shared_storage(sda, nvme) is None
    # a namespace is its WWN, not its controller's serial (which the recorded controller has: its namespaces share it)
    assert sysfs.block_info("259:1", root).serial
    assert [k[0] for k in nvme.same] == ["dev", "wwid"]


def test_one_disk_through_two_nodes_is_one_storage_by_its_serial(tmp_path_factory):
    root = _sysfs(tmp_path_factory, "vda-and-partitioned-loop")
    _second_node(root, "254:0", "254:16")
    line = targets.shared_storage(targets.device_storage("254:0", "/dev/vda", root),
                                  targets.device_storage("254:16", "/dev/vdb", root), "qualified")
    assert line.startswith("/dev/vda and /dev/vdb are one storage, the disk with serial 2016654514222602")
    assert "would be qualified as two units" in line


def test_a_partition_is_part_of_its_disk_and_two_partitions_are_separate(tmp_path_factory):
    root = _sysfs(tmp_path_factory, "vda-and-partitioned-loop")
    disk = targets.device_storage("7:4", "/dev/loop4", root)
    p1, p2 = (targets.device_storage(n, f"/dev/loop4p{i}", root) for i, n in ((1, "259:0"), (2, "259:1")))
    for a, b in ((p1, disk), (disk, p1)):  # either order names the partition first
        assert targets.shared_storage(a, b).startswith("/dev/loop4p1 is part of /dev/loop4, a partition of loop4:")
    assert targets.shared_storage(p1, p2) is None  # each its own part of the disk (a SLOG partition per pool)
    vda = targets.device_storage("254:0", "/dev/vda", root)
    assert targets.shared_storage(p1, vda) is None and targets.shared_storage(disk, vda) is None


def test_one_file_under_two_names_is_one_storage(tmp_path):
    img, other = tmp_path / "t.img", tmp_path / "u.img"
    for f in (img, other):
        f.write_bytes(b"\0" * (1 << 20))
    (tmp_path / "sym.img").symlink_to(img)
    os.link(img, tmp_path / "hard.img")
    resolved = {n: targets.resolve(str(tmp_path / n), 4096) for n in ("t.img", "u.img", "sym.img", "hard.img")}
    targets.one_storage([resolved["t.img"], None, resolved["u.img"]])  # a scratch unit (None) and another file
    st = os.stat(img)
    for alias in ("sym.img", "hard.img"):
        with pytest.raises(UsageError) as ei:
            targets.one_storage([resolved["u.img"], resolved["t.img"], resolved[alias]])
        assert str(ei.value).startswith(f"{img} and {tmp_path / alias} are one storage, the file {img} "
                                        f"(device/inode {st.st_dev}/{st.st_ino})")
