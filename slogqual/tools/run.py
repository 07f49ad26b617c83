"""The one place slogqual starts external programs.

Keeping every spawn here gives one spot for logging, for the "program not
installed" error and for version checks, in the manner of OCRmyPDF's
``subprocess`` module.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
from typing import Mapping, Optional, Sequence

from slogqual.errors import MissingDependencyError

# What callers of popen() need to hand it and to catch from it, so that only tools/ imports subprocess.
DEVNULL, PIPE, STDOUT = subprocess.DEVNULL, subprocess.PIPE, subprocess.STDOUT
Popen = subprocess.Popen
TimeoutExpired = subprocess.TimeoutExpired

log = logging.getLogger("slogqual.tools")

# Debian package names, for the one-line "install it" advice.
INSTALL_HINTS = {
    "fio": "fio",
    "gnuplot": "gnuplot-nox",
    "nbdkit": "nbdkit",
    "nbdinfo": "libnbd-bin",
    "smartctl": "smartmontools",
    "nvme": "nvme-cli",
    "lsblk": "util-linux",
    "blkid": "util-linux",
    "wipefs": "util-linux",
    "zpool": "zfsutils-linux (contrib)",
    "zfs": "zfsutils-linux (contrib)",
    "qemu-system-x86_64": "qemu-system-x86",
}


def which(program: str) -> Optional[str]:
    return shutil.which(program)


def require(program: str) -> str:
    path = shutil.which(program)
    if path is None:
        hint = INSTALL_HINTS.get(program)
        advice = f" (Debian: apt-get install {hint})" if hint else ""
        raise MissingDependencyError(f"{program} not found on PATH{advice}")
    return path


def run(
    argv: Sequence[str],
    *,
    check: bool = False,
    timeout: Optional[float] = None,
    env: Optional[Mapping[str, str]] = None,
    input: Optional[str] = None,
) -> subprocess.CompletedProcess:
    """Run argv (a list, never a shell string) and capture text output."""
    argv = [str(a) for a in argv]
    require(argv[0])
    log.debug("run: %s", " ".join(argv))
    proc = subprocess.run(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=timeout,
        env=dict(env) if env is not None else None,
        input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
    )
    if check and proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, argv, proc.stdout, proc.stderr)
    return proc


def run_checked(argv: Sequence[str], timeout: Optional[float] = 300) -> str:
    """Run argv and return its stdout; a non-zero exit is a MeasurementError carrying the
    program's last line of complaint (for tools whose failure ends the measurement: zpool, zfs)."""
    from slogqual.errors import MeasurementError

    proc = run(argv, timeout=timeout)
    if proc.returncode != 0:
        err = (proc.stderr or proc.stdout or "").strip().splitlines()
        raise MeasurementError(f"{' '.join(str(a) for a in argv[:3])}… failed: {err[-1] if err else proc.returncode}")
    return proc.stdout


def popen(argv: Sequence[str], **kwargs) -> subprocess.Popen:
    """Start a long-running helper (nbdkit, qemu); the caller owns its lifetime."""
    argv = [str(a) for a in argv]
    require(argv[0])
    log.debug("popen: %s", " ".join(argv))
    return subprocess.Popen(argv, **kwargs)


def parse_version(text: str, regex: str) -> Optional[tuple]:
    m = re.search(regex, text)
    if not m:
        return None
    return tuple(int(x) for x in m.groups() if x is not None)


def get_version(program: str, args: Sequence[str], regex: str) -> tuple:
    """(version tuple, raw version string) of a program, e.g. fio --version."""
    proc = run([program, *args], timeout=30)
    text = (proc.stdout or "") + (proc.stderr or "")
    ver = parse_version(text, regex)
    if ver is None:
        raise MissingDependencyError(f"cannot read the version of {program} from {text.strip()[:80]!r}")
    return ver, text.strip().splitlines()[0] if text.strip() else ""
