"""slogqual.sweep.at_once and tools.spawn.stopped_by: units in worker threads, ended by their stop event as an
interrupt ends a lone run's program (real programs: sleep, cat; events and pids, not sleeps, tell when)."""

import os
import signal
import threading
import time

import pytest

from slogqual.sweep.at_once import at_once
from slogqual.tools import spawn as R


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(") ", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_program_run_inside_stopped_by_is_killed_when_the_event_is_set():
    stop, started, got = threading.Event(), threading.Event(), []

    def worker():
        with R.stopped_by(stop):
            started.set()
            try:
                R.run(["sleep", "31.5"])  # an unusual length: its command line names it alone
            except KeyboardInterrupt:
                got.append("interrupted")

    t = threading.Thread(target=worker)
    t.start()
    started.wait(5)
    time.sleep(0.3)  # the program is running (run() waits in slices of 0.2 s)
    t0 = time.monotonic()
    stop.set()
    t.join(10)
    assert got == ["interrupted"] and time.monotonic() - t0 < 5  # not the sleep's 31.5 s
    assert not _running_sleep()


def _running_sleep():
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if fh.read() == b"sleep\x0031.5\x00" and _alive(pid):
                    out.append(pid)
        except OSError:
            continue
    return out


def test_stopped_by_keeps_run_s_contract_input_output_and_timeout():
    stop = threading.Event()
    with R.stopped_by(stop):
        assert R.run(["cat"], input="through stdin").stdout == "through stdin"
        assert R.run(["sh", "-c", "echo out; echo err >&2; exit 3"]).returncode == 3
        with pytest.raises(R.TimeoutExpired):
            R.run(["sleep", "5"], timeout=0.3)
    assert R.run(["cat"], input="outside").stdout == "outside"  # the thread's programs are plain again


def test_at_once_runs_every_worker_at_the_same_time_and_hands_back_an_escaped_error():
    barrier = threading.Barrier(3, timeout=5)  # only passes when all three run at once
    seen = []

    def worker(i):
        def work(stop):
            barrier.wait()
            seen.append(i)
            if i == 1:
                raise ValueError("unit 1's bug")
        return work

    with pytest.raises(ValueError, match="unit 1's bug"):
        at_once([worker(i) for i in range(3)])
    assert sorted(seen) == [0, 1, 2]  # the others ended before the error was raised here


def test_an_interrupt_in_the_calling_thread_stops_every_worker_then_propagates():
    started = threading.Barrier(3, timeout=5)
    ended = []

    def worker(i):
        def work(stop):
            started.wait()
            try:
                R.run(["sleep", "30"])
            except KeyboardInterrupt:
                ended.append(i)
        return work

    def interrupt_soon():
        started.wait()
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGINT)  # lands in the main thread, which waits in at_once

    told = []
    threading.Thread(target=interrupt_soon, daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        at_once([worker(0), worker(1)], on_interrupt=lambda: told.append(True))
    assert sorted(ended) == [0, 1] and told == [True] and time.monotonic() - t0 < 10
