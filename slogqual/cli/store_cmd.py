"""slogqual store migrate | info: the result store's schema, for the one who sets a shared store up.

Arguments and printing only: the schema and its migrations are slogqual/store/backends.py.
"""

from __future__ import annotations

import sys

from slogqual.cli.history import STORE_HELP
from slogqual.cli.options import STORE
from slogqual.errors import UsageError
from slogqual.store import Store
from slogqual.store.backends import SCHEMA_VERSION


def register(sub) -> None:
    p = sub.add_parser("store", help="create or migrate the result store's tables; show what it holds",
                       description="The result store's schema. `migrate` creates the tables of a fresh store or "
                                   "brings an older one to this slogqual's schema, once, even when several hosts "
                                   "start at the same moment; run it as a role that may create tables, and give "
                                   "the hosts a role that may only insert and select (docs/fleet.md).")
    ssub = p.add_subparsers(dest="store_command", metavar="ACTION", parser_class=type(p))
    for name, helptext in (("migrate", "create the tables, or bring them to this slogqual's schema"),
                           ("info", "the store's backend, schema version and runs")):
        s = ssub.add_parser(name, help=helptext)
        s.add_argument("--store", type=STORE, metavar="PATH|URL", help=STORE_HELP)
        s.set_defaults(func=run_migrate if name == "migrate" else run_info)
    p.set_defaults(func=lambda args: (_ for _ in ()).throw(UsageError("store needs an ACTION: migrate or info")))


def run_migrate(args) -> int:
    with Store(args.store) as st:
        found, now = st.migrated
    what = "up to date" if found == now else "created" if found == 0 else f"migrated from version {found}"
    print(f"result store {st.path}: schema version {now} ({what})")
    return 0


def run_info(args) -> int:
    with Store(args.store) as st:
        version = st.schema_version()
        runs = st.runs()
    kinds = {}
    for r in runs:
        kinds[r.kind] = kinds.get(r.kind, 0) + 1
    print(f"result store {st.path}")
    print(f"  backend: {st.dialect}; schema version {version} (this slogqual: {SCHEMA_VERSION})")
    print(f"  runs: {len(runs)}" + ("" if not kinds else " (" + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
                                      + ")"))
    print(f"  hosts: {len({r.host for r in runs if r.host})}; units: "
          f"{len({(r.model, r.serial) for r in runs if r.serial})}", file=sys.stdout)
    return 0
