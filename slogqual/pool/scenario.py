"""Declarative pool scenarios (TOML files in scenarios/): loading and validation.

A scenario names a load (fio on zvol LUNs or on files in a dataset), the thread steps to scale it
over, and the pool configurations to run it under. A bad file gets one line naming the file and the
key; see docs/scenarios.md for every key.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Tuple

from slogqual import limits
from slogqual.data import data_path, require
from slogqual.errors import UsageError
from slogqual.limits import Range
from slogqual.paths import require_regular
from slogqual.pool.transport import TRANSPORTS, TransportConfig
from slogqual.units import parse_size

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python < 3.11
    import tomli as tomllib

SCENARIO_DIR = data_path()  # scenarios/ of the repository, slogqual/scenarios/ in a wheel (slogqual.data)

KINDS = ("zvol", "dataset")
RWS = ("randwrite", "write")
WRITE_SYNCS = ("none", "dsync", "fsync")
SYNCS = ("standard", "always", "disabled")
LOGS = ("none", "single", "mirror", "stripe", "special")
SPECIAL = "special"  # the log candidate as the pool's special vdev, no log vdev: the ZIL on the special (2.4)

_TOP_KEYS = {"name", "description", "kind", "luns", "lun_size", "volblocksize", "recordsize", "rw", "bs",
             "write_sync", "threads", "runtime", "ramp", "config", "quick", "transport", "nfs_version",
             "nfs_threads", "nfs_mount_options", "iscsi_write_cache"}
_QUICK_KEYS = {"luns", "lun_size", "threads", "runtime", "ramp"}
_CONFIG_KEYS = {"name", "sync", "log", "logbias", "zil_special_is_slog"}


@dataclass(frozen=True)
class PoolConfig:
    """One way to run the load: the pool's sync property and its log vdev layout; ``log = "special"``: the
    log candidate is the pool's special vdev instead, with the module parameter ``zil_special_is_slog`` set
    to ``zil_special_is_slog`` (1 by default, 0 its off switch) for the configuration's steps."""

    name: str
    sync: str = "standard"
    log: str = "none"  # none | single | mirror | stripe | special
    logbias: str = "latency"
    zil_special_is_slog: Optional[bool] = None  # with log = "special" only: True unless the file says false

    @property
    def uses_slog(self) -> bool:
        """A log vdev: the pool gets one (or two) of the candidates as its SLOG."""
        return self.log not in ("none", SPECIAL)

    @property
    def uses_special(self) -> bool:
        """The candidate as the pool's special vdev (no log vdev)."""
        return self.log == SPECIAL

    @property
    def needs_candidate(self) -> bool:
        """The pool is built with a --log candidate (as its log or as its special vdev)."""
        return self.log != "none"

    def to_dict(self) -> Dict[str, Any]:
        d = {"name": self.name, "sync": self.sync, "log": self.log, "logbias": self.logbias}
        if self.uses_special:
            d["zil_special_is_slog"] = self.zil_special_is_slog is not False
        return d


@dataclass(frozen=True)
class Scenario:
    name: str
    kind: str
    luns: int
    lun_size: int
    rw: str
    bs: int
    write_sync: str
    threads: List[int]
    runtime_s: float
    ramp_s: float
    configs: List[PoolConfig]
    description: str = ""
    volblocksize: Optional[int] = None
    recordsize: Optional[int] = None
    source: str = ""
    quick_overrides: Dict[str, Any] = field(default_factory=dict)
    transport: TransportConfig = field(default_factory=TransportConfig)
    #: the load's shape given on the command line over the file's (with_overrides), by option name
    overrides: Dict[str, Any] = field(default_factory=dict)

    def quick(self) -> "Scenario":
        """The few-steps, short-runtime form for CI and demos."""
        return replace(self, **self.quick_overrides, quick_overrides={})

    def to_dict(self) -> Dict[str, Any]:
        return {"name": self.name, "description": self.description, "kind": self.kind, "luns": self.luns,
                "lun_size": self.lun_size, "volblocksize": self.volblocksize, "recordsize": self.recordsize,
                "rw": self.rw, "bs": self.bs, "write_sync": self.write_sync, "threads": list(self.threads),
                "runtime_s": self.runtime_s, "ramp_s": self.ramp_s,
                "configs": [c.to_dict() for c in self.configs], "source": self.source,
                "transport": self.transport.to_dict(),
                **({"overrides": dict(self.overrides)} if self.overrides else {})}


class _Checker:
    def __init__(self, source: str):
        self.source = source

    def fail(self, key: str, why: str) -> UsageError:
        return UsageError(f"{self.source}: key '{key}' {why}")

    def known(self, table: Dict[str, Any], allowed: set, where: str = "") -> None:
        for key in table:
            if key not in allowed:
                raise self.fail(where + key, f"is not a scenario key (known: {', '.join(sorted(allowed))})")

    def choice(self, table, key, choices, default=None, where=""):
        value = table.get(key, default)
        if value not in choices:
            raise self.fail(where + key, f"must be one of {', '.join(choices)}, not {value!r}")
        return value

    def size(self, table, key, where="", required=True, limit: Range = limits.SCENARIO_BS):
        if key not in table:
            if required:
                raise self.fail(where + key, "is missing")
            return None
        value = table[key]
        try:
            size = parse_size(str(value)) if isinstance(value, (str, int)) and not isinstance(value, bool) else None
        except (UsageError, ValueError):  # ValueError: more digits than int() converts
            size = None
        if size is None:
            raise self.fail(where + key, f"must be a size such as \"4k\" or \"1G\", not {value!r} "
                                         f"({limit.allowed()})")
        if not limit.contains(size):
            raise self.fail(where + key, f"{str(value)[:40]!r} is out of range ({limit.allowed()})")
        return size

    def number(self, table, key, limit: Range, where="", required=True):
        """A number held to ``limit`` (slogqual.limits, the range the command line takes too): bools,
        NaN and inf (TOML has all three) refused with the range named."""
        if key not in table:
            if required:
                raise self.fail(where + key, "is missing")
            return None
        why = limit.why_not(table[key])
        if why:
            raise self.fail(where + key, why)
        return table[key]

    def positive_int(self, table, key, where="", required=True, limit: Range = limits.LUNS):
        return self.number(table, key, limit, where, required)

    def seconds(self, table, key, where="", required=True, limit: Range = limits.RAMP_S):
        value = self.number(table, key, limit, where, required)
        return None if value is None else float(value)

    def threads(self, table, key, where="", required=True):
        if key not in table:
            if required:
                raise self.fail(where + key, "is missing")
            return None
        value = table[key]
        if not isinstance(value, list) or not value:
            raise self.fail(where + key, f"must be a list of thread counts such as [1, 2, 4], not {value!r}")
        for t in value:
            why = limits.THREADS.why_not(t)
            if why:
                raise self.fail(where + key, f"{why}: each a thread count, as in [1, 2, 4]")
        if value != sorted(set(value)):
            raise self.fail(where + key, "must be ascending without repeats")
        return list(value)


class _OptionChecker(_Checker):
    """The same checks for a value given as a command-line option: the refusal names the option."""

    def fail(self, key: str, why: str) -> UsageError:
        return UsageError(f"--{key} {why}")


#: what `slogqual scenario run` takes on the command line in place of the file's value: option -> field
OVERRIDES = {"bs": "bs", "threads": "threads", "luns": "luns", "runtime": "runtime_s", "ramp": "ramp_s"}


def with_overrides(scenario: Scenario, overrides: Dict[str, Any]) -> Scenario:
    """``scenario`` with the load's shape given on the command line (``--bs``, ``--threads``, ``--luns``,
    ``--runtime``, ``--ramp``; keys as ``OVERRIDES``) in place of the file's values and --quick's: each held
    to the range the file's value is held to (slogqual.limits), and kept in ``overrides`` so the result says
    what ran and --resume runs it again. Apply it after ``quick()``."""
    given = {k: v for k, v in overrides.items() if v is not None}
    if not given:
        return scenario
    c = _OptionChecker("")
    c.known(given, set(OVERRIDES))
    values = {"bs": c.size(given, "bs", required=False),
              "threads": c.threads(given, "threads", required=False),
              "luns": c.positive_int(given, "luns", required=False),
              "runtime_s": c.seconds(given, "runtime", required=False, limit=limits.SCENARIO_RUNTIME_S),
              "ramp_s": c.seconds(given, "ramp", required=False)}
    values = {k: v for k, v in values.items() if v is not None}
    out = replace(scenario, **values,
                  overrides={**scenario.overrides, **{o: values[f] for o, f in OVERRIDES.items() if f in values}})
    if out.lun_size < out.bs:
        raise c.fail("bs", f"{out.bs} is larger than the scenario's LUNs ({scenario.name}: lun_size "
                           f"{out.lun_size} bytes)")
    return out


def _transport(c: "_Checker", table: Dict[str, Any], kind: str) -> TransportConfig:
    t = c.choice(table, "transport", TRANSPORTS, "local")
    needs = {"iscsi": "zvol", "nfs": "dataset"}
    if t in needs and kind != needs[t]:
        raise c.fail("transport", f"\"{t}\" serves kind = \"{needs[t]}\", not \"{kind}\"")
    for key, owner in (("nfs_version", "nfs"), ("nfs_threads", "nfs"), ("nfs_mount_options", "nfs"),
                       ("iscsi_write_cache", "iscsi")):
        if key in table and t != owner:
            raise c.fail(key, f"applies to transport = \"{owner}\"")
    version = table.get("nfs_version", "4.2")
    if version not in ("4.2", "4.1", "3"):
        raise c.fail("nfs_version", f"must be \"4.2\", \"4.1\" or \"3\", not {version!r}")
    threads = c.number(table, "nfs_threads", limits.NFS_THREADS, required=False)
    opts = table.get("nfs_mount_options", ["hard"])
    if not isinstance(opts, list) or not all(isinstance(o, str) and o and "," not in o and "=" != o[0]
                                             and not any(ch.isspace() for ch in o) for o in opts):
        raise c.fail("nfs_mount_options", f"must be a list of mount options such as [\"hard\", \"sync\"], not {opts!r}")
    if any(o.startswith(("vers=", "nfsvers=")) for o in opts):
        raise c.fail("nfs_mount_options", "must not name the version: use nfs_version")
    wc = table.get("iscsi_write_cache")
    if wc is not None and not isinstance(wc, bool):
        raise c.fail("iscsi_write_cache", f"must be true or false, not {wc!r}")
    return TransportConfig(kind=t, nfs_version=version, nfs_threads=threads, nfs_mount_options=tuple(opts),
                           iscsi_write_cache=wc)


def parse_scenario(table: Dict[str, Any], source: str) -> Scenario:
    c = _Checker(source)
    c.known(table, _TOP_KEYS)
    name = table.get("name")
    if not isinstance(name, str) or not name.strip():
        raise c.fail("name", "must be a non-empty string")
    kind = c.choice(table, "kind", KINDS)
    if kind == "zvol" and "recordsize" in table:
        raise c.fail("recordsize", "applies to kind = \"dataset\"; a zvol has volblocksize")
    if kind == "dataset" and "volblocksize" in table:
        raise c.fail("volblocksize", "applies to kind = \"zvol\"; a dataset has recordsize")
    bs = c.size(table, "bs")
    lun_size = c.size(table, "lun_size", limit=limits.LUN_SIZE)
    if lun_size < bs:
        raise c.fail("lun_size", f"({lun_size} bytes) is smaller than bs ({bs} bytes)")
    raw_configs = table.get("config")
    if not isinstance(raw_configs, list) or not raw_configs:
        raise c.fail("config", "must hold at least one [[config]] table")
    configs, names = [], set()
    for i, cfg in enumerate(raw_configs):
        where = f"config[{i}]."
        if not isinstance(cfg, dict):
            raise c.fail(f"config[{i}]", "must be a table")
        c.known(cfg, _CONFIG_KEYS, where)
        cname = cfg.get("name")
        if not isinstance(cname, str) or not cname.strip():
            raise c.fail(where + "name", "must be a non-empty string")
        if cname in names:
            raise c.fail(where + "name", f"repeats the configuration name {cname!r}")
        names.add(cname)
        log = c.choice(cfg, "log", LOGS, "none", where)
        special_is_slog = cfg.get("zil_special_is_slog")
        if special_is_slog is not None and log != SPECIAL:
            raise c.fail(where + "zil_special_is_slog", f"applies to log = \"{SPECIAL}\", not {log!r}")
        if special_is_slog is not None and not isinstance(special_is_slog, bool):
            raise c.fail(where + "zil_special_is_slog", f"must be true or false, not {special_is_slog!r}")
        configs.append(PoolConfig(name=cname, sync=c.choice(cfg, "sync", SYNCS, "standard", where), log=log,
                                  logbias=c.choice(cfg, "logbias", ("latency", "throughput"), "latency", where),
                                  zil_special_is_slog=(special_is_slog is not False) if log == SPECIAL else None))
    quick = table.get("quick", {})
    if not isinstance(quick, dict):
        raise c.fail("quick", "must be a table")
    c.known(quick, _QUICK_KEYS, "quick.")
    overrides = {k: v for k, v in {
        "luns": c.positive_int(quick, "luns", "quick.", required=False),
        "lun_size": c.size(quick, "lun_size", "quick.", required=False, limit=limits.LUN_SIZE),
        "threads": c.threads(quick, "threads", "quick.", required=False),
        "runtime_s": c.seconds(quick, "runtime", "quick.", required=False, limit=limits.SCENARIO_RUNTIME_S),
        "ramp_s": c.seconds(quick, "ramp", "quick.", required=False),
    }.items() if v is not None}
    return Scenario(
        name=name.strip(), description=str(table.get("description", "")), kind=kind,
        luns=c.positive_int(table, "luns"), lun_size=lun_size,
        volblocksize=c.size(table, "volblocksize", required=False, limit=limits.ZFS_BLOCK) if kind == "zvol" else None,
        recordsize=c.size(table, "recordsize", required=False, limit=limits.ZFS_BLOCK) if kind == "dataset" else None,
        rw=c.choice(table, "rw", RWS), bs=bs, write_sync=c.choice(table, "write_sync", WRITE_SYNCS, "none"),
        threads=c.threads(table, "threads"), runtime_s=c.seconds(table, "runtime", limit=limits.SCENARIO_RUNTIME_S),
        ramp_s=c.seconds(table, "ramp", required=False) or 0.0, configs=configs, source=source,
        quick_overrides=overrides, transport=_transport(c, table, kind),
    )


def check_special_version(scenario: Scenario, openzfs: Dict[str, Any], where: str = "this host's") -> None:
    """A scenario with a special-vdev configuration needs the ZIL on the special vdev (OpenZFS 2.4,
    ``zil_special_is_slog``): on an older module it is refused in one line naming the version found, and
    where the version cannot be read that is said (``openzfs``: tools.zfs.openzfs_versions' dict)."""
    from slogqual.tools import zfs_tunables

    special = [c.name for c in scenario.configs if c.uses_special]
    if not special:
        return
    module = openzfs.get("module")
    what = f"{scenario.name}: configuration {special[0]!r} (log = \"{SPECIAL}\") needs OpenZFS 2.4 or later " \
           f"(the ZIL on the special vdev, zil_special_is_slog)"
    found = zfs_tunables.has("zil_special_is_slog", module)
    if found is None:
        why = openzfs.get("error") or "zfs --version names no module"
        raise UsageError(f"{what}; {where} OpenZFS module version is unknown ({str(why)[:120]})")
    if not found:
        raise UsageError(f"{what}; {where} OpenZFS module is {module}")


def builtin_names() -> List[str]:
    return sorted(f[:-5] for f in os.listdir(require(SCENARIO_DIR))
                  if f.endswith(".toml") and f != "lab-devices.toml" and os.path.isfile(os.path.join(SCENARIO_DIR, f)))


def is_shipped(name_or_path: str) -> bool:
    """Whether ``name_or_path`` names a shipped scenario (a name, not a file of the user's)."""
    return not os.path.exists(name_or_path) and os.sep not in name_or_path and not name_or_path.endswith(".toml")


def read_scenario(name_or_path: str) -> Tuple[Scenario, str]:
    """A shipped scenario by name (iscsi-4k-randwrite, ...) or a user's TOML file by path, and the file's
    text: validated, or refused in one line naming the file (and the key)."""
    path = name_or_path
    if is_shipped(name_or_path):
        path = os.path.join(require(SCENARIO_DIR), name_or_path + ".toml")
        if not os.path.exists(path):
            raise UsageError(f"no scenario {name_or_path!r}: shipped ones are {', '.join(builtin_names())}")
    require_regular(path, "scenario file")
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8")
        doc = tomllib.loads(text)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except OSError as exc:  # permission denied, say
        raise UsageError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML (not UTF-8: {exc.reason} at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML ({exc})") from None
    return parse_scenario(doc, path), text


def load_scenario(name_or_path: str) -> Scenario:
    """A shipped scenario by name (iscsi-4k-randwrite, ...) or a user's TOML file by path."""
    return read_scenario(name_or_path)[0]
