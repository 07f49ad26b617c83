"""Emulated device classes of the lab, declared in a TOML file a user can extend.

A class says which transport the guest sees (``sata`` = ide-hd on q35's AHCI, ``sas`` = scsi-hd on
virtio-scsi with SCSI vendor/product, ``nvme`` = QEMU's NVMe controller, ``pmem`` = a QEMU NVDIMM,
``/dev/pmemN`` in the guest), what identity it reports (model or vendor/product, serial prefix,
rotation rate) and how slow it is: ``write_delay_ms`` is nbdkit's delay filter (added to every write
request; nbdkit 1.32 cannot delay flushes), ``bandwidth`` its rate filter, ``iops_limit`` QEMU's
throttling (a rate cap, not a latency). Block classes are RAM disks served by nbdkit's memory plugin,
so nothing is left on the host's disk.

A class with a ``cache`` key has a power that can be cut (``slogqual lab powercut``): its medium is a
file on the host's RAM filesystem (nbdkit's file plugin, which outlives the nbdkit process) behind
nbdkit's cache filter: ``cache = "unsafe"`` is a volatile cache that ignores flushes (a lying device),
``"writeback"`` a volatile cache that honours them, ``"none"`` no cache filter at all (every write is
on the medium when it is acknowledged: the power-loss-protected device). Killing its nbdkit is the cut:
what the cache filter held is gone, what reached the file stays.

File format (see scenarios/lab-devices.toml)::

    [class.hdd]
    description = "7200 rpm SATA disk"
    transport = "sata"
    model = "SLOGQUAL LAB HDD 7200"
    serial_prefix = "SQLHDD"
    size = "2G"
    rotation_rate = 7200
    write_delay_ms = 8.0
    bandwidth = "150M"          # bytes per second

A class whose shape must hold on any host states its cap relative to the guest instead:
``bandwidth_share = 0.3`` caps the device at 30 % of the 128 KiB QD1 write+flush rate that the same
device reached *uncapped, in this guest, at boot* (slogqual.lab.calibrate: measured with fio before the
job starts, then written to nbdkit's rate file). A guest under TCG carries what its host lets it: a cap
in absolute MiB/s that one host's guest saturates at once, a slower host's guest never reaches (issue
#26). The measurement and the cap it gave are in the run's ``lab-calibration.json``.

A file given with ``--devices-file`` is read after the built-in one; a class of the same name
replaces the built-in class.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

try:  # Python 3.11+
    import tomllib as _toml
except ModuleNotFoundError:  # pragma: no cover - Python < 3.11
    import tomli as _toml  # type: ignore[no-redef]

from slogqual.data import data_path
from slogqual.errors import UsageError
from slogqual.paths import require_regular
from slogqual.units import MiB, parse_size

TRANSPORTS = ("sata", "sas", "nvme", "pmem")
_KEYS = {
    "description", "transport", "model", "vendor", "product", "serial_prefix", "size", "rotation_rate",
    "write_delay_ms", "read_delay_ms", "bandwidth", "iops_limit", "logical_block_size",
    "physical_block_size", "expect_write_ms", "cache", "bandwidth_share",
}
#: ``cache`` values: the nbdkit cache filter's mode, or "none" for no cache filter
CACHES = ("unsafe", "writeback", "none")

#: The file shipped with slogqual (the repository's scenarios/lab-devices.toml; slogqual.data finds it).
DEFAULT_FILE = data_path("lab-devices.toml")


@dataclass(frozen=True)
class DeviceClass:
    name: str
    transport: str
    description: str = ""
    model: str = ""  # ATA model (sata); NVMe model is fixed by QEMU 7.2 ("QEMU NVMe Ctrl")
    vendor: str = ""  # SCSI vendor (sas), at most 8 characters
    product: str = ""  # SCSI product (sas), at most 16 characters
    serial_prefix: str = "SQLAB"
    size: int = 1024 * MiB
    rotation_rate: int = 0  # 1 = non-rotating (SSD), 7200 = a 7200 rpm disk, 0 = not reported
    write_delay_ms: float = 0.0
    read_delay_ms: float = 0.0
    bandwidth: int = 0  # bytes/s, 0 = unlimited
    bandwidth_share: float = 0.0  # 0 < share < 1: the cap as a share of the rate measured in the guest at boot
    iops_limit: int = 0
    logical_block_size: int = 512
    physical_block_size: int = 4096
    expect_write_ms: Optional[float] = None  # what a QD1 4 KiB sync write should take, if stated
    cache: Optional[str] = None  # unsafe | writeback | none: a file-backed medium whose power can be cut

    def serial(self, index: int) -> str:
        return f"{self.serial_prefix}{index:04d}"

    @property
    def nbd(self) -> bool:
        """Served by nbdkit (every block transport); pmem is a QEMU memory backend."""
        return self.transport != "pmem"

    @property
    def calibrated(self) -> bool:
        """Its cap is set in the guest at boot, relative to what it measured there (bandwidth_share)."""
        return self.bandwidth_share > 0

    @property
    def power_cut(self) -> bool:
        """Its power can be cut: a file-backed medium (``cache`` set) that survives its nbdkit."""
        return self.cache is not None


def _num(cls: str, key: str, value, kind=float):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"lab device class {cls}: {key} must be a number, not {value!r}")
    if value < 0:
        raise UsageError(f"lab device class {cls}: {key} must not be negative")
    return kind(value)


def _size(cls: str, key: str, value) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        return parse_size(value)
    raise UsageError(f"lab device class {cls}: {key} must be a size such as \"2G\"")


def parse_class(name: str, table: Dict) -> DeviceClass:
    unknown = set(table) - _KEYS
    if unknown:
        raise UsageError(f"lab device class {name}: unknown key(s) {', '.join(sorted(unknown))}")
    transport = table.get("transport")
    if transport not in TRANSPORTS:
        raise UsageError(f"lab device class {name}: transport must be one of {', '.join(TRANSPORTS)}, not {transport!r}")
    kw = {"name": name, "transport": transport}
    for key in ("description", "model", "vendor", "product", "serial_prefix"):
        if key in table:
            if not isinstance(table[key], str):
                raise UsageError(f"lab device class {name}: {key} must be a string")
            kw[key] = table[key]
    if "cache" in table:
        if table["cache"] not in CACHES:
            raise UsageError(f"lab device class {name}: cache must be one of {', '.join(CACHES)}, not {table['cache']!r}")
        kw["cache"] = table["cache"]
    if "size" in table:
        kw["size"] = _size(name, "size", table["size"])
    if "bandwidth" in table:
        kw["bandwidth"] = _size(name, "bandwidth", table["bandwidth"])
    for key in ("write_delay_ms", "read_delay_ms", "expect_write_ms", "bandwidth_share"):
        if key in table:
            kw[key] = _num(name, key, table[key])
    for key in ("rotation_rate", "iops_limit", "logical_block_size", "physical_block_size"):
        if key in table:
            kw[key] = _num(name, key, table[key], int)
    cls = DeviceClass(**kw)
    if cls.size < 64 * MiB:
        raise UsageError(f"lab device class {name}: size must be at least 64M (ZFS's smallest vdev)")
    if len(cls.serial_prefix) > 16 or not cls.serial_prefix.isalnum():
        raise UsageError(f"lab device class {name}: serial_prefix must be 1-16 letters/digits")
    if transport == "sas" and (len(cls.vendor) > 8 or len(cls.product) > 16):
        raise UsageError(f"lab device class {name}: SCSI vendor is at most 8 and product at most 16 characters")
    if transport == "sata" and len(cls.model) > 40:
        raise UsageError(f"lab device class {name}: an ATA model is at most 40 characters")
    for key in ("write_delay_ms", "read_delay_ms"):
        v = getattr(cls, key)
        if v != int(v):
            # nbdkit 1.32's delay filter takes whole milliseconds ("0.8ms" silently means no delay).
            raise UsageError(f"lab device class {name}: {key} must be a whole number of milliseconds, not {v:g}")
    if "bandwidth_share" in table and not 0 < cls.bandwidth_share < 1:
        raise UsageError(f"lab device class {name}: bandwidth_share must be above 0 and below 1, not {cls.bandwidth_share:g}")
    if cls.bandwidth and cls.bandwidth_share:
        raise UsageError(f"lab device class {name}: give bandwidth (absolute) or bandwidth_share (of the guest's "
                         "measured rate), not both")
    if cls.calibrated and cls.cache is not None:
        raise UsageError(f"lab device class {name}: a power-cut class cannot be calibrated (its medium is what is "
                         "verified afterwards; a calibration would write over it)")
    if transport == "pmem" and (cls.write_delay_ms or cls.read_delay_ms or cls.bandwidth or cls.iops_limit
                                or cls.bandwidth_share):
        raise UsageError(f"lab device class {name}: a pmem class cannot be slowed down (it is guest memory)")
    if transport == "pmem" and cls.cache is not None:
        raise UsageError(f"lab device class {name}: a pmem class has no nbdkit and no cache to cut the power of")
    for key in ("logical_block_size", "physical_block_size"):
        v = getattr(cls, key)
        if v < 512 or v & (v - 1):
            raise UsageError(f"lab device class {name}: {key} must be a power of two ≥ 512")
    return cls


def parse_text(text: str, source: str = "<string>") -> Dict[str, DeviceClass]:
    try:
        doc = _toml.loads(text)
    except _toml.TOMLDecodeError as exc:
        raise UsageError(f"{source}: {exc}") from None
    classes = doc.get("class")
    if not isinstance(classes, dict) or not classes:
        raise UsageError(f"{source}: no [class.NAME] tables")
    out = {}
    for name, table in classes.items():
        if not isinstance(table, dict):
            raise UsageError(f"{source}: class.{name} must be a table")
        out[name] = parse_class(name, table)
    return out


def load(paths: Optional[List[str]] = None) -> Dict[str, DeviceClass]:
    """The built-in classes, then each file of ``paths`` on top (same name replaces)."""
    files = [DEFAULT_FILE] if os.path.exists(DEFAULT_FILE) else []
    files += list(paths or [])
    if not files:
        raise UsageError(f"no lab device classes: {DEFAULT_FILE} is missing")
    classes: Dict[str, DeviceClass] = {}
    for path in files:
        require_regular(path, "device classes file")
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror}") from None
        classes.update(parse_text(text, path))
    return classes


@dataclass
class DeviceInstance:
    """One emulated device of a run: its class, its place in --device order, its identity, and the shared
    path it sits behind (a QEMU throttle group: an HBA's ceiling) with its own cap, if any (a slower slot)."""

    cls: DeviceClass
    index: int  # position among the run's devices (0-based)
    serial: str = ""
    node: str = field(default="")  # QEMU node/device id
    path: str = ""  # the shared path's name ('' = none)
    cap: int = 0  # bytes/s of this device alone (0 = its class's own figures)

    def __post_init__(self):
        if not self.serial:
            self.serial = self.cls.serial(self.index)
        if not self.node:
            self.node = f"lab{self.index}"

    def to_dict(self) -> Dict:
        return {"index": self.index, "class": self.cls.name, "transport": self.cls.transport, "serial": self.serial,
                "shared_path": self.path or None, "own_cap_bytes_s": self.cap or None}


PATH_NAME = re.compile(r"^[a-z][a-z0-9]{0,15}$")


def parse_spec(spec: str):
    """'CLASS', 'CLASS:RATE', 'CLASS@PATH' or 'CLASS@PATH:RATE' (RATE bytes/s as a size, 8m) -> (class, path,
    cap). A cap without a path is a slot of the device's own (the common HBA, its own ceiling)."""
    if "@" in spec:
        name, _, rest = spec.partition("@")
        path, _, rate = rest.partition(":")
    else:
        (name, _, rate), path = spec.partition(":"), ""
    cap = 0
    if rate:
        try:
            cap = parse_size(rate)
        except (UsageError, ValueError):
            raise UsageError(f"lab device {spec!r}: {rate!r} is not a rate in bytes/s such as 8m") from None
        if cap <= 0:
            raise UsageError(f"lab device {spec!r}: its own cap must be above 0")
    if "@" in spec and not PATH_NAME.match(path):
        raise UsageError(f"lab device {spec!r}: a shared path is named by 1-16 lower-case letters and digits")
    return name, path, cap


def parse_paths(specs: List[str]) -> Dict[str, int]:
    """'--path NAME=RATE' options -> {name: bytes/s}."""
    out: Dict[str, int] = {}
    for spec in specs:
        name, eq, rate = spec.partition("=")
        if not eq or not PATH_NAME.match(name):
            raise UsageError(f"--path {spec!r}: give NAME=RATE, e.g. hba0=40m (NAME 1-16 lower-case letters and digits)")
        if name in out:
            raise UsageError(f"--path {name}: named twice")
        try:
            out[name] = parse_size(rate)
        except (UsageError, ValueError):
            raise UsageError(f"--path {spec!r}: {rate!r} is not a rate in bytes/s such as 40m") from None
        if out[name] <= 0:
            raise UsageError(f"--path {spec!r}: the ceiling must be above 0")
    return out


def instances(names: List[str], classes: Dict[str, DeviceClass],
              paths: Optional[Dict[str, int]] = None) -> List[DeviceInstance]:
    """The run's devices from --device specs; a shared path must be one of ``paths`` (--path), and only
    block devices can sit behind one (an NVDIMM is guest memory, a power-cut medium keeps its own timing)."""
    out = []
    for i, spec in enumerate(names):
        name, path, cap = parse_spec(spec)
        if name not in classes:
            raise UsageError(f"unknown lab device class {name!r} (known: {', '.join(sorted(classes))})")
        cls = classes[name]
        if path and path not in (paths or {}):
            raise UsageError(f"lab device {spec!r}: no shared path {path!r} (define it with --path {path}=RATE)")
        if (path or cap) and (cls.transport == "pmem" or cls.power_cut):
            raise UsageError(f"lab device {spec!r}: a {cls.transport if cls.transport == 'pmem' else 'power-cut'} "
                             "device cannot sit behind a shared path or a cap of its own")
        out.append(DeviceInstance(cls, i, path=path, cap=cap))
    return out
