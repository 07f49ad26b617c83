"""Scenario transports (slogqual.pool.transport): the scenario key, the generated configurations and
argv lists (LIO/open-iscsi, knfsd, FreeBSD ctld/iscsictl and nfsd/mountd), and the parsers of recorded
real iscsiadm and mountstats output (tests/fixtures/iscsiadm, tests/fixtures/mountstats, SOURCES.md).

The real transports need kernel modules this host cannot load: they run in the lab guest (the lead's
job); here every name, option and step they would use is checked.
"""

import json
import os

import pytest

from conftest import read_fixture
from slogqual.errors import SlogqualError, UsageError
from slogqual.pool import scenario as sc
from slogqual.pool import transport as tp
from slogqual.pool.transport import iscsi as tiscsi
from slogqual.pool.transport import local as tlocal
from slogqual.pool.transport import nfs as tnfs
from slogqual.pool.transport.teardown import Undo
from slogqual.kernel import procfs
from slogqual.tools import exportfs, iscsiadm, mount, nfsd, nfsmount
from slogqual.kernel import lio
from slogqual.tools.freebsd import ctld, nfsserver

POOL = "slogqual-iscsi-4k-randwrite-4242"
ZVOLS = [f"/dev/zvol/{POOL}/lun{i}" for i in range(3)]
INITIATOR = "iqn.1993-08.org.debian:01:78c55a27e9f8"


def _doc(**extra):
    doc = {"name": "t", "kind": "zvol", "luns": 2, "lun_size": "64M", "rw": "randwrite", "bs": "4k",
           "threads": [1, 2], "runtime": 5, "config": [{"name": "a"}]}
    doc.update(extra)
    return doc


# --- the scenario key ------------------------------------------------------------------------------------

def test_transport_defaults_to_local_and_shipped_scenarios_stay_local():
    assert sc.parse_scenario(_doc(), "t.toml").transport == tp.TransportConfig()
    real = {"iscsi-4k-randwrite-lio": "iscsi", "nfs-sync-knfsd": "nfs"}  # the shipped real-protocol variants
    for name in sc.builtin_names():
        assert sc.load_scenario(name).transport.kind == real.get(name, "local"), name
    assert set(real) <= set(sc.builtin_names())
    assert sc.load_scenario("nfs-sync-knfsd").transport.nfs_version == "3"  # what the lab's knfsd can serve
    assert sc.parse_scenario(_doc(), "t.toml").to_dict()["transport"] == {"kind": "local"}


def test_transport_settings_are_kept_and_recorded():
    s = sc.parse_scenario(_doc(kind="dataset", transport="nfs", nfs_version="3", nfs_threads=16,
                               nfs_mount_options=["hard", "sync"]), "t.toml")
    assert s.transport == tp.TransportConfig("nfs", "3", 16, ("hard", "sync"), None)
    assert s.to_dict()["transport"] == {"kind": "nfs", "nfs_version": "3", "nfs_threads": 16,
                                        "nfs_mount_options": ["hard", "sync"]}
    s = sc.parse_scenario(_doc(transport="iscsi", iscsi_write_cache=False), "t.toml")
    assert s.transport.iscsi_write_cache is False and s.to_dict()["transport"]["kind"] == "iscsi"


@pytest.mark.parametrize("extra,key", [
    ({"transport": "fc"}, "transport"),
    ({"transport": "nfs"}, "transport"),  # kind zvol
    ({"kind": "dataset", "transport": "iscsi"}, "transport"),
    ({"nfs_version": "4.2"}, "nfs_version"),  # transport local
    ({"kind": "dataset", "transport": "nfs", "nfs_version": "2"}, "nfs_version"),
    ({"kind": "dataset", "transport": "nfs", "nfs_version": 4.2}, "nfs_version"),
    ({"kind": "dataset", "transport": "nfs", "nfs_threads": 0}, "nfs_threads"),
    ({"kind": "dataset", "transport": "nfs", "nfs_threads": 5000}, "nfs_threads"),
    ({"kind": "dataset", "transport": "nfs", "nfs_mount_options": "hard"}, "nfs_mount_options"),
    ({"kind": "dataset", "transport": "nfs", "nfs_mount_options": ["hard,soft"]}, "nfs_mount_options"),
    ({"kind": "dataset", "transport": "nfs", "nfs_mount_options": ["vers=3"]}, "nfs_mount_options"),
    ({"transport": "iscsi", "iscsi_write_cache": "off"}, "iscsi_write_cache"),
    ({"iscsi_write_cache": True}, "iscsi_write_cache"),
])
def test_bad_transport_settings_are_one_line_usage_errors(extra, key):
    with pytest.raises(UsageError) as exc:
        sc.parse_scenario(_doc(**extra), "t.toml")
    assert f"key '{key}'" in str(exc.value) and "\n" not in str(exc.value) and "t.toml" in str(exc.value)


# --- names -----------------------------------------------------------------------------------------------

def test_every_name_carries_the_slogqual_prefix():
    assert tp.iqn_for(POOL) == "iqn.2003-01.org.slogqual:" + POOL
    assert tp.iqn_for("slogqual-A_b.c-1") == "iqn.2003-01.org.slogqual:slogqual-a-b.c-1"  # RFC 3722 characters
    assert tp.backstore_name(POOL, 3) == POOL + "-lun3"
    with pytest.raises(ValueError):
        tp.iqn_for("tank")


def test_local_hands_the_targets_through():
    with tlocal.attach(["/dev/zvol/p/lun0"]) as a:
        assert a.targets == ["/dev/zvol/p/lun0"] and a.record == {"kind": "local"}


# --- LIO and open-iscsi ----------------------------------------------------------------------------------

def _lio_tree(root):
    """What LIO made, relative to the configfs root: directories (/), symlinks (-> target, relative) and
    attribute files (= value)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for n in sorted(dirnames + filenames):
            p = os.path.join(dirpath, n)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out.append(f"{rel} -> {os.path.relpath(os.readlink(p), root)}")
            elif os.path.isdir(p):
                out.append(rel + "/")
            else:
                out.append(f"{rel} = {open(p).read().strip()}")
    return sorted(out)


def test_lio_through_configfs_makes_backstores_then_one_loopback_target_with_luns_and_one_acl(tmp_path):
    """The objects rtslib makes for targetcli's commands, in a directory standing in for the kernel's configfs
    (its default groups made on the way): a block backstore per zvol on an HBA of its own, the target's one
    TPG with a portal on loopback only, a LUN per backstore, the initiator's ACL with every LUN mapped, the TPG
    enabled without CHAP. Every name made is ours. The lab's iSCSI job runs it against the real kernel."""
    root = str(tmp_path)
    os.makedirs(os.path.join(root, "core", "fileio_0"))  # another program's backstore: its index is taken
    iqn = tp.iqn_for(POOL)
    names = [tp.backstore_name(POOL, i) for i in range(len(ZVOLS))]
    for name, dev in zip(names, ZVOLS):
        lio.create_block(name, dev, root)
        lio.set_write_cache(name, False, root)
    lio.create_target(iqn, root)
    lio.create_portal(iqn, "127.0.0.1", 3260, root)
    for i, name in enumerate(names):
        lio.create_lun(iqn, i, name, root)
    lio.create_acl(iqn, INITIATOR, [0, 1, 2], root)
    lio.enable(iqn, root)
    tree = _lio_tree(root)
    tpg = f"iscsi/{iqn}/tpgt_1"
    for i, (name, dev) in enumerate(zip(names, ZVOLS)):
        so = f"core/iblock_{i + 1}/{name}"  # index 0 is the other program's
        assert f"{so}/udev_path = {dev}" in tree and f"{so}/enable = 1" in tree
        assert f"{so}/control = readonly=0" in tree  # the last control written: udev_path= came first
        assert f"{so}/attrib/emulate_write_cache = 0" in tree
        assert f"{tpg}/lun/lun_{i}/{name} -> {so}" in tree
        assert f"{tpg}/acls/{INITIATOR}/lun_{i}/lun_{i} -> {tpg}/lun/lun_{i}" in tree
        assert lio.block_backstore_dir(name, root).endswith(so) and lio.write_cache(name, root) is False
    assert [t for t in tree if t.startswith(f"{tpg}/np/") and t != f"{tpg}/np/"] == [f"{tpg}/np/127.0.0.1:3260/"]
    assert f"{tpg}/enable = 1" in tree and f"{tpg}/attrib/authentication = 0" in tree
    open(os.path.join(root, "version"), "w").write("Target Engine Core ConfigFS Infrastructure v5.0 on Linux\n")
    assert lio.version(root).startswith("Target Engine Core ConfigFS Infrastructure v5.0")
    assert lio.iscsi_target_exists(iqn, root) and not lio.iscsi_target_exists(tp.iqn_for("slogqual-other"), root)
    for t in tree:  # every backstore and target made carries the pool's name
        parts = t.split("/")
        if parts[0] == "core" and len(parts) > 2 and parts[1] != "fileio_0" and parts[2]:
            assert POOL in parts[2], t
        if parts[0] == "iscsi" and parts[1]:
            assert POOL in parts[1], t
    # torn down as rtslib does: the target (ACLs, LUNs, portal, TPG) first, then the backstores and their HBAs
    assert lio.delete_target(iqn, root) and not lio.delete_target(iqn, root)
    for name in names:
        assert lio.delete_block(name, root) and not lio.delete_block(name, root)
    # only what was there before, and the fabric
    assert [t for t in _lio_tree(root) if not t.startswith("version")] == ["core/", "core/fileio_0/", "iscsi/"]


def test_lio_refuses_to_take_over_what_exists(tmp_path):
    root = str(tmp_path)
    iqn = tp.iqn_for(POOL)
    lio.create_target(iqn, root)
    with pytest.raises(FileExistsError):
        lio.create_target(iqn, root)
    with pytest.raises(FileNotFoundError):  # a LUN over a backstore that is not there
        lio.create_lun(iqn, 0, tp.backstore_name(POOL, 0), root)


def test_lio_never_sweeps_a_configfs_directory_with_children():
    """On the kernel's configfs a directory that will not go is a child object someone made: never swept away
    as a plain directory's files are."""
    assert lio._is_configfs("/sys/kernel/config/target/iscsi/x")
    assert not lio._is_configfs("/tmp/x")


def test_initiator_argv_names_our_target_and_the_loopback_portal_only():
    iqn = tp.iqn_for(POOL)
    assert iscsiadm.new_node_argv(iqn, "127.0.0.1") == [
        "iscsiadm", "-m", "node", "-o", "new", "-T", iqn, "-p", "127.0.0.1:3260"]
    assert iscsiadm.login_argv(iqn, "127.0.0.1")[-1] == "--login"
    assert iscsiadm.logout_argv(iqn, "127.0.0.1")[-1] == "--logout"
    assert iscsiadm.delete_node_argv(iqn, "127.0.0.1")[-4:] == ["-p", "127.0.0.1:3260", "-o", "delete"]
    for argv in (iscsiadm.login_argv, iscsiadm.logout_argv, iscsiadm.delete_node_argv):
        assert argv(iqn, "127.0.0.1")[argv(iqn, "127.0.0.1").index("-T") + 1] == iqn
    assert iscsiadm.discovery_argv("::1") == ["iscsiadm", "-m", "discovery", "-t", "sendtargets", "-p", "[::1]:3260"]


def test_initiator_name_file():
    assert iscsiadm.parse_initiator_name("## DO NOT EDIT\nInitiatorName=" + INITIATOR + "\n") == INITIATOR
    for bad in ("", "InitiatorName=\n", "InitiatorName=host1\n"):
        with pytest.raises(ValueError):
            iscsiadm.parse_initiator_name(bad)


@pytest.mark.parametrize("name,target,luns,disk0,initiator", [
    ("sugon-17-luns", "iqn.2012-07.com.Sugon:alias.tgt0000.200000015555ee0d", 17, "sdo",
     "iqn.1994-05.com.redhat:a2c67b44fbb2"),
    ("rhce-1-lun", "iqn.2016-05.com.example.remotedisk1", 1, "sda", "iqn.2016-05.com.example.desktop0"),
])
def test_recorded_session_tables_give_each_lun_s_disk(name, target, luns, disk0, initiator):
    [s] = iscsiadm.parse_sessions(read_fixture("iscsiadm", f"session-P3-{name}.txt"))
    assert s.target == target and s.logged_in and s.initiator == initiator
    assert len(s.disks()) == luns and s.disks()[0] == disk0
    assert s.portal.endswith(":3260,1") and s.sid is not None and s.host_number is not None
    assert {"HeaderDigest", "MaxBurstLength", "ImmediateData"} <= set(s.params)
    assert sorted(s.disks()) == list(range(luns))  # printed in string order (0, 1, 10, ...), keyed by number


def test_multipath_sessions_under_one_target_line_are_each_read():
    # two targets x two portals (LIO, one LUN per session, multipath -ll pairs sdb+sdc and sdd+sde):
    # iscsiadm prints each Target: line once, the second session of each from its Current Portal: on
    s = iscsiadm.parse_sessions(read_fixture("iscsiadm", "session-P3-gfs2-2-targets-2-portals.txt"))
    t1, t2 = "iqn.2025-03.ru.abegorov:gfs2:gfs-iscsi-01", "iqn.2025-03.ru.abegorov:gfs2:gfs-iscsi-02"
    assert [(x.target, x.portal, x.sid, x.host_number, x.disks()) for x in s] == [
        (t1, "10.131.0.11:3260,1", 1, 16, {1: "sdb"}),
        (t1, "10.132.0.11:3260,1", 2, 17, {1: "sdc"}),
        (t2, "10.132.0.12:3260,1", 3, 18, {1: "sdd"}),
        (t2, "10.131.0.12:3260,1", 4, 19, {1: "sde"}),
    ]
    assert all(x.logged_in and x.initiator == "iqn.2025-03.ru.abegorov:gfs2:gfs-01" for x in s)
    assert all(x.params["FirstBurstLength"] == "65536" and len(x.luns) == 1 for x in s)
    # one target through four gateways, tab-indented (open-iscsi 2.0-873)
    s = iscsiadm.parse_sessions(read_fixture("iscsiadm", "session-P3-bigtera-1-target-4-portals.txt"))
    assert {x.target for x in s} == {"iqn.2020-01.lenovo:test"}
    assert [(x.portal, x.sid, x.host_number, x.disks()) for x in s] == [
        ("10.16.172.105:3260,1", 16, 46, {0: "sdd"}),
        ("10.16.172.106:3260,1", 17, 47, {0: "sde"}),
        ("10.16.172.107:3260,1", 18, 48, {0: "sdf"}),
        ("10.16.172.108:3260,1", 19, 49, {0: "sdg"}),
    ]
    assert all(x.logged_in and x.params["MaxBurstLength"] == "1048576" for x in s)


def test_a_disk_line_without_its_lun_line_is_refused():
    text = read_fixture("iscsiadm", "session-P3-rhce-1-lun.txt").replace("scsi2 Channel 00 Id 0 Lun: 0", "")
    with pytest.raises(ValueError, match="without its"):
        iscsiadm.parse_sessions(text)


def test_lio_disk_cache_type_and_module_versions_read_sysfs(tmp_path):
    d = tmp_path / "sdb" / "device" / "scsi_disk" / "2:0:0:0"
    d.mkdir(parents=True)
    (d / "cache_type").write_text("write back\n")
    assert tiscsi.disk_cache_type("sdb", str(tmp_path)) == "write back"
    assert tiscsi.disk_cache_type("sdc", str(tmp_path)) is None
    (tmp_path / "mods" / "iscsi_tcp").mkdir(parents=True)
    v = tiscsi.module_versions(str(tmp_path / "mods"))
    assert v["iscsi_tcp"] == "loaded" and v["target_core_mod"] is None and v["kernel"]


# --- knfsd and the Linux client --------------------------------------------------------------------------

def test_nfs_plan_exports_to_loopback_only_and_mounts_with_the_version():
    plan = tnfs.setup_plan(f"/tmp/{POOL}-x/nfs", f"/tmp/{POOL}-nfs-abc", "4.2", ["hard", "sync"], 4242, 16)
    assert plan[0] == ["rpc.nfsd", "16"]
    assert plan[1] == ["exportfs", "-o", "rw,sync,no_root_squash,no_subtree_check,insecure,fsid=4242",
                       f"127.0.0.1:/tmp/{POOL}-x/nfs"]
    assert plan[2] == ["mount", "-t", "nfs", "-o", "vers=4.2,hard,sync", f"127.0.0.1:/tmp/{POOL}-x/nfs",
                       f"/tmp/{POOL}-nfs-abc"]
    assert exportfs.unexport_argv("127.0.0.1", "/p") == ["exportfs", "-u", "127.0.0.1:/p"]
    assert mount.umount_argv("/m") == ["umount", "/m"]
    assert not set(plan[1]) & {"-a", "-r", "-ra", "-ar"}  # never the whole table from /etc/exports


@pytest.mark.parametrize("call", [
    lambda: exportfs.export_argv("127.0.0.1", "/p", ["rw,insecure_locks"]),
    lambda: exportfs.export_argv("127.0.0.1", "/p", ["rw no_root_squash"]),
    lambda: nfsmount.mount_argv("127.0.0.1", "/p", "/m", "2", []),
    lambda: nfsd.threads_argv(-1), lambda: nfsd.threads_argv(True), lambda: nfsd.threads_argv(5000),
])
def test_bad_nfs_settings_are_refused(call):
    with pytest.raises(UsageError):
        call()


def test_nfsd_state_is_read_from_proc_fs_nfsd(tmp_path):
    (tmp_path / "threads").write_text("8\n")
    (tmp_path / "versions").write_text("-2 +3 +4 +4.1 +4.2\n")
    assert nfsd.threads(str(tmp_path)) == 8 and nfsd.versions(str(tmp_path)) == "-2 +3 +4 +4.1 +4.2"
    assert nfsd.threads(str(tmp_path / "absent")) is None


@pytest.mark.parametrize("name,fstype,vers,proto,writes,commits,ops", [
    ("nfs4.1-tcp-k8s", "nfs4", "4.1", "tcp", 322308, 12541, 63),
    ("nfs3-rdma-ro", "nfs", "3", "rdma", 0, 0, 22),
])
def test_recorded_mountstats_give_options_and_write_commit_counts(name, fstype, vers, proto, writes, commits, ops):
    [m] = procfs.parse_mountstats(read_fixture("mountstats", f"{name}.txt"))
    assert (m.fstype, m.opts["vers"], m.opts["proto"]) == (fstype, vers, proto)
    assert (m.op("WRITE"), m.op("COMMIT")) == (writes, commits) and len(m.ops) == ops
    assert all(row["transmissions"] >= row["ops"] for row in m.ops.values())  # a retransmission adds
    assert "hard" in m.opts and m.opts["hard"] == ""


def test_mountstats_skips_other_filesystems_and_refuses_garbled_rows():
    text = "device sysfs mounted on /sys with fstype sysfs\ndevice proc mounted on /proc with fstype proc\n"
    assert procfs.parse_mountstats(text + read_fixture("mountstats", "nfs3-rdma-ro.txt"))[0].fstype == "nfs"
    assert procfs.parse_mountstats(text) == []
    bad = read_fixture("mountstats", "nfs3-rdma-ro.txt").replace("WRITE: 0 0 0", "WRITE: 0 x 0")
    with pytest.raises(ValueError, match="per-op"):
        procfs.parse_mountstats(bad)


# --- FreeBSD: ctld/iscsictl and nfsd/mountd, generated -----------------------------------------------------

def test_ctl_conf_serves_our_luns_on_loopback_to_our_initiator_only():
    iqn = tp.iqn_for(POOL)
    text = ctld.ctl_conf(iqn, ZVOLS, "iqn.2012-06.org.freebsd:host1", write_cache=False)
    assert text.startswith("# generated by slogqual")
    assert "\tlisten 127.0.0.1:3260\n" in text and "0.0.0.0" not in text
    assert f"target {iqn} {{\n" in text and "\tinitiator-name iqn.2012-06.org.freebsd:host1\n" in text
    for i, z in enumerate(ZVOLS):
        assert f"\tlun {i} {{\n\t\tpath {z}\n\t\tbackend block\n\t\toption writecache off\n\t}}\n" in text
    assert text.count("{") == text.count("}") == 2 + len(ZVOLS)
    assert "writecache" not in ctld.ctl_conf(iqn, ZVOLS, "iqn.2012-06.org.freebsd:host1")
    # a daemon, not -d (ctld(8): debug mode exits after one connection, leaving its LUNs in the kernel)
    assert ctld.ctld_argv("/tmp/x/ctl.conf") == ["ctld", "-f", "/tmp/x/ctl.conf"]
    assert ctld.login_argv(iqn) == ["iscsictl", "-A", "-p", "127.0.0.1:3260", "-t", iqn]
    assert ctld.logout_argv(iqn) == ["iscsictl", "-R", "-t", iqn]


@pytest.mark.parametrize("bad", [{"iqn": "iqn.x {"}, {"lun_paths": ["/dev/zvol/a b"]}, {"initiator": "x#y"},
                                 {"lun_paths": []}])
def test_ctl_conf_refuses_what_would_change_its_grammar(bad):
    args = dict(iqn=tp.iqn_for(POOL), lun_paths=ZVOLS, initiator="iqn.2012-06.org.freebsd:host1")
    args.update(bad)
    with pytest.raises(UsageError):
        ctld.ctl_conf(**args)


def test_freebsd_exports_and_argv():
    text = nfsserver.exports(f"/{POOL}/nfs")
    assert text.splitlines()[1:] == [f"V4: /{POOL}/nfs 127.0.0.1", f"/{POOL}/nfs -maproot=root 127.0.0.1"]
    assert nfsserver.mountd_argv("/tmp/x/exports") == ["mountd", "-S", "/tmp/x/exports"]
    assert nfsserver.nfsd_argv(16) == ["nfsd", "-t", "-n", "16"]
    assert nfsserver.mount_argv("127.0.0.1", "/p", "/m", "4.2", ["hard"]) == [
        "mount", "-t", "nfs", "-o", "nfsv4,minorversion=2,hard", "127.0.0.1:/", "/m"]  # v4: the V4: root
    assert nfsserver.mount_argv("127.0.0.1", "/p", "/m", "3", [])[4] == "nfsv3"
    for bad in (lambda: nfsserver.exports("/a b"), lambda: nfsserver.exports("/p", client="host; rm"),
                lambda: nfsserver.exports("/p", options=["maproot"]), lambda: nfsserver.nfsd_argv(0)):
        with pytest.raises(UsageError):
            bad()


# --- teardown --------------------------------------------------------------------------------------------

def test_undo_runs_every_step_last_first_and_holds_an_interrupt_to_the_end(capsys):
    done = []
    u = Undo()
    u.push("a", lambda: done.append("a"))
    u.push("b", lambda: (_ for _ in ()).throw(KeyboardInterrupt))
    u.push("c", lambda: (_ for _ in ()).throw(SlogqualError("gone")))
    u.push("d", lambda: done.append("d"))
    with pytest.raises(KeyboardInterrupt):
        u.run()
    assert done == ["d", "a"] and u.steps == []
    assert "could not c: gone" in capsys.readouterr().err


def test_a_signal_that_lands_inside_an_undo_step_waits_for_the_whole_teardown():
    """What the lab found: SIGINT in a normal teardown's logout abandoned it and the session stayed."""
    import os
    import signal
    import time

    done = []

    def logout_like():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # unheld, the KeyboardInterrupt would land here, half way
        done.append("logged out")

    u = Undo()
    u.push("delete the node record", lambda: done.append("node record deleted"))
    u.push("log out", logout_like)
    with pytest.raises(KeyboardInterrupt):
        u.run()
    assert done == ["logged out", "node record deleted"] and u.failures == []


# --- fio clients driving a step (constructed scenarios; the real run is in tests/test_scenario_lab.py) ----

def _runner(**extra):
    from slogqual.pool.engine import PoolScenarioRun
    from slogqual.progress import Progress
    from slogqual.tools.fio_client import Endpoint

    scenario = sc.parse_scenario(_doc(**extra), "t.toml")
    from slogqual.results.scenario import PoolRecord, ScenarioEnvironment, ScenarioParams, ScenarioResult
    pool, env = PoolRecord(layout="stripe", data=[], log=[]), ScenarioEnvironment()
    result = ScenarioResult(status="running", scenario=ScenarioParams(), quick=True, pool=pool, environment=env, steps=[])
    return PoolScenarioRun(scenario, result, "/nonexistent/r.json", Progress(quiet=True),
                           "slogqual-t-1", clients=[Endpoint("127.0.0.1", 8765), Endpoint("127.0.0.1", 8766)])


def test_the_luns_are_split_among_the_fio_clients_in_blocks_with_distinct_job_names():
    run = _runner(luns=5)
    parts = run._client_loads(2, [f"/dev/sd{c}" for c in "abcde"])
    assert [p[1].devices for p in parts] == [["/dev/sda", "/dev/sdb", "/dev/sdc"], ["/dev/sdd", "/dev/sde"]]
    assert [p[1].first_job for p in parts] == [0, 3] and all(p[1].threads_per_lun == 2 for p in parts)
    run = _runner(luns=3, kind="dataset")
    parts = run._client_loads(1, ["/mnt/x"])
    assert [(p[1].directory, p[1].files, p[1].first_job) for p in parts] == [("/mnt/x", 2, 0), ("/mnt/x", 1, 2)]


def test_more_fio_clients_than_luns_or_a_bad_endpoint_is_refused_before_anything(tmp_path):
    from slogqual.pool.door import ScenarioRequest, run_scenario

    out = tmp_path / "r.json"
    for kw, words in (({"fio_servers": 3}, "3 fio clients for 2 LUN"),
                      ({"clients": ["a:1", "a:1"]}, "twice"),
                      ({"clients": ["bad host"]}, "HOST or HOST:PORT"),
                      ({"fio_servers": -1}, "0 to 16")):
        with pytest.raises(UsageError, match=words):
            run_scenario(ScenarioRequest(scenario="iscsi-4k-randwrite", quick=True, data=["/dev/null"],
                                         logs=["/dev/zero"], output=str(out), **kw))
        assert not out.exists()


def test_a_resumed_run_is_driven_by_the_fio_clients_it_began_with(tmp_path):
    """--resume takes the recorded drivers; naming others is one line before anything is touched (the
    remaining steps would not compare with the finished ones)."""
    from slogqual.pool.door import ScenarioRequest, _plan

    doc = json.loads(read_fixture("scenario", "iscsi-4k-randwrite-lio-lab-quick.json"))
    doc["status"] = "interrupted"
    doc["drivers"] = {"clients": [], "fio_servers": 2}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    plan = _plan(ScenarioRequest(output=str(path), resume=True))
    assert (plan.clients, plan.fio_servers) == ([], 2)
    plan = _plan(ScenarioRequest(output=str(path), resume=True, fio_servers=2))
    assert (plan.clients, plan.fio_servers) == ([], 2)
    for kw in ({"fio_servers": 1}, {"clients": ["127.0.0.1:8765"]}):
        with pytest.raises(UsageError, match="began driven by 2 fio server"):
            _plan(ScenarioRequest(output=str(path), resume=True, **kw))
    doc["drivers"] = {"clients": "10.0.0.1", "fio_servers": 0}
    path.write_text(json.dumps(doc))
    with pytest.raises(UsageError, match="key 'drivers.clients' must be a list"):  # refused as the document loads
        _plan(ScenarioRequest(output=str(path), resume=True))
    del doc["drivers"]  # a document from before drivers were recorded: no clients
    path.write_text(json.dumps(doc))
    assert _plan(ScenarioRequest(output=str(path), resume=True)).fio_servers == 0


def test_which_daemons_run_is_read_from_proc_comm(tmp_path):
    """procfs.pids_named on a /proc-shaped tree: exact comm matches only, PIDs that vanish are skipped."""
    from slogqual.kernel import procfs as pf

    for pid, comm in ((12, "iscsid"), (13, "iscsid-helper"), (40, "rpc.statd"), (41, "iscsid")):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "comm").write_text(comm + "\n")
    (tmp_path / "77").mkdir()  # a process that ended between listdir and open: no comm file
    (tmp_path / "self").mkdir()
    assert sorted(pf.pids_named("iscsid", str(tmp_path))) == [12, 41]
    assert pf.running("rpc.statd", str(tmp_path)) and not pf.running("rpcbind", str(tmp_path))
    with open("/proc/self/comm") as fh:  # and on the real /proc: this very process
        assert os.getpid() in pf.pids_named(fh.read().strip())
