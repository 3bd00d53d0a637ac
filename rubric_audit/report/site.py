"""The report's site: beside report.html, one page per task (`site/tasks/<name>-<hash>.html`):
its prompt, rubric and gold, its findings with their evidence and the fix each implies, each
attempt's answer with every grader's verdict and rationale per criterion and its trajectory
(steps, tool calls and their results, folded), and the reviewers' labels and notes.

Static files a maintainer can publish as they are: no server, no network, every link relative
and inside the audit's folder. Pages are made one at a time from the store, so a large audit
never holds them all; long texts are cut (the review app shows them whole).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

from rubric_audit.core.model import Attempt, CriterionGrade, Finding, Step, Task, ToolCall, label_name
from rubric_audit.core.text import one_line, stranger
from rubric_audit.core.words import plural
from rubric_audit.report.actions import fix, strength
from rubric_audit.report.describe import criterion_numbers, criterion_title, evidence_lines, readable
from rubric_audit.report.document import (
    Block,
    Bullets,
    Folded,
    Preformatted,
    Section,
    Table,
    Text,
    task_page,
)
from rubric_audit.report.html import render_page
from rubric_audit.report.summary import AuditSummary
from rubric_audit.store.audit_store import AuditStore

TEXT_LIMIT = 20_000  # characters of a prompt, gold or answer shown on a page
STEP_LIMIT = 4_000  # characters of a step's text or of one tool result
STEPS_SHOWN = 300  # steps of one attempt's trajectory
ROOT = "../../"  # from a task's page back to the audit's folder


def _cut(text: str, limit: int) -> str:
    """`text` up to `limit` characters, saying how much more there is."""
    if len(text) <= limit:
        return text
    return (text[:limit] + f"\n... ({len(text) - limit:,} more characters: "
            f"`rubric-audit review` shows it whole)")


def _shown(text: str, limit: int = TEXT_LIMIT) -> Block:
    """A stranger's long text as it is, or a note that there is none."""
    return Preformatted(_cut(text, limit)) if text.strip() else Text("*(empty)*")


@dataclass(frozen=True)
class _Standing:
    """What every task's page reads of the summary, worked out once for the site, not once a
    page (each is a walk of every task)."""

    unachievable: dict[str, str]
    unknown: set[str]
    disputed: set[str]

    @classmethod
    def of(cls, summary: AuditSummary) -> _Standing:
        return cls(summary.achievable.unachievable(), summary.achievable.unknown(),
                   set(summary.disputed_tasks))


def _task_section(task: Task, summary: AuditSummary, standing: _Standing) -> Section:
    outcomes = [f"{stranger(o.variant)} {o.tasks[task.id]}" for o in summary.task_outcomes
                if o.grader == summary.failure_split.grader and task.id in o.tasks]
    unachievable = standing.unachievable
    achievable = (f"unachievable ({unachievable[task.id]})" if task.id in unachievable
                  else "unknown (no gold)" if task.id in standing.unknown
                  else "achievable")
    label = ("disputed" if task.id in standing.disputed
             else label_name(summary.review_labels.get(task.id, "not reviewed")))
    return Section(stranger(task.name), [
        Bullets([f"domain: {stranger(task.domain) if task.domain else 'none given'}; world: "
                 f"{stranger(task.world_id)}; task id: {stranger(task.id)}",
                 f"outcome as graded by {stranger(summary.failure_split.grader)}: "
                 + (", ".join(outcomes) or "no attempt"),
                 f"{achievable}; review: {label}"])])


def _rubric(task: Task) -> list[Section]:
    gold: list[Block] = ([_shown(task.gold.text)] if task.gold and task.gold.type == "text"
                         else [Bullets([stranger(f) for f in task.gold.files])] if task.gold
                         else [Text("No gold answer.")])
    return [
        Section("Prompt", [_shown(task.prompt)], anchor="prompt"),
        Section("Rubric", [Table(
            ["", "criterion", "explanation", "primary"],
            [[number, stranger(c.text), stranger(c.explanation), "yes" if c.primary else ""]
             for c, number in zip(task.criteria, criterion_numbers(task).values(),
                                  strict=True)])], anchor="rubric"),
        Section("Gold", gold, anchor="gold")]


def _findings(task: Task, findings: list[Finding]) -> Section:
    blocks: list[Block] = []
    for f in sorted(findings, key=strength):
        title = criterion_title(task, f.criterion_id)
        blocks += [
            Text(f"**{f.severity}** `{f.check}`"
                 + (f", {stranger(one_line(title, 120))}" if title else "") + ": "
                 + stranger(readable(f.message, task))),
            Bullets([*(stranger(line) for line in evidence_lines(f, task)),
                     *([f"fix: {stranger(implied)}"] if (implied := fix(f, task)) else [])])]
    return Section("Findings", blocks or [Text("No finding.")], anchor="findings")


def _call(call: ToolCall) -> list[Block]:
    result = ("no result recorded" if call.result is None
              else "an error" if call.error else "its result")
    return [Text(f"call `{stranger(call.name)}` with its arguments, then {result}:"),
            _shown(call.arguments, STEP_LIMIT),
            *([_shown(call.result, STEP_LIMIT)] if call.result is not None else [])]


def _step(number: int, step: Step) -> Folded:
    calls = ", ".join(stranger(c.name) for c in step.tool_calls)
    summary = (f"step {number} · {step.role}"
               + (f" · calls {calls}" if calls else "")
               + (f" · {stranger(one_line(step.text, 100))}" if step.text.strip() else ""))
    blocks: list[Block] = []
    if step.reasoning.strip():
        blocks += [Text("reasoning:"), _shown(step.reasoning, STEP_LIMIT)]
    if step.text.strip():
        blocks.append(_shown(step.text, STEP_LIMIT))
    for call in step.tool_calls:
        blocks += _call(call)
    return Folded(summary, blocks or [Text("*(empty)*")])


def _attempt(number: int, task: Task, attempt: Attempt, grades: list[CriterionGrade],
             store: AuditStore) -> Section:
    state = attempt.state + (f": {stranger(attempt.unavailable_reason)}"
                             if attempt.unavailable_reason else "")
    usage = attempt.usage
    blocks: list[Block] = [Text(
        f"{state}. " + (f"{usage.completion_tokens:,} output tokens. "
                        if usage.completion_tokens else "")
        + (f"{attempt.wall_time:,.0f} s. " if attempt.wall_time else "")
        + "The answer:"), _shown(attempt.answer or "")]
    graders = sorted({g.grader for g in grades})
    by = {(g.criterion_id, g.grader): g for g in grades}
    if graders:
        blocks.append(Table(["criterion", *map(stranger, graders)], [
            [stranger(one_line(criterion_title(task, c.id), 120)),
             *(f"**{g.verdict}**: {stranger(_cut(g.rationale, STEP_LIMIT))}"
               if (g := by.get((c.id, grader)))
               else "-" for grader in graders)] for c in task.criteria]))
    trajectory = store.trajectory(attempt.id)
    if trajectory is not None and trajectory.steps:
        steps = trajectory.steps
        shown: list[Block] = [_step(i, s) for i, s in enumerate(steps[:STEPS_SHOWN], 1)]
        if len(steps) > STEPS_SHOWN:
            shown.append(Text(f"{len(steps) - STEPS_SHOWN:,} more steps: `rubric-audit review` "
                              f"shows them all."))
        blocks.append(Folded(f"trajectory: {plural(len(steps), 'step')}, "
                             f"{plural(len(trajectory.calls()), 'tool call')}", shown))
    return Section(f"{stranger(attempt.variant)}, attempt {attempt.index} "
                   f"({stranger(attempt.model)})", blocks, anchor=f"attempt-{number}")


def _reviews(task: Task, summary: AuditSummary) -> Section:
    reviews = summary.reviews.get(task.id, [])
    return Section("Reviews", [Table(
        ["reviewer", "label", "notes"],
        [[stranger(r.reviewer), label_name(r.label) if r.label else "none (notes only)",
          " / ".join(stranger(n) for n in r.notes)] for r in reviews])
        if reviews else Text("No reviewer has labelled or noted this task yet.")],
        anchor="reviews")


def _attempts(task: Task, store: AuditStore) -> list[Section]:
    """A section per attempt of the task: its answer, every grader's verdicts, its trajectory."""
    attempts = store.attempts_for_task(task.id)
    grades: dict[str, list[CriterionGrade]] = defaultdict(list)
    for g in store.grades_for_attempts([a.id for a in attempts]):
        grades[g.attempt_id].append(g)
    return [_attempt(n, task, a, grades[a.id], store) for n, a in enumerate(attempts, 1)]


@dataclass(frozen=True)
class SitePage:
    """A task's page: its path relative to the audit's folder, a digest of everything it shows
    (for one version of rubric-audit, the same digest is the same page), and its rendering,
    done only when asked (a page whose digest the site already holds is not made again)."""

    path: str
    digest: str
    render: Callable[[], str]


def site_pages(store: AuditStore, summary: AuditSummary, findings: list[Finding]
               ) -> Iterator[SitePage]:
    """Every task's page, in name order, each with links to the report, its Tasks table and the
    tasks before and after it. The digest covers the page's own sections as built from the
    summary and findings, its links, and the stored rows its attempts' sections are made from
    (the attempts, their grades and trajectories: `task_attempts_digest`), so a page is made
    only where one of those changed."""
    tasks = sorted(store.tasks(), key=lambda t: (t.name, t.id))
    by_task: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        if finding.task_id:
            by_task[finding.task_id].append(finding)
    standing = _Standing.of(summary)
    for i, task in enumerate(tasks):
        nav = [("the report", "report.html"), ("next actions", "report.html#next-actions"),
               ("all tasks", "report.html#tasks")]
        if i > 0:
            nav.append((f"previous: {tasks[i - 1].name}", task_page(tasks[i - 1].id,
                                                                   tasks[i - 1].name)))
        if i + 1 < len(tasks):
            nav.append((f"next: {tasks[i + 1].name}", task_page(tasks[i + 1].id,
                                                               tasks[i + 1].name)))
        title = f"{task.name}: rubric-audit"
        shown = [_task_section(task, summary, standing), *_rubric(task),
                 _findings(task, by_task[task.id])]
        reviews = _reviews(task, summary)
        digest = hashlib.blake2b(repr((title, nav, shown, reviews)).encode(), digest_size=16)
        digest.update(store.task_attempts_digest(task.id).encode())
        yield SitePage(task_page(task.id, task.name), digest.hexdigest(), partial(
            _render, task, title, shown, reviews, nav, store))


def _render(task: Task, title: str, shown: list[Section], reviews: Section,
            nav: list[tuple[str, str]], store: AuditStore) -> str:
    return render_page(title, [*shown, *_attempts(task, store), reviews], ROOT, nav)
