"""slogqual.kernel.procfs's process table (/proc/PID/stat): live processes, a group's members, a process's state —
on real processes this test starts, never a recorded file (the table is the kernel's now)."""

import os
import shutil
import subprocess
import sys
import time

import pytest

from slogqual.kernel import procfs

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="no /proc (not Linux)")


def _wait_state(pid, want, timeout_s=10.0):
    deadline = time.monotonic() + timeout_s
    while procfs.process_state(pid) != want and time.monotonic() < deadline:
        time.sleep(0.01)
    return procfs.process_state(pid)


def test_a_group_s_members_are_its_live_processes_and_a_zombie_is_none_of_them():
    leader = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    ended = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    try:
        assert _wait_state(ended.pid, "Z") == "Z"  # exited, not reaped
        assert procfs.group_members(leader.pid) == [leader.pid]
        assert procfs.group_members(ended.pid) == []
        live = dict(procfs.live_processes())
        assert os.getpid() in live and leader.pid in live and ended.pid not in live
        assert procfs.process_state(leader.pid) in ("R", "S")
    finally:
        leader.kill()
        leader.wait()
        ended.wait()
    assert procfs.process_state(leader.pid) is None  # reaped: gone from the table
    assert procfs.group_members(leader.pid) == []


def test_a_command_name_with_a_parenthesis_and_spaces_does_not_shift_the_fields(tmp_path):
    # the kernel writes the name between '(' and ')' (proc(5)), and the name itself may hold both: a real process
    # whose executable is so named
    odd = tmp_path / "a) b (c"
    shutil.copy(shutil.which("sleep"), odd)
    proc = subprocess.Popen([str(odd), "60"], start_new_session=True)
    try:
        assert _wait_state(proc.pid, "S") == "S"
        assert procfs.group_members(proc.pid) == [proc.pid]
        assert proc.pid in dict(procfs.live_processes())
    finally:
        proc.kill()
        proc.wait()
