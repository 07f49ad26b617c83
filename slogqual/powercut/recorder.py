"""The recorder: the witness that outlives the power cut.

The writer tells it, over TCP, every record the device acknowledged (after the write and its flush
returned). It keeps them in memory and, with a journal file, on its own disk, one JSON line each, so
that ``slogqual powercut verify`` can ask it later which records must be on the device. On real
hardware it runs on another machine (``slogqual powercut record``); when the cut only kills the device
(the emulation) it can run inside the ``powercut run`` process.

Protocol: JSON objects, one per line, UTF-8.

- writer → recorder: ``{"op": "begin", "run": RUN, "cycle": C, "sizes": [...], "target": PATH}``,
  ``{"op": "ack", "run": RUN, "cycle": C, "seq": N}``, ``{"op": "end", "run": RUN, "cycle": C, "why": TEXT}``
  (no replies: acknowledging costs the writer no round trip);
- anyone → recorder: ``{"op": "query", "run": RUN}`` → one line ``{"run": RUN, "cycles": {"C": {"sizes",
  "target", "acked": [N, …], "ended"}}}`` (``cycles`` empty for a run it never heard of);
  ``{"op": "runs"}`` → ``{"runs": [RUN, …]}``.
"""

from __future__ import annotations

import json
import os
import socket
import socketserver
import stat
import threading
from typing import Any, Dict, List, Optional, Tuple

from slogqual.errors import MeasurementError, UsageError

DEFAULT_PORT = 7207
MAX_LINE = 1 << 20


def parse_address(text: str, default_host: str = "127.0.0.1", listen: bool = False) -> Tuple[str, int]:
    """'HOST:PORT', ':PORT', 'PORT' or '[v6]:PORT' -> (host, port); UsageError for anything else. Port 0
    (a free port, the kernel's choice) only where ``listen``."""
    t = (text or "").strip()
    host, port = default_host, t
    if t.startswith("["):
        end = t.find("]")
        if end < 0 or not t[end + 1:].startswith(":"):
            raise UsageError(f"bad address {text!r}: use HOST:PORT")
        host, port = t[1:end], t[end + 2:]
    elif ":" in t:
        host, port = t.rsplit(":", 1)
        host = host or default_host
    low = 0 if listen else 1
    if not port.isdigit() or not low <= int(port) < 65536 or not host:
        raise UsageError(f"bad address {text!r}: use HOST:PORT with a port from {low} to 65535")
    return host, int(port)


class Recorder:
    """What the recorder knows: run -> cycle -> {sizes, target, acked, ended}; thread-safe."""

    def __init__(self, journal: Optional[str] = None):
        self.runs: Dict[str, Dict[int, Dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._journal = open(journal, "a", encoding="utf-8") if journal else None

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None

    def _cycle(self, run: str, cycle: int) -> Dict[str, Any]:
        return self.runs.setdefault(run, {}).setdefault(cycle, {"sizes": [], "target": None, "acked": [],
                                                                 "ended": None})

    def handle(self, msg: Any) -> Optional[Dict[str, Any]]:
        """Apply one message; the reply for a query (None for writer messages). ValueError when malformed."""
        if not isinstance(msg, dict) or not isinstance(msg.get("op"), str):
            raise ValueError("not a recorder message")
        op = msg["op"]
        if op == "runs":
            with self._lock:
                return {"runs": sorted(self.runs)}
        run = msg.get("run")
        if not isinstance(run, str) or not run:
            raise ValueError("message without a run id")
        if op == "query":
            with self._lock:
                cycles = self.runs.get(run, {})
                return {"run": run, "cycles": {str(c): {**v, "acked": list(v["acked"])} for c, v in cycles.items()}}
        cycle = msg.get("cycle")
        if not isinstance(cycle, int) or isinstance(cycle, bool) or cycle < 1:
            raise ValueError("message without a cycle number")
        with self._lock:
            entry = self._cycle(run, cycle)
            if op == "begin":
                sizes = msg.get("sizes")
                if not isinstance(sizes, list) or not all(isinstance(s, int) and s > 0 for s in sizes) or not sizes:
                    raise ValueError("begin without record sizes")
                entry.update(sizes=list(sizes), target=str(msg.get("target")))
            elif op == "ack":
                seq = msg.get("seq")
                if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
                    raise ValueError("ack without a sequence number")
                entry["acked"].append(seq)
            elif op == "end":
                entry["ended"] = str(msg.get("why") or "")
            else:
                raise ValueError(f"unknown op {op!r}")
            if self._journal is not None:
                self._journal.write(json.dumps(msg, sort_keys=True) + "\n")
                self._journal.flush()
        return None

    def acked(self, run: str, cycle: int) -> int:
        with self._lock:
            return len(self.runs.get(run, {}).get(cycle, {}).get("acked", []))


JOURNAL_OPS = ("begin", "ack", "end")
MAX_JOURNAL = 1 << 30  # ~13 million acknowledged records; a file larger than this is not a journal


def is_journal(path: str) -> bool:
    """Whether ``path`` is a regular file that is empty or begins with a writer's message (the output
    guard's recogniser: a journal may be appended to, nothing else may)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as fh:
            first = fh.readline(MAX_LINE)
    except OSError:
        return False
    if not first:
        return True
    try:
        msg = json.loads(first)
    except ValueError:
        return False
    return isinstance(msg, dict) and msg.get("op") in JOURNAL_OPS


def load_journal(path: str) -> Recorder:
    """A Recorder rebuilt from its journal file (``powercut record -j FILE``); bad lines are skipped
    only at the very end (the line being written when the recorder died), UsageError elsewhere. What is
    not a regular file (a FIFO would block, /dev/zero never end) is refused before it is opened, and what
    is read is bounded: MAX_JOURNAL in all, MAX_LINE a line."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{path}: not a powercut journal (not a regular file)")
        if st.st_size > MAX_JOURNAL:
            raise UsageError(f"{path}: not a powercut journal (larger than {MAX_JOURNAL >> 20} MiB)")
        rec = Recorder()
        with open(path, "rb") as fh:
            _replay(rec, path, fh)
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror or exc}") from None
    return rec


def _replay(rec: Recorder, path: str, fh) -> None:
    bad: Optional[str] = None  # a bad line is forgiven only as the last one
    total = 0
    for i, raw in enumerate(iter(lambda: fh.readline(MAX_LINE + 1), b""), 1):
        total += len(raw)
        if total > MAX_JOURNAL:
            raise UsageError(f"{path}: not a powercut journal (larger than {MAX_JOURNAL >> 20} MiB)")
        if not raw.strip():
            continue
        if bad:
            raise UsageError(bad)
        try:
            if len(raw) > MAX_LINE:
                raise ValueError(f"a line longer than {MAX_LINE} bytes")
            rec.handle(json.loads(raw.decode("utf-8")))
        except UnicodeDecodeError:
            raise UsageError(f"{path}: not a powercut journal (not UTF-8 text)") from None
        except ValueError as exc:
            bad = f"{path}:{i}: not a powercut journal line ({exc})"


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        recorder: Recorder = self.server.recorder  # type: ignore[attr-defined]
        while True:
            line = self.rfile.readline(MAX_LINE)
            if not line:
                return
            try:
                reply = recorder.handle(json.loads(line.decode("utf-8")))
            except (ValueError, UnicodeDecodeError) as exc:
                reply = {"error": str(exc)}
            if reply is not None:
                self.wfile.write((json.dumps(reply) + "\n").encode())
                self.wfile.flush()


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, recorder: Recorder):
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, _Handler)
        self.recorder = recorder


class RecorderServer:
    """A listening recorder: ``serve_forever()`` (the ``record`` command) or ``start()`` in a thread."""

    def __init__(self, host: str = "127.0.0.1", port: int = DEFAULT_PORT, journal: Optional[str] = None):
        self.recorder = Recorder(journal)
        try:
            self.server = _Server((host, port), self.recorder)
        except OSError as exc:
            self.recorder.close()
            raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        self._thread: Optional[threading.Thread] = None

    @property
    def address(self) -> Tuple[str, int]:
        host, port = self.server.server_address[:2]
        return host, port

    def start(self) -> "RecorderServer":
        self._thread = threading.Thread(target=self.server.serve_forever, name="powercut-recorder", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.server.serve_forever()

    def stop(self) -> None:
        if self._thread is not None:
            self.server.shutdown()
            self._thread.join()
            self._thread = None
        self.server.server_close()
        self.recorder.close()

    def __enter__(self) -> "RecorderServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class RecorderClient:
    """A connection to a recorder (the writer's, or verify's for a query)."""

    def __init__(self, host: str, port: int, timeout: float = 10.0):
        self.where = f"{host}:{port}"
        try:
            self.sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as exc:
            raise MeasurementError(f"cannot reach the recorder at {self.where}: {exc.strerror or exc}") from None
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._rfile = self.sock.makefile("rb")

    def send(self, msg: Dict[str, Any]) -> None:
        try:
            self.sock.sendall((json.dumps(msg) + "\n").encode())
        except OSError as exc:
            raise MeasurementError(f"lost the recorder at {self.where}: {exc.strerror or exc}") from None

    def ask(self, msg: Dict[str, Any]) -> Dict[str, Any]:
        self.send(msg)
        try:
            line = self._rfile.readline(MAX_LINE)
        except OSError as exc:
            raise MeasurementError(f"the recorder at {self.where} did not answer: {exc}") from None
        try:
            reply = json.loads(line.decode("utf-8"))
        except ValueError:
            raise MeasurementError(f"the recorder at {self.where} answered garbage: {line[:80]!r}") from None
        if not isinstance(reply, dict) or "error" in reply:
            raise MeasurementError(f"the recorder at {self.where} refused: {reply}")
        return reply

    def query(self, run: str) -> Dict[str, Any]:
        return self.ask({"op": "query", "run": run})

    def close(self) -> None:
        try:
            self._rfile.close()
            self.sock.close()
        except OSError:
            pass

    def __enter__(self) -> "RecorderClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class JournalClient:
    """The recorder as a file: the writer appends every message as one journal line (``load_journal``
    reads it back). Only worth anything where the file lives on a machine the cut does not take down:
    the lab's 9p share, whose writes reach the host before ``write`` returns (9p without a cache), so a
    record is on the host before the writer goes on to the next one. One ``write`` per line on an
    O_APPEND descriptor: a line is never interleaved with another writer's."""

    def __init__(self, path: str):
        self.where = f"journal {path}"
        try:
            self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as exc:
            raise MeasurementError(f"cannot open the journal {path}: {exc.strerror or exc}") from None

    def send(self, msg: Dict[str, Any]) -> None:
        line = (json.dumps(msg, sort_keys=True) + "\n").encode()
        try:
            if os.write(self.fd, line) != len(line):
                raise OSError(0, "short write")
        except OSError as exc:
            raise MeasurementError(f"lost the {self.where}: {exc.strerror or exc}") from None

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> "JournalClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def cycles_of(reply: Dict[str, Any]) -> Dict[int, Dict[str, Any]]:
    """A query reply's cycles keyed by number."""
    return {int(c): v for c, v in (reply.get("cycles") or {}).items()}


def known(reply: Dict[str, Any]) -> List[int]:
    return sorted(cycles_of(reply))



