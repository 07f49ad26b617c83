"""The versioned result documents and their JSON round trip.

No process is started here and nothing but result files is touched, so that
analysis and reporting can depend on this module alone. The sweep document
is specified in docs/results.md; its schema string is ``slogqual.sweep/1``.
"""

from __future__ import annotations

import json
import math
import os
import stat
import tempfile
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import IO, Any, ClassVar, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from slogqual.errors import ResultWriteError, UsageError
from slogqual.process import pid_alive

from slogqual.results import schema as _schema
from slogqual.results import device as _device

SWEEP_SCHEMA = _schema.SWEEP  # every schema name lives in results/schema.py
SWEEP_SCHEMA_PREFIX = _schema.prefix(SWEEP_SCHEMA)  # any version: what -o may replace

# How the per-IO latency figures of a point were obtained (see docs/results.md).
LAT_BASIS_COMPLETION = "completion"  # fio timed each IO as the application waits for it
LAT_BASIS_FLUSH_BOUND = "write+flush"  # mean exact; percentiles/max are upper bounds
LAT_BASIS_PAIR = "pair"  # the pair engine timed write and flush of every IO: all figures exact
LAT_BASES = (LAT_BASIS_COMPLETION, LAT_BASIS_FLUSH_BOUND, LAT_BASIS_PAIR)

# Figures of LatencyStats; p90 and p9999 exist only where raw samples were kept (lat_basis pair).
LATENCY_KEYS = ("mean", "p50", "p90", "p99", "p999", "p9999", "max", "min", "stddev")
_OPTIONAL_LATENCY_KEYS = ("p90", "p9999")  # left out of a document when absent (older readers never saw them)

STATUS_RUNNING = "running"
STATUS_COMPLETE = "complete"
STATUS_FAILED = "failed"
STATUS_INTERRUPTED = "interrupted"


def schema_of(document: Any, default: Any = None) -> Any:
    """The schema a JSON document says it is, as written (``default`` where it says none, or is no object):
    what a reader of any kind of document dispatches on before typing it."""
    return document.get("schema", default) if isinstance(document, dict) else default


def ordered(d: Dict[str, Any], order: Sequence[str]) -> Dict[str, Any]:
    """``d`` with the keys of ``order`` first, in that order, then the rest as they come."""
    out = {k: d[k] for k in order if k in d}
    out.update((k, v) for k, v in d.items() if k not in out)
    return out


def written(d: Dict[str, Any], absent: Iterable[str], extra: Dict[str, Any], order: Sequence[str]) -> Dict[str, Any]:
    """A section as it goes back into the document: an optional key its file lacked stays absent until
    something is put there; the keys nobody models after the modelled ones; the file's order kept."""
    for key in absent:
        if d.get(key) in (None, [], {}):
            d.pop(key, None)
    d.update(extra)
    return ordered(d, order)


def _plain(value: Any) -> Any:
    """A field's value as the document holds it: a table's dict, a list or mapping of tables' dicts."""
    if isinstance(value, Table):
        return value.to_dict()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class Table:
    """A table inside a versioned document, typed: a dataclass whose fields are the keys the writer puts
    there (``KEYS``, in its order; ``NAMES`` maps a key that is no identifier, ``class``, ``not-evaluated``,
    to its field). ``from_dict`` checks a loaded table (naming the bad key) and keeps what the file had
    besides: the keys no version of slogqual modelled (``extra``, written back where they were), the
    file's key order, the modelled keys it lacked (written back absent while still empty). So a table
    loaded and written again is the same bytes; one made by a run is written in ``KEYS`` order.

    A subclass lists its fields (every one with a default: the checks say what is required) and
    overrides ``_typed`` for the fields that are checked or are tables themselves."""

    KEYS: ClassVar[Tuple[str, ...]] = ()
    NAMES: ClassVar[Dict[str, str]] = {}
    # what the file had besides the fields; set by from_dict (a table a run makes has none of it)
    _extra: Dict[str, Any]
    _order: Tuple[str, ...]
    _absent: frozenset

    @classmethod
    def _attr(cls, key: str) -> str:
        return cls.NAMES.get(key, key)

    @classmethod
    def _typed(cls, d: Dict[str, Any], check: "_schema.Checker", where: str) -> Dict[str, Any]:
        """The fields (by name) that are checked or converted; the others are taken as the file has them."""
        return {}

    @classmethod
    def from_dict(cls, d: Any, check: "_schema.Checker", where: str):
        d = check.table(d, where)
        values = {cls._attr(k): d.get(k) for k in cls.KEYS}
        values.update(cls._typed(d, check, where))
        out = cls(**values)
        out._extra = {k: v for k, v in d.items() if k not in cls.KEYS}
        out._order = tuple(d)
        out._absent = frozenset(k for k in cls.KEYS if k not in d)
        return out

    @classmethod
    def made(cls, d: Dict[str, Any], what: str = ""):
        """A table a run just made as a dict (a measurement's to_dict), checked as a loaded one is."""
        return cls.from_dict(d, _schema.Checker(f"<measured {what or cls.__name__}>"), what)

    @classmethod
    def optional(cls, d: Dict[str, Any], key: str, check: "_schema.Checker", where: str = ""):
        """The table at ``d[key]`` (None where absent or null)."""
        at = f"{where}.{key}" if where else key
        return cls.from_dict(d[key], check, at) if d.get(key) is not None else None

    @classmethod
    def each(cls, d: Dict[str, Any], key: str, check: "_schema.Checker", where: str = "") -> list:
        """The list of tables at ``d[key]`` ([] where absent)."""
        at = f"{where}.{key}" if where else key
        return [cls.from_dict(x, check, f"{at}[{i}]") for i, x in enumerate(check.items(d, key, where,
                                                                                     required=False))]

    @property
    def extra(self) -> Dict[str, Any]:
        """The keys of the file's table that no field models, as they came."""
        return getattr(self, "_extra", {})

    def to_dict(self) -> Dict[str, Any]:
        d = {k: _plain(getattr(self, self._attr(k))) for k in self.KEYS}
        return written(d, getattr(self, "_absent", ()), dict(self.extra), getattr(self, "_order", self.KEYS))


class ReadByKey:
    """``get(key)`` on a table, as the dict it replaced answered: only for readers not yet moved to its fields
    (the class says which); new code reads the fields."""

    def get(self, key: str, default: Any = None) -> Any:
        return self.to_dict().get(key, default)  # type: ignore[attr-defined]

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]  # type: ignore[attr-defined]


@dataclass
class DeviceIdentity(ReadByKey, Table):
    """A device record (``slogqual.device/1``: slogqual.device.identify) where a document holds one: a
    scenario's ``pool.devices[path]``, a sweep's, qualification's or power cut's ``device``. The figures the
    store and the reports file a run under are fields; the rest of the record is kept as it came.
    ``get``: for readers handed a record that may be this or a plain dict (qualify.judge, the advisor)."""

    KEYS: ClassVar[Tuple[str, ...]] = ("model", "vendor", "serial", "firmware", "transport", "class", "link",
                                       "write_cache", "topology")
    NAMES: ClassVar[Dict[str, str]] = {"class": "device_class"}

    model: Optional[str] = None
    vendor: Optional[str] = None
    serial: Optional[str] = None
    firmware: Optional[str] = None
    transport: Optional[str] = None
    device_class: Optional[str] = None
    link: Optional[Dict[str, Any]] = None  # device.link: the PCIe/SAS link, its address the slot
    write_cache: Optional[Dict[str, Any]] = None  # device.write_cache: its verdict and the evidence
    topology: Optional[Dict[str, Any]] = None  # the path from the host (results.shelf.UnitPath's dict)

    @classmethod
    def of(cls, record: Optional[Dict[str, Any]]) -> "DeviceIdentity":
        """The record as a document holds it (a dict, or None where there is none: every field None)."""
        return cls.from_dict(record if isinstance(record, dict) else {}, _schema.Checker("<device record>"),
                             "device")

    @property
    def wwn(self) -> Optional[Any]:
        """The device's World Wide Name, where the record has one (a key of the record no field models)."""
        return self.extra.get("wwn")

    @property
    def slot(self) -> Optional[str]:
        """The device's slot (the PCI address of its link), where recorded."""
        address = self.link.get("address") if isinstance(self.link, dict) else None
        return str(address) if address else None


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
    p90: Optional[float] = None
    p9999: Optional[float] = None

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "LatencyStats":
        return cls(**{k: d.get(k) for k in LATENCY_KEYS})

    def to_dict(self) -> Dict[str, Any]:
        d = asdict(self)
        for key in _OPTIONAL_LATENCY_KEYS:
            if d[key] is None:
                del d[key]
        return d


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
    # pair engine only (absent from older documents and from fio points):
    mean_ci95_us: Optional[Dict[str, Any]] = None  # batch-means 95 % interval of the pair mean (analysis.precision)
    precision: Optional[Dict[str, Any]] = None  # --precision: target, achieved, rounds, met
    over_time: Optional[Dict[str, Any]] = None  # per-interval aggregates, column-wise (analysis.overtime)
    collapse: Optional[Dict[str, Any]] = None  # --sustain: where bandwidth fell below half of its start
    thermal: Optional[Dict[str, Any]] = None  # SMART temperature/throttling before and after the point
    wear: Optional[Dict[str, Any]] = None  # the device's endurance counters before and after (analysis.wear)
    cpu: Optional[Dict[str, Any]] = None  # the host's CPU per write+flush over the point (analysis.host.write_cpu)

    def to_dict(self) -> Dict[str, Any]:
        d = asdict(self)
        for key in _OPTIONAL_POINT_KEYS:
            if d[key] is None:
                del d[key]
        for key in ("lat_us", "write_lat_us", "flush_lat_us"):
            stats = getattr(self, key)
            if stats is None:
                del d[key]
            else:
                d[key] = stats.to_dict()
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
            **{key: d.get(key) for key in _OPTIONAL_POINT_KEYS},
        )


# Keys a point has only when measured so (left out when absent: readers from before them never saw them).
_OPTIONAL_POINT_KEYS = ("mean_ci95_us", "precision", "over_time", "collapse", "thermal", "wear", "cpu")
_OVER_TIME_COLUMNS = ("t_s", "ios", "mean_us", "p99_us", "max_us", "mbps")


def _check_over_time(c: "_schema.Checker", p: Dict[str, Any], at: str) -> None:
    ot = c.obj(p, "over_time", at, required=False)
    if ot is None:
        return
    where = f"{at}.over_time"
    c.number(ot, "interval_ms", where, minimum=0)
    c.number(ot, "end_s", where, required=False, minimum=0)
    lengths = set()
    for key in _OVER_TIME_COLUMNS:
        column = c.items(ot, key, where)
        lengths.add(len(column))
        for i, v in enumerate(column):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v < 0):
                raise c.fail(f"{where}.{key}[{i}]", f"must be a non-negative number or null, not {v!r}")
    if len(lengths) > 1:
        raise c.fail(where, f"columns of different lengths {sorted(lengths)}")


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

    @property
    def target_path(self) -> Optional[str]:
        return self.target.get("path")

    @property
    def target_label(self) -> Optional[str]:
        """What the user labelled a target with (an NBD export has no identity of its own)."""
        return self.target.get("label")

    @property
    def host(self) -> Optional[str]:
        return self.environment.get("host")

    @property
    def started(self) -> Optional[str]:
        return self.environment.get("started")

    @property
    def identity(self) -> DeviceIdentity:
        """The device record's identity (every field None where the sweep has no record)."""
        return DeviceIdentity.of(self.device)

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
    def from_dict(cls, d: Dict[str, Any], source: str = "") -> "SweepResult":
        """The document, validated: a malformed one is a DocumentError naming the key (``source`` is
        the file name the message starts with, when there is one)."""
        where = source or "sweep document"
        d = _schema.upgrade(d, SWEEP_SCHEMA, where)
        c = _schema.Checker(where)
        points = []
        for i, p in enumerate(c.items(d, "points", required=False)):
            at = f"points[{i}]"
            p = c.table(p, at)
            c.integer(p, "size", at, minimum=1)
            c.integer(p, "ios", at, minimum=0)
            c.number(p, "iops", at, minimum=0)
            c.number(p, "mbps", at, minimum=0)
            c.number(p, "runtime_ms", at, required=False, minimum=0)
            c.text(p, "lat_basis", at, required=False, choices=LAT_BASES)
            for key in ("lat_us", "write_lat_us", "flush_lat_us"):
                lat = c.obj(p, key, at, required=key == "lat_us")
                if lat is not None:
                    c.number(lat, "mean", f"{at}.{key}", required=key == "lat_us", minimum=0)
                    for k in LATENCY_KEYS[1:]:
                        c.number(lat, k, f"{at}.{key}", required=False, minimum=0)
            c.items(p, "notes", at, required=False)
            for key in ("mean_ci95_us", "precision", "collapse", "thermal", "wear", "cpu"):
                c.obj(p, key, at, required=False)
            cpu = p.get("cpu")
            if cpu is not None:
                c.number(cpu, "s_per_io", f"{at}.cpu", minimum=0)
                c.number(cpu, "busy_share", f"{at}.cpu", minimum=0)
            ci = p.get("mean_ci95_us")
            if ci is not None:
                for k in ("lo", "hi", "half_width"):
                    c.number(ci, k, f"{at}.mean_ci95_us")
            _check_over_time(c, p, at)
            points.append(SweepPoint.from_dict(p))
        sizes = [p.size for p in points]
        if len(set(sizes)) != len(sizes):
            raise c.fail("points", "holds the same size twice")
        return cls(
            schema=d["schema"],
            source=c.text(d, "source", required=False) or "slogqual",
            status=c.text(d, "status", required=False, choices=(STATUS_RUNNING, STATUS_COMPLETE, STATUS_FAILED,
                                                                STATUS_INTERRUPTED)) or STATUS_COMPLETE,
            error=c.text(d, "error", required=False),
            target=dict(c.obj(d, "target")),
            device=_device.check_record(c, d["device"]) if d.get("device") is not None else d.get("device"),
            params=dict(c.obj(d, "params")),
            environment=dict(c.obj(d, "environment", required=False) or {}),
            notes=c.texts(d, "notes"),
            warnings=c.texts(d, "warnings"),
            points=sorted(points, key=lambda p: p.size),
        )


def _new_file_mode() -> int:
    mask = os.umask(0o022)  # the only way to read the umask; set back at once
    os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def atomic_file(path: str, binary: bool = False) -> Iterator[Tuple[IO, str]]:
    """Replace ``path`` atomically: yields (an open file, its temporary name) for the new content, which
    ``path`` becomes by a rename when the block ends (and no trace of it when it raises).

    Every file slogqual writes goes through here. The temporary file is made by mkstemp: in the
    destination's directory (rename is atomic only within a filesystem), under an unpredictable name,
    created exclusively (O_EXCL: never a name someone planted, never followed through a symlink onto the
    result store or a device), with the mode a plain open() would give. It is fsynced before the rename
    and the directory after it, so the rename itself survives a power cut. A program that writes by name
    (gnuplot) writes to the temporary name.
    """
    directory = os.path.dirname(os.path.abspath(path))
    # the temporary name says whose it is and what it replaces: ".NAME.slogqual-PID-XXXXXXXX.tmp"; one left by
    # a run that was killed inside this block (SIGKILL: no chance to unlink) is removed by the next write of
    # the same file, once its PID is gone
    stem = _temp_stem(path)
    remove_stale_temps(directory, stem)
    fd, tmp = tempfile.mkstemp(prefix=f"{stem}{os.getpid()}-", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, _new_file_mode())
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")) as fh:
            yield fh, tmp
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


def _temp_stem(path: str) -> str:
    return f".{os.path.basename(path)[:100]}.slogqual-"


def remove_stale_temps(directory: str, stem: str) -> List[str]:
    """Remove this destination's temporary files (``STEM<pid>-*.tmp``) whose writer is gone; returns them."""
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        if not (name.startswith(stem) and name.endswith(".tmp")):
            continue
        pid_text = name[len(stem):].split("-", 1)[0]
        if not pid_text.isdigit() or pid_alive(int(pid_text)):
            continue
        full = os.path.join(directory, name)
        try:
            if stat.S_ISREG(os.lstat(full).st_mode):
                os.unlink(full)
                removed.append(full)
        except OSError:
            continue
    return removed


def write_text_atomic(path: str, text: str) -> None:
    """Write text so that a reader (or a crash) sees the old file or the new one, never half."""
    with atomic_file(path) as (fh, _):
        fh.write(text)


class NotFiniteError(ResultWriteError):
    """A document holding NaN or an infinity: JSON has no such number (Python's json would write the
    non-JSON tokens NaN and Infinity, which every other reader refuses). A figure slogqual computed went
    out of range: not written, the key named (exit 1)."""


def _not_finite_at(document: Any) -> Optional[str]:
    """The path (``candidates[0].life.years``) of the first NaN or infinity in ``document``; None if none."""
    stack: List[Tuple[Any, str]] = [(document, "")]
    while stack:  # iterative, as _too_deep
        value, where = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return f"{where or 'the document'} is {value!r}"
        if isinstance(value, dict):
            stack.extend((v, f"{where}.{k}" if where else str(k)) for k, v in value.items())
        elif isinstance(value, (list, tuple)):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(value))
    return None


def json_text(document: Any, what: str) -> str:
    """``document`` as the JSON slogqual writes (indented, a newline at the end): NotFiniteError, before
    anything is written, where it holds a number JSON has not."""
    try:
        return json.dumps(document, indent=2, sort_keys=False, allow_nan=False) + "\n"
    except ValueError:  # "Out of range float values are not JSON compliant"
        raise NotFiniteError(f"{what} not written: {_not_finite_at(document)}, which JSON cannot hold (a figure "
                             "out of range: a bug, please report it with the command line)", document) from None


def write_json_atomic(path: str, document: Dict[str, Any]) -> None:
    """Write JSON so that a reader (or a crash) sees the old file or the new one, never half; a document
    holding NaN or an infinity is not written (NotFiniteError)."""
    text = json_text(document, path)
    with atomic_file(path) as (fh, _):
        fh.write(text)


def _not_json(token: str):
    """Python's json reads NaN, Infinity and -Infinity, which JSON does not have; a measurement holding
    one is broken, and `compare` would call NaN against anything "no change"."""
    raise ValueError(f"{token} is not a JSON number")


# No document slogqual writes nests deeper than a dozen levels; one nested deeper is not a document, and
# every reader walking it (the checks, copy, json.dump of a resumed sweep) would recurse as deep.
MAX_DEPTH = 64


def _too_deep(doc: Any) -> bool:
    stack = [(doc, 1)]
    while stack:  # iterative: the check itself must not recurse
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                return True
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return False


def _nested_too_deep(path: str) -> "_schema.DocumentError":
    return _schema.DocumentError(f"{path}: not a slogqual document (JSON nested deeper than {MAX_DEPTH} levels)")


def load_json(path: str) -> Dict[str, Any]:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the open forever
            raise UsageError(f"{path}: not a regular file")
        with open(path) as fh:
            doc = json.load(fh, parse_constant=_not_json)
    except RecursionError:  # json's decoder recurses once per level of nesting
        raise _nested_too_deep(path) from None
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except PermissionError:
        raise UsageError(f"{path}: permission denied") from None
    except OSError as exc:  # a directory, a symlink loop, a name too long
        raise UsageError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, and NaN/Infinity (_not_json)
        raise UsageError(f"{path}: not valid JSON ({exc})") from None
    if _too_deep(doc):
        raise _nested_too_deep(path)
    return doc


def load_sweep(path: str) -> SweepResult:
    return SweepResult.from_dict(load_json(path), path)


def save_sweep(path: str, result: SweepResult) -> None:
    write_json_atomic(path, result.to_dict())
