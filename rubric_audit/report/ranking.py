"""Would the ranking survive? The models' order under each rescoring option, resampled and pushed.

For the headline grader and each rescoring option: per pair of models (and variants), the
probability that they swap order, the share of paired bootstrap resamples of their common tasks
(the stored seed and the same resamples as the score intervals) in which the one behind comes out
ahead, a tie counting half; per model, its rank interval, the 2.5th to 97.5th percentile of its
rank over resamples of all the option's tasks (each model ranked on the resampled tasks it has an
outcome on; ties share the better rank); and per pair, the tasks that drive a swap: the fewest
whose removal leaves the leader no longer ahead (those where it leads most), and the fewest whose
relabelling does (the leader's outcome there made a fail and the other's a pass, where that moves
the gap most). Tasks are resampled whole, all attempts of a task together, as exchangeable draws
from tasks like them; the order is called stable where the swap probability is at most
`STABLE`. A pair with fewer than two common tasks gets no probability, and a tie no leader.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from pydantic import BaseModel

from rubric_audit.report.statistics import OPTIONS, PerTask, option_tasks, rescored
from rubric_audit.report.stats import DEFAULT_SEED, RESAMPLES, resample_indices

if TYPE_CHECKING:
    import numpy as np  # imported where used: reading a stored summary needs none

STABLE = 0.05
EPSILON = 1e-12


class PairStability(BaseModel):
    option: str
    grader: str
    leader: str
    other: str
    tasks: int
    lead: float  # the leader's pass@1 minus the other's, over their common tasks
    swap_probability: float | None
    removal: list[str] | None  # fewest tasks to remove; None when removing any number cannot
    relabelling: list[str]

    @property
    def stable(self) -> bool | None:
        return None if self.swap_probability is None else self.swap_probability <= STABLE


class RankInterval(BaseModel):
    option: str
    grader: str
    model: str
    tasks: int
    rank: int
    low: float
    high: float


class Ranking(BaseModel):
    seed: int
    resamples: int
    stable_at: float
    pairs: list[PairStability]
    ranks: list[RankInterval]


def _label(key: tuple[str, str]) -> str:
    return f"{key[0]} / {key[1]}"


def _rates(rows: PerTask, ids: list[str]) -> np.ndarray:
    """Per-task pass@1 over `ids`, NaN where the model has no outcome."""
    import numpy as np

    return np.asarray([rows[t][1] / rows[t][0] if t in rows else np.nan for t in ids])


def fewest_to_flip(total: float, gains: np.ndarray) -> list[int]:
    """Indices of the fewest terms to take off `total` (each by its gain) for it to reach zero or
    under: greedy by the largest gain, which is optimal for a sum. All positive gains, and
    still over zero, when even that cannot."""
    import numpy as np

    chosen: list[int] = []
    for i in np.argsort(-gains, kind="stable"):
        if total <= EPSILON or gains[i] <= 0:
            break
        total -= float(gains[i])
        chosen.append(int(i))
    return chosen


def pair_stability(option: str, grader: str, a: tuple[str, str], b: tuple[str, str],
                   ra: PerTask, rb: PerTask, common: list[str], seed: int) -> PairStability:
    """How sure the order of a and b is over their common tasks, and what would flip it."""
    import numpy as np

    xa, xb = _rates(ra, common), _rates(rb, common)
    lead = float((xa - xb).mean()) if common else 0.0
    if lead < 0:
        a, b, xa, xb, lead = b, a, xb, xa, -lead
    gap = xa - xb
    if lead <= EPSILON:
        return PairStability(option=option, grader=grader, leader=_label(a), other=_label(b),
                             tasks=len(common), lead=0.0, swap_probability=None, removal=[],
                             relabelling=[])
    swap = None
    if len(common) >= 2:
        means = gap[resample_indices(len(common), seed)].mean(axis=-1)
        swap = float(np.mean(means < -EPSILON) + 0.5 * np.mean(np.abs(means) <= EPSILON))
    removal = fewest_to_flip(float(gap.sum()), gap)
    # relabelling a task makes its gap -1 (the leader fails, the other passes): gap + 1 less
    relabelling = fewest_to_flip(float(gap.sum()), gap + 1)
    flips = float(gap.sum() - gap[removal].sum()) <= EPSILON and len(removal) < len(common)
    return PairStability(
        option=option, grader=grader, leader=_label(a), other=_label(b), tasks=len(common),
        lead=lead, swap_probability=swap,
        removal=[common[i] for i in removal] if flips else None,
        relabelling=[common[i] for i in relabelling])


def rank_intervals(option: str, grader: str, results: dict[tuple[str, str], PerTask],
                   chosen: dict[tuple[str, str], set[str]], seed: int) -> list[RankInterval]:
    """Each model's rank over resamples of every task the option scores for some model."""
    import numpy as np

    keys = sorted(results)
    ids = sorted(set().union(*chosen.values()))
    if not ids:
        return []
    indices = resample_indices(len(ids), seed)
    observed, means = [], []
    for key in keys:
        rates = np.where(np.isin(ids, sorted(chosen[key])), _rates(results[key], ids), np.nan)
        sampled = rates[indices]
        counted = (~np.isnan(sampled)).sum(axis=1)
        total = np.nansum(sampled, axis=1)
        # a model with no task in a resample ranks last in it
        means.append(np.where(counted > 0, total / np.maximum(counted, 1), -np.inf))
        observed.append(float(np.nanmean(rates)) if np.any(~np.isnan(rates)) else -np.inf)
    stacked = np.stack(means)  # models x resamples
    ranks = 1 + (stacked[None, :, :] > stacked[:, None, :]).sum(axis=1)
    low, high = np.percentile(ranks, [2.5, 97.5], axis=1)
    return [RankInterval(option=option, grader=grader, model=_label(k), tasks=len(chosen[k]),
                         rank=1 + sum(o > observed[i] for o in observed),
                         low=float(low[i]), high=float(high[i]))
            for i, k in enumerate(keys)]


def build_ranking(table: dict[tuple[str, str], PerTask], grader: str,
                  labels: dict[str, str | None], achievable: set[str], flagged: set[str],
                  seed: int = DEFAULT_SEED) -> Ranking:
    """`table` is the grader's per-task results (statistics.per_task); labels, achievable and
    flagged tasks choose each option's tasks as the scores do."""
    pairs: list[PairStability] = []
    ranks: list[RankInterval] = []
    for option in OPTIONS:
        results = {key: rescored(option, rows, labels) for key, rows in table.items()}
        chosen = {key: option_tasks(option, set(rows), labels, achievable, flagged)
                  for key, rows in results.items()}
        for (ka, ra), (kb, rb) in itertools.combinations(sorted(results.items()), 2):
            common = sorted(chosen[ka] & chosen[kb])
            pairs.append(pair_stability(option, grader, ka, kb, ra, rb, common, seed))
        if len(results) > 1:
            ranks += rank_intervals(option, grader, results, chosen, seed)
    return Ranking(seed=seed, resamples=RESAMPLES, stable_at=STABLE, pairs=pairs, ranks=ranks)
