"""The statistics of an audit: scores with intervals under each rescoring option, paired gaps
between models, review results, judge quality and effort. Built from the store, seed stored."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from pydantic import BaseModel

from rubric_audit.core.model import (
    FAILURE_LABELS,
    PASS_LABELS,
    AttemptRow,
    Finding,
    FindingReview,
    GradeRow,
    Review,
    Task,
    grades_by_attempt,
)
from rubric_audit.core.scores import attempt_outcome, criterion_score, headline_grader
from rubric_audit.report.stats import (
    DEFAULT_SEED,
    Interval,
    mean_interval,
    paired_difference,
    pass_at_k,
    pass_hat_k,
    proportion,
)
from rubric_audit.review.agreement import GroupAgreement, group_agreement
from rubric_audit.review.labels import (
    DISPUTED,
    consensus,
    current_finding_verdicts,
    finding_key,
    graded_queues,
    json_key,
)

CONTROL_DEFECT_CHECKS = {"control_gold_fails", "control_null_passes", "gold_recompute_mismatch"}
OPTIONS = {
    "as_graded": "every scored task, as graded",
    "without_defective": "without tasks reviewers labelled defective",
    "without_defective_or_ambiguous": "without tasks labelled defective or ambiguous",
    "ambiguous_as_pass": "tasks labelled ambiguous counted as passes",
    "grader_error_as_pass": "tasks labelled grader error counted as passes",
    "unearned_as_fail": "tasks labelled unearned pass counted as fails (their criterion score "
                        "as graded: the label does not say which criterion was unearned)",
    "achievable": "only tasks whose gold does not fail and whose null does not pass",
    "without_flagged": "without tasks an error finding flags (from the checks alone, before any "
                       "review)",
}
# option -> (the label it rescores, what a task so labelled counts as)
RELABELLED = {"ambiguous_as_pass": ("ambiguous", "pass"),
              "grader_error_as_pass": ("grader_error", "pass"),
              "unearned_as_fail": ("unearned", "fail")}


class ScoreRow(BaseModel):
    option: str
    model: str
    variant: str
    grader: str
    tasks: int
    pass_at_1: Interval
    criterion_score: Interval
    k: int | None
    pass_at_k: Interval | None
    pass_hat_k: Interval | None


class Gap(BaseModel):
    option: str
    grader: str
    a: str
    b: str
    difference: Interval


class ReviewResults(BaseModel):
    """The review queues (tasks every model failed, tasks every model passed), how far they are
    reviewed, with the tasks still waiting for a label, and agreement between reviewers. A task
    its reviewers labelled counts as reviewed, disputed (tied, no majority label) included;
    `failure_groups` counts each label and the disputed apart; the rates are over the tasks with
    a majority label."""

    failures_queue: int
    failures_reviewed: int
    failures_waiting: list[str]
    failure_groups: dict[str, int]
    passes_queue: int
    passes_reviewed: int
    passes_waiting: list[str]
    unearned_rate: Interval
    disputed: int
    grader_error_rate: Interval
    agreement: list[GroupAgreement]


class CheckPrecision(BaseModel):
    """A check's precision as reviewers measured it: of its findings reviewers agree on,
    the share they confirmed (the rest they judged false alarms), with a Wilson interval."""

    check: str
    findings: int
    reviewed: int
    confirmed: int
    false_alarms: int
    disputed: int
    precision: Interval


class EffortRow(BaseModel):
    task_id: str
    name: str
    pass_rate: float | None
    fewest_output_tokens: int | None


class Statistics(BaseModel):
    seed: int
    options: dict[str, str]
    scores: list[ScoreRow]
    gaps: list[Gap]
    review: ReviewResults
    finding_precision: list[CheckPrecision]
    effort: list[EffortRow]


PerTask = dict[str, tuple[int, int, list[float]]]  # task -> (decided attempts, passes, scores)


class FindingRow(NamedTuple):
    """What the statistics read of a finding: its check, severity, task and identity
    (`finding_key`), without its message and evidence."""

    check: str
    severity: str
    task_id: str | None
    key: str

    @classmethod
    def of(cls, finding: Finding) -> FindingRow:
        return cls(finding.check, finding.severity, finding.task_id, finding_key(finding))

    @classmethod
    def stored(cls, check: str, severity: str, task_id: str | None, raw: str) -> FindingRow:
        """From a stored row: its JSON is the finding's own (`finding_key` hashes it)."""
        return cls(check, severity, task_id, json_key(raw))


@dataclass
class _Tally:
    """One task's PerTask entry while it is counted."""

    decided: int = 0
    passes: int = 0
    scores: list[float] = field(default_factory=list)


def per_task(tasks: dict[str, Task], attempts: Sequence[AttemptRow], grades: Iterable[GradeRow],
             grader: str) -> dict[tuple[str, str], PerTask]:
    by_attempt = grades_by_attempt(grades, grader)
    out: dict[tuple[str, str], dict[str, _Tally]] = defaultdict(lambda: defaultdict(_Tally))
    for a in attempts:
        task = tasks.get(a.task_id)
        if task is None or a.state != "graded" or not by_attempt.get(a.id):
            continue
        outcome = attempt_outcome(task, by_attempt[a.id])
        if outcome == "unscored":
            continue
        tally = out[(a.model, a.variant)][a.task_id]
        tally.decided += 1
        tally.passes += outcome == "pass"
        score = criterion_score(task, by_attempt[a.id])
        if score is not None:
            tally.scores.append(score)
    return {key: {t: (n.decided, n.passes, n.scores) for t, n in tallies.items()}
            for key, tallies in out.items()}


def option_tasks(option: str, scored: set[str], labels: dict[str, str | None],
                 achievable: set[str], flagged: set[str]) -> set[str]:
    if option == "without_defective":
        return {t for t in scored if labels.get(t) != "defective_task"}
    if option == "without_defective_or_ambiguous":
        return {t for t in scored if labels.get(t) not in ("defective_task", "ambiguous")}
    if option == "achievable":
        return scored & achievable
    if option == "without_flagged":
        return scored - flagged
    return set(scored)


def rescored(option: str, rows: PerTask, labels: dict[str, str | None]) -> PerTask:
    """The per-task results an option scores (`RELABELLED`): a task counted as a pass passes on
    every decided attempt, each criterion passing (so pass@1, pass@k, pass^k and the criterion
    score all count it so); one counted as a fail fails on every decided attempt, its criterion
    score as graded; the other options score every task as graded."""
    if option not in RELABELLED:
        return rows
    label, counted = RELABELLED[option]

    def relabelled(n: int, scores: list[float]) -> tuple[int, int, list[float]]:
        return (n, n, [1.0] * len(scores)) if counted == "pass" else (n, 0, scores)

    return {t: relabelled(n, scores) if labels.get(t) == label else (n, c, scores)
            for t, (n, c, scores) in rows.items()}


def _row(option: str, key: tuple[str, str], grader: str, rows: PerTask, chosen: set[str],
         seed: int) -> ScoreRow:
    ids = sorted(chosen & set(rows))
    scores = [sum(rows[t][2]) / len(rows[t][2]) for t in ids if rows[t][2]]
    k = _common_attempts([rows[t][0] for t in ids])
    with_k = [t for t in ids if rows[t][0] >= k] if k else []
    return ScoreRow(
        option=option, model=key[0], variant=key[1], grader=grader, tasks=len(ids),
        pass_at_1=mean_interval(_passes(rows, ids), seed),
        criterion_score=mean_interval(scores, seed), k=k,
        pass_at_k=mean_interval([pass_at_k(rows[t][0], rows[t][1], k) for t in with_k], seed)
        if k else None,
        pass_hat_k=mean_interval([pass_hat_k(rows[t][0], rows[t][1], k) for t in with_k], seed)
        if k else None)


def _passes(rows: PerTask, ids: list[str]) -> list[float]:
    """Per-task pass@1: the share of its decided attempts that passed."""
    return [rows[t][1] / rows[t][0] for t in ids]


def _common_attempts(counts: list[int]) -> int | None:
    """The largest k >= 2 that at least 80% of tasks have k decided attempts for (pass@k, pass^k
    are computed over those tasks), or None."""
    for k in sorted(set(counts), reverse=True):
        if k >= 2 and sum(c >= k for c in counts) >= 0.8 * len(counts):
            return k
    return None


def flagged_tasks(findings: Iterable[FindingRow]) -> set[str]:
    """Tasks an error finding of a task-defect check flags (the `without_flagged` option): a
    lint's, or a control's or gold recomputation's that finds the task broken. The lints are
    imported here, where they are asked for: reading a stored summary needs none of them."""
    from rubric_audit.checks.lints import TASK_CHECKS

    defects = {c.__name__ for c in TASK_CHECKS} | CONTROL_DEFECT_CHECKS
    return {f.task_id for f in findings if f.task_id and f.severity == "error"
            and f.check in defects}


def finding_precision(findings: Iterable[FindingRow], log: list[tuple[int, FindingReview]]
                      ) -> list[CheckPrecision]:
    """Per check with findings: how reviewers judged them (one verdict per finding, the
    reviewers' majority; a tie is disputed and left out of the precision)."""
    verdicts = current_finding_verdicts(log)
    by_check: dict[str, list[str | None]] = defaultdict(list)
    for f in findings:
        by = verdicts.get(f.key)
        by_check[f.check].append(consensus(by) if by else "unreviewed")
    rows = []
    for check, seen in sorted(by_check.items()):
        confirmed, false_alarms = seen.count("confirmed"), seen.count("false_alarm")
        rows.append(CheckPrecision(
            check=check, findings=len(seen), reviewed=len(seen) - seen.count("unreviewed"),
            confirmed=confirmed, false_alarms=false_alarms, disputed=seen.count(None),
            precision=proportion(confirmed, confirmed + false_alarms)))
    return rows


def build_statistics(tasks: list[Task], attempts: Sequence[AttemptRow],
                     grades: Sequence[GradeRow], graders: list[str],
                     findings: Sequence[FindingRow],
                     current: dict[str, dict[str, Review]], labels: dict[str, str | None],
                     achievable: set[str], finding_reviews: list[tuple[int, FindingReview]],
                     seed: int = DEFAULT_SEED) -> Statistics:
    """`graders` are the scored graders; `current` is each reviewer's standing label per task and
    `labels` their consensus (None where tied), folded once from the review log by the caller."""
    by_id = {t.id: t for t in tasks}
    flagged = flagged_tasks(findings)
    headline = headline_grader(graders)
    scores: list[ScoreRow] = []
    gaps: list[Gap] = []
    for grader in graders:
        table = per_task(by_id, attempts, grades, grader)
        for option in OPTIONS:
            results = {key: rescored(option, rows, labels) for key, rows in table.items()}
            for key, rows in sorted(results.items()):
                chosen = option_tasks(option, set(rows), labels, achievable, flagged)
                scores.append(_row(option, key, grader, rows, chosen, seed))
            for (ka, ra), (kb, rb) in itertools.combinations(sorted(results.items()), 2):
                common = sorted(option_tasks(option, set(ra) & set(rb), labels, achievable,
                                             flagged))
                gaps.append(Gap(option=option, grader=grader, a=f"{ka[0]} / {ka[1]}",
                                b=f"{kb[0]} / {kb[1]}", difference=paired_difference(
                                    _passes(ra, common), _passes(rb, common), seed)))
    return Statistics(seed=seed, options=OPTIONS, scores=scores, gaps=gaps,
                      review=_review(by_id, attempts, grades, current, labels, headline),
                      finding_precision=finding_precision(findings, finding_reviews),
                      effort=_effort(by_id, attempts, grades, headline))


def _review(by_id: dict[str, Task], attempts: Sequence[AttemptRow], grades: Sequence[GradeRow],
            current: dict[str, dict[str, Review]], labels: dict[str, str | None],
            grader: str) -> ReviewResults:
    failures, passes = graded_queues(by_id, attempts, grades, grader)
    states = {t: label or DISPUTED for t, label in labels.items()}
    failure_states = [states[t] for t in failures if states.get(t) in (*FAILURE_LABELS, DISPUTED)]
    pass_states = [states[t] for t in passes if states.get(t) in (*PASS_LABELS, DISPUTED)]
    failure_labels = [s for s in failure_states if s != DISPUTED]
    pass_labels = [s for s in pass_states if s != DISPUTED]
    return ReviewResults(
        failures_queue=len(failures), failures_reviewed=len(failure_states),
        failures_waiting=[t for t in failures if t not in labels],
        failure_groups={g: failure_states.count(g) for g in (*FAILURE_LABELS, DISPUTED)},
        passes_queue=len(passes), passes_reviewed=len(pass_states),
        passes_waiting=[t for t in passes if t not in labels],
        unearned_rate=proportion(pass_labels.count("unearned"), len(pass_labels)),
        disputed=failure_states.count(DISPUTED) + pass_states.count(DISPUTED),
        grader_error_rate=proportion(failure_labels.count("grader_error"), len(failure_labels)),
        agreement=[group_agreement(group, current, ids, {t: by_id[t].name for t in ids})
                   for group, ids in (("failures", [t for t in by_id if t not in passes]),
                                      ("passes", passes))])


def _effort(by_id: dict[str, Task], attempts: Sequence[AttemptRow], grades: Sequence[GradeRow],
            grader: str) -> list[EffortRow]:
    by_attempt = grades_by_attempt(grades, grader)
    graded_by_task: dict[str, list[AttemptRow]] = defaultdict(list)
    for a in attempts:
        if by_attempt.get(a.id):
            graded_by_task[a.task_id].append(a)
    rows = []
    for task_id, task in by_id.items():
        graded = graded_by_task.get(task_id, [])
        passing = [a for a in graded if attempt_outcome(task, by_attempt[a.id]) == "pass"]
        tokens = [a.usage.completion_tokens for a in passing if a.usage.completion_tokens]
        rows.append(EffortRow(task_id=task_id, name=task.name,
                              pass_rate=len(passing) / len(graded) if graded else None,
                              fewest_output_tokens=min(tokens) if tokens else None))
    return rows
