import json
import os

import pytest

from slogqual.errors import UsageError
from slogqual.report.text import diskinfo_lines, sweep_table
from slogqual.results import LatencyStats, SweepPoint, SweepResult, load_sweep, save_sweep
from slogqual.units import DEFAULT_SIZES, parse_sizes, size_label


def test_default_sizes_are_the_15_diskinfo_points():
    assert len(DEFAULT_SIZES) == 15 and DEFAULT_SIZES[0] == 512 and DEFAULT_SIZES[-1] == 8 << 20
    assert all(b == 2 * a for a, b in zip(DEFAULT_SIZES, DEFAULT_SIZES[1:]))


def test_parse_sizes():
    assert parse_sizes("4k,128k,1m") == [4096, 131072, 1 << 20]
    assert parse_sizes("1m, 4K ,4k") == [4096, 1 << 20]
    assert parse_sizes("16m", allow_large=True) == [16 << 20]


@pytest.mark.parametrize("bad", ["1000", "4x", "", "16m", "-4k", "k"])
def test_bad_sizes_are_usage_errors(bad):
    with pytest.raises(UsageError):
        parse_sizes(bad)


def test_size_labels():
    assert [size_label(s) for s in (512, 1024, 131072, 8 << 20, 1536)] == ["512", "1K", "128K", "8M", "1536"]


def make_result(sizes=(512, 4096, 1 << 20)):
    r = SweepResult(target={"path": "/dev/x", "kind": "block", "size": 1 << 30},
                    params={"mode": "flush", "sizes": list(sizes), "runtime_s": 1.0}, environment={"host": "h"})
    for i, s in enumerate(sizes):
        r.add_point(SweepPoint(size=s, ios=100 + i, lat_us=LatencyStats(mean=20.25 * (i + 1), p99=40.0 * (i + 1)),
                               iops=1e6 / (20.25 * (i + 1)), mbps=s * 1e6 / (20.25 * (i + 1)) / 2**20))
    return r


def test_round_trip(tmp_path):
    r = make_result()
    path = tmp_path / "r.json"
    save_sweep(str(path), r)
    doc = json.loads(path.read_text())
    assert doc["schema"] == "slogqual.sweep/1"
    assert [p["size"] for p in doc["points"]] == [512, 4096, 1 << 20]
    assert set(doc["points"][0]["lat_us"]) >= {"mean", "p50", "p99", "p999", "max"}
    back = load_sweep(str(path))
    assert back.to_dict() == r.to_dict()
    assert not [f for f in os.listdir(tmp_path) if ".slogqual-" in f]  # no temp file left


def test_a_temp_file_a_killed_writer_left_is_removed_by_the_next_write_of_that_file(tmp_path):
    import subprocess
    import sys

    from slogqual.results import write_text_atomic

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a PID that was a writer's and is gone
    path = tmp_path / "r.json"
    stale = tmp_path / f".r.json.slogqual-{dead.pid}-abcd1234.tmp"
    alive = tmp_path / f".r.json.slogqual-{os.getpid()}-efgh5678.tmp"  # a writer still running (this one)
    other = tmp_path / f".s.json.slogqual-{dead.pid}-ijkl9012.tmp"  # another file's: left to its own next write
    for f in (stale, alive, other):
        f.write_text("half a document")
    write_text_atomic(str(path), "{}\n")
    assert path.read_text() == "{}\n"
    assert not stale.exists() and alive.exists() and other.exists()


def test_points_stay_sorted_and_unique():
    r = make_result((4096, 512))
    r.add_point(SweepPoint(size=512, ios=1, lat_us=LatencyStats(mean=1.0), iops=1.0, mbps=1.0))
    assert [p.size for p in r.points] == [512, 4096] and r.point(512).ios == 1


def test_wrong_schema_and_garbage_are_one_line_errors(tmp_path):
    (tmp_path / "a.json").write_text('{"schema": "other/1"}')
    (tmp_path / "b.json").write_text("{not json")
    (tmp_path / "c.json").write_text('{"schema": "slogqual.sweep/1", "target": {}}')
    for name in ("a.json", "b.json", "c.json", "missing.json"):
        with pytest.raises(UsageError) as exc:
            load_sweep(str(tmp_path / name))
        assert "\n" not in str(exc.value) and name in str(exc.value)


def test_diskinfo_lines_use_diskinfo_formats():
    lines = diskinfo_lines(make_result()).splitlines()
    assert lines[0] == "Synchronous random writes:"
    assert lines[1] == "\t 0.5 kbytes:     20.2 usec/IO =     24.1 Mbytes/s"
    assert lines[2].startswith("\t   4 kbytes: ")
    assert lines[3].startswith("\t1024 kbytes: ")


def test_table_has_every_size_and_the_notes():
    r = make_result()
    r.notes.append("O_DIRECT unavailable")
    r.warnings.append("volatile write cache enabled")
    text = sweep_table(r)
    for label in ("512", "4K", "1M", "mean µs", "p99 µs", "IOPS", "MiB/s"):
        assert label in text
    assert "note: O_DIRECT unavailable" in text and "WARNING: volatile write cache enabled" in text


def test_diskinfo_usec_per_io_is_elapsed_time_over_ios():
    r = make_result((4096,))
    r.points[0].runtime_ms, r.points[0].ios = 1000.0, 4000
    assert diskinfo_lines(r).splitlines()[1] == "\t   4 kbytes:    250.0 usec/IO = %8.1f Mbytes/s" % r.points[0].mbps
