"""The built lab image: kernel, initramfs and module tree that contrib/lab/build.sh caches.

Layout (``$SLOGQUAL_LAB_CACHE``, default ``/var/cache/slogqual/lab``)::

    debs/                                   downloaded linux-image, zfs-dkms (and 2.4 userland) .debs
    apt/trixie/                             2.4: the apt configuration, lists and state build.sh asks trixie with
    <kernel release>_zfs-<version>/         one build: vmlinuz, initrd.img, modules/, lab.json
                                            (2.4: userland/, the OpenZFS userland the guest runs)
    current -> <kernel release>_zfs-2.3...  the default lab (OpenZFS 2.3, the host's userland)
    zfs-2.4 -> <kernel release>_zfs-2.4...  the OpenZFS 2.4 lab
    zfs-2.4.building, .build.log, .build.rc a background build of 2.4 (build.sh's default: after 2.3, at the
                                            lowest priority): its pid while it runs, its output, its exit status

Which one a run boots: ``--zfs`` of `slogqual lab`, else ``$SLOGQUAL_LAB_ZFS``, else 2.3 (``current``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from slogqual.errors import UsageError
from slogqual.kernel import procfs
from slogqual.versions import openzfs_series

DEFAULT_CACHE = "/var/cache/slogqual/lab"
BUILD_HINT = "build it with contrib/lab/build.sh (as root)"
ZFS_ENV = "SLOGQUAL_LAB_ZFS"
#: the OpenZFS series the lab builds, and the cache link of each build (build.sh's LINK)
LINKS = {"2.3": "current", "2.4": "zfs-2.4"}
DEFAULT_SERIES = "2.3"
HOST_USERLAND = "host"  # lab.json's zfs_userland when the guest runs the host's zfsutils-linux


def cache_dir() -> str:
    return os.environ.get("SLOGQUAL_LAB_CACHE") or DEFAULT_CACHE


def selected_series(zfs: str = "") -> str:
    """The OpenZFS series a run uses: ``zfs`` (the --zfs option), else $SLOGQUAL_LAB_ZFS, else 2.3."""
    series = zfs or os.environ.get(ZFS_ENV, "") or DEFAULT_SERIES
    if series not in LINKS:
        where = "--zfs" if zfs else ZFS_ENV
        raise UsageError(f"{where} {series}: the lab has OpenZFS {' or '.join(LINKS)}")
    return series


def build_hint(series: str) -> str:
    if series == DEFAULT_SERIES:
        return BUILD_HINT
    return f"build it with SLOGQUAL_LAB_ZFS={series} contrib/lab/build.sh (as root)"


def background_build(series: str, cache: str = "") -> dict:
    """A background build of ``series`` (contrib/lab/build.sh's default builds 2.4 after 2.3 that way):
    {"pid": N while it runs else None, "log": its output, "rc": its exit status once ended else None}."""
    base = os.path.join(cache or cache_dir(), LINKS.get(series, series))
    out = {"pid": None, "log": base + ".build.log", "rc": None}
    try:
        with open(base + ".building", encoding="utf-8") as fh:
            pid = int(fh.read().strip())
        os.kill(pid, 0)  # there (signal 0 sends nothing)
        if procfs.process_state(pid) != "Z":  # a zombie has ended, only not reaped yet: no build
            out["pid"] = pid
    except (OSError, ValueError):
        pass
    try:
        with open(base + ".build.rc", encoding="utf-8") as fh:
            out["rc"] = int(fh.read().strip())
    except (OSError, ValueError):
        pass
    return out


def series_of(version: str) -> str:
    """'2.4' of a Debian OpenZFS version such as '2.4.4-1~bpo13+1'; '' when it has no major.minor."""
    found = openzfs_series(version)
    return f"{found[0]}.{found[1]}" if found else ""


@dataclass(frozen=True)
class LabImage:
    root: str  # the build directory (resolved, not the `current` link)
    kernel_release: str
    zfs_version: str  # the module's (lab.json's zfs_version, kept for the builds made before the fields below)
    kernel: str
    initrd: str
    modules: str  # the guest's /lib/modules/<release> on the host
    built: str = ""
    zfs_series: str = ""  # '2.3' | '2.4'
    zfs_module_version: str = ""  # zfs.ko's version (modinfo), e.g. '2.4.4-1~bpo13+1'
    zfs_userland_version: str = ""  # the userland the guest runs, checked equal to the module's at build time
    userland: str = ""  # the build's own userland directory; '' = the guest runs the host's zfsutils-linux

    @classmethod
    def load(cls, cache: str = "", zfs: str = "") -> "LabImage":
        cache = cache or cache_dir()
        series = selected_series(zfs)
        hint = build_hint(series)
        link = os.path.join(cache, LINKS[series])
        manifest = os.path.join(link, "lab.json")
        if not os.path.exists(manifest):
            what = "the lab image" if series == DEFAULT_SERIES else f"the OpenZFS {series} lab image"
            bg = background_build(series, cache)
            if bg["pid"] is not None:
                raise UsageError(f"{what} is being built in the background (pid {bg['pid']}, log {bg['log']})")
            if bg["rc"]:
                hint = f"its background build failed (exit {bg['rc']}, log {bg['log']}); {hint}"
            raise UsageError(f"{what} is not built ({manifest} missing): {hint}")
        root = os.path.realpath(link)
        try:
            with open(manifest, encoding="utf-8") as fh:
                doc = json.load(fh)
            if not isinstance(doc, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as exc:
            raise UsageError(f"unreadable lab manifest {manifest}: {exc}; {hint}") from None
        rel = str(doc.get("kernel_release", ""))
        module = str(doc.get("zfs_module_version") or doc.get("zfs_version", ""))
        got = str(doc.get("zfs_series") or series_of(module))
        if got != series:
            raise UsageError(f"{manifest} is a lab of OpenZFS {got or 'unknown'}, not {series}: {hint}")
        userland = str(doc.get("zfs_userland") or HOST_USERLAND)
        img = cls(
            root=root,
            kernel_release=rel,
            zfs_version=module,
            kernel=os.path.join(root, doc.get("kernel", "vmlinuz")),
            initrd=os.path.join(root, doc.get("initrd", "initrd.img")),
            modules=os.path.join(root, doc.get("modules", "modules"), "lib", "modules", rel),
            built=str(doc.get("built", "")),
            zfs_series=got,
            zfs_module_version=module,
            # a build made before the field: its userland was the host's of the module's version (build.sh checked)
            zfs_userland_version=str(doc.get("zfs_userland_version") or module),
            # stage2.sh finds it beside the module tree (<root>/modules/lib/modules/<release>): always userland/
            userland="" if userland == HOST_USERLAND else os.path.join(root, "userland"),
        )
        need = [img.kernel, img.initrd, os.path.join(img.modules, "extra", "zfs.ko")]
        if img.userland:
            need.append(os.path.join(img.userland, "guest", "usr", "sbin", "zpool"))
        for path in need:
            if not os.path.lexists(path):
                raise UsageError(f"the lab image in {root} is incomplete ({path} missing): {hint}")
        return img

    @property
    def userland_source(self) -> str:
        """Where the guest's OpenZFS userland comes from, in words."""
        return f"the build's own ({self.userland})" if self.userland else "the host's zfsutils-linux"


def missing_reason(cache: str = "", zfs: str = "") -> str:
    """'' when a lab image is usable, else why not (for pytest skips and `lab check`)."""
    try:
        LabImage.load(cache, zfs)
    except UsageError as exc:
        return str(exc)
    return ""
