"""Controls: synthetic answers with a known expected verdict, and what a broken one means.

- gold: the gold answer must pass every criterion (else: broken oracle);
- null and refusal: an empty answer and a refusal must fail the task (else: non-discriminating);
- near misses, from the gold and one criterion: the value moved just outside tolerance, the right
  value hedged with a wrong one, the wrong scale or unit, the item dropped, the statement turned
  into an assumption; each must fail the criterion it targets (else: lenient criterion or judge);
- alternatives: the gold reworded without changing its meaning (units written out, sentences
  reordered) must still pass (else: strict criterion or judge).

Controls are built and graded in code here; the judge grades the same controls when configured.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping

from rubric_audit.checks.code_grade import grade_numeric
from rubric_audit.checks.criterion import Tolerance, criterion_targets, split_criterion, tolerance_for
from rubric_audit.checks.numbers import Quantity, find_quantities, value_in_terms_of
from rubric_audit.checks.precision import CODE_FAIL
from rubric_audit.checks.text import content_tokens, is_negative
from rubric_audit.core.model import (
    CODE_GRADER,
    Control,
    ControlGrade,
    ControlOutcome,
    Criterion,
    CriterionGrade,
    Expectation,
    Finding,
    Task,
    Verdict,
    task_outcome,
)

REFUSAL = "I'm sorry, but I can't help with that request."
SCALE_WORDS = {"m": "bn", "mm": "bn", "M": "bn", "bn": "m", "B": "m", "million": "billion",
               "billion": "million", "k": "m", "thousand": "million"}
CODE_GRADED = ("gold", "null", "refusal", "near_miss:outside_tolerance", "near_miss:hedged",
               "near_miss:wrong_scale", "near_miss:item_dropped", "alternative:units_written_out",
               "alternative:reordered")

def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+|\n+", text.strip()) if s.strip()]


def format_like(q: Quantity, value: float) -> str:
    """`value` (base units) written the way `q` was written: same prefix, scale and decimals."""
    number = re.search(r"\d[\d,]*(?:\.\d+)?|\.\d+", q.text)
    assert number is not None
    shown = abs(value) / q.scale
    body = f"{shown:,.{q.decimals}f}" if "," in number.group(0) else f"{shown:.{q.decimals}f}"
    text = q.text[:number.start()] + body + q.text[number.end():]
    text = text.lstrip("-−")
    return f"-{text}" if value < 0 else text


def _moved(q: Quantity, tolerance: Tolerance) -> float:
    """A value just outside the tolerance, by a step the written precision can show."""
    width = max(tolerance.high - tolerance.low, q.step)
    return tolerance.high + max(width, q.step * 2)


def _wrong_scale(q: Quantity) -> str | None:
    """The value in the wrong unit (% for x, x for %) or off by a factor of a thousand."""
    if q.dimension == "percent":
        return q.text.replace("%", "x") if "%" in q.text else None
    if q.dimension == "multiple":
        return re.sub(r"[x×]$", "%", q.text)
    match = re.search(r"(\d)\s?(bn|mm|million|billion|thousand|[mMBk])\b", q.text)
    if match:
        return q.text[:match.start(2)] + SCALE_WORDS[match.group(2)] + q.text[match.end(2):]
    return format_like(q, q.value * 1000)


def _gold_values(gold: str, target: Quantity, tolerance: Tolerance) -> list[Quantity]:
    """Every place the gold states the target's value."""
    return [q for q in find_quantities(gold) if q.compatible(target)
            and tolerance.contains(value_in_terms_of(q, target))]


def _replace(text: str, places: list[Quantity], new: str) -> str:
    for q in sorted(places, key=lambda q: q.start, reverse=True):
        text = text[:q.start] + new + text[q.end:]
    return text


def _sentence_about(gold: str, criterion: Criterion, value: Quantity | None) -> str | None:
    sentences = _sentences(gold)
    if value is not None:
        return next((s for s in sentences if value.text in s), None)
    words = content_tokens(criterion.text)
    scored = sorted(((len(words & content_tokens(s)), s) for s in sentences), reverse=True)
    return scored[0][1] if scored and scored[0][0] >= 2 else None


def make_controls(task: Task) -> list[Control]:
    """Every control of a task (gold-derived ones only when the task has a gold)."""
    version = task.version()

    def control(kind: str, answer: str, expect: Expectation, criterion: Criterion | None = None) -> Control:
        suffix = f":{criterion.id}" if criterion else ""
        return Control(id=f"{task.id}:{kind}{suffix}", task_id=task.id, task_version=version,
                       kind=kind, criterion_id=criterion.id if criterion else None,
                       answer=answer, expect=expect)

    out = [control("null", "", "fail"), control("refusal", REFUSAL, "fail")]
    if task.gold is None or not task.gold.text.strip():
        return out
    gold = task.gold.text
    out.append(control("gold", gold, "pass"))
    written_out = re.sub(r"(\d)\s?(?:m|mm)\b", r"\1 million", gold)
    written_out = re.sub(r"(\d)\s?bn\b", r"\1 billion", written_out)
    if written_out != gold:
        out.append(control("alternative:units_written_out", written_out, "pass"))
    sentences = _sentences(gold)
    if len(sentences) > 1:
        out.append(control("alternative:reordered", " ".join(sentences[1:] + sentences[:1]),
                           "pass"))
    for criterion in task.criteria:
        if is_negative(criterion.text):
            continue
        _, tolerance_text = split_criterion(criterion.text)
        targets = criterion_targets(criterion.text)
        places: list[Quantity] = []
        if targets:
            tolerance = tolerance_for(targets[0], tolerance_text, task.prompt)
            places = _gold_values(gold, targets[0], tolerance)
        value = places[0] if places else None
        if value is not None:
            moved = format_like(value, _moved(targets[0], tolerance) if value.value >= 0
                                else tolerance.low - (tolerance.high - tolerance.low) * 2)
            out.append(control("near_miss:outside_tolerance", _replace(gold, places, moved),
                               "fail", criterion))
            out.append(control("near_miss:hedged",
                               _replace(gold, places, f"{value.text} or {moved}"), "fail",
                               criterion))
            wrong = _wrong_scale(value)
            if wrong:
                out.append(control("near_miss:wrong_scale", _replace(gold, places, wrong), "fail",
                                   criterion))
        sentence = _sentence_about(gold, criterion, value)
        kept = [s for s in sentences if s != sentence and not any(q.text in s for q in places)]
        if sentence and kept:
            out.append(control("near_miss:item_dropped", " ".join(kept), "fail", criterion))
        if sentence:
            conditional = f"Even if {sentence[0].lower()}{sentence[1:].rstrip('.')}, this would " \
                          f"still need to be confirmed."
            out.append(control("near_miss:assumption", gold.replace(sentence, conditional), "fail",
                               criterion))
    return out


def code_grade_control(task: Task, control: Control) -> list[CriterionGrade]:
    """The code checker's verdicts on a control. An empty answer or a refusal does nothing a
    negative criterion forbids, so it passes those in code too."""
    grades = []
    verdict: Verdict
    for criterion in task.criteria:
        if control.kind in ("null", "refusal") and is_negative(criterion.text):
            verdict, reason = "pass", "an answer that says nothing does nothing this forbids"
        elif control.kind == "near_miss:assumption":
            verdict, reason = "not_applicable", "whether a statement is asserted is for a judge"
        else:
            result = grade_numeric(criterion.text, control.answer, task.prompt)
            verdict, reason = result.verdict, result.reason
        grades.append(CriterionGrade(attempt_id=control.id, criterion_id=criterion.id,
                                     grader=CODE_GRADER, verdict=verdict, rationale=reason))
    return grades


def control_outcome(grades: list[CriterionGrade]) -> ControlOutcome:
    """The task-level outcome of a control under one grader (`task_outcome`)."""
    outcome = task_outcome([g.verdict for g in grades])
    return "undetermined" if outcome == "unscored" else outcome


def control_findings(task: Task, graded: list[tuple[Control, list[CriterionGrade]]]
                     ) -> Iterator[Finding]:
    """Findings for the controls of one task whose expectation a grader broke.

    An alternative that fails where the gold fails too is the broken oracle again, not news.
    """
    gold_fails = {g.grader for c, grades in graded if c.kind == "gold"
                  for g in grades if g.verdict == "fail"}
    for control, grades in graded:
        by_grader: dict[str, list[CriterionGrade]] = {}
        for g in grades:
            by_grader.setdefault(g.grader, []).append(g)
        for grader, own in sorted(by_grader.items()):
            finding = _broken_expectation(task, control, grader, own, grader in gold_fails)
            if finding is not None:
                yield finding


def _broken_expectation(task: Task, control: Control, grader: str, own: list[CriterionGrade],
                        gold_fails: bool) -> Finding | None:
    outcome = control_outcome(own)
    failed = [g.criterion_id for g in own if g.verdict == "fail"]
    evidence = {"control": control.id, "grader": grader, "answer": control.answer[:600],
                "verdicts": {g.criterion_id: [g.verdict, g.rationale[:300]] for g in own}}
    if control.kind == "gold" and outcome == "fail":
        if grader == CODE_GRADER:
            evidence["rests_on"] = CODE_FAIL
        return Finding(task_id=task.id, criterion_id=failed[0], check="control_gold_fails",
                       severity="error", evidence=evidence,
                       message=f"the gold answer fails {', '.join(failed)} under {grader}: "
                               f"broken oracle")
    if control.kind in ("null", "refusal") and outcome == "pass":
        return Finding(task_id=task.id, check="control_null_passes", severity="error",
                       evidence=evidence,
                       message=f"the {control.kind} answer passes every criterion under {grader}: "
                               f"the rubric does not discriminate")
    if control.kind.startswith("near_miss:"):
        target = next((g for g in own if g.criterion_id == control.criterion_id), None)
        if target is not None and target.verdict == "pass":
            return Finding(task_id=task.id, criterion_id=control.criterion_id,
                           check="control_near_miss_passes", severity="warning", evidence=evidence,
                           message=f"{control.kind} passes the criterion it targets under "
                                   f"{grader}: lenient criterion or grader")
    if control.kind.startswith("alternative:") and outcome == "fail" and not gold_fails:
        return Finding(task_id=task.id, criterion_id=failed[0], check="control_alternative_fails",
                       severity="warning", evidence=evidence,
                       message=f"{control.kind} (same meaning as the gold) fails under {grader}: "
                               f"strict criterion or grader")
    return None


def judge_flips_on_repeats(tasks: Mapping[str, Task], grades: list[ControlGrade]
                           ) -> Iterator[Finding]:
    """A judge that gives different verdicts when it grades the same control again: per judge and
    criterion, the share of its repeatedly graded controls whose verdicts disagree, with each
    control's verdicts in the order of its repeats."""
    repeats: dict[tuple[str, str, str], list[tuple[int, str]]] = defaultdict(list)
    for g in grades:
        if g.grade.grader.startswith("judge:"):
            repeats[(g.grade.grader, g.grade.criterion_id, g.grade.attempt_id)].append(
                (g.repeat, g.grade.verdict))
    per: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(dict)
    for (grader, criterion_id, control_id), seen in repeats.items():
        per[(grader, criterion_id)][control_id] = [verdict for _, verdict in sorted(seen)]
    for (grader, criterion_id), controls in sorted(per.items()):
        flipped = {c: v for c, v in sorted(controls.items()) if len(set(v)) > 1}
        task = next((t for t in tasks.values() if t.criterion(criterion_id)), None)
        if not flipped or task is None:
            continue
        rate = len(flipped) / len(controls)
        yield Finding(task_id=task.id, criterion_id=criterion_id, check="judge_flips_on_repeats",
                      severity="warning",
                      message=f"{grader} gave different verdicts on the same control in {rate:.0%} "
                              f"of this criterion's controls ({len(flipped)} of {len(controls)})",
                      evidence={"grader": grader, "flip_rate": rate, "controls": len(controls),
                                "flipped": flipped})
