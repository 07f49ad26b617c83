"""transport = "iscsi" on FreeBSD: the zvols behind ctld (CTL) with a private ctl.conf, logged in with
iscsictl on loopback.

Setup, each step's undo recorded as soon as it is done: a private 0700 directory
``slogqual-<pool>-ctld-XXXX`` holding our ctl.conf (target ``iqn.2003-01.org.slogqual:<pool>``, a portal
on 127.0.0.1:3260 only, a LUN per zvol, access for this host's iscsictl initiator name only) and the
pidfile that file names; ``ctld -f FILE`` (it daemonizes; ctld -d is not used: in debug mode ctld does
not fork and exits after one connection, leaving its LUNs in the kernel); iscsid when none runs
(``iscsid -P OURFILE``: iscsictl only hands the session to it); ``iscsictl -A -p 127.0.0.1:3260 -t IQN``;
the session's da disks read from ``iscsictl -L -v``; the CTL LUNs read back from ``ctladm devlist -v``
(each zvol's LUN: backend, size, block size, options such as ``writecache``). Teardown: ``iscsictl -R -t IQN``, SIGTERM to the
iscsid we started, SIGTERM to our ctld (a graceful ctld exit removes the LUNs it managed), the directory.

Refused before anything is made: a ctld already running (ctld(8): at startup it removes kernel LUNs of
earlier ctld instances missing from its configuration, so ours would delete the system's), and a
session to our IQN already present.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import time
from typing import Callable, Iterator, List, Optional

from slogqual.errors import MeasurementError, UsageError
from slogqual.pool.transport import ISCSI_PORT, LOOPBACK, Attached, iqn_for
from slogqual.pool.transport import freebsd_daemon as _daemon
from slogqual.pool.transport.teardown import Undo
from slogqual.tools import spawn as _run
from slogqual.tools.freebsd import ctladm as _ctladm
from slogqual.tools.freebsd import ctld as _ctld
from slogqual.tools.freebsd.host import LIVE, Host

PORTAL = f"{LOOPBACK}:{ISCSI_PORT}"


def sessions(host: Host) -> List[_ctld.Session]:
    argv = _ctld.list_argv()
    return _run.parse_text(_ctld.INITIATOR, argv, _daemon.checked(host, argv), _ctld.parse_list)


def ctl_luns(host: Host, devices: List[str]) -> List[dict]:
    """The CTL LUN serving each zvol (``file`` option = the zvol's path), in the zvols' order; a zvol
    without one is MeasurementError: ctld did not put it behind a LUN."""
    argv = _ctladm.devlist_argv()
    luns = _run.parse_text(_ctladm.PROGRAM, argv, _daemon.checked(host, argv), _ctladm.parse_devlist)
    out = []
    for dev in devices:
        lun = next((x for x in luns if x.file == dev), None)
        if lun is None:
            raise MeasurementError(f"ctladm devlist -v: no CTL LUN serves {dev}")
        out.append({"ctl_lun": lun.lun, "backend": lun.backend, "size_bytes": lun.size_bytes,
                    "blocksize": lun.blocksize, "options": dict(lun.options)})
    return out


def _wait_for_disks(host: Host, iqn: str, luns: int, timeout: float,
                    sleep: Callable[[float], None]) -> _ctld.Session:
    deadline = time.monotonic() + timeout
    while True:
        session = next((s for s in sessions(host) if s.target == iqn), None)
        if session is not None and session.state == "Connected" and len(session.devices) == luns:
            return session
        if time.monotonic() > deadline:
            state = f"{session.state}, {len(session.devices)}" if session else "no session, 0"
            raise MeasurementError(f"iSCSI login to {iqn}: {state} of {luns} LUN(s) became disks "
                                   f"within {timeout:g} s")
        sleep(0.2)


@contextlib.contextmanager
def attach(pool_name: str, devices: List[str], write_cache: Optional[bool] = None, host: Host = LIVE,
           hostname: Optional[str] = None, login_timeout: float = 60.0,
           read: Callable[[str], str] = _daemon.read_file,
           sleep: Callable[[float], None] = time.sleep) -> Iterator[Attached]:
    """Put the zvol devices behind our ctld target and log in; yields the da disks in LUN order."""
    if not devices:
        raise UsageError("an iSCSI transport needs at least one zvol")
    iqn = iqn_for(pool_name)
    initiator = _ctld.default_initiator_name(hostname if hostname is not None else socket.gethostname())
    _daemon.refuse_if_running(host, "ctld", "a second ctld removes the LUNs of the first")
    if any(s.target == iqn for s in sessions(host)):
        raise UsageError(f"an iSCSI session to {iqn} already exists; slogqual will not touch it")
    undo = Undo()
    started: List[str] = []
    try:
        workdir = tempfile.mkdtemp(prefix=f"{pool_name}-ctld-")  # mkdtemp: mode 0700
        undo.push(f"remove {workdir}", lambda: shutil.rmtree(workdir, ignore_errors=True))
        conf = os.path.join(workdir, "ctl.conf")
        pidfile = os.path.join(workdir, "ctld.pid")
        text = _ctld.ctl_conf(iqn, devices, initiator, portal=PORTAL, portal_group=f"{pool_name}-pg",
                              write_cache=write_cache, pidfile=pidfile)
        fd = os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        _daemon.start(host, undo, "ctld", _ctld.ctld_argv(conf), pidfile, read=read, started=started, sleep=sleep)
        if not _daemon.running(host, "iscsid"):
            iscsid_pid = os.path.join(workdir, "iscsid.pid")
            _daemon.start(host, undo, "iscsid", _ctld.iscsid_argv(iscsid_pid), iscsid_pid, read=read,
                          started=started, sleep=sleep)
        _daemon.checked(host, _ctld.login_argv(iqn, PORTAL))
        undo.push(f"log out of {iqn}", lambda: _daemon.checked(host, _ctld.logout_argv(iqn)))
        session = _wait_for_disks(host, iqn, len(devices), login_timeout, sleep)
        disks = [f"/dev/{d}" for d in session.devices]
        served = ctl_luns(host, devices)
        record = {
            "kind": "iscsi", "target": "ctld (CTL)", "iqn": iqn, "portal": PORTAL, "initiator": initiator,
            "ctl_conf": text,
            "luns": [{"lun": i, "zvol": dev, "disk": disks[i], "ctl": served[i]} for i, dev in enumerate(devices)],
            "write_cache_requested": write_cache,
            "negotiated": {k: v for k, v in session.fields.items()
                           if k in ("Header digest", "Data digest", "MaxRecvDataSegmentLength",
                                    "MaxSendDataSegmentLength", "MaxBurstLen", "FirstBurstLen",
                                    "ImmediateData", "Offload driver")},
            "daemons_started": started,
        }
        yield Attached(disks, record)
    finally:
        undo.run()
