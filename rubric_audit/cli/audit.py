"""The main job and what reads its output: import runs, audit, report, search, export."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from rubric_audit.cli.common import (
    MAX_CONCURRENCY,
    BatchOption,
    CallTimeoutOption,
    JsonOption,
    JudgeModeOption,
    MaxOutputOption,
    TimeBudgetOption,
    app,
    out,
    print_json,
    print_sources,
    user_errors,
)
from rubric_audit.core.text import console as shown
from rubric_audit.core.text import console_line as shown_line
from rubric_audit.core.words import pct


@app.command("import")
@user_errors
def import_command(
    runs: Annotated[list[Path], typer.Argument(help="Variant folders, or folders of them.")],
    db: Annotated[Path, typer.Option(help="The audit.db to add the runs to.")],
    bench: Annotated[Path | None, typer.Option(help="Benchmark the runs belong to.")] = None,
) -> None:
    """Add recorded run folders (Archipelago layout) to an audit.db."""
    from rubric_audit.audit.job import import_runs

    summary = import_runs(runs, db, bench)
    print_sources(summary.sources)
    ungraded = f", {summary.added_ungraded} ungraded" if summary.added_ungraded else ""
    out.print(f"Imported into {shown_line(str(db))}: {summary.added_graded} graded{ungraded} and "
              f"{summary.added_unavailable} unavailable attempts added, {summary.unchanged} "
              f"already stored"
              + (f" ({summary.now_graded} of them graded since)." if summary.now_graded else "."))
    if summary.conflicts:
        out.print(f"{summary.conflicts} attempts conflict with stored ones of the same id and "
                  f"were skipped (see findings: input_attempt_conflict).")


@app.command("audit")
@user_errors
def audit_command(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for audit.db and reports.")],
    paths: Annotated[list[Path] | None, typer.Argument(
        help="Run folders; a benchmark directory given here counts as --bench.",
        show_default=False)] = None,
    bench: Annotated[Path | None, typer.Option(
        help="Benchmark the runs belong to (APEX dataset or task package; optional: without "
             "it the tasks are rebuilt from the runs).")] = None,
    runs: Annotated[list[Path] | None, typer.Option(
        "--runs", help="Run folders (default with a benchmark: its own runs/ folder).")] = None,
    judge: Annotated[str | None, typer.Option(
        help="Judge model for the controls (gold, null, near misses, alternatives).")] = None,
    judge_template: Annotated[Path | None, typer.Option(help="Judge prompt template.")] = None,
    lint_model: Annotated[str | None, typer.Option(help="Model for the model-assisted checks.")
                          ] = None,
    near_miss_model: Annotated[str | None, typer.Option(
        help="Model that writes near misses and adversarial answers.")] = None,
    repeats: Annotated[int, typer.Option(min=1, max=100, help="Judge each control N times (flip rate).")
                       ] = 1,
    unavailable_threshold: Annotated[float, typer.Option(
        min=0, max=1, help="Share of a task's attempts without a verdict above which the "
                           "screen calls it ungraded or infra-limited (by the larger cause).")
    ] = 0.5,
    api_base: Annotated[str | None, typer.Option(help="Provider base URL.")] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=MAX_CONCURRENCY, help="Model calls at once.")] = 8,
    cache: Annotated[Path | None, typer.Option(help="Model response cache file.")] = None,
    judge_mode: JudgeModeOption = "auto",
    max_output_tokens: MaxOutputOption = None,
    call_timeout: CallTimeoutOption = 120.0,
    time_budget: TimeBudgetOption = None,
    batch: BatchOption = False,
) -> None:
    """The main job: load, validate, check, control and score; models only where given."""
    from rubric_audit.audit.job import AuditOptions, audit_inputs, run_audit
    from rubric_audit.core.llm import deadline_after

    options = AuditOptions(judge=judge, judge_template=judge_template, lint_model=lint_model,
                           near_miss_model=near_miss_model, repeats=repeats,
                           unavailable_threshold=unavailable_threshold, api_base=api_base,
                           concurrency=concurrency, cache=cache,
                           judge_mode=None if judge_mode == "auto" else judge_mode,
                           max_output_tokens=max_output_tokens, call_timeout=call_timeout,
                           deadline=deadline_after(time_budget), batch=batch)
    bench, runs = audit_inputs(paths or [], bench, runs)
    result = run_audit(bench, runs, out_dir, options)
    if result.reused:
        out.print("Nothing read has changed since the audit stored here: its results are reused, "
                  "and a report or page is made again only where what it shows changed.")
    print_sources(result.imported.sources)
    s = result.summary
    out.print(f"Audited {s.tasks} tasks and {s.attempts} attempts "
              f"({result.imported.added} newly imported).")
    if s.benchmark_version is not None:
        out.print(f"Benchmark version {s.benchmark_version.describe()}.")
    if s.scores:
        table = Table(title="Scores as graded (and against achievable tasks)")
        for column in ("model", "variant", "grader", "graded", "ungraded", "unavailable",
                       "pass@1", "pass@1 achievable"):
            table.add_column(column)
        achievable = {(v.model, v.variant, v.grader): v for v in s.achievable.scores}
        for v in s.scores:
            a = achievable.get((v.model, v.variant, v.grader))
            table.add_row(*map(shown, (v.model, v.variant, v.grader or "none")),
                          str(v.graded_attempts), str(v.ungraded_attempts),
                          str(v.unavailable_attempts), pct(v.pass_at_1),
                          pct(a.pass_at_1) if a else "n/a")
        out.print(table)
    if s.ungraded:
        out.print(f"{s.ungraded} attempts are ungraded: no grader has graded them, so no score "
                  f"counts them; `rubric-audit grade RUNS --judge MODEL` grades them.")
    out.print(f"Achievable tasks: {s.achievable.tasks} of {s.tasks}. Screen of unsolved tasks: "
              + ", ".join(f"{k} {v}" for k, v in s.screen.partition.items()) + ".")
    sev = s.findings.by_severity
    out.print(f"Findings: {sev['error']} errors, {sev['warning']} warnings, {sev['info']} info.")
    for alarm in s.alarms:
        out.print(f"[yellow]Alarm:[/] {shown(alarm)}")
    if s.models_used:
        out.print(f"Models used: {shown(', '.join(s.models_used))}.")
    else:
        out.print("Ran offline: no model was called.")
    for step in s.skipped:
        out.print(f"Skipped (needs {step.get('needs', 'a model')}): {step['step']}; enable with "
                  f"{step['enable_with']}.")
    for failure in s.model_failures:
        out.print(f"[yellow]Model unavailable:[/] {shown(failure)} (those checks are missing, "
                  f"not failed)")
    out.print(f"Wrote {shown_line(str(out_dir))}/: audit.db, findings.jsonl, audit.json, report.md, "
              f"report.html and site/ (a page per task)")


@app.command("report")
@user_errors
def report_command(
    out_dir: Annotated[Path, typer.Argument(help="An audit's output folder (holds audit.db).")],
) -> None:
    """Write the reports again from OUT/audit.db, with the reviews recorded since."""
    from rubric_audit.audit.job import report

    summary = report(out_dir)
    r = summary.statistics.review
    out.print(f"Wrote {shown_line(str(out_dir))}/: findings.jsonl, audit.json, report.md, report.html and "
              f"site/ ({r.failures_reviewed}/{r.failures_queue} failures and "
              f"{r.passes_reviewed}/{r.passes_queue} passes reviewed).")


@app.command("search")
@user_errors
def search_command(
    out_dir: Annotated[Path, typer.Argument(help="An audit's output folder (holds audit.db).")],
    query: Annotated[str, typer.Argument(help="A word or phrase (a file or sheet name, "
                                              "'PIK'); punctuation between words is ignored.")],
    model: Annotated[str, typer.Option("--model", help="Only attempts of this model "
                                                       "(part of its name).")] = "",
    task: Annotated[str, typer.Option("--task", help="Only this task (id or name).")] = "",
    check: Annotated[str, typer.Option("--check", help="Only tasks with a finding of this "
                                                       "check.")] = "",
    limit: Annotated[int, typer.Option("--limit", min=1, max=100_000,
                                       help="At most this many matches.")] = 50,
    as_json: JsonOption = False,
) -> None:
    """Find attempts by text in prompts, answers, trajectories (steps, tool calls, results) and
    judge rationales; prints each match with its line in context."""
    from rubric_audit.review.search import search_audit

    found = search_audit(out_dir, query, model, task, check, limit)
    if as_json:
        print_json(found)
        return
    shown_count = (f"{found.total}" if len(found.hits) == found.total
                   else f"The best {len(found.hits)} of {found.total}")
    out.print(f"{shown_count} match{'es' if found.total != 1 else ''} for {shown(repr(query))}"
              + ("" if len(found.hits) == found.total else " (raise --limit for more)"))
    for hit in found.hits:
        attempt = f"{hit.variant} #{hit.attempt}" if hit.attempt_id else "the task"
        out.print(f"[bold]{shown_line(hit.task)}[/bold]  {shown_line(hit.model or '')}  "
                  f"{shown_line(attempt)}  {shown_line(hit.place)}\n"
                  f"    {shown(hit.line)}", soft_wrap=True)


@app.command("export")
@user_errors
def export_command(
    out_dir: Annotated[Path, typer.Argument(help="An audit's output folder (holds audit.db).")],
    fmt: Annotated[str, typer.Option("--format", help="csv or json.")] = "csv",
) -> None:
    """Write the audit's tables (attempts, grades, measurements, controls, findings, reviews) as
    csv or json."""
    from rubric_audit.report.frames import export

    written = export(out_dir, fmt)
    out.print(f"Wrote {len(written)} tables to {shown(str(written[0].parent))}/: "
              + ", ".join(p.name for p in written))
