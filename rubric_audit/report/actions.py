"""What to fix first: each flagged task by its strongest finding, ranked by severity and by the
measured precision of the check behind it (`evidence.confidence`, checks/precision.py), with the
fix that finding's evidence implies. The report's Next actions and its Tasks table share it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rubric_audit.core.model import SEVERITY_ORDER, Finding, Task
from rubric_audit.report.describe import criterion_numbers


def confidence(finding: Finding) -> float | None:
    """The precision the finding's check is trusted by: on unseen cases where measured there,
    else on the corpus its rules were tuned on; None where never measured."""
    measured = finding.evidence.get("confidence") or {}
    value = measured.get("unseen_precision", measured.get("corpus_precision"))
    return float(value) if isinstance(value, int | float) else None


def strength(finding: Finding) -> tuple[int, float]:
    """Sort key, strongest first: severity, then measured precision (a measured check before
    one never measured)."""
    precision = confidence(finding)
    return SEVERITY_ORDER[finding.severity], -(precision if precision is not None else -1.0)


def strongest(findings: Iterable[Finding]) -> Finding | None:
    """The finding to name first, of any severity (an info finding where that is all there is)."""
    return min(findings, key=strength, default=None)


def _criterion(finding: Finding, task: Task | None) -> str:
    """ "C2", or "the criterion" where the rubric does not have it."""
    numbers = criterion_numbers(task) if task else {}
    return numbers.get(finding.criterion_id or "", "the criterion")


def _recompute(finding: Finding, task: Task | None) -> str:
    evidence = finding.evidence
    wrong = [what for what, ok in ((_criterion(finding, task), evidence.get("criterion_matches")),
                                   ("the gold", evidence.get("gold_matches"))) if ok is False]
    value = evidence.get("value")
    shown = f"{value:,.4g}" if isinstance(value, int | float) else "the recomputed value"
    return (f"set {' and '.join(wrong) or 'the criterion'} to {shown}, what the workbook gives "
            f"with the task's inputs")


def _absent_terms(finding: Finding, task: Task | None) -> str:
    terms = ", ".join(str(t) for t in finding.evidence.get("absent_terms", []))
    return (f"put what {_criterion(finding, task)} grades ({terms}) where the agent can read it, "
            f"or drop {_criterion(finding, task)}")


def _missing_file(finding: Finding, task: Task | None) -> str:
    return (f"add {finding.evidence.get('file', 'the file')} to the world or the task's files, or "
            f"drop it from the prompt")


# check -> the fix its evidence implies: a sentence ({c} names the finding's criterion, "C2") or
# a function of the finding. A check not here states something no one has to fix (where the mail
# matters, an answer value traced nowhere): it is shown, never an action.
FIXES: dict[str, str | Callable[[Finding, Task | None], str]] = {
    "gold_recompute_mismatch": _recompute,
    "criterion_contradicts_explanation":
        "make {c} and its explanation state one value (the one the working supports)",
    "gold_contradicts_criterion": "correct the gold or {c}, whichever states the wrong value",
    "control_gold_fails": "correct the gold or the criteria it fails ({c} first)",
    "criteria_conflict_on_quantity":
        "make the criteria require one value for this quantity ({c} and the one it conflicts "
        "with)",
    "criterion_restates_premise":
        "make {c} ask for what the answer must work out, not what the prompt gives, or drop it",
    "criterion_terms_absent_from_world": _absent_terms,
    "prompt_names_missing_file": _missing_file,
    "rubric_only_negative_criteria":
        "add a criterion only a right answer meets (an empty answer passes every one now)",
    "control_null_passes": "add a criterion an empty answer and a refusal fail",
    "criterion_duplicated": "drop {c}: another criterion has its text",
    "numeric_criterion_without_tolerance": "state the tolerance or rounding {c} accepts",
    "control_near_miss_passes": "tighten {c} (or the judge's reading of it) so the near miss fails",
    "control_alternative_fails": "let {c} accept a rewording of the gold (or correct the judge)",
    "judge_flips_on_repeats": "make {c} decidable: the judge gave one answer different verdicts",
    "judge_failed_value_within_tolerance":
        "re-grade {c}: the answer's value is within its tolerance (a possible grader error)",
    "judge_passed_value_outside_tolerance":
        "re-grade {c}: the answer's value is outside its tolerance (a possible unearned pass)",
    "judge_credited_hedge":
        "re-grade {c}: the answer hedges between values (a possible unearned pass)",
    "gold_ignores_message_instruction": "correct the gold (and {c}) to follow the message it quotes",
    "criterion_not_asked_by_prompt": "ask for what {c} grades in the prompt, or drop {c}",
    "prompt_has_two_readings": "say in the prompt which reading is meant, or accept both in {c}",
    "regold_recipe_error": "correct the task's recipe in the benchmark's regold/ folder",
}


def fix(finding: Finding, task: Task | None) -> str | None:
    """The fix a finding's evidence implies, or None for a check that asks for none; input
    problems are fixed in the file they name."""
    rule = FIXES.get(finding.check)
    if isinstance(rule, str):
        return rule.format(c=_criterion(finding, task))
    if rule is not None:
        return rule(finding, task)
    if finding.check.startswith("input_"):
        return "correct the input the finding names"
    return None


@dataclass(frozen=True)
class TaskToFix:
    """A task with findings that ask for a fix: the strongest of them and how many there are."""

    task_id: str
    finding: Finding
    fix: str
    findings: int
    checks: int


def tasks_to_fix(findings: Iterable[Finding], tasks: dict[str, Task], names: dict[str, str]
                 ) -> list[TaskToFix]:
    """Every task with a finding that asks for a fix, strongest first: by its strongest
    finding's severity and measured precision, then by how many checks agree, then by name."""
    by_task: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.task_id and fix(finding, tasks.get(finding.task_id)) is not None:
            by_task.setdefault(finding.task_id, []).append(finding)
    ranked = []
    for task_id, found in by_task.items():
        top = min(found, key=strength)
        ranked.append(TaskToFix(task_id=task_id, finding=top,
                                fix=fix(top, tasks.get(task_id)) or "",
                                findings=len(found), checks=len({f.check for f in found})))
    return sorted(ranked, key=lambda t: (*strength(t.finding), -t.checks,
                                         names.get(t.task_id, t.task_id)))
