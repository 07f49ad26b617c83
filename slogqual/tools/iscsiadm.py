"""iscsiadm (open-iscsi): the Linux initiator's discovery, login, logout and session table.

Argv builders for the steps a transport scenario takes (discovery on the loopback portal, login to
our target, logout and deleting the node record it made) and the parser of ``iscsiadm -m session
-P 3``, which names the SCSI disk (sdX) each LUN of a session became. iscsiadm needs iscsid: exit
status 20 (ISCSI_ERR_ISCSID_NOTCONN, iscsiadm(8)) says it is not running.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from slogqual.tools import spawn as _run

PROGRAM = "iscsiadm"
ISCSID_NOT_CONNECTED = 20  # iscsiadm(8) EXIT STATUS: could not connect to iscsid
NO_OBJECTS_FOUND = 21  # no records/targets/sessions/portals found
INITIATOR_NAME_FILE = "/etc/iscsi/initiatorname.iscsi"


def version() -> _run.ToolVersion:
    """'iscsiadm version 2.1.8' -> (2, 1, 8)."""
    return _run.get_version(PROGRAM, ["--version"], r"iscsiadm version (\d+)\.(\d+)(?:\.(\d+))?")


def check_version() -> _run.ToolVersion:
    return _run.check_version(PROGRAM, version)


def portal(host: str, port: int = 3260) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def discovery_argv(host: str, port: int = 3260) -> List[str]:
    return [PROGRAM, "-m", "discovery", "-t", "sendtargets", "-p", portal(host, port)]


def new_node_argv(iqn: str, host: str, port: int = 3260) -> List[str]:
    """A node record for this one target and portal (what discovery would write, for it alone)."""
    return [PROGRAM, "-m", "node", "-o", "new", "-T", iqn, "-p", portal(host, port)]


def login_argv(iqn: str, host: str, port: int = 3260) -> List[str]:
    return [PROGRAM, "-m", "node", "-T", iqn, "-p", portal(host, port), "--login"]


def logout_argv(iqn: str, host: str, port: int = 3260) -> List[str]:
    return [PROGRAM, "-m", "node", "-T", iqn, "-p", portal(host, port), "--logout"]


def delete_node_argv(iqn: str, host: str, port: int = 3260) -> List[str]:
    """Remove the node record discovery wrote for our target (and only it: -T and -p name it)."""
    return [PROGRAM, "-m", "node", "-T", iqn, "-p", portal(host, port), "-o", "delete"]


def session_argv() -> List[str]:
    return [PROGRAM, "-m", "session", "-P", "3"]


def parse_initiator_name(text: str) -> str:
    """The InitiatorName= of /etc/iscsi/initiatorname.iscsi (comments and blanks skipped)."""
    for line in (text or "").splitlines():
        line = line.strip()
        if line.startswith("InitiatorName="):
            name = line.split("=", 1)[1].strip()
            if re.fullmatch(r"iqn\.[0-9]{4}-[0-9]{2}\.[^\s]+|eui\.[0-9A-Fa-f]{16}", name):
                return name
            raise ValueError(f"InitiatorName {name!r} is not an iqn. or eui. name")
    raise ValueError("no InitiatorName= line")


@dataclass
class Lun:
    lun: int
    disk: Optional[str]  # 'sdb': the block device it became (None while it is not attached)
    state: str = ""
    host: Optional[int] = None
    channel: Optional[int] = None
    target_id: Optional[int] = None


@dataclass
class Session:
    target: str  # the target's IQN
    portal: str = ""  # 'IP:PORT,TPGT' (Current Portal)
    sid: Optional[int] = None
    initiator: str = ""  # Iface Initiatorname
    connection_state: str = ""  # 'LOGGED IN'
    session_state: str = ""  # 'LOGGED_IN'
    host_number: Optional[int] = None
    params: Dict[str, str] = field(default_factory=dict)  # negotiated iSCSI parameters
    luns: List[Lun] = field(default_factory=list)

    @property
    def logged_in(self) -> bool:
        return self.session_state == "LOGGED_IN"

    def disks(self) -> Dict[int, str]:
        """LUN number -> sdX of the LUNs that are attached."""
        return {lun.lun: lun.disk for lun in self.luns if lun.disk}


_NEGOTIATED = ("HeaderDigest", "DataDigest", "MaxRecvDataSegmentLength", "MaxXmitDataSegmentLength",
               "FirstBurstLength", "MaxBurstLength", "ImmediateData", "InitialR2T", "MaxOutstandingR2T")
_TARGET = re.compile(r"^Target:\s+(\S+)(?:\s+\((?:non-)?flash\))?\s*$")
_SCSI = re.compile(r"^scsi([0-9]+)\s+Channel\s+([0-9]+)\s+Id\s+([0-9]+)\s+Lun:\s+([0-9]+)\s*$")
_DISK = re.compile(r"^Attached scsi disk\s+(\S+)\s+State:\s*(\S.*?)\s*$")
_HOST = re.compile(r"^Host Number:\s+([0-9]+)\s+State:\s*(\S.*?)\s*$")


def parse_sessions(text: str) -> List[Session]:
    """``iscsiadm -m session -P 3`` -> its sessions (indentation, tabs or spaces, is ignored), every one:
    a target reached through several portals (multipath) is printed as one ``Target:`` line followed
    by one block per session, each from its ``Current Portal:`` line. ValueError for text that is not
    that table: a LUN line outside a session, a disk line without its LUN line, a number that is not
    one."""
    sessions: List[Session] = []
    cur: Optional[Session] = None
    pending: Optional[Lun] = None
    saw_header = False
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line or set(line) == {"*"}:
            continue
        if line.startswith("iSCSI Transport Class version") or line.startswith("version "):
            saw_header = True
            continue
        m = _TARGET.match(line)
        if m:
            cur = Session(target=m.group(1))
            sessions.append(cur)
            pending = None
            continue
        if cur is None:
            raise ValueError(f"a line before any 'Target:' line: {line[:80]!r}")
        m = _SCSI.match(line)
        if m:
            host, channel, tid, lun = (int(g) for g in m.groups())
            pending = Lun(lun=lun, disk=None, host=host, channel=channel, target_id=tid)
            cur.luns.append(pending)
            continue
        m = _DISK.match(line)
        if m:
            if pending is None or pending.disk is not None:
                raise ValueError(f"an attached disk without its 'scsiN Channel .. Lun:' line: {line[:80]!r}")
            pending.disk, pending.state = m.group(1), m.group(2)
            continue
        m = _HOST.match(line)
        if m:
            cur.host_number = int(m.group(1))
            continue
        key, sep, value = line.partition(":")
        if not sep:
            continue  # a heading such as 'Interface:' has its colon; anything else is noise we keep out
        key, value = key.strip(), value.strip()
        if key == "Current Portal":
            if cur.portal or cur.sid is not None or cur.luns:
                # another session to the same target (multipath: one per portal): iscsiadm prints
                # the Target: line once and each session from its Current Portal: on
                cur = Session(target=cur.target)
                sessions.append(cur)
                pending = None
            cur.portal = value
        elif key == "SID":
            cur.sid = _run.whole(value)
        elif key == "Iface Initiatorname":
            cur.initiator = value
        elif key == "iSCSI Connection State":
            cur.connection_state = value
        elif key == "iSCSI Session State":
            cur.session_state = value
        elif key in _NEGOTIATED:
            cur.params[key] = value
    if not sessions and not saw_header:
        raise ValueError("no 'Target:' line: not iscsiadm -m session -P 3 output")
    return sessions


def sessions() -> List[Session]:
    """The initiator's sessions now; [] when there are none (exit status 21). ToolFailedError when
    iscsid is not running (status 20) or iscsiadm fails otherwise."""
    proc = _run.run(session_argv(), timeout=60, typed_timeout=True)
    if proc.returncode == NO_OBJECTS_FOUND:
        return []
    if proc.returncode != 0:
        raise _run.failure(proc.args, proc.returncode, proc.stderr, proc.stdout)
    return _run.parse_output(proc, parse_sessions)


def iscsiadm(argv: List[str], timeout: float = 120) -> str:
    """Run one iscsiadm action; ToolFailedError with its complaint when it fails."""
    return _run.run_checked(argv, timeout=timeout)


def iscsid_argv() -> List[str]:
    """iscsid in the foreground (-f), ended by its PID: iscsiadm's daemon, where none runs."""
    return ["iscsid", "-f"]


def iscsid() -> _run.Background:
    """iscsid as a helper of slogqual's (not yet started), ended by its PID. It runs in its own session:
    iscsid, shutting down, signals its whole process group (measured in the lab: started in ours it took
    slogqual and the guest's job script down with it)."""
    return _run.Background(iscsid_argv(), grace_s=10, new_session=True)
