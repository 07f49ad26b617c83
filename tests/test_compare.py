"""compare: per-size values and ratios, threshold flags, exit code 1 on a regression; the classifier."""

import copy
import json

import pytest

from conftest import fixture_path, slogqual
from slogqual.analysis import classes
from slogqual.analysis import compare as cmp
from slogqual.errors import UsageError
from slogqual.importers import diskinfo
from slogqual.results import save_sweep

FIXTURE = fixture_path("diskinfo", "freebsd-r320683-intel710-samsung950pro.collapsed.txt")


def intel_samsung():
    return diskinfo.import_file(FIXTURE)


def scaled(result, factor, sizes=None):
    """The same device with its latency multiplied by factor at the given sizes (all by default)."""
    r = copy.deepcopy(result)
    for p in r.points:
        if sizes is None or p.size in sizes:
            p.lat_us.mean *= factor
            p.iops /= factor
            p.mbps /= factor
    return r


@pytest.mark.parametrize("text,value", [("10%", 0.10), ("0.1", 0.10), ("2.5%", 0.025), (" 15 % ", 0.15)])
def test_threshold_parsing(text, value):
    assert cmp.parse_threshold(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["", "ten", "-5%", "0%", "5%%"])
def test_bad_thresholds(text):
    with pytest.raises(UsageError):
        cmp.parse_threshold(text)


def test_values_ratio_and_flags_per_size():
    intel, _ = intel_samsung()
    worse = scaled(intel, 1.25, sizes={4096, 8192})
    better = scaled(worse, 0.8, sizes={1048576})
    c = cmp.compare(intel, better, "latency", 0.10)
    by_size = {r.size: r for r in c.rows}
    assert by_size[4096].a == 158.2 and by_size[4096].b == pytest.approx(197.75)
    assert by_size[4096].ratio == pytest.approx(1.25) and by_size[4096].change_pct == pytest.approx(25.0)
    assert [r.size for r in c.regressions] == [4096, 8192]
    assert [r.size for r in c.improvements] == [1048576]
    assert by_size[512].flag == "" and by_size[512].ratio == pytest.approx(1.0)
    assert "2 regression(s) beyond 10% (4K, 8K)" in c.summary()


def test_threshold_edge_and_metric_direction():
    intel, _ = intel_samsung()
    slower = scaled(intel, 1.08)
    assert not cmp.compare(intel, slower, "latency", 0.10).regressions
    assert len(cmp.compare(intel, slower, "latency", 0.05).regressions) == 15
    # ops/s fall when latency rises: the same sizes are flagged for iops as for latency.
    lat = cmp.compare(intel, scaled(intel, 1.3, {512}), "latency", 0.10)
    iops = cmp.compare(intel, scaled(intel, 1.3, {512}), "iops", 0.10)
    assert [r.size for r in lat.regressions] == [r.size for r in iops.regressions] == [512]


def test_sizes_in_one_result_only():
    intel, _ = intel_samsung()
    part = copy.deepcopy(intel)
    part.points = [p for p in part.points if p.size <= 4096]
    c = cmp.compare(intel, part)
    assert {r.flag for r in c.rows if r.size > 4096} == {cmp.ONLY_A}
    assert not c.regressions
    assert any("diskinfo import" in n for n in c.notes)


def test_cli_exit_codes_and_json(tmp_path):
    intel, samsung = intel_samsung()
    save_sweep(str(tmp_path / "a.json"), intel)
    save_sweep(str(tmp_path / "same.json"), scaled(intel, 1.02))
    save_sweep(str(tmp_path / "slow.json"), scaled(intel, 1.5, {4096}))
    ok = slogqual("compare", tmp_path / "a.json", tmp_path / "same.json")
    assert ok.returncode == 0, ok.stderr
    assert "no change beyond 10% at 15 size(s)" in ok.stdout
    bad = slogqual("compare", tmp_path / "a.json", tmp_path / "slow.json", "--threshold", "20%")
    assert bad.returncode == 1
    line = next(l for l in bad.stdout.splitlines() if l.strip().startswith("4K"))
    assert "158.2" in line and "237.3" in line and "1.500" in line and "+50.0%" in line and "REGRESSION" in line
    js = slogqual("compare", tmp_path / "a.json", tmp_path / "slow.json", "--json", "--metric", "iops")
    assert js.returncode == 1
    doc = json.loads(js.stdout)
    assert doc["regressions"] == 1 and doc["metric"] == "iops"
    assert [r["size"] for r in doc["rows"] if r["flag"] == "regression"] == [4096]
    usage = slogqual("compare", tmp_path / "a.json", tmp_path / "same.json", "--threshold", "lots")
    assert usage.returncode == 2 and "bad threshold" in usage.stderr


# --- the classifier ------------------------------------------------------------------------------

def test_classifier_on_the_published_curves():
    intel, samsung = intel_samsung()
    ci = classes.classify(intel)
    assert ci.class_key == "sas" and ci.in_band
    assert ci.small_io_sizes == [512, 1024, 2048, 4096]
    assert ci.small_io_latency_us == pytest.approx((138.3 + 151.1) / 2)  # median of the four means
    assert ci.summary == ("enterprise SAS SSD-class small-IO latency (145 µs; band 50 µs–200 µs); "
                          "bandwidth-capped at ~172 MiB/s from 128K up")
    cs = classes.classify(samsung)
    assert cs.class_key == "sata" and not cs.in_band
    assert "between the SATA flash class" in cs.summary and "nearer SATA flash" in cs.summary
    assert "still rising at 8M (743 MiB/s)" in cs.summary


@pytest.mark.parametrize("lat,key,phrase", [
    (2.5, "nvdimm", "NVDIMM-class"),
    (25.0, "nvme", "enterprise NVMe / Optane-class"),
    (1000.0, "sata", "SATA flash-class"),
    (15000.0, "hdd", "7.2K HDD-class"),
    (0.3, "nvdimm", "below every reference class"),
    (90000.0, "hdd", "slower than the 7.2K HDD class"),
    (42.0, "nvme", "nearer enterprise NVMe / Optane"),
    (48.0, "sas", "nearer enterprise SAS SSD"),
])
def test_classifier_words(lat, key, phrase):
    intel, _ = intel_samsung()
    r = scaled(intel, lat / 144.7)
    c = classes.classify(r)
    assert c.class_key == key and phrase in c.summary


def test_bandwidth_falling_off_like_a_small_optane():
    intel, _ = intel_samsung()
    r = copy.deepcopy(intel)
    for p in r.points:
        if p.size >= 1048576:
            p.mbps = 171.0 * 1048576 / p.size  # controller limit: MiB/s fall as writes grow
    assert "falls to" in classes.classify(r).bandwidth_words


def test_classifier_says_when_the_target_is_a_stack_not_a_device():
    intel, _ = intel_samsung()
    r = copy.deepcopy(intel)
    r.target["kind"] = "scratch"
    assert classes.classify(r).summary.startswith(
        "a scratch target (the class of the whole stack under it): enterprise SAS SSD-class")
    r.target["kind"] = "block"
    r.device = {"class": "virtual", "transport": "virtio"}
    assert classes.classify(r).summary.startswith("a virtual target")
    r.device = {"class": "sas-ssd", "transport": "sas"}
    assert classes.classify(r).summary.startswith("enterprise SAS SSD-class")


def test_a_result_holding_nan_is_an_error_not_no_change(tmp_path):
    """Python's json writes and reads NaN; JSON has no such number. A result with a NaN mean used to
    compare as "no change" with exit 0, so a broken result passed a regression gate."""
    intel, _ = intel_samsung()
    save_sweep(str(tmp_path / "a.json"), intel)
    doc = json.loads((tmp_path / "a.json").read_text())
    for p in doc["points"]:
        p["lat_us"]["mean"] = float("nan")
    (tmp_path / "nan.json").write_text(json.dumps(doc))  # json.dumps writes the bare token NaN
    assert "NaN" in (tmp_path / "nan.json").read_text()
    for args in (("a.json", "nan.json"), ("nan.json", "a.json")):
        proc = slogqual("compare", *[tmp_path / a for a in args])
        assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
        assert "NaN is not a JSON number" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
