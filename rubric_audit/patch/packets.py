"""Defect packets: one per confirmed defect (by task and criterion), ready for the benchmark's
tracker: the task, the criterion, the prompt, criterion and gold quoted, the findings with their
evidence (quotes from files, mail or chat, the recomputation and its inputs), the controls, the
attempts affected, how each model's score moves with the proposed fix, and the fix.

A packet is written for each defect a reviewer confirmed, and for one confirmed by its check's
precision alone once the author accepted its proposal. Markdown goes through the markdown sink
(`report.markdown.render_sections`); `--format json` writes the same packets as JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from rubric_audit.core.errors import InputError
from rubric_audit.core.model import (
    Attempt,
    CriterionGrade,
    Finding,
    Task,
    grades_by_attempt,
    safe_id,
)
from rubric_audit.core.scores import attempt_outcome, headline_grader, scored_graders
from rubric_audit.core.text import stranger
from rubric_audit.core.words import pct
from rubric_audit.patch.defects import NOT_OF_THE_TASK, Defect
from rubric_audit.patch.edit import apply
from rubric_audit.patch.kinds import evidence_of
from rubric_audit.patch.proposals import KIND_NAMES, Evidence, Proposal, Proposals
from rubric_audit.patch.verify import ControlCheck, ScoreMove, check_controls, code_regrader, regrade
from rubric_audit.report.describe import criterion_title, readable
from rubric_audit.report.document import Block, Bullets, Section, Table, Text
from rubric_audit.report.markdown import render_sections

QUOTE_LIMIT = 2_000  # characters of a prompt or gold quoted in a packet


class Packet(BaseModel):
    task: str
    task_name: str
    domain: str
    criterion: str | None
    criterion_title: str
    explanation: str
    prompt: str
    gold: str
    findings: list[Evidence]
    also: list[Evidence]
    controls_checked: int
    controls: list[ControlCheck]
    attempts: list[str]
    scores: list[ScoreMove]
    fix: str
    proposal: Proposal | None


def _proposal_for(defect: Defect, proposals: Proposals) -> Proposal | None:
    """The proposal that fixes the defect: of its criterion, or the task's (a prompt, a regold
    of several criteria)."""
    own = [p for p in proposals.proposal if p.task == defect.task_id]
    return next((p for p in own if p.criterion == (defect.criterion_id or "")
                 or any(c.criterion == defect.criterion_id for c in p.changes if c.criterion)),
                None)


def _attempt_lines(task: Task, attempts: list[Attempt], grades: list[CriterionGrade],
                   criterion: str | None, moved: dict[str, str]) -> list[str]:
    """Each graded attempt of the task: its outcome (and verdict on the criterion) as graded,
    and what it becomes with the fix."""
    headline = headline_grader(scored_graders(g.grader for g in grades))
    by_attempt = grades_by_attempt(grades, headline)
    lines = []
    for a in attempts:
        if a.task_id != task.id or a.state != "graded":
            continue
        own = by_attempt.get(a.id, [])
        on = next((g.verdict for g in own if g.criterion_id == criterion), None)
        name = readable(a.id, task)
        lines.append(f"{name} ({a.model}): {attempt_outcome(task, own)}"
                     + (f", {on} on this criterion" if on else "")
                     + (f"; with the fix: {moved[name]}" if name in moved else ""))
    return lines


def make_packets(tasks: dict[str, Task], defects: list[Defect], proposals: Proposals,
                 attempts: list[Attempt], grades: list[CriterionGrade], found: list[Finding],
                 path: Path) -> list[Packet]:
    """A packet per defect reviewed (or whose proposal the author accepted, in the proposals
    file at `path`), in the order of `defects`; `found`, every finding, gives what else was
    found on the same criterion, unconfirmed."""
    packets = []
    for defect in defects:
        task = tasks.get(defect.task_id)
        proposal = _proposal_for(defect, proposals)
        accepted = proposal is not None and proposal.decision in ("accept", "edit")
        if task is None or not (defect.reviewed or accepted):
            continue
        told = {(e.check, e.message): e for e in (proposal.evidence if proposal else [])}
        findings = [told.get((e.check, e.message), e)  # a proposal's adds its recipe's inputs
                    for e in evidence_of(task, [c.finding for c in defect.findings], [defect])]
        confirmed = [c.finding for c in defect.findings]
        also = evidence_of(task, [f for f in found if f.task_id == task.id
                                  and f.criterion_id == defect.criterion_id
                                  and f not in confirmed and f.check not in NOT_OF_THE_TASK], [])
        after = task
        scores: list[ScoreMove] = []
        moved: dict[str, str] = {}
        if proposal is not None:
            try:
                patched, _ = apply(tasks, [(proposal, "")], path)
            except InputError:
                patched = tasks
            after = patched[task.id]
            if after != task:
                scores, changed = regrade(tasks, {task.id: after}, attempts, grades,
                                          code_regrader, "the code checker")
                moved = {c.attempt: f"{c.after} ({'; '.join(c.criteria)})" for c in changed}
        controls = check_controls({task.id: task}, {task.id: after})
        unpatched = next((u.reason for u in proposals.unpatched if u.task == task.id
                          and u.criterion == (defect.criterion_id or "")), defect.unfounded)
        criterion = task.criterion(defect.criterion_id or "")
        packets.append(Packet(
            task=task.id, task_name=task.name, domain=task.domain,
            criterion=defect.criterion_id,
            criterion_title=criterion_title(task, defect.criterion_id) or "the task as a whole",
            explanation=criterion.explanation if criterion else "", prompt=task.prompt,
            gold=task.gold.text if task.gold else "", findings=findings, also=also,
            controls_checked=len(controls),
            controls=[c for c in controls if c.before is not None or c.after is not None],
            attempts=_attempt_lines(task, attempts, grades, defect.criterion_id, moved),
            scores=scores,
            fix=(f"{KIND_NAMES[proposal.kind]}: {proposal.summary}" if proposal is not None
                 else unpatched or "no patch of a known kind"),
            proposal=proposal))
    return packets


def _quote(text: str) -> str:
    cut = text if len(text) <= QUOTE_LIMIT else text[:QUOTE_LIMIT] + " ..."
    return f"“{stranger(cut)}”" if text else "(none)"


def _sections(packet: Packet) -> list[Section]:
    task_line = (f"Task {stranger(packet.task_name)} ({stranger(packet.task)})"
                 + (f", {stranger(packet.domain)}" if packet.domain else "") + ".")
    wrong: list[Block] = []
    for e in packet.findings:
        wrong += [Text(f"`{e.check}` ({e.severity}): {stranger(e.message)}"
                       + (f" Confirmed: {stranger('; '.join(e.confirmed_by))}."
                          if e.confirmed_by else "")),
                  *([Bullets([stranger(line) for line in e.lines])] if e.lines else [])]
    if packet.also:
        wrong += [Text("Also found on it, not confirmed:"), Bullets([
            f"`{e.check}` ({e.severity}): {stranger(e.message)}" for e in packet.also])]
    task: list[Block] = [Text(f"Prompt: {_quote(packet.prompt)}")]
    if packet.criterion:
        task.append(Text(f"Criterion: {_quote(packet.criterion_title)}"
                         + (f" Explanation: {_quote(packet.explanation)}"
                            if packet.explanation else "")))
    task.append(Text(f"Gold: {_quote(packet.gold)}"))
    held = packet.controls_checked - len([c for c in packet.controls if c.before is not None])
    controls: list[Block] = [Text(f"{packet.controls_checked} controls graded in code; "
                                  f"{held} hold as the task is.")]
    if packet.controls:
        controls.append(Bullets([f"{c.control}: {stranger(c.before or 'holds')}; with the fix: "
                                 f"{stranger(c.after or 'holds')}" for c in packet.controls]))
    moves: list[Block] = [Text("No proposed fix changes a verdict." if not packet.scores else
                               "pass@1 as graded, and with only this fix (its changed criteria "
                               "graded again by the code checker):")]
    if packet.scores:
        moves.append(Table(["model", "variant", "graded", "before", "after", "change"],
                           [[stranger(s.model), stranger(s.variant), str(s.graded),
                             pct(s.before), pct(s.after), s.change()] for s in packet.scores]))
    fix: list[Block] = [Text(stranger(packet.fix))]
    if packet.proposal is not None:
        fix += [Bullets([f"{c.field}: {_quote(c.before)} → "
                         + (_quote(c.proposed) if c.proposed else "(removed)")
                         for c in packet.proposal.changes]),
                Text(f"Proposal {stranger(packet.proposal.id)}: {packet.proposal.decision}"
                     + (f" by {stranger(packet.proposal.by)}" if packet.proposal.by else "")
                     + ".")]
    return [Section(f"{stranger(packet.task_name)}: {stranger(packet.criterion_title)}",
                    [Text(task_line)]),
            Section("What is wrong", wrong), Section("The task", task),
            Section("Controls", controls),
            Section("Attempts affected", [Bullets([stranger(a) for a in packet.attempts])
                                          if packet.attempts else Text("None graded.")]),
            Section("How each model's score moves", moves), Section("Proposed fix", fix)]


def packet_files(packets: list[Packet], fmt: str) -> dict[str, str]:
    """The files of `defects OUT`: a markdown packet each (NN-task-criterion.md), or one JSON
    file of them all (defects.json)."""
    if fmt == "json":
        return {"defects.json": json.dumps([p.model_dump() for p in packets], indent=2) + "\n"}
    files = {}
    for number, packet in enumerate(packets, 1):
        title = packet.criterion_title.split(" ", 1)[0] if packet.criterion else "task"
        name = f"{number:02d}-{safe_id(packet.task_name)[:60]}-{safe_id(title)}.md"
        files[name] = render_sections(_sections(packet))
    return files
