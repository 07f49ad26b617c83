"""OpenZFS version strings, read as the suite compares them: pure, no file and no process."""

from __future__ import annotations

import re
from typing import Optional, Tuple

_SERIES = re.compile(r"(\d+)\.(\d+)")


def openzfs_series(version: Optional[str]) -> Optional[Tuple[int, int]]:
    """(2, 4) of an OpenZFS version such as '2.4.4-1~bpo13+1' or 'zfs-kmod-2.3.2'; None when it names none."""
    m = _SERIES.search(version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None
