"""slogqual.interrupts: a step held against Ctrl-C/SIGTERM finishes, then the signal lands; a Ctrl-C that
fell where Python cannot raise it is sent again instead of printed and lost."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import ROOT
from slogqual import interrupts


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_inside_held_lands_after_the_step_finished(sig):
    def as_interrupt(signum, frame):
        raise KeyboardInterrupt

    old_term = signal.signal(signal.SIGTERM, as_interrupt)  # as the CLI sets it
    finished = []
    try:
        with pytest.raises(KeyboardInterrupt):
            with interrupts.held():
                os.kill(os.getpid(), sig)
                time.sleep(0.05)  # a handler would have run by now
                finished.append(True)
        assert finished == [True]
        assert signal.getsignal(signal.SIGTERM) is as_interrupt
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGTERM, old_term)


def test_held_without_a_signal_changes_nothing():
    with interrupts.held():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _python(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, timeout=60)


LOST_INTERRUPT = """
    import sys, time
    from slogqual import interrupts
    {install}
    class FinalisedDuringCtrlC:
        def __del__(self):
            raise KeyboardInterrupt  # what a signal landing in a finaliser or weakref callback does
    FinalisedDuringCtrlC()
    try:
        time.sleep(2)  # the hook sends it again within 0.01 s
        print("lost")
    except KeyboardInterrupt:
        print("landed")
"""


def test_an_interrupt_lost_in_a_finaliser_is_sent_again():
    r = _python(LOST_INTERRUPT.format(install="sys.unraisablehook = interrupts.redeliver_lost_interrupt"))
    assert r.stdout.strip() == "landed" and r.stderr == "", r
    # without the hook, Python prints it and goes on as if nothing had happened: what CI saw
    r = _python(LOST_INTERRUPT.format(install="pass"))
    assert "lost" in r.stdout and "Exception ignored" in r.stderr, r


def test_other_unraisable_exceptions_still_reach_the_interpreters_hook():
    r = _python("""
        import sys
        from slogqual import interrupts
        sys.unraisablehook = interrupts.redeliver_lost_interrupt
        class Broken:
            def __del__(self):
                raise ValueError("kept")
        Broken()
        print("went on")
    """)
    assert r.stdout.strip() == "went on" and "ValueError: kept" in r.stderr, r
