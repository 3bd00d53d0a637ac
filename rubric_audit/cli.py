"""The `rubric-audit` command line: parses arguments, calls the library, prints with rich."""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, ParamSpec, TypeVar

import click
import typer
from rich.console import Console
from rich.table import Table

from rubric_audit.errors import InputError, input_error_in
from rubric_audit.report.document import pct
from rubric_audit.text import console as shown
from rubric_audit.text import console_line as shown_line

if TYPE_CHECKING:
    from rubric_audit.llm import ModelConfig
    from rubric_audit.model import Benchmark, SourceSummary
    from rubric_audit.runner import AttemptResult

app = typer.Typer(
    name="rubric-audit",
    help="Measure how much of an LLM-judged benchmark's failure (and success) is the benchmark's "
         "fault.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
# Piped output gets a wide console so tables keep whole ids on one line. Rich's highlighter is
# off: its regexes took minutes over a stranger's 5,000-digit name and coloured parts of names.
out = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 200, highlight=False)
err = Console(stderr=True, soft_wrap=True, highlight=False)

P = ParamSpec("P")
R = TypeVar("R")
# Every number option has a ceiling, so no value reaches SQLite, numpy or asyncio too large
# for them (a --limit of 10^20 overflowed SQLite's INTEGER).
MAX_CONCURRENCY = 10_000
MAX_SEED = 2**32 - 1

BenchArg = Annotated[Path, typer.Argument(
    help="Benchmark directory: an APEX dataset or an Archipelago task package.")]
JudgeMode = Literal["auto", "json-schema", "json-object-schema", "tools", "json"]
JudgeModeOption = Annotated[JudgeMode, typer.Option(
    "--judge-mode",
    help="How the judge is asked for structured replies: auto (the strictest the provider "
         "applies, by litellm's data or a probe at the check), json-schema, json-object-schema "
         "(llama.cpp's schema-constrained JSON object), tools, or json (prompted).")]
MaxOutputOption = Annotated[int | None, typer.Option(
    "--max-output-tokens", min=1, max=1_000_000,
    help="Output cap of each model call (default 1024 for structured replies, 4096 for an "
         "agent's step); a reply cut there is unscored, never waited on.")]
CallTimeoutOption = Annotated[float, typer.Option(
    "--call-timeout", min=1, max=86_400,
    help="Seconds a model request may take before it is cut (retried like a lost connection).")]
TimeBudgetOption = Annotated[float | None, typer.Option(
    "--time-budget", min=1, max=30 * 86_400,
    help="Seconds the command's model calls may take in all, from its start: calls not made or "
         "not finished by then are recorded as unavailable (never as failures), what was done is "
         "kept.")]


class _Options:
    debug = False


@app.callback()
def _global_options(debug: Annotated[bool, typer.Option(
        "--debug", envvar="RUBRIC_AUDIT_DEBUG",
        help="Show the traceback of an internal error instead of one line, and the log lines "
             "of the libraries (litellm) on stderr too.")] = False) -> None:
    _Options.debug = debug
    from rubric_audit import llm  # litellm itself is imported only by a command that calls models

    llm.show_library_logs = debug


def _spelled(command: Callable[..., object]) -> dict[str, str]:
    """How the command line spells each parameter of `command`: `--model` for an option (its
    first declared name), `QUERY` for an argument."""
    import typing

    from typer.models import OptionInfo

    try:
        hints = typing.get_type_hints(command, include_extras=True)
    except NameError:  # an annotation only a type checker resolves: say the Python name
        return {}
    spelled = {}
    for name, hint in hints.items():
        option = next((m for m in getattr(hint, "__metadata__", ()) if isinstance(m, OptionInfo)),
                      None)
        declared = [d for d in (option.param_decls or ()) if d.startswith("--")] if option else []
        spelled[name] = (declared[0] if declared else f"--{name.replace('_', '-')}") if option \
            else name.upper()
    return spelled


def _check_text_arguments(arguments: dict[str, object], spelled: dict[str, str]) -> None:
    """Refuse a text argument or option that is not UTF-8 (bytes from the shell, which Python
    keeps as lone surrogates: no terminal, query or store can take them), naming it."""
    for name, value in arguments.items():
        for item in value if isinstance(value, list | tuple) else [value]:
            if isinstance(item, str) and not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    raise InputError(spelled.get(name, name), None, "not UTF-8 text") from None


def user_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn InputError into one line on stderr and exit code 2, with no traceback; anything
    unexpected (a bug) into one line and exit code 1, unless --debug asks for the traceback."""

    spelled = _spelled(command)

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            _check_text_arguments(kwargs, spelled)
            return command(*args, **kwargs)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except Exception as exc:
            if (unusable := input_error_in(exc)) is not None:  # a task group's: an ExceptionGroup
                err.print(f"[bold red]error:[/] {shown_line(str(unusable))}")
                raise typer.Exit(2) from None
            if _Options.debug:
                raise
            what = (str(exc).strip().splitlines() or [""])[0][:300]
            err.print(f"[bold red]internal error[/] ({shown_line(type(exc).__name__)}: "
                      f"{shown_line(what)}); run with --debug for the traceback")
            raise typer.Exit(1) from None

    return wrapper


@app.command("tasks")
@user_errors
def tasks_command(bench: BenchArg) -> None:
    """List the benchmark's tasks."""
    from rubric_audit.load.benchmark import load_benchmark

    benchmark = load_benchmark(bench)
    table = Table(title=f"{shown(benchmark.name)}: {len(benchmark.tasks)} tasks")
    for column in ("name", "id", "domain", "world", "#criteria", "gold"):
        table.add_column(column, overflow="fold")
    for t in benchmark.tasks:
        table.add_row(*map(shown, (t.name, t.id, t.domain, t.world_id)), str(len(t.criteria)),
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
        raise InputError(bench, "task", f"no task {task!r} (by id or name)")
    world = load_task_world(benchmark, found, with_text=False)
    out.rule(f"{shown(found.name)}  ({shown(found.id)})")
    out.print(f"[bold]Domain:[/] {shown(found.domain)}   [bold]World:[/] {shown(found.world_id)}   "
              f"[bold]Expected output:[/] {shown(found.expected_output or '-')}")
    out.print("\n[bold]Prompt[/]")
    out.print(shown(found.prompt))
    out.print(f"\n[bold]Rubric[/] ({len(found.criteria)} criteria)")
    for i, c in enumerate(found.criteria, start=1):
        flag = " [primary]" if c.primary else ""
        out.print(f"{i}. {shown(c.text)}{shown(flag)}  [dim]({shown(c.id)}, weight {c.weight:g})[/]")
        if c.explanation:
            out.print(f"   [italic]why:[/] {shown(c.explanation)}")
    out.print("\n[bold]Gold[/]")
    if found.gold is None:
        out.print("none")
    else:
        out.print(shown(found.gold.text) or "(no text)")
        for gold_file in found.gold.files:
            out.print(f"  file: {shown(gold_file)}")
    out.print(f"\n[bold]Files[/] ({len(world.files)})")
    described = benchmark.world(found.world_id)
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
    _print_sources(summary.sources)
    ungraded = f", {summary.added_ungraded} ungraded" if summary.added_ungraded else ""
    out.print(f"Imported into {shown_line(str(db))}: {summary.added_graded} graded{ungraded} and "
              f"{summary.added_unavailable} unavailable attempts added, {summary.unchanged} "
              f"already stored"
              + (f" ({summary.now_graded} of them graded since)." if summary.now_graded else "."))
    if summary.conflicts:
        out.print(f"{summary.conflicts} attempts conflict with stored ones of the same id and "
                  f"were skipped (see findings: input_attempt_conflict).")


def _print_sources(sources: list[SourceSummary]) -> None:
    """Per source: what it gave (ungraded attempts where there are any), why attempts are
    unavailable, and what could not be mapped."""
    for s in sources:
        reasons = _counted(s.unavailable_reasons, "; ")
        ungraded = f"{s.ungraded} ungraded, " if s.ungraded else ""
        read_as = shown_line(f"{s.format}, variant {s.variant}" if s.variant else s.format)
        controls = f", {s.controls} recorded controls" if s.controls else ""
        out.print(f"Read {shown_line(s.path)} ({read_as}): {s.attempts} attempts, {s.graded} graded, "
                  f"{ungraded}{s.unavailable} unavailable"
                  f"{shown_line(f' ({reasons})') if reasons else ''}; "
                  f"{s.tasks} tasks, {s.criteria} criteria{controls}.")
        if s.answer_rules:
            out.print("  answers: " + shown_line(_counted(s.answer_rules)))
        if s.model_from:
            out.print("  [yellow]model not in the attempt's own config,[/] read from: "
                      + shown_line(_counted(s.model_from)))
        for item in s.unmapped:
            out.print(f"  [yellow]not mapped:[/] {shown_line(item)}")


def _counted(counts: dict[str, int], separator: str = ", ") -> str:
    return separator.join(f"{n} x {what}" for what, n in counts.items())


def _model_config(model: str, api_base: str | None, max_output_tokens: int | None = None,
                  call_timeout: float = 120.0, mode: JudgeMode = "auto",
                  time_budget: float | None = None) -> ModelConfig:
    """A model as the command line sets it: `auto` leaves the structured mode to the check; the
    time budget runs from now."""
    from rubric_audit.llm import ModelConfig, deadline_after

    return ModelConfig(model=model, api_base=api_base, max_output_tokens=max_output_tokens,
                       timeout=call_timeout, structured_mode=None if mode == "auto" else mode,
                       deadline=deadline_after(time_budget))


class _GradeProgress:
    """A grading's progress on stderr: its calls, parsed and unscored, and tokens."""

    def __init__(self, label: str) -> None:
        from rubric_audit.progress import CommandProgress

        self.parsed = self.unscored = self.tokens = 0
        self.bar = CommandProgress(err, shown(label), "calls", stats=self.stats)

    def stats(self) -> str:
        return f"{self.parsed} parsed, {self.unscored} unscored, {self.tokens:,} tokens"

    def planned(self, calls: int) -> None:
        self.bar.plan(calls)

    def called(self, parsed: bool, tokens: int) -> None:
        self.parsed += parsed
        self.unscored += not parsed
        self.tokens += tokens
        self.bar.advance()

    def __enter__(self) -> _GradeProgress:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(None, None, None)


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
) -> None:
    """The main job: load, validate, check, control and score; models only where given."""
    from rubric_audit.audit import AuditOptions, audit_inputs, run_audit
    from rubric_audit.llm import deadline_after

    options = AuditOptions(judge=judge, judge_template=judge_template, lint_model=lint_model,
                           near_miss_model=near_miss_model, repeats=repeats,
                           unavailable_threshold=unavailable_threshold, api_base=api_base,
                           concurrency=concurrency, cache=cache,
                           judge_mode=None if judge_mode == "auto" else judge_mode,
                           max_output_tokens=max_output_tokens, call_timeout=call_timeout,
                           deadline=deadline_after(time_budget))
    bench, runs = audit_inputs(paths or [], bench, runs)
    result = run_audit(bench, runs, out_dir, options)
    if result.reused:
        out.print("Nothing read has changed since the audit stored here: its results are reused "
                  "and only the reports are written again.")
    _print_sources(result.imported.sources)
    s = result.summary
    out.print(f"Audited {s.tasks} tasks and {s.attempts} attempts "
              f"({result.imported.added} newly imported).")
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
              f"report.html")


@app.command("report")
@user_errors
def report_command(
    out_dir: Annotated[Path, typer.Argument(help="An audit's output folder (holds audit.db).")],
) -> None:
    """Write the reports again from OUT/audit.db, with the reviews recorded since."""
    from rubric_audit.audit import report

    summary = report(out_dir)
    r = summary.statistics.review
    out.print(f"Wrote {shown_line(str(out_dir))}/: findings.jsonl, audit.json, report.md, report.html "
              f"({r.failures_reviewed}/{r.failures_queue} failures and "
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
) -> None:
    """Find attempts by text in prompts, answers, trajectories (steps, tool calls, results) and
    judge rationales; prints each match with its line in context."""
    from rubric_audit.search import search_audit

    hits = search_audit(out_dir, query, model, task, check, limit)
    out.print(f"{len(hits)} match{'es' if len(hits) != 1 else ''} for {shown(repr(query))}"
              + (" (the first; raise --limit for more)" if len(hits) == limit else ""))
    for hit in hits:
        where = hit.attempt_id or f"{hit.task_id} (task)"
        out.print(f"[bold]{shown_line(where)}[/bold]  {shown_line(hit.model or '')}  "
                  f"{shown_line(hit.place)}\n"
                  f"    {shown(hit.line)}", soft_wrap=True)


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
    from mock_workspace.session import Session
    from mock_workspace.sessions import SessionPool
    from mock_workspace.telemetry import Telemetry
    from rubric_audit.load.benchmark import load_benchmark

    benchmark = load_benchmark(bench)
    found = benchmark.task(task)
    if found is None:
        raise InputError(bench, "task", f"no task {task!r} (by id or name)")
    recorder = Telemetry(telemetry) if telemetry else None
    try:
        if http is None:
            with Session(benchmark, found) as session:
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


@app.command("run")
@user_errors
def run_command(
    bench: BenchArg,
    model: Annotated[str, typer.Option(help="litellm model name, e.g. openai/gpt-4.1.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Runs folder (variant folders inside).")],
    attempts: Annotated[int, typer.Option(min=1, max=1_000, help="Attempts per task.")] = 1,
    tasks: Annotated[str | None, typer.Option(help="Comma-separated task ids or names.")] = None,
    sample: Annotated[int | None, typer.Option(min=1, max=10_000_000, help="Run a random sample of N tasks.")
                      ] = None,
    seed: Annotated[int, typer.Option(min=0, max=MAX_SEED, help="Seed for --sample.")] = 0,
    concurrency: Annotated[int, typer.Option(min=1, max=MAX_CONCURRENCY, help="Attempts run at once.")] = 4,
    processes: Annotated[int, typer.Option(
        min=1, max=256, help="Worker processes sharing the attempts (litellm's per-call work is "
                    "CPU-bound: use the machine's cores).")] = 1,
    system_prompt: Annotated[Path | None, typer.Option(help="Base system prompt file.")] = None,
    variant: Annotated[str | None, typer.Option(help="Variant (folder) name.")] = None,
    add_sentence: Annotated[list[str] | None, typer.Option(
        help="Sentence appended to the system prompt (repeatable).")] = None,
    drop_sentence: Annotated[list[str] | None, typer.Option(
        help="Sentence removed from the system prompt (repeatable).")] = None,
    max_steps: Annotated[int, typer.Option(min=1, max=100_000, help="Model turns per attempt.")] = 50,
    max_tokens: Annotated[int | None, typer.Option(min=1, max=10**12, help="Total tokens per attempt.")
                          ] = None,
    timeout: Annotated[float, typer.Option(min=1, max=604_800, help="Wall seconds per attempt.")] = 1800.0,
    api_base: Annotated[str | None, typer.Option(help="Provider base URL (litellm api_base).")
                        ] = None,
    rerun_failures: Annotated[Path | None, typer.Option(
        help="audit.db: run one more attempt on each task every model failed on every graded "
             "attempt.")] = None,
    max_output_tokens: MaxOutputOption = None,
    call_timeout: CallTimeoutOption = 120.0,
    time_budget: TimeBudgetOption = None,
) -> None:
    """Run an agent (any litellm model) on the benchmark's tasks through the workspace."""
    from rubric_audit.llm import check_models
    from rubric_audit.load.benchmark import load_benchmark
    from rubric_audit.progress import CommandProgress
    from rubric_audit.reviews import all_failed_tasks
    from rubric_audit.runner import Budget, Runner, select_tasks
    from rubric_audit.store import open_audit
    from rubric_audit.variants import check_variant, claim_variant, make_variant

    if tasks and sample:
        raise InputError("--tasks", None, "give --tasks or --sample, not both")
    benchmark = load_benchmark(bench)
    chosen = select_tasks(benchmark, tasks.split(",") if tasks else None, sample, seed)
    spec = make_variant(model, variant, system_prompt, add_sentence or [], drop_sentence or [])
    config = _model_config(model, api_base, max_output_tokens, call_timeout,
                           time_budget=time_budget)
    check_variant(out_dir, spec)
    check_models({"--model": config})
    claim_variant(out_dir, spec)
    runner = Runner(benchmark, out_dir, spec, config,
                    Budget(max_steps=max_steps, max_tokens=max_tokens, timeout=timeout))
    runner.clear_partials()
    if rerun_failures is not None:
        with open_audit(rerun_failures) as store:
            failed = set(all_failed_tasks(store))
        todo, done = runner.plan_one_more([t for t in chosen if t.id in failed]), 0
    else:
        todo, done = runner.plan(chosen, attempts)
    out.print(f"Variant {shown(spec.name)}: {len(todo)} attempts to run, {done} already finished.")
    totals = {"tokens": 0, "cost": 0.0, "cost_known": True}
    states: dict[str, int] = {}

    def stats() -> str:
        cost = f"${totals['cost']:.4f}" if totals["cost_known"] else "unknown"
        done = ", ".join(f"{k} {v}" for k, v in sorted(states.items()))
        return f"{done} | {totals['tokens']:,} tokens | cost {cost}"

    with CommandProgress(err, shown(spec.name), "attempts", len(todo), stats) as progress:

        def done_one(result: AttemptResult) -> None:
            states[result.state] = states.get(result.state, 0) + 1
            totals["tokens"] += result.usage.total_tokens or 0
            if result.usage.cost is None:
                totals["cost_known"] = False
            else:
                totals["cost"] += result.usage.cost
            progress.advance()

        runner.run_in_processes(todo, concurrency, processes, done_one)
    summary = ", ".join(f"{v} {k}" for k, v in sorted(states.items())) or "nothing to run"
    out.print(f"Done: {summary}. Runs in {shown(str(out_dir / spec.name))}/ (grade them with a "
              f"judge before they count as graded attempts).")


@app.command("grade")
@user_errors
def grade_command(
    runs: Annotated[list[Path], typer.Argument(help="Variant folders, or folders of them.")],
    judge: Annotated[str, typer.Option(help="litellm model name of the judge.")],
    bench: Annotated[Path | None, typer.Option(
        help="Benchmark the runs belong to (default: the tasks as the runs recorded them).")
    ] = None,
    judge_template: Annotated[Path | None, typer.Option(
        help="Prompt template with $prompt, $answer, $artifacts, $criterion (default: ours).")
    ] = None,
    api_base: Annotated[str | None, typer.Option(help="Provider base URL.")] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=MAX_CONCURRENCY, help="Judge calls at once.")] = 8,
    cache: Annotated[Path | None, typer.Option(
        help="Response cache (default: $RUBRIC_AUDIT_CACHE, else the user cache folder).")
    ] = None,
    judge_mode: JudgeModeOption = "auto",
    max_output_tokens: MaxOutputOption = None,
    call_timeout: CallTimeoutOption = 120.0,
    time_budget: TimeBudgetOption = None,
) -> None:
    """Grade recorded attempts with an LLM judge, one call per criterion, beside the recorded grades."""
    import anyio

    from rubric_audit.judge import grade_runs, judge_slug, load_template
    from rubric_audit.llm import ResponseCache, check_models, default_cache_path
    from rubric_audit.load.benchmark import load_benchmark

    template = load_template(judge_template)
    tasks = {t.id: t for t in load_benchmark(bench).tasks} if bench else None
    config = check_models({"--judge": _model_config(judge, api_base, max_output_tokens,
                                                    call_timeout, judge_mode, time_budget)},
                          structured={"--judge"})["--judge"]
    started = time.monotonic()
    with _GradeProgress(f"grading with {judge}") as progress:
        summary = anyio.run(grade_runs, runs, config, template, tasks,
                            ResponseCache(cache or default_cache_path()), concurrency, progress)
    wall = time.monotonic() - started
    verdicts = ", ".join(f"{v} {k}" for k, v in sorted(summary.verdicts.items())) or "none"
    cost = "unknown" if summary.usage.cost is None else f"${summary.usage.cost:.4f}"
    out.print(f"Graded {summary.completed} attempts with {shown(judge)}, {summary.ungraded} of them "
              f"ungraded until now ({summary.errored} could not be graded: provider unavailable; "
              + (f"{summary.out_of_time} not graded: the time budget was spent; "
                 if summary.out_of_time else "")
              + f"{summary.skipped} skipped: the agent run did not finish). "
              f"Verdicts: {verdicts}. Calls: {summary.calls} ({summary.cached_calls} from cache), "
              f"{summary.usage.total_tokens:,} tokens, cost {cost}.")
    if summary.parse_rate is not None:
        cut = f", {summary.cut_calls} of them cut at the output cap" if summary.cut_calls else ""
        out.print(f"Parsed {pct(summary.parse_rate)} of the judge's replies "
                  f"({summary.verdicts.get('unscored', 0)} unscored{cut}) in "
                  f"{config.structured_mode} mode; longest request "
                  f"{summary.longest_request_seconds:.1f} s (timeout {config.timeout:g} s), "
                  f"wall time {wall:.0f} s.")
    if summary.completed:
        out.print(f"Each graded attempt's grading run is in grades/{shown(judge_slug(judge))}.json "
                  f"beside its recorded grades.json; `audit` or `import` compares them.")


@app.command("regold")
@user_errors
def regold_command(
    bench: BenchArg,
    task: Annotated[str | None, typer.Argument(help="Task id or name (omit with --all).")] = None,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="Override a cell, e.g. 'Assumptions!B9=0.09' (repeatable).")] = None,
    cell: Annotated[list[str] | None, typer.Option(
        help="Also show a cell or expression, e.g. 'DCF!B21' (repeatable).")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every task with a recipe.")] = False,
    findings_out: Annotated[Path | None, typer.Option(
        "--findings", help="With --all: also write the findings to this JSONL file.")] = None,
) -> None:
    """Recompute criterion values from the task's workbook, beside what criteria and gold state."""
    from rubric_audit.load.benchmark import load_benchmark
    from rubric_audit.regold import (
        RecipeError,
        applied_overrides,
        load_recipe,
        recipe_path,
        recompute,
        regold_all,
    )

    benchmark = load_benchmark(bench)
    if all_:
        findings = regold_all(benchmark)
        recipes = sum(recipe_path(benchmark, t).is_file() for t in benchmark.tasks)
        out.print(f"Recomputed {recipes} tasks with a recipe: {len(findings)} findings.")
        for f in findings:
            name = t.name if f.task_id and (t := benchmark.task(f.task_id)) else ""
            out.print(f"  {shown(name)}: [bold]{f.check}[/] {shown(f.message)}")
        if findings_out is not None:
            from rubric_audit.atomic import write_atomic

            write_atomic(findings_out, "".join(f.model_dump_json() + "\n" for f in findings))
        return
    if task is None:
        raise InputError(bench, "TASK", "name a task, or pass --all")
    found = benchmark.task(task)
    if found is None:
        raise InputError(bench, "task", f"no task {task!r} (by id or name)")
    path = recipe_path(benchmark, found)
    extra: dict[str, float | str] = {}
    for item in set_ or []:
        ref, sep, value = item.partition("=")
        if not sep:
            raise InputError("--set", None, f"expected CELL=VALUE, got {item!r}")
        try:
            extra[ref.strip()] = float(value)
        except ValueError:
            extra[ref.strip()] = value.strip()
    if not path.is_file():
        raise InputError(path, None, "no recipe for this task: write one naming its workbook "
                                     "(format in rubric_audit/regold.py)")
    try:
        recipe = load_recipe(path)
        results = recompute(benchmark, found, recipe, path, extra, cell)
    except RecipeError as exc:
        raise InputError(exc.path, f"line {exc.line}" if exc.line else None,
                         exc.problem) from None
    table = Table(title=shown(f"{found.name}: recomputed from {recipe.workbook}"))
    for column in ("criterion", "recomputed", "criterion states", "gold states", "tolerance",
                   "verdict"):
        table.add_column(column, overflow="fold")
    for r in results:
        index = next((str(i) for i, c in enumerate(found.criteria, 1) if c.id == r.criterion_id),
                     r.label)
        verdict = ("match" if r.criterion_matches and r.gold_matches is not False
                   else "MISMATCH" if r.criterion_id else "")
        tolerance = f"{r.tolerance[0]:,.6g} to {r.tolerance[1]:,.6g}" if r.tolerance else ""
        table.add_row(shown(index), f"{r.value:,.6g}",
                      "" if r.criterion_value is None else f"{r.criterion_value:,.6g}",
                      ", ".join(f"{v:,.6g}" for v in r.gold_values), tolerance, verdict)
    out.print(table)
    for ref, value, source in applied_overrides(recipe, extra):
        out.print(f"override {shown(ref)} = {shown(str(value))}  [dim]({shown(source)})[/]")


@app.command("export")
@user_errors
def export_command(
    out_dir: Annotated[Path, typer.Argument(help="An audit's output folder (holds audit.db).")],
    fmt: Annotated[str, typer.Option("--format", help="csv or json.")] = "csv",
) -> None:
    """Write the audit's tables (attempts, grades, measurements, controls, findings, reviews) as
    csv or json."""
    from rubric_audit.frames import export

    written = export(out_dir, fmt)
    out.print(f"Wrote {len(written)} tables to {shown(str(written[0].parent))}/: "
              + ", ".join(p.name for p in written))


@app.command("ablate")
@user_errors
def ablate_command(
    bench: Annotated[Path | None, typer.Argument(help="Benchmark (to run both arms).")] = None,
    compare_arms: Annotated[tuple[Path, Path] | None, typer.Option(
        "--compare", help="Compare two existing variant folders: RUNS_A RUNS_B.")] = None,
    model: Annotated[str | None, typer.Option(help="Agent model (to run both arms).")] = None,
    sentence: Annotated[str | None, typer.Option(
        help="The sentence arm B adds to the system prompt.")] = None,
    judge: Annotated[str | None, typer.Option(help="Judge that grades both arms.")] = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Runs folder for both arms.")
                       ] = None,
    tasks: Annotated[str | None, typer.Option(help="Comma-separated task ids or names.")] = None,
    attempts: Annotated[int, typer.Option(min=1, max=1_000, help="Attempts per task and arm.")] = 1,
    grader: Annotated[str, typer.Option(help="Whose verdicts to compare (with --compare).")
                      ] = "recorded",
    messages_only: Annotated[bool, typer.Option(
        help="Only tasks that need information found only in mail or chat (needs BENCH).")
    ] = False,
    api_base: Annotated[str | None, typer.Option(help="Provider base URL.")] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=MAX_CONCURRENCY)] = 4,
    judge_mode: JudgeModeOption = "auto",
    max_output_tokens: MaxOutputOption = None,
    call_timeout: CallTimeoutOption = 120.0,
    time_budget: TimeBudgetOption = None,
) -> None:
    """Toggle one prompt sentence and measure what it does (paired over tasks)."""
    import anyio

    from rubric_audit.ablation import compare
    from rubric_audit.load.benchmark import load_benchmark

    benchmark = load_benchmark(bench) if bench else None
    known = {t.id: t for t in benchmark.tasks} if benchmark else None
    only = _message_dependent(benchmark) if messages_only and benchmark else None
    if messages_only and benchmark is None:
        raise InputError("--messages-only", None, "needs BENCH to find those tasks")
    if compare_arms is None:
        if not (benchmark and model and sentence and judge and out_dir):
            raise InputError("ablate", None, "give --compare RUNS_A RUNS_B, or BENCH with "
                                             "--model, --sentence, --judge and --out")
        from rubric_audit.llm import check_models

        checked = check_models({
            "--model": _model_config(model, api_base, max_output_tokens, call_timeout,
                                     time_budget=time_budget),
            "--judge": _model_config(judge, api_base, max_output_tokens, call_timeout,
                                     judge_mode, time_budget)}, structured={"--judge"})
        agent, judged_by = checked["--model"], checked["--judge"]
        compare_arms, grader = anyio.run(_run_arms, benchmark, agent, sentence, judged_by, out_dir,
                                         tasks, attempts, concurrency), f"judge:{judge}"
    result = compare(compare_arms[0], compare_arms[1], known, grader, only)
    table = Table(title=f"Ablation over {result.tasks} tasks ({result.grader} verdicts)")
    for column in ("arm", "attempts", "graded", "ungraded", "pass@1 [95% CI]", "opened mail",
                   "chat", "calendar"):
        table.add_column(column)
    for arm in (result.a, result.b):
        i = arm.pass_at_1
        table.add_row(shown(arm.name), str(arm.attempts), str(arm.graded), str(arm.ungraded),
                      f"{pct(i.estimate)} [{pct(i.low)}, {pct(i.high)}]",
                      *(pct(arm.opened[app]) for app in ("mail", "chat", "calendar")))
    out.print(table)
    d = result.difference
    out.print(f"A - B in pass@1: {pct(d.estimate)} [{pct(d.low)}, {pct(d.high)}] "
              f"({d.method}, seed {result.seed}).")
    if result.warning:
        out.print(f"[yellow]Warning:[/yellow] {shown(result.warning)}.")


def _message_dependent(benchmark: Benchmark) -> set[str]:
    from rubric_audit.checks.lints import task_depends_on_messages
    from rubric_audit.load.world import load_task_world

    return {t.id for t in benchmark.tasks
            if any(task_depends_on_messages(t, load_task_world(benchmark, t)))}


async def _run_arms(benchmark: Benchmark, agent: ModelConfig, sentence: str, judge: ModelConfig,
                    out_dir: Path, tasks: str | None, attempts: int,
                    concurrency: int) -> tuple[Path, Path]:
    """Run and judge both arms; returns (the arm with the sentence, the base arm), so that A - B
    is what the sentence does."""
    from rubric_audit.judge import grade_runs, load_template
    from rubric_audit.llm import ResponseCache, default_cache_path
    from rubric_audit.runner import Budget, Runner, select_tasks
    from rubric_audit.variants import claim_variant, make_variant

    chosen = select_tasks(benchmark, tasks.split(",") if tasks else None, None, 0)
    folders = []
    for added in ([], [sentence]):
        spec = make_variant(agent.model, None, None, added, [])
        claim_variant(out_dir, spec)
        runner = Runner(benchmark, out_dir, spec, agent, Budget())
        runner.clear_partials()
        todo, _ = runner.plan(chosen, attempts)
        await runner.run(todo, concurrency)
        folders.append(runner.folder)
    await grade_runs(folders, judge, load_template(None),
                     {t.id: t for t in benchmark.tasks}, ResponseCache(default_cache_path()),
                     concurrency)
    return folders[1], folders[0]


@app.command("review")
@user_errors
def review_command(
    out_dir: Annotated[Path, typer.Argument(help="An audit's output folder (holds audit.db).")],
    reviewer: Annotated[str, typer.Option(help="Your name in the review log.")] = "reviewer",
    keymap: Annotated[Path | None, typer.Option(
        help="TOML file with a [keys] table: binding id = key.")] = None,
    per_domain: Annotated[int, typer.Option(min=1, max=100_000,
                                            help="Pass-audit sample per domain.")] = 5,
    seed: Annotated[int, typer.Option(min=0, max=MAX_SEED,
                                      help="Seed of the pass-audit sample (stored).")] = 0,
) -> None:
    """Review failures and a sample of passes in a terminal app (labels go to audit.db)."""
    from rubric_audit.review_session import ReviewData
    from tui.app import ReviewApp, load_keymap

    keys = load_keymap(keymap)  # refused before the store is opened
    data = ReviewData(out_dir, reviewer, per_domain, seed)
    try:
        ReviewApp(data, keys).run()
    finally:
        data.close()


@app.command("reviews")
@user_errors
def reviews_command(
    out_dir: Annotated[Path, typer.Argument(help="An audit's output folder (holds audit.db).")],
    export: Annotated[str, typer.Option(help="csv or json.")] = "csv",
) -> None:
    """Export every reviewer's current labels with their notes, Cohen's kappa for every pair
    of reviewers and Fleiss' kappa for all, over failures and passes apart, and the tasks
    where reviewers disagree."""
    from rubric_audit.agreement import describe
    from rubric_audit.review_session import ReviewData

    if export not in ("csv", "json"):
        raise InputError("--export", None, f"expected csv or json, got {export!r}")
    data = ReviewData(out_dir, "export")
    try:
        rows, agreements = data.label_rows(), data.agreements()
        written = data.write_reviews(out_dir, export, rows, agreements)
    finally:
        data.close()
    out.print(f"Wrote {', '.join(shown(str(p)) for p in written)}: {len(rows)} labels.")
    for group in agreements.values():
        out.print(shown(describe(group)))
        for d in group.disagreements:
            out.print(shown(f"  {d.task}: " + ", ".join(f"{r} {label}"
                                                          for r, label in d.labels.items())))


@app.command("suggest")
@user_errors
def suggest_command(
    out_dir: Annotated[Path, typer.Argument(help="An audit's output folder (holds audit.db).")],
    model: Annotated[str, typer.Option(help="litellm model that proposes labels.")],
    api_base: Annotated[str | None, typer.Option(help="Provider base URL.")] = None,
    max_output_tokens: MaxOutputOption = None,
    call_timeout: CallTimeoutOption = 120.0,
    time_budget: TimeBudgetOption = None,
) -> None:
    """Have a model propose a label, with reasons, for each queued task (shown, never applied)."""
    import anyio

    from rubric_audit.llm import check_models
    from rubric_audit.review_session import ReviewData
    from rubric_audit.suggest import suggest
    from tui.render import triage_text

    config = check_models({"--model": _model_config(model, api_base, max_output_tokens,
                                                    call_timeout, time_budget=time_budget)},
                          structured={"--model"})["--model"]
    data = ReviewData(out_dir, "suggest")
    try:
        made, unusable, failed = anyio.run(suggest, data, config, triage_text)
    finally:
        data.close()
    out.print(f"Stored {made} suggestions from {shown(model)}"
              + (f"; {unusable} replies unusable (did not parse, or named a label the task does "
                 f"not offer)" if unusable else "")
              + (f"; {failed} tasks got none (provider unavailable)." if failed else "."))
