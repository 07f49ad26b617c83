"""Scenario analysis and plots on a real lab-recorded scenario result (tests/fixtures/scenario)."""

import json

import pytest

from conftest import fixture_path, need, slogqual
from slogqual.analysis.scenario import analyse
from slogqual.report import scaling_plot

FIX = fixture_path("scenario", "iscsi-4k-randwrite-lab-quick-2candidates.json")


def doc():
    with open(FIX) as fh:
        return json.load(fh)


def test_analysis_of_a_two_candidate_lab_run():
    a = analyse(doc())
    assert a["metric"] == "iops"
    assert a["slower_log"].startswith("The slower log device /dev/sdc (SLOGQUAL LAB SATA SSD) is the bottleneck")
    assert [c["device"] for c in a["candidates"]] == ["/dev/pmem0", "/dev/sdc"]  # fastest first
    assert a["slog_benefit_at_peak"] == pytest.approx(1089.0 / 468.0, rel=0.01)
    assert a["bottleneck"].startswith("the pool: sync=standard, which writes no ZIL, also stops scaling")
    assert a["problems"] == []


def test_scaling_plot_script_has_one_series_per_configuration_and_candidate():
    text = scaling_plot.script(doc(), "iops", "/tmp/x.png", "png")
    assert "set logscale x 2" in text and 'set xtics ("2" 2, "8" 8)' in text
    titles = [ln.split("title ")[-1].rstrip(", \\") for ln in text.splitlines() if " title " in ln and "$d" in ln]
    assert titles == ['"sync=standard"', '"sync=always + SLOG [/dev/sdc]"', '"sync=always + SLOG [/dev/pmem0]"',
                      '"sync=always, no SLOG"']
    assert text.count("<< EOD") == 4
    with pytest.raises(Exception):
        scaling_plot.script(doc(), "latency", "/tmp/x.png", "png")


@need("gnuplot")
def test_scenario_plot_renders_a_png(tmp_path):
    out = tmp_path / "s.png"
    proc = slogqual("scenario", "plot", FIX, "-o", out, "--script", tmp_path / "s.gp")
    assert proc.returncode == 0, proc.stderr
    head = out.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(head[16:20], "big") == 1000 and int.from_bytes(head[20:24], "big") == 600
    assert (tmp_path / "s.gp").read_text().startswith("# slogqual scenario plot")
    bad = slogqual("scenario", "plot", FIX, "-o", tmp_path / "s.jpg")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
