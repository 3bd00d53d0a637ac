"""Would the ranking survive (report/ranking.py): swap probabilities from the paired resamples,
rank intervals, the fewest tasks that flip a pair, per rescoring option, and on the sample."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from rubric_audit.report.ranking import (
    STABLE,
    build_ranking,
    fewest_to_flip,
    pair_stability,
    rank_intervals,
)
from rubric_audit.report.statistics import PerTask
from rubric_audit.report.stats import DEFAULT_SEED, resample_indices
from tests.conftest import ROOT


def _rows(rates: list[float], attempts: int = 2) -> PerTask:
    return {f"t{i:02d}": (attempts, round(r * attempts), []) for i, r in enumerate(rates)}


@pytest.mark.parametrize("seed", range(8))
def test_the_greedy_flip_is_the_fewest(seed: int) -> None:
    rng = np.random.default_rng(seed)
    gains = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=7)
    total = float(gains.sum())
    chosen = fewest_to_flip(total, gains)
    fewest = next((k for k in range(len(gains) + 1)
                   if any(total - gains[list(c)].sum() <= 1e-12
                          for c in itertools.combinations(range(len(gains)), k))), None)
    if total - gains[chosen].sum() <= 1e-12:
        assert len(chosen) == fewest
    else:  # even every positive term is not enough
        assert fewest is None or fewest > len(chosen) or total <= 1e-12


def test_a_pair_its_swap_probability_and_the_tasks_that_flip_it() -> None:
    a = _rows([1, 1, 1, 0.5, 0, 1, 0, 1])
    b = _rows([0, 1, 0, 0.5, 0, 1, 1, 0])
    common = sorted(a)
    pair = pair_stability("as_graded", "g", ("A", "v"), ("B", "v"), a, b, common, DEFAULT_SEED)
    gap = np.array([1, 0, 1, 0, 0, 0, -1, 1.0])
    means = gap[resample_indices(len(gap), DEFAULT_SEED)].mean(axis=-1)
    assert pair.leader == "A / v" and pair.lead == pytest.approx(2 / 8)
    assert pair.swap_probability == pytest.approx(np.mean(means < 0) + 0.5 * np.mean(means == 0))
    assert pair.removal == ["t00", "t02"]  # two of the three tasks A leads on
    assert pair.relabelling == ["t00"]  # gap 1 becomes -1: the sum 2 falls to 0
    flipped = pair_stability("as_graded", "g", ("B", "v"), ("A", "v"), b, a, common,
                             DEFAULT_SEED)
    assert flipped.leader == "A / v" and flipped.swap_probability == pair.swap_probability


def test_a_tie_has_no_leader_and_a_clear_lead_is_stable() -> None:
    same = _rows([1, 0, 1, 0])
    tie = pair_stability("as_graded", "g", ("A", "v"), ("B", "v"), same, same, sorted(same),
                         DEFAULT_SEED)
    assert tie.lead == 0 and tie.swap_probability is None and tie.stable is None
    strong, weak = _rows([1] * 30), _rows([0] * 30)
    clear = pair_stability("as_graded", "g", ("A", "v"), ("B", "v"), strong, weak,
                           sorted(strong), DEFAULT_SEED)
    assert clear.swap_probability == 0 and clear.stable
    assert clear.removal is None  # removing any number of tasks leaves A ahead
    assert len(clear.relabelling) == 15  # each relabel takes 2 off the sum of 30: 15 tie it


def test_rank_intervals_separate_distinct_models_and_join_equal_ones() -> None:
    ids = [f"t{i:02d}" for i in range(40)]
    results = {("a", "v"): _rows([1] * 40), ("b", "v"): _rows([0.5] * 40),
               ("c", "v"): _rows([0] * 40)}
    chosen = {k: set(ids) for k in results}
    ranks = {r.model: r for r in rank_intervals("as_graded", "g", results, chosen, DEFAULT_SEED)}
    assert [(ranks[m].rank, ranks[m].low, ranks[m].high) for m in ("a / v", "b / v", "c / v")] \
        == [(1, 1, 1), (2, 2, 2), (3, 3, 3)]
    rng = np.random.default_rng(1)
    noisy = {("a", "v"): _rows(list(rng.integers(0, 2, 40))),
             ("b", "v"): _rows(list(rng.integers(0, 2, 40)))}
    both = rank_intervals("as_graded", "g", noisy, {k: set(ids) for k in noisy}, DEFAULT_SEED)
    assert all((r.low, r.high) == (1, 2) for r in both)


def test_each_rescoring_option_ranks_its_own_tasks() -> None:
    """Without the task reviewers labelled defective, B's only lead is gone."""
    table = {("A", "v"): _rows([1, 1, 0, 1]), ("B", "v"): _rows([1, 1, 1, 1])}
    labels: dict[str, str | None] = {"t02": "defective_task"}
    ranking = build_ranking(table, "g", labels, achievable=set(table[("A", "v")]), flagged=set())
    pairs = {p.option: p for p in ranking.pairs}
    assert pairs["as_graded"].leader == "B / v" and pairs["as_graded"].tasks == 4
    assert pairs["without_defective"].lead == 0 and pairs["without_defective"].tasks == 3
    assert {r.option for r in ranking.ranks} == set(pairs)


def test_the_sample_report_says_whether_the_order_is_stable_under_each_option() -> None:
    """The committed sample report (tests/test_sample.py keeps it current): atlas-1 leads
    cirrus-2 under every option, but not stably, and one relabelled task flips it."""
    summary = json.loads((ROOT / "reports/sample/audit.json").read_text())
    pairs = summary["ranking"]["pairs"]
    assert {p["option"] for p in pairs} == set(summary["statistics"]["options"])
    assert all(p["leader"].startswith("fictional/atlas-1") for p in pairs)
    assert all(p["swap_probability"] > STABLE for p in pairs)
    assert all(len(p["relabelling"]) == 1 for p in pairs)
    report = (ROOT / "reports/sample/report.md").read_text()
    assert "## Would the ranking survive?" in report and "| no | 2: nordlys_06, kestrel_01 |" in report
