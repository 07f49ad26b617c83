"""The pair engine's pure parts: exact nearest-rank percentiles on constructed samples, the samples file,
the sweep point it makes, the document fields it adds, and its tools door failing in typed ways."""

import dataclasses
import math
import os
import stat
import struct
import tempfile

import pytest

from slogqual.analysis import percentiles
from slogqual.errors import ToolFailedError, ToolOutputError, ToolTooOldError, UsageError
from slogqual.results import LAT_BASIS_FLUSH_BOUND, LAT_BASIS_PAIR, SweepPoint, SweepResult, schema
from slogqual.sweep.engine import ENGINE_FIO, ENGINE_PAIR, SweepParams, point_from_pair
from slogqual.sweep.target import KIND_BLOCK, KIND_FILE, KIND_NBD, Target
from slogqual.tools import pairbench


# --- nearest rank: x[ceil(q/100 * n)] of the sorted samples ----------------------------------------------

def test_nearest_rank_on_one_to_a_thousand():
    xs = list(range(1, 1001))
    assert percentiles.nearest_rank(xs, 50) == 500
    assert percentiles.nearest_rank(xs, 90) == 900
    assert percentiles.nearest_rank(xs, 99) == 990
    assert percentiles.nearest_rank(xs, 99.9) == 999  # not 1000: the rank is computed in integers
    assert percentiles.nearest_rank(xs, 99.99) == 1000  # ceil(999.9) = 1000
    assert percentiles.nearest_rank(xs, 100) == 1000
    assert percentiles.nearest_rank(xs, 0) == 1


def test_nearest_rank_is_always_a_sample_and_small_sets_are_their_max():
    assert percentiles.nearest_rank([7], 50) == 7
    assert percentiles.nearest_rank([1, 2], 50) == 1  # ceil(0.5 * 2) = 1
    assert percentiles.nearest_rank([1, 2], 50.1) == 2
    assert percentiles.nearest_rank([1, 2, 3, 4], 75) == 3
    ten = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    assert [percentiles.nearest_rank(ten, q) for q in (50, 90, 99, 99.9, 99.99)] == [50, 90, 100, 100, 100]


def test_rank_boundaries_and_bad_input():
    assert percentiles.rank(99.99, 10000) == 9999
    assert percentiles.rank(99.99, 10001) == 10000
    assert percentiles.rank(50, 3) == 2
    with pytest.raises(ValueError):
        percentiles.rank(50, 0)
    with pytest.raises(ValueError):
        percentiles.rank(100.5, 10)


def test_summarize_exact_figures():
    s = percentiles.summarize([4000, 1000, 3000, 2000], 1000)
    assert (s.n, s.mean, s.min, s.max) == (4, 2.5, 1.0, 4.0)
    assert s.stddev == pytest.approx(math.sqrt(1.25))
    assert s.percentiles == {"p50": 2.0, "p90": 4.0, "p99": 4.0, "p999": 4.0, "p9999": 4.0}
    assert percentiles.summarize([]) is None
    assert percentiles.summarize([107329], 1000).mean == 107.329  # divided, not multiplied by 1e-3


# --- the samples file and the engine's summaries ------------------------------------------------------

def samples_bytes(pairs):
    """A samples file of IOs back to back: each starts when the one before it ended."""
    out, t = [], 0
    for w, f in pairs:
        out.append(struct.pack("<QQQ", t, w, f))
        t += w + f
    return pairbench.MAGIC + b"".join(out)


def test_read_samples_checks_the_format():
    pairs = [(1000, 2000), (1500, 500), (3000, 100)]
    start, write, flush = pairbench.read_samples(samples_bytes(pairs))
    assert list(write) == [1000, 1500, 3000] and list(flush) == [2000, 500, 100] and list(start) == [0, 3000, 5000]
    assert pairbench.RawSamples(start, write, flush).pair_ns() == [3000, 2000, 3100]
    with pytest.raises(ValueError, match="whole"):
        pairbench.read_samples(samples_bytes(pairs)[:-1])
    with pytest.raises(ValueError, match="does not start"):
        pairbench.read_samples(b"nope")


SUMMARY = """pairbench 3 ios=3 elapsed_ns=9000 bytes=12288 flush=fdatasync rounds=2
batches per=0 sums=0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0
overtime interval_ns=4000 end_ns=9000 count=3
bucket ios=2 sum=5000 p99=3000 max=3000
bucket ios=1 sum=3100 p99=3100 max=3100
bucket ios=0 sum=0 p99=- max=-
series pair n=3 sum=8100 sumsq=22610000 min=2000 max=3100 p50=3000 p90=3100 p99=3100 p999=3100 p9999=3100
series write n=3 sum=5500 sumsq=12250000 min=1000 max=3000 p50=1500 p90=3000 p99=3000 p999=3000 p9999=3000
series flush n=3 sum=2600 sumsq=4260000 min=100 max=2000 p50=500 p90=2000 p99=2000 p999=2000 p9999=2000
end
"""  # pairbench --summarize --interval-ns 4000 --elapsed-ns 9000 of samples_bytes() of the pairs above


def test_parse_reads_the_summaries():
    r = pairbench.parse(SUMMARY)
    assert (r.ios, r.elapsed_ns, r.bytes_written, r.flush, r.version, r.rounds) == (3, 9000, 12288, "fdatasync",
                                                                                   "pairbench 3", 2)
    assert r.series["pair"] == pairbench.Series(n=3, total=8100, squares=22610000, min=2000, max=3100,
                                                percentiles=dict(p50=3000, p90=3100, p99=3100, p999=3100, p9999=3100))
    assert r.series["flush"].percentiles["p50"] == 500 and r.batches.per == 0 and len(r.batches.sums) == 30
    assert r.intervals == pairbench.Intervals(interval_ns=4000, end_ns=9000, ios=[2, 1, 0], sums=[5000, 3100, 0],
                                              p99=[3000, 3100, None], max=[3000, 3100, None])
    assert pairbench.PERCENTILES == tuple(key for key, _q in percentiles.REPORTED)
    assert r.raw is None


@pytest.mark.parametrize("change, why", [
    (("rounds=2", "rounds=x"), "line 1"),
    (("sums=0,0,0,", "sums=0,0,"), "line 2: expected the 30 batch sums"),
    (("count=3", "count=4"), "expected an interval"),
    (("count=3", "count=2"), "expected the pair series"),
    (("ios=0 sum=0 p99=-", "ios=0 sum=0 p99=7"), "an interval with 0 IOs"),
    (("bucket ios=1 sum=3100", "bucket ios=2 sum=3100"), "the intervals hold 4"),
    (("series write n=3", "series write n=2"), "the write series of 3 IOs"),
    (("series flush", "series pair"), "the flush series"),
    (("end\n", ""), "expected 'end'"),
    (("end\n", "end\nmore\n"), "nothing after it"),
    (("p9999=3100\n", "p9999=3100 extra\n"), "the pair series"),
])
def test_parse_refuses_what_is_not_exactly_the_format(change, why):
    with pytest.raises(ValueError, match=why):
        pairbench.parse(SUMMARY.replace(*change, 1))
    with pytest.raises(ValueError, match="line 1"):
        pairbench.parse("garbage")


def test_point_from_pair_every_figure_exact(pair_engine, tmp_path):
    from conftest import engine_summary
    w = [1000 * i for i in range(1, 101)]  # 1..100 µs
    f = [1000 * (101 - i) for i in range(1, 101)]  # 100..1 µs: every pair is 101 µs
    r = engine_summary(pair_engine, tmp_path, [101_000 * i for i in range(100)], w, f, 10_100_000)
    p = point_from_pair(4096, r, "2026-11-24T00:00:00+00:00")
    assert p.lat_basis == LAT_BASIS_PAIR
    assert p.lat_us.mean == p.lat_us.p50 == p.lat_us.p9999 == p.lat_us.max == 101.0 and p.lat_us.stddev == 0
    assert p.write_lat_us.p50 == 50.0 and p.write_lat_us.p90 == 90.0 and p.write_lat_us.p99 == 99.0
    assert p.write_lat_us.max == 100.0 and p.flush_lat_us.min == 1.0
    # the union bound fio's figures would have given is far above the measured pair
    assert p.write_lat_us.p99 + p.flush_lat_us.p99 == 198.0 > p.lat_us.p99
    assert p.iops == pytest.approx(100 / 0.0101) and p.runtime_ms == pytest.approx(10.1)


# --- the document: new fields, old documents ---------------------------------------------------------------

def doc(points):
    return {"schema": schema.SWEEP, "target": {"path": "/x", "kind": "file", "size": 1}, "params": {},
            "points": points}


def test_pair_points_round_trip_and_old_points_gain_no_keys():
    pair = {"size": 4096, "ios": 3, "iops": 1.0, "mbps": 1.0, "lat_basis": "pair",
            "lat_us": {"mean": 2.0, "p50": 2.0, "p90": 3.0, "p99": 3.0, "p999": 3.0, "p9999": 3.0, "max": 3.0}}
    old = {"size": 8192, "ios": 3, "iops": 1.0, "mbps": 1.0, "lat_basis": "write+flush",
           "lat_us": {"mean": 2.0, "p99": 3.0}}
    r = SweepResult.from_dict(doc([pair, old]))
    assert r.points[0].lat_us.p90 == 3.0 and r.points[0].lat_us.p9999 == 3.0
    out = r.to_dict()["points"]
    assert out[0]["lat_us"]["p9999"] == 3.0 and out[0]["lat_basis"] == LAT_BASIS_PAIR
    assert "p90" not in out[1]["lat_us"] and "p9999" not in out[1]["lat_us"]
    assert out[1]["lat_basis"] == LAT_BASIS_FLUSH_BOUND


def test_bad_new_fields_are_refused_naming_the_key():
    from slogqual.results.schema import DocumentError
    bad = {"size": 4096, "ios": 3, "iops": 1.0, "mbps": 1.0, "lat_basis": "pair",
           "lat_us": {"mean": 2.0, "p9999": "slow"}}
    with pytest.raises(DocumentError, match=r"points\[0\]\.lat_us.*p9999"):
        SweepResult.from_dict(doc([bad]))
    with pytest.raises(DocumentError, match="lat_basis"):
        SweepResult.from_dict(doc([dict(bad, lat_basis="guess", lat_us={"mean": 1.0})]))


# --- which engine measures what ------------------------------------------------------------------------

def test_engine_choice():
    f, b, n = Target("/f", KIND_FILE, 1 << 30), Target("/dev/x", KIND_BLOCK, 1 << 30), Target("nbd://h", KIND_NBD, 1)
    auto = SweepParams(sizes=[4096])
    assert [auto.engine_for(t) for t in (f, b, n)] == [ENGINE_PAIR, ENGINE_PAIR, ENGINE_FIO]
    assert SweepParams(sizes=[4096], mode="dsync").engine_for(f) == ENGINE_FIO
    assert SweepParams(sizes=[4096], engine="fio").engine_for(b) == ENGINE_FIO
    assert auto.to_dict(f)["engine"] == "pair" and auto.to_dict(n)["engine"] == "nbd"
    with pytest.raises(UsageError, match="flush only"):
        SweepParams(sizes=[4096], mode="dsync", engine="pair").validate()
    with pytest.raises(UsageError, match="NBD"):
        SweepParams(sizes=[4096], engine="pair").check_target(n)
    # a document from before the pair engine names fio's ioengine: it resumes with fio
    base = {"mode": "flush", "sizes": [4096], "runtime_s": 1.0}
    assert SweepParams.from_dict(dict(base, engine="psync")).engine == ENGINE_FIO
    assert SweepParams.from_dict(base).engine == ENGINE_FIO
    assert SweepParams.from_dict(dict(base, engine="pair")).engine == ENGINE_PAIR


# --- the tools door: a broken engine is a typed error -------------------------------------------------

def fake(tmp_path, body):
    path = tmp_path / "pairbench"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


JOB = pairbench.PairJob(filename="/dev/null", bs=4096, region_bytes=1 << 20, runtime_s=0.1, direct=False)


def test_argv():
    assert pairbench.build_argv("/b/pairbench", JOB) == ["/b/pairbench", "--interval-ns", "100000000", "--",
                                                         "/dev/null", "4096", str(1 << 20), "100", "0"]
    job = dataclasses.replace(JOB, samples="/t/s", max_bytes=1 << 30, precision=0.02, max_runtime_s=30.0,
                              interval_ms=12.5)
    assert pairbench.build_argv("/b/pairbench", job) == [
        "/b/pairbench", "--interval-ns", "12500000", "--samples", "/t/s", "--max-bytes", str(1 << 30),
        "--precision", "0.02", "--max-runtime-ms", "30000", "--", "/dev/null", "4096", str(1 << 20), "100", "0"]
    assert pairbench.summarize_argv("/b/pairbench", "/t/s", 100.0, 9000) == [
        "/b/pairbench", "--summarize", "--interval-ns", "100000000", "--elapsed-ns", "9000", "--", "/t/s"]


def test_a_failing_engine_is_tool_failed_with_its_complaint(tmp_path):
    binary = fake(tmp_path, 'echo "pairbench: write of 4096 bytes at 0 on /x failed: Input/output error" >&2; exit 1')
    with pytest.raises(ToolFailedError, match="Input/output error") as err:
        pairbench.run_job(JOB, binary=binary)
    assert err.value.program == "pairbench" and err.value.argv[0] == binary


def test_garbage_output_is_tool_output_error(tmp_path):
    with pytest.raises(ToolOutputError):
        pairbench.run_job(JOB, binary=fake(tmp_path, "echo hello"))
    # summaries, but no samples file where raw samples were asked for
    summary = fake(tmp_path, "cat <<'EOF'\n" + SUMMARY + "EOF")
    assert pairbench.run_job(JOB, binary=summary).ios == 3
    with pytest.raises(ToolOutputError, match="no samples"):
        pairbench.run_job(JOB, binary=summary, raw=True)


def test_a_wrong_version_is_refused(tmp_path, monkeypatch):
    from slogqual.tools import spawn as _run
    monkeypatch.setattr(pairbench, "locate", lambda build_if_missing=True: fake(tmp_path, "echo 'pairbench 4'"))
    _run.clear_version_cache()
    with pytest.raises(ToolTooOldError, match="not pairbench 3"):
        pairbench.check_version()
    # an older build (pairbench 2 printed no summaries: Python read every sample) is too old
    monkeypatch.setattr(pairbench, "locate", lambda build_if_missing=True: fake(tmp_path, "echo 'pairbench 2'"))
    _run.clear_version_cache()
    with pytest.raises(ToolTooOldError, match="too old"):
        pairbench.check_version()
    _run.clear_version_cache()


def test_without_a_compiler_the_build_is_tool_missing(tmp_path, monkeypatch):
    from slogqual.errors import ToolMissingError
    monkeypatch.setattr(pairbench, "PACKAGED", str(tmp_path / "none"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setattr(tempfile, "tempdir", None)  # $TMPDIR/slogqual-UID, the other cache, is empty too
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ToolMissingError, match="gcc libc6-dev") as missing:
        pairbench.locate()
    assert "--engine fio" in str(missing.value) and "\n" not in str(missing.value)  # one line, and the way out
    assert pairbench.unavailable() == pairbench.NO_COMPILER
    # what needs the engine (--precision, --sustain, --probe) is told how to get cc, not of --engine fio
    with pytest.raises(ToolMissingError, match="gcc libc6-dev") as needed:
        pairbench.check_version(fio_instead=False)
    assert "fio" not in str(needed.value) and str(needed.value) == pairbench.missing_compiler(fio_instead=False)
    with pytest.raises(ToolMissingError, match="--engine fio"):
        pairbench.check_version()
    # the sweep's default measures with fio then, and its parameters say why; what needs the pair engine
    # (--precision, --sustain, --engine pair) does not fall back: the missing engine is its error
    f, n = Target("/f", KIND_FILE, 1 << 30), Target("nbd://h", KIND_NBD, 1)
    auto = SweepParams(sizes=[4096])
    assert auto.engine_for(f) == ENGINE_FIO and auto.fallback(f.kind) == pairbench.NO_COMPILER
    assert auto.to_dict(f)["engine"] == "psync" and auto.to_dict(f)["pair_unavailable"] == pairbench.NO_COMPILER
    assert auto.fallback(n.kind) == "" and "pair_unavailable" not in auto.to_dict(n)  # fio by choice
    for needs_pair in (SweepParams(sizes=[4096], precision=0.02), SweepParams(sizes=[4096], sustain_s=60.0),
                       SweepParams(sizes=[4096], engine="pair")):
        assert needs_pair.engine_for(f) == ENGINE_PAIR and needs_pair.fallback(f.kind) == ""
    assert SweepParams(sizes=[4096], engine="fio").fallback(f.kind) == ""


def test_first_use_builds_into_the_cache_once(tmp_path, monkeypatch):
    import shutil
    if shutil.which("cc") is None:
        pytest.skip("needs cc")
    monkeypatch.setattr(pairbench, "PACKAGED", str(tmp_path / "none"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = pairbench.locate()
    assert path.startswith(str(tmp_path / "cache" / "slogqual" / "pairbench-")) and os.access(path, os.X_OK)
    mtime = os.stat(path).st_mtime_ns
    assert pairbench.locate() == path and os.stat(path).st_mtime_ns == mtime
    assert os.listdir(os.path.dirname(path)) == [os.path.basename(path)]  # no temporary file left


def test_a_read_only_cache_falls_back_to_a_private_tmp(tmp_path, monkeypatch):
    import shutil
    if shutil.which("cc") is None:
        pytest.skip("needs cc")
    monkeypatch.setattr(pairbench, "PACKAGED", str(tmp_path / "none"))
    blocked = tmp_path / "file"
    blocked.write_text("")  # a cache "directory" under a regular file cannot be made, even by root
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    path = pairbench.locate()
    assert path.startswith(str(tmp_path / "tmp" / f"slogqual-{os.getuid()}" / "pairbench-"))
    assert pairbench.locate() == path
    os.chmod(os.path.dirname(path), 0o755)  # someone else could have put a binary there: not trusted
    assert not pairbench._usable_tmp(os.path.dirname(path))


def test_samples_directories_of_killed_runs_are_removed_and_only_those(tmp_path, monkeypatch):
    """A run killed by SIGKILL leaves its samples directory (slogqual-pair-…, owner.pid inside); the next
    run removes it before it starts. A live owner's, one without owner.pid, and others stay."""
    import subprocess
    gone = subprocess.Popen(["true"])
    gone.wait()  # a PID that existed and is gone
    owners = {"slogqual-pair-killed": gone.pid, "slogqual-pair-live": os.getppid(), "slogqual-pair-nopid": None,
              "slogqual-lab-x": gone.pid}
    for name, pid in owners.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "samples").write_bytes(pairbench.MAGIC)
        if pid is not None:
            (tmp_path / name / "owner.pid").write_text(f"{pid}\n")
    monkeypatch.setattr(pairbench.tempfile, "tempdir", str(tmp_path))
    made = pairbench._owned.make_dir(pairbench.SAMPLES_PREFIX)
    assert open(os.path.join(made, "owner.pid")).read() == f"{os.getpid()}\n"  # its own: kept
    assert pairbench.remove_stale_samples() == [str(tmp_path / "slogqual-pair-killed")]
    kept = ["slogqual-pair-live", "slogqual-pair-nopid", "slogqual-lab-x", os.path.basename(made)]
    assert sorted(os.listdir(tmp_path)) == sorted(kept)
