"""A review session, without any display: the queues, a task's evidence, the reviewer's labels,
notes and finding verdicts, agreement and the review export. The review app shows it; `reviews`
and `suggest` use it without the app.

Opening reads only light columns (attempt rows and verdicts); a task's answers, rationales and
world are read when the task is shown. Every label, note and undo is appended to the review log.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rubric_audit.core.atomic import write_atomic
from rubric_audit.core.model import (
    FAILURE_LABELS,
    PASS_LABELS,
    SEVERITY_ORDER,
    Attempt,
    CriterionGrade,
    Finding,
    FindingReview,
    Review,
    ReviewLabel,
    Task,
    VariantPrompt,
    grades_by_attempt,
    label_name,
)
from rubric_audit.core.scores import headline_grader, scored_graders
from rubric_audit.core.text import csv_cell
from rubric_audit.review.agreement import GroupAgreement, group_agreement
from rubric_audit.review.labels import (
    DISPUTED,
    PASS_AUDIT_META,
    by_priority,
    current_finding_verdicts,
    current_labels,
    finding_key,
    pass_audit_sample,
    review_queues,
    review_states,
    reviewers_on_tasks,
    standing_entries,
)
from rubric_audit.store.audit_store import open_audit

QUEUES = ("failures", "passes", "all", "disputed")
FINDING_MARKS = {"confirmed": "✓ confirmed", "false_alarm": "✗ false alarm"}
QUEUE_TITLES = {"failures": "Failures", "passes": "Pass audit", "all": "All tasks",
                "disputed": "Disputed"}


@dataclass
class TaskDetails:
    task: Task
    attempts: list[Attempt]
    grades: dict[str, list[CriterionGrade]]  # attempt id -> grades (every grader)
    findings: list[Finding]
    recomputed: list[dict[str, Any]] = field(default_factory=list)  # stored JSON, as regold wrote it
    suggestion: dict[str, Any] | None = None  # stored JSON, as suggest wrote it
    prompt_changes: list[VariantPrompt] = field(default_factory=list)  # variants that differed

    def keyed_findings(self) -> list[tuple[str, Finding]]:
        return keyed(self.findings)


@dataclass
class Stance:
    """One reviewer's current label on a task (None: notes only), with every note they left on
    it: what an adjudicator weighs."""

    reviewer: str
    label: ReviewLabel | None
    notes: list[str]
    stale: bool


def keyed(findings: list[Finding]) -> list[tuple[str, Finding]]:
    """(key, finding), errors first: the order the Findings tab lists them in."""
    ordered = sorted(findings, key=lambda f: SEVERITY_ORDER[f.severity])
    return [(finding_key(f), f) for f in ordered]


class ReviewData:
    """An audit opened for one reviewer."""

    def __init__(self, out: Path, reviewer: str, per_domain: int = 5, seed: int = 0) -> None:
        self.store = open_audit(Path(out) / "audit.db")
        self.reviewer = reviewer
        self.tasks = {t.id: t for t in self.store.tasks()}
        self.grader = headline_grader(scored_graders(self.store.graders()))
        rows = self.store.attempt_rows()
        self.attempts_of: dict[str, list[str]] = defaultdict(list)
        for attempt_id, task_id, *_ in rows:
            self.attempts_of[task_id].append(attempt_id)
        light = self.store.verdicts(self.grader)
        verdicts: dict[str, list[str]] = defaultdict(list)
        for attempt_id, _, verdict in light:
            verdicts[attempt_id].append(verdict)
        self.findings: dict[str, list[Finding]] = defaultdict(list)
        for finding in self.store.findings():
            if finding.task_id:
                self.findings[finding.task_id].append(finding)
        self.hashes = {t: self._evidence_hash(t, verdicts) for t in self.tasks}
        ordered = {t: self.tasks[t] for t in sorted(
            self.tasks, key=lambda t: (self.tasks[t].domain, self.tasks[t].name))}
        failures, passed = review_queues(ordered, [(a, t, state) for a, t, _, _, state in rows],
                                         light)
        self.passed = set(passed)
        self.queues = {"failures": by_priority(failures, [f for fs in self.findings.values()
                                                           for f in fs]),
                       "passes": self._pass_sample(passed, per_domain, seed),
                       "all": list(ordered)}
        # Written by `audit` and `suggest`, not while the app runs: read once, not on every move.
        self.recomputed: dict[str, list[dict[str, Any]]] = self.store.meta("regold", {}) or {}
        self.suggestions: dict[str, dict[str, Any]] = self.store.meta("suggestions", {}) or {}
        # Each variant whose prompt added to or dropped from the one its task's variants share.
        self.prompt_changes: dict[str, list[VariantPrompt]] = defaultdict(list)
        for change in self.store.variant_prompts():
            if change.added or change.dropped:
                self.prompt_changes[change.task_id].append(change)

    def close(self) -> None:
        self.store.close()

    def _evidence_hash(self, task_id: str, verdicts: dict[str, list[str]]) -> str:
        parts = [self.tasks[task_id].version()]
        parts += [f"{a}:{sorted(verdicts.get(a, []))}" for a in sorted(self.attempts_of[task_id])]
        parts += sorted(f.check for f in self.findings.get(task_id, []))
        return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]

    def _pass_sample(self, passed: list[str], per_domain: int, seed: int) -> list[str]:
        """A stratified random sample of passed tasks, N per domain; the sample is stored."""
        stored = self.store.meta(PASS_AUDIT_META)
        if stored and stored["seed"] == seed and stored["per_domain"] == per_domain \
                and set(stored["tasks"]) <= set(passed):
            sample: list[str] = stored["tasks"]
            return sample
        sample = pass_audit_sample(passed, {t: self.tasks[t].domain for t in passed},
                                   per_domain, seed)
        with self.store.transaction():
            self.store.set_meta(PASS_AUDIT_META, {"seed": seed, "per_domain": per_domain,
                                                  "tasks": sample})
        return sample

    def labels_for(self, task_id: str) -> tuple[ReviewLabel, ...]:
        """Pass labels for a task every model passed (in any queue), else failure labels."""
        return PASS_LABELS if task_id in self.passed else FAILURE_LABELS

    def severity(self, task_id: str) -> str | None:
        """The worst severity among the task's findings, or None."""
        found = [f.severity for f in self.findings.get(task_id, [])]
        return min(found, key=SEVERITY_ORDER.__getitem__) if found else None

    def current(self) -> dict[str, dict[str, Review]]:
        return current_labels(self.store.reviews())

    def mine(self, current: dict[str, dict[str, Review]] | None = None) -> dict[str, Review]:
        """This reviewer's labels, from `current` when the caller has read it already."""
        current = self.current() if current is None else current
        return {t: r[self.reviewer] for t, r in current.items() if self.reviewer in r}

    def stale(self, review: Review) -> bool:
        """The evidence changed since the review (new attempts, grades or findings)."""
        return review.evidence_hash != self.hashes.get(review.task_id)

    def queue(self, name: str, current: dict[str, dict[str, Review]] | None = None
              ) -> list[str]:
        """The queue's tasks: failures, passes (the pass-audit sample) and all are fixed when
        the session opens; disputed follows the labels (`current`, when read already)."""
        return self.disputed(current) if name == "disputed" else self.queues[name]

    def first_unreviewed(self, queue: str) -> int:
        mine = self.mine()
        ids = self.queue(queue)
        return next((i for i, t in enumerate(ids) if t not in mine), 0)

    def record(self, task_id: str, label: ReviewLabel | None, note: str = "") -> None:
        """Append a label (or a note, keeping the current label) to the review log."""
        if label is not None and label not in self.labels_for(task_id):
            raise ValueError(f"{label} is not a label for this task")
        if label is None:
            standing = self.mine().get(task_id)
            label = standing.label if standing else None
        review = Review(reviewer=self.reviewer, created_at=datetime.now(UTC).isoformat(
            timespec="seconds"), task_id=task_id, label=label, note=note,
            evidence_hash=self.hashes[task_id])
        with self.store.transaction():
            self.store.append_review(review)

    def undo(self) -> Review | None:
        """Retract this reviewer's latest entry still standing; returns the entry retracted."""
        mine = [(i, r) for i, r in standing_entries(self.store.reviews())
                if r.reviewer == self.reviewer]
        if not mine:
            return None
        entry, review = mine[-1]
        with self.store.transaction():
            self.store.append_review(review.model_copy(update={
                "label": None, "note": "", "retracts": entry,
                "created_at": datetime.now(UTC).isoformat(timespec="seconds")}))
        return review

    def finding_marks(self, task_id: str) -> dict[str, str]:
        """Finding key -> how reviewers judged it ("✓ confirmed: ana · ✗ false alarm: ben")."""
        verdicts = current_finding_verdicts(self.store.finding_reviews())
        marks = {}
        for key, _ in keyed(self.findings.get(task_id, [])):
            by = verdicts.get(key, {})
            marks[key] = " · ".join(f"{FINDING_MARKS[r.verdict or '']}: {name}"
                                    for name, r in sorted(by.items()))
        return marks

    def judge_finding(self, key: str, finding: Finding, verdict: str) -> str | None:
        """Append this reviewer's verdict on a finding; the same verdict again withdraws it.
        Returns the verdict standing now."""
        standing = [(i, r) for i, r in standing_entries(self.store.finding_reviews())
                    if r.reviewer == self.reviewer and r.finding_key == key]
        now = datetime.now(UTC).isoformat(timespec="seconds")
        entry = FindingReview(reviewer=self.reviewer, created_at=now, finding_key=key,
                              task_id=finding.task_id, check=finding.check)
        if standing and standing[-1][1].verdict == verdict:
            entry = entry.model_copy(update={"retracts": standing[-1][0]})
        else:
            entry = entry.model_copy(update={"verdict": verdict})
        with self.store.transaction():
            self.store.append_finding_review(entry)
        return entry.verdict

    def group_of(self, task_id: str) -> str:
        """"passes" for a task that takes pass labels (the pass audit), else "failures"."""
        return "passes" if task_id in self.passed else "failures"

    def agreements(self, current: dict[str, dict[str, Review]] | None = None
                   ) -> dict[str, GroupAgreement]:
        """Agreement between reviewers, separately over failure labels and pass labels."""
        labels = self.current() if current is None else current
        names = {t: task.name for t, task in self.tasks.items()}
        return {group: group_agreement(group, labels, [t for t in self.queues["all"]
                                                       if self.group_of(t) == group], names)
                for group in ("failures", "passes")}

    def label_rows(self) -> list[dict[str, Any]]:
        """Each reviewer's current label per task with every note they left on it (a note
        alone, without a label, is a row too), task names beside ids."""
        return [{"task_id": task_id, "task": self.tasks[task_id].name
                 if task_id in self.tasks else task_id, "group": self.group_of(task_id),
                 "reviewer": reviewer, "label": review.label if review else "",
                 "label_name": label_name(review.label or "") if review else "", "notes": notes,
                 "created_at": review.created_at if review else "",
                 "stale": self.stale(review) if review else False}
                for task_id, reviewer, review, notes in reviewers_on_tasks(self.store.reviews())]

    def write_reviews(self, folder: Path, fmt: str, rows: list[dict[str, Any]],
                      agreements: dict[str, GroupAgreement]) -> list[Path]:
        """labels.json (`label_rows`: labels with notes; `agreements` per group, with the
        disagreements), or as csv: labels.csv, labels_agreement.csv and labels_disagreements.csv
        (beside the export's `reviews` table, the log they fold)."""
        if fmt == "json":
            target = folder / "labels.json"
            write_atomic(target, json.dumps({"agreement": {g: a.model_dump() for g, a in
                                                           agreements.items()},
                                             "labels": rows}, indent=2) + "\n")
            return [target]
        kappas = [{"group": g, "method": k.method, "reviewers": " ".join(k.reviewers),
                   "kappa": k.kappa, "tasks": k.tasks}
                  for g, a in agreements.items()
                  for k in [*a.pairs, *([a.fleiss] if a.fleiss else [])]]
        disputes = [{"group": g, "task_id": d.task_id, "task": d.task,
                     "labels": "; ".join(f"{r}: {label_name(label)}"
                                         for r, label in d.labels.items())}
                    for g, a in agreements.items() for d in a.disagreements]
        tables = {"labels": [{**r, "notes": " | ".join(r["notes"])} for r in rows],
                  "labels_agreement": kappas, "labels_disagreements": disputes}
        fields = {"labels": list(rows[0]) if rows else ["task_id", "task", "group", "reviewer",
                                                         "label", "label_name", "notes"],
                  "labels_agreement": ["group", "method", "reviewers", "kappa", "tasks"],
                  "labels_disagreements": ["group", "task_id", "task", "labels"]}
        written = []
        for name, table in tables.items():
            buffer = io.StringIO()
            writer = csv.DictWriter(buffer, fieldnames=fields[name])
            writer.writeheader()
            writer.writerows({k: csv_cell(v) for k, v in row.items()} for row in table)
            write_atomic(folder / f"{name}.csv", buffer.getvalue())
            written.append(folder / f"{name}.csv")
        return written

    def disputed(self, current: dict[str, dict[str, Review]] | None = None) -> list[str]:
        """The disputed tasks (reviewers' labels with no majority), in the All queue's order."""
        states = review_states(self.current() if current is None else current)
        return [t for t in self.queues["all"] if states.get(t) == DISPUTED]

    def stances(self, task_id: str) -> list[Stance]:
        """Each reviewer's label and notes on the task, by reviewer name."""
        labels = self.current().get(task_id, {})
        notes: dict[str, list[str]] = defaultdict(list)
        for _, r in standing_entries(self.store.reviews()):
            if r.task_id == task_id and r.note:
                notes[r.reviewer].append(r.note)
        return [Stance(reviewer=name, label=labels[name].label if name in labels else None,
                       notes=notes.get(name, []),
                       stale=name in labels and self.stale(labels[name]))
                for name in sorted(set(labels) | set(notes))]

    def notes(self, task_id: str) -> list[Review]:
        """The notes on the task still standing (an undone note is not among them)."""
        return [r for _, r in standing_entries(self.store.reviews())
                if r.task_id == task_id and r.note]

    def counts(self, queue: str) -> dict[str, int]:
        mine = self.mine()
        labels = [mine[t].label for t in self.queue(queue) if t in mine]
        return {label: labels.count(label) for label in dict.fromkeys(labels) if label}

    def details(self, task_id: str) -> TaskDetails:
        attempts = self.store.attempts_for_task(task_id)
        grades = grades_by_attempt(self.store.grades_for_attempts([a.id for a in attempts]))
        return TaskDetails(task=self.tasks[task_id], attempts=attempts, grades=grades,
                           findings=self.findings.get(task_id, []),
                           recomputed=self.recomputed.get(task_id, []),
                           suggestion=self.suggestions.get(task_id),
                           prompt_changes=self.prompt_changes.get(task_id, []))
