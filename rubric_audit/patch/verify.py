"""Verification of a patch: the deterministic controls of every patched task before and after (a
control the patch breaks refuses it), and every recorded attempt graded again under the patched
rubric, with each model's score before and after and the attempts whose verdict changed.

A criterion the patch changed (its text, or the task's prompt) is graded again, by the code
checker (its `not_applicable` leaves the criterion unscored) or by a judge where one is given;
every other criterion keeps the verdict it has, and a removed one counts no more. Scores are the
headline grader's (recorded, where the runs carry grades) before and that grader's verdicts with
the changed criteria graded again after, by the APEX rule.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from rubric_audit.checks.code_grade import grade_numeric
from rubric_audit.checks.controls import code_grade_control, control_findings, make_controls
from rubric_audit.core.model import (
    Attempt,
    Criterion,
    CriterionGrade,
    Finding,
    Outcome,
    Task,
    Verdict,
    grades_by_attempt,
)
from rubric_audit.core.scores import attempt_outcome, headline_grader, score_variants, scored_graders
from rubric_audit.report.describe import criterion_numbers, readable

Regrader = Callable[[Attempt, Task, Criterion], tuple[Verdict, str]]


class ControlCheck(BaseModel):
    """One control of a patched task: what broke it before the patch and after (None: held)."""

    task: str
    task_name: str
    control: str
    criterion: str | None
    before: str | None
    after: str | None

    @property
    def broken_by_patch(self) -> bool:
        return self.after is not None and self.before is None


class ScoreMove(BaseModel):
    """One model and variant's pass@1 before the patch and after, over the attempts graded."""

    model: str
    variant: str
    grader: str
    graded: int
    before: float | None
    after: float | None
    unscored_after: int

    @property
    def delta(self) -> float | None:
        return None if self.before is None or self.after is None else self.after - self.before

    def change(self) -> str:
        """The delta in percentage points, signed ("+29.3 points"), or "n/a"."""
        return "n/a" if self.delta is None else f"{100 * self.delta:+.1f} points"


class VerdictChange(BaseModel):
    """An attempt whose outcome the patch changed, and why, criterion by criterion."""

    attempt: str
    model: str
    task_name: str
    grader: str
    before: Outcome
    after: Outcome
    criteria: list[str]


class Verification(BaseModel):
    controls: list[ControlCheck]
    scores: list[ScoreMove]
    changed: list[VerdictChange]


def _broken(task: Task) -> tuple[list[str], dict[str, Finding]]:
    """The task's controls (by id) and the code checker's findings on those it breaks."""
    controls = make_controls(task)
    graded = [(c, code_grade_control(task, c)) for c in controls]
    return [c.id for c in controls], {f.evidence["control"]: f
                                       for f in control_findings(task, graded)}


def check_controls(before: dict[str, Task], after: dict[str, Task]) -> list[ControlCheck]:
    """Every control of each patched task (`after`), graded in code before and after."""
    checks = []
    for task_id, task in sorted(after.items()):
        _, was = _broken(before[task_id])
        ids, now = _broken(task)
        for control_id in ids:
            kind = control_id.removeprefix(f"{task_id}:")
            criterion = next((c.id for c in task.criteria if kind.endswith(f":{c.id}")), None)
            checks.append(ControlCheck(
                task=task_id, task_name=task.name,
                control=kind.removesuffix(f":{criterion}") if criterion else kind,
                criterion=criterion,
                before=readable(was[control_id].message, task) if control_id in was else None,
                after=readable(now[control_id].message, task) if control_id in now else None))
    return checks


def changed_criteria(before: Task, after: Task) -> set[str]:
    """The criteria of `after` a grader must grade again: all of them if the prompt changed."""
    if before.prompt != after.prompt:
        return {c.id for c in after.criteria}
    return {c.id for c in after.criteria if (old := before.criterion(c.id)) is None
            or old.text != c.text}


def code_regrader(attempt: Attempt, task: Task, criterion: Criterion) -> tuple[Verdict, str]:
    """The code checker under the patched rubric; where it cannot decide, unscored."""
    verdict = grade_numeric(criterion.text, attempt.answer, task.prompt, bool(attempt.artifacts))
    return ("unscored" if verdict.verdict == "not_applicable" else verdict.verdict), verdict.reason


def regrade(before: dict[str, Task], after: dict[str, Task], attempts: list[Attempt],
            grades: list[CriterionGrade], regrader: Regrader, by: str
            ) -> tuple[list[ScoreMove], list[VerdictChange]]:
    """Scores before and after, and the attempts whose outcome changed; `by` names who grades
    the changed criteria again (`regrader`)."""
    headline = headline_grader(scored_graders(g.grader for g in grades))
    label = f"{headline or 'no grader'}, changed criteria by {by}"
    recorded = grades_by_attempt(grades, headline)
    patched = {**before, **after}
    again: list[CriterionGrade] = []
    changes: list[VerdictChange] = []
    for attempt in attempts:
        task = patched.get(attempt.task_id)
        if task is None or attempt.state != "graded":
            continue
        own = {g.criterion_id: g for g in recorded.get(attempt.id, [])}
        changed = changed_criteria(before[task.id], task) if task.id in after else set()
        mine = []
        why = []
        numbers = criterion_numbers(task)
        for criterion in task.criteria:
            if criterion.id in changed and attempt.answer is not None:
                verdict, reason = regrader(attempt, task, criterion)
                was = own[criterion.id].verdict if criterion.id in own else "none"
                if verdict != was:
                    why.append(f"{numbers[criterion.id]} {was} -> {verdict}: {reason}")
                mine.append(CriterionGrade(attempt_id=attempt.id, criterion_id=criterion.id,
                                           grader=label, verdict=verdict, rationale=reason))
            elif criterion.id in own:
                mine.append(own[criterion.id].model_copy(update={"grader": label}))
        again += mine
        old, new = (attempt_outcome(before[task.id], recorded.get(attempt.id, [])),
                    attempt_outcome(task, mine))
        if old != new:
            removed = {c.id for c in before[task.id].criteria} - {c.id for c in task.criteria}
            why += [f"{criterion_numbers(before[task.id])[c]} removed" for c in sorted(removed)]
            changes.append(VerdictChange(attempt=readable(attempt.id, task), model=attempt.model,
                                         task_name=task.name, grader=label, before=old, after=new,
                                         criteria=why))
    moved = {(s.model, s.variant): s for s in score_variants(
        list(patched.values()), attempts, again, label)}
    scores = [ScoreMove(model=s.model, variant=s.variant, grader=label,
                        graded=s.graded_attempts, before=s.pass_at_1,
                        after=moved[(s.model, s.variant)].pass_at_1,
                        unscored_after=moved[(s.model, s.variant)].unscored_attempts)
              for s in score_variants(list(before.values()), attempts, grades, headline)]
    return scores, changes
