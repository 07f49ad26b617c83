"""Plots: the generated gnuplot script (axes, ticks, series), and real gnuplot runs (PNG and SVG)."""

import os
import re
import struct
import xml.etree.ElementTree as ET
import zlib

import pytest

from conftest import fixture_path, need, slogqual
from slogqual.errors import MissingDependencyError, UsageError
from slogqual.importers import diskinfo
from slogqual.report import plot
from slogqual.tools import gnuplot

FIXTURE = fixture_path("diskinfo", "freebsd-r320683-intel710-samsung950pro.collapsed.txt")
TICKS = ["512", "1K", "2K", "4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M", "2M", "4M", "8M"]


def two_devices():
    return diskinfo.import_file(FIXTURE, labels=["Intel 710", "Samsung 950 PRO"])


def many_devices(n):
    out = []
    for i in range(n):
        r = diskinfo.import_file(FIXTURE)[i % 2]
        r.target["label"] = f"device {i:02d}"
        for p in r.points:  # spread the curves so each one is its own line
            p.lat_us.mean *= 1 + i * 0.15
            p.iops /= 1 + i * 0.15
        out.append(r)
    return out


# --- PNG decoding with the standard library only -------------------------------------------------

def decode_png(data):
    """(width, height, rows of RGB(A) bytes) of an 8-bit truecolour PNG; raises on any corruption."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        ctype = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(ctype + body) & 0xFFFFFFFF == crc, f"bad CRC in {ctype!r}"
        if ctype == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif ctype == b"IDAT":
            idat += body
        elif ctype == b"IEND":
            break
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = ihdr
    assert depth == 8 and colour in (2, 6) and interlace == 0, ihdr
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    assert len(raw) == height * (stride + 1), "image data does not match the header size"
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 0xFF
            elif f == 2:
                line[x] = (line[x] + b) & 0xFF
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
            else:
                assert f == 0, f"bad filter {f}"
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def colour_pixels(rows, bpp, hex_colour):
    target = bytes.fromhex(hex_colour.lstrip("#"))
    return sum(1 for row in rows for x in range(0, len(row), bpp) if row[x:x + 3] == target)


# --- the script ----------------------------------------------------------------------------------

def test_script_is_log_log_with_power_of_two_size_ticks():
    spec = plot.build_spec(two_devices(), "latency")
    text = plot.script(spec, "/tmp/x.png", "png")
    assert "set logscale xy 10" in text
    xt = re.search(r"^set xtics \((.*)\) nomirror$", text, re.M).group(1)
    pairs = re.findall(r'"([^"]+)" (\d+)', xt)
    assert [label for label, _ in pairs] == TICKS
    assert [int(v) for _, v in pairs] == [512 << i for i in range(15)]
    assert 'set ylabel "mean latency per synchronous write"' in text
    assert re.search(r'set ytics \(.*"100 µs" 100, "1 ms" 1000, "10 ms" 10000', text)
    assert "set key outside right" in text


def test_one_series_per_input_titled_by_model_or_label():
    results = two_devices()
    text = plot.script(plot.build_spec(results, "iops"), "/tmp/x.svg", "svg")
    blocks = re.findall(r"^\$d(\d+) << EOD\n(.*?)^EOD$", text, re.M | re.S)
    assert [int(n) for n, _ in blocks] == [0, 1]
    for (_, body), r in zip(blocks, results):
        rows = [line.split() for line in body.strip().splitlines()]
        assert [int(s) for s, _ in rows] == [p.size for p in r.points]
        assert [float(v) for _, v in rows] == pytest.approx([p.iops for p in r.points], rel=1e-5)
    plot_cmd = text[text.index("\nplot "):]
    assert re.findall(r'title "([^"]+)"', plot_cmd) == ["Intel 710", "Samsung 950 PRO"]
    assert plot_cmd.count("using 1:2") == 2


def test_key_prefers_model_then_label_then_path_and_separates_duplicates():
    a, b = diskinfo.import_file(FIXTURE)
    a.device = {"model": "INTEL SSDSA2BZ100G3"}
    assert plot.series_label(a) == "INTEL SSDSA2BZ100G3"
    b.target["label"] = "my label"
    assert plot.series_label(b) == "my label"
    del b.target["label"]
    assert plot.series_label(b).endswith("collapsed.txt#2")
    b.device = {"model": "INTEL SSDSA2BZ100G3"}
    titles = [s.label for s in plot.build_spec([a, b], "latency").series]
    assert len(set(titles)) == 2 and all(t.startswith("INTEL SSDSA2BZ100G3 (") for t in titles)


def test_many_devices_cycle_colour_then_dash():
    spec = plot.build_spec(many_devices(12), "latency")
    text = plot.script(spec, "/tmp/x.png", "png")
    styles = re.findall(r'lc rgb "(#[0-9a-f]{6})" dt (\S+) pt (\d+)', text)
    assert len(styles) == 12
    assert len({(c, d) for c, d, _ in styles}) == 12  # no two series look alike
    assert styles[8][0] == styles[0][0] and styles[8][1] != styles[0][1]  # colour repeats, dash differs
    assert styles[8][2] != styles[0][2]  # and so does the point shape


def test_bands_only_where_they_mean_something():
    results = two_devices()
    lat = plot.script(plot.build_spec(results, "latency", bands=True), "/tmp/x.png", "png")
    assert lat.count("set object") == 5 and '"SATA flash (500 µs–2 ms)"' in lat
    assert "first 500 to graph 1, first 2000" in lat
    iops = plot.script(plot.build_spec(results, "iops", bands=True), "/tmp/x.png", "png")
    assert "first 500 to graph 1, first 2000" in iops  # 0.5-2 ms is 500-2000 ops/s
    assert "first 25000 to graph 1, first 100000" in iops  # 10-40 us
    mbps = plot.script(plot.build_spec(results, "mbps", bands=True), "/tmp/x.png", "png")
    assert "set object" not in mbps


def test_p99_needs_percentiles():
    with pytest.raises(UsageError, match="none of the results has p99 values"):
        plot.build_spec(two_devices(), "p99")
    with pytest.raises(UsageError, match="unknown metric"):
        plot.build_spec(two_devices(), "bogus")
    with pytest.raises(UsageError, match=r"end it in \.png or \.svg"):
        plot.output_format("chart.jpg")


def test_titles_are_quoted_for_gnuplot():
    results = two_devices()
    results[0].target["label"] = 'odd "name" \\ here'
    text = plot.script(plot.build_spec(results, "latency"), "/tmp/x.png", "png")
    assert 'title "odd \\"name\\" \\\\ here"' in text


# --- real gnuplot --------------------------------------------------------------------------------

@need("gnuplot")
def test_png_decodes_with_the_requested_size_and_shows_each_series(tmp_path):
    out = str(tmp_path / "lat.png")
    spec = plot.build_spec(two_devices(), "latency", bands=True)
    plot.render(spec, out, size=(800, 500))
    with open(out, "rb") as fh:
        width, height, bpp, rows = decode_png(fh.read())
    assert (width, height) == (800, 500)
    first, second = plot.style(0)[0], plot.style(1)[0]
    assert colour_pixels(rows, bpp, first) > 200 and colour_pixels(rows, bpp, second) > 200


@need("gnuplot")
def test_svg_has_the_series_and_tick_labels(tmp_path):
    out = str(tmp_path / "iops.svg")
    plot.render(plot.build_spec(two_devices(), "iops"), out)
    root = ET.parse(out).getroot()
    assert root.tag.endswith("svg") and root.get("width") == "1000" and root.get("height") == "600"
    texts = "".join(root.itertext())
    for word in ("Intel 710", "Samsung 950 PRO", "512", "8M", "128K", "10k"):
        assert word in texts
    assert len(root.findall(".//{http://www.w3.org/2000/svg}path")) > 20


@need("gnuplot")
def test_gnuplot_errors_become_one_typed_error(tmp_path):
    out = str(tmp_path / "bad.png")
    with pytest.raises(gnuplot.GnuplotError, match="gnuplot"):
        gnuplot.run_script(f'set terminal pngcairo\nset output "{out}"\nplot $nosuchblock using 1:2\n', out)
    with pytest.raises(gnuplot.GnuplotError, match="no directory"):
        gnuplot.run_script("", str(tmp_path / "missing" / "x.png"))


def test_missing_gnuplot_is_a_missing_dependency(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert not gnuplot.available()
    with pytest.raises(MissingDependencyError, match="gnuplot-nox"):
        plot.render(plot.build_spec(two_devices(), "latency"), str(tmp_path / "x.png"))


@need("gnuplot")
def test_version_is_read():
    v = gnuplot.version()
    assert v.version >= (5, 0) and v.text.startswith("gnuplot") and str(v).startswith("5.")


@need("gnuplot")
def test_cli_plot(tmp_path):
    di = slogqual("import", "diskinfo", FIXTURE, "-o", tmp_path / "di.json")
    assert di.returncode == 0, di.stderr
    out = tmp_path / "mbps.png"
    proc = slogqual("plot", tmp_path / "di-1.json", tmp_path / "di-2.json", "-o", out, "--metric", "mbps",
                    "--size", "640x400", "--script", tmp_path / "mbps.gp")
    assert proc.returncode == 0, proc.stderr
    with open(out, "rb") as fh:
        assert decode_png(fh.read())[:2] == (640, 400)
    assert "set logscale xy 10" in (tmp_path / "mbps.gp").read_text()
    proc = slogqual("plot", tmp_path / "di-1.json", "-o", tmp_path / "x.gif")
    assert proc.returncode == 2 and ".png or .svg" in proc.stderr
    proc = slogqual("plot", tmp_path / "nope.json", "-o", tmp_path / "x.png")
    assert proc.returncode == 2 and "no such file" in proc.stderr
    assert not os.path.exists(tmp_path / "x.png")
