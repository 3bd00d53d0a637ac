"""The report as sections of blocks (text, bullets, tables, plots), built once from the summary and
rendered as markdown and as HTML, so the two always say the same."""

from __future__ import annotations

from dataclasses import dataclass, field

from rubric_audit.model import Finding
from rubric_audit.report.summary import AuditSummary
from rubric_audit.scores import VariantScore
from rubric_audit.stats import Interval

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass
class Text:
    text: str


@dataclass
class Bullets:
    items: list[str]


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]


@dataclass
class Plot:
    """A chart; `kind` picks the drawing, `series` maps a label to (estimate, low, high)."""

    kind: str
    title: str
    series: dict[str, tuple[float, float, float]] = field(default_factory=dict)


Block = Text | Bullets | Table | Plot


@dataclass
class Section:
    title: str
    blocks: list[Block]


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def interval(i: Interval | None) -> str:
    if i is None or i.estimate is None:
        return "n/a"
    if i.low is None or i.low == i.high:
        return pct(i.estimate)
    return f"{pct(i.estimate)} [{pct(i.low)}, {pct(i.high)}]"


def _scores(scores: list[VariantScore]) -> Table:
    return Table(["model", "variant", "grader", "tasks scored", "graded", "unavailable", "pass@1",
                  "mean criterion score"],
                 [[s.model, s.variant, s.grader, f"{s.tasks_scored}/{s.tasks}",
                   str(s.graded_attempts), str(s.unavailable_attempts), pct(s.pass_at_1),
                   pct(s.mean_criterion_score)] for s in scores])


def _overview(summary: AuditSummary) -> Section:
    blocks: list[Block] = [Text(f"{summary.tasks} tasks, {summary.attempts} attempts. " + (
        f"Models used by this audit: {', '.join(summary.models_used)}." if summary.models_used
        else "Ran offline: no model was called."))]
    if summary.skipped:
        blocks += [Text("Not run:"), Bullets(
            [f"{s['step']} (needs {s.get('needs', 'a model')}): enable with `{s['enable_with']}`"
             for s in summary.skipped])]
    if summary.model_failures:
        blocks += [Text("Model calls that failed (those checks are missing, not failed):"),
                   Bullets(summary.model_failures)]
    if summary.alarms:
        blocks += [Text("Alarms:"), Bullets(summary.alarms)]
    return Section(f"Audit of {summary.benchmark or 'recorded runs'}", blocks)


def _score_sections(summary: AuditSummary) -> list[Section]:
    stats = summary.statistics
    a = summary.achievable
    rows = [[s.option, s.model, s.variant, s.grader, str(s.tasks), interval(s.pass_at_1),
             f"{s.k}: {interval(s.pass_at_k)} / {interval(s.pass_hat_k)}" if s.k else "n/a",
             interval(s.criterion_score)] for s in stats.scores]
    plot = Plot("intervals", "pass@1 with 95% bootstrap interval, by rescoring option",
                {f"{s.variant} ({s.grader}) · {s.option}": (s.pass_at_1.estimate,
                                                            s.pass_at_1.low, s.pass_at_1.high)
                 for s in stats.scores if s.pass_at_1.estimate is not None})
    gaps = [[g.option, g.grader, g.a, g.b, str(g.difference.n), interval(g.difference)]
            for g in stats.gaps]
    return [
        Section("Scores as graded", [_scores(summary.scores), Text(
            "pass@1 is the mean over tasks of the share of graded attempts that pass every "
            "criterion; unavailable attempts are not counted as failures.")]),
        Section("Scores under each rescoring option", [
            Bullets([f"`{k}`: {v}" for k, v in stats.options.items()]),
            Table(["option", "model", "variant", "grader", "tasks", "pass@1 [95% CI]",
                   "k: pass@k / pass^k", "mean criterion score"], rows),
            plot,
            Text(f"Intervals resample tasks ({stats.seed} is the bootstrap seed). "
                 f"{a.tasks} of {summary.tasks} tasks are achievable (the gold does not fail and "
                 f"an empty answer or refusal does not pass); {a.certified} of them certified."),
            Bullets([f"excluded from the achievable tasks, {why}: {len(ids)}"
                     for why, ids in a.excluded.items() if ids])]),
        Section("Outcomes per task and model", [
            Table(["model", "variant", "grader", "pass", "fail", "unavailable",
                   "unavailable rate"],
                  [[o.model, o.variant, o.grader, str(o.counts["pass"]), str(o.counts["fail"]),
                    str(o.counts["unavailable"]), pct(o.unavailable_rate)]
                   for o in summary.task_outcomes]),
            Text("A task is unavailable for a model when its gold fails, an empty answer or "
                 "refusal passes it, or the model has no graded attempt on it.")]),
        Section("Gaps between models (paired over the same tasks)", [
            Table(["option", "grader", "a", "b", "tasks", "a - b in pass@1 [95% CI]"], gaps)
            if gaps else Text("Only one model and variant: no gap to compare.")]),
    ]


def _review_section(summary: AuditSummary) -> Section:
    r = summary.statistics.review
    not_reviewed = (r.failures_queue - r.failures_reviewed) + (r.passes_queue - r.passes_reviewed)
    blocks: list[Block] = [Text(
        f"Failures queue (tasks every model failed on every graded attempt): {r.failures_queue}, "
        f"reviewed {r.failures_reviewed}. Pass audit (tasks every model passed): "
        f"{r.passes_queue}, reviewed {r.passes_reviewed}. Not reviewed yet: {not_reviewed} "
        f"task(s)" + (f"; {r.disputed} disputed between reviewers." if r.disputed else "."))]
    if r.failures_reviewed:
        blocks.append(Table(["failure group", "tasks"],
                            [[g, str(n)] for g, n in r.failure_groups.items()]))
    blocks.append(Bullets([
        f"unearned credit in the pass audit: {interval(r.unearned_rate)} (Wilson, "
        f"{r.unearned_rate.n} reviewed)",
        f"grader errors among reviewed failures: {interval(r.grader_error_rate)} (Wilson, "
        f"{r.grader_error_rate.n} reviewed)"]))
    return Section("Review results", blocks)


def _precision_section(summary: AuditSummary) -> Section:
    """Each check's precision as reviewers measured it in the review app (one row per check
    with findings, so other measures of the same check can sit beside it)."""
    rows = summary.statistics.finding_precision
    reviewed = sum(r.reviewed for r in rows)
    return Section("Precision of each check", [
        Text("Reviewers judge findings in the review app (`c` confirmed, `x` false alarm). A "
             "check's precision from reviews is confirmed / (confirmed + false alarms) over its "
             "findings whose reviewers agree, with a 95% Wilson interval. "
             + (f"{reviewed} finding(s) reviewed so far." if reviewed
                else "No finding has been reviewed yet.")),
        Table(["check", "findings", "reviewed", "confirmed", "false alarms", "disputed",
               "precision from reviews [95% CI]"],
              [[f"`{r.check}`", str(r.findings), str(r.reviewed), str(r.confirmed),
                str(r.false_alarms), str(r.disputed), interval(r.precision)] for r in rows])])


def _checks_sections(summary: AuditSummary) -> list[Section]:
    code = summary.code_checker
    sections = [Section("Numeric criteria checked in code", [
        Text(f"{code.checked} of {code.criteria} (attempt, criterion) pairs decided by the code "
             f"checker; {code.not_applicable} not applicable."),
        Bullets([f"not applicable, {reason}: {n}" for reason, n in
                 code.not_applicable_reasons.items()] +
                [f"agreement with `{g.grader}`: {g.agree}/{g.checked}, {interval(g.interval)} "
                 f"(Wilson)" for g in code.agreement])])]
    if summary.controls:
        sections.append(Section("Controls", [Table(
            ["grader", "control", "expectation met", "broken", "undecided"],
            [[c.grader, c.kind, str(c.met), str(c.broken), str(c.undetermined)]
             for c in summary.controls])]))
    s = summary.screen
    sections.append(Section("Validity screen of tasks no model solved", [
        Text(f"{s.screened} tasks have no sound pass by any model (threshold for infra-limited: "
             f"{s.threshold:.0%} unavailable attempts)."),
        Table(["requirement, applied in order", "tasks left"],
              [[step.requirement, str(step.tasks)] for step in s.steps]),
        Table(["category", "tasks"], [[c, str(n)] for c, n in s.partition.items()]),
        Plot("bars", "Validity partition", {c: (float(n), float(n), float(n))
                                            for c, n in s.partition.items()}),
        Table(["threshold", *s.partition], [[t, *(str(counts[c]) for c in s.partition)]
                                            for t, counts in s.sensitivity.items()])]))
    effort = [e for e in summary.statistics.effort if e.fewest_output_tokens is not None]
    if effort:
        sections.append(Section("Effort: fewest output tokens among passing attempts", [Table(
            ["task", "pass rate", "fewest output tokens"],
            [[e.name, pct(e.pass_rate), f"{e.fewest_output_tokens:,}"]
             for e in sorted(effort, key=lambda e: e.fewest_output_tokens or 0)])]))
    return sections


def _findings_section(summary: AuditSummary, findings: list[Finding]) -> Section:
    counts = summary.findings.by_severity
    shown = sorted((f for f in findings if f.severity != "info"),
                   key=lambda f: (SEVERITY_ORDER[f.severity], f.task_id or "", f.check))
    blocks: list[Block] = [Text(f"{counts['error']} errors, {counts['warning']} warnings, "
                                f"{counts['info']} info (info findings are in findings.jsonl).")]
    if shown:
        blocks.append(Table(["severity", "task", "review", "criterion", "check", "problem"],
                            [[f.severity, summary.task_names.get(f.task_id or "", f.task_id or ""),
                              summary.review_labels.get(f.task_id or "", "not reviewed"),
                              f.criterion_id or "", f"`{f.check}`", f.message] for f in shown]))
    return Section("Flagged tasks and findings", blocks)


def build_document(summary: AuditSummary, findings: list[Finding]) -> list[Section]:
    unavailable = [Section("Unavailable attempts", [Bullets(
        [f"`{u.attempt}`: {u.reason}" for u in summary.unavailable])])] \
        if summary.unavailable else []
    return [_overview(summary), *_score_sections(summary), *unavailable, _review_section(summary),
            _precision_section(summary), *_checks_sections(summary),
            _findings_section(summary, findings)]
