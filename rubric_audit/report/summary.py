"""audit.json: the machine-readable summary of an audit, built from the store."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel

from rubric_audit import __version__
from rubric_audit.model import Attempt, Finding
from rubric_audit.scores import VariantScore, score_variants
from rubric_audit.store import AuditStore


class UnavailableAttempt(BaseModel):
    attempt: str
    reason: str


class FindingCounts(BaseModel):
    by_severity: dict[str, int]
    by_check: dict[str, int]


class AuditSummary(BaseModel):
    """Everything audit.json holds; report.md is rendered from the same object."""

    tool_version: str
    schema_version: int
    benchmark: str | None
    tasks: int
    attempts: int
    scores: list[VariantScore]
    unavailable: list[UnavailableAttempt]
    findings: FindingCounts
    model_calls: int


def _unavailable(attempts: list[Attempt]) -> list[UnavailableAttempt]:
    return [UnavailableAttempt(attempt=a.id, reason=a.unavailable_reason or "")
            for a in attempts if a.state == "unavailable"]


def _counts(findings: list[Finding]) -> FindingCounts:
    return FindingCounts(
        by_severity={s: sum(f.severity == s for f in findings) for s in ("error", "warning", "info")},
        by_check=dict(sorted(Counter(f.check for f in findings).items())),
    )


def build_summary(store: AuditStore) -> AuditSummary:
    tasks, attempts = store.tasks(), store.attempts()
    return AuditSummary(
        tool_version=__version__,
        schema_version=store.schema_version,
        benchmark=store.benchmark_name(),
        tasks=len(tasks),
        attempts=len(attempts),
        scores=score_variants(tasks, attempts, store.grades("recorded")),
        unavailable=_unavailable(attempts),
        findings=_counts(store.findings()),
        model_calls=0,
    )
