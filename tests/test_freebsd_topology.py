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

A disk's own link (SOURCES.md, "A disk's own link") is read from CAM's announce lines, which camcontrol
identify/inquiry print as the kernel does at attach: dmesg captures of a SATA 3 disk trained at SATA 2
(ahcich1), two more (ahcich1, ahcich2), a SATA disk whose channel gave no revision (ata2), a parallel-ATA
QEMU disk (ata0), SAS and SATA disks behind mpr. Each dmesg names the disk's SIM, bus and target in its
attach line (``ada1 at ahcich1 bus 0 scbus1 target 0 lun 0``): :func:`bus_of_attach` takes the disk's CAM
bus from it, the same facts camcontrol devlist -v lists, of the same machine.
"""

import os
import re

import pytest

from conftest import FIXTURES
from slogqual.analysis import shelf as A
from slogqual.device import classify as C
from slogqual.device import freebsd
from slogqual.device import freebsd_topology as F
from slogqual.device import topology as T
from slogqual.errors import SlogqualError
from slogqual.results import schema
from slogqual.results.device import check_record, check_topology
from slogqual.results.shelf import UnitPath
from slogqual.tools import spawn as run
from slogqual.tools.freebsd import camcontrol, devinfo, pciconf
from slogqual.tools.freebsd import host as bsdhost

from test_device_identity import lab_sys  # noqa: F401 (the recorded Linux lab tree, unpacked once)

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
HITACHI = cap("cam-announce-ada1-sata3-device-at-sata2-ahcich1.txt")  # ada1 on ahcich1, SATA 3 device at 2.x
WD20 = cap("cam-announce-ada0-ada1-wd20ezrx-sata2-pastebin.txt")  # ada0 on ahcich1, ada1 on ahcich2
NS4 = cap("cam-announce-ada0-ata2-no-sata-revision-da0-umass.txt")  # ada0 on ata2 (no revision), da0 on USB
QEMU_PATA = cap("cam-announce-ada0-qemu-parallel-ata.txt")  # ada0 on ata0, parallel ATA
DA82 = cap("cam-announce-da82-sas.txt")  # a SAS disk, mpr0 target 199
DA7 = cap("cam-announce-da7-sata-ssd-behind-mpr.txt")  # a SATA SSD, mpr1 target 4
DA11_IDENTIFY = cap("camcontrol-identify-da11-intel-s3700-sas3008.txt")  # da7's twin on the same HBA
ST8000_IDENTIFY = cap("camcontrol-identify-st8000vn002.txt")
CORSAIR_IDENTIFY = cap("camcontrol-identify-corsair-force-le-tabs.txt")
_ATTACH = re.compile(r"^(\w+) at (\S+) bus (\d+) scbus(\d+) target (\d+) lun (\w+)$")


def bus_of_attach(text, disk):
    """The CAM bus the kernel's attach line of ``disk`` names: its SIM, the SIM's bus, scbus and target."""
    for line in text.splitlines():
        m = _ATTACH.match(line.strip())
        if m and m.group(1) == disk:
            unit = camcontrol.CamUnit("", int(m.group(5)), m.group(6), [disk])
            return camcontrol.CamBus(int(m.group(4)), m.group(2), int(m.group(3)), [unit])
    raise AssertionError(f"no attach line of {disk}")


def announce_of(text, disk):
    """The announce lines of ``disk`` alone, parsed (a dmesg holds several disks' lines)."""
    return camcontrol.parse("".join(line + "\n" for line in text.splitlines() if line.startswith(disk + ":")))


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


# --- a disk's own link: the transfers line of its announce ---------------------------------------------------

def test_the_transfers_line_is_the_negotiated_sata_link_and_the_device_announces_what_it_could_do():
    slow = F.sata_link(announce_of(HITACHI, "ada1"), "camcontrol identify ada1")
    # an ATA8-ACS SATA 3.x device that trained at SATA 2.x: 3 Gbit/s of the 6 it could do
    assert (slow.kind, slow.rate, slow.lanes, slow.max_rate, slow.max_lanes) == ("sata", 3.0, 1, 6.0, 1)
    assert "300.000MB/s transfers (SATA 2.x, UDMA6, PIO 8192bytes)" in slow.evidence
    assert "ATA8-ACS SATA 3.x device" in slow.evidence
    full = F.sata_link(camcontrol.parse(ST8000_IDENTIFY), "camcontrol identify ada0")
    assert (full.rate, full.max_rate) == (6.0, 6.0)
    # the rate is the revision's, and the MB/s camcontrol prints from the same settings says the same
    for cam, link in ((announce_of(HITACHI, "ada1"), slow), (camcontrol.parse(ST8000_IDENTIFY), full)):
        assert link.rate == C.parse_gbps(f"{cam.transfer_mbps}MB/s")
    # half the line rate, half the ceiling
    assert A.ceiling_bytes(slow) == pytest.approx(A.ceiling_bytes(full) / 2)
    # a second capture of the form: two disks, each a SATA 3.x device at SATA 2.x
    for disk in ("ada0", "ada1"):
        link = F.sata_link(announce_of(WD20, disk), f"camcontrol identify {disk}")
        assert (link.rate, link.max_rate) == (3.0, 6.0)


def test_without_a_sata_revision_there_is_no_sata_link():
    pata = announce_of(QEMU_PATA, "ada0")  # 16.700MB/s transfers (WDMA2, PIO 8192bytes): a parallel ATA mode
    base = announce_of(NS4, "ada0")  # 150.000MB/s transfers (SATA, UDMA5, ...): SATA, no revision: base speed
    behind_hba = camcontrol.parse(DA11_IDENTIFY)  # 600.000MB/s transfers: the SAS HBA's figure, no revision
    assert (pata.transfer_mbps, base.transfer_mbps, behind_hba.transfer_mbps) == (16.7, 150.0, 600.0)
    assert [F.sata_link(c, "x") for c in (pata, base, behind_hba)] == [None, None, None]
    # 150.000 MB/s with no revision is also what the SIM says when it knows nothing: never read as 1.5 Gbit/s
    assert F.sas_link(base, "x") is None


def test_an_ata_channel_carries_the_disks_link_above_its_sim_and_is_the_disks_slot():
    notes = []
    elements = F.cam_elements("ada1", bus_of_attach(HITACHI, "ada1"), announce_of(HITACHI, "ada1"),
                              "camcontrol identify ada1", notes)
    assert [(e.kind, e.name, e.key) for e in elements] == [
        ("ata-port", "ahcich1", "ata:ahcich1"), ("scsi-host", "ahcich1", "sim:ahcich1")]
    unit = UnitPath("/dev/ada1", elements=elements)
    assert unit.slot is elements[0] and notes == []
    assert unit.slot.link == F.sata_link(announce_of(HITACHI, "ada1"), "camcontrol identify ada1")
    assert elements[0].label() == "ATA port ahcich1 (scbus1 target 0)"
    # two disks on two channels: two ports, nothing shared below the controller
    paths = [UnitPath(f"/dev/{d}", elements=F.cam_elements(d, bus_of_attach(WD20, d), announce_of(WD20, d),
                                                           f"camcontrol identify {d}", notes))
             for d in ("ada0", "ada1")]
    assert [p.slot.key for p in paths] == ["ata:ahcich1", "ata:ahcich2"] and A.shared_elements(paths) == []


def test_a_channel_that_gave_no_revision_keeps_its_port_and_says_why_the_link_is_unknown():
    notes = []
    elements = F.cam_elements("ada0", bus_of_attach(NS4, "ada0"), announce_of(NS4, "ada0"), "camcontrol identify ada0",
                              notes)
    assert [(e.kind, e.name, e.link) for e in elements] == [("ata-port", "ata2", None), ("scsi-host", "ata2", None)]
    assert notes == ["camcontrol identify ada0 gives no negotiated rate (150.000MB/s transfers (SATA, UDMA5, "
                     "PIO 8192bytes)): the link of ada0 is unknown"]
    assert UnitPath("/dev/ada0", elements=elements).slot is None
    notes = []
    F.cam_elements("ada0", bus_of_attach(NS4, "ada0"), None, "camcontrol identify ada0", notes)
    assert notes == ["camcontrol identify ada0 gave nothing: the link of ada0 is unknown"]


def test_behind_mpr_each_target_has_a_port_with_the_rate_its_phy_negotiated():
    notes = []
    sas = F.cam_elements("da82", bus_of_attach(DA82, "da82"), announce_of(DA82, "da82"), "camcontrol inquiry da82",
                         notes)
    sata = F.cam_elements("da7", bus_of_attach(DA7, "da7"), announce_of(DA7, "da7"), "camcontrol inquiry da7", notes)
    assert notes == []
    assert [(e.kind, e.name, e.key) for e in sas] == [
        ("scsi-host", "mpr0", "sim:mpr0"), ("sas-port", "mpr0 target 199", "sas:mpr0:0:199")]
    assert [(e.kind, e.key) for e in sata] == [("scsi-host", "sim:mpr1"), ("sas-port", "sas:mpr1:0:4")]
    # 1200.000 and 600.000 MB/s: 12 and 6 Gbit/s, one lane each; the inquiry announces no SATA generation
    assert [(e[1].link.kind, e[1].link.rate, e[1].link.lanes, e[1].link.max_rate) for e in (sas, sata)] == [
        ("sas", 12.0, 1, None), ("sas", 6.0, 1, None)]
    assert A.ceiling_bytes(sas[1].link) == pytest.approx(2 * A.ceiling_bytes(sata[1].link))
    assert UnitPath("/dev/da82", elements=sas).slot is sas[1]
    assert sas[1].label() == "SAS port mpr0 target 199 (scbus14, bus 0)"
    # the identify of the same model on the same HBA adds what the SATA device could do
    twin = F.sas_link(camcontrol.parse(DA11_IDENTIFY), "camcontrol identify da11")
    assert (twin.rate, twin.max_rate, twin.max_lanes) == (6.0, 6.0, 1)


def test_a_da_disk_on_another_sim_gets_no_port_and_says_so():
    notes = []
    elements = F.cam_elements("da0", bus_of_attach(NS4, "da0"), announce_of(NS4, "da0"), "camcontrol inquiry da0",
                              notes)
    assert [(e.kind, e.name) for e in elements] == [("scsi-host", "umass-sim0")]
    assert notes == ["da0 is on umass-sim0: slogqual reads a disk's link behind mpr or mps only, so it is unknown"]
    quiet = []  # not asked (walk asks only behind mpr/mps): nothing to say
    F.cam_elements("da0", bus_of_attach(NS4, "da0"), None, "camcontrol inquiry da0", quiet)
    assert quiet == []


def test_a_path_is_read_by_camcontrol_and_builds_the_disks_port_from_its_announce():
    # the plumbing, on two machines' outputs: the VirtualBox guest's bus (ada0 alone on the channel ata0) and
    # the identify of the Corsair SSD, itself ada0 alone on ata0 of a ThinkPad (its source's attach line); what
    # is tested is where build() puts the announce's link, not a machine
    cam = camcontrol.parse(CORSAIR_IDENTIFY)
    unit = F.build("/dev/ada0", VBOX, announce=cam, announce_tool="camcontrol identify ada0")
    assert unit.source == "camcontrol" and unit.to_dict()["source"] == "camcontrol"
    assert [(e.kind, e.key) for e in unit.elements] == [("ata-port", "ata:ata0"), ("scsi-host", "sim:ata0")]
    assert unit.slot.link == F.sata_link(cam, "camcontrol identify ada0")
    # the record built from the same outputs carries that path, and its own link says what the port's does
    rec = freebsd.build("/dev/ada0", camcontrol_text=CORSAIR_IDENTIFY, devlist_text=VBOX).to_dict()
    assert rec["topology"] == unit.to_dict()
    assert check_record(schema.Checker("test"), rec)["topology"]["source"] == "camcontrol"
    assert (rec["link"]["kind"], rec["link"]["current"]["rate"], rec["link"]["max"]["rate"]) == (
        unit.slot.link.kind, unit.slot.link.rate, unit.slot.link.max_rate)
    # without it the port is there, its link unknown and said so
    bare = F.build("/dev/ada0", VBOX)
    assert bare.elements[0].link is None
    assert "camcontrol identify ada0 gave nothing: the link of ada0 is unknown" in bare.notes


def test_walk_asks_an_ada_disk_for_its_identify_and_a_da_disk_behind_another_sim_nothing(tmp_path):
    identify = tuple(camcontrol.argv_identify("ada1"))
    host = bsdhost.recorded({DEVLIST: VBOX, identify: (1, "", "")}, str(tmp_path))
    unit = F.walk("/dev/ada1", host)
    assert "camcontrol identify ada1 failed: exit 1" in unit.notes
    assert [(e.kind, e.link) for e in unit.elements] == [("ata-port", None), ("scsi-host", None)]
    # the Areca's da3 is not behind mpr/mps: no inquiry asked (nothing recorded for it, and no note of it)
    areca = F.walk("/dev/da3", bsdhost.recorded({DEVLIST: ARECA}, str(tmp_path)))
    assert not any("inquiry" in n for n in areca.notes)


# --- the record carries its path: freebsd.build and identify, the same field and checker as Linux ----------

def test_a_freebsd_record_carries_its_path_in_the_field_and_form_a_linux_record_does(lab_sys):  # noqa: F811
    rec = freebsd.build("/dev/da3", devlist_text=ARECA).to_dict()
    assert rec["topology"] == F.build("/dev/da3", ARECA).to_dict()
    assert [e["name"] for e in rec["topology"]["elements"]] == ["arcmsr0"]
    assert rec["tools"]["camcontrol devlist"] == "used"
    check_record(schema.Checker("test"), rec)
    # a partition's path is its disk's; no devlist, no path, and the reason
    assert freebsd.build("/dev/da3p1", devlist_text=ARECA).to_dict()["topology"]["elements"][-1]["name"] == "arcmsr0"
    assert freebsd.build("/dev/da82", camcontrol_text=DA82).topology["error"] == (
        "camcontrol devlist -v gave nothing: the path of da82 is unknown")
    assert freebsd.build("/dev/ada0", devlist_text="garbage").tools["camcontrol devlist"].startswith("failed: ")
    # the same keys as a Linux path, each saying what read it
    linux_path = T.recorded("/dev/sdb", lab_sys)
    assert linux_path["source"] == "sysfs" and rec["topology"]["source"] == "camcontrol"
    assert set(rec["topology"]) <= set(linux_path) | {"notes", "error"}


def test_the_checker_takes_a_path_without_a_source_and_refuses_one_that_is_not_text():
    path = F.build("/dev/da3", ARECA).to_dict()
    older = {k: v for k, v in path.items() if k != "source"}  # recorded before the key was kept
    check_topology(schema.Checker("test"), older, "device.topology")
    assert UnitPath.from_dict(older).source is None
    with pytest.raises(SlogqualError, match="source"):
        check_topology(schema.Checker("test"), dict(path, source=3), "device.topology")


def _record_runs(outputs, tmp_path, monkeypatch):
    """Serve ``outputs`` as this host's programs (a recorded FreeBSD host): (the argvs asked, in order; the
    recording runner itself, for a Host of its own)."""
    asked = []
    runner = bsdhost.recorded(outputs, str(tmp_path)).runner

    def recording(argv, **kw):
        asked.append(tuple(argv))
        return runner(argv, **kw)

    monkeypatch.setattr(run, "which", lambda name: f"/sbin/{name}")
    monkeypatch.setattr(run, "run", recording)
    return asked, recording


def test_identify_runs_the_path_programs_through_their_doors(tmp_path, monkeypatch):
    node = tmp_path / "ada0"
    node.write_text("")
    outputs = {DEVLIST: VBOX, tuple(camcontrol.argv_identify("ada0")): (1, "", "")}
    asked, recording = _record_runs(outputs, tmp_path, monkeypatch)
    rec = freebsd.identify(str(node))
    for argv in (DEVLIST, tuple(devinfo.argv()), tuple(pciconf.argv()), tuple(camcontrol.argv_identify("ada0"))):
        assert argv in asked
    assert rec.tools["camcontrol devlist"] == "used" and rec.tools["devinfo"].startswith("failed: ")
    assert [(e["kind"], e["name"]) for e in rec.topology["elements"]] == [("ata-port", "ata0"), ("scsi-host", "ata0")]
    assert "devinfo -rv gave nothing: the bridges above ata0 are unknown" in rec.topology["notes"]


def test_a_run_reads_the_whole_machines_programs_once_for_all_its_disks_and_forgets_them_after(tmp_path,
                                                                                               monkeypatch):
    import json

    from slogqual import device

    nodes = [tmp_path / "ada0", tmp_path / "ada1"]  # VBOX's two disks, on ata0 and ata1
    for node in nodes:
        node.write_text("")
    outputs = {DEVLIST: VBOX, tuple(devinfo.argv()): MAC_TREE, tuple(pciconf.argv()): MAC_PCI,
               **{tuple(camcontrol.argv_identify(n.name)): (1, "", "") for n in nodes}}
    asked, recording = _record_runs(outputs, tmp_path, monkeypatch)

    def machine_reads():
        counts = [asked.count(argv) for argv in F.MACHINE_WIDE]
        asked.clear()
        return counts

    def records():
        return [json.dumps(freebsd.identify(str(n)).to_dict()) for n in nodes]

    apart = records()
    assert machine_reads() == [2, 2]  # without a run's scope: once a disk
    with device.one_reading():
        together = records()
        walked = F.walk(str(nodes[0]))  # the live host's path, walked in the same run: the same reading
    assert machine_reads() == [1, 1]
    assert together == apart  # the records byte-equal
    assert walked.to_dict()["elements"] == json.loads(together[0])["topology"]["elements"]
    records()
    assert machine_reads() == [2, 2]  # the run ended: its reading is gone, the next one reads the machine anew
    # a recorded host is a machine of its own: walked twice in a run, its programs run once
    host = bsdhost.Host(runner=recording, dev=str(tmp_path))
    with device.one_reading():
        assert F.walk("/dev/ada0", host) == F.walk("/dev/ada0", host)
        freebsd.identify(str(nodes[0]))  # the live host: its own reading
    assert machine_reads() == [2, 2]
