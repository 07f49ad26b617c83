"""The fleet view on a synthetic fleet derived from real recorded results, in both stores.

How the fleet is made (``make_fleet``): the two real `diskinfo -wS` sweeps of
tests/fixtures/diskinfo/freebsd-r320683-intel710-samsung950pro.collapsed.txt (an Intel 710 SATA SSD and a
Samsung 950 PRO NVMe, FreeBSD r320683) are imported with `slogqual import diskinfo`; each becomes a model
of 8 units on 4 hosts (lab1..lab4, two units each, slots 0000:01:00.0 and 0000:02:00.0). Every unit is
the real curve times a small deterministic per-unit and per-size factor (within ±2 %, as units of one
model differ). Then:

* one unit made slow: model A's unit A-01 (on lab1) at 2× the latency, half the bandwidth;
* one host made slow: every unit on lab4 (two of each model) at 2.5×;
* a firmware split: model B's units B-03, B-04, B-05 (on lab2 and lab3) run firmware 2B0QBXX6, 15 %
  slower; the other five run 2B0QBXX7.

Each unit also gets a qualification (the real one of tests/fixtures/qualify, re-labelled): profile
"one-ms" PASS, or FAIL for the slowed units. The fleet view has to name exactly A-01 and lab4, and call
firmware 2B0QBXX6 slower.
"""

import copy
import json
import os

import pytest

from conftest import ROOT, fixture_path, load, need, slogqual

DISKINFO = fixture_path("diskinfo", "freebsd-r320683-intel710-samsung950pro.collapsed.txt")
QUALIFICATION = fixture_path("qualify", "qualification-nbd-memory-952d1d3.json")
MODELS = {"A": ("INTEL SSDSA2BZ100G3", "6PB10362"), "B": ("Samsung SSD 950 PRO 256GB", "2B0QBXX7")}
OLD_FIRMWARE = "2B0QBXX6"
ARTIFACTS = os.path.join(ROOT, "artifacts")


def _jitter(j, k):
    """A deterministic factor within ±2 % for unit j at size index k."""
    return 1 + 0.02 * (((j * 5 + k * 3) % 9) / 8 - 0.5) * 2


def make_fleet(tmp_path):
    imp = slogqual("import", "diskinfo", DISKINFO, "-o", tmp_path / "real.json", "--no-store")
    assert imp.returncode == 0, imp.stderr
    real = {"A": load(tmp_path / "real-1.json"), "B": load(tmp_path / "real-2.json")}
    qual = load(QUALIFICATION)
    files = []
    for letter, base in real.items():
        model, firmware = MODELS[letter]
        for j in range(8):
            serial, host, slot = f"{letter}-{j:02d}", f"lab{j // 2 + 1}", f"0000:0{j % 2 + 1}:00.0"
            fw = OLD_FIRMWARE if letter == "B" and j in (3, 4, 5) else firmware
            factor = 2.0 if serial == "A-01" else 2.5 if host == "lab4" else 1.15 if fw == OLD_FIRMWARE else 1.0
            doc = copy.deepcopy(base)
            doc["device"] = {"model": model, "serial": serial, "firmware": fw, "class": "ssd",
                             "link": {"kind": "pcie", "address": slot}}
            doc["target"]["path"] = f"/dev/da{j % 2}"
            doc["environment"].update(host=host, started=f"2026-11-2{j % 3}T10:00:{j:02d}+00:00")
            for k, p in enumerate(doc["points"]):
                f = factor * _jitter(j, k)
                p["lat_us"]["mean"] = round(p["lat_us"]["mean"] * f, 2)
                p["mbps"] = round(p["mbps"] / f, 3)
                p["iops"] = round(p["iops"] / f, 3)
            path = tmp_path / f"{serial}.sweep.json"
            path.write_text(json.dumps(doc))
            q = copy.deepcopy(qual)
            q["identity"].update(model=model, serial=serial, firmware=fw)
            q["environment"]["host"] = host
            q["verdict"] = "fail" if factor >= 2 else "pass"
            q["sweep"]["document"] = doc
            qpath = tmp_path / f"{serial}.qualification.json"
            qpath.write_text(json.dumps(q))
            files += [str(path), str(qpath)]
    return files


@pytest.fixture(params=["sqlite", "postgresql"])
def fleet_store(request, tmp_path):
    url = str(tmp_path / "s.sqlite") if request.param == "sqlite" else request.getfixturevalue("pg_url")
    files = make_fleet(tmp_path)
    proc = slogqual("import", "json", *files, "--store", url)
    assert proc.returncode == 0 and proc.stderr.count("recorded as run") == 32, proc.stderr
    return url


def test_the_fleet_names_exactly_the_slow_unit_and_the_slow_host(fleet_store):
    proc = slogqual("fleet", "--store", fleet_store, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [(o["model"], o["serial"], o["host"], o["slot"], o["slow"]) for o in doc["outliers"]] == [
        (MODELS["A"][0], "A-01", "lab1", "0000:02:00.0", True)]
    assert [h["host"] for h in doc["hosts"] if h["flagged"]] == ["lab4"]
    assert {h["host"]: h["slow_units"] for h in doc["hosts"]} == {"lab1": 1, "lab2": 0, "lab3": 0, "lab4": 4}
    models = {m["model"]: m for m in doc["models"]}
    a, b = models[MODELS["A"][0]], models[MODELS["B"][0]]
    assert a["units"] == b["units"] == 8 and a["hosts"] == ["lab1", "lab2", "lab3", "lab4"]
    assert a["verdicts"] == {"one-ms": {"pass": 5, "fail": 3}} and b["verdicts"] == {"one-ms": {"pass": 6, "fail": 2}}
    # the distribution: the median sits with the ordinary units, the slow ones widen min-max only
    lat = a["figures"]["lat_4k"]
    assert lat["n"] == 8 and lat["lo"] < lat["median"] < 1.1 * lat["lo"] and lat["hi"] > 1.9 * lat["median"]
    assert len(a["band"]) == 15 and all(x["min"] <= x["median"] <= x["max"] for x in a["band"])
    # firmware: B's old firmware is slower, significantly; lab4's units left out of the comparison
    fw = [r for r in doc["firmware"] if r["figure"] == "lat_4k"]
    assert [(r["model"], r["firmware"], r["reference"], r["units"], r["reference_units"], r["verdict"])
            for r in fw] == [(MODELS["B"][0], OLD_FIRMWARE, MODELS["B"][1], 3, 3, "slower")]
    assert fw[0]["p"] < 0.05 and 10 < fw[0]["change_pct"] < 20
    # the tables say the same, with the rule
    text = slogqual("fleet", "--store", fleet_store).stdout
    assert "flagged hosts: lab4 (4 of 4 units slow)" in text
    assert f"outlier units: {MODELS['A'][0]} A-01 on lab1 (0000:02:00.0, /dev/da1)" in text
    assert "median" in text and "MAD" in text and "Iglewicz-Hoaglin" in text and "Welch" in text


def test_fleet_without_units_is_one_line(tmp_path):
    proc = slogqual("fleet", "--store", tmp_path / "empty.sqlite")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "no units" in proc.stderr


@need("gnuplot")
@pytest.mark.skipif(not os.path.exists("/usr/bin/chromium"), reason="needs Debian's chromium (contrib/install-deps.sh)")
def test_fleet_html_in_chromium(tmp_path, pg_url):
    from test_report_chromium import Browser, CHART_STATS
    files = make_fleet(tmp_path)
    assert slogqual("import", "json", *files, "--store", pg_url).returncode == 0
    report = tmp_path / "fleet.html"
    proc = slogqual("fleet", "--store", pg_url, "--html", report)
    assert proc.returncode == 0, proc.stderr
    text = report.read_text()
    assert "<script" not in text and "http" not in text.replace("http://www.w3.org", "")  # self-contained
    b = Browser(str(tmp_path / "profile"))
    try:
        b.open_page()
        b.load("file://" + str(report))
        assert b.console_errors() == []
        charts = json.loads(b.evaluate(CHART_STATS))
        assert len(charts) == 2
        for c in charts:
            assert c["w"] > 400 and c["h"] > 200 and c["paths"] > 10
            assert "median" in c["texts"] and "8M" in c["texts"]
        assert any("A-01 (lab1): outside" in t for t in charts[0]["texts"])
        findings = json.loads(b.evaluate("JSON.stringify(Array.from(document.querySelectorAll('.finding'))"
                                         ".map(e => e.textContent))"))
        assert len(findings) == 2 and findings[0].startswith("Host lab4") and "A-01" in findings[1]
        os.makedirs(ARTIFACTS, exist_ok=True)
        shot = os.path.join(ARTIFACTS, "fleet-chromium.png")
        b.screenshot(shot)
    finally:
        b.close()
    assert os.path.getsize(shot) > 50_000
