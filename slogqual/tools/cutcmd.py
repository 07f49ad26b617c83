"""The user's power-cut (and power-restore) commands for ``slogqual powercut run``: an IPMI or PDU
command line given as one string, split once with shlex and run as an argv, never through a shell,
with a timeout. A non-zero exit is ToolFailedError (the cut did not happen: nothing to verify), a
hang ToolTimeoutError, a program that is not there ToolMissingError."""

from __future__ import annotations

import shlex
from typing import List

from slogqual.errors import UsageError
from slogqual.tools import spawn as _run


def parse(text: str, option: str = "--cut-cmd") -> List[str]:
    """'ipmitool -H bmc chassis power off' -> its argv; UsageError (exit 2) for an empty or unbalanced one."""
    try:
        argv = shlex.split(text or "")
    except ValueError as exc:
        raise UsageError(f"{option} {text!r}: {exc}") from None
    if not argv:
        raise UsageError(f"{option} is empty: give the command that cuts the power, e.g. "
                         "'ipmitool -I lanplus -H BMC -U USER -f PWFILE chassis power off'")
    return argv


def check(argv: List[str], option: str = "--cut-cmd") -> None:
    """Before anything is written: the program must be there (UsageError naming the option otherwise)."""
    if _run.which(argv[0]) is None:
        raise UsageError(f"{option}: {argv[0]} not found on PATH")


def execute(argv: List[str], timeout: float) -> str:
    """Run the command; its stdout. ToolFailedError / ToolTimeoutError / ToolMissingError as above."""
    return _run.run(argv, timeout=timeout, typed_timeout=True, check=True).stdout
