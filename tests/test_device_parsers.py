"""Parsers of the device tools on recorded real outputs (tests/fixtures/<tool>/, sources in SOURCES.md).

Every parser also gets empty input, garbage and outputs with fields missing: no crash, and either a
clear ValueError (the caller turns it into an "unknown" with the reason) or None/empty for the field.
"""

import json
import os

import pytest

from slogqual.kernel import procfs
from slogqual.tools import blkid, findmnt, lsblk, lspci, nvme, smartctl, wipefs
from slogqual.tools.freebsd import camcontrol, diskinfo, geom, nvmecontrol, sysctl

FIX = os.path.join(os.path.dirname(__file__), "fixtures")


def text(*parts):
    with open(os.path.join(FIX, *parts), encoding="utf-8") as fh:
        return fh.read()


GARBAGE = ["", "   \n", "not json at all {", "\x00\x01\x02 binary", '{"unexpected": true}', "[1, 2, 3]"]


# --- lsblk ---------------------------------------------------------------------------------------

def test_lsblk_blank_loop():
    (dev,) = lsblk.parse(text("lsblk", "loop-blank.json"))
    assert dev.type == "loop" and dev.devnum.startswith("7:")
    assert dev.size == 64 * 1024 * 1024
    assert dev.logical_sector == 512 and dev.model is None and dev.fstype is None
    assert dev.mountpoints == [] and dev.children == []


def test_lsblk_mounted_ext4_and_partitions():
    (dev,) = lsblk.parse(text("lsblk", "loop-ext4-mounted.json"))
    assert len(dev.mountpoints) == 1 and dev.mountpoints[0].endswith("/mnt")
    # This host runs no udev: lsblk takes FSTYPE/PTTYPE from the udev database, so they are null
    # here although the device holds ext4. The interlocks therefore probe with blkid/wipefs.
    assert dev.fstype is None
    (disk,) = lsblk.parse(text("lsblk", "loop-dos-2-partitions.json"))
    assert [c.type for c in disk.children] == ["part", "part"]
    assert [c.size for c in disk.children] == [32 * 1024 * 1024, 31 * 1024 * 1024]
    assert [d.name for d in disk.walk()][1:] == [c.name for c in disk.children]


def test_lsblk_virtio_root():
    (vda,) = lsblk.parse(text("lsblk", "virtio-vda-root.json"))
    assert vda.name == "vda" and "/" in vda.mountpoints and vda.rotational is True


def test_lsblk_old_columns_and_missing_fields():
    # util-linux < 2.37 prints "mountpoint" (one value) and sizes/flags as strings
    doc = {"blockdevices": [{"name": "sda", "maj:min": "8:0", "size": "500107862016", "rota": "0",
                             "mountpoint": "/boot"}, {"name": "sdb"}]}
    sda, sdb = lsblk.parse(json.dumps(doc))
    assert sda.size == 500107862016 and sda.rotational is False and sda.mountpoints == ["/boot"]
    assert sdb.size is None and sdb.rotational is None and sdb.model is None


@pytest.mark.parametrize("bad", GARBAGE)
def test_lsblk_garbage(bad):
    with pytest.raises(ValueError):
        lsblk.parse(bad)


# --- blkid / wipefs ----------------------------------------------------------------------------------

def test_blkid_signatures():
    ext4 = blkid.from_result("/dev/loopX", 0, text("blkid", "ext4.export"), "")
    assert ext4.found and ext4.type == "ext4" and ext4.signatures() == ["ext4 filesystem"]
    swap = blkid.from_result("/dev/loopX", 0, text("blkid", "swap.export"), "")
    assert swap.type == "swap" and swap.signatures() == ["swap"]
    pt = blkid.from_result("/dev/loopX", 0, text("blkid", "dos-pt.export"), "")
    assert pt.pttype == "dos" and pt.signatures() == ["dos partition table"]


def test_blkid_nothing_found_is_exit_2():
    rc = int(text("blkid", "blank.rc"))
    assert rc == blkid.RC_NOTHING
    p = blkid.from_result("/dev/loopX", rc, text("blkid", "blank.export"), "")
    assert not p.found and p.error is None and p.signatures() == []


def test_blkid_failures_and_garbage():
    p = blkid.from_result("/dev/x", 4, "", "blkid: /dev/x: Permission denied\n")
    assert not p.found and "Permission denied" in p.error
    amb = blkid.from_result("/dev/x", blkid.RC_AMBIVALENT, "", "")
    assert amb.found and "ambivalent" in amb.signatures()[0]
    weird = blkid.from_result("/dev/x", 0, "garbage without equals\n\x00", "")
    assert not weird.found and weird.error


def test_wipefs_lists():
    assert wipefs.parse(text("wipefs", "blank.json")) == []
    (s,) = wipefs.parse(text("wipefs", "ext4.json"))
    assert s.type == "ext4" and s.offset == 0x438 and s.label == "sqtest"
    (s,) = wipefs.parse(text("wipefs", "dos-pt.json"))
    assert s.type == "dos" and s.offset == 0x1FE
    (s,) = wipefs.parse(text("wipefs", "swap.json"))
    assert s.type == "swap"


@pytest.mark.parametrize("bad", ["not json", '{"x": 1}', "[]"])
def test_wipefs_garbage(bad):
    with pytest.raises(ValueError):
        wipefs.parse(bad)


def test_wipefs_empty_output_means_no_signature():
    assert wipefs.parse("") == []


# --- findmnt, mountinfo, swaps ----------------------------------------------------------------------

def test_findmnt_and_mountinfo_agree():
    fm = findmnt.parse(text("findmnt", "with-loop-mount.json"))
    mi = findmnt.parse_mountinfo(text("procfs", "mountinfo-with-loop-mount.txt"))
    root = [m for m in fm if m.target == "/"][0]
    assert root.source == "/dev/vda" and root.devnum == "254:0" and root.fstype == "ext4"
    loops = [m for m in fm if m.source.startswith("/dev/loop")]
    assert loops and loops[0].fstype == "ext4" and loops[0].devnum.startswith("7:")
    assert {(m.target, m.devnum) for m in loops} == {(m.target, m.devnum) for m in mi if m.source.startswith("/dev/loop")}


def test_mountinfo_octal_escapes_and_garbage():
    line = r"36 25 8:1 / /mnt/with\040space rw,relatime shared:1 - ext4 /dev/sda1 rw" + "\n"
    (m,) = findmnt.parse_mountinfo(line + "short line\n\n")
    assert m.target == "/mnt/with space" and m.devnum == "8:1" and m.source == "/dev/sda1"
    assert findmnt.parse_mountinfo("") == []


@pytest.mark.parametrize("bad", ["", "nope", '{"filesystems": 3}'])
def test_findmnt_garbage(bad):
    with pytest.raises(ValueError):
        findmnt.parse(bad)


def test_swaps():
    swaps = procfs.parse_swaps(text("procfs", "swaps-with-loop.txt"))
    assert len(swaps) == 1 and swaps[0].filename.startswith("/dev/loop") and swaps[0].type == "partition"
    assert procfs.parse_swaps("Filename Type Size Used Priority\n") == []
    assert procfs.parse_swaps("") == []
    (s,) = procfs.parse_swaps("Filename Type Size\n/swap\\040file file notanumber\n")
    assert s.filename == "/swap file" and s.size_kib is None


# --- smartctl -------------------------------------------------------------------------------------------

def test_smartctl_sas_ssd():
    s = smartctl.parse(text("smartctl", "sas-ssd-toshiba-kpm5xmug400g.json"))
    assert s.protocol == "SCSI" and s.usable
    assert s.model == "KPM5XMUG400G" and s.vendor == "TOSHIBA" and s.firmware == "B026"
    assert s.serial == "99A012345678" and s.capacity == 400088457216
    assert (s.logical_block_size, s.physical_block_size, s.rotation_rate) == (512, 4096, 0)
    assert s.scsi_transport == "SAS (SPL-4)"
    assert s.write_cache_enabled is None  # -a does not include -g wcache


def test_smartctl_sata_ssd_link_below_max():
    s = smartctl.parse(text("smartctl", "sata-ssd-intel-ssdsc2bb120g4l.info.json"))
    assert s.model == "INTEL SSDSC2BB120G4L" and s.rotation_rate == 0 and s.protocol == "ATA"
    assert s.link_max.gbps == pytest.approx(6.0) and s.link_current.gbps == pytest.approx(3.0)
    assert s.link_current.text == "3.0 Gb/s"


def test_smartctl_hdd_write_cache_enabled():
    s = smartctl.parse(text("smartctl", "ata-hdd-samsung-hd204ui-usb.info.json"))
    assert s.write_cache_enabled is True and s.rotation_rate == 5400
    assert s.exit_status == 96 and s.usable  # health bits do not make the identity less true
    assert s.link_current is None and s.link_max.gbps == pytest.approx(3.0)


def test_smartctl_nvme():
    s = smartctl.parse(text("smartctl", "nvme-kioxia-kcd61lul3t84.json"))
    assert s.protocol == "NVMe" and s.model == "KCD61LUL3T84" and s.capacity == 3840755982336
    assert s.rotation_rate is None and s.write_cache_enabled is None


def test_smartctl_cannot_detect_device():
    s = smartctl.parse(text("smartctl", "virtio-unable-to-detect.json"))
    assert not s.usable and s.exit_status & smartctl.EXIT_CMDLINE
    assert "Unable to detect device type" in s.errors[0]


@pytest.mark.parametrize("bad", ["", "garbage", "[]", "42"])
def test_smartctl_garbage(bad):
    with pytest.raises(ValueError):
        smartctl.parse(bad)


def test_smartctl_missing_fields():
    s = smartctl.parse('{"smartctl": {"exit_status": 0}, "model_name": "X", "user_capacity": "big", '
                       '"rotation_rate": "fast", "interface_speed": {"max": {"string": "weird"}}}')
    assert s.model == "X" and s.capacity is None and s.rotation_rate is None
    assert s.link_max.text == "weird" and s.link_max.gbps is None and s.write_cache_enabled is None


# --- nvme-cli ----------------------------------------------------------------------------------------------

def test_nvme_id_ctrl_json_vwc_present():
    i = nvme.parse_id_ctrl(text("nvme", "id-ctrl-wdc-pc-sn730.json"))
    assert i.model == "WDC PC SN730 SDBQNTY-256G-1001" and i.serial == "1951B3444502"
    assert i.firmware == "11170101" and i.vwc == 7 and i.vwc_present is True
    assert i.total_capacity == 256060514304


def test_nvme_id_ctrl_text_enterprise_no_vwc():
    i = nvme.parse_id_ctrl(text("nvme", "id-ctrl-micron-9200.txt"))
    assert i.model == "Micron_9200_MTFDHAL1T6TCU" and i.vwc == 0 and i.vwc_present is False
    assert i.total_capacity == 1600321314816 and i.vid == 0x1344


def test_nvme_id_ctrl_human_readable():
    i = nvme.parse_id_ctrl(text("nvme", "id-ctrl-H-samsung-pm1733.txt"))
    assert i.model == "SAMSUNG MZWLJ7T6HALA-00AU3" and i.vwc_present is False
    assert i.total_capacity == 7681501126656


def test_nvme_id_ctrl_pasted_notes_are_not_part_of_the_values():
    # the same capture as posted, with the poster's "  # serial number" notes: every field the excerpt
    # (notes removed by hand) has reads the same, and the notes are in no value
    posted = text("nvme", "id-ctrl-H-samsung-pm1733-annotated.txt")
    assert posted.count("  # ") == 3
    i = nvme.parse_id_ctrl(posted)
    assert (i.model, i.serial, i.firmware) == ("SAMSUNG MZWLJ7T6HALA-00AU3", "S5RTNC0T104269", "EPK9CR5Q")
    fields, excerpt = nvme.parse_text(posted), nvme.parse_text(text("nvme", "id-ctrl-H-samsung-pm1733.txt"))
    assert {k: fields[k] for k in excerpt} == excerpt and fields["nn"] == "32"
    assert not any("#" in v for v in fields.values())
    assert (i.version, i.vwc_present, i.wctemp, i.cctemp) == (0x10300, False, 345, 358)  # the lines the excerpt cut


@pytest.mark.parametrize("name,version,model,vwc_present,wctemp", [
    # nvme-cli 1.x prints VER as hex without 0x ("ver     : 10200"): NVMe 1.2.0, not 10200 = 0x27d8
    ("id-ctrl-micron-9200.txt", 0x10200, "Micron_9200_MTFDHAL1T6TCU", False, 348),
    ("id-ctrl-skhynix-pc401.txt", 0x10200, "PC401 NVMe SK hynix 256GB", True, 352),
    # nvme-cli 2.x (-H) prints it with 0x, and JSON as a number: the same reading
    ("id-ctrl-H-samsung-pm1733.txt", 0x10300, "SAMSUNG MZWLJ7T6HALA-00AU3", False, None),
    ("id-ctrl-wdc-pc-sn730.json", 0x10300, "WDC PC SN730 SDBQNTY-256G-1001", True, 357),
])
def test_nvme_id_ctrl_version_is_hex_in_every_form(name, version, model, vwc_present, wctemp):
    i = nvme.parse_id_ctrl(text("nvme", name))
    assert (i.version, i.model, i.vwc_present, i.wctemp) == (version, model, vwc_present, wctemp)
    assert (i.version >> 16, i.version >> 8 & 0xff) == (1, version >> 8 & 0xff)


def test_nvme_id_ctrl_text_sk_hynix_pc401_values():
    i = nvme.parse_id_ctrl(text("nvme", "id-ctrl-skhynix-pc401.txt"))
    assert (i.serial, i.firmware, i.vid, i.vwc, i.cctemp) == ("MS92N171312902J0N", "80007E00", 0x1c5c, 1, 354)
    assert i.total_capacity == 0 and i.warning_threshold_c == 352 - 273


@pytest.mark.parametrize("bad", ["", "{broken", "[1]", "hello world\nno fields here\n"])
def test_nvme_id_ctrl_garbage(bad):
    with pytest.raises(ValueError):
        nvme.parse_id_ctrl(bad)


def test_nvme_get_feature_parse():
    # both spellings nvme-cli versions print; absent or garbage -> None
    assert nvme.parse_get_vwc("get-feature:0x06 (Volatile Write Cache), Current value:0x00000001\n") is True
    assert nvme.parse_get_vwc("get-feature:0x6 (Volatile Write Cache), Current value:00000000\n") is False
    assert nvme.parse_get_vwc("") is None
    assert nvme.parse_get_vwc("NVMe status: INVALID_FIELD(0x2)") is None


# --- lspci ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("address", ["01:00.0", "0000:01:00.0", "0000:01:00.0\n"])
def test_lspci_address_with_or_without_its_domain_finds_the_function(address):
    # lspci -vv | grep -E "^[0-9a-f]|LnkCap:|LnkSta:" of a root port and a 980 PRO, printed with domains:
    # an address without its domain (01:00.0) is domain 0000's, and finds the SSD, not the bridge
    l = lspci.parse(text("lspci", "ultrazed-ev-980pro-grep-lnk.txt"), address)
    assert l.address == "0000:01:00.0"
    assert (l.cap_gts, l.cap_width, l.sta_gts, l.sta_width) == (16.0, 4, 8.0, 4)
    assert l.speed_downgraded is True and l.width_downgraded is False


@pytest.mark.parametrize("address", ["06:00.00", "6:0.0", "0:6:0.0", "0000:06:00.0", "06:00.0"])
def test_lspci_a_domainless_address_as_lspci_s_reads_it_finds_the_function(address):
    # the SM961 was captured with `lspci -x -vvv -s 06:00.00` and printed as "06:00.0 ..." (no domain): lspci -s
    # reads each part in hex with as many digits as given (pciutils 3.9 on the development host: -s 0:2.0,
    # 00:02.00 and 0:0:2.0 each select the 00:02.0 that -s 00:02.0 does)
    link = lspci.parse(text("lspci", "sm961-x-vvv-no-domain.txt"), address)
    assert link is not None and link.address == "06:00.0" and (link.sta_gts, link.sta_width) == (8.0, 4)


def test_lspci_a_short_address_is_never_another_function():
    sm961 = text("lspci", "sm961-x-vvv-no-domain.txt")
    for other in ("06:00.1", "0001:06:00.0", "6:1.0", "60:00.0", "6:0.8", "*:06:00.0"):
        assert lspci.parse(sm961, other) is None, other


def test_lspci_domain_is_part_of_the_address():
    bridge = lspci.parse(text("lspci", "ultrazed-ev-980pro-grep-lnk.txt"), "00:00.0")
    assert (bridge.address, bridge.cap_gts, bridge.sta_gts, bridge.speed_downgraded) == ("0000:00:00.0", 8.0, 8.0, False)
    assert lspci.parse(text("lspci", "ultrazed-ev-980pro-grep-lnk.txt"), "0001:01:00.0") is None
    # the Kioxia is 0001:01:00.0: 01:00.0 (domain 0000) is another function
    assert lspci.parse(text("lspci", "kioxia-xg6-downgraded.txt"), "01:00.0") is None
    assert lspci.parse(text("lspci", "kioxia-xg6-downgraded.txt"), "0001:01:00.0").sta_width == 1


def test_lspci_downgraded_nvme():
    l = lspci.parse(text("lspci", "kioxia-xg6-downgraded.txt"))
    assert l.address == "0001:01:00.0"
    assert (l.cap_gts, l.cap_width, l.sta_gts, l.sta_width) == (8.0, 4, 5.0, 1)
    assert l.speed_downgraded and l.width_downgraded


def test_lspci_grep_extract_full_link():
    l = lspci.parse(text("lspci", "lsi-sas2008-grep-width.txt"))
    assert (l.cap_gts, l.cap_width, l.sta_gts, l.sta_width) == (5.0, 8, 5.0, 8)
    assert l.speed_downgraded is False


def test_lspci_nothing():
    assert lspci.parse("") is None
    assert lspci.parse("00:00.0 Host bridge: Intel Corporation Device 0d57\n\tControl: I/O-\n") is None
    assert lspci.parse("garbage\x00") is None


# --- FreeBSD ---------------------------------------------------------------------------------------------

def test_geom_disk_list():
    (d,) = geom.parse(text("freebsd", "geom-disk-list-corsair-f40.txt"))
    assert d.name == "ada3" and d.mediasize == 40018599936 and d.sectorsize == 512 and d.stripesize == 4096
    assert d.descr == "Corsair CSSD-F40GB2" and d.ident == "111465010000101800EC" and d.rotationrate == 0
    assert d.open_counts == {"r": 2, "w": 2, "e": 4}


def test_geom_garbage_and_missing():
    assert geom.parse("") == []
    assert geom.parse("random text: with colon\n") == []
    (d,) = geom.parse("Geom name: da0\nProviders:\n1. Name: da0\n   rotationrate: unknown\n   ident: (null)\n")
    assert d.rotationrate is None and d.rotationrate_raw == "unknown" and d.ident is None and d.open_counts is None


def test_diskinfo_v():
    d = diskinfo.parse(text("freebsd", "diskinfo-v-hgst-hdn726060ale614.txt"))
    assert d.device == "ada1" and d.sectorsize == 512 and d.mediasize == 6001175126016 and d.stripesize == 4096
    assert d.descr == "HGST HDN726060ALE614" and d.ident == "K1JVDUGD" and d.rotation_rate == 7200 and d.trim is False


def test_diskinfo_v_collapsed_whitespace_and_unknown_rpm():
    collapsed = " ".join(text("freebsd", "diskinfo-v-hgst-hdn726060ale614.txt").replace("\t", " ").split(" "))
    d = diskinfo.parse(collapsed)
    assert d.descr == "HGST HDN726060ALE614" and d.mediasize == 6001175126016
    d = diskinfo.parse("da0\n\tUnknown     \t# Rotation rate in RPM\n")
    assert d.rotation_rate is None and d.rotation_raw == "Unknown" and d.mediasize is None


@pytest.mark.parametrize("bad", ["", "\n\n", "no comment lines here", "\x00\xff"])
def test_diskinfo_garbage(bad):
    with pytest.raises(ValueError):
        diskinfo.parse(bad)


def test_camcontrol_identify():
    c = camcontrol.parse(text("freebsd", "camcontrol-identify-st8000vn002.txt"))
    assert c.model == "ST8000VN002-2ZM188" and c.firmware == "SC60" and c.serial == "WPV28ZWK"
    assert (c.logical_sector, c.physical_sector) == (512, 4096) and c.sectors == 15628053168
    assert c.media_rpm == 5400 and c.transfer_mbps == 600.0 and c.device_kind == "ACS-3 ATA SATA 3.x device"
    assert c.write_cache.supported is True and c.write_cache.enabled is True
    assert c.features["security"].enabled is False


@pytest.mark.parametrize("name,model,apm", [
    # Support and Enabled separated by camcontrol's single tab ("yes\tyes"), as printed
    ("camcontrol-identify-corsair-force-le-tabs.txt", "Corsair Force LE SSD", (True, True)),
    # the same columns with the tab turned into spaces by the page it was copied from
    ("camcontrol-identify-da11-intel-s3700-sas3008.txt", "INTEL SSDSC2BA800G3", (False, False)),
])
def test_camcontrol_feature_rows_with_one_separator_keep_their_values(name, model, apm):
    c = camcontrol.parse(text("freebsd", name))
    assert c.model == model and c.media_rpm == 0
    assert (c.write_cache.supported, c.write_cache.enabled) == (True, True)
    f = {k: (v.supported, v.enabled) for k, v in c.features.items()}
    # a 30-character name leaves one space before "yes": the row is read, not lost under "... yes"
    assert f["data set management (dsm/trim)"] == (True, None)
    assert not [k for k in f if k.endswith((" yes", " no"))]
    assert f["native command queuing (ncq)"] == (True, None)  # "yes\t\t32 tags": no Enabled column
    assert f["host protected area (hpa)"] == (True, False)
    assert f["advanced power management"] == apm and f["overlap"] == (False, None)
    assert len(f) == 26


def test_camcontrol_field_row_with_one_space_keeps_its_value():
    c = camcontrol.parse(text("freebsd", "camcontrol-identify-st8000vn002.txt"))
    assert c.fields["zoned-device commands"] == "no" and c.fields["additional product id"] == ""
    assert "zoned-device commands no" not in c.fields


def test_cam_announce_lines():
    sas = camcontrol.parse(text("freebsd", "cam-announce-da82-sas.txt"))
    assert sas.model == "WDC WUH721818AL5204" and sas.firmware == "C232" and sas.serial == "3FJ0Z9PT"
    assert sas.transfer_mbps == 1200.0 and "Fixed Direct Access" in sas.device_kind and sas.write_cache is None
    sata = camcontrol.parse(text("freebsd", "cam-announce-ada0-sata.txt"))
    assert sata.model == "ST500DM002-1BD142" and sata.transfer_detail.startswith("SATA 3.x")


@pytest.mark.parametrize("bad", ["", "   ", "\n\n\n"])
def test_camcontrol_garbage(bad):
    with pytest.raises(ValueError):
        camcontrol.parse(bad)


def test_nvmecontrol_collapsed_page_without_vwc():
    n = nvmecontrol.parse(text("freebsd", "nvmecontrol-identify-samsung-pm983.collapsed.txt"))
    assert n.model == "SAMSUNG MZQLB960HAJR-00007" and n.serial == "S437NY0KC00562"
    assert n.firmware == "EDA5202Q" and n.total_capacity == 960197124096 and n.version == "1.2.0"
    assert n.vwc_present is None  # the line is not in this output: unknown, not guessed


@pytest.mark.parametrize("bad", ["", "garbage", "Key: value\nOther: thing\n"])
def test_nvmecontrol_garbage(bad):
    with pytest.raises(ValueError):
        nvmecontrol.parse(bad)


def test_sysctl_parse_and_garbage():
    assert sysctl.parse("") == {} and sysctl.disks("") == []
    assert sysctl.disks("garbage: with colon but no dotted name") == []


# --- ZFS: slogqual's own label reader, blkid and wipefs on a real pool member (lab-recorded) ------------

def test_zfs_label_nvlist_of_a_real_pool():
    import gzip

    from slogqual.device import zfslabel

    with gzip.open(os.path.join(FIX, "zfslabel", "label0-nvlist-pool-sqlabel-exported.bin.gz")) as fh:
        buf = fh.read()
    assert len(buf) == zfslabel.NVLIST_SIZE
    lab = zfslabel.parse_nvlist_region(buf)
    assert lab.pool == "sqlabel" and lab.pool_guid == 11156534530852606562 and lab.state == "exported"
    assert zfslabel.parse_nvlist_region(buf[:40]) is None  # cut before the name pair: nothing, no crash
    part = zfslabel.parse_nvlist_region(buf[:100])  # name pair only: what is there, the rest unknown
    assert part.pool == "sqlabel" and part.pool_guid is None and part.state is None
    assert zfslabel.parse_nvlist_region(b"\0" * zfslabel.NVLIST_SIZE) is None
    assert zfslabel.parse_nvlist_region(os.urandom(4096)) is None
    assert zfslabel.label_offsets(4 * 1024 * 1024) == [0, 262144, 4 * 1024 * 1024 - 524288, 4 * 1024 * 1024 - 262144]
    assert zfslabel.label_offsets(300 * 1024) == [0, 262144]  # too small for the two end labels


def test_zfs_member_seen_by_blkid_and_wipefs():
    member = blkid.from_result("/dev/sda1", 0, text("blkid", "qemu-lab-zfs-member-partition.export"), "")
    assert member.type == "zfs_member" and member.values["LABEL"] == "sqlabel"
    assert member.signatures() == ["zfs_member filesystem"]
    sigs = wipefs.parse(text("wipefs", "qemu-lab-zfs-member-partition.json"))
    assert len(sigs) >= 4 and {s.type for s in sigs} == {"zfs_member"} and {s.label for s in sigs} == {"sqlabel"}
    disk = blkid.from_result("/dev/sda", 0, text("blkid", "qemu-lab-zfs-whole-disk.export"), "")
    assert disk.pttype == "gpt"
    assert [s.type for s in wipefs.parse(text("wipefs", "qemu-lab-zfs-whole-disk.json"))] == ["gpt", "gpt", "PMBR"]


# --- fields of the wrong type (issue #16: a TypeError, or an AttributeError the tool contract does not catch) ---

def _mutated(path, **fields):
    doc = json.loads(text(*path))
    doc.update(fields)
    return json.dumps(doc)


@pytest.mark.parametrize("messages", [5, "error", {"string": "x"}, True])
def test_smartctl_messages_of_the_wrong_type_are_not_read(messages):
    doc = json.loads(text("smartctl", "sas-ssd-toshiba-kpm5xmug400g.json"))
    doc["smartctl"]["messages"] = messages
    info = smartctl.parse(json.dumps(doc))
    assert info.errors == [] and info.model  # the identity still stands


@pytest.mark.parametrize("field,value", [("mountpoints", 5), ("mountpoints", "/mnt"), ("mountpoints", [5, None, "/m"]),
                                         ("children", 3), ("children", "sda1"), ("model", ["x"]), ("serial", {"a": 1}),
                                         ("vendor", True)])
def test_lsblk_fields_of_the_wrong_type_are_not_read(field, value):
    doc = json.loads(text("lsblk", "loop-ext4-mounted.json"))
    doc["blockdevices"][0][field] = value
    (dev,) = lsblk.parse(json.dumps(doc))
    assert dev.name and dev.devnum
    if field == "mountpoints":
        assert dev.mountpoints == (["/m"] if isinstance(value, list) else [])
    if field == "children":
        assert dev.children == []
    if field in ("model", "serial", "vendor"):
        assert getattr(dev, field) is None  # not "['x']"


@pytest.mark.parametrize("value", [["x"], {"a": 1}, True])
def test_nvme_id_ctrl_string_fields_of_the_wrong_type_are_not_read(value):
    doc = json.loads(text("nvme", "qemu-lab-id-ctrl.json"))
    doc["mn"] = value
    assert nvme.parse_id_ctrl(json.dumps(doc)).model is None


@pytest.mark.parametrize("name", [r"/swap\999", r"/swap\1²3", "/swap\\"])
def test_a_backslash_without_three_octal_digits_stays_as_it_is(name):
    # int('999', 8) was a ValueError out of parse_swaps/parse_mountinfo on such a line
    (s,) = procfs.parse_swaps("Filename Type Size Used Priority\n" + name + " file 1024 0 -2\n")
    assert s.filename == name and s.size_kib == 1024
    line = f"36 25 8:1 / {name} rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    (m,) = findmnt.parse_mountinfo(line)
    assert m.target == name
    assert procfs.unescape_octal(r"/a\040b\134c") == "/a b\\c"


def test_camcontrol_media_rpm_of_a_digit_int_cannot_read_is_unknown():
    # '²' passed str.isdigit and int() raised: the whole identify was lost for one odd field
    ident = text("freebsd", "camcontrol-identify-st8000vn002.txt")
    assert "media RPM" in ident
    odd = "\n".join(ln if not ln.startswith("media RPM") else "media RPM             \u00b2"
                    for ln in ident.splitlines())
    c = camcontrol.parse(odd)
    assert c.media_rpm is None and c.media_rpm_raw == "\u00b2" and c.model



@pytest.mark.parametrize("ups,string,want", [("1e999", '"6.0 Gb/s"', 6.0), ("NaN", '"6.0 Gb/s"', 6.0),
                                             ("true", '"x"', None), ("60", "[6]", 6.0)])
def test_smartctl_link_speed_of_odd_numbers(ups, string, want):
    # Infinity or NaN became the link's Gb/s, true counted as one unit a second, a list was kept as the text
    raw = text("smartctl", "sata-ssd-intel-ssdsc2bb120g4l.info.json")
    block = '"string": "6.0 Gb/s",\n      "units_per_second": 60,'
    assert raw.count(block) == 1
    info = smartctl.parse(raw.replace(block, f'"string": {string},\n      "units_per_second": {ups},'))
    assert info.link_max.gbps == want
    assert info.link_max.text in ("6.0 Gb/s", "x", None)


# --- FreeBSD: the interlocks' programs and pciconf ---------------------------------------------------------

def test_freebsd_mount_p_swapctl_gpart_glabel():
    from slogqual.tools.freebsd import glabel, gpart, mount, swapctl

    ms = mount.parse(text("freebsd", "mount-p-azure.txt"))
    assert [(m.device, m.mountpoint, m.fstype) for m in ms][0] == ("/dev/label/rootfs", "/", "ufs")
    assert [mount.device_name(m.device) for m in ms] == ["label/rootfs", None, None, "da1s1"]
    with pytest.raises(ValueError):
        mount.parse("this is not a mount table line at all\n")
    sw = swapctl.parse(text("freebsd", "swapctl-l-ada0s1b.txt"))
    assert [(s.device, s.blocks, s.used) for s in sw] == [("/dev/ada0s1b", 5242880, 2268788)]
    with pytest.raises(ValueError):
        swapctl.parse("/dev/ada0s1b 5242880 2268788\n")  # no header: not swapctl -l
    tables = gpart.parse(text("freebsd", "gpart-show-p-vps-da0.txt"))
    assert [(t.provider, t.scheme) for t in tables] == [("da0", "GPT")]
    assert [(p.name, p.type, p.size) for p in tables[0].partitions] == [("da0p1", "freebsd-boot", 1024),
                                                                         ("da0p2", "freebsd-zfs", 41940952)]
    assert gpart.parse("") == []
    with pytest.raises(ValueError):
        gpart.parse("gpart: No such geom: ada5.\n")
    labels = glabel.parse(text("freebsd", "glabel-status-azure.txt"))
    assert [(lab.name, lab.component, lab.kind) for lab in labels][1] == ("label/rootfs", "da0p2", "label")
    assert glabel.parse("      Name  Status  Components\n") == []


@pytest.mark.parametrize("name", ["gpart-show-without-p-da0-mirror-howto.txt", "gpart-show-without-p-ovh-da0-corrupt.txt"])
def test_gpart_show_without_p_is_refused_not_read_as_partitions_named_1_2(name):
    # without -p gpart names an entry by its index ("1", "2"), which the interlocks would match against
    # provider names (da0p1) and miss: the parser refuses it, in one line naming gpart and what it needs
    from slogqual.errors import ToolOutputError
    from slogqual.tools import spawn as run
    from slogqual.tools.freebsd import gpart

    with pytest.raises(ValueError, match="without -p"):
        gpart.parse(text("freebsd", name))
    with pytest.raises(ToolOutputError) as exc:
        run.parse_text("gpart", gpart.argv_show(), text("freebsd", name), gpart.parse)
    msg = str(exc.value)
    assert msg.startswith("gpart: ") and "gpart show -p" in msg and "da0p1" in msg and "\n" not in msg
    assert exc.value.program == "gpart" and exc.value.argv == ["gpart", "show", "-p"]


def test_freebsd_pciconf_links():
    from slogqual.tools.freebsd import pciconf

    devs = {d.name: d for d in pciconf.parse(text("freebsd", "pciconf-lvc-supermicro-5018a-chelsio-t520.txt"))}
    assert devs["vgapci0"].pcie is None and devs["t5iov0"].fields["device"] == "T520-SO Unified Wire Ethernet Controller"
    x = devs["t5iov0"].pcie
    assert (x.port_type, x.width, x.max_width, x.speed_gts, x.max_speed_gts) == ("endpoint", 8, 8, 5.0, 8.0)
    assert (devs["pcib2"].pcie.port_type, devs["pcib2"].pcie.speed_gts) == ("PCI bridge", 2.5)
    # the older layout: link and speed split over two lines
    ix = pciconf.parse(text("freebsd", "pciconf-lvc-ibm-x3550-82599eb.txt"))[0]
    assert (ix.name, ix.selector, ix.pcie.width, ix.pcie.speed_gts, ix.pcie.max_speed_gts) == \
        ("ix0", "pci0:21:0:0", 8, 5.0, 5.0)
    with pytest.raises(ValueError):
        pciconf.parse("no devices here\n")
