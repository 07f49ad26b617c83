"""slogqual powercut without devices: the record format, torn/stale/missing on constructed device images,
the recorder's protocol, the result document, bad input, and the power-loss verdict table on recorded
identities (tests/fixtures: nvme-cli, smartctl, the lab guest's sysfs)."""

import json
import os
import subprocess
import sys
import tarfile

import pytest

from conftest import ROOT, need
from slogqual.analysis import powerloss as PL
from slogqual.report import powerloss as PLW
from slogqual.cli import main
from slogqual.device import classify as C
from slogqual.device import linux
from slogqual.device.record import DeviceRecord
from slogqual.errors import UsageError
from slogqual.powercut import records as R
from slogqual.powercut import verify as V
from slogqual.powercut.recorder import Recorder, RecorderClient, RecorderServer, load_journal, parse_address
from slogqual.powercut.engine import PowercutOptions, check_options, verify_run
from slogqual.results import schema as S
from slogqual.results.powercut import PowercutResult
from slogqual.kernel import sysfs
from slogqual.tools import cutcmd, nvme, smartctl

FIX = os.path.join(os.path.dirname(__file__), "fixtures")
RUN = bytes(range(16))
OTHER = bytes(range(16, 32))
SIZES = [4096, 8192, 16384]


def text(*parts):
    with open(os.path.join(FIX, *parts), encoding="utf-8") as fh:
        return fh.read()


# --- the record format -------------------------------------------------------------------------------------

def test_record_round_trip_and_layout():
    rec = R.encode(RUN, 3, 17, 8192)
    assert len(rec) == 8192
    h = R.decode_header(rec)
    assert (h.run_id, h.cycle, h.seq, h.size) == (RUN, 3, 17, 8192)
    assert R.classify(rec, RUN, 3, 17, 8192) == R.INTACT
    # slots follow one another, sizes in turn, and never overlap
    got = list(R.slots(7, SIZES))
    assert got[:4] == [(0, 0, 4096), (1, 4096, 8192), (2, 12288, 16384), (3, 28672, 4096)]
    for (_, off, size), (_, nxt, _) in zip(got, got[1:]):
        assert off + size == nxt
    assert all(R.offset_of(s, SIZES) == off and R.size_of(s, SIZES) == size for s, off, size in got)
    assert R.capacity(28672, SIZES) == 3 and R.capacity(28672 + 4095, SIZES) == 3 and R.capacity(32768, SIZES) == 4
    assert R.check_sizes([4096, 131072]) is None
    assert "multiple of 4 KiB" in R.check_sizes([512]) and R.check_sizes([]) and R.check_sizes([2 << 20])


def test_classification_of_what_a_slot_can_hold():
    good = R.encode(RUN, 2, 5, 4096)
    torn = good[:2048] + bytes(2048)  # header and half the payload reached the media
    assert R.classify(torn, RUN, 2, 5, 4096) == R.TORN
    assert R.classify(R.encode(RUN, 1, 5, 4096), RUN, 2, 5, 4096) == R.STALE  # an earlier cycle's record
    assert R.classify(R.encode(OTHER, 2, 5, 4096), RUN, 2, 5, 4096) == R.STALE  # another run's
    assert R.classify(bytes(4096), RUN, 2, 5, 4096) == R.MISSING
    bad_crc = bytearray(good)
    bad_crc[30] ^= 1  # a header bit flipped: no valid header
    assert R.classify(bytes(bad_crc), RUN, 2, 5, 4096) == R.MISSING
    assert R.classify(good[:40], RUN, 2, 5, 4096) == R.MISSING


def test_verify_counts_a_constructed_device_image(tmp_path):
    img = tmp_path / "dev.img"
    img.write_bytes(bytes(1 << 20))
    with open(img, "r+b") as fh:
        for seq, off, size in R.slots(12, SIZES):  # cycle 1 everywhere
            fh.seek(off)
            fh.write(R.encode(RUN, 1, seq, size))
        for seq, off, size in R.slots(8, SIZES):  # cycle 2 over the first 8 slots, then damage
            fh.seek(off)
            rec = R.encode(RUN, 2, seq, size)
            if seq == 2:
                rec = rec[:1000] + bytes(size - 1000)  # torn
            if seq == 4:
                continue  # never written: cycle 1's record stays: stale
            if seq == 6:
                rec = bytes(size)  # zeros: missing
            fh.write(rec)
    t = V.verify_cycle(str(img), RUN, 2, SIZES, range(8))
    assert (t.acknowledged, t.intact, t.torn, t.stale, t.missing, t.lost) == (8, 5, 1, 1, 1, 3)
    assert [(r["seq"], r["state"]) for r in t.lost_records] == [(2, "torn"), (4, "stale"), (6, "missing")]
    assert V.verify_cycle(str(img), RUN, 1, SIZES, range(8, 12)).intact == 4
    # verify_run: the same from a recorder's reply, as the document
    reply = {"run": RUN.hex(), "cycles": {"2": {"sizes": SIZES, "acked": list(range(8)), "target": "x",
                                                "ended": "cut"}}}
    doc = verify_run(str(img), RUN.hex(), reply, "test").to_dict()
    assert doc["verdict"] == "fail" and doc["totals"]["lost"] == 3
    assert PowercutResult.from_dict(json.loads(json.dumps(doc))).to_dict() == doc
    # an image file is recorded as one (not a device), with where and when it was verified
    assert doc["target"] == {"path": str(img), "kind": "file"}
    assert doc["host"] and doc["started"] and doc["finished"]
    with pytest.raises(UsageError, match="no records of cycle 5"):
        verify_run(str(img), RUN.hex(), reply, "test", [5])
    with pytest.raises(UsageError, match="32 hex digits"):
        verify_run(str(img), "nothex", reply, "test")


# --- the recorder -----------------------------------------------------------------------------------------

def test_recorder_over_tcp_and_its_journal(tmp_path):
    journal = tmp_path / "j.jsonl"
    with RecorderServer("127.0.0.1", 0, journal=str(journal)) as server:
        host, port = server.address
        with RecorderClient(host, port) as w:
            w.send({"op": "begin", "run": "r1", "cycle": 1, "sizes": SIZES, "target": "/x"})
            for seq in range(5):
                w.send({"op": "ack", "run": "r1", "cycle": 1, "seq": seq})
            w.send({"op": "end", "run": "r1", "cycle": 1, "why": "cut"})
            # the server reads each connection in its own thread: a round trip on w's own connection is what
            # orders its sends before another client's question (without it a loaded host answered q first,
            # 1 run in 3 with the CI beside it)
            assert w.ask({"op": "runs"}) == {"runs": ["r1"]}
            with RecorderClient(host, port) as q:
                assert q.ask({"op": "runs"}) == {"runs": ["r1"]}
                reply = q.query("r1")
        assert reply["cycles"]["1"]["acked"] == [0, 1, 2, 3, 4] and reply["cycles"]["1"]["ended"] == "cut"
        assert server.recorder.acked("r1", 1) == 5
    again = load_journal(str(journal)).handle({"op": "query", "run": "r1"})
    assert again == reply
    with open(journal, "a") as fh:
        fh.write('{"op": "ack", "run": "r1", "cy')  # the line being written when the recorder died
    assert load_journal(str(journal)).acked("r1", 1) == 5
    for bad in ({"op": "ack", "run": "r1", "cycle": 1}, {"op": "nope", "run": "r", "cycle": 1}, [], {"op": "query"}):
        with pytest.raises(ValueError):
            Recorder().handle(bad)


def test_addresses():
    assert parse_address("10.0.0.5:7207") == ("10.0.0.5", 7207)
    assert parse_address(":9") == ("127.0.0.1", 9) and parse_address("[::1]:80") == ("::1", 80)
    assert parse_address("127.0.0.1:0", listen=True) == ("127.0.0.1", 0)
    for bad in ("host", "h:0", "h:70000", "[::1]80", ""):
        with pytest.raises(UsageError):
            parse_address(bad)


# --- bad input: one line, exit 2, nothing written -----------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (["run", "T"], "exactly one of --cut-cmd"),
    (["run", "T", "--emulate", "unsafe", "--sizes", "512"], "multiple of 4 KiB"),
    (["run", "T", "--emulate", "unsafe", "--size", "1m", "--cut-after", "500"], "needs more"),
    (["run", "T", "--cut-cmd", "'unbalanced"], "No closing quotation"),
    (["run", "T", "--cut-cmd", ""], "--cut-cmd is empty"),
    (["run", "T", "--cut-cmd", "no-such-program-here off"], "not found on PATH"),
    (["run", "T", "--cut-cmd", "true", "--emulate", "none"], "not allowed with"),
    (["run", "T", "--emulate", "none", "--recorder", "nohost"], "HOST:PORT"),
    (["run", "T", "--restore-cmd", "true", "--emulate", "none"], "--restore-cmd goes with --cut-cmd"),
    (["verify", "T", "--run-id", "00" * 16, "--journal", "nofile"], "nofile"),
    (["verify", "T", "--run-id", "00", "--journal", "nofile"], "--run-id"),  # before the journal is read
    (["record", "--listen", "x:99999"], "HOST:PORT"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch, args, words):
    monkeypatch.chdir(tmp_path)
    try:
        code = main(["powercut", *args])
    except SystemExit as exc:  # argparse's own refusals
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert words in err and len(err.strip().splitlines()) == 1
    assert sorted(os.listdir(tmp_path)) == []  # no backing file, no result file


def test_the_writer_refuses_a_claim_its_parent_does_not_hold(tmp_path, capsys):
    f = tmp_path / "dev.img"
    f.write_bytes(bytes(1 << 20))
    code = main(["powercut", "write", str(f), "--run-id", RUN.hex(), "--cycle", "1", "--sizes", "4k",
                 "--recorder", "127.0.0.1:9", "--under-claim"])
    err = capsys.readouterr().err
    assert code == 3 and "its slogqual lock is not held" in err
    assert f.read_bytes() == bytes(1 << 20)


def test_the_run_door_bounds_cycles_and_the_backing_size_before_anything_is_made(tmp_path):
    """check_options (the library's door, whatever the caller parsed): --cycles that ran for ever and a
    backing-file size that overflowed a truncate are one line before a file exists."""
    from slogqual.powercut import MAX_CYCLES, MAX_EMULATED_SIZE, MIN_EMULATED_SIZE

    target = tmp_path / "dev.img"
    target.write_bytes(bytes(1 << 20))
    for cycles in (0, MAX_CYCLES + 1, 10 ** 30):
        with pytest.raises(UsageError, match="--cycles"):
            check_options(PowercutOptions(target=str(target), cut_cmd=["true"], cut_after=4, cycles=cycles))
    back = tmp_path / "back.img"
    for size in (MIN_EMULATED_SIZE - 1, MAX_EMULATED_SIZE + 1, 10 ** 30):
        with pytest.raises(UsageError, match="--size"):
            check_options(PowercutOptions(target=str(back), emulate="none", size=size))
    assert sorted(os.listdir(tmp_path)) == ["dev.img"]


@need("nbdkit", "nbdfuse")
def test_a_backing_file_the_filesystem_refuses_is_one_line_and_leaves_nothing(tmp_path):
    """A size in range that this filesystem still refuses (here: RLIMIT_FSIZE, as a FAT-formatted stick's
    4 GiB would): one line, exit 2, no empty backing file left behind (it was, with a traceback)."""
    import resource
    import signal
    import subprocess
    import sys

    if not os.path.exists("/dev/fuse"):
        pytest.skip("needs /dev/fuse (the emulation's checks come first)")

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of death by SIGXFSZ
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    env = dict(os.environ, SLOGQUAL_STORE=str(tmp_path / "store.sqlite"))
    proc = subprocess.run([sys.executable, "-m", "slogqual", "powercut", "run", str(tmp_path / "back.img"),
                           "--emulate", "none", "--size", "64m", "--cut-after", "4", "-o", str(tmp_path / "r.json"),
                           "--quiet"], capture_output=True, text=True, env=env, timeout=60, preexec_fn=small_files)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "cannot make a backing file" in proc.stderr, proc.stderr
    assert sorted(os.listdir(tmp_path)) == []


def test_what_a_run_killed_mid_make_or_mid_removal_left_is_judged_by_the_pid_in_its_name(tmp_path):
    """SIGKILL between making a socket or mount directory and writing its owner.pid (or between removing
    owner.pid and the directory) left a directory nobody ended: its name now carries the pid. Only the
    names make_dir gives count, and only a gone pid: a live one's and a foreign name are left alone."""
    from slogqual import owned
    from slogqual.tools import nbdfuse, nbdkit

    gone = subprocess.Popen(["true"])
    gone.wait()  # a PID that existed and is gone
    made = owned.make_dir(nbdkit.SOCKET_PREFIX, str(tmp_path))
    assert os.path.basename(made).startswith(f"{nbdkit.SOCKET_PREFIX}{os.getpid()}-")
    assert owned.named_owner(os.path.basename(made), nbdkit.SOCKET_PREFIX) == os.getpid()
    assert owned.named_owner("slogqual-lab-sock-77-abcd_123", "slogqual-lab-") == 77  # a longer prefix's name
    for name in ("slogqual-nbd-x", "slogqual-nbd-12-short", "slogqual-nbd-12-abcdefgh-more", "other-12-abcdefgh"):
        assert owned.named_owner(name, nbdkit.SOCKET_PREFIX) is None, name
    dead_sock = tmp_path / f"slogqual-nbd-{gone.pid}-abcdefgh"  # owner.pid never written
    dead_mnt = tmp_path / f"slogqual-powercut-mnt-{gone.pid}-ijklmnop"  # owner.pid removed, the rest not yet
    live = tmp_path / f"slogqual-powercut-mnt-{os.getppid()}-qrstuvwx"  # whoever started pytest: alive
    foreign = tmp_path / f"slogqual-powercut-mnt-{gone.pid}"  # not a name make_dir gives, no owner.pid
    for d in (dead_sock, dead_mnt / "mnt", live / "mnt", foreign):
        d.mkdir(parents=True)
    (dead_sock / "nbd.sock").write_bytes(b"")
    assert nbdkit.remove_stale_sockets(str(tmp_path)) == [str(dead_sock)]
    assert nbdfuse.remove_stale_mounts(str(tmp_path)) == [str(dead_mnt)]
    assert sorted(os.listdir(tmp_path)) == sorted(os.path.basename(str(p)) for p in (made, live, foreign))


def test_emulation_refuses_a_block_device():
    with pytest.raises(UsageError, match="regular file"):
        check_options(PowercutOptions(target="/dev/null", emulate="none"))


def test_secrets_in_cut_commands_never_reach_the_result():
    from slogqual.powercut.engine import PowercutRun, redact_secrets

    argv = cutcmd.parse("ipmitool -I lanplus -H bmc -U admin -P hunter2 chassis power off")
    assert redact_secrets(argv) == ["ipmitool", "-I", "lanplus", "-H", "bmc", "-U", "admin", "-P", "***", "chassis",
                                    "power", "off"]
    assert redact_secrets(["ipmitool", "-Phunter2", "-f", "pwfile"]) == ["ipmitool", "-P***", "-f", "pwfile"]
    assert redact_secrets(["pdu", "--password=hunter2", "outlet", "3", "off"]) == ["pdu", "--password=***", "outlet",
                                                                                  "3", "off"]
    assert redact_secrets(["curl", "-u", "admin:hunter2", "http://pdu/off"])[2] == "***"
    run = PowercutRun(PowercutOptions(target="/dev/sdx", cut_cmd=argv, restore_cmd=["pdu", "--token", "t0k3n", "on"]))
    assert "hunter2" not in json.dumps(run.result.to_dict()) and "t0k3n" not in json.dumps(run.result.to_dict())
    assert run.result.method["cut"].startswith("--cut-cmd ipmitool")  # still a real cut (analysis.powercut)


def test_cut_command_is_an_argv_never_a_shell():
    assert cutcmd.parse("ipmitool -H 'bmc 1' chassis power off") == ["ipmitool", "-H", "bmc 1", "chassis", "power",
                                                                      "off"]
    assert cutcmd.execute(cutcmd.parse("echo $HOME;"), 5).strip() == "$HOME;"


# --- the result document -------------------------------------------------------------------------------------

def _doc(**over):
    doc = {"schema": S.POWERCUT, "run_id": "ab", "status": "complete", "verdict": "pass", "expected_cycles": 1,
           "target": {"path": "/x"}, "method": {"cut": "c", "sizes": [4096], "emulation": "none"},
           "cycles": [{"cycle": 1, "acknowledged": 3, "intact": 3, "torn": 0, "stale": 0, "missing": 0, "lost": 0}],
           "notes": []}
    doc.update(over)
    return doc


def test_result_loader_names_the_bad_key(tmp_path):
    assert PowercutResult.from_dict(_doc()).verdict == "pass"
    bad = [
        (_doc(verdict="pass", cycles=[{"cycle": 1, "acknowledged": 3, "intact": 2, "torn": 1, "stale": 0,
                                       "missing": 0, "lost": 1}]), "key 'verdict' must be 'fail'"),
        (_doc(cycles=[{"cycle": 1, "acknowledged": 4, "intact": 3, "torn": 0, "stale": 0, "missing": 0, "lost": 0}]),
         "cycles[0].acknowledged"),
        (_doc(method={"cut": "c", "sizes": ["4k"]}), "method.sizes[0]"),
        (_doc(schema="slogqual.powercut/9"), "newer"),
        (_doc(status="weird"), "key 'status'"),
    ]
    for doc, words in bad:
        with pytest.raises(S.DocumentError, match=words.replace("[", r"\[").replace("]", r"\]")):
            PowercutResult.from_dict(doc, "r.json")
    p = tmp_path / "r.json"
    p.write_text(json.dumps(_doc()))
    assert PowercutResult.load(str(p)).to_dict()["totals"]["acknowledged"] == 3


# --- the power-loss verdict on recorded identities -------------------------------------------------------------

def _nvme_record(fixture):
    ident = nvme.parse_id_ctrl(text("nvme", fixture))
    signal = C.CacheSignal("nvme id-ctrl", ident.vwc_present, f"vwc={ident.vwc}")
    return DeviceRecord(path="/dev/nvme0n1", transport="nvme", model=ident.model, device_class="nvme",
                        write_cache=C.judge_write_cache([signal], "write back", "nvme")).to_dict()


def _sata_ssd_record():
    # identity recorded from an Intel DC S3500-class SATA SSD (PLP); that capture was taken without
    # `-g wcache`, so the cache state is the one such drives report (enabled), as smartctl words it
    s = smartctl.parse(text("smartctl", "sata-ssd-intel-ssdsc2bb120g4l.info.json"))
    cls, ev = C.classify("sata", None, s.rotation_rate, s.model)
    wc = C.judge_write_cache([C.CacheSignal("smartctl -g wcache", True, "write cache enabled")], "write back", "sata")
    return DeviceRecord(path="/dev/sdb", transport="sata", model=s.model, device_class=cls, class_evidence=ev,
                        write_cache=wc).to_dict()


@pytest.fixture(scope="module")
def lab_pmem(tmp_path_factory):
    dest = tmp_path_factory.mktemp("lab")
    with tarfile.open(os.path.join(FIX, "sysfs", "lab-qemu-guest.tar.gz")) as tf:
        tf.extractall(dest)
    root = str(dest / "lab-qemu-guest" / "sys")
    info = sysfs.block_info(sysfs.read(os.path.join(root, "class", "block", "pmem0", "dev")), root)
    transport = linux.transport_of(info, None)
    wc = C.judge_write_cache([], info.write_cache, transport)
    return DeviceRecord(path="/dev/pmem0", transport=transport, device_class=C.classify(transport, None, None, None)[0],
                        emulated=True, write_cache=wc).to_dict()


FLUSH_US = {"µs": {"size": 4096, "flush_us": 18.0, "write_us": 40.0, "source": "sweep"},
            "ms": {"size": 4096, "flush_us": 1900.0, "write_us": 30.0, "source": "sweep"}}


def _pc(verdict, lost=0):
    """CONSTRUCTED: three real power cuts of 100 acknowledged records each, ``lost`` of them missing."""
    from slogqual.results.powercut import CycleResult
    cycles = [CycleResult(cycle=n, acknowledged=100, intact=100 - (lost if n == 1 else 0), torn=0, stale=0,
                          missing=lost if n == 1 else 0) for n in (1, 2, 3)]
    return PowercutResult(run_id="r", target={"path": "/dev/sdz"}, cycles=cycles, expected_cycles=3,
                          method={"emulation": None, "cut": "--cut-cmd pdu off"}, status="complete", verdict=verdict)


def test_verdict_table_on_recorded_identities(lab_pmem):
    vwc0 = _nvme_record("id-ctrl-micron-9200.txt")
    vwc1 = _nvme_record("id-ctrl-wdc-pc-sn730.json")
    sata = _sata_ssd_record()
    table = [
        # (record, flush, power cut) -> verdict, basis
        (vwc0, None, None, PL.NO_VOLATILE, "reported"),
        (vwc1, None, None, PL.VOLATILE_UNMEASURED, "reported"),
        (vwc1, FLUSH_US["ms"], None, PL.HONOURED, "inferred"),  # consumer NVMe, ms flush
        (sata, FLUSH_US["µs"], None, PL.PROTECTED_OR_IGNORED, "inferred"),  # the DC S3700 case: not "unsafe"
        (sata, FLUSH_US["µs"], _pc("pass"), PL.PROTECTED_MEASURED, "measured"),
        (sata, FLUSH_US["µs"], _pc("fail", 12), PL.NOT_HONOURED, "measured"),
        (vwc1, FLUSH_US["ms"], _pc("pass"), PL.HONOURED, "measured"),
        (lab_pmem, None, None, PL.PMEM, "reported"),
        ({"transport": "loop", "write_cache": {"verdict": "unknown"}}, None, None, PL.UNKNOWN, "none"),
    ]
    for rec, flush, pc, verdict, basis in table:
        got = PLW.judge(rec, flush, pc)
        assert (got["verdict"], got["basis"]) == (verdict, basis), (rec.get("model"), got)
        assert got["evidence"] and all(set(e) == {"name", "says"} and e["name"] and e["says"] for e in got["evidence"])
        assert got["measured"] is (basis == "measured")
    # each piece is named
    names = {e["name"] for e in PLW.judge(sata, FLUSH_US["µs"], _pc("pass"))["evidence"]}
    assert {"ATA/SCSI write cache", "flush cost", "power-cut test"} <= names
    assert "NVMe volatile write cache (Identify vwc, feature 06h)" in {e["name"] for e in PLW.judge(vwc0)["evidence"]}
    both = PLW.judge(sata, FLUSH_US["µs"])
    assert "protected cache (PLP) or a flush that is ignored" in " ".join(e["says"] for e in both["evidence"])
    assert "unsafe" not in both["text"] and both["safe"] is None
    assert "EMULATED" in " ".join(e["says"] for e in PLW.judge(lab_pmem)["evidence"])
    # the record carries the verdict from what it knows; a profile demanding PLP needs the measured one
    assert vwc0["power_loss"]["verdict"] == PL.NO_VOLATILE and sata["power_loss"]["verdict"] == PL.VOLATILE_UNMEASURED
    assert not any("unsafe" in w for w in sata["warnings"])
    assert not PL.meets_measured_plp(PLW.judge(sata, FLUSH_US["µs"]))
    assert PL.meets_measured_plp(PLW.judge(sata, FLUSH_US["µs"], _pc("pass")))


def test_flush_figures_from_a_sweep_and_a_kernel_that_drops_flushes():
    sweep = {"params": {"mode": "flush"}, "points": [
        {"size": 512, "ios": 9, "flush_lat_us": {"mean": 900.0}, "write_lat_us": {"mean": 20.0}},
        {"size": 4096, "ios": 9, "flush_lat_us": {"mean": 15.0}, "write_lat_us": {"mean": 25.0}}]}
    assert PL.flush_from_sweep(sweep)["flush_us"] == 15.0
    assert PL.flush_from_sweep(dict(sweep, params={"mode": "dsync"})) is None
    rec = _sata_ssd_record()
    withev = PLW.with_evidence(rec, sweep, _pc("pass"))
    assert withev["power_loss"]["verdict"] == PL.PROTECTED_MEASURED and "power_loss" in rec
    rec["write_cache"]["kernel"] = "write through"
    says = " ".join(e["says"] for e in PLW.judge(rec, PL.flush_from_sweep(sweep))["evidence"])
    assert "drops flushes, so this figure says nothing" in says


def _writer_program(how, args):
    """The writer as a process: the library module powercut run starts (through tools/pymodule), or the
    CLI's ``slogqual powercut write``, which users keep."""
    import sys

    from slogqual.powercut import writer
    from slogqual.tools import pymodule

    if how == "module":
        return pymodule.argv(writer.MODULE, args)
    return [sys.executable, "-m", "slogqual", "powercut", "write", *map(str, args)]


@pytest.mark.parametrize("how", ["module", "cli"])
def test_the_writer_journals_every_acknowledged_record_on_a_file(tmp_path, how):
    """--journal: the lab's channel (a file on the 9p share); the real writer process on a 1 MiB file fills
    it, one journal line per message, and the journal read back holds every record, each intact."""
    import subprocess

    f = tmp_path / "dev.img"
    f.write_bytes(bytes(1 << 20))
    journal = tmp_path / "acks.jsonl"
    sizes = [4096, 65536]
    proc = subprocess.run(_writer_program(how, [str(f), "--run-id", RUN.hex(), "--cycle", "2", "--sizes", "4k,64k",
                                                "--journal", str(journal)]),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr  # area full
    # the output protocol powercut run reads: an ack line per record, then the direct line; the summary
    assert proc.stdout.splitlines()[-1] in ("direct yes", "direct no")
    assert proc.stderr.strip().splitlines() == [f"powercut writer: {R.capacity(1 << 20, sizes)} records "
                                                "acknowledged; area full"]
    acks = [ln for ln in proc.stdout.splitlines() if ln.startswith("ack ")]
    assert acks == [f"ack {i}" for i in range(len(acks))]
    held = load_journal(str(journal)).handle({"op": "query", "run": RUN.hex()})["cycles"]["2"]
    assert len(held["acked"]) == len(acks) == R.capacity(1 << 20, sizes)
    assert held["sizes"] == sizes and held["ended"] == "area full"
    tally = V.verify_cycle(str(f), RUN, 2, sizes, held["acked"])
    assert tally.intact == tally.acknowledged == len(acks)


@pytest.mark.parametrize("how", ["module", "cli"])
@pytest.mark.parametrize("args, code, words", [
    (["--run-id", "00", "--cycle", "1", "--sizes", "4k", "--journal", "J"], 2, "--run-id '00': 32 hex digits"),
    (["--run-id", RUN.hex(), "--cycle", "1", "--sizes", "3k", "--journal", "J"], 2, "--sizes"),
    (["--run-id", RUN.hex(), "--cycle", "0", "--sizes", "4k", "--journal", "J"], 2, "--cycle"),
    (["--run-id", RUN.hex(), "--cycle", "1", "--sizes", "4k"], 2, "--recorder"),
    (["--run-id", RUN.hex(), "--cycle", "1", "--sizes", "4k", "--journal", "J", "--under-claim"], 3,
     "its slogqual lock is not held"),
])
def test_the_writer_program_and_the_cli_refuse_alike(tmp_path, how, args, code, words):
    """One door behind both: the same refusal in one line, the same exit code, the target untouched and
    no journal made."""
    import subprocess

    f = tmp_path / "dev.img"
    f.write_bytes(bytes(1 << 20))
    argv = _writer_program(how, [str(f), *[str(tmp_path / "j.jsonl") if a == "J" else a for a in args]])
    env = dict(os.environ, SLOGQUAL_STORE=str(tmp_path / "store.sqlite"))
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == code and len(lines) == 1 and words in lines[0], (proc.returncode, proc.stderr)
    assert lines[0].startswith("slogqual: ") and proc.stdout == ""
    assert f.read_bytes() == bytes(1 << 20) and sorted(os.listdir(tmp_path)) == ["dev.img"]


def test_the_writer_door_refuses_before_it_writes(tmp_path):
    """write_records(WriteRequest): typed errors, nothing written, for a caller that parsed nothing."""
    from slogqual.errors import RefusedError
    from slogqual.powercut import writer

    f = tmp_path / "dev.img"
    f.write_bytes(bytes(1 << 20))
    ok = dict(target=str(f), run_id=RUN, cycle=1, sizes=[4096], journal=str(tmp_path / "j.jsonl"))
    for bad, kind, words in (({"run_id": b"short"}, UsageError, "--run-id"),
                             ({"cycle": R.MAX_CYCLE + 1}, UsageError, "--cycle"),
                             ({"sizes": [4095]}, UsageError, "--sizes"),
                             ({"recorder": ("127.0.0.1", 9)}, UsageError, "exactly one recorder"),
                             ({"journal": str(f)}, UsageError, "an input of this command"),
                             ({"under_claim": True}, RefusedError, "lock is not held")):
        with pytest.raises(kind, match=words):
            writer.write_records(writer.WriteRequest(**{**ok, **bad}))
    assert f.read_bytes() == bytes(1 << 20) and sorted(os.listdir(tmp_path)) == ["dev.img"]
    seen = []
    out = writer.write_records(writer.WriteRequest(**ok, on_ack=seen.append))
    assert out.filled and out.acknowledged == len(seen) == R.capacity(1 << 20, [4096])
    assert V.verify_cycle(str(f), RUN, 1, [4096], seen).intact == len(seen)


def test_powercut_run_starts_the_writer_module_not_the_cli():
    from slogqual.powercut.engine import PowercutRun

    run = PowercutRun(PowercutOptions(target="/dev/sdx", cut_cmd=["true"]))
    argv = run._writer("/dev/sdx", 3, ("127.0.0.1", 7207), under_claim=True).argv
    assert argv[1:3] == ["-m", "slogqual.powercut.writer"] and "powercut" not in argv[3:]
    assert argv[3:] == ["/dev/sdx", "--run-id", run.run_id.hex(), "--cycle", "3",
                        "--sizes", "4096,8192,16384,32768,65536,131072", "--recorder", "127.0.0.1:7207",
                        "--under-claim"]


def test_write_wants_exactly_one_recorder(tmp_path, capsys):
    f = tmp_path / "dev.img"
    f.write_bytes(bytes(1 << 20))
    for extra in ([], ["--recorder", "127.0.0.1:9", "--journal", str(tmp_path / "j")]):
        with pytest.raises(SystemExit) as exc:
            main(["powercut", "write", str(f), "--run-id", RUN.hex(), "--cycle", "1", "--sizes", "4k", *extra])
        assert exc.value.code == 2
    assert f.read_bytes() == bytes(1 << 20) and not (tmp_path / "j").exists()


def test_the_lab_guests_writers_are_the_writer_module(tmp_path, monkeypatch):
    """lab powercut's guest side (run_writers), here on the host on two files: one writer process per
    device through tools/pymodule, each journal holding every record its writer acknowledged, intact."""
    from slogqual.lab import powercut as lab_powercut, powercut_writers
    from slogqual.tools import pymodule

    started = []
    real = pymodule.background

    def spy(module, args, **kw):
        started.append((module, list(args)))
        return real(module, args, **kw)

    monkeypatch.setattr(pymodule, "background", spy)
    devs = []
    for i in range(2):
        devs.append(tmp_path / f"dev{i}.img")
        devs[-1].write_bytes(bytes(1 << 20))
    other = OTHER.hex()
    plan = {"cycle": 1, "sizes": [4096, 8192], "out": str(tmp_path),
            "devices": [{"index": 0, "run_id": RUN.hex(), "journal": "journal-0.jsonl"},
                        {"index": 1, "run_id": other, "journal": "journal-1.jsonl"}]}
    # what the guest's job runs: this interpreter and the library module, never a slogqual command line
    argv = lab_powercut.writers_command(plan)
    assert argv[:3] == [sys.executable, "-m", "slogqual.lab.powercut_writers"] and json.loads(argv[-1]) == plan
    assert powercut_writers.run_writers(plan, lambda names: [str(d) for d in devs]) == 0  # both filled their area
    assert [m for m, _ in started] == ["slogqual.powercut.writer"] * 2
    assert all("--destroy-data" in a and "--journal" in a for _, a in started)
    for i, (dev, rid) in enumerate(zip(devs, (RUN, OTHER))):
        held = load_journal(str(tmp_path / f"journal-{i}.jsonl")).handle({"op": "query", "run": rid.hex()})
        acked = held["cycles"]["1"]["acked"]
        assert len(acked) == R.capacity(1 << 20, [4096, 8192]) and held["cycles"]["1"]["ended"] == "area full"
        assert V.verify_cycle(str(dev), rid, 1, [4096, 8192], acked).intact == len(acked)


def test_the_guest_side_module_refuses_a_bad_plan_in_one_line():
    for plan, why in (("{", "not JSON"), ("[1]", "not a powercut plan"), ('{"cycle": 1}', "not a powercut plan")):
        proc = subprocess.run([sys.executable, "-m", "slogqual.lab.powercut_writers", "--plan", plan],
                              capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert proc.returncode == 2 and why in proc.stderr and proc.stderr.count("\n") == 1, (plan, proc.stderr)


# --- the typed result where it is printed and used (tests/fixtures/powercut, real runs) ---------------------

POWERCUT_FIXTURES = ["powercut-emulate-none.json", "powercut-emulate-unsafe.json", "powercut-verify-journal.json"]


@pytest.mark.parametrize("name", POWERCUT_FIXTURES)
def test_a_powercut_result_is_printed_as_its_document_says(name, capsys):
    """What `powercut run`/`verify` and `lab powercut` print of a result: its verdict and the counts of its
    cycles, as the file has them; --json: the document itself."""
    from slogqual.cli.powercut import _exit, _print

    path = os.path.join(FIX, "powercut", name)
    doc = json.loads(text("powercut", name))
    result = PowercutResult.load(path)
    _print(result, False)
    t = doc["totals"]
    lines = [f"powercut {doc['run_id']}: {doc['verdict'].upper()} — {len(doc['cycles'])} of {doc['expected_cycles']} "
             f"cycle(s); {t['acknowledged']} acknowledged records, {t['intact']} intact, {t['lost']} lost "
             f"(torn {t['torn']}, stale {t['stale']}, missing {t['missing']})"]
    lines += [f"  cycle {cy['cycle']}: {cy['acknowledged']:5d} acknowledged  {cy['intact']:5d} intact  "
              f"{cy['lost']:5d} lost (torn {cy['torn']}, stale {cy['stale']}, missing {cy['missing']})"
              for cy in doc["cycles"]]
    assert capsys.readouterr().out.splitlines() == lines and not doc["error"]
    _print(result, True)
    assert json.loads(capsys.readouterr().out) == doc
    assert _exit(result) == (0 if doc["verdict"] == "pass" else 1)


def _device_run(tmp_path, powercut_file, spec, record=None):
    """A qualify device run given --powercut (nothing measured): what it takes of the result."""
    from slogqual.progress import Progress
    from slogqual.qualify import profile as profiles
    from slogqual.qualify.engine import DeviceRun, Options

    path = os.path.join(FIX, "powercut", powercut_file)
    opts = Options(profile=profiles.load("strict-plp"), devices=[spec], out_dir=str(tmp_path),
                   powercut=PowercutResult.load(path), powercut_path=path)
    run = DeviceRun(opts, spec, "dev", Progress(quiet=True), {})
    run.record = record
    return run


def test_qualify_takes_a_powercut_result_only_for_the_device_it_measured(tmp_path):
    # an emulated cut says nothing of a device, whatever its path
    run = _device_run(tmp_path, "powercut-emulate-unsafe.json", "/tmp/pcgen/back-unsafe.img")
    assert run._powercut_for_this_device() is None
    assert run.notes[-1].endswith("an emulated power cut (unsafe) says nothing of /tmp/pcgen/back-unsafe.img; not used")
    # verify's result (how the power was cut not recorded, no device record): matched by the target's path
    run = _device_run(tmp_path, "powercut-verify-journal.json", "/tmp/pcgen/back-wb.img")
    assert run._powercut_for_this_device() is run.opts.powercut and run.notes == []
    run = _device_run(tmp_path, "powercut-verify-journal.json", "/dev/sdz")
    assert run._powercut_for_this_device() is None
    assert run.notes[-1].endswith("measured /tmp/pcgen/back-wb.img, not /dev/sdz (and no serial to match); not used")
    # CONSTRUCTED serials: the device record's serial against the result's
    pc = os.path.join(FIX, "powercut", "powercut-verify-journal.json")
    run = _device_run(tmp_path, "powercut-verify-journal.json", "/tmp/pcgen/back-wb.img", record={"serial": "S1"})
    run.opts.powercut.device = {"serial": "S2"}
    assert run._powercut_for_this_device() is None
    assert run.notes[-1] == f"--powercut {pc}: measured serial S2, this device is S1; not used"
    run.opts.powercut.device = {"serial": "S1"}
    assert run._powercut_for_this_device() is run.opts.powercut


def test_lab_powercut_prints_each_device_s_class_and_result(tmp_path, monkeypatch, capsys):
    """`slogqual lab powercut` once its guests are done (the run replaced here by the recorded results, each
    given the lab class lab/powercut.py records: CONSTRUCTED): per device a line naming its class and
    emulation, then its result; --json: the documents; exit 1 only where a result is incomplete."""
    import slogqual.lab.powercut as lab_powercut

    paths, docs = [], []
    for name, cls in (("powercut-emulate-unsafe.json", "lying-ssd"), ("powercut-emulate-none.json", "plp-ssd")):
        doc = json.loads(text("powercut", name))
        doc["target"]["lab_class"] = cls
        (tmp_path / name).write_text(json.dumps(doc))
        paths.append(str(tmp_path / name))
        docs.append(doc)
    monkeypatch.setattr(lab_powercut, "run", lambda req: paths)
    argv = ["lab", "powercut", "lying-ssd", "plp-ssd", "-o", str(tmp_path / "out"), "--quiet"]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    heads = [ln for ln in out if not ln.startswith(("powercut ", "  cycle "))]
    assert heads == [f"/tmp/pcgen/back-unsafe.img (lying-ssd, unsafe): {paths[0]}",
                     f"/tmp/pcgen/back-none.img (plp-ssd, none): {paths[1]}"]
    assert [ln.split(" — ")[0] for ln in out if ln.startswith("powercut ")] == \
        [f"powercut {d['run_id']}: {d['verdict'].upper()}" for d in docs]
    assert main([*argv, "--json"]) == 0 and json.loads(capsys.readouterr().out) == docs
    docs[1]["status"], docs[1]["verdict"] = "interrupted", "incomplete"
    (tmp_path / "powercut-emulate-none.json").write_text(json.dumps(docs[1]))
    assert main(argv) == 1


def test_a_real_cut_s_report_section_judges_its_device_with_the_result():
    """The report's power-cut section (report/powercut.py) of a real cut: the device's power-loss verdict
    with the result as its measured evidence. CONSTRUCTED from verify's recorded result: the cut made by
    --cut-cmd, and a device record (a SATA SSD with its write cache on)."""
    from slogqual.report.powercut import powercut_section

    path = os.path.join(FIX, "powercut", "powercut-verify-journal.json")
    result = PowercutResult.load(path)
    result.method = dict(result.method, cut="--cut-cmd pdu off")
    result.device = {"class": "sata-ssd", "transport": "sata",
                     "write_cache": {"verdict": "volatile-cache-enabled", "reason": "WCE on"}}
    pl = powercut_section(result, path).power_loss
    t = result.totals
    assert pl is not None and pl.tone == "good" and ("basis", "measured") in pl.detail
    assert ("power-cut test", f"PASS: 1 cycle(s), {t['acknowledged']} acknowledged records, 0 lost (torn 0, stale 0, "
                              f"missing 0); cut: --cut-cmd pdu off; run {result.run_id}") in pl.detail
