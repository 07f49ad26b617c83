"""A shelf's paths and where its aggregate stopped (issue #30): the sysfs walk (device/topology.py) on real
paths and recorded trees, the ceilings and verdicts (analysis/shelf.py) on the seeds' figures. Sources:
tests/fixtures/topology/SOURCES.md. Trees built here are SYNTHETIC (said at each builder): the layout the
kernel makes, along real paths, with the seeds' link values."""

import os

import pytest

from slogqual.analysis import shelf as A
from slogqual.report import shelf as shelf_words
from slogqual.device import topology as T
from slogqual.results.shelf import Link, UnitPath

from test_device_identity import host_sys, lab_sys  # noqa: F401 (the recorded trees, unpacked once)

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "topology")
MB = 1e6


def devpaths():
    out = {}
    with open(os.path.join(FIX, "devpaths.txt")) as fh:
        for line in fh:
            if line.strip() and not line.startswith("#"):
                name, path = line.rstrip("\n").split("\t")
                out[name] = path
    return out


# --- the walk on real paths and recorded trees -----------------------------------------------------------

def test_real_path_behind_an_expander_names_every_element_in_order():
    path = devpaths()["forum-2017-sdi-behind-expander"]
    got = [(kind, name) for kind, name, _ in T.path_elements(path)]
    assert got == [("pci-host-bridge", "pci0000:00"), ("pci-function", "0000:00:01.0"),
                   ("pci-function", "0000:09:00.0"), ("scsi-host", "host0"), ("sas-port", "port-0:0"),
                   ("sas-expander", "expander-0:0"), ("sas-port", "port-0:0:13"),
                   ("sas-end-device", "end_device-0:0:13")]
    keys = [key for _, _, key in T.path_elements(path)]
    assert all(b.startswith(a + "/") for a, b in zip(keys, keys[1:]))  # each element inside the one above


def test_real_path_through_a_pcie_switch_keeps_both_switch_ports_and_the_domain():
    path = devpaths()["ppc64le-notes-switch-expander"]
    pci = [name for kind, name, _ in T.path_elements(path) if kind == "pci-function"]
    assert pci == ["0001:00:00.0", "0001:01:00.0", "0001:02:01.0", "0001:03:00.0"]
    assert T.path_elements(path)[0][:2] == ("pci-host-bridge", "pci0001:00")
    assert "enclosure_device" not in [n for _, n, _ in T.path_elements(path)]


def test_recorded_lab_guest_nvme_sata_and_virtio_scsi(lab_sys):  # noqa: F811
    nvme = T.walk("nvme0n1", lab_sys)
    assert [(e.kind, e.name) for e in nvme.elements] == [
        ("pci-host-bridge", "pci0000:00"), ("pci-function", "0000:00:04.0"), ("nvme-controller", "nvme0")]
    # the controller's PCIe parent is its slot; QEMU reports no trained link: no ceiling, never a guess
    assert nvme.slot.name == "0000:00:04.0" and nvme.slot.link.rate is None and nvme.slot.link.lanes is None
    assert A.ceiling_bytes(nvme.slot.link) is None
    sata = T.walk("sdb", lab_sys)
    assert [e.kind for e in sata.elements] == ["pci-host-bridge", "pci-function", "ata-port", "scsi-host"]
    assert sata.slot.name == "ata1" and sata.slot.link.kind == "sata" and sata.slot.link.rate == 1.5
    assert A.ceiling_bytes(sata.slot.link) == pytest.approx(150 * MB)  # 1.5 Gb/s, 8b/10b
    scsi = T.walk("sda", lab_sys)
    assert [e.name for e in scsi.elements][-2:] == ["virtio2", "host0"] and scsi.slot is None
    # what the three share: the host bridge only, which has no link of its own
    shared = A.shared_elements([nvme, sata, scsi])
    assert [(s.label, s.ceiling) for s in shared] == [("PCI host bridge pci0000:00", None)]
    for unit in (nvme, sata, scsi):
        assert UnitPath.from_dict(unit.to_dict()) == unit


def test_this_hosts_loop_device_has_no_path_and_says_so(host_sys):  # noqa: F811
    vda = T.walk("vda", host_sys)
    assert [e.kind for e in vda.elements] == ["pci-host-bridge", "pci-function", "virtio"] and vda.error is None
    assert vda.elements[1].link is None  # conventional PCI: no link attributes recorded
    loop = next(n for n in os.listdir(os.path.join(host_sys, "class", "block")) if n.startswith("loop"))
    assert "virtual device" in T.walk(loop, host_sys).error
    assert "not in sysfs" in T.walk("sdzz", host_sys).error


# --- SYNTHETIC trees: the kernel's layout along the real paths, the seeds' values ------------------------

def _write(root, rel, attrs):
    d = os.path.join(root, "devices", rel)
    os.makedirs(d, exist_ok=True)
    for k, v in attrs.items():
        with open(os.path.join(d, k), "w") as fh:
            fh.write(v + "\n")
    return d


def _block(root, name, rel):
    d = _write(root, f"{rel}/block/{name}", {"dev": "8:0"})
    cls = os.path.join(root, "class", "block")
    os.makedirs(cls, exist_ok=True)
    os.symlink(os.path.relpath(d, cls), os.path.join(cls, name))


def _pci(speed, width, bridge=False):
    return {"class": "0x060400" if bridge else "0x010802", "current_link_speed": speed,
            "current_link_width": str(width), "max_link_speed": speed, "max_link_width": str(width)}


def _sas_port(root, parent, port, phys, rate):
    """SYNTHETIC: a SAS port under ``parent`` holding ``phys`` (each a directory beside the port with
    sas_phy/<phy>/negotiated_linkrate), linked from the port as the kernel links them."""
    port_dir = _write(root, f"{parent}/{port}", {})
    for phy in phys:
        _write(root, f"{parent}/{phy}/sas_phy/{phy}", {"negotiated_linkrate": rate,
                                                        "maximum_linkrate_hw": "6.0 Gbit"})
        os.symlink(f"../{phy}", os.path.join(port_dir, phy))
    return f"{parent}/{port}"


def seed000_tree(root):
    """SYNTHETIC, seed 000: four NVMe drives each in its own slot (made-up root ports), nvme0 in the PCIe
    1.0 slot (2.5 GT/s x4), the others in PCIe 2.0 slots (5 GT/s x4)."""
    for i, (port, speed) in enumerate([("0000:00:02.0", "2.5 GT/s PCIe"), ("0000:00:03.0", "5.0 GT/s PCIe"),
                                       ("0000:00:03.2", "5.0 GT/s PCIe"), ("0000:00:1c.0", "5.0 GT/s PCIe")]):
        _write(str(root), f"pci0000:00/{port}", _pci(speed, 4, bridge=True))
        ep = f"pci0000:00/{port}/0000:0{i + 1}:00.0"
        _write(str(root), ep, _pci(speed, 4))
        _block(str(root), f"nvme{i}n1", f"{ep}/nvme/nvme{i}")
    return str(root)


def seed003_tree(root, rate):
    """SYNTHETIC, seed 003: the LSI SAS2008 at 03:00.0 (5 GT/s x8) behind a made-up root port, its 4-phy wide
    port to the JBOD's expander at ``rate``, 14 disks (sdb ... sdo) on the expander's narrow ports."""
    root = str(root)
    _write(root, "pci0000:00/0000:00:03.0", _pci("5.0 GT/s PCIe", 8, bridge=True))
    hba = "pci0000:00/0000:00:03.0/0000:03:00.0"
    _write(root, hba, {**_pci("5.0 GT/s PCIe", 8), "class": "0x010700"})
    wide = _sas_port(root, f"{hba}/host0", "port-0:0", [f"phy-0:{i}" for i in range(4)], rate)
    exp = f"{wide}/expander-0:0"
    for i, name in enumerate("bcdefghijklmno"):
        port = _sas_port(root, exp, f"port-0:0:{i}", [f"phy-0:0:{i}"], "6.0 Gbit")
        _block(root, f"sd{name}", f"{port}/end_device-0:0:{i}/target0:0:{i}/0:0:{i}:0")
    return root


def test_ceilings_follow_generation_width_encoding_and_lanes():
    assert A.ceiling_bytes(Link("pcie", 5.0, 8)) == pytest.approx(4.0e9)  # seed 003: PCIe 2.0 x8 = 4 GB/s
    assert A.ceiling_bytes(Link("pcie", 2.5, 4)) == pytest.approx(1.0e9)
    assert A.ceiling_bytes(Link("pcie", 8.0, 4)) == pytest.approx(8e9 * 4 * 128 / 130 / 8)
    assert A.ceiling_bytes(Link("sas", 6.0, 4, rates=[6.0] * 4)) == pytest.approx(2.4e9)  # 4 x 6 Gb/s
    assert A.ceiling_bytes(Link("sas", 3.0, 4, rates=[3.0] * 4)) == pytest.approx(1.2e9)
    assert A.ceiling_bytes(Link("sas", 12.0, 1, rates=[12.0])) == pytest.approx(1.2e9)
    # a wide port whose phys negotiated different rates carries their sum; an unknown rate no ceiling
    assert A.ceiling_bytes(Link("sas", 3.0, 2, rates=[6.0, 3.0])) == pytest.approx(0.9e9)
    assert A.ceiling_bytes(Link("pcie", None, 4)) is None and A.ceiling_bytes(Link("pcie", 5.0, None)) is None
    # each step up in generation or width raises the ceiling
    ladder = [A.ceiling_bytes(Link("pcie", r, w)) for r, w in ((2.5, 4), (5.0, 4), (8.0, 4), (16.0, 4), (16.0, 8))]
    assert ladder == sorted(ladder) and len(set(ladder)) == len(ladder)


def test_seed000_the_slow_slot_is_named_with_its_link_and_the_shelf_scaled(tmp_path):
    root = seed000_tree(tmp_path)
    paths = [T.walk(f"nvme{i}n1", root) for i in range(4)]
    assert paths[0].slot.name == "0000:01:00.0" and paths[0].slot.link.rate == 2.5
    assert [e.kind for e in paths[0].elements][:2] == ["pci-host-bridge", "pci-bridge"]
    figures = [A.UnitFigures(f"/dev/nvme{i}n1", mb * MB, model="Samsung NVMe") for i, mb in
               enumerate([832, 1652, 1648, 1657])]
    result = A.analyse(figures, paths, together=5645 * MB)
    assert result.kinds() == [A.SCALED, A.SLOW_LINK]
    slow = result.findings[1]
    assert slow.units == ["/dev/nvme0n1"] and slow.figures["slot"] == "0000:01:00.0"
    assert slow.figures["link"] == "PCIe 2.5 GT/s x4" and slow.figures["siblings_link"] == "PCIe 5 GT/s x4"
    assert slow.figures["link_ceiling"] == pytest.approx(1.0e9)
    assert slow.figures["ratio"] == pytest.approx(832 / 1652)
    text = shelf_words.finding_words(slow)
    assert "0000:01:00.0" in text and "2.5 GT/s x4" in text and "5 GT/s x4" in text
    # the siblings are not named slow, and the host bridge they share has no ceiling to blame
    assert all(f.units == ["/dev/nvme0n1"] for f in result.findings if f.kind in (A.SLOW_LINK, A.SLOW_UNIT))


def test_seed000_same_link_slow_unit_is_the_unit_itself(tmp_path):
    root = seed000_tree(tmp_path)
    paths = [T.walk(f"nvme{i}n1", root) for i in range(1, 4)]  # the three in PCIe 2.0 slots
    figures = [A.UnitFigures(f"/dev/nvme{i}n1", mb * MB, model="m") for i, mb in zip(range(1, 4), [800, 1648, 1657])]
    (slow,) = A.analyse(figures, paths).findings
    assert slow.kind == A.SLOW_UNIT and slow.units == ["/dev/nvme1n1"] and "same link" in shelf_words.finding_words(slow)


def _jbod(tmp_path, rate):
    root = seed003_tree(tmp_path, rate)
    names = [f"sd{c}" for c in "bcdefghijklmno"]
    paths = [T.walk(n, root) for n in names]
    # assumed, not in the seed: 160 MB/s per disk alone
    figures = [A.UnitFigures(f"/dev/{n}", 160 * MB, model="disk") for n in names]
    return paths, figures


def test_seed003_iom3_the_wide_port_caps_the_shelf(tmp_path):
    paths, figures = _jbod(tmp_path, "3.0 Gbit")
    assert paths[0].slot.name == "port-0:0:0" and paths[0].slot.link.lanes == 1
    shared = {s.label: s for s in A.shared_elements(paths)}
    assert shared["PCI function 0000:03:00.0"].ceiling == pytest.approx(4.0e9)
    assert shared["PCIe port 0000:00:03.0"].ceiling == pytest.approx(4.0e9)
    port = shared["SAS port port-0:0"]
    assert port.ceiling == pytest.approx(1.2e9) and port.link == "SAS 3 Gb/s x4" and len(port.units) == 14
    assert "SAS expander expander-0:0" in shared and shared["SAS expander expander-0:0"].ceiling is None
    result = A.analyse(figures, paths, together=1036.4 * MB)
    (capped,) = result.findings
    assert capped.kind == A.CAPPED and capped.element.label == "SAS port port-0:0"
    assert capped.figures["ceiling"] == pytest.approx(1.2e9) and capped.figures["of_ceiling"] > 0.85
    text = shelf_words.finding_words(capped)
    assert "SAS port port-0:0" in text and "1.20 GB/s" in text and "2.24 GB/s summed" in text


def test_seed003_iom6_short_of_every_ceiling_is_not_blamed_on_the_port(tmp_path):
    # the seed's IOM6 run: 1548.3 MB/s against a 2.4 GB/s wide port; the author found the cable (14 Gb/s)
    paths, figures = _jbod(tmp_path, "6.0 Gbit")
    result = A.analyse(figures, paths, together=1548.3 * MB)
    (short,) = result.findings
    assert short.kind == A.SHORT
    assert short.element.label == "SAS port port-0:0" and short.figures["nearest_ceiling"] == pytest.approx(2.4e9)
    assert short.figures["of_ceiling"] < 0.85
    assert "not on the path as read" in shelf_words.finding_words(short)


def test_a_slower_phy_in_the_wide_port_lowers_its_ceiling(tmp_path):
    root = seed003_tree(tmp_path, "6.0 Gbit")
    phy = os.path.join(root, "devices", "pci0000:00/0000:00:03.0/0000:03:00.0/host0/phy-0:3/sas_phy/phy-0:3")
    with open(os.path.join(phy, "negotiated_linkrate"), "w") as fh:
        fh.write("3.0 Gbit\n")  # one lane of the cable trained at 3 Gb/s
    port = next(e for e in T.walk("sdb", root).elements if e.name == "port-0:0")
    assert port.link.rates == [6.0, 6.0, 6.0, 3.0] and port.link.rate == 3.0 and port.link.lanes == 4
    assert A.ceiling_bytes(port.link) == pytest.approx(2.1e9)
    assert "phy-0:3 negotiated_linkrate='3.0 Gbit'" in port.link.evidence


def test_together_at_the_sum_scales_and_two_units_are_too_few_for_siblings(tmp_path):
    paths, figures = _jbod(tmp_path, "6.0 Gbit")
    result = A.analyse(figures[:2], paths[:2], together=315 * MB)
    assert result.kinds() == [A.SCALED]
    assert A.slow_units([A.UnitFigures("/dev/sdb", 10 * MB, model="disk"),
                         A.UnitFigures("/dev/sdc", 160 * MB, model="disk")], {}) == []


def test_different_models_are_not_siblings(tmp_path):
    figures = [A.UnitFigures("/dev/a", 100 * MB, model="x"), A.UnitFigures("/dev/b", 900 * MB, model="y"),
               A.UnitFigures("/dev/c", 1000 * MB, model="y"), A.UnitFigures("/dev/d", 950 * MB, model="y")]
    assert A.slow_units(figures, {}) == []


def two_hba_tree(root, behind=3):
    """SYNTHETIC, the lab's shelf (tests/test_lab_shelf.py) as its guest's sysfs lays it out: ``behind`` SCSI
    disks on one virtio-scsi HBA (0000:00:05.0, conventional PCI: no link, so no ceiling) and one on another
    (0000:00:06.0)."""
    root = str(root)
    for fn, host, virtio in (("0000:00:05.0", "host2", "virtio3"), ("0000:00:06.0", "host3", "virtio4")):
        _write(root, f"pci0000:00/{fn}", {"class": "0x010000"})
        _write(root, f"pci0000:00/{fn}/{virtio}/{host}", {})
    for i in range(behind):
        _block(root, f"sd{'bcd'[i]}", f"pci0000:00/0000:00:05.0/virtio3/host2/target2:0:{i}/2:0:{i}:0")
    _block(root, "sde", "pci0000:00/0000:00:06.0/virtio4/host3/target3:0:0/3:0:0:0")
    return root


def _held_figures(together_inside, together_outside=95):
    """Three identical units behind one HBA (two fast, one in a slower slot) and a fourth outside it, MB/s."""
    alone = {"sdb": 3.1, "sdc": 3.1, "sdd": 0.78, "sde": 96}
    together = dict(zip(("sdb", "sdc", "sdd"), together_inside), sde=together_outside)
    return [A.UnitFigures(f"/dev/{n}", alone[n] * MB, together[n] * MB, model="LAB SAS SSD") for n in alone]


def test_units_behind_one_hba_held_while_the_unit_outside_kept_its_speed(tmp_path):
    root = two_hba_tree(tmp_path)
    paths = [T.walk(n, root) for n in ("sdb", "sdc", "sdd", "sde")]
    result = A.analyse(_held_figures((1.3, 1.3, 0.45)), paths)
    # all four at once kept 95 % of their sum (the fast unit outside dominates it) ...
    assert result.kinds() == [A.SCALED, A.HELD, A.SLOW_UNIT], result.to_dict()
    held = result.findings[1]
    # ... but the three behind host2 lost more than half, the deepest element only they share, and its HBA named
    assert held.units == ["/dev/sdb", "/dev/sdc", "/dev/sdd"] and held.element.label == "SCSI host host2"
    assert held.figures["pci_function"] == "PCI function 0000:00:05.0"
    assert held.figures["ratio"] == pytest.approx(3.05 / 6.98) and held.figures["outside_ratio"] > 0.85
    text = shelf_words.finding_words(held)
    assert "3 units behind SCSI host host2 (PCI function 0000:00:05.0)" in text and "its path gives no ceiling for it: --path-ceiling declares one" in text
    assert result.findings[2].units == ["/dev/sdd"]  # the slow slot: 25 % of its siblings' median


def test_a_group_that_kept_its_speed_or_an_outside_that_lost_as_much_is_not_held(tmp_path):
    root = two_hba_tree(tmp_path)
    paths = [T.walk(n, root) for n in ("sdb", "sdc", "sdd", "sde")]
    scaled = A.analyse(_held_figures((3.0, 3.0, 0.77)), paths)
    assert A.HELD not in scaled.kinds()
    # the unit outside lost as much as those behind the HBA: the host, not the HBA, is the common factor
    everyone = A.analyse(_held_figures((1.3, 1.3, 0.45), together_outside=40), paths)
    assert A.HELD not in everyone.kinds() and everyone.kinds()[0] == A.SHORT
    # the outside lost some too (a busy host), the three behind the HBA far more: still held, said with both
    noisy = A.analyse(_held_figures((1.3, 1.3, 0.45), together_outside=72), paths)
    (held,) = [f for f in noisy.findings if f.kind == A.HELD]
    assert "while the 1 outside it kept 75%" in shelf_words.finding_words(held)
    # the words of the whole shelf, a whole shelf on one HBA: never a group finding (that is the overall one)
    one_hba = two_hba_tree(tmp_path / "one", behind=3)
    three = [T.walk(n, one_hba) for n in ("sdb", "sdc", "sdd")]
    only = A.analyse(_held_figures((1.3, 1.3, 0.45))[:3], three)
    assert A.HELD not in only.kinds()


def test_a_group_behind_a_port_whose_ceiling_it_reached_is_capped(tmp_path):
    # seed 003's JBOD on its 3 Gb/s wide port, and a fourteenth... a disk on another HBA beside it
    root = seed003_tree(tmp_path, "3.0 Gbit")
    _write(root, "pci0000:00/0000:00:04.0", {**_pci("8.0 GT/s PCIe", 8), "class": "0x010700"})
    _block(root, "sdp", "pci0000:00/0000:00:04.0/host1/target1:0:0/1:0:0:0")
    names = [f"sd{c}" for c in "bcdefghijklmnop"]
    paths = [T.walk(n, root) for n in names]
    figures = [A.UnitFigures(f"/dev/{n}", 160 * MB, (1036.4 / 14 if n != "sdp" else 158) * MB, model="disk")
               for n in names]
    result = A.analyse(figures, paths)
    capped = [f for f in result.findings if f.kind == A.CAPPED]
    assert len(capped) == 1 and capped[0].element.label == "SAS port port-0:0" and len(capped[0].units) == 14
    assert capped[0].figures["of_ceiling"] == pytest.approx(1036.4e6 / 1.2e9)
    assert capped[0].figures["outside_ratio"] == pytest.approx(158 / 160)
