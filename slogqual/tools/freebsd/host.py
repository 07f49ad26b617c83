"""How slogqual reaches a FreeBSD host: the programs it runs and the directory its device nodes are in.

:data:`LIVE` runs the programs through :func:`slogqual.tools.spawn.run` and looks in ``/dev``: that is
what a FreeBSD run uses. A test builds a host with :func:`recorded` from program outputs captured on
real FreeBSD machines, keyed by the argv that printed them, and a directory of its own standing in
for ``/dev``. Everything else — which argv is built, how the output is parsed, the error contract,
the interlock logic — is the one code path both share; only where the text comes from differs.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from typing import Callable, Dict, Optional, Sequence, Tuple, Union

from slogqual.errors import ToolMissingError
from slogqual.tools import spawn as _run

Runner = Callable[..., subprocess.CompletedProcess]  # run.run's signature: run(argv, *, timeout=, typed_timeout=, ...)


@dataclass(frozen=True)
class Host:
    runner: Optional[Runner] = None  # None: run.run, looked up at call time
    dev: str = "/dev"

    def run(self, argv: Sequence[str], timeout: float = 30) -> subprocess.CompletedProcess:
        """argv's finished run (any exit status): ToolMissingError/ToolTimeoutError as run.run raises them."""
        runner = self.runner or _run.run
        return runner([str(a) for a in argv], timeout=timeout, typed_timeout=True)

    def version(self, program: str, args: Sequence[str], regex: str) -> _run.ToolVersion:
        """``program *args``'s version (run.get_version's contract): the live programs' is read once per
        installed binary, as everywhere else; a recorded host's from what it recorded for that argv."""
        if self.runner is None:
            return _run.get_version(program, args, regex)
        return _run.version_from(self.run([program, *args]), program, regex)


LIVE = Host()

# An output as recorded: its stdout (exit status 0), or (exit status, stdout, stderr).
Recorded = Union[str, Tuple[int, str, str]]


def recorded(outputs: Dict[Tuple[str, ...], Recorded], dev: str) -> Host:
    """A host whose programs print what ``outputs`` holds for their argv; an argv with nothing recorded
    is a program that is not there (ToolMissingError), so a test cannot pass on output it never gave."""

    def runner(argv, **_kw) -> subprocess.CompletedProcess:
        key = tuple(str(a) for a in argv)
        if key not in outputs:
            raise ToolMissingError(f"{argv[0]}: nothing recorded for {' '.join(key)!r}", program=str(argv[0]),
                                   argv=list(key))
        value = outputs[key]
        rc, out, err = (0, value, "") if isinstance(value, str) else value
        return subprocess.CompletedProcess(list(key), rc, out, err)

    return Host(runner=runner, dev=dev)
