"""The path from the host to a FreeBSD disk (issue #30, device/freebsd_topology.py) on outputs of FreeBSD's
programs recorded on real machines (tests/fixtures/freebsd/SOURCES.md, "A disk's path"):

- ``camcontrol devlist -v`` of a TrueNAS box with 15 disks behind an Areca ARC-1882IX-24 (arcmsr0) and 14
  empty AHCI ports, of a DELL MD1420 shelf on mrsas1 (an excerpt, whitespace collapsed by its quoter) and
  of a VirtualBox guest (ata0, ata1);
- ``pciconf -lvc`` and ``devinfo -rv`` of one MacBook Pro 11,4: its SSD's AHCI controller ahci0, an x4
  PCIe 3.0 endpoint, on the root port pcib1 that trained x4 of its x8.

No capture holds all three programs of one machine, so no test builds a whole path from real output:
the Areca box's units share their SIM (no pciconf of it was found), the MacBook's ahcich0 gets its PCI
path and ceilings (no camcontrol devlist of it was found). A program a test does not give is one that
is not there (the recorded host raises ToolMissingError for it).
"""

import os

import pytest

from conftest import FIXTURES
from slogqual.analysis import shelf as A
from slogqual.device import freebsd_topology as F
from slogqual.device import topology as T
from slogqual.results.shelf import UnitPath
from slogqual.tools import run
from slogqual.tools.freebsd import camcontrol, devinfo, pciconf
from slogqual.tools.freebsd import host as bsdhost

FIX = os.path.join(FIXTURES, "freebsd")
DEVLIST = tuple(camcontrol.argv_devlist())
GB = 1e9


def cap(name):
    with open(os.path.join(FIX, name), encoding="utf-8") as fh:
        return fh.read()


ARECA = cap("camcontrol-devlist-v-truenas-areca-arc1882.txt")
MRSAS = cap("camcontrol-devlist-v-truenas-mrsas-md1420.excerpt.txt")
VBOX = cap("camcontrol-devlist-v-truenas-vbox-ata.txt")
MAC_TREE = cap("devinfo-rv-macbookpro-11-4.excerpt.txt")
MAC_PCI = cap("pciconf-lvc-macbookpro-11-4-ahci-ssd.txt")


# --- camcontrol devlist -v ------------------------------------------------------------------------------

def test_devlist_names_each_bus_its_sim_and_the_units_on_it():
    buses = camcontrol.parse_devlist(ARECA)
    assert [b.sim for b in buses][:14] == [f"ahcich{i}" for i in range(14)]
    assert all(not u.periphs for b in buses[:14] for u in b.units)  # the AHCI ports hold nothing
    areca = camcontrol.bus_of(buses, "da0")
    assert (areca.scbus, areca.sim, areca.sim_bus) == (14, "arcmsr0", 0)
    disks = [p for u in areca.units for p in u.periphs if p.startswith("da")]
    assert disks == [f"da{i}" for i in range(15)]
    assert all(camcontrol.bus_of(buses, d) is areca for d in disks)
    # the controller's own LUN is a pass device only; the bus placeholder has no periph at all
    assert [u.periphs for u in areca.units if u.target >= 16 or u.target < 0] == [["pass15"], []]
    assert (buses[-1].scbus, buses[-1].sim) == (-1, "xpt0")


def test_devlist_one_sim_with_two_buses_and_periphs_in_either_order():
    buses = camcontrol.parse_devlist(MRSAS)  # single spaces, as quoted: the columns are not needed
    assert [(b.scbus, b.sim, b.sim_bus) for b in buses] == [(2, "mrsas1", 0), (3, "mrsas1", 1)]
    assert camcontrol.bus_of(buses, "da136").scbus == 3  # printed "(da136,pass141)"
    assert camcontrol.bus_of(buses, "da4").scbus == 3  # printed "(pass7,da4)"
    assert camcontrol.bus_of(buses, "da0") is None  # not in the excerpt


def test_devlist_without_its_bus_lines_is_refused_as_not_devlist_v():
    # derived from the real capture: plain `camcontrol devlist` prints the unit lines without the bus lines
    plain = "".join(line + "\n" for line in ARECA.splitlines() if not line.startswith("scbus"))
    with pytest.raises(ValueError, match="devlist -v"):
        camcontrol.parse_devlist(plain)
    with pytest.raises(run.ToolOutputError):
        run.parse_text("camcontrol", DEVLIST, plain, camcontrol.parse_devlist)


# --- devinfo -rv and pciconf -lvc: the PCI path above a SIM ---------------------------------------------------

def test_devinfo_tree_gives_each_device_its_parent_and_skips_resources():
    tree = devinfo.parse(MAC_TREE)
    ahcich0 = devinfo.find(tree, "ahcich0")
    assert [d.name for d in ahcich0.ancestors()] == ["nexus0", "acpi0", "pcib0", "pci0", "pcib1", "pci1", "ahci0"]
    assert ahcich0.location == {"channel": "0"} and ahcich0.selector is None
    pcib1 = devinfo.find(tree, "pcib1")
    assert pcib1.selector == "pci0:0:1:0" and pcib1.pnpinfo["class"] == "0x060400"
    assert devinfo.find(tree, "pcib0").pnpinfo["_HID"] == "PNP0A08"  # the ACPI host-PCI bridge: no PCI location
    # resource headers and ranges are not devices; devices without a driver are "unknown", none of them found
    assert not any(d.name.startswith("0x") or d.name[0].isdigit() for d in tree)
    assert devinfo.find(tree, "unknown") is None
    assert [d.state for d in tree if d.state] == ["disabled", "disabled"]
    broadcom = [d for d in tree if d.selector == "pci0:3:0:0"]
    assert [(d.name, d.parent.name, d.parent.parent.name) for d in broadcom] == [("unknown", "pci3", "pcib4")]


def test_the_ssd_port_path_names_host_bridge_root_port_and_controller_with_their_links():
    unit = UnitPath(device="ahcich0")
    elements = F.pci_elements("ahcich0", devinfo.parse(MAC_TREE), pciconf.parse(MAC_PCI), unit)
    assert [(e.kind, e.name) for e in elements] == [
        ("pci-host-bridge", "pcib0"), ("pci-bridge", "pcib1@pci0:0:1:0"), ("pci-function", "ahci0@pci0:1:0:0")]
    assert unit.syspath == "nexus0/acpi0/pcib0/pci0/pcib1/pci1/ahci0/ahcich0" and unit.notes == []
    port, ahci = elements[1].link, elements[2].link
    # the root port trained x4 of its x8 at 8.0 GT/s; the SSD controller is an x4 endpoint at 8.0 GT/s
    assert (port.rate, port.lanes, port.max_rate, port.max_lanes) == (8.0, 4, 8.0, 8)
    assert (ahci.rate, ahci.lanes, ahci.max_rate, ahci.max_lanes) == (8.0, 4, 8.0, 4)
    assert "link x4(x8) speed 8.0(8.0)" in port.evidence
    # one link seen from both ends: the same ceiling, 8 GT/s x 4 lanes x 128/130 / 8
    assert A.ceiling_bytes(port) == A.ceiling_bytes(ahci) == pytest.approx(8 * 4 * 128 / 130 / 8 * GB)
    assert elements[2].description == "Samsung Electronics Co Ltd S4LN058A01[SSUBX] AHCI SSD Controller (Apple slot)"
    assert elements[2].label().startswith("PCI function ahci0@pci0:1:0:0 (Samsung")


def test_a_port_with_nothing_trained_has_no_rate_and_a_slower_port_its_own():
    ports = {d.name: F.link_of(d) for d in pciconf.parse(MAC_PCI) if d.name in ("pcib2", "pcib3")}
    empty = ports["pcib3"]  # link x0(x1) speed 0.0(5.0): an empty hot-plug slot
    assert (empty.rate, empty.lanes, empty.max_rate, empty.max_lanes) == (None, None, 5.0, 1)
    assert A.ceiling_bytes(empty) is None  # unknown, never zero
    slow = ports["pcib2"]  # link x4(x8) speed 2.5(5.0): trained below both maxima
    assert (slow.rate, slow.lanes, slow.max_rate, slow.max_lanes) == (2.5, 4, 5.0, 8)
    assert A.ceiling_bytes(slow) == pytest.approx(2.5 * 4 * 0.8 / 8 * GB)  # 8b/10b at 2.5 GT/s


def test_without_devinfo_the_sim_is_not_found_in_pciconf_and_says_so():
    unit = UnitPath(device="ahcich0")
    assert F.pci_elements("ahcich0", None, pciconf.parse(MAC_PCI), unit) == []
    assert unit.notes == ["devinfo -rv gave nothing: the bridges above ahcich0 are unknown",
                          "the PCI function of ahcich0 is unknown: pciconf -lvc lists no ahcich0"]
    # a SIM that is itself a PCI function is found by its name: ahci0 stands in here for mpr0 or nvme0
    unit = UnitPath(device="x")
    assert [e.name for e in F.pci_elements("ahci0", None, pciconf.parse(MAC_PCI), unit)] == ["ahci0@pci0:1:0:0"]


# --- whole paths -----------------------------------------------------------------------------------------

def test_units_behind_one_hba_share_its_sim_and_only_the_sim_is_known():
    paths = [F.build(f"/dev/da{i}", ARECA) for i in (0, 1, 14)]
    for p in paths:
        assert [(e.kind, e.name, e.key) for e in p.elements] == [("scsi-host", "arcmsr0", "sim:arcmsr0")]
        assert p.error is None
        assert "devinfo -rv gave nothing: the bridges above arcmsr0 are unknown" in p.notes
        assert "the PCI function of arcmsr0 is unknown: pciconf -lvc gave nothing" in p.notes
    shared = A.shared_elements(paths)
    assert [(s.label, s.units, s.ceiling) for s in shared] == [
        ("SCSI host arcmsr0 (scbus14, bus 0)", ["/dev/da0", "/dev/da1", "/dev/da14"], None)]
    # units on two SIMs share nothing the outputs show
    vbox = [F.build(f"/dev/ada{i}", VBOX) for i in (0, 1)]
    assert [p.elements[-1].name for p in vbox] == ["ata0", "ata1"] and A.shared_elements(vbox) == []


def test_a_disk_camcontrol_does_not_list_has_no_path_and_says_why():
    assert F.build("/dev/da99", ARECA).error == "camcontrol devlist -v lists no da99: its path is unknown"
    assert F.build("/dev/da0").error == "camcontrol devlist -v gave nothing: the path of da0 is unknown"
    assert "is not a da, ada, nda or nvd disk" in F.build("/dev/md0").error
    assert F.build("/dev/da0p3", ARECA).elements[-1].name == "arcmsr0"  # a partition: its disk's path


def test_an_nvd_disk_is_its_controllers_namespace():
    unit = F.build("/dev/nvd0")  # no program gave anything: what is known is only the naming
    assert [(e.kind, e.name) for e in unit.elements] == [("nvme-controller", "nvme0")]
    assert unit.notes[0] == "nvd0 taken to be namespace 1 of nvme0 (the usual single namespace)"


def test_walk_runs_the_programs_through_the_host_and_notes_those_that_are_missing(tmp_path):
    host = bsdhost.recorded({DEVLIST: ARECA}, str(tmp_path))  # devinfo and pciconf: nothing recorded
    unit = F.walk("/dev/da3", host)
    assert [e.name for e in unit.elements] == ["arcmsr0"]
    assert any(n.startswith("devinfo -rv: ") for n in unit.notes)
    assert any(n.startswith("pciconf -lvc: ") for n in unit.notes)
    # the platform's dispatch: given a FreeBSD host, topology reads it rather than sysfs
    assert T.unit_path("/dev/da3", host=host).to_dict() == unit.to_dict()
    kept = T.recorded("/dev/da3", host=host)
    assert UnitPath.from_dict(kept) == unit and kept["notes"] == unit.notes
    failing = bsdhost.recorded({DEVLIST: (1, "", "")}, str(tmp_path))
    assert F.walk("/dev/da3", failing).notes[0] == "camcontrol devlist -v failed: exit 1"
