"""The statistics against known values: Wilson intervals, McNemar's exact test, percentiles."""

from __future__ import annotations

import itertools
import math

import pytest

from toolrelay.evaluation._stats import (
    paired_bootstrap_interval,
    paired_sign_test,
    percentile,
    wilson_interval,
)

# Wilson score intervals at 95% (scipy.stats.binomtest(k, n).proportion_ci(method="wilson")).
WILSON = [
    (8, 10, 0.4901624715366418, 0.9433178485456248),
    (0, 10, 0.0, 0.27753279986288926),
    (92, 100, 0.8500189229905127, 0.9589065385156194),
]


@pytest.mark.parametrize(("k", "n", "low", "high"), WILSON)
def test_wilson_interval_matches_published_values(k: int, n: int, low: float, high: float) -> None:
    got = wilson_interval(k, n)
    assert got == pytest.approx((low, high), abs=1e-9)


def test_wilson_interval_is_symmetric_and_reaches_the_ends() -> None:
    low, high = wilson_interval(3, 10)
    mirrored = wilson_interval(7, 10)
    assert mirrored == pytest.approx((1 - high, 1 - low))
    assert wilson_interval(10, 10)[1] == 1.0
    assert wilson_interval(10, 10)[0] == pytest.approx(1 - 0.27753279986288926)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(8, 10, confidence=0.99)[0] < 0.4901624715366418


def test_wilson_interval_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError, match="successes <= trials"):
        wilson_interval(11, 10)
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(1, 2, confidence=1.0)


# McNemar's exact test: a two-sided binomial test on the discordant pairs
# (scipy.stats.binomtest(min(b, c), b + c, 0.5).pvalue).
MCNEMAR = [
    (1, 9, 0.021484375),
    (3, 7, 0.34375),
    (5, 7, 0.7744140625),
    (0, 6, 0.03125),
    (4, 4, 1.0),
]


@pytest.mark.parametrize(("b", "c", "p_value"), MCNEMAR)
def test_one_run_per_task_is_mcnemars_exact_test(b: int, c: int, p_value: float) -> None:
    # b tasks where only B succeeded, c where only A did, and agreeing tasks (which count not).
    differences = [1] * b + [-1] * c + [0] * 13
    test = paired_sign_test(differences)
    assert test.p_value == pytest.approx(p_value, abs=1e-12)
    assert (test.b_better, test.a_better, test.differing) == (b, c, b + c)
    assert test.statistic == b - c


def test_no_difference_at_all_gives_one() -> None:
    assert paired_sign_test([0, 0, 0]).p_value == 1.0
    assert paired_sign_test([]).p_value == 1.0


def test_repeats_are_tested_exactly_by_flipping_signs() -> None:
    # By hand: ±2 ±1 ±1 gives the sums 4, 2, 2, 0, 0, -2, -2, -4; |sum| >= 4 in 2 of 8.
    assert paired_sign_test([2, 1, 1]).p_value == pytest.approx(0.25)
    differences = [3, -1, 2, 2, 0, 1, -2, 3]
    observed = abs(sum(differences))
    nonzero = [d for d in differences if d]
    patterns = list(itertools.product((1, -1), repeat=len(nonzero)))
    extreme = sum(
        abs(sum(s * d for s, d in zip(signs, nonzero, strict=True))) >= observed
        for signs in patterns
    )
    assert paired_sign_test(differences).p_value == pytest.approx(extreme / len(patterns))


def test_the_bootstrap_interval_brackets_the_mean_reproducibly() -> None:
    differences = [0.0, 1.0, 0.5, -0.5, 1.0, 0.0, 0.5, 1.0, -1.0, 0.5] * 6
    low, high = paired_bootstrap_interval(differences)
    mean = sum(differences) / len(differences)
    assert low < mean < high
    assert paired_bootstrap_interval(differences) == (low, high)  # fixed seed
    # The normal approximation for this many tasks: mean ± 1.96 · sd / √n.
    sd = math.sqrt(sum((d - mean) ** 2 for d in differences) / (len(differences) - 1))
    half = 1.96 * sd / math.sqrt(len(differences))
    assert low == pytest.approx(mean - half, abs=0.04)
    assert high == pytest.approx(mean + half, abs=0.04)
    assert paired_bootstrap_interval([0.25] * 5) == (0.25, 0.25)


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([1, 2, 3, 4], 50, 2.5),
        ([1, 2, 3, 4], 95, 3.85),
        ([3.1, 0.4, 7.7, 2.2, 5.0], 50, 3.1),
        ([3.1, 0.4, 7.7, 2.2, 5.0], 95, 7.16),
        ([5.0], 95, 5.0),
    ],
)
def test_percentiles_interpolate_as_numpy_does(
    values: list[float], q: float, expected: float
) -> None:
    assert percentile(values, q) == pytest.approx(expected)


def test_a_percentile_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one value"):
        percentile([], 50)
