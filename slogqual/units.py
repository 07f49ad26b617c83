"""IO sizes: parsing user input, the default sweep sizes, and labels."""

from __future__ import annotations

import re
from typing import List

from slogqual.errors import UsageError

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

MIN_SIZE = 512
MAX_SIZE = 8 * MiB  # the largest size diskinfo -wS writes (MAXTX)

# 512 B, 1 KiB ... 8 MiB: the 15 points of diskinfo -wS on a 512 B-sector disk.
DEFAULT_SIZES: List[int] = [MIN_SIZE << i for i in range(15)]

_SUFFIX = {"": 1, "b": 1, "k": KiB, "kb": KiB, "kib": KiB, "m": MiB, "mb": MiB, "mib": MiB, "g": GiB, "gb": GiB, "gib": GiB}
_SIZE_RE = re.compile(r"^\s*([0-9]+)\s*([a-zA-Z]*)\s*$", re.ASCII)  # ASCII digits only: int() would take '４'


def parse_size(text: str) -> int:
    """'4k' -> 4096. Suffixes are binary (k = KiB), as in fio and diskinfo."""
    m = _SIZE_RE.match(text)
    if not m or m.group(2).lower() not in _SUFFIX:
        raise UsageError(f"bad size {text!r}: use a number with an optional k/m/g suffix, e.g. 4k")
    return int(m.group(1)) * _SUFFIX[m.group(2).lower()]


def parse_sizes(text: str, allow_large: bool = False) -> List[int]:
    """'4k,128k,1m' -> sorted unique sizes, each a multiple of 512, at most 8 MiB."""
    parts = text.split(",")
    if not text.strip():
        raise UsageError("--sizes needs at least one size")
    if any(not p.strip() for p in parts):
        raise UsageError(f"--sizes {text!r} has an empty entry")
    sizes = set()
    for part in parts:
        size = parse_size(part)
        if size <= 0 or size % 512:
            raise UsageError(f"size {part.strip()} is not a multiple of 512 bytes")
        if size > MAX_SIZE and not allow_large:
            raise UsageError(f"size {part.strip()} is above 8 MiB (the ZIL's largest write); add --allow-large to insist")
        sizes.add(size)
    return sorted(sizes)


def size_label(size: int) -> str:
    """Compact binary label: 512, 4K, 128K, 1M (plot ticks, table rows)."""
    for unit, suffix in ((GiB, "G"), (MiB, "M"), (KiB, "K")):
        if size >= unit and size % unit == 0:
            return f"{size // unit}{suffix}"
    return str(size)
