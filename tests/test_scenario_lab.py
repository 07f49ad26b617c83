"""Pool scenarios for real, in the lab guest (QEMU TCG, real OpenZFS, emulated devices).

Assert relations and evidence only: which configurations wrote ZIL bytes to a log vdev, that the
SLOG beat no SLOG under sync=always, that no pool outlives the run — never absolute times.
"""

import json
import math
import os
import shutil
import subprocess
import sys

import pytest

from conftest import BusyHostDisk, need_lab
from slogqual.analysis.scaling import HOST_SATURATED

pytestmark = pytest.mark.lab


@pytest.fixture(autouse=True)
def _lab_ready():
    need_lab()


def run(*args, cwd, timeout=1500):
    return subprocess.run([sys.executable, "-m", "slogqual", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


class ZfsGuest:
    """The outputs of tests/lab_jobs/zfs_guest.py: one lab guest (data hdd hdd, log nvdimm) that ran every
    ZFS job the tests below need on that device set, one after another (one boot instead of five)."""

    def __init__(self, proc, out, seed, busy):
        self.proc, self.out, self.seed, self.busy = proc, out, seed, busy

    def job(self, name: str):
        """(output directory, exit status) of one job; fails the calling test when the guest did not run."""
        console = self.out / "lab-console.log"
        assert self.proc.returncode == 0, (self.seed, self.proc.stderr[-2000:],
                                           console.read_text(errors="replace")[-3000:] if console.exists() else "")
        assert self.busy["fsyncs"] > 100, self.busy  # the host disk really was busy with sync writes meanwhile
        d = self.out / name
        rc = (d / "rc").read_text().strip()
        if rc == "skip":
            pytest.skip((d / "log.txt").read_text().strip())
        left = json.loads((d / "left.json").read_text())
        assert left == {"pools": [], "datasets": []}, (name, left)  # no job leaves a pool behind
        return d, rc, (d / "log.txt").read_text(errors="replace")[-3000:]


@pytest.fixture(scope="module")
def zfs_guest(tmp_path_factory):
    """Boot the guest once for the module, beside fio keeping the host's disk busy with sync writes (a
    shared CI machine). The seed of its interrupt jobs comes from $SLOGQUAL_TEST_SEED or at random, and
    is printed (and carried in failures) so that a failure can be replayed."""
    need_lab()
    seed = int(os.environ.get("SLOGQUAL_TEST_SEED", "0")) or int.from_bytes(os.urandom(3), "big")
    print(f"seed {seed}")
    out = tmp_path_factory.mktemp("zfs-guest") / "out"
    job = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab_jobs", "zfs_guest.py")
    busy = BusyHostDisk(out.parent)
    try:
        proc = run("lab", "run", "--quiet", "-d", "hdd", "-d", "hdd", "-d", "nvdimm", "-o", out, "--", "python3", job,
                   str(seed), cwd=out.parent, timeout=3600)
    finally:
        stats = busy.stop()
    return ZfsGuest(proc, out, seed, stats)


def test_a_held_zvol_never_fails_to_open(zfs_guest):
    """The fix for fio's "error 512" (docs/lab.md), on real OpenZFS: with zvol_open_timeout_ms at 0 and the
    pool namespace lock kept busy (a second pool exported and imported over and over), opening a zvol nothing
    holds fails with errno 512, again and again; while
    slogqual.pool.held_open holds it (as the scenario runner does for every step), five times as many opens as
    there were per failure all succeed (tests/lab_jobs/held_open_contention.py): were they as likely to fail,
    none failing would have a chance under 1 %."""
    d, rc, log = zfs_guest.job("held-open")
    assert rc == "0", log
    r = json.loads((d / "held.json").read_text())
    assert r["zvol_open_timeout_ms"] == 1000  # OpenZFS's default, put back after the job
    unheld = r["not_held"]
    assert set(unheld["failed"]) == {"512"}, r  # the real failure: ERESTARTSYS out of open(2), nothing else
    per_failure = (unheld["opens_ok"] + unheld["failed"]["512"]) / unheld["failed"]["512"]
    held = r["held"]
    assert held["failed"] == {} and held["factor"] >= 5 and held["opens_ok"] >= held["factor"] * per_failure, r


def interrupt_report(guest: ZfsGuest, job: str, report: str) -> dict:
    d, rc, log = guest.job(job)
    assert rc == "0", (guest.seed, log)
    return json.loads((d / report).read_text())


# the full tier (docs/testing.md): ~250 s of a lane; its striped and mirrored logs' evidence is this test's alone,
# the rest (the --lab path, two candidates, --sweep-logs, the verdicts) the wide pool's and the shared guest's too
@pytest.mark.full
def test_iscsi_4k_quick_in_the_lab(tmp_path, busy_host_disk):
    """The whole quick scenario while fio keeps the host's disk busy with sync writes (a shared CI
    machine): the relations below hold because no emulated device's speed depends on the host disk."""
    out = tmp_path / "iscsi.json"
    # data: two 8 ms hdd; log candidates (the --lab default): a 2 ms sata-ssd and an NVDIMM (pmem)
    proc = run("scenario", "run", "iscsi-4k-randwrite", "--lab", "--lab-data", "hdd", "hdd", "--lab-log", "sata-ssd",
               "nvdimm", "--quick", "--sweep-logs", "--quiet", "--json", "-o", out, cwd=tmp_path)
    busy = busy_host_disk.stop()
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert busy["fsyncs"] > 100, busy  # the host disk really was busy with sync writes meanwhile
    doc = json.loads(out.read_text())
    assert doc["schema"] == "slogqual.scenario/1" and doc["status"] == "complete"
    configs = {c["name"] for c in doc["scenario"]["configs"]}
    steps = doc["steps"]
    sata, pmem = doc["pool"]["log"]
    assert {s["config"] for s in steps} == configs
    # the single-SLOG configuration ran once per candidate
    assert len(steps) == (len(configs) + 1) * len(doc["scenario"]["threads"])
    assert {s["candidate"] for s in steps if s["log"] == "single"} == {sata, pmem}
    for s in steps:
        uses_log = s["log"] != "none"
        if uses_log and s["sync"] == "always":
            assert s["zil"]["slog_bytes"] > 0 and s["log_write_bytes_s"] > 0, s
        else:
            assert s["zil"]["slog_bytes"] == 0, s  # no log vdev took ZIL writes
        if s["sync"] == "always" and not uses_log:
            assert s["zil"]["normal_bytes"] > 0, s  # the ZIL went to the data disks
    # issue #19: the two log candidates striped and mirrored. zpool iostat's log section during the step:
    # a striped log writes ZIL blocks to both log vdevs; a mirror writes the same bytes to both legs
    for s in steps:
        logs = [v for v in s["vdevs"] if v["section"] == "logs"]
        if s["log"] == "stripe":
            assert [v["depth"] for v in logs] == [1, 1] and all(v["write_bytes_s"] > 0 for v in logs), s
        if s["log"] == "mirror":
            assert [v["depth"] for v in logs] == [1, 2, 2] and logs[0]["name"].startswith("mirror"), s
            a, b = (v["write_bytes_s"] for v in logs[1:])
            assert a > 0 and b > 0 and abs(a - b) <= 0.15 * max(a, b), (a, b, s)  # the same ZIL blocks
    assert {s["log"] for s in steps} >= {"stripe", "mirror"}
    by = {(s["config"], s.get("candidate"), s["threads_per_lun"]): s for s in steps}
    # A step is host-bound when sync=standard itself fell below its first step's: more threads, less done, the
    # guest's one vCPU (TCG) the limit, not a log. The NVDIMM log costs that vCPU most (every record is a CPU
    # copy into pmem): in lanes, beside a second guest, its 8-thread step fell 869 -> 344 IOPS while
    # sync=standard fell 968 -> 664 (CI run 25; run 21 the same, 903 -> 511). The order of the logs is asserted
    # where the host is not the limit; at a host-bound step only what the host cannot change.
    # Or the NVDIMM step itself ran the guest's vCPU saturated (the analysis's HOST_SATURATED, its own /proc/stat
    # share): then the host, not the log, set its pace — CI run of 4b363f5, 4 threads a LUN: the NVDIMM log 632 IOPS
    # at 99.9 % busy, the 2 ms SSD 719, while sync=standard rose 875 -> 891.
    low = min(doc["scenario"]["threads"])
    std_low = by[("sync=standard", None, low)]["iops"]

    def host_bound(t):
        busy = (by[("sync=always + SLOG", pmem, t)].get("cpu") or {}).get("busy_share")
        return by[("sync=standard", None, t)]["iops"] < std_low or (busy is not None and busy >= HOST_SATURATED)

    for t in doc["scenario"]["threads"]:
        noslog = by[("sync=always, no SLOG", None, t)]["iops"]
        fast = by[("sync=always + SLOG", pmem, t)]["iops"]
        assert fast > noslog or host_bound(t), (t, fast, noslog, [(s["config"], s["threads"], s["iops"]) for s in steps])
    # a fast SLOG beats the ZIL on 8 ms disks: at the first step, and best step against best step
    assert by[("sync=always + SLOG", pmem, low)]["iops"] > by[("sync=always + SLOG", sata, low)]["iops"]
    a = doc["analysis"]
    assert a["metric"] == "iops" and a["slog_benefit_at_peak"] > 1 and a["verdict"]
    # the verdict names the slower log candidate (the sata-ssd): the bottleneck, or — where sync=standard is
    # flat at the step that shows them apart (one guest vCPU: issue #19) — only the slower one; or the curves
    # cross, and then the step where the sata-ssd is ahead is a host-bound one
    assert {c["device"] for c in a["candidates"]} == {pmem, sata}
    crossed = [t for t in doc["scenario"]["threads"]
               if by[("sync=always + SLOG", sata, t)]["iops"] > by[("sync=always + SLOG", pmem, t)]["iops"]]
    if a["slower_log"].startswith("The log candidates' curves cross"):
        assert crossed and all(host_bound(t) for t in crossed), (crossed, a["slower_log"])
    else:
        assert a["slower_log"].startswith((f"The slower log device {sata}", f"The log device {sata}"))
    if a["slower_log"].startswith(f"The log device {sata}"):
        assert "Not named the bottleneck: pool/host-bound" in a["slower_log"]
    # the pool is gone and the device identities were recorded in the guest
    assert all(d.get("path") for d in doc["pool"]["devices"].values())
    assert doc["warnings"] == []
    # --sweep-logs: each candidate swept before the pools, the sweeps brought out beside the result,
    # and each candidate's verdict weighed against its own sweep
    sweeps = doc["log_sweeps"]
    assert set(sweeps) == {sata, pmem}
    for i, dev in enumerate((sata, pmem)):
        assert sweeps[dev]["source"] == str(tmp_path / f"iscsi.log{i}.sweep.json")
        sweep_doc = json.loads((tmp_path / f"iscsi.log{i}.sweep.json").read_text())
        assert sweep_doc["status"] == "complete" and sweep_doc["target"]["path"] == dev
    lat4k = {dev: next(p["lat_mean_us"] for p in sweeps[dev]["points"] if p["size"] == 4096) for dev in sweeps}
    assert lat4k[pmem] < lat4k[sata]  # the NVDIMM takes a 4 KiB sync write faster than the 2 ms SSD
    for c in a["candidates"]:
        assert c["log_sweep"] and c["log_sweep"]["observed_log_write_size"] > 0


SMALL_LAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab_jobs", "small-lab.toml")


def test_a_users_file_under_tmp_runs_in_the_lab_with_the_load_and_layout_given_and_its_progress_shown(tmp_path):
    """Issue #37's recommended path in the lab: a scenario file in the system temp dir (the guest sees none of
    the host's /tmp), its load and the data layout given on the command line, the guest's progress relayed as
    it runs. Its console (OUTPUT.lab/lab-console.log) is tests/fixtures/lab/scenario-console.txt."""
    toml = tmp_path / "small-lab.toml"
    shutil.copyfile(SMALL_LAB, toml)
    out = tmp_path / "small.json"
    proc = run("scenario", "run", toml, "--lab", "--lab-data", "hdd", "hdd", "--lab-log", "nvdimm", "--layout",
               "mirror", "--bs", "8k", "--luns", "1", "--threads", "1,2", "--runtime", "2", "--ramp", "0",
               "-o", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    sc = doc["scenario"]
    assert (sc["bs"], sc["luns"], sc["threads"], sc["runtime_s"], sc["ramp_s"]) == (8192, 1, [1, 2], 2.0, 0.0)
    assert sc["overrides"] == {"bs": 8192, "threads": [1, 2], "luns": 1, "runtime": 2.0, "ramp": 0.0}
    assert sc["source"] == str(toml) and sc["lun_size"] == 64 << 20  # the rest is the file's
    assert (tmp_path / "small.json.lab" / "scenario.toml").read_text() == toml.read_text()  # the copy the guest ran
    assert doc["pool"]["layout"] == "mirror" and doc["status"] == "complete"
    assert {(s["config"], s["threads_per_lun"]) for s in doc["steps"]} == {
        (c, t) for c in ("sync=standard", "sync=always + SLOG") for t in (1, 2)}
    relayed = [l for l in proc.stderr.splitlines() if l.startswith("slogqual: lab guest: ")]
    steps = [l for l in relayed if " ETA " in l]
    assert [l.split("(")[-1].split(")")[0] for l in steps] == ["1/4", "2/4", "3/4", "4/4"], proc.stderr[-3000:]
    assert proc.stderr.index("slogqual: booting the lab guest") < proc.stderr.index(steps[0])


def test_interrupted_lab_scenario_leaves_no_pool_and_resumes(zfs_guest):
    """SIGINT at a random step (seeded, printed): no slogqual pool or dataset remains, the result file
    holds every finished step, and --resume measures exactly the missing ones."""
    r = interrupt_report(zfs_guest, "scenario-interrupt", "interrupt.json")
    assert r["interrupt_rc"] == 130, r
    assert r["interrupted_status"] == "interrupted", r
    assert r["left_after_interrupt"] == {"pools": [], "datasets": []}, r
    kept = r["interrupted_steps"]
    assert r["k"] <= len(kept) < 6, r  # every finished step is in the file
    assert r["resume_rc"] == 0, r["resume_stderr"]
    assert r["final_status"] == "complete" and len(r["final_steps"]) == 6
    assert r["final_steps"][:len(kept)] == kept  # resumed, not re-measured
    keys = {(s["config"], s["candidate"], s["threads_per_lun"]) for s in r["final_steps"]}
    assert len(keys) == 6
    assert r["left_after_resume"] == {"pools": [], "datasets": []}


def test_interrupted_iscsi_scenario_leaves_no_session_target_or_pool_and_resumes(zfs_guest):
    """The same over real iSCSI (the shipped iscsi-4k-randwrite-lio, quick, two fio servers): SIGINT at a seeded
    moment leaves no session, LIO target or backstore, iscsid, fio or pool; --resume completes it, over iSCSI
    again."""
    r = interrupt_report(zfs_guest, "scenario-interrupt-iscsi", "interrupt.json")
    assert r["interrupt_rc"] == 130 and r["interrupted_status"] == "interrupted", r
    assert r["left_after_interrupt"] == {"pools": [], "datasets": []}, r
    assert r["protocols_left_after_interrupt"] == NOTHING_LEFT, r
    kept = r["interrupted_steps"]
    assert r["k"] <= len(kept) < 6, r
    assert r["resume_rc"] == 0, r["resume_stderr"]
    assert r["final_status"] == "complete" and len(r["final_steps"]) == 6
    assert r["final_steps"][:len(kept)] == kept
    assert all(s["transport"] == "iscsi" for s in r["final_steps"])
    assert r["left_after_resume"] == {"pools": [], "datasets": []}
    assert r["protocols_left_after_resume"] == NOTHING_LEFT, r


def test_interrupt_inside_zpool_create_and_destroy_leaves_no_pool(zfs_guest):
    """SIGINT while slogqual's own `zpool create`, then `zpool destroy`, runs (watched for in /proc,
    signalled a seeded random moment later): the pool the kernel made or half tore down is gone."""
    r = interrupt_report(zfs_guest, "teardown-interrupt", "teardown.json")
    out = zfs_guest.out / "teardown-interrupt"
    print(json.dumps(r["runs"]))
    assert [run["verb"] for run in r["runs"]] == ["create", "destroy"]
    for run in r["runs"]:
        assert run["seen"], run  # the job did catch slogqual's zpool at work
        assert run["rc"] == 130, run
        assert run["left"] == {"pools": [], "datasets": []}, run
        assert run["mount_roots"] == [], run
        status = json.loads((out / f"{run['verb']}.json").read_text())["status"]
        assert status == "interrupted", run


def _scenario_job(zfs_guest, name):
    """The job's scenario result: iscsi-128k-seqwrite ran as `slogqual scenario run`; nfs-sync ran inside
    `slogqual qualify` (tests/lab_jobs/nfs-qualify.toml), whose scenario is a library call."""
    d, rc, log = zfs_guest.job(name)
    if name == "nfs-sync":
        assert rc in ("0", "1"), log  # pass or fail: the verdict is not the point, the evidence is
        found = sorted((d / "q").glob("*.scenario-nfs-sync.json"))
        assert len(found) == 1, (sorted(p.name for p in (d / "q").iterdir()), log)
        return d, json.loads(found[0].read_text()), log
    assert rc == "0", log
    return d, json.loads((d / "result.json").read_text()), log


@pytest.mark.parametrize("name", ["iscsi-128k-seqwrite", "nfs-sync"])
def test_other_scenarios_quick_in_the_lab(zfs_guest, name):
    """The shipped scenario, quick, in the shared guest: data hdd hdd, log nvdimm. One log candidate: the
    striped and mirrored log configurations (iscsi-128k-seqwrite) are skipped, recorded and warned about."""
    d, doc, log = _scenario_job(zfs_guest, name)
    assert doc["status"] == "complete"
    sc = doc["scenario"]
    pairs = {c["name"] for c in sc["configs"] if c["log"] in ("mirror", "stripe")}
    skipped = doc.get("skipped") or []
    assert {k["config"] for k in skipped} == pairs
    assert {s["config"] for s in doc["steps"]} == {c["name"] for c in sc["configs"]} - pairs
    assert len(doc["steps"]) == (len(sc["configs"]) - len(pairs)) * len(sc["threads"])
    for s in doc["steps"]:
        # the writes are synchronous under sync=always, or when the load asks (O_DSYNC, as NFS does)
        synchronous = s["sync"] == "always" or sc["write_sync"] != "none"
        if s["log"] != "none" and synchronous:
            assert s["zil"]["slog_bytes"] > 0 and s["log_write_bytes_s"] > 0, s
        else:
            assert s["zil"]["slog_bytes"] == 0, s
        if synchronous and s["log"] == "none":
            assert s["zil"]["itx_count"] > 0, s  # the ZIL was used, on the data disks
    assert doc["analysis"]["metric"] == "mbps" and doc["analysis"]["verdict"]
    assert doc["warnings"] == [f"{k['config']}: {k['reason']}" for k in skipped]  # only the skipped pairs
    oz = doc["environment"]["openzfs"]  # the OpenZFS that ran it: userland and the loaded module
    assert oz["userland"] and oz["module"] and "error" not in oz, oz


def test_qualify_runs_its_scenario_as_a_library_call(zfs_guest):
    """qualify's scenario criterion measured on a real pool: the scenario document says qualify asked
    for it (not a `scenario run` command line it built), and the criterion's figure is that document's."""
    d, doc, log = _scenario_job(zfs_guest, "nfs-sync")
    assert doc["origin"].startswith("slogqual qualify (profile lab-nfs-qualify, device ")
    assert doc["environment"]["argv"][1] == "qualify"  # the process's own command line, as it was
    q = json.loads(next((d / "q").glob("*.qualification.json")).read_text())
    crit = [c for c in q["criteria"] if "nfs-sync" in c["check"]]
    assert len(crit) == 1 and crit[0]["result"] in ("pass", "fail"), crit
    assert crit[0]["measured"] == doc["analysis"]["slog_benefit_at_peak"]
    assert q["scenarios"][0]["status"] == "complete" and q["scenarios"][0]["path"].endswith(".scenario-nfs-sync.json")


def test_zvols_and_datasets_through_libzfs_core_and_the_zfs_command(zfs_guest):
    """Both creation paths, for real: pyzfs (libzfs_core, under Debian's python3) and the zfs command."""
    out, rc, log = zfs_guest.job("pool-apis")
    assert rc == "0", log
    r = json.loads((out / "apis.json").read_text())
    assert r["lzc_available"] is True
    assert r["apis"]["lzc"]["api_name"] == "libzfs_core" and r["apis"]["cli"]["api_name"] == "zfs command"
    for api in ("lzc", "cli"):
        a = r["apis"][api]
        assert a["zvol"] == {"volsize": str(64 << 20), "volblocksize": "16384", "type": "volume"}, a
        assert a["zvol_device"] and a["mounted_dir"] and a["pool_gone"], a
        assert a["dataset"] == {"recordsize": "131072", "mounted": "yes", "type": "filesystem"}, a


NOTHING_LEFT = {"sessions": [], "targets": [], "backstores": [], "nfs_mounts": [], "exports": [], "processes": []}


def _protocol_job(zfs_guest, name, result="result.json"):
    d, rc, log = zfs_guest.job(name)
    assert rc == "0", log
    doc = json.loads((d / result).read_text())
    assert doc["status"] == "complete", doc.get("error")
    # after the run: no session, target, backstore, mount, export, fio or daemon of ours in the guest
    assert json.loads((d / "protocols-left.json").read_text()) == NOTHING_LEFT, name
    return doc


# Below this uncapped 128 KiB rate (the capped-ssd's calibration in its guest) the capped log's steps would
# carry too few IOs for the shape to be told from noise (a quarter of 16 MiB/s over a 10 s step: ~320 IOs, a
# two-sigma counting error of 16 % between two steps). This project's 2-core build machine measured 58-66
# MiB/s, and 25-49 with a CPU hog on each core and its disk busy (docs/lab.md, tests/test_lab.py).
WIDE_MIN_UNCAPPED_MIBS = 16.0


def test_a_bandwidth_capped_log_flattens_at_its_cap_and_a_wide_pool_passes_it(tmp_path, busy_host_disk):
    """Issue #19 (b), (c) and (d), on any host (issue #26): 128 KiB writes (tests/lab_jobs/wide-128k.toml) on six
    NL-SAS disks with two log candidates, the capped-ssd and an NVDIMM, while fio keeps the host's disk busy.
    The capped-ssd's cap is a share of what the device carried uncapped in this very guest (lab/calibrate.py,
    recorded in the result's lab.calibration): a cap in absolute MiB/s, tuned where the guest was fast, was
    never reached on a slower host (issue #26: 23.8 MiB/s at the first step against 40). At 16 threads per
    LUN the capped log vdev writes at its cap (zpool iostat within 15 %) while sync=standard goes above it
    (c); the capped log is flat from the first step while the NVDIMM log keeps rising (b); sync=always
    without a SLOG — large writes go indirect, straight to the six data disks — is faster than with the
    capped log, and that candidate's verdict says so (d). With SLOGQUAL_TEST_SLOW_HOST=1 it runs beside a CPU
    hog on every host core too (docs/testing.md)."""
    out = tmp_path / "wide.json"
    proc = run("scenario", "run", os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab_jobs", "wide-128k.toml"),
               "--lab", "--lab-data", *["sas-hdd"] * 6, "--lab-log", "capped-ssd", "nvdimm", "--sweep-logs", "--quiet",
               "--json", "-o", out, cwd=tmp_path)
    busy = busy_host_disk.stop()
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert busy["fsyncs"] > 100, busy  # the host's disk really was busy with sync writes meanwhile
    doc = json.loads(out.read_text())
    assert doc["status"] == "complete" and len(doc["pool"]["data"]) == 6
    capped, pmem = doc["pool"]["log"]
    (cal,) = doc["lab"]["calibration"]  # the capped-ssd (device 6: after the six data disks), as measured in the guest
    assert cal["index"] == 6 and cal["path"] == capped and cal["measured_ios"] > 0, cal
    cap = cal["cap_bytes_s"]
    assert cap == int(cal["measured_bytes_s"] * cal["share"]), cal
    if cal["measured_bytes_s"] < WIDE_MIN_UNCAPPED_MIBS * 2**20:
        pytest.skip(f"this host's guest wrote 128 KiB at {cal['measured_bytes_s'] / 2**20:.1f} MiB/s uncapped "
                    f"({cal['measured_ios']} IOs in {cal['measured_s']:.1f} s): below the {WIDE_MIN_UNCAPPED_MIBS:g} "
                    f"MiB/s the capped-log shape needs")
    low, top = min(doc["scenario"]["threads"]), max(doc["scenario"]["threads"])
    by = {(s["config"], s.get("candidate"), s["threads_per_lun"]): s for s in doc["steps"]}
    slog, std, noslog = (by[("sync=always + SLOG", capped, top)], by[("sync=standard", None, top)],
                         by[("sync=always, no SLOG", None, top)])
    log_bytes_s = sum(v["write_bytes_s"] for v in slog["vdevs"] if v["section"] == "logs" and v["depth"] == 1)
    assert abs(log_bytes_s - cap) <= 0.15 * cap, (log_bytes_s, cap)  # (c) flat at the log's cap ...
    assert std["mbps"] * 2**20 > 1.15 * cap, (std["mbps"], cap)  # ... while sync=standard goes above it
    assert noslog["mbps"] > slog["mbps"], (noslog["mbps"], slog["mbps"])  # (d) the wide pool passes the capped SLOG
    assert noslog["zil"]["slog_bytes"] == 0 < slog["zil"]["slog_bytes"]
    a = doc["analysis"]
    verdicts = {c["device"]: c["verdict"] for c in a["candidates"]}
    assert verdicts[capped].startswith("For this workload the pool is faster with no SLOG"), a["candidates"]
    # (b) the capped log's curve is flat from the step where its log vdev reached the cap (within 15 %): the
    # analysis's knee there, and the margin from evidence — its rise from there to the top, raised by the two
    # steps' two-sigma counting error, stays below the knee's 10 % per doubling. The cap is a quarter of the
    # uncapped 128 KiB rate; on an unslowed host the first step's ZIL path carried ~0.6 of that (docs/lab.md),
    # so the first step sits on the cap. On a host slowed on purpose (two hogs, two guests on two cores) it
    # carried 0.18 (3.7 MiB/s at 2 threads, 20.3 uncapped): the cap was reached at the second step (8 threads,
    # 5.1 MiB/s on a 5.1 cap) and the curve was flat from there — the cap must come before the top step.
    from slogqual.analysis.scaling import COUNT_SIGMAS, KNEE_GAIN_PER_DOUBLING

    def log_rate(step):
        return sum(v["write_bytes_s"] for v in step["vdevs"] if v["section"] == "logs" and v["depth"] == 1)

    knees = a["knees"]  # knees count all LUNs' threads
    capped_steps = sorted((s for s in doc["steps"] if s["config"] == "sync=always + SLOG" and s.get("candidate") == capped),
                          key=lambda s: s["threads"])
    at_cap = next((s for s in capped_steps if log_rate(s) >= 0.85 * cap), None)
    figures = [(s["threads"], round(log_rate(s) / 2**20, 2), s["ios"]) for s in capped_steps]
    assert at_cap is not None and at_cap is not capped_steps[-1], (figures, cap / 2**20)
    first = at_cap["threads"]
    # the knee (the analysis's: less than 10 % per doubling from there) comes at the cap at the latest; a step
    # just under the cap's band may already be on the flat (slowed run 17: 3.45, 4.44, 4.54 MiB/s at 2, 8, 32
    # threads on a 4.50 cap — 0.77 of it at the first step, +19 % to the second over two doublings: a knee at 2)
    knee = knees[f"sync=always + SLOG [{capped}]"]
    assert knee["saturated"] and knee["threads"] <= first, (knees, figures)
    c_low, c_top = at_cap, capped_steps[-1]
    doublings = math.log2(c_top["threads"] / c_low["threads"])
    counting = COUNT_SIGMAS * (1 / c_low["ios"] + 1 / c_top["ios"]) ** 0.5
    # flat from there: no step's log vdev goes above the cap's band (the throttle binds: the evidence that the
    # curve cannot rise; the top step is in the band, asserted above), and the pool's rate rises by less than
    # the knee's 10 % per doubling. Where the cap is reached at the first step (unslowed: four doublings to the
    # top) the rise's two-sigma counting band must stay under that too; from a later step (slowed: two
    # doublings, ~480 IOs a step, a band of +-12 %) the band is wider than the whole allowance, and the log vdev
    # at its cap is the evidence (slowed run 10: 0.94 and 1.00 of the cap, the pool's rate +5 % per doubling,
    # its band's top 11 %). A step between may dip below the band on a slowed host: the cap is nbdkit's on the
    # host, and the host's CPU hogs starve it (slowed run 15: 4.06, 3.25, 4.06 MiB/s at 2, 8, 32 threads on a
    # 4.06 cap, the guest 50-67 % busy) — a dip, not a rise, is no evidence against the flat curve.
    assert all(log_rate(s) <= 1.15 * cap for s in capped_steps if s["threads"] >= first), figures
    rise = c_top["mbps"] / c_low["mbps"]
    assert rise < (1 + KNEE_GAIN_PER_DOUBLING) ** doublings, (c_low, c_top)
    if c_low is capped_steps[0]:
        assert rise * (1 + counting) < (1 + KNEE_GAIN_PER_DOUBLING) ** doublings, (c_low, c_top, counting)
    # the pool is not what flattens the capped log: sync=standard rises past the capped log's knee. Where it is flat
    # from (scaling.saturation: every later step short of 10 % a doubling, counting error included; a curve that
    # dips and rises again is not flat), where the guest's CPU ends it, comes later or not at all (in lanes, with a
    # second guest on the host's other core: 28.4 -> 62.6 -> 74.2 MiB/s, the guest 99.9 % busy, flat from 8 threads;
    # alone it rose to the top). Not the simple knee, the first doubling short of 10 %: slowed run 22 (2026-11-29)
    # went 19.5 -> 22.9 -> 46.8 MiB/s at 2, 8, 32 threads, the guest 97-99 % busy — a "knee" at 2, then twice as much
    from slogqual.analysis.scaling import Step, saturation
    std_steps = [Step(threads=s["threads"], iops=s["iops"], mbps=s["mbps"], ios=s["ios"])
                 for s in doc["steps"] if s["config"] == "sync=standard"]
    std_flat = saturation(std_steps, "mbps")
    assert std_flat is None or std_flat.threads > first, (knees, [(s.threads, round(s.mbps, 1)) for s in std_steps])

    # the NVDIMM log goes past the capped log's cap, its ZIL stayed on the log vdev (no "spilled" problem),
    # and the slower-candidate sentence names the capped log
    p_low, p_top = by[("sync=always + SLOG", pmem, low)], by[("sync=always + SLOG", pmem, top)]
    assert p_top["mbps"] * 2**20 > 1.15 * cap, p_top
    assert a["slower_log"].startswith((f"The slower log device {capped}", f"The log device {capped}",
                                       f"The log candidates' curves cross: {capped} is faster")), a["slower_log"]
    assert a["problems"] == [], a["problems"]
    # ... and keeps rising (x2.03, x1.74, x1.30, x1.99 from 2 to 32 threads in four recorded runs): its best
    # step above its first by more than x1.15, well over a step's counting error. The guest's CPU share of
    # every step is recorded (/proc/stat in the guest) and carried in a failure: the guest is CPU-busy from
    # the first step (98.7 % at the NVDIMM's, 2026-11-26) and its throughput still rises.
    assert all((s.get("cpu") or {}).get("busy_share") is not None for s in doc["steps"]), doc["steps"]
    # ... and the write throttle's counts over it (the dmu_tx kstat, pool.evidence.ThrottleWitness)
    assert all(s["write_throttle"]["source"] == "global" and s["write_throttle"]["assigned"] > 0
               for s in doc["steps"]), [s.get("write_throttle") for s in doc["steps"]]
    p_best = max((s for s in doc["steps"] if (s["config"], s.get("candidate")) == ("sync=always + SLOG", pmem)),
                 key=lambda s: s["mbps"])
    # Or the host set the pace from the first step and the verdict says so (issue #37): slowed run 16, two CPU hogs,
    # the NVDIMM's steps 11.8 / 11.9 / 11.4 MiB/s at 100 / 97 / 90 % guest CPU while sync=standard rose 14.5 -> 46
    # (its log vdev at 3 % of its sweep): the analysis named the host (host-limit), not the log.
    pmem_steps = [(s["threads"], s["mbps"], s["ios"], s["cpu"]) for s in doc["steps"] if s.get("candidate") == pmem]
    pmem_findings = {f["kind"] for c in a["candidates"] if c["device"] == pmem for f in c["findings"]}
    host_paced = p_low["cpu"]["busy_share"] >= HOST_SATURATED and "host-limit" in pmem_findings
    assert p_best["mbps"] / p_low["mbps"] > 1.15 or host_paced, (pmem_steps, pmem_findings)

    # the advisor (issue #29) from this run's own evidence — the capped log's sweep (--sweep-logs: 4K ... 128K in
    # this guest, before the pools) and the run's sync=standard steps — predicts the capped log's top step, where
    # its log vdev sits on the cap, within ±20 % of what was measured, and names the log's bandwidth as its limit
    from slogqual.analysis import advisor
    from slogqual.results import load_sweep
    from slogqual.results.scenario import ScenarioResult
    result = ScenarioResult.from_dict(doc, str(out))
    sweep = load_sweep(doc["log_sweeps"][capped]["source"])
    luns = doc["scenario"]["luns"]
    w = advisor.Workload("iscsi", doc["scenario"]["bs"], doc["scenario"]["volblocksize"],
                         [t * luns for t in doc["scenario"]["threads"]], zils=luns)
    advice = advisor.advise([(capped, sweep)], w, advisor.Tunables(), advisor.data_from_scenario(result, "wide"))
    from slogqual.report.advice import document
    from slogqual.results.advice import AdviceResult
    rows = {r["threads"]: r for r in advisor.verify(AdviceResult.from_dict(document(advice)), result)}
    assert rows[top * luns]["binding"] == "log-bandwidth-bound", rows
    # The sweep read the capped log over its cap by the rate filter's burst: RATE_BURST_S of cap at the start of
    # each size's run, after the settle pause refilled the bucket (tests/test_lab.py's calibrated-cap test holds a
    # sweep to the same allowance), which the pool's steps — 10 s after a 2 s ramp that drains it — never get. The
    # prediction, resting on the sweep's bandwidth, carries that share; it is held to ±20 % with it taken out,
    # and only as far as the burst explains (slowed run 24: the 128 KiB point 4.57 MiB/s on a 4.17 cap, x1.096,
    # the prediction +21.1 %, +10 % without the burst).
    from slogqual.lab.runner import RATE_BURST_S
    best = max(p.mbps for p in sweep.points) * 2**20
    allowed = 1 + float(RATE_BURST_S) / sweep.params["runtime_s"]
    burst = min(max(best / cap, 1.0), allowed)
    r = rows[top * luns]
    error = r["predicted_iops"] / burst / r["measured_iops"] - 1
    assert abs(error) <= 0.20, (rows, burst, [(p.size, p.mbps) for p in sweep.points])


def _peak(doc, config):
    return max(s["iops"] for s in doc["steps"] if s["config"] == config)


def test_iscsi_over_lio_and_open_iscsi_in_the_lab(zfs_guest):
    """iscsi-4k-randwrite-lio, quick: every configuration over a real iSCSI session on the guest's loopback (the
    run the iSCSI interrupt job stopped at a seeded moment and resumed: its steps from both runs)."""
    doc = _protocol_job(zfs_guest, "scenario-interrupt-iscsi", "r.json")
    attachments = doc["transport"]["attachments"]
    assert doc["transport"]["config"]["kind"] == "iscsi"
    assert set(attachments) == {s["config"] + (f" [{s['candidate']}]" if s["candidate"] else "") for s in doc["steps"]}
    for label, rec in attachments.items():
        # the session existed during the steps: LIO's target on loopback, each zvol a LUN the initiator saw as a disk
        assert rec["kind"] == "iscsi" and rec["portal"] == "127.0.0.1:3260" and rec["iqn"].startswith(
            "iqn.2003-01.org.slogqual:slogqual-"), rec
        assert len(rec["luns"]) == doc["scenario"]["luns"]
        assert all(lun["disk"].startswith("/dev/sd") and lun["zvol"].startswith("/dev/zvol/slogqual-")
                   for lun in rec["luns"]), rec
        assert rec["negotiated"] and rec["versions"]["lio"] and rec["target"] == "LIO (configfs)", rec
    for s in doc["steps"]:
        assert s["transport"] == "iscsi"
        # two fio servers on loopback drove every step, one LUN each: the merged IOPS are their sum (up to
        # fio's own arithmetic: each client's IOPS over its runtime, the merged over the longest, in ms)
        clients = s["clients"]
        assert len(clients) == 2 and len({c["endpoint"] for c in clients}) == 2, s
        assert sum(c["ios"] for c in clients) == s["ios"]
        longest = max(c["runtime_ms"] for c in clients)
        slack = sum(c["ios"] * 1000.0 * (1.0 / c["runtime_ms"] - 1.0 / longest) for c in clients) + 1e-6 * 2
        assert s["iops"] - 1e-6 <= sum(c["iops"] for c in clients) <= s["iops"] + slack, s
        # an initiator's plain writes reach the ZIL only under sync=always; the log only with a SLOG
        if s["sync"] == "always" and s["log"] != "none":
            assert s["zil"]["slog_bytes"] > 0, s
        else:
            assert s["zil"]["slog_bytes"] == 0, s
        if s["sync"] == "standard":
            assert s["zil"]["normal_bytes"] == 0, s
    # the fast log (NVDIMM) makes sync=always over iSCSI faster than no SLOG
    assert _peak(doc, "sync=always + SLOG") > _peak(doc, "sync=always, no SLOG")


def test_the_iscsi_protocol_adds_latency_to_the_same_load(zfs_guest):
    """The same load, same guest and devices: over iSCSI each IO costs more than locally. The two
    interrupt jobs run iscsi-4k-randwrite's shape (2 zvol LUNs, 4 KiB random writes, volblocksize 16K), one
    locally (tests/lab_jobs/interrupt-zvol.toml) and one over LIO + open-iscsi (iscsi-4k-randwrite-lio), and
    both end complete after --resume: their sync=standard steps at the same thread count are the pair (a
    separate local run of iscsi-4k-randwrite cost 100 s of CI for this one relation)."""
    local, lio = (json.loads((zfs_guest.job(job)[0] / "r.json").read_text())
                  for job in ("scenario-interrupt", "scenario-interrupt-iscsi"))
    assert local["status"] == lio["status"] == "complete", (local["status"], lio["status"])
    assert local["transport"]["config"]["kind"] == "local" and lio["transport"]["config"]["kind"] == "iscsi"
    pairs = [(a, b) for a in lio["steps"] for b in local["steps"]
             if (a["config"], a["threads"]) == (b["config"], b["threads"]) and a["config"] == "sync=standard"]
    assert pairs
    assert sum(a["lat_us"]["mean"] for a, _ in pairs) > sum(b["lat_us"]["mean"] for _, b in pairs), pairs


def test_nfs_over_knfsd_and_the_kernel_client_in_the_lab(zfs_guest):
    """nfs-sync-knfsd, quick: every configuration over a real NFSv3 mount on the guest's loopback."""
    doc = _protocol_job(zfs_guest, "nfs-sync-knfsd")
    for label, rec in doc["transport"]["attachments"].items():
        # the mount existed during the steps: the kernel's own view of it (mountstats) was recorded
        assert rec["kind"] == "nfs" and rec["export"].startswith("127.0.0.1:/"), rec
        assert rec["mount_options"] and rec["mount_options"].get("vers") == "3", rec
        assert rec["nfsd_threads"] and rec["nfsd_threads"] > 0
    for s in doc["steps"]:
        assert s["transport"] == "nfs"
        # stable (O_DSYNC) NFS writes are committed through the ZIL under sync=standard too
        assert s["zil"]["slog_bytes"] + s["zil"]["normal_bytes"] > 0, s
        if s["log"] == "none":
            assert s["zil"]["slog_bytes"] == 0, s
        else:
            assert s["zil"]["slog_bytes"] > 0, s


DIRECT_IO_WRITES = 128  # tests/lab_jobs/direct_io.sh's writes per mode, 128 KiB each (zfs_guest.py passes it)


def _zil_delta(d, direct):
    from slogqual.tools.kstat import parse_kstat

    before = parse_kstat((d / f"zil-before-{direct}.txt").read_text())
    after = parse_kstat((d / f"zil-after-{direct}.txt").read_text())
    return {k: after[k] - before[k] for k in after if isinstance(after[k], int) and k in before}


def test_an_o_direct_dataset_write_goes_indirect_and_skips_the_log_where_a_buffered_one_is_copied_in(zfs_guest):
    """The Direct IO trap (issue #39), on the guest's real OpenZFS: with zfs_dio_enabled at 1 (Linux's default
    since 2.3) an O_DIRECT write to a dataset is written in place and logged indirectly — its data never reaches
    the log vdev — where the same buffered write is copied into the log. A dataset load run O_DIRECT does not
    exercise the log as an NFS client's writes do: the runner runs dataset loads buffered and refuses O_DIRECT
    (pool.engine.check_loads). Relations of the ZIL kstat (tests/lab_jobs/direct_io.sh)."""
    d, rc, log = zfs_guest.job("direct-io")
    assert rc == "0", log
    assert (d / "dio_enabled.txt").read_text().strip() == "1"
    for direct in (0, 1):
        job = json.loads((d / f"fio-{direct}.json").read_text())["jobs"][0]["write"]
        assert job["total_ios"] == DIRECT_IO_WRITES and job["io_bytes"] == DIRECT_IO_WRITES * 128 * 1024
    buffered, o_direct = _zil_delta(d, 0), _zil_delta(d, 1)
    # buffered: every 128 KiB write copied into log blocks (need-copy records), written on the log vdev
    assert buffered["zil_itx_needcopy_count"] >= DIRECT_IO_WRITES and buffered["zil_itx_indirect_count"] == 0
    assert buffered["zil_itx_metaslab_slog_bytes"] >= DIRECT_IO_WRITES * 128 * 1024
    # O_DIRECT: the same writes logged indirectly, a block pointer each, the data written in place
    assert o_direct["zil_itx_indirect_count"] >= DIRECT_IO_WRITES
    assert o_direct["zil_itx_needcopy_count"] == 0 and o_direct["zil_itx_copied_count"] == 0
    assert o_direct["zil_itx_metaslab_slog_bytes"] < buffered["zil_itx_metaslab_slog_bytes"] / 20
