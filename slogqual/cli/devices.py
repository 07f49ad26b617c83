"""slogqual devices / slogqual inspect DEV: device identity, class, link, write cache, in-use state."""

from __future__ import annotations

import json
import sys
from typing import Any, Dict, List, Tuple

from slogqual import device
from slogqual.device.interlock import READ_ONLY
from slogqual.device.record import DeviceRecord, Link, LinkEnd
from slogqual.errors import UsageError


def register(sub) -> None:
    p = sub.add_parser("devices", help="list candidate block devices with class, write cache and in-use state",
                       description="List whole block devices (disks, NVMe namespaces, pmem, attached loop devices) "
                                   "with their class, transport, size, write-cache verdict and whether the safety "
                                   "interlocks would let a sweep write to them.")
    p.add_argument("--json", action="store_true", help="print a JSON list of device records (each with 'safety')")
    p.add_argument("--all", action="store_true", help="also list zram/ram, md and device-mapper devices")
    p.set_defaults(func=run_devices)

    q = sub.add_parser("inspect", help="identify one device, file or nbd URI",
                       description="Show what slogqual knows about DEV (block device, regular file or nbd:// URI): "
                                   "identity, class with its evidence, link, write-cache verdict, what is unknown "
                                   "and why, and whether the safety interlocks would refuse it.")
    q.add_argument("dev", metavar="DEV")
    q.add_argument("--json", action="store_true", help="print the device record (the one sweep results embed)")
    q.set_defaults(func=run_inspect)


def _safety(path: str) -> Dict[str, Any]:
    try:
        findings = device.safety_findings(path)
    except (OSError, UsageError) as exc:
        return {"state": "unknown", "reasons": [str(exc)]}
    if not findings:
        return {"state": "free", "reasons": []}
    hard = [f for f in findings if not f.overridable]
    if hard and all(f.code == READ_ONLY for f in hard):
        state = "read-only"
    else:
        state = "in-use" if hard else "has-data"
    return {"state": state,
            "reasons": list(dict.fromkeys(f.message for f in findings))}


def _size(n) -> str:
    if n is None:
        return "?"
    for unit, div in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= div:
            return f"{n / div:.1f}{unit}"
    return f"{n}B"


def run_devices(args) -> int:
    rows: List[Tuple[DeviceRecord, Dict[str, Any]]] = []
    for path in device.candidates(include_all=args.all):
        try:
            rec = device.identify(path)
        except (UsageError, OSError) as exc:  # detached or removed while we listed: not a candidate any more
            print(f"slogqual: skipping {path}: {exc}", file=sys.stderr)
            continue
        rows.append((rec, _safety(path)))
    if args.json:
        json.dump([{**rec.to_dict(), "safety": safety} for rec, safety in rows], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    from tabulate import tabulate

    table = [[rec.path, rec.device_class, rec.transport, _size(rec.capacity), rec.model or "-",
              rec.write_cache.verdict, rec.link.verdict,
              safety["state"] + (f": {safety['reasons'][0]}" if safety["reasons"] else "")]
             for rec, safety in rows]
    print(tabulate(table, headers=["DEVICE", "CLASS", "TRANSPORT", "SIZE", "MODEL", "WRITE CACHE", "LINK", "STATE"],
                   tablefmt="plain"))
    for rec, _ in rows:
        for w in rec.warnings():
            print(f"WARNING: {w}", file=sys.stderr)
    return 0


def _fmt_link(link: Link) -> str:
    def end(e: LinkEnd) -> str:
        s = e.speed or (f"{e.rate:g}" if e.rate is not None else "?")
        return s + (f" x{e.width}" if e.width is not None else "")

    if link.verdict in ("not-applicable", "unknown"):
        where = " ".join(x for x in (link.kind, link.scope, link.address) if x)
        return f"{link.verdict}" + (f" [{where}]" if where else "") + f" ({link.reason})"
    return (f"{link.kind} {link.scope or ''} {link.address or ''}: current {end(link.current)}, "
            f"max {end(link.max)} -> {link.verdict}").replace("  ", " ")


def run_inspect(args) -> int:
    from slogqual import paths

    if paths.is_nbd_uri(args.dev):  # an export nobody serves is bad input, not a record of unknowns
        from slogqual.tools import nbdkit

        nbdkit.check_reachable(args.dev)
    rec = device.identify(args.dev)
    warnings = rec.warnings()
    if args.json:
        json.dump(rec.to_dict(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        for w in warnings:
            print(f"WARNING: {w}", file=sys.stderr)
        return 0
    for w in warnings:
        print(f"WARNING: {w}")
    sectors = rec.logical_sector or rec.physical_sector
    lines = [
        ("path", rec.path), ("kind", rec.kind), ("name", rec.name), ("partition of", rec.partition_of),
        ("model", rec.model), ("vendor", rec.vendor), ("serial", rec.serial), ("firmware", rec.firmware),
        ("capacity", f"{rec.capacity} bytes ({_size(rec.capacity)})" if rec.capacity is not None else None),
        ("sectors", f"logical {rec.logical_sector}, physical {rec.physical_sector}" if sectors else None),
        ("transport", rec.transport), ("rotational", rec.rotational), ("rotation rate", rec.rotation_rate),
        ("class", f"{rec.device_class}  ({'; '.join(rec.class_evidence)})"),
        ("emulated", rec.emulated),
        ("link", _fmt_link(rec.link)),
    ]
    if rec.controller_link:
        lines.append(("controller link", _fmt_link(rec.controller_link)))
    if rec.topology:
        from slogqual.report.wording import unit_path
        from slogqual.results.shelf import UnitPath

        lines.append(("from the host", unit_path(UnitPath.from_dict(rec.topology))))
    wc = rec.write_cache
    lines.append(("write cache", f"{wc.verdict}  ({wc.reason})"))
    for e in wc.evidence:
        lines.append(("", e))
    pl = rec.power_loss()
    if pl:
        lines.append(("power loss", f"{pl['verdict']}  ({pl['text']}; {pl['basis']})"))
        for e in pl.get("evidence") or []:
            lines.append(("", f"{e.get('name')}: {e.get('says')}"))
    safety = _safety(args.dev) if rec.kind != "nbd" else {"state": "n/a (URI)", "reasons": []}
    lines.append(("safety", safety["state"] + (": " + "; ".join(safety["reasons"]) if safety["reasons"] else "")))
    for k, v in lines:
        if v is None and k not in ("model", "vendor", "serial", "firmware", "capacity"):
            continue
        print(f"{k:>16}: {v if v is not None else 'unknown'}" if k else f"{'':>16}  {v}")
    if rec.unknown:
        print(f"{'unknown':>16}:")
        for k, why in rec.unknown.items():
            print(f"{'':>16}  {k}: {why}")
    for n in rec.notes:
        print(f"{'note':>16}: {n}")
    tools = ", ".join(f"{k} {v}" for k, v in rec.tools.items())
    if tools:
        print(f"{'tools':>16}: {tools}")
    return 0
