"""Item statistics (checks/items.py): each signal fires where it should and not where it must not,
its chance is the exact permutation probability, strengths leave the task out, and the signals
rank the failures queue."""

from __future__ import annotations

import itertools
import random
from math import comb

import numpy as np
import pytest

from rubric_audit.checks import items
from rubric_audit.checks.items import (
    ItemAttempt,
    TaskItems,
    criteria_redundant,
    criterion_negative_discrimination,
    criterion_never_varies,
    item_rows,
    low_sum_chance,
    task_fails_on_same_criteria,
    task_items,
    task_negative_discrimination,
)
from rubric_audit.core.model import Attempt, Criterion, CriterionGrade, Finding, Task
from rubric_audit.review.labels import by_priority

STRENGTH = {"strong": 0.7, "weak": 0.4}


def _items(rows: list[tuple[str, str]], criteria: int | None = None,
           strength: dict[str, float | None] | None = None) -> TaskItems:
    """rows of (model, one verdict letter per criterion)."""
    ids = tuple(f"c{i}" for i in range(1, (criteria or len(rows[0][1])) + 1))
    attempts = tuple(ItemAttempt(key=m, verdicts={c: v == "p" for c, v in zip(ids, letters,
                                                                              strict=True)},
                                 passed=all(v == "p" for v in letters)) for m, letters in rows)
    return TaskItems(task_id="t", criteria=ids, attempts=attempts,
                     strength=dict(STRENGTH) if strength is None else strength)


def _names(found: list[Finding]) -> list[list[str]]:
    return [sorted(f.evidence.get("criteria") or [f.criterion_id or "task"]) for f in found]


def test_a_task_every_attempt_fails_on_the_same_criterion() -> None:
    shared = _items([("strong", "ppf"), ("strong", "fpf"), ("weak", "ppf"), ("weak", "pff")])
    assert _names(list(task_fails_on_same_criteria(shared))) == [["c3"]]
    apart = _items([("strong", "fpp"), ("strong", "pfp"), ("weak", "ppf"), ("weak", "fpp")])
    assert list(task_fails_on_same_criteria(apart)) == []
    few = _items([("strong", "f"), ("strong", "f"), ("weak", "f")])
    assert list(task_fails_on_same_criteria(few)) == []
    one_model = TaskItems("t", ("c1",), tuple(ItemAttempt("strong", {"c1": False}, False)
                                              for _ in range(4)), {"strong": 0.7})
    assert list(task_fails_on_same_criteria(one_model)) == []


def test_a_criterion_that_never_varies_while_its_task_does() -> None:
    varying = _items([("strong", "pp"), ("strong", "pp"), ("weak", "pf"), ("weak", "pf")])
    assert _names(list(criterion_never_varies(varying))) == [["c1"]]
    every_pass = _items([("strong", "pp"), ("strong", "pp"), ("weak", "pp"), ("weak", "pp")])
    assert list(criterion_never_varies(every_pass)) == []
    every_fail = _items([("strong", "pf"), ("strong", "pf"), ("weak", "pf"), ("weak", "pf")])
    assert list(criterion_never_varies(every_fail)) == []


def test_redundant_criteria_and_their_chance() -> None:
    """Six attempts, three passes each, identical: 1 / C(6, 3) = 5%; four attempts with one pass
    (chance 1/4) and criteria that never vary are no signal."""
    same = _items([("strong", "ppf"), ("strong", "ppp"), ("strong", "ffp"),
                   ("weak", "ppf"), ("weak", "ffp"), ("weak", "ffp")])
    found = list(criteria_redundant(same))
    assert _names(found) == [["c1", "c2"]]
    assert found[0].evidence["chance"] == pytest.approx(1 / comb(6, 3))
    likely = _items([("strong", "pp"), ("strong", "ff"), ("weak", "ff"), ("weak", "ff")])
    assert list(criteria_redundant(likely)) == []
    constant = _items([("strong", "pp"), ("strong", "pp"), ("weak", "pp"), ("weak", "pp")])
    assert list(criteria_redundant(constant)) == []


def test_negative_discrimination_said_once_for_a_task_or_its_criterion() -> None:
    """The stronger model fails both attempts, the weaker passes both: chance 1 / C(4, 2)."""
    reversed_task = _items([("strong", "f"), ("strong", "f"), ("weak", "p"), ("weak", "p")])
    found = list(task_negative_discrimination(reversed_task))
    assert len(found) == 1 and found[0].evidence["value"] == pytest.approx(-1.0)
    assert found[0].evidence["chance"] == pytest.approx(1 / 6, abs=1e-4)  # kept to 4 places
    assert list(criterion_negative_discrimination(reversed_task)) == []  # one criterion
    in_a_criterion = _items([("strong", "pf"), ("strong", "pf"), ("weak", "pp"),
                             ("weak", "pp")])
    assert _names(list(criterion_negative_discrimination(in_a_criterion))) == [["c2"]]
    assert list(task_negative_discrimination(in_a_criterion)) == []
    ordinary = _items([("strong", "p"), ("strong", "p"), ("weak", "f"), ("weak", "f")])
    assert list(task_negative_discrimination(ordinary)) == []
    unknown = _items([("strong", "f"), ("strong", "f"), ("weak", "p"), ("weak", "p")],
                     strength={"strong": None, "weak": 0.4})
    assert list(task_negative_discrimination(unknown)) == []


@pytest.mark.parametrize("seed", range(6))
def test_the_chance_is_the_exact_permutation_probability(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(4, 9)
    values = [rng.choice([0.3, 0.5, 0.8]) for _ in range(n)]
    passed = [rng.random() < 0.5 for _ in range(n)]
    observed = sum(v for v, p in zip(values, passed, strict=True) if p)
    draws = [sum(values[i] for i in chosen)
             for chosen in itertools.combinations(range(n), sum(passed))]
    expected = sum(d <= observed + 1e-9 for d in draws) / len(draws)
    assert low_sum_chance(passed, values) == pytest.approx(expected)


def test_past_the_exact_limit_the_chance_is_approximated(monkeypatch) -> None:
    values = [0.3] * 10 + [0.8] * 10
    passed = [True] * 8 + [False] * 2 + [False] * 7 + [True] * 3
    exact = low_sum_chance(passed, values)
    monkeypatch.setattr(items, "EXACT_LIMIT", 1)
    assert low_sum_chance(passed, values) == pytest.approx(exact, abs=0.03)


def test_strength_leaves_the_task_out_and_rows_carry_each_statistic() -> None:
    tasks = [Task(id=f"t{i}", name=f"t{i}", world_id="w", prompt="p",
                  criteria=[Criterion(id=f"t{i}c1", text="a"), Criterion(id=f"t{i}c2", text="b")])
             for i in range(3)]
    attempts, grades = [], []
    outcomes = {"a": ["pp", "pp", "fp"], "b": ["pf", "ff", "pp"]}
    for model, per_task in outcomes.items():
        for i, letters in enumerate(per_task):
            for k in (1, 2):
                attempt = Attempt(id=f"{model}/t{i}/{k}", task_id=f"t{i}", model=model,
                                  variant="v", index=k, state="graded", answer="x")
                attempts.append(attempt)
                grades += [CriterionGrade(attempt_id=attempt.id, criterion_id=f"t{i}c{j}",
                                          grader="recorded",
                                          verdict="pass" if v == "p" else "fail")
                           for j, v in enumerate(letters, 1)]
    built = {t.task_id: t for t in task_items(tasks, attempts, grades, "recorded")}
    assert built["t0"].strength == {"a / v": 0.5, "b / v": 0.5}  # t1, t2 only
    assert built["t2"].strength == {"a / v": 1.0, "b / v": 0.0}
    rows = {(r.task_id, r.criterion_id): r for r in item_rows(list(built.values()))}
    assert rows[("t2", None)].pass_rate == 0.5
    assert rows[("t2", None)].strength_correlation == pytest.approx(-1.0)
    assert rows[("t2", "t2c2")].rest_correlation is None  # c2 passes everywhere
    assert rows[("t1", "t1c1")].rest_correlation == pytest.approx(
        np.corrcoef([1, 1, 0, 0], [1, 1, 0, 0])[0, 1])


def test_signals_rank_the_failures_queue_likeliest_first() -> None:
    def signal(task: str, check: str, chance: float | None) -> Finding:
        return Finding(task_id=task, check=check, severity="info", message="m",
                       evidence={} if chance is None else {"chance": chance})

    findings = [signal("b", "task_negative_discrimination", 0.15),
                signal("d", "task_fails_on_same_criteria", None),
                signal("c", "criteria_redundant", 0.05),
                signal("a", "criterion_restates_premise", None)]  # no item signal
    assert by_priority(["a", "b", "c", "d", "e"], findings) == ["d", "c", "b", "a", "e"]
