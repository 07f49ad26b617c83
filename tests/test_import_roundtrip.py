"""A real sweep printed as diskinfo -wS lines and imported back keeps every size and mean."""

import pytest

from conftest import load, need, slogqual

pytestmark = [pytest.mark.integration, need("fio")]


def test_sweep_diskinfo_format_imports_back_within_print_precision(tmp_path):
    sizes = "512,4k,64k,1m,8m"  # %4.4g prints 0.5 and 8192: both ends of diskinfo's range
    proc = slogqual("sweep", "--sizes", sizes, "--runtime", "0.2", "--settle", "0", "--quiet",
                    "-o", tmp_path / "sweep.json", "--format", "diskinfo", cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (tmp_path / "out.txt").write_text(proc.stdout)
    measured = load(tmp_path / "sweep.json")

    imp = slogqual("import", "diskinfo", tmp_path / "out.txt", "-o", tmp_path / "back.json")
    assert imp.returncode == 0, imp.stderr
    back = load(tmp_path / "back.json")

    assert back["source"] == "diskinfo"
    assert [p["size"] for p in back["points"]] == [p["size"] for p in measured["points"]] == [
        512, 4096, 65536, 1048576, 8388608]
    for m, b in zip(measured["points"], back["points"]):
        # diskinfo's usec/IO is elapsed time per IO (runtime / IOs), like its Mbytes/s; "%8.1f":
        # the printed values are within half a unit of the last digit.
        usec_per_io = m["runtime_ms"] * 1000.0 / m["ios"]
        assert abs(b["lat_us"]["mean"] - usec_per_io) <= 0.05 + 1e-9, (m, b)
        # and now the two printed columns agree, as diskinfo's do: MiB/s = size / usec per IO
        assert b["mbps"] == pytest.approx(m["size"] / usec_per_io * 1e6 / 2**20, rel=0.01, abs=0.05)
        assert abs(b["mbps"] - m["mbps"]) <= 0.05 + 1e-9, (m, b)
    assert back["status"] == "complete" and back["params"]["sizes"] == [p["size"] for p in back["points"]]
