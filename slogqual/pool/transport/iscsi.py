"""transport = "iscsi" on Linux: the zvols behind LIO (its configfs tree, written directly: kernel/lio.py), logged
in with open-iscsi on loopback.

Setup, each step's undo recorded before it is made and done only where it came to exist: one block backstore
per zvol (``slogqual-<pool>-lunN``), one target ``iqn.2003-01.org.slogqual:<pool>`` with a portal on
127.0.0.1:3260 only, a LUN per backstore and an ACL for this host's initiator name with every LUN mapped, the
TPG enabled without CHAP; then the initiator: a node record for our target and portal alone (``iscsiadm -m node
-o new``: a sendtargets discovery would rewrite the records of every target that portal lists, ours or not),
login, and the session's disks found in ``iscsiadm -m session -P 3``. Teardown: logout, the node record, the
target, the backstores, in that order. iscsid is started (and stopped) only when none runs; LIO's core module
is loaded (and configfs mounted) only where it is not.

The result records the target's IQN, portal, LUN -> zvol -> disk mapping, the write cache LIO
exposes (emulate_write_cache) and the cache type the initiator's sd driver sees, the negotiated
iSCSI parameters, and the versions of iscsiadm and the kernel modules.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Dict, Iterator, List, Optional

from slogqual import interrupts
from slogqual.errors import MeasurementError, SlogqualError, UsageError
from slogqual.pool.transport import ISCSI_PORT, LOOPBACK, Attached, backstore_name, iqn_for
from slogqual.pool.transport.teardown import Undo
from slogqual.tools import iscsiadm as _iscsiadm
from slogqual.tools import modprobe as _modprobe
from slogqual.tools import mount as _mount
from slogqual.kernel import lio as _lio
from slogqual.kernel import procfs as _procfs
from slogqual.kernel import sysfs as _sysfs

KERNEL_MODULES = ("target_core_mod", "target_core_iblock", "iscsi_target_mod", "iscsi_tcp", "libiscsi",
                  "scsi_transport_iscsi")


def initiator_name(path: str = _iscsiadm.INITIATOR_NAME_FILE) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror or exc} (apt-get install open-iscsi writes it)") from None
    try:
        return _iscsiadm.parse_initiator_name(text)
    except ValueError as exc:
        raise UsageError(f"{path}: {exc}") from None


def module_versions(root: str = "/sys/module") -> Dict[str, Optional[str]]:
    """Each kernel module's version (its sysfs 'version', else 'loaded' or None when absent)."""
    out: Dict[str, Optional[str]] = {}
    for mod in KERNEL_MODULES:
        d = os.path.join(root, mod)
        if not os.path.isdir(d):
            out[mod] = None
            continue
        out[mod] = _sysfs.read(os.path.join(d, "version")) or "loaded"
    out["kernel"] = os.uname().release
    return out


def disk_cache_type(disk: str, root: str = "/sys/block") -> Optional[str]:
    """What the initiator's sd driver was told: 'write back' or 'write through' (scsi_disk cache_type)."""
    base = os.path.join(root, disk, "device", "scsi_disk")
    try:
        entries = os.listdir(base)
    except OSError:
        return None
    for entry in entries:
        value = _sysfs.read(os.path.join(base, entry, "cache_type"))
        if value:
            return value
    return None


def _wait_for_disks(iqn: str, luns: int, timeout: float) -> _iscsiadm.Session:
    deadline = time.monotonic() + timeout
    while True:
        session = next((s for s in _iscsiadm.sessions() if s.target == iqn), None)
        if session is not None and len(session.disks()) == luns and all(
                os.path.exists(f"/dev/{d}") for d in session.disks().values()):
            return session
        if time.monotonic() > deadline:
            found = session.disks() if session else {}
            raise MeasurementError(f"iSCSI login to {iqn}: {len(found)} of {luns} LUN(s) became disks "
                                   f"within {timeout:g} s")
        time.sleep(0.2)


def _logout_settled(iqn: str, settle_s: float) -> None:
    """Log out of our session if one exists. ``settle_s`` > 0 when the login may not have ended (it failed
    or timed out): iscsid can still be finishing it, so keep looking — and retrying a logout iscsid
    refused while the login was under way — until nothing of ours has been seen for that long."""
    deadline = time.monotonic() + settle_s
    last_error: Optional[SlogqualError] = None
    while True:
        present = any(x.target == iqn for x in _iscsiadm.sessions())
        if present:
            try:
                _iscsiadm.iscsiadm(_iscsiadm.logout_argv(iqn, LOOPBACK, ISCSI_PORT))
                last_error = None
            except SlogqualError as exc:
                last_error = exc
        if time.monotonic() > deadline:
            if last_error is not None or any(x.target == iqn for x in _iscsiadm.sessions()):
                raise last_error or MeasurementError(f"a session to {iqn} is still there after logging out")
            return
        time.sleep(0.5)


CONFIGFS_MOUNT = "/sys/kernel/config"


def lio_ready() -> None:
    """LIO's configfs tree there: configfs mounted and target_core_mod loaded where they are not (what rtslib
    does before its first command); one line where the kernel has no LIO."""
    if _lio.ready():
        return
    try:
        _modprobe.load("target_core_mod")  # configfs with it, where that is a module too: then it can be mounted
        if not os.path.ismount(CONFIGFS_MOUNT):
            _mount.mount(_mount.Mount("configfs", CONFIGFS_MOUNT, "configfs"))
    except SlogqualError as exc:
        raise UsageError(f"transport = \"iscsi\" needs the kernel's LIO target (target_core_mod under configfs): "
                         f"{exc}") from None
    if not _lio.ready():
        raise UsageError(f"transport = \"iscsi\" needs the kernel's LIO target: {_lio.CONFIGFS} is not there "
                         "after loading target_core_mod")


@contextlib.contextmanager
def attach(pool_name: str, devices: List[str], write_cache: Optional[bool] = None,
           login_timeout: float = 60.0) -> Iterator[Attached]:
    """Put the zvol devices behind our iSCSI target and log in; yields the initiator's disks in LUN
    order. Everything made is undone on exit."""
    if not devices:
        raise UsageError("an iSCSI transport needs at least one zvol")
    iadm = _iscsiadm.check_version()
    initiator = initiator_name()
    iqn = iqn_for(pool_name)
    names = [backstore_name(pool_name, i) for i in range(len(devices))]
    lio_ready()
    if _lio.iscsi_target_exists(iqn) or any(_lio.block_backstore_dir(n) for n in names):
        raise UsageError(f"an iSCSI target {iqn} (or its backstores) already exists; slogqual will not touch it")
    undo = Undo()
    try:
        iscsid = None
        # each undo is recorded BEFORE its step and is conditional: an interrupt that lands between the kernel
        # making the object and this process knowing it (measured in the lab with targetcli: a seeded SIGINT
        # left our target behind when the undo came after) still has it removed if it came to exist
        with interrupts.held():  # milliseconds: the objects made whole, never half
            for name, dev in zip(names, devices):
                undo.push(f"delete backstore {name}", lambda name=name: _lio.delete_block(name))
                _lio.create_block(name, dev)
                if write_cache is not None:
                    _lio.set_write_cache(name, write_cache)
            undo.push(f"delete target {iqn}", lambda: _lio.delete_target(iqn))
            _lio.create_target(iqn)
            _lio.create_portal(iqn, LOOPBACK, ISCSI_PORT)
            for i, name in enumerate(names):
                _lio.create_lun(iqn, i, name)
            _lio.create_acl(iqn, initiator, list(range(len(names))))
            _lio.enable(iqn)
        if not _procfs.running("iscsid"):
            iscsid = _iscsiadm.iscsid().start()  # in its own session (see there why)
            undo.push("stop the iscsid slogqual started", iscsid.stop)
            time.sleep(0.5)
        undo.push(f"delete the node record of {iqn}",
                  lambda: _iscsiadm.iscsiadm(_iscsiadm.delete_node_argv(iqn, LOOPBACK, ISCSI_PORT)))
        _iscsiadm.iscsiadm(_iscsiadm.new_node_argv(iqn, LOOPBACK, ISCSI_PORT))
        # recorded before the login, done only if a session of ours exists. The login itself is held
        # against Ctrl-C/SIGTERM (bounded by iscsiadm's own timeout): killed midway, iscsiadm leaves iscsid
        # to finish the login after the teardown looked — the lab's interrupt test left a session twice,
        # the second time with a 5 s look-again in the teardown
        logged_in = []
        undo.push(f"log out of {iqn}", lambda: _logout_settled(iqn, settle_s=0.0 if logged_in else 10.0))
        with interrupts.held():
            _iscsiadm.iscsiadm(_iscsiadm.login_argv(iqn, LOOPBACK, ISCSI_PORT))
            logged_in.append(True)
        session = _wait_for_disks(iqn, len(devices), login_timeout)
        disks = session.disks()
        record = {
            "kind": "iscsi", "target": "LIO (configfs)", "iqn": iqn,
            "portal": _iscsiadm.portal(LOOPBACK, ISCSI_PORT), "initiator": initiator,
            "luns": [{"lun": i, "zvol": dev, "backstore": names[i], "disk": f"/dev/{disks[i]}",
                      "target_write_cache": _lio.write_cache(names[i]),
                      "initiator_cache_type": disk_cache_type(disks[i])} for i, dev in enumerate(devices)],
            "write_cache_requested": write_cache, "negotiated": dict(session.params),
            "iscsid_started": iscsid is not None,
            "versions": {"lio": _lio.version(), "iscsiadm": iadm.text,
                         "modules": module_versions()},
        }
        yield Attached([f"/dev/{disks[i]}" for i in range(len(devices))], record)
    finally:
        undo.run()
