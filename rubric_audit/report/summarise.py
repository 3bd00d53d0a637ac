"""audit.json's summary built from the store (the models it fills are `summary`'s)."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from statistics import mean
from typing import Any

from rubric_audit import __version__
from rubric_audit.checks.controls import control_outcome
from rubric_audit.checks.items import item_rows, task_items
from rubric_audit.checks.lints import CHECK_SUMMARIES
from rubric_audit.checks.precision import CheckPrecision, code_fails_decide, load_unseen
from rubric_audit.checks.precision import load as load_precision
from rubric_audit.checks.screen import UNSOUND_PASS_CHECKS, gather, screen
from rubric_audit.core.model import (
    CODE_GRADER,
    FAILURE_LABELS,
    AttemptRow,
    Control,
    ControlGrade,
    ControlOutcome,
    CriterionGrade,
    Expectation,
    GradeRow,
    Measurement,
    Review,
    SourceMetric,
    Task,
)
from rubric_audit.core.scores import VariantScore, headline_grader, score_variants, scored_graders
from rubric_audit.core.words import plural
from rubric_audit.report.correction import build_correction
from rubric_audit.report.ranking import build_ranking
from rubric_audit.report.statistics import (
    FindingRow,
    build_statistics,
    flagged_tasks,
    per_task,
)
from rubric_audit.report.stats import proportion
from rubric_audit.report.summary import (
    UNKNOWN,
    Achievable,
    Agreement,
    AuditSummary,
    CheckTrust,
    CodeChecker,
    ControlCounts,
    FailureSplit,
    FindingCounts,
    JudgeReplies,
    MeasuredScore,
    TaskOutcomes,
    TaskReview,
    UnavailableAttempt,
)
from rubric_audit.review.labels import (
    DISPUTED,
    PASS_AUDIT_META,
    consensus,
    current_labels,
    disputed_tasks,
    graded_queues,
    review_states,
    reviewers_on_tasks,
)
from rubric_audit.store.audit_store import AuditStore


def _scores(tasks: list[Task], attempts: Sequence[AttemptRow], grades: Sequence[GradeRow],
            graders: list[str]) -> list[VariantScore]:
    """Each grader's scores of the variants it scored; a variant no grader scored (all its
    attempts ungraded or unavailable) is listed under the headline grader, so its counts show."""
    headline = headline_grader(graders)
    return [s for grader in graders or [headline]
            for s in score_variants(tasks, attempts, grades, grader)
            if s.tasks_scored or (grader == headline and not s.graded_attempts)]


def _unavailable(attempts: Sequence[AttemptRow]) -> list[UnavailableAttempt]:
    return [UnavailableAttempt(attempt=a.id, reason=a.unavailable_reason or "")
            for a in attempts if a.state == "unavailable"]


def _measured(attempts: Sequence[AttemptRow], measurements: list[Measurement],
              metrics: list[SourceMetric]) -> list[MeasuredScore]:
    by_id = {a.id: a for a in attempts}
    counts: Counter[tuple[str, str, str, str]] = Counter()
    per_task: dict[tuple[str, str, str, str], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list))
    for m in measurements:
        if (a := by_id.get(m.attempt_id)) is not None:
            counts[(a.model, a.variant, m.scorer, m.key)] += 1
            if m.value is not None:
                per_task[(a.model, a.variant, m.scorer, m.key)][a.task_id].append(m.value)
    own: dict[tuple[str, str, str], dict[str, float | None]] = defaultdict(dict)
    for metric in metrics:
        own[(metric.variant, metric.scorer, metric.key)][metric.metric] = metric.value
    out = []
    for (model, variant, scorer, key), n in sorted(counts.items()):
        tasks = per_task[(model, variant, scorer, key)].values()
        out.append(MeasuredScore(
            model=model, variant=variant, scorer=scorer, key=key, attempts=n,
            mean=mean(mean(v) for v in tasks) if tasks else None,
            source_metrics=own.get((variant, scorer, key), {})))
    return out


class _Findings:
    """What the summary reads of the findings, in one pass over the stored rows (an archive's
    findings are many: none is held whole)."""

    def __init__(self, store: AuditStore) -> None:
        self.rows: list[FindingRow] = []
        self.broken_gold: set[str] = set()  # tasks a workbook recomputation disagrees with
        self.unsound: set[tuple[str | None, object]] = set()  # (task, attempt) of unsound passes
        for check, severity, task_id, raw in store.finding_rows():
            self.rows.append(FindingRow.stored(check, severity, task_id, raw))
            if check == "gold_recompute_mismatch" and task_id:
                self.broken_gold.add(task_id)
            if check in UNSOUND_PASS_CHECKS:
                self.unsound.add((task_id, json.loads(raw).get("evidence", {}).get("attempt")))

    def counts(self, tasks: list[Task]) -> FindingCounts:
        by_check = Counter(f.check for f in self.rows)
        measured, unseen = load_precision(), load_unseen()

        def numbers(prefix: str, m: CheckPrecision | None) -> dict[str, float | int | None]:
            return {} if m is None else {f"{prefix}_precision": m.precision,
                                         f"{prefix}_right": m.correct, f"{prefix}_fired": m.fired,
                                         f"{prefix}_cases": m.cases}

        return FindingCounts(
            by_severity={s: sum(f.severity == s for f in self.rows)
                         for s in ("error", "warning", "info")},
            by_check=dict(sorted(by_check.items())),
            # The fields are named from their prefix: pydantic checks them, as it checks any call.
            precision=[CheckTrust.model_validate({"check": check,
                                                  "findings": by_check.get(check, 0),
                                                  **numbers("corpus", measured.get(check)),
                                                  **numbers("unseen", unseen.get(check))})
                       for check in sorted(set(by_check) | set(measured) | set(unseen))],
            summaries=[summarise(tasks) for summarise in CHECK_SUMMARIES],
        )


def _code_checker(store: AuditStore, graders: list[str]) -> CodeChecker:
    criteria = decided = 0
    reasons: Counter[str] = Counter()
    for verdict, rationale in store.code_verdicts():
        criteria += 1
        decided += verdict in ("pass", "fail")
        if verdict == "not_applicable":
            reasons[re.sub(r"near .*", "near the target", rationale or "")] += 1
    agreement = []
    for grader in graders:
        checked, agree = store.agreement_with_code(grader)
        agreement.append(Agreement(grader=grader, checked=checked, agree=agree,
                                   rate=agree / checked if checked else None,
                                   interval=proportion(agree, checked)))
    return CodeChecker(criteria=criteria, checked=decided, not_applicable=criteria - decided,
                       not_applicable_reasons=dict(sorted(reasons.items())), agreement=agreement)


def _judge_replies(store: AuditStore, control_grades: list[ControlGrade]) -> list[JudgeReplies]:
    """Per LLM judge that rubric-audit ran (`judge:<model>`), its replies and the unscored."""
    replies = {grader: list(counts) for grader, counts in store.judge_replies().items()}
    for g in (c.grade for c in control_grades):
        if g.grader.startswith("judge:"):
            seen = replies.setdefault(g.grader, [0, 0])
            seen[0] += 1
            seen[1] += g.verdict == "unscored"
    return [JudgeReplies(grader=grader, replies=n, unscored=unscored,
                         parse_rate=1 - unscored / n)
            for grader, (n, unscored) in sorted(replies.items())]


def _current(controls: list[Control], grades: list[ControlGrade]
             ) -> dict[tuple[str, str], list[CriterionGrade]]:
    """(control id, grader) -> verdicts, for grades of the task version the control has now."""
    version = {c.id: c.task_version for c in controls}
    out: dict[tuple[str, str], list[CriterionGrade]] = defaultdict(list)
    for g in grades:
        if version.get(g.grade.attempt_id) == g.task_version:
            out[(g.grade.attempt_id, g.grade.grader)].append(g.grade)
    return out


def _control_counts(controls: list[Control], graded: dict[tuple[str, str], list[CriterionGrade]]
                    ) -> list[ControlCounts]:
    kinds = {c.id: c for c in controls}
    gold_fails = {(kinds[cid].task_id, grader) for (cid, grader), grades in graded.items()
                  if kinds[cid].kind == "gold" and control_outcome(grades) == "fail"}
    counts: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for (control_id, grader), grades in graded.items():
        control = kinds[control_id]
        if control.kind.startswith("alternative:") and (control.task_id, grader) in gold_fails:
            outcome = "undetermined"  # a rewording of a failing gold tells nothing new
        elif control.criterion_id:
            own = [g for g in grades if g.criterion_id == control.criterion_id]
            outcome = own[0].verdict if own else "undetermined"
        else:
            outcome = control_outcome(grades)
        state = ("undetermined" if outcome not in ("pass", "fail")
                 else "met" if outcome == control.expect else "broken")
        counts[(grader, control.kind.split(":")[0] if control.kind.startswith("near_miss")
                else control.kind)][state] += 1
    return [ControlCounts(grader=g, kind=k, met=c["met"], broken=c["broken"],
                          undetermined=c["undetermined"]) for (g, k), c in sorted(counts.items())]


def _oracle(controls: list[Control], graded: dict[tuple[str, str], list[CriterionGrade]],
            kinds: tuple[str, ...], broken_when: Expectation,
            doubted: frozenset[str] = frozenset()) -> dict[str, ControlOutcome]:
    """Per task, over every grader: the outcome of its gold (or null and refusal) controls.

    `broken_when` is the outcome that breaks the expectation (gold: fail; null: pass); it wins
    over every other grader's verdict, but for a grader in `doubted` (the code checker where its
    fail decisions are not trusted to decide: `code_fails_decide`), whose break is undetermined.
    """
    by_id = {c.id: c for c in controls if c.kind in kinds}
    outcomes: dict[str, set[ControlOutcome]] = defaultdict(set)
    for (control_id, grader), grades in graded.items():
        if control_id in by_id:
            outcome = control_outcome(grades)
            if grader in doubted and outcome == broken_when:
                outcome = "undetermined"
            outcomes[by_id[control_id].task_id].add(outcome)
    other: Expectation = "fail" if broken_when == "pass" else "pass"
    return {task_id: broken_when if broken_when in seen else other if other in seen
            else "undetermined" for task_id, seen in outcomes.items()}


def _achievable(tasks: list[Task], attempts: Sequence[AttemptRow], grades: Sequence[GradeRow],
                graders: list[str], gold: dict[str, ControlOutcome],
                null: dict[str, ControlOutcome]) -> Achievable:
    excluded = {
        "gold fails": sorted(t for t, o in gold.items() if o == "fail"),
        "null or refusal passes": sorted(t for t, o in null.items() if o == "pass"),
        UNKNOWN: sorted(t.id for t in tasks if t.id not in gold),
    }
    out = {tid for ids in excluded.values() for tid in ids}
    kept = [t for t in tasks if t.id not in out]
    certified = sum(gold.get(t.id) == "pass" and null.get(t.id) == "fail" for t in kept)
    scores = [s for grader in graders for s in score_variants(kept, attempts, grades, grader)
              if s.tasks_scored]
    return Achievable(tasks=len(kept), excluded=excluded, certified=certified, scores=scores)


def _task_outcomes(tasks: list[Task], attempts: Sequence[AttemptRow], grades: Sequence[GradeRow],
                   graders: list[str], achievable: Achievable) -> list[TaskOutcomes]:
    by_id = {t.id: t for t in tasks}
    unachievable, unknown = set(achievable.unachievable()), achievable.unknown()
    states: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    unavailable: Counter[tuple[str, str]] = Counter()
    for a in attempts:
        if a.task_id in by_id:
            states[(a.model, a.variant)][a.task_id].add(a.state)
            unavailable[(a.model, a.variant)] += a.state == "unavailable"
    out = []
    for grader in graders:
        table = per_task(by_id, attempts, grades, grader)
        for key, attempted in sorted(states.items()):
            rows = table.get(key, {})
            outcome = {t: ("pass" if rows[t][1] / rows[t][0] >= 0.5 else "fail") if t in rows
                       else "unavailable" if attempted[t] == {"unavailable"} else "ungraded"
                       for t in sorted(attempted)}
            counts = {o: sum(v == o for v in outcome.values())
                      for o in ("pass", "fail", "ungraded", "unavailable")}
            counts["unachievable"] = len(unachievable & set(outcome))
            counts["unknown"] = len(unknown & set(outcome))
            out.append(TaskOutcomes(model=key[0], variant=key[1], grader=grader, counts=counts,
                                    unavailable_attempts=unavailable[key],
                                    unavailable_rate=counts["unavailable"] / len(outcome)
                                    if outcome else None, tasks=outcome))
    return out


def _failure_split(outcomes: list[TaskOutcomes], states: dict[str, str],
                   unachievable: set[str]) -> FailureSplit:
    """Failed (task, model) outcomes of the headline grader, by the task's review state: its
    label, disputed (reviewers tied) or unreviewed."""
    grader = headline_grader(o.grader for o in outcomes)
    failed = [t for o in outcomes if o.grader == grader for t, v in o.tasks.items()
              if v == "fail"]
    kept = (*FAILURE_LABELS, DISPUTED)
    groups = [states[t] if states.get(t) in kept else "unreviewed" for t in failed]
    return FailureSplit(grader=grader, failures=len(failed),
                        groups={g: proportion(groups.count(g), len(failed))
                                for g in (*kept, "unreviewed")},
                        unreviewed_unachievable=sum(
                            1 for t, g in zip(failed, groups, strict=True)
                            if g == "unreviewed" and t in unachievable))


def _task_reviews(log: list[tuple[int, Review]]) -> dict[str, list[TaskReview]]:
    """Task id -> each reviewer's standing label and notes, reviewers in name order."""
    out: dict[str, list[TaskReview]] = defaultdict(list)
    for task_id, reviewer, review, notes in reviewers_on_tasks(log):
        out[task_id].append(TaskReview(reviewer=reviewer, label=review.label if review else None,
                                       notes=notes))
    return dict(out)


def _alarms(tasks: list[Task], controls: list[Control], grades: list[ControlGrade]) -> list[str]:
    alarms = []
    recorded_gold = {c.task_id for c in controls if c.kind == "gold"}
    no_gold = [t.id for t in tasks if t.gold is None and t.id not in recorded_gold]
    if no_gold:
        alarms.append(f"no gold control could run for {plural(len(no_gold), 'task')} without a gold: "
                      f"their scores are uncertified")
    current = {t.id: t.version() for t in tasks}
    gold_ids = {c.id: c.task_id for c in controls if c.kind == "gold"}
    stale = sorted({gold_ids[g.grade.attempt_id] for g in grades
                    if g.grade.attempt_id in gold_ids
                    and g.task_version != current[gold_ids[g.grade.attempt_id]]})
    if stale:
        alarms.append(f"gold controls of {plural(len(stale), 'task')} were graded on another version of "
                      f"the task than the one scored: re-run them ({', '.join(stale)})")
    return alarms


def build_summary(store: AuditStore, threshold: float = 0.5,
                  skipped: list[Any] | None = None, failures: list[str] | None = None,
                  models: list[str] | None = None) -> AuditSummary:
    """The summary from the store: attempts and grades as their rows' columns give them, and
    the findings in one pass, so an archive's are never held whole."""
    tasks, attempts = store.tasks(), store.attempt_lines()
    grades = store.grade_lines(attempts)
    controls, control_grades = store.controls(), store.control_grades()
    findings, source_metrics = _Findings(store), store.source_metrics()
    graders = scored_graders(store.graders())
    graded = _current(controls, control_grades)
    gold = _oracle(controls, graded, ("gold",), broken_when="fail",
                   doubted=frozenset() if code_fails_decide() else frozenset({CODE_GRADER}))
    # the workbook, with the task's inputs, disagrees: broken oracle
    gold.update({task_id: "fail" for task_id in findings.broken_gold})
    null = _oracle(controls, graded, ("null", "refusal"), broken_when="pass")
    achievable = _achievable(tasks, attempts, grades, graders, gold, null)
    excluded = {t for ids in achievable.excluded.values() for t in ids}
    achievable_ids = {t.id for t in tasks} - excluded
    outcomes = _task_outcomes(tasks, attempts, grades, graders, achievable)
    log = store.reviews()
    current = current_labels(log)
    consensus_labels = {t: consensus(by) for t, by in current.items()}
    states = review_states(current)
    headline = headline_grader(graders)
    evidence = gather(tasks, attempts, grades, findings.unsound, gold, null, headline)
    table = per_task({t.id: t for t in tasks}, attempts, grades, headline)
    controls_met = _control_counts(controls, graded)
    return AuditSummary(
        tool_version=__version__,
        schema_version=store.schema_version,
        benchmark=store.benchmark_name(),
        models_used=models or [],
        skipped=[s.model_dump() for s in skipped or []],
        model_failures=sorted(set(failures or [])),
        tasks=len(tasks),
        task_names={t.id: t.name for t in tasks},
        attempts=len(attempts),
        scores=_scores(tasks, attempts, grades, graders),
        measurements=_measured(attempts, store.measurements(), source_metrics),
        source_metrics=source_metrics,
        achievable=achievable,
        task_outcomes=outcomes,
        failure_split=_failure_split(outcomes, states, set(achievable.unachievable())),
        review_labels=states,
        reviews=_task_reviews(log),
        disputed_tasks=sorted(disputed_tasks(current)),
        ungraded=sum(a.state == "ungraded" for a in attempts),
        unavailable=_unavailable(attempts),
        code_checker=_code_checker(store, graders),
        judge_replies=_judge_replies(store, control_grades),
        controls=controls_met,
        screen=screen(evidence, threshold),
        alarms=_alarms(tasks, controls, control_grades),
        statistics=build_statistics(tasks, attempts, grades, graders, findings.rows, current,
                                    consensus_labels, achievable_ids, store.finding_reviews()),
        findings=findings.counts(tasks),
        correction=build_correction(
            tasks, table, graded_queues({t.id: t for t in tasks}, attempts, grades, headline),
            consensus_labels, store.meta(PASS_AUDIT_META), headline,
            {c.kind: (c.broken, c.met + c.broken) for c in controls_met if c.grader == headline}),
        ranking=build_ranking(table, headline, consensus_labels, achievable_ids,
                              flagged_tasks(findings.rows)),
        items=item_rows(task_items(tasks, attempts, grades, headline)),
        benchmark_version=store.benchmark_version(),
    )
