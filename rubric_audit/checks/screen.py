"""The validity screen for tasks no model solved, and scores against what was achievable.

A task enters the screen when no model has a sound pass on it (every graded attempt fails, or its
only passes were flagged as hedged or unearned credit, or the null control passes too). Rules
apply in order, first one wins: broken oracle (the gold fails) -> infra-limited (share of
unavailable attempts above a threshold) -> exploit-only (the only passes are flagged) ->
uncertified (no gold, or the gold never shown to pass) -> certified-unsolved.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Literal

from pydantic import BaseModel

from rubric_audit.model import Attempt, CriterionGrade, Finding, Task
from rubric_audit.scores import attempt_outcome

Category = Literal["broken_oracle", "infra_limited", "exploit_only", "uncertified",
                   "certified_unsolved"]
ORDER: tuple[Category, ...] = ("broken_oracle", "infra_limited", "exploit_only", "uncertified",
                               "certified_unsolved")
UNSOUND_PASS_CHECKS = {"judge_credited_hedge", "judge_passed_value_outside_tolerance"}
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7)


class TaskEvidence(BaseModel):
    """What the screen needs about one task, gathered from the store."""

    task_id: str
    gold_outcome: Literal["pass", "fail", "undetermined", "none"]
    null_outcome: Literal["pass", "fail", "undetermined"]
    attempts: int
    unavailable: int
    passes: int
    unsound_passes: int


class ScreenStep(BaseModel):
    requirement: str
    tasks: int


class Screen(BaseModel):
    threshold: float
    screened: int
    partition: dict[str, int]
    tasks: dict[str, str]
    steps: list[ScreenStep]
    sensitivity: dict[str, dict[str, int]]


def classify(e: TaskEvidence, threshold: float) -> Category:
    if e.gold_outcome == "fail":
        return "broken_oracle"
    if e.attempts and e.unavailable / e.attempts > threshold:
        return "infra_limited"
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
            "the gold does not fail", f"unavailable attempts at most {threshold:.0%}",
            "no passes, not even flagged ones", "the gold is shown to pass"), strict=True):
        remaining -= partition[category]
        steps.append(ScreenStep(requirement=requirement, tasks=remaining))
    sensitivity = {f"{t:.1f}": {c: sum(classify(e, t) == c for e in chosen) for c in ORDER}
                   for t in THRESHOLDS}
    return Screen(threshold=threshold, screened=len(chosen), partition=partition, tasks=labels,
                  steps=steps, sensitivity=sensitivity)


def gather(tasks: list[Task], attempts: list[Attempt], grades: list[CriterionGrade],
           findings: list[Finding], gold: dict[str, str], null: dict[str, str],
           grader: str) -> list[TaskEvidence]:
    """Screen evidence per task from the stored attempts, one grader's verdicts and findings."""
    by_attempt: dict[str, list[CriterionGrade]] = defaultdict(list)
    for g in grades:
        if g.grader == grader:
            by_attempt[g.attempt_id].append(g)
    flagged = {(f.task_id, f.evidence.get("attempt")) for f in findings
               if f.check in UNSOUND_PASS_CHECKS}
    by_task: dict[str, list[Attempt]] = defaultdict(list)
    for a in attempts:
        by_task[a.task_id].append(a)
    out = []
    for task in tasks:
        own = by_task.get(task.id, [])
        graded = [a for a in own if a.state == "graded" and by_attempt.get(a.id)]
        passing = [a for a in graded if attempt_outcome(task, by_attempt[a.id]) == "pass"]
        # When doing nothing passes (the null control), no pass shows the task was solved.
        vacuous = null.get(task.id) == "pass"
        out.append(TaskEvidence(
            task_id=task.id, gold_outcome=gold.get(task.id, "none"),  # type: ignore[arg-type]
            null_outcome=null.get(task.id, "undetermined"),  # type: ignore[arg-type]
            attempts=len(own), unavailable=sum(a.state == "unavailable" for a in own),
            passes=len(passing),
            unsound_passes=len(passing) if vacuous
            else sum((task.id, a.id) in flagged for a in passing)))
    return [e for e in out if e.attempts]
