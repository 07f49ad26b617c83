"""Throwaway pools: built from named devices with a slogqual- name, always destroyed.

A pool is created for one configuration and destroyed when the configuration's steps are done — on
success, on error, and on Ctrl-C/SIGTERM (which the CLI turns into KeyboardInterrupt). slogqual only
ever destroys a pool that this process created, and it refuses to create one whose name exists.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from slogqual import paths
from slogqual.errors import MeasurementError, SlogqualError, ToolError, ToolFailedError, UsageError
from slogqual.tools import lzc as _lzc
from slogqual.tools import udevadm as _udevadm
from slogqual.tools import zfs as _zfs
from slogqual.tools import zpool as _zpool

POOL_PREFIX = "slogqual-"
LAYOUTS = ("stripe", "mirror", "raidz1", "raidz2")
ZFS_APIS = ("auto", "cli", "lzc")  # how zvols and datasets are created: auto = libzfs_core if importable


def data_vdevs(layout: str, devices: List[str]) -> List[str]:
    """zpool's vdev grammar for the data devices."""
    if not devices:
        raise UsageError("a pool needs at least one --data device")
    if layout == "stripe":
        return list(devices)
    if layout == "mirror":
        if len(devices) < 2 or len(devices) % 2:
            raise UsageError(f"--layout mirror needs an even number of --data devices (2 or more), not {len(devices)}")
        out: List[str] = []
        for a, b in zip(devices[::2], devices[1::2]):
            out += ["mirror", a, b]
        return out
    if layout in ("raidz1", "raidz2"):
        need = 3 if layout == "raidz1" else 4
        if len(devices) < need:
            raise UsageError(f"--layout {layout} needs at least {need} --data devices, not {len(devices)}")
        return [layout, *devices]
    raise UsageError(f"unknown layout {layout!r}: use one of {', '.join(LAYOUTS)}")


def log_vdevs(mode: str, logs: List[str]) -> List[str]:
    if mode in ("none", "special"):  # special: the candidate is the special vdev (special_vdevs), no log vdev
        return []
    if not logs:
        raise UsageError("this configuration needs a SLOG: name one with --log")
    if mode == "single":
        return [logs[0]]
    if len(logs) < 2:
        raise UsageError(f"a {mode} SLOG configuration needs two --log devices")
    return ["mirror", logs[0], logs[1]] if mode == "mirror" else list(logs)


def special_vdevs(mode: str, logs: List[str]) -> List[str]:
    """zpool's vdev grammar for the special vdev of a ``log = "special"`` configuration: the first candidate
    (``["special", dev]``, after the data vdevs); [] for every other configuration."""
    if mode != "special":
        return []
    if not logs:
        raise UsageError("this configuration puts the log candidate on the special vdev: name one with --log")
    return ["special", logs[0]]


def physical_sector(device: str) -> Optional[int]:
    name = os.path.basename(os.path.realpath(device))
    try:
        with open(f"/sys/class/block/{name}/queue/physical_block_size") as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return None


def ashift_for(devices: List[str], identities: Optional[Dict[str, Dict]] = None) -> int:
    """ashift from the largest physical sector among the devices; 12 (4 KiB) when unknown or
    smaller, since a 512-byte ashift on a 4K-native device costs read-modify-write.

    identities: the devices' identity records (slogqual.device), whose physical_sector comes from
    sysfs on Linux and camcontrol/geom on FreeBSD; sysfs is read directly for a device without one.
    """
    def sector(d: str) -> Optional[int]:
        rec = (identities or {}).get(d) or {}
        return rec.get("physical_sector") or physical_sector(d)

    sectors = [s for s in (sector(d) for d in devices) if s]
    return max(12, *(int(math.log2(s)) for s in sectors)) if sectors else 12


safe_name = paths.safe_name  # pool and dataset names: one sanitiser for every name slogqual makes



# zpool's words when udev did not make a new partition's node within its wait (lib/libzutil's
# zpool_label_disk): seen in the lab guest on a CPU-slowed host, 2026-11-26
LABEL_RACE = "Error preparing/labeling disk"


def label_race(message: str) -> bool:
    return LABEL_RACE in message

@dataclass
class ThrowawayPool:
    name: str
    vdevs: List[str]
    logs: List[str] = field(default_factory=list)
    properties: Dict[str, str] = field(default_factory=dict)  # pool (-o)
    fs_properties: Dict[str, str] = field(default_factory=dict)  # root dataset (-O)
    created: bool = False
    mount_root: Optional[str] = None
    zfs_api: str = "auto"

    def __post_init__(self):
        if not self.name.startswith(POOL_PREFIX):
            raise UsageError(f"pool name {self.name!r} lacks the {POOL_PREFIX} prefix")
        if self.zfs_api not in ZFS_APIS:
            raise UsageError(f"unknown zfs api {self.zfs_api!r}: use one of {', '.join(ZFS_APIS)}")
        if self.zfs_api == "lzc" and not _lzc.available():
            raise UsageError("--zfs-api lzc: libzfs_core (python3-pyzfs) is not importable from this Python "
                             "(Debian packages it for /usr/bin/python3)")

    @property
    def uses_lzc(self) -> bool:
        return self.zfs_api == "lzc" or (self.zfs_api == "auto" and _lzc.available())

    @property
    def api_name(self) -> str:
        return "libzfs_core" if self.uses_lzc else "zfs command"

    def create(self) -> "ThrowawayPool":
        _zpool.check_version()  # missing or too old: exit 2 before anything is made
        _zfs.check_version()
        if self.name in _zpool.pools():
            raise UsageError(f"a pool named {self.name} already exists; slogqual will not touch it")
        self.mount_root = tempfile.mkdtemp(prefix=f"{self.name}-")
        argv = _zpool.create_argv(self.name, self.vdevs, self.logs, properties=self.properties,
                                  fs_properties=self.fs_properties, force=True, mountpoint=self.mount_root)
        try:
            self._zpool_create(argv)
        except BaseException:
            # An interrupt (or an error) can land after the kernel made the pool but before zpool
            # returned. The name was free a moment ago and carries our prefix, so a pool by that name
            # now is the one this call made: destroy it rather than leave it behind.
            try:
                self.created = self.name in _zpool.pools()
            except (MeasurementError, KeyboardInterrupt):
                self.created = True  # could not tell: destroy() tries, and says if it fails
            self.destroy()
            raise
        self.created = True
        return self

    def _zpool_create(self, argv: List[str]) -> None:
        """zpool create, once more when it lost the race with udev: zpool partitions each whole disk and waits
        a fixed time (libzutil's DISK_LABEL_WAIT) for udev to make the partition's node; a slow host's udev
        can miss it (the lab guest on a CPU-slowed host: "Error preparing/labeling disk."). Once udev has
        settled the same create succeeds (-f relabels the disk); anything else fails at once."""
        try:
            _zpool.zpool(argv)
        except ToolFailedError as exc:
            if not label_race(str(exc)) or self.name in _zpool.pools():
                raise
            try:
                _udevadm.settle(60)
            except ToolError:
                pass  # no udevadm: the second attempt says what is wrong, if anything still is
            _zpool.zpool(argv)

    def zvol(self, name: str, size: int, volblocksize: Optional[int]) -> str:
        full = f"{self.name}/{name}"
        if self.uses_lzc:
            _lzc.create_zvol(full, size, volblocksize)
        else:
            _zfs.create(full, volsize=size, properties={"volblocksize": str(volblocksize)} if volblocksize else {})
        return full

    def dataset(self, name: str, recordsize: Optional[int]) -> str:
        full = f"{self.name}/{name}"
        if self.uses_lzc:
            _lzc.create_filesystem(full, {"recordsize": int(recordsize)} if recordsize else {})
            _zfs.mount(full)  # lzc_create does not mount; the zfs command does
        else:
            _zfs.create(full, properties={"recordsize": str(recordsize)} if recordsize else {})
        return full

    def mountpoint(self, dataset: str) -> str:
        return _zfs.get(dataset, ["mountpoint"])["mountpoint"]

    def destroy(self) -> None:
        """Destroy the pool if this object made it, then remove its mount directory."""
        last, interrupted = None, False
        if self.created:
            # fio's last close of a zvol it wrote makes udev probe it (inotify's close-after-write): let that
            # probe end first. OpenZFS 2.3 fails a destroy that meets it (retried below); 2.4 waits for the
            # zvol's last close instead (its minors are removed once their users are gone, openzfs/zfs#16364),
            # and a cold CI run's 2.4 guest went idle for good between two configurations' pools (2026-11-29)
            try:
                _udevadm.settle(10)
            except SlogqualError:
                pass  # a udevadm that hangs or fails: destroy as before
            except KeyboardInterrupt:
                interrupted = True
        # a zvol opened by udev for a moment makes destroy fail: retry
        for attempt in range(5 if self.created else 0):
            try:
                _zpool.destroy(self.name, force=True)
                self.created = False
                break
            except MeasurementError as exc:
                last = exc
            except KeyboardInterrupt:
                # Ctrl-C during the teardown itself kills `zpool destroy` midway: finish the teardown
                # first, then let the interrupt go on.
                interrupted, last = True, "interrupted"
            try:
                if self.name not in _zpool.pools():
                    self.created = False
                    break
                time.sleep(1 + attempt)
            except MeasurementError as exc:
                last = exc
            except KeyboardInterrupt:
                interrupted = True
        if self.created:
            print(f"slogqual: could not destroy pool {self.name}: {last}", file=sys.stderr)
        if self.mount_root and os.path.isdir(self.mount_root) and not self.created:
            shutil.rmtree(self.mount_root, ignore_errors=True)
        if interrupted:
            raise KeyboardInterrupt

    def __enter__(self) -> "ThrowawayPool":
        return self.create()

    def __exit__(self, *exc) -> None:
        self.destroy()


def wait_for_device(path: str, timeout: float = 60.0) -> str:
    """Wait for a zvol's device node (udev makes it on Linux, devfs at once on FreeBSD)."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        _udevadm.settle(5)
        if os.path.exists(path):
            break
        if time.monotonic() > deadline:
            raise MeasurementError(f"{path} did not appear" + (" (is udev running?)" if not _udevadm.available()
                                                                and sys.platform.startswith("linux") else ""))
        time.sleep(0.2)
    return path
