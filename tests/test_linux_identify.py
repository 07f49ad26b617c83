"""Linux identification of a block device end to end, on what the lab guest recorded: its sysfs tree
(tests/fixtures/sysfs/lab-qemu-guest.tar.gz) with its lsblk, smartctl and nvme-cli outputs (their
SOURCES.md) standing for the programs; lspci absent. Each source's part and the precedence between
them (smartctl and nvme-cli's own answer beats the kernel's copy, sysfs beats lsblk) are what is pinned.
"""

import os

import pytest

from slogqual.device import linux
from slogqual.errors import ToolMissingError
from slogqual.kernel import sysfs
from slogqual.tools import lsblk, lspci, nvme, smartctl
from slogqual.tools.spawn import ToolVersion
from test_device_identity import lab_sys, text  # noqa: F401 (the recorded tree, unpacked once)

SMARTCTL = {"sda": "qemu-lab-scsi-hd.json", "sdb": "qemu-lab-sata-hdd-wcache.json", "nvme0n1": "qemu-lab-nvme.json"}


@pytest.fixture
def lab_tools(monkeypatch):
    """The lab guest's programs, answering from their recordings."""
    asked = []

    def lsblk_query(path):
        name = os.path.basename(path)
        return [d for top in lsblk.parse(text("lsblk", "qemu-lab-guest.json")) for d in top.walk() if d.name == name]

    def smartctl_query(path, nvme=False):
        asked.append(("smartctl", path, nvme))
        return smartctl.parse(text("smartctl", SMARTCTL[os.path.basename(path)]))

    monkeypatch.setattr(lsblk, "available", lambda: True)
    monkeypatch.setattr(lsblk, "query", lsblk_query)
    monkeypatch.setattr(smartctl, "available", lambda: True)
    monkeypatch.setattr(smartctl, "query", smartctl_query)
    monkeypatch.setattr(nvme, "available", lambda: True)
    monkeypatch.setattr(nvme, "id_ctrl", lambda c: asked.append(("nvme", c)) or
                        nvme.parse_id_ctrl(text("nvme", "qemu-lab-id-ctrl.json")))
    monkeypatch.setattr(nvme, "get_vwc_enabled", lambda c: nvme.parse_get_vwc(text("nvme", "qemu-lab-get-feature-6.txt")))
    monkeypatch.setattr(lspci, "available", lambda: False)
    for name, mod in (("lsblk", lsblk), ("smartctl", smartctl), ("nvme", nvme)):
        monkeypatch.setattr(mod, "version", lambda name=name: ToolVersion(name, (1, 0), f"{name} 1.0"))
    monkeypatch.setattr(linux, "_in_virtual_machine", lambda: False)
    return asked


@pytest.fixture
def no_tools(monkeypatch):
    for mod in (lsblk, smartctl, nvme, lspci):
        monkeypatch.setattr(mod, "available", lambda: False)
    monkeypatch.setattr(linux, "_in_virtual_machine", lambda: True)


def record(root, name):
    devnum = sysfs.read(os.path.join(root, "class", "block", name, "dev"))
    return linux._identify_block(f"/dev/{name}", devnum, root).to_dict()


def test_a_sata_disk_smartctl_names_it_and_sysfs_sizes_it(lab_sys, lab_tools):
    d = record(lab_sys, "sdb")
    assert (d["transport"], d["class"]) == ("sata", "hdd")
    assert d["model"] == "SLOGQUAL LAB HDD 7200RPM" and d["sources"]["model"] == "smartctl"
    assert d["sources"]["capacity"] == "sysfs" and d["sources"]["logical_sector"] == "sysfs"
    assert d["rotation_rate"] == 7200 and d["sources"]["rotation_rate"] == "smartctl"
    assert d["write_cache"]["verdict"] == "volatile-cache-enabled"
    assert any("smartctl -g wcache" in e for e in d["write_cache"]["evidence"])
    assert d["tools"]["smartctl"] == "used" and d["tool_versions"]["smartctl"] == "1.0"
    assert "nvme" not in d["tools"]
    assert any("sysfs said 'SLOGQUAL LAB HDD'" in n for n in d["notes"])


def test_the_record_carries_the_path_from_the_host_as_sysfs_names_it(lab_sys, lab_tools):  # noqa: F811
    d = record(lab_sys, "sdb")
    topo = d["topology"]
    assert topo["device"] == "/dev/sdb" and "error" not in topo
    assert [e["kind"] for e in topo["elements"]] == ["pci-host-bridge", "pci-function", "ata-port", "scsi-host"]
    ata = topo["elements"][2]
    assert ata["name"] == "ata1" and ata["link"]["kind"] == "sata" and ata["link"]["rate"] == 1.5
    nvme_path = record(lab_sys, "nvme0n1")["topology"]
    assert [e["name"] for e in nvme_path["elements"]] == ["pci0000:00", "0000:00:04.0", "nvme0"]


def test_a_scsi_disk_takes_its_cache_from_the_sd_driver(lab_sys, lab_tools):
    d = record(lab_sys, "sda")
    assert d["transport"] in ("scsi", "sas") and d["vendor"] == "SLOGQUAL"
    assert any("cache_type" in e for e in d["write_cache"]["evidence"])


def test_an_nvme_namespace_asks_its_controller(lab_sys, lab_tools):
    d = record(lab_sys, "nvme0n1")
    assert (d["transport"], d["model"], d["sources"]["model"]) == ("nvme", "QEMU NVMe Ctrl", "nvme id-ctrl")
    assert ("nvme", "/dev/nvme0") in lab_tools and ("smartctl", "/dev/nvme0n1", True) in lab_tools
    assert d["emulated"] is True and d["tools"]["nvme"] == "used"
    assert any("nvme get-feature -f 6" in e for e in d["write_cache"]["evidence"])


def test_pmem_asks_no_disk_tool(lab_sys, lab_tools):
    d = record(lab_sys, "pmem0")
    assert (d["transport"], d["class"]) == ("pmem", "nvdimm")
    assert d["tools"]["smartctl"] == "not used: pmem device"
    assert any("persistence_domain" in e for e in d["write_cache"]["evidence"])
    assert lab_tools == []


@pytest.mark.parametrize("name", ["sda", "sdb", "nvme0n1", "pmem0"])
def test_without_tools_sysfs_alone_answers_and_says_what_is_missing(lab_sys, no_tools, name):
    d = record(lab_sys, name)
    assert d["tools"]["sysfs"] == "used" and d["tools"]["lsblk"].startswith("absent")
    assert all(s in ("sysfs", "sysfs+lsblk") or s.startswith("sysfs") for s in d["sources"].values())
    assert d["emulated"] is not False  # a VM (hypervisor flag) cannot tell: unknown, or emulated by its name


def test_lsblk_that_fails_is_said_and_sysfs_stands(lab_sys, lab_tools, monkeypatch):
    def fails(path):
        raise ToolMissingError("lsblk: gone", program="lsblk", argv=["lsblk"])

    monkeypatch.setattr(lsblk, "query", fails)
    d = record(lab_sys, "sdb")
    assert d["tools"]["lsblk"].startswith("failed: ") and d["sources"]["capacity"] == "sysfs"
