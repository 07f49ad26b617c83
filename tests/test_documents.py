"""The typed result documents (slogqual.results.scenario / .qualification / .schema): what was written
before still loads unchanged, a malformed document is refused with the bad key named, the migration
hook carries an old version forward, and readers use today's analysis, not the one frozen in the file."""

import copy
import json
import subprocess
import sys

import pytest

from conftest import fixture_path
from slogqual.analysis import scenario as scenario_analysis
from slogqual.report import scenario as scenario_words
from slogqual.qualify import judge
from slogqual.qualify import profile as P
from slogqual.results import schema as S
from slogqual.results.qualification import QualificationResult
from slogqual.results.scenario import ScenarioResult

SCENARIOS = [fixture_path("qualify", "scenario-iscsi-4k-randwrite-lab-quick.json"),
             fixture_path("scenario", "iscsi-4k-randwrite-lab-quick-2candidates.json")]
QUALIFICATION = fixture_path("qualify", "qualification-nbd-memory-952d1d3.json")


def read(path):
    with open(path) as fh:
        return json.load(fh)


@pytest.mark.parametrize("path", SCENARIOS)
def test_earlier_scenario_documents_load_and_round_trip_unchanged(path):
    doc = read(path)
    r = ScenarioResult.load(path)
    assert r.status == "complete" and len(r.steps) == len(doc["steps"]) and r.origin is None
    assert r.to_dict() == doc


def test_earlier_qualification_document_loads_and_round_trips_unchanged():
    doc = read(QUALIFICATION)
    r = QualificationResult.load(QUALIFICATION)
    assert r.verdict == "fail" and [c.result for c in r.criteria] == ["pass", "fail"]
    assert r.to_dict() == doc
    # every key a field (none left over in extra), the keys in the order the file had them, the key this
    # earlier version did not write ("rules") still absent when written back
    assert r.extra == {} and r.absent == ("rules",)
    assert json.dumps(r.to_dict(), indent=2) == json.dumps(doc, indent=2)
    assert r.device["kind"] == "nbd" and r.environment.kernel
    assert (r.summary.passed, r.summary.failed, r.summary.not_evaluated) == (1, 1, 0)
    assert r.started < r.finished and r.store.recorded and r.store.ids == {"sweep": 1, "qualification": 3}
    assert r.precondition.mode == "none" and isinstance(r.notes, list)
    # every table a type: what the reports and the store read are fields, not keys
    assert r.steady.checked and r.steady.missed and [x.n for x in r.steady.rounds] == [1, 2]
    assert r.steady.rule.window == 5 and r.steady.last_check.reason == "2 of 5 rounds"
    assert r.profile.name == "one-ms" and r.who.device_class and r.sweep.result().points[0].size == 4096
    assert [c.measured_text for c in r.criteria][0] == "241.9 µs" and r.criteria[1].kind == "scenario"
    assert [s.name for s in r.scenarios] == ["iscsi-4k-randwrite"] and r.scenarios[0].path


def test_a_document_the_current_runner_writes_loads():
    from slogqual.pool.engine import new_result
    from slogqual.pool.scenario import load_scenario
    from slogqual.results.scenario import ScenarioStep
    old = read(SCENARIOS[0])
    made = new_result(load_scenario("iscsi-4k-randwrite").quick(), True, "stripe", ["/dev/a", "/dev/b"], ["/dev/c"],
                      "fio-3.33", ["slogqual", "scenario", "run"], {})
    made.origin = "slogqual scenario run"
    made.steps = [ScenarioStep.measured(s) for s in old["steps"]]
    doc = made.to_dict()
    assert list(doc)[:12] == ["schema", "status", "error", "scenario", "quick", "pool", "environment", "log_sweeps",
                              "steps", "skipped", "analysis", "warnings"]  # the order the runner always wrote
    # the keys the run adds later are not written before it has them: the pool's ZFS API, the OpenZFS versions
    assert list(doc["pool"]) == ["layout", "data", "log", "ashift", "fs_properties", "devices"]
    assert list(doc["environment"]) == ["host", "os", "system", "kernel", "machine", "cpu", "cpus", "fio_version",
                                        "slogqual_version", "python", "started", "argv"]
    r = ScenarioResult.from_dict(json.loads(json.dumps(doc)), "new.json")
    assert r.origin == "slogqual scenario run" and r.status == "running" and r.to_dict() == doc
    assert r.log_paths == ["/dev/c"] and r.bs == 4096 and r.steps[0].threads == old["steps"][0]["threads"]


def _fixtures(family):
    import glob
    import os
    found = []
    for path in sorted(glob.glob(os.path.join(os.path.dirname(os.path.dirname(SCENARIOS[0])), "**", "*.json"),
                                 recursive=True)):
        doc = read(path)
        if isinstance(doc, dict) and str(doc.get("schema", "")).startswith(f"slogqual.{family}/"):
            found.append(path)
    return found


@pytest.mark.parametrize("path", _fixtures("qualification"))
def test_every_qualification_fixture_round_trips_byte_for_byte(path, tmp_path):
    from slogqual.results import write_json_atomic
    out = tmp_path / "again.json"
    write_json_atomic(str(out), QualificationResult.load(path).to_dict())
    with open(path, "rb") as a, open(out, "rb") as b:
        assert a.read() == b.read()


def test_unknown_keys_of_the_qualification_s_tables_are_kept_where_the_file_had_them(tmp_path):
    """CONSTRUCTED from the recorded qualification: a key no qualify wrote, planted inside a criterion, the
    steady state, a round and the summary, goes into that table's ``extra`` and comes back in its place; a
    key the file lacked (a count, a flag) stays absent."""
    from slogqual.results import write_json_atomic
    doc = read(QUALIFICATION)
    doc["criteria"][0] = dict([*list(doc["criteria"][0].items())[:3], ("planted", [1]),
                               *list(doc["criteria"][0].items())[3:]])
    doc["steady_state"] = {"first": None, **doc["steady_state"]}
    doc["steady_state"]["rounds"][1]["extra_figure"] = 2.5
    del doc["precondition"]["loops"], doc["summary"]["fail"], doc["steady_state"]["checked"]
    doc["summary"]["skipped"] = 0
    path = tmp_path / "planted.json"
    write_json_atomic(str(path), doc)
    q = QualificationResult.load(str(path))
    assert q.criteria[0].extra == {"planted": [1]} and q.steady.extra == {"first": None}
    assert q.steady.rounds[1].extra == {"extra_figure": 2.5} and q.summary.extra == {"skipped": 0}
    assert q.precondition.loops is None and q.summary.counts() == (1, 0, 0) and q.steady.checked is None
    again = tmp_path / "again.json"
    write_json_atomic(str(again), q.to_dict())
    assert again.read_bytes() == path.read_bytes()


def test_a_qualification_made_as_qualify_makes_it_is_written_in_the_writer_s_order():
    """The tables qualify builds (no file behind them) write every key in the order the recorded file has."""
    from slogqual.results.qualification import (Identity, ProfileRecord, Rules, ScenarioEntry, SteadyStateRecord,
                                                StoreRecord, Summary, SweepReference)
    doc = read(QUALIFICATION)
    q = QualificationResult.load(QUALIFICATION)
    made = QualificationResult(
        verdict=q.verdict, exit_code=q.exit_code, error=q.error, target=q.target, name=q.name,
        identity=Identity.made(doc["identity"]), device=q.device, profile=ProfileRecord.made(doc["profile"]),
        precondition=q.precondition, steady_state=SteadyStateRecord.made(doc["steady_state"]),
        sweep=SweepReference(path=q.sweep.path, status=q.sweep.status, document=q.sweep.document),
        scenarios=[ScenarioEntry(**{k: s.get(k) for k in ScenarioEntry.KEYS}) for s in doc["scenarios"]],
        criteria=q.criteria, rules=Rules(judge=1, scenario_analysis=1), summary=Summary(1, 1, 0),
        warnings=q.warnings, notes=q.notes, environment=q.environment, started=q.started, finished=q.finished,
        store=StoreRecord.made({"recorded": True, "path": doc["store"]["path"], "ids": doc["store"]["ids"]}))
    written = made.to_dict()
    assert list(written) == list(doc)[:14] + ["rules"] + list(doc)[14:]
    assert written["rules"] == {"judge": 1, "scenario_analysis": 1}
    assert json.dumps({k: v for k, v in written.items() if k != "rules"}) == json.dumps(doc)


def _scenario_fixtures():
    import glob
    import os
    found = []
    for path in sorted(glob.glob(os.path.join(os.path.dirname(os.path.dirname(SCENARIOS[0])), "**", "*.json"), recursive=True)):
        doc = read(path)
        if isinstance(doc, dict) and str(doc.get("schema", "")).startswith("slogqual.scenario/"):
            found.append(path)
    return found


@pytest.mark.parametrize("path", _scenario_fixtures())
def test_every_scenario_fixture_round_trips_byte_for_byte(path, tmp_path):
    """Loaded and written again as the runner writes (results.write_json_atomic), every recorded scenario
    result is the same file: unknown keys kept, and in the order the file had them."""
    from slogqual.results import write_json_atomic
    out = tmp_path / "again.json"
    write_json_atomic(str(out), ScenarioResult.load(path).to_dict())
    with open(path, "rb") as a, open(out, "rb") as b:
        assert a.read() == b.read()


@pytest.mark.parametrize("path", _scenario_fixtures())
def test_every_scenario_fixture_s_pool_and_environment_are_typed_with_every_key_a_field(path):
    """The runner's every key of ``pool`` and ``environment`` is a field (nothing left over in ``extra``);
    the keys a file's version did not write yet (``pool.zfs_api``, ``environment.openzfs``) are None and
    named in ``absent``; each section round-trips on its own, in the file's order."""
    from slogqual.results.scenario import PoolRecord, ScenarioEnvironment
    doc = read(path)
    r = ScenarioResult.load(path)
    assert isinstance(r.pool, PoolRecord) and isinstance(r.environment, ScenarioEnvironment)
    assert r.pool.extra == {} and r.environment.extra == {}
    assert r.pool.absent == {k for k in ("ashift", "fs_properties", "devices", "zfs_api") if k not in doc["pool"]}
    assert r.environment.absent == set(ScenarioEnvironment._MODELLED) - set(doc["environment"])
    assert (r.pool.zfs_api is None) == ("zfs_api" not in doc["pool"])
    assert (r.environment.openzfs is None) == ("openzfs" not in doc["environment"])
    assert r.pool.layout == doc["pool"]["layout"] and r.pool.log == doc["pool"]["log"] and r.pool.ashift == 12
    assert r.environment.host == doc["environment"]["host"] and r.environment.argv == doc["environment"]["argv"]
    for typed, raw in ((r.pool, doc["pool"]), (r.environment, doc["environment"])):
        assert list(typed.to_dict().items()) == list(raw.items())


def test_unknown_keys_of_pool_and_environment_are_kept_where_the_file_had_them(tmp_path):
    """CONSTRUCTED from a recorded result: a key no runner wrote, planted mid-section, goes into ``extra``
    and comes back in its place; a key this earlier version lacked stays absent until the runner sets it."""
    from slogqual.results import write_json_atomic
    doc = read(SCENARIOS[0])
    assert "zfs_api" not in doc["pool"] and "openzfs" not in doc["environment"]  # written before both existed
    doc["pool"] = dict([*list(doc["pool"].items())[:2], ("vdev_note", {"why": "planted"}),
                        *list(doc["pool"].items())[2:]])
    doc["environment"] = {"first": 1, **doc["environment"], "last": [None]}
    path = tmp_path / "planted.json"
    write_json_atomic(str(path), doc)
    r = ScenarioResult.load(str(path))
    assert r.pool.extra == {"vdev_note": {"why": "planted"}} and r.environment.extra == {"first": 1, "last": [None]}
    again = tmp_path / "again.json"
    write_json_atomic(str(again), r.to_dict())
    assert again.read_bytes() == path.read_bytes()
    r.pool.zfs_api, r.environment.openzfs = "libzfs_core", {"userland": "zfs-2.3.1", "module": "zfs-kmod-2.3.1"}
    assert list(r.to_dict()["pool"])[-2:] == ["devices", "zfs_api"] and r.to_dict()["pool"]["zfs_api"] == "libzfs_core"
    assert list(r.to_dict()["environment"])[-2:] == ["last", "openzfs"]


@pytest.mark.parametrize("path", [p for p in _scenario_fixtures() if "transport" in read(p) or "drivers" in read(p)])
def test_every_scenario_fixture_s_transport_and_drivers_are_typed(path):
    """``transport`` (its ``config`` and each configuration's attachment) and ``drivers`` are tables with fields;
    the transport's own record of an attachment is kept as it came (``extra``), each round-trips in place."""
    from slogqual.results.scenario import Attachment, Drivers, TransportRecord, TransportSettings
    doc = read(path)
    r = ScenarioResult.load(path)
    if "transport" in doc:
        t = r.transport
        assert isinstance(t, TransportRecord) and isinstance(t.config, TransportSettings)
        assert t.kind == doc["transport"]["config"]["kind"] and t.config.extra == {}
        assert set(t.attachments) == set(doc["transport"]["attachments"])
        assert all(isinstance(a, Attachment) and a.kind == t.kind for a in t.attachments.values())
        assert list(t.to_dict().items()) == list(doc["transport"].items())
        assert json.dumps(t.to_dict()) == json.dumps(doc["transport"])
    else:
        assert r.transport is None and "transport" not in r.to_dict()
    if "drivers" in doc:
        assert isinstance(r.drivers, Drivers) and r.drivers.clients == doc["drivers"]["clients"]
        assert r.drivers.fio_servers == doc["drivers"]["fio_servers"] and r.drivers.to_dict() == doc["drivers"]
    else:
        assert r.drivers is None and "drivers" not in r.to_dict()


@pytest.mark.parametrize("path", _scenario_fixtures())
def test_every_scenario_fixture_s_parameters_are_typed_with_every_key_a_field(path):
    """``scenario`` (the parameters the run measured with) is results.scenario.ScenarioParams: every key the
    runner wrote a field, its configurations and transport tables, the file's order and absences kept."""
    from slogqual.results.scenario import ConfigRecord, ScenarioParams, TransportSettings
    doc = read(path)
    sc = ScenarioResult.load(path).scenario
    assert isinstance(sc, ScenarioParams) and sc.extra == {} and sc.name == doc["scenario"]["name"]
    assert all(isinstance(c, ConfigRecord) and c.extra == {} for c in sc.configs)
    assert [c.name for c in sc.configs] == [c["name"] for c in doc["scenario"]["configs"]]
    assert (sc.transport is None) == ("transport" not in doc["scenario"])
    assert sc.transport is None or isinstance(sc.transport, TransportSettings)
    assert list(sc.to_dict().items()) == list(doc["scenario"].items())
    # what the advisor (by key) and the lab (sets source) still do with it
    assert sc.get("write_sync") == doc["scenario"]["write_sync"] and sc["bs"] == doc["scenario"]["bs"]
    sc["source"], sc["planted"] = "/abs/scenario.toml", 1
    assert list(sc.to_dict()) == list(doc["scenario"]) + ["planted"] and sc.source == "/abs/scenario.toml"


def test_a_new_run_s_transport_and_drivers_are_written_as_the_runner_always_wrote_them():
    """The runner's attach() and drivers, typed, write the dicts the transports' modules and pool.door made."""
    from slogqual.pool.engine import new_result
    from slogqual.pool.scenario import load_scenario
    from slogqual.results.scenario import Drivers
    nfs = read(fixture_path("scenario", "nfs-sync-knfsd-lab-quick.json"))
    made = new_result(load_scenario("nfs-sync").quick(), True, "stripe", ["/dev/a"], ["/dev/c"], "fio-3.33",
                      ["slogqual", "scenario", "run"], {})
    assert "transport" not in made.to_dict() and "drivers" not in made.to_dict()  # not before the run has them
    made.drivers = Drivers.of(["10.0.0.2:8765"], 1)
    for label, record in nfs["transport"]["attachments"].items():
        made.attach(label, copy.deepcopy(nfs["transport"]["config"]), copy.deepcopy(record))
    doc = made.to_dict()
    assert list(doc)[-2:] == ["drivers", "transport"]
    assert doc["drivers"] == {"clients": ["10.0.0.2:8765"], "fio_servers": 1}
    assert json.dumps(doc["transport"]) == json.dumps(nfs["transport"])
    assert ScenarioResult.from_dict(json.loads(json.dumps(doc)), "new.json").to_dict() == doc


@pytest.mark.parametrize("where,value,message", [
    (("drivers", "fio_servers"), -1, "key 'drivers.fio_servers' must be at least 0"),
    (("drivers", "clients"), [1], "key 'drivers.clients[0]' must be a string"),
    (("drivers",), "x", "key 'drivers' must be an object"),
    (("transport", "attachments"), [], "key 'transport.attachments' must be an object, not a list"),
    (("transport", "attachments", "sync=standard"), 5, "key 'transport.attachments[sync=standard]' must be an object"),
    (("transport", "config", "kind"), 3, "key 'transport.config.kind' must be a string"),
])
def test_a_malformed_transport_or_drivers_is_refused_naming_the_key(where, value, message):
    doc = read(fixture_path("scenario", "nfs-sync-knfsd-lab-quick.json"))
    doc["drivers"] = {"clients": [], "fio_servers": 0}
    _set(doc, where, value)
    with pytest.raises(S.DocumentError) as exc:
        ScenarioResult.from_dict(doc, "r.json")
    assert str(exc.value).startswith("r.json: ") and message in str(exc.value)


def _set(doc, path, value):
    *parents, last = path
    for p in parents:
        doc = doc[p]
    if value is KeyError:
        del doc[last]
    else:
        doc[last] = value


SCENARIO_BREAKAGES = [
    (("steps", 2, "iops"), "fast", "key 'steps[2].iops' must be a number, not a string 'fast'"),
    (("steps", 0, "lat_us", "p99"), -5.0, "key 'steps[0].lat_us.p99' must be at least 0"),
    (("steps", 1, "threads"), True, "key 'steps[1].threads' must be a number, not a boolean"),
    (("steps", 3, "zil"), KeyError, "key 'steps[3].zil' is missing"),
    (("steps", 0, "sync"), "sometimes", "key 'steps[0].sync' must be one of standard, always, disabled"),
    (("status",), "done", "key 'status' must be one of running, complete, failed, interrupted"),
    (("scenario",), KeyError, "key 'scenario' is missing"),
    (("scenario", "bs"), "4k", "key 'scenario.bs' must be a number"),
    (("pool", "data", 0), 5, "key 'pool.data[0]' must be a device path"),
    (("pool", "layout"), KeyError, "key 'pool.layout' is missing"),
    (("pool", "ashift"), "12", "key 'pool.ashift' must be a number, not a string '12'"),
    (("pool", "devices"), [], "key 'pool.devices' must be an object, not a list"),
    (("environment", "cpus"), 2.5, "key 'environment.cpus' must be a number, not a number 2.5"),
    (("environment", "argv", 0), 5, "key 'environment.argv[0]' must be a string"),
    (("environment",), KeyError, "key 'environment' is missing"),
    (("steps",), {"a": 1}, "key 'steps' must be a list, not an object"),
    (("analysis",), [], "key 'analysis' must be an object, not a list"),
    (("schema",), "slogqual.scenario/2", "slogqual.scenario/2 is newer than this slogqual reads"),
    (("schema",), "slogqual.sweep/1", "not a slogqual.scenario/1 document (schema: 'slogqual.sweep/1')"),
]


@pytest.mark.parametrize("path,value,message", SCENARIO_BREAKAGES, ids=[".".join(map(str, b[0])) + "=" + repr(b[1])
                                                                        for b in SCENARIO_BREAKAGES])
def test_a_malformed_scenario_document_is_refused_naming_the_key(path, value, message):
    doc = read(SCENARIOS[0])
    _set(doc, path, value)
    with pytest.raises(S.DocumentError) as exc:
        ScenarioResult.from_dict(doc, "r.json")
    assert str(exc.value).startswith("r.json: ") and message in str(exc.value)


QUALIFICATION_BREAKAGES = [
    (("criteria", 1, "result"), "maybe", "key 'criteria[1].result' must be one of pass, fail, not-evaluated"),
    (("criteria", 0, "measured"), {"x": 1}, "key 'criteria[0].measured' must be a number, a word or null"),
    (("verdict",), "PASS", "key 'verdict' must be one of pass, fail, incomplete, refused, error"),
    (("exit_code",), -1, "key 'exit_code' must be at least 0"),
    (("sweep", "document", "schema"), "slogqual.scenario/1", "key 'sweep.document.schema' must be slogqual.sweep/1"),
    (("profile",), KeyError, "key 'profile' is missing"),
    (("scenarios", 0), "x", "key 'scenarios[0]' must be an object"),
]


@pytest.mark.parametrize("path,value,message", QUALIFICATION_BREAKAGES,
                         ids=[".".join(map(str, b[0])) for b in QUALIFICATION_BREAKAGES])
def test_a_malformed_qualification_document_is_refused_naming_the_key(path, value, message):
    doc = read(QUALIFICATION)
    _set(doc, path, value)
    with pytest.raises(S.DocumentError) as exc:
        QualificationResult.from_dict(doc, "q.json")
    assert message in str(exc.value)


def test_not_an_object_at_all():
    with pytest.raises(S.DocumentError, match="a JSON list, not an object"):
        ScenarioResult.from_dict([1, 2], "r.json")


def test_the_migration_hook_carries_an_old_version_forward_one_step_at_a_time():
    doc = read(SCENARIOS[0])
    old = dict(doc, schema="slogqual.scenario/0")
    del old["warnings"]
    calls = []

    def v0_to_v1(d):
        calls.append(d["schema"])
        d["warnings"] = []  # what version 1 added, say
        return d

    up = S.upgrade(old, S.SCENARIO, "old.json", migrations={("slogqual.scenario", 0): v0_to_v1})
    assert calls == ["slogqual.scenario/0"] and up["schema"] == S.SCENARIO and up["warnings"] == []
    with pytest.raises(S.DocumentError, match="no migration from version 0"):
        S.upgrade(dict(doc, schema="slogqual.scenario/0"), S.SCENARIO, "old.json", migrations={})


def test_every_schema_name_has_one_home():
    # the literal appears in results/schema.py and nowhere else in the package
    import os
    import re
    root = os.path.dirname(os.path.dirname(os.path.abspath(S.__file__)))
    found = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                for m in re.finditer(r'"slogqual\.[a-z]+/\d+"', open(path, encoding="utf-8").read()):
                    found.append((os.path.relpath(path, root), m.group(0)))
    assert sorted({p for p, _ in found}) == [os.path.join("results", "schema.py")], found


def _stale(doc):
    """The document with a stored analysis no rule of today would write."""
    doc = copy.deepcopy(doc)
    doc["analysis"].update({"verdict": "STALE VERDICT", "slog_benefit_at_peak": 99.0, "slog_of_standard_at_peak": 9.0})
    return doc


def test_readers_use_todays_analysis_not_the_stored_one():
    doc = ScenarioResult.from_dict(_stale(read(SCENARIOS[0])))
    now = scenario_words.current(doc)
    assert now["version"] == scenario_analysis.ANALYSIS_VERSION and now["verdict"] != "STALE VERDICT"
    assert scenario_analysis.stored_version(doc) == 1  # written before analyses carried their version
    c = P.parse_check("slog_benefit @ iscsi-4k-randwrite >= 2", ["iscsi-4k-randwrite"])
    j = judge.judge_scenario(c, {"iscsi-4k-randwrite": judge.ScenarioEvidence(doc, source="file x")})
    assert j.measured == now["slog_benefit_at_peak"] != 99.0


def test_the_scenario_table_of_an_old_result_shows_todays_verdict(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps(_stale(read(SCENARIOS[0]))))
    proc = subprocess.run([sys.executable, "-m", "slogqual", "scenario", "run", "--resume", str(path), "--quiet"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "STALE VERDICT" not in proc.stdout
    assert f"verdict: {scenario_words.current(ScenarioResult.load(SCENARIOS[0]))['verdict']}" in proc.stdout


def test_json_nested_too_deeply_is_one_usage_error_line_not_a_recursion_error(tmp_path):
    # synthetic (no real document is like it): arrays nested past what Python's decoder follows
    from slogqual.errors import UsageError
    from slogqual.results import load_json, load_sweep

    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    for load in (load_json, load_sweep, ScenarioResult.load, QualificationResult.load):
        with pytest.raises(UsageError) as exc:
            load(str(path))
        assert str(exc.value).startswith(f"{path}: not a slogqual document (JSON nested deeper than")
        assert exc.value.exit_code == 2


def test_a_malformed_result_given_to_the_cli_is_one_line_naming_the_key(tmp_path):
    doc = read(SCENARIOS[0])
    doc["steps"][4]["mbps"] = None
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    proc = subprocess.run([sys.executable, "-m", "slogqual", "scenario", "plot", str(path), "-o", str(tmp_path / "p.png")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"slogqual: {path}: key 'steps[4].mbps' must be a number, not null"
    assert not (tmp_path / "p.png").exists()
