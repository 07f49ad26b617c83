"""Every document schema name slogqual writes, the checks that name a bad key, and the migration hook.

A schema string is ``slogqual.KIND/VERSION``. A reader asks ``upgrade(doc, KIND, source)`` for the
current version: an older version goes through the registered migrations one step at a time, a newer
or foreign one is refused in one line. Fields are then checked with ``Checker``, whose errors say
which key of which file is wrong (``steps[3].iops: expected a number, got 'fast'``).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, Optional, Tuple

from slogqual.errors import UsageError

SWEEP = "slogqual.sweep/1"
SCENARIO = "slogqual.scenario/1"
QUALIFICATION = "slogqual.qualification/1"
COMPARE = "slogqual.compare/2"  # 2: per-size significance (Welch) and pooled baselines
DEVICE = "slogqual.device/1"
FLEET = "slogqual.fleet/1"  # slogqual fleet --json (written, never read back)
POWERCUT = "slogqual.powercut/1"  # slogqual powercut run / verify (docs/powercut.md)
ADVICE = "slogqual.advice/1"  # slogqual advise (docs/advisor.md)
COST = "slogqual.cost/1"  # slogqual scenario cost --json (docs/scenarios.md, "Protocol cost"; written, never read back)
SHELF = "slogqual.shelf/1"  # slogqual sweep --probe: together vs alone on the units' paths (docs/devices.md)
HOST = "slogqual.host/1"  # slogqual host-probe: this host's ZFS with a perfect log (docs/advisor.md)

CURRENT = {s.rsplit("/", 1)[0]: s
           for s in (SWEEP, SCENARIO, QUALIFICATION, COMPARE, DEVICE, FLEET, POWERCUT, ADVICE, COST, SHELF, HOST)}


def family(schema: str) -> str:
    """'slogqual.scenario/1' -> 'slogqual.scenario'."""
    return schema.rsplit("/", 1)[0]


def prefix(schema: str) -> str:
    """'slogqual.scenario/1' -> 'slogqual.scenario/': any version of the kind (what an output may replace)."""
    return family(schema) + "/"


class DocumentError(UsageError):
    """A result file that is not a well-formed document of the kind asked for: bad input (exit 2)."""


# (family, from version) -> a function returning the document at version + 1. None registered yet: the
# next schema change adds its step here and the readers keep loading every older file.
Migration = Callable[[Dict[str, Any]], Dict[str, Any]]
MIGRATIONS: Dict[Tuple[str, int], Migration] = {}


def _version(schema: str) -> Optional[int]:
    try:
        return int(schema.rsplit("/", 1)[1])
    except (IndexError, ValueError):
        return None


def upgrade(doc: Any, schema: str, source: str = "<document>",
            migrations: Optional[Dict[Tuple[str, int], Migration]] = None) -> Dict[str, Any]:
    """The document at ``schema``'s version, or DocumentError naming what is wrong."""
    migrations = MIGRATIONS if migrations is None else migrations
    if not isinstance(doc, dict):
        raise DocumentError(f"{source}: not a {schema} document (a JSON {type(doc).__name__}, not an object)")
    got = doc.get("schema")
    if not isinstance(got, str) or family(got) != family(schema) or _version(got) is None:
        raise DocumentError(f"{source}: not a {schema} document (schema: {got!r})")
    have, want = _version(got), _version(schema)
    if have > want:
        raise DocumentError(f"{source}: {got} is newer than this slogqual reads ({schema}); upgrade slogqual")
    while have < want:
        step = migrations.get((family(schema), have))
        if step is None:
            raise DocumentError(f"{source}: {got} cannot be read by this slogqual (no migration from version {have})")
        doc = step(dict(doc))
        have += 1
        doc["schema"] = f"{family(schema)}/{have}"
    return doc


class Checker:
    """Field checks for one document; every failure names the file and the key path."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, key: str, why: str) -> DocumentError:
        return DocumentError(f"{self.source}: key '{key}' {why}")

    def table(self, d: Any, key: str) -> Dict[str, Any]:
        if not isinstance(d, dict):
            raise self.fail(key, f"must be an object, not {_kind(d)}")
        return d

    def get(self, d: Dict[str, Any], key: str, where: str, types: tuple, required: bool = True,
            choices: Optional[tuple] = None) -> Any:
        path = f"{where}.{key}" if where else key
        if key not in d:
            if required:
                raise self.fail(path, "is missing")
            return None
        value = d[key]
        if value is None and not required:
            return None
        if not _is(value, types):
            raise self.fail(path, f"must be {_names(types)}, not " + " ".join(filter(None, (_kind(value), _short(value)))))
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(path, f"must be a finite number, not {value}")
        if choices is not None and value not in choices:
            raise self.fail(path, f"must be one of {', '.join(map(str, choices))}, not {value!r}")
        return value

    def number(self, d, key, where="", required=True, minimum: Optional[float] = None):
        value = self.get(d, key, where, (int, float), required)
        if value is not None and minimum is not None and value < minimum:
            raise self.fail(f"{where}.{key}" if where else key, f"must be at least {minimum}, not {value}")
        return value

    def integer(self, d, key, where="", required=True, minimum: Optional[int] = None):
        value = self.get(d, key, where, (int,), required)
        if value is not None and minimum is not None and value < minimum:
            raise self.fail(f"{where}.{key}" if where else key, f"must be at least {minimum}, not {value}")
        return value

    def text(self, d, key, where="", required=True, choices=None):
        return self.get(d, key, where, (str,), required, choices)

    def items(self, d, key, where="", required=True) -> list:
        value = self.get(d, key, where, (list,), required)
        return value if value is not None else []

    def obj(self, d, key, where="", required=True) -> Optional[Dict[str, Any]]:
        return self.get(d, key, where, (dict,), required)

    def texts(self, d, key, where="", required=False) -> list:
        """A list of strings (notes, warnings, evidence); each item checked."""
        items = self.items(d, key, where, required)
        for i, item in enumerate(items):
            if not isinstance(item, str):
                raise self.fail(f"{where}.{key}[{i}]" if where else f"{key}[{i}]", "must be a string")
        return list(items)


def _is(value: Any, types: tuple) -> bool:
    if isinstance(value, bool):  # JSON true is not a number
        return bool in types
    return isinstance(value, types)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _names(types: tuple) -> str:
    names = {int: "a number", float: "a number", str: "a string", list: "a list", dict: "an object", bool: "a boolean"}
    out = []
    for t in types:
        if names[t] not in out:
            out.append(names[t])
    return " or ".join(out)


def _short(value: Any) -> str:
    if value is None or isinstance(value, (dict, list)):
        return ""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
