"""The built lab image: kernel, initramfs and module tree that contrib/lab/build.sh caches.

Layout (``$SLOGQUAL_LAB_CACHE``, default ``/var/cache/slogqual/lab``)::

    debs/                                   downloaded linux-image and zfs-dkms .debs
    <kernel release>_zfs-<version>/         one build: vmlinuz, initrd.img, modules/, lab.json
    current -> <kernel release>_zfs-<...>   the build slogqual boots
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from slogqual.errors import UsageError

DEFAULT_CACHE = "/var/cache/slogqual/lab"
BUILD_HINT = "build it with contrib/lab/build.sh (as root)"


def cache_dir() -> str:
    return os.environ.get("SLOGQUAL_LAB_CACHE") or DEFAULT_CACHE


@dataclass(frozen=True)
class LabImage:
    root: str  # the build directory (resolved, not the `current` link)
    kernel_release: str
    zfs_version: str
    kernel: str
    initrd: str
    modules: str  # the guest's /lib/modules/<release> on the host
    built: str = ""

    @classmethod
    def load(cls, cache: str = "") -> "LabImage":
        cache = cache or cache_dir()
        current = os.path.join(cache, "current")
        manifest = os.path.join(current, "lab.json")
        if not os.path.exists(manifest):
            raise UsageError(f"the lab image is not built ({manifest} missing): {BUILD_HINT}")
        root = os.path.realpath(current)
        try:
            with open(manifest, encoding="utf-8") as fh:
                doc = json.load(fh)
        except (OSError, ValueError) as exc:
            raise UsageError(f"unreadable lab manifest {manifest}: {exc}; {BUILD_HINT}") from None
        rel = doc.get("kernel_release", "")
        img = cls(
            root=root,
            kernel_release=rel,
            zfs_version=doc.get("zfs_version", ""),
            kernel=os.path.join(root, doc.get("kernel", "vmlinuz")),
            initrd=os.path.join(root, doc.get("initrd", "initrd.img")),
            modules=os.path.join(root, doc.get("modules", "modules"), "lib", "modules", rel),
            built=doc.get("built", ""),
        )
        for path in (img.kernel, img.initrd, os.path.join(img.modules, "extra", "zfs.ko")):
            if not os.path.exists(path):
                raise UsageError(f"the lab image in {root} is incomplete ({path} missing): {BUILD_HINT}")
        return img


def missing_reason(cache: str = "") -> str:
    """'' when a lab image is usable, else why not (for pytest skips and `lab check`)."""
    try:
        LabImage.load(cache)
    except UsageError as exc:
        return str(exc)
    return ""
