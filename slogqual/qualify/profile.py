"""Qualification profiles: TOML files of pass/fail criteria (scenarios/profiles/, docs/qualify.md).

A profile names the sweep sizes, the steady-state rule and a list of criteria, each one line:

    lat_us.p99 @ 4k <= 100                     a sweep point's statistic at a size
    mbps @ 1m >= 1190
    write_cache == no-volatile-cache           the device record's verdicts
    link == full
    steady_state == reached                    the steady-state gate
    slog_benefit @ iscsi-4k-randwrite >= 2     a pool scenario's analysis

Every error names the file, the line and the key, on one line, so a typo costs one look.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import math
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from slogqual import limits
from slogqual.analysis import powerloss
from slogqual.data import data_path, require
from slogqual.errors import UsageError
from slogqual.paths import require_regular
from slogqual.qualify import steady
from slogqual.units import MAX_SIZE, parse_size, size_label

# runtime and round_runtime: what --runtime and --round-runtime take, and at least 10 ms (the shortest
# round a steady-state rule can judge)
PROFILE_RUNTIME_S = limits.Range(0.01, limits.RUNTIME_S.hi, limits.RUNTIME_S.unit)

PROFILE_DIR = data_path("profiles")  # scenarios/profiles/ of the repository (slogqual.data)

TOP_KEYS = ("name", "description", "sizes", "runtime", "settle", "mode", "precondition", "steady_state", "criterion")
STEADY_KEYS = ("size", "round_runtime", "max_rounds", "window", "range_pct", "slope_pct")
CRITERION_KEYS = ("check", "name", "why")
PRECONDITIONS = ("none", "quick", "full")
MODES = ("flush", "dsync")

# Sweep statistics: "lat_us.p99" etc. (µs), iops (ops/s), mbps (MiB/s), ios (count).
LAT_GROUPS = ("lat_us", "write_lat_us", "flush_lat_us")
# p90 and p9999 exist only where the pair engine measured (raw samples); elsewhere not evaluated.
LAT_STATS = ("mean", "p50", "p90", "p99", "p999", "p9999", "max", "min", "stddev")
STAT_ALIASES = {"p99.9": "p999", "p99_9": "p999", "p99.99": "p9999", "p99_99": "p9999", "median": "p50",
                "avg": "mean"}
SCALAR_METRICS = {"iops": "ops/s", "mbps": "MiB/s", "ios": "IOs"}

# Device record fields and the values a criterion may name (with the aliases people write).
DEVICE_FIELDS: Dict[str, Tuple[str, ...]] = {
    "write_cache": ("no-volatile-cache", "volatile-cache-enabled", "unknown"),
    "link": ("ok", "below-capability", "unknown", "not-applicable"),
    "controller_link": ("ok", "below-capability", "unknown", "not-applicable", "none"),
    "class": ("hdd", "sshd", "sata-ssd", "sas-ssd", "nvme", "optane", "nvdimm", "virtual", "unknown"),
    "transport": ("sata", "sas", "scsi", "nvme", "pmem", "virtio", "loop", "nbd", "file", "usb", "md", "dm",
                  "ram", "unknown"),
    # analysis.powerloss verdicts: measured by a power cut, reported by the device, or inferred
    "power_loss": powerloss.VERDICTS,
}
VALUE_ALIASES = {"link": {"full": "ok", "degraded": "below-capability"},
                 "controller_link": {"full": "ok", "degraded": "below-capability"},
                 "write_cache": {"plp": "no-volatile-cache", "none": "no-volatile-cache",
                                 "volatile": "volatile-cache-enabled"},
                 "power_loss": {"protected": "protected-measured", "lost": "flushes-not-honoured"}}
STEADY_VALUES = ("reached", "not-reached")

# Scenario analysis figures (slogqual.scenario/1 "analysis" keys).
SCENARIO_METRICS = {"slog_benefit": "slog_benefit_at_peak", "slog_of_standard": "slog_of_standard_at_peak"}

OPS = ("<=", ">=", "==", "!=", "<", ">")
NUMERIC_OPS = ("<=", ">=", "<", ">")

KIND_SWEEP, KIND_DEVICE, KIND_STEADY, KIND_SCENARIO = "sweep", "device", "steady_state", "scenario"

_CHECK_RE = re.compile(r"^\s*(?P<metric>[A-Za-z_][A-Za-z0-9_.]*)\s*(?:@\s*(?P<at>[^<>=!\s]+)\s*)?"
                       r"(?P<op><=|>=|==|!=|<|>|\bin\b)\s*(?P<value>.+?)\s*$")


@dataclass
class Criterion:
    check: str
    kind: str
    metric: str  # sweep: "lat_us.p99" | "iops" ...; device: field; scenario: analysis key; steady: "steady_state"
    op: str
    threshold: Any  # float, or a str / tuple of str for device fields
    size: Optional[int] = None
    scenario: Optional[str] = None
    name: Optional[str] = None
    why: Optional[str] = None
    line: Optional[int] = None

    @property
    def unit(self) -> str:
        if self.kind == KIND_SWEEP:
            return "µs" if "." in self.metric else SCALAR_METRICS[self.metric]
        if self.kind == KIND_SCENARIO:
            return "×"
        return ""

    @property
    def title(self) -> str:
        return self.name or self.check

    def to_dict(self) -> Dict[str, Any]:
        return {"check": self.check, "name": self.name, "why": self.why, "kind": self.kind, "metric": self.metric,
                "size": self.size, "scenario": self.scenario, "op": self.op,
                "threshold": list(self.threshold) if isinstance(self.threshold, tuple) else self.threshold,
                "unit": self.unit, "line": self.line}


@dataclass
class Profile:
    name: str
    path: str
    description: str = ""
    sizes: List[int] = field(default_factory=list)
    runtime_s: float = 1.0
    settle_s: float = 1.0
    mode: str = "flush"
    precondition: str = "none"
    steady_size: int = 4096
    round_runtime_s: float = 1.0
    max_rounds: int = steady.MAX_ROUNDS
    window: int = steady.WINDOW
    range_fraction: float = steady.RANGE_FRACTION
    slope_fraction: float = steady.SLOPE_FRACTION
    criteria: List[Criterion] = field(default_factory=list)
    digest: str = ""

    @property
    def scenarios(self) -> List[str]:
        out: List[str] = []
        for c in self.criteria:
            if c.kind == KIND_SCENARIO and c.scenario not in out:
                out.append(c.scenario)
        return out

    def criterion_sizes(self) -> List[int]:
        return sorted({c.size for c in self.criteria if c.kind == KIND_SWEEP})

    def to_dict(self) -> Dict[str, Any]:
        return {"name": self.name, "path": self.path, "sha256": self.digest, "description": self.description,
                "sizes": list(self.sizes), "runtime_s": self.runtime_s, "settle_s": self.settle_s, "mode": self.mode,
                "precondition": self.precondition,
                "steady_state": {"size": self.steady_size, "round_runtime_s": self.round_runtime_s,
                                 "max_rounds": self.max_rounds, "window": self.window,
                                 "range_fraction": self.range_fraction, "slope_fraction": self.slope_fraction},
                "criteria": [c.to_dict() for c in self.criteria]}


# --- line finding: tomllib gives values, not positions ----------------------------------------

_HEADER_RE = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\"' ]+?)\s*(\]\]?)\s*(?:#.*)?$")


class _Lines:
    """Where keys sit in the TOML text: top-level, [table] and the n-th [[array]] entry."""

    def __init__(self, text: str):
        self.text = text
        self.sections: List[Tuple[str, int, int]] = []  # (name, index within arrays, header line)
        self.keys: Dict[Tuple[str, int], Dict[str, int]] = {("", 0): {}}
        counts: Dict[str, int] = {}
        current = ("", 0)
        for no, raw in enumerate(text.splitlines(), 1):
            m = _HEADER_RE.match(raw)
            if m and raw.strip().startswith("["):
                name = m.group(2).strip().strip("\"'")
                if m.group(1) == "[[":
                    idx = counts.get(name, 0)
                    counts[name] = idx + 1
                else:
                    idx = 0
                current = (name, idx)
                self.sections.append((name, idx, no))
                self.keys.setdefault(current, {})["__header__"] = no
                continue
            km = re.match(r"^\s*([A-Za-z0-9_\-]+|\"[^\"]*\"|'[^']*')\s*=", raw)
            if km:
                self.keys.setdefault(current, {}).setdefault(km.group(1).strip("\"'"), no)

    def line(self, section: str = "", index: int = 0, key: Optional[str] = None) -> Optional[int]:
        keys = self.keys.get((section, index), {})
        if key is not None and key in keys:
            return keys[key]
        return keys.get("__header__")


def _err(path: str, line: Optional[int], key: str, message: str) -> UsageError:
    where = f"{path}:{line}" if line else path
    return UsageError(f"{where}: {key}: {message}")


def _suggest(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(choices)})"


# --- criteria ------------------------------------------------------------------------------------

def _number(text: str) -> float:
    t = text.strip().replace("_", "").replace(",", "")
    m = re.match(r"^([-+]?\d+(?:\.\d*)?|[-+]?\.\d+)(?:[eE][-+]?\d+)?$", t)
    if not m or not math.isfinite(float(t)):  # 1e309 matches and is inf
        raise ValueError(f"{text!r} is not a number")
    return float(t)


def parse_check(text: str, scenario_names: Optional[Sequence[str]] = None) -> Criterion:
    """One criterion line -> Criterion; ValueError with a short reason otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty criterion")
    m = _CHECK_RE.match(text)
    if not m:
        raise ValueError(f"cannot read {text!r}: write METRIC [@ WHERE] OP VALUE, e.g. 'lat_us.p99 @ 4k <= 100'")
    metric, at, op, value = m.group("metric"), m.group("at"), m.group("op"), m.group("value")
    head = metric.split(".")[0]
    if head in LAT_GROUPS or metric in SCALAR_METRICS:
        if head in LAT_GROUPS:
            parts = metric.split(".", 1)
            if len(parts) == 1:
                raise ValueError(f"{metric}: name a statistic, e.g. {metric}.p99 ({', '.join(LAT_STATS)})")
            stat = STAT_ALIASES.get(parts[1], parts[1])
            if stat not in LAT_STATS:
                raise ValueError(f"unknown statistic {parts[1]!r}{_suggest(parts[1], LAT_STATS)}")
            metric = f"{head}.{stat}"
        if not at:
            raise ValueError(f"{metric} needs a size: '{metric} @ 4k {op} {value}'")
        try:
            size = parse_size(at)
        except UsageError:
            raise ValueError(f"bad size {at!r} (use e.g. 4k, 128k, 1m)") from None
        if size <= 0 or size % 512 or size > MAX_SIZE:
            raise ValueError(f"size {at} is not a sweep size (a multiple of 512 B up to 8 MiB)")
        if op not in NUMERIC_OPS:
            raise ValueError(f"{metric} is a number: use one of {', '.join(NUMERIC_OPS)}")
        return Criterion(text.strip(), KIND_SWEEP, metric, op, _number(value), size=size)
    if metric in DEVICE_FIELDS:
        if at:
            raise ValueError(f"{metric} is a device verdict: no '@'")
        if op not in ("==", "!=", "in"):
            raise ValueError(f"{metric} is a verdict: use ==, != or in")
        raw = [v.strip().strip("\"'") for v in re.split(r"[,\s]+", value.strip().strip("[]")) if v.strip()]
        vals = []
        for v in raw:
            v = VALUE_ALIASES.get(metric, {}).get(v, v)
            if v not in DEVICE_FIELDS[metric]:
                choices = list(DEVICE_FIELDS[metric]) + list(VALUE_ALIASES.get(metric, {}))
                raise ValueError(f"{metric} has no value {v!r}{_suggest(v, choices)}")
            vals.append(v)
        if not vals or (op != "in" and len(vals) != 1):
            raise ValueError(f"{metric} {op} needs {'values' if op == 'in' else 'one value'}")
        return Criterion(text.strip(), KIND_DEVICE, metric, op, tuple(vals) if op == "in" else vals[0])
    if metric == "steady_state":
        v = value.strip().strip("\"'")
        if op not in ("==", "!=") or v not in STEADY_VALUES:
            raise ValueError(f"write 'steady_state == reached' (values: {', '.join(STEADY_VALUES)})")
        return Criterion(text.strip(), KIND_STEADY, metric, op, v)
    if metric in SCENARIO_METRICS:
        if not at:
            raise ValueError(f"{metric} needs a scenario: '{metric} @ iscsi-4k-randwrite {op} {value}'")
        if scenario_names is not None and at not in scenario_names:
            raise ValueError(f"unknown scenario {at!r}{_suggest(at, scenario_names)}")
        if op not in NUMERIC_OPS:
            raise ValueError(f"{metric} is a number: use one of {', '.join(NUMERIC_OPS)}")
        return Criterion(text.strip(), KIND_SCENARIO, metric, op, _number(value), scenario=at)
    known = [f"{g}.STAT" for g in LAT_GROUPS] + list(SCALAR_METRICS) + list(DEVICE_FIELDS) + ["steady_state"] \
        + list(SCENARIO_METRICS)
    flat = [f"{g}.{s}" for g in LAT_GROUPS for s in LAT_STATS] + list(SCALAR_METRICS) + list(DEVICE_FIELDS) \
        + ["steady_state"] + list(SCENARIO_METRICS)
    close = difflib.get_close_matches(metric, flat, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(known)})"
    raise ValueError(f"unknown metric {metric!r}{hint}")


def _scenario_names() -> Optional[List[str]]:
    try:
        from slogqual.pool.scenario import builtin_names
        return builtin_names()
    except Exception:  # the scenario catalogue is not readable: names are checked when the scenario runs
        return None


# --- the profile ---------------------------------------------------------------------------------

def resolve_path(name_or_path: str) -> str:
    if os.path.exists(name_or_path):
        return name_or_path
    if os.sep not in name_or_path and not name_or_path.endswith(".toml"):
        p = os.path.join(require(PROFILE_DIR), name_or_path + ".toml")
        if os.path.exists(p):
            return p
    names = builtin_names()
    raise UsageError(f"no profile {name_or_path!r}: give a TOML file or one of: {', '.join(names) or '(none)'}")


def builtin_names() -> List[str]:
    if not os.path.isdir(PROFILE_DIR):
        return []
    return sorted(f[:-5] for f in os.listdir(PROFILE_DIR) if f.endswith(".toml"))


def load(name_or_path: str) -> Profile:
    path = resolve_path(name_or_path)
    require_regular(path, "profile file")
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the profile: {exc.strerror}") from None
    return parse(raw.decode("utf-8", errors="replace"), path, hashlib.sha256(raw).hexdigest())


class _Reader:
    """One profile file being read: its path and lines, so that every refusal names the line of its key."""

    def __init__(self, path: str, text: str):
        self.path, self.lines = path, _Lines(text)

    def fail(self, key: str, message: str, section: str = "", index: int = 0, label: Optional[str] = None):
        return _err(self.path, self.lines.line(section, index, key), label or key, message)

    def num(self, table: Dict, key: str, section: str, limit: limits.Range, label: Optional[str] = None):
        """A number held to ``limit``: the range the command line's option takes (slogqual.limits)."""
        v = table[key]
        if limit.integer and isinstance(v, float):  # 25.0: TOML's float is not a count of rounds
            why = f"must be a whole number, not {v!r} ({limit.allowed()})"
        else:
            why = limit.why_not(v)  # a bool, NaN or inf (TOML has all three) is refused here too
        if why:
            raise self.fail(key, why, section, label=label)
        return v

    def sweep_size(self, value: Any, key: str, section: str = "", label: Optional[str] = None) -> int:
        """A size a sweep can write: a multiple of 512 B up to 8 MiB."""
        try:
            b = parse_size(str(value))
        except (UsageError, ValueError):  # ValueError: more digits than int() converts
            raise self.fail(key, f"bad size {value!r}", section, label=label) from None
        if b <= 0 or b % 512 or b > MAX_SIZE:
            raise self.fail(key, f"{value} is not a sweep size (a multiple of 512 B up to 8 MiB)", section,
                            label=label)
        return b


def parse(text: str, path: str = "<profile>", digest: str = "") -> Profile:
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise _err(path, int(m.group(1)) if m else None, "TOML", str(exc)) from None
    r = _Reader(path, text)
    for key in table:
        if key not in TOP_KEYS:
            raise r.fail(key, "unknown key" + _suggest(key, TOP_KEYS))
    name = table.get("name") or os.path.basename(path).removesuffix(".toml")
    if not isinstance(name, str):
        raise r.fail("name", "must be a string")
    p = Profile(name=name, path=os.path.abspath(path) if os.path.exists(path) else path, digest=digest,
                description=str(table.get("description") or ""))
    _top_level(r, table, p)
    _steady_state(r, table, p)
    _criteria(r, table, p)
    needed = p.criterion_sizes()
    if p.sizes:
        check_sizes(p, p.sizes, "sizes")
    else:
        p.sizes = needed or [p.steady_size]
    return p


def _top_level(r: _Reader, table: Dict, p: Profile) -> None:
    if "runtime" in table:
        p.runtime_s = float(r.num(table, "runtime", "", PROFILE_RUNTIME_S))
    if "settle" in table:
        p.settle_s = float(r.num(table, "settle", "", limits.SETTLE_S))
    if "mode" in table:
        if table["mode"] not in MODES:
            raise r.fail("mode", f"must be one of {', '.join(MODES)}, not {table['mode']!r}")
        p.mode = table["mode"]
    if "precondition" in table:
        if table["precondition"] not in PRECONDITIONS:
            raise r.fail("precondition", f"must be one of {', '.join(PRECONDITIONS)}, not {table['precondition']!r}")
        p.precondition = table["precondition"]
    if "sizes" in table:
        sizes = table["sizes"]
        if not isinstance(sizes, list) or not sizes:
            raise r.fail("sizes", "must be a list of sizes, e.g. [\"4k\", \"128k\"]")
        p.sizes = sorted({r.sweep_size(s, "sizes") for s in sizes})


def _steady_state(r: _Reader, table: Dict, p: Profile) -> None:
    st = table.get("steady_state", {})
    if not isinstance(st, dict):
        raise r.fail("steady_state", "must be a table: [steady_state]")
    for key in st:
        if key not in STEADY_KEYS:
            raise r.fail(key, "unknown key" + _suggest(key, STEADY_KEYS), "steady_state", label=f"steady_state.{key}")
    if "size" in st:
        p.steady_size = r.sweep_size(st["size"], "size", "steady_state", label="steady_state.size")

    def num(key: str, limit: limits.Range):
        return r.num(st, key, "steady_state", limit, label=f"steady_state.{key}")

    if "round_runtime" in st:
        p.round_runtime_s = float(num("round_runtime", PROFILE_RUNTIME_S))
    if "max_rounds" in st:
        p.max_rounds = int(num("max_rounds", limits.MAX_ROUNDS))
    if "window" in st:
        p.window = int(num("window", limits.WINDOW))
    if "range_pct" in st:
        p.range_fraction = float(num("range_pct", limits.PERCENT)) / 100
    if "slope_pct" in st:
        p.slope_fraction = float(num("slope_pct", limits.PERCENT)) / 100


def _criteria(r: _Reader, table: Dict, p: Profile) -> None:
    crit = table.get("criterion", [])
    if not isinstance(crit, list) or not all(isinstance(c, dict) for c in crit):
        raise r.fail("criterion", "must be an array of tables: [[criterion]] with check = \"...\"")
    if not crit:
        raise _err(r.path, None, "criterion", "the profile has no [[criterion]]: nothing to judge")
    names = None
    for i, c in enumerate(crit):
        label = f"criterion[{i + 1}]"
        for key in c:
            if key not in CRITERION_KEYS:
                raise r.fail(key, "unknown key" + _suggest(key, CRITERION_KEYS), "criterion", i, f"{label}.{key}")
        if "check" not in c:
            raise r.fail("check", "missing: every [[criterion]] needs check = \"...\"", "criterion", i, f"{label}.check")
        for key in ("name", "why"):
            if key in c and not isinstance(c[key], str):
                raise r.fail(key, "must be a string", "criterion", i, f"{label}.{key}")
        if names is None and isinstance(c["check"], str) and "@" in c["check"] \
                and c["check"].split()[0] in SCENARIO_METRICS:
            names = _scenario_names()
        try:
            cr = parse_check(c["check"], names)
        except ValueError as exc:
            raise r.fail("check", str(exc), "criterion", i, f"{label}.check") from None
        cr.name, cr.why = c.get("name"), c.get("why")
        cr.line = r.lines.line("criterion", i, "check")
        p.criteria.append(cr)


def check_sizes(p: Profile, sizes: Sequence[int], source: str) -> None:
    """Every sweep criterion must sit on a measured size: one-line error otherwise."""
    for c in p.criteria:
        if c.kind == KIND_SWEEP and c.size not in sizes:
            idx = p.criteria.index(c) + 1
            raise _err(p.path, c.line, f"criterion[{idx}].check",
                       f"size {size_label(c.size)} is not measured ({source} = "
                       f"{', '.join(size_label(s) for s in sizes)}): add it or drop the criterion")
