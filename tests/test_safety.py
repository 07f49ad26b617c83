"""The safety interlocks against real loop devices, mounts and swap (root, loop support).

Each test builds its own loop devices on image files in tmp_path; the ``loops`` fixture unmounts,
swaps off and detaches everything it made, also when a test fails. Concurrency is synchronised on
explicit signals (a line on a pipe, the pid in the lock file), never on sleeps.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from slogqual.device import claim_for_writing, interlock, safety_findings
from slogqual.errors import RefusedError

MiB = 1024 * 1024


def loop_skip_reason():
    if os.geteuid() != 0:
        return "loop devices, mount and swapon need root"
    for prog in ("losetup", "mkfs.ext4", "mkswap", "swapon", "swapoff", "mount", "umount", "wipefs", "blkid"):
        if shutil.which(prog) is None:
            return f"{prog} is not installed"
    if not os.path.exists("/dev/loop-control"):
        return "no /dev/loop-control: the kernel has no loop support here"
    probe = subprocess.run(["losetup", "-f"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"no free loop device ({probe.stderr.strip()})"
    return None


def run(*argv, check=True):
    p = subprocess.run(list(argv), capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} failed ({p.returncode}): {p.stderr.strip()}")
    return p


class Loops:
    """Throw-away loop devices and everything done to them, undone by cleanup()."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.devs, self.mounts, self.swaps, self.partitioned = [], [], [], []

    def new(self, size_mib=64):
        img = self.tmp / f"loop{len(self.devs)}.img"
        with open(img, "wb") as fh:
            fh.truncate(size_mib * MiB)
        dev = run("losetup", "-f", "--show", str(img)).stdout.strip()
        self.devs.append(dev)
        return dev

    def image_of(self, dev):
        return str(self.tmp / f"loop{self.devs.index(dev)}.img")

    def mkfs(self, dev):
        run("mkfs.ext4", "-q", "-F", dev)

    def mount(self, dev):
        mnt = self.tmp / f"mnt{len(self.mounts)}"
        mnt.mkdir()
        run("mount", dev, str(mnt))
        self.mounts.append(str(mnt))
        return str(mnt)

    def swapon(self, dev):
        run("mkswap", "-f", dev)
        run("swapon", dev)
        self.swaps.append(dev)

    def partition(self, dev):
        """A dos table with two partitions; the kernel is told with partx -a (this host has no udev)."""
        p = subprocess.run(["sfdisk", "-q", dev], input=",32M\n,\n", capture_output=True, text=True)
        assert p.returncode == 0 or "Re-reading" in p.stderr, p.stderr
        run("partx", "-a", dev, check=False)
        self.partitioned.append(dev)
        parts = [f"{dev}p1", f"{dev}p2"]
        deadline = time.monotonic() + 10
        while not all(os.path.exists(x) for x in parts):
            assert time.monotonic() < deadline, f"partition nodes of {dev} did not appear"
            time.sleep(0.05)
        return parts

    def cleanup(self):
        for mnt in reversed(self.mounts):
            if subprocess.run(["umount", mnt], capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", mnt], capture_output=True)
        for dev in self.swaps:
            subprocess.run(["swapoff", dev], capture_output=True)
        for dev in self.partitioned:
            subprocess.run(["partx", "-d", dev], capture_output=True)
        for dev in self.devs:
            for _ in range(50):
                if subprocess.run(["losetup", "-d", dev], capture_output=True).returncode == 0:
                    break
                time.sleep(0.1)


@pytest.fixture
def loops(tmp_path):
    reason = loop_skip_reason()
    if reason:
        pytest.skip(reason)
    lp = Loops(tmp_path)
    try:
        yield lp
    finally:
        lp.cleanup()


pytestmark = pytest.mark.integration


def refused(path, destroy_data):
    with pytest.raises(RefusedError) as ei:
        with claim_for_writing(path, destroy_data):
            pass
    msg = str(ei.value)
    assert "\n" not in msg and path in msg
    return msg


# --- the cases of issue 3 ----------------------------------------------------------------------------

def test_blank_device_is_claimed_and_held_exclusively(loops):
    dev = loops.new()
    with claim_for_writing(dev, destroy_data=False) as claim:
        assert claim.kind == "block" and claim.devnum and claim.overridden == []
        with open(claim.lock_path) as fh:
            assert fh.read().strip() == str(os.getpid())
        # plain (non-exclusive) writers still work: that is how fio writes during the sweep
        run("dd", "if=/dev/zero", f"of={dev}", "bs=4096", "count=16", "oflag=direct")
        # but while the claim holds its O_EXCL open, exclusive users are refused by the kernel
        mnt = loops.tmp / "should-not-mount"
        mnt.mkdir()
        assert subprocess.run(["mount", dev, str(mnt)], capture_output=True).returncode != 0
        mk = subprocess.run(["mkfs.ext4", "-q", "-F", dev], capture_output=True, text=True)
        assert mk.returncode != 0 and "in use" in mk.stderr
    # released: claimable again, and still blank (no flag needed)
    with claim_for_writing(dev, destroy_data=False):
        pass


def test_mounted_ext4_is_refused_even_with_destroy_data(loops):
    dev = loops.new()
    loops.mkfs(dev)
    mnt = loops.mount(dev)
    msg = refused(dev, destroy_data=True)
    assert f"{dev} is mounted at {mnt} (ext4)" in msg


def test_mkfs_unmounted_needs_destroy_data(loops):
    dev = loops.new()
    loops.mkfs(dev)
    msg = refused(dev, destroy_data=False)
    assert "ext4" in msg and "--destroy-data" in msg
    with claim_for_writing(dev, destroy_data=True) as claim:
        assert any("ext4" in o for o in claim.overridden)
        assert claim.notes and dev in claim.notes[0]


def test_active_swap_is_refused_even_with_destroy_data(loops):
    dev = loops.new()
    loops.swapon(dev)
    msg = refused(dev, destroy_data=True)
    assert "active swap" in msg


def test_partition_table_is_refused(loops):
    dev = loops.new()
    parts = loops.partition(dev)
    msg = refused(dev, destroy_data=False)
    assert "dos partition table" in msg and os.path.basename(parts[0]) in msg  # "has partitions loopNp1, ..."
    with claim_for_writing(dev, destroy_data=True) as claim:
        assert any("partition" in o for o in claim.overridden)


def test_mounted_partition_refuses_the_whole_disk_always(loops):
    dev = loops.new()
    p1, _ = loops.partition(dev)
    loops.mkfs(p1)
    loops.mount(p1)
    msg = refused(dev, destroy_data=True)
    assert f"{p1} is mounted" in msg
    assert "is mounted" in refused(p1, destroy_data=True)


def test_second_concurrent_claim_is_refused(loops):
    dev = loops.new()
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys\nfrom slogqual.device import claim_for_writing\n"
         f"with claim_for_writing({dev!r}, False):\n"
         "    print('held', flush=True)\n"
         "    sys.stdin.readline()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        msg = refused(dev, destroy_data=True)
        assert f"another slogqual run (pid {holder.pid})" in msg
        # under another name of the same device (a symlink) too: the lock is keyed by MAJ:MIN
        alias = str(loops.tmp / "alias")
        os.symlink(dev, alias)
        assert f"pid {holder.pid}" in refused(alias, destroy_data=True)
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    with claim_for_writing(dev, destroy_data=False):
        pass


def test_device_open_in_another_process_is_refused(loops):
    dev = loops.new()
    with open(dev, "rb"):
        pass  # our own fds do not count
    holder = subprocess.Popen([sys.executable, "-c",
                               f"import sys\nf = open({dev!r}, 'rb')\nprint('open', flush=True)\nsys.stdin.readline()\n"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        msg = refused(dev, destroy_data=True)
        assert f"pid {holder.pid}" in msg and "is open in" in msg
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)


def test_root_filesystem_device_is_refused():
    if os.geteuid() != 0:
        pytest.skip("reading every mount and swap of the host needs root")
    from slogqual.kernel import sysfs
    from slogqual.tools import findmnt

    root = [m for m in findmnt.mounts() if m.target == "/"][0]
    if not root.source.startswith("/dev/") or sysfs.devnum_of(root.source) is None:
        pytest.skip(f"the root filesystem is not on a block device here ({root.source})")
    msg = refused(root.source, destroy_data=True)
    assert "backs the root filesystem" in msg and "is mounted at /" in msg


def test_regular_file_that_backs_a_loop_device_is_refused(loops):
    dev = loops.new()
    msg = refused(loops.image_of(dev), destroy_data=True)
    assert f"backs the loop device {dev}" in msg


def test_active_swap_file_is_refused(loops, tmp_path):
    swapfile = tmp_path / "swapfile"
    run("dd", "if=/dev/zero", f"of={swapfile}", "bs=1M", "count=16")
    os.chmod(swapfile, 0o600)
    run("mkswap", str(swapfile))
    if subprocess.run(["swapon", str(swapfile)], capture_output=True).returncode != 0:
        pytest.skip("the filesystem of tmp_path does not support swap files")
    try:
        assert "active swap file" in refused(str(swapfile), destroy_data=True)
    finally:
        subprocess.run(["swapoff", str(swapfile)], capture_output=True)


def test_plain_file_and_uri_are_only_locked(tmp_path):
    f = tmp_path / "target.img"
    f.write_bytes(b"\0" * 4096)
    with claim_for_writing(str(f), destroy_data=False) as claim:
        assert claim.kind == "file" and claim.lock_path
        assert "another slogqual run" in refused(str(f), destroy_data=False)
    uri = f"nbd+unix:///?socket={tmp_path}/nbd.sock"
    with claim_for_writing(uri, destroy_data=False) as claim:
        assert claim.kind == "nbd"
        assert "another slogqual run" in refused(uri, destroy_data=False)


def test_inspect_reports_without_locking(loops):
    dev = loops.new()
    assert safety_findings(dev) == []
    loops.mkfs(dev)
    (f,) = safety_findings(dev)
    assert f.overridable and "ext4" in f.message
    loops.mount(dev)
    codes = {f.code for f in safety_findings(dev)}
    assert interlock.MOUNTED in codes


# --- through the real CLI: slogqual sweep exits 3 on refusal and writes nothing -----------------------

def sweep(dev, out, *extra):
    return subprocess.run([sys.executable, "-m", "slogqual", "sweep", dev, "--sizes", "4k", "--runtime", "0.2",
                           "--settle", "0", "--quiet", "-o", str(out), *extra], capture_output=True, text=True)


def needs_fio():
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")


def test_cli_sweep_refusals_exit_3_and_write_nothing(loops, tmp_path):
    needs_fio()
    dev = loops.new()
    loops.mkfs(dev)
    with open(dev, "rb") as fh:
        before = fh.read(1 * MiB)
    p = sweep(dev, tmp_path / "a.json")
    assert p.returncode == 3, p.stderr
    assert f"refusing {dev}: carries ext4" in p.stderr
    with open(dev, "rb") as fh:
        assert fh.read(1 * MiB) == before  # the refused run wrote nothing
    mnt = loops.mount(dev)
    p = sweep(dev, tmp_path / "b.json", "--destroy-data")
    assert p.returncode == 3 and f"is mounted at {mnt}" in p.stderr
    swap = loops.new()
    loops.swapon(swap)
    p = sweep(swap, tmp_path / "c.json", "--destroy-data")
    assert p.returncode == 3 and "active swap" in p.stderr
    part = loops.new()
    loops.partition(part)
    p = sweep(part, tmp_path / "d.json")
    assert p.returncode == 3 and "partition table" in p.stderr


def test_cli_sweep_with_destroy_data_runs_and_records_the_device(loops, tmp_path):
    needs_fio()
    dev = loops.new()
    loops.mkfs(dev)
    out = tmp_path / "r.json"
    p = sweep(dev, out, "--destroy-data")
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    assert doc["status"] == "complete"
    assert doc["device"]["transport"] == "loop" and doc["device"]["class"] == "virtual"
    assert doc["device"]["write_cache"]["verdict"] == "unknown"
    assert any("--destroy-data: overwriting" in n and "ext4" in n for n in doc["notes"])


def test_cli_second_concurrent_sweep_is_refused(loops, tmp_path):
    needs_fio()
    dev = loops.new()
    first = subprocess.Popen([sys.executable, "-m", "slogqual", "sweep", dev, "--sizes", "4k,8k,16k,32k,64k",
                              "--runtime", "30", "--settle", "0", "--quiet", "--destroy-data",
                              "-o", str(tmp_path / "first.json")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)  # its own process group: ^C reaches fio too
    try:
        lock = os.path.join(interlock._lock_dir(), interlock.lock_name(dev))
        deadline = time.monotonic() + 60
        while True:  # the first sweep has claimed the device once its pid is in the lock file
            try:
                with open(lock) as fh:
                    if fh.read().strip() == str(first.pid):
                        break
            except FileNotFoundError:
                pass
            assert first.poll() is None, first.stderr.read()
            assert time.monotonic() < deadline, "the first sweep never claimed the device"
            time.sleep(0.05)
        p = sweep(dev, tmp_path / "second.json", "--destroy-data")
        assert p.returncode == 3
        assert f"another slogqual run (pid {first.pid})" in p.stderr
    finally:
        os.killpg(first.pid, signal.SIGINT)  # as ^C in a terminal: the whole group, fio included
        try:
            first.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()


# --- kernel features this host lacks (dm, ZFS): run in the lab guest on its emulated disks ----------------

def lab_disk(index=0):
    """A throw-away emulated disk of the lab guest ($SLOGQUAL_LAB_DEVICES); skip elsewhere."""
    devs = [d for d in os.environ.get("SLOGQUAL_LAB_DEVICES", "").split() if not os.path.basename(d).startswith("pmem")]
    if len(devs) <= index:
        pytest.skip("not in the lab guest (no $SLOGQUAL_LAB_DEVICES block device)")
    if os.geteuid() != 0:
        pytest.skip("needs root")
    return devs[index]


@pytest.mark.lab
def test_device_mapper_holder_is_refused_always():
    dev = lab_disk()
    if shutil.which("dmsetup") is None:
        pytest.skip("dmsetup is not installed")
    name = f"slogqual-test-{os.getpid()}"
    sectors = int(open(f"/sys/class/block/{os.path.basename(dev)}/size").read()) // 2
    made = subprocess.run(["dmsetup", "create", name, "--table", f"0 {sectors} linear {dev} 0"],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"device-mapper unavailable here ({made.stderr.strip()})")
    try:
        msg = refused(dev, destroy_data=True)
        assert "is held by dm-" in msg and name in msg
    finally:
        subprocess.run(["dmsetup", "remove", name], capture_output=True)


@pytest.mark.lab
def test_zfs_pool_member_refused_always_while_imported():
    dev = lab_disk()
    from slogqual.tools import spawn as _run

    if _run.which("zpool") is None or not os.path.isdir("/sys/module/zfs"):
        pytest.skip("ZFS (module and zpool) is not available here")
    from slogqual.tools import zpool

    pool = f"sqsafety{os.getpid()}"
    zpool.create(pool, [dev], force=True, mountpoint="none")
    try:
        msg = refused(dev, destroy_data=True)
        assert f"imported ZFS pool {pool!r}" in msg or "kernel reports it busy" in msg
    finally:
        zpool.destroy(pool, force=True)
    # a destroyed pool leaves its labels: a signature that only --destroy-data overrides
    msg = refused(dev, destroy_data=False)
    assert "ZFS label" in msg or "zfs_member" in msg
    with claim_for_writing(dev, destroy_data=True) as claim:
        assert any("ZFS" in o or "zfs" in o for o in claim.overridden)


@pytest.mark.lab
def test_md_raid_member_is_refused_always():
    a, b = lab_disk(0), lab_disk(1)
    if shutil.which("mdadm") is None:
        pytest.skip("mdadm is not installed")
    md = f"/dev/md/sqsafety{os.getpid()}"
    made = subprocess.run(["mdadm", "--create", md, "--run", "--force", "--level=0", "--raid-devices=2",
                           "--metadata=1.2", a, b], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"md unavailable here ({made.stderr.strip().splitlines()[-1] if made.stderr.strip() else made.returncode})")
    try:
        msg = refused(a, destroy_data=True)
        assert "is held by md" in msg and "raid0" in msg
    finally:
        subprocess.run(["mdadm", "--stop", md], capture_output=True)
    # stopped: the members still carry md superblocks, a signature --destroy-data may override
    msg = refused(a, destroy_data=False)
    assert "linux_raid_member" in msg
    with claim_for_writing(a, destroy_data=True):
        pass
    subprocess.run(["mdadm", "--zero-superblock", a, b], capture_output=True)


@pytest.mark.lab
def test_lab_sweep_records_identity_and_warns(tmp_path):
    """On an emulated SATA disk of the guest: the result embeds the record and its loud warning."""
    dev = lab_disk()
    needs_fio()
    subprocess.run(["wipefs", "-a", "-q", dev], capture_output=True)
    out = tmp_path / "lab.json"
    p = sweep(dev, out, "--destroy-data")
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    assert doc["device"]["transport"] in ("sata", "scsi", "sas") and doc["device"]["model"]
    if doc["device"]["write_cache"]["verdict"] == "volatile-cache-enabled":
        assert any(w.startswith("VOLATILE WRITE CACHE ENABLED") for w in doc["warnings"])


def test_probes_that_hang_fail_closed(loops, monkeypatch):
    """blkid and wipefs timing out (a dying disk): the device counts as unprobed, refused unless --destroy-data."""
    from slogqual.tools import spawn as _run

    real = _run.run

    def hanging(argv, **kw):
        if argv[0] in ("blkid", "wipefs"):
            raise _run.timed_out(argv, kw.get("timeout"))  # what run(..., typed_timeout=True) raises
        return real(argv, **kw)

    dev = loops.new()
    monkeypatch.setattr(_run, "run", hanging)
    msg = refused(dev, destroy_data=False)
    assert "cannot probe it" in msg
    with claim_for_writing(dev, destroy_data=True) as claim:
        assert any("cannot probe" in o for o in claim.overridden)
