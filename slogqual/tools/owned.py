"""Directories a run owns (an ``owner.pid`` file inside names its process), and finding those of runs
that are gone.

SIGKILL leaves a run no chance to clean up: its job directory, the pair engine's samples directory, the
powercut emulation's mount point stay behind. The next run finds them by their prefix and their
``owner.pid`` and ends them. A directory without a readable ``owner.pid`` is not slogqual's to judge
and is left alone; so is one whose owner still runs, or which names this very process.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Callable, List, Optional

from slogqual.process import pid_alive  # noqa: F401  (callers use owned.pid_alive)

OWNER_FILE = "owner.pid"


def make_dir(prefix: str, base: Optional[str] = None) -> str:
    """A new private directory (mode 0700) named ``prefix…`` in ``base`` (the temporary directory by
    default), with this process's pid in its ``owner.pid``."""
    path = tempfile.mkdtemp(prefix=prefix, dir=base)
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


def stale_dirs(base: str, prefix: str) -> List[str]:
    """The directories ``prefix…`` in ``base`` whose owner.pid names a process that is gone."""
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
