"""``udevadm settle``: wait until udev has handled the events queued so far (a new zvol's /dev node).

Linux only; on FreeBSD devfs makes device nodes at once and there is nothing to wait for.
"""

from __future__ import annotations

from typing import List

from slogqual.tools import spawn as _run

PROGRAM = "udevadm"


def available() -> bool:
    return _run.which(PROGRAM) is not None


def settle_argv(timeout_s: int) -> List[str]:
    return [PROGRAM, "settle", f"--timeout={int(timeout_s)}"]


def settle(timeout_s: int = 5) -> bool:
    """True when udev's queue emptied within ``timeout_s``; False when it did not (udevadm exits 1),
    which callers treat as "look again". A hung udevadm is ToolTimeoutError; an absent one, False."""
    if not available():
        return False
    proc = _run.run(settle_argv(timeout_s), timeout=timeout_s + 10, typed_timeout=True)
    return proc.returncode == 0
