"""QEMU command lines for the lab guest (argv lists, never shell strings).

The lab boots ``qemu-system-x86_64`` under TCG (``-accel tcg -cpu max``: KVM is unusable where the
lab is meant to run) on a q35 machine with a direct kernel boot, the host's root filesystem as a
read-only virtio-9p share, a writable 9p share for the job, and emulated disks on their real
transports:

* ``sata``: ``ide-hd`` on q35's built-in AHCI controller (buses ``ide.0`` … ``ide.5``), with ATA
  ``model``/``serial`` and ``rotation_rate`` (1 = SSD, which the guest shows as ROTA=0);
* ``sas``: ``scsi-hd`` on a ``virtio-scsi-pci`` HBA with SCSI ``vendor``/``product``/``serial``;
* ``nvme``: one ``nvme`` controller per disk (QEMU 7.2 fixes the model to "QEMU NVMe Ctrl");
* ``pmem``: ``nvdimm`` devices backed by a ``memory-backend-file`` (``-machine nvdimm=on``).

Block disks are ``-blockdev driver=nbd`` nodes connected to nbdkit Unix sockets, optionally behind a
``throttle`` node of their own (QEMU's IOPS or bandwidth cap: a slot slower than its siblings) and behind
a ``throttle`` node of a group they share (``Machine.throttle_groups``: one ceiling for every disk behind
one HBA). SAS disks of a shared group sit on that group's own ``virtio-scsi-pci`` HBA, so the guest's
sysfs shows what they share.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from slogqual.errors import UsageError
from slogqual.tools import spawn as _run

QEMU = "qemu-system-x86_64"
AHCI_PORTS = 6  # q35's ICH9 AHCI: ide.0 .. ide.5


def version() -> _run.ToolVersion:
    """'QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)' -> (7, 2, 22)."""
    return _run.get_version(QEMU, ["--version"], r"QEMU emulator version (\d+)\.(\d+)(?:\.(\d+))?")


def check_version() -> _run.ToolVersion:
    """ToolMissingError/ToolTooOldError unless QEMU is there and new enough for :func:`machine_argv`."""
    return _run.check_version(QEMU, version)


@dataclass
class Share9p:
    tag: str
    path: str
    readonly: bool = False


@dataclass
class Disk:
    """One emulated disk: a transport, its identity, and where its blocks come from."""

    node: str  # unique id, e.g. "lab0"
    transport: str  # sata | sas | nvme | pmem
    serial: str
    model: str = ""
    vendor: str = ""
    product: str = ""
    rotation_rate: int = 0
    nbd_socket: Optional[str] = None  # block transports: nbdkit's Unix socket
    iops_limit: int = 0  # QEMU throttle group, 0 = none
    logical_block_size: int = 512
    physical_block_size: int = 4096
    pmem_path: Optional[str] = None  # pmem: backing file
    size: int = 0  # pmem: bytes
    bps_limit: int = 0  # bytes/s of this disk alone (its own throttle group), 0 = none
    shared_group: Optional[str] = None  # a Machine.throttle_groups name: the ceiling it shares with others


@dataclass
class Machine:
    kernel: str
    initrd: str
    append: str
    memory_mb: int = 1024
    cpus: int = 1
    shares: List[Share9p] = field(default_factory=list)
    disks: List[Disk] = field(default_factory=list)
    accel: str = "tcg"
    cpu: str = "max"
    console: str = "stdio"  # "stdio": the serial console on QEMU's stdin/stdout
    interactive: bool = False  # stdio in raw mode (Ctrl-C goes to the guest)
    bios: Optional[str] = None  # e.g. qboot.rom: a faster direct-kernel firmware than SeaBIOS
    #: shared ceilings: group name -> bytes/s, all its disks together (an HBA, a slot, an expander)
    throttle_groups: Dict[str, int] = field(default_factory=dict)


def _opt(value: str) -> str:
    """Quote a value for QEMU's comma-separated option syntax (',' is doubled)."""
    return str(value).replace(",", ",,")


def group_id(name: str) -> str:
    return f"path-{name}"


def scsi_bus(disk: Disk) -> str:
    """The virtio-scsi HBA a SAS disk sits on: its shared group's own, else the common one."""
    return f"{group_id(disk.shared_group)}-hba" if disk.shared_group else "scsi0"


def disk_argv(disk: Disk, ahci_port: int) -> List[str]:
    """The -object/-blockdev/-device arguments of one disk."""
    argv: List[str] = []
    if disk.transport == "pmem":
        if not disk.pmem_path or disk.size <= 0:
            raise UsageError(f"pmem disk {disk.node} needs a backing file and a size")
        argv += ["-object", f"memory-backend-file,id={disk.node}-mem,share=on,mem-path={_opt(disk.pmem_path)},size={disk.size}"]
        argv += ["-device", f"nvdimm,id={disk.node},memdev={disk.node}-mem"]
        return argv
    if not disk.nbd_socket:
        raise UsageError(f"disk {disk.node} has no nbd socket")
    # the chain: nbd -> its own throttle (IOPS, bandwidth) -> its shared group's throttle; the top node, which
    # the device takes, is named after the disk
    own = bool(disk.iops_limit or disk.bps_limit)
    layers = ["nbd"] + (["own"] if own else []) + (["shared"] if disk.shared_group else [])
    names = [disk.node if i == len(layers) - 1 else f"{disk.node}-{layer}" for i, layer in enumerate(layers)]
    argv += ["-blockdev", f"driver=nbd,node-name={names[0]},server.type=unix,server.path={_opt(disk.nbd_socket)},"
                          "cache.direct=on,cache.no-flush=off"]
    below = names[0]
    if own:
        limits = ([f"x-iops-total={disk.iops_limit}"] if disk.iops_limit else []) + \
                 ([f"x-bps-total={disk.bps_limit}"] if disk.bps_limit else [])
        argv += ["-object", f"throttle-group,id={disk.node}-tg," + ",".join(limits)]
        argv += ["-blockdev", f"driver=throttle,node-name={names[1]},throttle-group={disk.node}-tg,file={below}"]
        below = names[1]
    if disk.shared_group:
        argv += ["-blockdev", f"driver=throttle,node-name={names[-1]},throttle-group={group_id(disk.shared_group)},"
                              f"file={below}"]
    drive = names[-1]
    blk = f"logical_block_size={disk.logical_block_size},physical_block_size={disk.physical_block_size}"
    if disk.transport == "sata":
        dev = f"ide-hd,bus=ide.{ahci_port},drive={drive},id={disk.node}-dev,serial={_opt(disk.serial)},{blk}"
        if disk.model:
            dev += f",model={_opt(disk.model)}"
        if disk.rotation_rate:
            dev += f",rotation_rate={disk.rotation_rate}"
    elif disk.transport == "sas":
        dev = f"scsi-hd,bus={scsi_bus(disk)}.0,drive={drive},id={disk.node}-dev,serial={_opt(disk.serial)},{blk}"
        if disk.vendor:
            dev += f",vendor={_opt(disk.vendor)}"
        if disk.product:
            dev += f",product={_opt(disk.product)}"
        if disk.rotation_rate:
            dev += f",rotation_rate={disk.rotation_rate}"
    elif disk.transport == "nvme":
        dev = f"nvme,drive={drive},id={disk.node}-dev,serial={_opt(disk.serial)},{blk}"
    else:
        raise UsageError(f"unknown transport {disk.transport!r}")
    argv += ["-device", dev]
    return argv


def machine_argv(m: Machine) -> List[str]:
    pmem = [d for d in m.disks if d.transport == "pmem"]
    sata = [d for d in m.disks if d.transport == "sata"]
    if len(sata) > AHCI_PORTS:
        raise UsageError(f"at most {AHCI_PORTS} SATA disks (q35 has one {AHCI_PORTS}-port AHCI controller)")
    memory = f"{m.memory_mb}M"
    if pmem:
        extra = sum(d.size for d in pmem)
        maxmem_mb = m.memory_mb + (extra + (1 << 20) - 1) // (1 << 20) + 256
        memory = f"{m.memory_mb}M,slots={len(pmem) + 1},maxmem={maxmem_mb}M"
    machine = "q35,nvdimm=on" if pmem else "q35"
    argv = [
        QEMU, "-nodefaults", "-no-user-config", "-nographic",
        "-machine", machine, "-accel", m.accel, "-cpu", m.cpu, "-smp", str(m.cpus), "-m", memory,
        "-kernel", m.kernel, "-initrd", m.initrd, "-append", m.append,
        "-no-reboot",
        *(["-bios", m.bios] if m.bios else []),
        "-chardev", f"stdio,id=con,signal={'off' if m.interactive else 'on'}", "-serial", "chardev:con",
    ]
    for i, share in enumerate(m.shares):
        fs = f"local,id=fs{i},path={_opt(share.path)},security_model=none,multidevs=remap"
        if share.readonly:
            fs += ",readonly=on"
        argv += ["-fsdev", fs, "-device", f"virtio-9p-pci,fsdev=fs{i},mount_tag={share.tag}"]
    for name, bps in m.throttle_groups.items():
        if bps <= 0:
            raise UsageError(f"shared path {name}: its ceiling must be a positive number of bytes/s")
        argv += ["-object", f"throttle-group,id={group_id(name)},x-bps-total={bps}"]
    unknown = sorted({d.shared_group for d in m.disks if d.shared_group and d.shared_group not in m.throttle_groups})
    if unknown:
        raise UsageError(f"disks name shared path(s) {', '.join(unknown)} that the machine does not define")
    for bus in dict.fromkeys(scsi_bus(d) for d in m.disks if d.transport == "sas"):
        argv += ["-device", f"virtio-scsi-pci,id={bus}"]
    port = 0
    for disk in m.disks:
        argv += disk_argv(disk, port)
        if disk.transport == "sata":
            port += 1
    return argv


def start(argv: List[str], *, interactive: bool) -> _run.Background:
    """QEMU started from :func:`machine_argv`'s argv; SIGTERM when slogqual dies (QEMU ends its guest on it).

    ``interactive``: the terminal is the guest's console (stdin and stdout inherited, QEMU in slogqual's
    session). Otherwise the serial console and QEMU's own complaints come on one pipe (``stdout`` of the
    helper returned, read as they come), and QEMU gets a session of its own."""
    if interactive:
        return _run.Background(argv, stdin=None, stdout=None, stderr_to_stdout=True,
                               death_signal=signal.SIGTERM).start()
    return _run.Background(argv, stdout=_run.PIPE, stderr_to_stdout=True, new_session=True,
                           death_signal=signal.SIGTERM).start()
