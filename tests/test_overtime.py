"""Latency over time, the collapse point, the batch-means interval, --precision and --sustain: on
constructed samples (the relations are exact there), and the sweep's parameters and documents."""

import dataclasses
import math

import pytest

from conftest import engine_summary, slogqual
from slogqual.analysis import overtime, precision
from slogqual.errors import UsageError
from slogqual.report import overtime_plot
from slogqual.report import sweep as sweep_words
from slogqual.results import SweepResult
from slogqual.results.schema import DocumentError
from slogqual.sweep.engine import SweepParams, point_from_pair
from slogqual.sweep.target import Target
from slogqual.units import GiB, MiB, parse_percent, parse_sustain

MS = 1_000_000  # ns


def back_to_back(pairs_ns):
    """start, write, flush arrays of IOs that follow each other without a gap (write = flush = half)."""
    start, write, flush, t = [], [], [], 0
    for p in pairs_ns:
        start.append(t)
        write.append(p // 2)
        flush.append(p - p // 2)
        t += p
    return start, write, flush, t


# --- aggregate ---------------------------------------------------------------------------------------

def test_aggregate_buckets_by_start_time_with_exact_figures():
    # 0-100 ms: ten IOs of 10 ms; 100-200 ms: one IO of 100 ms
    start, write, flush, end = back_to_back([10 * MS] * 10 + [100 * MS])
    over = overtime.aggregate(start, write, flush, 4096, 100, elapsed_ns=end)
    assert over.t_s == [0.0, 0.1] and over.ios == [10, 1] and over.end_s == 0.2
    assert over.mean_us == [10000.0, 100000.0] and over.p99_us == [10000.0, 100000.0]
    assert over.max_us == [10000.0, 100000.0]
    assert over.mbps[0] == pytest.approx(10 * 4096 / 0.1 / MiB, rel=1e-3)
    assert sum(over.ios) == len(start)


def test_an_interval_without_io_is_a_gap_not_nothing():
    # one IO of 350 ms: it starts in the first interval, nothing starts in the next three
    start, write, flush, end = back_to_back([350 * MS, 1 * MS])
    over = overtime.aggregate(start, write, flush, 4096, 100, elapsed_ns=end)
    assert over.ios == [1, 0, 0, 1] and over.mean_us[1] is None and over.mbps[1] == 0.0
    d = over.to_dict()
    assert overtime.OverTime.from_dict(d).to_dict() == d
    assert set(d) == {"interval_ms", "end_s", *overtime.COLUMNS}


def test_aggregate_refuses_bad_input():
    with pytest.raises(ValueError):
        overtime.aggregate([0], [1, 2], [1], 4096)
    with pytest.raises(ValueError):
        overtime.aggregate([0], [1], [1], 4096, interval_ms=0)


# --- collapse ----------------------------------------------------------------------------------------

def steady_then(rate_ios_per_interval, after_ios_per_interval, switch_at, total, interval_ms=100):
    """An OverTime of constant IO counts that change at interval index switch_at."""
    ios = [rate_ios_per_interval] * switch_at + [after_ios_per_interval] * (total - switch_at)
    step = interval_ms / 1000
    return overtime.OverTime(interval_ms=interval_ms, end_s=total * step, t_s=[round(i * step, 6) for i in range(total)],
                             ios=ios, mean_us=[1.0] * total, p99_us=[1.0] * total, max_us=[1.0] * total,
                             mbps=[n * 4096 / step / MiB for n in ios])


def test_collapse_found_at_the_interval_where_bandwidth_dropped():
    over = steady_then(100, 10, switch_at=150, total=300)  # 15 s at full speed, then a tenth
    c = overtime.collapse(over, 4096)
    assert c.evaluated and c.t_s == pytest.approx(15.0)
    assert c.bytes_before == 150 * 100 * 4096
    assert c.baseline_mbps == pytest.approx(100 * 4096 / 0.1 / MiB, rel=1e-3)
    assert c.lowest_window_mbps == pytest.approx(c.baseline_mbps / 10, rel=1e-2)  # stored to 3 decimals
    assert "15.0 s" in sweep_words.collapse_why(c)


def test_no_collapse_when_bandwidth_holds_and_a_single_slow_interval_is_not_one():
    over = steady_then(100, 100, switch_at=0, total=300)
    over.ios[200] = 0  # one stalled 100 ms interval: the 1 s window stays above half
    c = overtime.collapse(over, 4096)
    assert c.evaluated and c.t_s is None and c.bytes_before is None and "stayed" in sweep_words.collapse_why(c)


def test_too_short_a_run_is_not_evaluated_and_says_why():
    c = overtime.collapse(steady_then(100, 1, switch_at=50, total=100), 4096)  # 10 s: no window after
    assert not c.evaluated and c.t_s is None and "10 s of baseline" in sweep_words.collapse_why(c)


def test_a_short_last_interval_is_not_a_collapse():
    over = steady_then(100, 100, switch_at=0, total=120)
    over.ios[-1] = 1
    over.end_s = over.t_s[-1] + 0.001  # the run ended 1 ms into the last interval
    assert overtime.collapse(over, 4096).t_s is None


# --- the interval of the mean ------------------------------------------------------------------------

def test_t_quantiles_and_the_conservative_row():
    assert precision.t975(29) == 2.045 and precision.t975(1) == 12.706
    assert precision.t975(12) == precision.t975(10)  # between rows: the smaller df, the wider interval
    with pytest.raises(ValueError):
        precision.t975(0)


def test_batch_means_interval_on_constructed_samples():
    assert precision.mean_interval([5.0] * 59) is None  # fewer than 2 per batch
    flat = precision.mean_interval([5.0] * 600)
    assert flat.half_width == 0 and flat.relative == 0 and flat.per_batch == 20
    # batches alternate 1000 and 3000: batch means have sd 1000.8..., grand mean 2000
    values = [1000.0 if (i // 10) % 2 == 0 else 3000.0 for i in range(300)]
    iv = precision.mean_interval(values, 1000)
    sd = math.sqrt(sum((m - 2000) ** 2 for m in [1000, 3000] * 15) / 29)
    assert iv.mean == 2.0 and iv.half_width == pytest.approx(2.045 * sd / math.sqrt(30) / 1000)
    d = iv.to_dict()
    assert d["lo"] < 2.0 < d["hi"] and d["method"] == "batch means" and d["batches"] == 30


def test_correlated_samples_widen_the_interval():
    # the same values, once interleaved (independent-looking) and once in long runs (correlated):
    # batch means see the correlation, so the second interval is wider
    interleaved = [1.0 if i % 2 else 3.0 for i in range(3000)]
    runs = sorted(interleaved)
    assert precision.mean_interval(runs).half_width > precision.mean_interval(interleaved).half_width


def test_more_time_follows_one_over_sqrt_time():
    iv = precision.Interval(mean=100.0, half_width=4.0, batches=30, per_batch=10)  # ±4 %
    assert precision.more_time(iv, 0.02, 1.0) == pytest.approx(3.0)  # 4x the time halves the width
    assert precision.more_time(iv, 0.05, 1.0) == 0.0
    assert precision.more_time(None, 0.02, 2.5) == 2.5


# --- the point, from the engine's summaries ------------------------------------------------------------

def result(engine, tmp_path, pairs_ns, size=4096):
    """The engine's summaries of IOs back to back, as a run of them would report them."""
    start, write, flush, end = back_to_back(pairs_ns)
    r = engine_summary(engine, tmp_path, start, write, flush, end)
    return dataclasses.replace(r, bytes_written=size * len(pairs_ns), flush="fdatasync")


def test_a_pair_point_carries_its_interval_and_timeline(pair_engine, tmp_path):
    p = point_from_pair(4096, result(pair_engine, tmp_path, [1 * MS] * 100 + [3 * MS] * 100),
                        "2026-11-24T00:00:00+00:00")
    assert p.mean_ci95_us["lo"] <= p.lat_us.mean <= p.mean_ci95_us["hi"]
    assert sum(p.over_time["ios"]) == p.ios == 200
    assert max(p.over_time["max_us"]) == p.lat_us.max == 3000.0
    doc = p.to_dict()
    assert "over_time" in doc and "collapse" not in doc and "precision" not in doc


# --- parameters ---------------------------------------------------------------------------------------

def test_parse_sustain_and_percent():
    assert parse_sustain("90s") == ("duration", 90.0) and parse_sustain("10min") == ("duration", 600.0)
    assert parse_sustain("1.5h") == ("duration", 5400.0) and parse_sustain("20G") == ("bytes", 20 * GiB)
    assert parse_sustain("512M") == ("bytes", 512 * MiB) and parse_sustain("512mib") == ("bytes", 512 * MiB)
    for bad, why in (("10m", "minutes or mebibytes"), ("300", "seconds or bytes"), ("2x", "unknown unit"),
                     ("", "duration"), ("0s", "above 0"), ("-5s", "duration")):
        with pytest.raises(UsageError, match=why):
            parse_sustain(bad)
    assert parse_percent("2%") == 0.02 and parse_percent("0.5") == 0.005
    for bad in ("0%", "100%", "x%", "2%%", "", "5k"):
        with pytest.raises(UsageError):
            parse_percent(bad)


FILE = Target(path="/tmp/x", kind="file", size=1 << 30, direct=True)
NBD = Target(path="nbd://127.0.0.1/x", kind="nbd", size=1 << 30, direct=False)


@pytest.mark.parametrize("kwargs, why", [
    (dict(sizes=[4096, 8192], sustain_s=60.0), "one size"),
    (dict(sizes=[131072], sustain_s=60.0, sustain_bytes=1 << 30), "not both"),
    (dict(sizes=[4096], precision=0.02, engine="fio"), "pair engine"),
    (dict(sizes=[4096], precision=0.02, mode="dsync"), "pair engine"),
    (dict(sizes=[4096], precision=1.5), "below 100"),
    (dict(sizes=[4096], precision=0.02, runtime_s=5.0, max_runtime_s=2.0), "at least --runtime"),
    (dict(sizes=[131072], sustain_s=60.0, precision=0.02), "does not apply"),
    (dict(sizes=[4096], interval_ms=float("nan")), "interval"),
])
def test_bad_parameters_are_refused(kwargs, why):
    with pytest.raises(UsageError, match=why):
        SweepParams(**kwargs).validate()


def test_nbd_targets_have_no_pair_options_and_params_round_trip():
    p = SweepParams(sizes=[131072], sustain_bytes=1 << 30)
    p.validate()
    with pytest.raises(UsageError, match="pair engine"):
        p.check_target(NBD)
    d = p.to_dict(FILE)
    assert d["sustain"] == {"duration_s": None, "bytes": 1 << 30} and d["interval_ms"] == 100
    back = SweepParams.from_dict(d)
    assert back.sustain_bytes == 1 << 30 and back.engine == "pair"
    q = SweepParams(sizes=[4096], precision=0.02, max_runtime_s=10.0)
    assert SweepParams.from_dict(q.to_dict(FILE)).precision == 0.02


# --- documents and the chart -------------------------------------------------------------------------

def sweep_doc(point):
    return {"schema": "slogqual.sweep/1", "target": {"path": "/tmp/x", "kind": "file"}, "params": {"mode": "flush"},
            "environment": {}, "status": "complete", "points": [point]}


def test_a_document_with_a_timeline_loads_and_a_bad_one_names_the_key(pair_engine, tmp_path):
    p = point_from_pair(4096, result(pair_engine, tmp_path, [1 * MS] * 100), "2026-11-24T00:00:00+00:00").to_dict()
    r = SweepResult.from_dict(sweep_doc(p), "r.json")
    assert r.points[0].over_time == p["over_time"]
    bad = dict(p, over_time=dict(p["over_time"], ios=p["over_time"]["ios"] + [1]))
    with pytest.raises(DocumentError, match="different lengths"):
        SweepResult.from_dict(sweep_doc(bad), "r.json")
    bad = dict(p, over_time=dict(p["over_time"], mean_us=["fast"] * len(p["over_time"]["t_s"])))
    with pytest.raises(DocumentError, match=r"over_time.mean_us\[0\]"):
        SweepResult.from_dict(sweep_doc(bad), "r.json")


def test_the_over_time_script_marks_the_collapse(pair_engine, tmp_path):
    pairs = [10 * MS] * 1500 + [100 * MS] * 30  # 15 s at 100 IO/s, then 3 s at 10 IO/s
    point = point_from_pair(131072, result(pair_engine, tmp_path, pairs, 131072), "2026-11-24T00:00:00+00:00")
    point.collapse = sweep_words.collapse_dict(overtime.collapse(overtime.OverTime.from_dict(point.over_time), 131072))
    assert point.collapse["t_s"] == pytest.approx(15.0)
    r = SweepResult.from_dict(sweep_doc(point.to_dict()), "r.json")
    spec = overtime_plot.build_spec(r)
    text = overtime_plot.script(spec, "/tmp/o.png", "png")
    assert "set arrow 1 from 15," in text and "below half at 15.0 s" in text and "multiplot" in text
    assert text.count("\n") > len(spec.over)  # the data travel in the script
    with pytest.raises(UsageError, match="no 4K point"):
        overtime_plot.build_spec(r, 4096)


def test_cli_refuses_ambiguous_sustain_in_one_line(tmp_path):
    for argv, why in ((["--sustain", "10m"], "minutes or mebibytes"),
                      (["--max-runtime", "5"], "--precision"),
                      (["--precision", "2%", "--engine", "fio"], "pair engine")):
        proc = slogqual("sweep", tmp_path / "t.img", *argv, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert why in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert list(tmp_path.iterdir()) == []  # nothing written
