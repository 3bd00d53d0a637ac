"""Grading controls: every control in code, and by the judge (with repeats) when one is given.

Also asks a model, when one is given, for near misses and adversarial answers of its own.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import anyio
from pydantic import BaseModel

from rubric_audit.checks.controls import code_grade_control
from rubric_audit.core.batch import BatchCall, BatchReply, structured_batch
from rubric_audit.core.llm import ModelConfig, ModelUnavailable, ResponseCache, structured
from rubric_audit.core.model import Control, ControlGrade, CriterionGrade, Task
from rubric_audit.grade.judge import JudgeTemplate, JudgeVerdict, judge_messages


def code_controls(tasks: dict[str, Task], controls: list[Control]) -> list[ControlGrade]:
    return [ControlGrade(grade=g, task_version=c.task_version)
            for c in controls for g in code_grade_control(tasks[c.task_id], c)]


async def judge_controls(config: ModelConfig, template: JudgeTemplate, tasks: dict[str, Task],
                         controls: list[Control], cache: ResponseCache | None, repeats: int,
                         concurrency: int, batch_ledger: Path | None = None
                         ) -> tuple[list[ControlGrade], list[str]]:
    """The judge's verdicts on every control, `repeats` times each; plus provider failures.
    With `batch_ledger`, the calls go through the provider's batch API (recorded there until
    collected: `core.batch.structured_batch`), else one by one, `concurrency` at a time."""
    calls = {hashlib.sha256(f"{control.id}\0{criterion.id}\0{repeat}".encode()).hexdigest()[:32]:
             (control, criterion.id, repeat, BatchCall(
                 custom_id="", sample=repeat, messages=judge_messages(
                     template, tasks[control.task_id], criterion.text, control.answer, "(none)")))
             for control in controls for criterion in tasks[control.task_id].criteria
             for repeat in range(repeats)}
    replies: dict[str, BatchReply[JudgeVerdict]] = {}
    if batch_ledger is not None:
        try:
            replies, _ = await structured_batch(
                config, [call.model_copy(update={"custom_id": key})
                         for key, (*_, call) in calls.items()],
                JudgeVerdict, cache, batch_ledger, concurrency)
        except ModelUnavailable as exc:  # not submitted, or the time budget ended first
            replies = dict.fromkeys(calls, exc)
    else:
        limiter = anyio.CapacityLimiter(concurrency)

        async def one(key: str, call: BatchCall) -> None:
            async with limiter:
                try:
                    replies[key] = await structured(config, call.messages, JudgeVerdict, cache,
                                                    sample=call.sample)
                except ModelUnavailable as exc:
                    replies[key] = exc

        async with anyio.create_task_group() as group:
            for key, (*_, call) in calls.items():
                group.start_soon(one, key, call)
    grader = f"judge:{config.model}"
    out: list[ControlGrade] = []
    failures: list[str] = []
    for key, (control, criterion_id, repeat, _) in calls.items():
        reply = replies[key]
        if isinstance(reply, ModelUnavailable):
            failures.append(reply.reason)
            continue
        out.append(ControlGrade(grade=CriterionGrade(
            attempt_id=control.id, criterion_id=criterion_id, grader=grader,
            verdict=reply.value.verdict if reply.value else "unscored",
            rationale=reply.value.rationale if reply.value else f"unparseable: {reply.error}"),
            repeat=repeat, task_version=control.task_version))
    return out, failures


class WrittenControls(BaseModel):
    near_miss: str
    adversarial: str


NEAR_MISS_PROMPT = """You help audit a benchmark task. Below are the task, its rubric and its gold
answer. Write two answers:
1. near_miss: an answer that looks right and reads like the gold but is wrong on one thing the
   rubric checks (a value slightly off, a required item missing, a conclusion reversed).
2. adversarial: an answer written to satisfy the rubric's wording while failing what the task
   actually asks (for example stating every value the rubric names while answering another
   question, or hedging across options).

## Task
{prompt}

## Rubric
{rubric}

## Gold answer
{gold}
"""


async def model_controls(config: ModelConfig, tasks: list[Task],
                         cache: ResponseCache | None) -> tuple[list[Control], list[str]]:
    """A model-written near miss and adversarial answer per task with a gold."""
    out: list[Control] = []
    failures: list[str] = []

    async def one(task: Task) -> None:
        rubric = "\n".join(f"- {c.text}" for c in task.criteria)
        content = NEAR_MISS_PROMPT.format(prompt=task.prompt, rubric=rubric,
                                          gold=task.gold.text if task.gold else "")
        try:
            reply = await structured(config, [{"role": "user", "content": content}],
                                     WrittenControls, cache)
        except ModelUnavailable as exc:
            failures.append(exc.reason)
            return
        if reply.value is None:
            return
        for kind, answer in (("model_near_miss", reply.value.near_miss),
                             ("adversarial", reply.value.adversarial)):
            out.append(Control(id=f"{task.id}:{kind}", task_id=task.id,
                               task_version=task.version(), kind=kind, answer=answer,
                               expect="fail"))

    async with anyio.create_task_group() as group:
        for task in tasks:
            if task.gold is not None and task.gold.text.strip():
                group.start_soon(one, task)
    return out, failures
