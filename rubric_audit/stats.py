"""Intervals and paired comparisons, from scipy and statsmodels rather than by hand.

Scores are means over tasks, so their intervals resample tasks (a bootstrap with a stored seed);
rates of independent yes/no outcomes (unearned credit in a pass audit, judge agreement) get
Wilson intervals, with Clopper-Pearson available.
"""

from __future__ import annotations

import warnings
from math import comb
from typing import Literal

import numpy as np
from pydantic import BaseModel

DEFAULT_SEED = 20_260_529
RESAMPLES = 2000


class Interval(BaseModel):
    """An estimate with its 95% interval (low/high None when there is nothing to estimate)."""

    estimate: float | None
    low: float | None
    high: float | None
    n: int
    method: str


def proportion(successes: int, n: int,
               method: Literal["wilson", "beta"] = "wilson") -> Interval:
    """A binomial proportion with its interval: Wilson, or Clopper-Pearson ('beta')."""
    from statsmodels.stats.proportion import proportion_confint

    if n == 0:
        return Interval(estimate=None, low=None, high=None, n=0, method=method)
    low, high = proportion_confint(successes, n, alpha=0.05, method=method)
    return Interval(estimate=successes / n, low=float(low), high=float(high), n=n,
                    method="wilson" if method == "wilson" else "clopper-pearson")


def _bootstrap(data: tuple[np.ndarray, ...], statistic, paired: bool, seed: int) -> Interval:
    from scipy.stats import bootstrap

    n = len(data[0])
    estimate = float(statistic(*data))
    if n < 2 or all(np.all(d == d[0]) for d in data):
        return Interval(estimate=estimate, low=estimate, high=estimate, n=n,
                        method="bootstrap (degenerate: too few or identical tasks)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bootstrap(data, statistic, paired=paired, vectorized=False,
                           n_resamples=RESAMPLES, method="percentile",
                           random_state=np.random.default_rng(seed))
    return Interval(estimate=estimate, low=float(result.confidence_interval.low),
                    high=float(result.confidence_interval.high), n=n,
                    method=f"percentile bootstrap over tasks ({RESAMPLES} resamples)")


def mean_interval(values: list[float], seed: int = DEFAULT_SEED) -> Interval:
    """The mean of per-task values with a bootstrap interval that resamples tasks."""
    if not values:
        return Interval(estimate=None, low=None, high=None, n=0, method="bootstrap")
    return _bootstrap((np.asarray(values, dtype=float),), np.mean, paired=False, seed=seed)


def paired_difference(a: list[float], b: list[float], seed: int = DEFAULT_SEED) -> Interval:
    """mean(a - b) over the same tasks, with a paired bootstrap interval."""
    if not a:
        return Interval(estimate=None, low=None, high=None, n=0, method="paired bootstrap")
    result = _bootstrap((np.asarray(a, dtype=float), np.asarray(b, dtype=float)),
                        lambda x, y: np.mean(x - y), paired=True, seed=seed)
    return result.model_copy(update={"method": result.method.replace("bootstrap",
                                                                      "paired bootstrap")})


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chance that at least one of k attempts drawn from n (c passing) passes (unbiased)."""
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Chance that all of k attempts drawn from n (c passing) pass: reliability."""
    return comb(c, k) / comb(n, k)
