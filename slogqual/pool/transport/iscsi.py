"""transport = "iscsi" on Linux: the zvols behind LIO (targetcli-fb), logged in with open-iscsi on loopback.

Setup, each step's undo recorded as soon as it is done: one block backstore per zvol
(``slogqual-<pool>-lunN``), one target ``iqn.2003-01.org.slogqual:<pool>`` with a portal on
127.0.0.1:3260 only (targetcli's default 0.0.0.0 portal is removed first), a LUN per backstore and an
ACL for this host's initiator name; then the initiator: a node record for our target and portal alone
(``iscsiadm -m node -o new``: a sendtargets discovery would rewrite the records of every target that
portal lists, ours or not), login, and the session's disks found in ``iscsiadm -m session -P 3``.
Teardown: logout, the node record, the target, the backstores, in that order. iscsid is started (and
stopped) only when none runs.

The result records the target's IQN, portal, LUN -> zvol -> disk mapping, the write cache LIO
exposes (emulate_write_cache) and the cache type the initiator's sd driver sees, the negotiated
iSCSI parameters, and the versions of targetcli, iscsiadm and the kernel modules.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from typing import Dict, Iterator, List, Optional

from slogqual import interrupts
from slogqual.errors import MeasurementError, SlogqualError, UsageError
from slogqual.pool.transport import ISCSI_PORT, LOOPBACK, Attached, backstore_name, iqn_for
from slogqual.pool.transport.teardown import Undo
from slogqual.tools import iscsiadm as _iscsiadm
from slogqual.kernel import procfs as _procfs
from slogqual.tools import targetcli as _targetcli

KERNEL_MODULES = ("target_core_mod", "target_core_iblock", "iscsi_target_mod", "iscsi_tcp", "libiscsi",
                  "scsi_transport_iscsi")


def setup_plan(pool_name: str, devices: List[str], initiator: str,
               write_cache: Optional[bool] = None) -> List[List[str]]:
    """The target's argv lists in order (the initiator's follow at run time)."""
    iqn = iqn_for(pool_name)
    plan = []
    for i, dev in enumerate(devices):
        plan.append(_targetcli.create_block_argv(backstore_name(pool_name, i), dev))
        if write_cache is not None:
            plan.append(_targetcli.set_write_cache_argv(backstore_name(pool_name, i), write_cache))
    plan.append(_targetcli.create_target_argv(iqn))
    plan.append(_targetcli.delete_default_portal_argv(iqn))
    plan.append(_targetcli.create_portal_argv(iqn, LOOPBACK, ISCSI_PORT))
    for i in range(len(devices)):
        plan.append(_targetcli.create_lun_argv(iqn, backstore_name(pool_name, i), i))
    plan.append(_targetcli.create_acl_argv(iqn, initiator))
    return plan


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
        out[mod] = _targetcli.read_attribute(os.path.join(d, "version")) or "loaded"
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
        value = _targetcli.read_attribute(os.path.join(base, entry, "cache_type"))
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


@contextlib.contextmanager
def attach(pool_name: str, devices: List[str], write_cache: Optional[bool] = None,
           login_timeout: float = 60.0) -> Iterator[Attached]:
    """Put the zvol devices behind our iSCSI target and log in; yields the initiator's disks in LUN
    order. Everything made is undone on exit."""
    if not devices:
        raise UsageError("an iSCSI transport needs at least one zvol")
    tcli, iadm = _targetcli.check_version(), _iscsiadm.check_version()
    initiator = initiator_name()
    iqn = iqn_for(pool_name)
    names = [backstore_name(pool_name, i) for i in range(len(devices))]
    if _targetcli.iscsi_target_exists(iqn) or any(_targetcli.block_backstore_dir(n) for n in names):
        raise UsageError(f"an iSCSI target {iqn} (or its backstores) already exists; slogqual will not touch it")
    undo = Undo()
    home = tempfile.mkdtemp(prefix=f"{pool_name}-targetcli-")
    undo.push(f"remove {home}", lambda: shutil.rmtree(home, ignore_errors=True))
    try:
        iscsid = None
        for argv in setup_plan(pool_name, devices, initiator, write_cache):
            if argv == _targetcli.delete_default_portal_argv(iqn):
                # present only where targetcli's auto_add_default_portal made it: a failure is no harm
                _targetcli.delete_default_portal(iqn, home)
                continue
            # the undo is recorded BEFORE the step and is conditional: an interrupt that lands while targetcli
            # runs (measured in the lab: a seeded SIGINT left our target behind when the undo came after)
            # still has the thing removed if it came to exist
            if argv[1] == "/backstores/block" and argv[2] == "create":
                name = argv[3].split("=", 1)[1]
                undo.push(f"delete backstore {name}", lambda name=name: _targetcli.block_backstore_dir(name) and
                          _targetcli.targetcli(_targetcli.delete_block_argv(name), home))
            elif argv[1] == "/iscsi" and argv[2] == "create":
                undo.push(f"delete target {iqn}", lambda: _targetcli.iscsi_target_exists(iqn) and
                          _targetcli.targetcli(_targetcli.delete_target_argv(iqn), home))
            _targetcli.targetcli(argv, home)
            if argv[1] == "/backstores/block" and argv[2] == "create" and not _targetcli.block_backstore_dir(name):
                raise MeasurementError(f"targetcli did not create backstore {name} (configfs has none)")
            if argv[1] == "/iscsi" and argv[2] == "create" and not _targetcli.iscsi_target_exists(iqn):
                raise MeasurementError(f"targetcli did not create target {iqn} (configfs has none)")
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
            "kind": "iscsi", "target": "LIO (targetcli-fb)", "iqn": iqn,
            "portal": _iscsiadm.portal(LOOPBACK, ISCSI_PORT), "initiator": initiator,
            "luns": [{"lun": i, "zvol": dev, "backstore": names[i], "disk": f"/dev/{disks[i]}",
                      "target_write_cache": _targetcli.write_cache(names[i]),
                      "initiator_cache_type": disk_cache_type(disks[i])} for i, dev in enumerate(devices)],
            "write_cache_requested": write_cache, "negotiated": dict(session.params),
            "iscsid_started": iscsid is not None,
            "versions": {"targetcli": tcli.text, "iscsiadm": iadm.text, "modules": module_versions()},
        }
        yield Attached([f"/dev/{disks[i]}" for i in range(len(devices))], record)
    finally:
        undo.run()
