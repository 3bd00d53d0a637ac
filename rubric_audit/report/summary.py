"""audit.json: what an audit's summary holds, as it is read back (`summarise.build_summary`
builds it from the store). Its modules import neither the checks nor numpy, so an audit that
reuses a stored one reads its summary without them."""

from __future__ import annotations

from pydantic import BaseModel

from rubric_audit.checks.items import ItemRow
from rubric_audit.checks.screen import Screen
from rubric_audit.core.model import BenchmarkVersion, CheckSummary, SourceMetric
from rubric_audit.core.scores import VariantScore
from rubric_audit.report.correction import Correction
from rubric_audit.report.ranking import Ranking
from rubric_audit.report.statistics import Statistics
from rubric_audit.report.stats import Interval


class UnavailableAttempt(BaseModel):
    attempt: str
    reason: str


class CheckTrust(BaseModel):
    """One check: the findings it made in this audit and how far it can be trusted. Corpus
    numbers come from the labelled corpus its rules were tuned on, unseen ones from the first
    measurement of the held-out sets (bench/check_precision.py); None if not measured."""

    check: str
    findings: int
    corpus_precision: float | None = None
    corpus_right: int | None = None
    corpus_fired: int | None = None
    corpus_cases: int | None = None
    unseen_precision: float | None = None
    unseen_right: int | None = None
    unseen_fired: int | None = None
    unseen_cases: int | None = None


class FindingCounts(BaseModel):
    """Findings by severity and check, each check's precision, and the benchmark-level lines of
    checks whose condition holds on most tasks (said once, not as a finding per task)."""

    by_severity: dict[str, int]
    by_check: dict[str, int]
    precision: list[CheckTrust] = []
    summaries: list[CheckSummary] = []


class Agreement(BaseModel):
    """How often a judge and the code checker agree where the checker could decide."""

    grader: str
    checked: int
    agree: int
    rate: float | None
    interval: Interval


class CodeChecker(BaseModel):
    criteria: int
    checked: int
    not_applicable: int
    not_applicable_reasons: dict[str, int]
    agreement: list[Agreement]


class JudgeReplies(BaseModel):
    """How many of an LLM judge's replies parsed into a verdict, over attempts and controls:
    the rest are unscored (unparseable, or cut at the output cap)."""

    grader: str
    replies: int
    unscored: int
    parse_rate: float


class ControlCounts(BaseModel):
    """Per grader and control kind: expectation met, broken, or undecided."""

    grader: str
    kind: str
    met: int
    broken: int
    undetermined: int


UNKNOWN = "no gold"  # the one reason to exclude a task that says nothing against it


class Achievable(BaseModel):
    """Tasks that count: the gold does not fail and the null does not pass. The others are
    excluded, each under its reason: *unachievable* where the gold fails or the null passes,
    *unknown* where there is no gold to try (never unachievable: nothing shows it is)."""

    tasks: int
    excluded: dict[str, list[str]]
    certified: int
    scores: list[VariantScore]

    def unachievable(self) -> dict[str, str]:
        """Task id -> why it is unachievable (its first reason)."""
        found: dict[str, str] = {}
        for why, ids in self.excluded.items():
            if why != UNKNOWN:
                found.update({t: why for t in ids if t not in found})
        return found

    def unknown(self) -> set[str]:
        """Tasks whose achievability nothing shows: no gold, and no control that failed."""
        return set(self.excluded.get(UNKNOWN, [])) - set(self.unachievable())


class TaskOutcomes(BaseModel):
    """Per model and variant: the outcome, as graded, of each task it attempted (a task it never
    attempted has none). A task passes when at least half of its graded attempts pass and fails
    otherwise; with no graded attempt it is unavailable when every attempt failed outside the
    model, else ungraded (the grader has graded none of them yet). `counts` also gives how many
    tasks are unachievable (their gold fails or their null passes) and how many unknown (no gold
    to try), whatever their outcome, and `unavailable_attempts` how many attempts failed outside
    the model (the scores count attempts: one unavailable beside a graded one leaves its task an
    outcome); `unavailable_rate` is over the tasks attempted."""

    model: str
    variant: str
    grader: str
    counts: dict[str, int]
    unavailable_attempts: int
    unavailable_rate: float | None
    tasks: dict[str, str]


class FailureSplit(BaseModel):
    """Where the failures went: failed (task, model) outcomes as graded, by the reviewers'
    label for the task, each share with its Wilson interval."""

    grader: str
    failures: int
    groups: dict[str, Interval]
    unreviewed_unachievable: int


class TaskReview(BaseModel):
    """One reviewer on one task: the label standing (None after an undo, or for a note alone)
    and every note they left on it."""

    reviewer: str
    label: str | None
    notes: list[str]


class MeasuredScore(BaseModel):
    """Recorded values of one scorer and key that are no verdicts (win rates, counts, ratings),
    per model and variant: how many attempts have one, their mean over tasks (each task's
    attempts averaged first, as inspect reduces epochs) and the source's own metrics of them."""

    model: str
    variant: str
    scorer: str
    key: str
    attempts: int
    mean: float | None
    source_metrics: dict[str, float | None]


class AuditSummary(BaseModel):
    """Everything audit.json holds; report.md is rendered from the same object."""

    tool_version: str
    schema_version: int
    benchmark: str | None
    models_used: list[str]
    skipped: list[dict[str, str]]
    model_failures: list[str]
    tasks: int
    task_names: dict[str, str]
    attempts: int
    scores: list[VariantScore]
    measurements: list[MeasuredScore]
    source_metrics: list[SourceMetric]
    achievable: Achievable
    task_outcomes: list[TaskOutcomes]
    failure_split: FailureSplit
    review_labels: dict[str, str]  # task -> reviewers' majority label, or disputed (tied)
    reviews: dict[str, list[TaskReview]]
    disputed_tasks: list[str]  # tasks whose reviewers gave different labels
    ungraded: int
    unavailable: list[UnavailableAttempt]
    code_checker: CodeChecker
    judge_replies: list[JudgeReplies]
    controls: list[ControlCounts]
    screen: Screen
    alarms: list[str]
    statistics: Statistics
    findings: FindingCounts
    correction: Correction
    ranking: Ranking
    items: list[ItemRow]
    benchmark_version: BenchmarkVersion | None = None  # which version of the benchmark
