"""Pool scenarios for real, in the lab guest (QEMU TCG, real OpenZFS, emulated devices).

Assert relations and evidence only: which configurations wrote ZIL bytes to a log vdev, that the
SLOG beat no SLOG under sync=always, that no pool outlives the run — never absolute times.
"""

import json
import os
import subprocess
import sys

import pytest

from slogqual.lab.image import missing_reason

pytestmark = pytest.mark.lab


@pytest.fixture(autouse=True)
def _lab_ready():
    if os.geteuid() != 0:
        pytest.skip("the lab needs root")
    reason = missing_reason()
    if reason:
        pytest.skip(reason)


def run(*args, cwd, timeout=1500):
    return subprocess.run([sys.executable, "-m", "slogqual", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


def test_iscsi_4k_quick_in_the_lab(tmp_path):
    out = tmp_path / "iscsi.json"
    # data: two 8 ms hdd; log: an NVDIMM (pmem), far faster than the data disks
    proc = run("scenario", "run", "iscsi-4k-randwrite", "--lab", "--quick", "--lab-log", "nvdimm", "--quiet",
               "--json", "-o", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["schema"] == "slogqual.scenario/1" and doc["status"] == "complete"
    configs = {c["name"] for c in doc["scenario"]["configs"]}
    steps = doc["steps"]
    assert {s["config"] for s in steps} == configs
    assert len(steps) == len(configs) * len(doc["scenario"]["threads"])
    for s in steps:
        uses_log = s["log"] != "none"
        if uses_log and s["sync"] == "always":
            assert s["zil"]["slog_bytes"] > 0 and s["log_write_bytes_s"] > 0, s
        else:
            assert s["zil"]["slog_bytes"] == 0, s  # no log vdev took ZIL writes
        if s["sync"] == "always" and not uses_log:
            assert s["zil"]["normal_bytes"] > 0, s  # the ZIL went to the data disks
    by = {(s["config"], s["threads_per_lun"]): s for s in steps}
    for t in doc["scenario"]["threads"]:
        slog = by[("sync=always + SLOG", t)]["iops"]
        noslog = by[("sync=always, no SLOG", t)]["iops"]
        assert slog > noslog, (t, slog, noslog)
    a = doc["analysis"]
    assert a["metric"] == "iops" and a["slog_benefit_at_peak"] > 1 and a["verdict"]
    # the pool is gone and the device identities were recorded in the guest
    assert all(d.get("path") for d in doc["pool"]["devices"].values())
    assert doc["warnings"] == []
