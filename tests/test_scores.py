"""pass@1 and criterion scores under the APEX pass rule."""

from __future__ import annotations

import pytest

from rubric_audit.core.model import Attempt, Criterion, CriterionGrade, Task
from rubric_audit.core.scores import attempt_outcome, headline_grader, score_variants, scored_graders


def _task(task_id: str, weights: tuple[float, ...] = (1.0, 1.0)) -> Task:
    return Task(id=task_id, name=task_id, world_id="w", prompt="p",
                criteria=[Criterion(id=f"{task_id}.{i}", text="c", weight=w)
                          for i, w in enumerate(weights)])


def _attempt(task_id: str, k: int, state: str = "graded") -> Attempt:
    return Attempt(id=Attempt.make_id("v", task_id, k), task_id=task_id, model="m", variant="v",
                   index=k, state=state)


def _grades(attempt: Attempt, *verdicts: str) -> list[CriterionGrade]:
    return [CriterionGrade(attempt_id=attempt.id, criterion_id=f"{attempt.task_id}.{i}",
                           grader="recorded", verdict=v) for i, v in enumerate(verdicts)]


def test_outcome_needs_every_criterion() -> None:
    task, a = _task("t"), _attempt("t", 1)
    assert attempt_outcome(task, _grades(a, "pass", "pass")) == "pass"
    assert attempt_outcome(task, _grades(a, "pass", "fail")) == "fail"
    assert attempt_outcome(task, _grades(a, "pass", "unscored")) == "unscored"
    assert attempt_outcome(task, _grades(a, "pass")) == "unscored"


def test_pass_at_1_is_mean_over_tasks_of_attempt_pass_share() -> None:
    tasks = [_task("a", (1.0, 3.0)), _task("b"), _task("c")]
    a1, a2, b1, c1 = _attempt("a", 1), _attempt("a", 2), _attempt("b", 1), _attempt("c", 1)
    grades = [*_grades(a1, "pass", "pass"), *_grades(a2, "pass", "fail"),
              *_grades(b1, "fail", "fail"), *_grades(c1, "pass", "unscored")]
    unavailable = _attempt("c", 2, state="unavailable")
    [score] = score_variants(tasks, [a1, a2, b1, c1, unavailable], grades)
    assert score.pass_at_1 == pytest.approx((0.5 + 0.0) / 2)
    assert score.mean_criterion_score == pytest.approx(((1.0 + 0.25) / 2 + 0.0) / 2)
    assert (score.tasks, score.tasks_scored) == (3, 2)
    assert (score.graded_attempts, score.ungraded_attempts, score.unavailable_attempts,
            score.unscored_attempts) == (4, 0, 1, 1)


def test_ungraded_attempts_are_counted_apart_and_in_no_denominator() -> None:
    tasks = [_task("a"), _task("b"), _task("c")]
    a1, a2, b1, c1 = (_attempt("a", 1), _attempt("a", 2, state="ungraded"),
                      _attempt("b", 1, state="ungraded"), _attempt("c", 1, state="unavailable"))
    [score] = score_variants(tasks, [a1, a2, b1, c1], _grades(a1, "pass", "pass"))
    assert score.pass_at_1 == 1.0, "the ungraded attempt of a is no fail of a"
    assert (score.tasks, score.tasks_scored) == (3, 1), "b, only ungraded, has no outcome"
    assert (score.graded_attempts, score.ungraded_attempts, score.unavailable_attempts,
            score.unscored_attempts) == (1, 2, 1, 0)


def test_only_the_chosen_grader_counts() -> None:
    task, a = _task("t"), _attempt("t", 1)
    judge = [g.model_copy(update={"grader": "judge:x"}) for g in _grades(a, "fail", "fail")]
    [score] = score_variants([task], [a], [*_grades(a, "pass", "pass"), *judge])
    assert score.pass_at_1 == 1.0


def test_the_headline_grader_is_recorded_if_present_else_the_first_scored_by_name() -> None:
    assert scored_graders(["judge:b", "code", "judge:a", "judge:b"]) == ["judge:a", "judge:b"]
    assert headline_grader(["judge:b", "recorded", "judge:a"]) == "recorded"
    assert headline_grader(scored_graders(["judge:b", "code", "judge:a"])) == "judge:a"
    assert headline_grader(["judge:b", "judge:a"]) == "judge:a", "by name, not by position"
    assert headline_grader(scored_graders(["code"])) == ""
