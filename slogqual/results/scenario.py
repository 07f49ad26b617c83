"""The ``slogqual.scenario/1`` document (docs/scenarios.md), typed.

The document keeps the measurements: the scenario's parameters, the pool, every step's fio figures
and ZIL/iostat evidence. Its ``analysis`` is what the run printed (with the analysis version that
produced it); readers recompute it with slogqual.analysis.scenario.current. ``ScenarioResult.load``
validates a file and names the first bad key; ``to_dict`` gives back the document, keys it does not
model included, so a round trip changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from slogqual.results import STATUS_COMPLETE, STATUS_FAILED, STATUS_INTERRUPTED, STATUS_RUNNING, load_json
from slogqual.results import schema as S

STATUSES = (STATUS_RUNNING, STATUS_COMPLETE, STATUS_FAILED, STATUS_INTERRUPTED)
SYNCS = ("standard", "always", "disabled")
LOGS = ("none", "single", "mirror", "stripe")


@dataclass
class ScenarioStep:
    """One thread step of one pool configuration: what fio measured and where the ZIL wrote."""

    config: str
    sync: str
    log: str
    threads_per_lun: int
    threads: int
    ios: int
    iops: float
    mbps: float
    lat_us: Dict[str, Any]
    zil: Dict[str, Any]
    extra: Dict[str, Any] = field(default_factory=dict)  # evidence kept as measured (vdevs, iostat, ...)

    _MODELLED = ("config", "sync", "log", "threads_per_lun", "threads", "ios", "iops", "mbps", "lat_us", "zil")

    @property
    def candidate(self) -> Optional[str]:
        """The log device of a single-SLOG configuration with several candidates (else None)."""
        return self.extra.get("candidate")

    @classmethod
    def from_dict(cls, d: Any, where: str, check: S.Checker) -> "ScenarioStep":
        d = check.table(d, where)
        lat = check.obj(d, "lat_us", where)
        check.number(lat, "mean", f"{where}.lat_us", required=False, minimum=0)
        for k in ("p50", "p99", "p999", "max"):
            check.number(lat, k, f"{where}.lat_us", required=False, minimum=0)
        check.text(d, "candidate", where, required=False)
        zil = check.obj(d, "zil", where)
        for k in ("slog_bytes", "normal_bytes"):
            check.number(zil, k, f"{where}.zil", required=False, minimum=0)
        return cls(config=check.text(d, "config", where), sync=check.text(d, "sync", where, choices=SYNCS),
                   log=check.text(d, "log", where, choices=LOGS),
                   threads_per_lun=check.integer(d, "threads_per_lun", where, minimum=1),
                   threads=check.integer(d, "threads", where, minimum=1),
                   ios=check.integer(d, "ios", where, minimum=0), iops=check.number(d, "iops", where, minimum=0),
                   mbps=check.number(d, "mbps", where, minimum=0), lat_us=lat, zil=zil,
                   extra={k: v for k, v in d.items() if k not in cls._MODELLED})

    def to_dict(self) -> Dict[str, Any]:
        d = {"config": self.config, "sync": self.sync, "log": self.log, "threads_per_lun": self.threads_per_lun,
             "threads": self.threads, "ios": self.ios, "iops": self.iops, "mbps": self.mbps, "lat_us": self.lat_us,
             "zil": self.zil}
        d.update(self.extra)
        return d


@dataclass
class ScenarioResult:
    status: str
    scenario: Dict[str, Any]  # the parameters it ran with (pool.scenario.Scenario.to_dict)
    quick: bool
    pool: Dict[str, Any]
    environment: Dict[str, Any]
    steps: List[ScenarioStep]
    error: Optional[str] = None
    analysis: Optional[Dict[str, Any]] = None  # as stored by the run; see analysis.scenario.current
    warnings: List[str] = field(default_factory=list)
    log_sweeps: Dict[str, Any] = field(default_factory=dict)
    origin: Optional[str] = None  # which command asked for the run (None: before the field existed)
    extra: Dict[str, Any] = field(default_factory=dict)
    schema: str = S.SCENARIO
    absent: frozenset = frozenset()  # optional keys the document did not have (kept absent by to_dict)

    _MODELLED = ("schema", "status", "scenario", "quick", "pool", "environment", "steps", "error", "analysis",
                 "warnings", "log_sweeps", "origin")
    _OPTIONAL = ("error", "analysis", "warnings", "log_sweeps", "origin")

    @classmethod
    def from_dict(cls, doc: Any, source: str = "<document>") -> "ScenarioResult":
        doc = S.upgrade(doc, S.SCENARIO, source)
        c = S.Checker(source)
        sc = c.obj(doc, "scenario")
        c.text(sc, "name", "scenario")
        c.integer(sc, "bs", "scenario", minimum=1)
        c.items(sc, "configs", "scenario")
        pool = c.obj(doc, "pool")
        for key in ("data", "log"):
            for i, dev in enumerate(c.items(pool, key, "pool")):
                if not isinstance(dev, str):
                    raise c.fail(f"pool.{key}[{i}]", "must be a device path (a string)")
        steps = [ScenarioStep.from_dict(s, f"steps[{i}]", c) for i, s in enumerate(c.items(doc, "steps"))]
        analysis = c.obj(doc, "analysis", required=False)
        warnings = c.items(doc, "warnings", required=False)
        return cls(status=c.text(doc, "status", choices=STATUSES), scenario=sc, quick=c.get(doc, "quick", "", (bool,)),
                   pool=pool, environment=c.obj(doc, "environment"), steps=steps,
                   error=c.text(doc, "error", required=False), analysis=analysis, warnings=list(warnings),
                   log_sweeps=c.obj(doc, "log_sweeps", required=False) or {},
                   origin=c.text(doc, "origin", required=False),
                   extra={k: v for k, v in doc.items() if k not in cls._MODELLED}, schema=doc["schema"],
                   absent=frozenset(k for k in cls._OPTIONAL if k not in doc))

    @classmethod
    def load(cls, path: str) -> "ScenarioResult":
        return cls.from_dict(load_json(path), path)

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"schema": self.schema, "status": self.status, "error": self.error,
                             "scenario": self.scenario, "quick": self.quick, "pool": self.pool,
                             "environment": self.environment, "log_sweeps": self.log_sweeps,
                             "steps": [s.to_dict() for s in self.steps], "analysis": self.analysis,
                             "warnings": self.warnings, "origin": self.origin}
        for key in self.absent:
            d.pop(key, None)
        d.update(self.extra)
        return d
