"""targetcli (targetcli-fb): the Linux kernel's LIO iSCSI target, one command per run.

targetcli run with a command (``targetcli /backstores/block create ...``) does that command and exits
without saving: the auto_save_on_exit of its interactive shell is not reached in that mode (checked
in targetcli-fb 2.1.53's main()), so /etc/target/saveconfig.json is never written by slogqual.
TARGETCLI_HOME points at a private directory so the user's ~/.targetcli (preferences, history) is
never read or written either. targetcli reports some failures only as text with exit status 0, so
every caller checks the result in configfs (/sys/kernel/config/target), the kernel's own view.
"""

from __future__ import annotations

import os
from typing import Dict, List, Optional

from slogqual.tools import spawn as _run

PROGRAM = "targetcli"
CONFIGFS = "/sys/kernel/config/target"


def version() -> _run.ToolVersion:
    """'/usr/bin/targetcli version 2.1.53' -> (2, 1, 53)."""
    return _run.get_version(PROGRAM, ["--version"], r"version (\d+)\.(\d+)(?:\.fb)?(?:\.(\d+))?")


def check_version() -> _run.ToolVersion:
    return _run.check_version(PROGRAM, version)


def create_block_argv(name: str, dev: str) -> List[str]:
    return [PROGRAM, "/backstores/block", "create", f"name={name}", f"dev={dev}"]


def set_write_cache_argv(name: str, enabled: bool) -> List[str]:
    """The WCE bit the LUN reports to initiators (emulate_write_cache): with it on, an initiator
    sends SYNCHRONIZE CACHE for its flushes, which LIO's iblock backend passes down as a flush."""
    return [PROGRAM, f"/backstores/block/{name}", "set", "attribute", f"emulate_write_cache={1 if enabled else 0}"]


def create_target_argv(iqn: str) -> List[str]:
    return [PROGRAM, "/iscsi", "create", iqn]


def delete_default_portal_argv(iqn: str) -> List[str]:
    """targetcli-fb creates a 0.0.0.0:3260 portal with a new target (auto_add_default_portal): ours
    listens on loopback only, so that one goes before ours is made."""
    return [PROGRAM, f"/iscsi/{iqn}/tpg1/portals", "delete", "0.0.0.0", "3260"]


def create_portal_argv(iqn: str, ip: str, port: int = 3260) -> List[str]:
    return [PROGRAM, f"/iscsi/{iqn}/tpg1/portals", "create", ip, str(port)]


def create_lun_argv(iqn: str, backstore: str, lun: int) -> List[str]:
    return [PROGRAM, f"/iscsi/{iqn}/tpg1/luns", "create", f"/backstores/block/{backstore}", f"lun={lun}"]


def create_acl_argv(iqn: str, initiator: str) -> List[str]:
    """An ACL for the one initiator (its mapped LUNs are added with it: auto_add_mapped_luns)."""
    return [PROGRAM, f"/iscsi/{iqn}/tpg1/acls", "create", initiator]


def delete_target_argv(iqn: str) -> List[str]:
    return [PROGRAM, "/iscsi", "delete", iqn]


def delete_block_argv(name: str) -> List[str]:
    return [PROGRAM, "/backstores/block", "delete", name]


def env(home: str) -> Dict[str, str]:
    return dict(os.environ, TARGETCLI_HOME=home)


def targetcli(argv: List[str], home: str, timeout: float = 120) -> str:
    """Run one targetcli command with a private TARGETCLI_HOME; ToolFailedError when it fails."""
    return _run.run(argv, timeout=timeout, typed_timeout=True, check=True, env=env(home)).stdout


def delete_default_portal(iqn: str, home: str, timeout: float = 120) -> None:
    """:func:`delete_default_portal_argv` run, its exit status not looked at: the portal is there only
    where targetcli's auto_add_default_portal made it, so a failure is no harm (a timeout still raises
    ToolTimeoutError)."""
    _run.run(delete_default_portal_argv(iqn), timeout=timeout, typed_timeout=True, env=env(home))


# --- configfs: what the kernel has --------------------------------------------------------------------------

def iscsi_target_exists(iqn: str, root: str = CONFIGFS) -> bool:
    return os.path.isdir(os.path.join(root, "iscsi", iqn))


def block_backstore_dir(name: str, root: str = CONFIGFS) -> Optional[str]:
    """configfs directory of the block (iblock) backstore ``name``: core/iblock_N/NAME."""
    core = os.path.join(root, "core")
    try:
        hbas = sorted(d for d in os.listdir(core) if d.startswith("iblock_"))
    except OSError:
        return None
    for hba in hbas:
        path = os.path.join(core, hba, name)
        if os.path.isdir(path):
            return path
    return None


def read_attribute(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return None


def write_cache(name: str, root: str = CONFIGFS) -> Optional[bool]:
    """The backstore's emulate_write_cache as the kernel has it (None when it cannot be read)."""
    d = block_backstore_dir(name, root)
    value = read_attribute(os.path.join(d, "attrib", "emulate_write_cache")) if d else None
    return None if value not in ("0", "1") else value == "1"
