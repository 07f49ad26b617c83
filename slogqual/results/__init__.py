"""The versioned result documents and their JSON round trip.

No process is started here and nothing but result files is touched, so that
analysis and reporting can depend on this module alone. The sweep document
is specified in docs/results.md; its schema string is ``slogqual.sweep/1``.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional

from slogqual.errors import UsageError

from slogqual.results import schema as _schema

SWEEP_SCHEMA = _schema.SWEEP  # every schema name lives in results/schema.py
SWEEP_SCHEMA_PREFIX = _schema.prefix(SWEEP_SCHEMA)  # any version: what -o may replace

# How the per-IO latency figures of a point were obtained (see docs/results.md).
LAT_BASIS_COMPLETION = "completion"  # fio timed each IO as the application waits for it
LAT_BASIS_FLUSH_BOUND = "write+flush"  # mean exact; percentiles/max are upper bounds

STATUS_RUNNING = "running"
STATUS_COMPLETE = "complete"
STATUS_FAILED = "failed"
STATUS_INTERRUPTED = "interrupted"


@dataclass
class LatencyStats:
    """Latency figures in microseconds."""

    mean: float
    p50: Optional[float] = None
    p99: Optional[float] = None
    p999: Optional[float] = None
    max: Optional[float] = None
    min: Optional[float] = None
    stddev: Optional[float] = None

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "LatencyStats":
        return cls(**{k: d.get(k) for k in ("mean", "p50", "p99", "p999", "max", "min", "stddev")})


@dataclass
class SweepPoint:
    """One IO size of a sweep: QD1 synchronous writes for a fixed runtime."""

    size: int
    ios: int
    lat_us: LatencyStats
    iops: float
    mbps: float  # MiB/s (2**20 bytes/s), the unit of diskinfo's "Mbytes/s"
    runtime_ms: Optional[float] = None
    lat_basis: str = LAT_BASIS_COMPLETION
    write_lat_us: Optional[LatencyStats] = None
    flush_lat_us: Optional[LatencyStats] = None
    started: Optional[str] = None
    notes: List[str] = field(default_factory=list)

    def to_dict(self) -> Dict[str, Any]:
        d = asdict(self)
        for key in ("write_lat_us", "flush_lat_us"):
            if d[key] is None:
                del d[key]
        if not d["notes"]:
            del d["notes"]
        return d

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "SweepPoint":
        def stats(key):
            return LatencyStats.from_dict(d[key]) if d.get(key) else None

        return cls(
            size=int(d["size"]),
            ios=int(d["ios"]),
            lat_us=LatencyStats.from_dict(d["lat_us"]),
            iops=float(d["iops"]),
            mbps=float(d["mbps"]),
            runtime_ms=d.get("runtime_ms"),
            lat_basis=d.get("lat_basis", LAT_BASIS_COMPLETION),
            write_lat_us=stats("write_lat_us"),
            flush_lat_us=stats("flush_lat_us"),
            started=d.get("started"),
            notes=list(d.get("notes") or []),
        )


@dataclass
class SweepResult:
    """A whole sweep of one target: identity, parameters, environment, points."""

    target: Dict[str, Any]
    params: Dict[str, Any]
    environment: Dict[str, Any]
    points: List[SweepPoint] = field(default_factory=list)
    device: Optional[Dict[str, Any]] = None
    source: str = "slogqual"
    status: str = STATUS_RUNNING
    error: Optional[str] = None
    notes: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    schema: str = SWEEP_SCHEMA

    def point(self, size: int) -> Optional[SweepPoint]:
        for p in self.points:
            if p.size == size:
                return p
        return None

    def add_point(self, point: SweepPoint) -> None:
        self.points = [p for p in self.points if p.size != point.size] + [point]
        self.points.sort(key=lambda p: p.size)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "schema": self.schema,
            "source": self.source,
            "status": self.status,
            "error": self.error,
            "target": self.target,
            "device": self.device,
            "params": self.params,
            "environment": self.environment,
            "notes": self.notes,
            "warnings": self.warnings,
            "points": [p.to_dict() for p in self.points],
        }

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "SweepResult":
        if not isinstance(d, dict) or d.get("schema") != SWEEP_SCHEMA:
            got = d.get("schema") if isinstance(d, dict) else type(d).__name__
            raise UsageError(f"not a {SWEEP_SCHEMA} document (schema: {got!r})")
        try:
            return cls(
                schema=d["schema"],
                source=d.get("source", "slogqual"),
                status=d.get("status", STATUS_COMPLETE),
                error=d.get("error"),
                target=dict(d["target"]),
                device=d.get("device"),
                params=dict(d["params"]),
                environment=dict(d.get("environment") or {}),
                notes=list(d.get("notes") or []),
                warnings=list(d.get("warnings") or []),
                points=sorted((SweepPoint.from_dict(p) for p in d.get("points") or []), key=lambda p: p.size),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"malformed {SWEEP_SCHEMA} document: {exc!r}") from None


def write_json_atomic(path: str, document: Dict[str, Any]) -> None:
    """Write JSON so that a reader (or a crash) sees the old file or the new one, never half.

    The temporary file lives in the same directory (rename is atomic only
    within a filesystem) and is fsynced before the rename; the directory is
    fsynced after it so the rename itself survives a power cut.
    """
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".slogqual-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(document, fh, indent=2, sort_keys=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _not_json(token: str):
    """Python's json reads NaN, Infinity and -Infinity, which JSON does not have; a measurement holding
    one is broken, and `compare` would call NaN against anything "no change"."""
    raise ValueError(f"{token} is not a JSON number")


def load_json(path: str) -> Dict[str, Any]:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the open forever
            raise UsageError(f"{path}: not a regular file")
        with open(path) as fh:
            return json.load(fh, parse_constant=_not_json)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except PermissionError:
        raise UsageError(f"{path}: permission denied") from None
    except OSError as exc:  # a directory, a symlink loop, a name too long
        raise UsageError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, and NaN/Infinity (_not_json)
        raise UsageError(f"{path}: not valid JSON ({exc})") from None


def load_sweep(path: str) -> SweepResult:
    doc = load_json(path)
    try:
        return SweepResult.from_dict(doc)
    except UsageError as exc:
        raise UsageError(f"{path}: {exc}") from None


def save_sweep(path: str, result: SweepResult) -> None:
    write_json_atomic(path, result.to_dict())
