"""The report as sections of blocks (text, bullets, tables, plots), built once from the summary and
rendered as markdown and as HTML, so the two always say the same."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from rubric_audit.checks.items import ITEM_CHECK_NAMES
from rubric_audit.checks.precision import CODE_CHECKER, TRUSTED
from rubric_audit.checks.screen import Category
from rubric_audit.core.model import SEVERITY_ORDER, Finding, Task, label_name
from rubric_audit.core.scores import VariantScore
from rubric_audit.core.text import one_line, stranger
from rubric_audit.core.words import pct, plural
from rubric_audit.report.actions import strongest, tasks_to_fix
from rubric_audit.report.correction import MIN_PASS_REVIEWS, Correction
from rubric_audit.report.describe import criterion_title, measured, readable
from rubric_audit.report.statistics import ScoreRow
from rubric_audit.report.stats import Interval
from rubric_audit.report.summary import UNKNOWN, AuditSummary, CheckTrust
from rubric_audit.review.agreement import describe


@dataclass
class Text:
    text: str


@dataclass
class Bullets:
    items: list[str]


@dataclass
class Cell:
    """A table cell with more than its text: a link to a page of the site (our own path,
    relative to the page the table is on) and a key to sort by where the text sorts wrongly
    ("error" before "warning")."""

    text: str
    href: str | None = None
    sort: str | None = None


@dataclass
class Table:
    """Rows of cells; a table with a `name` sorts by any column and filters by words in
    report.html and the site (markdown has no script: it shows the rows as they are)."""

    header: list[str]
    rows: Sequence[Sequence[str | Cell]]
    name: str = ""


@dataclass
class Preformatted:
    """A stranger's long text (a prompt, an answer, a tool result) shown with its line breaks."""

    text: str


@dataclass
class Folded:
    """Blocks shown under a one-line summary, unfolded on demand (a trajectory's step)."""

    summary: str
    blocks: list[Block]


@dataclass
class Plot:
    """A chart; `kind` picks the drawing, `series` maps a label to (estimate, low, high);
    `groups` maps a label to the group it is drawn in (colour and legend)."""

    kind: str
    title: str
    series: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)
    xlabel: str = "pass@1"
    legend: bool = True


def plotted(i: Interval) -> tuple[float, float, float]:
    """An interval as a plot's (estimate, low, high): a missing bound is the estimate, a missing
    estimate nothing (0, 0, 0); only the estimate's absence, never a bound of 0, reads as missing."""
    estimate = 0.0 if i.estimate is None else i.estimate
    return (estimate, estimate if i.low is None else i.low,
            estimate if i.high is None else i.high)


@dataclass
class Row:
    """Plots side by side (HTML); markdown states their numbers in the text beside them."""

    plots: list[Plot]


Block = Text | Bullets | Table | Plot | Row | Preformatted | Folded


@dataclass
class Section:
    """A titled part of a page; an `anchor` lets a link point at it (`#tasks`)."""

    title: str
    blocks: list[Block]
    anchor: str = ""


def interval(i: Interval | None) -> str:
    if i is None or i.estimate is None:
        return "n/a"
    if i.low is None or i.low == i.high:
        return pct(i.estimate)
    return f"{pct(i.estimate)} [{pct(i.low)}, {pct(i.high)}]"


FROM_CHECKS = "from the checks"  # a score's group: tasks left out by the checks, not by review



def task_page(task_id: str, name: str) -> str:
    """The site's page of a task, relative to the report's folder: its name made a safe file
    name (letters, digits, - and _) and a hash of its id, so two names cannot share a page and
    no name can make a path."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:40] or "task"
    return f"site/tasks/{slug}-{hashlib.sha256(task_id.encode()).hexdigest()[:12]}.html"


def task_cell(task_id: str, names: dict[str, str]) -> Cell:
    """A task's name, linked to its page."""
    name = names.get(task_id, task_id)
    return Cell(stranger(name), href=task_page(task_id, name))


def _scores(scores: list[VariantScore]) -> Table:
    return Table(["model", "variant", "grader", "tasks scored", "graded", "ungraded",
                  "unavailable", "pass@1", "mean criterion score"],
                 [[stranger(s.model), stranger(s.variant), stranger(s.grader or "none"),
                   f"{s.tasks_scored}/{s.tasks}",
                   str(s.graded_attempts), str(s.ungraded_attempts), str(s.unavailable_attempts),
                   pct(s.pass_at_1), pct(s.mean_criterion_score)] for s in scores])


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"


def _measurement_sections(summary: AuditSummary) -> list[Section]:
    """Recorded values that are no verdicts, per variant with the source's own metrics, and
    every metric a source reported beside the number read from its samples."""
    sections = []
    if summary.measurements:
        sections.append(Section("Measurements (recorded values that are no verdicts)", [
            Text("Score values other than verdicts (pass/fail, C/I/P/N, 0 or 1), such as win "
                 "rates, counts or ratings, are kept as the runs recorded them, with the "
                 "source's own metrics; they are no criteria and count in no pass@1."),
            Table(["model", "variant", "scorer", "key", "attempts", "mean as read",
                   "the source's metrics"],
                  [[stranger(m.model), stranger(m.variant), stranger(m.scorer),
                    stranger(m.key or "-"), str(m.attempts), _number(m.mean),
                    ", ".join(f"{stranger(name)} {_number(v)}"
                              for name, v in m.source_metrics.items())
                    or "none"] for m in summary.measurements])]))
    if summary.source_metrics:
        metrics = summary.source_metrics
        differ = sum(bool(m.difference) and m.computed is not None for m in metrics)
        recomputed = sum(m.computed is not None for m in metrics)
        sections.append(Section("The sources' own metrics against what was read", [
            Text(f"{recomputed} of {len(metrics)} metrics recomputed from the samples as read "
                 f"(accuracy and mean; per sample over epochs first); {differ} differ."),
            Table(["variant", "scorer", "key", "metric", "the source says", "read", "samples",
                   "difference"],
                  [[stranger(m.variant), stranger(m.scorer), stranger(m.key or "-"),
                    stranger(m.metric), _number(m.value), _number(m.computed), str(m.samples),
                    m.difference or "none"]
                   for m in metrics])]))
    return sections


def _headline_scores(summary: AuditSummary) -> list[tuple[str, str, ScoreRow]]:
    """(model label, option name, row) for as graded, achievable and after review, for the
    headline grader (the recorded verdicts if any)."""
    grader = summary.failure_split.grader
    named = {"as_graded": "as graded", "achievable": "achievable tasks",
             "without_defective": "after review"}
    order = list(named)
    rows = [s for s in summary.statistics.scores
            if s.grader == grader and s.option in named and s.pass_at_1.estimate is not None]
    return [(s.variant, named[s.option], s)
            for s in sorted(rows, key=lambda s: (s.variant, order.index(s.option)))]


def _headline(summary: AuditSummary) -> Section:
    """One paragraph and one chart: pass@1 as graded, on achievable tasks and after review,
    and where the failures went, the way the published audits state it."""
    rows = _headline_scores(summary)
    r, split, a = summary.statistics.review, summary.failure_split, summary.achievable
    corrected = [c for c in summary.correction.scores if c.corrected.estimate is not None]
    reviewed, queued = r.failures_reviewed + r.passes_reviewed, r.failures_queue + r.passes_queue
    sentences, review_sentences = [], []
    for variant in dict.fromkeys(v for v, _, _ in rows):
        by = {name: s for v, name, s in rows if v == variant}
        wording = {"as graded": ("of {} as graded", "task"),
                   "achievable tasks": ("of the {}", "achievable task"),
                   "after review": ("after review ({}, without those reviewers labelled "
                                    "defective)", "task")}
        parts = [f"{interval(s.pass_at_1)} "
                 f"{wording[n][0].format(plural(s.tasks, wording[n][1]))}"
                 for n, s in by.items()]
        parts += [f"{interval(c.corrected)} *corrected* for the judge's measured error"
                  for c in corrected if c.variant == variant]
        sentences.append(f"**{stranger(variant)}** passes " + ", ".join(parts) + ".")
    if split.failures:
        went = ", ".join(f"{label_name(g)} {interval(i)}" for g, i in split.groups.items())
        review_sentences.append(
            f"Of the {split.failures} failed task outcomes (task × model, as graded by "
            f"{stranger(split.grader)}), the share per review label: {went} (95% Wilson "
            f"intervals)"
            + (f"; {split.unreviewed_unachievable} of the unreviewed failures are on "
               f"unachievable tasks." if split.unreviewed_unachievable else "."))
    disputed = ", ".join(stranger(summary.task_names.get(t, t)) for t in summary.disputed_tasks)
    review_sentences.append(f"Reviewers have labelled {reviewed} of the {queued} queued tasks"
                     + (f" ({r.disputed} of them disputed: no majority label)" if r.disputed
                        else "")
                     + (f"; disputed between reviewers: {disputed}." if disputed else "."))
    if summary.correction.refused:
        review_sentences.append(
            "Not yet *corrected* for the judge's measured error: that needs every failure and "
            f"{MIN_PASS_REVIEWS} sampled passes per domain reviewed (the section *Scores "
            "corrected for the judge's measured error* says what is missing).")
    colours = {"as graded": "as graded", "achievable tasks": FROM_CHECKS,
               "after review": "after review"}
    scores = Plot("intervals", "pass@1 with 95% bootstrap intervals"
                  + ("; corrected: normal intervals" if corrected else ""),
                  {f"{v} · {name}": plotted(s.pass_at_1) for v, name, s in rows}
                  | {f"{c.variant} · corrected": plotted(c.corrected) for c in corrected},
                  {f"{v} · {name}": colours[name] for v, name, _ in rows}
                  | {f"{c.variant} · corrected": "after review" for c in corrected})
    failures = Plot("intervals", f"where the {split.failures} failures went (share, 95% Wilson)",
                    {label_name(g): plotted(i) for g, i in split.groups.items() if i.n},
                    {label_name(g): "unreviewed" if g == "unreviewed" else "after review"
                     for g in split.groups}, xlabel="share of failed task outcomes",
                    legend=False)
    unachievable, unknown = len(a.unachievable()), len(a.unknown())
    terms = Bullets([
        f"*achievable*: a task whose gold answer does not fail its rubric and whose empty answer "
        f"or refusal does not pass ({a.tasks} of {summary.tasks}). Of the others, "
        f"{unachievable} {'is' if unachievable == 1 else 'are'} *unachievable* (the gold fails, "
        f"or an empty answer or a refusal passes) and {unknown} *unknown* (no gold to try, so "
        f"nothing shows whether they can be passed).",
        f"*certified*: an achievable task whose gold is shown to pass and whose empty answer is "
        f"shown to fail ({a.certified} of {a.tasks}).",
        f"*{FROM_CHECKS}*: a score that leaves tasks out by what the checks found (the "
        f"achievable tasks, the tasks no error flags), before any reviewer looked.",
        "*ungraded*: an attempt that ran to its end but that no grader has graded yet "
        "(`rubric-audit grade` grades it); never counted as a fail. A task is ungraded for a "
        "model when none of its attempts was graded and not all of them are unavailable.",
        "*unavailable*: an attempt that failed outside the model (the harness, a provider that "
        "stayed down, the grader's infrastructure); never counted as a fail. A task is "
        "unavailable for a model when every attempt of it is.",
        "*pass@1*: the mean over tasks of the share of graded attempts that pass every "
        "criterion (ungraded and unavailable attempts are in no denominator); intervals "
        "resample tasks.",
        "*corrected*: pass@1 on every scored task, as graded, with the judge's errors that "
        "reviews found taken out (a grader error among the failures counts as passes, an "
        "unearned pass among the sampled passes as a fail, each domain's sample standing for its "
        "unreviewed passes; a task labelled defective stays as graded: the rescoring options "
        "set those aside), with a 95% interval that carries the doubt of sampling both tasks "
        "and reviews; the section *Scores corrected for the judge's measured error* gives the "
        "strata and assumptions."])
    return Section("Scores at a glance", [Text(" ".join(sentences)),
                                          Text(" ".join(review_sentences)),
                                          Row([scores, failures]), terms], anchor="scores")


def _title(summary: AuditSummary) -> Section:
    """The page's title and what was audited, in one line."""
    models = len({s.model for s in summary.scores})
    return Section(
        f"Audit of {stranger(summary.benchmark) if summary.benchmark else 'recorded runs'}",
        [Text(f"{plural(summary.tasks, 'task')}, {plural(summary.attempts, 'attempt')} by "
              f"{plural(models, 'model')}" + (
                  f", {summary.ungraded} of them ungraded: no grader has graded them yet, so "
                  f"they are in no score" if summary.ungraded else "") + ". " + (
                  f"Models used by this audit: {', '.join(map(stranger, summary.models_used))}."
                  if summary.models_used else "Ran offline: no model was called.") + (
                  f" Benchmark version {summary.benchmark_version.describe()}: every score here "
                  f"is of this version." if summary.benchmark_version is not None else ""))])


def _named(ids: list[str], names: dict[str, str], limit: int = 12) -> str:
    """Task names, the first `limit` of them, then how many more."""
    shown = ", ".join(stranger(names.get(t, t)) for t in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _next_actions(summary: AuditSummary, findings: list[Finding], tasks: dict[str, Task]
                  ) -> Section:
    """The maintainer's first question, what to fix: the tasks to fix, strongest evidence first,
    then what is left to review, disputes to settle and the steps not run, with how to run
    them."""
    names = summary.task_names
    ranked = tasks_to_fix(findings, tasks, names)
    blocks: list[Block] = [Text(
        f"Tasks to fix, {plural(len(ranked), 'task')}, strongest evidence first: by the severity "
        f"of the task's strongest finding, then by how often the check behind it was right on "
        f"unseen cases (a check under {TRUSTED:.0%} speaks only as info), then by how many checks "
        f"agree. Each task's page (its name) holds every finding with its evidence."
        if ranked else "No finding asks for a fix.")]
    if ranked:
        blocks.append(Table(
            ["#", "task", "severity", "problem", "fix", "check: how often right", "findings"],
            [[str(rank), task_cell(t.task_id, names),
              Cell(t.finding.severity, sort=str(SEVERITY_ORDER[t.finding.severity])),
              stranger(one_line(readable(t.finding.message, tasks.get(t.task_id)), 160)),
              stranger(t.fix), f"`{t.finding.check}`: {measured(t.finding)}",
              f"{t.findings} ({plural(t.checks, 'check')})"]
             for rank, t in enumerate(ranked, 1)], name="next-actions"))
    r = summary.statistics.review
    todo = [
        f"Failures left to review: {len(r.failures_waiting)} of the {r.failures_queue} tasks "
        f"every model failed" + (f" ({_named(r.failures_waiting, names)})"
                                 if r.failures_waiting else "")
        + "; pass audit: " + f"{len(r.passes_waiting)} of the {r.passes_queue} tasks every "
        f"model passed. Review them with `rubric-audit review OUT` (OUT: this report's folder), "
        f"then `rubric-audit report OUT`."]
    todo.append("Disputes to settle: " + ("; ".join(
        f"{stranger(names.get(t, t))} (" + ", ".join(
            f"{stranger(review.reviewer)}: {label_name(review.label)}"
            for review in summary.reviews.get(t, []) if review.label) + ")"
        for t in summary.disputed_tasks) or "none") + ".")
    if summary.ungraded:
        todo.append(f"{plural(summary.ungraded, 'attempt')} not graded yet: "
                    f"`rubric-audit grade RUNS --judge MODEL`, then audit again.")
    todo += [f"Not run: {s['step']} (needs {s.get('needs', 'a model')}); run it with "
             f"`{s['enable_with']}`." for s in summary.skipped]
    todo += [f"A model call failed, so its check is missing (not failed): {stranger(f)}"
             for f in summary.model_failures]
    todo += [f"Alarm: {stranger(a)}" for a in summary.alarms]
    return Section("Next actions", [*blocks, Bullets(todo)], anchor="next-actions")


OPTION_NAMES = {"as_graded": "as graded", "without_defective": "without defective",
                "without_defective_or_ambiguous": "without defective or ambiguous",
                "ambiguous_as_pass": "ambiguous as pass",
                "grader_error_as_pass": "grader errors as passes",
                "unearned_as_fail": "unearned as fails", "achievable": "achievable",
                "without_flagged": "without flagged"}
REVIEW_OPTIONS = {"without_defective", "without_defective_or_ambiguous", "ambiguous_as_pass",
                  "grader_error_as_pass", "unearned_as_fail"}


def _merged(rows: list[tuple[str, list[str], list[str]]]) -> list[tuple[list[str], list[str],
                                                                       list[str]]]:
    """Rows (option, key, cells) -> (options, key, cells): the options of one key that give
    the same cells become one row (with no reviews yet, the review options equal as graded)."""
    grouped: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for option, key, cells in rows:
        grouped.setdefault((tuple(key), tuple(cells)), []).append(option)
    ordered = sorted(grouped.items(), key=lambda item: item[0][0])
    return [(options, list(key), list(cells)) for (key, cells), options in ordered]


def _option_label(options: list[str]) -> str:
    return " = ".join(f"`{o}`" for o in options)


def _score_sections(summary: AuditSummary) -> list[Section]:
    stats = summary.statistics
    a = summary.achievable
    merged = _merged([(s.option, [s.model, s.variant, s.grader],
                       [str(s.tasks), interval(s.pass_at_1),
                        f"{s.k}: {interval(s.pass_at_k)} / {interval(s.pass_hat_k)}" if s.k
                        else "n/a", interval(s.criterion_score)]) for s in stats.scores])
    estimates: dict[tuple[str, ...], Interval] = {(s.option, s.model, s.variant, s.grader): s.pass_at_1
                                                  for s in stats.scores}
    series: dict[str, tuple[float, float, float]] = {}
    groups: dict[str, str] = {}
    for options, key, _ in merged:
        i = estimates[(options[0], *key)]
        if i.estimate is None:
            continue
        label = f"{key[1]} · {OPTION_NAMES.get(options[0], options[0])}" + (
            f" (+{len(options) - 1} same)" if len(options) > 1 else "")
        series[label] = plotted(i)
        groups[label] = ("as graded" if "as_graded" in options else
                         "after review" if REVIEW_OPTIONS & set(options) else FROM_CHECKS)
    gaps = _merged([(g.option, [g.grader, g.a, g.b], [str(g.difference.n),
                                                      interval(g.difference)])
                    for g in stats.gaps])
    return [
        Section("Scores as graded", [_scores(summary.scores)]),
        Section("Scores under each rescoring option", [
            Bullets([f"`{k}`: {v}" for k, v in stats.options.items()]),
            Text("Options that give the same numbers for a model share a row."),
            Table(["options", "model", "variant", "grader", "tasks", "pass@1 [95% CI]",
                   "k: pass@k / pass^k", "mean criterion score"],
                  [[_option_label(o), *map(stranger, k), *c] for o, k, c in merged]),
            Plot("intervals", "pass@1 with 95% bootstrap interval, by rescoring option "
                 f"(grey: as graded; blue: {FROM_CHECKS}, tasks left out by what the checks "
                 "found; green: after review)", series, groups),
            Text(f"{stats.seed} is the bootstrap seed."),
            Bullets([f"left out of the achievable tasks, {why}"
                     f"{' (achievability unknown)' if why == UNKNOWN else ' (unachievable)'}: "
                     f"{len(ids)}" for why, ids in a.excluded.items() if ids])]),
        Section("Outcomes per task and model", [
            Text("A task's outcome for a model: *pass* when at least half of its graded attempts "
                 "pass every criterion, *fail* otherwise; *ungraded* when none of its attempts "
                 "is graded yet, *unavailable* when every one failed outside the model. The "
                 "counts are tasks; the scores above count attempts, so an unavailable attempt "
                 "beside a graded one of the same task is an unavailable attempt here too but "
                 "leaves its task an outcome."),
            Table(["model", "variant", "grader", "tasks passed", "failed", "ungraded",
                   "unavailable", "unavailable rate (tasks)", "unavailable attempts",
                   "unachievable", "achievability unknown"],
                  [[stranger(o.model), stranger(o.variant), stranger(o.grader),
                    str(o.counts["pass"]), str(o.counts["fail"]),
                    str(o.counts["ungraded"]), str(o.counts["unavailable"]),
                    pct(o.unavailable_rate), str(o.unavailable_attempts),
                    str(o.counts["unachievable"]), str(o.counts["unknown"])]
                   for o in summary.task_outcomes])]),
        Section("Gaps between models (paired over the same tasks)", [
            Table(["options", "grader", "a", "b", "tasks", "a - b in pass@1 [95% CI]"],
                  [[_option_label(o), *map(stranger, k), *c] for o, k, c in gaps])
            if gaps else Text("Only one model and variant: no gap to compare.")]),
    ]


def _review_section(summary: AuditSummary) -> Section:
    r = summary.statistics.review
    not_reviewed = (r.failures_queue - r.failures_reviewed) + (r.passes_queue - r.passes_reviewed)
    blocks: list[Block] = [Text(
        f"Failures queue (tasks every model failed on every graded attempt): {r.failures_queue}, "
        f"reviewed {r.failures_reviewed}. Pass audit (tasks every model passed): "
        f"{r.passes_queue}, reviewed {r.passes_reviewed}. Not reviewed yet: "
        f"{plural(not_reviewed, 'task')}"
        + (f". Of the reviewed, {r.disputed} disputed (reviewers tied: no majority label)."
           if r.disputed else "."))]
    if r.failures_reviewed:
        blocks.append(Table(["failure group", "tasks"],
                            [[label_name(g), str(n)] for g, n in r.failure_groups.items()]))
    blocks.append(Bullets([
        f"{label_name('unearned')} rate in the pass audit: {interval(r.unearned_rate)} (Wilson, "
        f"{r.unearned_rate.n} reviewed)",
        f"grader errors among reviewed failures: {interval(r.grader_error_rate)} (Wilson, "
        f"{r.grader_error_rate.n} reviewed)"]))
    several = [a for a in r.agreement if len(a.reviewers) > 1]
    if several:
        blocks += [Text("Agreement between reviewers (Cohen's kappa per pair, Fleiss' over the "
                        "tasks all of them labelled; tasks behind each in parentheses):"),
                   Bullets([stranger(describe(a)) + (": " + "; ".join(
                       f"{stranger(d.task)} ("
                       + ", ".join(f"{stranger(who)} {label_name(label)}"
                                   for who, label in d.labels.items())
                       + ")" for d in a.disagreements) if a.disagreements else "")
                       for a in several])]
    return Section("Review results", blocks)


def _measured(trust: CheckTrust | None, kind: Literal["unseen", "corpus"]) -> str:
    """A check's precision on one kind of labelled cases, with its counts."""
    if trust is None or (precision := getattr(trust, f"{kind}_precision")) is None:
        return "not measured"
    return (f"{precision:.1%} ({getattr(trust, f'{kind}_right')}/"
            f"{getattr(trust, f'{kind}_fired')} on {getattr(trust, f'{kind}_cases')} cases)")


def _precision_section(summary: AuditSummary) -> Section:
    """How far each check can be trusted, one row per check: its findings here, its precision
    on unseen held-out cases and on the corpus it was tuned on (`bench/check_precision.py`), and
    as reviewers measured it in the review app (`c` confirmed, `x` false alarm)."""
    corpus = {t.check: t for t in summary.findings.precision}
    reviewed = {r.check: r for r in summary.statistics.finding_precision}
    rows = []
    for check in sorted(corpus.keys() | reviewed.keys()):
        t, r = corpus.get(check), reviewed.get(check)
        findings = "-" if check == CODE_CHECKER else str(t.findings if t else r.findings if r
                                                         else 0)
        rows.append([f"`{check}`", findings,
                     _measured(t, "unseen"), _measured(t, "corpus"),
                     *([str(r.reviewed), f"{r.confirmed} / {r.false_alarms} / {r.disputed}",
                        interval(r.precision)] if r else ["0", "-", "n/a"])])
    judged = sum(r.reviewed for r in reviewed.values())
    return Section("Precision of each check", [
        Text("How far each check can be trusted: its findings in this audit; its precision on "
             "unseen cases, measured once on held-out sets written without reading the rules "
             "(the estimate for a new benchmark, and the one a check is trusted by: under "
             f"{TRUSTED:.0%} its findings are only info); its precision on the corpus its rules "
             "were tuned on, an upper bound (`python bench/check_precision.py`; for the code "
             "checker, agreement with expert labels where it decides); and its precision from "
             "reviews: "
             "confirmed / (confirmed + false alarms) over its findings whose reviewers agree "
             "(`c` and `x` in the review app), with a 95% Wilson interval. "
             + (f"{plural(judged, 'finding')} reviewed so far." if judged
                else "No finding has been reviewed yet.")),
        Table(["check", "findings", "precision on unseen cases", "on the tuning corpus",
               "reviewed",
               "confirmed / false alarms / disputed", "precision from reviews [95% CI]"],
              rows)])


def _threshold_rows(sensitivity: dict[str, dict[Category, int]], categories: list[Category]
                    ) -> list[list[str]]:
    """One row per run of consecutive thresholds with the same partition ("0.3 to 0.7")."""
    runs: list[tuple[list[str], list[str]]] = []
    for threshold, counts in sensitivity.items():
        cells = [str(counts[c]) for c in categories]
        if runs and runs[-1][1] == cells:
            runs[-1][0].append(threshold)
        else:
            runs.append(([threshold], cells))
    return [[t[0] if len(t) == 1 else f"{t[0]} to {t[-1]}", *cells] for t, cells in runs]


def _achievability(task_id: str, summary: AuditSummary) -> str:
    unachievable = summary.achievable.unachievable()
    if task_id in unachievable:
        return f"unachievable ({unachievable[task_id]})"
    return "unknown (no gold)" if task_id in summary.achievable.unknown() else "achievable"


def _reviewed(task_id: str, summary: AuditSummary) -> tuple[str, str]:
    """The task's review state (the reviewers' majority label, or disputed where they are tied)
    and every reviewer's notes on it, each after the reviewer's name."""
    label = label_name(summary.review_labels.get(task_id, "not reviewed"))
    notes = "; ".join(f"{stranger(r.reviewer)}: " + " / ".join(stranger(one_line(n, 200))
                                                               for n in r.notes)
                      for r in summary.reviews.get(task_id, []) if r.notes)
    return label, notes


def _tasks_section(summary: AuditSummary, findings: list[Finding], tasks: dict[str, Task]
                   ) -> Section:
    """Per task: each model's outcome, its strongest finding (of any severity), the review
    label and the reviewers' notes."""
    grader = summary.failure_split.grader
    outcomes = [o for o in summary.task_outcomes if o.grader == grader]
    by_task: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.task_id:
            by_task.setdefault(finding.task_id, []).append(finding)
    rows: list[list[str | Cell]] = []
    for task_id in sorted(summary.task_names, key=lambda t: summary.task_names[t]):
        found = by_task.get(task_id, [])
        f = strongest(found)
        rows.append([
            task_cell(task_id, summary.task_names),
            ", ".join(f"{stranger(o.variant)} {o.tasks.get(task_id, '-')}" for o in outcomes),
            _achievability(task_id, summary),
            Cell(f"{f.severity}: `{f.check}`, "
                 f"{stranger(one_line(readable(f.message, tasks.get(task_id)), 140))}",
                 sort=f"{SEVERITY_ORDER[f.severity]} {f.check}") if f else Cell("none", sort="9"),
            str(len(found)), *_reviewed(task_id, summary)])
    disputed = ", ".join(stranger(summary.task_names.get(t, t)) for t in summary.disputed_tasks)
    return Section("Tasks", [
        Text(f"Each task's outcome per model as graded by {stranger(grader)}, its strongest "
             "finding of any severity (info included: a check measured under "
             f"{TRUSTED:.0%} still points somewhere), how many findings it has, its review "
             "label (the reviewers' majority) and the reviewers' notes. "
             + (f"Disputed between reviewers: {disputed}." if disputed
                else "No task is disputed between reviewers.")),
        Table(["task", "outcome", "achievable", "strongest finding", "findings", "review",
               "notes"], rows, name="tasks")], anchor="tasks")


def _checks_sections(summary: AuditSummary) -> list[Section]:
    code = summary.code_checker
    sections = [Section("Numeric criteria checked in code", [
        Text(f"{code.checked} of {code.criteria} (attempt, criterion) pairs decided by the code "
             f"checker; {code.not_applicable} not applicable."),
        Bullets([f"not applicable, {reason}: {n}" for reason, n in
                 code.not_applicable_reasons.items()] +
                [f"agreement with {stranger(g.grader)}: {g.agree}/{g.checked}, {interval(g.interval)} "
                 f"(Wilson)" for g in code.agreement])])]
    if summary.judge_replies:
        sections.append(Section("LLM judges' replies", [
            Text("Replies that parsed into a verdict; the rest are unscored (unparseable after "
                 "re-asks, or cut at the output cap) and decide nothing."),
            Table(["grader", "replies", "unscored", "parsed"],
                  [[j.grader, str(j.replies), str(j.unscored), pct(j.parse_rate)]
                   for j in summary.judge_replies])]))
    if summary.controls:
        sections.append(Section("Controls", [Table(
            ["grader", "control", "expectation met", "broken", "undecided"],
            [[stranger(c.grader), c.kind, str(c.met), str(c.broken), str(c.undetermined)]
             for c in summary.controls])]))
    s = summary.screen
    sections.append(Section("Validity screen of tasks no model solved", [
        Text(f"{s.screened} tasks have no sound pass by any model. A task more than "
             f"{s.threshold:.0%} of whose attempts have no verdict is ungraded when more of "
             f"those were never graded (a judge can grade them) and infra-limited when more "
             f"failed outside the model (unavailable)."),
        Table(["requirement, applied in order", "tasks left"],
              [[step.requirement, str(step.tasks)] for step in s.steps]),
        Table(["category", "tasks"], [[c, str(n)] for c, n in s.partition.items()]),
        Plot("bars", "Validity partition", {c: (float(n), float(n), float(n))
                                            for c, n in s.partition.items()}),
        Text("The partition at other thresholds for attempts without a verdict (thresholds "
             "that give the same partition share a row):"),
        Table(["thresholds", *s.partition], _threshold_rows(s.sensitivity, list(s.partition)))]))
    effort = [e for e in summary.statistics.effort if e.fewest_output_tokens is not None]
    if effort:
        sections.append(Section("Effort: fewest output tokens among passing attempts", [Table(
            ["task", "pass rate", "fewest output tokens"],
            [[stranger(e.name), pct(e.pass_rate), f"{e.fewest_output_tokens:,}"]
             for e in sorted(effort, key=lambda e: e.fewest_output_tokens or 0)])]))
    return sections


def _findings_section(summary: AuditSummary, findings: list[Finding], tasks: dict[str, Task]
                      ) -> Section:
    counts = summary.findings.by_severity
    shown = sorted((f for f in findings if f.severity != "info"),
                   key=lambda f: (SEVERITY_ORDER[f.severity], f.task_id or "", f.check))
    blocks: list[Block] = [Text(f"{plural(counts['error'], 'error')}, "
                                f"{plural(counts['warning'], 'warning')}, {counts['info']} info "
                                f"(info findings are on each task's page and in "
                                f"findings.jsonl).")]
    if summary.findings.summaries:
        blocks += [Text("Said once for the benchmark (a finding only where it matters):"),
                   Bullets([f"`{s.check}`: {s.describe()}" for s in summary.findings.summaries])]
    if shown:
        blocks.append(Table(["severity", "task", "review", "criterion", "check", "problem"],
                            [[Cell(f.severity, sort=str(SEVERITY_ORDER[f.severity])),
                              task_cell(f.task_id, summary.task_names) if f.task_id else "",
                              _reviewed(f.task_id or "", summary)[0],
                              stranger(one_line(criterion_title(tasks[f.task_id], f.criterion_id),
                                                80) if f.task_id in tasks
                                       else f.criterion_id or ""),
                              f"`{f.check}`",
                              stranger(readable(f.message, tasks.get(f.task_id or "")))]
                             for f in shown], name="findings"))
    return Section("Flagged tasks and findings", blocks, anchor="findings")


def build_document(summary: AuditSummary, findings: list[Finding], tasks: dict[str, Task]
                   ) -> list[Section]:
    unavailable = [Section("Unavailable attempts", [Bullets(
        [f"{stranger(_readable_attempt(u.attempt, tasks))}: {stranger(u.reason)}"
         for u in summary.unavailable])])] \
        if summary.unavailable else []
    return [_title(summary), _next_actions(summary, findings, tasks), _headline(summary),
            *_score_sections(summary), _correction_section(summary), _ranking_section(summary),
            *_measurement_sections(summary),
            _tasks_section(summary, findings, tasks),
            *unavailable, _review_section(summary), _items_section(summary, findings, tasks),
            _precision_section(summary), *_checks_sections(summary),
            _findings_section(summary, findings, tasks)]


def _readable_attempt(attempt_id: str, tasks: dict[str, Task]) -> str:
    """ "cirrus-2/nordlys_03/2" for "cirrus-2/task_6bce.../2"."""
    return "/".join(tasks[part].name if part in tasks else part for part in attempt_id.split("/"))


STRATUM_NAMES = {"failures": "failures (every model failed every graded attempt)",
                 "mixed": "mixed (no review draws from them: counted as graded)"}


def _stratum_rows(correction: Correction) -> list[list[str]]:
    rows = []
    for s in correction.strata:
        name = STRATUM_NAMES.get(s.kind) or f"passes in {stranger(s.domain or '')}"
        found = ("grader errors" if s.kind == "failures" else "unearned passes"
                 if s.kind == "passes" else "-")
        rows.append([name, str(s.tasks), str(s.sampled), str(s.reviewed),
                     f"{s.errors} {found}" if s.kind != "mixed" else "-",
                     interval(s.error_rate)])
    return rows


def _correction_section(summary: AuditSummary) -> Section:
    """The corrected pass@1: strata, the judge's measured error, the scores, the reviews needed."""
    c = summary.correction
    blocks: list[Block] = [Text(
        f"The judge ({stranger(c.grader or 'none')}) errs both ways: a failure a reviewer "
        "labels *grader error* was a false fail, a pass labelled *unearned* a false pass. Tasks "
        "are split into strata by what the judge said; reviews are drawn from two of them, as "
        "the review app draws them: every failure, and a random sample of passes per domain. A "
        "model's corrected pass@1 counts a reviewed task as its label says, an unreviewed pass "
        "as its domain's share of sound passes among those reviewed, and a mixed task as graded "
        "(a stratified difference estimator: prediction-powered inference with one correction "
        "per stratum). Assumed: a label holds for every attempt of every model on its task; the "
        "judge's error on mixed tasks is not measured. Controls (answers with a known verdict) "
        "measure the judge too, but are no draw from the models' answers: they are shown as a "
        "check and never enter the estimate."),
        Table(["stratum", "tasks", "drawn for review", "reviewed", "judge errors found",
               "their share [95% CI]"], _stratum_rows(c)),
        Bullets([
            f"false fails among the failures (grader errors of those reviewed): "
            f"{interval(c.false_fail_rate)}",
            f"false passes among the passes (unearned passes, domains weighted by size): "
            f"{interval(c.false_pass_rate)}",
            (f"on controls graded by {stranger(c.controls.grader)}: answers that must pass "
             f"failed {interval(c.controls.false_fails)} of {c.controls.false_fails.n}, answers "
             f"that must fail passed {interval(c.controls.false_passes)} of "
             f"{c.controls.false_passes.n}") if c.controls else
            f"no control was graded by {stranger(c.grader or 'the headline grader')}"])]
    if c.refused:
        blocks += [Text("Not corrected yet:"), Bullets(c.refused)]
    else:
        blocks.append(Table(
            ["model", "variant", "tasks: failures / passes / mixed", "as graded",
             "corrected [95% CI]"],
            [[stranger(s.model), stranger(s.variant),
              f"{s.tasks}: {s.strata['failures']} / {s.strata['passes']} / {s.strata['mixed']}",
              pct(s.as_graded), interval(s.corrected) if s.corrected.estimate is not None
              else stranger(s.corrected.method)] for s in c.scores]))
    failures = sum(s.tasks for s in c.strata if s.kind == "failures")
    needs = "; ".join(f"±{100 * p.half_width:.0f} point{'s' if p.half_width > 0.01 else ''}: "
                      f"{p.per_domain} per domain (all of a smaller one; {p.reviews} reviews in "
                      f"all)" for p in c.plan)
    blocks.append(Text(
        f"Reviews needed: all {failures} failures, and the pass reviews per domain that bring "
        f"the interval's review part (the doubt that more reviews remove) to {needs}"
        + (f". The reviews so far give ±{100 * c.review_half_width:.1f} points."
           if c.review_half_width is not None else ".")))
    return Section("Scores corrected for the judge's measured error", blocks)


def _ranking_section(summary: AuditSummary) -> Section:
    """Per rescoring option: how often each pair swaps, rank intervals, the tasks that flip it."""
    ranking, names = summary.ranking, summary.task_names
    if not ranking.pairs:
        return Section("Would the ranking survive?",
                       [Text("Only one model and variant: no ranking to test.")])

    def named(ids: list[str] | None) -> str:
        if ids is None:
            return "none (removing any number leaves it ahead)"
        return f"{len(ids)}: " + ", ".join(stranger(names.get(t, t)) for t in ids) if ids \
            else "-"

    pairs = _merged([(p.option, [p.leader, p.other], [
        str(p.tasks), pct(p.lead), pct(p.swap_probability),
        "tied" if not p.lead else "n/a" if p.stable is None else "yes" if p.stable else "no",
        named(p.removal), named(p.relabelling)]) for p in ranking.pairs])
    ranks = _merged([(r.option, [r.model], [str(r.tasks), str(r.rank),
                                            f"{r.low:g} to {r.high:g}"]) for r in ranking.ranks])
    swapping = {(p.option, p.leader, p.other): p.swap_probability for p in ranking.pairs}
    swaps: dict[str, tuple[float, float, float]] = {}
    for options, (leader, other), _ in pairs:
        if (swap := swapping[(options[0], leader, other)]) is not None:
            label = (f"{leader.rsplit(' / ', 1)[-1]} over {other.rsplit(' / ', 1)[-1]} · "
                     f"{OPTION_NAMES.get(options[0], options[0])}"
                     + (f" (+{len(options) - 1} same)" if len(options) > 1 else ""))
            swaps[label] = (swap, swap, swap)
    return Section("Would the ranking survive?", [
        Text(f"Per rescoring option, for each pair of models: the *swap probability*, the share "
             f"of {ranking.resamples} paired bootstrap resamples of their common tasks (seed "
             f"{ranking.seed}) in which the one behind comes out ahead (a tie counts half); the "
             f"order is *stable* where it is at most {ranking.stable_at:.0%}. The fewest tasks "
             "whose removal, or whose relabelling (the leader's outcome there a fail, the "
             "other's a pass), leaves the leader no longer ahead are the tasks that drive a "
             "swap. A model's *rank interval* is the 2.5th to 97.5th percentile of its rank over "
             "the same resamples of all the option's tasks."),
        Table(["options", "leader", "other", "tasks", "lead in pass@1", "swap probability",
               "stable", "fewest removals", "fewest relabellings"],
              [[_option_label(o), *map(stranger, k), *cells] for o, k, cells in pairs]),
        Table(["options", "model", "tasks", "rank", "rank interval"],
              [[_option_label(o), *map(stranger, k), *cells] for o, k, cells in ranks]),
        Plot("intervals", "probability that the pair swaps order, by rescoring option", swaps,
             xlabel="swap probability", legend=False)])


def _items_section(summary: AuditSummary, findings: list[Finding], tasks: dict[str, Task]
                   ) -> Section:
    """The item-statistics signals, likeliest first: the order they rank the failures queue in."""
    signals = sorted((f for f in findings if f.check in ITEM_CHECK_NAMES),
                     key=lambda f: (f.evidence.get("chance", 0.0),
                                    summary.task_names.get(f.task_id or "", ""), f.check))
    counts = ", ".join(f"`{check}` {sum(f.check == check for f in signals)}"
                       for check in sorted(ITEM_CHECK_NAMES))
    blocks: list[Block] = [Text(
        "How each criterion and task behaves across every graded attempt of every model: "
        "*discrimination* is the correlation of passing with the attempt's model's pass@1 on "
        "the other tasks (and, for a criterion, with the share of its task's other criteria "
        "passed: both in audit.json, `items`); a *chance* is the probability of a pattern at "
        "least this extreme if verdicts and models were unrelated. Each signal below is an info "
        f"finding and ranks the failures queue, likeliest first. Signals: {counts}.")]
    if signals:
        blocks.append(Table(
            ["task", "criterion", "signal", "what it shows", "attempts", "chance"],
            [[stranger(summary.task_names.get(f.task_id or "", f.task_id or "")),
              stranger(one_line(criterion_title(tasks[f.task_id], f.criterion_id), 80))
              if f.task_id in tasks and f.criterion_id else "-",
              f"`{f.check}`", stranger(readable(f.message, tasks.get(f.task_id or ""))),
              str(f.evidence.get("attempts", "")),
              pct(f.evidence["chance"]) if "chance" in f.evidence else "-"] for f in signals]))
    return Section("Item statistics across models", blocks)
