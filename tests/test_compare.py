"""compare: significance (Welch's t-test) and the minimum effect per size, the mean alone against the
measured floor without spread, exit code 1 on a regression and EXIT_CANNOT_JUDGE when nothing can be
judged; baselines pooling only like runs, exactly; the classifier."""

import copy
import json
import math
import random
import statistics

import pytest

from conftest import fixture_path, load, slogqual
from slogqual.analysis import classes
from slogqual.analysis import compare as cmp
from slogqual.report import classes as class_words
from slogqual.report import compare as compare_words
from slogqual.errors import UsageError
from slogqual.importers import diskinfo
from slogqual.process import EXIT_CANNOT_JUDGE
from slogqual.results import LAT_BASIS_FLUSH_BOUND, LatencyStats, SweepPoint, SweepResult, save_sweep, schema

FIXTURE = fixture_path("diskinfo", "freebsd-r320683-intel710-samsung950pro.collapsed.txt")


def intel_samsung():
    return diskinfo.import_file(FIXTURE)


def with_spread(result, cv=0.05, ios=5000):
    """The imported means as if measured by slogqual: ios IOs per size with sd = cv × mean (diskinfo
    records means only, and a point without spread cannot be judged)."""
    r = copy.deepcopy(result)
    for p in r.points:
        p.ios, p.lat_us.stddev = ios, cv * p.lat_us.mean
    r.source = "slogqual"
    return r


def scaled(result, factor, sizes=None):
    """The same device with its latency (and its spread) multiplied by factor at the given sizes."""
    r = copy.deepcopy(result)
    for p in r.points:
        if sizes is None or p.size in sizes:
            p.lat_us.mean *= factor
            if p.lat_us.stddev is not None:
                p.lat_us.stddev *= factor
            p.iops /= factor
            p.mbps /= factor
    return r


@pytest.mark.parametrize("text,value", [("10%", 0.10), ("0.1", 0.10), ("2.5%", 0.025), (" 15 % ", 0.15)])
def test_threshold_parsing(text, value):
    assert cmp.parse_threshold(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["", "ten", "-5%", "0%", "5%%"])
def test_bad_thresholds(text):
    with pytest.raises(UsageError):
        cmp.parse_threshold(text)


def test_values_ratio_and_flags_per_size():
    # the published means with a tight spread (sd 5 %, 5000 IOs): every change here is far beyond the noise
    intel = with_spread(intel_samsung()[0])
    worse = scaled(intel, 1.25, sizes={4096, 8192})
    better = scaled(worse, 0.8, sizes={1048576})
    c = cmp.compare(intel, better, "latency", 0.10)
    by_size = {r.size: r for r in c.rows}
    assert by_size[4096].a == 158.2 and by_size[4096].b == pytest.approx(197.75)
    assert by_size[4096].ratio == pytest.approx(1.25) and by_size[4096].change_pct == pytest.approx(25.0)
    assert by_size[4096].test.significant and by_size[4096].test.p < 1e-10
    assert [r.size for r in c.regressions] == [4096, 8192]
    assert [r.size for r in c.improvements] == [1048576]
    # the same numbers: no difference, not significant, and no change reported
    assert by_size[512].flag == cmp.NOT_SIGNIFICANT and by_size[512].ratio == pytest.approx(1.0)
    assert by_size[512].change_pct is None
    said = compare_words.summary(c)
    assert "2 regression(s) beyond 10% (4K, 8K)" in said and "12 not significant" in said


def test_minimum_effect_and_metric_direction():
    intel = with_spread(intel_samsung()[0])
    slower = scaled(intel, 1.08)  # significant at 5000 IOs, but under a 10 % minimum effect
    c = cmp.compare(intel, slower, "latency", 0.10)
    assert not c.regressions and {r.flag for r in c.rows} == {cmp.UNDER_FLOOR}
    assert "15 significant but under 10%" in compare_words.summary(c)
    assert len(cmp.compare(intel, slower, "latency", 0.05).regressions) == 15
    # ops/s fall when latency rises: the same sizes are flagged for iops as for latency.
    lat = cmp.compare(intel, scaled(intel, 1.3, {512}), "latency", 0.10)
    iops = cmp.compare(intel, scaled(intel, 1.3, {512}), "iops", 0.10)
    assert [r.size for r in lat.regressions] == [r.size for r in iops.regressions] == [512]


def test_sizes_in_one_result_only():
    intel, _ = intel_samsung()
    part = copy.deepcopy(intel)
    part.points = [p for p in part.points if p.size <= 4096]
    c = cmp.compare(intel, part)
    assert {r.flag for r in c.rows if r.size > 4096} == {cmp.ONLY_A}
    assert not c.regressions
    assert any("diskinfo import" in compare_words.note_words(n) for n in c.notes)


def test_cli_exit_codes_and_json(tmp_path):
    intel = with_spread(intel_samsung()[0], cv=0.5, ios=2000)  # a noisy device: sd half the mean
    save_sweep(str(tmp_path / "a.json"), intel)
    save_sweep(str(tmp_path / "same.json"), scaled(intel, 1.02))
    save_sweep(str(tmp_path / "slow.json"), scaled(intel, 1.5, {4096}))
    ok = slogqual("compare", tmp_path / "a.json", tmp_path / "same.json")
    assert ok.returncode == 0, ok.stderr
    assert "no significant change beyond 10% at 15 size(s); 15 not significant" in ok.stdout
    assert "rule: Welch's t-test" in ok.stdout and "95% confidence" in ok.stdout
    line = next(ln for ln in ok.stdout.splitlines() if ln.strip().startswith("4K"))
    assert line.rstrip().endswith("not significant") and "+2.0%" not in line  # no change reported in the noise
    bad = slogqual("compare", tmp_path / "a.json", tmp_path / "slow.json", "--threshold", "20%")
    assert bad.returncode == 1
    line = next(ln for ln in bad.stdout.splitlines() if ln.strip().startswith("4K"))
    assert "158.2" in line and "237.3" in line and "2000/2000" in line and "79.1/118.6" in line
    assert "+50.0% REGRESSION" in line
    js = slogqual("compare", tmp_path / "a.json", tmp_path / "slow.json", "--json", "--metric", "iops")
    assert js.returncode == 1
    doc = json.loads(js.stdout)
    assert doc["regressions"] == 1 and doc["metric"] == "iops" and doc["schema"] == schema.COMPARE
    assert doc["test"] == "Welch's t-test" and doc["alpha"] == 0.05 and doc["min_effect"] == 0.10
    row = next(r for r in doc["rows"] if r["flag"] == "regression")
    assert row["size"] == 4096 and row["significant"] is True and row["change_pct"] == pytest.approx(-100 / 3)
    assert row["a_latency"]["n"] == 2000 and row["b_latency"]["sd_us"] == pytest.approx(0.5 * 237.3)
    usage = slogqual("compare", tmp_path / "a.json", tmp_path / "same.json", "--threshold", "lots")
    assert usage.returncode == 2 and "bad threshold" in usage.stderr


# --- significance: Welch's t-test on n, mean and sd, and the minimum effect ----------------------------

def point(size=4096, mean=100.0, sd=10.0, n=1000, basis="completion", write=None, flush=None, p99=None):
    return SweepPoint(size=size, ios=n, lat_us=LatencyStats(mean=mean, stddev=sd, p99=p99), iops=1e6 / mean,
                      mbps=size / mean * 1e6 / 2 ** 20, lat_basis=basis, write_lat_us=write, flush_lat_us=flush)


def sweep(*points, mode="dsync", kernel="6.1.0", fio="fio-3.33", host="lab1", kind="block", runtime=1.0):
    r = SweepResult(target={"path": "/dev/x", "kind": kind},
                    params={"mode": mode, "sizes": [], "runtime_s": runtime, "direct": True},
                    environment={"kernel": kernel, "fio_version": fio, "host": host})
    for p in points:
        r.add_point(p)
    return r


def test_a_difference_inside_the_noise_is_not_significant(tmp_path):
    """+30 % between the means of 10 IOs each with sd 50 µs: t = 1.34 at 18 degrees of freedom, p = 0.2.
    The old fixed ±10 % called this a regression."""
    a, b = sweep(point(mean=100.0, sd=50.0, n=10)), sweep(point(mean=130.0, sd=50.0, n=10))
    c = cmp.compare(a, b)
    row = c.rows[0]
    assert row.flag == cmp.NOT_SIGNIFICANT and not c.regressions and row.change_pct is None
    assert row.test.t == pytest.approx(30.0 / math.sqrt(2 * 50.0 ** 2 / 10)) and row.test.df == pytest.approx(18.0)
    assert 0.19 < row.test.p < 0.21
    save_sweep(str(tmp_path / "a.json"), a)
    save_sweep(str(tmp_path / "b.json"), b)
    proc = slogqual("compare", tmp_path / "a.json", tmp_path / "b.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if ln.strip().startswith("4K"))
    assert line.rstrip().endswith("not significant") and "+30" not in line and "1.3" in line  # t shown


def test_a_large_difference_with_tight_spread_is_significant():
    a = sweep(point(mean=100.0, sd=2.0, n=1000))
    c = cmp.compare(a, sweep(point(mean=115.0, sd=2.0, n=1000)))
    row = c.rows[0]
    assert row.flag == cmp.REGRESSION and row.test.p < 1e-12 and row.change_pct == pytest.approx(15.0)
    assert compare_words.flag_text(c, row) == "+15.0% REGRESSION"
    # significant, yet smaller than the minimum effect: not flagged, and said so
    c = cmp.compare(a, sweep(point(mean=103.0, sd=2.0, n=1000)))
    assert c.rows[0].test.significant and c.rows[0].flag == cmp.UNDER_FLOOR and not c.regressions
    assert compare_words.flag_text(c, c.rows[0]) == "significant, under 10%" and c.rows[0].change_pct is None
    assert cmp.compare(a, sweep(point(mean=103.0, sd=2.0, n=1000)), min_effect=0.02).regressions
    # the same +15 % inside a wide spread is noise
    c = cmp.compare(sweep(point(mean=100.0, sd=200.0, n=20)), sweep(point(mean=115.0, sd=200.0, n=20)))
    assert c.rows[0].flag == cmp.NOT_SIGNIFICANT


@pytest.mark.parametrize("t,df", [(12.706, 1), (4.303, 2), (2.228, 10), (2.042, 30), (1.984, 100), (1.960, 1e6)])
def test_two_sided_p_at_the_t_tables_95_percent_values(t, df):
    assert cmp.t_two_sided_p(t, df) == pytest.approx(0.05, abs=2e-4)
    assert cmp.t_two_sided_p(-t, df) == pytest.approx(0.05, abs=2e-4)


def test_welch_degrees_of_freedom_for_unequal_spreads():
    a, b = cmp.Sample(n=5, mean=10.0, sd=1.0), cmp.Sample(n=50, mean=14.0, sd=10.0)
    w = cmp.welch(a, b)
    va, vb = 1.0 / 5, 100.0 / 50
    assert w.t == pytest.approx(4.0 / math.sqrt(va + vb))
    assert w.df == pytest.approx((va + vb) ** 2 / (va ** 2 / 4 + vb ** 2 / 49))  # Welch–Satterthwaite
    assert 0.0 < w.p < 0.05


def test_without_spread_or_with_one_io_it_judges_the_mean_alone(tmp_path):
    intel, _ = intel_samsung()  # a diskinfo import: means only; judged on the mean alone
    slow = scaled(intel, 1.5)  # +50 %: well inside what a 1 s mean moves between runs
    c = cmp.compare(intel, slow)
    assert {r.flag for r in c.rows} == {cmp.WITHIN_FLOOR} and {r.basis for r in c.rows} == {cmp.BASIS_MEAN}
    assert not c.regressions and c.outcome == cmp.OUTCOME_NO_REGRESSION
    assert all(r.test is None and r.floor == cmp.MEAN_ALONE_FLOOR for r in c.rows)
    assert compare_words.summary(c) == "no significant change at 15 size(s) judged on the mean alone (floor ±259%)"
    # one IO has no spread either: 3× is inside the floor, 4× beyond it
    one = cmp.compare(sweep(point(n=1)), sweep(point(mean=300.0, n=1)))
    assert one.rows[0].flag == cmp.WITHIN_FLOOR and one.rows[0].test is None
    one = cmp.compare(sweep(point(n=1)), sweep(point(mean=400.0, n=1)))
    assert one.rows[0].flag == cmp.REGRESSION and one.rows[0].basis == cmp.BASIS_MEAN
    save_sweep(str(tmp_path / "a.json"), intel)
    save_sweep(str(tmp_path / "slow.json"), slow)
    proc = slogqual("compare", tmp_path / "a.json", tmp_path / "slow.json")
    assert proc.returncode == 0 and "REGRESSION" not in proc.stdout, proc.stdout + proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if ln.strip().startswith("4K"))
    assert line.rstrip().endswith("no significant change (mean alone, floor ±259%)")


# --- mean alone: documents without spread (every diskinfo import) ------------------------------------------

REPEATS = "compare"  # tests/fixtures/compare/: 6 + 6 real sweeps of one scratch file (README.md there)


def repeat_means(engine):
    """Per size, the mean write+flush latencies of the six repeated runs of one engine."""
    docs = [load(fixture_path(REPEATS, f"repeat-{engine}-{i}.sweep.json")) for i in range(1, 7)]
    sizes = sorted({p["size"] for d in docs for p in d["points"]})
    return {size: [next(p["lat_us"]["mean"] for p in d["points"] if p["size"] == size) for d in docs]
            for size in sizes}


def test_the_floor_is_the_measured_repeatability_of_a_1s_mean():
    # the limit by hand: two sizes, ln-means (0, 0.2) and (1, 1.2, 1.4): σ² = (0.02 + 0.08) / (1 + 2)
    hand = math.exp(1.959964 * math.sqrt(2) * math.sqrt(0.1 / 3)) - 1
    assert cmp.repeatability_limit([[1.0, math.exp(0.2)], [math.e, math.exp(1.2), math.exp(1.4)]]) == \
        pytest.approx(hand, rel=1e-6)
    with pytest.raises(ValueError):
        cmp.repeatability_limit([[100.0], [200.0]])
    pair = repeat_means("pair")
    assert sorted(pair) == [4096, 131072, 1048576] and all(len(m) == 6 for m in pair.values())
    assert round(cmp.repeatability_limit(list(pair.values())), 2) == cmp.MEAN_ALONE_FLOOR
    # fio's flush mode moved more between the same runs on the same machine: the floor is not the loosest
    assert cmp.repeatability_limit(list(repeat_means("fio").values())) > cmp.MEAN_ALONE_FLOOR


def imported(tmp_path):
    """The two devices of the real r320683 log, imported as the CLI does: Intel 710, Samsung 950 PRO."""
    log = fixture_path("diskinfo", "freebsd-r320683-intel710-samsung950pro.padded.txt")
    proc = slogqual("import", "diskinfo", log, "-o", tmp_path / "d.json", "--no-store")
    assert proc.returncode == 0, proc.stderr
    return tmp_path / "d-1.json", tmp_path / "d-2.json"


def test_two_devices_15x_apart_are_judged_on_the_mean_alone(tmp_path):
    intel, samsung = imported(tmp_path)
    proc = slogqual("compare", intel, samsung)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the NVMe's small writes: a regression
    line = next(ln for ln in proc.stdout.splitlines() if ln.strip().startswith("512"))
    assert "138" in line and "2092.9" in line and line.rstrip().endswith(
        "+1413.3% REGRESSION (mean alone, floor ±259%)")
    assert "on the mean alone: flagged when larger than ±259%" in proc.stdout  # the rule says the basis
    js = slogqual("compare", intel, samsung, "--json")
    assert js.returncode == 1
    doc = json.loads(js.stdout)
    assert doc["outcome"] == "regression" and doc["mean_alone_floor"] == cmp.MEAN_ALONE_FLOOR
    rows = {r["size"]: r for r in doc["rows"]}
    assert rows[512]["ratio"] == pytest.approx(2092.9 / 138.3) and rows[512]["ratio"] > 15
    assert rows[512]["flag"] == "regression" and rows[512]["basis"] == "mean alone"
    assert rows[512]["floor"] == cmp.MEAN_ALONE_FLOOR and rows[512]["t"] is None and rows[512]["p"] is None
    # the other way round every flagged size flips, and a size inside the floor stays inside it
    back = json.loads(slogqual("compare", samsung, intel, "--json").stdout)
    flip = {"regression": "improvement", "improvement": "regression",
            cmp.WITHIN_FLOOR: cmp.WITHIN_FLOOR}
    assert {r["size"]: r["flag"] for r in back["rows"]} == {s: flip[r["flag"]] for s, r in rows.items()}
    assert {r["flag"] for r in doc["rows"]} == {"regression", "improvement", cmp.WITHIN_FLOOR}
    # a document compared with itself: no change at any size, exit 0
    same = slogqual("compare", intel, intel)
    assert same.returncode == 0, same.stdout + same.stderr
    assert "mean latency: no significant change at 15 size(s) judged on the mean alone (floor ±259%)" in same.stdout


def test_one_side_with_spread_and_one_without_is_judged_on_the_mean_alone():
    intel, samsung = intel_samsung()
    c = cmp.compare(with_spread(intel), samsung)  # slogqual's own sweep against a diskinfo import
    assert {r.basis for r in c.rows} == {cmp.BASIS_MEAN} and c.rows[0].flag == cmp.REGRESSION
    # a minimum effect beyond the floor is the larger bar, and the one the rows carry
    c = cmp.compare(intel, scaled(intel, 3.7), min_effect=3.0)
    assert {r.flag for r in c.rows} == {cmp.WITHIN_FLOOR} and c.rows[0].floor == 3.0
    assert {r.flag for r in cmp.compare(intel, scaled(intel, 3.7)).rows} == {cmp.REGRESSION}
    # a baseline pooling a run without spread has none either
    stored = [("run 1", sweep(point(mean=100.0, sd=None))), ("run 2", sweep(point(mean=100.0, sd=5.0)))]
    row = cmp.against_baseline(sweep(point(mean=500.0, sd=5.0)), stored).rows[0]
    assert row.basis == cmp.BASIS_MEAN and row.flag == cmp.REGRESSION


def test_documents_with_spread_are_judged_by_welch_as_before():
    intel = with_spread(intel_samsung()[0])
    c = cmp.compare(intel, scaled(intel, 1.25, sizes={4096}))
    assert {r.basis for r in c.rows} == {cmp.BASIS_WELCH} and all(r.floor is None for r in c.rows)
    assert [r.size for r in c.regressions] == [4096]
    assert "mean alone" not in compare_words.rule(c) + compare_words.summary(c)
    assert "mean alone" not in " ".join(compare_words.flag_text(c, r) for r in c.rows)


def test_cannot_judge_has_its_own_exit_code(tmp_path):
    intel, samsung = imported(tmp_path)
    # a percentile is never judged, and a diskinfo import records none
    proc = slogqual("compare", intel, samsung, "--metric", "p99")
    assert proc.returncode == EXIT_CANNOT_JUDGE not in (0, 1, 2, 3), proc.stdout + proc.stderr
    assert "cannot judge any of 15 size(s): no spread is recorded for a percentile" in proc.stdout
    line = next(ln for ln in proc.stdout.splitlines() if ln.strip().startswith("4K"))
    assert line.rstrip().endswith("cannot judge (a percentile)")
    # no size in both
    small, large = load(intel), load(samsung)
    small["points"] = [p for p in small["points"] if p["size"] <= 4096]
    large["points"] = [p for p in large["points"] if p["size"] > 4096]
    (tmp_path / "small.json").write_text(json.dumps(small))
    (tmp_path / "large.json").write_text(json.dumps(large))
    proc = slogqual("compare", tmp_path / "small.json", tmp_path / "large.json", "--json")
    assert proc.returncode == EXIT_CANNOT_JUDGE, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["outcome"] == "cannot judge" and doc["regressions"] == 0
    assert doc["summary"] == "cannot judge: no size measured in both A and B"
    # one size in both that cannot be judged keeps the rest from passing; a regression still wins
    c = cmp.compare(sweep(point(4096), point(8192)), sweep(point(4096), point(8192, mean=-1.0)))
    assert c.outcome == cmp.OUTCOME_CANNOT_JUDGE and c.rows[1].why == cmp.WHY_NO_VALUE
    assert compare_words.summary(c) == "no significant change beyond 10% at 1 size(s); 1 not significant; 1 cannot judge"
    c = cmp.compare(sweep(point(4096), point(8192)), sweep(point(4096, mean=200.0), point(8192, mean=-1.0)))
    assert c.outcome == cmp.OUTCOME_REGRESSION


def test_flush_mode_spread_is_an_upper_bound_and_percentiles_are_not_judged():
    def flush_point(mean):
        return point(mean=mean, sd=None, basis=LAT_BASIS_FLUSH_BOUND, p99=2 * mean,
                     write=LatencyStats(mean=20.0, stddev=3.0), flush=LatencyStats(mean=mean - 20.0, stddev=4.0))

    s = cmp.sample_of(flush_point(100.0))
    assert s.sd == 7.0 and s.sd_bound  # sd(W + F) <= sd(W) + sd(F)
    a, b = sweep(flush_point(100.0), mode="flush"), sweep(flush_point(100.5), mode="flush")
    c = cmp.compare(a, b)
    assert c.rows[0].flag == cmp.NOT_SIGNIFICANT
    assert any("upper bound" in compare_words.note_words(n) for n in c.notes)
    c = cmp.compare(a, sweep(flush_point(300.0), mode="flush"), "p99")
    assert c.rows[0].flag == cmp.CANNOT_JUDGE and not c.regressions
    notes = [compare_words.note_words(n) for n in c.notes]
    assert any("percentile" in n for n in notes) and any("upper bounds" in n for n in notes)


# --- baselines: only like runs, pooled exactly -------------------------------------------------------------

def test_pooling_is_exact():
    """n, mean and sd of a pool are those of all the runs' IOs put together, not averages of the runs."""
    rng = random.Random(7)
    runs = [[rng.lognormvariate(4.6, 0.3) for _ in range(n)] for n in (5, 40, 300)]
    every = [v for x in runs for v in x]
    p = cmp.pool([cmp.Sample(n=len(x), mean=statistics.fmean(x), sd=statistics.stdev(x), seconds=sum(x) / 1e6)
                  for x in runs])
    assert p.n == 345 and p.runs == 3
    assert p.mean == pytest.approx(statistics.fmean(every), rel=1e-12)
    assert p.sd == pytest.approx(statistics.stdev(every), rel=1e-12)
    assert p.seconds == pytest.approx(sum(every) / 1e6, rel=1e-12)
    assert p.mean != pytest.approx(statistics.fmean(statistics.fmean(x) for x in runs), rel=1e-4)
    # through a baseline of sweeps: the same pool, and ops/s are all the IOs over all the time
    stored = [(f"run {i}", sweep(point(mean=statistics.fmean(x), sd=statistics.stdev(x), n=len(x))))
              for i, x in enumerate(runs)]
    new = sweep(point(mean=100.0, sd=30.0, n=345))
    row = cmp.against_baseline(new, stored).rows[0]
    assert row.a_sample.n == 345 and row.a == pytest.approx(statistics.fmean(every), rel=1e-12)
    assert row.a_sample.sd == pytest.approx(statistics.stdev(every), rel=1e-12)
    assert cmp.against_baseline(new, stored, "iops").rows[0].a == pytest.approx(345 / (sum(every) / 1e6), rel=1e-12)
    a_sd = cmp.pool([cmp.Sample(n=2, mean=1.0, sd=None), cmp.Sample(n=2, mean=2.0, sd=1.0)])
    assert a_sd.sd is None and a_sd.mean == 1.5  # one run without spread: the pool has none


def test_baseline_pools_only_like_runs_and_names_the_rest():
    like1, like2 = sweep(point(mean=100.0, sd=5.0)), sweep(point(mean=102.0, sd=5.0))
    stored = [("run 1", like1), ("run 2", sweep(point(mean=50.0, sd=5.0), kernel="6.8.0")),
              ("run 3", like2), ("run 4", sweep(point(mean=50.0, sd=5.0), fio="fio-3.36")),
              ("run 5", sweep(point(mean=50.0, sd=5.0), mode="flush")),
              ("run 6", sweep(point(mean=50.0, sd=5.0), host="lab2", runtime=2.0))]
    new = sweep(point(mean=101.0, sd=5.0))
    c = cmp.against_baseline(new, stored)
    assert c.pooled == ["run 1", "run 3"] and c.runs == 2
    assert [compare_words.left_out_text(x) for x in c.left_out] == ["run 2: kernel 6.8.0 (new: 6.1.0)",
                                              "run 4: fio version fio-3.36 (new: fio-3.33)",
                                              "run 5: mode flush (new: dsync)",
                                              "run 6: runtime 2.0 (new: 1.0); host lab2 (new: lab1)"]
    row = c.rows[0]
    assert row.a_sample.runs == 2 and row.a_sample.n == 2000 and row.a == pytest.approx(101.0)
    assert row.flag == cmp.NOT_SIGNIFICANT  # had the 50 µs runs been pooled, this would be a regression
    slow = cmp.against_baseline(sweep(point(mean=130.0, sd=5.0)), stored)
    assert [r.size for r in slow.regressions] == [4096] and "1 regression(s) beyond 10% (4K)" in compare_words.summary(slow)
    with pytest.raises(UsageError, match="percentiles"):
        cmp.against_baseline(new, stored, "p99")


# --- the classifier ------------------------------------------------------------------------------

def test_classifier_on_the_published_curves():
    intel, samsung = intel_samsung()
    ci = classes.classify(intel)
    assert ci.class_key == "sas" and ci.in_band
    assert ci.small_io_sizes == [512, 1024, 2048, 4096]
    assert ci.small_io_latency_us == pytest.approx((138.3 + 151.1) / 2)  # median of the four means
    assert class_words.summary(ci) == ("enterprise SAS SSD-class small-IO latency (145 µs; band 50 µs–200 µs); "
                          "bandwidth-capped at ~172 MiB/s from 128K up")
    cs = classes.classify(samsung)
    assert cs.class_key == "sata" and not cs.in_band
    assert "between the SATA flash class" in class_words.summary(cs) and "nearer SATA flash" in class_words.summary(cs)
    assert "still rising at 8M (743 MiB/s)" in class_words.summary(cs)


@pytest.mark.parametrize("lat,key,phrase", [
    (2.5, "nvdimm", "NVDIMM-class"),
    (25.0, "nvme", "enterprise NVMe / Optane-class"),
    (1000.0, "sata", "SATA flash-class"),
    (15000.0, "hdd", "7.2K HDD-class"),
    (0.3, "nvdimm", "below every reference class"),
    (90000.0, "hdd", "slower than the 7.2K HDD class"),
    (42.0, "nvme", "nearer enterprise NVMe / Optane"),
    (48.0, "sas", "nearer enterprise SAS SSD"),
])
def test_classifier_words(lat, key, phrase):
    intel, _ = intel_samsung()
    r = scaled(intel, lat / 144.7)
    c = classes.classify(r)
    assert c.class_key == key and phrase in class_words.summary(c)


def test_bandwidth_falling_off_like_a_small_optane():
    intel, _ = intel_samsung()
    r = copy.deepcopy(intel)
    for p in r.points:
        if p.size >= 1048576:
            p.mbps = 171.0 * 1048576 / p.size  # controller limit: MiB/s fall as writes grow
    c = classes.classify(r)
    assert c.bandwidth.kind == "falls" and "falls to" in class_words.bandwidth_words(c)


def test_classifier_says_when_the_target_is_a_stack_not_a_device():
    intel, _ = intel_samsung()
    r = copy.deepcopy(intel)
    r.target["kind"] = "scratch"
    assert class_words.summary(classes.classify(r)).startswith(
        "a scratch target (the class of the whole stack under it): enterprise SAS SSD-class")
    r.target["kind"] = "block"
    r.device = {"class": "virtual", "transport": "virtio"}
    assert class_words.summary(classes.classify(r)).startswith("a virtual target")
    r.device = {"class": "sas-ssd", "transport": "sas"}
    assert class_words.summary(classes.classify(r)).startswith("enterprise SAS SSD-class")


def test_a_result_holding_nan_is_an_error_not_no_change(tmp_path):
    """Python's json writes and reads NaN; JSON has no such number. A result with a NaN mean used to
    compare as "no change" with exit 0, so a broken result passed a regression gate."""
    intel, _ = intel_samsung()
    save_sweep(str(tmp_path / "a.json"), intel)
    doc = json.loads((tmp_path / "a.json").read_text())
    for p in doc["points"]:
        p["lat_us"]["mean"] = float("nan")
    (tmp_path / "nan.json").write_text(json.dumps(doc))  # json.dumps writes the bare token NaN
    assert "NaN" in (tmp_path / "nan.json").read_text()
    for args in (("a.json", "nan.json"), ("nan.json", "a.json")):
        proc = slogqual("compare", *[tmp_path / a for a in args])
        assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
        assert "NaN is not a JSON number" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
