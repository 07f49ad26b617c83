"""Wear before and after (issue #29): the NVMe SMART/Health log's endurance fields parsed from recorded
nvme-cli output (tests/fixtures/nvme/SOURCES.md), what a measurement's wear summary says of them, and how the
advisor's life answer uses it. The lab proves the counter against the bytes slogqual wrote
(tests/test_lab.py, the emulated NVMe's data units written)."""

import pytest

from conftest import read_fixture
from slogqual.analysis import advisor, wear
from slogqual.device.thermal import ThermalSnapshot
from slogqual.report import advice as advice_words
from slogqual.tools import nvme

U = wear.UNIT_BYTES


def lifetime(*args):
    """The advisor's life of a candidate, its facts worded as the advice document holds them."""
    return advice_words.worded(advisor.lifetime(*args))


def smart(name):
    return nvme.parse_smart_log(read_fixture("nvme", name))


def test_endurance_fields_of_nvme_cli_1_and_2_text_and_json():
    tabs = smart("smart-log-v1-tabs.txt")  # nvme-cli 1.x text: "data_units_written : 135,654"
    assert (tabs.percentage_used, tabs.data_units_written) == (0, 135654)
    assert smart("smart-log-samsung-pm991a.txt").percentage_used == 0
    netdata = smart("smart-log-netdata.json")  # "percent_used": 2
    assert (netdata.percentage_used, netdata.data_units_written) == (2, 136157684)
    four = smart("smart-log-v1-four-sensors.json")
    # a 128-bit counter: not held to the 32 bits the thermal counters are
    assert (four.percentage_used, four.data_units_written) == (15, 1474968593)
    assert four.to_dict()["data_units_written"] == 1474968593


def _snap(units=None, used=None):
    return ThermalSnapshot(path="/dev/nvme0n1", time=0.0, monotonic=0.0, source="nvme smart-log",
                           percentage_used=used, data_units_written=units).to_dict()


def test_the_device_counted_what_was_written_within_one_unit():
    written = 300 * U + 12345  # 300.02 units
    got = wear.summary(_snap(1000, 3), _snap(1301, 3), written)
    assert got["device_counted_bytes"] == 301 * U and got["resolution_bytes"] == U
    assert abs(got["device_counted_bytes"] - written) <= U
    assert got["counted_ratio"] == pytest.approx(301 * U / written, abs=1e-4)
    assert got["percentage_used_delta"] == 0 and "bytes_per_percent" not in got
    # below 100 units the rounding is more than 1 %: the difference is kept, no ratio
    small = wear.summary(_snap(1000), _snap(1021), 20 * U + 5)
    assert small["device_counted_bytes"] == 21 * U and small["counted_ratio"] is None
    assert "percentage_used" not in small
    # nothing reported: no summary (a SATA SSD through smartctl -A, a file)
    assert wear.summary(_snap(), _snap(), written) is None
    assert wear.summary(_snap(5), _snap(), written) is None  # one reading only


def test_a_per_cents_cost_is_bounded_from_two_steps_on():
    w = 40 * 10**12
    one = wear.summary(_snap(used=7), _snap(used=8), w)
    assert one["percentage_used_delta"] == 1 and "bytes_per_percent" not in one
    three = wear.summary(_snap(used=7), _snap(used=10), w)
    assert three["bytes_per_percent"] == {"low": w // 4, "high": w // 2}
    # every truncated reading pair is inside the bounds: true use between delta-1 and delta+1
    for true_use in (2.01, 3.0, 3.99):
        assert three["bytes_per_percent"]["low"] <= w / true_use <= three["bytes_per_percent"]["high"]


class _Point:
    def __init__(self, size, wear_summary):
        self.size, self.wear = size, wear_summary


def test_a_sweeps_evidence_is_its_point_that_wrote_most_and_life_follows_from_it():
    short = wear.summary(_snap(0, 10), _snap(200, 10), 200 * U)
    long = wear.summary(_snap(0, 10), _snap(10**8, 14), 10**8 * U)
    ev = wear.evidence([_Point(4096, short), _Point(131072, long), _Point(8192, None)])
    assert ev["size"] == 131072 and ev["percentage_used_delta"] == 4
    # 51.2 TB for 4 per cent: a per cent costs 10.24 (low) to 17.07 TB (high); 86 per cent left
    per_day = 1e12
    life = wear.measured_life(ev, per_day)
    assert life["remaining_percent"] == 86
    assert life["years_low"] == pytest.approx(86 * 51.2e12 / 5 / per_day / 365, rel=1e-3)
    assert life["years_low"] < life["years_high"]
    assert wear.measured_life(short, per_day) is None  # no measured cost


def test_the_advisors_life_without_a_rating_comes_from_the_measured_wear():
    ev = dict(wear.summary(_snap(0, 10), _snap(10**8, 14), 10**8 * U), size=131072)
    rate = 1e12 / 86400  # a terabyte a day to the log
    life = lifetime(rate, None, None, "given", ev)
    assert life["rated_bytes"] is None and life["endurance_basis"].startswith("measured")
    assert life["years"] == life["measured_years"]["years_low"]
    assert "one per cent of its life costs" in life["assumption"] and "write amplification included" in life["assumption"]
    # with a rating too: the rating answers, the measurement stands beside it
    rated = lifetime(rate, advisor.Endurance(tbw=600), None, "given", ev)
    assert rated["years"] == pytest.approx(600e12 / 1e12 / 365, rel=1e-3) and rated["measured_years"]
    # a sweep whose counters hardly moved: the assumption stays, and says what the device counted
    few = dict(wear.summary(_snap(0, 3), _snap(150, 3), 150 * U), size=4096)
    plain = lifetime(rate, advisor.Endurance(tbw=600), None, "given", few)
    assert plain["assumption"].startswith("the device's own write amplification is 1 (not measured)")
    assert "too few writes to measure" in plain["assumption"] and "counted 1.00 x" in plain["assumption"]
    assert lifetime(rate, None, None, "given", few) is None  # neither rated nor measured


def test_a_sas_ssds_endurance_indicator_is_its_percentage_used():
    """smartctl's JSON of a SAS SSD (tests/fixtures/smartctl/SOURCES.md: a Toshiba PM5-M, `smartctl -a --json`)
    carries the Solid State Media log page's Percentage Used Endurance Indicator; no data units (SCSI has none)."""
    from conftest import read_fixture as fixture
    from slogqual.tools import smartctl

    h = smartctl.parse_health(fixture("smartctl", "sas-ssd-toshiba-kpm5xmug400g.json"))
    assert h.percentage_used == 0 and h.data_units_written is None
    nvme = smartctl.parse_health(fixture("smartctl", "nvme-samsung-mzvl21t0hclr-health.json"))
    assert nvme.percentage_used is not None and nvme.data_units_written is not None


# --- SATA and SAS SSDs through smartctl (tests/fixtures/smartctl/SOURCES.md) ----------------------------------

def _health(name):
    from slogqual.tools import smartctl
    return smartctl.parse_health(read_fixture("smartctl", name))


def _snapshot_of(name, monkeypatch, device="/dev/sda"):
    """The sweep's snapshot of a disk whose smartctl printed the recorded capture ``name``."""
    from slogqual.device import thermal
    from slogqual.tools import smartctl

    monkeypatch.setattr(smartctl, "available", lambda: True)
    monkeypatch.setattr(smartctl, "health", lambda d: _health(name))
    return thermal._smartctl(thermal._new(device), device)


def test_smartctl_asks_every_protocols_wear_log_in_one_run():
    from slogqual.tools import smartctl
    argv = smartctl.argv_health("/dev/sda")
    # ATA: all Device Statistics pages (-l ssd alone would give ATA page 7 only, without the sectors written);
    # SCSI: the Solid State Media page and the error counter log with the bytes processed
    for log in ("devstat", "ssd", "error"):
        assert argv[argv.index(log) - 1] == "-l"
    assert argv[:2] == ["smartctl", "--json=c"] and argv[-1] == "/dev/sda"


def test_an_ata_ssds_device_statistics_are_its_sectors_written_and_percentage_used():
    """A Samsung 860 EVO's `smartctl -x -j` (smartctl 7.0): Device Statistics page 1 and page 7."""
    import json

    h = _health("sata-ssd-samsung-860evo-devstat.json")
    doc = json.loads(read_fixture("smartctl", "sata-ssd-samsung-860evo-devstat.json"))
    general = {e["name"]: e["value"] for e in doc["ata_device_statistics"]["pages"][0]["table"]}
    assert h.usable and h.protocol == "ATA" and h.temperature_c == 36
    assert h.logical_sectors_written == general["Logical Sectors Written"] != general["Logical Sectors Read"]
    assert h.logical_sector_bytes == doc["logical_block_size"] == 512
    assert h.percentage_used == 19 and h.data_units_written is None and h.write_bytes_processed is None
    # on this Samsung the vendor attribute 241 counts the same sectors; it is not what was read (its unit is
    # the vendor's: see smartctl.py), so a statistic not valid yet is no reading even with 241 there
    attr241 = next(a for a in doc["ata_smart_attributes"]["table"] if a["id"] == 241)
    assert attr241["raw"]["value"] == h.logical_sectors_written
    doc["ata_device_statistics"]["pages"][0]["table"][2]["flags"]["valid"] = False
    from slogqual.tools import smartctl
    assert smartctl.parse_health(json.dumps(doc)).logical_sectors_written is None


def test_a_sas_ssds_write_counter_is_its_bytes_processed_to_a_megabyte():
    import json
    from slogqual.tools import smartctl

    hgst, toshiba = _health("sas-ssd-hgst-husmr3280ass200.json"), _health("sas-ssd-toshiba-kpm5xmug400g.json")
    assert (hgst.protocol, hgst.percentage_used, hgst.write_bytes_processed) == ("SCSI", 0, 2473166 * 10**6)
    assert toshiba.write_bytes_processed == 12103790 * 10**6  # "12103.790": the write row, not read or verify
    assert hgst.logical_sectors_written is None and hgst.data_units_written is None
    doc = json.loads(read_fixture("smartctl", "sas-ssd-hgst-husmr3280ass200.json"))
    for unread in ("0.000", 2473.166):  # smartctl's 0.000 for a device without the parameter; a number
        doc["scsi_error_counter_log"]["write"]["gigabytes_processed"] = unread
        assert smartctl.parse_health(json.dumps(doc)).write_bytes_processed is None


def test_an_ata_ssds_wear_over_a_measurement_from_its_snapshots(monkeypatch):
    """The recorded capture is the snapshot before; the one after is it with the measurement's writes counted
    (one logical sector per 512 bytes, as the device counts them), and its percentage used moved by 3 over a
    long run."""
    import dataclasses

    before = _snapshot_of("sata-ssd-samsung-860evo-devstat.json", monkeypatch)
    assert before.ok and before.error is None and before.source == "smartctl"
    assert (before.percentage_used, before.logical_sector_bytes) == (19, 512)
    written = 300 << 20  # 300 MiB of 4 KiB writes
    after = dataclasses.replace(before, logical_sectors_written=before.logical_sectors_written + written // 512)
    got = wear.summary(before.to_dict(), after.to_dict(), written)
    assert got["counter"] == "logical_sectors_written" and got["resolution_bytes"] == 512
    assert got["device_counted_bytes"] == written and got["counted_ratio"] == 1.0
    assert got["logical_sectors_written"]["after"] - got["logical_sectors_written"]["before"] == written // 512
    assert got["percentage_used_delta"] == 0 and "bytes_per_percent" not in got
    # a sector size only one snapshot knows: the counts are not compared
    assert "counter" not in wear.summary(dataclasses.replace(before, logical_sector_bytes=None).to_dict(),
                                         after.to_dict(), written)
    # a long run: its percentage used moved 19 -> 22 over 60 TB, a per cent costs 15-30 TB
    w = 60 * 10**12
    long = dataclasses.replace(after, logical_sectors_written=before.logical_sectors_written + w // 512,
                               percentage_used=22)
    ev = dict(wear.summary(before.to_dict(), long.to_dict(), w), size=131072)
    assert ev["bytes_per_percent"] == {"low": w // 4, "high": w // 2}
    life = lifetime(1e12 / 86400, None, None, "given", ev)
    assert life["measured_years"]["remaining_percent"] == 78 and life["years"] == life["measured_years"]["years_low"]
    rated = lifetime(1e12 / 86400, advisor.Endurance(tbw=300), None, "given", ev)
    assert "counted 1.00 x" in rated["assumption"] and "one per cent of its life costs" in rated["assumption"]
    few = dict(wear.summary(before.to_dict(), after.to_dict(), written), size=4096)
    said = lifetime(1e12 / 86400, advisor.Endurance(tbw=300), None, "given", few)["assumption"]
    assert "counted 1.00 x" in said and "(its ATA Device Statistics' Logical Sectors Written)" in said


def test_a_sas_ssds_counted_bytes_are_exact_to_a_megabyte(monkeypatch):
    import dataclasses

    before = _snapshot_of("sas-ssd-hgst-husmr3280ass200.json", monkeypatch)
    assert before.ok and before.percentage_used == 0 and before.critical_threshold_c == 60
    written = 250 * 10**6 + 123456
    # smartctl's reading after: the count to the nearest 10^6 bytes
    after = dataclasses.replace(before, write_bytes_processed=before.write_bytes_processed + 250 * 10**6)
    got = wear.summary(before.to_dict(), after.to_dict(), written)
    assert got["counter"] == "write_bytes_processed" and got["resolution_bytes"] == wear.SCSI_RESOLUTION_BYTES
    assert abs(got["device_counted_bytes"] - written) <= got["resolution_bytes"]
    assert got["counted_ratio"] == pytest.approx(250e6 / written, abs=1e-4)
    # below 100 MB written the rounding is more than 1 %: the difference is kept, no ratio
    assert wear.summary(before.to_dict(), after.to_dict(), 99 * 10**6)["counted_ratio"] is None


def test_a_disk_without_the_wear_logs_has_a_snapshot_and_no_wear(monkeypatch):
    """A Toshiba SATA SSD whose JSON has no Device Statistics (this capture did not ask `-l devstat`; a device
    without the log gives the same JSON: smartctl's 'not supported' is text that --json drops)."""
    import json
    from slogqual.tools import smartctl

    h = _health("sata-ssd-toshiba-thnsnh128gbst.json")
    assert h.usable and h.protocol == "ATA" and h.temperature_c == 32
    assert all(getattr(h, f) is None for f in ("percentage_used", "data_units_written", "logical_sectors_written",
                                               "logical_sector_bytes", "write_bytes_processed"))
    snap = _snapshot_of("sata-ssd-toshiba-thnsnh128gbst.json", monkeypatch)
    assert snap.ok and snap.error is None and snap.temperature_c == 32
    assert wear.summary(snap.to_dict(), snap.to_dict(), 10**9) is None
    assert wear.evidence([_Point(4096, None)]) is None
    # a log read that failed: smartctl sets exit status bit 2 (FAILSMART, ataprint.cpp's failuretest of an
    # optional command) and goes on; the document is still the device's
    doc = json.loads(read_fixture("smartctl", "sata-ssd-toshiba-thnsnh128gbst.json"))
    doc["smartctl"]["exit_status"] = 4
    assert smartctl.parse_health(json.dumps(doc)).usable
