"""Read FreeBSD ``diskinfo -wS`` output into ``slogqual.sweep/1`` documents.

What diskinfo prints (usr.sbin/diskinfo/diskinfo.c): ``-S`` implies ``-v``, so
each device starts with its name on a line of its own and a verbose header of
``\\t<value>\\t# <name>`` lines (sectorsize, mediasize, ``Disk descr.`` = model,
``Disk ident.`` = serial, ...), then::

    Synchronous random writes:
    \\t 0.5 kbytes:    138.3 usec/IO =      3.5 Mbytes/s      ("\\t%4.4g kbytes: " "%8.1f usec/IO = %8.1f Mbytes/s")

one line per size from the sector size to 8 MiB, doubling. People paste this
into web pages, which collapse the tabs and padding and often drop the header,
so the reader takes any whitespace and any subset of the parts. Lines of
diskinfo's other tests (-c, -i, -t) are recognised and passed over; anything
else is garbage, reported with its line number.

Only the mean is printed. ``ios`` is derived from diskinfo's loop (batches of
250 writes until at least 1 s has passed), which the result notes say.

A result line whose figures no run of diskinfo can print is not a measurement:
``0.0 usec/IO`` (a synchronous write with a cache flush takes microseconds at
least; diskinfo prints %8.1f, so 0.0 means the line was edited or damaged), a
mean of MAX_USEC or more, or a number too large to be a number (``1e999``).
Such a line is refused like garbage, in one line naming its line number and
why; with --skip-garbage it is passed over and the result notes say so. (0.0
Mbytes/s is real: 512 bytes at 12 ms prints as 0.0, so it is kept.)
"""

from __future__ import annotations

import datetime
import html
import json
import math
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from slogqual import __version__
from slogqual.errors import UsageError
from slogqual.paths import require_regular
from slogqual.results import (
    LAT_BASIS_COMPLETION,
    STATUS_COMPLETE,
    SweepPoint,
    SweepResult,
    LatencyStats,
)
from slogqual.results.schema import DocumentError
from slogqual.units import MAX_SIZE, size_label

SOURCE = "diskinfo"
BATCH = 250  # diskinfo writes in batches of 250 and checks the clock after each
MIN_SECONDS = 1.0
PARALLEL_ABOVE = 128 * 1024  # MAXIO: larger writes are split into 128 KiB pieces written in parallel
MAX_USEC = 1e12  # 11.6 days a write: no diskinfo run (250 writes at least) ends with such a mean

_NUM = r"\d+(?:\.\d*)?(?:[eE][+-]?\d+)?"
RESULT_RE = re.compile(
    rf"^\s*(?P<kb>{_NUM})\s*kbytes:\s*(?P<us>{_NUM})\s*usec/IO\s*=\s*(?P<mb>{_NUM})\s*Mbytes/s\s*$"
)
HEADING_RE = re.compile(r"^\s*Synchronous random writes:\s*$")
HEADER_RE = re.compile(r"^\s*(?P<value>[^#]*?)\s*#\s*(?P<name>\S.*?)\s*$")
# A shell prompt (or none), maybe sudo/doas, then diskinfo with options and device arguments.
COMMAND_RE = re.compile(
    r"^(?:[^\s#$%>]*\s?[#$%>]\s*)?(?:(?:sudo|doas)\s+)?(?:/\S*/)?diskinfo(?P<args>(?:\s+-\S+)*(?:\s+[^\s-]\S*)+)\s*$")
DEVICE_RE = re.compile(r"^(?:/\S+|[A-Za-z][\w.-]*\d[\w.-]*)$")
# Other diskinfo tests (-c, -i, -t) in the same paste: recognised, not imported.
OTHER_RES = [
    re.compile(r"^\s*(Seek times|Transfer rates|I/O command overhead|Asynchronous random reads):\s*$"),
    re.compile(rf"^\s*[\w ]+:\s*\d+\s+iter in\s+{_NUM}\s+sec\s*=\s*{_NUM}\s+msec\s*$"),
    re.compile(rf"^\s*\w+:\s*{_NUM}\s+kbytes in\s+{_NUM}\s+sec\s*=\s*{_NUM}\s+kbytes/sec\s*$"),
    re.compile(rf"^\s*[\w ]+:\s*{_NUM}\s+ops in\s+{_NUM}\s+sec\s*=\s*{_NUM}\s+IOPS\s*$"),
    re.compile(rf"^\s*time to read \d+\w*\s+(block|sectors)\s+{_NUM}\s+sec\s*=\s*{_NUM}\s+msec/sector\s*$"),
    re.compile(rf"^\s*calculated command overhead\s*=\s*{_NUM}\s+msec/sector\s*$"),
]

# Header names diskinfo prints (the part after '# '), mapped to device-record keys.
_HEADER_KEYS = {
    "sectorsize": "sector_size",
    "mediasize in bytes": "media_size",
    "mediasize in sectors": "media_sectors",
    "stripesize": "stripe_size",
    "stripeoffset": "stripe_offset",
    "disk descr.": "model",
    "disk ident.": "serial",
    "physical path": "physical_path",
    "trim/unmap support": "trim",
    "rotation rate in rpm": "rotation_rate",
    "zone mode": "zone_mode",
    "attachment": "attachment",
}


@dataclass
class DiskinfoPoint:
    line: int
    kbytes_text: str
    size: int
    usec: float
    mbps: float


@dataclass
class DiskinfoDevice:
    """One device's part of the output, as printed."""

    first_line: Optional[int] = None
    name: Optional[str] = None
    header: Dict[str, str] = field(default_factory=dict)  # diskinfo's name -> value, raw
    points: List[DiskinfoPoint] = field(default_factory=list)
    command: Optional[str] = None

    @property
    def empty(self) -> bool:
        return not (self.name or self.header or self.points)


@dataclass
class ParsedDiskinfo:
    path: str
    devices: List[DiskinfoDevice]
    garbage: List[Tuple[int, str]]
    skipped_other_tests: int = 0
    impossible: Dict[int, str] = field(default_factory=dict)  # line number -> why its figures are not a measurement


def _impossible(kb: str, us: str, mb: str) -> Optional[str]:
    """Why a result line's figures cannot be diskinfo's measurement (None: they can)."""
    for text, unit in ((kb, "kbytes"), (us, "usec/IO"), (mb, "Mbytes/s")):
        if not math.isfinite(float(text)):
            return f"{text} {unit} is not a finite number"
    usec = float(us)
    if usec <= 0:
        return f"{us} usec/IO is not a measurement (a synchronous write takes time: the line was edited or damaged)"
    if usec >= MAX_USEC:
        return f"{us} usec/IO is not a measurement (no diskinfo run ends with a mean that long)"
    return None


def _size_from_kbytes(text: str, line_no: int, where: str) -> int:
    size = float(text) * 1024
    rounded = int(round(size))
    if rounded <= 0 or abs(size - rounded) > 1e-6 * max(1.0, size) or rounded % 512:
        raise UsageError(f"{where}: line {line_no}: {text} kbytes is not a whole number of 512-byte sectors")
    return rounded


def _header_key(name: str) -> str:
    key = name.strip().lower()
    key = re.sub(r"\s*\(.*\)$", "", key)  # "mediasize in bytes (400G)"
    return key


def parse(text: str, path: str = "<input>") -> ParsedDiskinfo:
    """Split diskinfo output into devices; never raises on garbage (see import_text)."""
    devices: List[DiskinfoDevice] = []
    garbage: List[Tuple[int, str]] = []
    impossible: Dict[int, str] = {}
    other = 0
    cur = DiskinfoDevice()
    pending_names: List[str] = []

    def start_new(line_no: int) -> None:
        nonlocal cur
        if not cur.empty:
            devices.append(cur)
        cur = DiskinfoDevice(first_line=line_no)
        if pending_names:
            cur.name = pending_names.pop(0)

    for line_no, raw in enumerate(text.splitlines(), 1):
        # Web copies bring non-breaking spaces (also as "&nbsp;" from a page's source) and collapsed or
        # doubled blanks: match on one space.
        if "&" in raw:
            raw = html.unescape(raw)
        indented = raw[:1].isspace()
        line = stripped = " ".join(raw.split())
        if not stripped:
            continue
        m = COMMAND_RE.match(stripped)
        if m and "kbytes:" not in stripped:
            args = [a for a in m.group("args").split() if not a.startswith("-")]
            start_new(line_no)
            pending_names = args[1:]
            cur.name = args[0] if args else None
            cur.command = stripped
            continue
        if stripped.startswith("#"):
            continue  # a comment (fixture headers, notes people add)
        if cur.first_line is None:
            cur.first_line = line_no
        m = RESULT_RE.match(line)
        if m:
            why = _impossible(m.group("kb"), m.group("us"), m.group("mb"))
            if why:
                impossible[line_no] = why
                garbage.append((line_no, stripped))
                continue
            size = _size_from_kbytes(m.group("kb"), line_no, path)
            if cur.points and size <= cur.points[-1].size:
                start_new(line_no)  # sizes only grow within one device
            cur.points.append(DiskinfoPoint(line_no, m.group("kb"), size, float(m.group("us")), float(m.group("mb"))))
            continue
        if HEADING_RE.match(line):
            if cur.points:
                start_new(line_no)
            continue
        if any(r.match(line) for r in OTHER_RES):
            other += 1
            continue
        m = HEADER_RE.match(line)
        if m and m.group("value"):
            if cur.points:
                start_new(line_no)
            cur.header[m.group("name")] = m.group("value")
            continue
        if DEVICE_RE.match(stripped) and not indented:
            if not cur.header and not cur.points:
                cur.name = stripped  # diskinfo prints the name it was given: it names this device
            else:
                start_new(line_no)
                cur.name = stripped
            continue
        garbage.append((line_no, stripped))
    if not cur.empty:
        devices.append(cur)
    return ParsedDiskinfo(path=path, devices=devices, garbage=garbage, skipped_other_tests=other,
                          impossible=impossible)


def derived_ios(mean_us: float) -> int:
    """Writes diskinfo timed for a size: whole batches of 250 until >= 1 s had passed."""
    if mean_us <= 0:
        return BATCH
    return BATCH * max(1, math.ceil(MIN_SECONDS * 1e6 / (BATCH * mean_us) - 1e-9))


def _mbps_consistent(size: int, usec: float, mbps: float) -> bool:
    """Does the printed MiB/s follow from the printed mean (each rounded to 0.1)?"""
    if usec <= 0:
        return False
    lo = size / ((usec + 0.05) * 1e-6) / 2**20
    hi = size / (max(usec - 0.05, 1e-9) * 1e-6) / 2**20
    return lo - 0.05 - 1e-9 <= mbps <= hi + 0.05 + 1e-9


# Header values diskinfo prints as whole numbers (%u, %jd); the device record holds them as numbers.
_INTEGER_KEYS = ("sector_size", "media_size", "media_sectors", "stripe_size", "stripe_offset", "rotation_rate")
_INTEGER_RE = re.compile(r"[0-9]+")  # ASCII digits only: int() would also take '٣' or '1_000'
_INTEGER_LIMIT = 2**63  # off_t: no value diskinfo prints is larger


def _header_integer(value: str) -> Optional[int]:
    """A header value as diskinfo's %u/%jd prints it, or None (a word such as "Unknown", or damage)."""
    if not _INTEGER_RE.fullmatch(value):
        return None
    number = int(value)
    return number if number < _INTEGER_LIMIT else None


def header_record(dev: DiskinfoDevice) -> Optional[Dict[str, Any]]:
    """The device record a diskinfo verbose header gives (None without a header)."""
    return _device_record(dev)


def _device_record(dev: DiskinfoDevice) -> Optional[Dict[str, Any]]:
    if not dev.header:
        return None
    rec: Dict[str, Any] = {"source": "diskinfo -v header"}
    for name, value in dev.header.items():
        key = _HEADER_KEYS.get(_header_key(name))
        if key is None:
            continue
        value = value.strip()
        if key in _INTEGER_KEYS:
            number = _header_integer(value)
            if number is not None:  # "Unknown", or a value a web page mangled: left out (raw in diskinfo_header)
                rec[key] = number
                if key == "rotation_rate":
                    rec["rotational"] = number != 0  # diskinfo prints 0 for DISK_RR_NON_ROTATING
        elif key == "trim":
            flag = {"yes": True, "no": False}.get(value.lower())
            if flag is not None:
                rec[key] = flag
        else:
            rec[key] = value
    rec["diskinfo_header"] = dict(dev.header)
    return rec


def _to_result(dev: DiskinfoDevice, index: int, path: str, label: Optional[str]) -> SweepResult:
    notes = [
        f"imported from diskinfo -wS output ({os.path.basename(path)}, line {dev.first_line}): "
        "diskinfo prints only the mean latency and MiB/s per size",
        f"ios is derived, not printed: diskinfo writes batches of {BATCH} until at least 1 s has passed",
    ]
    warnings: List[str] = []
    mismatched: List[DiskinfoPoint] = []
    points: List[SweepPoint] = []
    for p in dev.points:
        ios = derived_ios(p.usec)
        pt = SweepPoint(
            size=p.size,
            ios=ios,
            lat_us=LatencyStats(mean=p.usec),
            iops=1e6 / p.usec if p.usec > 0 else 0.0,
            mbps=p.mbps,
            runtime_ms=round(ios * p.usec / 1000.0, 1),
            lat_basis=LAT_BASIS_COMPLETION,
        )
        if not _mbps_consistent(p.size, p.usec, p.mbps):
            mismatched.append(p)
        points.append(pt)
    if mismatched:
        # diskinfo derives both figures from one timing (dt/N and size*N/dt), so they always agree;
        # other tools printing diskinfo's format (slogqual sweep: MiB/s over the wall-clock runtime) may not.
        first = mismatched[0]
        notes.append(
            f"{len(mismatched)} line(s) where Mbytes/s does not equal size / usec/IO, e.g. line {first.line}: "
            f"{first.mbps} Mbytes/s vs {first.size / first.usec * 1e6 / 2**20:.1f} from {first.usec} usec/IO at "
            f"{size_label(first.size)}: not diskinfo's own arithmetic (edited, or printed by another tool)")
    sizes = [p.size for p in dev.points]
    for a, b in zip(sizes, sizes[1:]):
        if b != 2 * a:
            notes.append(f"sizes jump from {size_label(a)} to {size_label(b)}: diskinfo doubles each step, lines are missing")
    if sizes and sizes[-1] < MAX_SIZE:
        notes.append(f"the output ends at {size_label(sizes[-1])}; diskinfo goes on to 8M (truncated paste?)")
    record = _device_record(dev) or {}
    sector_size = record.get("sector_size")
    if isinstance(sector_size, int) and sizes and sizes[0] != sector_size:
        notes.append(f"the first size is {size_label(sizes[0])}, the sector size is {sector_size}: lines are missing")

    name = dev.name
    target: Dict[str, Any] = {
        "path": name or f"{os.path.basename(path)}#{index}",
        "kind": "block" if name and (name.startswith("/dev/") or re.match(r"^[a-z]+\d+$", name)) else "unknown",
        "size": record.get("media_size") if isinstance(record.get("media_size"), int) else None,
    }
    if label:
        target["label"] = label
    params = {
        "mode": "flush",
        "sizes": sizes,
        "runtime_s": MIN_SECONDS,
        "settle_s": 1.0,
        "engine": "diskinfo -wS (slogbench)",
        "direct": True,
        "iodepth": 1,
        "numjobs": 1,
        "offsets": "random, size-aligned",
        "flush": "DIOCGFLUSH after every write (fsync on a regular file)",
        "parallel_above": PARALLEL_ABOVE,
    }
    environment = {
        "system": "FreeBSD",
        "tool": "diskinfo -wS",
        "command": dev.command,
        "imported_from": os.path.abspath(path) if path != "<input>" else path,
        "imported_line": dev.first_line,
        "imported_at": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        "slogqual_version": __version__,
    }
    return SweepResult(
        target=target,
        params=params,
        environment=environment,
        points=points,
        device=record or None,
        source=SOURCE,
        status=STATUS_COMPLETE,
        notes=notes,
        warnings=warnings,
    )


def to_results(parsed: ParsedDiskinfo, labels: Sequence[str] = ()) -> List[SweepResult]:
    devices = [d for d in parsed.devices if d.points]
    if labels and len(labels) != len(devices):
        raise UsageError(f"{parsed.path}: {len(labels)} --name given for {len(devices)} device(s) with results")
    return [
        _to_result(dev, i, parsed.path, labels[i - 1] if labels else None)
        for i, dev in enumerate(devices, 1)
    ]


def import_text(text: str, path: str = "<input>", *, skip_garbage: bool = False,
                labels: Sequence[str] = ()) -> List[SweepResult]:
    """Parse and convert; garbage is an error unless skip_garbage (then a note)."""
    parsed = parse(text, path)
    if parsed.garbage and not skip_garbage:
        line_no, line = parsed.garbage[0]
        more = f" (and {len(parsed.garbage) - 1} more line(s): " + ", ".join(
            str(n) for n, _ in parsed.garbage[1:6]) + ("…" if len(parsed.garbage) > 6 else "") + ")" \
            if len(parsed.garbage) > 1 else ""
        shown = line if len(line) <= 60 else line[:57] + "..."
        what = parsed.impossible.get(line_no) or f"not diskinfo -wS output: {shown!r}"
        raise UsageError(f"{path}: line {line_no}: {what}{more}; use --skip-garbage to pass over such lines")
    if not any(d.points for d in parsed.devices):
        named = [d.name for d in parsed.devices if d.name and (d.header or d.command)]
        what = f" (diskinfo output of {', '.join(named)} without the -S test)" if named else ""
        raise UsageError(f"{path}: no diskinfo -wS result lines ('<size> kbytes: <t> usec/IO = <r> Mbytes/s')"
                         + what)
    headless = [d for d in parsed.devices if not d.points and (d.header or d.name)]
    results = to_results(parsed, labels)
    if parsed.garbage:
        numbers = ", ".join(str(n) for n, _ in parsed.garbage[:10]) + ("…" if len(parsed.garbage) > 10 else "")
        for r in results:
            r.notes.append(f"{len(parsed.garbage)} line(s) of {os.path.basename(path)} were not diskinfo output "
                           f"and were skipped (lines {numbers})")
            if parsed.impossible:
                n, why = next(iter(parsed.impossible.items()))
                r.notes.append(f"{len(parsed.impossible)} of them were result lines whose figures are not a "
                               f"measurement, e.g. line {n}: {why}")
    for d in headless:
        for r in results:
            r.notes.append(f"line {d.first_line}: device {d.name or '(unnamed)'} has a header but no results")
    for r in results:
        _check_loadable(r, path)
    return results


def _check_loadable(result: SweepResult, path: str) -> None:
    """An importer writes only documents slogqual's own loader reads back (plot, report, the store):
    one that it would refuse is refused here, in one line, before anything is written."""
    where = f"{path} ({result.target.get('path')})"
    try:
        SweepResult.from_dict(json.loads(json.dumps(result.to_dict(), allow_nan=False)), where)
    except DocumentError as exc:
        raise UsageError(f"{exc}: the imported document would not load; nothing written") from None
    except (TypeError, ValueError) as exc:  # not JSON (a NaN, an object json cannot write)
        raise UsageError(f"{where}: the imported document is not valid JSON ({exc}); nothing written") from None


def import_file(path: str, *, skip_garbage: bool = False, labels: Sequence[str] = ()) -> List[SweepResult]:
    try:
        if stat.S_ISFIFO(os.stat(path).st_mode):  # reading one would wait for a writer forever
            raise UsageError(f"{path}: a FIFO; pipe diskinfo output in as '-' instead")
        require_regular(path, "file")  # a directory, or /dev/zero: read until memory runs out
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory") from None
    except PermissionError:
        raise UsageError(f"{path}: permission denied") from None
    except OSError as exc:  # a symlink loop, a name too long, 'F/' on a file
        raise UsageError(f"{path[:200]}: cannot be read ({exc.strerror or exc})") from None
    return import_text(text, path, skip_garbage=skip_garbage, labels=labels)
