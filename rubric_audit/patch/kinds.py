"""A proposal of a known kind for each confirmed defect, written in code from its evidence.

- `regold`: a criterion's value, and the gold's statement of it, replaced by what the task's
  recipe recomputes from its workbook (with the recipe and the inputs that produced it); an
  explanation that then contradicts the criterion says the recomputation instead.
- `consistent`: a criterion's value made the value its own explanation arrives at.
- `unasked`: a criterion that grades what the prompt never asks for (or only restates it)
  removed; a model (`rewording`) or the author may reword it instead.
- `tolerance`: the range a numeric criterion is graded at (its own precision) stated in it,
  written so the code checker reads back the same range.
- `prompt`: a sentence added to the prompt saying the form the rubric accepts.

Per criterion one proposal changes its text, the first of regold, consistent, unasked, tolerance
that applies; per task one changes the gold (regold) and one the prompt. A reviewed defect that
no kind fixes is listed with the reason, for the author.
"""

from __future__ import annotations

import math
from dataclasses import replace

from rubric_audit.checks.controls import format_like
from rubric_audit.checks.criterion import criterion_targets, split_criterion, tolerance_for
from rubric_audit.checks.lints import criterion_contradicts_explanation
from rubric_audit.checks.numbers import Quantity, find_quantities, value_in_terms_of
from rubric_audit.checks.regold import (
    RECIPES,
    RecipeError,
    Recomputed,
    applied_overrides,
    load_recipe,
    recipe_path,
)
from rubric_audit.core.model import Benchmark, Criterion, Finding, Task, WorldContents
from rubric_audit.patch.defects import Defect
from rubric_audit.patch.proposals import FORMAT, Change, Evidence, Kind, Proposal, Proposals, Unpatched
from rubric_audit.report.describe import criterion_numbers, evidence_lines, readable

REGOLD = ("gold_recompute_mismatch",)
CONSISTENT = ("criterion_contradicts_explanation",)
UNASKED = ("criterion_terms_absent_from_world", "criterion_not_asked_by_prompt",
           "criterion_restates_premise")
TOLERANCE = ("numeric_criterion_without_tolerance", "judge_failed_value_within_tolerance")
TWO_READINGS = ("prompt_has_two_readings",)
MISSING_FILE = "prompt_names_missing_file"
NO_KIND = {
    MISSING_FILE: "the prompt names a file the world lacks: add the file, or change the prompt "
                  "(no patch of a known kind does)",
    "rubric_only_negative_criteria": "every criterion is negative, so an empty answer passes: "
                                     "the rubric needs a criterion such an answer fails (write "
                                     "one)",
    "control_null_passes": "an empty answer passes the rubric: it needs a criterion such an "
                           "answer fails (write one)",
    "gold_contradicts_criterion": "the gold fails its criterion and no recipe recomputes which "
                                  "is right: correct the gold or the criterion",
    "control_gold_fails": "the gold fails its criterion and no recipe recomputes which is right: "
                          "correct the gold or the criterion",
    "criteria_conflict_on_quantity": "two criteria require different values for one quantity "
                                     "and no recipe says which is right",
    "judge_failed_value_within_tolerance": "the criterion states its tolerance; the judge erred "
                                           "(grade again with another judge)",
    "judge_passed_value_outside_tolerance": "the judge credited a value outside the tolerance "
                                            "(grade again with another judge)",
    "judge_credited_hedge": "the judge credited a hedged answer (grade again with another judge)",
}
SCALE_WORDS = {1e3: "thousands", 1e6: "millions", 1e9: "billions"}


def proposal_id(kind: Kind, task: Task, criterion_id: str | None) -> str:
    return f"{kind}:{task.id}:{criterion_id or 'task'}"


def evidence_of(task: Task, findings: list[Finding], defects: list[Defect]) -> list[Evidence]:
    """The findings a proposal rests on, in the criterion's units, with what confirms each."""
    confirmed = {id(c.finding): c.confirmed_by for d in defects for c in d.findings}
    return [Evidence(check=f.check, severity=f.severity, message=readable(f.message, task),
                     confirmed_by=confirmed.get(id(f), []),
                     lines=evidence_lines(f.model_copy(update={"evidence": {
                         k: v for k, v in f.evidence.items() if k != "confidence"}}), task))
            for f in findings]


def _proposal(kind: Kind, task: Task, criterion: Criterion | None, summary: str,
              changes: list[Change], findings: list[Finding], defects: list[Defect]) -> Proposal:
    return Proposal(id=proposal_id(kind, task, criterion.id if criterion else None), kind=kind,
                    task=task.id, task_name=task.name, criterion=criterion.id if criterion else "",
                    summary=summary, changes=changes, evidence=evidence_of(task, findings, defects))


def change(field: str, before: str, proposed: str, criterion: Criterion | None = None) -> Change:
    return Change.model_validate({"field": field, "criterion": criterion.id if criterion else "",
                                  "before": before, "proposed": proposed, "after": proposed})


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _with_value(text: str, target: Quantity, value: str) -> str | None:
    """The criterion with its target's value written as `value`; None where it cannot be placed
    (the target's text is not where the parser saw it, nor once in the text)."""
    if text[target.start:target.end] == target.text:
        return text[:target.start] + value + text[target.end:]
    return text.replace(target.text, value) if text.count(target.text) == 1 else None


def _number(target: Quantity, value: float) -> float:
    """A recomputed value, in the units the criterion writes, in base units."""
    return value * target.scale if target.dimension in ("currency", "plain") else value


def _gold_with(gold: str, target: Quantity, stated: list[float], value: float) -> str:
    """The gold with each statement of the criterion's quantity at a value in `stated` (written
    units) written as `value` (base units), each in the gold's own style."""
    wrong = [_number(target, v) for v in stated]
    places = [q for q in find_quantities(gold) if q.compatible(target)
              and _close(value_in_terms_of(q, target), q.value)
              and any(_close(q.value, w) for w in wrong)]
    for q in sorted(places, key=lambda q: q.start, reverse=True):
        gold = gold[:q.start] + format_like(q, value) + gold[q.end:]
    return gold


def _recipe(bench: Benchmark, task: Task) -> tuple[str, list[str]]:
    """The workbook the task's recipe recomputes and each input it gives it, with its source
    ("", [] where the recipe cannot be read now)."""
    try:
        recipe = load_recipe(recipe_path(bench, task))
    except RecipeError:
        return "", []
    return recipe.workbook, [f"{cell} = {value}" + (f" ({source})" if source else "")
                             for cell, value, source in applied_overrides(recipe)]


def _recomputation(bench: Benchmark, task: Task, r: Recomputed, written: str) -> str:
    """The explanation a regolded criterion gets: the recomputation, with its inputs."""
    workbook, inputs = _recipe(bench, task)
    return (f"Recomputed from {workbook or 'the task workbook'}"
            + (f" with {'; '.join(inputs)}" if inputs else "") + f": {r.label} = {written}.")


def regold_proposal(bench: Benchmark, task: Task, defects: list[Defect]) -> Proposal | None:
    """Every recomputed value of the task that its criterion or gold misstates, in one
    proposal (they may share the gold)."""
    findings = [f for d in defects for f in d.of(*REGOLD)]
    changes: list[Change] = []
    gold = new_gold = task.gold.text if task.gold else ""
    said = []
    numbers = criterion_numbers(task)
    for finding in findings:
        r = Recomputed.model_validate(finding.evidence)
        criterion = task.criterion(r.criterion_id or "")
        targets = criterion_targets(criterion.text) if criterion else []
        if criterion is None or not targets:
            continue
        target = targets[0]
        value = _number(target, r.value)
        written = format_like(target, value)
        if r.criterion_matches is False and (text := _with_value(criterion.text, target, written)):
            changes.append(change("criterion", criterion.text, text, criterion))
            said.append(f"{numbers[criterion.id]} {target.text} -> {written}")
            patched = task.model_copy(update={"criteria": [
                c.model_copy(update={"text": text}) if c.id == criterion.id else c
                for c in task.criteria]})
            if any(f.criterion_id == criterion.id
                   for f in criterion_contradicts_explanation(patched, WorldContents())):
                changes.append(change("explanation", criterion.explanation,
                                      _recomputation(bench, task, r, written), criterion))
        if r.gold_matches is False:
            stated, new_gold = new_gold, _gold_with(new_gold, target, r.gold_values, value)
            if new_gold != stated:
                stated_as = ", ".join(format_like(target, _number(target, v))
                                      for v in r.gold_values)
                said.append(f"the gold's {stated_as} -> {written}")
    if new_gold != gold:
        changes.append(change("gold", gold, new_gold))
        said.append("the gold's other figures as they were (check them)")
    if not changes:
        return None
    criterion = task.criterion(defects[0].criterion_id or "") if len(defects) == 1 else None
    made = _proposal("regold", task, criterion, "recomputed from the workbook: " + "; ".join(said),
                     changes, findings, defects)
    recipe = _recipe_lines(bench, task)
    return made.model_copy(update={"evidence": [e.model_copy(update={"lines": [*e.lines, *recipe]})
                                                for e in made.evidence]})


def _recipe_lines(bench: Benchmark, task: Task) -> list[str]:
    """The recipe a recomputation ran and the inputs it gave the workbook, with their sources."""
    workbook, inputs = _recipe(bench, task)
    return [f"recipe: {RECIPES}/{task.id}.toml, workbook {workbook}",
            *(f"input: {line}" for line in inputs)] if workbook else []


def consistent_proposal(task: Task, criterion: Criterion, defects: list[Defect]
                        ) -> Proposal | None:
    """The criterion's value made the one its explanation arrives at."""
    findings = [f for d in defects for f in d.of(*CONSISTENT)]
    evidence = findings[0].evidence
    target = next((t for t in criterion_targets(criterion.text)
                   if _close(t.value, float(evidence["criterion_value"]))), None)
    if target is None:
        return None
    written = format_like(target, float(evidence["explanation_value"]))
    text = _with_value(criterion.text, target, written)
    if text is None or text == criterion.text:
        return None
    number = criterion_numbers(task)[criterion.id]
    return _proposal("consistent", task, criterion,
                     f"{number} {target.text} -> {written}, the value its explanation arrives at",
                     [change("criterion", criterion.text, text, criterion)], findings, defects)


def unasked_proposal(task: Task, criterion: Criterion, defects: list[Defect]) -> Proposal:
    """The criterion removed (its explanation with it); a rewording replaces `proposed`."""
    findings = [f for d in defects for f in d.of(*UNASKED)]
    changes = [change("criterion", criterion.text, "", criterion)]
    if criterion.explanation:
        changes.append(change("explanation", criterion.explanation, "", criterion))
    return _proposal("unasked", task, criterion,
                     f"remove {criterion_numbers(task)[criterion.id]}: "
                     f"{readable(findings[0].message, task)}", changes, findings, defects)


def _bound(target: Quantity, value: float) -> str:
    """`value` written like the target, with the fewest decimals that write it exactly."""
    for decimals in range(target.decimals, target.decimals + 4):
        written = format_like(replace(target, decimals=decimals), value)
        found = find_quantities(written)
        if found and _close(found[0].value, value):
            return written
    return format_like(replace(target, decimals=target.decimals + 4), value)


def tolerance_proposal(task: Task, criterion: Criterion, defects: list[Defect]
                       ) -> Proposal | None:
    """The range the criterion is graded at stated in it, where neither it nor the prompt states
    one, and only if the code checker reads the same range back."""
    targets = criterion_targets(criterion.text)
    if not targets:
        return None
    target = targets[0]
    tolerance = tolerance_for(target, split_criterion(criterion.text)[1], task.prompt)
    if not tolerance.basis.startswith("precision of"):
        return None
    text = (f"{criterion.text.rstrip().rstrip('.')} (accept {_bound(target, tolerance.low)} to "
            f"{_bound(target, tolerance.high)})")
    read = criterion_targets(text)
    again = tolerance_for(read[0], split_criterion(text)[1], task.prompt) if read else None
    if again is None or not (_close(again.low, tolerance.low) and _close(again.high,
                                                                         tolerance.high)):
        return None
    findings = [f for d in defects for f in d.of(*TOLERANCE)]
    return _proposal("tolerance", task, criterion,
                     f"{criterion_numbers(task)[criterion.id]} states the range it is graded at: "
                     f"{_bound(target, tolerance.low)} to {_bound(target, tolerance.high)}",
                     [change("criterion", criterion.text, text, criterion)], findings, defects)


def _form_sentence(target: Quantity) -> str | None:
    """A sentence asking for the form the rubric's value is in, without giving the value."""
    if target.dimension == "percent":
        return "Give the figure as a percentage."
    if target.dimension == "multiple":
        return "Give the figure as a multiple (x)."
    if target.dimension == "currency" and target.currency:
        scale = SCALE_WORDS.get(target.scale)
        return f"Give the amount in {target.currency}" + (f" {scale}." if scale else ".")
    return None


def prompt_proposal(task: Task, defects: list[Defect]) -> Proposal:
    """A sentence that says which reading the rubric takes; where code cannot say it (a value
    with no unit), `proposed` is the prompt as it is, for a model or the author to write."""
    findings = [f for d in defects for f in d.of(*TWO_READINGS)]
    named = [task.criterion(f.criterion_id) for f in findings if f.criterion_id]
    criteria = [c for c in named if c is not None] or task.criteria
    target = next((t for c in criteria for t in criterion_targets(c.text)), None)
    sentence = _form_sentence(target) if target is not None else None
    proposed = (f"{task.prompt.rstrip()} {sentence}"
                if sentence and sentence not in task.prompt else task.prompt)
    summary = (f"add to the prompt: {sentence}" if proposed != task.prompt else
               "add a sentence to the prompt that removes the ambiguity (write it in `after`, "
               "or propose with --model)")
    return _proposal("prompt", task, None, summary, [change("prompt", task.prompt, proposed)],
                     findings, defects)


def _unpatched(task: Task, defect: Defect, reason: str | None = None) -> Unpatched:
    checks = sorted(defect.checks())
    why = reason or defect.unfounded or next((NO_KIND[c] for c in checks if c in NO_KIND),
                                             f"no patch of a known kind fixes {', '.join(checks)}")
    return Unpatched(task=task.id, task_name=task.name, criterion=defect.criterion_id or "",
                     checks=checks, reason=why)


def _criterion_proposal(task: Task, criterion: Criterion, defect: Defect,
                        missing_file: bool) -> Proposal | Unpatched | None:
    """The first kind that fixes the criterion's defect, else why none does."""
    checks = defect.checks()
    if checks & set(CONSISTENT) and (made := consistent_proposal(task, criterion, [defect])):
        return made
    if checks & set(UNASKED):
        if missing_file:
            return _unpatched(task, defect, "its terms are likely in the file the prompt names "
                                            "but the world lacks: add the file")
        return unasked_proposal(task, criterion, [defect])
    if checks & set(TOLERANCE) and (made := tolerance_proposal(task, criterion, [defect])):
        return made
    return None if not defect.reviewed else _unpatched(task, defect)


def propose(bench: Benchmark, defects: list[Defect]) -> Proposals:
    """A proposal per defect a known kind fixes, and the reviewed ones none fixes."""
    assert bench.version is not None
    out = Proposals(format=FORMAT, benchmark=bench.name, version=bench.version.sha256)
    by_task: dict[str, list[Defect]] = {}
    for d in defects:
        by_task.setdefault(d.task_id, []).append(d)
    for task in bench.tasks:
        found = by_task.get(task.id, [])
        regold = [d for d in found if d.of(*REGOLD)]
        made = regold_proposal(bench, task, regold) if regold else None
        if made is not None:
            out.proposal.append(made)
        covered = {d.criterion_id for d in regold} if made else set()
        missing_file = any(d.of(MISSING_FILE) for d in found)
        readings = [d for d in found if d.of(*TWO_READINGS)]
        if readings:
            out.proposal.append(prompt_proposal(task, readings))
        for d in found:
            criterion = task.criterion(d.criterion_id) if d.criterion_id else None
            if d.criterion_id in covered or (d in readings and d.checks() <= set(TWO_READINGS)):
                continue
            result = (_criterion_proposal(task, criterion, d, missing_file)
                      if criterion is not None else _unpatched(task, d) if d.reviewed else None)
            if isinstance(result, Proposal):
                out.proposal.append(result)
            elif isinstance(result, Unpatched):
                out.unpatched.append(result)
    return out
