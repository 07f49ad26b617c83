"""The ``slogqual.advice/1`` document (docs/advisor.md), typed.

What ``slogqual advise`` predicts for each log candidate (slogqual.analysis.advisor): the workload and
OpenZFS tunables it assumed, the data side, per thread count the three limits, the binding one and the
figure with its spread, the findings, the log space and the life. ``AdviceResult.load`` validates a
file and names the first bad key; ``to_dict`` gives back the document, keys it does not model included,
so a round trip changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from slogqual.results import load_json
from slogqual.results import schema as S

PROTOCOLS = ("iscsi", "nfs")
BINDINGS = ("log-latency-bound", "log-bandwidth-bound", "pool-bound", "indirect-bypass")
KINDS = BINDINGS + ("no-benefit", "log-too-small", "short-life", "extrapolated", "power-loss-unsafe",
                    "unmirrored-exposure", "no-power-loss-evidence", "host-cpu-saturated")


@dataclass
class StepPrediction:
    threads: int
    iops: float
    mbps: float
    binding: str
    extra: Dict[str, Any] = field(default_factory=dict)

    _MODELLED = ("threads", "iops", "mbps", "binding")

    @classmethod
    def from_dict(cls, d: Any, where: str, c: S.Checker) -> "StepPrediction":
        d = c.table(d, where)
        c.obj(d, "limits", where)
        c.number(d, "commit_lat_us", where, minimum=0)
        return cls(threads=c.integer(d, "threads", where, minimum=1), iops=c.number(d, "iops", where, minimum=0),
                   mbps=c.number(d, "mbps", where, minimum=0), binding=c.text(d, "binding", where, choices=BINDINGS),
                   extra={k: v for k, v in d.items() if k not in cls._MODELLED})

    def to_dict(self) -> Dict[str, Any]:
        return {"threads": self.threads, "iops": self.iops, "mbps": self.mbps, "binding": self.binding, **self.extra}


@dataclass
class CandidateAdvice:
    path: Optional[str]
    steps: List[StepPrediction]
    findings: List[Dict[str, Any]]
    extra: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Any, where: str, c: S.Checker) -> "CandidateAdvice":
        d = c.table(d, where)
        steps = [StepPrediction.from_dict(s, f"{where}.steps[{i}]", c) for i, s in enumerate(c.items(d, "steps", where))]
        findings = c.items(d, "findings", where)
        for i, f in enumerate(findings):
            at = f"{where}.findings[{i}]"
            c.table(f, at)
            c.text(f, "kind", at, choices=KINDS)
            c.items(f, "figures", at)
        c.obj(d, "size", where)
        c.obj(d, "life", where, required=False)
        return cls(path=c.text(d, "path", where, required=False), steps=steps, findings=list(findings),
                   extra={k: v for k, v in d.items() if k not in ("path", "steps", "findings")})

    def to_dict(self) -> Dict[str, Any]:
        return {"path": self.path, **self.extra, "steps": [s.to_dict() for s in self.steps],
                "findings": self.findings}


@dataclass
class AdviceResult:
    workload: Dict[str, Any]
    tunables: Dict[str, Any]
    data: Dict[str, Any]
    candidates: List[CandidateAdvice]
    assumptions: List[str]
    warnings: List[str]
    origin: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)
    schema: str = S.ADVICE

    _MODELLED = ("schema", "workload", "tunables", "data", "candidates", "assumptions", "warnings", "origin")

    @classmethod
    def from_dict(cls, doc: Any, source: str = "<document>") -> "AdviceResult":
        doc = S.upgrade(doc, S.ADVICE, source)
        c = S.Checker(source)
        w = c.obj(doc, "workload")
        c.text(w, "protocol", "workload", choices=PROTOCOLS)
        c.integer(w, "io_size", "workload", minimum=1)
        c.integer(w, "block_size", "workload", minimum=1)
        c.number(w, "rate_mbps", "workload", required=False, minimum=0)
        t = c.obj(doc, "tunables")
        for k in ("zfs_immediate_write_sz", "zil_slog_bulk", "zil_maxblocksize", "zil_maxcopied"):
            c.integer(t, k, "tunables", minimum=0)
        c.number(t, "zfs_txg_timeout", "tunables", minimum=0)
        c.text(t, "logbias", "tunables", choices=("latency", "throughput"))
        cands = [CandidateAdvice.from_dict(x, f"candidates[{i}]", c) for i, x in enumerate(c.items(doc, "candidates"))]
        return cls(workload=w, tunables=t, data=c.obj(doc, "data"), candidates=cands,
                   assumptions=c.texts(doc, "assumptions", required=True), warnings=c.texts(doc, "warnings"),
                   origin=c.text(doc, "origin", required=False),
                   extra={k: v for k, v in doc.items() if k not in cls._MODELLED}, schema=doc["schema"])

    @classmethod
    def load(cls, path: str) -> "AdviceResult":
        return cls.from_dict(load_json(path), path)

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"schema": self.schema}
        if "model_version" in self.extra:
            out["model_version"] = self.extra["model_version"]
        out.update({"workload": self.workload, "tunables": self.tunables})
        if "endurance" in self.extra:
            out["endurance"] = self.extra["endurance"]
        out.update({"data": self.data, "assumptions": self.assumptions,
                    "candidates": [x.to_dict() for x in self.candidates], "warnings": self.warnings,
                    "origin": self.origin})
        for k, v in self.extra.items():
            out.setdefault(k, v)
        return out
