"""The pair engine summarises in C what the sweep reports (issue #26: no Python in the hot loop). Here
its summaries of recorded samples files (``pairbench --summarize``, the code a run uses) are held
against Python's analysis of the same samples, as the sweep computed every point before: the same
nearest-rank percentiles, min and max to the nanosecond, the same mean and stddev, the same
batch-means interval and the same latency over time — compared as the sweep point's figures, exactly.
"""

import math
import operator
import random
from array import array

import pytest

from conftest import engine_summary
from slogqual.analysis import overtime, percentiles, precision
from slogqual.sweep.engine import point_from_pair
from slogqual.tools import pairbench

STARTED = "2026-11-26T00:00:00+00:00"
SIZE = 4096


def python_figures(start, write, flush, elapsed_ns, interval_ms=100.0):
    """The point's figures as Python made them from every sample (sweep.point_from_pair before #26)."""
    pairs = list(map(operator.add, write, flush))

    def exact(values):
        s = percentiles.summarize(values, 1000)
        return dict(mean=s.mean, min=s.min, max=s.max, stddev=s.stddev, **s.percentiles)

    interval = precision.mean_interval(pairs, 1000)
    return {"lat_us": exact(pairs), "write_lat_us": exact(write), "flush_lat_us": exact(flush),
            "mean_ci95_us": interval.to_dict() if interval else None,
            "over_time": overtime.aggregate(start, write, flush, SIZE, interval_ms, elapsed_ns=elapsed_ns,
                                            pairs=pairs).to_dict()}


def engine_figures(r, interval_ms=100.0):
    p = point_from_pair(SIZE, r, STARTED, interval_ms)
    return {"lat_us": p.lat_us.to_dict(), "write_lat_us": p.write_lat_us.to_dict(),
            "flush_lat_us": p.flush_lat_us.to_dict(), "mean_ci95_us": p.mean_ci95_us, "over_time": p.over_time}


def check_series(r, name, values):
    """The engine's integers against the definition, and its mean and stddev within rounding."""
    s = r.series[name]
    ordered = sorted(values)
    assert (s.n, s.min, s.max, s.total) == (len(values), ordered[0], ordered[-1], sum(values))
    assert s.squares == sum(v * v for v in values)
    assert s.percentiles == {k: percentiles.nearest_rank(ordered, q) for k, q in percentiles.REPORTED}
    mine = percentiles.from_moments(s.n, s.total, s.squares, s.min, s.max, s.percentiles)
    theirs = percentiles.summarize(values)
    assert mine.mean == pytest.approx(theirs.mean, rel=1e-12)
    assert mine.stddev == pytest.approx(theirs.stddev, rel=1e-12, abs=1e-12)


def back_to_back(write, flush, gap_ns=0):
    """Start times of IOs that follow each other (QD1), gap_ns apart; and the run's end."""
    start, t = [], 0
    for w, f in zip(write, flush):
        start.append(t)
        t += w + f + gap_ns
    return start, t


def same_figures(engine, tmp_path, write, flush, gap_ns=0, interval_ms=100.0):
    start, end = back_to_back(write, flush, gap_ns)
    r = engine_summary(engine, tmp_path, start, write, flush, end, interval_ms)
    assert r.ios == len(write) and r.elapsed_ns == end and r.rounds == 0
    for name, values in (("pair", list(map(operator.add, write, flush))), ("write", write), ("flush", flush)):
        check_series(r, name, values)
    assert engine_figures(r, interval_ms) == python_figures(start, write, flush, end, interval_ms)
    return r


def test_one_sample(pair_engine, tmp_path):
    r = same_figures(pair_engine, tmp_path, [107329], [2000])
    assert r.series["pair"].percentiles == dict.fromkeys(pairbench.PERCENTILES, 109329)
    assert r.batches.per == 0 and r.intervals.ios == [1]


def test_two_samples(pair_engine, tmp_path):
    r = same_figures(pair_engine, tmp_path, [1000, 3000], [500, 500])
    assert r.series["pair"].percentiles["p50"] == 1500  # ceil(0.5 * 2) = rank 1
    assert r.series["pair"].percentiles["p90"] == 3500


def test_ties(pair_engine, tmp_path):
    same_figures(pair_engine, tmp_path, [5000] * 100, [1000] * 100)  # every sample the same
    rnd = random.Random(26)
    write = [rnd.choice((1000, 2000, 3000)) for _ in range(10_000)]  # three values, many ties
    same_figures(pair_engine, tmp_path, write, [rnd.choice((100, 200)) for _ in write], interval_ms=3.0)


def test_ranks_at_the_boundaries_of_the_rank_rule(pair_engine, tmp_path):
    # 1000 and 10000 samples 1..n: 99.9 % of 1000 is rank 999 (not 1000), 99.99 % of 10000 rank 9999
    for n in (1000, 10_000, 10_001):
        values = list(range(1, n + 1))
        random.Random(n).shuffle(values)
        r = same_figures(pair_engine, tmp_path, [v * 1000 for v in values], [0] * n)
        assert r.series["pair"].percentiles["p999"] == percentiles.rank(99.9, n) * 1000


def test_random_samples_with_stalls_and_empty_intervals(pair_engine, tmp_path):
    rnd = random.Random(7)
    write = [int(rnd.lognormvariate(8, 0.6)) for _ in range(50_000)]
    flush = [int(rnd.lognormvariate(9, 1.2)) if i % 5000 else 300_000_000 for i in range(50_000)]  # stalls
    r = same_figures(pair_engine, tmp_path, write, flush, gap_ns=1000, interval_ms=12.5)
    assert 0 in r.intervals.ios  # a stall longer than an interval leaves an interval without IOs
    assert r.batches.per == 50_000 // 30


def test_ten_million_samples(pair_engine, tmp_path):
    """The scale of a fast device's size under --precision (the issue's sweep summarised 93 million):
    sums past 2**32, squares past 2**64, the file read in many chunks, the arrays grown many times.
    Python's reference on every sample is most of this test's time (about 8 s here)."""
    n = 10_000_000
    rnd = random.Random(10)

    def random_ns(nbytes):  # deterministic, made at C speed: little-endian uint64 of nbytes random bytes
        raw, out = rnd.randbytes(nbytes * n), bytearray(8 * n)
        for b in range(nbytes):
            out[b::8] = raw[b::nbytes]
        return array("Q", bytes(out))

    write, flush = random_ns(2), random_ns(3)  # up to 65.5 µs and 16.8 ms: many ties, a long tail
    start = array("Q", range(0, n * 20_000, 20_000))  # 20 µs apart: 200 s, 2000 intervals (time places IOs only)
    end = n * 20_000
    r = engine_summary(pair_engine, tmp_path, start, write, flush, end)
    pairs = array("Q", map(operator.add, write, flush))
    s = r.series["pair"]
    assert r.ios == n and s.total > 1 << 32 and s.squares > 1 << 64
    # the pair: every figure the sweep reports from it, against Python's functions on every sample
    ps = percentiles.summarize(pairs, 1000)
    point = point_from_pair(SIZE, r, STARTED)
    assert point.lat_us.to_dict() == dict(mean=ps.mean, min=ps.min, max=ps.max, stddev=ps.stddev, **ps.percentiles)
    assert point.mean_ci95_us == precision.mean_interval(pairs, 1000).to_dict()
    # over time (in full on the smaller sets above): every interval holds its 5000 IOs, their sums all of them
    assert r.intervals.ios == [5000] * 2000 and sum(r.intervals.sums) == s.total
    # the write and the flush (the same C as the pair's, in full on the smaller sets above)
    for name, values in (("write", write), ("flush", flush)):
        got = r.series[name]
        assert (got.total, got.min, got.max) == (sum(values), min(values), max(values))
        assert got.min <= got.percentiles["p50"] <= got.percentiles["p99"] <= got.max
    assert math.isclose(point.write_lat_us.mean + point.flush_lat_us.mean, point.lat_us.mean, rel_tol=1e-12)


def test_a_file_that_is_not_samples_is_a_typed_error(pair_engine, tmp_path):
    from slogqual.errors import ToolFailedError

    bad = tmp_path / "bad"
    bad.write_bytes(b"nope")
    with pytest.raises(ToolFailedError, match="not a samples file"):
        pairbench.summarize_file(str(bad), binary=pair_engine)
    bad.write_bytes(pairbench.MAGIC + b"\0" * 25)
    with pytest.raises(ToolFailedError, match="whole"):
        pairbench.summarize_file(str(bad), binary=pair_engine)
    bad.write_bytes(pairbench.MAGIC)
    with pytest.raises(ToolFailedError, match="no samples"):
        pairbench.summarize_file(str(bad), binary=pair_engine)
    from conftest import samples_file
    with pytest.raises(ToolFailedError, match="do not ascend"):
        pairbench.summarize_file(samples_file(bad, [5, 1], [1, 1], [1, 1]), binary=pair_engine)
