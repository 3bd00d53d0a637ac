"""Confirmed defects: the audit's findings that a reviewer, or a measured precision, stands behind.

A finding is confirmed by a reviewer's label on its task (`defective_task`, `grader_error`, or
`unearned` credit on a pass: the label names the problem, the finding what it is), which takes the
task's error and warning findings, or its info findings where it has nothing stronger (for a grader
error also what is said of the judge and of a missing tolerance, at any severity); by a reviewer
confirming that one finding; or, for the author to accept in the proposals file, by its check's
measured precision (TRUSTED or better, on unseen cases where measured there). A finding a reviewer
called a false alarm is never taken.
Defects are the confirmed findings grouped by task and criterion (None: the task as a whole).
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from rubric_audit.checks.precision import TRUSTED
from rubric_audit.core.model import LABEL_NAMES, SEVERITY_ORDER, Finding, FindingReview, Review
from rubric_audit.review.labels import (
    consensus,
    current_finding_verdicts,
    current_labels,
    finding_key,
)

CONFIRMING_LABELS = ("defective_task", "grader_error", "unearned")
GRADER_CHECKS = ("judge_failed_value_within_tolerance", "judge_passed_value_outside_tolerance",
                 "judge_credited_hedge", "numeric_criterion_without_tolerance")
"""What a grader-error label rests on besides the task's errors and warnings."""
NOT_OF_THE_TASK = ("answer_value_unsupported", "task_depends_on_messages")
"""Findings about an answer's numbers or what a task needs: no defect of the task."""


class Confirmed(BaseModel):
    """A finding and what confirms it, said for a reader; `reviewed`: a reviewer does (else its
    measured precision alone, for the author to accept)."""

    finding: Finding
    confirmed_by: list[str]
    reviewed: bool


class Defect(BaseModel):
    """The confirmed findings on one criterion of a task (criterion None: on the task);
    `unfounded`: a reviewer's label on a task none of whose findings it takes, said."""

    task_id: str
    criterion_id: str | None
    findings: list[Confirmed]
    unfounded: str = ""

    def checks(self) -> set[str]:
        return {c.finding.check for c in self.findings}

    @property
    def reviewed(self) -> bool:
        return bool(self.unfounded) or any(c.reviewed for c in self.findings)

    def of(self, *checks: str) -> list[Finding]:
        """The findings of the checks named, worst first."""
        return [c.finding for c in self.findings if c.finding.check in checks]


def _trusted(finding: Finding) -> str | None:
    """Why the finding is trusted by its check's measured precision alone, or None."""
    confidence = finding.evidence.get("confidence") or {}
    for kind in ("unseen", "corpus"):
        precision = confidence.get(f"{kind}_precision")
        if precision is not None:
            return (f"{finding.check} measured {precision:.1%} precise on "
                    f"{confidence.get(f'{kind}_findings', 0)} {kind} findings"
                    if precision >= TRUSTED else None)
    return None


def _label_takes(label: str, finding: Finding, strongest: str) -> bool:
    """Whether a reviewer's label on the task takes this finding: the task's error and warning
    findings, or its info findings where it has nothing stronger (a check measured under 90%
    speaks only as info, and the reviewer's label is then what stands behind it); for a grader
    error also what is said of the judge and of a missing tolerance."""
    return (finding.severity != "info" or strongest == "info"
            or (label == "grader_error" and finding.check in GRADER_CHECKS))


def confirmed_defects(findings: Iterable[Finding], reviews: list[tuple[int, Review]],
                      finding_reviews: list[tuple[int, FindingReview]]) -> list[Defect]:
    """Every confirmed finding, grouped by task and criterion (in the order of `findings`), then
    the labelled tasks none of whose findings the label takes."""
    labels = {task: (label, sorted(by)) for task, by in current_labels(reviews).items()
              if (label := consensus(by)) in CONFIRMING_LABELS}
    verdicts = {key: (verdict, sorted(by)) for key, by in current_finding_verdicts(
        finding_reviews).items() if (verdict := consensus(by)) is not None}
    grouped: dict[tuple[str, str | None], list[Confirmed]] = {}
    founded: set[str] = set()
    findings = [f for f in findings if f.task_id is not None and f.check not in NOT_OF_THE_TASK
                and verdicts.get(finding_key(f), (None, []))[0] != "false_alarm"]
    strongest: dict[str, str] = {}
    for finding in findings:
        task = finding.task_id or ""
        if task not in strongest or (SEVERITY_ORDER[finding.severity]
                                     < SEVERITY_ORDER[strongest[task]]):
            strongest[task] = finding.severity
    for finding in findings:
        assert finding.task_id is not None
        verdict, judges = verdicts.get(finding_key(finding), (None, []))
        why = []
        if verdict == "confirmed":
            why.append(f"{', '.join(judges)} confirmed this finding")
        label, reviewers = labels.get(finding.task_id, (None, []))
        if label is not None and _label_takes(label, finding, strongest[finding.task_id]):
            why.append(f"{', '.join(reviewers)} labelled the task {LABEL_NAMES[label]}")
            founded.add(finding.task_id)
        reviewed = bool(why)
        if (trusted := _trusted(finding)) is not None:
            why.append(trusted)
        if why:
            grouped.setdefault((finding.task_id, finding.criterion_id), []).append(
                Confirmed(finding=finding, confirmed_by=why, reviewed=reviewed))
    unfounded = [Defect(task_id=task_id, criterion_id=None, findings=[], unfounded=(
        f"{', '.join(reviewers)} labelled the task {LABEL_NAMES[label]}, but no finding says "
        f"what is wrong: confirm one (or audit with --lint-model), or write the fix"))
        for task_id, (label, reviewers) in labels.items() if task_id not in founded]
    return [Defect(task_id=task_id, criterion_id=criterion_id,
                   findings=sorted(found, key=lambda c: (SEVERITY_ORDER[c.finding.severity],
                                                         c.finding.check)))
            for (task_id, criterion_id), found in grouped.items()] + unfounded
