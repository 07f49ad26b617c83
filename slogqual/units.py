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


TiB = 1024 * GiB
_DURATION_SUFFIX = {"s": 1.0, "sec": 1.0, "min": 60.0, "h": 3600.0}
_AMOUNT_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$", re.ASCII)
MAX_SUSTAIN_BYTES = 1 << 50  # 1 PiB: more than any device takes in a day, far below what overflows
MAX_SUSTAIN_S = 24 * 3600.0  # a day
_SUSTAIN_BYTES = {"k": KiB, "kib": KiB, "m": MiB, "mib": MiB, "g": GiB, "gib": GiB, "t": TiB, "tib": TiB}


def parse_sustain(text: str):
    """--sustain: ('duration', seconds) for '90s', '10min', '1.5h'; ('bytes', n) for '512M', '20GiB', '1T'.

    A lower-case 'm' is refused: minutes or mebibytes? (and a bare number: seconds or bytes?) The message
    says how to write each. Sizes are binary, as everywhere in slogqual."""
    m = _AMOUNT_RE.match(text or "")
    hint = "write a duration as 90s, 10min or 2h, or an amount of data as 512M, 20G or 1T"
    if not m:
        raise UsageError(f"--sustain {text!r}: {hint}")
    number, suffix = float(m.group(1)), m.group(2).lower()
    if m.group(2) in ("", "m"):  # 'M' is mebibytes, as in '512M'; a lower-case 'm' could be minutes
        what = "seconds or bytes" if suffix == "" else "minutes or mebibytes"
        raise UsageError(f"--sustain {text!r}: {what}? {hint}")
    if suffix in _DURATION_SUFFIX:
        value = number * _DURATION_SUFFIX[suffix]
        if not 0 < value <= MAX_SUSTAIN_S:
            raise UsageError(f"--sustain {text!r}: the duration must be above 0 and at most 24h")
        return "duration", value
    if suffix in _SUSTAIN_BYTES:
        value = number * _SUSTAIN_BYTES[suffix]
        if not 1 <= value <= MAX_SUSTAIN_BYTES:  # float('9' * 400) is inf: compared, never int()ed
            raise UsageError(f"--sustain {text!r}: the amount must be at least 1 byte and at most 1024T (1 PiB)")
        value = int(value)
        return "bytes", value
    raise UsageError(f"--sustain {text!r}: unknown unit {m.group(2)!r}; {hint}")


def parse_percent(text: str, option: str = "--precision") -> float:
    """'2%' or '2' -> 0.02 (a percentage, above 0 and below 100)."""
    m = _AMOUNT_RE.match((text or "").replace("%", "", 1)) if (text or "").count("%") <= 1 else None
    if not m or m.group(2) or not (text or "").strip().endswith(("%",) + tuple("0123456789")):
        raise UsageError(f"{option} {text!r}: a percentage, e.g. 2%")
    value = float(m.group(1)) / 100
    if not 0 < value < 1:
        raise UsageError(f"{option} {text!r}: must be above 0 % and below 100 %")
    return value
