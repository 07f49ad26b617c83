import errno
import os

import pytest

from conftest import need
from slogqual.sweep import target as targets
from slogqual.errors import UsageError


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
