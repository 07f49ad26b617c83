"""The one door to gnuplot: version, availability, and running a generated script.

Scripts are built by :mod:`slogqual.report.plot` (pure text, tested on its own)
and handed here whole. gnuplot reads the script from a file, never a shell, and
its stderr is turned into one typed error with the line gnuplot complained about.
"""

from __future__ import annotations

import os
import re
import tempfile
from typing import Optional, Sequence

from slogqual.errors import ToolFailedError
from slogqual.tools import spawn as _run

PROGRAM = "gnuplot"
MIN_VERSION = _run.PROGRAMS[PROGRAM].minimum  # datablocks ($name << EOD), dashtype, pngcairo/svg terminals
TIMEOUT_S = 60


class GnuplotError(ToolFailedError):
    """gnuplot rejected a script or failed to write its output (``returncode`` None when it exited 0
    without writing it, or was not run because the output cannot be written)."""

    def __init__(self, message: str, argv: Optional[Sequence[str]] = None, returncode: Optional[int] = None,
                 stderr: str = ""):
        super().__init__(message, program=PROGRAM, returncode=returncode, argv=argv, stderr=stderr)


def available() -> bool:
    return _run.which(PROGRAM) is not None


def version() -> _run.ToolVersion:
    """(major, minor[, patchlevel]); ``.text`` is 'gnuplot 5.4 patchlevel 4'."""
    return _run.get_version(PROGRAM, ["--version"], r"gnuplot\s+(\d+)\.(\d+)(?:\s+patchlevel\s+(\d+))?")


def check_version() -> _run.ToolVersion:
    return _run.check_version(PROGRAM, version)


def _first_error(stderr: str) -> str:
    lines = [l.rstrip() for l in stderr.splitlines() if l.strip()]
    for i, line in enumerate(lines):
        if re.search(r"error|warning: .*cannot|can't|cannot", line, re.I):
            context = lines[i - 1].strip() if i > 0 and "line" in line else ""
            return (context + " :: " if context else "") + line.strip()
    return lines[-1].strip() if lines else "no message"


def run_script(script: str, output: str, *, timeout: float = TIMEOUT_S, keep_script: Optional[str] = None) -> None:
    """Run a complete gnuplot script that writes `output`; raise GnuplotError unless it did."""
    _run.require(PROGRAM)
    directory = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(directory):
        raise GnuplotError(f"cannot write {output}: no directory {directory}")
    if keep_script:
        with open(keep_script, "w") as fh:
            fh.write(script)
    fd, path = tempfile.mkstemp(prefix="slogqual-", suffix=".gp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(script)
        try:
            before = os.stat(output).st_mtime_ns if os.path.exists(output) else None
        except OSError:
            before = None
        # a hang is ToolTimeoutError
        proc = _run.run([PROGRAM, path], timeout=timeout, typed_timeout=True, env={**os.environ, "LC_ALL": "C.UTF-8"})
    finally:
        os.unlink(path)
    if proc.returncode != 0:
        raise GnuplotError(f"gnuplot failed (exit {proc.returncode}): {_first_error(proc.stderr)}", proc.args,
                           proc.returncode, proc.stderr)
    # gnuplot reports some failures (unknown terminal option, unwritable file) as warnings, exit 0.
    if not os.path.exists(output) or os.path.getsize(output) == 0 or (
            before is not None and os.stat(output).st_mtime_ns == before and proc.stderr.strip()):
        raise GnuplotError(f"gnuplot wrote no {output}: {_first_error(proc.stderr)}", proc.args, 0, proc.stderr)
