"""Typed errors, each carrying the process exit code the CLI turns it into.

Exit codes are part of the interface (acceptance scripts key on them):
  1  a measurement failed part-way (what was measured is kept)
  2  bad input or a missing/too-old dependency (nothing was measured)
  3  a device was refused by the safety interlocks (nothing was written)
  4  slogqual compare could not judge: no size in both results, or a size without a usable value
     (slogqual.process.EXIT_CANNOT_JUDGE; 1 there is a regression, 0 none)

External programs (slogqual.tools.spawn is the one door to them) fail in one of five typed ways, each
a ToolError carrying ``program``, ``argv`` and ``stderr_tail`` (the last lines the program wrote on
stderr), and each also in the family above whose exit code it takes:

  ToolMissingError  (MissingDependencyError, 2)  not on PATH, or cannot be executed
  ToolTooOldError   (MissingDependencyError, 2)  older than slogqual needs, or its version unreadable
  ToolTimeoutError  (MeasurementError, 1)        did not finish in the time it was given
  ToolFailedError   (MeasurementError, 1)        exited non-zero where that means failure (``returncode``)
  ToolOutputError   (MeasurementError, 1)        printed what its parser cannot read (``why``)

Missing and too old are found before anything is measured, so they are the user's to fix (2). A
program that hangs, fails or prints garbage does so while slogqual works, usually mid-measurement,
so it ends the run as a measurement failure (1) with what was measured kept; callers that can go
on without that program (device identification, probes) catch ToolError and record why.
"""

from typing import Optional, Sequence, Tuple

STDERR_TAIL_LINES = 5
STDERR_TAIL_CHARS = 2000


class SlogqualError(Exception):
    exit_code = 1


class UsageError(SlogqualError):
    """Bad input: a path, size, mode or option that cannot work."""

    exit_code = 2


class MissingDependencyError(UsageError):
    """An external program is absent or older than slogqual needs."""


class MeasurementError(SlogqualError):
    """The tool under us failed mid-run (EIO, ENOSPC, target vanished)."""

    exit_code = 1


class ResultWriteError(MeasurementError):
    """The result file itself could not be written (ENOSPC, EROFS, EIO). The run stops, marked failed;
    ``document`` is the result as it stood, for the caller to put where it still can (stdout)."""

    def __init__(self, message: str, document=None):
        super().__init__(message)
        self.document = document


class RefusedError(SlogqualError):
    """A device failed a safety interlock; nothing was written to it."""

    exit_code = 3


def stderr_tail(text, lines: int = STDERR_TAIL_LINES) -> str:
    """The last ``lines`` non-blank lines of a program's stderr (bytes are decoded), at most
    STDERR_TAIL_CHARS characters."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    kept = [ln.rstrip() for ln in (text or "").splitlines() if ln.strip()][-lines:]
    return "\n".join(kept)[-STDERR_TAIL_CHARS:]


class ToolError(SlogqualError):
    """An external program let slogqual down. ``argv`` is the command line it ran with (empty when
    the text came from elsewhere, e.g. a pasted output), ``stderr_tail`` what it said last."""

    def __init__(self, message: str, *, program: str, argv: Optional[Sequence] = None, stderr=""):
        super().__init__(message)
        self.program = program
        self.argv = [str(a) for a in argv] if argv else []
        self.stderr_tail = stderr_tail(stderr)


class ToolMissingError(ToolError, MissingDependencyError):
    """The program is not on PATH, or cannot be executed."""


class ToolTooOldError(ToolError, MissingDependencyError):
    """The program is older than slogqual needs (``found`` < ``needed``), or ``found`` is None: its
    version could not be read at all."""

    def __init__(self, message: str, *, program: str, found: Optional[Tuple[int, ...]],
                 needed: Tuple[int, ...], argv: Optional[Sequence] = None, stderr=""):
        super().__init__(message, program=program, argv=argv, stderr=stderr)
        self.found = found
        self.needed = needed


class ToolTimeoutError(ToolError, MeasurementError):
    """The program did not finish within ``timeout`` seconds (it was killed)."""

    def __init__(self, message: str, *, program: str, timeout: Optional[float], argv: Optional[Sequence] = None,
                 stderr=""):
        super().__init__(message, program=program, argv=argv, stderr=stderr)
        self.timeout = timeout


class ToolFailedError(ToolError, MeasurementError):
    """The program exited with ``returncode`` where that means it failed (None: it died to a signal
    before slogqual saw a status)."""

    def __init__(self, message: str, *, program: str, returncode: Optional[int], argv: Optional[Sequence] = None,
                 stderr=""):
        super().__init__(message, program=program, argv=argv, stderr=stderr)
        self.returncode = returncode


class ToolOutputError(ToolError, MeasurementError):
    """The program printed what its parser cannot read: ``why`` says what was wrong, ``excerpt`` is
    the start of the text."""

    def __init__(self, message: str, *, program: str, why: str, excerpt: str = "", argv: Optional[Sequence] = None,
                 stderr=""):
        super().__init__(message, program=program, argv=argv, stderr=stderr)
        self.why = why
        self.excerpt = excerpt
