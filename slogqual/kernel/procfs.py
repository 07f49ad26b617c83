"""procfs (Linux): kernel tables read from /proc, no program started.

``/proc/swaps`` is the kernel's own list of active swap areas (``swapon
--show`` prints the same table); paths in it are octal-escaped like
mountinfo. ``/proc/PID/comm`` names each process (its first 15 bytes):
which daemons run is read there, never by starting pgrep. ``/proc/stat``'s aggregate ``cpu`` line
(USER_HZ ticks summed over every CPU) says how busy the CPUs were over a window: a scenario step
records it, so a curve flattened by the host's CPU is told from one flattened by its log device (the
lab's guest under TCG on a slow host, issue #26). Idle is ``idle + iowait``; guest and guest_nice are
already inside user and nice (proc(5)), so they are not added again.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

from slogqual.errors import ToolOutputError

SWAPS = "/proc/swaps"
PROC = "/proc"
STAT = "/proc/stat"


def pids_named(comm: str, proc: str = PROC) -> List[int]:
    """The PIDs whose /proc/PID/comm is ``comm`` now (a process that ends while we look is skipped)."""
    found = []
    for pid in (p for p in os.listdir(proc) if p.isdigit()):
        try:
            with open(os.path.join(proc, pid, "comm"), encoding="utf-8", errors="replace") as fh:
                if fh.read().strip() == comm:
                    found.append(int(pid))
        except OSError:
            continue
    return found


def running(comm: str, proc: str = PROC) -> bool:
    """Is a process named ``comm`` alive?"""
    return bool(pids_named(comm, proc))


def _stat_fields(pid: int, proc: str = PROC) -> Optional[List[bytes]]:
    """/proc/PID/stat's fields after the command name (state, ppid, pgrp, …); None where the process is gone or the
    file cannot be read. The name is in parentheses and may hold spaces or ')': the fields start after the last."""
    try:
        with open(os.path.join(proc, str(pid), "stat"), "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields if len(fields) > 2 else None


def process_state(pid: int, proc: str = PROC) -> Optional[str]:
    """The one-letter state of process ``pid`` (``R``, ``S``, ``D``, ``Z`` …), None where it is gone or unreadable."""
    fields = _stat_fields(pid, proc)
    return fields[0].decode("ascii", "replace") if fields else None


def live_processes(proc: str = PROC) -> Iterator[Tuple[int, List[bytes]]]:
    """(pid, its stat fields after the command name) of every live (not zombie) process; none where there is no
    /proc (FreeBSD); a process gone meanwhile is skipped."""
    try:
        pids = [int(p) for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        return
    for pid in pids:
        fields = _stat_fields(pid, proc)
        if fields is not None and fields[0] not in (b"Z", b"X"):
            yield pid, fields


def group_members(pgid: int, proc: str = PROC) -> List[int]:
    """PIDs of the live (not zombie) processes of process group ``pgid``, its leader included."""
    return [pid for pid, fields in live_processes(proc) if int(fields[2]) == pgid]


@dataclass
class Swap:
    filename: str
    type: Optional[str]  # partition | file
    size_kib: Optional[int]


def unescape_octal(field: str) -> str:
    """/proc's escaping of space, tab, newline and backslash as \\ooo octal (mountinfo, swaps). A
    backslash not followed by three octal digits stays as it is (it was a ValueError on '\\999')."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and i + 4 <= len(field) and all(c in "01234567" for c in field[i + 1:i + 4]):
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def parse_swaps(text: str) -> List[Swap]:
    out = []
    for line in (text or "").splitlines()[1:]:  # first line is the header
        parts = line.split()
        if len(parts) < 2:
            continue
        try:
            size = int(parts[2]) if len(parts) > 2 else None
        except ValueError:
            size = None
        out.append(Swap(filename=unescape_octal(parts[0]), type=parts[1], size_kib=size))
    return out


def swaps(path: str = SWAPS) -> List[Swap]:
    """Active swap areas. Raises ValueError when the table cannot be read."""
    try:
        with open(path) as fh:
            return parse_swaps(fh.read())
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None


# --- /proc/self/mountstats: the NFS client's own per-mount counters ----------------------------------------

MOUNTSTATS = "/proc/self/mountstats"

# the columns of a per-op row (nfs-utils mountstats.py; the 9th, errors, since Linux 5.x)
NFS_OP_FIELDS = ("ops", "transmissions", "timeouts", "bytes_sent", "bytes_received", "queue_ms", "rtt_ms",
                 "execute_ms", "errors")


@dataclass
class NfsMountStats:
    device: str  # 'server:/export'
    mountpoint: str
    fstype: str  # nfs | nfs4
    opts: dict  # the options in force ('vers': '4.2', 'hard': '', ...)
    ops: dict  # 'WRITE' -> {'ops': n, 'rtt_ms': ..., ...}
    age_s: Optional[int] = None

    def op(self, name: str, column: str = "ops") -> int:
        return self.ops.get(name, {}).get(column, 0)


def _opts(value: str) -> dict:
    out = {}
    for item in value.split(","):
        if item:
            k, _, v = item.partition("=")
            out[k.strip()] = v.strip()
    return out


def parse_mountstats(text: str) -> List[NfsMountStats]:
    """The NFS mounts of /proc/self/mountstats with their options and per-op counters (other mounts
    are skipped). Whitespace is not significant. ValueError for a per-op row that is not numbers or
    a section before any 'device' line."""
    mounts: List[NfsMountStats] = []
    cur: Optional[NfsMountStats] = None
    in_ops = False
    seen_device = False
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("device "):
            seen_device = True
            m = re.match(r"^device (\S+) mounted on (.+?) with fstype (\S+)(?: statvers=(\S+))?$", line)
            if not m:
                raise ValueError(f"unreadable device line {line[:80]!r}")
            cur, in_ops = None, False
            if m.group(3) in ("nfs", "nfs4"):
                cur = NfsMountStats(unescape_octal(m.group(1)), unescape_octal(m.group(2)), m.group(3), {}, {})
                mounts.append(cur)
            continue
        if not seen_device:
            raise ValueError(f"a line before any 'device' line: {line[:80]!r}")
        if cur is None:
            continue  # the rest of a non-NFS mount's section
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if line == "per-op statistics":
            in_ops = True
        elif in_ops and sep:
            numbers = value.split()
            if not 8 <= len(numbers) <= len(NFS_OP_FIELDS) or not all(n.isdigit() for n in numbers):
                raise ValueError(f"unreadable per-op row {line[:80]!r}")
            cur.ops[key] = dict(zip(NFS_OP_FIELDS, (int(n) for n in numbers)))
        elif key == "opts":
            cur.opts = _opts(value)
        elif key == "age" and value.isdigit():
            cur.age_s = int(value)
    return mounts


# --- /proc/stat: CPU time ---------------------------------------------------------------------------

USER_HZ = 100  # the ticks /proc/stat counts in (sysconf(_SC_CLK_TCK); 100 on every Linux ABI slogqual runs on)


@dataclass(frozen=True)
class CpuTimes:
    """Cumulative CPU ticks of all CPUs since boot."""

    busy: int  # user + nice + system + irq + softirq + steal
    idle: int  # idle + iowait
    cpus: int  # the cpuN lines (online CPUs)

    @property
    def total(self) -> int:
        return self.busy + self.idle

    def __sub__(self, earlier: "CpuTimes") -> "CpuTimes":
        return CpuTimes(busy=self.busy - earlier.busy, idle=self.idle - earlier.idle, cpus=self.cpus)

    @property
    def busy_share(self) -> Optional[float]:
        """busy / (busy + idle) of a difference; None when no tick passed."""
        return self.busy / self.total if self.total > 0 else None


def _bad_stat(why: str, text: str) -> ToolOutputError:
    return ToolOutputError(f"/proc/stat: {why}", program=STAT, why=why, excerpt=text[:200])


def parse_stat(text: str) -> CpuTimes:
    """The aggregate ``cpu`` line of /proc/stat's text; ToolOutputError when it is missing or malformed."""
    agg = None
    cpus = 0
    for line in text.splitlines():
        if line.startswith("cpu "):
            agg = line.split()[1:]
        elif line.startswith("cpu") and line[3:4].isdigit():
            cpus += 1
    if agg is None:
        raise _bad_stat("no aggregate 'cpu' line", text)
    try:
        v = [int(x) for x in agg]
    except ValueError:
        raise _bad_stat(f"the 'cpu' line has a field that is not a number: {' '.join(agg)}", text) from None
    if len(v) < 4 or any(x < 0 for x in v):
        raise _bad_stat(f"the 'cpu' line has too few or negative fields: {' '.join(agg)}", text)
    v += [0] * (8 - len(v))  # kernels before 2.6.11 had no steal; before 2.5.41 no iowait/irq/softirq
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    return CpuTimes(busy=user + nice + system + irq + softirq + steal, idle=idle + iowait, cpus=max(cpus, 1))


def cpu_times(path: str = STAT) -> Optional[CpuTimes]:
    """The machine's CPU times now; None where there is no /proc/stat (FreeBSD) or it cannot be read."""
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return parse_stat(fh.read())
    except (OSError, ToolOutputError):
        return None


class CpuSampler:
    """/proc/stat read every ``interval_s`` on a thread while a step runs, so that the CPU can be taken over
    the step's measured window (after fio laid out its files and ramped), not over fio's whole run: a dataset
    load's file layout alone cost more CPU than its measured seconds in the lab (issue #37's host probe)."""

    def __init__(self, interval_s: float = 0.25, path: str = STAT):
        import threading

        self.interval_s, self.path = interval_s, path
        self.samples: List[Tuple[float, CpuTimes]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="slogqual-cpu-sampler", daemon=True)

    def _loop(self) -> None:
        import time

        while True:
            t = cpu_times(self.path)
            if t is not None:
                self.samples.append((time.time(), t))
            if self._stop.wait(self.interval_s):
                return

    def start(self) -> "CpuSampler":
        self._thread.start()
        return self

    def stop(self) -> "CpuSampler":
        self._stop.set()
        self._thread.join(timeout=5)
        t = cpu_times(self.path)
        if t is not None:
            import time
            self.samples.append((time.time(), t))
        return self

    def between(self, start: float, end: float) -> Optional[Tuple[CpuTimes, float, float]]:
        """(the CPU times over the samples nearest inside [start, end], their first and last time), or None
        where fewer than two samples lie inside."""
        inside = [(t, c) for t, c in self.samples if start <= t <= end]
        if len(inside) < 2:
            return None
        (t0, c0), (t1, c1) = inside[0], inside[-1]
        return c1 - c0, t0, t1
