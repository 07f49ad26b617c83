"""The real pair engine (slogqual/native/pairbench.c) on a file and a loop device, and beside fio.

Relations only, never absolute times: this machine's disk is shared and noisy."""

import pytest

from conftest import load, need, needs_root, slogqual
from slogqual.analysis.percentiles import nearest_rank
from slogqual.tools import fio, pairbench

pytestmark = pytest.mark.integration

FAST = ["--runtime", "0.3", "--settle", "0"]
KEYS = ("min", "p50", "p90", "p99", "p999", "p9999", "max")


@pytest.fixture
def data_file(tmp_path):
    path = tmp_path / "target.img"
    with open(path, "wb") as fh:
        fh.write(b"\0" * (32 << 20))  # allocated, so O_DIRECT writes do not allocate
    return str(path)


def check_point(p):
    assert p["lat_basis"] == "pair" and p["ios"] > 0
    for key in ("lat_us", "write_lat_us", "flush_lat_us"):
        figures = [p[key][k] for k in KEYS]
        assert figures == sorted(figures), (key, figures)  # percentiles monotone, all within min..max
    # the pair of every IO is its write plus its flush: so are the means
    assert p["lat_us"]["mean"] == pytest.approx(p["write_lat_us"]["mean"] + p["flush_lat_us"]["mean"], rel=1e-9)
    assert p["lat_us"]["max"] <= p["write_lat_us"]["max"] + p["flush_lat_us"]["max"] + 1e-9


def test_samples_hold_the_sum_relation_and_beat_the_union_bound(data_file):
    r = pairbench.run_job(pairbench.PairJob(filename=data_file, bs=4096, region_bytes=32 << 20, runtime_s=0.5))
    assert r.ios > 0 and len(r.write_ns) == len(r.flush_ns) == r.ios and r.flush == "fdatasync"
    pair = r.pair_ns()
    assert all(p == w + f for p, w, f in zip(pair, r.write_ns, r.flush_ns))
    assert sum(pair) == sum(r.write_ns) + sum(r.flush_ns)  # integers: the mean relation exactly
    ws, fs, ps = sorted(r.write_ns), sorted(r.flush_ns), sorted(pair)
    for q in (50.0, 99.0, 99.9):
        # the old write+flush figure: the union bound from the ((100+q)/2)-th percentiles of the parts,
        # which holds for nearest-rank percentiles of the same samples exactly
        half = (100.0 + q) / 2
        assert nearest_rank(ps, q) <= nearest_rank(ws, half) + nearest_rank(fs, half)
    assert ps[-1] <= ws[-1] + fs[-1]
    assert r.elapsed_ns >= 0.5e9 and r.bytes_written == 4096 * r.ios


@need("fio")
def test_sweep_on_a_file_is_exact_and_unstarred(data_file, tmp_path):
    out = tmp_path / "r.json"
    proc = slogqual("sweep", data_file, "--sizes", "4k,256k", *FAST, "--quiet", "-o", out)
    assert proc.returncode == 0, proc.stderr
    doc = load(out)
    assert doc["params"]["engine"] == "pair" and doc["environment"]["pairbench_version"] == "pairbench 1"
    for p in doc["points"]:
        check_point(p)
    assert "*" not in proc.stdout and "upper bound" not in proc.stdout and "engine=pair" in proc.stdout


@need("fio")
def test_both_engines_on_the_same_file_agree_in_order_of_magnitude(data_file, tmp_path):
    means = {}
    for engine in ("pair", "fio", "pair", "fio"):  # interleaved: the shared disk's moods hit both
        out = tmp_path / f"{engine}.json"
        proc = slogqual("sweep", data_file, "--engine", engine, "--sizes", "4k", "--runtime", "0.5", "--settle", "0",
                        "--quiet", "-o", out, "--force")
        assert proc.returncode == 0, proc.stderr
        p = load(out)["points"][0]
        assert p["lat_basis"] == ("pair" if engine == "pair" else "write+flush")
        means.setdefault(engine, []).append(p["lat_us"]["mean"])
    ratio = min(means["pair"]) / min(means["fio"])
    assert 0.1 < ratio < 10, means  # generous: a relation, not a timing


@need("fio", "losetup")
@needs_root
def test_sweep_on_a_loop_device(loop_device, tmp_path):
    out = tmp_path / "r.json"
    proc = slogqual("sweep", loop_device, "--sizes", "4k,1m", *FAST, "--destroy-data", "--quiet", "-o", out)
    assert proc.returncode == 0, proc.stderr
    doc = load(out)
    assert doc["params"]["engine"] == "pair" and [p["size"] for p in doc["points"]] == [4096, 1 << 20]
    for p in doc["points"]:
        check_point(p)


def test_engine_pair_is_refused_where_it_cannot_run(tmp_path, data_file):
    proc = slogqual("sweep", data_file, "--engine", "pair", "--mode", "dsync", "--sizes", "4k", *FAST, "--quiet",
                    "-o", tmp_path / "r.json")
    assert proc.returncode == 2 and "flush only" in proc.stderr
