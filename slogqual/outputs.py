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
import zlib
from typing import Callable, Optional, Sequence, Tuple

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


def _head(path: str, n: int = SNIFF_BYTES) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(n)
    except OSError:
        return b""


def is_document(path: str, schema_prefix: str) -> bool:
    """Whether ``path`` begins like a slogqual JSON document whose schema starts with ``schema_prefix``."""
    head = _head(path).decode("utf-8", errors="replace")
    return re.match(r'\s*\{\s*"schema"\s*:\s*"' + re.escape(schema_prefix), head) is not None


# --- recognisers: "a file slogqual wrote as this kind" ------------------------------------------------

def json_document(schema_prefix: str) -> Callable[[str], bool]:
    return lambda path: is_document(path, schema_prefix)


def text_mark(mark: str, lines: int = 3) -> Callable[[str], bool]:
    """Text whose first ``lines`` lines hold ``mark`` (the HTML report's generator meta, the Markdown
    report's 'Generated ... by slogqual', a gnuplot script's '# slogqual', the CSV export's header)."""
    def ours(path: str) -> bool:
        head = _head(path).decode("utf-8", errors="replace").splitlines()[:lines]
        return any(mark in line for line in head)
    return ours


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_MARK = b"Software\x00slogqual"  # a tEXt chunk's keyword and text
SVG_MARK = "<!-- written by slogqual -->"


def picture(path: str) -> bool:
    """A PNG or SVG that slogqual marked when it wrote it (see mark_picture)."""
    head = _head(path, 4096)
    if head.startswith(PNG_SIGNATURE):
        return PNG_MARK in head
    return SVG_MARK.encode() in head


def mark_picture(path: str) -> None:
    """Mark a picture gnuplot just wrote as slogqual's, so that a later `-o` onto it may replace it: a
    PNG gets a tEXt chunk (Software: slogqual) after its header chunk, an SVG a comment after its XML
    declaration. The file is rewritten in place; a file of neither kind is left alone."""
    with open(path, "rb") as fh:
        data = fh.read()
    if data.startswith(PNG_SIGNATURE) and data[12:16] == b"IHDR":
        if PNG_MARK in data[:4096]:
            return
        ihdr_end = 8 + 8 + int.from_bytes(data[8:12], "big") + 4  # length, type, data, CRC
        chunk = b"tEXt" + PNG_MARK
        marked = (data[:ihdr_end] + len(PNG_MARK).to_bytes(4, "big") + chunk
                  + zlib.crc32(chunk).to_bytes(4, "big") + data[ihdr_end:])
    elif b"<svg" in data[:4096]:
        if SVG_MARK.encode() in data[:4096]:
            return
        text = data.decode("utf-8")
        at = text.index("?>") + 2 if text.lstrip().startswith("<?xml") else 0
        marked = (text[:at] + ("\n" if at else "") + SVG_MARK + ("" if at else "\n") + text[at:]).encode("utf-8")
    else:
        return
    with open(path, "wb") as fh:
        fh.write(marked)


def same_file(path: str, other: str) -> bool:
    """Whether ``path`` and ``other`` name one file: the same real path, or the same device and inode."""
    if os.path.realpath(path) == os.path.realpath(other):
        return True
    try:
        return os.path.samefile(path, other)
    except OSError:
        return False


def check_output(path: str, what: str, ours: Optional[Callable[[str], bool]] = None,
                 protect: Sequence[Tuple[str, str]] = (), force: bool = False, forceable: bool = True) -> str:
    """Refuse (UsageError) to write ``what`` (e.g. "sweep result") to ``path`` where it would replace
    something not ours to replace; ``protect`` is (path, what it is) of files that are never outputs.
    ``ours`` tells a file slogqual wrote as this kind, which may be replaced (None: none may without
    --force; a str is a JSON schema prefix); ``forceable``: whether the command has a --force to offer.
    A protected file is recognised by its real path (it need not exist yet) and by device and inode (a
    hard link, a symlink, a bind mount). Returns the absolute path."""
    if isinstance(ours, str):
        ours = json_document(ours)
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
        if same_file(apath, other):
            raise UsageError(f"{path} is {label}: the {what} must go to another file")
    if st is not None and not force and not (ours and ours(apath)):
        raise UsageError(f"{path} exists and is not a slogqual {what}: name another file"
                         + (", or add --force to replace it" if forceable else ""))
    parent = os.path.dirname(apath)
    if not os.path.isdir(parent):
        raise UsageError(f"{path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):  # EROFS too: access(2) reports a read-only filesystem
        raise UsageError(f"{path}: directory {parent} is not writable")
    return apath


def check_makeable(path: str) -> str:
    """A directory the run will make (it is not there yet) and fill: refused now (UsageError) when the
    nearest existing path above it is not a writable directory. Returns the absolute path, which
    make_output_dir makes once nothing can refuse the run any more (a refused run leaves no empty
    directory behind)."""
    directory = os.path.abspath(path)
    above = os.path.dirname(directory)  # the nearest that exists: makedirs makes the rest
    while not os.path.exists(above):
        above = os.path.dirname(above)
    if not os.path.isdir(above) or not os.access(above, os.W_OK | os.X_OK):
        raise UsageError(f"{path}: cannot make the output directory ({above} is not a writable directory)")
    return directory


def make_output_dir(directory: Optional[str]) -> None:
    """The output directory check_makeable planned (None: it is there), made once every check passed."""
    if directory is None:
        return
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{directory}: cannot make the output directory ({exc.strerror or exc})") from None
