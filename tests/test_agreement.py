"""Reviewer agreement: kappas computed in numpy equal statsmodels' to the last bit, and the cases
statsmodels cannot compute (no shared task, a single category) read as documented."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

from rubric_audit.core.model import FAILURE_LABELS, PASS_LABELS, Review
from rubric_audit.review.agreement import group_agreement

LABELS = (*FAILURE_LABELS, *PASS_LABELS)


def _current(table: dict[str, dict[str, str]]) -> dict[str, dict[str, Review]]:
    """task -> reviewer -> label, as the review log folds into it."""
    return {t: {r: Review(reviewer=r, created_at="t", task_id=t, label=label)
                for r, label in by.items()} for t, by in table.items()}


def _random_labels(seed: int) -> dict[str, dict[str, str]]:
    """Up to 5 reviewers over up to 40 tasks, each labelling most tasks from a few labels."""
    rng = np.random.default_rng(seed)
    reviewers = [f"r{i}" for i in range(rng.integers(2, 6))]
    labels = rng.choice(LABELS, size=rng.integers(2, len(LABELS) + 1), replace=False)
    return {f"task_{t}": {r: str(rng.choice(labels)) for r in reviewers if rng.random() < 0.85}
            for t in range(rng.integers(1, 41))}


def _statsmodels_cohen(rows: list[tuple[str, str]]) -> float:
    categories = sorted({label for row in rows for label in row})
    table = [[sum(1 for a, b in rows if (a, b) == (x, y)) for y in categories]
             for x in categories]
    with warnings.catch_warnings():  # its z-statistic divides by zero on small tables
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(cohens_kappa(table).kappa)


@pytest.mark.parametrize("seed", range(40))
def test_kappas_equal_statsmodels_to_the_last_bit(seed: int) -> None:
    labels = _random_labels(seed)
    agreement = group_agreement("failures", _current(labels), list(labels), {})
    reviewers = sorted({r for by in labels.values() for r in by})
    assert [k.reviewers for k in agreement.pairs] == [list(p) for p in
                                                      itertools.combinations(reviewers, 2)]
    for kappa in agreement.pairs:
        rows = [(by[kappa.reviewers[0]], by[kappa.reviewers[1]]) for by in labels.values()
                if all(r in by for r in kappa.reviewers)]
        assert kappa.tasks == len(rows)
        if len({label for row in rows for label in row}) > 1:
            assert kappa.kappa == _statsmodels_cohen(rows), (seed, kappa.reviewers)
    if len(reviewers) > 2:
        assert agreement.fleiss is not None
        rows = [[by[r] for r in reviewers] for by in labels.values()
                if all(r in by for r in reviewers)]
        assert agreement.fleiss.tasks == len(rows)
        if len({label for row in rows for label in row}) > 1:
            expected = float(fleiss_kappa(aggregate_raters(np.array(rows))[0]))
            assert agreement.fleiss.kappa == expected, seed


def test_the_random_inputs_reach_every_computed_case() -> None:
    """The comparison above is not vacuous: it sees Cohen's and Fleiss' kappas computed, and
    kappas below zero."""
    kappas = []
    for seed in range(40):
        labels = _random_labels(seed)
        agreement = group_agreement("g", _current(labels), list(labels), {})
        kappas += [(k.method, k.kappa) for k in [*agreement.pairs, agreement.fleiss]
                   if k and k.kappa not in (None, 1.0)]
    assert {m for m, _ in kappas} == {"cohen", "fleiss"}
    assert any(k < 0 for _, k in kappas)


def test_one_category_and_perfect_agreement_read_as_one_and_no_shared_task_as_none() -> None:
    unanimous = {"a": {"ana": "sound", "ben": "sound", "cy": "sound"},
                 "b": {"ana": "sound", "ben": "sound", "cy": "sound"}}
    agreed = {"a": {"ana": "sound", "ben": "sound", "cy": "sound"},
              "b": {"ana": "unearned", "ben": "unearned", "cy": "unearned"}}
    for labels in (unanimous, agreed):
        agreement = group_agreement("passes", _current(labels), list(labels), {})
        assert [(k.kappa, k.tasks) for k in agreement.pairs] == [(1.0, 2)] * 3
        assert agreement.fleiss is not None
        assert (agreement.fleiss.kappa, agreement.fleiss.tasks) == (1.0, 2)
        assert agreement.disagreements == []
    apart = {"a": {"ana": "sound"}, "b": {"ben": "unearned"}, "c": {"cy": "sound"}}
    agreement = group_agreement("passes", _current(apart), list(apart), {})
    assert [(k.kappa, k.tasks) for k in agreement.pairs] == [(None, 0)] * 3
    assert agreement.fleiss is not None
    assert (agreement.fleiss.kappa, agreement.fleiss.tasks) == (None, 0)
    empty = group_agreement("failures", {}, [], {})
    assert (empty.reviewers, empty.pairs, empty.fleiss) == ([], [], None)


def test_opposite_labels_give_the_kappa_of_no_better_than_chance() -> None:
    labels = {"a": {"ana": "sound", "ben": "unearned"}, "b": {"ana": "unearned", "ben": "sound"}}
    agreement = group_agreement("passes", _current(labels), list(labels), {})
    assert agreement.pairs[0].kappa == -1.0
    assert [d.task_id for d in agreement.disagreements] == ["a", "b"]
