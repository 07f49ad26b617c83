"""Device identity: class, link and write-cache verdicts, sysfs on a recorded tree, FreeBSD records from
recorded outputs, and real identification of loop devices, partitions, files and NBD exports."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from slogqual.device import classify as C
from slogqual.device import freebsd, identify, linux
from slogqual.device.record import (LINK_DEGRADED, LINK_OK, LINK_UNKNOWN, WC_ENABLED, WC_NONE, WC_UNKNOWN,
                                    DeviceRecord, Link, LinkEnd)
from slogqual.errors import UsageError
from slogqual.kernel import sysfs
from slogqual.tools import lspci, nvme, smartctl

FIX = os.path.join(os.path.dirname(__file__), "fixtures")


def unpack_sysfs(tmp_path_factory, name):
    """A recorded sysfs tree (kept as a tarball: it has sysfs's symlink cycles), unpacked; its /sys root."""
    import tarfile

    dest = tmp_path_factory.mktemp(name)
    with tarfile.open(os.path.join(FIX, "sysfs", f"{name}.tar.gz")) as tf:
        tf.extractall(dest)
    return str(dest / name / "sys")


@pytest.fixture(scope="module")
def host_sys(tmp_path_factory):
    return unpack_sysfs(tmp_path_factory, "vda-and-partitioned-loop")


@pytest.fixture(scope="module")
def lab_sys(tmp_path_factory):
    return unpack_sysfs(tmp_path_factory, "lab-qemu-guest")


def text(*parts):
    with open(os.path.join(FIX, *parts), encoding="utf-8") as fh:
        return fh.read()


# --- class ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("transport, rot, rpm, model, expected", [
    ("sata", False, 0, "INTEL SSDSC2BB120G4L", "sata-ssd"),
    ("sata", True, 5400, "ST8000VN002-2ZM188", "hdd"),
    ("sata", True, 7200, "ST2000DX002-2DV164", "sshd"),
    ("sata", None, None, "ST1000LX015-1U7172", "unknown"),
    ("sas", False, 0, "TOSHIBA KPM5XMUG400G", "sas-ssd"),
    ("scsi", True, 15000, "SEAGATE ST600MP0036", "hdd"),
    ("nvme", None, None, "SAMSUNG MZWLJ7T6HALA-00AU3", "nvme"),
    ("nvme", None, None, "INTEL SSDPE21D480GA", "optane"),
    ("nvme", None, None, "INTEL MEMPEK1W016GA", "optane"),
    ("pmem", None, None, None, "nvdimm"),
    ("loop", True, None, None, "virtual"),
    ("virtio", True, None, None, "virtual"),
    ("file", None, None, None, "virtual"),
    ("nbd", None, None, None, "virtual"),
    ("usb", False, 0, "Some Bridge", "unknown"),
    ("unknown", False, None, None, "unknown"),
])
def test_classify(transport, rot, rpm, model, expected):
    cls, evidence = C.classify(transport, rot, rpm, model)
    assert cls == expected and evidence
    if expected == "unknown":
        assert any(w in " ".join(evidence) for w in ("unknown", "cannot", "not one"))


def test_rotation_rate_beats_kernel_flag():
    # smartctl's 0 rpm ("Solid State Device") wins over a kernel rotational=1 (USB bridges report 1)
    assert C.classify("sata", True, 0, "X")[0] == "sata-ssd"


def test_emulated_devices_keep_their_presented_class():
    assert C.emulated_by("QEMU NVMe Ctrl", None) == "QEMU"
    assert C.emulated_by("QEMU HARDDISK", "ATA") == "QEMU"
    assert C.emulated_by("Samsung SSD 860", "ATA") is None


# --- link ----------------------------------------------------------------------------------------------

def test_link_below_capability_from_lspci_fixture():
    l = lspci.parse(text("lspci", "kioxia-xg6-downgraded.txt"))
    link = C.judge_link(Link(kind="pcie", scope="device", address=l.address,
                             current=LinkEnd(rate=l.sta_gts, width=l.sta_width),
                             max=LinkEnd(rate=l.cap_gts, width=l.cap_width)))
    assert link.verdict == LINK_DEGRADED and "speed 5 < 8" in link.reason and "x1 < x4" in link.reason
    rec = DeviceRecord(path="/dev/nvme0n1", transport="nvme", link=link)
    (w,) = rec.warnings()
    assert "LINK BELOW CAPABILITY" in w and "/dev/nvme0n1" in w and "5 GT/s x1" in w and "8 GT/s x4" in w


def test_link_at_capability_and_unknown():
    l = lspci.parse(text("lspci", "lsi-sas2008-grep-width.txt"))
    ok = C.judge_link(Link(current=LinkEnd(rate=l.sta_gts, width=l.sta_width), max=LinkEnd(rate=l.cap_gts, width=l.cap_width)))
    assert ok.verdict == LINK_OK
    assert C.judge_link(Link()).verdict == LINK_UNKNOWN
    half = C.judge_link(Link(current=LinkEnd(rate=8.0), max=LinkEnd()))
    assert half.verdict == LINK_UNKNOWN and "only one" in half.reason
    assert C.parse_gts("8.0 GT/s PCIe") == 8.0 and C.parse_gts("Unknown") is None
    assert C.parse_gbps("600.000MB/s") == pytest.approx(6.0) and C.parse_gbps("6.0 Gb/s") == 6.0


def test_sata_link_from_smartctl_fixture():
    s = smartctl.parse(text("smartctl", "sata-ssd-intel-ssdsc2bb120g4l.info.json"))
    link = linux.link_from_smart(s, "sata")
    assert link.verdict == LINK_DEGRADED and link.current.rate == pytest.approx(3.0) and link.max.rate == pytest.approx(6.0)
    rec = DeviceRecord(path="/dev/sdr", transport="sata", link=link)
    assert "3 Gb/s but can do 6 Gb/s" in rec.warnings()[0]


# --- write cache ---------------------------------------------------------------------------------------

def test_write_cache_from_nvme_fixtures():
    pm = nvme.parse_id_ctrl(text("nvme", "id-ctrl-H-samsung-pm1733.txt"))
    wc = C.judge_write_cache([C.CacheSignal("nvme id-ctrl", pm.vwc_present, f"vwc={pm.vwc}")], "write through", "nvme")
    assert wc.verdict == WC_NONE
    sn = nvme.parse_id_ctrl(text("nvme", "id-ctrl-wdc-pc-sn730.json"))
    wc = C.judge_write_cache([C.CacheSignal("nvme id-ctrl", sn.vwc_present, f"vwc={sn.vwc}")], "write back", "nvme")
    assert wc.verdict == WC_ENABLED and any("vwc=7" in e for e in wc.evidence)


def test_write_cache_conflict_is_a_loud_warning():
    s = smartctl.parse(text("smartctl", "ata-hdd-samsung-hd204ui-usb.info.json"))
    wc = C.judge_write_cache([C.CacheSignal("smartctl -g wcache", s.write_cache_enabled, "enabled")], "write through", "sata")
    assert wc.verdict == WC_ENABLED
    rec = DeviceRecord(path="/dev/sdb", write_cache=wc)
    ws = rec.warnings()
    assert any(w.startswith("VOLATILE WRITE CACHE ENABLED on /dev/sdb") for w in ws)
    assert any("CONFLICT" in w and "drops flushes" in w for w in ws)


def test_write_cache_fallbacks():
    assert C.judge_write_cache([], "write back", "sata").verdict == WC_ENABLED
    assert C.judge_write_cache([], "write through", "sas").verdict == WC_NONE
    nothing = C.judge_write_cache([], None, "sata")
    assert nothing.verdict == WC_UNKNOWN and "no tool" in nothing.reason
    loop = C.judge_write_cache([], "write back", "loop")
    assert loop.verdict == WC_UNKNOWN and "backing file" in loop.reason
    disabled = C.judge_write_cache([C.CacheSignal("smartctl -g wcache", False, "disabled")], "write back", "sata")
    assert disabled.verdict == WC_NONE


# --- sysfs on a recorded tree ------------------------------------------------------------------------------

def _name(root, pattern):
    return next(n for n in sysfs.block_devices(root) if re.fullmatch(pattern, n))


def _info(root, name):
    return sysfs.block_info(sysfs.read(os.path.join(root, "class", "block", name, "dev")), root)


def test_sysfs_virtio_disk(host_sys):
    SYSROOT = host_sys
    info = sysfs.block_info("254:0", SYSROOT)
    assert info.name == "vda" and info.driver == "virtio_blk" and not info.is_partition
    assert info.size == 256 * 1024 ** 3 and info.logical_block_size == 512 and info.physical_block_size == 4096
    assert info.write_cache == "write back" and info.serial
    assert info.pci.address == "0000:00:02.0" and info.pci.current_speed is None  # conventional PCI: no link
    assert linux.transport_of(info, None) == "virtio"


def test_sysfs_partitioned_loop(host_sys):
    SYSROOT = host_sys
    name = _name(SYSROOT, r"loop\d+")
    devnum = sysfs.read(os.path.join(SYSROOT, "class", "block", name, "dev"))
    info = sysfs.block_info(devnum, SYSROOT)
    assert info.partitions == [f"{name}p1", f"{name}p2"] and info.loop_backing_file.endswith("part.img")
    assert info.pci is None and info.is_virtual and linux.transport_of(info, None) == "loop"
    p1 = sysfs.block_info(sysfs.read(os.path.join(SYSROOT, "class", "block", f"{name}p1", "dev")), SYSROOT)
    assert p1.is_partition and p1.parent == name and p1.size == 32 * 1024 * 1024
    assert p1.logical_block_size == 512  # read from the disk's queue/
    assert sysfs.block_info("8:0", SYSROOT) is None


def test_sysfs_lab_qemu_nvme(lab_sys):
    info = _info(lab_sys, "nvme0n1")
    assert info.nvme_ctrl == "nvme0" and info.nvme_transport == "pcie" and info.model == "QEMU NVMe Ctrl"
    assert info.serial and info.revision and info.write_cache == "write back"
    assert info.pci.address == "0000:00:04.0" and info.pci.vendor == "0x1b36"
    assert linux.transport_of(info, "nvme") == "nvme"
    link = linux._pci_link(info, "device")
    # QEMU reports "Unknown" speeds and widths 0/255: unknown, never "below capability"
    assert link.verdict == LINK_UNKNOWN and link.current.width is None and link.max.width is None


def test_sysfs_lab_qemu_sata_and_scsi(lab_sys):
    sata = _info(lab_sys, "sdb")
    assert linux.transport_of(sata, None) == "sata" and sata.rotational is True and sata.driver == "sd"
    # the SCSI layer's copy of the ATA model is cut to 16 characters: identify prefers smartctl's
    assert sata.model == "SLOGQUAL LAB HDD" and sata.pci.address == "0000:00:1f.2"
    rec = DeviceRecord(path="/dev/sdb")
    rec.set("model", sata.model, "sysfs")
    rec.prefer("model", smartctl.parse(text("smartctl", "qemu-lab-sata-hdd-wcache.json")).model, "smartctl")
    assert rec.model == "SLOGQUAL LAB HDD 7200RPM" and rec.sources["model"] == "smartctl"
    assert "sysfs said 'SLOGQUAL LAB HDD'" in rec.notes[0]
    al = sysfs.ata_link(sata)
    assert al["port"].startswith("ata") and al["sata_spd"] == "1.5 Gbps" and al["hw_sata_spd_limit"] == "<unknown>"
    link = linux.link_from_ata(al)  # QEMU's AHCI reports no port limit: unknown, with the evidence
    assert link.verdict == LINK_UNKNOWN and link.current.rate == 1.5 and "sata_spd='1.5 Gbps'" in link.evidence[0]
    scsi = _info(lab_sys, "sda")
    assert linux.transport_of(scsi, None) == "scsi" and scsi.scsi_cache_type == "write back"
    assert scsi.vendor == "SLOGQUAL" and scsi.rotational is False
    assert C.judge_link(linux._pci_link(scsi, "controller")).verdict == LINK_UNKNOWN


def test_sysfs_lab_pmem(lab_sys):
    pm = _info(lab_sys, "pmem0")
    assert linux.transport_of(pm, None) == "pmem" and C.classify("pmem", pm.rotational, None, None)[0] == "nvdimm"
    assert linux.pmem_namespace(pm) == "namespace0.0 (mode raw) in region0"
    assert linux.pmem_namespace(_info(lab_sys, "sda")) is None
    assert sysfs.ata_link(_info(lab_sys, "sda")) is None and sysfs.ata_link(pm) is None


def test_lab_smartctl_and_nvme_records():
    s = smartctl.parse(text("smartctl", "qemu-lab-sata-hdd-wcache.json"))
    assert s.write_cache_enabled is True and s.model == "SLOGQUAL LAB HDD 7200RPM" and s.rotation_rate == 7200
    scsi = smartctl.parse(text("smartctl", "qemu-lab-scsi-hd.json"))
    assert scsi.protocol == "SCSI" and scsi.write_cache_enabled is None  # no JSON write_cache for SCSI here
    ident = nvme.parse_id_ctrl(text("nvme", "qemu-lab-id-ctrl.json"))
    assert ident.model == "QEMU NVMe Ctrl" and ident.vwc_present is True
    assert nvme.parse_get_vwc(text("nvme", "qemu-lab-get-feature-6.txt")) is True
    assert C.emulated_by(ident.model, None) == "QEMU"
    assert lspci.parse(text("lspci", "qemu-lab-q35-vv.txt"), "00:04.0") is None  # no PCIe capability


# --- FreeBSD records from recorded outputs -----------------------------------------------------------------

def test_freebsd_sata_hdd_from_camcontrol():
    r = freebsd.build("/dev/ada0", camcontrol_text=text("freebsd", "camcontrol-identify-st8000vn002.txt"))
    d = r.to_dict()
    assert (d["transport"], d["class"], d["model"], d["serial"]) == ("sata", "hdd", "ST8000VN002-2ZM188", "WPV28ZWK")
    assert d["capacity"] == 15628053168 * 512 and d["physical_sector"] == 4096 and d["rotation_rate"] == 5400
    assert d["write_cache"]["verdict"] == WC_ENABLED and d["link"]["verdict"] == LINK_OK
    assert any("VOLATILE WRITE CACHE" in w for w in d["warnings"])


def test_freebsd_ssd_from_geom_and_hdd_from_diskinfo():
    r = freebsd.build("/dev/ada3", geom_text=text("freebsd", "geom-disk-list-corsair-f40.txt"))
    assert (r.transport, r.device_class, r.capacity, r.physical_sector) == ("sata", "sata-ssd", 40018599936, 4096)
    assert r.write_cache.verdict == WC_UNKNOWN and "camcontrol" in r.write_cache.reason
    assert "firmware" in r.unknown and "geom" in r.unknown["firmware"]
    r = freebsd.build("/dev/ada1", diskinfo_text=text("freebsd", "diskinfo-v-hgst-hdn726060ale614.txt"))
    assert (r.device_class, r.model, r.rotation_rate) == ("hdd", "HGST HDN726060ALE614", 7200)


def test_freebsd_nvme_without_vwc_field_is_unknown_not_guessed():
    r = freebsd.build("/dev/nvd1", nvmecontrol_text=text("freebsd", "nvmecontrol-identify-samsung-pm983.collapsed.txt"))
    assert (r.transport, r.device_class, r.model) == ("nvme", "nvme", "SAMSUNG MZQLB960HAJR-00007")
    assert r.write_cache.verdict == WC_UNKNOWN and "Volatile Write Cache" in r.write_cache.reason
    assert r.link.verdict == LINK_UNKNOWN and "pciconf" in r.link.reason


def test_freebsd_scsi_announce_and_garbage():
    r = freebsd.build("/dev/da82", camcontrol_text=text("freebsd", "cam-announce-da82-sas.txt"))
    assert r.transport == "scsi" and r.model == "WDC WUH721818AL5204" and r.device_class == "unknown"
    assert "rotation unknown" in r.unknown["class"]
    bad = freebsd.build("/dev/ada9", geom_text="", diskinfo_text="garbage", camcontrol_text="", nvmecontrol_text="x")
    assert bad.tools["diskinfo"].startswith("failed") and bad.tools["camcontrol"].startswith("failed")
    assert bad.device_class == "unknown" and bad.unknown["model"]
    none = freebsd.build("/dev/ada9")
    assert none.unknown["model"] == "no FreeBSD tool output available"


def test_freebsd_sata_ssd_behind_a_sas_hba_is_sata_with_its_link():
    # the kernel's announce of da7 (<ATA INTEL SSDSC2BA80 0270> behind mpr1: what `camcontrol inquiry` prints)
    # and `camcontrol identify da11`, an SSD of the same model on the same HBA of the same machine
    inquiry = text("freebsd", "cam-announce-da7-sata-ssd-behind-mpr.txt")
    alone = freebsd.build("/dev/da7", camcontrol_text=inquiry)
    assert alone.device_class == "unknown" and alone.link.verdict == LINK_UNKNOWN  # the inquiry has no rotation
    from slogqual.tools.freebsd import camcontrol
    assert camcontrol.is_ata(camcontrol.parse(inquiry))
    assert not camcontrol.is_ata(camcontrol.parse(text("freebsd", "cam-announce-da82-sas.txt")))
    r = freebsd.build("/dev/da7", camcontrol_text=inquiry,
                      camcontrol_identify_text=text("freebsd", "camcontrol-identify-da11-intel-s3700-sas3008.txt"))
    d = r.to_dict()
    assert (d["transport"], d["class"], d["model"], d["rotation_rate"]) == ("sata", "sata-ssd", "INTEL SSDSC2BA800G3", 0)
    assert "ATA device" in r.sources["transport"] and r.sources["rotation_rate"] == "camcontrol identify"
    assert r.link.kind == "sata" and r.link.verdict == LINK_OK and r.link.current.rate == r.link.max.rate == 6.0
    assert r.write_cache.verdict == WC_ENABLED


def test_freebsd_nvme_pcie_link_from_pciconf():
    pci = text("freebsd", "pciconf-lvc-supermicro-5018a-chelsio-t520.txt")
    r = freebsd.build("/dev/nvd0", pciconf_text=pci)  # the capture has no NVMe controller
    assert r.link.verdict == LINK_UNKNOWN and "lists no nvme0" in r.link.reason
    # constructed: the capture's real Chelsio block (link x8(x8) speed 5.0(8.0)) with its driver name made
    # nvme0 — no published `pciconf -lvc` of an NVMe controller with its link capability was found
    block = pci[pci.index("t5iov0@"):].replace("t5iov0@", "nvme0@", 1)
    r = freebsd.build("/dev/nvd0", pciconf_text=block)
    assert r.link.kind == "pcie" and r.link.address == "pci0:4:0:0"
    assert (r.link.current.width, r.link.max.width, r.link.current.rate, r.link.max.rate) == (8, 8, 5.0, 8.0)
    assert r.link.verdict == LINK_DEGRADED and "speed 5 < 8" in r.link.reason
    assert any("link x8(x8) speed 5.0(8.0)" in e for e in r.link.evidence)
    r = freebsd.build("/dev/nda0", pciconf_text="garbage")
    assert r.tools["pciconf"].startswith("failed") and "failed" in r.link.reason


@pytest.mark.parametrize("name, cam, cam_id", [
    ("ada0", "camcontrol-identify-st8000vn002.txt", None),
    ("da7", "cam-announce-da7-sata-ssd-behind-mpr.txt", "camcontrol-identify-da11-intel-s3700-sas3008.txt"),
    ("ada0", "camcontrol-identify-corsair-force-le-tabs.txt", "camcontrol-identify-st8000vn002.txt"),
])
def test_freebsd_each_field_comes_from_the_first_source_in_precedence_that_has_it(name, cam, cam_id):
    """Every recorded source at once: each identity field's source is the first, in PRECEDENCE's order,
    whose facts hold it (the drive's own identify first, the kernel's geom and diskinfo last)."""
    from slogqual.tools.freebsd import camcontrol, diskinfo, geom, nvmecontrol
    texts = {"geom_text": text("freebsd", "geom-disk-list-truenas-nvd0-ada0-da0.txt"),
             "diskinfo_text": text("freebsd", "diskinfo-v-hgst-hdn726060ale614.txt"),
             "camcontrol_text": text("freebsd", cam),
             "nvmecontrol_text": text("freebsd", "nvmecontrol-identify-samsung-pm983.collapsed.txt"),
             "camcontrol_identify_text": text("freebsd", cam_id) if cam_id else None}
    r = freebsd.build(f"/dev/{name}", **texts)
    disks = geom.parse(texts["geom_text"])
    answers = {"camcontrol": freebsd.camcontrol_facts(camcontrol.parse(texts["camcontrol_text"])),
               "nvmecontrol": freebsd.nvmecontrol_facts(nvmecontrol.parse(texts["nvmecontrol_text"])),
               "geom": freebsd.geom_facts(next((d for d in disks if d.name == name), disks[0])),
               "diskinfo": freebsd.diskinfo_facts(diskinfo.parse(texts["diskinfo_text"]))}
    if cam_id:
        answers["camcontrol identify"] = freebsd.camcontrol_facts(camcontrol.parse(texts["camcontrol_identify_text"]))
    checked, contested = 0, 0  # fields known; fields where a later source said something else
    for field in ("model", "serial", "firmware", "wwn", "capacity", "logical_sector", "physical_sector",
                  "rotation_rate"):
        said = [(s, answers[s][field]) for s in freebsd.PRECEDENCE
                if field in freebsd.PRECEDENCE[s] and s in answers and answers[s].get(field) not in (None, "")]
        assert r.sources.get(field) == (said[0][0] if said else None), field
        if said:
            assert getattr(r, field) == said[0][1]
            checked += 1
            contested += any(value != said[0][1] for _, value in said[1:])
    assert checked >= 6 and contested >= 3


# --- Linux: real identification (loop devices, partitions, files, NBD) ----------------------------------

def test_regular_file(tmp_path):
    f = tmp_path / "t.img"
    f.write_bytes(b"\0" * 8192)
    d = identify(str(f)).to_dict()
    assert (d["kind"], d["transport"], d["class"], d["capacity"]) == ("file", "file", "virtual", 8192)
    assert d["write_cache"]["verdict"] == WC_UNKNOWN and d["unknown"]["model"]
    json.dumps(d)  # JSON-able as is


def test_missing_path_and_uri_is_never_opened():
    with pytest.raises(UsageError):
        identify("/nonexistent/device")
    d = identify("nbd+unix:///?socket=/nonexistent/nbd.sock").to_dict()
    assert (d["kind"], d["transport"], d["class"]) == ("nbd", "nbd", "virtual")
    assert d["capacity"] is None and "capacity" in d["unknown"]


@pytest.mark.integration
def test_loop_device_and_partition(loops):
    dev = loops.new(64)
    d = identify(dev).to_dict()
    assert (d["transport"], d["class"], d["capacity"]) == ("loop", "virtual", 64 * 1024 * 1024)
    assert d["write_cache"]["verdict"] == WC_UNKNOWN and d["write_cache"]["kernel"] in ("write back", "write through")
    assert d["tools"]["sysfs"] == "used" and d["tools"]["smartctl"].startswith("not used")
    if d["tools"]["lsblk"] == "used":
        assert re.fullmatch(r"\d+\.\d+", d["tool_versions"]["lsblk"])
    assert "loop device backed by" in " ".join(d["notes"])
    assert d["topology"]["elements"] == [] and "virtual device" in d["topology"]["error"]  # no path to hardware
    p1, _ = loops.partition(dev)
    pd = identify(p1).to_dict()
    assert pd["partition_of"] == os.path.basename(dev) and pd["capacity"] == 32 * 1024 * 1024


@pytest.mark.integration
def test_each_tool_is_optional(loops, monkeypatch):
    dev = loops.new()
    from slogqual.tools import lsblk

    monkeypatch.setattr(lsblk, "available", lambda: False)  # as if util-linux's lsblk were not installed
    d = identify(dev).to_dict()
    assert d["tools"]["lsblk"].startswith("absent") and d["capacity"] == 64 * 1024 * 1024


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "slogqual", *args], capture_output=True, text=True)


@pytest.mark.integration
def test_cli_inspect_loop_file_and_nbd(loops, tmp_path):
    dev = loops.new()
    p = _cli("inspect", dev, "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert (d["path"], d["transport"], d["class"]) == (dev, "loop", "virtual")
    text_out = _cli("inspect", dev)
    assert "transport: loop" in text_out.stdout and "safety: free" in text_out.stdout
    f = tmp_path / "f.img"
    f.write_bytes(b"\0" * 4096)
    d = json.loads(_cli("inspect", str(f), "--json").stdout)
    assert (d["transport"], d["class"]) == ("file", "virtual")
    if shutil.which("nbdkit") is None or shutil.which("nbdinfo") is None:
        pytest.skip("nbdkit/nbdinfo not installed")
    from slogqual.tools.nbdkit import NbdServer

    with NbdServer("memory", ["size=16M"]) as srv:
        d = json.loads(_cli("inspect", srv.uri, "--json").stdout)
        assert (d["transport"], d["class"], d["capacity"]) == ("nbd", "virtual", 16 * 1024 * 1024)
        assert d["sources"]["capacity"] == "nbdinfo"


@pytest.mark.integration
def test_cli_devices_lists_state(loops):
    blank, ext4 = loops.new(), loops.new()
    loops.mkfs(ext4)
    p = _cli("devices", "--json")
    assert p.returncode == 0, p.stderr
    rows = {r["path"]: r for r in json.loads(p.stdout)}
    assert rows[blank]["safety"]["state"] == "free"
    assert rows[ext4]["safety"]["state"] == "has-data" and "ext4" in rows[ext4]["safety"]["reasons"][0]
    loops.mount(ext4)
    rows = {r["path"]: r for r in json.loads(_cli("devices", "--json").stdout)}
    assert rows[ext4]["safety"]["state"] == "in-use"
    table = _cli("devices").stdout
    assert blank in table and "CLASS" in table


from test_safety import loops  # noqa: E402,F401 (the loop-device fixture, defined once)


# --- lab guest (QEMU with emulated NVMe, SCSI, SATA, NVDIMM): run there by the lab ----------------------

@pytest.mark.lab
@pytest.mark.parametrize("pattern, transport, cls", [
    ("nvme", "nvme", "nvme"), ("sd", None, None), ("pmem", "pmem", "nvdimm")])
def test_lab_emulated_devices(pattern, transport, cls):
    """In the lab guest: every emulated disk gets the right transport and class and says it is emulated."""
    from slogqual.device import candidates

    devs = [p for p in candidates() if os.path.basename(p).startswith(pattern)]
    if not devs:
        pytest.skip(f"no {pattern}* device here (not the lab guest)")
    for dev in devs:
        d = identify(dev).to_dict()
        if transport:
            assert (d["transport"], d["class"]) == (transport, cls)
        else:  # emulated SATA (ide-hd/AHCI) or SCSI (scsi-hd): transport follows the bus
            assert d["transport"] in ("sata", "sas", "scsi") and d["class"] in ("hdd", "sata-ssd", "sas-ssd")
        assert d["model"] or d["transport"] == "pmem"
        if d["transport"] == "nvme":  # QEMU's NVMe controller has PCI vendor 1b36
            assert d["emulated"] is True
        else:  # a custom lab model in a VM: emulation cannot be proven, and the record says so
            assert d["emulated"] is True or "emulated" in d["unknown"] or d["transport"] == "pmem"
        assert d["write_cache"]["verdict"] in (WC_ENABLED, WC_NONE)
