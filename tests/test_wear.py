"""Wear before and after (issue #29): the NVMe SMART/Health log's endurance fields parsed from recorded
nvme-cli output (tests/fixtures/nvme/SOURCES.md), what a measurement's wear summary says of them, and how the
advisor's life answer uses it. The lab proves the counter against the bytes slogqual wrote
(tests/test_lab.py, the emulated NVMe's data units written)."""

import pytest

from conftest import read_fixture
from slogqual.analysis import advisor, wear
from slogqual.device.thermal import ThermalSnapshot
from slogqual.tools import nvme

U = wear.UNIT_BYTES


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
    life = advisor.lifetime(rate, None, None, "given", ev)
    assert life["rated_bytes"] is None and life["endurance_basis"].startswith("measured")
    assert life["years"] == life["measured_years"]["years_low"]
    assert "one per cent of its life costs" in life["assumption"] and "write amplification included" in life["assumption"]
    # with a rating too: the rating answers, the measurement stands beside it
    rated = advisor.lifetime(rate, advisor.Endurance(tbw=600), None, "given", ev)
    assert rated["years"] == pytest.approx(600e12 / 1e12 / 365, rel=1e-3) and rated["measured_years"]
    # a sweep whose counters hardly moved: the assumption stays, and says what the device counted
    few = dict(wear.summary(_snap(0, 3), _snap(150, 3), 150 * U), size=4096)
    plain = advisor.lifetime(rate, advisor.Endurance(tbw=600), None, "given", few)
    assert plain["assumption"].startswith("the device's own write amplification is 1 (not measured)")
    assert "too few writes to measure" in plain["assumption"] and "counted 1.00 x" in plain["assumption"]
    assert advisor.lifetime(rate, None, None, "given", few) is None  # neither rated nor measured


def test_a_sas_ssds_endurance_indicator_is_its_percentage_used():
    """smartctl's JSON of a SAS SSD (tests/fixtures/smartctl/SOURCES.md: a Toshiba PM5-M, `smartctl -a --json`)
    carries the Solid State Media log page's Percentage Used Endurance Indicator; no data units (SCSI has none)."""
    from conftest import read_fixture as fixture
    from slogqual.tools import smartctl

    h = smartctl.parse_health(fixture("smartctl", "sas-ssd-toshiba-kpm5xmug400g.json"))
    assert h.percentage_used == 0 and h.data_units_written is None
    nvme = smartctl.parse_health(fixture("smartctl", "nvme-samsung-mzvl21t0hclr-health.json"))
    assert nvme.percentage_used is not None and nvme.data_units_written is not None
