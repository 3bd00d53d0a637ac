"""Runs read for an import, a batch at a time, each batch ready to stage: its attempts as rows
(`store.run_import.staged_rows`) with their input findings, and what the import keeps besides.

An Archipelago variant is read a task folder at a time, spread over worker processes where there
are cores to spare (`background.in_order`: the batches come back in the order read alone would
give, and a worker's failure is the failure this process meets reading the same folder); any
other format is read a source at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rubric_audit.audit.background import in_order
from rubric_audit.checks.input import ATTEMPT_INPUT_CHECKS
from rubric_audit.core.model import (
    Benchmark,
    Control,
    CriterionGrade,
    Finding,
    SourceMetric,
    SourceSummary,
    Task,
)
from rubric_audit.core.words import plural
from rubric_audit.load.runs import RecordedRuns, TaskRead, VariantReader
from rubric_audit.load.sources import Source
from rubric_audit.store.run_import import StagedRow, staged_rows


def runs_of_version(runs: RecordedRuns, bench: Benchmark) -> tuple[RecordedRuns, dict[str, list[str]]]:
    """The runs without the grades they recorded for tasks a patch changed (patch.json's
    lineage): those were given under an earlier version of the task, so they count in no score
    of this one, and an attempt left without a grade is ungraded; the code checker grades the
    answers under this version's rubric, and a judge can again. With them, by task, the
    attempts whose recorded grades were left out (`earlier_version_findings`)."""
    changed = set(bench.version.changed_tasks) if bench.version else set()
    earlier = {g.attempt_id for g in runs.grades if g.grader == "recorded"} & {
        a.id for a in runs.attempts if a.task_id in changed}
    if not earlier:
        return runs, {}
    grades = [g for g in runs.grades if g.attempt_id not in earlier or g.grader != "recorded"]
    still = {g.attempt_id for g in grades}
    attempts = [a.model_copy(update={"state": "ungraded"})
                if a.id in earlier and a.id not in still and a.state == "graded" else a
                for a in runs.attempts]
    per_task: dict[str, list[str]] = {}
    for a in runs.attempts:
        if a.id in earlier:
            per_task.setdefault(a.task_id, []).append(a.id)
    return runs.model_copy(update={"attempts": attempts, "grades": grades}), per_task


def earlier_version_findings(per_task: dict[str, list[str]], bench: Benchmark) -> list[Finding]:
    """An `input_graded_under_earlier_version` finding per task with attempts `runs_of_version`
    left without their recorded grades."""
    if bench.version is None:
        return []
    return [Finding(
        task_id=task_id, check="input_graded_under_earlier_version", severity="info",
        message=f"{plural(len(ids), 'attempt')} {'was' if len(ids) == 1 else 'were'} graded "
                f"under an earlier version of this task "
                f"(changed by a patch since version {bench.version.lineage[0][:12]}): their "
                f"recorded grades are left out of this version's scores",
        evidence={"attempts": sorted(ids), "lineage": bench.version.lineage})
        for task_id, ids in sorted(per_task.items())]


def attempt_findings(runs: RecordedRuns, bench: Benchmark) -> dict[str, list[Finding]]:
    """The input findings of each attempt read (with its recorded grades), by attempt id."""
    grades: dict[str, list[CriterionGrade]] = {}
    for g in runs.grades:
        grades.setdefault(g.attempt_id, []).append(g)
    return {a.id: [f for check in ATTEMPT_INPUT_CHECKS for f in check(a, grades.get(a.id, []),
                                                                      bench)]
            for a in runs.attempts}


@dataclass
class ReadBatch:
    """A batch of runs as read: its attempts as rows to stage, and the rest of what the import
    keeps (the sources' metrics, the tasks as each variant recorded them, recorded controls, the
    attempts whose recorded grades an earlier version of their task gave (`runs_of_version`),
    and at the end of a source its summary)."""

    rows: list[StagedRow] = field(default_factory=list)
    recorded: dict[str, dict[str, Task]] = field(default_factory=dict)
    metrics: list[SourceMetric] = field(default_factory=list)
    controls: list[Control] = field(default_factory=list)
    control_grades: list[CriterionGrade] = field(default_factory=list)
    sources: list[SourceSummary] = field(default_factory=list)
    earlier: dict[str, list[str]] = field(default_factory=dict)


class Reading:
    """Reading runs for an import into a store of `bench` (None: tasks come from the runs)."""

    def __init__(self, bench: Benchmark | None) -> None:
        self.bench = bench
        self.known = {t.id for t in bench.tasks} if bench is not None else None

    def prepared(self, runs: RecordedRuns) -> ReadBatch:
        """A batch read, ready to stage (with a benchmark, only its tasks' recorded controls, and
        no grade recorded under an earlier version of a task)."""
        bench = self.bench
        earlier: dict[str, list[str]] = {}
        if bench is not None:
            runs, earlier = runs_of_version(runs, bench)
        return ReadBatch(
            rows=staged_rows(runs.attempts, runs.grades, runs.measurements,
                             attempt_findings(runs, bench) if bench is not None else {},
                             self.known),
            recorded=runs.recorded, metrics=runs.metrics,
            controls=[c for c in runs.controls if bench is None or bench.task(c.task_id)],
            control_grades=runs.control_grades, sources=runs.sources, earlier=earlier)

    def batches(self, sources: list[Source], unread: frozenset[Path] = frozenset()
                ) -> Iterator[ReadBatch]:
        """Every source's runs, in order; Archipelago variant folders in `unread` are not read."""
        readers: list[VariantReader] = []
        items: list[tuple[str, int, int]] = []
        for n, source in enumerate(sources):
            if source.read is not None:
                items.append(("source", n, 0))
                continue
            for variant in source.variants:
                if variant not in unread:
                    readers.append(VariantReader(variant))
                    items += [("task", len(readers) - 1, t)
                              for t in range(len(readers[-1].task_dirs))]
                    items.append(("end", len(readers) - 1, 0))

        def read(item: tuple[str, int, int]) -> tuple[ReadBatch, TaskRead | None]:
            kind, n, t = item
            if kind == "source":
                read_whole = sources[n].read
                assert read_whole is not None
                return self.prepared(read_whole()), None
            if kind == "end":
                return ReadBatch(), None
            task = readers[n].read_task(readers[n].task_dirs[t])
            counted = TaskRead(RecordedRuns(), task.tally, task.unmapped, task.model_from,
                               task.answer_rules)
            return self.prepared(task.runs), counted

        for (kind, n, _), (batch, counted) in zip(items, in_order(read, items), strict=True):
            if counted is not None:
                readers[n].count(counted)
            if kind == "end":
                batch.sources = [readers[n].summary()]
            yield batch
