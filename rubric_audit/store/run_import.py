"""Runs streamed into the store: each batch staged as it is read, merged once all are in.

An import reads its runs a task folder (or a source) at a time, so its memory does not grow with
the archive. Whether an attempt id was read for two recordings (then neither is stored: which one
a grade of the id belongs to is unknown) is known only once every source is read, so each batch
is staged in temporary tables of the store's connection (SQLite keeps them in a temporary file,
not in memory) and merged into the store's tables when the import ends, in the order read: the
same rows as an import of all runs at once. Attempts the merge adds or changes are marked
unchecked, so the audit's checks per attempt run on them and on no other.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from rubric_audit.core.model import Attempt, CriterionGrade, Finding, Measurement
from rubric_audit.load.runs import RecordedRuns
from rubric_audit.store.audit_store import AuditStore, ImportSummary, compressed

STAGING = [
    """CREATE TEMP TABLE staged (
        seq INTEGER PRIMARY KEY, source INTEGER NOT NULL, attempt_id TEXT NOT NULL,
        task_id TEXT NOT NULL, digest BLOB NOT NULL, known INTEGER NOT NULL, model TEXT NOT NULL,
        variant TEXT NOT NULL, attempt_index INTEGER NOT NULL, state TEXT NOT NULL,
        fingerprint TEXT NOT NULL, origin TEXT NOT NULL, json TEXT NOT NULL,
        t_format TEXT, t_steps INTEGER, t_calls INTEGER, t_data BLOB, grades TEXT NOT NULL,
        measurements TEXT NOT NULL, findings TEXT NOT NULL)""",
    "CREATE INDEX temp.staged_by_attempt ON staged (attempt_id, digest)",
]


def _dump(model: Attempt | CriterionGrade | Measurement | Finding) -> str:
    return model.model_dump_json(exclude={"trajectory"} if isinstance(model, Attempt) else None)


StagedRow = tuple[Any, ...]


def staged_rows(attempts: list[Attempt], grades: list[CriterionGrade],
                measurements: list[Measurement], findings: dict[str, list[Finding]],
                known: set[str] | None) -> list[StagedRow]:
    """A batch of attempts as rows to stage, each with its grades, measurements and input
    findings (`findings`, by attempt id: stored only if the attempt is not refused as a
    collision), its content's digest (which recordings of one id differ) and whether its task
    is among the `known` (None: every task is). Pure, so it runs where the batch was read."""
    graded: dict[str, list[CriterionGrade]] = {}
    for grade in grades:
        graded.setdefault(grade.attempt_id, []).append(grade)
    measured: dict[str, list[Measurement]] = {}
    for measurement in measurements:
        measured.setdefault(measurement.attempt_id, []).append(measurement)
    rows = []
    for attempt in attempts:
        row = _dump(attempt)
        digest = hashlib.blake2b(row.encode(), digest_size=16)
        trajectory: tuple[object, ...] = (None, None, None, None)
        if attempt.trajectory is not None:  # the recording's content, as the model compares
            raw = attempt.trajectory.model_dump_json().encode()
            digest.update(raw)
            steps = attempt.trajectory.steps
            trajectory = (attempt.trajectory.format, len(steps),
                          sum(len(step.tool_calls) for step in steps), compressed(raw))
        rows.append((
            attempt.id, attempt.task_id, digest.digest(),
            known is None or attempt.task_id in known, attempt.model, attempt.variant,
            attempt.index, attempt.state, attempt.fingerprint, attempt.source, row, *trajectory,
            json.dumps([(g.criterion_id, g.grader, g.verdict, _dump(g))
                        for g in graded.get(attempt.id, [])]),
            json.dumps([(m.scorer, m.key, _dump(m)) for m in measured.get(attempt.id, [])]),
            json.dumps([(f.task_id, f.criterion_id, f.check, f.severity, _dump(f))
                        for f in findings.get(attempt.id, [])])))
    return rows


@dataclass(frozen=True)
class Recording:
    """One recording read for an attempt id that another recording was read for too."""

    task_id: str
    source: str
    fingerprint: str
    state: str


@dataclass
class SourceCounts:
    """What the merge did with one source's attempts: stored (added, or already there alike)
    and refused as conflicting with a stored one."""

    stored: int = 0
    conflicts: int = 0


class RunsImport:
    """Runs added to an open store a batch at a time, inside its transaction; `merge` ends it.
    An attempt of a task not known (to the benchmark) is staged, so that it still counts among
    the recordings of its id, but never stored. Input findings go to `stage`."""

    def __init__(self, store: AuditStore, stage: str) -> None:
        self.store, self.stage = store, stage
        self.db = store.db
        self.db.execute("DROP TABLE IF EXISTS temp.staged")
        for statement in STAGING:
            self.db.execute(statement)

    def add(self, source: int, rows: list[StagedRow]) -> None:
        """Stage one batch of `source` (its rows from `staged_rows`)."""
        self.db.executemany(
            "INSERT INTO staged (source, attempt_id, task_id, digest, known, model, variant, "
            "attempt_index, state, fingerprint, origin, json, t_format, t_steps, t_calls, t_data, "
            "grades, measurements, findings) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(source, *row) for row in rows])

    def collisions(self) -> Iterator[tuple[str, list[Recording]]]:
        """Each attempt id staged for more than one recording, with every recording of it in the
        order read. The same recording read twice (a folder given twice) is no collision."""
        ids = [r[0] for r in self.db.execute(
            "SELECT attempt_id FROM staged GROUP BY attempt_id "
            "HAVING count(DISTINCT digest) > 1 ORDER BY min(seq)")]
        for attempt_id in ids:
            yield attempt_id, [Recording(*r) for r in self.db.execute(
                "SELECT task_id, origin, fingerprint, state FROM staged WHERE attempt_id = ? "
                "ORDER BY seq", (attempt_id,))]

    def merge(self) -> tuple[ImportSummary, dict[int, SourceCounts]]:
        """Add the staged attempts that are neither collisions nor of an unknown task (each id
        once), with their grades, measurements and input findings, and count per source.

        An attempt already stored with the same content (its files' fingerprint) takes the state,
        grades and measurements read now (a judge graded it since); one stored with other content
        is kept and the new one refused with an `input_attempt_conflict` finding, so nothing
        recorded is overwritten.
        """
        summary = ImportSummary()
        per_source: dict[int, SourceCounts] = {}
        cursor = self.db.execute(
            "SELECT seq FROM staged WHERE seq IN (SELECT min(seq) FROM staged "
            "GROUP BY attempt_id HAVING count(DISTINCT digest) = 1) ORDER BY seq")
        for (seq,) in cursor.fetchall():
            self._merge_one(seq, summary, per_source)
        self.db.execute("DROP TABLE temp.staged")
        return summary, per_source

    def _merge_one(self, seq: int, summary: ImportSummary,
                   per_source: dict[int, SourceCounts]) -> None:
        (source, attempt_id, task_id, known, model, variant, index, state, fingerprint, origin,
         row, t_format, t_steps, t_calls, t_data, grades_json, measurements_json,
         findings_json) = self.db.execute(
            "SELECT source, attempt_id, task_id, known, model, variant, attempt_index, state, "
            "fingerprint, origin, json, t_format, t_steps, t_calls, t_data, grades, measurements,"
            " findings FROM staged WHERE seq = ?", (seq,)).fetchone()
        self._add_findings(json.loads(findings_json))
        if not known:
            return
        counts = per_source.setdefault(source, SourceCounts())
        grades = [(attempt_id, *g) for g in json.loads(grades_json)]
        measurements = [(attempt_id, *m) for m in json.loads(measurements_json)]
        trajectory = ((attempt_id, t_format, t_steps, t_calls, t_data)
                      if t_data is not None else None)
        stored = self.db.execute("SELECT fingerprint, json, state FROM attempts "
                                 "WHERE attempt_id = ?", (attempt_id,)).fetchone()
        if stored and stored[0] == fingerprint:
            # The recording is the same; grades added since (a new judge run) come in, and with
            # them the attempt's state (an ungraded attempt a judge graded is graded).
            changed = stored[1] != row
            if changed:
                self.db.execute("UPDATE attempts SET state = ?, json = ? WHERE attempt_id = ?",
                                (state, row, attempt_id))
            changed |= self._replace_changed(attempt_id, trajectory, grades, measurements)
            if changed:
                self.db.execute("INSERT OR IGNORE INTO unchecked VALUES (?)", (attempt_id,))
            summary.unchanged += 1
            summary.now_graded += state == "graded" and stored[2] != "graded"
            counts.stored += 1
            return
        if stored:
            summary.conflicts += 1
            counts.conflicts += 1
            self.store.add_findings(self.stage, [Finding(
                task_id=task_id, check="input_attempt_conflict", severity="warning",
                message=f"attempt {attempt_id} is already stored with other content; "
                        f"kept the stored one, skipped {origin}",
                evidence={"stored_source": json.loads(stored[1])["source"],
                          "skipped_source": origin})])
            return
        self.db.execute("INSERT INTO attempts VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (attempt_id, task_id, model, variant, index, state, fingerprint, row))
        if trajectory is not None:
            self.db.execute("INSERT OR REPLACE INTO trajectories VALUES (?, ?, ?, ?, ?)",
                            trajectory)
        self.db.executemany("INSERT OR REPLACE INTO grades VALUES (?, ?, ?, ?, ?)", grades)
        self.db.executemany("INSERT OR REPLACE INTO measurements VALUES (?, ?, ?, ?)",
                            measurements)
        self.db.execute("INSERT OR IGNORE INTO unchecked VALUES (?)", (attempt_id,))
        counts.stored += 1
        if state == "graded":
            summary.added_graded += 1
        elif state == "ungraded":
            summary.added_ungraded += 1
        else:
            summary.added_unavailable += 1

    def _replace_changed(self, attempt_id: str, trajectory: tuple[object, ...] | None,
                         grades: list[tuple[str, ...]], measurements: list[tuple[str, ...]]
                         ) -> bool:
        """Write what differs from the stored rows of an attempt read again; whether anything
        did (rows read now replace stored ones of the same key; others stay)."""
        changed = False
        if trajectory is not None:
            found = self.db.execute("SELECT data FROM trajectories WHERE attempt_id = ?",
                                    (attempt_id,)).fetchone()
            if found is None or found[0] != trajectory[-1]:
                self.db.execute("INSERT OR REPLACE INTO trajectories VALUES (?, ?, ?, ?, ?)",
                                trajectory)
                changed = True
        stored_grades = {(c, g): j for c, g, j in self.db.execute(
            "SELECT criterion_id, grader, json FROM grades WHERE attempt_id = ?", (attempt_id,))}
        new_grades = [g for g in grades if stored_grades.get((g[1], g[2])) != g[4]]
        self.db.executemany("INSERT OR REPLACE INTO grades VALUES (?, ?, ?, ?, ?)", new_grades)
        stored_measurements = {(s, k): j for s, k, j in self.db.execute(
            "SELECT scorer, key, json FROM measurements WHERE attempt_id = ?", (attempt_id,))}
        new_measurements = [m for m in measurements
                            if stored_measurements.get((m[1], m[2])) != m[3]]
        self.db.executemany("INSERT OR REPLACE INTO measurements VALUES (?, ?, ?, ?)",
                            new_measurements)
        return changed or bool(new_grades) or bool(new_measurements)

    def _add_findings(self, rows: list[list[str | None]]) -> None:
        self.db.executemany(
            "INSERT OR IGNORE INTO findings (stage, task_id, criterion_id, check_name, severity,"
            " json) VALUES (?, ?, ?, ?, ?, ?)", [(self.stage, *r) for r in rows])



def add_runs(store: AuditStore, runs: RecordedRuns, stage: str = "input:runs") -> ImportSummary:
    """Runs as read, added as they are: their attempts, with the tasks they name where a task
    is not stored yet, and the sources' metrics; none of an import's checks of them nor their
    tasks shared over variants (`audit.stages.import_into` does both)."""
    with store.transaction():
        store.add_tasks(runs.tasks.values())
        store.add_run_tasks(runs.recorded)
        store.save_source_metrics(runs.metrics)
        staged = RunsImport(store, stage)
        staged.add(0, staged_rows(runs.attempts, runs.grades, runs.measurements, {}, None))
        return staged.merge()[0]
