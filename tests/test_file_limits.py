"""Numbers from files are held to the ranges the command line holds them to (issue #28, "numbers at the
edge"): a scenario TOML or a qualification profile that carries threads = 100000, runtime = 1e12, a
NaN or a bool where a number belongs is refused in one line naming the file, the key and the allowed
range, the range slogqual.limits defines once for every door.

Each case mutates a real shipped file (a copy in tmp_path) by one line."""

import os
import re
import shutil

import pytest

from conftest import ROOT, slogqual
from slogqual import limits
from slogqual.errors import UsageError
from slogqual.pool.scenario import load_scenario
from slogqual.qualify import profile as profiles

SCENARIO = os.path.join(ROOT, "scenarios", "iscsi-4k-randwrite.toml")
NFS_SCENARIO = os.path.join(ROOT, "scenarios", "nfs-sync-knfsd.toml")
PROFILE = os.path.join(ROOT, "scenarios", "profiles", "strict-plp.toml")


def mutated(tmp_path, source, pattern, replacement):
    """A copy of ``source`` with the first line matching ``pattern`` replaced (or ``replacement``
    appended after the top-level keys when the pattern is None)."""
    text = open(source, encoding="utf-8").read()
    if pattern is None:
        head, sep, rest = text.partition("\n[")
        text = head + "\n" + replacement + "\n" + sep + rest
    else:
        text, n = re.subn(pattern, replacement, text, count=1, flags=re.M)
        assert n == 1, pattern
    path = tmp_path / os.path.basename(source)
    path.write_text(text, encoding="utf-8")
    return str(path)


SCENARIO_CASES = [
    # (line pattern, replacement, key as named, the range)
    (r"^threads = .*$", "threads = [1, 100000]", "threads", limits.THREADS),
    (r"^threads = .*$", "threads = [0, 1]", "threads", limits.THREADS),
    (r"^threads = \[1, 4\]$", "threads = [1, 5000]", "quick.threads", limits.THREADS),
    (r"^runtime = 30 .*$", "runtime = 1e12", "runtime", limits.SCENARIO_RUNTIME_S),
    (r"^runtime = 30 .*$", "runtime = nan", "runtime", limits.SCENARIO_RUNTIME_S),
    (r"^runtime = 5$", "runtime = inf", "quick.runtime", limits.SCENARIO_RUNTIME_S),
    (r"^ramp = 5$", "ramp = 1e9", "ramp", limits.RAMP_S),
    (r"^luns = 8$", "luns = 100000", "luns", limits.LUNS),
    (r"^luns = 8$", "luns = true", "luns", limits.LUNS),
    (r"^lun_size = \"1G\"$", "lun_size = \"1000000T\"", "lun_size", limits.LUN_SIZE),
    (r"^bs = .*$", "bs = \"1G\"", "bs", limits.SCENARIO_BS),
    (r"^bs = .*$", "bs = 3", "bs", limits.SCENARIO_BS),
    (r"^volblocksize = .*$", "volblocksize = \"24k\"", "volblocksize", limits.ZFS_BLOCK),
]


@pytest.mark.parametrize("pattern,replacement,key,limit", SCENARIO_CASES,
                         ids=[c[1].replace(" ", "") for c in SCENARIO_CASES])
def test_scenario_values_outside_the_option_ranges_are_refused(tmp_path, pattern, replacement, key, limit):
    path = mutated(tmp_path, SCENARIO, pattern, replacement)
    with pytest.raises(UsageError) as exc:
        load_scenario(path)
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(f"{path}: key '{key}' "), msg
    assert limit.allowed() in msg, msg


def test_nfs_threads_names_its_range(tmp_path):
    path = mutated(tmp_path, NFS_SCENARIO, None, "nfs_threads = 100000")
    with pytest.raises(UsageError) as exc:
        load_scenario(path)
    assert str(exc.value).startswith(f"{path}: key 'nfs_threads' ") and limits.NFS_THREADS.allowed() in str(exc.value)


def test_scenario_refusal_through_the_cli_is_one_line_and_exit_2(tmp_path):
    path = mutated(tmp_path, SCENARIO, r"^threads = .*$", "threads = [1, 100000]")
    proc = slogqual("scenario", "show", path)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and path in lines[0] and "'threads'" in lines[0] and limits.THREADS.allowed() in lines[0]


def test_the_edges_of_the_ranges_are_accepted(tmp_path):
    """The ranges are what is refused, not more: the largest value each range allows loads."""
    path = mutated(tmp_path, SCENARIO, r"^threads = .*$", f"threads = [1, {int(limits.THREADS.hi)}]")
    assert load_scenario(path).threads[-1] == limits.THREADS.hi
    path = mutated(tmp_path, SCENARIO, r"^runtime = 30 .*$", f"runtime = {limits.SCENARIO_RUNTIME_S.hi:g}")
    assert load_scenario(path).runtime_s == limits.SCENARIO_RUNTIME_S.hi
    path = mutated(tmp_path, PROFILE, r"^runtime = 2$", f"runtime = {limits.RUNTIME_S.hi:g}")
    assert profiles.load(path).runtime_s == limits.RUNTIME_S.hi


PROFILE_CASES = [
    (r"^runtime = 2$", "runtime = 1e12", "runtime", limits.RUNTIME_S),
    (r"^runtime = 2$", "runtime = 2\nsettle = 1e9", "settle", limits.SETTLE_S),
    (r"^max_rounds = 25$", "max_rounds = 100000000", "steady_state.max_rounds", limits.MAX_ROUNDS),
    (r"^max_rounds = 25$", "max_rounds = 25\nwindow = 100000", "steady_state.window", limits.WINDOW),
    (r"^max_rounds = 25$", "max_rounds = 25\nrange_pct = 500", "steady_state.range_pct", limits.PERCENT),
    (r"^round_runtime = 1$", "round_runtime = true", "steady_state.round_runtime", limits.RUNTIME_S),
]


@pytest.mark.parametrize("pattern,replacement,key,limit", PROFILE_CASES,
                         ids=[c[1].replace(" ", "").replace("\n", ";") for c in PROFILE_CASES])
def test_profile_values_outside_the_option_ranges_are_refused(tmp_path, pattern, replacement, key, limit):
    path = mutated(tmp_path, PROFILE, pattern, replacement)
    with pytest.raises(UsageError) as exc:
        profiles.load(path)
    msg = str(exc.value)
    assert "\n" not in msg and re.match(re.escape(path) + r":\d+: " + re.escape(key) + ": ", msg), msg
    assert f"allowed: " in msg and f"{limit.hi:g}" in msg.replace(",", ""), msg


def test_the_cli_refuses_in_the_same_words_from_the_same_definition(tmp_path):
    """--runtime 1e12 on the command line and runtime = 1e12 in a profile: one range, one wording."""
    proc = slogqual("sweep", "--runtime", "1e12", str(tmp_path / "x.img"))
    assert proc.returncode == 2 and limits.RUNTIME_S.allowed() in proc.stderr
    path = mutated(tmp_path, PROFILE, r"^runtime = 2$", "runtime = 1e12")
    with pytest.raises(UsageError) as exc:
        profiles.load(path)
    assert f"to {limits.RUNTIME_S.hi:g} seconds" in str(exc.value)
    assert not (tmp_path / "x.img").exists()
