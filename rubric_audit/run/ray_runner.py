"""`run --ray`: the attempts as calls on Ray actors, the run folders written by the driver.

The benchmark and the run's settings are put in Ray's object store once; one actor per CPU of
the cluster builds a Runner from them (each world read once per actor) and runs the attempts it
is given in its event loop, each into a scratch folder of its own machine, and sends the
attempt's files back. The driver keeps at most `concurrency` attempts in flight across the
cluster, and writes each attempt's files into a hidden folder renamed into place, as a local run
does, so the folders are the same and an interrupted Ray run resumes as a local one. Model calls
of every actor take their turn from one governor (`core.cluster`).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rubric_audit.core import llm
from rubric_audit.core.atomic import staging_folder
from rubric_audit.core.cluster import (
    RayGate,
    connect,
    governor,
    provider_environment,
    worker_count,
)
from rubric_audit.core.errors import InputError
from rubric_audit.core.model import Task
from rubric_audit.run.runner import AttemptResult, Runner, RunnerSettings

# An attempt's folder as sent back: its files (relative path to bytes) and its empty folders.
AttemptFiles = tuple[dict[str, bytes], list[str]]


class AttemptActor:
    """Runs attempts on one node (a Ray actor): a Runner over a scratch folder."""

    def __init__(self, settings: RunnerSettings, time_left: float | None, gate: Any) -> None:
        bench, _, variant, model, budget = settings
        if time_left is not None:  # monotonic clocks are per machine: the budget's end anew
            model = model.model_copy(update={"deadline": time.monotonic() + time_left})
        llm.call_gate = RayGate(gate)
        self.scratch = Path(tempfile.mkdtemp(prefix="rubric-audit-ray-"))
        self.runner = Runner(bench, self.scratch, variant, model, budget)
        self.tasks = {t.id: t for t in bench.tasks}

    async def attempt(self, task_id: str, index: int) -> tuple[dict[str, Any], AttemptFiles]:
        result = await self.runner.run_attempt(self.tasks[task_id], index)
        folder = self.runner.folder / task_id / f"attempt_{index}"
        files = {p.relative_to(folder).as_posix(): p.read_bytes()
                 for p in folder.rglob("*") if p.is_file()}
        folders = [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_dir()]
        shutil.rmtree(folder)
        return result.model_dump(mode="json"), (files, folders)


def _written(runner: Runner, result: AttemptResult, sent: AttemptFiles) -> None:
    """The attempt's folder, written whole: a hidden folder renamed into place."""
    task_dir = runner.folder / result.task_id
    task_dir.mkdir(parents=True, exist_ok=True)
    staging = staging_folder(task_dir, f".attempt_{result.attempt}.partial-")
    try:
        files, folders = sent
        for name in folders:
            (staging / name).mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            (staging / name).write_bytes(data)
        staging.rename(task_dir / f"attempt_{result.attempt}")
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def run_on_ray(runner: Runner, todo: list[tuple[Task, int]], concurrency: int,
               address: str | None,
               on_done: Callable[[AttemptResult], None] | None = None) -> Counter[str]:
    """`Runner.run` with the attempts on the Ray cluster at `address` (see the module)."""
    if not todo:
        runner.write_results()
        return Counter()
    ray = connect(address)
    settings: RunnerSettings = (runner.bench, runner.runs, runner.variant, runner.model,
                                runner.budget)
    shared = ray.put(settings)
    deadline = runner.model.deadline
    left = None if deadline is None else deadline - time.monotonic()
    gate = governor(ray, concurrency)
    actors = [ray.remote(num_cpus=0, max_concurrency=concurrency)(AttemptActor).options(
        runtime_env={"env_vars": provider_environment(runner.model.model)}).remote(
        shared, left, gate) for _ in range(min(worker_count(ray), len(todo)))]
    states: Counter[str] = Counter()
    waiting = list(reversed(todo))
    running: dict[Any, tuple[str, int]] = {}
    turn = 0
    try:
        while waiting or running:
            while waiting and len(running) < concurrency:
                task, index = waiting.pop()
                running[actors[turn % len(actors)].attempt.remote(task.id, index)] = (task.id,
                                                                                      index)
                turn += 1
            [ready], _ = ray.wait(list(running), num_returns=1)
            task_id, index = running.pop(ready)
            result = _collected(ray, runner, ready, task_id, index)
            states[result.state] += 1
            if on_done is not None:
                on_done(result)
    finally:
        for ref in running:
            ray.cancel(ref, force=False)
        runner.write_results()
    return states


def _collected(ray: Any, runner: Runner, ref: Any, task_id: str, index: int) -> AttemptResult:
    """An attempt's result, its folder written; unusable input is raised as itself, an actor
    lost with its node makes the attempt unavailable (no folder, so a rerun runs it)."""
    try:
        payload, sent = ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        if isinstance(exc.cause, InputError):
            raise exc.cause from None
        raise
    except ray.exceptions.RayActorError as exc:
        return AttemptResult(task_id=task_id, attempt=index, model=runner.model.model,
                             variant=runner.variant.name, state="unavailable",
                             reason=f"the Ray worker running it was lost ({type(exc).__name__})")
    result = AttemptResult.model_validate(payload)
    _written(runner, result, sent)
    return result
