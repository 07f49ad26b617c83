"""`slogqual scenario run`'s load given on the command line, and `--lab` with a user's file, the layout and
the guest's progress (issue #37: the frictions a new user met on the recommended path).

Nothing here boots a guest or claims a device: ``slogqual.lab.run`` and ``device.claim_for_writing`` are
replaced by a failure, so a check that comes too late fails the test instead of running. The guest's job
command is run for real by sh on this host (it stops where the guest's devices would be needed), and the
progress relay reads a real guest console (tests/fixtures/lab/scenario-console.txt, see its test).
"""

import copy
import io
import json
import os
import random
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest

from conftest import ROOT, fixture_path
from slogqual import cli
from slogqual.errors import UsageError
from slogqual.lab import scenario as lab_scenario
from slogqual.pool.door import ScenarioRequest, _plan
from slogqual.pool.scenario import load_scenario, with_overrides

with open(os.path.join(ROOT, "tests", "lab_jobs", "small-lab.toml"), encoding="utf-8") as _fh:
    SMALL = _fh.read()  # the lab test's scenario (tests/test_scenario_lab.py)


def too_late(*_a, **_k):
    raise AssertionError("the run got past its checks: the input was not refused in time")


@pytest.fixture
def arena(tmp_path, monkeypatch):
    import slogqual.device as device
    import slogqual.lab as lab

    monkeypatch.setattr(lab, "run", too_late)  # never a guest booted here
    monkeypatch.setattr(device, "claim_for_writing", too_late)
    monkeypatch.setenv("SLOGQUAL_STORE", str(tmp_path / "store.sqlite"))
    monkeypatch.chdir(tmp_path)
    toml = tmp_path / "small.toml"
    toml.write_text(SMALL)
    return tmp_path


def refused(argv):
    """Run argv in this process: one line on stderr, exit 2, nothing written in the working directory."""
    before = sorted(os.listdir("."))
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = cli.main([str(a) for a in argv])
        except SystemExit as exc:  # argparse's refusal of an option
            code = exc.code
    text = err.getvalue()
    assert code == 2 and len(text.strip().splitlines()) == 1 and "Traceback" not in text, (code, text)
    assert sorted(os.listdir(".")) == before and out.getvalue() == ""
    return text


# --- 1. the load's shape on the command line ------------------------------------------------------------

def test_the_load_given_replaces_the_files_and_quicks_values_and_the_result_records_it(arena):
    out = str(arena / "r.json")
    given = {"bs": 8192, "threads": [2, 8], "luns": 1, "runtime": 3.0, "ramp": 0.0}
    plan = _plan(ScenarioRequest(scenario="iscsi-4k-randwrite", quick=True, data=["/dev/null"], logs=["/dev/zero"],
                                 output=out, overrides=given))
    sc = plan.scenario
    assert (sc.bs, sc.threads, sc.luns, sc.runtime_s, sc.ramp_s) == (8192, [2, 8], 1, 3.0, 0.0)
    quick = load_scenario("iscsi-4k-randwrite").quick()
    assert sc.lun_size == quick.lun_size and sc.configs == quick.configs  # what was not given stays the file's
    doc = sc.to_dict()  # what a new result records as its scenario (pool.engine.new_result)
    assert doc["bs"] == 8192 and doc["threads"] == [2, 8] and doc["runtime_s"] == 3.0
    assert doc["overrides"] == given  # and that these came from the command line, not the file
    assert "overrides" not in load_scenario("iscsi-4k-randwrite").to_dict()  # a file's own run: as before
    # only what was given is taken; a partial set leaves the rest
    part = with_overrides(quick, {"bs": None, "threads": [3], "luns": None, "runtime": None, "ramp": None})
    assert part.threads == [3] and part.bs == quick.bs and part.overrides == {"threads": [3]}
    assert not os.path.exists(out)


@pytest.mark.parametrize("option, value, words", [
    ("--bs", "100", "allowed: 512 to 16M, a multiple of 512"),
    ("--bs", "32m", "allowed: 512 to 16M"),
    ("--threads", "0,1", "allowed: 1 to 1024 threads"),
    ("--threads", "1,x", "--threads"),
    ("--luns", "257", "allowed: 1 to 256 LUNs"),
    ("--runtime", "0.5", "allowed: 1 to 86400 seconds"),
    ("--runtime", "nan", "--runtime"),
    ("--ramp", "3601", "allowed: 0 to 3600 seconds"),
])
def test_a_load_out_of_range_is_refused_in_one_line_before_anything(arena, option, value, words):
    for lab in ([], ["--lab"]):
        text = refused(["scenario", "run", "small.toml", "--data", "/dev/null", "--log", "/dev/zero", option, value,
                        "-o", "r.json", *lab] if not lab else
                       ["scenario", "run", "small.toml", option, value, "-o", "r.json", *lab])
        assert words in text and option in text, text


def test_a_bs_larger_than_the_files_luns_is_refused_naming_both(arena):
    assert 'lun_size = "64M"' in SMALL
    (arena / "tiny.toml").write_text(SMALL.replace('lun_size = "64M"', 'lun_size = "1M"'))
    for lab in ([], ["--lab"]):
        devices = [] if lab else ["--data", "/dev/null", "--log", "/dev/zero"]
        text = refused(["scenario", "run", "tiny.toml", *devices, "--bs", "2m", "-o", "r.json", *lab])
        assert "--bs 2097152 is larger than the scenario's LUNs (small-lab: lun_size 1048576 bytes)" in text, text


def test_a_resumed_run_runs_the_load_it_began_with(arena):
    doc = json.loads(open(fixture_path("scenario", "iscsi-4k-randwrite-lab-quick-nvdimm.json")).read())
    doc["status"] = "interrupted"
    doc["scenario"]["source"] = os.path.join(ROOT, "scenarios", "iscsi-4k-randwrite.toml")
    doc["scenario"]["threads"], doc["scenario"]["overrides"] = [4], {"threads": [4]}
    path = arena / "r.json"
    path.write_text(json.dumps(doc))
    plan = _plan(ScenarioRequest(output=str(path), resume=True))
    assert plan.scenario.threads == [4] and plan.scenario.overrides == {"threads": [4]}
    assert plan.scenario.runtime_s == load_scenario("iscsi-4k-randwrite").quick().runtime_s  # --quick kept too
    with pytest.raises(UsageError, match=r"^--resume runs the load the result recorded: no --bs$"):
        _plan(ScenarioRequest(output=str(path), resume=True, overrides={"bs": 8192, "threads": None}))
    bad = copy.deepcopy(doc)
    bad["scenario"]["overrides"] = {"threads": [4, 2]}
    path.write_text(json.dumps(bad))
    with pytest.raises(UsageError, match="--threads must be ascending"):
        _plan(ScenarioRequest(output=str(path), resume=True))


# --- 4. the layout, on the host and in the lab -----------------------------------------------------------

def test_a_layout_the_data_devices_cannot_make_is_refused_before_anything(arena):
    text = refused(["scenario", "run", "small.toml", "--data", "/dev/null", "--log", "/dev/zero", "--layout",
                    "mirror", "-o", "r.json"])
    assert "--layout mirror needs an even number of --data devices (2 or more), not 1" in text
    text = refused(["scenario", "run", "small.toml", "--lab", "--layout", "raidz1", "-o", "r.json"])
    assert "--layout raidz1 needs at least 3 --data devices, not 2" in text  # the lab's default: two hdd


def test_the_layout_and_the_load_reach_the_guests_run():
    req = lab_scenario.LabScenarioRequest(scenario="iscsi-4k-randwrite", output="r.json", layout="mirror",
                                          overrides={"bs": 8192, "threads": [1, 2], "luns": None, "runtime": 2.0,
                                                     "ramp": 0.0})
    argv = lab_scenario.guest_command(req)
    assert argv[:4] == ["slogqual", "scenario", "run", "iscsi-4k-randwrite"]
    at = {a: argv[i + 1] for i, a in enumerate(argv[:-1]) if a.startswith("--")}
    assert at["--layout"] == "mirror" and at["--bs"] == "8192" and at["--threads"] == "1,2"
    assert at["--runtime"] == "2.0" and at["--ramp"] == "0.0" and "--luns" not in at
    # the guest parses them as the host did
    parser = cli.build_parser(argv[1:])
    args = parser.parse_args(argv[1:])
    assert (args.layout, args.bs, args.threads, args.runtime, args.ramp) == ("mirror", 8192, [1, 2], 2.0, 0.0)


# --- 2. a user's scenario file in the lab ----------------------------------------------------------------

@pytest.mark.parametrize("text, words", [
    ('name = "x"\nkind = "zvol"\nbogus = 1\n', "key 'bogus' is not a scenario key"),
    (b"name = \"\xff\"\n", "not valid TOML (not UTF-8"),
    ("name = ", "not valid TOML"),
])
def test_a_bad_scenario_file_is_refused_before_the_guest_boots(arena, text, words):
    bad = arena / "bad.toml"
    bad.write_bytes(text if isinstance(text, bytes) else text.encode())
    text = refused(["scenario", "run", bad, "--lab", "-o", "r.json"])
    assert text.startswith(f"slogqual: {bad}: ") and words in text, text


def test_an_unreadable_or_too_large_scenario_file_is_refused_before_the_guest_boots(arena):
    text = refused(["scenario", "run", arena, "--lab", "-o", "r.json"])
    assert "a directory, not a regular scenario file" in text
    big = arena / "big.toml"
    big.write_text(SMALL + "#" * (64 * 1024) + "\n")
    text = refused(["scenario", "run", big, "--lab", "-o", "r.json"])
    assert "a scenario file for the lab guest goes as a command argument (allowed: 0 to 64K)" in text


def test_the_guests_job_writes_the_users_file_where_it_runs_and_runs_it(arena, tmp_path):
    """The guest's job command, run by sh here as the guest's job.sh runs it (in its results directory): the
    user's file (under /tmp, which the guest covers with its own tmpfs) is written there byte for byte and
    is the scenario slogqual loads; this host has no lab devices, so it stops there, in one line."""
    req = lab_scenario.LabScenarioRequest(scenario=str(arena / "small.toml"), output="r.json",
                                          overrides={"threads": [1, 2], "runtime": 2.0})
    text = lab_scenario._scenario_text(req)
    assert text == SMALL
    argv = lab_scenario.guest_command(req, text)
    i = argv.index("slogqual")
    assert argv[i + 3] == lab_scenario.INNER_SCENARIO  # the copy, not the host's path
    job = tmp_path / "out"
    job.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "SLOGQUAL_LAB_DEVICES"}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(argv[:i] + [sys.executable, "-m", "slogqual"] + argv[i + 1:], cwd=job, env=env,
                          capture_output=True, text=True, timeout=120)
    assert (job / lab_scenario.INNER_SCENARIO).read_bytes() == (arena / "small.toml").read_bytes()
    # past the scenario (and its --threads/--runtime) to the devices, which only a guest has
    assert proc.returncode == 2 and proc.stderr.strip() == "slogqual: lab:0: the lab guest has 0 device(s)", proc.stderr
    assert sorted(os.listdir(job)) == [lab_scenario.INNER_SCENARIO]  # no result written


# --- 3. the guest's progress -----------------------------------------------------------------------------

CONSOLE = fixture_path("lab", "scenario-console.txt")


def relayed(chunks, quiet=False):
    out, tee = io.StringIO(), io.StringIO()
    relay = lab_scenario.ProgressRelay(None if quiet else out, tee)
    for c in chunks:
        relay.write(c)
    relay.flush()
    return out.getvalue(), tee.getvalue(), relay.said


def test_the_guests_progress_lines_are_relayed_with_their_eta_and_nothing_else():
    """A real guest console: OUTPUT.lab/lab-console.log of tests/test_scenario_lab.py::
    test_a_users_file_under_tmp_runs_in_the_lab_with_the_load_and_layout_given_and_its_progress_shown, run
    2026-11-29 on the 2-core build host (TCG guest, OpenZFS 2.3.2; tests/lab_jobs/small-lab.toml with --luns 1
    --threads 1,2 --runtime 2 --ramp 0: 2 configurations x 2 thread steps). Each step's line with its number
    and ETA is relayed, in order, whatever the console's chunks; the kernel's lines, the result table and the
    guest's path of its result are not; the whole console still goes to the tee."""
    with open(CONSOLE, encoding="utf-8", newline="") as fh:
        console = fh.read()
    text, tee, said = relayed([console])
    assert tee == console
    lines = text.splitlines()
    assert lines and all(l.startswith("slogqual: lab guest: ") and "\r" not in l for l in lines)
    steps = [l for l in lines if " ETA " in l]
    assert [s.split("(")[-1].split(")")[0] for s in steps] == ["1/4", "2/4", "3/4", "4/4"], steps
    assert all(s.rsplit(" ETA ", 1)[1].replace(":", "").isdigit() for s in steps)
    assert sum("IOPS" in l and "ZIL to log" in l for l in lines) == 4  # each step's figures as it ends
    assert "result.json" in console and "result.json" not in text
    table = [l for l in console.splitlines() if l.startswith("configuration")]
    assert table and not any(t in text for t in table)  # the result table stays in the console log
    rng = random.Random(7)
    cuts = sorted(rng.sample(range(1, len(console)), 200))
    chunks = [console[a:b] for a, b in zip([0] + cuts, cuts + [len(console)])]
    assert relayed(chunks)[0] == text  # lines split across reads are joined first
    quiet_text, quiet_tee, _ = relayed([console], quiet=True)
    assert quiet_text == "" and quiet_tee == console


@pytest.mark.parametrize("line, said", [
    ("slogqual: small [sync=standard] 1 thread(s)/LUN x 1 LUNs (1/4) ETA 0:40\r",
     "small [sync=standard] 1 thread(s)/LUN x 1 LUNs (1/4) ETA 0:40"),
    ("slogqual-lab: modprobe zfs failed\r", "modprobe zfs failed"),
    ("[   12.345678] zfs: module license taints kernel.\r", None),
    ("configuration    threads    IOPS", None),
    ("slogqual: \r", None),
    ("slogqual: result: /lab/out/result.json\r", None),  # a path in the guest: the host names its own copy
])
def test_a_guest_line_is_kept_only_when_the_guests_slogqual_or_stage2_said_it(line, said):
    assert lab_scenario.guest_line(line) == said
