"""The FreeBSD transports (ctld/iscsictl, nfsd/mountd) driven through their real code with a scripted
host: each program's answer is given in the order the code must ask. ``iscsictl -L -v`` answers are
the REAL capture tests/fixtures/freebsd/iscsictl-Lv-oracle-uefi-boot.txt or CONSTRUCTED from it (its
target name and device nodes replaced by ours: labelled where used); every other answer (exit status,
empty output, a pid) is CONSTRUCTED — these programs cannot run on the Linux host."""

import os
import subprocess
import tempfile

import pytest

from conftest import FIXTURES
from slogqual.errors import SlogqualError, UsageError
from slogqual.pool import transport
from slogqual.pool.transport import freebsd_iscsi, freebsd_nfs
from slogqual.tools.freebsd import ctld, nfsserver
from slogqual.tools.freebsd.host import Host

POOL = "slogqual-t-123"
IQN = "iqn.2003-01.org.slogqual:slogqual-t-123"
CAPTURE = os.path.join(FIXTURES, "freebsd", "iscsictl-Lv-oracle-uefi-boot.txt")


def real_capture() -> str:
    with open(CAPTURE, encoding="utf-8") as fh:
        return fh.read()


def constructed_session(iqn: str, devices: str) -> str:
    """CONSTRUCTED: the real capture with our target name and device nodes."""
    return (real_capture().replace("iqn.2015-02.oracle.boot:uefi", iqn)
            .replace("Device nodes:             da0", f"Device nodes:             {devices}"))


def constructed_devlist() -> str:
    """CONSTRUCTED from the REAL capture ctladm-devlist-v-readme-ctl.txt: LUNs 3 and 4 given our zvols."""
    with open(os.path.join(FIXTURES, "freebsd", "ctladm-devlist-v-readme-ctl.txt"), encoding="utf-8") as fh:
        text = fh.read()
    return text.replace("file=testdisk3", "file=/dev/zvol/p/l0").replace("file=testdisk4", "file=/dev/zvol/p/l1")


def constructed_nfsstat(private_tmp) -> str:
    """CONSTRUCTED from the REAL capture nfsstat-m-nfsv4.2-nconnect16.txt: its mountpoint made ours."""
    (workdir,) = [p for p in private_tmp.iterdir() if p.name.startswith(f"{POOL}-nfs-")]
    with open(os.path.join(FIXTURES, "freebsd", "nfsstat-m-nfsv4.2-nconnect16.txt"), encoding="utf-8") as fh:
        return fh.read().replace(" on /tmp/nfs", f" on {workdir / 'mnt'}")


class Script:
    """A host whose programs must be called in exactly the scripted order."""

    def __init__(self, steps):
        self.steps = list(steps)
        self.calls = []

    def __call__(self, argv, **_kw):
        argv = [str(a) for a in argv]
        self.calls.append(argv)
        assert self.steps, f"unexpected call {argv}"
        match, answer = self.steps.pop(0)
        assert match(argv), f"call {argv} does not match the script"
        answer = answer() if callable(answer) else answer  # an answer known only when asked
        rc, out = answer if isinstance(answer, tuple) else (0, answer)
        return subprocess.CompletedProcess(argv, rc, out, "complaint" if rc else "")

    def host(self):
        return Host(runner=self)


def is_(*argv):
    return lambda got: got == list(argv)


def starts(*argv):
    return lambda got: got[:len(argv)] == list(argv)


def pids(path):
    return {"ctld.pid": "4242\n", "iscsid.pid": "4343\n", "mountd.pid": "5151\n", "nfsd.pid": "5252\n"}[
        os.path.basename(path)]


@pytest.fixture(autouse=True)
def private_tmp(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def no_sleep(_s):
    pass


# ---- iscsictl -L -v parser -------------------------------------------------------------------------------

def test_parse_list_reads_the_real_capture():
    (s,) = ctld.parse_list(real_capture())
    assert (s.session_id, s.target, s.portal, s.state, s.devices) == (
        1, "iqn.2015-02.oracle.boot:uefi", "169.254.0.2", "Connected", ["da0"])
    assert s.fields["MaxSendDataSegmentLength"] == "8192" and s.fields["Initiator portal"] == ""


def test_parse_list_two_sessions_and_garbage():
    two = real_capture() + "\n" + constructed_session(IQN, "da1 da2")  # CONSTRUCTED second block
    assert [s.devices for s in ctld.parse_list(two)] == [["da0"], ["da1", "da2"]]
    assert ctld.parse_list("") == []
    for bad in ("garbage", real_capture().replace("Session ID:               1", "Session ID: x"),
                real_capture().replace("Device nodes:             da0\n", "")):
        with pytest.raises(ValueError):
            ctld.parse_list(bad)


# ---- generators ------------------------------------------------------------------------------------------

def test_parse_plain_list_reads_the_real_capture():
    with open(os.path.join(FIXTURES, "freebsd", "iscsictl-L-belajarfreebsd-node01.txt"), encoding="utf-8") as fh:
        text = fh.read()
    for parse in (ctld.parse_list_plain, ctld.parse_list):  # parse_list tells the plain form by its header
        (s,) = parse(text)
        assert (s.session_id, s.target, s.portal, s.state) == (None, "iqn.2023-12.world.srv:dlp.target01",
                                                               "10.0.0.30", "Connected")
        assert s.devices == ["da0"] and s.fields == {}


def test_parse_plain_list_states_and_garbage():
    """CONSTRUCTED lines in iscsictl.c's plain layout: a failure reason is free text, not a device list."""
    header = "Target name                          Target portal    State\n"
    text = (header + "iqn.2003-01.org.slogqual:p          127.0.0.1:3260   Connected: da3 da4\n"
            "iqn.x:y                              10.0.0.9         Authentication failed\n")
    a, b = ctld.parse_list_plain(text)
    assert (a.state, a.devices) == ("Connected", ["da3", "da4"])
    assert (b.state, b.devices) == ("Authentication failed", [])
    assert ctld.parse_list_plain(header) == []
    for bad in ("", "garbage", header + "lonely\n", header + "iqn.x 1.2.3.4 Connected: /dev/da0\n"):
        with pytest.raises(ValueError):
            ctld.parse_list_plain(bad)


def test_ctl_conf_names_its_own_pidfile_and_ctld_is_a_daemon():
    text = ctld.ctl_conf(IQN, ["/dev/zvol/p/a"], "iqn.1994-09.org.freebsd:h", pidfile="/tmp/x/ctld.pid")
    assert "pidfile /tmp/x/ctld.pid\n" in text and "listen 127.0.0.1:3260" in text
    assert ctld.ctld_argv("/tmp/x/ctl.conf") == ["ctld", "-f", "/tmp/x/ctl.conf"]
    with pytest.raises(UsageError):
        ctld.ctl_conf(IQN, ["/dev/a"], "i", pidfile="/tmp/a b")


def test_nfsv4_mounts_the_v4_root_and_v3_the_path():
    assert nfsserver.mount_argv("127.0.0.1", "/p/d", "/m", "4.2", ["hard"])[-2:] == ["127.0.0.1:/", "/m"]
    assert nfsserver.mount_argv("127.0.0.1", "/p/d", "/m", "3", ["hard"])[4:] == ["nfsv3,hard", "127.0.0.1:/p/d", "/m"]


# ---- iSCSI attach ---------------------------------------------------------------------------------------

def iscsi_setup(iscsid_runs=True):
    steps = [(is_("pgrep", "-x", "ctld"), (1, "")), (is_("iscsictl", "-L", "-v"), ""),
             (starts("ctld", "-f"), ""), (is_("pgrep", "-x", "iscsid"), (0 if iscsid_runs else 1, "4343\n"))]
    if not iscsid_runs:
        steps.append((starts("iscsid", "-P"), ""))
    return steps


def test_iscsi_attach_and_teardown_in_reverse(private_tmp):
    script = Script(iscsi_setup() + [
        (is_("iscsictl", "-A", "-p", "127.0.0.1:3260", "-t", IQN), ""),
        (is_("iscsictl", "-L", "-v"), real_capture() + "\n" + constructed_session(IQN, "da3 da4")),
        (is_("ctladm", "devlist", "-v"), constructed_devlist()),
        (is_("iscsictl", "-R", "-t", IQN), ""),
        (is_("kill", "-TERM", "4242"), ""), (is_("kill", "-0", "4242"), (1, "")),
    ])
    with freebsd_iscsi.attach(POOL, ["/dev/zvol/p/l0", "/dev/zvol/p/l1"], host=script.host(), hostname="h",
                              read=pids, sleep=no_sleep) as att:
        assert att.targets == ["/dev/da3", "/dev/da4"]
        (workdir,) = [p for p in private_tmp.iterdir() if p.name.startswith(f"{POOL}-ctld-")]
        assert workdir.stat().st_mode & 0o777 == 0o700
        conf = (workdir / "ctl.conf").read_text()
        assert conf == ctld.ctl_conf(IQN, ["/dev/zvol/p/l0", "/dev/zvol/p/l1"], "iqn.1994-09.org.freebsd:h",
                                     portal="127.0.0.1:3260", portal_group=f"{POOL}-pg",
                                     pidfile=str(workdir / "ctld.pid"))
        assert script.calls[2] == ["ctld", "-f", str(workdir / "ctl.conf")]
        assert att.record["daemons_started"] == ["ctld"] and att.record["negotiated"]["MaxBurstLen"] == "262144"
        assert [lun["ctl"]["ctl_lun"] for lun in att.record["luns"]] == [3, 4]
        assert att.record["luns"][1]["ctl"]["options"]["file"] == "/dev/zvol/p/l1"
        assert att.record["luns"][0]["ctl"]["size_bytes"] == 2147483648 * 512
    assert not script.steps and not list(private_tmp.iterdir())


def test_iscsi_a_zvol_without_a_ctl_lun_is_an_error_and_logs_out(private_tmp):
    script = Script(iscsi_setup() + [
        (is_("iscsictl", "-A", "-p", "127.0.0.1:3260", "-t", IQN), ""),
        (is_("iscsictl", "-L", "-v"), constructed_session(IQN, "da3")),
        (is_("ctladm", "devlist", "-v"), constructed_devlist()),  # serves l0 and l1, not l9
        (is_("iscsictl", "-R", "-t", IQN), ""),
        (is_("kill", "-TERM", "4242"), ""), (is_("kill", "-0", "4242"), (1, "")),
    ])
    with pytest.raises(SlogqualError, match="no CTL LUN serves /dev/zvol/p/l9"):
        with freebsd_iscsi.attach(POOL, ["/dev/zvol/p/l9"], host=script.host(), hostname="h", read=pids,
                                  sleep=no_sleep):
            pytest.fail("attached without a CTL LUN")
    assert not script.steps and not list(private_tmp.iterdir())


def test_iscsi_failed_login_undoes_only_what_was_made(private_tmp):
    script = Script(iscsi_setup(iscsid_runs=False) + [
        (starts("iscsictl", "-A"), (1, "")),
        (is_("kill", "-TERM", "4343"), ""), (is_("kill", "-0", "4343"), (1, "")),
        (is_("kill", "-TERM", "4242"), ""), (is_("kill", "-0", "4242"), (1, "")),
    ])
    with pytest.raises(SlogqualError):
        with freebsd_iscsi.attach(POOL, ["/dev/zvol/p/l0"], host=script.host(), hostname="h", read=pids,
                                  sleep=no_sleep):
            pytest.fail("attached despite the failed login")
    assert not script.steps  # no logout: the login never happened
    assert not list(private_tmp.iterdir())


def test_iscsi_refuses_beside_a_running_ctld_before_anything(private_tmp):
    script = Script([(is_("pgrep", "-x", "ctld"), (0, "77\n"))])
    with pytest.raises(UsageError, match="ctld already runs"):
        with freebsd_iscsi.attach(POOL, ["/dev/zvol/p/l0"], host=script.host(), hostname="h", read=pids):
            pass
    assert not list(private_tmp.iterdir())


def test_iscsi_refuses_an_existing_session_to_our_iqn(private_tmp):
    script = Script([(is_("pgrep", "-x", "ctld"), (1, "")),
                     (is_("iscsictl", "-L", "-v"), constructed_session(IQN, "da0"))])
    with pytest.raises(UsageError, match="already exists"):
        with freebsd_iscsi.attach(POOL, ["/dev/zvol/p/l0"], host=script.host(), hostname="h", read=pids):
            pass
    assert not script.steps and not list(private_tmp.iterdir())


# ---- NFS attach -----------------------------------------------------------------------------------------

NFS_CHECKS = [(is_("pgrep", "-x", "mountd"), (1, "")), (is_("pgrep", "-x", "nfsd"), (1, "")),
              (is_("pgrep", "-x", "rpcbind"), (0, "12\n"))]


def test_nfs_attach_and_teardown_in_reverse(private_tmp):
    script = Script(NFS_CHECKS + [
        (starts("mountd", "-S"), ""), (is_("nfsd", "-t", "-n", "8"), ""),
        (starts("mount", "-t", "nfs", "-o", "nfsv4,minorversion=2,hard", "127.0.0.1:/"), ""),
        (is_("nfsstat", "-m"), lambda: constructed_nfsstat(private_tmp)),
        (starts("umount"), ""),
        (is_("kill", "-TERM", "5252"), ""), (is_("kill", "-0", "5252"), (1, "")),
        (is_("kill", "-TERM", "5151"), ""), (is_("kill", "-0", "5151"), (1, "")),
    ])
    with freebsd_nfs.attach(POOL, "/pool/ds", host=script.host(), read=pids, sleep=no_sleep) as att:
        (workdir,) = [p for p in private_tmp.iterdir() if p.name.startswith(f"{POOL}-nfs-")]
        assert workdir.stat().st_mode & 0o777 == 0o700
        assert (workdir / "exports").read_text() == nfsserver.exports("/pool/ds", "127.0.0.1", ("-maproot=root",))
        assert script.calls[3] == ["mountd", "-S", str(workdir / "exports")]
        assert att.targets == [str(workdir / "mnt")] and script.calls[5][-1] == att.targets[0]
        assert att.record["daemons_started"] == ["mountd", "nfsd"]
        opts = att.record["mount_options"]
        assert (opts["vers"], opts["wsize"], opts["proto"]) == ("4.2", "1048576", "tcp") and "hard" in opts
    assert script.calls[7] == ["umount", att.targets[0]]
    assert not script.steps and not list(private_tmp.iterdir())


def test_nfs_failed_mount_stops_the_servers_only(private_tmp):
    script = Script(NFS_CHECKS + [
        (starts("mountd"), ""), (starts("nfsd"), ""), (starts("mount"), (1, "")),
        (is_("kill", "-TERM", "5252"), ""), (is_("kill", "-0", "5252"), (1, "")),
        (is_("kill", "-TERM", "5151"), ""), (is_("kill", "-0", "5151"), (1, "")),
    ])
    with pytest.raises(SlogqualError):
        with freebsd_nfs.attach(POOL, "/pool/ds", version="3", host=script.host(), read=pids, sleep=no_sleep):
            pytest.fail("attached despite the failed mount")
    assert not script.steps and not list(private_tmp.iterdir())


def test_nfs_refuses_beside_a_running_mountd(private_tmp):
    script = Script([(is_("pgrep", "-x", "mountd"), (0, "9\n"))])
    with pytest.raises(UsageError, match="mountd already runs"):
        with freebsd_nfs.attach(POOL, "/pool/ds", host=script.host(), read=pids):
            pass
    assert not list(private_tmp.iterdir())


def test_dispatcher_picks_the_freebsd_modules(monkeypatch):
    from slogqual import paths

    monkeypatch.setattr(paths, "is_freebsd", lambda platform=None: True)
    cm = transport.attach(transport.TransportConfig(kind="iscsi"), POOL, ["/dev/zvol/p/l0"])
    assert cm.gen.gi_code.co_filename.endswith("freebsd_iscsi.py")
    cm = transport.attach(transport.TransportConfig(kind="nfs"), POOL, ["/pool/ds"])
    assert cm.gen.gi_code.co_filename.endswith("freebsd_nfs.py")
