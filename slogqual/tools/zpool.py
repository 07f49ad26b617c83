"""The ``zpool`` command: argv builders and parsers of its scripted (``-Hp``) output."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence

from slogqual.tools import spawn as _run

PROGRAM = "zpool"

VDEV_TYPES = ("mirror", "raidz", "raidz1", "raidz2", "raidz3", "draid")
SECTIONS = ("logs", "cache", "spares", "special", "dedup")


def version() -> _run.ToolVersion:
    """The userland's version: ``zpool --version`` prints 'zfs-2.3.2-2~bpo12+2' (then the kernel
    module's, or an error with status 1 when it is not loaded: the userland line is enough)."""
    return _run.get_version(PROGRAM, ["--version"], r"^zfs-(\d+)\.(\d+)(?:\.(\d+))?")


def check_version() -> _run.ToolVersion:
    return _run.check_version(PROGRAM, version)


def _garbage(text: str, why: str):
    return _run.parse_failed(PROGRAM, None, text, why)


def create_argv(pool: str, vdevs: Sequence[str], log: Sequence[str] = (), *,
                properties: Optional[Mapping[str, str]] = None, fs_properties: Optional[Mapping[str, str]] = None,
                force: bool = False, mountpoint: Optional[str] = None) -> List[str]:
    """``zpool create [-f] [-o p=v] [-O p=v] [-m mnt] POOL VDEVS... [log LOGVDEVS...]``.

    ``vdevs`` and ``log`` are zpool's own vdev grammar, e.g. ``["mirror", "/dev/sda", "/dev/sdb"]``.
    """
    if not vdevs:
        raise ValueError("a pool needs at least one vdev")
    argv = ["zpool", "create"]
    if force:
        argv.append("-f")
    for k, v in (properties or {}).items():
        argv += ["-o", f"{k}={v}"]
    for k, v in (fs_properties or {}).items():
        argv += ["-O", f"{k}={v}"]
    if mountpoint is not None:
        argv += ["-m", mountpoint]
    argv += [pool, *vdevs]
    if log:
        argv += ["log", *log]
    return argv


def add_argv(pool: str, vdevs: Sequence[str], *, log: bool = False, force: bool = False) -> List[str]:
    """``zpool add [-f] POOL [log] VDEVS...`` (e.g. a SLOG: ``log=True, vdevs=["/dev/nvme0n1"]``)."""
    return ["zpool", "add", *(["-f"] if force else []), pool, *(["log"] if log else []), *vdevs]


def destroy_argv(pool: str, force: bool = False) -> List[str]:
    return ["zpool", "destroy", *(["-f"] if force else []), pool]


def iostat_argv(pool: str) -> List[str]:
    # Not -H: in scripted mode zpool prints the "logs"/"cache"/"special" section names as blank lines.
    return ["zpool", "iostat", "-vp", pool]


def iostat_stream_argv(pool: str, interval: int = 1) -> List[str]:
    """A report every ``interval`` seconds until stopped, each after a ``-T u`` line giving the Unix
    time it was printed, so reports can be matched to a measured window afterwards whatever the
    delay in starting zpool (seconds under an emulated guest)."""
    return ["zpool", "iostat", "-T", "u", "-vpy", pool, str(max(1, int(interval)))]


def status_argv(pool: str) -> List[str]:
    return ["zpool", "status", pool]


def list_argv(pool: Optional[str] = None) -> List[str]:
    return ["zpool", "list", "-Hp", "-o", "name,size,alloc,free,health", *([pool] if pool else [])]


@dataclass(frozen=True)
class VdevIO:
    """One row of ``zpool iostat -vp``: ops and bytes are per-second averages since import."""

    name: str
    section: str  # "" for the pool and its data vdevs, "logs", "cache", "special", ...
    depth: int  # 0 the pool or a section's vdev tree top, 1 a top-level vdev, 2 a mirror member
    alloc: Optional[int]
    free: Optional[int]
    read_ops: int
    write_ops: int
    read_bytes: int
    write_bytes: int


def _int(text: str) -> Optional[int]:
    return None if text in ("-", "") else _run.whole(text)


def parse_iostat_v(text: str) -> List[VdevIO]:
    """Rows of a ``zpool iostat -vp POOL [INTERVAL COUNT]`` report: the table between two ``----``
    rules; when the text holds several reports, the last complete one.

    Section rows (``logs  -  -  …``) carry no numbers; they set the section of the rows after them.
    """
    tables: List[List[VdevIO]] = []
    rows: List[VdevIO] = []
    section = ""
    inside = False
    for line in text.splitlines():
        if line.startswith("----"):
            if inside:
                tables.append(rows)
            rows, section, inside = [], "", not inside
            continue
        if not inside or not line.strip():
            continue
        parts = line.split()
        if len(parts) != 7:
            raise _garbage(text, f"unexpected zpool iostat line {line!r}")
        name = parts[0]
        if name in SECTIONS and all(p == "-" for p in parts[1:]):
            section = name
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        try:
            alloc, free = _int(parts[1]), _int(parts[2])
            rops, wops, rb, wb = (_int(p) or 0 for p in parts[3:])
        except ValueError:
            raise _garbage(text, f"unexpected zpool iostat numbers in {line!r} (was -p given?)") from None
        rows.append(VdevIO(name, section, depth, alloc, free, rops, wops, rb, wb))
    if not tables:
        raise _garbage(text, "no complete zpool iostat table (no pair of ---- rules)")
    return tables[-1]


@dataclass(frozen=True)
class IostatReport:
    """One report of a ``-T u`` stream: printed at ``time`` (whole Unix seconds), rates over the
    interval before it."""

    time: Optional[int]
    rows: List[VdevIO]


_TIME_RE = re.compile(r"\d+", re.ASCII)


def parse_iostat_stream(text: str) -> List[IostatReport]:
    """Every complete report of ``zpool iostat -T u -vp POOL INTERVAL``, each with the last time line
    before it. (With -y zpool prints a time line for the skipped first report too: a time line is
    one of digits alone, and the report takes the nearest before its table.)

    An empty stream, or one of time lines only (zpool stopped before its first report), is [];
    a report cut off by the stop is passed over. Text that holds neither a report nor the start of
    one (no ``----`` rule at all) is not zpool iostat's: ToolOutputError, as for a garbled table.
    """
    reports: List[IostatReport] = []
    chunk: List[str] = []
    stamp: Optional[int] = None
    rules = 0
    other = False
    for line in text.splitlines():
        if _TIME_RE.fullmatch(line.strip()) and rules % 2 == 0:
            stamp = int(line.strip())
            chunk = []
            continue
        chunk.append(line)
        other = other or bool(line.strip())
        if line.startswith("----"):
            rules += 1
            if rules % 2 == 0:
                reports.append(IostatReport(stamp, parse_iostat_v("\n".join(chunk))))
                chunk = []
    if not reports and other and rules == 0:
        raise _garbage(text, "no zpool iostat report (no ---- rule) in the stream")
    return reports


def log_rows(rows: Sequence[VdevIO]) -> List[VdevIO]:
    """The top-level log vdevs' rows (depth 1): a mirror's row already sums its legs, so adding the legs too
    would count every byte twice."""
    return [r for r in rows if r.section == "logs" and r.depth == 1]


def log_write_rates(reports: Sequence[IostatReport]) -> List[int]:
    """Bytes/s the pool's log vdevs wrote in each report that shows them."""
    return [sum(r.write_bytes for r in logs) for logs in (log_rows(rep.rows) for rep in reports) if logs]


def report_interval_s(reports: Sequence[IostatReport]) -> Optional[float]:
    """The seconds between reports, from their -T u time lines (the median step); None without them."""
    stamps = [r.time for r in reports if r.time is not None]
    steps = sorted(b - a for a, b in zip(stamps, stamps[1:]) if b > a)
    return float(steps[len(steps) // 2]) if steps else None


@dataclass(frozen=True)
class PoolInfo:
    name: str
    size: int
    alloc: int
    free: int
    health: str


def parse_list(text: str) -> List[PoolInfo]:
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        p = line.split("\t")
        try:
            if len(p) != 5:
                raise ValueError("not 5 tab-separated fields")
            out.append(PoolInfo(p[0], _run.whole(p[1]), _run.whole(p[2]), _run.whole(p[3]), p[4]))
        except ValueError as exc:
            raise _garbage(text, f"unexpected zpool list line {line!r} ({exc})") from None
    return out


def zpool(argv: List[str], timeout: float = 300) -> str:
    """stdout of a zpool command; ToolFailedError / ToolTimeoutError (MeasurementErrors) otherwise."""
    return _run.run_checked(argv, timeout=timeout)


def _parsed(argv: List[str], parser):
    return _run.parse_text(PROGRAM, argv, zpool(argv), parser)


def create(pool: str, vdevs: Sequence[str], log: Sequence[str] = (), **kw) -> None:
    zpool(create_argv(pool, vdevs, log, **kw))


def add(pool: str, vdevs: Sequence[str], **kw) -> None:
    zpool(add_argv(pool, vdevs, **kw))


def destroy(pool: str, force: bool = False) -> None:
    zpool(destroy_argv(pool, force))


def iostat(pool: str) -> List[VdevIO]:
    return _parsed(iostat_argv(pool), parse_iostat_v)


def iostat_stream(pool: str, interval: int = 1) -> _run.Background:
    """``zpool iostat -T u -vpy POOL INTERVAL`` as a helper, not yet started: its stdout goes to a file,
    not a pipe, so a long run's reports can never fill a pipe and stall zpool (read them with
    ``stdout_text()`` after ``stop()``, parse with :func:`parse_iostat_stream`)."""
    return _run.Background(iostat_stream_argv(pool, interval), capture_stdout=True, grace_s=30)


def pools() -> Dict[str, PoolInfo]:
    return {p.name: p for p in _parsed(list_argv(), parse_list)}
