"""audit.json: the machine-readable summary of an audit, built from the store."""

from __future__ import annotations

import re
from collections import Counter

from pydantic import BaseModel

from rubric_audit import __version__
from rubric_audit.model import Attempt, CriterionGrade, Finding
from rubric_audit.scores import VariantScore, score_variants
from rubric_audit.store import AuditStore


class UnavailableAttempt(BaseModel):
    attempt: str
    reason: str


class FindingCounts(BaseModel):
    by_severity: dict[str, int]
    by_check: dict[str, int]


class Agreement(BaseModel):
    """How often a judge and the code checker agree where the checker could decide."""

    grader: str
    checked: int
    agree: int
    rate: float | None


class CodeChecker(BaseModel):
    criteria: int
    checked: int
    not_applicable: int
    not_applicable_reasons: dict[str, int]
    agreement: list[Agreement]


class AuditSummary(BaseModel):
    """Everything audit.json holds; report.md is rendered from the same object."""

    tool_version: str
    schema_version: int
    benchmark: str | None
    tasks: int
    attempts: int
    scores: list[VariantScore]
    unavailable: list[UnavailableAttempt]
    code_checker: CodeChecker
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


def _code_checker(grades: list[CriterionGrade]) -> CodeChecker:
    code = {(g.attempt_id, g.criterion_id): g for g in grades if g.grader == "code"}
    decided = {k: g.verdict for k, g in code.items() if g.verdict in ("pass", "fail")}
    reasons = Counter(re.sub(r"near .*", "near the target", g.rationale)
                      for g in code.values() if g.verdict == "not_applicable")
    agreement = []
    for grader in sorted({g.grader for g in grades} - {"code"}):
        pairs = [(decided[(g.attempt_id, g.criterion_id)], g.verdict) for g in grades
                 if g.grader == grader and (g.attempt_id, g.criterion_id) in decided
                 and g.verdict in ("pass", "fail")]
        agree = sum(a == b for a, b in pairs)
        agreement.append(Agreement(grader=grader, checked=len(pairs), agree=agree,
                                   rate=agree / len(pairs) if pairs else None))
    return CodeChecker(criteria=len(code), checked=len(decided),
                       not_applicable=len(code) - len(decided),
                       not_applicable_reasons=dict(sorted(reasons.items())), agreement=agreement)


def build_summary(store: AuditStore) -> AuditSummary:
    tasks, attempts, grades = store.tasks(), store.attempts(), store.grades()
    graders = sorted({g.grader for g in grades} - {"code"})
    return AuditSummary(
        tool_version=__version__,
        schema_version=store.schema_version,
        benchmark=store.benchmark_name(),
        tasks=len(tasks),
        attempts=len(attempts),
        scores=[s for grader in graders for s in score_variants(tasks, attempts, grades, grader)
                if s.tasks_scored],
        unavailable=_unavailable(attempts),
        code_checker=_code_checker(grades),
        findings=_counts(store.findings()),
        model_calls=0,
    )
