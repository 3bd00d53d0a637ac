"""Findings where a judge and the code checker disagree on a numeric criterion.

The code checker's verdict is evidence against the judge's: each finding says which way they
disagree (a value within tolerance failed, a hedge credited, a value outside tolerance passed)
and carries the targets, tolerances and the answer's quoted values the checker decided on.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rubric_audit.checks.code_grade import CodeVerdict
from rubric_audit.core.model import Attempt, CriterionGrade, Finding, Task


def _evidence(attempt: Attempt, judge: CriterionGrade, verdict: CodeVerdict) -> dict[str, Any]:
    return {
        "attempt": attempt.id, "grader": judge.grader, "judge_rationale": judge.rationale[:500],
        "code_reason": verdict.reason,
        "targets": [{"text": c.target.text, "value": c.target.value,
                     "tolerance": [c.tolerance.low, c.tolerance.high],
                     "tolerance_basis": c.tolerance.basis,
                     "answer_values": [q.text for q in c.matched + c.missed],
                     "quotes": [attempt.answer[max(0, q.start - 60):q.end + 20].strip()
                                for q in c.matched + c.missed] if attempt.answer else []}
                    for c in verdict.checks],
    }


def judge_disagrees_with_code(task: Task, attempt: Attempt, judge_grades: list[CriterionGrade],
                              verdicts: dict[str, CodeVerdict]) -> Iterator[Finding]:
    """Where a judge and the code checker disagree on a numeric criterion.

    judge fail + code pass: possible grader error (`judge_failed_value_within_tolerance`);
    judge pass + hedged answer: possible hedge credited (`judge_credited_hedge`);
    judge pass + code fail: possible unearned credit (`judge_passed_value_outside_tolerance`).
    """
    for judge in judge_grades:
        verdict = verdicts.get(judge.criterion_id)
        if verdict is None or judge.verdict not in ("pass", "fail"):
            continue
        if verdict.verdict == "not_applicable" or verdict.verdict == judge.verdict:
            continue
        if judge.verdict == "fail":
            check, message = ("judge_failed_value_within_tolerance",
                              f"{judge.grader} failed {attempt.id}, but its answer states a value "
                              f"within tolerance: {verdict.reason}")
        elif verdict.hedged:
            check, message = ("judge_credited_hedge",
                              f"{judge.grader} passed {attempt.id}, whose answer hedges: "
                              f"{verdict.reason}")
        else:
            check, message = ("judge_passed_value_outside_tolerance",
                              f"{judge.grader} passed {attempt.id}, but {verdict.reason}")
        yield Finding(task_id=task.id, criterion_id=judge.criterion_id, check=check,
                      severity="warning", message=message,
                      evidence=_evidence(attempt, judge, verdict))
