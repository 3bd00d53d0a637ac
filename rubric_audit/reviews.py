"""Review labels as they stand: the append-only log folded into each reviewer's current label."""

from __future__ import annotations

from collections import Counter

from rubric_audit.model import Review

FAILURE_LABELS = ("defective_task", "grader_error", "ambiguous", "model_error")
PASS_LABELS = ("sound", "unearned")


def current_labels(log: list[tuple[int, Review]]) -> dict[str, dict[str, Review]]:
    """task -> reviewer -> that reviewer's latest entry still standing (retractions undo)."""
    retracted = {r.retracts for _, r in log if r.retracts is not None}
    out: dict[str, dict[str, Review]] = {}
    for entry_id, review in log:
        if review.retracts is not None or entry_id in retracted or review.label is None:
            continue
        out.setdefault(review.task_id, {})[review.reviewer] = review
    return out


def consensus(by_reviewer: dict[str, Review]) -> str | None:
    """The majority label among reviewers; None when they are tied."""
    counts = Counter(r.label for r in by_reviewer.values()).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]
