"""Review labels as they stand: the append-only log folded into each reviewer's current label."""

from __future__ import annotations

import hashlib
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from rubric_audit.checks.items import ITEM_CHECK_NAMES
from rubric_audit.core.model import (
    AttemptRow,
    Finding,
    FindingReview,
    GradeRow,
    Review,
    Task,
    task_outcome,
)

if TYPE_CHECKING:
    from rubric_audit.store.audit_store import AuditStore

PASS_AUDIT_META = "pass_audit"
"""The pass audit's sample as drawn: {"seed", "per_domain", "tasks"} (the corrected scores read it)."""
DISPUTED = "disputed"
"""A task's review state when its reviewers' labels have no majority: neither labelled nor
unreviewed."""


def finding_key(finding: Finding) -> str:
    """A finding's identity across re-audits: a hash of what it says (task, criterion, check,
    message, evidence), so a reviewer's judgement of it survives re-running the checks."""
    return json_key(finding.model_dump_json())


def json_key(text: str) -> str:
    """`finding_key` of the finding whose JSON is `text` (as the store holds it)."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


R = TypeVar("R", Review, FindingReview)


def standing_entries(log: list[tuple[int, R]]) -> list[tuple[int, R]]:
    """The log's entries still standing, in order: neither a retraction nor retracted."""
    retracted = {r.retracts for _, r in log if r.retracts is not None}
    return [(i, r) for i, r in log if r.retracts is None and i not in retracted]


def _standing(log: list[tuple[int, R]], subject: Callable[[R], str],
              value: Callable[[R], object]) -> dict[str, dict[str, R]]:
    """subject -> reviewer -> that reviewer's latest entry still standing (retractions undo)."""
    out: dict[str, dict[str, R]] = {}
    for _, review in standing_entries(log):
        if value(review) is not None:
            out.setdefault(subject(review), {})[review.reviewer] = review
    return out


def current_labels(log: list[tuple[int, Review]]) -> dict[str, dict[str, Review]]:
    """task -> reviewer -> that reviewer's latest label still standing (retractions undo)."""
    return _standing(log, lambda r: r.task_id, lambda r: r.label)


class ReviewerOnTask(NamedTuple):
    """One reviewer on one task: their label entry still standing (None for notes alone) and
    the notes they left on it and did not undo, in order."""

    task_id: str
    reviewer: str
    review: Review | None
    notes: list[str]


def reviewers_on_tasks(log: list[tuple[int, Review]]) -> list[ReviewerOnTask]:
    """Every reviewer who labelled or noted a task, by task id and reviewer name."""
    current = current_labels(log)
    notes: dict[tuple[str, str], list[str]] = defaultdict(list)
    for _, review in standing_entries(log):
        if review.note:
            notes[(review.task_id, review.reviewer)].append(review.note)
    keys = sorted({(t, name) for t, by in current.items() for name in by} | set(notes))
    return [ReviewerOnTask(t, name, current.get(t, {}).get(name), notes.get((t, name), []))
            for t, name in keys]


def current_finding_verdicts(log: list[tuple[int, FindingReview]]
                             ) -> dict[str, dict[str, FindingReview]]:
    """finding key -> reviewer -> that reviewer's verdict still standing."""
    return _standing(log, lambda r: r.finding_key, lambda r: r.verdict)


def disputed_tasks(current: dict[str, dict[str, Review]]) -> set[str]:
    """Tasks whose reviewers gave different labels."""
    return {t for t, by in current.items() if len({r.label for r in by.values()}) > 1}


def review_states(current: dict[str, dict[str, Review]]) -> dict[str, str]:
    """Each labelled task's state: its reviewers' majority label, or DISPUTED when they are
    tied. A task nobody labelled is not in it (unreviewed)."""
    return {t: consensus(by) or DISPUTED for t, by in current.items() if by}


def consensus(by_reviewer: dict[str, Review] | dict[str, FindingReview]) -> str | None:
    """The majority label (or finding verdict) among reviewers; None when they are tied."""
    counts = Counter(r.label if isinstance(r, Review) else r.verdict
                     for r in by_reviewer.values()).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def all_failed_tasks(store: AuditStore) -> list[str]:
    """Task ids that every model failed on every graded attempt (recorded grades): `run
    --rerun-failures` gives each one more attempt."""
    tasks = {t.id: t for t in store.tasks()}
    rows = [(a, t, state) for a, t, _, _, state in store.attempt_rows()]
    return review_queues(tasks, rows, store.verdicts("recorded"))[0]


def graded_queues(tasks: dict[str, Task], attempts: Iterable[AttemptRow],
                  grades: Iterable[GradeRow], grader: str) -> tuple[list[str], list[str]]:
    """`review_queues` of attempts and grades (whole or as their columns give them), by one
    grader's verdicts."""
    return review_queues(tasks, [(a.id, a.task_id, a.state) for a in attempts],
                         [(g.attempt_id, g.criterion_id, g.verdict) for g in grades
                          if g.grader == grader])


def review_queues(tasks: dict[str, Task], attempts: list[tuple[str, str, str]],
                  verdicts: list[tuple[str, str, str]]) -> tuple[list[str], list[str]]:
    """(tasks every model failed on every graded attempt, tasks every model passed), in task order.

    `attempts` are (attempt id, task id, state) and `verdicts` (attempt id, criterion id,
    verdict) of one grader: light rows, so the review app can open a large audit quickly. An
    attempt passes when every criterion of its task passes and fails when any fails (APEX rule).
    """
    by_attempt: dict[str, dict[str, str]] = defaultdict(dict)
    for attempt_id, criterion_id, verdict in verdicts:
        by_attempt[attempt_id][criterion_id] = verdict
    outcomes: dict[str, list[str]] = defaultdict(list)
    for attempt_id, task_id, state in attempts:
        task = tasks.get(task_id)
        seen = by_attempt.get(attempt_id)
        if task is None or state != "graded" or not seen:
            continue
        outcomes[task_id].append(task_outcome([seen.get(c.id, "unscored") for c in task.criteria]))
    failures = [t for t in tasks if outcomes.get(t) and all(o == "fail" for o in outcomes[t])]
    passes = [t for t in tasks if outcomes.get(t) and all(o == "pass" for o in outcomes[t])]
    return failures, passes


def pass_audit_sample(passed: list[str], domain_of: dict[str, str], per_domain: int,
                      seed: int) -> list[str]:
    """The pass audit: a stratified random sample of the tasks every model passed, `per_domain`
    per domain (all of a smaller domain), drawn domain by domain in name order from one seeded
    generator; sorted by task id."""
    by_domain: dict[str, list[str]] = defaultdict(list)
    for t in passed:
        by_domain[domain_of[t]].append(t)
    rng = random.Random(seed)
    return sorted(t for _, ids in sorted(by_domain.items())
                  for t in rng.sample(ids, min(per_domain, len(ids))))


def by_priority(queue: list[str], findings: list[Finding]) -> list[str]:
    """The queue with the tasks that carry an item-statistics signal first, the likeliest first
    (the smallest chance of their pattern if verdicts were unrelated; a signal with no chance,
    such as every attempt failing the same criteria, leads), the rest after them; ties keep the
    queue's order."""
    chance: dict[str, float] = {}
    for f in findings:
        if f.task_id and f.check in ITEM_CHECK_NAMES:
            chance[f.task_id] = min(chance.get(f.task_id, 1.0), f.evidence.get("chance", 0.0))
    position = {t: i for i, t in enumerate(queue)}
    return sorted(queue, key=lambda t: (t not in chance, chance.get(t, 0.0), position[t]))
