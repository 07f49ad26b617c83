"""sysfs (Linux): what the kernel knows about a block device, read from files.

No program is started here; what is read is the kernel's sysfs tree. Every reader
takes the sysfs root as a parameter so the same code runs against trees
recorded into tests/fixtures/sysfs/ from a real machine.

A block device is found through ``/sys/dev/block/MAJ:MIN``, a symlink into
``/sys/devices/...``; the real path of that directory tells which bus the disk
hangs off (pci, ata, scsi host, nvme, virtio, virtual) and lets us walk up to
the PCI function whose ``current_link_speed`` / ``max_link_speed`` describe the
PCIe link.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

SYS = "/sys"

PCI_ADDR_RE = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def read(path: str) -> Optional[str]:
    """A sysfs attribute, stripped; None when absent or unreadable."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(65536)
    except OSError:
        return None
    return data.decode("utf-8", "replace").strip()


def read_int(path: str) -> Optional[int]:
    text = read(path)
    if text is None:
        return None
    try:
        return int(text, 0)
    except ValueError:
        return None


def _listdir(path: str) -> List[str]:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


@dataclass
class PciLink:
    """A PCI function and its PCIe link as sysfs reports it (raw strings kept)."""

    address: str
    current_speed: Optional[str] = None  # e.g. "8.0 GT/s PCIe", or "Unknown"
    max_speed: Optional[str] = None
    current_width: Optional[int] = None
    max_width: Optional[int] = None
    vendor: Optional[str] = None  # "0x144d"
    device: Optional[str] = None


@dataclass
class BlockInfo:
    """One block device as sysfs describes it. Sizes in bytes."""

    name: str
    devnum: str  # "MAJ:MIN"
    syspath: str  # real path of the device directory
    size: Optional[int] = None
    logical_block_size: Optional[int] = None
    physical_block_size: Optional[int] = None
    rotational: Optional[bool] = None
    write_cache: Optional[str] = None  # queue/write_cache: "write back" | "write through"
    fua: Optional[bool] = None
    dax: Optional[bool] = None
    read_only: Optional[bool] = None
    removable: Optional[bool] = None
    is_partition: bool = False
    parent: Optional[str] = None  # whole-disk name for a partition
    partitions: List[str] = field(default_factory=list)
    holders: List[str] = field(default_factory=list)
    slaves: List[str] = field(default_factory=list)
    model: Optional[str] = None
    vendor: Optional[str] = None
    revision: Optional[str] = None  # device/rev or nvme firmware_rev
    serial: Optional[str] = None
    wwid: Optional[str] = None
    driver: Optional[str] = None  # driver of the device dir (virtio_blk, sd, nvme ...)
    scsi_cache_type: Optional[str] = None  # scsi_disk/*/cache_type
    nvme_ctrl: Optional[str] = None  # "nvme0"
    nvme_transport: Optional[str] = None  # pcie | tcp | rdma | fc | loop
    loop_backing_file: Optional[str] = None
    bus_path: List[str] = field(default_factory=list)  # components of syspath under /sys/devices
    pci: Optional[PciLink] = None  # nearest PCI function above the device

    @property
    def is_virtual(self) -> bool:
        return "virtual" in self.bus_path


def devnum_of(path: str) -> Optional[str]:
    """'MAJ:MIN' of a block device node, None if path is not one."""
    import stat as _stat

    try:
        st = os.stat(path)
    except OSError:
        return None
    if not _stat.S_ISBLK(st.st_mode):
        return None
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


def block_dir(devnum: str, root: str = SYS) -> Optional[str]:
    link = os.path.join(root, "dev", "block", devnum)
    if not os.path.exists(link):
        return None
    return os.path.realpath(link)


def dir_of_name(name: str, root: str = SYS) -> Optional[str]:
    link = os.path.join(root, "class", "block", name)
    if not os.path.exists(link):
        return None
    return os.path.realpath(link)


def _pci_link(directory: str, root: str) -> Optional[PciLink]:
    """Walk up from directory to the nearest PCI function (dir named like 0000:01:00.0)."""
    devices = os.path.realpath(os.path.join(root, "devices"))
    cur = directory
    while cur.startswith(devices) and cur != devices:
        base = os.path.basename(cur)
        if PCI_ADDR_RE.match(base):
            return PciLink(
                address=base,
                current_speed=read(os.path.join(cur, "current_link_speed")),
                max_speed=read(os.path.join(cur, "max_link_speed")),
                current_width=read_int(os.path.join(cur, "current_link_width")),
                max_width=read_int(os.path.join(cur, "max_link_width")),
                vendor=read(os.path.join(cur, "vendor")),
                device=read(os.path.join(cur, "device")),
            )
        cur = os.path.dirname(cur)
    return None


def block_info(devnum: str, root: str = SYS) -> Optional[BlockInfo]:
    """Everything sysfs says about the block device MAJ:MIN, or None if sysfs has no such device."""
    d = block_dir(devnum, root)
    if d is None:
        return None
    name = os.path.basename(d)
    is_part = os.path.exists(os.path.join(d, "partition"))
    info = BlockInfo(name=name, devnum=devnum, syspath=d, is_partition=is_part)
    devices = os.path.realpath(os.path.join(root, "devices"))
    rel = os.path.relpath(d, devices) if d.startswith(devices) else d
    info.bus_path = rel.split(os.sep)
    disk = os.path.dirname(d) if is_part else d  # partitions live inside their disk's directory
    if is_part:
        info.parent = os.path.basename(disk)
    sectors = read_int(os.path.join(d, "size"))
    info.size = sectors * 512 if sectors is not None else None  # always 512-byte units
    q = os.path.join(disk, "queue")
    info.logical_block_size = read_int(os.path.join(q, "logical_block_size"))
    info.physical_block_size = read_int(os.path.join(q, "physical_block_size"))
    rot = read_int(os.path.join(q, "rotational"))
    info.rotational = None if rot is None else bool(rot)
    info.write_cache = read(os.path.join(q, "write_cache"))
    fua = read_int(os.path.join(q, "fua"))
    info.fua = None if fua is None else bool(fua)
    dax = read_int(os.path.join(q, "dax"))
    info.dax = None if dax is None else bool(dax)
    ro = read_int(os.path.join(d, "ro"))
    info.read_only = None if ro is None else bool(ro)
    rm = read_int(os.path.join(disk, "removable"))
    info.removable = None if rm is None else bool(rm)
    info.holders = _listdir(os.path.join(d, "holders"))
    info.slaves = _listdir(os.path.join(d, "slaves"))
    if not is_part:
        info.partitions = [e for e in _listdir(d) if os.path.exists(os.path.join(d, e, "partition"))]
    backing = read(os.path.join(disk, "loop", "backing_file"))
    info.loop_backing_file = backing or None
    dev = os.path.join(disk, "device")
    ctrl_dir = None
    if os.path.isdir(dev):
        info.model = read(os.path.join(dev, "model")) or None
        info.vendor = read(os.path.join(dev, "vendor")) or None
        info.revision = (read(os.path.join(dev, "rev")) or read(os.path.join(dev, "firmware_rev"))) or None
        info.serial = (read(os.path.join(dev, "serial")) or read(os.path.join(disk, "serial"))) or None
        info.wwid = (read(os.path.join(dev, "wwid")) or read(os.path.join(disk, "wwid"))) or None
        drv = os.path.join(dev, "driver")
        if os.path.islink(drv):
            info.driver = os.path.basename(os.readlink(drv))
        for entry in _listdir(os.path.join(dev, "scsi_disk")):
            info.scsi_cache_type = read(os.path.join(dev, "scsi_disk", entry, "cache_type"))
            break
        # NVMe: the namespace's device is the controller (class nvme) or, with native
        # multipath, a subsystem; the controller carries model/serial/firmware/transport.
        ctrl = _nvme_controller(disk, dev)
        if ctrl:
            ctrl_dir = ctrl
            info.nvme_ctrl = os.path.basename(ctrl)
            info.model = read(os.path.join(ctrl, "model")) or info.model
            info.serial = read(os.path.join(ctrl, "serial")) or info.serial
            info.revision = read(os.path.join(ctrl, "firmware_rev")) or info.revision
            info.nvme_transport = read(os.path.join(ctrl, "transport")) or None
    else:
        info.serial = read(os.path.join(disk, "serial")) or None
    if info.vendor and info.vendor.startswith("0x"):
        info.vendor = None  # a PCI vendor id (virtio), not a name
    # the PCI function: above the NVMe controller (with native multipath the namespace's device is a
    # virtual nvme-subsystem, its controllers sit under PCI), else above the device directory
    if ctrl_dir:
        info.pci = _pci_link(ctrl_dir, root)
    else:
        info.pci = _pci_link(os.path.realpath(dev) if os.path.isdir(dev) else d, root)
    return info


def _nvme_controller(disk: str, dev: str) -> Optional[str]:
    real = os.path.realpath(dev)
    if os.path.exists(os.path.join(real, "firmware_rev")) and os.path.exists(os.path.join(real, "transport")):
        return real
    # native multipath: block/nvme0n1/device -> nvme-subsysN; pick its first controller
    for entry in _listdir(real):
        cand = os.path.join(real, entry)
        if re.match(r"^nvme\d+$", entry) and os.path.exists(os.path.join(cand, "transport")):
            return os.path.realpath(cand)
    return None


def ata_link(info: BlockInfo) -> Optional[Dict[str, Optional[str]]]:
    """The libata link of a SATA disk: {'port': 'ata3', 'sata_spd': '6.0 Gbps', 'hw_sata_spd_limit': ...}.

    Found next to the disk's port directory (.../ataN/linkN/ata_link/linkN/); None when the disk
    does not hang off libata. sata_spd is '<unknown>' while no link is up.
    """
    parts = info.syspath.split(os.sep)
    for i, comp in enumerate(parts):
        m = re.fullmatch(r"ata(\d+)", comp)
        if not m:
            continue
        port_dir = os.sep.join(parts[:i + 1])
        link_dir = os.path.join(port_dir, f"link{m.group(1)}", "ata_link", f"link{m.group(1)}")
        if not os.path.isdir(link_dir):
            return None
        return {"port": comp,
                "sata_spd": read(os.path.join(link_dir, "sata_spd")),
                "hw_sata_spd_limit": read(os.path.join(link_dir, "hw_sata_spd_limit")),
                "sata_spd_limit": read(os.path.join(link_dir, "sata_spd_limit"))}
    return None


def block_devices(root: str = SYS) -> List[str]:
    """Names of all block devices (whole disks and partitions) in /sys/class/block."""
    return _listdir(os.path.join(root, "class", "block"))


def pmem_namespaces(root: str = SYS) -> List[Dict[str, Optional[str]]]:
    """NVDIMM namespaces from /sys/bus/nd/devices (mode, size, block device if any)."""
    out = []
    base = os.path.join(root, "bus", "nd", "devices")
    for name in _listdir(base):
        if not name.startswith("namespace"):
            continue
        d = os.path.join(base, name)
        blocks = _listdir(os.path.join(d, "block"))
        out.append({
            "namespace": name,
            "mode": read(os.path.join(d, "mode")),
            "size": read(os.path.join(d, "size")),
            "block": blocks[0] if blocks else None,
        })
    return out


def module_loaded(name: str, root: str = SYS) -> bool:
    return os.path.isdir(os.path.join(root, "module", name))
