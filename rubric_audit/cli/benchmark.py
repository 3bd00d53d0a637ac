"""Commands on a benchmark: list its tasks, show one, recompute golds, serve a task's world."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from rubric_audit.cli.common import (
    BenchArg,
    JsonOption,
    app,
    err,
    out,
    print_json,
    user_errors,
)
from rubric_audit.core.atomic import check_file_target, write_atomic
from rubric_audit.core.errors import InputError
from rubric_audit.core.text import console as shown


@app.command("tasks")
@user_errors
def tasks_command(bench: BenchArg, as_json: JsonOption = False) -> None:
    """List the benchmark's tasks, and which have a gold recomputation recipe."""
    from rubric_audit.checks.regold import has_recipe
    from rubric_audit.load.benchmark import load_benchmark

    benchmark = load_benchmark(bench)
    recipes = {t.id: has_recipe(benchmark, t) for t in benchmark.tasks}
    if as_json:
        print_json({"benchmark": benchmark.name, "tasks": [
            {"id": t.id, "name": t.name, "domain": t.domain, "world": t.world_id,
             "criteria": len(t.criteria), "gold": t.gold.type if t.gold else None,
             "recipe": recipes[t.id]} for t in benchmark.tasks]})
        return
    table = Table(title=f"{shown(benchmark.name)}: {len(benchmark.tasks)} tasks, "
                        f"{sum(recipes.values())} with a regold recipe")
    for column in ("name", "id", "domain", "world", "#criteria", "gold", "recipe"):
        table.add_column(column, overflow="fold")
    for t in benchmark.tasks:
        table.add_row(*map(shown, (t.name, t.id, t.domain, t.world_id)), str(len(t.criteria)),
                      t.gold.type if t.gold else "none", "yes" if recipes[t.id] else "")
    out.print(table)


@app.command("show")
@user_errors
def show_command(bench: BenchArg,
                 task: Annotated[str, typer.Argument(help="Task id or name.")],
                 as_json: JsonOption = False) -> None:
    """Show a task: prompt, rubric, gold, its regold recipe, and what its world holds."""
    from rubric_audit.checks.regold import has_recipe, recipe_path
    from rubric_audit.load.benchmark import load_benchmark
    from rubric_audit.load.world import load_task_world

    benchmark = load_benchmark(bench)
    found = benchmark.named(task)
    world = load_task_world(benchmark, found, with_text=False)
    recipe = str(recipe_path(benchmark, found)) if has_recipe(benchmark, found) else None
    described = benchmark.world(found.world_id)
    if as_json:
        print_json({"task": found, "recipe": recipe,
                    "world_files_in_benchmark": described is not None
                    and described.source is not None,
                    "files": [{"path": f.path, "size": f.size} for f in world.files],
                    "mail": [{"date": m.date, "sender": m.sender, "subject": m.subject}
                             for m in world.mail],
                    "events": [{"start": e.start, "summary": e.summary} for e in world.events],
                    "chat": [{"space": c.name, "messages": len(c.messages),
                              "members": len(c.members)} for c in world.chat]})
        return
    out.rule(f"{shown(found.name)}  ({shown(found.id)})")
    out.print(f"[bold]Domain:[/] {shown(found.domain)}   [bold]World:[/] {shown(found.world_id)}   "
              f"[bold]Expected output:[/] {shown(found.expected_output or '-')}")
    out.print("\n[bold]Prompt[/]")
    out.print(shown(found.prompt))
    out.print(f"\n[bold]Rubric[/] ({len(found.criteria)} criteria)")
    for i, c in enumerate(found.criteria, start=1):
        flag = " [primary]" if c.primary else ""
        out.print(f"C{i} {shown(c.text)}{shown(flag)}  [dim]({shown(c.id)}, weight {c.weight:g})[/]")
        if c.explanation:
            out.print(f"   [italic]why:[/] {shown(c.explanation)}")
    out.print("\n[bold]Gold[/]")
    if found.gold is None:
        out.print("none")
    else:
        out.print(shown(found.gold.text) or "(no text)")
        for gold_file in found.gold.files:
            out.print(f"  file: {shown(gold_file)}")
    out.print("\n[bold]Regold recipe[/] " + (
        f"{shown(recipe)} (`rubric-audit regold` recomputes its values)" if recipe
        else "none (`rubric-audit regold BENCH TASK --cell 'Sheet!B8'` reads its workbook "
             "without one)"))
    out.print(f"\n[bold]Files[/] ({len(world.files)})")
    if described is None or described.source is None:
        out.print("  [yellow]The world's shared files are not in this benchmark: only the "
                  "task's own files, mail, events and chat are listed.[/]")
    for f in world.files:
        out.print(f"  {shown(f.path)}  [dim]{f.size:,} bytes[/]")
    out.print(f"\n[bold]Mail[/] ({len(world.mail)})")
    for m in world.mail:
        out.print(f"  {m.date[:16]}  {shown(m.sender)}: {shown(m.subject)}")
    out.print(f"\n[bold]Calendar[/] ({len(world.events)})")
    for e in world.events:
        out.print(f"  {e.start[:16]}  {shown(e.summary)}")
    out.print(f"\n[bold]Chat spaces[/] ({len(world.chat)})")
    for s in world.chat:
        out.print(f"  {shown(s.name)}: {len(s.messages)} messages, {len(s.members)} members")


@app.command("regold")
@user_errors
def regold_command(
    bench: BenchArg,
    task: Annotated[str | None, typer.Argument(help="Task id or name (omit with --all).")] = None,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="Override a cell, e.g. 'Assumptions!B9=0.09' or '...=9%' (repeatable).")
    ] = None,
    cell: Annotated[list[str] | None, typer.Option(
        help="Also show a cell or expression, e.g. 'DCF!B21' (repeatable); without a recipe, "
             "of the task's one workbook or --workbook.")] = None,
    workbook: Annotated[str | None, typer.Option(
        help="Read this workbook of the task's world (its path there) instead of the recipe's; "
             "no recipe is needed.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every task with a recipe.")] = False,
    findings_out: Annotated[Path | None, typer.Option(
        "--findings", help="With --all: also write the findings to this JSONL file.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Recompute criterion values from the task's workbook, beside what criteria and gold state."""
    from rubric_audit.checks.regold import (
        RecipeError,
        ad_hoc_recipe,
        applied_overrides,
        has_recipe,
        load_recipe,
        parse_set,
        recipe_path,
        recompute,
        regold_all,
    )
    from rubric_audit.load.benchmark import load_benchmark
    from rubric_audit.report.describe import criterion_title

    if findings_out is not None:
        if not all_:
            raise InputError("--findings", None, "only with --all (a task's values are printed)")
        check_file_target(findings_out, "--findings", "regold.jsonl")
    extra = dict(parse_set(item) for item in set_ or [])
    benchmark = load_benchmark(bench)
    if all_:
        findings = regold_all(benchmark)
        recipes = sum(has_recipe(benchmark, t) for t in benchmark.tasks)
        if findings_out is not None:
            write_atomic(findings_out, "".join(f.model_dump_json() + "\n" for f in findings))
        if as_json:
            print_json({"recipes": recipes, "findings": findings})
            return
        out.print(f"Recomputed {recipes} tasks with a recipe: {len(findings)} findings.")
        for f in findings:
            name = t.name if f.task_id and (t := benchmark.task(f.task_id)) else ""
            out.print(f"  {shown(name)}: [bold]{f.check}[/] {shown(f.message)}")
        return
    if task is None:
        raise InputError(bench, "TASK", "name a task, or pass --all")
    found = benchmark.named(task)
    path = recipe_path(benchmark, found)
    if workbook is None and not path.is_file() and not cell:
        raise InputError(path, None, "no recipe for this task: write one (docs/formats.md: "
                                     "Gold recomputation recipes), or show cells of its "
                                     "workbook with --cell")
    ad_hoc = workbook is not None or not path.is_file()
    try:
        recipe = ad_hoc_recipe(benchmark, found, workbook) if ad_hoc else load_recipe(path)
        results = recompute(benchmark, found, recipe, path, extra, cell)
    except RecipeError as exc:
        if ad_hoc:
            raise InputError(recipe.workbook, None, exc.problem) from None
        raise InputError(exc.path, f"line {exc.line}" if exc.line else None,
                         exc.problem) from None
    overrides = applied_overrides(recipe, extra)
    rows = [{"criterion": criterion_title(found, r.criterion_id) if r.criterion_id else r.label,
             **r.model_dump()} for r in results]
    if as_json:
        print_json({"task_id": found.id, "task": found.name, "workbook": recipe.workbook,
                    "recipe": None if ad_hoc else str(path), "results": rows,
                    "overrides": [{"cell": ref, "value": value, "source": source}
                                  for ref, value, source in overrides]})
        return
    table = Table(title=shown(f"{found.name}: recomputed from {recipe.workbook}"
                              + (" (no recipe)" if ad_hoc else "")))
    for column in ("criterion", "recomputed", "criterion states", "gold states", "tolerance",
                   "verdict"):
        table.add_column(column, overflow="fold")
    for r, row in zip(results, rows, strict=True):
        verdict = ("match" if r.criterion_matches and r.gold_matches is not False
                   else "MISMATCH" if r.criterion_id else "")
        tolerance = f"{r.tolerance[0]:,.6g} to {r.tolerance[1]:,.6g}" if r.tolerance else ""
        table.add_row(shown(row["criterion"]), f"{r.value:,.6g}",
                      "" if r.criterion_value is None else f"{r.criterion_value:,.6g}",
                      ", ".join(f"{v:,.6g}" for v in r.gold_values), tolerance, verdict)
    out.print(table)
    for ref, value, source in overrides:
        out.print(f"override {shown(ref)} = {shown(str(value))}  [dim]({shown(source)})[/]")


@app.command("serve")
@user_errors
def serve_command(
    bench: BenchArg,
    task: Annotated[str, typer.Argument(help="Task id or name.")],
    http: Annotated[int | None, typer.Option(
        "--http", min=1, max=65_535,
        help="Serve streamable HTTP on 127.0.0.1:PORT (path /mcp) instead of stdio.")
    ] = None,
    telemetry: Annotated[Path | None, typer.Option(
        help="Append one JSON line per tool call to this file.")] = None,
    export: Annotated[Path | None, typer.Option(
        help="Write what the agent changed (files, sent mail, events, chat) here on shutdown; over "
             "--http, each session's into DIR/<n>/ (n in start order) when it ends.")
    ] = None,
) -> None:
    """Host one task's world as an MCP server (mail, calendar, chat, files) on a private copy
    (over HTTP, one per MCP session)."""
    from mock_workspace.server import Terminated, serve_http, serve_stdio
    from mock_workspace.session import Session, check_export_folder
    from mock_workspace.sessions import SessionPool
    from mock_workspace.telemetry import Telemetry
    from rubric_audit.load.benchmark import load_benchmark

    if export is not None:
        check_export_folder(export)
    benchmark = load_benchmark(bench)
    found = benchmark.named(task)
    recorder = Telemetry(telemetry) if telemetry else None
    try:
        if http is None:
            with Session(benchmark, found) as session:
                err.print(f"Serving {shown(found.name)} over stdio: an MCP client speaks on "
                          f"stdin and stdout (Ctrl-C or closing stdin stops it"
                          + (f"; the agent's changes then go to {shown(str(export))}"
                             if export else "") + ")")
                serve_stdio(session, recorder, export)
        else:
            with SessionPool(benchmark, found, export) as pool:
                err.print(f"Serving {shown(found.name)} on http://127.0.0.1:{http}/mcp, up to "
                          f"{pool.limit} sessions at once (Ctrl-C to stop)")
                serve_http(pool, recorder, http)
    except Terminated as stop:  # exported and cleaned up; the stdio reader thread would keep a
        sys.stdout.flush()      # normal exit waiting until the client closes stdin
        sys.stderr.flush()
        os._exit(int(stop.code or 143))
