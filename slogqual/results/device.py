"""The device record a result carries (``slogqual.device/1``, written by slogqual.device), checked as
its readers (reports, the store, qualify) use it: every key that is there has the type they expect.
A record written before a key existed still passes; a key with a wrong type is named."""

from __future__ import annotations

from typing import Any, Dict

from slogqual.results import schema as S

TEXT = ("path", "kind", "name", "devnum", "partition_of", "model", "vendor", "serial", "firmware", "wwn",
        "transport", "class", "platform", "error")
INTEGER = ("capacity", "logical_sector", "physical_sector", "rotation_rate")
FLAG = ("rotational", "emulated")
TEXT_LISTS = ("class_evidence", "notes", "warnings")
TEXT_MAPS = ("unknown", "sources", "tools", "tool_versions")


def check_link(c: S.Checker, link: Any, where: str) -> None:
    link = c.table(link, where)
    for key in ("kind", "scope", "address", "verdict", "reason"):
        c.text(link, key, where, required=False)
    for end in ("current", "max"):
        e = c.obj(link, end, where, required=False)
        if e is not None:
            c.text(e, "speed", f"{where}.{end}", required=False)
            c.number(e, "rate", f"{where}.{end}", required=False, minimum=0)
            c.integer(e, "width", f"{where}.{end}", required=False, minimum=0)
    c.texts(link, "evidence", where)


def check_topology(c: S.Checker, topo: Dict[str, Any], where: str) -> None:
    """A unit's path (results.shelf.UnitPath): every key its readers (reports, the fleet view) use."""
    c.text(topo, "device", where)
    c.text(topo, "syspath", where, required=False)
    c.text(topo, "error", where, required=False)
    c.text(topo, "source", where, required=False)  # results.shelf.SOURCE_*; paths recorded before it have none
    for i, e in enumerate(c.items(topo, "elements", where, required=False)):
        w = f"{where}.elements[{i}]"
        e = c.table(e, w)
        for key in ("kind", "name", "key"):
            c.text(e, key, w)
        c.number(e, "declared_ceiling", w, required=False, minimum=0)
        c.text(e, "declared", w, required=False)
        link = c.obj(e, "link", w, required=False)
        if link is not None:
            c.text(link, "kind", f"{w}.link")
            c.number(link, "rate", f"{w}.link", required=False, minimum=0)
            c.integer(link, "lanes", f"{w}.link", required=False, minimum=0)
            for j, r in enumerate(c.items(link, "rates", f"{w}.link", required=False)):
                if r is not None and (isinstance(r, bool) or not isinstance(r, (int, float))):
                    raise c.fail(f"{w}.link.rates[{j}]", "must be a number or null")


def check_record(c: S.Checker, rec: Any, where: str = "device") -> Dict[str, Any]:
    rec = c.table(rec, where)
    for key in TEXT:
        c.text(rec, key, where, required=False)
    for key in INTEGER:
        c.integer(rec, key, where, required=False, minimum=0)
    for key in FLAG:
        c.get(rec, key, where, (bool,), required=False)
    for key in TEXT_LISTS:
        c.texts(rec, key, where)
    for key in TEXT_MAPS:
        m = c.obj(rec, key, where, required=False)
        for k, v in (m or {}).items():
            if not isinstance(v, str):
                raise c.fail(f"{where}.{key}.{k}", "must be a string")
    for key in ("link", "controller_link"):
        if rec.get(key) is not None:
            check_link(c, rec[key], f"{where}.{key}")
    wc = c.obj(rec, "write_cache", where, required=False)
    if wc is not None:
        for key in ("verdict", "reason", "kernel"):
            c.text(wc, key, f"{where}.write_cache", required=False)
        c.texts(wc, "evidence", f"{where}.write_cache")
    topo = c.obj(rec, "topology", where, required=False)
    if topo is not None:  # device/topology.py; records written before it have none
        check_topology(c, topo, f"{where}.topology")
    pl = c.obj(rec, "power_loss", where, required=False)
    if pl is not None:  # analysis/powerloss.py; records written before it have none
        w = f"{where}.power_loss"
        for key in ("verdict", "text", "basis"):
            c.text(pl, key, w)
        c.get(pl, "measured", w, (bool,), required=False)
        c.get(pl, "safe", w, (bool,), required=False)
        for i, item in enumerate(c.items(pl, "evidence", w, required=False)):
            item = c.table(item, f"{w}.evidence[{i}]")
            c.text(item, "name", f"{w}.evidence[{i}]")
            c.text(item, "says", f"{w}.evidence[{i}]")
    return rec
