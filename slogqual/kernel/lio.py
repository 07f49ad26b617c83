"""LIO, the Linux kernel's SCSI target, through its configfs tree (/sys/kernel/config/target).

What targetcli-fb's library (rtslib-fb 2.1) writes for ``/backstores/block create``, ``/iscsi create``, a portal, a
LUN, an ACL and their deletes, written here directly: a directory made is an object made, a file written is an
attribute set, a symlink is a LUN's storage object or an ACL's mapped LUN. Why not targetcli: each of its runs
loads an interpreter, configshell and rtslib and reads the whole LIO tree — 3–5 s a command under the lab's TCG
guest, 113 s of a 243 s iSCSI scenario (docs/testing.md) for what takes milliseconds here. Nothing else changes:
the kernel objects are the same, no saveconfig.json is ever written (targetcli's own auto-save was never reached
either), and every path below carries the names the caller gives (the transport's ``slogqual-`` prefixed ones).

No program is started here; the configfs root is a parameter, so the same code runs against a directory in the
unit tests (where the kernel's default groups — a TPG's ``np``, ``lun``, ``acls``, ``attrib`` — are plain
directories made on the way). Loading ``target_core_mod`` and mounting configfs, where needed, is the caller's
(tools/modprobe.py, tools/mount.py): the kernel loads the iSCSI fabric and the iblock backend by itself on the
first mkdir that needs them.
"""

from __future__ import annotations

import errno
import os
import uuid
from typing import List, Optional

from slogqual.kernel.sysfs import read  # one attribute, stripped; None when absent

CONFIGFS = "/sys/kernel/config/target"
TPG = "tpgt_1"  # targetcli's one TPG per target
MAX_HBA_INDEX = 1 << 20  # rtslib's own limit on backstore (HBA) indexes


def _write(path: str, value: str) -> None:
    """One configfs attribute (the kernel takes the whole value in one write)."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(value)


def _mkdir(path: str) -> None:
    """The object itself (EEXIST raised: never someone else's taken over); its parents, where absent, made on
    the way — on the kernel's tree they are default groups that exist already."""
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        os.makedirs(parent)
    os.mkdir(path)


# ---- what the kernel has ---------------------------------------------------------------------------------

def ready(root: str = CONFIGFS) -> bool:
    """LIO's core is loaded (target_core_mod) and configfs mounted."""
    return os.path.isdir(root)


def version(root: str = CONFIGFS) -> Optional[str]:
    """LIO's own line, e.g. 'Target Engine Core ConfigFS Infrastructure v5.0 on Linux/x86_64 on 6.1.0-56-amd64',
    with the iSCSI fabric's (iscsi/lio_version) where it is loaded."""
    core = read(os.path.join(root, "version"))
    fabric = read(os.path.join(root, "iscsi", "lio_version"))
    return "; ".join(x for x in (core, fabric) if x) or None


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


def target_dir(iqn: str, root: str = CONFIGFS) -> str:
    return os.path.join(root, "iscsi", iqn)


def iscsi_target_exists(iqn: str, root: str = CONFIGFS) -> bool:
    return os.path.isdir(target_dir(iqn, root))


def write_cache(name: str, root: str = CONFIGFS) -> Optional[bool]:
    """The backstore's emulate_write_cache as the kernel has it (None when it cannot be read)."""
    d = block_backstore_dir(name, root)
    value = read(os.path.join(d, "attrib", "emulate_write_cache")) if d else None
    return None if value not in ("0", "1") else value == "1"


def _used_hba_indexes(root: str) -> set:
    """The indexes of every backstore HBA (core/<plugin>_N, any plugin): rtslib gives each storage object an
    HBA of its own with an index no other plugin's HBA has."""
    used = set()
    try:
        for d in os.listdir(os.path.join(root, "core")):
            plugin, _, index = d.rpartition("_")
            if plugin and index.isdigit():
                used.add(int(index))
    except OSError:
        pass
    return used


# ---- backstores ------------------------------------------------------------------------------------------

def create_block(name: str, dev: str, root: str = CONFIGFS) -> str:
    """A block (iblock) backstore ``name`` over ``dev``, enabled, read-write, with a unit serial of its own (as
    rtslib's BlockStorageObject: udev_path, control udev_path= and readonly=0, enable 1, wwn): its
    directory. Its HBA directory is the lowest index no backstore uses (another program making one at the same
    moment gets EEXIST from one of us: the next index is tried)."""
    used = _used_hba_indexes(root)
    for index in range(MAX_HBA_INDEX):
        if index in used:
            continue
        hba = os.path.join(root, "core", f"iblock_{index}")
        try:
            _mkdir(hba)
        except FileExistsError:
            continue
        break
    else:
        raise OSError(errno.ENOSPC, "no free backstore index", os.path.join(root, "core"))
    path = os.path.join(hba, name)
    try:
        os.mkdir(path)
        _write(os.path.join(path, "udev_path"), dev)
        _write(os.path.join(path, "control"), f"udev_path={dev}")
        _write(os.path.join(path, "control"), "readonly=0")
        _write(os.path.join(path, "enable"), "1\n")
        os.makedirs(os.path.join(path, "wwn"), exist_ok=True)
        _write(os.path.join(path, "wwn", "vpd_unit_serial"), f"{uuid.uuid4()}\n")
    except BaseException:
        _rmdir_quietly(path)
        _rmdir_quietly(hba)
        raise
    return path


def set_write_cache(name: str, enabled: bool, root: str = CONFIGFS) -> None:
    """The WCE bit the LUN reports to initiators (emulate_write_cache): with it on, an initiator sends
    SYNCHRONIZE CACHE for its flushes, which LIO's iblock backend passes down as a flush."""
    path = block_backstore_dir(name, root)
    if path is None:
        raise FileNotFoundError(errno.ENOENT, "no such block backstore", name)
    attrib = os.path.join(path, "attrib")
    os.makedirs(attrib, exist_ok=True)
    _write(os.path.join(attrib, "emulate_write_cache"), "1" if enabled else "0")


def delete_block(name: str, root: str = CONFIGFS) -> bool:
    """The backstore and its HBA directory, if the backstore exists (False where it did not)."""
    path = block_backstore_dir(name, root)
    if path is None:
        return False
    _rmtree(path)
    _rmdir_quietly(os.path.dirname(path))  # the HBA, now empty: rtslib removes it with its one object
    return True


# ---- the iSCSI target ------------------------------------------------------------------------------------

def create_target(iqn: str, root: str = CONFIGFS) -> str:
    """The target and its one TPG (tpgt_1), not yet enabled: the TPG's directory. The iSCSI fabric module is
    loaded by the kernel on the first mkdir under ``iscsi``."""
    d = target_dir(iqn, root)
    _mkdir(d)
    tpg = os.path.join(d, TPG)
    os.mkdir(tpg)
    return tpg


def tpg_dir(iqn: str, root: str = CONFIGFS) -> str:
    return os.path.join(target_dir(iqn, root), TPG)


def create_portal(iqn: str, ip: str, port: int, root: str = CONFIGFS) -> str:
    """A network portal on ip:port only (never targetcli's 0.0.0.0 default)."""
    addr = f"[{ip}]" if ":" in ip else ip
    path = os.path.join(tpg_dir(iqn, root), "np", f"{addr}:{port}")
    _mkdir(path)
    return path


def create_lun(iqn: str, lun: int, backstore: str, root: str = CONFIGFS) -> str:
    """LUN ``lun`` of the TPG, its storage object the block backstore (a symlink named after it)."""
    so = block_backstore_dir(backstore, root)
    if so is None:
        raise FileNotFoundError(errno.ENOENT, "no such block backstore", backstore)
    path = os.path.join(tpg_dir(iqn, root), "lun", f"lun_{lun}")
    _mkdir(path)
    os.symlink(so, os.path.join(path, backstore))
    return path


def create_acl(iqn: str, initiator: str, luns: List[int], root: str = CONFIGFS) -> str:
    """An ACL for the one initiator with each LUN mapped at its own number (targetcli's auto_add_mapped_luns)."""
    tpg = tpg_dir(iqn, root)
    acl = os.path.join(tpg, "acls", initiator)
    _mkdir(acl)
    for lun in luns:
        mapped = os.path.join(acl, f"lun_{lun}")
        os.mkdir(mapped)
        os.symlink(os.path.join(tpg, "lun", f"lun_{lun}"), os.path.join(mapped, f"lun_{lun}"))
    return acl


def enable(iqn: str, root: str = CONFIGFS) -> None:
    """The TPG enabled with authentication off, as targetcli's auto_enable_tpgt leaves it (the ACL is the
    access control: no CHAP)."""
    tpg = tpg_dir(iqn, root)
    attrib = os.path.join(tpg, "attrib")
    os.makedirs(attrib, exist_ok=True)
    _write(os.path.join(attrib, "authentication"), "0")
    _write(os.path.join(tpg, "enable"), "1")


def delete_target(iqn: str, root: str = CONFIGFS) -> bool:
    """The target as rtslib deletes one: each TPG disabled (its sessions end), then its ACLs' mapped LUNs and
    ACLs, its LUNs, its portals, the TPG, the target. False where the target did not exist."""
    d = target_dir(iqn, root)
    if not os.path.isdir(d):
        return False
    for tpg in sorted(os.listdir(d)):
        t = os.path.join(d, tpg)
        if not (tpg.startswith("tpgt_") and os.path.isdir(t)):
            continue
        if os.path.exists(os.path.join(t, "enable")):
            try:
                _write(os.path.join(t, "enable"), "0")
            except OSError:  # already disabled: the kernel refuses a second 0 on some versions
                pass
        for acl in _children(os.path.join(t, "acls")):
            for mapped in _children(acl, "lun_"):
                _rmtree(mapped)
            _rmtree(acl)
        for lun in _children(os.path.join(t, "lun"), "lun_"):
            _rmtree(lun)
        for np in _children(os.path.join(t, "np")):
            _rmtree(np)
        _rmtree(t)
    _rmtree(d)
    return True


# ---- removal: what configfs allows ------------------------------------------------------------------------

def _children(path: str, prefix: str = "") -> List[str]:
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return []
    return [os.path.join(path, n) for n in names
            if n.startswith(prefix) and os.path.isdir(os.path.join(path, n))
            and not os.path.islink(os.path.join(path, n))]


def _rmtree(path: str) -> None:
    """One object's directory: its symlinks unlinked, then the directory removed. On configfs the kernel
    removes the default groups and attributes with it; in a plain directory (the unit tests) they are
    removed first, deepest first, as files and directories."""
    for name in os.listdir(path):
        p = os.path.join(path, name)
        if os.path.islink(p):
            os.unlink(p)
    try:
        os.rmdir(path)
    except OSError as exc:
        if exc.errno != errno.ENOTEMPTY or _is_configfs(path):
            raise
        for dirpath, dirnames, filenames in os.walk(path, topdown=False):
            for f in filenames:
                os.unlink(os.path.join(dirpath, f))
            for sub in dirnames:
                os.rmdir(os.path.join(dirpath, sub))
        os.rmdir(path)


def _rmdir_quietly(path: str) -> None:
    try:
        _rmtree(path)
    except OSError:
        pass


def _is_configfs(path: str) -> bool:
    """Whether ``path`` is on the kernel's configfs (where rmdir takes the default groups with it, and a
    non-empty directory is a child object that must not be swept away)."""
    return os.path.realpath(path).startswith("/sys/kernel/config/")
