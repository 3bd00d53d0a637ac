"""The LLM judge: one structured call per criterion, from a template, through the model door.

The judge sees the task prompt, the agent's final answer and its artifacts, and the
criterion; never the gold. A reply that stays unparseable is `unscored`, not `fail`; a provider
that stays down leaves the attempt as it was (not graded by that judge) and writes nothing. Each
completed grading run is written beside the recorded one as `grades/<judge>.json` in the
Archipelago grades format, so recorded verdicts are kept and the two can be compared.
"""

from __future__ import annotations

import hashlib
import re
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any, Literal, Protocol

import anyio
from pydantic import BaseModel, Field

from rubric_audit.core.atomic import write_atomic
from rubric_audit.core.batch import POLL_SECONDS, BatchCall, BatchOutcome, BatchReply, structured_batch
from rubric_audit.core.errors import InputError, read_text
from rubric_audit.core.llm import (
    BUDGET_SPENT,
    BudgetSpent,
    ModelConfig,
    ModelUnavailable,
    ResponseCache,
    Structured,
    structured,
)
from rubric_audit.core.model import Attempt, Task, Usage
from rubric_audit.load.snapshots import read_artifacts, shown_name
from rubric_audit.load.world import file_text

PLACEHOLDERS = ("prompt", "answer", "artifacts", "criterion")
MAX_ARTIFACT_CHARS = 20_000


class JudgeVerdict(BaseModel):
    rationale: str = Field(description="Short reasoning quoting the evidence.")
    verdict: Literal["pass", "fail"]


class JudgeTemplate(BaseModel):
    name: str
    text: str

    @property
    def sha(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:12]


class GradingRun(BaseModel):
    """A judge's grading of one attempt, in the Archipelago grades.json shape plus our fields."""

    grading_run_id: str
    grading_run_status: Literal["completed", "error"]
    judge_model: str
    template: str
    template_sha: str
    error: str | None = None
    verifier_results: list[dict[str, Any]] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage.zero)
    calls: int = 0
    cached_calls: int = 0
    structured_mode: str | None = None
    cut_calls: int = 0
    longest_request_seconds: float = 0.0


class GradeProgress(Protocol):
    """Told of a grading's calls as they end (the command line's progress)."""

    def planned(self, calls: int) -> None: ...

    def called(self, parsed: bool, tokens: int) -> None: ...


def load_template(path: Path | None) -> JudgeTemplate:
    """Ours by default; a benchmark's own with `$prompt`, `$answer`, `$artifacts`, `$criterion`."""
    if path is None:
        text = resources.files("rubric_audit.grade").joinpath("judge_templates/default.md").read_text()
        return JudgeTemplate(name="default", text=text)
    text = read_text(Path(path))
    missing = [p for p in ("prompt", "answer", "criterion") if f"${p}" not in text]
    if missing:
        raise InputError(path, None, f"template lacks "
                                     f"{', '.join('$' + m for m in missing)}")
    return JudgeTemplate(name=Path(path).stem, text=text)


def artifacts_text(attempt: Attempt) -> str:
    """The attempt's artifacts as text (exported files, sent mail, calendar and chat changes,
    or the workspace snapshot's changed files), capped."""
    parts = []
    for name, data in read_artifacts(Path(attempt.source), attempt.artifacts).items():
        shown = shown_name(name)
        try:
            text = file_text(shown, data)
        except InputError:
            text = None
        if text is None:
            text = _plain_text(data)
        parts.append(f"### {shown}\n{text if text is not None else '(binary file)'}")
    joined = "\n\n".join(parts)
    if len(joined) > MAX_ARTIFACT_CHARS:
        joined = joined[:MAX_ARTIFACT_CHARS] + "\n[... truncated]"
    return joined or "(none)"


def _plain_text(data: bytes) -> str | None:
    """A file of no known text format that is UTF-8 text all the same (a script, a log)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\0" in text else text


def judge_messages(template: JudgeTemplate, task: Task, criterion: str, answer: str | None,
                   artifacts: str) -> list[dict[str, Any]]:
    content = Template(template.text).safe_substitute(
        prompt=task.prompt, answer=answer if answer and answer.strip() else "(no answer)",
        artifacts=artifacts, criterion=criterion)
    return [{"role": "user", "content": content}]


def judge_slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-")


async def grade_attempt(config: ModelConfig, template: JudgeTemplate, task: Task,
                        attempt: Attempt, cache: ResponseCache | None,
                        limiter: anyio.CapacityLimiter,
                        progress: GradeProgress | None = None) -> GradingRun:
    """Judge every criterion of one attempt (calls run concurrently under `limiter`). A reply
    that stays unparseable, or runs into the output cap, is that criterion's `unscored` verdict
    with the reason as its rationale."""
    artifacts = artifacts_text(attempt)

    async def one(criterion_id: str, text: str) -> None:
        async with limiter:
            try:
                reply = await structured(config, judge_messages(
                    template, task, text, attempt.answer, artifacts), JudgeVerdict, cache)
            except ModelUnavailable as exc:
                replies[criterion_id] = exc
                return
        if progress is not None:
            progress.called(reply.value is not None, reply.usage.total_tokens or 0)
        replies[criterion_id] = reply

    replies: dict[str, Structured[JudgeVerdict] | ModelUnavailable] = {}
    async with anyio.create_task_group() as group:
        for c in task.criteria:
            group.start_soon(one, c.id, c.text)
    return grading_run(config, template, task, replies)


def new_grading_run(config: ModelConfig, template: JudgeTemplate) -> GradingRun:
    return GradingRun(grading_run_id=f"gr_{judge_slug(config.model)}_{template.sha}",
                      grading_run_status="completed", judge_model=config.model,
                      template=template.name, template_sha=template.sha,
                      structured_mode=config.structured_mode)


def grading_run(config: ModelConfig, template: JudgeTemplate, task: Task,
                replies: dict[str, Structured[JudgeVerdict] | ModelUnavailable]) -> GradingRun:
    """One attempt's grading run from its criteria's replies (by criterion id): an error when
    the provider could not answer one of them, else each reply's verdict, a reply that stayed
    unparseable or was cut being that criterion's `unscored`."""
    run = new_grading_run(config, template)
    results: dict[str, dict[str, Any]] = {}
    for criterion_id, reply in replies.items():
        if isinstance(reply, ModelUnavailable):
            continue
        run.longest_request_seconds = max(run.longest_request_seconds,
                                          reply.longest_request_seconds)
        run.calls += 1
        run.cached_calls += reply.cached
        run.cut_calls += reply.cut
        run.usage = run.usage.plus(reply.usage)
        verdict = reply.value.verdict if reply.value else None
        results[criterion_id] = {
            "verifier_id": criterion_id, "status": "ok" if verdict else "unscored",
            "score": None if verdict is None else float(verdict == "pass"),
            "verifier_result_values": {
                "judge_grade": verdict,
                "grade_rationale": reply.value.rationale if reply.value
                else f"{'judge reply cut' if reply.cut else 'unparseable judge reply'}: "
                     f"{reply.error}"}}
    failures = [r.reason for r in replies.values() if isinstance(r, ModelUnavailable)]
    if failures:
        run.grading_run_status, run.error = "error", failures[0]
        return run
    run.verifier_results = [results[c.id] for c in task.criteria]
    return run


class GradeSummary(BaseModel):
    """What a grading run did: attempts seen, graded (`ungraded` of them had no grade before),
    failed (the provider unavailable), left when the time budget ended, and skipped because
    their agent run did not finish; the verdicts, the replies cut at the output cap, the
    structured mode and the longest request (each bounded by the timeout)."""

    attempts: int = 0
    completed: int = 0
    ungraded: int = 0
    errored: int = 0
    out_of_time: int = 0
    skipped: int = 0
    verdicts: dict[str, int] = Field(default_factory=dict)
    calls: int = 0
    cached_calls: int = 0
    cut_calls: int = 0
    usage: Usage = Field(default_factory=Usage.zero)
    structured_mode: str | None = None
    longest_request_seconds: float = 0.0
    batches: list[BatchOutcome] = Field(default_factory=list)

    @property
    def parse_rate(self) -> float | None:
        """The share of verdicts that parsed (pass or fail, not unscored)."""
        total = sum(self.verdicts.values())
        return None if not total else (total - self.verdicts.get("unscored", 0)) / total


def write_grading_run(attempt: Attempt, run: GradingRun) -> Path:
    """`grades/<judge>.json` in the attempt folder, written atomically."""
    folder = Path(attempt.source) / "grades"
    folder.mkdir(exist_ok=True)
    path = folder / f"{judge_slug(run.judge_model)}.json"
    write_atomic(path, run.model_dump_json(indent=2) + "\n")
    return path


def gradable(run_paths: list[Path], tasks: dict[str, Task] | None, config: ModelConfig,
             progress: GradeProgress | None) -> tuple[list[Attempt], dict[str, Task], GradeSummary]:
    """The attempts under `run_paths` a judge grades (those whose agent run finished, of a known
    task), the tasks they belong to, and the summary a grading pass fills in (the attempts read,
    those left out); `progress` is told how many criteria there are to grade."""
    from rubric_audit.load.runs import UNFINISHED, load_runs

    runs = load_runs(run_paths)
    known = tasks if tasks is not None else runs.tasks
    graded = [a for a in runs.attempts
              if a.agent_status not in UNFINISHED and a.task_id in known]
    summary = GradeSummary(structured_mode=config.structured_mode, attempts=len(runs.attempts),
                           skipped=len(runs.attempts) - len(graded))
    if progress is not None:
        progress.planned(sum(len(known[a.task_id].criteria) for a in graded))
    return graded, known, summary


def record_grading(summary: GradeSummary, attempt: Attempt, run: GradingRun) -> None:
    """Write a completed grading run beside the attempt and count it; an errored one writes
    nothing and counts as failed (or out of time)."""
    summary.longest_request_seconds = max(summary.longest_request_seconds,
                                          run.longest_request_seconds)
    if run.grading_run_status == "error":
        if run.error == BUDGET_SPENT:
            summary.out_of_time += 1
        else:
            summary.errored += 1
        return
    write_grading_run(attempt, run)
    summary.completed += 1
    summary.ungraded += attempt.state == "ungraded"
    summary.calls += run.calls
    summary.cached_calls += run.cached_calls
    summary.cut_calls += run.cut_calls
    summary.usage = summary.usage.plus(run.usage)
    for result in run.verifier_results:
        verdict = result["verifier_result_values"]["judge_grade"] or "unscored"
        summary.verdicts[verdict] = summary.verdicts.get(verdict, 0) + 1


async def grade_runs(run_paths: list[Path], config: ModelConfig, template: JudgeTemplate,
                     tasks: dict[str, Task] | None, cache: ResponseCache | None,
                     concurrency: int, progress: GradeProgress | None = None) -> GradeSummary:
    """Judge every attempt under `run_paths` whose agent run finished: the ungraded ones, the
    graded ones again (beside their recorded grades), and those unavailable only because their
    grading failed; never one whose run did not finish (Archipelago's `UNFINISHED` statuses).

    Callers check the judge first (llm.check_models). An attempt the provider fails on gets no
    file, so nothing is written when grading fails and an earlier grading run is never replaced
    by a failed one.
    """
    graded, known, summary = gradable(run_paths, tasks, config, progress)
    limiter = anyio.CapacityLimiter(concurrency)

    async def one(attempt: Attempt) -> None:
        record_grading(summary, attempt, await grade_attempt(
            config, template, known[attempt.task_id], attempt, cache, limiter, progress))

    async with anyio.create_task_group() as group:
        for attempt in graded:
            group.start_soon(one, attempt)
    return summary


def batch_ledger(run_path: Path, config: ModelConfig) -> Path:
    """Where `grade --batch` records the batches it submitted for the attempts under a runs
    folder, until it has collected them."""
    return Path(run_path) / f"judge-batches-{judge_slug(config.model)}.json"


def _call_id(attempt: Attempt, criterion_id: str) -> str:
    return hashlib.sha256(f"{attempt.id}\0{criterion_id}".encode()).hexdigest()[:32]


async def grade_runs_batch(run_paths: list[Path], config: ModelConfig, template: JudgeTemplate,
                           tasks: dict[str, Task] | None, cache: ResponseCache | None,
                           concurrency: int, progress: GradeProgress | None = None,
                           poll: float = POLL_SECONDS) -> GradeSummary:
    """`grade_runs` through the provider's batch API: the calls for the attempts under each runs
    folder go in one batch (`core.batch.structured_batch`), recorded in the folder's ledger
    (`batch_ledger`) so that a later call resumes or collects it rather than submitting again;
    the grade files written are the same. Calls the batch failed are made again one by one, and
    an attempt with a call the provider still cannot answer is left as it was (unavailable to
    this judge), never failed. A batch still running when the time budget ends leaves its
    attempts out of time and its ledger for the next call."""
    graded, known, summary = gradable(run_paths, tasks, config, progress)
    left = {a.id: a for a in graded}
    for path in run_paths:
        root = Path(path).resolve()
        mine = [a for a in left.values() if Path(a.source).resolve().is_relative_to(root)]
        for attempt in mine:
            del left[attempt.id]
        calls = [BatchCall(custom_id=_call_id(a, c.id), messages=judge_messages(
                     template, known[a.task_id], c.text, a.answer, artifacts))
                 for a in mine for artifacts in [artifacts_text(a)]
                 for c in known[a.task_id].criteria]
        if not calls:
            continue

        def told(_: str, reply: BatchReply[JudgeVerdict]) -> None:
            if progress is not None and not isinstance(reply, ModelUnavailable):
                progress.called(reply.value is not None, reply.usage.total_tokens or 0)

        try:
            replies, outcome = await structured_batch(
                config, calls, JudgeVerdict, cache, batch_ledger(path, config), concurrency,
                poll, told)
        except BudgetSpent:
            summary.out_of_time += len(mine)
            continue
        except ModelUnavailable as exc:  # the batch could not be submitted or followed
            replies, outcome = {c.custom_id: exc for c in calls}, BatchOutcome()
        summary.batches.append(outcome)
        for attempt in mine:
            task = known[attempt.task_id]
            record_grading(summary, attempt, grading_run(config, template, task, {
                c.id: replies[_call_id(attempt, c.id)] for c in task.criteria}))
    return summary
