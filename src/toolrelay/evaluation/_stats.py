"""The statistics of a task evaluation: an interval for a success rate, a paired test, percentiles.

- :func:`wilson_interval`: the Wilson score interval for a proportion (95% by default). It
  keeps its coverage near the nominal level for small samples and for rates near 0 or 1,
  where the textbook ``p ± 1.96·se`` interval collapses to a point.
- :func:`paired_sign_test`: the exact paired permutation (sign-flip) test over tasks. Each
  task gives the difference of its success counts under two modes; under the null hypothesis
  each difference is as likely to have either sign. With one run per task and mode the
  differences are -1, 0 or +1 and the test *is* McNemar's exact test (a two-sided binomial
  test on the discordant tasks); with repeats it is the same test on counts, computed
  exactly by convolution.
- :func:`paired_bootstrap_interval`: a 95% interval for the mean per-task difference, by
  resampling tasks with replacement (fixed seed, so a report is reproducible).
- :func:`percentile`: linear interpolation between order statistics (numpy's default).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

__all__ = [
    "PairedTest",
    "paired_bootstrap_interval",
    "paired_sign_test",
    "percentile",
    "wilson_interval",
]

BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of ``successes / trials``.

    ``wilson_interval(8, 10)`` is ``(0.4902, 0.9433)``; with no trials it is ``(0.0, 1.0)``.

    Raises:
        ValueError: Counts out of range, or a confidence outside (0, 1).
    """
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes} of {trials}")
    z = _z(confidence)
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    z2n = z * z / trials
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p * (1 - p) / trials + z2n / (4 * trials))
    # The exact ends at 0 and 1 (rounding would leave them a hair off).
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True, kw_only=True)
class PairedTest:
    """The outcome of :func:`paired_sign_test`.

    Attributes:
        p_value: Two-sided; 1.0 when no task differs.
        statistic: The sum of the per-task differences (mode B minus mode A).
        differing: Tasks whose difference is not zero (with one run each: the discordant
            pairs of McNemar's test).
        b_better: Tasks where B succeeded more often than A.
        a_better: Tasks where A succeeded more often than B.
    """

    p_value: float
    statistic: int
    differing: int
    b_better: int
    a_better: int


def paired_sign_test(differences: Sequence[int]) -> PairedTest:
    """Exact two-sided sign-flip test of integer per-task differences.

    Under the null hypothesis each task's difference ``d`` is ``+|d|`` or ``-|d|`` with equal
    probability, independently; the p-value is the probability that ``|Σ ± |d||`` is at least
    the observed ``|Σ d|``. With differences in {-1, 0, 1} this is McNemar's exact test:
    ``min(1, 2·P(X ≤ min(b, c)))`` for ``X ~ Binomial(b + c, 1/2)``.

    Args:
        differences: Per task, successes under mode B minus successes under mode A (same
            number of runs of the task in both).
    """
    observed = sum(differences)
    sizes = [abs(d) for d in differences if d != 0]
    # The null distribution of the sum, as integer weights over 2**len(sizes) sign patterns:
    # tasks with the same |d| contribute |d|·(2X − n), X ~ Binomial(n, 1/2).
    weights: dict[int, int] = {0: 1}
    for size in sorted(set(sizes)):
        count = sizes.count(size)
        step = {size * (2 * k - count): math.comb(count, k) for k in range(count + 1)}
        combined: dict[int, int] = {}
        for total, weight in weights.items():
            for offset, ways in step.items():
                combined[total + offset] = combined.get(total + offset, 0) + weight * ways
        weights = combined
    extreme = sum(w for total, w in weights.items() if abs(total) >= abs(observed))
    p_value = min(1.0, extreme / 2 ** len(sizes))
    return PairedTest(
        p_value=p_value,
        statistic=observed,
        differing=len(sizes),
        b_better=sum(d > 0 for d in differences),
        a_better=sum(d < 0 for d in differences),
    )


def paired_bootstrap_interval(
    differences: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """A percentile bootstrap interval of the mean of ``differences``, resampling tasks.

    Raises:
        ValueError: No differences, or a confidence outside (0, 1).
    """
    _z(confidence)
    values = np.asarray(differences, dtype=float)
    if values.size == 0:
        raise ValueError("a bootstrap needs at least one task")
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    chunk = max(1, 2_000_000 // values.size)  # bounded memory for thousands of tasks
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        picks = rng.integers(0, values.size, size=(stop - start, values.size))
        means[start:stop] = values[picks].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100), interpolating linearly between order statistics.

    ``percentile([1, 2, 3, 4], 95)`` is 3.85, as numpy's default method gives.

    Raises:
        ValueError: No values, or ``q`` outside 0-100.
    """
    if not values:
        raise ValueError("a percentile needs at least one value")
    if not 0 <= q <= 100:
        raise ValueError(f"q must be between 0 and 100, not {q}")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)
