"""``lspci -tv``: the tree of PCI functions and the names sysfs does not give (issue #30: a shared element
named for people). Captures in tests/fixtures/lspci/ (SOURCES.md): this host's own tree, a Threadripper PRO
with three PCIe switches and eight NVMe SSDs, and a grep of an Innova-2 host's tree (a ConnectX-5 switch).
"""

import os

import pytest

from conftest import FIXTURES
from slogqual.analysis import shelf as A
from slogqual.device import topology as T
from slogqual.results.shelf import Element, UnitPath
from slogqual.tools import lspci, spawn as run

from test_device_identity import host_sys  # noqa: F401 (this host's recorded sysfs tree, unpacked once)

FIX = os.path.join(FIXTURES, "lspci")


def tree(name):
    with open(os.path.join(FIX, name), encoding="utf-8") as fh:
        return lspci.parse_tree(fh.read())


PUGET = "lspci-tv-puget-wrx90-nvme-switches.txt"
SAMSUNG = "Samsung Electronics Co Ltd NVMe SSD Controller S4LV008[Pascal]"


def chain(t, address):
    out = []
    while address is not None:
        out.append(address)
        address = t[address].parent
    return out[::-1]


# --- the parser ----------------------------------------------------------------------------------------

def test_this_hosts_tree_is_one_root_bus_of_named_functions():
    t = tree("lspci-tv-devhost-virtio.txt")
    assert list(t) == [f"0000:00:0{i}.0" for i in range(6)]  # the last one drawn with "\-"
    assert all(f.parent is None and f.buses is None for f in t.values())
    assert t["0000:00:02.0"].name == "Red Hat, Inc. Virtio 1.0 block device"


def test_switches_nest_each_ssd_behind_its_ports_on_every_root_bus():
    t = tree(PUGET)
    assert {a[:7] for a, f in t.items() if f.parent is None} == {"0000:00", "0000:20", "0000:c0", "0000:e0"}
    ssds = [a for a, f in t.items() if f.name == SAMSUNG]
    assert len(ssds) == 8
    # root port, the switch's upstream and downstream ports, a second switch's, then the SSD
    assert chain(t, "0000:05:00.0") == ["0000:00:03.1", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0",
                                        "0000:04:10.0", "0000:05:00.0"]
    assert chain(t, "0000:0e:00.0")[:2] == ["0000:00:03.1", "0000:01:00.0"]
    assert t["0000:00:03.1"].buses == (0x01, 0x13) and t["0000:04:10.0"].buses == (0x05, 0x05)
    assert all(t[a].name is None for a in chain(t, "0000:05:00.0")[:-1])  # lspci names no bridge
    assert t["0000:02:1c.0"].buses == (0x13, 0x13)  # an empty downstream port, "-[13]--"
    assert [a for a, f in t.items() if f.parent == "0000:00:05.1"] == ["0000:14:00.0", "0000:14:00.1"]
    # the sibling lines of the last root bus hang off its column, not the ones above
    assert t["0000:e3:00.4"].parent == "0000:e0:07.1" and t["0000:e0:07.0"].parent is None


def test_a_grep_of_the_tree_keeps_what_it_kept():
    t = tree("lspci-tv-grep-innova2-connectx5-switch.txt")
    # the README's lspci -nn lists 01:00.0, 02:08.0 and 02:10.0 as the ConnectX-5 switch's bridges
    assert [a for a, f in t.items() if f.buses] == ["0000:00:1d.0", "0000:01:00.0", "0000:02:08.0", "0000:02:10.0"]
    assert chain(t, "0000:04:00.1") == ["0000:00:1d.0", "0000:01:00.0", "0000:02:10.0", "0000:04:00.1"]
    assert t["0000:03:00.0"].name == "Xilinx Corporation Device 9038"


def test_text_without_a_tree_is_refused():
    with open(os.path.join(FIX, "qemu-lab-q35-vv.txt"), encoding="utf-8") as fh:
        vv = fh.read()  # lspci -vv: functions, not a tree
    with pytest.raises(ValueError, match="no lspci -t tree"):
        lspci.parse_tree(vv)
    with pytest.raises(run.ToolOutputError):
        run.parse_text("lspci", lspci.argv_tree(), "", lspci.parse_tree)


# --- names ---------------------------------------------------------------------------------------------

def test_a_function_is_called_by_its_name_and_a_port_by_what_is_behind_it():
    t = tree(PUGET)
    assert lspci.describe(t, "0000:05:00.0") == SAMSUNG
    assert lspci.describe(t, "05:00.0") == SAMSUNG  # lspci's short form is domain 0000
    assert lspci.describe(t, "0000:03:00.0") == f"behind it: 4 × {SAMSUNG}"
    assert lspci.describe(t, "0000:00:03.1") == (f"behind it: 8 × {SAMSUNG}, HighPoint Technologies, Inc. SSD7540 "
                                                 "PCIe Gen4 x16 8-Port M.2 NVMe RAID Controller")
    assert lspci.describe(t, "0000:02:1c.0") is None  # nothing behind it
    assert lspci.describe(t, "0000:99:00.0") is None  # not in the tree


# --- the names on a shelf's paths (device/topology.py) -----------------------------------------------------

def test_this_hosts_recorded_sysfs_path_gets_its_lspci_name(host_sys):  # noqa: F811
    vda = T.walk("vda", host_sys)
    pci = vda.elements[1]
    # the recorded tree is this host's: 00:02.0 is the virtio block device lspci -nn shows as [1af4:1042]
    assert (pci.name, pci.vendor, pci.device, pci.description) == ("0000:00:02.0", "0x1af4", "0x1042", None)
    T.name_pci([vda], tree("lspci-tv-devhost-virtio.txt"))
    assert pci.description == "Red Hat, Inc. Virtio 1.0 block device"
    assert pci.label() == "PCI function 0000:00:02.0 (Red Hat, Inc. Virtio 1.0 block device)"
    assert vda.elements[0].description is None  # a host bridge is not named, nor the virtio device
    assert UnitPath.from_dict(vda.to_dict()) == vda


def test_a_recorded_tree_is_not_named_from_the_lspci_of_the_host_reading_it(host_sys, monkeypatch):  # noqa: F811
    asked = []
    monkeypatch.setattr(lspci, "tree", lambda: asked.append(1) or tree("lspci-tv-devhost-virtio.txt"))
    monkeypatch.setattr(T, "walk_path", lambda path, root: T.walk("vda", root))
    unit = T.unit_path("/dev/vda", host_sys)
    assert [e.name for e in unit.elements][1] == "0000:00:02.0"
    assert asked == [] and all(e.description is None for e in unit.elements)


def test_the_shared_ports_of_eight_ssds_are_named_by_what_is_behind_them():
    t = tree(PUGET)
    # DERIVED: each SSD's sysfs path, which the kernel builds from the same bridges (pci0000:00/<port>/.../<ssd>)
    paths = []
    for ssd in [a for a, f in t.items() if f.name == SAMSUNG]:
        rel = "pci0000:00/" + "/".join(chain(t, ssd))
        paths.append(UnitPath(device=ssd, elements=[Element(k, n, key) for k, n, key in T.path_elements(rel)]))
    T.name_pci(paths, t)
    shared = {s.label: len(s.units) for s in A.shared_elements(paths)}
    assert shared == {
        "PCI host bridge pci0000:00": 8,
        f"PCI function 0000:00:03.1 (behind it: 8 × {SAMSUNG}, HighPoint Technologies, Inc. SSD7540 PCIe Gen4 x16 "
        "8-Port M.2 NVMe RAID Controller)": 8,
        f"PCI function 0000:01:00.0 (behind it: 8 × {SAMSUNG}, HighPoint Technologies, Inc. SSD7540 PCIe Gen4 x16 "
        "8-Port M.2 NVMe RAID Controller)": 8,
        f"PCI function 0000:02:00.0 (behind it: 4 × {SAMSUNG})": 4,
        f"PCI function 0000:03:00.0 (behind it: 4 × {SAMSUNG})": 4,
        f"PCI function 0000:02:04.0 (behind it: 4 × {SAMSUNG})": 4,
        f"PCI function 0000:09:00.0 (behind it: 4 × {SAMSUNG})": 4,
    }
