"""fio's client/server mode: load from several fio endpoints, their figures kept apart and merged.

fio is one program with two modes, so this is the second half of the fio door (slogqual.tools.fio
builds the loads; this module starts ``fio --server`` and runs ``fio --client``):

* :class:`FioServer`: a ``fio --server=ip:127.0.0.1,PORT`` of our own on loopback (the lab's clients,
  and the tests). It is started in a session of its own because a server forks a handler per
  connection and that handler forks the job: ending the server's PID alone leaves the job writing.
  It is therefore ended by its process group, whose id is the PID we started (never by name), on
  success, error, Ctrl-C and SIGTERM. Its environment carries ``SLOGQUAL_FIO_SERVER`` naming us, so a
  leftover one can be told from anybody else's fio (``running_servers``).
* :func:`run_clients`: one controller ``fio --output-format=json --client=EP1 job1 --client=EP2 job2
  ...``. fio's client mode takes job files only (options on its command line are refused), so each
  endpoint's load is written as a job file into a private directory that is removed afterwards.
* :func:`parse_report`: fio's client JSON has one "client_stats" entry per client (its ``hostname``
  and ``port`` say which) and, with two or more clients, an "All clients" entry that fio sums itself:
  total_ios and io_bytes added, runtime the longest, IOPS = 1000 x total_ios / runtime_ms (stat.c,
  sum_thread_stats and the JSON writer). The sum of the clients' own IOPS therefore equals the merged
  IOPS when their runtimes (whole milliseconds) are equal, and exceeds it by at most what the runtimes
  differ by; :meth:`ClientReport.iops_sum_bound` is that margin.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import signal
import socket
import tempfile
import time
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from slogqual.errors import MeasurementError, ToolTimeoutError, UsageError
from slogqual.kernel import procfs
from slogqual.tools import fio
from slogqual.tools import spawn as _run

PROGRAM = fio.PROGRAM
DEFAULT_PORT = 8765  # fio's own default (fio(1), CLIENT / SERVER)
SERVER_MARK_ENV = "SLOGQUAL_FIO_SERVER"  # in a server's environment: 'slogqual-fio-server-<our pid>-<port>'
ALL_CLIENTS = "All clients"
KILLED_GONE_S = 2.0  # after a server group's SIGKILL, how long stop waits for its members to be gone (FioServer.stop)


def version() -> _run.ToolVersion:
    return fio.version()


def check_version() -> _run.ToolVersion:
    return fio.check_version()


# --- endpoints --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Endpoint:
    """A fio server to connect to: a host name or IP address and a TCP port."""

    host: str
    port: int = DEFAULT_PORT

    @property
    def is_ipv6(self) -> bool:
        return ":" in self.host

    @property
    def connect_string(self) -> str:
        """fio's form: 'ip:HOST,PORT' ('ip6:ADDR,PORT' for an IPv6 address)."""
        return f"{'ip6' if self.is_ipv6 else 'ip'}:{self.host},{self.port}"

    @property
    def label(self) -> str:
        return f"[{self.host}]:{self.port}" if self.is_ipv6 else f"{self.host}:{self.port}"


def _port(text: str, spec: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise UsageError(f"fio client {spec!r}: the port must be a number from 1 to 65535")
    return int(text)


def parse_endpoint(spec: str) -> Endpoint:
    """'HOST', 'HOST:PORT', '[IPV6]:PORT' or a bare IPv6 address; UsageError (one line) otherwise."""
    s = spec.strip()
    if not s or any(c.isspace() or c in ",;/" for c in s):
        raise UsageError(f"fio client {spec!r}: use HOST or HOST:PORT")
    if s.startswith("["):
        host, sep, rest = s[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise UsageError(f"fio client {spec!r}: use [IPV6]:PORT")
        port = _port(rest[1:], spec) if rest else DEFAULT_PORT
        if ":" not in host:
            raise UsageError(f"fio client {spec!r}: brackets are for an IPv6 address")
    elif s.count(":") > 1:
        host, port = s, DEFAULT_PORT  # a bare IPv6 address
    else:
        host, sep, rest = s.partition(":")
        port = _port(rest, spec) if sep else DEFAULT_PORT
    if not host:
        raise UsageError(f"fio client {spec!r}: the host is missing")
    if ":" in host:
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise UsageError(f"fio client {spec!r}: {host!r} is not an IPv6 address") from None
    return Endpoint(host, port)


def parse_endpoints(spec: str) -> List[Endpoint]:
    """'--clients HOST[:PORT],...' -> endpoints; a repeated one is refused."""
    out = [parse_endpoint(part) for part in spec.split(",")]
    labels = [e.label for e in out]
    dup = next((lab for lab in labels if labels.count(lab) > 1), None)
    if dup:
        raise UsageError(f"fio client {dup} is named twice")
    return out


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# --- servers of our own -----------------------------------------------------------------------------------

def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on at this moment (the kernel's pick)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def listening(host: str, port: int) -> bool:
    """True when a TCP connect to host:port succeeds (the connection is closed at once; a fio server's
    handler for it reads end-of-file and exits)."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


class FioServer:
    """A ``fio --server`` on a loopback address, ours: started in its own session, ended by its process
    group (the PID we started), its environment marked with SERVER_MARK_ENV. Only loopback: a fio server
    runs any job it is sent (it writes any file), so one listening beyond this host is the user's to
    start on purpose, on the client host (``fio --server``), never ours."""

    def __init__(self, host: str = "127.0.0.1", port: Optional[int] = None, grace_s: float = 5.0):
        if not is_loopback(host):
            raise UsageError(f"a fio server slogqual starts listens on loopback only, not {host!r}")
        self.host = host
        self.port = port
        self.grace_s = grace_s
        self.process: Optional[_run.Background] = None

    @property
    def mark(self) -> str:
        return f"slogqual-fio-server-{os.getpid()}-{self.port}"

    def argv(self) -> List[str]:
        return [PROGRAM, f"--server={Endpoint(self.host, self.port).connect_string}"]

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(self.host, self.port)

    @property
    def pid(self) -> Optional[int]:
        return self.process.pid if self.process else None

    def start(self, timeout: float = 15.0, attempts: int = 3) -> "FioServer":
        """Start it and wait until it accepts connections. A port picked here can be taken by someone
        else before fio binds it: fio then exits at once, and another port is tried."""
        check_version()
        pick = self.port is None
        for attempt in range(attempts):
            if pick:
                self.port = free_port(self.host)
            env = dict(os.environ, **{SERVER_MARK_ENV: self.mark})
            self.process = _run.Background(self.argv(), new_session=True, env=env, grace_s=self.grace_s)
            try:
                self.process.start()
                self.process.wait_until(lambda: listening(self.host, self.port), timeout, "listen on its port")
                return self
            except MeasurementError as exc:
                self.stop()
                if not pick or attempt == attempts - 1 or isinstance(exc, ToolTimeoutError):
                    raise
            except BaseException:
                self.stop()
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def stop(self) -> Optional[int]:
        """SIGTERM to its process group while its leader is still unreaped (so the group id cannot
        have been reused), ``grace_s`` for the leader to exit, then SIGKILL to whatever of the group is
        left (a job still running in a forked handler); the leader is reaped last."""
        bg = self.process
        if bg is None or bg.proc is None:
            return None
        pgid = bg.proc.pid
        if bg.proc.returncode is None:  # not reaped yet: the group id is still ours
            _killpg(pgid, signal.SIGTERM)
            deadline = time.monotonic() + self.grace_s
            while not _exited_unreaped(pgid) and time.monotonic() < deadline:
                time.sleep(0.02)
            _killpg(pgid, signal.SIGKILL)
            # a killed member goes when the kernel next runs it: one inside a write (uninterruptible) only once the
            # write returns. Wait (bounded) until none of the group is left but the unreaped leader, so that what
            # runs next never meets this server's job still writing (a cold CI run under load, 2026-12-01: a member
            # still alive when stop returned)
            deadline = time.monotonic() + KILLED_GONE_S
            while procfs.group_members(pgid) and time.monotonic() < deadline:
                time.sleep(0.02)
        return bg.stop()

    def __enter__(self) -> "FioServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass
    except PermissionError:  # a group that is no longer ours: leave it
        pass


def _exited_unreaped(pid: int) -> bool:
    """Has our child ``pid`` exited? Asked without reaping it (WNOWAIT), so its PID stays taken."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def running_servers(mark_prefix: str = "slogqual-fio-server-") -> List[int]:
    """PIDs of live (not zombie) processes whose environment carries our server mark (Linux /proc;
    an empty list where there is none)."""
    found = []
    prefix = f"{SERVER_MARK_ENV}={mark_prefix}".encode()
    for pid, _ in procfs.live_processes():
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                env = fh.read().split(b"\0")
        except OSError:
            continue  # gone meanwhile, or not ours to read
        if any(e.startswith(prefix) for e in env):
            found.append(pid)
    return sorted(found)


# --- the controller run -----------------------------------------------------------------------------------

@dataclass
class ClientResult:
    endpoint: str  # 'HOST:PORT' as fio reports the client (its "hostname" and "port")
    result: fio.FioWriteResult


@dataclass
class ClientReport:
    clients: List[ClientResult]
    merged: fio.FioWriteResult  # fio's "All clients" sum; with one client, that client's own figures
    fio_version: str = ""

    def iops_sum(self) -> float:
        return sum(c.result.iops for c in self.clients)

    def iops_sum_bound(self) -> float:
        """How far the sum of the clients' IOPS may exceed the merged IOPS by fio's arithmetic alone:
        each client's IOPS is over its own runtime, the merged one over the longest (whole ms)."""
        longest = max(c.result.runtime_ms for c in self.clients)
        return sum(c.result.ios * 1000.0 * (1.0 / c.result.runtime_ms - 1.0 / longest)
                   for c in self.clients if c.result.runtime_ms > 0)


def _label(entry: dict) -> str:
    host, port = entry.get("hostname"), entry.get("port")
    if not isinstance(host, str) or not host or isinstance(port, bool) or not isinstance(port, int):
        raise ValueError(f"a client_stats entry without hostname/port ({host!r}, {port!r})")
    return Endpoint(host, port).label


def parse_report(text: str) -> ClientReport:
    """fio's JSON report of a ``--client`` run: per-client figures and the merged ones. ValueError for
    anything else, including a merged entry that does not add up (fio sums total_ios exactly)."""
    doc = fio.extract_json(text)
    if not isinstance(doc, dict) or not isinstance(doc.get("client_stats"), list) or not doc["client_stats"]:
        raise ValueError("no client_stats in fio's report (not a --client run?)")
    version = doc.get("fio version", "")
    version = version if isinstance(version, str) else ""
    clients: List[ClientResult] = []
    merged = None
    for entry in doc["client_stats"]:
        if not isinstance(entry, dict):
            raise ValueError("a client_stats entry is not an object")
        if entry.get("jobname") == ALL_CLIENTS:
            if merged is not None:
                raise ValueError("two 'All clients' entries")
            merged = fio.job_result(entry, version)
            continue
        label = _label(entry)
        if any(c.endpoint == label for c in clients):
            # slogqual's loads are one group per client (group_reporting): two entries would be
            # two groups, which fio's "All clients" does not sum the way this parser reads it
            raise ValueError(f"client {label} reported more than one job group")
        clients.append(ClientResult(label, fio.job_result(entry, version)))
    if not clients:
        raise ValueError("no per-client entry in client_stats")
    if merged is None:
        if len(clients) > 1:
            raise ValueError(f"{len(clients)} clients but no '{ALL_CLIENTS}' entry")
        merged = clients[0].result
    elif len(clients) < 2:
        raise ValueError(f"an '{ALL_CLIENTS}' entry for a single client")
    total = sum(c.result.ios for c in clients)
    if merged.ios != total:
        raise ValueError(f"'{ALL_CLIENTS}' has {merged.ios} IOs, the clients {total}")
    return ClientReport(clients, merged, version)


def _complaints(stdout: str, stderr: str) -> str:
    """What fio and its clients said: the controller's stderr, then the text before the JSON report on
    stdout, where a client's own errors arrive ('<host> fio: pid=0, err=22/file:...')."""
    head = (stdout or "").split("\n{", 1)[0] if not (stdout or "").startswith("{") else ""
    lines = [ln.split("> ", 1)[1] if ln.startswith("<") and "> " in ln else ln for ln in head.splitlines()]
    return "\n".join([stderr or ""] + lines)


def interpret(stdout: str, stderr: str, returncode: int, endpoints: Sequence[Endpoint], bs: int,
              argv: Optional[Sequence[str]] = None) -> ClientReport:
    """A controller run's output as a report, or an error naming the cause, as fio.interpret does
    for one fio: ToolFailedError when fio or a client failed (fio exits 0 when a client cannot even
    connect: a client missing from the report is a failure too), ToolOutputError when the report
    cannot be read, MeasurementError when a client completed no writes."""
    argv = list(argv) if argv else [PROGRAM]
    where = ", ".join(e.label for e in endpoints) or "fio clients"
    said = _complaints(stdout, stderr)
    try:
        report = parse_report(stdout)
    except ValueError as exc:
        if returncode != 0:
            raise _run.failure(argv, returncode, said, message=f"fio clients {where} failed at bs={bs}: "
                               + fio.error_line(said, f"exit code {returncode}, no result")) from None
        raise _run.parse_failed(PROGRAM, argv, stdout, f"{exc} (clients {where}, bs={bs})", stderr=stderr) from None
    got = {c.endpoint for c in report.clients}
    missing = [e.label for e in endpoints if e.label not in got]
    failed = [c.endpoint for c in report.clients if c.result.error] + missing
    if returncode != 0 or failed or report.merged.error:
        raise _run.failure(argv, returncode, said, message=f"fio clients {where} failed at bs={bs}"
                           + (f" (on {', '.join(failed)})" if failed else "") + ": "
                           + fio.error_line(said, f"exit code {returncode}"))
    idle = [c.endpoint for c in report.clients if c.result.ios == 0]
    if idle:
        raise MeasurementError(f"fio client(s) {', '.join(idle)} completed no writes at bs={bs}")
    return report


def build_argv(job_files: Sequence[Tuple[Endpoint, str]]) -> List[str]:
    """The controller's argv: each endpoint followed by the job file sent to it."""
    argv = [PROGRAM, "--output-format=json"]
    for endpoint, path in job_files:
        argv += [f"--client={endpoint.connect_string}", path]
    return argv


def run_clients(parts: Sequence[Tuple[Endpoint, fio.FioLoad]], timeout: Optional[float] = None) -> ClientReport:
    """Drive each endpoint with its load in one controller run; per-client and merged figures."""
    if not parts:
        raise UsageError("a fio client run needs at least one client")
    labels = [e.label for e, _ in parts]
    if len(set(labels)) != len(labels):
        raise UsageError("a fio client is named twice")
    texts = [fio.job_file(load) for _, load in parts]  # bad input refused before anything is written
    if timeout is None:
        timeout = max((load.runtime_s + load.ramp_s) for _, load in parts) * 3 + 300
    jobdir = tempfile.mkdtemp(prefix="slogqual-fio-jobs-")
    try:
        files = []
        for i, ((endpoint, _), text) in enumerate(zip(parts, texts)):
            path = os.path.join(jobdir, f"client{i}.fio")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            files.append((endpoint, path))
        argv = build_argv(files)
        try:
            proc = _run.run(argv, timeout=timeout, typed_timeout=True)
        except ToolTimeoutError as exc:
            raise _run.timed_out(argv, timeout, exc.stderr_tail, f"(fio clients {', '.join(labels)})") from None
    finally:
        shutil.rmtree(jobdir, ignore_errors=True)
    return interpret(proc.stdout, proc.stderr, proc.returncode, [e for e, _ in parts], parts[0][1].bs, argv)

