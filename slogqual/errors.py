"""Typed errors, each carrying the process exit code the CLI turns it into.

Exit codes are part of the interface (acceptance scripts key on them):
  1  a measurement failed part-way (what was measured is kept)
  2  bad input or a missing/too-old dependency (nothing was measured)
  3  a device was refused by the safety interlocks (nothing was written)
"""


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
