"""The host probe in the lab guest (issue #37): real OpenZFS, the pool's own (emulated) data disks, a RAM log,
then the log pass with a candidate log (an emulated SAS SSD) on RAM data files. Relations only: the ZIL went to
the RAM log (to the candidate in the log pass), the copies were measured and taken out (the data files' alone in
the log pass), the ceiling stands above what the RAM-log pool itself did, and the advice takes it — not the
log pass's where the sweep is of another device."""

import json
import os
import subprocess
import sys

import pytest

from conftest import need_lab

pytestmark = pytest.mark.lab

SWEEP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "advisor",
                     "iscsi-4k-lab.log0-sata-ssd.sweep.json")


def test_the_host_probe_measures_the_zfs_of_the_guest_and_the_advice_is_bounded_by_it(tmp_path):
    need_lab()
    out = tmp_path / "lab"
    proc = subprocess.run([sys.executable, "-m", "slogqual", "lab", "run", "--quiet", "-d", "hdd", "-d", "hdd",
                           "-d", "sas-ssd", "-o", str(out), "--", "sh", "-c",
                           "set -- $SLOGQUAL_LAB_DEVICES; echo $3 > log-device; slogqual host-probe --protocol iscsi "
                           "--bs 4k --threads 1,4 --runtime 2 --ramp 1 --repeats 2 --data $1 $2 --log $3 --destroy-data "
                           "--quiet -o host.json"],
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads((out / "host.json").read_text())
    assert doc["schema"] == "slogqual.host/1" and doc["workload"]["protocol"] == "iscsi"
    assert doc["ram"]["filesystem"] == "tmpfs" and len(doc["ram"]["data_devices"]) == 2
    copy = doc["copy"]
    assert copy["per_byte_s"] > 0 and copy["borrow_per_byte_s"] > 0 and min(copy["ios"]) > 0
    # two passes, each its own pool and scenario document; each writer count keeps its best pass
    assert [os.path.basename(p) for p in doc["pass_scenarios"]] == ["host.json.scenario.json",
                                                                     "host.json.scenario.pass2.json"]
    assert doc["scenario"] == doc["pass_scenarios"][0]
    assert len(doc["passes"]) == 2
    for n, (name, steps) in enumerate(zip(doc["pass_scenarios"], doc["passes"]), 1):
        scenario = json.loads((out / os.path.basename(name)).read_text())
        assert [s["threads"] for s in steps] == [1, 4] == [s["threads"] for s in scenario["steps"]]
        for s, raw in zip(steps, scenario["steps"]):
            assert raw["zil"]["slog_bytes"] > 0 and raw["zil"]["normal_bytes"] == 0  # every ZIL block to the RAM log
            assert raw["cpu"]["basis"] == "window"  # the CPU over the measured window, not fio's whole run
            assert s["ios"] == raw["ios"] > 0 and s["log_writes_s"] > 0 and s["data_writes_s"] is None  # DMA disks
            # ... whose writes in the window (the txg syncs it held) are kept as evidence all the same
            assert s["txg_bytes_s"] == sum(v["write_bytes_s"] for v in raw["vdevs"]
                                           if v["section"] == "data" and v["depth"] == 1) >= 0
            assert 0 < s["zfs_cpu_s_per_io"] < s["cpu_s_per_io"]
            assert s["ceiling_iops"] > s["iops"]  # with the log's copies out, above what the RAM-log pool did
    for s in doc["steps"]:
        every = [next(x for x in p if x["threads"] == s["threads"]) for p in doc["passes"]]
        assert s["pass_ceilings_iops"] == [x["ceiling_iops"] for x in every]
        assert s["ceiling_iops"] == max(s["pass_ceilings_iops"]) and s == dict(every[s["probe_pass"] - 1], **{
            "probe_pass": s["probe_pass"], "pass_ceilings_iops": s["pass_ceilings_iops"]})
    # the log pass: the same passes with the candidate as the log and RAM data files
    lp = doc["log_pass"]
    assert lp["device"] == (out / "log-device").read_text().strip() and lp["identity"]["serial"].startswith("SQLSAS")
    assert [os.path.basename(p) for p in lp["pass_scenarios"]] == ["host.json.log.scenario.json",
                                                                    "host.json.log.scenario.pass2.json"]
    for name, steps in zip(lp["pass_scenarios"], lp["passes"]):
        scenario = json.loads((out / os.path.basename(name)).read_text())
        assert scenario["pool"]["log"] == [lp["device"]] and all("/slogqual-host-" in d for d in scenario["pool"]["data"])
        for s, raw in zip(steps, scenario["steps"]):
            assert raw["zil"]["slog_bytes"] > 0 and raw["zil"]["normal_bytes"] == 0  # every ZIL block to the candidate
            # only the RAM data files' writes are copies; the log's time is the device's: no path from it
            assert s["data_writes_s"] is not None and s["path_us"] is None
            expected = (copy["per_write_s"] * s["data_writes_s"]
                        + (copy["per_byte_s"] + copy["borrow_per_byte_s"]) * s["data_bytes_s"]) / s["iops"]
            assert s["copy_s_per_io"] == pytest.approx(expected, rel=1e-6, abs=1e-12)
            assert s["ceiling_iops"] == s["cpu_ceiling_iops"] > 0
    advice = tmp_path / "advice.json"
    p = subprocess.run([sys.executable, "-m", "slogqual", "advise", "--log", SWEEP, "--protocol", "iscsi", "--bs", "4k",
                        "--threads", "1,4", "--tunables", "defaults", "--host", str(out / "host.json"), "-o",
                        str(advice)], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0].startswith("host figure: the host probe (")
    cand = json.loads(advice.read_text())["candidates"][0]
    assert all(s["iops"] <= s["limits"]["host_iops"] + 0.1 for s in cand["steps"])
    # the sweep is of another device (a recorded SATA SSD): the log pass is not its ceiling, and the advice says so
    assert cand["host_log_pass"]["used"] is False and cand["host_log_pass"]["other_device"]["by"] == "serial"
    assert all(s["limits"]["host_log_pass_iops"] is None for s in cand["steps"])
    assert any(line.startswith("host probe's log pass with ") and "not taken" in line for line in p.stdout.splitlines())
