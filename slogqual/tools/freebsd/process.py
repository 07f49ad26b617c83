"""pgrep(1) and kill(1) (FreeBSD base): is a daemon running, and end the one slogqual started by its pid."""

from __future__ import annotations

from typing import List


def pgrep_argv(name: str) -> List[str]:
    """``pgrep -x NAME``: exit 0 when a process of exactly that name runs, 1 when none does."""
    return ["pgrep", "-x", name]


def term_argv(pid: int) -> List[str]:
    return ["kill", "-TERM", str(int(pid))]


def alive_argv(pid: int) -> List[str]:
    """``kill -0 PID``: exit 0 while the process exists."""
    return ["kill", "-0", str(int(pid))]
