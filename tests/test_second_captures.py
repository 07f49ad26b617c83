"""Second real captures (issue #28: at least two per form, from different sources).

Each capture here is REAL output published by someone who ran the tool on their own machine; where it
came from, and what (if anything) was left out, is in the SOURCES.md of its folder. Each test asserts the
values that can be read in the capture by eye, and that the first capture of the same form and this one
are read the same way (same fields filled), so a parser that fits only one source fails here.
"""

import json

import pytest

from conftest import read_fixture
from slogqual.errors import ToolOutputError
from slogqual.tools import lspci, smartctl, spawn as run
from slogqual.tools.freebsd import ctld, gpart


# --- gpart show -p ----------------------------------------------------------------------------------------

def test_gpart_show_p_of_a_bios_and_uefi_boot_disk():
    """vermaden's ada1 (FreeBSD 13): efi, freebsd-boot, a free gap, swap, zfs, free space at the end."""
    (table,) = gpart.parse(read_fixture("freebsd", "gpart-show-p-vermaden-ada1-efi-bios-swap-zfs.txt"))
    assert (table.provider, table.scheme, table.state) == ("ada1", "GPT", "")
    assert [(p.name, p.type, p.start, p.size) for p in table.partitions] == [
        ("ada1p1", "efi", 40, 409600),
        ("ada1p2", "freebsd-boot", 409640, 1024),
        ("ada1p3", "freebsd-swap", 411648, 2097152),
        ("ada1p4", "freebsd-zfs", 2508800, 247560192),
    ]  # the two "- free -" rows are not partitions
    # entries lie in order, none overlapping: what the interlock relies on when it names a partition
    ends = [p.start + p.size for p in table.partitions]
    assert all(end <= nxt.start for end, nxt in zip(ends, table.partitions[1:]))


def test_gpart_show_p_both_captures_name_partitions_after_their_disk():
    for name, disk in (("gpart-show-p-vps-da0.txt", "da0"), ("gpart-show-p-vermaden-ada1-efi-bios-swap-zfs.txt", "ada1")):
        (table,) = gpart.parse(read_fixture("freebsd", name))
        assert table.provider == disk and table.partitions
        assert all(p.name.startswith(disk + "p") and p.name[len(disk) + 1:].isdecimal() for p in table.partitions)


def test_gpart_show_without_p_made_from_the_second_capture_is_refused():
    """The same real rows with the provider names replaced by indexes (what `gpart show` without -p
    prints; CONSTRUCTED from the capture): refused in one line, never read as partitions "1".."4"."""
    text = read_fixture("freebsd", "gpart-show-p-vermaden-ada1-efi-bios-swap-zfs.txt")
    bare = text.replace("ada1p1 ", "     1 ").replace("ada1p2 ", "     2 ").replace("ada1p3 ", "     3 ") \
               .replace("ada1p4 ", "     4 ")
    assert bare != text and "ada1p" not in bare
    with pytest.raises(ToolOutputError) as exc:
        run.parse_text("gpart", gpart.argv_show(), bare, gpart.parse)
    assert "without -p" in str(exc.value) and "\n" not in str(exc.value)


# --- iscsictl -L (plain) ----------------------------------------------------------------------------------

def test_iscsictl_plain_list_with_two_targets_whose_names_overflow_the_columns():
    """ixnas-api: two targets on one TrueNAS portal, each name longer than iscsictl's %-36s column, so
    name, portal and state are separated by one space only."""
    text = read_fixture("freebsd", "iscsictl-L-ixnas-api-two-targets.txt")
    for parse in (ctld.parse_list_plain, ctld.parse_list):  # parse_list tells the plain form by its header
        a, b = parse(text)
        assert (a.target, a.portal, a.state, a.devices) == ("iqn.2005-08.com.ixsystems.sjc1:testing5",
                                                            "prodnas.ixsystems.com", "Connected", ["da0"])
        assert (b.target, b.portal, b.state, b.devices) == ("iqn.2005-08.com.ixsystems.sjc1:testing6",
                                                            "prodnas.ixsystems.com", "Connected", ["da1"])
        assert a.session_id is None and b.session_id is None  # the plain form has no session id


def test_iscsictl_plain_both_captures_read_the_same_fields():
    one = ctld.parse_list_plain(read_fixture("freebsd", "iscsictl-L-belajarfreebsd-node01.txt"))
    two = ctld.parse_list_plain(read_fixture("freebsd", "iscsictl-L-ixnas-api-two-targets.txt"))
    assert (len(one), len(two)) == (1, 2)
    for s in one + two:
        assert s.target.startswith("iqn.") and s.portal and s.state == "Connected" and len(s.devices) == 1
        assert s.devices[0].startswith("da")


# --- lspci -vv of a function printed without its PCI domain -----------------------------------------------

SM961 = ("lspci", "sm961-x-vvv-no-domain.txt")


@pytest.mark.parametrize("address", [None, "06:00.0", "0000:06:00.0"])
def test_lspci_sm961_without_domain_full_link(address):
    """A Samsung SM961 NVMe as `lspci -x -vvv -s 06:00.00` printed it: "06:00.0 ..." with no domain,
    LnkCap 8GT/s x4, LnkSta 8GT/s (ok) x4 (ok), and the -x hex dump after the block."""
    link = lspci.parse(read_fixture(*SM961), address)
    assert link is not None and link.address == "06:00.0"
    assert (link.cap_gts, link.cap_width, link.sta_gts, link.sta_width) == (8.0, 4, 8.0, 4)
    assert (link.speed_downgraded, link.width_downgraded) == (False, False)


def test_lspci_sm961_in_another_domain_or_function_is_not_this_one():
    text = read_fixture(*SM961)
    assert lspci.parse(text, "0001:06:00.0") is None  # no domain printed means domain 0, never another
    assert lspci.parse(text, "06:00.1") is None


def test_lspci_no_domain_and_domain_captures_agree_on_form():
    """The first capture with its domain (UltraZed-EV, 980 PRO) and this one without: the same fields
    filled, each link read from its own LnkCap/LnkSta."""
    with_domain = lspci.parse(read_fixture("lspci", "ultrazed-ev-980pro-grep-lnk.txt"), "0000:01:00.0")
    without = lspci.parse(read_fixture(*SM961))
    for link in (with_domain, without):
        assert None not in (link.cap_gts, link.cap_width, link.sta_gts, link.sta_width, link.speed_downgraded)
    assert with_domain.speed_downgraded is True and without.speed_downgraded is False
    assert with_domain.sta_gts < with_domain.cap_gts and without.sta_gts == without.cap_gts


# --- smartctl 7.5 JSON with nvme_composite_temperature_threshold ------------------------------------------

TEAM = ("smartctl", "nvme-teamgroup-mp33-tm8fp6256g-7.5-freebsd.json")


def test_smartctl_75_real_json_gives_the_composite_thresholds():
    """smartctl 7.5 on FreeBSD 14.3, a TEAMGROUP MP33 256 GB: WCTEMP 100 °C, CCTEMP 110 °C in
    nvme_composite_temperature_threshold (and temperature.op_limit_max/critical_limit_max), 54 °C."""
    h = smartctl.parse_health(read_fixture(*TEAM))
    assert (h.protocol, h.form, h.exit_status) == ("NVMe", "json", 0)
    assert (h.temperature_c, h.warning_threshold_c, h.critical_threshold_c) == (54, 100, 110)
    assert (h.warning_temp_time_min, h.critical_temp_time_min, h.critical_warning) == (0, 0, 0)
    assert (h.percentage_used, h.data_units_written) == (7, 25882809)
    assert h.sensors_c is None  # no temperature_sensors in this log
    assert h.temperature_c < h.warning_threshold_c < h.critical_threshold_c


def test_smartctl_75_real_json_identity():
    info = smartctl.parse(read_fixture(*TEAM))
    assert (info.protocol, info.device_type, info.model, info.firmware) == ("NVMe", "nvme", "TEAM TM8FP6256G",
                                                                           "VC3S500J")
    assert (info.capacity, info.logical_block_size) == (256060514304, 512)
    assert info.capacity == 500118192 * 512  # user_capacity blocks x formatted LBA size, as printed


def test_smartctl_threshold_object_is_what_is_read_not_the_temperature_limits():
    """The real document carries the thresholds twice: 7.5's object and temperature.op_limit_max /
    critical_limit_max (100/110). With the object's values changed (CONSTRUCTED from the capture) the
    thresholds read follow the object, not the temperature limits beside it."""
    doc = json.loads(read_fixture(*TEAM))
    assert (doc["temperature"]["op_limit_max"], doc["temperature"]["critical_limit_max"]) == (100, 110)
    doc["nvme_composite_temperature_threshold"] = {"warning": 80, "critical": 90}
    h = smartctl.parse_health(json.dumps(doc))
    assert (h.warning_threshold_c, h.critical_threshold_c, h.temperature_c) == (80, 90, 54)
