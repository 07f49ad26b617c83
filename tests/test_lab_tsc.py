"""The host's TSC rate given to a lab guest's kernel (slogqual.lab.tsc): the windows' median, refused where they
disagree; the kernel's command line with and without it. The guest's own refinement agreeing with it is checked in
tests/test_lab.py (test_run_passes_status_devices_and_results)."""

import platform

import pytest

from slogqual.lab import runner, tsc


def test_the_rate_is_the_median_of_windows_that_agree():
    ms = 20_000_000
    good = [(int(2_596_096 * 20), ms)] * 3 + [(int(2_596_096 * 20 * 1.0004), ms), (int(2_596_096 * 20 * 0.9997), ms)]
    assert abs(tsc.rate_khz(good) - 2_596_096) <= 1
    # a preempted window (its ticks over a longer wait than its nanoseconds say) is outvoted
    assert abs(tsc.rate_khz(good[:4] + [(int(2_596_096 * 20 * 1.3), ms)]) - 2_596_096) <= 2_596_096 * 0.0005


def test_no_rate_where_the_windows_disagree_or_are_too_few():
    ms = 20_000_000
    spread = [(int(2_596_096 * 20 * f), ms) for f in (1.0, 1.02, 0.97, 1.05, 0.94)]
    assert tsc.rate_khz(spread) is None
    assert tsc.rate_khz([(51_921_920, ms), (51_921_920, ms)]) is None
    assert tsc.rate_khz([(0, ms), (51_921_920, 0), (51_921_920, ms)]) is None


def test_the_kernel_line_carries_the_rate_only_when_measured():
    assert runner.kernel_append(None) == runner.KERNEL_APPEND
    assert runner.kernel_append(2_596_096) == runner.KERNEL_APPEND + " tsc_early_khz=2596096"


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="RDTSC is x86-64's")
def test_this_host_s_rate_is_measured_twice_alike():
    first, second = tsc.host_tsc_khz(), tsc.host_tsc_khz()
    assert first is not None and second is not None
    assert abs(first - second) <= 0.005 * first  # the same counter, twice: the windows' own tolerance
    assert first > 100_000  # a TSC runs at the CPU's nominal clock: hundreds of MHz at the least
