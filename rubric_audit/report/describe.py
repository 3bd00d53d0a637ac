"""Findings and criteria as a reader sees them: criteria as "C1 ..." with their text (never
verifier ids), and a finding's evidence as sentences, numbers in the criterion's own units.

The review app and the report share it, so both name a criterion and a value the same way.
"""

from __future__ import annotations

from typing import Any

from rubric_audit.checks.criterion import criterion_targets
from rubric_audit.checks.numbers import Quantity, in_units
from rubric_audit.core.model import Finding, Task

QUOTE_LIMIT = 300


def criterion_numbers(task: Task) -> dict[str, str]:
    """Criterion id -> "C1", "C2" ... in rubric order."""
    return task.criterion_numbers()


def criterion_title(task: Task, criterion_id: str | None) -> str:
    """ "C2 States a success fee of NOK 25.9m", or the id when the rubric lacks it."""
    if criterion_id is None:
        return ""
    criterion = task.criterion(criterion_id)
    number = criterion_numbers(task).get(criterion_id)
    return f"{number} {criterion.text}" if criterion and number else criterion_id


def readable(text: str, task: Task | None) -> str:
    """`text` with the task's criterion ids as C1, C2 ... and its task id as its name."""
    if task is None:
        return text
    for criterion_id, number in criterion_numbers(task).items():
        text = text.replace(criterion_id, number)
    return text.replace(task.id, task.name)


def criterion_target(task: Task | None, criterion_id: str | None) -> Quantity | None:
    """The first quantity a criterion asks for, which sets the units its evidence is shown in."""
    criterion = task.criterion(criterion_id) if task and criterion_id else None
    if criterion is None:
        return None
    targets = criterion_targets(criterion.text)
    return targets[0] if targets else None


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= QUOTE_LIMIT else text[:QUOTE_LIMIT] + " ..."


def _what(key: str) -> str:
    return key.replace("_", " ")


def _value(key: str, value: Any, task: Task | None, target: Quantity | None) -> str:
    if isinstance(value, bool) or value is None:
        return {True: "yes", False: "no", None: "none"}[value]
    if isinstance(value, int | float):
        return in_units(float(value), target)
    if isinstance(value, str):
        return f"“{_short(readable(value, task))}”" if " " in value.strip() else readable(value,
                                                                                           task)
    if isinstance(value, list):
        if key.startswith("tolerance") and len(value) == 2 and all(
                isinstance(v, int | float) for v in value):
            return f"{in_units(value[0], target)} to {in_units(value[1], target)}"
        return ", ".join(_value(key, v, task, target) for v in value) or "none"
    if isinstance(value, dict):
        return "; ".join(f"{_what(readable(str(k), task))}: {_value(str(k), v, task, target)}"
                         for k, v in value.items())
    return str(value)


def measured(finding: Finding) -> str:
    """How often the finding's check was right (`evidence.confidence`, checks/precision.py):
    "89.6% of 144 findings on unseen cases" (one decimal: 89.6% is not the 90% a warning needs),
    on the tuning corpus alone, or "not measured"."""
    found = finding.evidence.get("confidence") or {}
    if "unseen_precision" in found:
        return (f"{found['unseen_precision']:.1%} of {found['unseen_findings']} findings on "
                f"unseen cases")
    if "corpus_precision" in found:
        return (f"{found['corpus_precision']:.1%} of {found['corpus_findings']} findings on the "
                f"tuning corpus (not measured on unseen cases)")
    return "not measured"


def evidence_lines(finding: Finding, task: Task | None) -> list[str]:
    """The evidence a finding rests on, one "what: value" line per item, in the criterion's
    units, with criteria as C1, C2 ... and the task by its name. A statistic's evidence (item
    statistics: counts, correlations, chances) is plain numbers, never the criterion's units;
    a check's measured confidence is said in words."""
    plain = "statistic" in finding.evidence
    target = None if plain else criterion_target(task, finding.criterion_id)
    named = bool(task and finding.criterion_id and task.criterion(finding.criterion_id))
    lines = []
    for key, value in finding.evidence.items():
        if key in ("criterion_text", "criterion_id") and named:
            continue  # the criterion is named beside the finding
        what = _what(key)
        if key == "confidence":
            lines.append(f"the check is right on {measured(finding)}")
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            lines += [f"{what}: {_value(key, v, task, target)}" for v in value]
        else:
            lines.append(f"{what}: {_value(key, value, task, target)}")
    return lines


def finding_sentence(finding: Finding, task: Task | None) -> str:
    """The finding's message with criteria and task named for a reader."""
    return readable(finding.message, task)
