"""Ceilings the user declares for path elements that sysfs (or camcontrol) cannot rate (issue #30).

A negotiated link gives an element its ceiling (analysis.shelf.ceiling_bytes). Many elements have none to
read: a virtio or RAID HBA, an expander whose uplink is not in sysfs, a switch's uplink, a cable, a throttled
port. Whoever knows the element's limit (its data sheet, a measurement of its own, the lab's throttle group)
declares it with ``--path-ceiling ELEMENT=RATE``; the analyses then use it as they use a link's, and every
figure that rests on it says it was declared.

ELEMENT is either an element's name as the path shows it (``host0``, ``0000:03:00.0``, ``port-0:0``,
``expander-0:1``, ``ata3``) or ``DEVICE:KIND`` — the element of that kind nearest the unit on DEVICE's path
(``/dev/sdb:scsi-host``: the HBA /dev/sdb hangs from). RATE is bytes per second with fio's and the lab's
binary suffixes (``3m`` or ``3m/s``: 3 MiB/s; ``2400m``).

Pure functions on results.shelf's typed paths: no file read, no process started.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Callable, List, Optional, Sequence

from slogqual.errors import UsageError
from slogqual.results import shelf as R
from slogqual.units import parse_size

OPTION = "--path-ceiling"
KINDS = (R.PCI_HOST, R.PCI_BRIDGE, R.PCI_FUNCTION, R.SCSI_HOST, R.SAS_PORT, R.SAS_EXPANDER, R.SAS_END_DEVICE,
         R.ATA_PORT, R.NVME_CONTROLLER, R.VIRTIO)


@dataclass(frozen=True)
class Declaration:
    """One ``--path-ceiling``: the element by its name, or by a unit and a kind; its ceiling in bytes/s."""

    text: str  # as given, for the record
    bytes_s: int
    name: Optional[str] = None
    unit: Optional[str] = None
    kind: Optional[str] = None

    def matches(self, path: R.UnitPath) -> List[R.Element]:
        """The elements of ``path`` this declaration names (at most one for DEVICE:KIND)."""
        if self.name is not None:
            return [e for e in path.elements if e.name == self.name]
        if self.unit not in (path.device, os.path.basename(path.device)):  # /dev/sdb or sdb
            return []
        nearest = [e for e in path.elements if e.kind == self.kind]
        return nearest[-1:]


def parse(text: str) -> Declaration:
    """'host0=3m' / '/dev/sdb:scsi-host=2400m' -> a Declaration; UsageError (one line) otherwise."""
    element, eq, rate = text.rpartition("=")
    if not eq or not element.strip() or not rate.strip():
        raise UsageError(f"{OPTION} {text!r}: give ELEMENT=RATE, e.g. host0=3m or /dev/sdb:scsi-host=2400m")
    try:
        bytes_s = parse_size(rate[:-2] if rate.endswith("/s") else rate)
    except UsageError:
        raise UsageError(f"{OPTION} {text!r}: {rate!r} is not a rate in bytes/s such as 3m (MiB/s)") from None
    if bytes_s <= 0:
        raise UsageError(f"{OPTION} {text!r}: the ceiling must be above 0")
    unit, colon, kind = element.rpartition(":")
    if colon and kind in KINDS:
        if not unit:
            raise UsageError(f"{OPTION} {text!r}: name the unit before :{kind}")
        return Declaration(text, bytes_s, unit=unit, kind=kind)
    return Declaration(text, bytes_s, name=element)


def parse_all(texts: Sequence[str], unit_of: Optional[Callable[[str], str]] = None) -> List[Declaration]:
    """Every --path-ceiling parsed; ``unit_of`` turns a DEVICE as given into the device its path names (a
    door passes os.path.realpath for /dev/disk/by-id links, the scenario runner its lab:N mapping too)."""
    out = [parse(t) for t in texts]
    if unit_of is not None:
        out = [replace(d, unit=unit_of(d.unit)) if d.unit is not None else d for d in out]
    return out


def apply(paths: Sequence[R.UnitPath], declarations: Sequence[Declaration]) -> None:
    """Set every named element's declared ceiling on ``paths`` (in place). A declaration that names no
    element of any path is bad input: UsageError naming it and what the paths hold, before anything is
    measured. A unit's path that is unknown cannot carry one either."""
    for d in declarations:
        hits = [e for p in paths for e in d.matches(p)]
        if not hits:
            raise UsageError(f"{OPTION} {d.text!r}: no element of the units' paths is "
                             f"{d.name if d.name is not None else f'the {d.kind} of {d.unit}'} "
                             f"(their elements: {_names(paths)})")
        keys = {e.key for e in hits}  # the same element on every unit's path behind it, not only DEVICE's
        for e in (e for p in paths for e in p.elements if e.key in keys):
            e.declared_ceiling = float(d.bytes_s)
            e.declared = d.text


def _names(paths: Sequence[R.UnitPath]) -> str:
    seen: List[str] = []
    for p in paths:
        for e in p.elements:
            if e.name not in seen:
                seen.append(e.name)
    return ", ".join(seen) or "none: no path is known"
