"""The path from the host to a block device, read from sysfs (Linux): every element a unit's IO crosses
and the link each one negotiated (issue #30: "the path, named").

The real path of ``/sys/class/block/NAME`` names the chain: ``pci0000:00`` (a PCI host bridge), PCI
functions (root ports, switch ports, the HBA or NVMe controller), ``hostN`` (a SCSI host), SAS ports
(``port-H:N``, a wide port when it holds several phys), expanders (``expander-H:N``), the end device's
port and the SAS end device, ``ataN`` (a libata port), ``nvmeN`` (an NVMe controller), ``virtioN``.
Targets and LUNs are left out: they are the unit itself, never shared.

The links, as the kernel negotiated them:

- a PCI function: ``current_link_speed`` / ``current_link_width`` (and the ``max_`` pair). On an
  endpoint or a switch's upstream port that is the link above it; on a root port or a downstream port,
  the link below it (the same link seen from its other end).
- a SAS port: each member phy's ``sas_phy/<phy>/negotiated_linkrate`` (``6.0 Gbit``); the port's
  lanes are its phys (sysfs links ``port-H:N/phy-…`` to them).
- a libata port: ``ataN/linkN/ata_link/linkN/sata_spd``.

Nothing is started and nothing is written; every reader takes the sysfs root, so the same code runs
on trees recorded in tests/fixtures/sysfs/. The ceiling of a link is analysis/shelf.py's.

sysfs names a PCI function by its address alone; :func:`name_pci` gives each the name ``lspci -tv``
knows it by (an endpoint's vendor and device; a root or switch port, which lspci leaves unnamed, by
what is behind it), and :func:`unit_path` does so from this host's lspci when it reads this host's
/sys. On FreeBSD (or given a FreeBSD host) :func:`unit_path` and :func:`recorded` read the path from
camcontrol, devinfo and pciconf instead (device/freebsd_topology.py), as device.identify picks its
platform's identification.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

from slogqual.results.shelf import (ATA_PORT, NVME_CONTROLLER, PCI_BRIDGE, PCI_FUNCTION, PCI_HOST, SAS_END_DEVICE,
                                    SAS_EXPANDER, SAS_PORT, SCSI_HOST, SOURCE_SYSFS, VIRTIO, Element, Link, UnitPath)
from slogqual.errors import ToolError
from slogqual.kernel import sysfs
from slogqual.tools import lspci

_PATTERNS = [
    (PCI_HOST, re.compile(r"^pci[0-9a-f]{4}:[0-9a-f]{2}$")),
    (PCI_FUNCTION, sysfs.PCI_ADDR_RE),
    (SCSI_HOST, re.compile(r"^host\d+$")),
    (SAS_PORT, re.compile(r"^port-\d+:\d+(?::\d+)?$")),
    (SAS_EXPANDER, re.compile(r"^expander-\d+:\d+$")),
    (SAS_END_DEVICE, re.compile(r"^end_device-\d+:\d+(?::\d+)?$")),
    (ATA_PORT, re.compile(r"^ata\d+$")),
    (NVME_CONTROLLER, re.compile(r"^nvme\d+$")),
    (VIRTIO, re.compile(r"^virtio\d+$")),
]
_PHY_RE = re.compile(r"^phy-\d+:\d+(?::\d+)?$")
PCI_BRIDGE_CLASS = "0x0604"  # PCI class 06 (bridge), subclass 04 (PCI-to-PCI): root ports, switch ports


def _parse_rate(text: Optional[str]) -> Optional[float]:
    """'8.0 GT/s PCIe', '5 GT/s', '6.0 Gbit', '6.0 Gbps', '12.0 Gbit' -> the number; 'Unknown',
    'Phy disabled', '<unknown>' -> None."""
    if not text:
        return None
    m = re.match(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(?:GT/s|Gbit|Gbps|Gb/s)", text)
    return float(m.group(1)) if m else None


def _lanes(value: Optional[int]) -> Optional[int]:
    # width 0 (no link trained) and 255 (invalid: emulated functions) are unknown
    return value if value and 0 < value <= 32 else None


def _pci_element(directory: str, key: str, name: str) -> Element:
    cls = sysfs.read(os.path.join(directory, "class"))
    kind = PCI_BRIDGE if cls and cls.lower().startswith(PCI_BRIDGE_CLASS) else PCI_FUNCTION
    cur, mx = (sysfs.read(os.path.join(directory, f)) for f in ("current_link_speed", "max_link_speed"))
    cw, mw = (sysfs.read_int(os.path.join(directory, f)) for f in ("current_link_width", "max_link_width"))
    link = None
    if cur is not None or cw is not None:
        link = Link("pcie", _parse_rate(cur), _lanes(cw), _parse_rate(mx), _lanes(mw),
                    evidence=f"sysfs {name}: current_link_speed={cur!r} current_link_width={cw} "
                             f"max_link_speed={mx!r} max_link_width={mw}")
    return Element(kind, name, key, link, pci_class=cls, vendor=sysfs.read(os.path.join(directory, "vendor")),
                   device=sysfs.read(os.path.join(directory, "device")))


def _phy_rate(port_dir: str, phy: str) -> Dict[str, Optional[str]]:
    phy_dir = os.path.realpath(os.path.join(port_dir, phy))
    attrs = os.path.join(phy_dir, "sas_phy", phy)
    return {"negotiated": sysfs.read(os.path.join(attrs, "negotiated_linkrate")),
            "max": sysfs.read(os.path.join(attrs, "maximum_linkrate_hw"))}


def _sas_port_element(directory: str, key: str, name: str) -> Element:
    phys = [e for e in sorted(os.listdir(directory)) if _PHY_RE.match(e)] if os.path.isdir(directory) else []
    rates = {phy: _phy_rate(directory, phy) for phy in phys}
    negotiated = [_parse_rate(r["negotiated"]) for r in rates.values()]
    up = [r for r in negotiated if r]
    maxes = [m for m in (_parse_rate(r["max"]) for r in rates.values()) if m]
    link = None
    if phys:
        link = Link("sas", min(up) if up else None, len(up) or None, max(maxes) if maxes else None, len(phys),
                    rates=negotiated,
                    evidence=f"sysfs {name}: " + ", ".join(f"{phy} negotiated_linkrate={r['negotiated']!r}"
                                                           for phy, r in rates.items()))
    return Element(SAS_PORT, name, key, link)


def _ata_element(directory: str, key: str, name: str) -> Element:
    n = name[3:]
    link_dir = os.path.join(directory, f"link{n}", "ata_link", f"link{n}")
    spd, hw = sysfs.read(os.path.join(link_dir, "sata_spd")), sysfs.read(os.path.join(link_dir, "hw_sata_spd_limit"))
    link = None
    if spd is not None:
        link = Link("sata", _parse_rate(spd), 1 if _parse_rate(spd) else None, _parse_rate(hw), 1,
                    evidence=f"sysfs {name}: sata_spd={spd!r} hw_sata_spd_limit={hw!r}")
    return Element(ATA_PORT, name, key, link)


def classify(name: str) -> Optional[str]:
    """The element kind a sysfs directory name stands for, or None (a target, a LUN, a class dir)."""
    for kind, pattern in _PATTERNS:
        if pattern.match(name):
            return kind
    return None


def path_elements(rel: str) -> List[Tuple[str, str, str]]:
    """(kind, name, key) of every element in a device's path under /sys/devices (a udev DEVPATH without
    its leading /devices/ is one), from the host down to the block device's parent; pure."""
    parts = [p for p in rel.strip("/").split("/") if p]
    if parts and parts[0] == "devices":
        parts = parts[1:]
    out = []
    for i, comp in enumerate(parts):
        if comp == "block":
            break
        kind = classify(comp)
        if kind is not None:
            out.append((kind, comp, "/".join(parts[:i + 1])))
    return out


def walk(name: str, root: str = sysfs.SYS) -> UnitPath:
    """The path of block device NAME (sda, nvme0n1) in the sysfs at root, each element with the link it
    negotiated. A device with no path (loop, zram, device-mapper: under devices/virtual) says so in
    ``error``."""
    unit = UnitPath(device=f"/dev/{name}", source=SOURCE_SYSFS)
    d = sysfs.dir_of_name(name, root)
    if d is None:
        unit.error = f"/dev/{name} is not in sysfs"
        return unit
    devices = os.path.realpath(os.path.join(root, "devices"))
    rel = os.path.relpath(d, devices)
    unit.syspath = rel
    if rel.startswith("..") or rel.split(os.sep)[0] == "virtual":
        unit.error = f"/dev/{name} is a virtual device: it has no path to hardware"
        return unit
    for kind, comp, key in path_elements(rel):
        directory = os.path.join(devices, *key.split("/"))
        if kind == PCI_FUNCTION:
            unit.elements.append(_pci_element(directory, key, comp))
        elif kind == SAS_PORT:
            unit.elements.append(_sas_port_element(directory, key, comp))
        elif kind == ATA_PORT:
            unit.elements.append(_ata_element(directory, key, comp))
        else:
            unit.elements.append(Element(kind, comp, key))
    return unit


def walk_path(path: str, root: str = sysfs.SYS) -> UnitPath:
    """walk() for a device path (/dev/sda, a by-id symlink); a file or URI gets a UnitPath saying why."""
    devnum = sysfs.devnum_of(path) if "://" not in path else None
    if devnum is None:
        return UnitPath(device=path, error=f"{path} is not a block device: it has no path to hardware",
                        source=SOURCE_SYSFS)
    info = sysfs.block_info(devnum, root)
    if info is None:
        return UnitPath(device=path, error=f"{path} ({devnum}) is not in sysfs", source=SOURCE_SYSFS)
    name = info.parent if info.is_partition and info.parent else info.name
    unit = walk(name, root)
    unit.device = path
    return unit


def name_pci(units: Sequence[UnitPath], tree: Dict[str, lspci.TreeFunction]) -> None:
    """Gives each PCI function and port on the units' paths that has no description the one ``lspci -tv``
    (parsed: lspci.parse_tree) gives its address; pure."""
    for unit in units:
        for e in unit.elements:
            if e.kind in (PCI_FUNCTION, PCI_BRIDGE) and not e.description:
                e.description = lspci.describe(tree, e.name)


def _name_from_lspci(units: Sequence[UnitPath]) -> None:
    """name_pci from this host's ``lspci -tv``; without lspci the elements keep their addresses alone."""
    if not lspci.available():
        return
    try:
        tree = lspci.tree()
    except ToolError as exc:
        for unit in units:
            unit.notes.append(f"lspci -tv: {exc}: PCI elements are named by their addresses alone")
        return
    name_pci(units, tree)


def named_here(units: Sequence[UnitPath], root: str = sysfs.SYS) -> None:
    """The units' PCI elements named from this host's ``lspci -tv``, run once for all of them, as unit_path
    names one it reads from this host's /sys: for paths a device record carried (sysfs's, read at ``root``)."""
    here = [u for u in units if u.source == SOURCE_SYSFS and u.error is None]
    if here and os.path.realpath(root) == os.path.realpath(sysfs.SYS):
        _name_from_lspci(here)


def _freebsd(host) -> bool:
    return host is not None or sys.platform.startswith("freebsd")


def unit_path(path: str, root: str = sysfs.SYS, host=None) -> UnitPath:
    """The path of ``path`` on this platform: walk_path on Linux (its PCI elements named by this host's
    lspci when ``root`` is this host's /sys), freebsd_topology.walk on FreeBSD or given a FreeBSD
    ``host`` (tools/freebsd/host.Host)."""
    if _freebsd(host):
        from slogqual.device import freebsd_topology

        return freebsd_topology.walk(path, host)
    unit = walk_path(path, root)
    if unit.error is None and os.path.realpath(root) == os.path.realpath(sysfs.SYS):
        _name_from_lspci([unit])
    return unit


def recorded(path: str, root: str = sysfs.SYS, host=None) -> Dict[str, Any]:
    """unit_path as a result keeps it (a scenario's ``pool.devices[dev].topology``). A path sysfs cannot
    give — no sysfs at root, a file, a directory that cannot be read — is kept as a path with an
    ``error`` saying so: unknown, never a failed run. On FreeBSD (or given its ``host``):
    freebsd_topology's."""
    if _freebsd(host):
        from slogqual.device import freebsd_topology

        return freebsd_topology.recorded(path, host)
    if not os.path.isdir(os.path.join(root, "class", "block")):
        return UnitPath(device=path, error=f"no sysfs at {root}: the path of {path} is unknown",
                        source=SOURCE_SYSFS).to_dict()
    try:
        return unit_path(path, root).to_dict()
    except OSError as exc:
        return UnitPath(device=path, error=f"the path of {path} is unknown: {exc}", source=SOURCE_SYSFS).to_dict()
