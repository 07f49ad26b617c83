"""The host probe (issue #37): its refusals here (this host has no ZFS module), its figures from a probe
recorded in the lab guest (tests/fixtures/host/), and the advisor bounded by them."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from dataclasses import replace

from slogqual.analysis import host as host_analysis
from slogqual.report import host as host_words
from slogqual.results.host import HostProbeResult

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "host")


def slogqual(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "slogqual", *args], capture_output=True, text=True, env=env, cwd=cwd)


def test_a_host_without_zfs_gets_one_line_and_exit_2_and_nothing_written(tmp_path):
    out = tmp_path / "host.json"
    bare = tmp_path / "bin"
    bare.mkdir()
    os.symlink(sys.executable, bare / "python3")
    for env in (None, dict(os.environ, PATH=str(bare))):  # this host's zfs command without a module; no zfs at all
        p = slogqual("host-probe", "--protocol", "nfs", "--bs", "64k", "-o", str(out), env=env, cwd=tmp_path)
        assert p.returncode == 2, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1 and "ZFS" in p.stderr, p.stderr
        assert not out.exists() and sorted(os.listdir(tmp_path)) == ["bin"]


def test_a_ram_dir_that_is_not_in_ram_is_refused_before_anything(tmp_path):
    out = tmp_path / "host.json"
    p = slogqual("host-probe", "--ram-dir", str(tmp_path), "-o", str(out), cwd=tmp_path)
    fs = subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "--target", str(tmp_path)], capture_output=True,
                        text=True).stdout.strip()
    if fs in ("tmpfs", "ramfs"):
        pytest.skip(f"{tmp_path} is on {fs} here")
    assert p.returncode == 2 and "not in RAM" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not out.exists()


@pytest.mark.parametrize("args, words", [
    (["--threads", "1,3", "--zils", "2"], "multiple of --zils"),
    (["--ram-dir", "/nonexistent-slogqual"], "no such directory"),
    (["--bs", "4q"], "--bs"),
    (["--repeats", "0"], "--repeats"),
])
def test_bad_input_is_one_line(tmp_path, args, words):
    p = slogqual("host-probe", *args, "-o", str(tmp_path / "h.json"), cwd=tmp_path)
    assert p.returncode == 2 and words in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not (tmp_path / "h.json").exists()


def test_the_copy_cost_fit_takes_the_per_write_and_per_byte_parts_apart():
    # two sizes, the per-write CPU: 40 us at 4 KiB, 200 us at 128 KiB -> a + b*size through both
    c = host_analysis.fit_copy([4096, 131072], [1000, 500], [0.040, 0.100])
    assert c.one(4096) == pytest.approx(40e-6) and c.one(131072) == pytest.approx(200e-6)
    assert c.per_byte_s > 0 and c.per_write_s > 0
    # noise that would make the per-byte part negative puts it all per write
    c = host_analysis.fit_copy([4096, 8192], [1000, 1000], [0.050, 0.049])
    assert c.per_byte_s == 0 and c.per_write_s == pytest.approx(49.5e-6)


HOST = os.path.join(FIXTURES, "lab-nfs-64k-data-disks.host.json")
RAM_HOST = os.path.join(FIXTURES, "lab-nfs-64k.host.json")
ADVISOR = os.path.join(os.path.dirname(FIXTURES), "advisor")
SATA = os.path.join(ADVISOR, "iscsi-4k-lab.log0-sata-ssd.sweep.json")  # swept 4K..128K: the lwbs of 64K writes
PMEM = os.path.join(ADVISOR, "iscsi-4k-lab.log1-nvdimm.sweep.json")
HDD_4K_ONLY = os.path.join(ADVISOR, "lab-sweep-4k-hdd.json")


def load(path):
    with open(path) as fh:
        return HostProbeResult.from_dict(json.load(fh), path)


@pytest.mark.parametrize("path", [HOST, RAM_HOST])
def test_a_recorded_probe_s_ceiling_is_the_least_of_its_cpu_and_path_ceilings_with_the_copies_out(path):
    doc = load(path)
    steps = host_analysis.steps_from(doc.steps, doc.copy)
    path_1 = host_analysis.uncontended_path(steps)
    for s in steps:
        assert s.cpu_s_per_io == pytest.approx(s.cpu_busy * s.cpus / s.iops)
        assert 0 < s.copy_s_per_io < s.cpu_s_per_io  # the copies are a part of the CPU, not all of it
        assert s.zfs_cpu_s_per_io == pytest.approx(s.cpu_s_per_io - s.copy_s_per_io)
        assert s.cpu_ceiling_iops == pytest.approx(s.cpus / s.zfs_cpu_s_per_io)
        assert s.path_ceiling_iops == pytest.approx(s.threads / (path_1 / 1e6))
        assert s.ceiling_iops == min(s.cpu_ceiling_iops, s.path_ceiling_iops)
        # with the RAM's copies taken out the ceiling stands above what the RAM pool itself did
        assert s.ceiling_iops > s.iops
        assert s.records_per_lwb == pytest.approx(s.iops / s.log_writes_s)
        # on the pool's own data disks only the log's blocks were RAM copies; in an all-RAM pool the data's too
        logs_only = doc.copy.of(s.log_writes_s, s.log_bytes_s) / s.iops
        if doc.ram.get("data_devices"):
            assert s.data_writes_s is None and s.copy_s_per_io == pytest.approx(logs_only)
        else:
            assert s.data_bytes_s > 0 and s.copy_s_per_io > logs_only


def advise(tmp_path, *args):
    out = tmp_path / "advice.json"
    p = slogqual("advise", *args, "--tunables", "defaults", "--json", "-o", str(out), cwd=tmp_path)
    return p, (json.loads(out.read_text()) if out.exists() else None)


def test_with_the_host_probe_every_figure_is_the_least_of_log_and_host_and_says_which(tmp_path):
    p, doc = advise(tmp_path, "--log", SATA, PMEM, "--protocol", "nfs", "--bs", "64k", "--threads", "1,2,8",
                    "--host", HOST)
    assert p.returncode == 0, p.stderr
    host = {s["threads"]: s for s in doc["host"]["steps"]}
    assert doc["host"]["source"] == HOST
    for c in doc["candidates"]:
        for s in c["steps"]:
            lim = s["limits"]
            ceiling = host.get(s["threads"], {}).get("ceiling_iops")
            if ceiling is None:  # 1 writer: not probed (2 and 8 were), no ceiling made up
                assert lim["host_iops"] is None
                continue
            assert s["iops"] <= lim["host_iops"] + 0.1 and s["iops"] <= lim["log_latency_iops"] + 0.1
            if s["binding"] == "host-bound":
                assert s["upper_bound"] == "host-ceiling" and lim["host_iops"] < lim["log_latency_iops"]
    # the NVDIMM's own stores cost the CPU: its host figure sits below the bare ceiling; the SATA log's does not
    pmem = next(c for c in doc["candidates"] if c["class"] == "nvdimm")
    sata = next(c for c in doc["candidates"] if c["class"] == "sata-ssd")
    at8 = {c["class"]: next(s for s in c["steps"] if s["threads"] == 8)["limits"]["host_iops"] for c in (pmem, sata)}
    assert at8["nvdimm"] < at8["sata-ssd"] == pytest.approx(host[8]["ceiling_iops"], abs=0.1)
    text = slogqual("advise", "--advice", str(tmp_path / "advice.json"), cwd=tmp_path).stdout
    assert text.splitlines()[0].startswith("host figure: the host probe (")


def test_one_writer_is_the_software_path_plus_the_log_s_write_and_flush(tmp_path):
    p, doc = advise(tmp_path, "--log", SATA, "--protocol", "nfs", "--bs", "64k", "--threads", "1", "--host", HOST)
    assert p.returncode == 0, p.stderr
    (s,) = doc["candidates"][0]["steps"]
    path = host_analysis.uncontended_path(host_analysis.steps_from(load(HOST).steps, load(HOST).copy))
    assert s["batch_basis"] == "one-writer" and s["path_us"] == pytest.approx(path, abs=0.1)
    assert s["limits"]["log_latency_iops"] == pytest.approx(1e6 / s["commit_lat_us"], rel=1e-3)
    assert s["commit_lat_us"] > path  # the path, then the log's own write+flush


def test_a_probe_of_another_load_is_refused_in_one_line(tmp_path):
    p, doc = advise(tmp_path, "--log", SATA, "--protocol", "iscsi", "--bs", "4k", "--threads", "1,2", "--host", HOST)
    assert p.returncode == 2 and doc is None
    assert len(p.stderr.strip().splitlines()) == 1 and "slogqual host-probe --protocol iscsi --bs 4K" in p.stderr


def test_a_figure_from_lwb_sizes_the_sweep_never_wrote_is_neither_prediction_nor_bound(tmp_path):
    # the seeded configuration of issue #37: a 4K-only sweep asked about 64 KiB writes (68K-128K lwbs)
    p, doc = advise(tmp_path, "--log", HDD_4K_ONLY, "--protocol", "nfs", "--bs", "64k", "--threads", "1,4,16")
    assert p.returncode == 0, p.stderr
    for s in doc["candidates"][0]["steps"]:
        assert s["extrapolated"] and s["upper_bound"] is None
    text = slogqual("advise", "--advice", str(tmp_path / "advice.json"), cwd=tmp_path).stdout
    assert "neither a prediction nor a bound; sweep the log up to 128K" in text
    assert "≤" not in "".join(l for l in text.splitlines() if l.startswith(("1 ", "4 ", "16 ")))


def test_the_host_document_is_kept_in_the_store_and_advise_reads_it_back_from_there(tmp_path):
    from slogqual.store import Store

    store = tmp_path / "store.db"
    with Store(str(store)) as st:
        run_id = st.record(load(HOST))
    out = tmp_path / "advice.json"
    p = slogqual("advise", "--log", SATA, "--protocol", "nfs", "--bs", "64k", "--threads", "2,8", "--tunables",
                 "defaults", "--store", str(store), "--host", f"store:{run_id}", "--json", "-o", str(out), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    from_file = advise(tmp_path / "f", "--log", SATA, "--protocol", "nfs", "--bs", "64k", "--threads", "2,8",
                       "--host", HOST) if (tmp_path / "f").mkdir() is None else None
    stored = json.loads(out.read_text())
    assert [s["iops"] for s in stored["candidates"][0]["steps"]] == \
        [s["iops"] for s in from_file[1]["candidates"][0]["steps"]]
    assert stored["host"]["source"].startswith(f"store:{run_id}")


def test_a_sweep_point_s_cpu_per_write_is_what_the_point_took_over_the_quiet_before_it():
    # ticks as /proc/stat counts them (USER_HZ 100), two CPUs: a quiet settle 5 % busy, then a point 40 % busy
    cpu = host_analysis.write_cpu(idle_busy=10, idle_total=200, busy=160, total=400, cpus=2, ios=1000, hz=100)
    assert cpu["baseline_share"] == pytest.approx(0.05) and cpu["busy_share"] == pytest.approx(0.40)
    assert cpu["s_per_io"] == pytest.approx((160 - 0.05 * 400) / 100 / 1000)
    assert cpu["basis"] == "system-less-baseline"
    # a settle too short to be a baseline subtracts nothing, and says so; no IOs, no figure
    short = host_analysis.write_cpu(idle_busy=1, idle_total=20, busy=160, total=400, cpus=2, ios=1000, hz=100)
    assert short["basis"] == "system" and short["s_per_io"] > cpu["s_per_io"]
    assert host_analysis.write_cpu(0, 200, 160, 400, 2, 0, 100) is None


def test_a_window_that_saw_no_log_write_takes_the_zil_kstats_count_over_the_step():
    """Recorded on the slowed host (tests/fixtures/host/README.md): zpool iostat's one report inside the 2-second
    window of the 1-writer step shows the log writing nothing, the ZIL kstats 1,146 log blocks in the step. The
    probe takes the kstats' count over fio's run (ramp + runtime) there; the 4-writer step keeps iostat's figure."""
    from slogqual.host.door import _step
    from slogqual.results.scenario import ScenarioResult

    doc = ScenarioResult.load(os.path.join(FIXTURES, "lab-iscsi-4k-slowed-stalled-window.scenario.json"))
    one, four = doc.steps
    logs = [v for v in one.extra["vdevs"] if v["section"] == "logs"]
    assert [v["write_ops_s"] for v in logs] == [0] and one.zil.slog_count > 1000  # the stalled window, as recorded
    s1, s4 = _step(one, ram_data=False, ramp_s=1.0), _step(four, ram_data=False, ramp_s=1.0)
    span = one.extra["runtime_ms"] / 1000 + 1.0
    assert s1.log_basis == "zil-kstats" and s1.log_writes_s == pytest.approx(one.zil.slog_count / span)
    assert s1.log_bytes_s == pytest.approx(one.zil.slog_bytes / span) and s1.log_writes_s > 0
    assert s4.log_basis == "iostat" and s4.log_writes_s == four.extra["log_write_ops_s"] > 0
    derived = host_analysis.steps_from([s1, s4], None)
    assert all(d.records_per_lwb and d.lwb_bytes for d in derived)  # figures the copy is taken out by


def test_the_txg_writes_of_the_window_are_kept_whichever_the_data_vdevs():
    """The data vdevs' writes in a step's window are the txg syncs it held: kept as evidence on the pool's own disks
    too (txg_*_s), where data_*_s — the RAM copies to take out — are None by design (a session read that None as
    "no txg in the probe", docs/advisor.md). Recorded in the lab (tests/fixtures/host/README.md)."""
    from slogqual.host.door import _step
    from slogqual.report import host as host_words
    from slogqual.results.scenario import ScenarioResult

    doc = ScenarioResult.load(os.path.join(FIXTURES, "lab-iscsi-4k-slowed-stalled-window.scenario.json"))
    for raw in doc.steps:
        disks = [v for v in raw.extra["vdevs"] if v["section"] == "data" and v["depth"] == 1]
        on_disks, in_ram = _step(raw, ram_data=False, ramp_s=1.0), _step(raw, ram_data=True, ramp_s=1.0)
        assert on_disks.data_bytes_s is None and in_ram.data_bytes_s == sum(v["write_bytes_s"] for v in disks)
        for s in (on_disks, in_ram):
            assert s.txg_bytes_s == sum(v["write_bytes_s"] for v in disks)
            assert s.txg_writes_s == sum(v["write_ops_s"] for v in disks)
    steps = [_step(raw, ram_data=False, ramp_s=1.0) for raw in doc.steps]
    assert any(s.txg_bytes_s for s in steps)  # this recording's windows held txg writes
    probe = load(HOST)
    probe.steps = host_analysis.steps_from(steps, probe.copy)
    table = host_words.table(probe)
    head = next(i for i, line in enumerate(table) if line.lstrip().startswith("writers"))
    at = table[head].index("txg MB/s")  # the columns are fixed-width, right-aligned under their heads
    for s, row in zip(probe.steps, table[head + 1:]):
        assert row[at:at + len("txg MB/s")].strip() == f"{s.txg_bytes_s / 1e6:.1f}"


SIX = os.path.join(FIXTURES, "lab-iscsi-4k-six-probes")


def test_each_writer_count_keeps_its_best_pass_and_the_document_says_every_pass(tmp_path):
    """Six one-pass probes of one shape in one guest (tests/fixtures/host/README.md) as six passes: each thread
    count keeps the pass with the highest ceiling, says which and every pass's ceiling; the first pass at one
    writer, in a fresh guest, was the lowest and is not the one kept."""
    probes = [load(os.path.join(SIX, f"p{i}.json")) for i in range(1, 7)]
    passes = [host_analysis.steps_from(p.steps, p.copy) for p in probes]
    best = host_analysis.best_of(passes)
    assert [s.threads for s in best] == [1, 4, 16]
    for s in best:
        mine = [next(x for x in p if x.threads == s.threads) for p in passes]
        assert s.pass_ceilings_iops == [x.ceiling_iops for x in mine]
        assert s.ceiling_iops == max(s.pass_ceilings_iops) == mine[s.probe_pass - 1].ceiling_iops
        assert s.iops == mine[s.probe_pass - 1].iops  # the pass's own step, not a mix of passes
    one = best[0]
    assert one.pass_ceilings_iops[0] == min(one.pass_ceilings_iops) and one.probe_pass != 1
    # one pass: its steps as they are
    assert [(s.threads, s.ceiling_iops, s.probe_pass) for s in host_analysis.best_of(passes[:1])] == \
        [(s.threads, s.ceiling_iops, None) for s in passes[0]]
    # the document keeps every pass and reads back the same
    doc = probes[0]
    doc.steps, doc.passes = best, passes
    doc.pass_scenarios = [f"h.json.scenario{'' if n == 1 else f'.pass{n}'}.json" for n in range(1, 7)]
    again = HostProbeResult.from_dict(json.loads(json.dumps(doc.to_dict())), "round trip")
    assert again.to_dict() == doc.to_dict() and len(again.passes) == 6
    from slogqual.report import host as host_words
    table = host_words.table(again)
    row = table[-2]  # sixteen writers, before the closing line
    every = " / ".join(f"{c:.0f}" for c in best[-1].pass_ceilings_iops)
    assert "6 passes over the writer counts" in table[2] and row.endswith(f"{best[-1].probe_pass:>4}  {every}"), row


def test_the_advisor_takes_the_best_pass_s_ceiling(tmp_path):
    """The advice rests on each count's best pass: the same as a one-pass document of those steps, and at one
    writer above what the first pass alone gave (the first pass, in a fresh guest, ran lowest)."""
    probes = [load(os.path.join(SIX, f"p{i}.json")) for i in range(1, 7)]
    passes = [host_analysis.steps_from(p.steps, probes[0].copy) for p in probes]  # one probe: one copy measured

    def host_iops(name, steps, every=()):
        doc = load(os.path.join(SIX, "p1.json"))
        doc.steps, doc.passes = steps, list(every)
        host = tmp_path / f"{name}.json"
        host.write_text(json.dumps(doc.to_dict()))
        p, advice = advise(tmp_path, "--log", PMEM, "--protocol", "iscsi", "--bs", "4k", "--threads", "1,4,16",
                           "--host", str(host))
        assert p.returncode == 0, p.stderr
        return [s["limits"]["host_iops"] for s in advice["candidates"][0]["steps"]]

    best = host_analysis.best_of(passes)
    every = host_iops("every", best, passes)
    assert every == host_iops("best-only", [replace(s, probe_pass=None, pass_ceilings_iops=None) for s in best])
    assert every[0] > host_iops("first", passes[0])[0]


def test_the_passes_progress_says_which_pass_and_counts_the_passes_to_come_in_its_eta():
    import io
    from slogqual.progress import PassProgress, Progress

    stream = io.StringIO()
    each = PassProgress(Progress(stream), passes=2)
    for n in (1, 2):
        each.n = n
        each.reset()  # as the scenario engine does at each pass's start
        for i in (1, 2, 3):
            each.begin("host-probe-iscsi [perfect log] 4 thread(s)/LUN x 1 LUNs", i, 3, estimate_s=10)
            each.end("1000 IOPS")
    lines = [l for l in stream.getvalue().splitlines() if " ETA " in l]
    assert [l.split(": ", 2)[1] for l in lines] == ["pass 1/2"] * 3 + ["pass 2/2"] * 3
    assert lines[0].endswith("(1/3) ETA 1:00")  # six steps to go at the estimate before any step finished
    assert lines[3].endswith("(1/3) ETA 0:00")  # the first pass's steps (instant here) kept as the estimate
    one = io.StringIO()
    single = PassProgress(Progress(one), passes=1)
    single.begin("host-probe-iscsi", 1, 2, estimate_s=10)
    assert one.getvalue() == "slogqual: host-probe-iscsi (1/2) ETA 0:20\n"  # one pass: no pass to name
    quiet = io.StringIO()
    q = PassProgress(Progress(quiet, quiet=True), passes=3)
    q.begin("x", 1, 1, 1.0)
    assert quiet.getvalue() == ""


# the log pass (host-probe --log), recorded in the fitting draw of model 4 (contrib/advisor_check/run.py 1129 --fit):
# the same load with the candidate as the log on RAM data files, after the RAM log's passes
LOG_PASS_DRAW = os.path.join(ADVISOR, "check", "fit-1129-model4", "lab")


def log_pass_configs():
    return sorted(os.listdir(LOG_PASS_DRAW))


@pytest.mark.parametrize("name", log_pass_configs())
def test_the_log_pass_takes_out_the_data_files_copies_alone_and_its_ceiling_is_its_cpu_ceiling(name):
    """The log pass's log is a device: its writes are no copy and its time is the device's, so only the RAM data
    files' writes are taken out and no software path is made from it; the same steps read as a RAM log's would take
    the log's bytes out as copies too."""
    d = os.path.join(LOG_PASS_DRAW, name)
    doc = load(os.path.join(d, "host.json"))
    lp = doc.log_pass
    assert lp is not None and lp.device
    assert lp.identity.get("serial") or name.startswith("nvdimm")  # a QEMU NVDIMM has no serial to read
    assert [os.path.basename(p) for p in lp.pass_scenarios][0] == "host.json.log.scenario.json"
    for s in lp.steps:
        again = host_analysis.derive(replace(s, copy_s_per_io=None, zfs_cpu_s_per_io=None, path_us=None), doc.copy,
                                     log_in_ram=False)
        assert again.copy_s_per_io == pytest.approx(doc.copy.of(s.data_writes_s, s.data_bytes_s) / s.iops)
        assert again.path_us is None and s.path_us is None and s.ceiling_iops == s.cpu_ceiling_iops
        as_ram = host_analysis.derive(s, doc.copy)  # the same step as if its log were RAM
        assert as_ram.copy_s_per_io > again.copy_s_per_io and as_ram.path_us is not None
    assert HostProbeResult.from_dict(doc.to_dict()).to_dict() == doc.to_dict()  # the document round-trips
    table = "\n".join(host_words.table(doc))
    line = next(x for x in table.splitlines() if x.startswith(f"log pass: the same load with {lp.device} "))
    assert (f"serial {lp.identity['serial']})" in line) if lp.identity.get("serial") else "serial" not in line


@pytest.mark.parametrize("name", log_pass_configs())
def test_the_host_ceiling_is_the_lower_of_the_ram_log_s_and_the_log_pass_s(tmp_path, name):
    """Model 4: where the probe ran a pass with this log (its serial the sweep's), each step's host ceiling is the
    lower of the RAM-log probe's (the log's swept CPU added) and that pass's; a probe whose pass ran with another
    device's serial is not taken for it, and the advice says why."""
    d = os.path.join(LOG_PASS_DRAW, name)
    doc = load(os.path.join(d, "host.json"))
    with open(os.path.join(os.path.dirname(LOG_PASS_DRAW), "plan.json")) as fh:
        layout = next(c["layout"] for c in json.load(fh)["configs"] if c["name"] == name)
    p, advice = advise(tmp_path, "--log", os.path.join(d, "log.sweep.json"), "--layout", layout, "--data",
                       os.path.join(d, "data.sweep.json"), os.path.join(d, "data.sweep.json"),
                       "--protocol", name.split("-")[-2], "--bs", name.split("-")[-1], "--threads", "2,8",
                       "--host", os.path.join(d, "host.json"))
    assert p.returncode == 0, p.stderr
    c = advice["candidates"][0]
    assert c["host_log_pass"]["used"] is True and c["host_log_pass"]["device"] == doc.log_pass.device
    kept = advice["host"]["log_pass"]  # what the advice took from the pass, in its own document
    assert kept["device"] == doc.log_pass.device and [s["threads"] for s in kept["steps"]] == [2, 8]
    at = {s.threads: s for s in doc.log_pass.steps}
    for s in c["steps"]:
        lim = s["limits"]
        assert lim["host_log_pass_iops"] == pytest.approx(at[s["threads"]].cpu_ceiling_iops, abs=0.1)
        assert lim["host_iops"] <= lim["host_log_pass_iops"] + 0.1 and s["iops"] <= lim["host_iops"] + 0.1
    words = slogqual("advise", "--advice", str(tmp_path / "advice.json"), cwd=tmp_path).stdout.splitlines()
    assert words[0].startswith("host figure: the host probe (")
    assert words[1].startswith(f"host probe's log pass with {doc.log_pass.device}: ") and "also that pass's" in words[1]
    # the same probe with its log pass's serial another device's: not taken, the RAM-log ceiling alone
    other = doc.to_dict()
    if doc.log_pass.identity.get("serial"):
        other["log_pass"]["identity"]["serial"] = "NOT-THIS-ONE"
    else:  # a device without a serial (a QEMU NVDIMM): told apart by its path
        other["log_pass"]["device"] = "/dev/NOT-THIS-ONE"
    (tmp_path / "other.json").write_text(json.dumps(other))
    p2, again = advise(tmp_path, "--log", os.path.join(d, "log.sweep.json"), "--layout", layout, "--data",
                       os.path.join(d, "data.sweep.json"), os.path.join(d, "data.sweep.json"),
                       "--protocol", name.split("-")[-2], "--bs", name.split("-")[-1], "--threads", "2,8",
                       "--host", str(tmp_path / "other.json"))
    assert p2.returncode == 0, p2.stderr
    c2 = again["candidates"][0]
    assert c2["host_log_pass"]["used"] is False and "NOT-THIS-ONE" in c2["host_log_pass"]["other_device"]["pass"]
    for s, s2 in zip(c["steps"], c2["steps"]):
        assert s2["limits"]["host_log_pass_iops"] is None and s2["limits"]["host_iops"] >= s["limits"]["host_iops"] - 0.1
    text = slogqual("advise", "--advice", str(tmp_path / "advice.json"), cwd=tmp_path).stdout
    assert "not taken" in text and "NOT-THIS-ONE" in text


def test_a_log_among_the_data_disks_is_refused_in_one_line_before_anything(tmp_path):
    p = slogqual("host-probe", "--data", "/dev/null", "--log", "/dev/null", "-o", str(tmp_path / "h.json"), cwd=tmp_path)
    assert p.returncode == 2 and "--log /dev/null: also among --data" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and not (tmp_path / "h.json").exists()


def test_where_the_log_pass_s_cpu_had_room_what_it_measured_with_this_log_is_a_limit_and_a_prediction(tmp_path):
    """Model 5: the log pass ran this load with this log at these writers; where its CPU had room (median busy
    below 90 %) the log set its pace, and the median of its passes' IOPS is a limit beside the sweep's — a
    prediction (the pool runs at it unless its data side is slower), stored with each pass's figure, its IOs and
    busy share, and said in words. Where the pass's CPU was saturated its rate is the RAM copies' too: not taken.
    On the fitting draw (fit-1129-model4): the SATA SSD logs' 2 writers are log-pass-bound (its pools 548 and 378
    against 579 and 401 measured by the pass); the NVDIMM's passes, and the SATA SSD NFS's at 8, ran saturated."""
    bound, saturated = [], []
    for name in log_pass_configs():
        d = os.path.join(LOG_PASS_DRAW, name)
        doc = load(os.path.join(d, "host.json"))
        with open(os.path.join(os.path.dirname(LOG_PASS_DRAW), "plan.json")) as fh:
            layout = next(c["layout"] for c in json.load(fh)["configs"] if c["name"] == name)
        out = tmp_path / name
        out.mkdir()
        p, advice = advise(out, "--log", os.path.join(d, "log.sweep.json"), "--layout", layout, "--data",
                           os.path.join(d, "data.sweep.json"), os.path.join(d, "data.sweep.json"),
                           "--protocol", name.split("-")[-2], "--bs", name.split("-")[-1], "--threads", "2,8",
                           "--host", os.path.join(d, "host.json"))
        assert p.returncode == 0, p.stderr
        assert advice["model_version"] >= 5
        for s in advice["candidates"][0]["steps"]:
            lim, n = s["limits"], s["threads"]
            each = [next(x for x in ps if x.threads == n) for ps in doc.log_pass.passes]
            assert lim["log_pass_each_iops"] == pytest.approx([x.iops for x in each], abs=0.1)
            iops, busy = sorted(x.iops for x in each), sorted(x.cpu_busy for x in each)
            assert lim["log_pass_measured_iops"] == pytest.approx(iops[1], abs=0.1)  # three passes: the middle one
            assert lim["log_pass_busy"] == pytest.approx(busy[1], abs=1e-4) and lim["log_pass_ios"] == min(x.ios for x in each)
            if lim["log_pass_busy"] >= 0.9:
                saturated.append((name, n))
                assert s["binding"] != "log-pass-bound"
                continue
            assert s["iops"] <= lim["log_pass_measured_iops"] + 0.1  # a limit: the figure never above it
            if s["binding"] == "log-pass-bound":
                bound.append((name, n))
                assert s["iops"] == pytest.approx(lim["log_pass_measured_iops"], abs=0.1)
                assert s["iops"] < lim["log_latency_iops"] and not s["upper_bound"]  # a prediction
                text = slogqual("advise", "--advice", str(out / "advice.json"), cwd=out).stdout
                assert f"log-pass-bound at {n} threads: the host probe's pass with this log ran this load at " \
                       f"{lim['log_pass_measured_iops']:,.0f} IOPS" in text
    assert {("sata-ssd-nfs-64k", 2), ("sata-ssd-iscsi-4k", 2)} <= set(bound)
    assert {("nvdimm-iscsi-4k", 2), ("nvdimm-iscsi-4k", 8), ("sata-ssd-nfs-64k", 8)} <= set(saturated)


STALLED_DRAW = os.path.join(ADVISOR, "check", "test-47166", "lab")


def _probe_of(lab, name, template):
    """The host document the probe of ``name`` would have written from its recorded passes (the probe failed after
    them: its log was gone): its own host and log passes, the copy cost measured in the same guest by ``template``'s
    probe (same boot, same data disks and load), the log's identity from its sweep. A failed pass is no pass."""
    from slogqual.host.door import pass_steps
    from slogqual.results.host import LogPass
    from slogqual.results.scenario import ScenarioResult

    d = os.path.join(lab, name)
    doc = load(os.path.join(lab, template, "host.json"))

    def complete(stem):
        found = [ScenarioResult.load(os.path.join(d, f"{stem}{suffix}.json")) for suffix in ("", ".pass2", ".pass3")]
        return [r for r in found if r.status == "complete"]

    main = pass_steps(complete("host.json.scenario"), doc.copy, doc.ramp_s, ram_data=False)
    logs = pass_steps(complete("host.json.log.scenario"), doc.copy, doc.ramp_s, log_pass=True)
    with open(os.path.join(d, "log.sweep.json")) as fh:
        sweep = json.load(fh)
    doc.steps, doc.passes = host_analysis.best_of(main), main
    doc.log_pass = LogPass(device=sweep["target"]["path"], identity={"model": sweep["device"]["model"],
                                                                   "serial": sweep["device"]["serial"]},
                           steps=host_analysis.best_of(logs), passes=logs)
    return doc


def test_a_write_past_the_kernel_s_io_timeout_is_a_stall_no_ceiling_no_rate_and_a_finding(tmp_path):
    """Recorded (draw 47166, the NVMe iSCSI's probe): in the log pass's second pass at 16 writers the emulated NVMe
    stopped answering — a write took 93 s, the kernel log kept (command timeout at 30 s, abort, controller reset,
    disabled), the step written as complete at 19 IOPS. A step with a write past the kernel's I/O timeout measured
    the device's error handling: it is flagged, gives no ceiling and no log-pass rate, each pass's best is another
    pass's, and the advice says log-stalled with the figures. The first pass's 16 writers (slowest write 1.5 s) and
    every other step of the draw's probes are no stall."""
    doc = _probe_of(STALLED_DRAW, "nvme-iscsi-4k", "sas-ssd-iscsi-4k")
    first, second = doc.log_pass.passes
    assert [s.stalled for s in second] == [False, False, True] and not any(s.stalled for s in first)
    stall = second[-1]
    assert stall.longest_write_us / 1e6 > host_analysis.STALLED_WRITE_S > first[-1].longest_write_us / 1e6
    assert stall.ceiling_iops is None and stall.cpu_ceiling_iops is None and stall.path_ceiling_iops is None
    assert first[-1].ceiling_iops and doc.log_pass.steps[-1].probe_pass == 1  # the count's best: the pass that ran
    with open(os.path.join(tmp_path, "host.json"), "w") as fh:
        json.dump(doc.to_dict(), fh)
    d = os.path.join(STALLED_DRAW, "nvme-iscsi-4k")
    p, advice = advise(tmp_path, "--log", os.path.join(d, "log.sweep.json"), "--layout", "mirror", "--data",
                       os.path.join(d, "data.sweep.json"), os.path.join(d, "data.sweep.json"), "--protocol", "iscsi",
                       "--bs", "4k", "--threads", "1,4,16", "--host", str(tmp_path / "host.json"))
    assert p.returncode == 0, p.stderr
    c = advice["candidates"][0]
    by = {s["threads"]: s["limits"] for s in c["steps"]}
    assert by[16]["log_pass_each_iops"] == [pytest.approx(first[-1].iops, abs=0.1)]  # the stalled pass left out
    assert len(by[4]["log_pass_each_iops"]) == 2  # at 4 writers both passes ran
    f = next(f for f in c["findings"] if f["kind"] == "log-stalled")
    assert f["threads"] == [16] and [(x["pass"], x["passes"]) for x in f["figures"]] == [(2, 2)]
    assert f["figures"][0]["longest_write_s"] == pytest.approx(stall.longest_write_us / 1e6, abs=1e-3)
    text = slogqual("advise", "--advice", str(tmp_path / "advice.json"), cwd=tmp_path).stdout
    assert f"log-stalled: in the host probe's pass with this log a write took {stall.longest_write_us / 1e6:,.1f} s" in text
    assert "16 writers in pass 2 of 2" in text
    lines = [x for x in host_words.table(doc) if x.startswith("stalled:")]
    assert len(lines) == 1 and "pass 2 of 2, 16 writers" in lines[0] and f"{stall.longest_write_us / 1e6:,.1f} s" in lines[0]
    for name in sorted(os.listdir(STALLED_DRAW)):  # every other probe of the draw: no stall
        if os.path.exists(os.path.join(STALLED_DRAW, name, "host.json")):
            other = _probe_of(STALLED_DRAW, name, name)
            assert not any(s.stalled for p in other.passes + other.log_pass.passes for s in p), name


def test_a_log_pass_that_failed_after_others_keeps_what_was_measured_and_the_advice_says_so(tmp_path):
    """Draw 47166's NVMe iSCSI probe: its log vanished in pass 2 and pass 3 failed ("cannot resolve path"); the probe
    lost everything it had measured. Now it writes the document with the passes before (status failed, the failed
    pass and its line kept) and exits non-zero; the document reads back the same, and an advice made from it says
    in its first lines which pass failed and that its figures are from the passes before."""
    doc = _probe_of(STALLED_DRAW, "nvme-iscsi-4k", "sas-ssd-iscsi-4k")
    doc.status = "failed"
    doc.log_pass.failed = {"pass": 3, "error": "zpool create -f… failed: cannot resolve path '/dev/nvme0n1'"}
    with open(os.path.join(tmp_path, "host.json"), "w") as fh:
        json.dump(doc.to_dict(), fh)
    again = load(os.path.join(tmp_path, "host.json"))
    assert again.to_dict() == doc.to_dict() and again.log_pass.failed["pass"] == 3
    d = os.path.join(STALLED_DRAW, "nvme-iscsi-4k")
    p, advice = advise(tmp_path, "--log", os.path.join(d, "log.sweep.json"), "--protocol", "iscsi", "--bs", "4k",
                       "--threads", "1,4", "--host", str(tmp_path / "host.json"))
    assert p.returncode == 0, p.stderr
    assert advice["host"]["status"] == "failed" and advice["host"]["log_pass"]["failed"] == doc.log_pass.failed
    text = slogqual("advise", "--advice", str(tmp_path / "advice.json"), cwd=tmp_path).stdout.splitlines()
    assert "the host probe's log pass 3 failed (zpool create -f… failed: cannot resolve path '/dev/nvme0n1'): its " \
           "figures are from the passes before it" in text[:3]


def test_a_log_the_cpu_writes_takes_the_probe_s_own_pool_on_these_data_disks_where_its_cpu_was_saturated(tmp_path):
    """Model 6: a pmem log's writes are the CPU's stores, as the probe's RAM log's are copies; so where the probe ran
    on the data disks themselves in this layout, its own pool is this pool with this log, and where its CPU was
    saturated its rate (the median of its passes) is the prediction (probe-pool-bound), stored with each pass's figure,
    IOs and busy share, and said in words. Fitting draw fit-1129-model4: its NVDIMM iSCSI's pools 1,677 and 1,894 at 2
    and 8 writers against the probe's 1,440 and 1,811. Not taken: a DMA log's (its SATA SSDs), a probe in another
    layout, a probe of RAM files."""
    name = "nvdimm-iscsi-4k"
    d = os.path.join(LOG_PASS_DRAW, name)
    doc = load(os.path.join(d, "host.json"))
    assert doc.ram["data_devices"] and doc.ram["layout"] == "mirror"
    args = ("--log", os.path.join(d, "log.sweep.json"), "--data", os.path.join(d, "data.sweep.json"),
            os.path.join(d, "data.sweep.json"), "--protocol", "iscsi", "--bs", "4k", "--threads", "2,8",
            "--host", os.path.join(d, "host.json"))
    p, advice = advise(tmp_path, *args, "--layout", "mirror")
    assert p.returncode == 0, p.stderr
    assert advice["model_version"] >= 6
    text = slogqual("advise", "--advice", str(tmp_path / "advice.json"), cwd=tmp_path).stdout
    for s in advice["candidates"][0]["steps"]:
        n, lim = s["threads"], s["limits"]
        each = [next(x for x in ps if x.threads == n) for ps in doc.passes]
        assert lim["probe_pool_each_iops"] == pytest.approx([x.iops for x in each], abs=0.1)
        assert lim["probe_pool_measured_iops"] == pytest.approx(sorted(x.iops for x in each)[1], abs=0.1)
        assert lim["probe_pool_busy"] >= 0.9 and lim["probe_pool_ios"] == min(x.ios for x in each)
        assert s["binding"] == "probe-pool-bound" and not s["upper_bound"]  # a prediction
        assert s["iops"] == pytest.approx(lim["probe_pool_measured_iops"], abs=0.1)
        assert s["iops"] < lim["log_latency_iops"]
        assert s["iops"] < lim["host_iops"]  # the probe's ceiling of the same host, copies out, is above it
    assert "probe-pool-bound at 2, 8 threads: the host probe's own pool — these data disks, a log in RAM — ran " \
           "this load at" in text
    out = tmp_path / "stripe"
    out.mkdir()
    p, other = advise(out, *args, "--layout", "stripe")  # the probe ran a mirror: its pool is not this one
    assert p.returncode == 0, p.stderr
    assert all(s["binding"] != "probe-pool-bound" and "probe_pool_measured_iops" not in s["limits"]
               for s in other["candidates"][0]["steps"])
    for i, (sweep, host, load_) in enumerate((  # a DMA log; a probe of RAM files
            (os.path.join(LOG_PASS_DRAW, "sata-ssd-iscsi-4k", "log.sweep.json"), os.path.join(d, "host.json"), "iscsi 4k"),
            (PMEM, RAM_HOST, "nfs 64k"))):
        out = tmp_path / f"other{i}"
        out.mkdir()
        protocol, bs = load_.split()
        p, other = advise(out, "--log", sweep, "--protocol", protocol, "--bs", bs, "--threads", "2,8", "--host", host)
        assert p.returncode == 0, p.stderr
        assert all("probe_pool_measured_iops" not in s["limits"] for s in other["candidates"][0]["steps"])


def test_every_recorded_step_is_either_far_below_the_kernel_s_timeout_or_past_it():
    """The stall rule's margin, over every scenario document recorded under tests/fixtures (the lab draws' pools and
    the probes' passes, slowed hosts included): each step's slowest write is at most a quarter of the kernel's I/O
    timeout (the slowest, draw 8882's slowed NVDIMM NFS pool: 6.8 s) or past it — nothing between where a slow
    host could be mistaken for a stall. Those past it are the emulated NVMe's log passes at 16 writers, the ones the
    kernel logs kept (docs/lab.md: "The emulated NVMe's queue")."""
    from slogqual.results.scenario import ScenarioResult

    root = os.path.dirname(FIXTURES)
    steps, stalls = 0, []
    for dirpath, _, names in os.walk(root):
        for name in names:
            if not name.endswith(".json"):
                continue
            path = os.path.join(dirpath, name)
            with open(path) as fh:
                head = fh.read(200)
            if '"slogqual.scenario/' not in head and '"slogqual.scenario' not in head:
                continue
            for s in ScenarioResult.load(path).steps:
                if s.lat_us.max is None:
                    continue
                steps += 1
                slowest = s.lat_us.max / 1e6
                assert host_analysis.stalled_write(s.lat_us.max) == (slowest >= host_analysis.STALLED_WRITE_S)
                if host_analysis.stalled_write(s.lat_us.max):
                    stalls.append((os.path.relpath(path, root), s.threads))
                else:
                    assert slowest <= host_analysis.STALLED_WRITE_S / 4, (path, s.threads, slowest)
    assert steps > 1000
    assert stalls and all("/nvme-" in p and ".log.scenario" in p and t == 16 for p, t in stalls), stalls
