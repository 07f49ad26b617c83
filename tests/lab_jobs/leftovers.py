"""What a slogqual run left behind in the lab guest, for the interrupt jobs beside this file."""

import subprocess


def slogqual_names(command: str):
    """Names in `zpool list` or `zfs list` that carry slogqual's prefix."""
    out = subprocess.run([command, "list", "-H", "-o", "name"], capture_output=True, text=True).stdout.split()
    return [n for n in out if n.startswith("slogqual-")]


def leftovers():
    return {"pools": slogqual_names("zpool"), "datasets": slogqual_names("zfs")}


def _out(argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"<{argv[0]}: {exc}>"


def protocol_leftovers():
    """What a transport scenario (iSCSI, NFS) could leave: sessions, LIO targets and backstores, NFS
    mounts, exports, and the processes slogqual starts (fio, iscsid, rpcbind, rpc.mountd, rpc.statd)."""
    import glob
    import os

    from slogqual.kernel import procfs

    sessions = [ln for ln in _out(["iscsiadm", "-m", "session"]).splitlines() if "slogqual" in ln]
    targets = sorted(os.listdir("/sys/kernel/config/target/iscsi")) if os.path.isdir(
        "/sys/kernel/config/target/iscsi") else []
    targets = [t for t in targets if t.startswith("iqn.")]
    backstores = sorted(os.path.basename(p) for p in glob.glob("/sys/kernel/config/target/core/*/slogqual-*"))
    with open("/proc/mounts") as fh:
        mounts = [ln.split()[1] for ln in fh if ln.split()[2] in ("nfs", "nfs4")]
    exports = [ln for ln in _out(["exportfs", "-v"]).splitlines() if ln.strip()]
    procs = [comm for comm in ("fio", "iscsid", "rpcbind", "rpc.mountd", "rpc.statd")
             for _ in procfs.pids_named(comm)]
    return {"sessions": sessions, "targets": targets, "backstores": backstores, "nfs_mounts": mounts,
            "exports": exports, "processes": sorted(procs)}
