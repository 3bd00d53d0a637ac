"""Grading controls: every control in code, and by the judge (with repeats) when one is given.

Also asks a model, when one is given, for near misses and adversarial answers of its own.
"""

from __future__ import annotations

import anyio
from pydantic import BaseModel

from rubric_audit.checks.controls import code_grade_control
from rubric_audit.core.llm import ModelConfig, ModelUnavailable, ResponseCache, structured
from rubric_audit.core.model import Control, ControlGrade, CriterionGrade, Task
from rubric_audit.grade.judge import JudgeTemplate, JudgeVerdict, judge_messages


def code_controls(tasks: dict[str, Task], controls: list[Control]) -> list[ControlGrade]:
    return [ControlGrade(grade=g, task_version=c.task_version)
            for c in controls for g in code_grade_control(tasks[c.task_id], c)]


async def judge_controls(config: ModelConfig, template: JudgeTemplate, tasks: dict[str, Task],
                         controls: list[Control], cache: ResponseCache | None, repeats: int,
                         concurrency: int) -> tuple[list[ControlGrade], list[str]]:
    """The judge's verdicts on every control, `repeats` times each; plus provider failures."""
    grader = f"judge:{config.model}"
    limiter = anyio.CapacityLimiter(concurrency)
    out: list[ControlGrade] = []
    failures: list[str] = []

    async def one(control: Control, criterion_id: str, text: str, repeat: int) -> None:
        task = tasks[control.task_id]
        async with limiter:
            try:
                reply = await structured(config, judge_messages(template, task, text,
                                                                control.answer, "(none)"),
                                         JudgeVerdict, cache, sample=repeat)
            except ModelUnavailable as exc:
                failures.append(exc.reason)
                return
        verdict = reply.value.verdict if reply.value else "unscored"
        rationale = reply.value.rationale if reply.value else f"unparseable: {reply.error}"
        out.append(ControlGrade(grade=CriterionGrade(
            attempt_id=control.id, criterion_id=criterion_id, grader=grader, verdict=verdict,
            rationale=rationale), repeat=repeat, task_version=control.task_version))

    async with anyio.create_task_group() as group:
        for control in controls:
            for criterion in tasks[control.task_id].criteria:
                for repeat in range(repeats):
                    group.start_soon(one, control, criterion.id, criterion.text, repeat)
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
