"""Qualification profiles: the shipped ones load, criteria parse, and every mistake is one line
naming the file, the line and the key."""

import os
import re

import pytest

from conftest import ROOT, slogqual
from slogqual.errors import UsageError
from slogqual.qualify import profile as P

GOOD = """\
# a test profile
name = "t"
sizes = ["4k", "128k"]

[steady_state]
max_rounds = 6
window = 5

[[criterion]]
check = "lat_us.p99 @ 4k <= 100"
why = "because"

[[criterion]]
name = "bandwidth"
check = "mbps @ 128k >= 1190"
"""


def write(tmp_path, text, name="p.toml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def error_of(tmp_path, text):
    path = write(tmp_path, text)
    with pytest.raises(UsageError) as exc:
        P.load(path)
    msg = str(exc.value)
    assert "\n" not in msg
    return path, msg


def line_of(text, needle):
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize("name", ["nfs-10gbe", "oltp-log", "homelab-1gbe", "strict-plp"])
def test_shipped_profiles_load_and_explain_themselves(name):
    p = P.load(name)
    assert p.name == name and p.criteria
    with open(p.path) as fh:
        text = fh.read()
    assert text.lstrip().startswith("#") and "Why these thresholds" in text
    for c in p.criteria:
        if c.kind == P.KIND_SWEEP:
            assert c.size in p.sizes


def test_shipped_profiles_cover_what_the_issue_asks():
    nfs = P.load("nfs-10gbe")
    checks = {(c.metric, c.size) for c in nfs.criteria}
    assert ("mbps", 128 * 1024) in checks and ("mbps", 1 << 20) in checks and ("lat_us.p99", 4096) in checks
    assert any(c.threshold == 1190 for c in nfs.criteria if c.metric == "mbps")  # 10 GbE ≈ 1,190 MiB/s
    oltp = P.load("oltp-log")
    assert {c.size for c in oltp.criteria if c.metric == "lat_us.p999"} == {4096, 8192, 16384}
    home = P.load("homelab-1gbe")
    assert all(c.threshold == 119 for c in home.criteria if c.metric == "mbps")  # 1 GbE ≈ 119 MiB/s
    strict = P.load("strict-plp")
    dev = {(c.metric, c.op, c.threshold) for c in strict.criteria if c.kind == P.KIND_DEVICE}
    assert ("power_loss", "==", "protected-measured") in dev and ("link", "==", "ok") in dev
    assert not any(m == "write_cache" for m, _, _ in dev)  # a cache bit is not power-loss protection
    assert strict.precondition == "full"


def test_good_profile_parses(tmp_path):
    p = P.load(write(tmp_path, GOOD))
    assert p.sizes == [4096, 131072] and p.max_rounds == 6
    c1, c2 = p.criteria
    assert (c1.kind, c1.metric, c1.size, c1.op, c1.threshold, c1.why) == ("sweep", "lat_us.p99", 4096, "<=", 100.0,
                                                                          "because")
    assert c1.line == line_of(GOOD, "lat_us.p99") and c2.name == "bandwidth" and c2.unit == "MiB/s"
    assert len(p.digest) == 64


@pytest.mark.parametrize("text,metric,kind,threshold", [
    ("lat_us.p99.9 @ 8k <= 50", "lat_us.p999", "sweep", 50.0),
    ("flush_lat_us.mean @ 4k < 30", "flush_lat_us.mean", "sweep", 30.0),
    ("iops @ 512 >= 10_000", "iops", "sweep", 10000.0),
    ("write_cache == no-volatile-cache", "write_cache", "device", "no-volatile-cache"),
    ("link == full", "link", "device", "ok"),
    ("class in nvme, optane, nvdimm", "class", "device", ("nvme", "optane", "nvdimm")),
    ("steady_state == reached", "steady_state", "steady_state", "reached"),
    ("slog_benefit @ iscsi-4k-randwrite >= 2", "slog_benefit", "scenario", 2.0),
])
def test_criterion_forms(text, metric, kind, threshold):
    c = P.parse_check(text, ["iscsi-4k-randwrite"])
    assert (c.metric, c.kind, c.threshold) == (metric, kind, threshold)


@pytest.mark.parametrize("text,needle", [
    ("lat_us.p98 @ 4k <= 100", "did you mean 'p99'"),
    ("lat_us @ 4k <= 100", "name a statistic"),
    ("lat_us.p99 <= 100", "needs a size"),
    ("lat_us.p99 @ 3000 <= 100", "not a sweep size"),
    ("lat_us.p99 @ 4k == 100", "use one of"),
    ("latency @ 4k <= 100", "unknown metric"),
    ("link == fulll", "did you mean 'full'"),
    ("write_cache == maybe", "no value 'maybe'"),
    ("slog_benefit @ iscsi-4k-ranwrite >= 2", "did you mean 'iscsi-4k-randwrite'"),
    ("mbps @ 1m >= lots", "not a number"),
    ("mbps 1m", "cannot read"),
])
def test_bad_criteria_say_why(text, needle):
    with pytest.raises(ValueError) as exc:
        P.parse_check(text, ["iscsi-4k-randwrite", "nfs-sync"])
    assert needle in str(exc.value)


def test_typod_key_in_a_criterion_names_file_line_and_key(tmp_path):
    text = GOOD.replace("why =", "whyy =")
    path, msg = error_of(tmp_path, text)
    assert msg.startswith(f"{path}:{line_of(text, 'whyy')}: criterion[1].whyy: unknown key")
    assert "did you mean 'why'" in msg


def test_typod_top_level_and_table_keys(tmp_path):
    text = GOOD.replace("sizes =", "size =")
    path, msg = error_of(tmp_path, text)
    assert msg.startswith(f"{path}:{line_of(text, 'size =')}: size: unknown key") and "'sizes'" in msg
    text = GOOD.replace("max_rounds", "max_round")
    path, msg = error_of(tmp_path, text)
    assert msg.startswith(f"{path}:{line_of(text, 'max_round')}: steady_state.max_round: unknown key")


def test_criterion_on_a_size_that_is_not_measured(tmp_path):
    text = GOOD.replace("mbps @ 128k", "mbps @ 1m")
    path, msg = error_of(tmp_path, text)
    assert msg.startswith(f"{path}:{line_of(text, 'mbps @ 1m')}: criterion[2].check: size 1M is not measured")
    assert "4K, 128K" in msg


@pytest.mark.parametrize("size", ['"3000"', '"16m"', '"0"'])
def test_steady_state_size_must_be_a_sweep_size(tmp_path, size):
    # refused with the profile, before a device is claimed (fio would reject bs=3000 on O_DIRECT later)
    text = GOOD.replace("[steady_state]", f"[steady_state]\nsize = {size}")
    path, msg = error_of(tmp_path, text)
    assert msg.startswith(f"{path}:{line_of(text, 'size = ' + size)}: steady_state.size: ") and "sweep size" in msg


def test_bad_values_and_bad_toml_name_the_line(tmp_path):
    text = GOOD.replace("max_rounds = 6", "max_rounds = -1")
    path, msg = error_of(tmp_path, text)
    assert msg.startswith(f"{path}:{line_of(text, 'max_rounds')}: steady_state.max_rounds: -1 is out of range "
                          "(allowed: 0 to 1000)")
    text = GOOD.replace('check = "lat_us.p99 @ 4k <= 100"', 'check = "lat_us.p99 @ 4k <= 100')
    path, msg = error_of(tmp_path, text)
    assert re.match(re.escape(path) + r":\d+: TOML: ", msg)
    path, msg = error_of(tmp_path, 'name = "x"\n')
    assert "no [[criterion]]" in msg
    text = GOOD.replace('check = "mbps @ 128k >= 1190"', 'chekc = "mbps @ 128k >= 1190"')
    path, msg = error_of(tmp_path, text)
    assert msg.startswith(f"{path}:{line_of(text, 'chekc')}: criterion[2].chekc: unknown key")


@pytest.mark.parametrize("line,key", [("runtime = inf", "runtime"), ("runtime = nan", "runtime"),
                                      ("settle = inf", "settle")])
def test_numbers_that_are_not_finite_are_refused(tmp_path, line, key):
    """TOML has inf and nan; neither is a number of seconds (nan even slips past a '< minimum' check)."""
    text = GOOD.replace('sizes = ["4k", "128k"]', f'sizes = ["4k", "128k"]\n{line}')
    path, msg = error_of(tmp_path, text)
    assert msg.startswith(f"{path}:{line_of(text, line)}: {key}: must be a number"), msg


def test_a_threshold_that_overflows_to_inf_is_refused(tmp_path):
    path, msg = error_of(tmp_path, GOOD.replace("<= 100", "<= 1e309"))
    assert "1e309" in msg and "criterion[1]" in msg, msg


def test_unknown_profile_name_lists_the_shipped_ones():
    with pytest.raises(UsageError) as exc:
        P.load("no-such-profile")
    assert "nfs-10gbe" in str(exc.value)


def test_cli_bad_profile_is_one_line_and_exit_2(tmp_path):
    text = GOOD.replace("why =", "whyy =")
    path = write(tmp_path, text)
    target = tmp_path / "t.img"
    target.write_bytes(b"\0" * (1 << 20))
    proc = slogqual("qualify", target, "--profile", path, "--out", tmp_path / "out", env={"SLOGQUAL_STORE": str(tmp_path / "s.sqlite")})
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{path}:{line_of(text, 'whyy')}: criterion[1].whyy" in lines[0]
    assert not os.path.exists(tmp_path / "out")  # nothing measured, nothing written


def test_cli_sizes_override_must_cover_the_criteria(tmp_path):
    path = write(tmp_path, GOOD)
    target = tmp_path / "t.img"
    target.write_bytes(b"\0" * (1 << 20))
    proc = slogqual("qualify", target, "--profile", path, "--sizes", "4k", "--out", tmp_path / "out",
                    env={"SLOGQUAL_STORE": str(tmp_path / "s.sqlite")})
    assert proc.returncode == 2 and "size 128K is not measured (--sizes = 4K)" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_profile_dir_is_in_the_repository():
    assert P.PROFILE_DIR == os.path.join(ROOT, "scenarios", "profiles")
