"""The deterministic numeric checker: grade a criterion's stated value against an answer in code.

A criterion's targets are the quantities after its last copula ("... IRR at 15.0% premium is
15.6%" targets 15.6%), or all of its quantities when it has none. A tolerance is taken from the
criterion ("accept A to B", "within X", "+/- X", "to one decimal", "nearest million"), else from
the prompt, else from the criterion's own precision ("2.1bn" accepts what rounds to it, 2.07bn).
Values the prompt or the criterion's conditions mention are not taken as the answer's claims.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from rubric_audit.checks.numbers import Quantity, find_quantities, find_ranges
from rubric_audit.model import Attempt, CriterionGrade, Finding, Task

WORD_DIGITS = {"one": 1, "two": 2, "three": 3, "four": 4, "zero": 0}
TOLERANCE_CLAUSE = re.compile(
    r"\(?\s*(?:\baccept(?:s|ed|ing)?\b|\bwithin\b|±|\+/[-−]|\bplus\s+or\s+minus\b|\btolerance\b)"
    r"[^()]*\)?",
    re.I)
COPULA = re.compile(r"\b(?:is|are|was|were|equals|to\s+be)\b|=", re.I)
DECIMALS = re.compile(r"(?:to|at)\s+(\d|one|two|three|four|zero)\s+(?:decimal|d\.?p\.?)", re.I)
NEAREST = re.compile(r"nearest\s+(cent|penny|whole\s+number|dollar|euro|pound|unit|thousand|"
                     r"million|billion|percent|tenth|hundredth|basis\s+point)", re.I)
NEAREST_STEP = {"cent": 0.01, "penny": 0.01, "whole number": 1.0, "dollar": 1.0, "euro": 1.0,
                "pound": 1.0, "unit": 1.0, "thousand": 1e3, "million": 1e6, "billion": 1e9,
                "percent": 1.0, "tenth": 0.1, "hundredth": 0.01, "basis point": 0.01}
NEAR = (0.8, 1.25)  # values within this ratio of the target are taken as claims about it


@dataclass(frozen=True)
class Tolerance:
    low: float
    high: float
    basis: str

    def contains(self, value: float) -> bool:
        slack = 1e-9 * max(1.0, abs(self.low), abs(self.high))
        return self.low - slack <= value <= self.high + slack


@dataclass(frozen=True)
class TargetCheck:
    """How one target quantity fared in the answer."""

    target: Quantity
    tolerance: Tolerance
    matched: list[Quantity]
    missed: list[Quantity]
    hedged: bool
    outcome: Literal["pass", "fail", "not_found"]


@dataclass(frozen=True)
class CodeVerdict:
    verdict: Literal["pass", "fail", "not_applicable"]
    reason: str
    checks: list[TargetCheck]

    @property
    def hedged(self) -> bool:
        return any(c.hedged for c in self.checks)


def split_criterion(text: str) -> tuple[str, str]:
    """(the criterion without its tolerance clauses, the tolerance clauses)."""
    clauses = [m.group(0) for m in TOLERANCE_CLAUSE.finditer(text)
               if find_quantities(m.group(0)) or DECIMALS.search(m.group(0))]
    for clause in clauses:
        text = text.replace(clause, " ")
    return text, " ".join(clauses)


def criterion_targets(text: str) -> tuple[list[Quantity], list[Quantity]]:
    """(targets, condition quantities) of a criterion with its tolerance clauses removed."""
    copulas = list(COPULA.finditer(text))
    found = find_quantities(text)
    if not copulas:
        return found, []
    cut = copulas[-1].end()
    return [q for q in found if q.start >= cut], [q for q in found if q.start < cut]


def _display(q: Quantity, target: Quantity) -> float:
    """q's value in the target's terms: an unscaled side is read in the other side's scale."""
    if q.dimension in ("percent", "multiple") or q.scale == target.scale:
        return q.value
    if q.scale == 1.0:
        return q.value * target.scale
    if target.scale == 1.0:
        return q.value / q.scale
    return q.value


def _compatible(q: Quantity, target: Quantity) -> bool:
    if q.compatible(target):
        return True
    kinds = {q.dimension, target.dimension}
    return kinds == {"plain", "currency"}


def _stated_tolerance(text: str, target: Quantity) -> Tolerance | None:
    if not text:
        return None
    found = find_quantities(text)
    for low, high in find_ranges(text, found):
        if _compatible(low, target) and _display(low, target) <= target.value * 1.0001 + 1e-12 \
                and _display(high, target) >= target.value * 0.9999 - 1e-12:
            return Tolerance(_display(low, target), _display(high, target),
                             f"stated range {low.text} to {high.text}")
    plus_minus = re.search(r"(?:within|±|\+/[-−]|plus\s+or\s+minus)\s*", text, re.I)
    if plus_minus:
        after = [q for q in found if q.start >= plus_minus.end()]
        if after:
            width = after[0]
            if width.dimension == "percent" and target.dimension != "percent":
                delta = abs(target.value) * width.value / 100
            else:
                delta = abs(_display(width, target))
            return Tolerance(target.value - delta, target.value + delta, f"stated +/- {width.text}")
    return _rounding_tolerance(text, target)


def _rounding_tolerance(text: str, target: Quantity) -> Tolerance | None:
    decimals = DECIMALS.search(text)
    if decimals:
        places = decimals.group(1).lower()
        d = WORD_DIGITS.get(places, int(places) if places.isdigit() else 0)
        half = 0.5 * 10.0 ** -d * target.scale
        places_text = f"{d} decimal place" + ("" if d == 1 else "s")
        return Tolerance(target.value - half, target.value + half, f"rounded to {places_text}")
    nearest = NEAREST.search(text)
    if nearest:
        unit = re.sub(r"\s+", " ", nearest.group(1).lower())
        half = 0.5 * NEAREST_STEP[unit]
        return Tolerance(target.value - half, target.value + half, f"rounded to nearest {unit}")
    return None


def tolerance_for(target: Quantity, criterion_tolerance: str, prompt: str) -> Tolerance:
    """The stated tolerance (criterion first, then prompt), else the criterion's precision."""
    stated = _stated_tolerance(criterion_tolerance, target)
    if stated is None:
        stated = _stated_tolerance(_tolerance_sentences(prompt), target)
    if stated is not None:
        return stated
    half = target.step / 2
    return Tolerance(target.value - half, target.value + half, f"precision of {target.text}")


def _tolerance_sentences(prompt: str) -> str:
    """Only the prompt's sentences about tolerance or rounding, not its input values."""
    sentences = re.split(r"(?<=[.!?])\s+", prompt)
    return " ".join(s for s in sentences
                    if re.search(r"within|±|\+/-|accept|round|decimal|nearest", s, re.I))


def _near(q: Quantity, target: Quantity, tolerance: Tolerance) -> bool:
    """Close enough to be a claim about the target: inside its tolerance or within NEAR."""
    value = _display(q, target)
    if tolerance.contains(value):
        return True
    if target.value == 0:
        return abs(value) <= 10 * target.step
    ratio = value / target.value
    return NEAR[0] <= ratio <= NEAR[1]


def _is_context(q: Quantity, context: list[Quantity], target: Quantity) -> bool:
    return any(c.dimension == q.dimension and abs(c.value - q.value) < 1e-9 * max(1, abs(c.value))
               and abs(c.value - target.value) > target.step for c in context)


def _alternatives(answer: str, values: list[Quantity], matched: list[Quantity]) -> bool:
    """A matching value offered beside another as alternatives: 'X or Y', 'X / Y'.

    Both must be of the same order (within 3x): "NOK 1,940m, or NOK 48.50 per share" restates
    one figure in other terms rather than offering two.
    """
    for a, b in itertools.pairwise(values):
        gap = answer[a.end:b.start]
        same_order = a.value and b.value and 1 / 3 <= b.value / a.value <= 3
        if (a in matched) != (b in matched) and same_order and len(gap) <= 30 \
                and re.search(r"\bor\b|\beither\b|/", gap, re.I):
            return True
    return False


def check_target(target: Quantity, tolerance: Tolerance, answer: str,
                 context: list[Quantity]) -> TargetCheck:
    """Whether the answer states the target: a value near it inside the tolerance, unhedged.

    Values far from the target are taken as other quantities, not as claims about this one; an
    answer with no value near the target gives no evidence either way (not_found).
    """
    quantities = find_quantities(answer)
    compatible = [q for q in quantities if _compatible(q, target)
                  and not _is_context(q, context, target)]
    near = [q for q in compatible if _near(q, target, tolerance)]
    matched = [q for q in near if tolerance.contains(_display(q, target))]
    missed = [q for q in near if not tolerance.contains(_display(q, target))]
    ranges = [r for r in find_ranges(answer, quantities) if r[0] in near or r[1] in near]
    hedged = bool(ranges) or _alternatives(answer, compatible, matched)
    outcome: Literal["pass", "fail", "not_found"]
    if not near:
        outcome = "not_found"
    elif matched and not hedged:
        outcome = "pass"
    else:
        outcome = "fail"
    return TargetCheck(target, tolerance, matched, missed, hedged, outcome)


def grade_numeric(criterion: str, answer: str | None, prompt: str = "") -> CodeVerdict:
    """pass / fail / not_applicable for one criterion and one answer, with the reason."""
    body, tolerance_text = split_criterion(criterion)
    targets, conditions = criterion_targets(body)
    if not targets:
        return CodeVerdict("not_applicable", "the criterion states no numeric value", [])
    if not answer or not answer.strip():
        return CodeVerdict("fail", "the answer is empty", [])
    context = conditions + find_quantities(prompt)
    checks = [check_target(t, tolerance_for(t, tolerance_text, prompt), answer, context)
              for t in targets]
    missing = [c for c in checks if c.outcome == "not_found"]
    if missing:
        names = ", ".join(c.target.text for c in missing)
        return CodeVerdict("not_applicable", f"the answer states no value near {names}", checks)
    failed = [c for c in checks if c.outcome == "fail"]
    if not failed:
        return CodeVerdict("pass", "; ".join(
            f"{c.matched[0].text} meets {c.target.text} ({c.tolerance.basis})" for c in checks),
            checks)
    parts = []
    for c in failed:
        said = ", ".join(q.text for q in c.matched + c.missed) or "nothing near it"
        kind = "hedged between" if c.hedged else "states"
        parts.append(f"answer {kind} {said}; target {c.target.text} ({c.tolerance.basis})")
    return CodeVerdict("fail", "; ".join(parts), checks)


def code_verdicts(task: Task, attempt: Attempt) -> dict[str, CodeVerdict]:
    """The code checker's verdict on every criterion of an attempt that has an answer."""
    if attempt.answer is None:
        return {}
    return {c.id: grade_numeric(c.text, attempt.answer, task.prompt) for c in task.criteria}


def code_grades(attempt: Attempt, verdicts: dict[str, CodeVerdict]) -> list[CriterionGrade]:
    return [CriterionGrade(attempt_id=attempt.id, criterion_id=criterion_id, grader="code",
                           verdict=v.verdict, rationale=v.reason)
            for criterion_id, v in verdicts.items()]


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
