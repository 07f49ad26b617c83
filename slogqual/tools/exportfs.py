"""exportfs (nfs-utils): add and remove one knfsd export without touching /etc/exports.

``exportfs -o OPTS CLIENT:/path`` exports to the kernel's table (and nfs-utils' etab) directly;
``exportfs -u CLIENT:/path`` removes exactly that export. /etc/exports is never read or written, and
``exportfs -a``/``-r`` (which would re-sync the whole table from /etc/exports) are never run.
"""

from __future__ import annotations

import re
from typing import List, Sequence

from slogqual.errors import UsageError
from slogqual.tools import spawn as _run

PROGRAM = "exportfs"
_OPTION = re.compile(r"^[a-z_]+(=[A-Za-z0-9_.:/-]+)?$")


def check_options(options: Sequence[str]) -> List[str]:
    """Export options as exports(5) spells them ('rw', 'sync', 'no_root_squash', 'fsid=0'); one
    line of complaint for anything else (a comma or a space would smuggle in another option)."""
    out = []
    for opt in options:
        if not isinstance(opt, str) or not _OPTION.match(opt):
            raise UsageError(f"NFS export option {opt!r}: use exports(5) words such as rw, sync, no_root_squash")
        out.append(opt)
    return out


def export_argv(client: str, path: str, options: Sequence[str]) -> List[str]:
    return [PROGRAM, "-o", ",".join(check_options(options)), f"{client}:{path}"]


def unexport_argv(client: str, path: str) -> List[str]:
    return [PROGRAM, "-u", f"{client}:{path}"]


def exportfs(argv: List[str], timeout: float = 60) -> str:
    return _run.run_checked(argv, timeout=timeout)
