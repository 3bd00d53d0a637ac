"""Agreement between reviewers: Cohen's kappa for every pair and Fleiss' kappa over the tasks
every reviewer labelled, for one group of tasks (the failure queue, or the pass audit), with the
number of tasks behind each figure and the tasks where reviewers disagree.

Kappa is undefined when every label is the same category; it is reported as 1.0 (the reviewers
agree on every shared task) so a unanimous queue does not read as missing. Both kappas are
computed in numpy, as statsmodels computes them (tests compare the two bit for bit), so writing a
report never imports statsmodels.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from pydantic import BaseModel

from rubric_audit.core.model import Review
from rubric_audit.core.words import plural

if TYPE_CHECKING:
    import numpy as np  # imported where used: reading a stored summary needs none


class Kappa(BaseModel):
    method: str  # "cohen" (a pair) or "fleiss" (every reviewer)
    reviewers: list[str]
    kappa: float | None
    tasks: int


class Disagreement(BaseModel):
    task_id: str
    task: str
    labels: dict[str, str]  # reviewer -> label


class GroupAgreement(BaseModel):
    group: str
    reviewers: list[str]
    pairs: list[Kappa]
    fleiss: Kappa | None
    disagreements: list[Disagreement]


def _codes(shared: list[dict[str, Review]], reviewers: list[str]) -> tuple[np.ndarray, int]:
    """Each shared task's labels as category numbers (task × reviewer), categories in label
    order, and how many categories there are."""
    import numpy as np

    categories, codes = np.unique([[by[r].label or "" for r in reviewers] for by in shared],
                                  return_inverse=True)
    return codes.reshape(len(shared), len(reviewers)), len(categories)


def _cohen(shared: list[dict[str, Review]], pair: list[str]) -> float | None:
    """Cohen's kappa of two reviewers: observed agreement against the agreement their own label
    shares give by chance (statsmodels' cohens_kappa, step for step)."""
    import numpy as np

    if not shared:
        return None
    codes, n = _codes(shared, pair)
    if n == 1:
        return 1.0
    first, second = codes.T
    observed = np.mean(first == second)
    chance = np.sum(np.bincount(first, minlength=n) / len(codes)
                    * (np.bincount(second, minlength=n) / len(codes)))
    return float((observed - chance) / (1 - chance))


def _fleiss(shared: list[dict[str, Review]], reviewers: list[str]) -> float | None:
    """Fleiss' kappa: the mean agreement among reviewers per task against the agreement the
    pooled label shares give by chance (statsmodels' fleiss_kappa, step for step)."""
    import numpy as np

    if not shared:
        return None
    codes, n = _codes(shared, reviewers)
    if n == 1:
        return 1.0
    raters = len(reviewers)
    counts = (codes[:, :, None] == np.arange(n)).sum(axis=1)  # task × category
    shares = counts.sum(axis=0) / counts.sum()
    per_task = ((counts * counts).sum(axis=1) - raters) / (raters * (raters - 1.0))
    observed, chance = per_task.mean(), (shares * shares).sum()
    return float((observed - chance) / (1 - chance))


def group_agreement(group: str, labels: dict[str, dict[str, Review]], tasks: list[str],
                    names: dict[str, str]) -> GroupAgreement:
    """Agreement over `tasks` (one group), from each reviewer's current label per task."""
    chosen = {t: labels[t] for t in tasks if t in labels}
    reviewers = sorted({r for by in chosen.values() for r in by})
    pairs = []
    for pair in itertools.combinations(reviewers, 2):
        shared = [by for by in chosen.values() if all(r in by for r in pair)]
        pairs.append(Kappa(method="cohen", reviewers=list(pair), kappa=_cohen(shared, list(pair)),
                           tasks=len(shared)))
    fleiss = None
    if len(reviewers) > 2:
        shared = [by for by in chosen.values() if all(r in by for r in reviewers)]
        fleiss = Kappa(method="fleiss", reviewers=reviewers, kappa=_fleiss(shared, reviewers),
                       tasks=len(shared))
    disagreements = [Disagreement(task_id=t, task=names.get(t, t),
                                  labels={r: by[r].label or "" for r in sorted(by)})
                     for t, by in chosen.items() if len({r.label for r in by.values()}) > 1]
    return GroupAgreement(group=group, reviewers=reviewers, pairs=pairs, fleiss=fleiss,
                          disagreements=disagreements)


def describe(a: GroupAgreement) -> str:
    """One line: "failures: ana-ben 0.50 (4 tasks), ...; fleiss 0.42 (4 tasks, 3 reviewers)"."""
    if len(a.reviewers) < 2:
        return f"{a.group}: fewer than two reviewers"

    def value(k: Kappa) -> str:
        return f"{'n/a' if k.kappa is None else f'{k.kappa:.2f}'} ({plural(k.tasks, 'task')})"

    parts = [f"{'-'.join(k.reviewers)} {value(k)}" for k in a.pairs]
    if a.fleiss:
        parts.append(f"Fleiss {value(a.fleiss)}")
    return (f"{a.group}: Cohen " + ", ".join(parts)
            + f"; {plural(len(a.disagreements), 'disagreement')}")
