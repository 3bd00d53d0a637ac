"""Elicitation ablations: two arms that differ by one prompt edit, compared task by task.

The arms are two sets of runs (two variants). pass@1 per task is compared over the tasks both arms
graded, with a paired bootstrap interval; per arm, the share of attempts that opened the mailbox,
chat and calendar says whether the edit changed what the agent looked at. The comparison also says
which tasks it left out and why, which tasks changed outcome (discordant), what the arms' prompts
differ by (as the runs recorded them, and their variant.json where `run` wrote one), and warns
when the arms are the same runs, overlap, or ran different models.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from rubric_audit.core.errors import InputError, read_model
from rubric_audit.core.model import Task, grades_by_attempt
from rubric_audit.core.scores import attempt_outcome
from rubric_audit.load.runs import RecordedRuns, load_runs
from rubric_audit.load.variant_tasks import sentences, shared_task
from rubric_audit.report.apps import APPS, apps_opened
from rubric_audit.report.stats import DEFAULT_SEED, Interval, mean_interval, paired_difference
from rubric_audit.run.variants import Variant


class Arm(BaseModel):
    """One arm over the compared tasks: its attempts by state, pass@1 and apps opened."""

    name: str
    attempts: int
    graded: int
    ungraded: int
    pass_at_1: Interval
    opened: dict[str, float]
    models: list[str] = Field(default_factory=list)


class TaskChange(BaseModel):
    """A compared task whose pass@1 differs between the arms: from B's to A's."""

    task_id: str
    task: str
    b: float
    a: float

    @property
    def change(self) -> str:
        """'fail→pass' or 'pass→fail' (B to A) where both are whole, else better or worse."""
        if {self.a, self.b} == {0.0, 1.0}:
            return "fail→pass" if self.a > self.b else "pass→fail"
        return "better" if self.a > self.b else "worse"


class DroppedTask(BaseModel):
    """A task one arm ran that the comparison leaves out, and why."""

    task_id: str
    task: str
    reason: str


class PromptChange(BaseModel):
    """What one arm's prompt adds or drops against the other's, in the task prompt the runs
    recorded (on `tasks` of the compared tasks) or in the system prompt its variant.json holds."""

    arm: str
    where: Literal["task prompt", "system prompt"]
    added: list[str] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)
    tasks: int = 0


class Ablation(BaseModel):
    grader: str
    tasks: int
    a: Arm
    b: Arm
    difference: Interval
    seed: int
    discordant: list[TaskChange] = Field(default_factory=list)
    dropped: list[DroppedTask] = Field(default_factory=list)
    prompt_changes: list[PromptChange] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


SMALL_N = 10  # fewer compared tasks than this: the bootstrap intervals say little


def _per_task(runs: RecordedRuns, tasks: dict[str, Task], grader: str) -> dict[str, float]:
    grades = grades_by_attempt(runs.grades, grader)
    outcomes: dict[str, list[float]] = defaultdict(list)
    for a in runs.attempts:
        if a.task_id in tasks and a.state == "graded" and grades.get(a.id):
            outcome = attempt_outcome(tasks[a.task_id], grades[a.id])
            if outcome != "unscored":
                outcomes[a.task_id].append(float(outcome == "pass"))
    return {t: sum(v) / len(v) for t, v in outcomes.items()}


def _arm(name: str, runs: RecordedRuns, per_task: dict[str, float], common: list[str],
         seed: int) -> Arm:
    """One arm over the compared tasks only: its attempts, pass@1 and apps opened."""
    chosen = set(common)
    attempts = [a for a in runs.attempts if a.task_id in chosen]
    opened = [apps_opened(a) for a in attempts if a.trajectory and a.trajectory.steps]
    return Arm(name=name, attempts=len(attempts),
               graded=sum(a.state == "graded" for a in attempts),
               ungraded=sum(a.state == "ungraded" for a in attempts),
               pass_at_1=mean_interval([per_task[t] for t in common], seed),
               opened={app: sum(app in o for o in opened) / len(opened) if opened else 0.0
                       for app in APPS},
               models=sorted({a.model for a in runs.attempts}))


def _why_not_compared(task_id: str, arms: list[tuple[str, RecordedRuns, dict[str, float]]],
                      known: dict[str, Task], only: set[str] | None, grader: str) -> str:
    if task_id not in known:
        return "not in the benchmark"
    if only is not None and task_id not in only:
        return "not a --messages-only task"
    for name, runs, per_task in arms:
        attempts = [a for a in runs.attempts if a.task_id == task_id]
        if not attempts:
            return f"not run in {name}"
        if task_id not in per_task:
            states = ", ".join(f"{n} {s}" for s, n in sorted(
                {s: sum(a.state == s for a in attempts) for s in ("graded", "ungraded",
                                                                   "unavailable")}.items())
                if n)
            return f"no verdict of {grader} in {name} ({states})"
    raise AssertionError(f"{task_id} is compared")  # a task left out fails one test above


def _prompt_changes(arms: list[tuple[Path, RecordedRuns]], common: list[str]
                    ) -> list[PromptChange]:
    """What each arm's recorded task prompts add or drop against the other's (over the compared
    tasks), and the system prompts of their variant.json where both have one."""
    changes: dict[str, PromptChange] = {}
    for task_id in common:
        recorded: dict[str, Task] = {}
        for _, runs in arms:
            recorded.update(runs.recorded.get(task_id, {}))
        if len(recorded) < 2:
            continue
        for difference in shared_task(task_id, recorded)[1]:
            change = changes.setdefault(difference.variant, PromptChange(
                arm=difference.variant, where="task prompt"))
            change.added += [s for s in difference.added if s not in change.added]
            change.dropped += [s for s in difference.dropped if s not in change.dropped]
            change.tasks += bool(difference.added or difference.dropped)
    found = [c for c in changes.values() if c.tasks]
    (path_a, _), (path_b, _) = arms
    spec_a, spec_b = path_a / "variant.json", path_b / "variant.json"
    if spec_a.is_file() and spec_b.is_file():
        system_a = sentences(read_model(spec_a, Variant).system_prompt)
        system_b = sentences(read_model(spec_b, Variant).system_prompt)
        if system_a != system_b:
            found.append(PromptChange(arm=path_a.name, where="system prompt",
                                      added=[s for s in system_a if s not in system_b],
                                      dropped=[s for s in system_b if s not in system_a]))
    return found


def _warnings(path_a: Path, path_b: Path, runs_a: RecordedRuns, runs_b: RecordedRuns,
              compared: int) -> list[str]:
    """What makes the comparison say less than it seems to: the same runs twice, arms that
    share runs, arms of different models, and few tasks."""
    warnings = []
    a, b = path_a.resolve(), path_b.resolve()
    shared = {x.id for x in runs_a.attempts} & {x.id for x in runs_b.attempts}
    if a == b:
        warnings.append("both arms are the same folder: the difference is 0 by construction")
    elif a in b.parents or b in a.parents or shared:
        warnings.append(f"the arms overlap ({len(shared)} attempts are in both): a paired "
                        f"comparison needs two separate sets of runs")
    models_a, models_b = ({x.model for x in r.attempts} for r in (runs_a, runs_b))
    if models_a != models_b:
        warnings.append(f"the arms ran different models ({', '.join(sorted(models_a))} against "
                        f"{', '.join(sorted(models_b))}): the difference is the models' as much "
                        f"as the prompts'")
    if compared < SMALL_N:
        warnings.append(f"only {compared} tasks: with so few, a bootstrap interval (even "
                        f"[100%, 100%]) only says every resample of these tasks agreed, not "
                        f"that the arms would")
    return warnings


def compare(path_a: Path, path_b: Path, tasks: dict[str, Task] | None = None,
            grader: str = "recorded", only: set[str] | None = None,
            seed: int = DEFAULT_SEED) -> Ablation:
    """Arm A minus arm B in pass@1, paired over the tasks both graded (optionally a subset)."""
    runs_a, runs_b = load_runs([path_a]), load_runs([path_b])
    known = tasks if tasks is not None else {**runs_b.tasks, **runs_a.tasks}
    per_a, per_b = _per_task(runs_a, known, grader), _per_task(runs_b, known, grader)
    common = sorted(set(per_a) & set(per_b) & (only if only is not None else set(per_a)))
    if not common:
        ungraded = sum(a.state == "ungraded" for a in [*runs_a.attempts, *runs_b.attempts])
        raise InputError(path_b, None, f"no task graded by {grader!r} in both arms" + (
            f"; {ungraded} attempts are ungraded: `rubric-audit grade` with a judge grades "
            f"them (then compare with --grader judge:MODEL)" if ungraded else ""))
    ran = sorted({a.task_id for a in [*runs_a.attempts, *runs_b.attempts]} - set(common))

    def name(task_id: str) -> str:
        task = known.get(task_id) or runs_a.tasks.get(task_id) or runs_b.tasks.get(task_id)
        return task.name if task else task_id

    arms = [(path_a.name, runs_a, per_a), (path_b.name, runs_b, per_b)]
    return Ablation(
        grader=grader, tasks=len(common),
        a=_arm(path_a.name, runs_a, per_a, common, seed),
        b=_arm(path_b.name, runs_b, per_b, common, seed),
        difference=paired_difference([per_a[t] for t in common], [per_b[t] for t in common], seed),
        seed=seed,
        discordant=[TaskChange(task_id=t, task=name(t), b=per_b[t], a=per_a[t])
                    for t in common if per_a[t] != per_b[t]],
        dropped=[DroppedTask(task_id=t, task=name(t),
                             reason=_why_not_compared(t, arms, known, only, grader)) for t in ran],
        prompt_changes=_prompt_changes([(path_a, runs_a), (path_b, runs_b)], common),
        warnings=_warnings(path_a, path_b, runs_a, runs_b, len(common)))
