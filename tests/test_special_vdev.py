"""The ZIL on the special vdev (issue #39): ``log = "special"`` in a scenario, refused before OpenZFS 2.4, the
module parameter set for the configuration and put back, where the ZIL blocks went, and the Direct IO trap.

What the lab guests recorded is read as it is (tests/fixtures/zfs/2.3, 2.4: versions and parameter files;
tests/fixtures/zpool/iostat-vp-special-logs-cache.txt: `zpool iostat -vp` of a pool with a special vdev;
tests/fixtures/scenario: a real lab scenario run). No special-vdev run is recorded yet (tests/test_lab_special.py
records one in the 2.4 lab): its steps here are the real run's SLOG steps as a special-vdev configuration
would record them — the ZIL's bytes under the normal class (2.4's counting), the special vdev's writes from the
recorded iostat rows of a pool with one."""

import json
import os
import shutil

import pytest

from conftest import fixture_path, read_fixture, slogqual
from slogqual.analysis import scenario as scenario_analysis
from slogqual.analysis.findings import Kind
from slogqual.errors import MeasurementError, UsageError
from slogqual.pool import engine, variants
from slogqual.pool.builder import ThrowawayPool, log_vdevs, special_vdevs
from slogqual.pool.evidence import vdev_summary
from slogqual.pool.scenario import check_special_version, load_scenario, parse_scenario
from slogqual.progress import Progress
from slogqual.report import scenario as scenario_words
from slogqual.results.scenario import ScenarioResult, ScenarioStep
from slogqual.tools import fio, zfs, zfs_tunables, zpool

NVDIMM = fixture_path("scenario", "iscsi-4k-randwrite-lab-quick-nvdimm.json")

TOML = {"name": "special-4k", "kind": "zvol", "luns": 1, "lun_size": "64M", "bs": "4k", "rw": "randwrite",
        "threads": [1, 4], "runtime": 5,
        "config": [{"name": "sync=always, ZIL on the special vdev", "sync": "always", "log": "special"},
                   {"name": "sync=always, special, indirect", "sync": "always", "log": "special",
                    "zil_special_is_slog": False},
                   {"name": "sync=always + SLOG", "sync": "always", "log": "single"},
                   {"name": "sync=always, no SLOG", "sync": "always", "log": "none"}]}


def _toml(tmp_path, table=TOML):
    lines = [f"{k} = {json.dumps(v)}" for k, v in table.items() if k != "config"]
    for c in table["config"]:
        lines.append("[[config]]")
        lines += [f"{k} = {'false' if v is False else json.dumps(v)}" for k, v in c.items()]
    path = tmp_path / "special.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _versions(series):
    return json.loads(read_fixture("zfs", series, "openzfs-versions.json"))


# ---- the configuration ------------------------------------------------------------------------

def test_a_special_configuration_reads_with_its_off_switch(tmp_path):
    sc = load_scenario(str(_toml(tmp_path)))
    on, off, slog, none = sc.configs
    assert (on.log, on.zil_special_is_slog, off.zil_special_is_slog) == ("special", True, False)
    assert on.uses_special and on.needs_candidate and not on.uses_slog
    assert slog.zil_special_is_slog is None and "zil_special_is_slog" not in slog.to_dict()
    assert on.to_dict()["zil_special_is_slog"] is True and off.to_dict()["zil_special_is_slog"] is False


@pytest.mark.parametrize("config, said", [
    ({"name": "a", "log": "single", "zil_special_is_slog": False}, "applies to log = \"special\""),
    ({"name": "a", "log": "special", "zil_special_is_slog": 0}, "must be true or false"),
    ({"name": "a", "log": "specail"}, "must be one of none, single, mirror, stripe, special")])
def test_a_bad_special_key_is_one_line_naming_it(config, said):
    with pytest.raises(UsageError) as exc:
        parse_scenario(dict(TOML, config=[config]), "f.toml")
    assert said in str(exc.value) and "config[0]." in str(exc.value) and "\n" not in str(exc.value)


def test_the_pool_gets_the_candidate_as_its_special_vdev_and_no_log(tmp_path):
    """The pool a special configuration's variant builds: the data vdevs, then `special DEV`; no `log` section."""
    sc = load_scenario(str(_toml(tmp_path)))
    result = ScenarioResult.load(NVDIMM)
    run = engine.PoolScenarioRun(sc, result, str(tmp_path / "r.json"), Progress(quiet=True), "slogqual-special")
    plan = variants.plan(sc.configs, ["/dev/nvme0n1", "/dev/pmem0"])[0]
    special = [v for v in plan if v.config.uses_special]
    assert [(v.config.name, v.candidate) for v in special] == [
        (c, d) for c in ("sync=always, ZIL on the special vdev", "sync=always, special, indirect")
        for d in ("/dev/nvme0n1", "/dev/pmem0")]
    pool = run._pool(special[0].config, list(special[0].logs))
    argv = zpool.create_argv(pool.name, pool.vdevs, pool.logs)
    assert argv[-3:] == ["/dev/sdb", "special", "/dev/nvme0n1"] and "log" not in argv
    assert log_vdevs("special", ["/dev/nvme0n1"]) == [] and special_vdevs("single", ["/dev/x"]) == []
    with pytest.raises(UsageError, match="name one with --log"):
        special_vdevs("special", [])


def test_a_special_only_scenario_runs_with_one_candidate():
    sc = parse_scenario(dict(TOML, config=TOML["config"][:2]), "f.toml")
    variants.check_log_count(sc, 1)  # not refused as "every SLOG is a pair"
    assert [v.logs for v in variants.plan(sc.configs, ["/dev/x"])[0]] == [("/dev/x",), ("/dev/x",)]


# ---- the version: refused before 2.4 ----------------------------------------------------------

def test_refused_on_the_2_3_module_in_one_line_naming_it_and_taken_on_2_4():
    sc = parse_scenario(TOML, "f.toml")
    with pytest.raises(UsageError) as exc:
        check_special_version(sc, _versions("2.3"))
    said = str(exc.value)
    assert "needs OpenZFS 2.4" in said and "this host's OpenZFS module is 2.3.2-2~bpo12+2" in said and "\n" not in said
    check_special_version(sc, _versions("2.4"))
    check_special_version(parse_scenario(dict(TOML, config=TOML["config"][2:]), "f.toml"), _versions("2.3"))


def test_an_unknown_module_version_is_said_not_guessed():
    """`zfs --version` on a host whose module is not loaded (recorded): the userland is 2.3.2, the module unknown."""
    found = zfs.parse_versions(read_fixture("zfs", "version-host-no-module.stdout"))
    found["error"] = read_fixture("zfs", "version-host-no-module.stderr").strip().splitlines()[-1]
    assert found["module"] is None and found["userland"]
    with pytest.raises(UsageError) as exc:
        check_special_version(parse_scenario(TOML, "f.toml"), found)
    assert "module version is unknown" in str(exc.value) and found["error"][:40] in str(exc.value)


def test_the_cli_refuses_before_writing_on_this_host_and_in_a_2_3_lab(tmp_path):
    """On this machine (no zfs module loaded, or a 2.3 one) and in the lab of 2.3: exit 2, one line, nothing written."""
    path = _toml(tmp_path)
    out = tmp_path / "out.json"
    r = slogqual("scenario", "run", path, "--data", "/dev/null", "--log", "/dev/zero", "--destroy-data", "-o", out)
    assert r.returncode == 2, r.stderr
    assert "needs OpenZFS 2.4" in r.stderr and r.stderr.strip().count("\n") == 0
    r = slogqual("scenario", "run", path, "--lab", "--zfs", "2.3", "--lab-data", "hdd", "--lab-log", "nvme", "-o", out,
                 env={"SLOGQUAL_LAB_CACHE": str(tmp_path / "no-cache")})
    assert r.returncode == 2, r.stderr
    assert "the lab's OpenZFS module is 2.3" in r.stderr and r.stderr.strip().count("\n") == 0
    r = slogqual("scenario", "run", path, "--zfs", "2.4", "--data", "/dev/null", "--log", "/dev/zero", "-o", out)
    assert r.returncode == 2 and "--zfs picks the lab's OpenZFS" in r.stderr
    assert not out.exists() and not (tmp_path / "out.json.lab").exists()


# ---- the module parameters, as each version and OS names them ------------------------------------

def test_the_parameters_names_and_versions():
    p = zfs_tunables.VERSIONED["zil_special_is_slog"]
    assert (p.name("Linux"), p.name("FreeBSD")) == ("zil_special_is_slog", "vfs.zfs.zil.special_is_slog")
    assert zfs_tunables.VERSIONED["zfs_dio_enabled"].name("FreeBSD") == "vfs.zfs.dio_enabled"
    for series, has in (("2.3", False), ("2.4", True)):
        assert zfs_tunables.has("zil_special_is_slog", _versions(series)["module"]) is has
        assert zfs_tunables.has("zfs_dio_enabled", _versions(series)["module"]) is True
        # what the recorded module's parameter directory holds agrees
        assert (zfs_tunables.read_one("zil_special_is_slog", fixture_path("zfs", series, "parameters")) == 1) is has
        assert zfs_tunables.read_one("zfs_dio_enabled", fixture_path("zfs", series, "parameters")) == 1
    assert zfs_tunables.has("zil_special_is_slog", None) is None
    assert zfs_tunables.series("zfs-kmod-2.10.0") == (2, 10)


def test_the_parameter_is_set_for_the_block_and_put_back(tmp_path):
    root = tmp_path / "parameters"
    shutil.copytree(fixture_path("zfs", "2.4", "parameters"), root)
    with zfs_tunables.setting("zil_special_is_slog", 0, str(root)) as found:
        assert found == 1 and (root / "zil_special_is_slog").read_text().strip() == "0"
    assert zfs_tunables.read_one("zil_special_is_slog", str(root)) == 1
    with pytest.raises(KeyboardInterrupt):
        with zfs_tunables.setting("zil_special_is_slog", 0, str(root)):
            raise KeyboardInterrupt
    assert zfs_tunables.read_one("zil_special_is_slog", str(root)) == 1
    old = tmp_path / "2.3"
    shutil.copytree(fixture_path("zfs", "2.3", "parameters"), old)
    with pytest.raises(MeasurementError, match="no zil_special_is_slog"):
        with zfs_tunables.setting("zil_special_is_slog", 1, str(old)):
            pass
    assert not (old / "zil_special_is_slog").exists()


def _freebsd_sysctl(tmp_path, monkeypatch, known):
    """A ``sysctl`` on PATH keeping FreeBSD's answers for ``known`` ({oid: value}) in a file: ``sysctl OID`` prints
    ``OID: value``, ``sysctl OID=V`` sets it, an OID it does not know is ``unknown oid`` and exit 1 (FreeBSD's
    sysctl(8) does not exist here; its output form is what tools/freebsd/sysctl.parse reads). Every call is logged."""
    state = tmp_path / "state"
    state.write_text("".join(f"{k}: {v}\n" for k, v in known.items()))
    prog = tmp_path / "sysctl"
    prog.write_text(f"""#!/bin/sh
echo "$@" >> {tmp_path}/argv.log
case "$1" in
  *=*) oid=${{1%%=*}}; value=${{1#*=}}
       grep -q "^$oid: " {state} || {{ echo "sysctl: unknown oid '$oid'" >&2; exit 1; }}
       sed -i "s|^$oid: .*|$oid: $value|" {state}; echo "$oid: changed" ;;
  *) grep "^$1: " {state} || {{ echo "sysctl: unknown oid '$1'" >&2; exit 1; }} ;;
esac
""")
    prog.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.setattr(zfs_tunables.sys, "platform", "freebsd14")
    return state


def test_on_freebsd_the_parameter_is_its_sysctl_set_for_the_block_and_put_back(tmp_path, monkeypatch):
    state = _freebsd_sysctl(tmp_path, monkeypatch, {"vfs.zfs.zil.special_is_slog": 1, "vfs.zfs.dio_enabled": 0})
    assert zfs_tunables.read_one("zfs_dio_enabled") == 0  # FreeBSD's default, unlike Linux's
    with pytest.raises(KeyboardInterrupt):
        with zfs_tunables.setting("zil_special_is_slog", 0) as found:
            assert found == 1 and "vfs.zfs.zil.special_is_slog: 0" in state.read_text()
            raise KeyboardInterrupt
    assert "vfs.zfs.zil.special_is_slog: 1" in state.read_text()
    calls = (tmp_path / "argv.log").read_text().splitlines()
    assert calls == ["vfs.zfs.dio_enabled", "vfs.zfs.zil.special_is_slog", "vfs.zfs.zil.special_is_slog=0",
                     "vfs.zfs.zil.special_is_slog=1"]


def test_on_a_freebsd_before_2_4_the_missing_sysctl_is_named_and_nothing_is_set(tmp_path, monkeypatch):
    state = _freebsd_sysctl(tmp_path, monkeypatch, {"vfs.zfs.dio_enabled": 0})
    with pytest.raises(MeasurementError, match="no vfs.zfs.zil.special_is_slog"):
        with zfs_tunables.setting("zil_special_is_slog", 1):
            pass
    assert state.read_text() == "vfs.zfs.dio_enabled: 0\n"
    assert (tmp_path / "argv.log").read_text().splitlines() == ["vfs.zfs.zil.special_is_slog"]


# ---- where the ZIL blocks went ------------------------------------------------------------------

def _special_result(slog_counted=False):
    """The real lab run with its SLOG steps also recorded as a special-vdev configuration of the same device
    (see the module's docstring)."""
    doc = json.loads(read_fixture("scenario", "iscsi-4k-randwrite-lab-quick-nvdimm.json"))
    rows = [r for r in zpool.parse_iostat_v(read_fixture("zpool", "iostat-vp-special-logs-cache.txt"))
            if r.section in ("", "special")]
    name = "sync=always, ZIL on the special vdev"
    doc["scenario"]["configs"].append({"name": name, "sync": "always", "log": "special", "logbias": "latency",
                                       "zil_special_is_slog": True})
    for s in [s for s in doc["steps"] if s["log"] == "single"]:
        z = s["zil"]
        zil = dict(z, slog_count=0, slog_bytes=z["slog_bytes"] if slog_counted else 0,
                   normal_count=z["slog_count"] + z["normal_count"], normal_bytes=z["slog_bytes"] + z["normal_bytes"])
        doc["steps"].append(dict(s, config=name, log="special", iops=s["iops"] * 0.8, zil=zil, log_devices=[],
                                 special_devices=["/dev/pmem0"], zil_special_is_slog=1, **vdev_summary(rows)))
    return ScenarioResult.from_dict(doc, "special")


def test_the_special_steps_round_trip_and_read():
    r = _special_result()
    assert ScenarioResult.from_dict(r.to_dict(), "again").to_dict() == r.to_dict()
    s = [s for s in r.steps if s.log == "special"][0]
    assert (s.special_devices, s.zil_special_is_slog) == (["/dev/pmem0"], 1)
    assert s.special_write_bytes_s == 1002947 and s.data_write_bytes_s == 1181760  # the recorded rows
    assert s.log_write_bytes_s == 0  # no log vdev


def test_the_analysis_says_where_the_zil_went_and_compares_with_the_slog_and_none():
    r = _special_result()
    a = scenario_analysis.analyse(r)
    (e,) = a["special"]
    assert (e["device"], e["slog_config"], e["none_config"]) == ("/dev/pmem0", "sync=always + SLOG", "sync=always, no SLOG")
    assert e["zil_special_is_slog"] == 1 and e["slog_class_bytes"] == 0
    slog = {s.threads: s for s in r.steps if s.log == "single"}
    none = {s.threads: s for s in r.steps if s.config == "sync=always, no SLOG"}
    for row in e["steps"]:
        assert row["zil_normal_bytes"] == row["zil_bytes"] > 0 and row["zil_slog_bytes"] == 0
        assert row["of_slog"] == pytest.approx(0.8, abs=1e-3)
        assert row["of_none"] == pytest.approx(row["value"] / none[row["threads"]].iops, abs=1e-3)
        assert row["slog_value"] == slog[row["threads"]].iops
        assert row["special_share"] == pytest.approx(1002947 / (1002947 + 1181760), abs=1e-3)
    # the special curve is no SLOG: the verdict and problems are the run's own
    plain = scenario_analysis.analyse(ScenarioResult.load(NVDIMM))
    assert {k: a[k] for k in ("slog_benefit_at_peak", "candidates", "pairs")} == \
        {k: plain[k] for k in ("slog_benefit_at_peak", "candidates", "pairs")}
    assert [f for f in a["findings"] if f not in plain["findings"]] == []
    words = scenario_words.worded(a)["special"][0]["said"]
    assert "counted as slog (2.4 counts the special vdev's ZIL blocks as normal)" in words[0]
    assert any(w.startswith("against the dedicated SLOG of the same device (sync=always + SLOG): 0.80x") for w in words)
    assert any("of their writes on the special vdev" in w for w in words)
    lines = scenario_words.verdict_lines(r)
    assert any(line.startswith("ZIL on the special vdev /dev/pmem0 (sync=always, ZIL on the special vdev)")
               for line in lines)


def test_zil_bytes_counted_as_slog_on_a_special_pool_are_a_problem():
    a = scenario_words.worded(scenario_analysis.analyse(_special_result(slog_counted=True)))
    assert Kind.LOG_WITHOUT_SLOG.value in [f["kind"] for f in a["findings"]]
    assert "did not count as 2.4 does" in a["special"][0]["said"][0]


# ---- the Direct IO trap --------------------------------------------------------------------------

def test_a_dataset_load_with_o_direct_is_refused_in_one_line():
    load = fio.FioLoad(rw="randwrite", bs=4096, threads_per_lun=1, runtime_s=5, directory="/mnt/x", files=1,
                       file_size=1 << 20, direct=True)
    with pytest.raises(UsageError) as exc:
        engine.check_direct(load)
    assert "O_DIRECT" in str(exc.value) and "zfs_dio_enabled" in str(exc.value) and "\n" not in str(exc.value)
    assert engine.check_direct(fio.FioLoad(rw="randwrite", bs=4096, threads_per_lun=1, runtime_s=5,
                                           devices=["/dev/zd0"], direct=True)).direct


@pytest.mark.parametrize("name", ["nfs-sync", "nfs-sync-knfsd", "iscsi-4k-randwrite"])
def test_every_shipped_scenario_runs_dataset_loads_buffered(name):
    sc = load_scenario(name)
    engine.check_loads(sc)
    for t in sc.threads:
        opts, _ = fio.load_options(engine.step_load(sc, t, ["/mnt/x"] if sc.kind == "dataset" else ["/dev/zd0"]))
        assert ("direct=0" if sc.kind == "dataset" else "direct=1") in opts
