"""Fast tests of the lab's pieces that need no guest: device-class TOML, QEMU/zpool/zfs argv building,
and parsers fed with outputs recorded from real lab guest runs (tests/fixtures/{kstat,zpool,zfs,lab})."""

import os
import shlex
import sys

import pytest

from slogqual.errors import MeasurementError, SlogqualError, UsageError
from slogqual.lab import devices
from slogqual.lab.runner import parse_marks
from slogqual.tools import kstat, qemu, zfs, zpool

FIX = os.path.join(os.path.dirname(__file__), "fixtures")


def fixture(*parts):
    with open(os.path.join(FIX, *parts), encoding="utf-8") as fh:
        return fh.read()


# ---- device classes -----------------------------------------------------------------------------

def test_shipped_classes_parse_and_are_ordered_by_added_latency():
    classes = devices.load()
    assert {"hdd", "sata-ssd", "sas-ssd", "nvme", "nvdimm"} <= set(classes)
    order = ["hdd", "sata-ssd", "sas-ssd", "nvme"]
    delays = [classes[n].write_delay_ms for n in order]
    assert delays == sorted(delays, reverse=True) and delays[0] > delays[-1]
    assert {classes[n].transport for n in classes} >= {"sata", "sas", "nvme", "pmem"}
    assert classes["hdd"].rotation_rate == 7200 and classes["sata-ssd"].rotation_rate == 1
    assert classes["nvdimm"].transport == "pmem" and not classes["nvdimm"].nbd


def test_user_file_adds_and_replaces_classes(tmp_path):
    extra = tmp_path / "mine.toml"
    extra.write_text('[class.hdd]\ntransport = "sata"\nwrite_delay_ms = 12\nsize = "1G"\n'
                     '[class.slowsas]\ntransport = "sas"\nvendor = "ACME"\nproduct = "SLOW"\nwrite_delay_ms = 5\n'
                     'iops_limit = 200\nbandwidth = 104857600\n')
    classes = devices.load([str(extra)])
    assert classes["hdd"].write_delay_ms == 12.0 and classes["hdd"].size == 1 << 30
    assert classes["slowsas"].iops_limit == 200 and classes["slowsas"].bandwidth == 100 << 20
    assert "nvme" in classes  # the shipped ones stay


@pytest.mark.parametrize("body, message", [
    ('transport = "floppy"', "transport"),
    ('transport = "sata"\nwrite_delay_ms = "fast"', "number"),
    ('transport = "sata"\nwrite_delay_ms = -1', "negative"),
    ('transport = "sata"\nsize = "1M"', "64M"),
    ('transport = "sas"\nvendor = "MUCH TOO LONG"', "vendor"),
    ('transport = "pmem"\nwrite_delay_ms = 1', "pmem"),
    ('transport = "sata"\ncolour = "red"', "unknown key"),
    ('transport = "sata"\nserial_prefix = "a b"', "serial_prefix"),
    ('transport = "nvme"\nlogical_block_size = 1000', "power of two"),
    ('transport = "sas"\nwrite_delay_ms = 0.8', "whole number of milliseconds"),
    ('transport = "sata"\ncache = "wt"', "cache must be one of unsafe, writeback, none"),
    ('transport = "pmem"\ncache = "unsafe"', "no nbdkit"),
])
def test_bad_classes_are_usage_errors(body, message):
    with pytest.raises(UsageError, match=message):
        devices.parse_text("[class.x]\n" + body)


def test_unknown_class_and_bad_toml():
    with pytest.raises(UsageError, match="unknown lab device class 'tape'"):
        devices.instances(["tape"], devices.load())
    with pytest.raises(UsageError, match="<string>"):
        devices.parse_text("[class.x\n")


def test_instances_have_distinct_serials_in_order():
    inst = devices.instances(["hdd", "hdd", "nvme"], devices.load())
    assert [i.index for i in inst] == [0, 1, 2]
    assert len({i.serial for i in inst}) == 3 and inst[0].serial.startswith("SQLHDD")
    assert all(len(i.serial) <= 20 for i in inst)  # an ATA serial holds 20 characters


# ---- QEMU argv ----------------------------------------------------------------------------------

def _machine(disks, **kw):
    return qemu.Machine(kernel="/k", initrd="/i", append="console=ttyS0",
                        shares=[qemu.Share9p("root", "/", True), qemu.Share9p("lab", "/tmp/j")], disks=disks, **kw)


def test_machine_argv_tcg_9p_and_transports():
    disks = [
        qemu.Disk("lab0", "sata", "S0", model="M,X", rotation_rate=7200, nbd_socket="/s/0"),
        qemu.Disk("lab1", "sas", "S1", vendor="V", product="P", rotation_rate=1, nbd_socket="/s/1"),
        qemu.Disk("lab2", "nvme", "S2", nbd_socket="/s/2"),
        qemu.Disk("lab3", "pmem", "S3", pmem_path="/tmp/j/p", size=256 << 20),
    ]
    argv = qemu.machine_argv(_machine(disks))
    joined = " ".join(argv)
    assert argv[0] == "qemu-system-x86_64"
    assert argv[argv.index("-accel") + 1] == "tcg" and argv[argv.index("-cpu") + 1] == "max"
    assert argv[argv.index("-machine") + 1] == "q35,nvdimm=on"
    assert argv[argv.index("-m") + 1].startswith("1024M,slots=2,maxmem=")
    assert "-no-reboot" in argv
    assert "path=/,security_model=none,multidevs=remap,readonly=on" in joined
    assert "mount_tag=root" in joined and "mount_tag=lab" in joined
    assert "model=M,,X" in joined  # QEMU option commas are doubled
    assert "ide-hd,bus=ide.0,drive=lab0" in joined and "rotation_rate=7200" in joined
    assert "virtio-scsi-pci,id=scsi0" in joined and "scsi-hd,bus=scsi0.0,drive=lab1" in joined
    assert "vendor=V" in joined and "product=P" in joined
    assert "nvme,drive=lab2,id=lab2-dev,serial=S2" in joined
    assert "driver=nbd,node-name=lab0,server.type=unix,server.path=/s/0" in joined
    assert "memory-backend-file,id=lab3-mem,share=on,mem-path=/tmp/j/p,size=268435456" in joined
    assert "nvdimm,id=lab3,memdev=lab3-mem" in joined


def test_sata_ports_are_numbered_and_limited():
    disks = [qemu.Disk(f"lab{i}", "sata", f"S{i}", nbd_socket=f"/s/{i}") for i in range(3)]
    joined = " ".join(qemu.machine_argv(_machine(disks)))
    assert "bus=ide.0,drive=lab0" in joined and "bus=ide.2,drive=lab2" in joined
    many = [qemu.Disk(f"lab{i}", "sata", f"S{i}", nbd_socket=f"/s/{i}") for i in range(7)]
    with pytest.raises(UsageError, match="at most 6 SATA"):
        qemu.machine_argv(_machine(many))


def test_iops_limit_puts_a_throttle_node_between():
    d = qemu.Disk("lab0", "nvme", "S", nbd_socket="/s", iops_limit=150)
    argv = qemu.disk_argv(d, 0)
    joined = " ".join(argv)
    assert "node-name=lab0-nbd" in joined
    assert "throttle-group,id=lab0-tg,x-iops-total=150" in joined
    assert "driver=throttle,node-name=lab0,throttle-group=lab0-tg,file=lab0-nbd" in joined
    assert "-machine" not in argv  # a disk adds no machine options
    plain = qemu.machine_argv(_machine([qemu.Disk("lab0", "nvme", "S", nbd_socket="/s")]))
    assert plain[plain.index("-machine") + 1] == "q35" and plain[plain.index("-m") + 1] == "1024M"


def test_interactive_console_passes_ctrl_c_to_the_guest():
    assert "stdio,id=con,signal=off" in qemu.machine_argv(_machine([], interactive=True))
    assert "stdio,id=con,signal=on" in qemu.machine_argv(_machine([]))


# ---- zpool / zfs argv ---------------------------------------------------------------------------

def test_zpool_argv():
    assert zpool.create_argv("p", ["mirror", "/dev/sda", "/dev/sdb"], ["/dev/nvme0n1"], force=True,
                             properties={"ashift": "12"}, fs_properties={"mountpoint": "none"}) == [
        "zpool", "create", "-f", "-o", "ashift=12", "-O", "mountpoint=none", "p", "mirror", "/dev/sda", "/dev/sdb",
        "log", "/dev/nvme0n1"]
    assert zpool.add_argv("p", ["/dev/pmem0"], log=True) == ["zpool", "add", "p", "log", "/dev/pmem0"]
    assert zpool.destroy_argv("p", force=True) == ["zpool", "destroy", "-f", "p"]
    assert zpool.iostat_argv("p") == ["zpool", "iostat", "-vp", "p"]
    with pytest.raises(ValueError):
        zpool.create_argv("p", [])


def test_zfs_argv():
    assert zfs.create_argv("p/v", {"sync": "always"}, volsize=1 << 28, sparse=True) == [
        "zfs", "create", "-s", "-V", str(1 << 28), "-o", "sync=always", "p/v"]
    assert zfs.create_argv("p/fs", parents=True) == ["zfs", "create", "-p", "p/fs"]
    assert zfs.get_argv("p/v", ["sync", "objsetid"]) == ["zfs", "get", "-Hp", "-o", "property,value", "sync,objsetid", "p/v"]
    assert zfs.set_argv("p", {"sync": "disabled"}) == ["zfs", "set", "sync=disabled", "p"]
    assert zfs.destroy_argv("p/v", recursive=True) == ["zfs", "destroy", "-r", "p/v"]
    assert zfs.parse_get("sync\talways\nobjsetid\t140\n") == {"sync": "always", "objsetid": "140"}
    with pytest.raises(MeasurementError):
        zfs.parse_get("garbage line\n")


# ---- parsers on recorded real outputs -----------------------------------------------------------

def test_kstat_parse_recorded_zil_and_slog_growth():
    before = kstat.parse_kstat(fixture("kstat", "zil-before.txt"))
    after = kstat.parse_kstat(fixture("kstat", "zil-after.txt"))
    assert isinstance(after["zil_commit_count"], int)
    d = kstat.ZilStats.from_kstat(after) - kstat.ZilStats.from_kstat(before)
    assert d.commit_count > 0 and d.slog_count > 0 and d.slog_bytes > 0
    assert d.slog_share is not None and d.slog_share > 0.5


def test_kstat_parse_recorded_objset_has_string_dataset_name():
    ks = kstat.parse_kstat(fixture("kstat", "objset-after.txt"))
    assert ks["dataset_name"] == "sqlabcheck/vol"
    assert isinstance(ks["writes"], int) and ks["writes"] > 0
    z = kstat.ZilStats.from_kstat(ks)
    assert z.slog_bytes > 0 and z.slog_count > 0


def test_kstat_rejects_non_kstat():
    with pytest.raises(MeasurementError):
        kstat.parse_kstat("hello\nworld\n")


def test_zpool_iostat_recorded_log_section():
    rows = zpool.parse_iostat_v(fixture("zpool", "iostat-vp-mirror-log.txt"))
    names = [r.name for r in rows]
    assert names == ["sqlabcheck", "mirror-0", "sda", "sdb", "nvme0n1"]
    assert [r.depth for r in rows] == [0, 1, 2, 2, 1]
    logs = [r for r in rows if r.section == "logs"]
    assert [r.name for r in logs] == ["nvme0n1"] and logs[0].write_ops > 0 and logs[0].write_bytes > 0
    assert all(r.section == "" for r in rows[:4])


def test_zpool_iostat_recorded_sections():
    rows = zpool.parse_iostat_v(fixture("zpool", "iostat-vp-special-logs-cache.txt"))
    by_section = {}
    for r in rows:
        by_section.setdefault(r.section, []).append(r.name)
    assert by_section == {"": ["p", "mirror-0", "sdb", "sdc"], "special": ["sdd"], "logs": ["nvme0n1", "pmem0"],
                          "cache": ["sda"]}
    with pytest.raises(MeasurementError):
        zpool.parse_iostat_v("no table here\n")


def test_lab_marks_recorded():
    marks = parse_marks(fixture("lab", "marks.txt"))
    assert marks["stage2"] < marks["udev"] < marks["zfs"] < marks["devices"] <= marks["pool_ready"] < marks["end"]


def test_zpool_iostat_interval_reports_take_the_last_table():
    two = zpool.parse_iostat_v(fixture("zpool", "iostat-vp-two-reports.txt"))
    one = zpool.parse_iostat_v(fixture("zpool", "iostat-vpy-interval-pmem-log.txt"))
    for rows in (two, one):
        assert [r.name for r in rows] == ["p", "mirror-0", "sda", "sdb", "pmem0"]
        assert [r.section for r in rows][-1] == "logs"
    # Under sync=always the log vdev takes most of the pool's writes in the interval.
    log = one[-1]
    assert log.write_bytes > one[1].write_bytes


def test_zfs_get_and_zpool_list_recorded():
    props = zfs.parse_get(fixture("zfs", "get-Hp-zvol.txt"))
    assert props["sync"] == "always" and props["volblocksize"] == "4096" and int(props["objsetid"]) > 0
    (pool,) = zpool.parse_list(fixture("zpool", "list-Hp.txt"))
    assert pool.name == "p" and pool.health == "ONLINE" and pool.size == pool.alloc + pool.free


def test_openzfs_versions_from_recorded_zfs_version():
    # in the guest: userland and the loaded module (the module's own /sys file agrees)
    v = zfs.parse_versions(fixture("zfs", "version-lab-guest.txt"))
    assert v == {"userland": "2.3.2-2~bpo12+2", "module": "2.3.2-2~bpo12+2"}
    assert fixture("zfs", "sys-module-zfs-version-lab-guest.txt").strip() == v["module"]
    # on a host with the userland and no module: the userland only, the module unknown (not invented)
    assert zfs.parse_versions(fixture("zfs", "version-host-no-module.stdout")) == {"userland": "2.3.2-2~bpo12+2",
                                                                                   "module": None}


def test_selftest_reads_its_recorded_fio_run_with_fios_parser_into_the_recorded_evidence():
    """lab/fio-zvol-sync-always.json is the check job's fio output from the lab run whose check.json is
    lab/check.json: read by tools/fio.py's parser, it gives the evidence that run recorded."""
    import json

    from slogqual.lab import selftest
    from slogqual.tools import fio
    argv = fio.check_job_argv("/dev/zvol/sqlabcheck/vol", selftest.FIO_RUNTIME_S)
    evidence = selftest.fio_evidence(fixture("lab", "fio-zvol-sync-always.json"), "", 0, argv,
                                     "/dev/zvol/sqlabcheck/vol")
    assert evidence == json.loads(fixture("lab", "check.json"))["evidence"]["fio"]


def test_selftest_fio_evidence_of_a_failed_recorded_run_is_the_tools_failed_error():
    from slogqual.errors import ToolFailedError
    from slogqual.lab import selftest
    argv = fixture("fio", "nbd-eio-4k.argv").split()
    with pytest.raises(ToolFailedError, match="Input/output error"):
        selftest.fio_evidence(fixture("fio", "nbd-eio-4k.stdout"), fixture("fio", "nbd-eio-4k.stderr"),
                              int(fixture("fio", "nbd-eio-4k.rc")), argv, "nbd")
    with pytest.raises(MeasurementError):  # fio's report cut short: ToolOutputError, a MeasurementError
        selftest.fio_evidence(fixture("lab", "fio-zvol-sync-always.json")[:400], "", 0, argv, "/dev/zvol/x")


def test_selftest_slog_problems_on_the_recorded_check_run_and_on_no_growth():
    from slogqual.lab import selftest
    before = kstat.ZilStats.from_kstat(kstat.parse_kstat(fixture("kstat", "objset-before.txt")))
    after = kstat.ZilStats.from_kstat(kstat.parse_kstat(fixture("kstat", "objset-after.txt")))
    logs = [r for r in zpool.parse_iostat_v(fixture("zpool", "iostat-vp-mirror-log.txt")) if r.section == "logs"]
    assert selftest.slog_problems(after - before, logs) == []
    assert selftest.slog_problems(after - after, []) == ["zil_commit_count did not grow",
                                                         "zil_itx_metaslab_slog_count/bytes did not grow",
                                                         "zpool iostat -v shows no writes on the log vdev"]


# ---- the host side of a run, without booting ---------------------------------------------------

def _image(tmp_path):
    from slogqual.lab.image import LabImage

    return LabImage(root=str(tmp_path), kernel_release="6.1.0-56-amd64", zfs_version="2.3.2", kernel="/k",
                    initrd="/i", modules=str(tmp_path / "modules"))


def test_run_preparation_quotes_the_command_and_cleans_up(tmp_path):
    from slogqual.lab.runner import LabRun

    inst = devices.instances(["hdd", "nvdimm"], devices.load())
    lab = LabRun(image=_image(tmp_path), devices=inst, command=["sh", "-c", "echo 'a b' $X; exit 3"],
                 tmp_base=str(tmp_path))
    lab._prepare()
    job = lab.job_dir
    assert os.path.isdir(os.path.join(job, "out"))
    with open(os.path.join(job, "job.sh")) as fh:
        assert fh.read() == "exec sh -c 'echo '\"'\"'a b'\"'\"' $X; exit 3'\n"
    with open(os.path.join(job, "lab.env")) as fh:
        env = fh.read()
    assert "LAB_DEVICES='0:hdd:sata:SQLHDD0000 1:nvdimm:pmem:SQLPMEM0001'" in env
    assert "LAB_KREL=6.1.0-56-amd64" in env and "LAB_MODE=run" in env
    assert "--subsystem-match=block" in env
    assert os.path.exists(os.path.join(job, "stage2.sh"))
    lab.cleanup()
    assert not os.path.exists(job) and lab.job_dir is None


def test_guest_path_puts_this_python_first_and_skips_pyenv_shims(monkeypatch):
    import sys

    from slogqual.lab.runner import guest_path

    monkeypatch.setenv("PATH", "/root/.pyenv/shims:/usr/bin")
    parts = guest_path().split(":")
    assert parts[0] == os.path.dirname(sys.executable)
    assert "/root/.pyenv/shims" not in parts and "/usr/sbin" in parts


def test_check_timings_from_recorded_marks():
    from slogqual.cli.lab import timings

    t = timings(parse_marks(fixture("lab", "marks.txt")), 40.1)
    assert t["root_ready_s"] < t["boot_s"] < t["pool_ready_s"] < t["total_s"]
    assert t["module_load_s"] == round(parse_marks(fixture("lab", "marks.txt"))["zfs"]
                                       - parse_marks(fixture("lab", "marks.txt"))["udev"], 2)


def test_cli_lab_without_image_is_a_usage_error(tmp_path, capsys):
    from slogqual.cli import main

    rc = main(["lab", "run", "--cache", str(tmp_path), "--device", "hdd", "--", "true"])
    assert rc == 2
    assert "contrib/lab/build.sh" in capsys.readouterr().err
    assert main(["lab", "run", "--cache", str(tmp_path), "--device", "tape", "--", "true"]) == 2
    assert main(["lab", "check", "--cache", str(tmp_path), "--device", "hdd"]) == 2


def test_stale_job_dirs_of_dead_owners_are_removed(tmp_path):
    from slogqual.lab.runner import remove_stale_job_dirs

    dead = tmp_path / "slogqual-lab-dead"
    live = tmp_path / "slogqual-lab-live"
    unknown = tmp_path / "slogqual-lab-nopid"
    other = tmp_path / "something-else"
    for d in (dead, live, unknown, other):
        d.mkdir()
    proc = __import__("subprocess").Popen(["true"])
    proc.wait()  # a PID that existed and is gone
    (dead / "owner.pid").write_text(f"{proc.pid}\n")
    (live / "owner.pid").write_text(f"{os.getpid()}\n")
    (other / "owner.pid").write_text(f"{proc.pid}\n")
    assert remove_stale_job_dirs(str(tmp_path)) == [str(dead)]
    assert live.exists() and unknown.exists() and other.exists() and not dead.exists()


def test_nvdimm_backing_must_be_memory_with_room(tmp_path, monkeypatch):
    """The NVDIMM's backing file lives on a RAM filesystem: a disk directory is refused (its speed
    would be the host disk's), and so is a need beyond what the tmpfs or the host has, in one line."""
    from slogqual.errors import UsageError
    from slogqual.lab import runner

    if runner._fs_magic("/dev/shm") not in (runner.TMPFS_MAGIC, runner.RAMFS_MAGIC):
        pytest.skip("no tmpfs on /dev/shm here")
    disk_dir = tmp_path
    if runner._fs_magic(str(disk_dir)) in (runner.TMPFS_MAGIC, runner.RAMFS_MAGIC):
        pytest.skip("the test's temporary directory is itself a tmpfs")
    with pytest.raises(UsageError, match="not a RAM filesystem"):
        runner.check_mem_room(str(disk_dir), 1 << 20)
    free = os.statvfs("/dev/shm").f_bavail * os.statvfs("/dev/shm").f_frsize
    with pytest.raises(UsageError, match="MiB"):
        runner.check_mem_room("/dev/shm", free + (1 << 30))
    monkeypatch.setattr(runner, "mem_available", lambda: 16 << 20)
    with pytest.raises(UsageError, match="host has 16 MiB available"):
        runner.check_mem_room("/dev/shm", 256 << 20)
    with pytest.raises(UsageError, match="not a directory"):
        runner.check_mem_room(str(tmp_path / "absent"), 1)
    monkeypatch.setattr(runner, "mem_available", lambda: None)
    monkeypatch.setenv("SLOGQUAL_LAB_MEM", "/dev/shm")
    made = runner.make_mem_dir(1 << 20)
    try:
        assert made.startswith("/dev/shm/slogqual-lab-mem-")
        assert open(os.path.join(made, "owner.pid")).read().strip() == str(os.getpid())
    finally:
        import shutil
        shutil.rmtree(made)


def test_zfs_objsetid_missing_or_not_a_number_is_tool_output_error():
    from slogqual.errors import ToolOutputError
    assert zfs.parse_objsetid("objsetid\t83\n") == 83
    for bad in ("", "sync\talways\n", "objsetid\t-\n", "objsetid\t²\n"):
        with pytest.raises(ToolOutputError, match="no objsetid number"):
            zfs.parse_objsetid(bad)


def test_power_cut_classes_are_file_backed_sata_ssds_that_differ_only_in_their_cache():
    classes = devices.load([])
    cut = {n: c for n, c in classes.items() if c.power_cut}
    assert {n: c.cache for n, c in cut.items()} == {"lying-ssd": "unsafe", "consumer-ssd": "writeback",
                                                    "plp-ssd": "none"}
    # what the guest sees is the same for all three: only a power cut can tell them apart
    assert {(c.transport, c.rotation_rate, c.write_delay_ms, c.bandwidth) for c in cut.values()} == {("sata", 1, 0.0, 0)}
    assert not any(c.power_cut for n, c in classes.items() if n not in cut)  # the others' medium is memory


def test_lab_powercut_refuses_bad_requests_before_anything_is_made(tmp_path):
    from slogqual.lab import powercut as LP

    out = tmp_path / "out"
    for classes, kw, words in ((["nvme"], {}, "has no power to cut"),
                               ([], {}, "name the lab classes"),
                               (["lying-ssd"], {"cut_after": 10 ** 6}, "needs more"),
                               (["lying-ssd"], {"sizes": [512]}, "--sizes"),
                               (["lying-ssd"], {"cycles": 0}, "at least 1"),
                               (["no-such"], {}, "unknown lab device class")):
        with pytest.raises(UsageError, match=words):
            LP.run(LP.LabPowercutRequest(classes=classes, output_dir=str(out), **kw))
        assert not out.exists()


def test_lab_powercut_cli_refusal_is_one_line(tmp_path, capsys):
    from slogqual.cli import main

    code = main(["lab", "powercut", "hdd", "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "hdd has no power to cut" in err
    assert not (tmp_path / "out").exists()


def test_a_power_cut_class_needs_its_backing_file(tmp_path):
    from slogqual.lab.runner import LabRun

    inst = devices.instances(["plp-ssd"], devices.load([]))
    run = LabRun(image=None, devices=inst)
    run.sock_dir = str(tmp_path)
    with pytest.raises(UsageError, match="needs a backing file"):
        run._disks()
    assert run.servers == []


def test_a_bandwidth_class_is_a_sustained_cap_and_wide_pools_have_sas_disks(tmp_path):
    """capped-ssd (issue #19): its nbdkit has the rate filter at the class's bandwidth with a half-second
    bucket (nbdkit's default 2 s let a 6 s lab step measure 15 % over the cap); sas-hdd is an 8 ms disk
    on virtio-scsi, so a wide pool is not held to SATA's six ports."""
    from slogqual.lab.runner import LabRun

    classes = devices.load()
    cap, hdd = classes["capped-ssd"], classes["sas-hdd"]
    assert cap.transport == hdd.transport == "sas" and cap.bandwidth == 0 and cap.calibrated
    assert (hdd.write_delay_ms, hdd.rotation_rate) == (classes["hdd"].write_delay_ms, 7200)
    inst = devices.instances(["capped-ssd"] + ["sas-hdd"] * 7, classes)  # more than SATA could take
    run = LabRun(image=None, devices=inst)
    run.sock_dir = run.job_dir = str(tmp_path)
    try:
        run._disks()
        argvs = [s.argv() for s in run.servers]
    finally:
        run.cleanup()
    assert len(argvs) == 8
    # calibrated in the guest: no rate of its own, only the rate file the guest writes its cap into
    assert f"rate-file={tmp_path}/rate/lab0" in argvs[0] and not any(a.startswith("rate=") for a in argvs[0])
    assert "burstiness=0.5" in argvs[0] and "wdelay=1ms" in argvs[0]
    assert all("wdelay=8ms" in a for a in argvs[1:])


def test_an_absolute_bandwidth_class_has_its_rate_on_nbdkits_command_line(tmp_path):
    from slogqual.lab.runner import LabRun

    classes = devices.parse_text('[class.fixed]\ntransport = "sas"\nbandwidth = "40M"\n')
    run = LabRun(image=None, devices=devices.instances(["fixed"], classes))
    run.sock_dir = str(tmp_path)
    try:
        run._disks()
        argv = run.servers[0].argv()
    finally:
        run.cleanup()
    assert f"rate={40 * 2**20 * 8}" in argv and not any(a.startswith("rate-file=") for a in argv)


@pytest.mark.parametrize("body, words", [
    ('bandwidth_share = 0', "above 0 and below 1"),
    ('bandwidth_share = 1.5', "above 0 and below 1"),
    ('bandwidth_share = "half"', "must be a number"),
    ('bandwidth_share = 0.3\nbandwidth = "40M"', "not both"),
    ('bandwidth_share = 0.3\ncache = "unsafe"', "cannot be calibrated"),
])
def test_a_bad_bandwidth_share_is_refused_in_one_line(body, words):
    with pytest.raises(UsageError, match=words) as exc:
        devices.parse_text(f'[class.x]\ntransport = "sas"\n{body}\n')
    assert "\n" not in str(exc.value)


def test_a_pmem_class_cannot_be_calibrated():
    with pytest.raises(UsageError, match="cannot be slowed"):
        devices.parse_text('[class.x]\ntransport = "pmem"\nbandwidth_share = 0.3\n')


def test_the_guest_is_told_which_devices_to_calibrate(tmp_path):
    """lab.env carries LAB_CALIBRATE ("index:node:share") for the calibrated classes only, and the
    interpreter that runs the calibration in the guest; the job directory has the rate files' folder."""
    from slogqual.lab import calibrate
    from slogqual.lab.image import LabImage
    from slogqual.lab.runner import LabRun

    image = LabImage(root="/nonexistent", kernel="k", initrd="i", modules="m", kernel_release="r", zfs_version="z")
    run = LabRun(image=image, devices=devices.instances(["sas-hdd", "capped-ssd", "nvdimm"], devices.load()),
                 tmp_base=str(tmp_path))
    try:
        run._prepare()
        env = (tmp_path / os.path.basename(run.job_dir) / "lab.env").read_text()
        assert os.path.isdir(os.path.join(run.job_dir, "rate"))
    finally:
        run.cleanup()
    line = next(l for l in env.splitlines() if l.startswith("LAB_CALIBRATE="))
    assert calibrate.parse_spec(shlex.split(line.split("=", 1)[1])[0]) == [(1, "lab1", 0.25)]
    assert f"LAB_PYTHON={shlex.quote(sys.executable)}" in env


def test_calibration_cap_spec_and_rate_file(tmp_path):
    from slogqual.lab import calibrate

    assert calibrate.cap_for(66.2 * 2**20, 0.35) == int(66.2 * 2**20 * 0.35)
    with pytest.raises(UsageError):
        calibrate.cap_for(1e6, 1.0)
    entries = [(6, "lab6", 0.35), (7, "lab7", 0.5)]
    assert calibrate.parse_spec(calibrate.spec(entries)) == entries
    assert calibrate.parse_spec("") == []
    for bad in ("6:lab6", "x:lab6:0.3", "6:lab6:half"):
        with pytest.raises(UsageError, match="index:node:share"):
            calibrate.parse_spec(bad)
    (tmp_path / "rate").mkdir()
    path = calibrate.rate_file(str(tmp_path), "lab6")
    calibrate.write_rate(path, 1000)
    assert open(path).read() == "8000\n"  # nbdkit's rate filter counts bits per second
    assert os.listdir(tmp_path / "rate") == ["lab6"]  # written atomically: no temporary left
    assert calibrate.load(str(tmp_path / "missing.json")) == []


# ---- shared paths: a throttle group several devices share (an HBA's ceiling), a slower slot (issue #30)

def test_a_shared_path_chains_each_disk_through_its_group_and_gives_sas_disks_their_own_hba():
    disks = [qemu.Disk("lab0", "sas", "S0", nbd_socket="/s/0", shared_group="hba0"),
             qemu.Disk("lab1", "sas", "S1", nbd_socket="/s/1", shared_group="hba0", bps_limit=8 << 20),
             qemu.Disk("lab2", "sas", "S2", nbd_socket="/s/2"),
             qemu.Disk("lab3", "nvme", "S3", nbd_socket="/s/3", shared_group="hba0")]
    argv = qemu.machine_argv(_machine(disks, throttle_groups={"hba0": 40 << 20}))
    joined = " ".join(argv)
    assert argv.count("throttle-group,id=path-hba0,x-bps-total=41943040") == 1  # one group, defined once
    # a plain member: nbd -> the shared throttle, the top node named after the disk (the device's drive)
    assert "driver=nbd,node-name=lab0-nbd," in joined
    assert "driver=throttle,node-name=lab0,throttle-group=path-hba0,file=lab0-nbd" in joined
    # the slow slot: nbd -> its own cap -> the shared ceiling
    assert "throttle-group,id=lab1-tg,x-bps-total=8388608" in joined
    assert "driver=throttle,node-name=lab1-own,throttle-group=lab1-tg,file=lab1-nbd" in joined
    assert "driver=throttle,node-name=lab1,throttle-group=path-hba0,file=lab1-own" in joined
    # SAS members sit on the path's own HBA, the others on the common one; an NVMe member is throttled only
    assert "virtio-scsi-pci,id=path-hba0-hba" in joined and "virtio-scsi-pci,id=scsi0" in joined
    assert "scsi-hd,bus=path-hba0-hba.0,drive=lab0" in joined and "scsi-hd,bus=path-hba0-hba.0,drive=lab1" in joined
    assert "scsi-hd,bus=scsi0.0,drive=lab2" in joined and "driver=nbd,node-name=lab2,server" in joined
    assert "driver=throttle,node-name=lab3,throttle-group=path-hba0,file=lab3-nbd" in joined
    with pytest.raises(UsageError, match="does not define"):
        qemu.machine_argv(_machine(disks))


def test_device_specs_name_their_path_and_cap_and_bad_ones_are_one_line():
    classes = devices.load()
    paths = devices.parse_paths(["hba0=40m", "hba1=1g"])
    assert paths == {"hba0": 40 << 20, "hba1": 1 << 30}
    inst = devices.instances(["sas-ssd@hba0", "sas-ssd@hba0:8m", "nvme", "sas-ssd:3m"], classes, paths)
    assert [(d.path, d.cap) for d in inst] == [("hba0", 0), ("hba0", 8 << 20), ("", 0), ("", 3 << 20)]
    assert inst[0].serial != inst[1].serial and inst[1].to_dict()["own_cap_bytes_s"] == 8 << 20
    for bad, words in ((["sas-ssd@hba9"], "no shared path 'hba9'"), (["sas-ssd@HBA"], "lower-case"),
                       (["sas-ssd@hba0:fast"], "not a rate"), (["nvdimm@hba0"], "cannot sit behind"),
                       (["lying-ssd@hba0"], "cannot sit behind"), (["sas-ssd:fast"], "not a rate"),
                       (["nvdimm:8m"], "cannot sit behind")):
        with pytest.raises(UsageError, match=words):
            devices.instances(bad, classes, paths)
    for bad, words in ((["hba0"], "NAME=RATE"), (["hba0=40m", "hba0=1m"], "named twice"), (["hba0=0"], "above 0")):
        with pytest.raises(UsageError, match=words):
            devices.parse_paths(bad)


def test_a_path_no_device_sits_behind_is_refused_before_anything_starts():
    from slogqual import lab

    with pytest.raises(UsageError, match="no --device sits behind it"):
        lab.prepare(["sas-ssd@hba0"], ["true"], paths={"hba0": 1 << 20, "hba1": 1 << 20}, cache="/nonexistent")


def test_a_guest_whose_clock_ran_fast_is_refused_and_a_sound_one_is_not():
    """The host's wall time of a guest's life bounds its uptime: a guest that ends far past it ran a fast clock,
    and every time it measured is void (runner.check_guest_clock). marks-fast-clock.txt is the guest's /lab/marks of
    the class-order test in slowed lab tier run 27 (2026-11-30, docs/testing.md): 3,780 s of uptime at its end, its
    stage2 at 58 s where other guests of that run had theirs at 5-6 s; the whole test, QEMU's life within it, took
    148.1 s of the host's wall (pytest's durations). marks.txt is `lab check`'s, 35.66 s in 40.1 s."""
    from slogqual.lab.runner import check_guest_clock

    sound = parse_marks(fixture("lab", "marks.txt"))
    check_guest_clock(sound, 40.1)
    assert sound["end"] / 40.1 < 1
    fast = parse_marks(fixture("lab", "marks-fast-clock.txt"))
    assert fast["end"] == 3780.10 and fast["stage2"] > 50
    with pytest.raises(SlogqualError, match=r"clock ran 25\.5x the host's \(3780 s of uptime in 148 s\).*void.*kept in OUT"):
        check_guest_clock(fast, 148.1, "OUT")
    check_guest_clock({"stage2": 1.0}, 10.0)  # no end mark (a guest that never ended): nothing to judge by
    check_guest_clock({"end": 45.0}, 40.0)  # a guest's clock a little ahead of a short run's wall: not void
