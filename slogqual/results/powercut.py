"""The ``slogqual.powercut/1`` document (docs/powercut.md), typed.

One per ``slogqual powercut run`` (or ``verify``): the target and how the power was cut, one entry per
cycle with the acknowledged records the recorder holds and what verify found of them (intact, torn,
stale, missing; lost = the last three), and the verdict: ``fail`` when any acknowledged record was lost,
``pass`` when every cycle was verified with none lost, ``incomplete`` otherwise (interrupted, a cycle
that acknowledged nothing, a cut that failed). ``PowercutResult.load`` validates a file and names the
first bad key; ``to_dict`` gives back the document unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from slogqual.results import device as D
from slogqual.results import load_json
from slogqual.results import schema as S

SCHEMA = S.POWERCUT
SCHEMA_PREFIX = S.prefix(S.POWERCUT)
VERDICTS = ("pass", "fail", "incomplete")
STATUSES = ("running", "complete", "interrupted", "failed")
COUNTS = ("acknowledged", "intact", "torn", "stale", "missing", "lost")
LOST_STATES = ("torn", "stale", "missing")


@dataclass(frozen=True)
class LostRecord:
    """One acknowledged record verify found torn, stale or missing (a cycle keeps the first 100)."""

    seq: Any
    offset: Any
    size: Any
    state: Any


@dataclass
class CycleResult:
    cycle: int
    acknowledged: int
    intact: int
    torn: int
    stale: int
    missing: int
    lost_records: List[Dict[str, Any]] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict)  # writer_end, cut, times

    @property
    def lost(self) -> int:
        return self.torn + self.stale + self.missing

    @property
    def writer_end(self) -> Optional[str]:
        """How the writer ended at the cut (the recorder's words); None when not recorded."""
        return self.extra.get("writer_end")

    @property
    def records_lost(self) -> List[LostRecord]:
        """``lost_records``, typed."""
        return [LostRecord(r.get("seq"), r.get("offset"), r.get("size"), r.get("state")) for r in self.lost_records]

    @classmethod
    def from_dict(cls, d: Any, where: str, c: S.Checker) -> "CycleResult":
        d = c.table(d, where)
        n = {k: c.integer(d, k, where, minimum=0) for k in COUNTS}
        if n["intact"] + n["lost"] != n["acknowledged"]:
            raise c.fail(f"{where}.acknowledged", f"must equal intact + lost ({n['intact']} + {n['lost']}), "
                                                  f"not {n['acknowledged']}")
        if n["torn"] + n["stale"] + n["missing"] != n["lost"]:
            raise c.fail(f"{where}.lost", "must equal torn + stale + missing")
        lost = c.items(d, "lost_records", where, required=False)
        for i, r in enumerate(lost):
            w = f"{where}.lost_records[{i}]"
            r = c.table(r, w)
            for k in ("seq", "offset", "size"):
                c.integer(r, k, w, minimum=0)
            c.text(r, "state", w, choices=LOST_STATES)
        return cls(cycle=c.integer(d, "cycle", where, minimum=1), acknowledged=n["acknowledged"],
                   intact=n["intact"], torn=n["torn"], stale=n["stale"], missing=n["missing"], lost_records=lost,
                   extra={k: v for k, v in d.items() if k not in ("cycle", "lost_records") + COUNTS})

    def to_dict(self) -> Dict[str, Any]:
        return {"cycle": self.cycle, "acknowledged": self.acknowledged, "intact": self.intact, "torn": self.torn,
                "stale": self.stale, "missing": self.missing, "lost": self.lost,
                "lost_records": list(self.lost_records), **self.extra}


def verdict_of(cycles: List[CycleResult], expected_cycles: int, status: str) -> str:
    """fail: any acknowledged record lost; pass: every cycle verified, each with acknowledged records and
    none lost; incomplete: anything else."""
    if any(cy.lost for cy in cycles):
        return "fail"
    if status == "complete" and len(cycles) >= expected_cycles and cycles and all(cy.acknowledged for cy in cycles):
        return "pass"
    return "incomplete"


@dataclass
class PowercutResult:
    run_id: str
    target: Dict[str, Any]  # {"path", "kind"}: what was written; "verified": what verify read
    method: Dict[str, Any]  # {"cut", "emulation", "recorder", "sizes", "cut_after", "flush", "direct"}
    cycles: List[CycleResult] = field(default_factory=list)
    expected_cycles: int = 1
    status: str = "running"
    verdict: str = "incomplete"
    device: Optional[Dict[str, Any]] = None
    error: Optional[str] = None
    notes: List[str] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict)
    schema: str = SCHEMA

    _MODELLED = ("schema", "run_id", "target", "method", "cycles", "expected_cycles", "status", "verdict",
                 "device", "error", "notes", "totals")

    @property
    def target_path(self) -> str:
        """What was written (or, for verify, read)."""
        return self.target["path"]

    @property
    def target_kind(self) -> Any:
        """What kind of target was written (device, file, emulated); ``"?"`` when not recorded."""
        return self.target.get("kind", "?")

    @property
    def emulation(self) -> Optional[str]:
        """How an emulated device cached (unsafe, writeback, none); None for a real or external cut."""
        return self.method.get("emulation")

    @property
    def emulation_means(self) -> Optional[str]:
        """The emulation in words (what nbdkit's cache filter did)."""
        return self.method.get("emulation_means")

    @property
    def cut(self) -> Optional[str]:
        """How the power was cut: ``--cut-cmd ...``, the emulation's SIGKILL, or ``external (verified afterwards)``."""
        return self.method.get("cut")

    @property
    def restore(self) -> Optional[str]:
        """The user's command that gave the power back (``--restore-cmd``), if any."""
        return self.method.get("restore")

    @property
    def sizes(self) -> List[int]:
        """The record sizes written, in bytes."""
        return list(self.method.get("sizes") or [])

    @property
    def method_settings(self) -> List[Tuple[str, Any]]:
        """(key, value) of the writer's settings in the method: recorder, cut_after, flush, direct."""
        return [(k, self.method.get(k)) for k in ("recorder", "cut_after", "flush", "direct")]

    @property
    def lab_class(self) -> Optional[str]:
        """The lab device class that was cut (``slogqual lab powercut``); None elsewhere."""
        return self.target.get("lab_class")

    @property
    def started(self) -> Optional[str]:
        return self.extra.get("started")

    @property
    def finished(self) -> Optional[str]:
        return self.extra.get("finished")

    @property
    def host(self) -> Optional[str]:
        """The host that ran the test (a power-cut result has no environment block: it is top-level)."""
        return self.extra.get("host")

    @property
    def version(self) -> Optional[str]:
        """The slogqual version that wrote the result (its ``slogqual`` key)."""
        return self.extra.get("slogqual")

    @property
    def totals(self) -> Dict[str, int]:
        """The counts summed from the cycles (the document's own ``totals`` are not read)."""
        return {k: sum(getattr(cy, k) for cy in self.cycles) for k in COUNTS}

    def judge(self) -> str:
        self.verdict = verdict_of(self.cycles, self.expected_cycles, self.status)
        return self.verdict

    @classmethod
    def from_dict(cls, doc: Any, source: str = "<document>") -> "PowercutResult":
        doc = S.upgrade(doc, S.POWERCUT, source)
        c = S.Checker(source)
        target = c.obj(doc, "target")
        c.text(target, "path", "target")
        method = c.obj(doc, "method")
        c.text(method, "cut", "method")
        sizes = c.items(method, "sizes", "method")
        for i, s in enumerate(sizes):
            if isinstance(s, bool) or not isinstance(s, int) or s <= 0:
                raise c.fail(f"method.sizes[{i}]", "must be a positive number of bytes")
        c.text(method, "emulation", "method", required=False, choices=("unsafe", "writeback", "none"))
        cycles = [CycleResult.from_dict(x, f"cycles[{i}]", c) for i, x in enumerate(c.items(doc, "cycles"))]
        device = c.obj(doc, "device", required=False)
        if device is not None:
            D.check_record(c, device)
        out = cls(run_id=c.text(doc, "run_id"), target=target, method=method, cycles=cycles,
                  expected_cycles=c.integer(doc, "expected_cycles", minimum=1),
                  status=c.text(doc, "status", choices=STATUSES), verdict=c.text(doc, "verdict", choices=VERDICTS),
                  device=device, error=c.text(doc, "error", required=False), notes=c.texts(doc, "notes"),
                  extra={k: v for k, v in doc.items() if k not in cls._MODELLED}, schema=doc["schema"])
        if out.verdict != verdict_of(cycles, out.expected_cycles, out.status):
            raise c.fail("verdict", f"must be {verdict_of(cycles, out.expected_cycles, out.status)!r} for these "
                                    f"cycles, not {out.verdict!r}")
        return out

    @classmethod
    def load(cls, path: str) -> "PowercutResult":
        return cls.from_dict(load_json(path), path)

    def to_dict(self) -> Dict[str, Any]:
        return {"schema": self.schema, "run_id": self.run_id, "status": self.status, "verdict": self.verdict,
                "expected_cycles": self.expected_cycles, "error": self.error, "target": self.target,
                "method": self.method, "totals": self.totals, "cycles": [cy.to_dict() for cy in self.cycles],
                "device": self.device, "notes": list(self.notes), **self.extra}
