"""Where a document may be written. `-o` (and `--out`, `--junit`, exports) never replaces what slogqual
did not write as that kind of document: checked before anything is claimed, measured or written.

Documents are written by an atomic rename (results.write_json_atomic), which would silently turn a
device node into a regular file and a measured target, the result store or any other file into a
few kilobytes of JSON. So, in one line and exit 2:

* a directory, device node, FIFO or socket is never an output;
* nor is a file the run is about to measure, or the result store;
* an existing file that is not a slogqual document of this kind is replaced only with ``--force``;
* the destination's directory must exist and be writable (a read-only filesystem shows here, not after
  the measurement).
"""

from __future__ import annotations

import os
import re
import stat
from typing import Optional, Sequence, Tuple

from slogqual.errors import UsageError

SNIFF_BYTES = 65536  # slogqual writes "schema" as the first key; this much always holds it


def _kind_of(mode: int) -> Optional[str]:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISBLK(mode) or stat.S_ISCHR(mode):
        return "a device node"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def is_document(path: str, schema_prefix: str) -> bool:
    """Whether ``path`` begins like a slogqual JSON document whose schema starts with ``schema_prefix``."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return False
    return re.match(r'\s*\{\s*"schema"\s*:\s*"' + re.escape(schema_prefix), head) is not None


def check_output(path: str, what: str, schema_prefix: Optional[str] = None,
                 protect: Sequence[Tuple[str, str]] = (), force: bool = False) -> str:
    """Refuse (UsageError) to write ``what`` (e.g. "sweep result") to ``path`` where it would replace
    something not ours to replace; ``protect`` is (path, what it is) of files that are never outputs.
    ``schema_prefix`` names the documents of this kind that may be replaced (None: none may, without
    --force). Returns the absolute path."""
    apath = os.path.abspath(path)
    try:
        st = os.stat(apath)
    except FileNotFoundError:
        st = None
    except OSError as exc:  # a symlink loop, a name too long, a component that is a file
        raise UsageError(f"{path}: cannot be the {what} ({exc.strerror or exc})") from None
    if st is not None:
        kind = _kind_of(st.st_mode)
        if kind:
            raise UsageError(f"{path} is {kind}: the {what} goes to a file")
        for other, label in protect:
            try:
                same = os.path.samefile(apath, other)
            except OSError:
                same = False
            if same:
                raise UsageError(f"{path} is {label}: the {what} must go to another file")
        if not force and not (schema_prefix and is_document(apath, schema_prefix)):
            raise UsageError(f"{path} exists and is not a slogqual {what}: name another file, or add --force "
                             "to replace it")
    parent = os.path.dirname(apath)
    if not os.path.isdir(parent):
        raise UsageError(f"{path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):  # EROFS too: access(2) reports a read-only filesystem
        raise UsageError(f"{path}: directory {parent} is not writable")
    return apath
