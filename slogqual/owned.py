"""Directories a run owns (its pid in the name, ``prefix<pid>-XXXXXXXX``, and in an ``owner.pid`` file
inside), and finding those of runs that are gone.

SIGKILL leaves a run no chance to clean up: its job directory, the pair engine's samples directory, the
powercut emulation's socket directory and mount point stay behind. The next run finds them by their
prefix and their owner and ends them. The owner is ``owner.pid``; where it cannot be read (the run was
killed between making the directory and writing the file, or while removing it, the file gone first)
the pid in a name of the form this module makes. A directory with neither is not slogqual's to judge
and is left alone; so is one whose owner still runs, or which names this very process.

What slogqual itself made, on the filesystem: no program is started here, so it is not a tools/ module;
tools/ stands on it (nbdkit.py, nbdfuse.py, pairbench.py name their directories with it), as do the lab
and the sweep's targets.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from typing import Callable, List, Optional

from slogqual.process import pid_alive  # noqa: F401  (callers use owned.pid_alive)

OWNER_FILE = "owner.pid"
# the end of a name make_dir gives: "<pid>-" and mkdtemp's 8 characters (after the prefix, and whatever
# a caller's longer prefix adds: "slogqual-lab-" finds "slogqual-lab-sock-<pid>-XXXXXXXX" too)
_NAMED_PID = re.compile(r"(?:.*-)?([0-9]+)-[a-z0-9_]{8}")


def make_dir(prefix: str, base: Optional[str] = None) -> str:
    """A new private directory (mode 0700) named ``prefix<pid>-XXXXXXXX`` in ``base`` (the temporary
    directory by default), with this process's pid in its ``owner.pid`` too."""
    path = tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=base)
    with open(os.path.join(path, OWNER_FILE), "w") as fh:
        fh.write(f"{os.getpid()}\n")
    return path


def owner(path: str) -> Optional[int]:
    """The pid in ``path``'s owner.pid; None when there is none or it is not a pid."""
    try:
        with open(os.path.join(path, OWNER_FILE)) as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return None


def named_owner(name: str, prefix: str) -> Optional[int]:
    """The pid in a directory name ``make_dir(prefix)`` gave; None for any other name."""
    m = _NAMED_PID.fullmatch(name[len(prefix):]) if name.startswith(prefix) else None
    return int(m.group(1)) if m else None


def stale_dirs(base: str, prefix: str) -> List[str]:
    """The directories ``prefix…`` in ``base`` whose owner (owner.pid, else the pid in a name make_dir
    gave) is a process that is gone."""
    found = []
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return found
    for name in names:
        path = os.path.join(base, name)
        if not name.startswith(prefix) or os.path.islink(path) or not os.path.isdir(path):
            continue
        pid = owner(path)
        if pid is None:
            pid = named_owner(name, prefix)
        if pid is None or pid == os.getpid() or pid_alive(pid):
            continue
        found.append(path)
    return found


def remove_stale(base: Optional[str], prefix: str, remove: Callable[[str], None] = shutil.rmtree) -> List[str]:
    """End what dead runs left in ``base`` (the temporary directory by default) under ``prefix``: each
    stale directory handed to ``remove`` (removed with its contents by default; a remover raising
    OSError leaves it). Returns what was removed."""
    removed = []
    for path in stale_dirs(base or tempfile.gettempdir(), prefix):
        try:
            remove(path)
        except OSError:
            continue
        removed.append(path)
    return removed
