"""smartctl's NVMe text (``-a``/``-x``) read into SmartHealth, and smartctl 7.5's composite temperature
thresholds in JSON. The captures are REAL (tests/fixtures/smartctl/SOURCES.md); the 7.5 JSON document is
SYNTHETIC (no real 7.5 capture with nvme_composite_temperature_threshold was found), labelled where used."""

import json
import os

import pytest

from conftest import FIXTURES
from slogqual.tools import smartctl


def fixture(name):
    with open(os.path.join(FIXTURES, "smartctl", name), encoding="utf-8") as fh:
        return fh.read()


def test_crucial_p2_text_gives_thresholds_times_and_transitions():
    h = smartctl.parse_health_text(fixture("nvme-text-ct500p2ssd8-a.txt"))
    assert (h.protocol, h.form, h.temperature_c) == ("NVMe", "text", 26)
    assert (h.warning_threshold_c, h.critical_threshold_c) == (70, 85)
    assert (h.warning_temp_time_min, h.critical_temp_time_min) == (2, 0)
    assert (h.thm_temp1_trans_count, h.thm_temp1_total_time_s) == (8, 12)
    assert h.thm_temp2_trans_count is None and h.thm_temp2_total_time_s is None  # not printed: unknown
    assert (h.percentage_used, h.data_units_written, h.critical_warning) == (2, 29947983, 0)
    assert h.sensors_c is None and h.usable


def test_transcend_text_one_space_after_the_colon():
    h = smartctl.parse_health_text(fixture("nvme-text-transcend-ts128gmte850-a.txt"))
    assert (h.temperature_c, h.critical_warning, h.percentage_used) == (38, 9, 16)
    assert (h.data_units_written, h.warning_temp_time_min, h.critical_temp_time_min) == (62288091, 0, 0)
    assert h.warning_threshold_c is None and h.thm_temp1_trans_count is None


def test_text_without_an_nvme_health_section_is_refused():
    for bad in ("", "garbage", fixture("nvme-text-ct500p2ssd8-a.txt").split("=== START OF SMART DATA")[0]):
        with pytest.raises(ValueError):
            smartctl.parse_health_text(bad)


def test_smartctl_75_json_thresholds_synthetic():
    """SYNTHETIC: the real Samsung capture with smartctl 7.5's threshold object added."""
    doc = json.loads(fixture("nvme-samsung-mzvl21t0hclr-health.json"))
    doc["nvme_composite_temperature_threshold"] = {"warning": 82, "critical": 85}
    h = smartctl.parse_health(json.dumps(doc))
    assert (h.warning_threshold_c, h.critical_threshold_c, h.temperature_c) == (82, 85, 29)
    doc["nvme_composite_temperature_threshold"] = {"warning": 0, "critical": "x"}
    h = smartctl.parse_health(json.dumps(doc))
    assert (h.warning_threshold_c, h.critical_threshold_c) == (None, None)


def test_health_falls_back_to_text_without_json(monkeypatch):
    from slogqual.errors import ToolTooOldError
    from slogqual.tools import spawn as _run
    import subprocess

    def too_old():
        raise ToolTooOldError("smartctl 6.5: no JSON", program="smartctl", found=(6, 5), needed=(7, 0))

    calls = []

    def fake_run(argv, **_kw):
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 0, fixture("nvme-text-ct500p2ssd8-a.txt"), "")

    monkeypatch.setattr(smartctl, "check_version", too_old)
    monkeypatch.setattr(_run, "run", fake_run)
    h = smartctl.health("/dev/nvme0")
    assert calls == [["smartctl", "-a", "/dev/nvme0"]] and h.thm_temp1_trans_count == 8
