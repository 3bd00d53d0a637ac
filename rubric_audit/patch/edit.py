"""The accepted proposals made to the tasks, in the order the file lists them.

Each change must find its field as the proposal saw it (`before`), so a benchmark changed since
the audit, or two accepted proposals changing one field, are refused with one line, never
applied over each other. `accept` applies `proposed`, `edit` the author's `after`; a criterion
whose new text is "" is removed with its explanation.
"""

from __future__ import annotations

from pathlib import Path

from rubric_audit.core.errors import InputError
from rubric_audit.core.model import Gold, Task
from rubric_audit.load.lineage import PatchChange
from rubric_audit.patch.proposals import Change, Proposal, Proposals


def accepted(proposals: Proposals, path: Path) -> list[tuple[Proposal, str]]:
    """The proposals to apply, each with who accepted it; one refused with one line where its
    decision does not say what to apply."""
    out = []
    for i, p in enumerate(proposals.proposal):
        if p.decision not in ("accept", "edit"):
            continue
        where = f"proposal[{i}] ({p.id})"
        who = p.by or proposals.author
        if not who.strip():
            raise InputError(path, where, "accepted without a name: set `by` (or `author` for "
                                          "every proposal)")
        if p.decision == "accept" and any(c.after != c.proposed for c in p.changes):
            raise InputError(path, where, "`after` differs from `proposed` but the decision is "
                                          "accept: set decision = \"edit\" to apply your text")
        applied = [c.proposed if p.decision == "accept" else c.after for c in p.changes]
        if all(text == c.before for text, c in zip(applied, p.changes, strict=True)):
            raise InputError(path, where, "changes nothing: write the text in `after` and set "
                                          "decision = \"edit\"")
        out.append((p, who))
    return out


def _value(task: Task, c: Change) -> str | None:
    """What the field a change names holds now (None: a removed criterion)."""
    if c.field == "prompt":
        return task.prompt
    if c.field == "gold":
        return task.gold.text if task.gold else ""
    criterion = task.criterion(c.criterion)
    if criterion is None:
        return None
    return criterion.text if c.field == "criterion" else criterion.explanation


def _set(task: Task, c: Change, text: str) -> Task:
    if c.field == "prompt":
        return task.model_copy(update={"prompt": text})
    if c.field == "gold":
        gold = task.gold or Gold()
        return task.model_copy(update={"gold": gold.model_copy(update={"text": text})
                                       if text.strip() or gold.type == "file" else None})
    if c.field == "criterion" and text == "":
        return task.model_copy(update={"criteria": [x for x in task.criteria
                                                    if x.id != c.criterion]})
    key = "text" if c.field == "criterion" else "explanation"
    return task.model_copy(update={"criteria": [x.model_copy(update={key: text})
                                                if x.id == c.criterion else x
                                                for x in task.criteria]})


def apply(tasks: dict[str, Task], chosen: list[tuple[Proposal, str]], path: Path
          ) -> tuple[dict[str, Task], list[PatchChange]]:
    """The tasks with every chosen proposal applied, and one record per change made."""
    patched = dict(tasks)
    records: list[PatchChange] = []
    for proposal, who in chosen:
        task = patched.get(proposal.task)
        where = f"proposal {proposal.id}"
        if task is None:
            raise InputError(path, where, f"no task {proposal.task!r} in the benchmark")
        for c in proposal.changes:
            text = c.proposed if proposal.decision == "accept" else c.after
            now = _value(task, c)
            gone = now is None and c.field == "explanation" and text == ""
            if now != c.before and not gone:  # an explanation goes with its criterion
                raise InputError(path, where, f"the {c.field} of {task.name}"
                                              f"{' ' + c.criterion if c.criterion else ''} no "
                                              f"longer holds what the proposal changes (the "
                                              f"benchmark changed, or another accepted proposal "
                                              f"changed it first)")
            if c.field == "prompt" and not text.strip():
                raise InputError(path, where, "would leave the task without a prompt")
            task = task if gone else _set(task, c, text)
            records.append(PatchChange(
                proposal=proposal.id, kind=proposal.kind, task=task.id, task_name=task.name,
                criterion=c.criterion or None, field=c.field, before=c.before, after=text,
                evidence=[e.model_dump() for e in proposal.evidence],
                decision="accept" if proposal.decision == "accept" else "edit",
                accepted_by=who, written_by=proposal.written_by if proposal.decision == "accept"
                else f"author:{who}"))
        if not task.criteria:
            raise InputError(path, where, f"would leave {task.name} without criteria")
        patched[task.id] = task
    return patched, records
