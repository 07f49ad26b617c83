"""Thermal evidence (issue #15): the nvme smart-log and smartctl health parsers on real captures
(tests/fixtures/nvme/smart-log-*, tests/fixtures/smartctl/*; sources in each folder's SOURCES.md), the
device snapshot (tools replaced, sysfs from a recorded tree) and the pure comparison of two snapshots."""

import dataclasses
import json
import os
import subprocess
import tarfile

import pytest

from conftest import FIXTURES, read_fixture
from slogqual.analysis import thermal as analysis
from slogqual.report import sweep as sweep_words
from slogqual.device import thermal
from slogqual.errors import ToolFailedError, ToolOutputError
from slogqual.kernel import sysfs
from slogqual.tools import nvme, smartctl
from slogqual.tools import spawn as _run

THERMAL_FIELDS = ("temperature_c", "warning_temp_time_min", "critical_temp_time_min", "thm_temp1_trans_count",
                  "thm_temp2_trans_count", "thm_temp1_total_time_s", "thm_temp2_total_time_s", "sensors_c")


def smart(name):
    return nvme.parse_smart_log(read_fixture("nvme", name))


def health(name):
    return smartctl.parse_health(read_fixture("smartctl", name))


# --- nvme smart-log on real captures ------------------------------------------------------------------------

def test_pm991a_text_nvme_cli_2_with_thermal_management_counters():
    log = smart("smart-log-samsung-pm991a.txt")
    assert log.form == "text"
    assert log.temperature_c == 33  # "33 °C (306 K, 91 °F)": from the Kelvin figure, 306 - 273
    assert (log.thm_temp1_trans_count, log.thm_temp2_trans_count) == (718, 2)
    assert (log.thm_temp1_total_time_s, log.thm_temp2_total_time_s) == (1476, 0)
    assert (log.warning_temp_time_min, log.critical_temp_time_min) == (0, 0)
    assert log.sensors_c == {1: 33} and log.critical_warning == 0 and log.over_temperature_now is False


def test_tab_aligned_text_nvme_cli_1():
    log = smart("smart-log-v1-tabs.txt")
    assert log.form == "text" and log.temperature_c == 34 and log.sensors_c == {1: 34, 2: 30}
    assert [getattr(log, f) for f in THERMAL_FIELDS[1:7]] == [0, 0, 0, 0, 0, 0]


def test_json_nvme_cli_2_spacing_kelvin_temperature():
    log = smart("smart-log-netdata.json")
    assert log.form == "json" and log.temperature_c == 310 - 273
    assert [getattr(log, f) for f in THERMAL_FIELDS[1:7]] == [0, 0, 0, 0, 0, 0]
    assert log.sensors_c is None and log.critical_warning == 0  # no sensor reported: absent, not {}


def test_json_nvme_cli_1_spacing_four_sensors():
    log = smart("smart-log-v1-four-sensors.json")
    assert log.temperature_c == 301 - 273
    assert log.sensors_c == {1: 306 - 273, 2: 301 - 273, 3: 296 - 273, 4: 295 - 273}
    assert log.thm_temp1_trans_count == 0 and log.thm_temp2_total_time_s == 0


def test_json_and_text_forms_fill_the_same_fields():
    # No public capture shows one drive in both forms (see nvme/SOURCES.md): the two nvme-cli 1.x captures
    # (same nvme-cli field set, text and JSON) must give the same fields, in the same units and types.
    text, js = smart("smart-log-v1-tabs.txt"), smart("smart-log-v1-four-sensors.json")
    for f in THERMAL_FIELDS:
        assert (getattr(text, f) is None) == (getattr(js, f) is None), f
        assert type(getattr(text, f)) is type(getattr(js, f)), f
    # and the same drive state in both forms where the numbers coincide: 0 in every counter
    assert [getattr(text, f) for f in THERMAL_FIELDS[1:7]] == [getattr(js, f) for f in THERMAL_FIELDS[1:7]]
    # the composite temperature is in Kelvin in JSON, in Celsius (and Kelvin) in text: both end in Celsius
    assert 0 < js.temperature_c < 100 and 0 < text.temperature_c < 100


def test_capitalised_key_and_decoded_critical_warning_of_some_nvme_cli_2_builds():
    # nvme-cli's json_smart_log writes "Temperature" in some 2.x builds and, with -H, critical_warning as
    # an object; a real capture's values in that shape must read the same
    doc = json.loads(read_fixture("nvme", "smart-log-netdata.json"))
    doc["Temperature"] = doc.pop("temperature")
    doc["critical_warning"] = {"value": 2, "available_spare": 0, "temp_threshold": 1}
    log = nvme.parse_smart_log(json.dumps(doc))
    assert log.temperature_c == 37 and log.critical_warning == 2 and log.over_temperature_now is True


def test_numbers_as_strings_or_integral_floats_are_read_and_odd_ones_are_absent():
    doc = json.loads(read_fixture("nvme", "smart-log-v1-four-sensors.json"))
    doc.update(thm_temp1_trans_count="7", thm_temp1_total_time=12.0, thm_temp2_trans_count=1.5,
               warning_temp_time=True, critical_comp_time=-1, temperature_sensor_2=0)
    log = nvme.parse_smart_log(json.dumps(doc))
    assert (log.thm_temp1_trans_count, log.thm_temp1_total_time_s) == (7, 12)
    assert log.thm_temp2_trans_count is None and log.warning_temp_time_min is None
    assert log.critical_temp_time_min is None
    assert 2 not in log.sensors_c and log.temperature_c == 28  # a 0 K sensor is "not reported"


def test_to_dict_is_json_ready():
    d = smart("smart-log-v1-four-sensors.json").to_dict()
    assert json.loads(json.dumps(d))["sensors_c"] == {"1": 33, "2": 28, "3": 23, "4": 22}


@pytest.mark.parametrize("text", [
    "", "   \n", "[]", "null", "42", "{}", "{\"temperature\": \"hot\"}", "{\"thm_temp1_trans_count\": [1]}",
    "{\"temperature\": true, \"warning_temp_time\": {}}", "{\"temperature\": ", "nvme: command not found",
    "Smart Log for NVME device:nvme0 namespace-id:ffffffff\ncritical_warning : 0\n",
], ids=["empty", "blank", "list", "null", "number", "empty-object", "string-temp", "list-counter", "bool-and-object",
        "cut-json", "not-found", "only-critical-warning"])
def test_garbage_and_wrong_types_are_tool_output_errors(text):
    with pytest.raises(ToolOutputError) as exc:
        _run.parse_text("nvme", nvme.argv_smart_log("/dev/nvme0"), text, nvme.parse_smart_log)
    assert exc.value.program == "nvme" and exc.value.argv == ["nvme", "smart-log", "-o", "json", "/dev/nvme0"]
    with pytest.raises(ValueError):  # bare: the contract's "cannot read this", nothing else
        nvme.parse_smart_log(text)


def fake_run(monkeypatch, stdout, rc=0, seen=None):
    def run(argv, **kw):
        if seen is not None:
            seen.append(list(argv))
        if rc and kw.get("check"):
            raise _run.failure(argv, rc, "NVMe status: INVALID_LOG_PAGE\n")
        return subprocess.CompletedProcess(list(argv), rc, stdout, "")

    monkeypatch.setattr(_run, "run", run)


def test_smart_log_runs_the_argv_and_parses_through_the_contract(monkeypatch):
    seen = []
    fake_run(monkeypatch, read_fixture("nvme", "smart-log-netdata.json"), seen=seen)
    assert nvme.smart_log("/dev/nvme0").temperature_c == 37
    assert seen == [["nvme", "smart-log", "-o", "json", "/dev/nvme0"]]
    fake_run(monkeypatch, "{\"temperature\": \"x\"}")
    with pytest.raises(ToolOutputError) as exc:
        nvme.smart_log("/dev/nvme0")
    assert exc.value.argv[:2] == ["nvme", "smart-log"]
    fake_run(monkeypatch, "", rc=1)
    with pytest.raises(ToolFailedError):
        nvme.smart_log("/dev/nvme0")


def test_id_ctrl_thresholds_in_celsius():
    q = nvme.parse_id_ctrl(read_fixture("nvme", "qemu-lab-id-ctrl.json"))
    assert (q.wctemp, q.cctemp, q.warning_threshold_c, q.critical_threshold_c) == (343, 373, 70, 100)
    m = nvme.parse_id_ctrl(read_fixture("nvme", "id-ctrl-micron-9200.txt"))
    assert (m.warning_threshold_c, m.critical_threshold_c) == (75, 80)


# --- smartctl health on real captures -----------------------------------------------------------------------

def test_smartctl_nvme_health_log_with_sensors():
    h = health("nvme-samsung-mzvl21t0hclr-health.json")
    assert h.usable and h.protocol == "NVMe" and h.temperature_c == 29 and h.sensors_c == {1: 29, 2: 30}
    assert (h.warning_temp_time_min, h.critical_temp_time_min, h.critical_warning) == (0, 0, 0)
    # the wear logs ride along: smartctl gives each -l to the protocol it belongs to (tests/test_wear.py)
    assert smartctl.argv_health("/dev/nvme0") == ["smartctl", "--json=c", "-i", "-A", "-l", "devstat", "-l", "ssd",
                                                  "-l", "error", "/dev/nvme0"]


def test_smartctl_nvme_health_log_without_sensors_and_sas_trip_point():
    h = health("nvme-intel-ssdpeknw010t8-all.json")
    assert h.usable and h.temperature_c == 36 and h.sensors_c is None and h.warning_temp_time_min == 0
    sas = health("sas-ssd-toshiba-kpm5xmug400g.json")
    assert sas.usable and sas.protocol == "SCSI" and (sas.temperature_c, sas.drive_trip_c) == (30, 70)
    assert sas.warning_temp_time_min is None  # SCSI has no NVMe counters: absent, not 0


def test_smartctl_without_temperature_is_not_usable():
    assert not health("nvme-kioxia-kcd61lul3t84.json").usable  # --info only
    v = health("virtio-unable-to-detect.json")
    assert not v.usable and v.errors == ["/dev/vda: Unable to detect device type"]
    with pytest.raises(ToolOutputError):
        _run.parse_text("smartctl", ["smartctl"], "=======> UNRECOGNIZED OPTION: json\n", smartctl.parse_health)


def test_identification_argv_is_unchanged():
    assert smartctl.argv("/dev/sda") == ["smartctl", "--json=c", "-i", "-g", "wcache", "/dev/sda"]
    assert smartctl.argv("/dev/nvme0n1", nvme=True) == ["smartctl", "--json=c", "-i", "/dev/nvme0n1"]


# --- snapshots ------------------------------------------------------------------------------------------------

@pytest.fixture
def no_tools(monkeypatch):
    """Any attempt to start or even look for a program fails the test."""
    def refuse(*a, **kw):
        raise AssertionError(f"a tool was run: {a}")

    monkeypatch.setattr(_run, "run", refuse)
    monkeypatch.setattr(_run, "require", refuse)
    monkeypatch.setattr(_run, "which", refuse)


def test_snapshot_of_a_regular_file_is_none_without_running_a_tool(tmp_path, no_tools):
    f = tmp_path / "file.img"
    f.write_bytes(b"\0" * 4096)
    assert thermal.snapshot(str(f)) is None
    assert thermal.snapshot("nbd+unix:///?socket=/tmp/x") is None


def test_snapshot_of_a_missing_path_is_an_error_not_an_exception(tmp_path, no_tools):
    snap = thermal.snapshot(str(tmp_path / "nope"))
    assert snap is not None and not snap.ok and "No such file" in snap.error


@pytest.fixture(scope="module")
def lab_sys(tmp_path_factory):
    dest = tmp_path_factory.mktemp("lab-sysfs")
    with tarfile.open(os.path.join(FIXTURES, "sysfs", "lab-qemu-guest.tar.gz")) as tf:
        tf.extractall(dest)
    return str(dest / "lab-qemu-guest" / "sys")


def devnum(root, name):
    return sysfs.read(os.path.join(root, "class", "block", name, "dev"))


def test_snapshot_of_a_pmem_namespace_runs_no_tool(lab_sys, no_tools):
    assert thermal._linux("/dev/pmem0", devnum(lab_sys, "pmem0"), lab_sys) is None


def test_nvme_namespace_asks_its_controller_with_nvme_cli(lab_sys, monkeypatch):
    asked = []
    monkeypatch.setattr(nvme, "available", lambda: True)
    monkeypatch.setattr(nvme, "smart_log", lambda c: asked.append(c) or smart("smart-log-samsung-pm991a.txt"))
    monkeypatch.setattr(nvme, "id_ctrl", lambda c: nvme.parse_id_ctrl(read_fixture("nvme", "qemu-lab-id-ctrl.json")))
    snap = thermal._linux("/dev/nvme0n1", devnum(lab_sys, "nvme0n1"), lab_sys)
    assert asked == ["/dev/nvme0"] and snap.ok and snap.source == thermal.SOURCE_NVME and snap.queried == "/dev/nvme0"
    assert snap.transport == "nvme" and snap.temperature_c == 33 and snap.thm_temp1_trans_count == 718
    assert (snap.warning_threshold_c, snap.critical_threshold_c) == (70, 100) and snap.error is None
    d = snap.to_dict()
    assert json.loads(json.dumps(d)) == d and thermal.ThermalSnapshot.from_dict(d) == snap


def test_nvme_cli_failing_falls_back_to_smartctl(lab_sys, monkeypatch):
    def fail(c):
        raise ToolFailedError("nvme smart-log /dev/nvme0… failed: INVALID_LOG_PAGE", program="nvme", returncode=1)

    monkeypatch.setattr(nvme, "available", lambda: True)
    monkeypatch.setattr(nvme, "smart_log", fail)
    monkeypatch.setattr(smartctl, "available", lambda: True)
    monkeypatch.setattr(smartctl, "health", lambda d: health("nvme-samsung-mzvl21t0hclr-health.json"))
    snap = thermal._linux("/dev/nvme0n1", devnum(lab_sys, "nvme0n1"), lab_sys)
    assert snap.ok and snap.source == thermal.SOURCE_SMARTCTL and snap.queried == "/dev/nvme0"
    assert snap.temperature_c == 29 and snap.sensors_c == {"1": 29, "2": 30} and snap.thm_temp1_trans_count is None
    assert any("INVALID_LOG_PAGE" in n for n in snap.notes) and snap.error is None


def test_no_tool_at_all_is_an_error_snapshot(lab_sys, monkeypatch):
    monkeypatch.setattr(_run, "which", lambda p: None)
    snap = thermal._linux("/dev/nvme0n1", devnum(lab_sys, "nvme0n1"), lab_sys)
    assert not snap.ok and "nvme is not installed" in snap.error and "smartctl is not installed" in snap.error


def test_scsi_disk_reads_smartctl_temperature_and_trip_point(lab_sys, monkeypatch):
    asked = []
    monkeypatch.setattr(smartctl, "available", lambda: True)
    monkeypatch.setattr(smartctl, "health", lambda d: asked.append(d) or health("sas-ssd-toshiba-kpm5xmug400g.json"))
    snap = thermal._linux("/dev/sda", devnum(lab_sys, "sda"), lab_sys)
    assert asked == ["/dev/sda"] and snap.ok and snap.transport == "scsi"
    assert (snap.temperature_c, snap.critical_threshold_c) == (30, 70)


def test_smartctl_unusable_is_an_error_snapshot(lab_sys, monkeypatch):
    monkeypatch.setattr(smartctl, "available", lambda: True)
    monkeypatch.setattr(smartctl, "health", lambda d: health("virtio-unable-to-detect.json"))
    snap = thermal._linux("/dev/sdb", devnum(lab_sys, "sdb"), lab_sys)
    assert not snap.ok and "Unable to detect device type" in snap.error


# --- comparing two snapshots -----------------------------------------------------------------------------------

def snap_from(log, t, **over):
    s = thermal.ThermalSnapshot(path="/dev/nvme0n1", time=1_700_000_000.0 + t, monotonic=1000.0 + t,
                                source=thermal.SOURCE_NVME, queried="/dev/nvme0", transport="nvme",
                                warning_threshold_c=70, critical_threshold_c=100)
    for f in ("temperature_c", "warning_temp_time_min", "critical_temp_time_min", "thm_temp1_trans_count",
              "thm_temp2_trans_count", "thm_temp1_total_time_s", "thm_temp2_total_time_s", "critical_warning"):
        setattr(s, f, getattr(log, f))
    return dataclasses.replace(s, **over)


@pytest.fixture
def pm991a():
    return smart("smart-log-samsung-pm991a.txt")


def warnings_of(before, after):
    """analysis.thermal's warnings of two snapshots, in the words the sweep stores (report/sweep)."""
    return [sweep_words.thermal_line(n) for n in analysis.compare(before, after)]


def info_of(before, after):
    return [sweep_words.thermal_line(n) for n in analysis.info(before, after)]


def summary_of(before, after):
    return sweep_words.thermal_summary(before, after)


def test_equal_snapshots_give_no_warning(pm991a):
    before, after = snap_from(pm991a, 0), snap_from(pm991a, 60)
    assert warnings_of(before, after) == []
    s = summary_of(before, after)
    assert s["available"] and s["throttled"] is False and s["warnings"] == [] and s["interval_s"] == 60
    assert s["info"] == ["temperature steady at 33 °C over 60 s"]


def test_a_rise_in_a_throttling_counter_is_a_warning_naming_it(pm991a):
    before = snap_from(pm991a, 0)
    after = snap_from(pm991a, 312, thm_temp1_trans_count=721, thm_temp1_total_time_s=1516, temperature_c=41)
    w = warnings_of(before, after)
    assert len(w) == 2
    assert w[0].startswith("thermal throttling during the measurement: thm_temp1_trans_count rose from 718 to 721 "
                           "(+3) over 312 s")
    assert "thm_temp1_total_time_s rose from 1476 to 1516 (+40 s) over 312 s" in w[1]
    s = summary_of(before, after)
    assert s["throttled"] is True and s["warnings"] == w
    assert s["counters"]["thm_temp1_trans_count"] == {"before": 718, "after": 721, "delta": 3, "unit": "count",
                                                      "what": analysis.COUNTERS[0][1]}
    assert s["temperature_c"]["delta"] == 8 and s["info"] == ["temperature rose from 33 °C to 41 °C (+8 °C) over 312 s"]
    assert json.loads(json.dumps(s)) == s  # a document


def test_warning_temperature_time_and_the_threshold(pm991a):
    before = snap_from(pm991a, 0)
    after = snap_from(pm991a, 600, warning_temp_time_min=2, temperature_c=71)
    w = warnings_of(before, after)
    assert "over temperature during the measurement: warning_temp_time_min rose from 0 to 2 (+2 min) over 600 s" in w[0]
    assert w[0].endswith("(70 °C)")
    assert w[1] == ("over temperature: the device was at 71 °C after the measurement (from 33 °C) over 600 s, at or "
                    "above its warning temperature threshold of 70 °C")
    assert summary_of(before, after)["throttled"] is False  # hot, but the HCTM counters did not move


def test_temperature_rise_below_threshold_is_info_only(pm991a):
    before, after = snap_from(pm991a, 0), snap_from(pm991a, 60, temperature_c=69)
    assert warnings_of(before, after) == []
    assert info_of(before, after) == ["temperature rose from 33 °C to 69 °C (+36 °C) over 60 s"]
    # no threshold known: never a warning, however hot
    assert warnings_of(dataclasses.replace(before, warning_threshold_c=None, critical_threshold_c=None),
                            dataclasses.replace(after, temperature_c=95, warning_threshold_c=None,
                                                critical_threshold_c=None)) == []


def test_critical_warning_temperature_bit(pm991a):
    w = warnings_of(snap_from(pm991a, 0), snap_from(pm991a, 5, critical_warning=2))
    assert w == ["over temperature: SMART/Health critical warning bit 1 (temperature) set after the measurement "
                 "(critical_warning 0 -> 2) over 5 s"]


def test_a_counter_going_down_makes_the_evidence_unreliable(pm991a):
    w = warnings_of(snap_from(pm991a, 0), snap_from(pm991a, 10, thm_temp1_trans_count=0))
    assert w == ["thermal evidence unreliable: thm_temp1_trans_count went down from 718 to 0 over 10 s (a counter "
                 "over the device's life: reset, or the snapshots are not of the same device)"]


def test_documents_compare_like_snapshots(pm991a):
    before = snap_from(pm991a, 0).to_dict()
    after = snap_from(pm991a, 30, thm_temp2_trans_count=3).to_dict()
    assert warnings_of(before, after) == [
        "thermal throttling during the measurement: thm_temp2_trans_count rose from 2 to 3 (+1) over 30 s: "
        "transitions into thermal management level 2 (heavy throttling)"]


def test_smartctl_snapshots_without_counters_compare_on_what_they_have():
    h = health("nvme-samsung-mzvl21t0hclr-health.json")
    base = thermal.ThermalSnapshot(path="/dev/nvme0n1", time=0.0, monotonic=0.0, source=thermal.SOURCE_SMARTCTL,
                                   temperature_c=h.temperature_c, warning_temp_time_min=h.warning_temp_time_min,
                                   critical_temp_time_min=h.critical_temp_time_min)
    later = dataclasses.replace(base, time=90.0, monotonic=90.0, warning_temp_time_min=1)
    assert warnings_of(base, dataclasses.replace(base, time=90.0, monotonic=90.0)) == []
    assert warnings_of(base, later)[0].startswith("over temperature during the measurement: "
                                                       "warning_temp_time_min rose from 0 to 1 (+1 min) over 90 s")
    assert summary_of(base, later)["throttled"] is None  # smartctl cannot say


def test_missing_evidence_is_no_warning_and_the_summary_says_why(pm991a):
    err = thermal.ThermalSnapshot(path="/dev/nvme0n1", time=0.0, monotonic=0.0, error="nvme is not installed")
    assert warnings_of(err, snap_from(pm991a, 5)) == [] and warnings_of(None, None) == []
    s = summary_of(err, None)
    assert s["available"] is False and s["throttled"] is None and s["warnings"] == []
    assert s["unavailable"] == "before: nvme is not installed; after: not taken"
