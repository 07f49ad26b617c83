"""Thermal and wear evidence on FreeBSD: nvmecontrol's SMART/Health log parser, and the device snapshot taken
the FreeBSD way (slogqual.device.thermal) through a recorded host (tools/freebsd/host.py) whose /dev is a
directory of the test's own: each disk node a symlink to the real /dev/zero, a character device as a FreeBSD
disk is.

No real ``nvmecontrol logpage -p 2`` capture was found (tests/fixtures/freebsd/SOURCES.md), so its text is
printed here by tests/nvmecontrol_logpage.py with logpage.c's own format strings from real captures of the
same log pages by nvme-cli and smartctl, and the parser must read what those tools read. smartctl's answers
are real captures (tests/fixtures/smartctl); the recorded host answers ``smartctl --version`` with a real
FreeBSD smartctl's banner (tests/fixtures/freebsd). Captures of different machines are combined where a test
needs two programs' answers; each test says which.
"""

import os

import pytest

import nvmecontrol_logpage as logpage
from conftest import read_fixture
from slogqual.device import thermal
from slogqual.errors import ToolFailedError, ToolOutputError
from slogqual.tools import nvme, smartctl
from slogqual.tools import spawn as _run
from slogqual.tools.freebsd import host as bsdhost
from slogqual.tools.freebsd import nvmecontrol

LOG_FIELDS = ("temperature_c", "warning_temp_time_min", "critical_temp_time_min", "thm_temp1_trans_count",
              "thm_temp2_trans_count", "thm_temp1_total_time_s", "thm_temp2_total_time_s", "critical_warning",
              "percentage_used", "data_units_written", "sensors_c")

PM991A_TEXT = logpage.print_log_health(logpage.PM991A)
# nvmecontrol of FreeBSD 12.0 (no thermal management lines) on the TEAMGROUP MP33's page
TEAMGROUP_TEXT = logpage.print_log_health(logpage.teamgroup_mp33(), with_transitions=False, sensors=7)

SMARTCTL_VERSION = ("smartctl", "--version")
BANNER_7_0 = read_fixture("freebsd", "smartctl-banner-freebsd-12.0-decomo.txt")
TEAMGROUP_JSON = read_fixture("smartctl", "nvme-teamgroup-mp33-tm8fp6256g-7.5-freebsd.json")


def logpage_argv(ctrl):
    return tuple(nvmecontrol.argv_health(ctrl))


# --- the parser -----------------------------------------------------------------------------------------------

def test_the_pm991a_page_reads_as_nvme_cli_read_it():
    log = nvmecontrol.parse_health(PM991A_TEXT)
    cli = nvme.parse_smart_log(read_fixture("nvme", "smart-log-samsung-pm991a.txt"))
    assert {f: getattr(log, f) for f in LOG_FIELDS} == {f: getattr(cli, f) for f in LOG_FIELDS}
    # the throttling evidence itself, not only agreement: T1 718 transitions over 1476 s
    assert (log.thm_temp1_trans_count, log.thm_temp1_total_time_s) == (718, 1476) and log.temperature_c == 33
    assert (log.available_spare, log.available_spare_threshold) == (100, 50)


def test_an_older_nvmecontrol_without_thermal_management_lines_leaves_them_unknown():
    log = nvmecontrol.parse_health(TEAMGROUP_TEXT)
    sm = smartctl.parse_health(TEAMGROUP_JSON)
    for f in ("temperature_c", "warning_temp_time_min", "critical_temp_time_min", "critical_warning",
              "percentage_used", "data_units_written"):
        assert getattr(log, f) == getattr(sm, f), f
    assert log.percentage_used == 7 and log.data_units_written == 25882809
    assert all(getattr(log, f) is None for f in LOG_FIELDS[3:7]) and log.sensors_c is None


def test_the_critical_warning_bits_are_not_fields():
    # " Temperature:                   %d" is bit 1 of Critical Warning State; "Temperature:" the composite
    text = PM991A_TEXT.replace(" Temperature:                   0", " Temperature:                   1")
    assert nvmecontrol.parse_health(text).temperature_c == 33


def test_a_saturated_32_bit_counter_printed_with_percent_d_reads_back_whole():
    # logpage.c prints the 32-bit thermal fields with %d; the spec saturates them at FFFFFFFFh, shown as -1
    text = PM991A_TEXT.replace("Total Time For Temperature 1:   1476", "Total Time For Temperature 1:   -1")
    assert nvmecontrol.parse_health(text).thm_temp1_total_time_s == 0xFFFFFFFF


@pytest.mark.parametrize("text", [
    "",
    read_fixture("smartctl", "nvme-text-ct500p2ssd8-a.txt"),  # another tool's health report
    "Error Information Log\n=====================\nNo error entries found\n",  # another page (logpage.c)
    PM991A_TEXT.replace("Percentage used:                0", "Percentage used:                lots"),
    PM991A_TEXT.replace("Temperature:                    306 K", "Temperature:                    hot"),
    PM991A_TEXT.replace("Temperature:                    306 K, 32.85 C, 91.13 F\n", ""),
], ids=["empty", "smartctl", "error-log", "not-a-number", "no-kelvin", "no-temperature"])
def test_what_is_not_a_health_log_is_a_value_error(text):
    with pytest.raises(ValueError):
        nvmecontrol.parse_health(text)


def test_the_door_runs_its_argv_and_keeps_the_error_contract(tmp_path):
    assert nvmecontrol.argv_health("nvme0") == ["nvmecontrol", "logpage", "-p", "2", "nvme0"]
    good = bsdhost.recorded({logpage_argv("nvme0"): PM991A_TEXT}, str(tmp_path))
    assert nvmecontrol.health("nvme0", good).thm_temp1_trans_count == 718
    # logpage.c: errx(EX_IOERR, "get log page request returned error"), as err(3) prints it
    refused = bsdhost.recorded({logpage_argv("nvme0"): (74, "", "nvmecontrol: get log page request returned error\n")},
                               str(tmp_path))
    with pytest.raises(ToolFailedError, match="get log page request returned error") as exc:
        nvmecontrol.health("nvme0", refused)
    assert exc.value.returncode == 74
    garbage = bsdhost.recorded({logpage_argv("nvme0"): "Error Information Log\n"}, str(tmp_path))
    with pytest.raises(ToolOutputError):
        nvmecontrol.health("nvme0", garbage)


def test_controller_of_a_partition_or_namespace_node():
    assert [nvmecontrol.controller_of(n) for n in ("nvd0", "nda1p3", "nvd10s1a", "nvme2", "nvme3ns1")] == \
        ["nvme0", "nvme1", "nvme10", "nvme2", "nvme3"]


# --- the snapshot on a recorded FreeBSD host --------------------------------------------------------------------

def snap_of(path, outputs, dev_dir):
    return thermal.snapshot(path, host=bsdhost.recorded(outputs, dev_dir))


@pytest.mark.parametrize("name,ctrl", [("nvd0", "nvme0"), ("nda0p2", "nvme0"), ("nvme1ns1", "nvme1"),
                                       ("nvme1", "nvme1")])
def test_an_nvme_disk_is_read_from_its_controllers_health_log(dev, name, ctrl):
    snap = snap_of(dev(name), {logpage_argv(ctrl): PM991A_TEXT}, dev.dir)
    assert snap.ok and snap.source == thermal.SOURCE_NVMECONTROL and snap.transport == "nvme"
    assert snap.queried == os.path.join(dev.dir, ctrl) and snap.error is None
    cli = nvme.parse_smart_log(read_fixture("nvme", "smart-log-samsung-pm991a.txt"))
    assert [getattr(snap, f) for f in LOG_FIELDS[:-1]] == [getattr(cli, f) for f in LOG_FIELDS[:-1]]
    assert snap.sensors_c == {"1": 33}  # as the Linux snapshot keeps them: by sensor number as text
    assert snap.warning_threshold_c is None and any("WCTEMP" in n for n in snap.notes)


def test_the_freebsd_and_linux_nvme_snapshots_of_one_page_agree(dev, monkeypatch):
    bsd = snap_of(dev("nvd0"), {logpage_argv("nvme0"): PM991A_TEXT}, dev.dir)
    monkeypatch.setattr(nvme, "available", lambda: True)
    cli_text = read_fixture("nvme", "smart-log-samsung-pm991a.txt")
    monkeypatch.setattr(nvme, "smart_log", lambda c: nvme.parse_smart_log(cli_text))
    monkeypatch.setattr(nvme, "id_ctrl", lambda c: nvme.parse_id_ctrl(read_fixture("nvme", "qemu-lab-id-ctrl.json")))
    linux = thermal._nvme(thermal._new("/dev/nvme0n1"), "/dev/nvme0", "/dev/nvme0n1")
    assert {f: getattr(bsd, f) for f in LOG_FIELDS} == {f: getattr(linux, f) for f in LOG_FIELDS}


def test_nvmecontrol_failing_falls_back_to_smartctl_on_the_controller(dev):
    # nvmecontrol refused the page; smartctl answers with the TEAMGROUP MP33's JSON (smartctl 7.5, FreeBSD 14.3)
    # and its version with the banner of a FreeBSD 12.0 smartctl 7.0: two machines, both with JSON
    ctrl_node = os.path.join(dev.dir, "nvme0")
    outputs = {logpage_argv("nvme0"): (74, "", "nvmecontrol: get log page request returned error\n"),
               SMARTCTL_VERSION: BANNER_7_0, tuple(smartctl.argv_health(ctrl_node)): TEAMGROUP_JSON}
    snap = snap_of(dev("nda0"), outputs, dev.dir)
    assert snap.ok and snap.source == thermal.SOURCE_SMARTCTL and snap.queried == ctrl_node
    assert (snap.temperature_c, snap.percentage_used, snap.data_units_written) == (54, 7, 25882809)
    assert (snap.warning_threshold_c, snap.critical_threshold_c) == (100, 110)  # smartctl 7.5's JSON has them
    assert snap.thm_temp1_trans_count is None and snap.error is None
    assert any("get log page request returned error" in n for n in snap.notes)
    assert any(n.startswith("nvmecontrol unavailable") for n in snap.notes)


def test_a_smartctl_without_json_is_read_from_its_text(dev):
    # smartctl 6.5 (its own banner answers --version) is asked for its -a text: one capture, both answers
    text = read_fixture("smartctl", "nvme-text-transcend-ts128gmte850-a.txt")
    ctrl_node = os.path.join(dev.dir, "nvme0")
    outputs = {SMARTCTL_VERSION: text.splitlines()[0] + "\n", tuple(smartctl.argv_health_text(ctrl_node)): text}
    snap = snap_of(dev("nvd0"), outputs, dev.dir)  # no nvmecontrol recorded: it is not there
    assert snap.ok and snap.source == thermal.SOURCE_SMARTCTL
    assert (snap.temperature_c, snap.critical_warning, snap.percentage_used, snap.data_units_written) == \
        (38, 0x09, 16, 62288091)
    assert any("nvmecontrol is not installed" in n for n in snap.notes)


def test_no_nvmecontrol_and_no_smartctl_is_an_error_snapshot_naming_both(dev):
    snap = snap_of(dev("nvd0"), {}, dev.dir)
    assert not snap.ok and snap.transport == "nvme"
    assert "nvmecontrol is not installed" in snap.error and "smartctl is not installed" in snap.error


def test_a_sata_partition_asks_smartctl_about_its_whole_disk(dev):
    # a Samsung 860 EVO's JSON (captured on Linux: smartctl's JSON is the same on FreeBSD) for /dev/ada0,
    # the FreeBSD 12.0 smartctl's banner for its version
    disk = os.path.join(dev.dir, "ada0")
    outputs = {SMARTCTL_VERSION: BANNER_7_0,
               tuple(smartctl.argv_health(disk)): read_fixture("smartctl", "sata-ssd-samsung-860evo-devstat.json")}
    snap = snap_of(dev("ada0p3.eli"), outputs, dev.dir)
    h = smartctl.parse_health(read_fixture("smartctl", "sata-ssd-samsung-860evo-devstat.json"))
    assert snap.ok and snap.transport == "sata" and snap.queried == disk
    assert (snap.temperature_c, snap.percentage_used, snap.logical_sectors_written) == \
        (h.temperature_c, h.percentage_used, h.logical_sectors_written)
    assert snap.logical_sectors_written is not None  # the wear analysis.wear compares


def test_a_sas_disk_keeps_its_trip_point(dev):
    # a Toshiba SAS SSD's JSON (captured on Linux) for /dev/da3
    disk = os.path.join(dev.dir, "da3")
    outputs = {SMARTCTL_VERSION: BANNER_7_0,
               tuple(smartctl.argv_health(disk)): read_fixture("smartctl", "sas-ssd-toshiba-kpm5xmug400g.json")}
    snap = snap_of(dev("da3"), outputs, dev.dir)
    assert snap.ok and snap.transport == "scsi" and (snap.temperature_c, snap.critical_threshold_c) == (30, 70)


def test_a_failing_smartctl_is_an_error_snapshot(dev):
    disk = os.path.join(dev.dir, "ada1")
    outputs = {SMARTCTL_VERSION: BANNER_7_0,
               tuple(smartctl.argv_health(disk)): read_fixture("smartctl", "virtio-unable-to-detect.json")}
    snap = snap_of(dev("ada1"), outputs, dev.dir)
    assert not snap.ok and "Unable to detect device type" in snap.error


@pytest.mark.parametrize("name", ["md0", "zvol/tank/slog", "vtbd0", "gpt/slog0", "diskid/DISK-S3Z9NB0K", "null"])
def test_what_is_no_disk_of_its_own_is_none_without_running_a_tool(dev, name):
    def refuse(argv, **_kw):
        raise AssertionError(f"a tool was run: {argv}")

    assert thermal.snapshot(dev(name), host=bsdhost.Host(runner=refuse, dev=dev.dir)) is None


def test_a_regular_file_is_none_without_running_a_tool(tmp_path):
    def refuse(argv, **_kw):
        raise AssertionError(f"a tool was run: {argv}")

    f = tmp_path / "dev" / "ada0"
    f.parent.mkdir()
    f.write_bytes(b"\0" * 4096)
    assert thermal.snapshot(str(f), host=bsdhost.Host(runner=refuse, dev=str(f.parent))) is None


def test_the_live_host_reads_smartctls_version_once_per_binary(monkeypatch):
    # the live programs' version goes through run.get_version's cache, as every other caller's
    seen = []
    monkeypatch.setattr(_run, "get_version", lambda p, a, r: seen.append((p, tuple(a))) or
                        _run.ToolVersion(p, (7, 4), "smartctl 7.4"))
    assert smartctl.version(bsdhost.LIVE).version == (7, 4) and seen == [("smartctl", ("--version",))]

