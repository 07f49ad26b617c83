"""transport = "local": fio on the ZFS host writes the zvols or the dataset directly (as scenarios always did)."""

from __future__ import annotations

import contextlib
from typing import Iterator, List

from slogqual.pool.transport import Attached


@contextlib.contextmanager
def attach(targets: List[str]) -> Iterator[Attached]:
    yield Attached(list(targets), {"kind": "local"})
