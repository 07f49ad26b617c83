"""What a result must carry to be reproduced and distrusted (after pyperf's metadata)."""

from __future__ import annotations

import datetime
import os
import platform
import socket
import sys
from typing import Any, Dict, List, Optional

from slogqual import __version__


def now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


def _os_release() -> Optional[str]:
    try:
        with open("/etc/os-release") as fh:
            for line in fh:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return None


def _cpu_model() -> Optional[str]:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def collect(fio_version: str, argv: Optional[List[str]] = None) -> Dict[str, Any]:
    uname = platform.uname()
    return {
        "host": socket.gethostname(),
        "os": _os_release() or f"{uname.system} {uname.release}",
        "system": uname.system,
        "kernel": f"{uname.release} {uname.version}",
        "machine": uname.machine,
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "fio_version": fio_version,  # 'fio-3.33'
        "slogqual_version": __version__,
        "python": sys.version.split()[0],
        "started": now_iso(),
        "argv": list(argv) if argv is not None else list(sys.argv),
    }
