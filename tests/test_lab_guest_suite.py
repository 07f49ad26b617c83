"""Run the device tests that need kernel features this host lacks (dm, md, ZFS, emulated NVMe/SATA/
SCSI/NVDIMM) inside a lab guest, so that CI runs them rather than skipping them."""

import os
import re
import subprocess
import sys

import pytest

from conftest import need_lab


pytestmark = pytest.mark.lab
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IN_GUEST = [os.path.join(REPO, "tests", "test_safety.py"), os.path.join(REPO, "tests", "test_device_identity.py")]


def test_in_guest_device_tests_pass_in_the_lab(tmp_path):
    need_lab()
    out = tmp_path / "out"
    # The guest sees this tree read-only through the host's root share; -p no:cacheprovider keeps
    # pytest from writing a cache there.
    proc = subprocess.run([sys.executable, "-m", "slogqual", "lab", "run", "--quiet",
                           "-d", "sata-ssd", "-d", "sas-ssd", "-d", "nvme", "-d", "nvdimm", "-o", str(out), "--",
                           "python3", "-m", "pytest", "-q", "-rs", "-m", "lab", "-p", "no:cacheprovider", *IN_GUEST],
                          capture_output=True, text=True, timeout=900)
    console = (out / "lab-console.log").read_text(errors="replace") if (out / "lab-console.log").exists() else ""
    assert proc.returncode == 0, proc.stderr[-2000:] + console[-3000:]
    summary = [ln for ln in console.splitlines() if re.search(r"\d+ passed", ln)]
    assert summary, console[-3000:]
    assert "failed" not in summary[-1] and "skipped" not in summary[-1] and "error" not in summary[-1], summary[-1]
    assert int(re.search(r"(\d+) passed", summary[-1]).group(1)) >= 7
