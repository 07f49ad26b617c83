"""mount(8) on FreeBSD: ``mount -p``, the mounted filesystems in fstab(5) format.

Each line is ``device mountpoint fstype options dump pass`` (sbin/mount/mount.c putfsent()); the
device is a path (``/dev/ada0p2``, ``/dev/gpt/rootfs``), a dataset (``zroot/ROOT/default``) or a
pseudo name (``devfs``, ``tmpfs``). The argv and the :class:`~slogqual.tools.mount.Mount` each line
becomes are the mount door's (slogqual.tools.mount); the FreeBSD format is read here.
"""

from __future__ import annotations

from typing import List, Optional

from slogqual.tools import mount as _mount
from slogqual.tools import spawn as _run
from slogqual.tools.mount import Mount

PROGRAM = _mount.PROGRAM


def argv() -> List[str]:
    return _mount.table_argv()


def parse(text: str) -> List[Mount]:
    """ValueError on a line that is not an fstab entry."""
    out: List[Mount] = []
    for raw in (text or "").splitlines():
        if not raw.strip():
            continue
        f = raw.split()
        if len(f) not in (4, 6) or (len(f) == 6 and not (f[4].isdecimal() and f[5].isdecimal())):
            raise ValueError(f"unexpected mount -p line {raw.strip()[:80]!r}")
        out.append(Mount(device=f[0], mountpoint=f[1], fstype=f[2], options=f[3]))
    return out


def mounts(host=None) -> List[Mount]:
    from slogqual.tools.freebsd.host import LIVE

    return _run.parse_output(_mount.run(argv(), timeout=30, host=host or LIVE), parse)


def device_name(device: str, dev: str = "/dev") -> Optional[str]:
    """The GEOM provider name of a mount's device (``/dev/gpt/rootfs`` -> ``gpt/rootfs``), None for a
    device that is no node under dev (a dataset, devfs, tmpfs, an NFS export)."""
    prefix = dev.rstrip("/") + "/"
    return device[len(prefix):] if device.startswith(prefix) and len(device) > len(prefix) else None
