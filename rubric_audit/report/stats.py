"""Intervals and paired comparisons on scipy, checked against statsmodels' and scipy's own.

Scores are means over tasks, so their intervals resample tasks (a percentile bootstrap with a
stored seed, vectorised: it gives scipy.stats.bootstrap's intervals at a fraction of its cost);
rates of independent yes/no outcomes (unearned credit in a pass audit, judge agreement) get
Wilson intervals, with Clopper-Pearson available. A bootstrap's resamples are drawn and averaged
a block at a time, so its memory does not grow with the tasks; inside `remembered`, an interval
of the same inputs as one computed before is looked up, not resampled again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from math import comb
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, model_validator

if TYPE_CHECKING:
    import numpy as np  # imported where used: reading a stored summary needs none

DEFAULT_SEED = 20_260_529
RESAMPLES = 2000
CONFIDENCE = 0.95


class Interval(BaseModel):
    """An estimate with its 95% interval (low/high None when there is nothing to estimate).

    Every interval contains its estimate, by construction: a bound that rounding (Wilson at 0/n
    or n/n lands 1e-17 past its estimate) or a skewed resample puts on the wrong side of the
    estimate is moved to it, so no reader or plot ever meets a negative error bar.
    """

    estimate: float | None
    low: float | None
    high: float | None
    n: int
    method: str

    @model_validator(mode="after")
    def _contains_estimate(self) -> Interval:
        if self.estimate is not None:
            if self.low is not None:
                self.low = min(self.low, self.estimate)
            if self.high is not None:
                self.high = max(self.high, self.estimate)
        return self


def proportion(successes: int, n: int,
               method: Literal["wilson", "beta"] = "wilson") -> Interval:
    """A binomial proportion with its interval: Wilson, or Clopper-Pearson ('beta'), inside
    [0, 1] and around its estimate.

    statsmodels' proportion_confint, step for step on scipy's distributions (tests compare the
    two bit for bit wherever statsmodels' bounds contain the estimate): importing statsmodels
    (and pandas with it) costs every report ~0.5 s.
    """
    import numpy as np
    from scipy import stats

    if n == 0:
        return Interval(estimate=None, low=None, high=None, n=0, method=method)
    count, nobs = np.asarray(successes, dtype=float), np.asarray(n, dtype=float)
    share = count / nobs
    alpha = 0.05 / 2.0  # as statsmodels computes it (not (1 - 0.95) / 2), to the last bit
    if method == "wilson":
        crit = _normal_isf(alpha)
        crit2 = crit**2
        denom = 1 + crit2 / nobs
        center = (share + crit2 / (2 * nobs)) / denom
        dist = crit * np.sqrt(share * (1.0 - share) / nobs + crit2 / (4.0 * nobs**2)) / denom
        low, high = np.clip(center - dist, 0, 1), np.clip(center + dist, 0, 1)
    else:
        low = 0 if share == 0 else stats.beta.ppf(alpha, count, nobs - count + 1)
        high = 1 if share == 1 else stats.beta.isf(alpha, count + 1, nobs - count)
    return Interval(estimate=successes / n, low=float(low), high=float(high), n=n,
                    method="wilson" if method == "wilson" else "clopper-pearson")


@lru_cache(maxsize=4)
def _normal_isf(alpha: float) -> float:
    """The standard normal's upper quantile, computed once per alpha (scipy's call costs a
    millisecond, and a report asks for it per interval)."""
    from scipy import stats

    return float(stats.norm.isf(alpha))


BLOCK = 250
"""Resamples drawn at a time: an even count of rows, so the generator gives the same indices as
when all are drawn at once (it draws two 32-bit values at a time)."""
KEPT_INDICES = 4_000_000
"""Indices of one (task count, seed) kept for the next statistic over as many tasks, up to this
many (16 MB): a larger benchmark's are drawn again, a block at a time."""


@lru_cache(maxsize=4)
def resample_indices(n: int, seed: int) -> np.ndarray:
    """The (RESAMPLES x n) task indices of one seed, drawn once as scipy.stats.bootstrap draws
    them, so every statistic over n tasks with that seed resamples the same tasks."""
    import numpy as np

    indices = np.random.default_rng(seed).integers(0, n, (RESAMPLES, n), dtype=np.int32)
    indices.flags.writeable = False
    return indices


def _resample_blocks(n: int, seed: int) -> Iterator[np.ndarray]:
    """The (RESAMPLES x n) task indices of one seed, drawn as scipy.stats.bootstrap draws them,
    BLOCK rows at a time, so every statistic over n tasks with that seed resamples the same
    tasks."""
    import numpy as np

    if RESAMPLES * n <= KEPT_INDICES:
        indices = resample_indices(n, seed)
        for start in range(0, RESAMPLES, BLOCK):
            yield indices[start:start + BLOCK]
        return
    generator = np.random.default_rng(seed)
    for start in range(0, RESAMPLES, BLOCK):
        yield generator.integers(0, n, (min(BLOCK, RESAMPLES - start), n), dtype=np.int32)


_REMEMBERED: ContextVar[tuple[dict[str, Interval], dict[str, Interval]] | None] = ContextVar(
    "remembered_intervals", default=None)


@contextmanager
def remembered(known: dict[str, Interval]) -> Iterator[dict[str, Interval]]:
    """Bootstrap intervals computed inside are first looked up in `known` by their inputs (the
    method, seed and values); yields every interval asked for inside, by its key, to keep."""
    used: dict[str, Interval] = {}
    token = _REMEMBERED.set((known, used))
    try:
        yield used
    finally:
        _REMEMBERED.reset(token)


def _key(samples: tuple[np.ndarray, ...], seed: int, method: str) -> str:
    digest = hashlib.blake2b(f"{method}\0{seed}\0{RESAMPLES}\0{CONFIDENCE}".encode(),
                             digest_size=16)
    for sample in samples:
        digest.update(b"\0" + sample.tobytes())
    return digest.hexdigest()


def _bootstrap(samples: tuple[np.ndarray, ...], seed: int, method: str) -> Interval:
    """A bootstrap interval (`_resampled`), looked up where `remembered` knows its inputs."""
    memory = _REMEMBERED.get()
    if memory is None:
        return _resampled(samples, seed, method)
    known, used = memory
    key = _key(samples, seed, method)
    interval = known.get(key) or _resampled(samples, seed, method)
    used[key] = interval
    return interval


def _resampled(samples: tuple[np.ndarray, ...], seed: int, method: str) -> Interval:
    """Percentile bootstrap of the mean of the samples' difference (or of the one sample).

    Gives scipy.stats.bootstrap(method="percentile", paired=True) intervals with the same seed
    (tests compare them), as array operations instead of a Python call per resample.
    """
    import numpy as np

    values = samples[0] - samples[1] if len(samples) == 2 else samples[0]
    n = len(values)
    estimate = float(np.mean(values))
    if n < 2 or all(np.all(s == s[0]) for s in samples):
        return Interval(estimate=estimate, low=estimate, high=estimate, n=n,
                        method=f"{method} (degenerate: too few or identical tasks)")
    from scipy.stats import quantile

    means = np.concatenate([values[block].mean(axis=-1)
                            for block in _resample_blocks(n, seed)])
    alpha = np.asarray((1 - CONFIDENCE) / 2)  # as scipy computes it, to the last bit
    low, high = quantile(means, np.stack([alpha, 1 - alpha]))
    return Interval(estimate=estimate, low=float(low), high=float(high), n=n,
                    method=f"percentile {method} over tasks ({RESAMPLES} resamples)")


def mean_interval(values: list[float], seed: int = DEFAULT_SEED) -> Interval:
    """The mean of per-task values with a bootstrap interval that resamples tasks."""
    import numpy as np

    if not values:
        return Interval(estimate=None, low=None, high=None, n=0, method="bootstrap")
    return _bootstrap((np.asarray(values, dtype=float),), seed, "bootstrap")


def paired_difference(a: list[float], b: list[float], seed: int = DEFAULT_SEED) -> Interval:
    """mean(a - b) over the same tasks, with a paired bootstrap interval."""
    import numpy as np

    if not a:
        return Interval(estimate=None, low=None, high=None, n=0, method="paired bootstrap")
    return _bootstrap((np.asarray(a, dtype=float), np.asarray(b, dtype=float)), seed,
                      "paired bootstrap")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chance that at least one of k attempts drawn from n (c passing) passes (unbiased)."""
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Chance that all of k attempts drawn from n (c passing) pass: reliability."""
    return comb(c, k) / comb(n, k)
