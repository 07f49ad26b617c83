"""Device identity, class, link, write-cache verdict and the safety interlocks.

The interface the rest of slogqual uses:

- :func:`identify` (path, regular file or nbd URI) -> :class:`DeviceRecord`, whose ``to_dict()``
  is the record ``slogqual inspect --json`` prints and every sweep result embeds under ``device``;
  ``record.warnings()`` are the loud one-line warnings (volatile cache, slow link).
- :func:`claim_for_writing` (path, destroy_data): context manager running every interlock and
  holding the device exclusively; raises :class:`slogqual.errors.RefusedError`.
- :func:`candidates`: the block devices (and pmem namespaces) ``slogqual devices`` lists.
"""

from __future__ import annotations

import os
import sys
from typing import List

from slogqual.device.record import DeviceRecord
from slogqual.errors import ToolError, UsageError
from slogqual.device.safety import Claim, Finding, claim_for_writing, inspect as safety_findings
from slogqual.tools import sysfs

__all__ = ["identify", "claim_for_writing", "candidates", "DeviceRecord", "Claim", "Finding", "safety_findings"]


def identify(path: str) -> DeviceRecord:
    """Identify a block device, regular file or nbd:// URI (a URI is never opened as a path)."""
    if "://" not in path:
        try:
            os.stat(path)
        except (FileNotFoundError, PermissionError):
            pass  # the platform's identify says these in its own words
        except OSError as exc:  # 'F/' on a file, a symlink loop, a name too long: one line, not a traceback
            raise UsageError(f"{path[:200]}: {exc.strerror or exc}") from None
    if sys.platform.startswith("freebsd"):
        from slogqual.device import freebsd

        return freebsd.identify(path)
    from slogqual.device import linux

    return linux.identify(path)


def candidates(include_all: bool = False, root: str = sysfs.SYS) -> List[str]:
    """Whole block devices worth listing: disks, NVMe namespaces, pmem, attached loop devices.

    Partitions, empty loop devices, zero-sized devices and (unless include_all) zram/ram,
    device-mapper and md devices are left out.
    """
    if sys.platform.startswith("freebsd"):
        from slogqual.tools.freebsd import sysctl

        try:
            return [f"/dev/{d}" for d in sysctl.disks("\n".join(f"{k}: {v}" for k, v in sysctl.get("kern.disks").items()))]
        except (ValueError, OSError, ToolError):
            return []
    out = []
    for name in sysfs.block_devices(root):
        d = os.path.join(root, "class", "block", name)
        if os.path.exists(os.path.join(d, "partition")):
            continue
        size = sysfs.read_int(os.path.join(d, "size")) or 0
        if size == 0:
            continue
        if not include_all and name.startswith(("zram", "ram", "dm-", "md", "sr")):
            continue
        out.append(f"/dev/{name}")
    return out
