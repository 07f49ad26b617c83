"""nbdkit: serve a file or RAM disk over NBD on a Unix socket, optionally slowed down.

Used by the tests (targets with a known added latency, injected IO errors, a full
disk) and by the lab (device classes). The server is a context manager: it is
ended by its own PID on exit, also on error and Ctrl-C, and its socket removed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from slogqual.errors import SlogqualError
from slogqual.tools import run as _run


@dataclass
class NbdServer:
    """An nbdkit process: ``plugin`` with its args, behind ``filters`` with theirs."""

    plugin: str  # e.g. "file", "memory", "full"
    plugin_args: List[str] = field(default_factory=list)  # e.g. ["/tmp/x.img"] or ["size=64M"]
    filters: List[str] = field(default_factory=list)  # e.g. ["delay"]
    filter_args: Dict[str, str] = field(default_factory=dict)  # e.g. {"wdelay": "2ms"}
    socket_dir: Optional[str] = None
    proc: Optional[subprocess.Popen] = None
    socket: Optional[str] = None

    def argv(self) -> List[str]:
        argv = ["nbdkit", "--foreground", "--exit-with-parent", "--unix", self.socket]
        argv += [f"--filter={f}" for f in self.filters]
        argv += [self.plugin, *self.plugin_args]
        argv += [f"{k}={v}" for k, v in self.filter_args.items()]
        return argv

    @property
    def uri(self) -> str:
        return f"nbd+unix:///?socket={self.socket}"

    def start(self, timeout: float = 15.0) -> "NbdServer":
        self._tmpdir = tempfile.mkdtemp(prefix="slogqual-nbd-", dir=self.socket_dir)
        self.socket = os.path.join(self._tmpdir, "nbd.sock")
        self.proc = _run.popen(self.argv(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + timeout
        while not os.path.exists(self.socket):
            if self.proc.poll() is not None:
                err = (self.proc.stderr.read() or "").strip().splitlines()
                self._cleanup()
                raise SlogqualError(f"nbdkit exited: {err[-1] if err else self.proc.returncode}")
            if time.monotonic() > deadline:
                self.stop()
                raise SlogqualError("nbdkit did not create its socket in time")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._cleanup()

    def _cleanup(self) -> None:
        if self.proc and self.proc.stderr:
            self.proc.stderr.close()
        tmpdir = getattr(self, "_tmpdir", None)
        if tmpdir and os.path.isdir(tmpdir):
            for name in os.listdir(tmpdir):
                os.unlink(os.path.join(tmpdir, name))
            os.rmdir(tmpdir)
            self._tmpdir = None

    def __enter__(self) -> "NbdServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def export_size(uri: str) -> Optional[int]:
    """Size of an NBD export in bytes via nbdinfo, or None when nbdinfo is absent."""
    if _run.which("nbdinfo") is None:
        return None
    proc = _run.run(["nbdinfo", "--size", uri], timeout=30)
    if proc.returncode != 0:
        msg = (proc.stderr or "").strip().splitlines()
        raise SlogqualError(f"cannot reach {uri}: {msg[-1] if msg else 'nbdinfo failed'}")
    return int(proc.stdout.strip())
