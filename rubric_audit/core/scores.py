"""Scores per model and variant from stored attempts and grades (APEX pass rule).

An attempt passes only if every criterion passes. Only graded attempts count: an ungraded one
(no grader has graded it yet) and an unavailable one (it failed outside the model) are counted
apart, and a graded attempt with no fail but an `unscored` criterion has no outcome either; none
of them is a fail, and a task with none but those has no outcome for its model.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from statistics import mean

from pydantic import BaseModel

from rubric_audit.core.model import (
    CODE_GRADER,
    AttemptRow,
    GradeRow,
    Outcome,
    Task,
    grades_by_attempt,
    task_outcome,
)


class VariantScore(BaseModel):
    """Scores of one model and prompt variant, by one grader."""

    model: str
    variant: str
    grader: str
    tasks: int
    tasks_scored: int
    attempts: int
    graded_attempts: int
    ungraded_attempts: int
    unavailable_attempts: int
    unscored_attempts: int
    pass_at_1: float | None
    mean_criterion_score: float | None


def scored_graders(graders: Iterable[str]) -> list[str]:
    """The graders scores are computed for, by name: every grader but `code`, the code checker,
    which is held against them rather than scored."""
    return sorted(set(graders) - {CODE_GRADER})


def headline_grader(graders: Iterable[str]) -> str:
    """The grader the report leads with and the review queues follow: `recorded` (the verdicts
    the benchmark recorded) if present, else the first by name; "" when there is none."""
    return min(graders, key=lambda g: (g != "recorded", g), default="")


def attempt_outcome(task: Task, grades: Sequence[GradeRow]) -> Outcome:
    """pass if every criterion passes, fail if any fails, else unscored (`task_outcome`)."""
    verdicts = {g.criterion_id: g.verdict for g in grades}
    return task_outcome([verdicts.get(c.id, "unscored") for c in task.criteria])


def criterion_score(task: Task, grades: Sequence[GradeRow]) -> float | None:
    """Weighted share of criteria that pass; None for a task without weight."""
    passed = {g.criterion_id for g in grades if g.verdict == "pass"}
    total = sum(c.weight for c in task.criteria)
    return sum(c.weight for c in task.criteria if c.id in passed) / total if total else None


def score_variants(tasks: list[Task], attempts: Sequence[AttemptRow], grades: Iterable[GradeRow],
                   grader: str = "recorded") -> list[VariantScore]:
    """pass@1 = mean over tasks of the share of graded attempts that pass every criterion."""
    task_by_id = {t.id: t for t in tasks}
    by_attempt = grades_by_attempt(grades, grader)
    groups: dict[tuple[str, str], list[AttemptRow]] = defaultdict(list)
    for a in attempts:
        if a.task_id in task_by_id:
            groups[(a.model, a.variant)].append(a)
    scores = []
    for (model, variant), group in sorted(groups.items()):
        per_task_pass: dict[str, list[float]] = defaultdict(list)
        per_task_score: dict[str, list[float]] = defaultdict(list)
        unscored = 0
        for a in group:
            if a.state != "graded":
                continue
            task = task_by_id[a.task_id]
            outcome = attempt_outcome(task, by_attempt[a.id])
            if outcome == "unscored":
                unscored += 1
                continue
            per_task_pass[a.task_id].append(1.0 if outcome == "pass" else 0.0)
            score = criterion_score(task, by_attempt[a.id])
            if score is not None:
                per_task_score[a.task_id].append(score)
        states = Counter(a.state for a in group)
        scores.append(VariantScore(
            model=model, variant=variant, grader=grader,
            tasks=len({a.task_id for a in group}),
            tasks_scored=len(per_task_pass),
            attempts=len(group), graded_attempts=states["graded"],
            ungraded_attempts=states["ungraded"], unavailable_attempts=states["unavailable"],
            unscored_attempts=unscored,
            pass_at_1=mean(mean(v) for v in per_task_pass.values()) if per_task_pass else None,
            mean_criterion_score=(mean(mean(v) for v in per_task_score.values())
                                  if per_task_score else None),
        ))
    return scores
