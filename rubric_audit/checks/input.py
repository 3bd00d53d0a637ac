"""Input checks: usable input with problems. Each is a pure function returning findings.

Task checks take `(task, bench)`; attempt checks take `(attempt, grades, bench)` where `grades` are
that attempt's recorded grades; `input_id_collision` takes the recordings an import read for one
attempt id. Unusable input never reaches here: the loaders refuse it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from rubric_audit.checks.numbers import unread
from rubric_audit.checks.text import task_texts
from rubric_audit.core.model import Attempt, Benchmark, CriterionGrade, Finding, Task, VariantPrompt
from rubric_audit.core.words import plural
from rubric_audit.store.run_import import Recording

QUOTED = 5  # sentences quoted in a finding; the whole difference is stored with the variant


def input_unknown_world(task: Task, bench: Benchmark) -> Iterator[Finding]:
    """The task runs in a world the benchmark does not describe."""
    if bench.world(task.world_id) is None:
        yield Finding(task_id=task.id, check="input_unknown_world", severity="error",
                      message=f"world_id {task.world_id!r} is not in world_descriptions.json",
                      evidence={"world_id": task.world_id,
                                "known_worlds": [w.id for w in bench.worlds]})


def input_world_files_missing(task: Task, bench: Benchmark) -> Iterator[Finding]:
    """The task's world is described but its shared files are not in the benchmark: an APEX
    world without its folder or zip (an error), or a task package as published, which leaves
    them out (a warning: the audit is partial, the benchmark is not broken). Either way only the
    task's own files are read, and the checks that read a world skip the task."""
    world = bench.world(task.world_id)
    if world is None or world.source is not None:
        return
    if world.layout == "task-package":
        yield Finding(task_id=task.id, check="input_world_files_missing", severity="warning",
                      message=f"world {world.id!r} has no shared files here: the task package "
                              f"leaves out files/ and tools/.apps_data/ (its download_data.sh "
                              f"fetches them), so only the task's own files are read and the "
                              f"checks that read the world skip this task",
                      evidence={"world_id": world.id, "layout": world.layout})
        return
    yield Finding(task_id=task.id, check="input_world_files_missing", severity="error",
                  message=f"world {world.id!r} has no files: neither worlds/{world.id}/ nor "
                          f"world_files_zipped/{world.id}.zip exists, so the checks that read "
                          f"the world skip this task",
                  evidence={"world_id": world.id})


def input_task_without_criteria(task: Task, bench: Benchmark) -> Iterator[Finding]:
    """A task with an empty rubric cannot be graded."""
    if not task.criteria:
        yield Finding(task_id=task.id, check="input_task_without_criteria", severity="error",
                      message="the task has no rubric criteria, so it cannot be graded")


def input_empty_criterion(task: Task, bench: Benchmark) -> Iterator[Finding]:
    """A criterion whose text is empty grades nothing."""
    for criterion in task.criteria:
        if not criterion.text.strip():
            yield Finding(task_id=task.id, criterion_id=criterion.id,
                          check="input_empty_criterion", severity="error",
                          message=f"criterion {criterion.id} has empty text")


def input_missing_gold_file(task: Task, bench: Benchmark) -> Iterator[Finding]:
    """A file gold with no file in the benchmark (APEX: nothing under gold_files/<task_id>/)."""
    if task.gold is not None and task.gold.type == "file" and not task.gold.files:
        world = bench.world(task.world_id)
        where = ("the task package does not hold gold files (its download_data.sh fetches them)"
                 if world is not None and world.layout == "task-package"
                 else f"gold_files/{task.id}/ is empty or missing")
        yield Finding(task_id=task.id, check="input_missing_gold_file", severity="warning",
                      message=f"the gold is a file, but {where}")


def input_missing_task_files(task: Task, bench: Benchmark) -> Iterator[Finding]:
    """The task declares input files but has no task_files/<task_id>/ overlay."""
    if task.input_files_declared and task.overlay is None:
        yield Finding(task_id=task.id, check="input_missing_task_files", severity="warning",
                      message=f"task_input_files is set but task_files/{task.id}/ does not exist")


TOO_LONG_SKIPS = ("the code checker, and the static checks that read the task's numbers, skip "
                  "this task")


def input_text_too_long_to_read(task: Task, bench: Benchmark) -> Iterator[Finding]:
    """A task text longer than the number reader reads (info): the checks that would read it
    abstain rather than spend seconds per pass on it."""
    too_long = unread(**task_texts(task))
    if too_long:
        yield Finding(task_id=task.id, check="input_text_too_long_to_read", severity="info",
                      message=f"{too_long}: {TOO_LONG_SKIPS}")


def input_answer_too_long_to_read(attempt: Attempt, grades: list[CriterionGrade],
                                  bench: Benchmark) -> Iterator[Finding]:
    """An answer longer than the number reader reads (info): the code checker and answer
    provenance abstain on it; the judge's verdicts stand."""
    too_long = unread(answer=attempt.answer)
    if too_long:
        yield Finding(task_id=attempt.task_id, check="input_text_too_long_to_read",
                      severity="info",
                      message=f"{too_long} ({attempt.id}): the code checker and answer "
                              f"provenance skip this attempt",
                      evidence={"attempt": attempt.id})


def input_unknown_task(attempt: Attempt, grades: list[CriterionGrade],
                       bench: Benchmark) -> Iterator[Finding]:
    """A run folder for a task the benchmark does not have."""
    if bench.task(attempt.task_id) is None:
        yield Finding(task_id=attempt.task_id, check="input_unknown_task", severity="warning",
                      message=f"run folder {attempt.source} is for a task not in the benchmark; "
                              f"attempt {attempt.id} was not imported",
                      evidence={"attempt": attempt.id, "source": attempt.source})


def input_grade_mismatch(attempt: Attempt, grades: list[CriterionGrade],
                         bench: Benchmark) -> Iterator[Finding]:
    """Recorded grades whose verifier ids do not match the task's rubric (of graded attempts:
    an ungraded or unavailable one has no grades to compare)."""
    task = bench.task(attempt.task_id)
    if task is None or attempt.state != "graded":
        return
    graded = {g.criterion_id for g in grades}
    rubric = {c.id for c in task.criteria}
    unknown, without = sorted(graded - rubric), sorted(rubric - graded)
    if unknown or without:
        yield Finding(task_id=task.id, check="input_grade_mismatch", severity="error",
                      message=f"grades.json of {attempt.id} does not match the rubric: "
                              f"{plural(len(unknown), 'unknown verifier id')}, "
                              f"{plural(len(without), 'criterion')} without a grade",
                      evidence={"attempt": attempt.id, "unknown_verifier_ids": unknown,
                                "criteria_without_grade": without})


def input_id_collision(attempt_id: str, recordings: list[Recording]) -> Iterator[Finding]:
    """Two recordings read as one attempt id (two source names made one id: a hash collision of
    long names, an inspect sample id given twice at one epoch, Archipelago's attempt_1 and
    attempt_01, two variant folders of one name): neither is imported (their grades carry the one
    id, so whose they are is unknown), and the finding names every source, so none is replaced in
    silence. `recordings` are every one read under the id, in the order read."""
    sources = [r.source for r in recordings]
    yield Finding(task_id=recordings[0].task_id, check="input_id_collision", severity="error",
                  message=f"{len(recordings)} recordings read as one attempt {attempt_id}: "
                          f"{', '.join(sorted(set(sources)))}; none of them was imported",
                  evidence={"attempt": attempt_id, "sources": sources,
                            "fingerprints": [r.fingerprint for r in recordings],
                            "states": [r.state for r in recordings]})


def input_variants_disagree(task: Task, recorded: dict[str, Task],
                            differences: list[VariantPrompt]) -> Iterator[Finding]:
    """Variants that recorded the same task id with another rubric, world or prompt.

    `task` is the task as the variants share it (`load.variant_tasks.shared_task`). A prompt that
    only adds sentences is a prompt variant (info); one that drops sentences of the shared prompt
    changed the task's own text (warning); another rubric or world makes the variants' grades
    incomparable (error).
    """
    rubric = [(c.id, c.text) for c in task.criteria]
    other = {v: [(c.id, c.text) for c in t.criteria] for v, t in sorted(recorded.items())
             if t.criteria and [(c.id, c.text) for c in t.criteria] != rubric}
    if other:
        kept = sorted(v for v, t in recorded.items() if t.criteria and v not in other)
        yield Finding(task_id=task.id, check="input_variants_disagree", severity="error",
                      message=f"variants recorded this task with different rubrics: kept the one "
                              f"of {', '.join(kept)}; {', '.join(other)} graded another",
                      evidence={"kept": {"variants": kept, "criteria": rubric},
                                "other": {v: {"criteria": c} for v, c in other.items()}})
    worlds = {v: t.world_id for v, t in sorted(recorded.items()) if t.world_id != task.world_id}
    if worlds:
        yield Finding(task_id=task.id, check="input_variants_disagree", severity="error",
                      message=f"variants recorded this task in different worlds: kept "
                              f"{task.world_id!r}; " + ", ".join(f"{v} ran in {w!r}"
                                                              for v, w in worlds.items()),
                      evidence={"kept": task.world_id, "other": worlds})
    for d in differences:
        if d.added or d.dropped:
            changed = ", ".join(part for part in (
                f"adds {plural(len(d.added), 'sentence')}" if d.added else "",
                f"drops {len(d.dropped)} of the task's sentences" if d.dropped else "") if part)
            yield Finding(task_id=task.id, check="input_variants_disagree",
                          severity="warning" if d.dropped else "info",
                          message=f"variant {d.variant} {changed} to the prompt the variants "
                                  f"share (stored as its difference; the task keeps the shared "
                                  f"prompt)",
                          evidence={"variant": d.variant, "added": d.added[:QUOTED],
                                    "dropped": d.dropped[:QUOTED], "added_count": len(d.added),
                                    "dropped_count": len(d.dropped)})


TaskCheck = Callable[[Task, Benchmark], Iterator[Finding]]
AttemptCheck = Callable[[Attempt, list[CriterionGrade], Benchmark], Iterator[Finding]]

TASK_INPUT_CHECKS: list[TaskCheck] = [
    input_unknown_world,
    input_world_files_missing,
    input_task_without_criteria,
    input_empty_criterion,
    input_missing_gold_file,
    input_missing_task_files,
    input_text_too_long_to_read,
]
ATTEMPT_INPUT_CHECKS: list[AttemptCheck] = [input_unknown_task, input_grade_mismatch,
                                            input_answer_too_long_to_read]
