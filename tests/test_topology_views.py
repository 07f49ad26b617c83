"""Which units share what on their paths from the host, beside the results (issue #30): the HTML and
Markdown reports and the fleet view.

The documents are recorded ones; the paths are walked by slogqual.device.topology on sysfs trees:
- the lab guest's recorded sysfs (tests/fixtures/sysfs/lab-qemu-guest.tar.gz) for the recorded lab sweeps of
  that guest's devices (tests/fixtures/advisor/lab-sweep-4k-{hdd,nvme,sas-ssd}.json: /dev/sdb, /dev/nvme0n1,
  /dev/sda, host slogqual-lab). The sweeps predate the device record's ``topology``; each gets the path the
  recorded tree gives its device name (what identify() now records, tests/test_linux_identify.py);
- the SYNTHETIC seed-003 JBOD tree of tests/test_shelf.py (an HBA at 5 GT/s x8, a 4-phy 3 Gb/s wide port, an
  expander, 14 disks) where a ceiling is needed: no real tree with SAS link attributes was found
  (tests/fixtures/topology/SOURCES.md).
"""

import copy
import json

import pytest

from conftest import fixture_path, load, slogqual
from slogqual.analysis import shelf as A
from slogqual.device import topology as T
from slogqual.report import document, wording
from slogqual.results import SweepResult
from slogqual.sweep.shelf_probe import ProbeSize, ShelfProbe

from test_device_identity import lab_sys  # noqa: F401 (the recorded tree, unpacked once)
from test_shelf import seed003_tree

LAB = {"sdb": "lab-sweep-4k-hdd.json", "nvme0n1": "lab-sweep-4k-nvme.json", "sda": "lab-sweep-4k-sas-ssd.json"}
MB = 1e6


def lab_results(root, tmp_path):
    """The three recorded lab sweeps, each with its device's path from the recorded tree, as files."""
    out = []
    for name, fixture in LAB.items():
        doc = load(fixture_path("advisor", fixture))
        assert doc["target"]["path"] == f"/dev/{name}" and doc["environment"]["host"] == "slogqual-lab"
        path = T.walk(name, root)
        path.device = f"/dev/{name}"
        doc["device"]["topology"] = path.to_dict()
        f = tmp_path / f"{name}.json"
        f.write_text(json.dumps(doc))
        out.append(f)
    return out


def jbod_result(base, root, disk, host, serial):
    """A recorded lab sweep re-labelled as a disk of the SYNTHETIC JBOD: its path, host and serial."""
    doc = copy.deepcopy(base)
    path = T.walk(disk, root)
    path.device = f"/dev/{disk}"
    doc["device"].update(topology=path.to_dict(), serial=serial, model="JBOD DISK", firmware="A1")
    doc["target"]["path"] = f"/dev/{disk}"
    doc["environment"]["host"] = host
    return doc


# --- the report ----------------------------------------------------------------------------------------

def test_the_report_names_what_the_lab_guests_units_share_and_each_units_path(lab_sys, tmp_path):  # noqa: F811
    results = lab_results(lab_sys, tmp_path)
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    for out in (html, md):
        p = slogqual("report", *results, "-o", out, "--no-bands")
        assert p.returncode == 0, p.stderr
    page, text = html.read_text(), md.read_text()
    # the one element all three share: the host bridge, which has no link of its own to give a ceiling
    row = ("<tr><td>PCI host bridge pci0000:00</td><td>–</td><td>none read (no link of its own)</td>"
           "<td>/dev/sdb, /dev/nvme0n1, /dev/sda</td></tr>")
    assert 'id="shared-paths"' in page and row in page
    assert "| PCI host bridge pci0000:00 | – | none read (no link of its own) | /dev/sdb, /dev/nvme0n1, /dev/sda |" \
        in text
    assert "## Shared paths" in text and wording.SHARED_LEAD in text
    # each device's own path, with the link sysfs shows (the SATA disk's 1.5 Gb/s port and its ceiling)
    assert "ATA port ata1 (SATA 1.5 Gb/s x1, 150 MB/s)" in page
    assert "NVMe controller nvme0" in page and "virtio device virtio2" in page


def test_units_of_one_jbod_share_its_wide_port_and_its_ceiling_appears(tmp_path):
    root = seed003_tree(tmp_path / "sys", "3.0 Gbit")
    base = load(fixture_path("advisor", "lab-sweep-4k-sas-ssd.json"))
    docs = [jbod_result(base, root, d, "jbod1", f"S{i}") for i, d in enumerate(("sdb", "sdc", "sdd"))]
    docs.append(jbod_result(base, root, "sde", "jbod2", "S9"))  # the same sysfs path on another machine
    shared = document.shared_paths([SweepResult.from_dict(d, "x") for d in docs])
    rows = {r[1]: r for r in shared.rows}
    assert shared.headers == ["host", "element", "link", "ceiling", "units behind it"]
    assert rows["SAS port port-0:0"] == ["jbod1", "SAS port port-0:0", "SAS 3 Gb/s x4", "1.20 GB/s",
                                         "/dev/sdb, /dev/sdc, /dev/sdd"]
    assert rows["PCI function 0000:03:00.0"][2:] == ["PCIe 5 GT/s x8", "4.00 GB/s", "/dev/sdb, /dev/sdc, /dev/sdd"]
    assert all("/dev/sde" not in r[4] for r in shared.rows)  # a unit alone on its host shares nothing
    assert ("SAS port port-0:0 on jbod1 (SAS 3 Gb/s x4) carries 3 units, /dev/sdb, /dev/sdc, /dev/sdd: together "
            "they get no more than its ceiling of 1.20 GB/s") in shared.sentences


def test_a_shelf_document_in_the_report_shows_what_capped_the_units_together(tmp_path):
    root = seed003_tree(tmp_path / "sys", "3.0 Gbit")
    names = [f"sd{c}" for c in "bcdefghijklmno"]
    paths = [T.walk(n, root) for n in names]
    # the seed's IOM3 aggregate (1036.4 MB/s), 160 MB/s per disk alone (assumed, as tests/test_shelf.py says)
    figures = [A.UnitFigures(f"/dev/{n}", 160 * MB, together=1036.4 * MB / 14, model="disk") for n in names]
    probe = ShelfProbe([f"/dev/{n}" for n in names], paths, 1.0, started="2026-11-26T10:00:00+00:00")
    probe.sizes.append(ProbeSize(1 << 20, {f.device: f.alone for f in figures},
                                 {f.device: f.together for f in figures}, A.analyse(figures, paths)))
    doc = tmp_path / "shelf.json"
    doc.write_text(json.dumps(probe.to_dict()))
    sweep = fixture_path("advisor", "lab-sweep-4k-sas-ssd.json")
    for out in (tmp_path / "r.html", tmp_path / "r.md"):
        p = slogqual("report", sweep, doc, "-o", out, "--no-bands")
        assert p.returncode == 0, p.stderr
        text = out.read_text()
        assert "Together vs alone: /dev/sdb, /dev/sdc" in text
        assert "SAS port port-0:0" in text and "1.20 GB/s" in text and "/dev/sdo" in text
        assert "1M: 14 units alone 2.24 GB/s summed, together 1.04 GB/s: they share SAS port port-0:0" in text
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(dict(probe.to_dict(), sizes=[{"size": 4096, "analysis": {"alone_sum": "fast"}}])))
    p = slogqual("report", bad, "-o", tmp_path / "x.html")
    assert p.returncode == 2 and "sizes[0].analysis.alone_sum" in p.stderr and "must be a number" in p.stderr


# --- the fleet view ------------------------------------------------------------------------------------

@pytest.fixture
def jbod_store(tmp_path):
    root = seed003_tree(tmp_path / "sys", "3.0 Gbit")
    base = load(fixture_path("advisor", "lab-sweep-4k-sas-ssd.json"))
    files = []
    for i, (disk, host) in enumerate((("sdb", "jbod1"), ("sdc", "jbod1"), ("sdd", "jbod1"), ("sde", "jbod2"))):
        f = tmp_path / f"{disk}.json"
        f.write_text(json.dumps(jbod_result(base, root, disk, host, f"S{i}")))
        files.append(f)
    files.append(tmp_path / "old.json")  # a unit recorded before the record had a path: none shown, no error
    old = copy.deepcopy(base)
    old["device"].update(serial="S8", model="JBOD DISK")
    old["environment"]["host"] = "jbod1"
    files[-1].write_text(json.dumps(old))
    store = tmp_path / "s.sqlite"
    p = slogqual("import", "json", *files, "--store", store)
    assert p.returncode == 0, p.stderr
    return store


def test_the_fleet_view_shows_which_units_of_a_host_share_what(jbod_store, tmp_path):
    p = slogqual("fleet", "--store", jbod_store, "--json")
    assert p.returncode == 0, p.stderr
    shared = {s["element"]: s for s in json.loads(p.stdout)["shared_paths"]}
    port = shared["SAS port port-0:0"]
    assert port["host"] == "jbod1" and port["link"] == "SAS 3 Gb/s x4"
    assert port["ceiling_bytes_s"] == pytest.approx(1.2e9)
    assert port["units"] == ["JBOD DISK S0", "JBOD DISK S1", "JBOD DISK S2"]  # not S8 (no path), not S9 (jbod2)
    assert shared["SAS expander expander-0:0"]["ceiling_bytes_s"] is None
    text = slogqual("fleet", "--store", jbod_store).stdout
    assert "== shared paths" in text
    line = next(x for x in text.splitlines() if "SAS port port-0:0" in x)
    assert "jbod1" in line and "1.20 GB/s" in line and "JBOD DISK S0, JBOD DISK S1, JBOD DISK S2" in line
    p = slogqual("fleet", "--store", jbod_store, "--html", tmp_path / "f.html")
    assert p.returncode == 0, p.stderr
    page = (tmp_path / "f.html").read_text()
    assert 'id="shared-paths"' in page
    assert ("SAS port port-0:0 on jbod1 (SAS 3 Gb/s x4) carries 3 units, JBOD DISK S0, JBOD DISK S1, JBOD DISK S2: "
            "together they get no more than its ceiling of 1.20 GB/s") in page
