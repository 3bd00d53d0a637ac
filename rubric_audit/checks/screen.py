"""The validity screen for tasks no model solved, and scores against what was achievable.

A task enters the screen when no model has a sound pass on it (every graded attempt fails, or its
only passes were flagged as hedged or unearned credit, or the null control passes too, or no
attempt has a verdict at all). Rules apply in order, first one wins: broken oracle (the gold
fails) -> ungraded (more than a threshold share of its attempts have no verdict, and more of
those were never graded than failed outside the model: a judge can grade them) -> infra-limited
(more than that share have no verdict, most of them unavailable) -> exploit-only (the only passes
are flagged) -> uncertified (no gold, or the gold never shown to pass) -> certified-unsolved.
An attempt without a verdict is one the screen's grader has not graded (ungraded, or graded only
by another grader) or an unavailable one; a task too few of whose attempts were graded is
neither solved nor unsolved, so it never reaches the last three rules.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel

from rubric_audit.core.model import (
    AttemptRow,
    ControlOutcome,
    GradeRow,
    Task,
    grades_by_attempt,
)
from rubric_audit.core.scores import attempt_outcome

Category = Literal["broken_oracle", "ungraded", "infra_limited", "exploit_only", "uncertified",
                   "certified_unsolved"]
ORDER: tuple[Category, ...] = ("broken_oracle", "ungraded", "infra_limited", "exploit_only",
                               "uncertified", "certified_unsolved")
UNSOUND_PASS_CHECKS = {"judge_credited_hedge", "judge_passed_value_outside_tolerance"}
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7)


class TaskEvidence(BaseModel):
    """What the screen needs about one task, gathered from the store."""

    task_id: str
    gold_outcome: Literal["pass", "fail", "undetermined", "none"]
    null_outcome: Literal["pass", "fail", "undetermined"]
    attempts: int
    ungraded: int  # ran, but no verdict from the screen's grader
    unavailable: int
    passes: int
    unsound_passes: int


class ScreenStep(BaseModel):
    requirement: str
    tasks: int


class Screen(BaseModel):
    threshold: float
    screened: int
    partition: dict[Category, int]
    tasks: dict[str, Category]
    steps: list[ScreenStep]
    sensitivity: dict[str, dict[Category, int]]


def classify(e: TaskEvidence, threshold: float) -> Category:
    if e.gold_outcome == "fail":
        return "broken_oracle"
    if e.attempts and (e.ungraded + e.unavailable) / e.attempts > threshold:
        return "ungraded" if e.ungraded >= e.unavailable else "infra_limited"
    if e.passes:
        return "exploit_only"
    if e.gold_outcome != "pass":
        return "uncertified"
    return "certified_unsolved"


def screened(evidence: list[TaskEvidence]) -> list[TaskEvidence]:
    """Tasks with no sound pass by any model (their passes, if any, are all flagged)."""
    return [e for e in evidence if e.passes == e.unsound_passes]


def screen(evidence: list[TaskEvidence], threshold: float = 0.5) -> Screen:
    chosen = screened(evidence)
    labels = {e.task_id: classify(e, threshold) for e in chosen}
    partition = {c: sum(v == c for v in labels.values()) for c in ORDER}
    remaining = len(chosen)
    steps = [ScreenStep(requirement="no sound pass by any model", tasks=remaining)]
    for category, requirement in zip(ORDER[:-1], (
            "the gold does not fail",
            f"at most {threshold:.0%} of attempts without a verdict, or more of those "
            f"unavailable than ungraded",
            f"at most {threshold:.0%} of attempts without a verdict",
            "no passes, not even flagged ones", "the gold is shown to pass"), strict=True):
        remaining -= partition[category]
        steps.append(ScreenStep(requirement=requirement, tasks=remaining))
    sensitivity = {f"{t:.1f}": {c: sum(classify(e, t) == c for e in chosen) for c in ORDER}
                   for t in THRESHOLDS}
    return Screen(threshold=threshold, screened=len(chosen), partition=partition, tasks=labels,
                  steps=steps, sensitivity=sensitivity)


def gather(tasks: list[Task], attempts: Sequence[AttemptRow], grades: Iterable[GradeRow],
           flagged: set[tuple[str | None, object]], gold: dict[str, ControlOutcome],
           null: dict[str, ControlOutcome],
           grader: str) -> list[TaskEvidence]:
    """Screen evidence per task from the stored attempts and one grader's verdicts; `flagged`
    are the (task, attempt) pairs findings of UNSOUND_PASS_CHECKS name."""
    by_attempt = grades_by_attempt(grades, grader)
    by_task: dict[str, list[AttemptRow]] = defaultdict(list)
    for a in attempts:
        by_task[a.task_id].append(a)
    out = []
    for task in tasks:
        own = by_task.get(task.id, [])
        graded = [a for a in own if a.state == "graded" and by_attempt.get(a.id)]
        unavailable = sum(a.state == "unavailable" for a in own)
        passing = [a for a in graded if attempt_outcome(task, by_attempt[a.id]) == "pass"]
        # When doing nothing passes (the null control), no pass shows the task was solved.
        vacuous = null.get(task.id) == "pass"
        out.append(TaskEvidence(
            task_id=task.id, gold_outcome=gold.get(task.id, "none"),
            null_outcome=null.get(task.id, "undetermined"),
            attempts=len(own), ungraded=len(own) - len(graded) - unavailable,
            unavailable=unavailable,
            passes=len(passing),
            unsound_passes=len(passing) if vacuous
            else sum((task.id, a.id) in flagged for a in passing)))
    return [e for e in out if e.attempts]
