"""The lab for real: QEMU (TCG) guests with the OpenZFS module built by contrib/lab/build.sh.

Marked ``lab``; skipped with the reason when the lab image is not built or we are not root. They
assert relations and evidence (kstats grew, the cache was not rebuilt, no process or file left),
never absolute times.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import host_was_slowed, slow_host_requested, disk_was_busy, need_lab

from slogqual.lab.image import cache_dir

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(REPO, "contrib", "lab", "build.sh")

pytestmark = pytest.mark.lab


@pytest.fixture(autouse=True)
def _lab_ready():
    need_lab()


def slogqual(*args, env=None, timeout=900):
    return subprocess.run([sys.executable, "-m", "slogqual", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout, env=env)


def _children_of(parent):
    """{pid: argv} of the processes whose parent is ``parent``."""
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            if ppid != parent:
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                found[int(pid)] = fh.read().decode(errors="replace").split("\0")
        except (OSError, IndexError, ValueError):
            continue
    return found


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_check_pool_with_log_and_zil_evidence(tmp_path):
    out = tmp_path / "check"
    proc = slogqual("lab", "check", "--json", "-o", str(out))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    assert doc["ok"] and doc["status"] == 0
    steps = [s["step"] for s in doc["check"]["steps"]]
    assert steps[:3] == ["zfs_loaded", "pool_created", "log_added"] and steps[-1] == "pool_destroyed"
    assert all(s["ok"] for s in doc["check"]["steps"])
    ev = doc["check"]["evidence"]
    # The SLOG took the log writes of the sync=always zvol, and the ZIL committed.
    assert ev["zil_objset_delta"]["slog_bytes"] > 0 and ev["zil_objset_delta"]["slog_count"] > 0
    assert ev["zil_objset_delta"]["commit_count"] > 0
    assert ev["zil_global_delta"]["slog_bytes"] >= ev["zil_objset_delta"]["slog_bytes"]
    assert ev["log_vdev_write_ops_per_s"] > 0
    assert ev["zvol"]["sync"] == "always"
    assert ev["zfs_module_version"].startswith(doc["check"].get("zfs_version_prefix", "2."))
    t = doc["timings"]
    assert 0 < t["root_ready_s"] < t["boot_s"] < t["pool_ready_s"] < t["total_s"]
    assert t["module_load_s"] > 0
    # Devices were found on their transports by serial.
    assert [d["transport"] for d in doc["devices"]] == ["sata", "sata", "nvme"]
    assert all(d["by_id"].startswith("/dev/disk/by-id/") for d in doc["devices"])
    # Everything the job wrote came back; nothing is left in the pool list (the guest is gone anyway).
    assert (out / "check.json").exists() and (out / "raw" / "zil-after.txt").exists()


def test_second_build_is_a_cache_hit():
    manifest = os.path.join(cache_dir(), "current", "lab.json")
    before = os.stat(manifest).st_mtime_ns
    t0 = time.monotonic()
    # the 2.3 build alone: without the variable build.sh would also start 2.4's background build again (a cache
    # hit there too, but a process this test has no business starting, and its log overwritten)
    proc = subprocess.run(["bash", BUILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600,
                          env=dict(os.environ, SLOGQUAL_LAB_ZFS="2.3"))
    took = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "cache hit" in proc.stderr and "building" not in proc.stderr and "make" not in proc.stderr
    assert os.stat(manifest).st_mtime_ns == before
    with open(manifest) as fh:
        build_s = int(json.load(fh)["module_build_seconds"])
    assert took < max(build_s, 30)  # far less than compiling the module took


def test_run_passes_status_devices_and_results(tmp_path):
    out = tmp_path / "out"
    script = ('echo "$SLOGQUAL_LAB_DEVICES" > devices.txt; cp "$SLOGQUAL_LAB_DEVICES_JSON" devices.json; '
              'for d in $SLOGQUAL_LAB_DEVICES; do echo "$d $(cat /sys/block/${d#/dev/}/queue/rotational)"; done > rota.txt; '
              'dmesg | grep -i "tsc" > tsc.txt; exit 7')
    proc = slogqual("lab", "run", "-q", "--device", "hdd", "--device", "sas-ssd", "--device", "nvme", "--device", "nvdimm",
                    "-o", str(out), "--", "sh", "-c", script)
    assert proc.returncode == 7, proc.stderr[-2000:]
    paths = (out / "devices.txt").read_text().split()
    assert len(paths) == 4 and paths[3] == "/dev/pmem0" and paths[2].startswith("/dev/nvme")
    devs = json.loads((out / "devices.json").read_text())
    assert [d["class"] for d in devs] == ["hdd", "sas-ssd", "nvme", "nvdimm"]
    assert [d["transport"] for d in devs] == ["sata", "sas", "nvme", "pmem"]
    assert "ata-SLOGQUAL_LAB_HDD" in devs[0]["by_id"] and "scsi-" in devs[1]["by_id"] and "nvme-" in devs[2]["by_id"]
    rota = dict(line.split() for line in (out / "rota.txt").read_text().splitlines())
    assert rota[paths[0]] == "1" and rota[paths[1]] == "0"  # rotation_rate reaches the guest
    assert (out / "lab-console.log").exists() and (out / "lab-marks").exists()
    # the guest's TSC rate is the host's, measured (slogqual.lab.tsc), and its kernel's own refinement against the
    # HPET, which keeps only a figure within 1 % of the early one, agreed with it
    from slogqual.lab import tsc
    host = tsc.host_tsc_khz()
    dmesg = (out / "tsc.txt").read_text()
    # the run's record of the machine: QEMU's command line with the guest's kernel line, and the rate it gave
    machine = json.loads((out / "lab-machine.json").read_text())
    assert os.path.basename(machine["qemu"][0]).startswith("qemu-system") and machine["kernel_append"] in machine["qemu"]
    given = re.search(r"tsc_early_khz=(\d+)", dmesg)
    assert machine["tsc_early_khz"] == (int(given.group(1)) if given else None)
    if host is None:
        pytest.skip(f"this host's TSC rate was not measured (not x86-64, or no executable page): {dmesg}")
    refined = re.search(r"Refined TSC clocksource calibration: ([\d.]+) MHz", dmesg)
    assert given and refined, dmesg
    assert abs(int(given.group(1)) - host) <= 0.005 * host, (given.group(1), host)
    assert abs(float(refined.group(1)) * 1000 - int(given.group(1))) <= 0.01 * int(given.group(1)), dmesg


# A job that hangs for good: a writer blocked (uninterruptible, D) on an ext4 the job froze, then the job sleeps
HANGING_JOB = """set -e
modprobe ext4
mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 "$SLOGQUAL_LAB_DEVICES" 65536
mkdir -p /tmp/frozen && mount -t ext4 "$SLOGQUAL_LAB_DEVICES" /tmp/frozen && fsfreeze -f /tmp/frozen
sh -c 'echo blocked > /tmp/frozen/file' &
echo "hang-test: a writer is blocked on the frozen filesystem"
exec sleep 100000
"""


def test_a_guest_that_hangs_says_what_its_tasks_were_blocked_on(tmp_path):
    """A guest still running at the run's timeout is asked what its tasks are blocked on before it is killed
    (stage2.sh's hang_watch, over the job share): the one line of the failure names the report, and the report
    has the blocked writer with its kernel stack (the freeze it waits for), sysrq-w's dump and every process.
    The timeout leaves the guest twice the time a slowed host took to reach its job (23 s of uptime, run 21)."""
    out = tmp_path / "out"
    proc = slogqual("lab", "run", "--timeout", "50", "-q", "-d", "hdd", "-o", str(out), "--", "sh", "-c", HANGING_JOB,
                    timeout=300)
    assert proc.returncode == 1, proc.stderr[-2000:]
    report = out / "lab-hang.txt"
    assert proc.stderr.strip().splitlines()[-1] == (
        f"slogqual: the lab guest did not finish within 50 s; what its tasks were blocked on: {report}"), proc.stderr
    console = (out / "lab-console.log").read_text()
    assert "hang-test: a writer is blocked" in console, console[-2000:]  # kept, though the run failed
    text = report.read_text()
    blocked = text.split("== tasks in uninterruptible sleep (D)")[1].split("== every process")[0]
    writer = [b for b in blocked.split("\n-- pid ")[1:] if "echo blocked > /tmp/frozen/file" in b]
    assert len(writer) == 1 and "mnt_want_write" in writer[0], blocked  # the stack: waiting for the frozen fs
    assert "sysrq: Show Blocked State" in text and "sleep 100000" in text.split("== every process")[1]
    assert (out / "lab-marks").exists()


def test_sigint_leaves_no_process_and_no_files(tmp_path):
    labtmp = tmp_path / "labtmp"
    labtmp.mkdir()
    env = dict(os.environ, SLOGQUAL_LAB_TMP=str(labtmp))
    proc = subprocess.Popen([sys.executable, "-m", "slogqual", "lab", "run", "-q", "--device", "hdd", "--device", "nvdimm",
                             "-o", str(tmp_path / "out"), "--", "sleep", "600"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 300
        running = False
        while time.monotonic() < deadline and proc.poll() is None:
            jobs = list(labtmp.iterdir())
            if jobs and (jobs[0] / "marks").exists() and "devices" in (jobs[0] / "marks").read_text():
                running = True
                break
            time.sleep(0.5)
        assert running, "the guest never reached the job"
        kids = _children_of(proc.pid)
        names = sorted(os.path.basename(argv[0]) for argv in kids.values())
        assert names == ["nbdkit", "qemu-system-x86_64"], names
        sockets = [argv[argv.index("--unix") + 1] for argv in kids.values() if "--unix" in argv]
        assert sockets and all(os.path.exists(s) for s in sockets)
        pmem = [m.group(1) for argv in kids.values() for a in argv for m in [re.search(r"mem-path=([^,]+)", a)] if m]
        assert len(pmem) == 1 and os.path.exists(pmem[0])
        assert pmem[0].startswith("/dev/shm/")  # the NVDIMM's medium is memory, not the host's disk
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted" in err
    survivors = [pid for pid in kids if _alive(pid)]
    assert survivors == [], f"processes left: {survivors}"
    assert list(labtmp.iterdir()) == []  # job dir, pmem backing file: gone
    assert not any(os.path.exists(os.path.dirname(s)) for s in sockets)  # nbdkit socket dirs: gone
    assert not os.path.exists(os.path.dirname(pmem[0]))  # the NVDIMM's memory directory: gone


# Undelayed devices on the SATA and SAS paths: each delayed class's added latency is measured against the floor
# of its own emulated transport. A CPU-starved QEMU loses time unevenly between its device models (slowed run 5:
# the sas-ssd, 1 ms configured, took 8.3 ms p50 against the sata-ssd's 3.6 ms with 2 ms configured), so a floor
# from another transport (the NVMe's) measures the emulation as much as the delay.
_FLOOR_CLASSES = """
[class.capped]
transport = "nvme"
serial_prefix = "SQLCAP"
iops_limit = 200

[class.sata-floor]
description = "undelayed SATA (AHCI) device: the floor of the SATA path"
transport = "sata"
serial_prefix = "SQLSATAF"
size = "256M"
rotation_rate = 1

[class.sas-floor]
description = "undelayed SAS (virtio-scsi) device: the floor of the SAS path"
transport = "sas"
vendor = "SLOGQUAL"
product = "LAB SAS FLOOR"
serial_prefix = "SQLSASF"
size = "256M"
rotation_rate = 1
"""
_FLOOR_OF = {"hdd": "sata-floor", "sata-ssd": "sata-floor", "sas-ssd": "sas-floor"}


def test_sweep_in_the_lab_orders_the_classes(tmp_path, busy_host_disk):
    """`slogqual sweep` on every emulated class, 4 KiB QD1 write+flush: hdd slowest … nvdimm fastest (median),
    and the latency each class adds (its write p50 minus the undelayed device's on the same emulated transport)
    is its configured delay within -10 %/+50 % (TCG adds scheduling noise on top, never takes time away);
    a user class with a QEMU IOPS cap of 200 does at most 200 write+flush cycles per second. All of it
    while fio keeps the host's disk busy with sync writes: every emulated medium lives in memory, so
    no class's speed may depend on the host's disk."""
    orders_the_classes(tmp_path, busy_host_disk)


# the full tier (docs/testing.md): issue #39's "the talk's class order on both versions" — the 2.4 guest's kernel
# carries the 2.4 module and userland, the devices and the sweep are the same; 56 s of a lane (149 s slowed)
@pytest.mark.full
@pytest.mark.zfs24
def test_sweep_in_the_2_4_lab_orders_the_classes(tmp_path, busy_host_disk):
    """The class order of the test above, in a guest booted with OpenZFS 2.4 (`--zfs 2.4`)."""
    need_lab(zfs="2.4")
    orders_the_classes(tmp_path, busy_host_disk, zfs="2.4")


def orders_the_classes(tmp_path, busy_host_disk, zfs=None):
    """The class order and each class's added latency (test_sweep_in_the_lab_orders_the_classes), in a guest of
    the OpenZFS lab ``zfs`` (None: the default)."""
    from slogqual.lab import devices as _devices

    classes = ["hdd", "sata-ssd", "sas-ssd", "nvme", "nvdimm"]
    out = tmp_path / "out"
    # A user's class from --devices-file: an NVMe capped by QEMU throttling (a rate cap, not a latency), and the
    # two transports' floors.
    extra = tmp_path / "extra.toml"
    extra.write_text(_FLOOR_CLASSES)
    args = ["lab", "run", "-q", "-o", str(out), "--devices-file", str(extra), *(["--zfs", zfs] if zfs else [])]
    for c in classes + ["capped", "sata-floor", "sas-floor"]:
        args += ["--device", c]
    # Slowed on purpose, the classes are swept twice, the second round in reverse order, and each class keeps
    # the lower of its two medians: a CPU-starved QEMU's noise only adds time, and a stall that held one class's
    # whole run (slowed run 5, in lanes: the sas-ssd at 8.3 ms p50 with 1 ms configured) rarely holds both
    rounds = 2 if slow_host_requested() else 1
    sweep = ("slogqual sweep {targets} --sizes 4k --runtime 2 --settle 0 --destroy-data -o sweep{n} --quiet "
             "--format table")
    targets = ['$SLOGQUAL_LAB_DEVICES', '$(printf "%s\\n" $SLOGQUAL_LAB_DEVICES | tac)']
    job = " && ".join(f"mkdir -p sweep{n} && " + sweep.format(targets=targets[n], n=n) for n in range(rounds))
    job += " && zfs version > zfs-version.txt" if zfs else ""
    args += ["--", "sh", "-c", job]
    proc = slogqual(*args)
    busy = busy_host_disk.stop()
    assert proc.returncode == 0, (out / "lab-console.log").read_text()[-3000:] if out.exists() else proc.stderr
    assert disk_was_busy(busy), busy  # the host disk really was busy with sync writes meanwhile
    devs = json.loads((out / "lab-devices.json").read_text())
    if zfs:  # the guest ran the version asked for, module and userland (`zfs version` in it, after the sweeps)
        lines = (out / "zfs-version.txt").read_text().split()
        assert len(lines) == 2 and all(re.search(r"-(\d+\.\d+)\.\d+", x).group(1) == zfs for x in lines), lines
    by_round = []
    for n in range(rounds):
        by_path = {}
        for f in (out / f"sweep{n}").glob("*.json"):
            doc = json.loads(f.read_text())
            assert doc["status"] == "complete"
            by_path[doc["target"]["path"]] = doc["points"][0]
        by_round.append({d["class"]: by_path[d["path"]] for d in devs})
    pts = by_round[0]
    p50 = {c: min(r[c]["lat_us"]["p50"] for r in by_round) for c in pts}
    write_p50 = {c: min(r[c]["write_lat_us"]["p50"] for r in by_round) for c in pts}
    figures = {"write+flush p50 us": p50, "write p50 us": write_p50, "rounds": rounds}
    assert all(r[c]["ios"] > 50 for r in by_round for c in classes + ["sata-floor", "sas-floor"]), figures
    # ordered by the median write+flush (exact: the pair engine), not the mean: a guest starved of its CPU moved
    # the means out of order (sas-ssd 43.5 ms against hdd 31.9 ms) while each class's configured delay still
    # sets its typical write. Where the session is slowed on purpose the order across transports is the
    # emulation's as much as the delay's (above), so there the order is by added latency, each over its own
    # transport's floor; the fastest two (no added delay: NVMe, guest memory) keep their places either way
    added_ms = {c: (write_p50[c] - write_p50[_FLOOR_OF[c]]) / 1000 for c in _FLOOR_OF}
    print("class figures:", figures, "added ms:", added_ms)  # shown with -s, and with a failure
    if slow_host_requested():
        assert [added_ms[c] for c in _FLOOR_OF] == sorted(added_ms.values(), reverse=True), (added_ms, figures)
        assert p50["nvdimm"] < p50["nvme"] < min(p50[c] for c in _FLOOR_OF), figures
    else:
        medians = [p50[c] for c in classes]
        assert medians == sorted(medians, reverse=True), figures
    # the pair engine measured (built in the guest on first use): exact figures, and the emulated NVMe's
    # SMART/Health log read before and after the size (QEMU reports a temperature, no throttling)
    assert all(pts[c]["lat_basis"] == "pair" for c in classes)
    thermal = pts["nvme"]["thermal"]
    assert thermal["available"] and thermal["source"] == "nvme smart-log", thermal
    assert thermal["temperature_c"]["before"] is not None and thermal["throttled"] is not True
    assert "thermal" not in pts["nvdimm"]  # no hardware to ask
    # wear read with the heat: the emulated NVMe counted the bytes the sweep wrote, to within one data unit (QEMU
    # keeps the log's Data Units Written from its block accounting, rounded up per reading); no rated life to use
    for r in by_round:
        worn, written = r["nvme"]["wear"], r["nvme"]["ios"] * 4096
        assert worn["written_bytes"] == written and abs(worn["device_counted_bytes"] - written) <= worn["resolution_bytes"], worn
        assert worn["percentage_used"] == {"before": 0, "after": 0}, worn
    capped = pts["capped"]
    # QD1 write+flush cycles under a 200 IOPS cap: QEMU's leaky bucket lets a burst of a tenth of the
    # limit through first (throttle.c: a bucket's max defaults to avg / 10), so over T seconds at most
    # 200 T + 20 writes (2 % for the guest's clock against QEMU's, one IO in flight)
    def rate_s(p):
        return p["runtime_ms"] / 1000

    for r in by_round:  # never past the cap, in any round
        assert r["capped"]["ios"] <= 1.02 * 200 * rate_s(r["capped"]) + 20 + 1, (r["capped"]["ios"], rate_s(r["capped"]))
    # ... and at 60 % of it at least, in the round the host disturbed least (a starved QEMU only takes time away, as
    # for the medians above) — where that round's uncapped NVMe ran past twice the cap, so that the cap, not the
    # host, held it. Slowed tier, 2026-11-30 (run 28): round 1's capped NVMe 105 a second with the uncapped one at
    # 233 (the host near the cap itself), round 2's 142 with the uncapped at 1,677.
    best = max(by_round, key=lambda r: r["capped"]["ios"] / rate_s(r["capped"]))
    if best["nvme"]["ios"] / rate_s(best["nvme"]) > 2 * 200:
        assert 0.6 * 200 * rate_s(best["capped"]) <= best["capped"]["ios"], [r["capped"]["ios"] for r in by_round]
    # the cap is what held it: where the same NVMe uncapped ran above the cap, the capped one is the slower. Not
    # where the host held the NVMe below the cap itself (slowed lab tier, 2026-11-30: the uncapped NVMe's mean
    # write+flush 5.75 ms — 174 a second, its median 0.45 ms — against the capped one's 5.30 ms)
    nvme = pts["nvme"]
    if nvme["ios"] / (nvme["runtime_ms"] / 1000) > 1.1 * 200:
        assert capped["lat_us"]["mean"] > nvme["lat_us"]["mean"], (capped["lat_us"], nvme["lat_us"])
    defs = _devices.load()
    # the delay is never skipped (the lower bound holds anywhere); on a host whose CPUs are taken (the slowed lab
    # tier) nbdkit's delayed writes also wait for a CPU to wake on — the hdd's 8 ms measured 17.3 ms added
    # beside two hogs, two guests and other test suites — so the upper bound holds only where the session is
    # not slowed on purpose
    upper = None if slow_host_requested() else 1.5
    for c in _FLOOR_OF:
        want = defs[c].write_delay_ms
        assert 0.9 * want <= added_ms[c], f"{c}: added {added_ms[c]:.2f} ms, configured {want} ms; {figures}"
        assert upper is None or added_ms[c] <= upper * want, f"{c}: added {added_ms[c]:.2f} ms, configured {want} ms"


# the full tier (docs/testing.md): a claim about a slowed host, checked where the host is slowed; in README's command
# it slowed the other lane's guest for its ~110 s, and beside that guest it often had too few IOs to judge (a skip)
@pytest.mark.full
def test_a_calibrated_cap_binds_on_a_slowed_host(tmp_path, slow_host):
    """Issue #26: the capped-ssd's cap is a share of what the device carries uncapped in its own guest, so it
    binds on any host. On a host slowed on purpose — a CPU hog on every core and fio keeping the disk busy —
    the guest measures the device uncapped at boot, caps it at a quarter of that, and a 128 KiB QD1 sweep
    of it then runs at the cap (the rate filter's half-second bucket lets it over by 0.5 s of cap in the
    sweep's 3 s: x1.17 — 14.1 MiB/s for a 12.3 MiB/s cap, measured), while the calibration's own capped check
    agreed (lab-calibration.json).

    The control: the same device class uncapped (a sas-ssd on the same virtio-scsi path), swept right after in
    the same guest. Where the host let even it carry no more than the cap, the host set the pace, not the cap:
    the test says so with the figures and skips (CI run 31, in lanes beside the other lane's heavy guest: the
    capped device ran 5.4 MiB/s under an 8.4 MiB/s cap that boot's calibration had put at a quarter of 33.5)."""
    out = tmp_path / "out"
    proc = slogqual("lab", "run", "-q", "-o", str(out), "--device", "capped-ssd", "--device", "sas-ssd", "--", "sh",
                    "-c", "mkdir -p sweep && slogqual sweep $SLOGQUAL_LAB_DEVICES --sizes 128k --runtime 3 --settle 1 "
                    "--destroy-data -o sweep --quiet --format table")
    slowed = slow_host.stop()
    assert proc.returncode == 0, (out / "lab-console.log").read_text()[-3000:] if out.exists() else proc.stderr
    # the host really was slowed: the hogs got CPU (a third of their cores' worth at least; QEMU took the
    # rest) or, beside heavier work still, the host's CPUs were 90 % busy; and the disk was busy with sync
    # writes meanwhile
    assert host_was_slowed(slowed), slowed
    assert disk_was_busy(slowed["disk"]), slowed
    (cal,) = json.loads((out / "lab-calibration.json").read_text())
    assert cal["index"] == 0 and cal["share"] == 0.25 and cal["measured_ios"] > 0, cal
    if cal["measured_ios"] <= 100:
        # too few IOs in the calibration's best window to say what the device carries (slowed run 15, two hogs,
        # the busy disk and the other lane's guest: 56 IOs, 3.5 MiB/s uncapped, then 7 IOs capped): the host
        # set the pace before any cap did — said with the figures, as the shape tests say theirs
        pytest.skip(f"this slowed host's guest wrote 128 KiB at {cal['measured_bytes_s'] / 2**20:.1f} MiB/s uncapped "
                    f"({cal['measured_ios']} IOs in {cal['measured_s']:.1f} s, windows {cal['windows']}): too few "
                    "IOs to calibrate a cap on")
    assert cal["cap_bytes_s"] == int(cal["measured_bytes_s"] * 0.25), cal
    assert cal["verified_bytes_s"] <= 1.3 * cal["cap_bytes_s"], cal
    sweeps = {d["target"]["path"]: d for d in (json.loads(f.read_text()) for f in (out / "sweep").glob("*.json"))}
    assert len(sweeps) == 2 and cal["path"] in sweeps, sorted(sweeps)
    point = sweeps.pop(cal["path"])["points"][0]
    (control,) = [d["points"][0] for d in sweeps.values()]
    got, secs = point["mbps"] * 2**20, point["runtime_ms"] / 1000
    # after the settle pause the rate filter's bucket is full: RATE_BURST_S seconds of cap come on top of the
    # run's own, plus at most one request the bucket lets through; 3 % for the guest's clock against nbdkit's
    from slogqual.lab.runner import RATE_BURST_S

    ceiling = cal["cap_bytes_s"] * (1 + float(RATE_BURST_S) / secs) * 1.03 + 128 * 1024 / secs
    figures = {"capped": (point["mbps"], point["ios"], secs), "ceiling_mibs": ceiling / 2**20,
               "uncapped_sibling": (control["mbps"], control["ios"]), "cal": cal}
    assert got <= ceiling, figures  # the cap binds: never above it, however fast the host
    if control["mbps"] * 2**20 < cal["cap_bytes_s"] / 0.85:
        pytest.skip(f"the host let the uncapped sibling carry {control['mbps']:.2f} MiB/s, under the cap's "
                    f"{cal['cap_bytes_s'] / 2**20:.2f} / 0.85: the host, not the cap, set the pace ({figures})")
    assert 0.85 * cal["cap_bytes_s"] <= got, figures  # ... and reached: what the host allowed was above it


def test_sigkill_leaves_no_process_and_the_next_run_removes_the_job_dir(tmp_path):
    """SIGKILL gives slogqual no chance to clean up: QEMU (PR_SET_PDEATHSIG) and nbdkit
    (--exit-with-parent) still end, and the next run removes the orphaned job directory."""
    labtmp = tmp_path / "labtmp"
    labtmp.mkdir()
    env = dict(os.environ, SLOGQUAL_LAB_TMP=str(labtmp))
    proc = subprocess.Popen([sys.executable, "-m", "slogqual", "lab", "run", "-q", "--device", "nvme",
                             "-o", str(tmp_path / "out"), "--", "sleep", "600"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 300
        kids = {}
        while time.monotonic() < deadline and proc.poll() is None:
            kids = _children_of(proc.pid)
            # by name, not count: a child between fork and exec still shows the parent's argv (python3), a
            # window that die_with_parent's preexec step widens on a loaded host (seen in lanes)
            if sorted(os.path.basename(a[0]) for a in kids.values()) == ["nbdkit", "qemu-system-x86_64"]:
                break
            time.sleep(0.5)
        assert sorted(os.path.basename(a[0]) for a in kids.values()) == ["nbdkit", "qemu-system-x86_64"]
        sockets = [argv[argv.index("--unix") + 1] for argv in kids.values() if "--unix" in argv]
        proc.kill()
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(p) for p in kids):
        time.sleep(0.2)
    assert [p for p in kids if _alive(p)] == []
    orphans = list(labtmp.iterdir())
    assert len(orphans) == 1  # the job directory: nobody could remove it
    again = slogqual("lab", "run", "-q", "--device", "nvme", "-o", str(tmp_path / "out2"), "--", "true", env=env)
    assert again.returncode == 0, again.stderr
    assert list(labtmp.iterdir()) == []
    assert sockets and not any(os.path.exists(s) for s in sockets)  # nor the nbd socket directories
