"""Findings where a judge and the code checker disagree on a numeric criterion.

The code checker's verdict is evidence against the judge's: each finding says which way they
disagree (a value within tolerance failed, a hedge credited, a value outside tolerance passed)
and carries the targets, tolerances and the answer's quoted values the checker decided on.

A finding says the judge erred, so it needs the checker to be right exactly where it disagrees
with a judge: where the checker's pass rests on more than one reading of the answer (several
values of the target's kind, a direction, a window or a party in play, a self-correction or
the answer's own rounding) a judge's fail is not called a judge error. Those doubts are named in
every finding's evidence (`doubts`), with the preconditions a judge-error finding needs.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from rubric_audit.checks.answer import read_answer
from rubric_audit.checks.code_grade import CodeVerdict
from rubric_audit.checks.criterion import read_claim
from rubric_audit.core.model import Attempt, CriterionGrade, Finding, Task

PRECONDITIONS = ("each target decided by the answer's one value of its kind",
                 "no direction, window or party in play", "no self-correction or rounding")


def doubts(criterion: str, prompt: str, answer: str, verdict: CodeVerdict) -> list[str]:
    """Why the checker's verdict may rest on one reading of several: empty when every
    precondition of a judge-error finding holds."""
    claim, reading = read_claim(criterion, prompt), read_answer(answer)
    out = []
    for n, check in enumerate(verdict.checks):
        kin = sum(q.compatible(check.target) for q in reading.quantities)
        if kin > 1 or len(check.matched) + len(check.missed) != 1:
            out.append(f"the answer states {kin} values of the kind of {check.target.text}")
        if n < len(claim.targets) and (claim.polarities[n] or claim.valences[n]
                                       or claim.roles[n] != "level"):
            out.append(f"{check.target.text} has a direction or is a change")
    if claim.windows:
        out.append("the criterion's values are measured within a window")
    if claim.payment:
        out.append("the criterion says who owes whom")
    if reading.revised_at >= 0 or reading.roundings:
        out.append("the answer corrects or rounds its own figures")
    return out


def _evidence(attempt: Attempt, judge: CriterionGrade, verdict: CodeVerdict,
              doubted: list[str]) -> dict[str, Any]:
    return {
        "attempt": attempt.id, "grader": judge.grader, "judge_rationale": judge.rationale[:500],
        "code_reason": verdict.reason,
        "preconditions": list(PRECONDITIONS), "doubts": doubted,
        "targets": [{"text": c.target.text, "value": c.target.value,
                     "tolerance": [x if math.isfinite(x) else None  # "at least 95%": open
                                   for x in (c.tolerance.low, c.tolerance.high)],
                     "tolerance_basis": c.tolerance.basis,
                     "answer_values": [q.text for q in c.matched + c.missed],
                     "quotes": [attempt.answer[max(0, q.start - 60):q.end + 20].strip()
                                for q in c.matched + c.missed] if attempt.answer else []}
                    for c in verdict.checks],
    }


def judge_disagrees_with_code(task: Task, attempt: Attempt, judge_grades: list[CriterionGrade],
                              verdicts: dict[str, CodeVerdict]) -> Iterator[Finding]:
    """Where a judge and the code checker disagree on a numeric criterion.

    judge fail + code pass, every precondition holding: possible grader error
    (`judge_failed_value_within_tolerance`); judge pass + hedged answer: possible hedge credited
    (`judge_credited_hedge`); judge pass + code fail: possible unearned credit
    (`judge_passed_value_outside_tolerance`).
    """
    for judge in judge_grades:
        verdict = verdicts.get(judge.criterion_id)
        criterion = task.criterion(judge.criterion_id)
        if verdict is None or criterion is None or judge.verdict not in ("pass", "fail"):
            continue
        if verdict.verdict == "not_applicable" or verdict.verdict == judge.verdict:
            continue
        doubted = doubts(criterion.text, task.prompt, attempt.answer or "", verdict)
        if judge.verdict == "fail":
            if doubted:
                continue
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
                      evidence=_evidence(attempt, judge, verdict, doubted))
