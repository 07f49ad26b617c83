"""Device identity, class, link, write-cache verdict and the safety interlocks.

The interface the rest of slogqual uses:

- :func:`identify` (path, regular file or nbd URI) -> :class:`DeviceRecord`, whose ``to_dict()``
  is the record ``slogqual inspect --json`` prints and every sweep result embeds under ``device``;
  ``record.warnings()`` are the loud one-line warnings (volatile cache, slow link).
- :func:`claim_for_writing` (path, destroy_data): context manager running every interlock and
  holding the device exclusively; raises :class:`slogqual.errors.RefusedError`.
  :func:`safety_findings` (path): the same interlocks' findings, nothing locked or held (listings).
  Both pick the platform's facts (device/linux_safety.py, device/freebsd_safety.py) as
  :func:`identify` picks its identification; what they share is device/interlock.py.
- :func:`candidates`: the block devices (and pmem namespaces) ``slogqual devices`` lists.
"""

from __future__ import annotations

import os
import sys
from typing import ContextManager, List, Optional

from slogqual.device.interlock import Claim, Finding
from slogqual.device.record import DeviceRecord
from slogqual.errors import ToolError, UsageError
from slogqual.kernel import sysfs

__all__ = ["identify", "claim_for_writing", "candidates", "DeviceRecord", "Claim", "Finding", "safety_findings",
           "one_reading"]


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


def one_reading() -> ContextManager[None]:
    """A run's scope: within it what describes the whole machine (FreeBSD's devinfo -rv and pciconf -lvc,
    device/freebsd_topology.one_reading) is read once for every device identified or walked; after it,
    forgotten, so the next run reads the machine as it is then."""
    from slogqual.device import freebsd_topology

    return freebsd_topology.one_reading()


def _freebsd_interlocks(host) -> bool:
    """FreeBSD's interlocks run on FreeBSD, and wherever a FreeBSD host (tools/freebsd/host.Host: its
    programs, the tests' recorded machines) is given."""
    return host is not None or sys.platform.startswith("freebsd")


def claim_for_writing(path: str, destroy_data: bool, lock_dir: Optional[str] = None, root: str = sysfs.SYS,
                      exclusive: bool = True, host=None) -> ContextManager[Claim]:
    """Run every interlock and hold the device for a destructive run, or raise RefusedError (on entering).

    destroy_data overrides only the "carries a signature / partition table" findings. exclusive=False
    (pool building): the device's hold is taken as a check and released at once, because ``zpool
    create`` must open the device exclusively itself; the slogqual lock stays. root: Linux's sysfs.
    host: FreeBSD's programs (tools/freebsd/host.py); given, or on FreeBSD, the FreeBSD interlocks run.
    """
    if _freebsd_interlocks(host):
        from slogqual.device import freebsd_safety

        return freebsd_safety.claim_for_writing(path, destroy_data, lock_dir, exclusive, host)
    from slogqual.device import linux_safety

    return linux_safety.claim_for_writing(path, destroy_data, lock_dir, root, exclusive)


def safety_findings(path: str, root: str = sysfs.SYS, host=None) -> List[Finding]:
    """Every interlock's finding for path, without locking or holding it (``slogqual devices``)."""
    if _freebsd_interlocks(host):
        from slogqual.device import freebsd_safety

        return freebsd_safety.inspect(path, host)
    from slogqual.device import linux_safety

    return linux_safety.inspect(path, root)


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
