"""slogqual.kernel.procfs's /proc/stat reader on a recorded /proc/stat and on mangled text."""

import pytest

from conftest import read_fixture
from slogqual.errors import ToolOutputError
from slogqual.kernel import procfs


def test_the_aggregate_line_gives_busy_and_idle_ticks():
    text = read_fixture("procfs", "stat-debian12-2cpu.txt")
    t = procfs.parse_stat(text)
    fields = [int(x) for x in text.splitlines()[0].split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = fields[:8]
    assert t.cpus == 2
    assert t.idle == idle + iowait
    assert t.busy == user + nice + system + irq + softirq + steal  # guest time is inside user: not counted twice
    assert t.total == t.busy + t.idle


def test_a_difference_is_the_busy_share_of_the_window():
    a = procfs.CpuTimes(busy=100, idle=300, cpus=2)
    b = procfs.CpuTimes(busy=250, idle=350, cpus=2)
    assert (b - a).busy_share == pytest.approx(150 / 200)
    assert (a - a).busy_share is None  # no tick passed: no share


def test_an_old_kernels_short_line_is_read_and_bad_ones_refused():
    assert procfs.parse_stat("cpu  1 2 3 4\ncpu0 1 2 3 4\n") == procfs.CpuTimes(busy=6, idle=4, cpus=1)
    for bad in ("", "intr 1 2 3\n", "cpu  1 2 x 4\n", "cpu  1 2\n", "cpu  1 -2 3 4\n"):
        with pytest.raises(ToolOutputError):
            procfs.parse_stat(bad)


def test_reading_a_missing_file_is_none(tmp_path):
    assert procfs.cpu_times(str(tmp_path / "stat")) is None
    assert procfs.cpu_times().total > 0  # this machine's own
