"""slogqual qualify end to end on real fio against nbdkit targets (one slowed by 2 ms per write) and
loop devices: verdicts, exit codes, JUnit, HTML, preconditioning, several devices in one run."""

import json
import os
import subprocess
import xml.etree.ElementTree as ET

import pytest

from conftest import load, need, needs_root, slogqual
from slogqual.tools import pairbench
from slogqual.tools.nbdkit import NbdServer

pytestmark = [pytest.mark.integration, need("fio", "nbdkit")]

# Fast: 0.2 s steady-state rounds (at most 5), 0.3 s per sweep size, no settle pause.
FAST = ["--round-runtime", "0.2", "--max-rounds", "5", "--runtime", "0.3", "--settle", "0", "--quiet"]
QUICKER = FAST + ["--max-rounds", "0", "--no-html"]  # where steady state and the report are not the point

PROFILE = """\
# A 10 ms budget: a device that adds 20 ms to every write cannot meet it, a RAM-backed one can — even on a
# host so busy (CI beside lab guests, load ~10) that the RAM-backed one took over 1 ms a write.
name = "ten-ms"
sizes = ["4k"]

[[criterion]]
check = "lat_us.mean @ 4k <= 10000"
why = "a 20 ms device fails"

[[criterion]]
check = "write_cache != volatile-cache-enabled"
"""


def memory_server(delay=None):
    return NbdServer(plugin="memory", plugin_args=["size=64M"], filters=["delay"] if delay else [],
                     filter_args={"wdelay": delay} if delay else {})


@pytest.fixture
def profile(tmp_path):
    path = tmp_path / "ten-ms.toml"
    path.write_text(PROFILE)
    return str(path)


@pytest.fixture
def store_env(tmp_path):
    return {"SLOGQUAL_STORE": str(tmp_path / "store.sqlite")}


def test_fast_device_passes_slow_device_fails(tmp_path, profile, store_env):
    out, xml = tmp_path / "out", tmp_path / "junit.xml"
    with memory_server() as fast, memory_server("20ms") as slow:
        proc = slogqual("qualify", fast.uri, slow.uri, "--profile", profile, "--out", out, "--junit", xml, *FAST,
                        env=store_env)
    assert proc.returncode == 1, proc.stderr
    docs = [load(out / "1-nbd.qualification.json"), load(out / "2-nbd.qualification.json")]
    assert [d["schema"] for d in docs] == ["slogqual.qualification/1"] * 2
    assert [d["verdict"] for d in docs] == ["pass", "fail"]
    lat = [next(c for c in d["criteria"] if c["check"].startswith("lat_us.mean")) for d in docs]
    assert lat[0]["result"] == "pass" and lat[1]["result"] == "fail"
    assert lat[1]["measured"] > 10000 > lat[0]["measured"]
    assert lat[1]["measured"] - lat[0]["measured"] > 15000  # the 20 ms delay shows, whatever the noise
    for d in docs:  # steady-state rounds were run and recorded, the sweep is embedded
        st = d["steady_state"]
        assert st["checked"] and 1 <= len(st["rounds"]) <= 5 and st["reached"] == (st["at_round"] is not None)
        assert d["sweep"]["document"]["schema"] == "slogqual.sweep/1" and os.path.exists(d["sweep"]["path"])
    # the table and the summary across devices
    assert "verdict: PASS" in proc.stdout and "verdict: FAIL" in proc.stdout and "Summary" in proc.stdout
    # JUnit: parses, one suite per device, one case per criterion, the failure says measured vs threshold
    root = ET.parse(xml).getroot()
    suites = root.findall("testsuite")
    assert len(suites) == 2 and root.get("tests") == "4" and root.get("failures") == "1"
    assert [[c.get("name") for c in s.findall("testcase")] for s in suites] == \
        [["lat_us.mean @ 4k <= 10000", "write_cache != volatile-cache-enabled"]] * 2
    assert suites[0].get("failures") == "0" and suites[1].get("failures") == "1"
    failure = suites[1].find("testcase").find("failure")
    assert failure is not None and failure.get("message").startswith("measured ") \
        and failure.get("message").endswith("threshold <= 10,000 µs")
    # the HTML report: the project's report with the qualification section in it
    html = (out / "qualification.html").read_text()
    assert 'id="qualification"' in html and "FAIL" in html and "<svg" in html
    # each document as qualify wrote it is what its type reads and writes back, byte for byte; the store
    # filed it under its identity with its verdict
    from slogqual.results import json_text
    from slogqual.results.qualification import QualificationResult
    from slogqual.store import Store
    for name in ("1-nbd", "2-nbd"):
        path = out / f"{name}.qualification.json"
        assert json_text(QualificationResult.load(str(path)).to_dict(), "again") == path.read_text()
    with Store(store_env["SLOGQUAL_STORE"]) as st:
        quals = st.runs(kind="qualification")
    assert [(r.verdict, r.profile, r.target) for r in quals] == [("pass", "ten-ms", fast.uri), ("fail", "ten-ms", slow.uri)]
    assert [d["store"]["ids"]["qualification"] for d in docs] == [r.id for r in quals]


def test_passing_device_alone_exits_0(tmp_path, profile, store_env):
    with memory_server() as fast:
        proc = slogqual("qualify", fast.uri, "--profile", profile, "--out", tmp_path / "o", *QUICKER,
                        env=store_env)
    assert proc.returncode == 0, proc.stderr
    doc = load(tmp_path / "o" / "nbd.qualification.json")
    assert doc["verdict"] == "pass" and doc["steady_state"]["label"] == "not checked"


def test_scenario_criterion_without_lab_is_not_evaluated_with_the_reason(tmp_path, store_env):
    path = tmp_path / "s.toml"
    path.write_text(PROFILE + '\n[[criterion]]\ncheck = "slog_benefit @ iscsi-4k-randwrite >= 2"\n')
    env = dict(store_env, SLOGQUAL_LAB_CACHE=str(tmp_path / "no-lab-here"))
    with memory_server() as fast:
        proc = slogqual("qualify", fast.uri, "--profile", path, "--out", tmp_path / "o", "--lab",
                        "--junit", tmp_path / "j.xml", *QUICKER, env=env)
        plain = slogqual("qualify", fast.uri, "--profile", path, "--out", tmp_path / "o2", *QUICKER, env=env)
    assert proc.returncode == 1 and plain.returncode == 1
    doc = load(tmp_path / "o" / "nbd.qualification.json")
    c = doc["criteria"][2]
    assert doc["verdict"] == "incomplete" and c["result"] == "not-evaluated" and c["measured"] is None
    assert c["detail"].startswith("the lab is not available")
    assert load(tmp_path / "o2" / "nbd.qualification.json")["criteria"][2]["detail"].startswith("no scenario result")
    case = ET.parse(tmp_path / "j.xml").getroot().find("testsuite").findall("testcase")[2]
    assert case.find("skipped") is not None and "lab is not available" in case.find("skipped").get("message")


def test_bad_scenario_result_file_is_bad_input(tmp_path, profile, store_env):
    bogus = tmp_path / "x.json"
    bogus.write_text(json.dumps({"schema": "slogqual.sweep/1"}))
    proc = slogqual("qualify", "nbd+unix:///?socket=/nonexistent", "--profile", profile, "--scenario-result", bogus,
                    "--out", tmp_path / "o", *FAST, env=store_env)
    assert proc.returncode == 2 and "not a slogqual.scenario/1 document" in proc.stderr


@needs_root
def test_refused_device_does_not_stop_the_next(tmp_path, profile, store_env, loop_device):
    with memory_server() as fast:
        proc = slogqual("qualify", loop_device, fast.uri, "--profile", profile, "--out", tmp_path / "o",
                        "--junit", tmp_path / "j.xml", *FAST, env=store_env)
    assert proc.returncode == 3, proc.stderr  # the worst of: refused (3), pass (0)
    refused = load(tmp_path / "o" / f"{os.path.basename(loop_device)}.qualification.json")
    passed = load(tmp_path / "o" / "nbd.qualification.json")
    assert refused["verdict"] == "refused" and "--destroy-data" in refused["error"]
    assert refused["sweep"]["document"] is None and passed["verdict"] == "pass"
    suites = ET.parse(tmp_path / "j.xml").getroot().findall("testsuite")
    assert suites[0].get("errors") == "1" and suites[1].get("failures") == "0"  # the device criterion still judged


def _allocated(path):
    return os.stat(path).st_blocks * 512


@needs_root
def test_quick_precondition_fills_a_loop_device_for_real(tmp_path, store_env):
    img = tmp_path / "pc.img"
    with open(img, "wb") as fh:
        fh.truncate(48 << 20)
    dev = subprocess.run(["losetup", "-f", "--show", str(img)], capture_output=True, text=True)
    if dev.returncode != 0:
        pytest.skip(f"no loop device: {dev.stderr.strip()}")
    dev = dev.stdout.strip()
    try:
        before = _allocated(img)
        prof = tmp_path / "p.toml"
        prof.write_text(PROFILE.replace("<= 10000", "<= 1000000"))
        proc = slogqual("qualify", dev, "--profile", prof, "--out", tmp_path / "o", "--precondition", "quick",
                        "--quick-bytes", "32m", "--destroy-data", *QUICKER, env=store_env)
        assert proc.returncode == 0, proc.stderr
        doc = load(tmp_path / "o" / f"{os.path.basename(dev)}.qualification.json")
        pc = doc["precondition"]
        assert pc["mode"] == "quick" and pc["span_bytes"] == 32 << 20 and pc["written_bytes"] == 32 << 20
        assert pc["seconds"] > 0 and pc["mbps"] > 0
        assert before == 0 and _allocated(img) >= 32 << 20  # the fill reached the backing file
        assert "preconditioning: quick" in doc["sweep"]["document"]["notes"][-1]
        # the pair engine measured the block device, and its version is recorded as a lone sweep records it
        sweep_doc = doc["sweep"]["document"]
        assert sweep_doc["points"][0]["lat_basis"] == "pair"
        assert sweep_doc["environment"]["pairbench_version"] == pairbench.check_version().text, sweep_doc["environment"]
        # full: the whole device written twice
        proc = slogqual("qualify", dev, "--profile", prof, "--out", tmp_path / "o2", "--precondition", "full",
                        "--destroy-data", *QUICKER, env=store_env)
        assert proc.returncode == 0, proc.stderr
        pc = load(tmp_path / "o2" / f"{os.path.basename(dev)}.qualification.json")["precondition"]
        assert pc["mode"] == "full" and pc["loops"] == 2 and pc["written_bytes"] == 2 * (48 << 20)
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)


def test_scenario_on_data_devices_that_cannot_run_is_reported_not_fatal(tmp_path, store_env):
    # No pool can be built here from a 4 MiB file (and this host may have no ZFS at all): whatever the
    # scenario run says, the criterion is not evaluated with a reason and the device's own criteria stand.
    path = tmp_path / "s.toml"
    path.write_text(PROFILE + '\n[[criterion]]\ncheck = "slog_of_standard @ nfs-sync >= 0.5"\n')
    data = tmp_path / "data.img"
    data.write_bytes(b"\0" * (4 << 20))
    with memory_server() as fast:
        proc = slogqual("qualify", fast.uri, "--profile", path, "--out", tmp_path / "o", "--data", data,
                        "--scenario-quick", *QUICKER, env=store_env)
    assert proc.returncode == 1, proc.stderr
    doc = load(tmp_path / "o" / "nbd.qualification.json")
    assert [c["result"] for c in doc["criteria"]] == ["pass", "pass", "not-evaluated"]
    assert doc["criteria"][2]["measured"] is None and doc["criteria"][2]["detail"]
    assert doc["verdict"] == "incomplete"


def test_scenario_criteria_judged_from_a_real_lab_result(tmp_path, store_env):
    from conftest import fixture_path
    result = fixture_path("qualify", "scenario-iscsi-4k-randwrite-lab-quick.json")
    analysis = load(result)["analysis"]  # measured in the lab: see tests/fixtures/qualify/README.md
    path = tmp_path / "s.toml"
    path.write_text(PROFILE + '\n[[criterion]]\ncheck = "slog_benefit @ iscsi-4k-randwrite >= 2"\n'
                              '\n[[criterion]]\ncheck = "slog_of_standard @ iscsi-4k-randwrite >= 0.5"\n')
    with memory_server() as fast:
        proc = slogqual("qualify", fast.uri, "--profile", path, "--out", tmp_path / "o", "--scenario-result", result,
                        "--junit", tmp_path / "j.xml", "--model", "FIX", *QUICKER, env=store_env)
    assert proc.returncode == 1, proc.stderr
    doc = load(tmp_path / "o" / "nbd.qualification.json")
    benefit, of_std = doc["criteria"][2], doc["criteria"][3]
    assert benefit["measured"] == analysis["slog_benefit_at_peak"] and of_std["measured"] == analysis["slog_of_standard_at_peak"]
    assert benefit["result"] == ("pass" if analysis["slog_benefit_at_peak"] >= 2 else "fail")
    assert of_std["result"] == ("pass" if analysis["slog_of_standard_at_peak"] >= 0.5 else "fail")
    assert "quick run" in benefit["detail"] and doc["scenarios"][0]["source"].startswith("file ")
    assert doc["verdict"] == ("fail" if "fail" in (benefit["result"], of_std["result"]) else "pass")
    # the scenario result went into the store with the run
    runs = json.loads(slogqual("history", "--kind", "scenario", "--json", env=store_env).stdout)
    assert len(runs) == 1 and runs[0]["summary"] == analysis["verdict"]


def test_device_with_io_errors_is_an_error_and_the_next_still_runs(tmp_path, profile, store_env):
    failing = NbdServer("memory", ["size=64M"], filters=["error"],
                        filter_args={"error-pwrite": "EIO", "error-pwrite-rate": "100%"})
    with failing as bad, memory_server() as good:
        proc = slogqual("qualify", bad.uri, good.uri, "--profile", profile, "--out", tmp_path / "o",
                        "--junit", tmp_path / "j.xml", *QUICKER, env=store_env)
    assert proc.returncode == 1, proc.stderr
    broken, fine = load(tmp_path / "o" / "1-nbd.qualification.json"), load(tmp_path / "o" / "2-nbd.qualification.json")
    assert broken["verdict"] == "error" and "Input/output error" in broken["error"]
    assert broken["criteria"][0]["result"] == "not-evaluated" and broken["criteria"][0]["measured"] is None
    assert fine["verdict"] == "pass"
    suites = ET.parse(tmp_path / "j.xml").getroot().findall("testsuite")
    assert suites[0].get("errors") == "1" and suites[1].get("failures") == "0" and suites[1].get("errors") == "0"


def test_sigterm_keeps_the_verdict_document_and_exits_130(tmp_path, profile, store_env):
    import signal
    import sys
    import time
    from conftest import ROOT
    env = dict(os.environ, PYTHONPATH=ROOT, **store_env)
    with memory_server() as fast:
        proc = subprocess.Popen([sys.executable, "-m", "slogqual", "qualify", fast.uri, "--profile", profile,
                                 "--out", str(tmp_path / "o"), "--runtime", "60", "--max-rounds", "0", "--settle", "0",
                                 "--no-html", "--quiet"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        sweep = tmp_path / "o" / "nbd.sweep.json"
        deadline = time.monotonic() + 30
        while not sweep.exists() and time.monotonic() < deadline:  # the sweep has started writing
            time.sleep(0.05)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    doc = load(tmp_path / "o" / "nbd.qualification.json")
    assert doc["verdict"] == "error" and doc["error"] == "interrupted" and doc["sweep"]["status"] == "interrupted"
    assert "interrupted" in err


def test_qualify_runs_scenarios_through_the_library_not_the_cli(tmp_path, monkeypatch, store_env):
    # qualify's scenario criterion is a library call (pool.door.run_scenario): with the CLI made unusable,
    # the scenario still runs — and fails here, where no pool can be built from two 4 MiB files — and its
    # failure is the criterion's reason, with the document saying which command asked for it.
    import slogqual.cli
    from slogqual.progress import Progress
    from slogqual.qualify import profile as P
    from slogqual.qualify import engine as qrun

    def no_cli(*args, **kwargs):
        raise AssertionError("qualify called the CLI")

    monkeypatch.setattr(slogqual.cli, "main", no_cli)
    monkeypatch.setenv("SLOGQUAL_STORE", store_env["SLOGQUAL_STORE"])
    path = tmp_path / "s.toml"
    path.write_text(PROFILE + '\n[[criterion]]\ncheck = "slog_of_standard @ nfs-sync >= 0.5"\n')
    data = [tmp_path / "d0.img", tmp_path / "d1.img"]
    for d in data:
        d.write_bytes(b"\0" * (4 << 20))
    log = tmp_path / "log.img"
    log.write_bytes(b"\0" * (4 << 20))
    opts = qrun.Options(profile=P.load(str(path)), devices=[str(log)], out_dir=str(tmp_path), destroy_data=True,
                        data=[str(d) for d in data], scenario_quick=True, argv=["slogqual", "qualify", "test"])
    entries = qrun.scenario_entries(opts, str(log), "log", {}, Progress(quiet=True))
    entry = entries["nfs-sync"]
    assert entry.document is None and entry.reason.startswith("the scenario run failed: "), entry
    assert "CLI" not in entry.reason and "crashed" not in entry.reason
    # it got as far as the document (saved before the first pool): it names qualify as the one that asked
    doc = load(tmp_path / "log.scenario-nfs-sync.json")
    assert doc["status"] == "failed" and doc["steps"] == []
    assert doc["origin"].startswith("slogqual qualify (profile ten-ms, device ")
    assert doc["environment"]["argv"] == ["slogqual", "qualify", "test"]


def test_scenario_runtime_and_ramp_without_a_scenario_to_run_are_bad_input(tmp_path, profile, store_env):
    # --scenario-runtime/--scenario-ramp shape the scenarios qualify runs itself (--data, --lab): alone they
    # would change nothing, so they are one line and exit 2 before anything is written; a value out of range too
    for args, words in ((["--scenario-runtime", "2"], "add --data DEV"), (["--scenario-ramp", "0"], "add --data DEV"),
                        (["--scenario-runtime", "0", "--data", "/dev/null"], "--scenario-runtime")):
        proc = slogqual("qualify", "nbd+unix:///?socket=/nonexistent", "--profile", profile, "--out", tmp_path / "o",
                        *args, *FAST, env=store_env)
        assert proc.returncode == 2 and words in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, (
            args, proc.stderr)
        assert not (tmp_path / "o").exists()


def test_the_scenario_steps_qualify_runs_take_the_runtime_and_ramp_given(tmp_path, monkeypatch, store_env):
    # --scenario-runtime 2 --scenario-ramp 0 over nfs-sync's --quick 5 s and 1 s: the scenario document (saved
    # before its first pool, which cannot be built from 4 MiB files here) holds them as overrides
    from slogqual.progress import Progress
    from slogqual.qualify import profile as P
    from slogqual.qualify import engine as qrun

    monkeypatch.setenv("SLOGQUAL_STORE", store_env["SLOGQUAL_STORE"])
    path = tmp_path / "s.toml"
    path.write_text(PROFILE + '\n[[criterion]]\ncheck = "slog_benefit @ nfs-sync >= 1"\n')
    devs = [tmp_path / f"{n}.img" for n in ("d0", "d1", "log")]
    for d in devs:
        d.write_bytes(b"\0" * (4 << 20))
    opts = qrun.Options(profile=P.load(str(path)), devices=[str(devs[2])], out_dir=str(tmp_path), destroy_data=True,
                        data=[str(d) for d in devs[:2]], scenario_quick=True,
                        scenario_overrides={"runtime": 2.0, "ramp": 0.0}, argv=["slogqual", "qualify", "test"])
    qrun.scenario_entries(opts, str(devs[2]), "log", {}, Progress(quiet=True))
    sc = load(tmp_path / "log.scenario-nfs-sync.json")["scenario"]
    assert (sc["runtime_s"], sc["ramp_s"]) == (2.0, 0.0) and sc["overrides"] == {"runtime": 2.0, "ramp": 0.0}
    assert sc["threads"] == [1, 4]  # the rest is --quick's


@needs_root
def test_a_junit_report_that_cannot_be_written_keeps_the_verdict(tmp_path, profile, store_env):
    # the JUnit file's filesystem is full (a 64 KiB tmpfs, filled): the qualification still PASSes with
    # exit 0, the failure is one line naming the file, and no half-written report is left behind
    full = tmp_path / "full"
    full.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "slogqual-test-full", str(full)], check=True)
    try:
        fd = os.open(full / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass  # ENOSPC: full
        finally:
            os.close(fd)
        with memory_server() as fast:
            proc = slogqual("qualify", fast.uri, "--profile", profile, "--out", tmp_path / "o", "--junit",
                            full / "j.xml", *QUICKER, env=store_env)
        assert proc.returncode == 0, proc.stderr
        lines = [x for x in proc.stderr.splitlines() if "JUnit" in x]
        assert len(lines) == 1 and str(full / "j.xml") in lines[0] and "could not be written" in lines[0]
        assert "Traceback" not in proc.stderr
        assert sorted(os.listdir(full)) == ["filler"]
        assert load(tmp_path / "o" / "nbd.qualification.json")["verdict"] == "pass"
    finally:
        subprocess.run(["umount", str(full)], check=False)


def test_out_replaces_only_its_own_earlier_results(tmp_path, profile, store_env):
    # a re-run into the same --out replaces its own documents; a file of someone else's with one of the
    # names qualify writes is refused before anything is measured (and kept), unless --force
    out = tmp_path / "o"
    with memory_server() as fast:
        for _ in range(2):
            proc = slogqual("qualify", fast.uri, "--profile", profile, "--out", out, *QUICKER, env=store_env)
            assert proc.returncode == 0, proc.stderr
        mine = out / "nbd.sweep.json"
        mine.write_text("my notes\n")
        proc = slogqual("qualify", fast.uri, "--profile", profile, "--out", out, *QUICKER, env=store_env)
        assert proc.returncode == 2 and proc.stderr.strip().endswith("add --force to replace it"), proc.stderr
        assert mine.read_text() == "my notes\n"
        (tmp_path / "afile").write_text("x")
        proc = slogqual("qualify", fast.uri, "--profile", profile, "--out", tmp_path / "afile", *QUICKER, env=store_env)
        assert proc.returncode == 2 and "is not a directory" in proc.stderr
