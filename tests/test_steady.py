"""Steady state (SNIA SSS PTS rule) on synthetic series: the rule exactly, and the rounds loop."""

import random

import pytest

from slogqual.qualify import steady


def test_least_squares_slope_matches_the_textbook_formula():
    assert steady.least_squares_slope([1, 2, 3, 4, 5]) == pytest.approx(1.0)
    assert steady.least_squares_slope([10, 10, 10]) == 0.0
    # y = 3 - 0.5x with symmetric noise that cancels in the fit
    assert steady.least_squares_slope([3.1, 2.4, 2.1, 1.4, 1.1]) == pytest.approx(-0.5, abs=1e-9)
    assert steady.least_squares_slope([7.0]) == 0.0


def test_flat_series_is_steady():
    c = steady.check([1000, 1010, 990, 1005, 995])
    assert c.reached and c.window == [1000, 1010, 990, 1005, 995]
    assert c.mean == pytest.approx(1000) and c.excursion == pytest.approx(20)


def test_fewer_rounds_than_the_window_is_not_steady():
    c = steady.check([1000, 1000, 1000, 1000])
    assert not c.reached and "4 of 5" in c.reason


def test_only_the_last_five_rounds_count():
    assert steady.check([50, 5000, 1000, 1000, 1000, 1000]).reached is False  # 5000 still in the window
    assert steady.check([50, 5000, 1000, 1000, 1000, 1000, 1000]).reached is True


def test_range_rule_is_20_percent_of_the_window_mean_inclusive():
    # mean 100, max-min exactly 20, slope zero (symmetric): on the limit -> reached
    at_limit = [90, 110, 100, 110, 90]
    c = steady.check(at_limit)
    assert c.mean == pytest.approx(100) and c.excursion == pytest.approx(20) and c.slope == pytest.approx(0)
    assert c.reached
    # a hair over: not reached, and the reason says it is the range
    over = [89.9, 110.1, 100, 110.1, 89.9]
    c = steady.check(over)
    assert not c.reached and "range" in c.reason and "slope" not in c.reason


def test_slope_rule_is_the_fitted_excursion_over_the_window_within_10_percent():
    # A straight ramp 96, 98, 100, 102, 104: mean 100, range 8 (fine), slope 2 per round,
    # fitted excursion 2 * 4 = 8 <= 10 -> reached
    assert steady.check([96, 98, 100, 102, 104]).reached
    # 2.5 per round: excursion 10 = exactly 10 % of 100 -> reached (inclusive)
    c = steady.check([95, 97.5, 100, 102.5, 105])
    assert c.slope_excursion == pytest.approx(10) and c.reached
    # 3 per round: range 12 is within 20 %, but the fitted excursion 12 > 10 -> not reached
    c = steady.check([94, 97, 100, 103, 106])
    assert c.excursion == pytest.approx(12) and c.excursion <= 0.2 * c.mean
    assert not c.reached and "slope" in c.reason and "range" not in c.reason


def test_slope_rule_uses_the_least_squares_fit_not_first_minus_last():
    # Endpoints 91 -> 109 would be an 18 % "drift" by first-minus-last, but the least-squares line
    # through all five rounds moves only 1.8 per round (7.2 over the window): steady by SNIA's rule.
    ys = [91, 109, 100, 91, 109]
    c = steady.check(ys)
    assert c.slope == pytest.approx(1.8) and c.slope == pytest.approx(steady.least_squares_slope(ys))
    assert c.slope_excursion == pytest.approx(7.2) and c.excursion == pytest.approx(18)
    assert c.reached


def test_decaying_series_never_reaches_steady_state():
    # fresh flash falling off a cliff and still sliding: every window slopes by more than 10 %
    ys = [50000 * 0.85 ** i for i in range(25)]
    assert not any(steady.check(ys[:n]).reached for n in range(1, 26))


def test_noisy_series_without_trend_is_not_steady_when_the_noise_exceeds_the_range():
    rng = random.Random(7)
    ys = [1000 * (1 + rng.uniform(-0.3, 0.3)) for _ in range(25)]
    c = steady.check(ys)
    assert not c.reached and "range" in c.reason


def test_small_noise_around_a_level_is_steady():
    rng = random.Random(11)
    ys = [1000 * (1 + rng.uniform(-0.04, 0.04)) for _ in range(8)]
    assert steady.check(ys).reached


def test_window_and_fractions_are_parameters():
    ys = [100, 100, 100, 100, 130]
    assert not steady.check(ys).reached  # 30 % range
    assert steady.check(ys, window=5, range_fraction=0.35, slope_fraction=0.30).reached
    with pytest.raises(ValueError):
        steady.check(ys, window=1)


def _rounds_from(series):
    def measure(n):
        v = series[n - 1]
        return steady.Round(n, iops=v, mean_us=1e6 / v, p99_us=None, ios=int(v))
    return measure


def test_run_rounds_stops_at_the_first_steady_window():
    series = [5000, 3000, 2000, 1500, 1010, 1000, 990, 1000, 1005, 999, 1000, 1000]
    st = steady.run_rounds(steady.SteadyState(size=4096, round_runtime_s=1, max_rounds=25), _rounds_from(series))
    assert st.reached and st.at_round == 9 and len(st.rounds) == 9
    assert steady.check([r.iops for r in st.rounds[:8]]).reached is False
    d = st.to_dict()
    assert d["reached"] and d["label"] == "reached (round 9)" and len(d["rounds"]) == 9
    assert d["rule"]["window"] == 5 and d["rule"]["range_fraction"] == 0.2 and d["rule"]["slope_fraction"] == 0.1


def test_run_rounds_gives_up_at_max_rounds_and_says_so():
    series = [50000 * 0.85 ** i for i in range(30)]
    st = steady.run_rounds(steady.SteadyState(size=4096, round_runtime_s=1, max_rounds=12), _rounds_from(series))
    assert not st.reached and st.at_round is None and len(st.rounds) == 12
    assert st.label == "NOT reached in 12 rounds" and st.last_check is not None and not st.last_check.reached


def test_zero_rounds_means_not_checked():
    st = steady.run_rounds(steady.SteadyState(size=4096, round_runtime_s=1, max_rounds=0), _rounds_from([1]))
    assert not st.checked and st.label == "not checked" and st.rounds == []
