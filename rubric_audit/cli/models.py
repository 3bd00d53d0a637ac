"""Commands that call models: run an agent, grade with a judge, measure a prompt sentence."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from rubric_audit.cli.common import (
    MAX_CONCURRENCY,
    MAX_SEED,
    BatchOption,
    BenchArg,
    CallTimeoutOption,
    JsonOption,
    JudgeModeOption,
    MaxOutputOption,
    RayAddressOption,
    RayOption,
    TimeBudgetOption,
    app,
    err,
    model_config,
    out,
    print_json,
    user_errors,
)
from rubric_audit.core.errors import InputError
from rubric_audit.core.text import console as shown
from rubric_audit.core.words import pct

if TYPE_CHECKING:
    from rubric_audit.core.llm import ModelConfig
    from rubric_audit.core.model import Benchmark
    from rubric_audit.run.runner import AttemptResult


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
    shard: Annotated[str | None, typer.Option(
        help="K/N: run only the attempts a stable hash of task and attempt gives shard K of N, "
             "into OUT/shard-K-of-N/ (import or audit the shards' folders together).")] = None,
    ray: RayOption = False,
    ray_address: RayAddressOption = None,
) -> None:
    """Run an agent (any litellm model) on the benchmark's tasks through the workspace."""
    from rubric_audit.cli.progress import CommandProgress
    from rubric_audit.core.llm import check_models
    from rubric_audit.load.benchmark import load_benchmark
    from rubric_audit.review.labels import all_failed_tasks
    from rubric_audit.run.runner import Budget, Runner, select_tasks
    from rubric_audit.run.shard import Shard
    from rubric_audit.run.variants import check_variant, claim_variant, make_variant
    from rubric_audit.store.audit_store import open_audit

    if tasks and sample:
        raise InputError("--tasks", None, "give --tasks or --sample, not both")
    part = Shard.parse(shard) if shard is not None else None
    if part is not None and rerun_failures is not None:
        raise InputError("--shard", None, "give --shard or --rerun-failures, not both (a "
                                          "shard does not see the others' attempts)")
    out_dir = part.folder(out_dir) if part is not None else out_dir
    ray = ray or ray_address is not None
    if ray and processes > 1:
        raise InputError("--ray", None, "give --ray or --processes, not both (Ray runs the "
                                        "attempts on every CPU of the cluster)")
    if ray:
        from rubric_audit.core.cluster import ray_module

        ray_module()  # installed, or one line before anything is written
    benchmark = load_benchmark(bench)
    chosen = select_tasks(benchmark, tasks.split(",") if tasks else None, sample, seed)
    spec = make_variant(model, variant, system_prompt, add_sentence or [], drop_sentence or [])
    config = model_config(model, api_base, max_output_tokens, call_timeout,
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
        todo, done = runner.plan(chosen, attempts, part)
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

        if ray:
            from rubric_audit.run.ray_runner import run_on_ray

            run_on_ray(runner, todo, concurrency, ray_address, done_one)
        else:
            runner.run_in_processes(todo, concurrency, processes, done_one)
    summary = ", ".join(f"{v} {k}" for k, v in sorted(states.items())) or "nothing to run"
    out.print(f"Done: {summary}. Runs in {shown(str(out_dir / spec.name))}/ (grade them with a "
              f"judge before they count as graded attempts).")


class _GradeProgress:
    """A grading's progress on stderr: its calls, parsed and unscored, and tokens."""

    def __init__(self, label: str) -> None:
        from rubric_audit.cli.progress import CommandProgress

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
    batch: BatchOption = False,
    batch_poll: Annotated[float, typer.Option(
        min=0.1, max=3_600, help="Seconds between checks of a batch's status (with --batch).")
    ] = 30.0,
    ray: RayOption = False,
    ray_address: RayAddressOption = None,
) -> None:
    """Grade recorded attempts with an LLM judge, one call per criterion, beside the recorded grades."""
    import anyio

    from rubric_audit.core.llm import ResponseCache, check_models, default_cache_path
    from rubric_audit.grade.judge import grade_runs, grade_runs_batch, judge_slug, load_template
    from rubric_audit.load.benchmark import load_benchmark

    if ray or ray_address is not None:
        from rubric_audit.core.cluster import ray_module

        ray_module()  # installed, or one line before any work
    template = load_template(judge_template)
    tasks = {t.id: t for t in load_benchmark(bench).tasks} if bench else None
    config = check_models({"--judge": model_config(judge, api_base, max_output_tokens,
                                                    call_timeout, judge_mode, time_budget)},
                          structured={"--judge"})["--judge"]
    started = time.monotonic()
    with _GradeProgress(f"grading with {judge}") as progress:
        responses = ResponseCache(cache or default_cache_path())
        if ray or ray_address is not None:
            from rubric_audit.grade.ray_grade import grade_on_ray

            summary = grade_on_ray(runs, config, template, tasks, concurrency, ray_address,
                                   progress)
        elif batch:
            summary = anyio.run(grade_runs_batch, runs, config, template, tasks, responses,
                                concurrency, progress, batch_poll)
        else:
            summary = anyio.run(grade_runs, runs, config, template, tasks, responses,
                                concurrency, progress)
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
    for outcome in summary.batches:
        if outcome.batch_id is not None:
            out.print(f"Batch {shown(outcome.batch_id)} ({'resumed, ' if outcome.resumed else ''}"
                      f"{outcome.status}): {outcome.from_batch} replies from it, "
                      f"{outcome.retried} calls made again one by one.")
    if batch and summary.out_of_time:
        out.print("The time budget ended before a batch did: it stays recorded beside the runs "
                  "(judge-batches-*.json), and `grade --batch` again collects it.")
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
    as_json: JsonOption = False,
) -> None:
    """Toggle one prompt sentence and measure what it does (paired over tasks)."""
    import anyio

    from rubric_audit.load.benchmark import load_benchmark
    from rubric_audit.report.ablation import compare

    benchmark = load_benchmark(bench) if bench else None
    known = {t.id: t for t in benchmark.tasks} if benchmark else None
    only = _message_dependent(benchmark) if messages_only and benchmark else None
    if messages_only and benchmark is None:
        raise InputError("--messages-only", None, "needs BENCH to find those tasks")
    if compare_arms is None:
        if not (benchmark and model and sentence and judge and out_dir):
            raise InputError("ablate", None, "give --compare RUNS_A RUNS_B, or BENCH with "
                                             "--model, --sentence, --judge and --out")
        from rubric_audit.core.llm import check_models

        checked = check_models({
            "--model": model_config(model, api_base, max_output_tokens, call_timeout,
                                     time_budget=time_budget),
            "--judge": model_config(judge, api_base, max_output_tokens, call_timeout,
                                     judge_mode, time_budget)}, structured={"--judge"})
        agent, judged_by = checked["--model"], checked["--judge"]
        compare_arms, grader = anyio.run(_run_arms, benchmark, agent, sentence, judged_by, out_dir,
                                         tasks, attempts, concurrency), f"judge:{judge}"
    result = compare(compare_arms[0], compare_arms[1], known, grader, only)
    if as_json:
        print_json(result)
        return
    table = Table(title=f"Ablation over {result.tasks} tasks ({shown(result.grader)} verdicts)")
    for column in ("arm", "attempts", "graded", "ungraded", "pass@1 (95% CI)", "opened mail",
                   "chat", "calendar"):
        table.add_column(column)
    for arm in (result.a, result.b):
        i = arm.pass_at_1
        table.add_row(shown(arm.name), str(arm.attempts), str(arm.graded), str(arm.ungraded),
                      f"{pct(i.estimate)} ({pct(i.low)} to {pct(i.high)})",
                      *(pct(arm.opened[app]) for app in ("mail", "chat", "calendar")))
    out.print(table)
    d = result.difference
    excludes = d.low is not None and d.high is not None and (d.low > 0 or d.high < 0)
    name_a, name_b = _told_apart(result.a.name, result.b.name)
    out.print(f"{shown(name_a)} − {shown(name_b)}: {_points(d.estimate)} pp "
              f"[{_points(d.low)}, {_points(d.high)}] in pass@1; the interval "
              + ("excludes 0" if excludes else "includes 0: no difference shown")
              + f" ({d.method}, seed {result.seed}).")
    if result.discordant:
        out.print(f"Discordant tasks ({shown(result.b.name)} → {shown(result.a.name)}): "
                  + "; ".join(f"{shown(c.task)} {c.change}"
                              + ("" if c.change.endswith("pass") or c.change.endswith("fail")
                                 else f" ({pct(c.b)} → {pct(c.a)})")
                              for c in result.discordant) + ".")
    else:
        out.print("No task changed outcome between the arms.")
    by_reason: dict[str, list[str]] = {}
    for dropped in result.dropped:
        by_reason.setdefault(dropped.reason, []).append(dropped.task)
    for reason, names in by_reason.items():
        listed = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        out.print(f"Left out: {len(names)} task{'s' if len(names) != 1 else ''} "
                  f"{shown(reason)}: {shown(listed)}.")
    for change in result.prompt_changes:
        for verb, said in (("adds", change.added), ("drops", change.dropped)):
            if said:
                on = f" on {change.tasks} of {result.tasks} tasks" if change.tasks else ""
                shown_sentences = "; ".join(repr(s[:120]) for s in said[:3])
                more = f" and {len(said) - 3} more" if len(said) > 3 else ""
                out.print(f"Prompt: {shown(change.arm)}'s {change.where} {verb} "
                          f"{len(said)} sentence{'s' if len(said) != 1 else ''}{on}: "
                          f"{shown(shown_sentences)}{shown(more)}.")
    for warning in result.warnings:
        out.print(f"[yellow]Warning:[/yellow] {shown(warning)}.")


def _points(share: float | None) -> str:
    """A difference of shares in percentage points, signed: +18.2, 0.0, −9.1."""
    if share is None:
        return "n/a"
    points = round(share * 100, 1)
    return "0.0" if points == 0 else f"{'+' if points > 0 else '−'}{abs(points):.1f}"


def _told_apart(a: str, b: str) -> tuple[str, str]:
    """Two arms' names without the start they share up to a - or _ (grok43high-dc-rs and
    grok43high-baseline are dc-rs and baseline), where both keep a name."""
    shared = 0
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            break
        if x in "-_":
            shared = i + 1
    return (a[shared:], b[shared:]) if a[shared:] and b[shared:] else (a, b)


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
    from rubric_audit.core.llm import ResponseCache, default_cache_path
    from rubric_audit.grade.judge import grade_runs, load_template
    from rubric_audit.run.runner import Budget, Runner, select_tasks
    from rubric_audit.run.variants import claim_variant, make_variant

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
