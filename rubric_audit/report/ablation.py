"""Elicitation ablations: two arms that differ by one prompt edit, compared task by task.

The arms are two sets of runs (two variants). pass@1 per task is compared over the tasks both arms
graded, with a paired bootstrap interval; per arm, the share of attempts that opened the mailbox,
chat and calendar says whether the edit changed what the agent looked at.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel

from rubric_audit.core.errors import InputError
from rubric_audit.core.model import Task, grades_by_attempt
from rubric_audit.core.scores import attempt_outcome
from rubric_audit.load.runs import RecordedRuns, load_runs
from rubric_audit.report.apps import APPS, apps_opened
from rubric_audit.report.stats import DEFAULT_SEED, Interval, mean_interval, paired_difference


class Arm(BaseModel):
    """One arm over the compared tasks: its attempts by state, pass@1 and apps opened."""

    name: str
    attempts: int
    graded: int
    ungraded: int
    pass_at_1: Interval
    opened: dict[str, float]


class Ablation(BaseModel):
    grader: str
    tasks: int
    a: Arm
    b: Arm
    difference: Interval
    seed: int
    warning: str | None = None


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
                       for app in APPS})


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
    return Ablation(grader=grader, tasks=len(common),
                    a=_arm(path_a.name, runs_a, per_a, common, seed),
                    b=_arm(path_b.name, runs_b, per_b, common, seed),
                    difference=paired_difference([per_a[t] for t in common],
                                                 [per_b[t] for t in common], seed), seed=seed,
                    warning=f"only {len(common)} tasks: with so few, a bootstrap interval (even "
                            f"[100%, 100%]) only says every resample of these tasks agreed, not "
                            f"that the arms would" if len(common) < SMALL_N else None)
