"""procfs (Linux): kernel tables read from /proc, no program started.

``/proc/swaps`` is the kernel's own list of active swap areas (``swapon
--show`` prints the same table); paths in it are octal-escaped like
mountinfo.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

SWAPS = "/proc/swaps"


@dataclass
class Swap:
    filename: str
    type: Optional[str]  # partition | file
    size_kib: Optional[int]


def unescape_octal(field: str) -> str:
    """/proc's escaping of space, tab, newline and backslash as \\ooo octal (mountinfo, swaps). A
    backslash not followed by three octal digits stays as it is (it was a ValueError on '\\999')."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and i + 4 <= len(field) and all(c in "01234567" for c in field[i + 1:i + 4]):
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def parse_swaps(text: str) -> List[Swap]:
    out = []
    for line in (text or "").splitlines()[1:]:  # first line is the header
        parts = line.split()
        if len(parts) < 2:
            continue
        try:
            size = int(parts[2]) if len(parts) > 2 else None
        except ValueError:
            size = None
        out.append(Swap(filename=unescape_octal(parts[0]), type=parts[1], size_kib=size))
    return out


def swaps(path: str = SWAPS) -> List[Swap]:
    """Active swap areas. Raises ValueError when the table cannot be read."""
    try:
        with open(path) as fh:
            return parse_swaps(fh.read())
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
