"""One device record from several sources' facts, by one precedence table per platform.

Each source a platform asks (Linux: sysfs, lsblk, smartctl, nvme-cli; FreeBSD: camcontrol, nvmecontrol,
geom, diskinfo) gives its answers as facts, a dict of record field to value (None: it does not say).
A platform's table names, per source, the fields taken from it and how: FILL takes a field no earlier
source knew; OVERRIDE replaces what is known, with a note in the record where the two differ (the
device's own answer beating a kernel's translated copy). Sources are merged in the order they are
asked (Linux), or in the table's own order (:func:`merge_in_order`, FreeBSD, whose sources are all
read before the record is built).
"""

from __future__ import annotations

from typing import Any, Dict, Mapping

from slogqual.device.record import DeviceRecord

FILL, OVERRIDE = "fill", "override"

Facts = Dict[str, Any]
Precedence = Mapping[str, Mapping[str, str]]  # source -> field -> FILL | OVERRIDE, fields in merge order


def merge(rec: DeviceRecord, precedence: Precedence, source: str, facts: Mapping[str, Any]) -> None:
    """One source's facts into the record, as ``precedence[source]`` says (a field it does not list is
    not taken), field by field in the table's order."""
    for name, rule in precedence[source].items():
        (rec.prefer if rule == OVERRIDE else rec.set)(name, facts.get(name), source)


def merge_in_order(rec: DeviceRecord, precedence: Precedence, answers: Mapping[str, Facts]) -> None:
    """The facts of every source that answered (``answers``: source -> facts), in the table's order."""
    for source in precedence:
        if source in answers:
            merge(rec, precedence, source, answers[source])
