"""The `rubric-audit` command line: parses arguments, calls the library, prints with rich."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rubric_audit.errors import InputError

app = typer.Typer(
    name="rubric-audit",
    help="Measure how much of an LLM-judged benchmark's failure (and success) is the benchmark's "
         "fault.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
# Piped output gets a wide console so tables keep whole ids on one line.
out = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True, soft_wrap=True)

P = ParamSpec("P")
R = TypeVar("R")

BenchArg = Annotated[Path, typer.Argument(help="APEX-format benchmark directory.")]


def user_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn InputError into one line on stderr and exit code 2, with no traceback."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except InputError as exc:
            err.print(f"[bold red]error:[/] {escape(str(exc))}")
            raise typer.Exit(2) from None

    return wrapper


@app.command("tasks")
@user_errors
def tasks_command(bench: BenchArg) -> None:
    """List the benchmark's tasks."""
    from rubric_audit.load.benchmark import load_benchmark

    benchmark = load_benchmark(bench)
    table = Table(title=f"{benchmark.name}: {len(benchmark.tasks)} tasks")
    for column in ("name", "id", "domain", "world", "#criteria", "gold"):
        table.add_column(column, overflow="fold")
    for t in benchmark.tasks:
        table.add_row(t.name, t.id, t.domain, t.world_id, str(len(t.criteria)),
                      t.gold.type if t.gold else "none")
    out.print(table)


@app.command("show")
@user_errors
def show_command(bench: BenchArg,
                 task: Annotated[str, typer.Argument(help="Task id or name.")]) -> None:
    """Show a task: prompt, rubric, gold, and what its world holds."""
    from rubric_audit.load.benchmark import load_benchmark
    from rubric_audit.load.world import load_task_world

    benchmark = load_benchmark(bench)
    found = benchmark.task(task)
    if found is None:
        raise InputError(bench / "tasks_and_rubrics.json", "task_id", f"no task {task!r}")
    world = load_task_world(benchmark, found, with_text=False)
    out.rule(f"{escape(found.name)}  ({found.id})")
    out.print(f"[bold]Domain:[/] {escape(found.domain)}   [bold]World:[/] {found.world_id}   "
              f"[bold]Expected output:[/] {found.expected_output or '-'}")
    out.print("\n[bold]Prompt[/]")
    out.print(escape(found.prompt))
    out.print(f"\n[bold]Rubric[/] ({len(found.criteria)} criteria)")
    for i, c in enumerate(found.criteria, start=1):
        flag = " [primary]" if c.primary else ""
        out.print(f"{i}. {escape(c.text)}{escape(flag)}  [dim]({c.id}, weight {c.weight:g})[/]")
        if c.explanation:
            out.print(f"   [italic]why:[/] {escape(c.explanation)}")
    out.print("\n[bold]Gold[/]")
    if found.gold is None:
        out.print("none")
    else:
        out.print(escape(found.gold.text) or "(no text)")
        for f in found.gold.files:
            out.print(f"  file: {escape(f)}")
    out.print(f"\n[bold]Files[/] ({len(world.files)})")
    for f in world.files:
        out.print(f"  {escape(f.path)}  [dim]{f.size:,} bytes[/]")
    out.print(f"\n[bold]Mail[/] ({len(world.mail)})")
    for m in world.mail:
        out.print(f"  {m.date[:16]}  {escape(m.sender)}: {escape(m.subject)}")
    out.print(f"\n[bold]Calendar[/] ({len(world.events)})")
    for e in world.events:
        out.print(f"  {e.start[:16]}  {escape(e.summary)}")
    out.print(f"\n[bold]Chat spaces[/] ({len(world.chat)})")
    for s in world.chat:
        out.print(f"  {escape(s.name)}: {len(s.messages)} messages, {len(s.members)} members")


@app.command("import")
@user_errors
def import_command(
    runs: Annotated[list[Path], typer.Argument(help="Variant folders, or folders of them.")],
    db: Annotated[Path, typer.Option(help="The audit.db to add the runs to.")],
    bench: Annotated[Path | None, typer.Option(help="Benchmark the runs belong to.")] = None,
) -> None:
    """Add recorded run folders (Archipelago layout) to an audit.db."""
    from rubric_audit.audit import import_runs

    summary = import_runs(runs, db, bench)
    out.print(f"Imported into {escape(str(db))}: {summary.added_graded} graded and "
              f"{summary.added_unavailable} unavailable attempts added, {summary.unchanged} "
              f"already stored.")
    if summary.conflicts:
        out.print(f"{summary.conflicts} attempts conflict with stored ones of the same id and "
                  f"were skipped (see findings: input_attempt_conflict).")


@app.command("audit")
@user_errors
def audit_command(
    bench: BenchArg,
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for audit.db and reports.")],
    runs: Annotated[list[Path] | None, typer.Option(
        "--runs", help="Run folders (default: the benchmark's own runs/ folder).")] = None,
) -> None:
    """The main job: load, validate, score recorded runs and write the reports (no model)."""
    from rubric_audit.audit import run_audit

    result = run_audit(bench, runs, out_dir)
    s = result.summary
    table = Table(title="Recorded scores")
    for column in ("model", "variant", "graded", "unavailable", "pass@1", "criterion score"):
        table.add_column(column)
    for v in s.scores:
        table.add_row(v.model, v.variant, str(v.graded_attempts), str(v.unavailable_attempts),
                      "n/a" if v.pass_at_1 is None else f"{100 * v.pass_at_1:.1f}%",
                      "n/a" if v.mean_criterion_score is None
                      else f"{100 * v.mean_criterion_score:.1f}%")
    out.print(f"Audited {s.tasks} tasks and {s.attempts} attempts "
              f"({result.imported.added} newly imported).")
    if s.scores:
        out.print(table)
    sev = s.findings.by_severity
    out.print(f"Findings: {sev['error']} errors, {sev['warning']} warnings, {sev['info']} info.")
    out.print("Ran offline: no model was called.")
    out.print(f"Wrote {escape(str(out_dir))}/: audit.db, findings.jsonl, audit.json, report.md")


@app.command("serve")
@user_errors
def serve_command(
    bench: BenchArg,
    task: Annotated[str, typer.Argument(help="Task id or name.")],
    http: Annotated[int | None, typer.Option(
        "--http", help="Serve streamable HTTP on 127.0.0.1:PORT (path /mcp) instead of stdio.")
    ] = None,
    telemetry: Annotated[Path | None, typer.Option(
        help="Append one JSON line per tool call to this file.")] = None,
    export: Annotated[Path | None, typer.Option(
        help="On shutdown, write what the agent changed (files, sent mail, events, chat) here.")
    ] = None,
) -> None:
    """Host one task's world as an MCP server (mail, calendar, chat, files) on a private copy."""
    from mock_workspace.server import serve
    from mock_workspace.session import Session
    from mock_workspace.telemetry import Telemetry
    from rubric_audit.load.benchmark import load_benchmark

    benchmark = load_benchmark(bench)
    found = benchmark.task(task)
    if found is None:
        raise InputError(bench / "tasks_and_rubrics.json", "task_id", f"no task {task!r}")
    with Session(benchmark, found) as session:
        if http is not None:
            err.print(f"Serving {found.name} on http://127.0.0.1:{http}/mcp (Ctrl-C to stop)")
        serve(session, Telemetry(telemetry) if telemetry else None, http, export)
