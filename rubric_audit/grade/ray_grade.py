"""`grade --ray`: each attempt's judge calls on a Ray actor, the grade files written by the
driver as a local grading writes them (`judge.record_grading`).

The judge's settings, template and tasks go in Ray's object store once; one actor per CPU of
the cluster grades the attempts it is given (`judge.grade_attempt`), reading each attempt's
artifacts from its folder (a path every node sees: a shared file system), while the driver
keeps at most `concurrency` attempts in flight and the governor (`core.cluster`) paces the
model calls of all actors per provider and key. The actors keep no response cache (the cache is
a file on the driver's machine).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio

from rubric_audit.core import llm
from rubric_audit.core.cluster import (
    RayGate,
    connect,
    governor,
    provider_environment,
    worker_count,
)
from rubric_audit.core.llm import ModelConfig
from rubric_audit.core.model import Attempt, Task
from rubric_audit.grade.judge import (
    GradeProgress,
    GradeSummary,
    GradingRun,
    JudgeTemplate,
    gradable,
    grade_attempt,
    record_grading,
)


class GradeActor:
    """Grades attempts on one node (a Ray actor)."""

    def __init__(self, shared: tuple[ModelConfig, JudgeTemplate, dict[str, Task]],
                 time_left: float | None, gate: Any, concurrency: int) -> None:
        config, self.template, self.tasks = shared
        if time_left is not None:  # monotonic clocks are per machine: the budget's end anew
            config = config.model_copy(update={"deadline": time.monotonic() + time_left})
        self.config = config
        llm.call_gate = RayGate(gate)
        self.limiter = anyio.CapacityLimiter(concurrency)

    async def grade(self, attempt: Attempt) -> GradingRun:
        return await grade_attempt(self.config, self.template, self.tasks[attempt.task_id],
                                   attempt, None, self.limiter)


def grade_on_ray(run_paths: list[Path], config: ModelConfig, template: JudgeTemplate,
                 tasks: dict[str, Task] | None, concurrency: int, address: str | None,
                 progress: GradeProgress | None = None) -> GradeSummary:
    """`judge.grade_runs` with the attempts graded on the Ray cluster at `address`."""
    ray = connect(address)
    graded, known, summary = gradable(run_paths, tasks, config, progress)
    shared = ray.put((config, template, {a.task_id: known[a.task_id] for a in graded}))
    left = None if config.deadline is None else config.deadline - time.monotonic()
    gate = governor(ray, concurrency)
    actors = [ray.remote(num_cpus=0, max_concurrency=concurrency)(GradeActor).options(
        runtime_env={"env_vars": provider_environment(config.model)}).remote(
        shared, left, gate, concurrency) for _ in range(min(worker_count(ray), len(graded)))]
    waiting = list(reversed(graded))
    running: dict[Any, Attempt] = {}
    while waiting or running:
        while waiting and len(running) < concurrency:
            attempt = waiting.pop()
            running[actors[len(running) % len(actors)].grade.remote(attempt)] = attempt
        [ready], _ = ray.wait(list(running), num_returns=1)
        attempt = running.pop(ready)
        run: GradingRun = ray.get(ready)
        if progress is not None:
            for result in run.verifier_results:
                progress.called(result["status"] == "ok", 0)
        record_grading(summary, attempt, run)
    return summary
