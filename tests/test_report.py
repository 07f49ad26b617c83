"""report (HTML and Markdown) and export --csv, from real imports and a real sweep."""

import json
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import fixture_path, load, need, slogqual
from slogqual.device.record import LINK_DEGRADED, WC_ENABLED, DeviceRecord, Link, LinkEnd, WriteCache
from slogqual.importers import diskinfo
from slogqual.report import classes as class_words
from slogqual.report import document
from slogqual.report.export import COLUMNS, rows, to_csv
from slogqual.results import SweepResult, save_sweep

FIXTURE = fixture_path("diskinfo", "freebsd-r320683-intel710-samsung950pro.collapsed.txt")
SVG_NS = "{http://www.w3.org/2000/svg}"



def device_record():
    """A slogqual.device/1 record as slogqual inspect builds it (some fields unknown)."""
    rec = DeviceRecord(path="/dev/nvme0n1", model="INTEL SSDPE21D480GA", serial="PHM2913000QM480BGN",
                       firmware="E2010435", transport="nvme", device_class="optane")
    rec.write_cache = WriteCache(verdict=WC_ENABLED, reason="NVMe VWC bit 0 is set",
                                 evidence=["nvme id-ctrl: vwc 0x1"])
    rec.link = Link(kind="pcie", verdict=LINK_DEGRADED, current=LinkEnd("8.0 GT/s PCIe", 8.0, 2),
                    max=LinkEnd("8.0 GT/s PCIe", 8.0, 4))
    rec.mark_unknown("wwn", "nvme id-ns not readable")
    rec.mark_unknown("vendor", "nvme id-ns not readable")
    rec.mark_unknown("capacity", "no size from the kernel")
    return rec.to_dict()


@pytest.fixture
def results(tmp_path):
    """Two real diskinfo imports (one with a device record added) saved as result files."""
    intel, samsung = diskinfo.import_file(FIXTURE, labels=["Intel 710", "Samsung 950 PRO"])
    samsung.device = device_record()
    paths = [str(tmp_path / "intel.json"), str(tmp_path / "samsung.json")]
    save_sweep(paths[0], intel)
    save_sweep(paths[1], samsung)
    return paths


@pytest.fixture(scope="module")
def real_sweep(tmp_path_factory):
    """A real fio sweep on a scratch file: percentiles, environment, parameters."""
    d = tmp_path_factory.mktemp("sweep")
    proc = slogqual("sweep", "--engine", "fio", "--sizes", "4k,64k,1m", "--runtime", "0.2", "--settle", "0",
                    "--quiet", "-o", d / "sweep.json", cwd=d, timeout=300)
    if proc.returncode != 0:
        pytest.fail(f"sweep failed: {proc.stderr}")
    return str(d / "sweep.json")


def svgs_of(html):
    return re.findall(r"<svg\b.*?</svg>", html, re.S)


def test_verdicts_of_a_device_record():
    good = DeviceRecord(path="/dev/sda")
    good.write_cache = WriteCache(verdict="no-volatile-cache", kernel="write through")
    good.link = Link(verdict="ok")
    r = diskinfo.import_file(FIXTURE)[0]
    r.device = good.to_dict()
    v = {x.label: x for x in document.verdicts(r)}
    assert v["Write cache"].tone == "good" and ("kernel", "write through") in v["Write cache"].detail
    assert v["Link"].tone == "good" and "Controller link" not in v
    # the power-loss verdict with its basis and every piece of evidence by name: reported, not measured
    pl = v["Power loss"]
    assert pl.text.startswith("no volatile cache (reported by the device, not measured)") and pl.tone == "good"
    assert ("basis", "reported") in pl.detail and any(k == "write-cache verdict" or "cache" in k for k, _ in pl.detail)
    r.device = None
    assert [(x.label, x.tone) for x in document.verdicts(r)] == [("Write cache", "neutral"), ("Power loss", "neutral"),
                                                                 ("Link", "neutral")]


def test_verdict_tones():
    assert document.tone_of("volatile write cache present") == "bad"
    assert document.tone_of("non-volatile write cache (PLP)") == "good"
    assert document.tone_of("degraded: x2 of x4") == "bad"
    assert document.tone_of("full speed: 16GT/s x4 as capable") == "good"
    assert document.tone_of("write cache enabled") == "neutral"


@need("gnuplot")
def test_html_report_is_self_contained_with_inline_charts(results, tmp_path):
    out = tmp_path / "report.html"
    proc = slogqual("report", *results, "-o", out)
    assert proc.returncode == 0, proc.stderr
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>")
    # Nothing to fetch, nothing to run.
    assert "<script" not in html and "<link" not in html and "<img" not in html
    assert not re.search(r"""(src|href)=["'](https?:|//|file:)""", html)
    charts = svgs_of(html)
    assert len(charts) == 3  # latency, iops, mbps (diskinfo has no percentiles)
    for svg in charts:
        root = ET.fromstring(svg)
        assert len(root.findall(f".//{SVG_NS}path")) > 20
        assert "viewBox" in root.attrib and "width" not in root.attrib
    ids = re.findall(r"""\bid=["']([^"']+)["']""", html)
    assert len(ids) == len(set(ids)), "element ids must be unique across the inlined charts"
    for href in re.findall(r"""href=["']#([^"']+)["']""", html):
        assert href in ids


@need("gnuplot")
def test_html_report_shows_identity_verdicts_class_and_warnings(results, tmp_path):
    out = tmp_path / "report.html"
    assert slogqual("report", *results, "-o", out, "--title", "Lab 7 <acceptance>").returncode == 0
    html = out.read_text()
    assert "<title>Lab 7 &lt;acceptance&gt;</title>" in html
    for text in ("INTEL SSDPE21D480GA", "PHM2913000QM480BGN", "E2010435", "nvme"):
        assert f"<td>{text}</td>" in html
    assert re.search(r'class="verdict bad"><b>Write cache</b>VOLATILE WRITE CACHE ENABLED: safe as a SLOG only with power-loss protection '
                     r'or flushes that are honoured \(see Power loss\)<small>why: NVMe VWC bit 0 is set</small>'
                     r'<small>evidence: nvme id-ctrl: vwc 0x1</small>', html)
    assert re.search(r'class="verdict bad"><b>Link</b>LINK BELOW CAPABILITY: bandwidth is capped'
                     r'<small>current: 8.0 GT/s PCIe x2</small><small>capable: 8.0 GT/s PCIe x4</small>', html)
    assert "not determined (not known from diskinfo output)" in html  # the Intel run has no record
    assert "enterprise SAS SSD-class small-IO latency" in html
    assert "<li>VOLATILE WRITE CACHE ENABLED on /dev/nvme0n1" in html  # the record's loud warnings
    assert ("<th>Not determined</th><td>wwn, vendor (nvme id-ns not readable); capacity (no size from the "
            "kernel)</td>") in html
    assert "<th>engine</th><td>diskinfo -wS (slogbench)</td>" in html  # parameters
    assert "<th>system</th><td>FreeBSD</td>" in html  # environment
    assert "<td class=\"num\">~7,250</td>" in html  # derived IO counts are marked


@need("gnuplot", "fio")
def test_html_report_of_a_real_sweep_has_percentile_chart(real_sweep, tmp_path):
    out = tmp_path / "sweep.html"
    proc = slogqual("report", real_sweep, "-o", out)
    assert proc.returncode == 0, proc.stderr
    html = out.read_text()
    assert len(svgs_of(html)) == 4  # latency, p99, iops, mbps
    doc = load(real_sweep)
    assert f"<th>fio_version</th><td>{doc['environment']['fio_version']}</td>" in html
    assert "upper bounds" in html  # write+flush percentiles are bounds (docs/results.md)
    r = SweepResult.from_dict(doc)
    assert class_words.summary(document.classify(r)) in html.replace("&#x27;", "'")


@need("gnuplot")
def test_markdown_report_with_png_charts(results, tmp_path):
    out = tmp_path / "report.md"
    proc = slogqual("report", *results, "-o", out)
    assert proc.returncode == 0, proc.stderr
    md = out.read_text()
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert images == ["report-latency.png", "report-iops.png", "report-mbps.png"]
    for name in images:
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| device | source | sizes |" in md
    assert ("- **Write cache:** VOLATILE WRITE CACHE ENABLED: safe as a SLOG only with power-loss protection "
            "or flushes that are honoured (see Power loss) (**WARNING**) — why: NVMe VWC bit 0 is set; evidence: nvme id-ctrl: vwc 0x1") in md
    assert "| 512 | ~7,250 | 138.3 | – | – | – | – | 7,231 | 3.5 |" in md
    assert "## 2. INTEL SSDPE21D480GA" in md


def test_report_errors(results, tmp_path):
    proc = slogqual("report", *results, "-o", tmp_path / "nodir" / "r.html")
    assert proc.returncode == 2 and "no directory" in proc.stderr
    (tmp_path / "junk.json").write_text('{"schema": "other/1"}')
    proc = slogqual("report", tmp_path / "junk.json", "-o", tmp_path / "r.html")
    assert proc.returncode == 2
    assert ("not a slogqual.sweep/1, slogqual.powercut/1, slogqual.shelf/1, slogqual.scenario/1, slogqual.advice/1 "
            "or slogqual.qualification/1 document (schema: 'other/1')") in proc.stderr
    assert not (tmp_path / "r.html").exists()


def test_csv_export(results, tmp_path):
    proc = slogqual("export", "--csv", *results)
    assert proc.returncode == 0, proc.stderr
    table = rows(proc.stdout)
    assert list(table[0]) == COLUMNS
    assert len(table) == 30
    first = table[0]
    assert (first["result"], first["device"], first["size"], first["size_label"]) == ("intel.json", "Intel 710", "512", "512")
    assert float(first["lat_mean_us"]) == 138.3 and float(first["mbps"]) == 3.5 and first["lat_p99_us"] == ""
    assert table[15]["device"] == "INTEL SSDPE21D480GA" and table[29]["size_label"] == "8M"
    out = tmp_path / "points.csv"
    assert slogqual("export", "--csv", results[0], "-o", out).returncode == 0
    assert out.read_text() == to_csv([SweepResult.from_dict(load(results[0]))], ["intel.json"])
    proc = slogqual("export", results[0])
    assert proc.returncode == 2 and "--csv" in proc.stderr


@need("fio")
def test_csv_export_of_a_real_sweep_keeps_percentiles(real_sweep):
    proc = slogqual("export", "--csv", real_sweep)
    assert proc.returncode == 0, proc.stderr
    table = rows(proc.stdout)
    doc = load(real_sweep)
    assert [int(r["size"]) for r in table] == [p["size"] for p in doc["points"]]
    for r, p in zip(table, doc["points"]):
        assert float(r["lat_p99_us"]) == p["lat_us"]["p99"] and int(r["ios"]) == p["ios"]
    assert json.loads(json.dumps(table))


@need("gnuplot")
def test_report_of_a_sweep_that_failed_before_any_point(results, tmp_path):
    doc = load(results[0])
    doc.update(points=[], status="failed", error="fio: pwrite: Input/output error")
    failed = tmp_path / "failed.json"
    failed.write_text(json.dumps(doc))
    proc = slogqual("report", failed, "-o", tmp_path / "f.html")
    assert proc.returncode == 0, proc.stderr
    html = (tmp_path / "f.html").read_text()
    assert "No measured points to chart." in html and "<svg" not in html
    assert "status failed · error: fio: pwrite: Input/output error" in html
    proc = slogqual("report", failed, results[1], "-o", tmp_path / "g.html")  # the other still charted
    assert proc.returncode == 0 and len(svgs_of((tmp_path / "g.html").read_text())) == 3
