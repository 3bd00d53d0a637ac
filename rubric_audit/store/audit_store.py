"""audit.db: the SQLite store through which the stages exchange data.

The schema version lives in `PRAGMA user_version`; MIGRATIONS[i] (SQL, or a function where rows
must be rewritten) takes a store from version i to i + 1, so an older audit.db is upgraded in place
and a newer one is refused. Rows hold the pydantic model as JSON plus the columns queries filter
on; trajectories are kept apart, zlib-compressed, so the audit folder stays self-contained and
attempt rows stay light. Reviews are append-only: triggers refuse UPDATE, DELETE and an INSERT
(REPLACE) onto an existing entry.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, Field, ValidationError

from rubric_audit.core.errors import InputError, invalid
from rubric_audit.core.model import (
    CODE_GRADER,
    Attempt,
    AttemptLine,
    Benchmark,
    BenchmarkVersion,
    Control,
    ControlGrade,
    CriterionGrade,
    Finding,
    FindingReview,
    GradeLine,
    Measurement,
    Review,
    SourceMetric,
    SourceSummary,
    Task,
    Tokens,
    Trajectory,
    VariantPrompt,
    World,
)
from rubric_audit.load.benchmark import is_benchmark
from rubric_audit.load.runs import UNFINISHED
from rubric_audit.load.trajectory import from_chat_messages

TRAJECTORIES_TABLE = """
    CREATE TABLE trajectories (
        attempt_id TEXT PRIMARY KEY REFERENCES attempts (attempt_id), format TEXT NOT NULL,
        steps INTEGER NOT NULL, calls INTEGER NOT NULL, data BLOB NOT NULL)"""


def compressed(raw: bytes) -> bytes:
    """A trajectory's JSON as the `trajectories` table keeps it."""
    return zlib.compress(raw, 6)


def _trajectory_row(attempt_id: str, trajectory: Trajectory) -> tuple[str, str, int, int, bytes]:
    """A `trajectories` row: the trajectory's JSON compressed, with its size in steps and calls."""
    return (attempt_id, trajectory.format, len(trajectory.steps), len(trajectory.calls()),
            compressed(trajectory.model_dump_json().encode()))


def _trajectories_apart(db: sqlite3.Connection) -> None:
    """Move each attempt's raw messages out of its JSON into `trajectories`, normalised and
    compressed (stores written before trajectories were normalised kept them inline)."""
    db.execute(TRAJECTORIES_TABLE)
    for attempt_id, raw in db.execute("SELECT attempt_id, json FROM attempts").fetchall():
        record = json.loads(raw)
        messages = record.pop("trajectory", None)
        db.execute("INSERT INTO trajectories VALUES (?, ?, ?, ?, ?)",
                   _trajectory_row(attempt_id, from_chat_messages(messages)))
        db.execute("UPDATE attempts SET json = ? WHERE attempt_id = ?",
                   (json.dumps(record), attempt_id))


# What earlier versions gave as the reason of an attempt that ran but that no grader had graded
# (Archipelago without grades.json; an inspect sample without scores), verbatim.
NEVER_GRADED_REASONS = ("no grades.json: the attempt never reached grading",
                        "not scored: the log holds no scores for this sample")


def _ungraded_apart(db: sqlite3.Connection) -> None:
    """Attempts stored as unavailable only because no grader had graded them become `ungraded`
    (its own state since): those with one of those reasons whose agent run finished and left a
    trajectory. Re-importing the runs reads every attempt afresh anyway."""
    rows = db.execute("SELECT attempt_id, json FROM attempts WHERE state = 'unavailable' AND "
                      "attempt_id IN (SELECT attempt_id FROM trajectories)").fetchall()
    for attempt_id, raw in rows:
        record = json.loads(raw)
        if (record.get("unavailable_reason") in NEVER_GRADED_REASONS
                and record.get("agent_status") not in UNFINISHED):
            record.update(state="ungraded", unavailable_reason=None)
            db.execute("UPDATE attempts SET state = 'ungraded', json = ? WHERE attempt_id = ?",
                       (json.dumps(record), attempt_id))


MIGRATIONS: list[str | Callable[[sqlite3.Connection], None]] = [
    """
    CREATE TABLE benchmark (
        id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL, root TEXT NOT NULL);
    CREATE TABLE tasks (
        task_id TEXT PRIMARY KEY, name TEXT NOT NULL, domain TEXT NOT NULL,
        world_id TEXT NOT NULL, source TEXT NOT NULL, version TEXT NOT NULL, json TEXT NOT NULL);
    CREATE TABLE worlds (world_id TEXT PRIMARY KEY, json TEXT NOT NULL);
    CREATE TABLE attempts (
        attempt_id TEXT PRIMARY KEY, task_id TEXT NOT NULL, model TEXT NOT NULL,
        variant TEXT NOT NULL, attempt_index INTEGER NOT NULL, state TEXT NOT NULL,
        fingerprint TEXT NOT NULL, json TEXT NOT NULL);
    CREATE INDEX attempts_by_task ON attempts (task_id);
    CREATE TABLE grades (
        attempt_id TEXT NOT NULL REFERENCES attempts (attempt_id), criterion_id TEXT NOT NULL,
        grader TEXT NOT NULL, verdict TEXT NOT NULL, json TEXT NOT NULL,
        PRIMARY KEY (attempt_id, criterion_id, grader));
    CREATE TABLE findings (
        id INTEGER PRIMARY KEY, stage TEXT NOT NULL, task_id TEXT, criterion_id TEXT,
        check_name TEXT NOT NULL, severity TEXT NOT NULL, json TEXT NOT NULL,
        UNIQUE (stage, json));
    CREATE TABLE reviews (
        id INTEGER PRIMARY KEY, reviewer TEXT NOT NULL, created_at TEXT NOT NULL,
        task_id TEXT NOT NULL, label TEXT, note TEXT NOT NULL, evidence_hash TEXT NOT NULL,
        retracts INTEGER REFERENCES reviews (id));
    CREATE TRIGGER reviews_no_update BEFORE UPDATE ON reviews
        BEGIN SELECT RAISE(ABORT, 'reviews are append-only'); END;
    CREATE TRIGGER reviews_no_delete BEFORE DELETE ON reviews
        BEGIN SELECT RAISE(ABORT, 'reviews are append-only'); END;
    """,
    """
    CREATE TABLE controls (
        control_id TEXT PRIMARY KEY, task_id TEXT NOT NULL, task_version TEXT NOT NULL,
        kind TEXT NOT NULL, json TEXT NOT NULL);
    CREATE TABLE control_grades (
        control_id TEXT NOT NULL, criterion_id TEXT NOT NULL, grader TEXT NOT NULL,
        repeat INTEGER NOT NULL, task_version TEXT NOT NULL, verdict TEXT NOT NULL,
        json TEXT NOT NULL, PRIMARY KEY (control_id, criterion_id, grader, repeat));
    """,
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    """,
    """
    CREATE TABLE run_tasks (
        task_id TEXT NOT NULL, variant TEXT NOT NULL, json TEXT NOT NULL,
        PRIMARY KEY (task_id, variant));
    CREATE TABLE variant_prompts (
        task_id TEXT NOT NULL, variant TEXT NOT NULL, json TEXT NOT NULL,
        PRIMARY KEY (task_id, variant));
    """,
    # REPLACE INTO and INSERT OR REPLACE delete the old row without firing the delete trigger.
    """
    CREATE TRIGGER reviews_no_replace BEFORE INSERT ON reviews
        WHEN EXISTS (SELECT 1 FROM reviews WHERE id = NEW.id)
        BEGIN SELECT RAISE(ABORT, 'reviews are append-only'); END;
    """,
    _trajectories_apart,
    """
    CREATE TABLE finding_reviews (
        id INTEGER PRIMARY KEY, reviewer TEXT NOT NULL, created_at TEXT NOT NULL,
        finding_key TEXT NOT NULL, task_id TEXT, check_name TEXT NOT NULL, verdict TEXT,
        retracts INTEGER REFERENCES finding_reviews (id));
    CREATE TRIGGER finding_reviews_no_update BEFORE UPDATE ON finding_reviews
        BEGIN SELECT RAISE(ABORT, 'finding reviews are append-only'); END;
    CREATE TRIGGER finding_reviews_no_replace BEFORE INSERT ON finding_reviews
        WHEN EXISTS (SELECT 1 FROM finding_reviews WHERE id = NEW.id)
        BEGIN SELECT RAISE(ABORT, 'finding reviews are append-only'); END;
    CREATE TRIGGER finding_reviews_no_delete BEFORE DELETE ON finding_reviews
        BEGIN SELECT RAISE(ABORT, 'finding reviews are append-only'); END;
    """,
    # The search index (rubric_audit/review/search.py): words only; search_rows says where each text is.
    """
    CREATE VIRTUAL TABLE search_index USING fts5(text, content='');
    CREATE TABLE search_rows (
        id INTEGER PRIMARY KEY, kind TEXT NOT NULL, task_id TEXT NOT NULL, attempt_id TEXT,
        step INTEGER, criterion_id TEXT, grader TEXT);
    """,
    # Recorded score values that are no verdicts, and the sources' own metrics beside what was
    # read (rubric_audit/load/inspect_log.py).
    """
    CREATE TABLE measurements (
        attempt_id TEXT NOT NULL REFERENCES attempts (attempt_id), scorer TEXT NOT NULL,
        key TEXT NOT NULL, json TEXT NOT NULL, PRIMARY KEY (attempt_id, scorer, key));
    CREATE TABLE source_metrics (
        source TEXT NOT NULL, scorer TEXT NOT NULL, key TEXT NOT NULL, metric TEXT NOT NULL,
        json TEXT NOT NULL, PRIMARY KEY (source, scorer, key, metric));
    """,
    _ungraded_apart,
    # Audits at archive scale (#29): findings of the checks per attempt are replaced per attempt;
    # the attempts whose checks are due (added or changed since they were checked); each source
    # folder as last read (its files' fingerprint, its summary), so an unchanged one is not read
    # again; bootstrap intervals by their inputs.
    """
    ALTER TABLE findings ADD COLUMN attempt_id TEXT;
    CREATE INDEX findings_by_attempt ON findings (attempt_id) WHERE attempt_id IS NOT NULL;
    CREATE TABLE unchecked (attempt_id TEXT PRIMARY KEY);
    CREATE TABLE sources (path TEXT PRIMARY KEY, key TEXT NOT NULL, json TEXT NOT NULL);
    CREATE TABLE intervals (key TEXT PRIMARY KEY, json TEXT NOT NULL);
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)
VERSION_META = "benchmark_version"
GENERATION_META = "generation"
APPLICATION_ID = 0x52415544  # "RAUD" in the SQLite header: a store this tool made
MAX_TRAJECTORY_JSON_BYTES = 200_000_000  # a stored trajectory expands to at most this
M = TypeVar("M", bound=BaseModel)
Schema = frozenset[tuple[str, str, str, str]]
SearchDocument = tuple[str, str, str | None, int | None, str | None, str | None, str]
"""What the search index holds of one text: kind, task id, attempt id, step, criterion id,
grader, and the text itself (only its words are kept)."""
SearchRow = tuple[str, str, str | None, int | None, str | None, str | None, str | None]
"""Where an indexed text that matched lives: kind, task id, attempt id, step, criterion id,
grader, and the attempt's model (None for a task's prompt)."""
SEARCH_STAMP = "search_index"  # the meta key of what the search index was built from


def _schema(db: sqlite3.Connection) -> Schema:
    """Every table, index, view and trigger of a store, with its SQL (whitespace collapsed);
    SQLite's own statistics tables are left out."""
    return frozenset((kind, name, table, " ".join((sql or "").split())) for kind, name, table, sql
                     in db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")
                     if not name.startswith("sqlite_stat"))


@cache
def expected_schema(version: int) -> Schema:
    """The schema of a store this tool made, at `version`: the migrations run on an empty
    in-memory database, so every new migration is compared without a list kept by hand."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    try:
        for script in MIGRATIONS[:version]:
            if callable(script):
                script(db)
            else:
                for statement in filter(str.strip, script.split(";\n")):
                    db.execute(statement)
        return _schema(db)
    finally:
        db.close()


class ImportSummary(BaseModel):
    """What an import changed: new attempts by state, ones already stored (`now_graded` of them
    graded since they were stored, by a judge run), and conflicting ones kept out."""

    added_graded: int = 0
    added_ungraded: int = 0
    added_unavailable: int = 0
    unchanged: int = 0
    now_graded: int = 0
    conflicts: int = 0
    sources: list[SourceSummary] = Field(default_factory=list)

    @property
    def added(self) -> int:
        return self.added_graded + self.added_ungraded + self.added_unavailable


class SourceRecord(BaseModel):
    """A source folder as an import last read it: the fingerprint of its files (with what its
    reading depends on), its summary, and how many of its attempts were stored (added, or
    already stored alike) and refused as conflicting. An unchanged source is not read again."""

    key: str
    summary: SourceSummary
    stored: int
    conflicts: int


class AttemptToCheckRow(NamedTuple):
    attempt_id: str
    json: str
    unchecked: bool
    trajectory: bytes | None  # compressed
    grades: list[str]  # every grader's but the code checker's, as stored


class AttemptToCheck(NamedTuple):
    attempt: Attempt
    trajectory: Trajectory | None
    grades: list[CriterionGrade]  # every grader's but the code checker's
    unchecked: bool


@dataclass
class AttemptChecks:
    """What the checks per attempt found on one attempt; None: the stage did not run on it."""

    attempt_id: str
    code_grades: list[CriterionGrade] | None = None
    code_findings: list[Finding] = field(default_factory=list)
    provenance_findings: list[Finding] | None = None


def _dump(model: BaseModel) -> str:
    return model.model_dump_json(exclude={"trajectory"} if isinstance(model, Attempt) else None)


def _task_row(task: Task) -> tuple[str, ...]:
    return (task.id, task.name, task.domain, task.world_id, task.source, task.version(),
            _dump(task))


class AuditStore:
    """An open audit.db. Use as a context manager; writes happen inside `transaction()`."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        if self.path.is_symlink():
            raise InputError(self.path, None, "a symbolic link: an audit.db is opened only as "
                                              "itself, never written through a link")
        if self.path.exists() and not self.path.is_file():
            raise InputError(self.path, None, "not a regular file, not an audit.db")
        if self.path.is_file() and self.path.stat().st_size == 0:
            raise InputError(self.path, None, "empty file (0 bytes), not an audit.db: move it "
                                              "away to start a new audit here")
        self._uncounted = 0
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None)
            self.db.execute("PRAGMA trusted_schema = OFF")
            self.db.execute("PRAGMA foreign_keys = ON")
            self._check_made_here()
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise InputError(self.path, None, f"not a usable audit.db: {exc}") from None
        except InputError:
            self.db.close()
            raise

    def _check_made_here(self) -> None:
        """Refuse, before anything is written, a store this tool did not make: another
        program's SQLite file (its application id, or tables of its own), or one of ours with a
        table, view or trigger added, altered or missing (a view named `reviews` that swallows
        labels, a trigger that rewrites them). A new, empty database is made here."""
        application_id = self.db.execute("PRAGMA application_id").fetchone()[0]
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        found = _schema(self.db)
        if application_id not in (0, APPLICATION_ID):
            raise InputError(self.path, None, f"a SQLite file of another program (application "
                                              f"id {application_id:#x}), not an audit.db")
        if not found and version == 0:
            return
        if version > SCHEMA_VERSION:
            raise InputError(self.path, None, f"schema version {version} is newer than this "
                                              f"rubric-audit understands ({SCHEMA_VERSION})")
        expected = expected_schema(version)
        if found != expected:
            odd = sorted(name for _, name, _, _ in found ^ expected)
            raise InputError(self.path, None, f"not an audit.db made by rubric-audit: its "
                                              f"schema differs ({', '.join(odd[:5])})")

    def _load(self, model: type[M], raw: str) -> M:
        """A stored row's JSON as its model; a row that does not parse is an unusable store."""
        try:
            return model.model_validate_json(raw)
        except ValidationError as exc:
            raise InputError(self.path, f"{model.__name__} row",
                             f"{str(exc.errors()[0]['msg'])[:200]}: not a usable audit.db "
                             f"(edited by hand?)") from None

    def __enter__(self) -> AuditStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def _migrate(self) -> None:
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if self.db.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
            self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        for target, script in enumerate(MIGRATIONS[version:], start=version + 1):
            with self.transaction(counted=False):
                if callable(script):
                    script(self.db)
                else:
                    for statement in filter(str.strip, script.split(";\n")):
                        self.db.execute(statement)
                self.db.execute(f"PRAGMA user_version = {target}")

    @property
    def schema_version(self) -> int:
        version: int = self.db.execute("PRAGMA user_version").fetchone()[0]
        return version

    @contextmanager
    def transaction(self, counted: bool = True) -> Iterator[None]:
        """All or nothing: an exception rolls back every write made inside. Inside another
        transaction it joins that one, so a whole audit can commit (or roll back) at once.

        A transaction that changed a row counts one more `generation` of the store (unless not
        `counted`: a migration), so that what was built from the store (its reports) can tell
        whether it is still current."""
        if self.db.in_transaction:
            yield
            return
        self.db.execute("BEGIN IMMEDIATE")
        self._uncounted = self.db.total_changes
        try:
            yield
            if counted and self._changed():
                self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                (GENERATION_META, json.dumps(self.generation() + 1)))
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def _changed(self) -> bool:
        return self.db.total_changes != self._uncounted

    def generation(self) -> int:
        """How many transactions changed the store (since generations were counted)."""
        if self.schema_version < 3:  # before the meta table
            return 0
        row = self.db.execute("SELECT value FROM meta WHERE key = ?",
                              (GENERATION_META,)).fetchone()
        return int(row[0]) if row and row[0].isdecimal() else 0

    def committed_generation(self) -> int:
        """The generation the store will have once the transaction under way commits."""
        return self.generation() + (self.db.in_transaction and self._changed())

    def save_benchmark(self, bench: Benchmark) -> None:
        """Store the benchmark's tasks and worlds, replacing earlier versions of them, and which
        version of the benchmark they are."""
        self.db.execute("INSERT OR REPLACE INTO benchmark (id, name, root) VALUES (1, ?, ?)",
                        (bench.name, bench.root))
        if bench.version is not None:
            self.set_meta(VERSION_META, bench.version.model_dump())
        self.db.executemany("INSERT OR REPLACE INTO tasks VALUES (?, ?, ?, ?, ?, ?, ?)",
                            [_task_row(t) for t in bench.tasks])
        self.db.executemany("INSERT OR REPLACE INTO worlds VALUES (?, ?)",
                            [(w.id, _dump(w)) for w in bench.worlds])

    def add_tasks(self, tasks: Iterable[Task]) -> None:
        """Tasks not stored yet (a stored one, a benchmark's above all, stands)."""
        self.db.executemany("INSERT OR IGNORE INTO tasks VALUES (?, ?, ?, ?, ?, ?, ?)",
                            [_task_row(t) for t in tasks])

    def add_run_tasks(self, recorded: dict[str, dict[str, Task]]) -> bool:
        """Each task as a variant's runs recorded it (task id -> variant -> task), where that
        variant's is not stored yet; whether any was new."""
        before = self.db.total_changes
        self.db.executemany("INSERT OR IGNORE INTO run_tasks VALUES (?, ?, ?)",
                            [(task_id, variant, _dump(task))
                             for task_id, by_variant in recorded.items()
                             for variant, task in by_variant.items()])
        return self.db.total_changes != before

    def run_tasks(self) -> dict[str, dict[str, Task]]:
        """Each task as each variant's runs recorded it: task id -> variant -> task."""
        out: dict[str, dict[str, Task]] = {}
        for task_id, variant, raw in self.db.execute(
                "SELECT task_id, variant, json FROM run_tasks ORDER BY task_id, variant"):
            out.setdefault(task_id, {})[variant] = self._load(Task, raw)
        return out

    def replace_run_tasks(self, tasks: Iterable[Task], differences: Iterable[VariantPrompt]
                          ) -> None:
        """Tasks rebuilt from the runs replace earlier ones (never a benchmark's own task)."""
        self.db.executemany(
            "INSERT OR REPLACE INTO tasks SELECT ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS "
            "(SELECT 1 FROM tasks WHERE task_id = ? AND source = 'benchmark')",
            [(*_task_row(t), t.id) for t in tasks])
        self.db.execute("DELETE FROM variant_prompts")
        self.db.executemany("INSERT INTO variant_prompts VALUES (?, ?, ?)",
                            [(d.task_id, d.variant, _dump(d)) for d in differences])

    def variant_prompts(self) -> list[VariantPrompt]:
        return [self._load(VariantPrompt, r[0]) for r in self.db.execute(
            "SELECT json FROM variant_prompts ORDER BY task_id, variant")]

    def _trajectory(self, attempt_id: str, data: bytes) -> Trajectory:
        """A stored trajectory, expanded at most to MAX_TRAJECTORY_JSON_BYTES (a blob that
        expands further was not written here: a zlib bomb is refused, never inflated)."""
        try:
            expander = zlib.decompressobj()
            raw = expander.decompress(data, MAX_TRAJECTORY_JSON_BYTES)
        except zlib.error as exc:
            raise InputError(self.path, f"trajectory of {attempt_id}",
                             f"not zlib data ({exc}): not a usable audit.db") from None
        if expander.unconsumed_tail or not expander.eof:
            raise InputError(self.path, f"trajectory of {attempt_id}",
                             f"expands beyond {MAX_TRAJECTORY_JSON_BYTES:,} bytes or is cut "
                             f"short: not a usable audit.db")
        return self._load(Trajectory, raw.decode("utf-8", "replace"))

    def trajectory(self, attempt_id: str) -> Trajectory | None:
        row = self.db.execute("SELECT data FROM trajectories WHERE attempt_id = ?",
                              (attempt_id,)).fetchone()
        return self._trajectory(attempt_id, row[0]) if row else None

    def trajectories(self) -> Iterator[tuple[str, Trajectory]]:
        """(attempt id, trajectory) of every stored attempt, one at a time (they can be large)."""
        for attempt_id, data in self.db.execute(
                "SELECT attempt_id, data FROM trajectories ORDER BY attempt_id"):
            yield attempt_id, self._trajectory(attempt_id, data)

    def save_grades(self, grades: Iterable[CriterionGrade]) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO grades VALUES (?, ?, ?, ?, ?)",
            [(g.attempt_id, g.criterion_id, g.grader, g.verdict, _dump(g)) for g in grades])

    def tasks_with_attempts(self, unchecked_only: bool) -> Iterator[Task]:
        """The stored tasks that have attempts (only unchecked ones: `unchecked_only`), by id."""
        query = ("SELECT json FROM tasks WHERE task_id IN (SELECT a.task_id FROM attempts a "
                 "JOIN unchecked USING (attempt_id)) ORDER BY task_id" if unchecked_only else
                 "SELECT json FROM tasks WHERE task_id IN (SELECT task_id FROM attempts) "
                 "ORDER BY task_id")
        for (raw,) in self.db.execute(query).fetchall():
            yield self._load(Task, raw)

    def attempt_rows_to_check(self, task_id: str, unchecked_only: bool, with_trajectories: bool
                              ) -> list[AttemptToCheckRow]:
        """A task's attempts (only the unchecked ones: `unchecked_only`) as stored, each with its
        trajectory (if asked for and recorded), its grades but the code checker's, and whether
        it is unchecked; `to_check` reads one (in any process)."""
        rows = self.db.execute(
            "SELECT a.attempt_id, a.json, u.attempt_id IS NOT NULL, "
            + ("t.data" if with_trajectories else "NULL") +
            " FROM attempts a LEFT JOIN unchecked u USING (attempt_id) "
            + ("LEFT JOIN trajectories t USING (attempt_id) " if with_trajectories else "")
            + "WHERE a.task_id = ?" + (" AND u.attempt_id IS NOT NULL" if unchecked_only else "")
            + " ORDER BY a.variant, a.attempt_index", (task_id,)).fetchall()
        grades: dict[str, list[str]] = {}
        for attempt_id, raw in self.db.execute(
                "SELECT attempt_id, json FROM grades WHERE attempt_id IN (SELECT attempt_id "
                "FROM attempts WHERE task_id = ?) AND grader != ? ORDER BY attempt_id, "
                "criterion_id, grader", (task_id, CODE_GRADER)):
            grades.setdefault(attempt_id, []).append(raw)
        return [AttemptToCheckRow(attempt_id, raw, bool(due), data, grades.get(attempt_id, []))
                for attempt_id, raw, due, data in rows]

    def to_check(self, row: AttemptToCheckRow) -> AttemptToCheck:
        """A stored attempt read for its checks (reads no row: runs in a worker process too)."""
        return AttemptToCheck(self._load(Attempt, row.json),
                              self._trajectory(row.attempt_id, row.trajectory)
                              if row.trajectory else None,
                              [self._load(CriterionGrade, g) for g in row.grades], row.unchecked)

    def clear_attempt_checks(self, code_stage: str | None, provenance_stage: str | None) -> None:
        """Before checks of every attempt: the code checker's grades (with `code_stage`) and
        the stages' findings, all of them."""
        if code_stage is not None:
            self.db.execute("DELETE FROM grades WHERE grader = ?", (CODE_GRADER,))
        for stage in (code_stage, provenance_stage):
            if stage is not None:
                self.db.execute("DELETE FROM findings WHERE stage = ?", (stage,))

    def replace_attempt_checks(self, checked: AttemptChecks, code_stage: str | None,
                               provenance_stage: str | None) -> None:
        """One attempt's results replace its earlier ones, stage by stage (a stage not run on it
        keeps them)."""
        attempt_id = checked.attempt_id
        found: list[tuple[str, list[Finding]]] = []
        if code_stage is not None and checked.code_grades is not None:
            self.db.execute("DELETE FROM grades WHERE attempt_id = ? AND grader = ?",
                            (attempt_id, CODE_GRADER))
            self.save_grades(checked.code_grades)
            found.append((code_stage, checked.code_findings))
        if provenance_stage is not None and checked.provenance_findings is not None:
            found.append((provenance_stage, checked.provenance_findings))
        for stage, findings in found:
            self.db.execute("DELETE FROM findings WHERE stage = ? AND attempt_id = ?",
                            (stage, attempt_id))
            self.db.executemany(
                "INSERT OR IGNORE INTO findings (stage, task_id, criterion_id, check_name, "
                "severity, json, attempt_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(stage, f.task_id, f.criterion_id, f.check, f.severity, _dump(f), attempt_id)
                 for f in findings])

    def clear_unchecked(self) -> None:
        """Every attempt's checks have run on what is stored now."""
        self.db.execute("DELETE FROM unchecked")

    def _rows_digest(self, query: str, args: tuple[str, ...] = ()) -> str:
        digest = hashlib.blake2b(digest_size=16)
        for row in self.db.execute(query, args):
            digest.update(json.dumps(row).encode() + b"\n")
        return digest.hexdigest()

    def tasks_digest(self) -> str:
        """Of every stored task's version (a hash of its content)."""
        return self._rows_digest("SELECT task_id, version FROM tasks ORDER BY task_id")

    def task_attempts_digest(self, task_id: str) -> str:
        """Of a task's attempts as stored, with their grades and trajectories (compressed, as
        kept): what a page showing its attempts is made from."""
        digest = hashlib.blake2b(digest_size=16)
        for raw, data in self.db.execute(
                "SELECT a.json, t.data FROM attempts a LEFT JOIN trajectories t USING "
                "(attempt_id) WHERE a.task_id = ? ORDER BY a.variant, a.attempt_index, "
                "a.attempt_id", (task_id,)):
            text, blob = raw.encode(), data or b""
            digest.update(f"{len(text)} {len(blob)}\n".encode() + text + blob)
        for (raw,) in self.db.execute(
                "SELECT g.json FROM grades g JOIN attempts a USING (attempt_id) WHERE "
                "a.task_id = ? ORDER BY g.attempt_id, g.criterion_id, g.grader", (task_id,)):
            text = raw.encode()
            digest.update(f"{len(text)}\n".encode() + text)
        return digest.hexdigest()

    def workbooks_digest(self) -> str:
        """Of what gold recomputation stored (recomputed values, what workbooks compute)."""
        return self._rows_digest("SELECT key, value FROM meta WHERE key IN (?, ?) ORDER BY key",
                                 ("regold", "regold_computed"))

    def control_verdicts_digest(self) -> str:
        """Of every verdict on a control but the code checker's, with the recorded controls."""
        return self._rows_digest(
            "SELECT control_id, criterion_id, grader, repeat, task_version, verdict, json FROM "
            "control_grades WHERE grader != ? UNION ALL SELECT control_id, task_id, "
            "task_version, kind, json, '', '' FROM controls WHERE control_id IN (SELECT "
            "control_id FROM control_grades WHERE grader = 'recorded') ORDER BY 1, 2, 3, 4",
            (CODE_GRADER,))

    def source(self, path: str) -> SourceRecord | None:
        row = self.db.execute("SELECT json FROM sources WHERE path = ?", (path,)).fetchone()
        return self._load(SourceRecord, row[0]) if row else None

    def save_source(self, record: SourceRecord) -> None:
        """What a source gave when it was read, with the fingerprint of its files then."""
        self.db.execute("INSERT OR REPLACE INTO sources VALUES (?, ?, ?)",
                        (record.summary.path, record.key, _dump(record)))

    def measurements(self) -> list[Measurement]:
        return [self._load(Measurement, r[0]) for r in self.db.execute(
            "SELECT json FROM measurements ORDER BY attempt_id, scorer, key")]

    def save_source_metrics(self, metrics: Iterable[SourceMetric]) -> None:
        """A source's metrics, each beside what was read; a source read again replaces them."""
        self.db.executemany("INSERT OR REPLACE INTO source_metrics VALUES (?, ?, ?, ?, ?)",
                            [(m.source, m.scorer, m.key, m.metric, _dump(m)) for m in metrics])

    def source_metrics(self) -> list[SourceMetric]:
        return [self._load(SourceMetric, r[0]) for r in self.db.execute(
            "SELECT json FROM source_metrics ORDER BY source, scorer, key, metric")]

    def replace_controls(self, controls: Iterable[Control]) -> None:
        """The current controls replace earlier ones; grades of other task versions are kept, and
        so are the controls the runs recorded (Harbor's oracle and nop trials)."""
        self.db.execute("DELETE FROM controls WHERE control_id NOT IN (SELECT control_id FROM "
                        "control_grades WHERE grader = 'recorded')")
        self.db.executemany("INSERT INTO controls VALUES (?, ?, ?, ?, ?)",
                            [(c.id, c.task_id, c.task_version, c.kind, _dump(c))
                             for c in controls])

    def add_recorded_controls(self, controls: Iterable[Control],
                              grades: Iterable[CriterionGrade]) -> None:
        """Controls the runs recorded, with their recorded verdicts, on the stored tasks."""
        versions = {t.id: t.version() for t in self.tasks()}
        kept = {c.id: c.model_copy(update={"task_version": versions[c.task_id]})
                for c in controls if c.task_id in versions}
        self.db.executemany("INSERT OR REPLACE INTO controls VALUES (?, ?, ?, ?, ?)",
                            [(c.id, c.task_id, c.task_version, c.kind, _dump(c))
                             for c in kept.values()])
        self.db.executemany(
            "INSERT OR REPLACE INTO control_grades VALUES (?, ?, ?, 0, ?, ?, ?)",
            [(g.attempt_id, g.criterion_id, g.grader, kept[g.attempt_id].task_version,
              g.verdict, _dump(ControlGrade(grade=g, task_version=kept[g.attempt_id].task_version)))
             for g in grades if g.attempt_id in kept])

    def replace_control_grades(self, grader: str, grades: Iterable[ControlGrade]) -> None:
        self.db.execute("DELETE FROM control_grades WHERE grader = ?", (grader,))
        self.db.executemany(
            "INSERT INTO control_grades VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(g.grade.attempt_id, g.grade.criterion_id, g.grade.grader, g.repeat, g.task_version,
              g.grade.verdict, _dump(g)) for g in grades])

    def controls(self) -> list[Control]:
        return [self._load(Control, r[0])
                for r in self.db.execute("SELECT json FROM controls ORDER BY control_id")]

    def control_grades(self) -> list[ControlGrade]:
        return [self._load(ControlGrade, r[0]) for r in self.db.execute(
            "SELECT json FROM control_grades ORDER BY control_id, criterion_id, grader, repeat")]

    def replace_findings(self, stage: str, findings: Iterable[Finding]) -> None:
        """A stage's findings replace that stage's earlier ones."""
        self.db.execute("DELETE FROM findings WHERE stage = ?", (stage,))
        self.add_findings(stage, findings)

    def add_findings(self, stage: str, findings: Iterable[Finding]) -> None:
        """Add findings to a stage; a finding already recorded there is not added twice."""
        self.db.executemany(
            "INSERT OR IGNORE INTO findings (stage, task_id, criterion_id, check_name, severity,"
            " json) VALUES (?, ?, ?, ?, ?, ?)",
            [(stage, f.task_id, f.criterion_id, f.check, f.severity, _dump(f)) for f in findings])

    def append_review(self, review: Review) -> int:
        cursor = self.db.execute(
            "INSERT INTO reviews (reviewer, created_at, task_id, label, note, evidence_hash,"
            " retracts) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (review.reviewer, review.created_at, review.task_id, review.label, review.note,
             review.evidence_hash, review.retracts))
        return int(cursor.lastrowid or 0)

    def append_finding_review(self, review: FindingReview) -> int:
        cursor = self.db.execute(
            "INSERT INTO finding_reviews (reviewer, created_at, finding_key, task_id, check_name,"
            " verdict, retracts) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (review.reviewer, review.created_at, review.finding_key, review.task_id,
             review.check, review.verdict, review.retracts))
        return int(cursor.lastrowid or 0)

    def finding_reviews(self) -> list[tuple[int, FindingReview]]:
        rows = self.db.execute(
            "SELECT id, reviewer, created_at, finding_key, task_id, check_name, verdict, retracts"
            " FROM finding_reviews ORDER BY id")
        return [(r[0], FindingReview(reviewer=r[1], created_at=r[2], finding_key=r[3],
                                     task_id=r[4], check=r[5], verdict=r[6], retracts=r[7]))
                for r in rows]

    def set_meta(self, key: str, value: object, counted: bool = True) -> None:
        """`counted`: unless False (bookkeeping of what was built from the store), the store
        changes generation when the transaction commits."""
        with self.transaction(), (nullcontext() if counted else self.bookkeeping()):
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    @contextmanager
    def bookkeeping(self) -> Iterator[None]:
        """Writes inside (in a transaction) note what was built from the store; they change no
        generation, since they change nothing built from it."""
        before = self.db.total_changes
        try:
            yield
        finally:
            self._uncounted += self.db.total_changes - before

    def intervals(self) -> dict[str, str]:
        """The bootstrap intervals (JSON) the last reports computed, by their inputs' key."""
        return dict(self.db.execute("SELECT key, json FROM intervals"))

    def replace_intervals(self, intervals: dict[str, str]) -> None:
        with self.transaction(), self.bookkeeping():
            self.db.execute("DELETE FROM intervals")
            self.db.executemany("INSERT INTO intervals VALUES (?, ?)", intervals.items())

    def meta(self, key: str, default: object = None) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        try:
            return json.loads(row[0]) if row else default
        except json.JSONDecodeError:
            raise InputError(self.path, f"meta {key!r}", "not JSON: not a usable audit.db "
                                                         "(edited by hand?)") from None

    @contextmanager
    def _search_index_in_use(self) -> Iterator[None]:
        """Reading or rebuilding the search index: SQLite refusing it (its blocks altered, so
        FTS5 cannot even open the table) is a damaged store, said in one line."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            raise InputError(self.path, "search index", f"damaged ({exc}): this audit.db cannot "
                                                        "be searched; audit again into a new "
                                                        "--out to search it") from None

    def search_sources(self) -> list[float]:
        """What the search index is built from, in numbers: the count and total size of the
        tasks, attempts, grades and trajectories (any import or audit changes one)."""
        return [v for table, column in (("tasks", "json"), ("attempts", "json"),
                                        ("grades", "json"), ("trajectories", "data"))
                for v in self.db.execute(
                    f"SELECT count(*), total(length({column})) FROM {table}").fetchone()]

    def search_index_is_current(self) -> bool:
        return bool(self.meta(SEARCH_STAMP) == self.search_sources())

    def replace_search_index(self, documents: Iterable[SearchDocument]) -> None:
        """The search index rebuilt from `documents`, stamped with what it was built from."""
        with self._search_index_in_use(), self.transaction():
            self.db.execute("INSERT INTO search_index (search_index) VALUES ('delete-all')")
            self.db.execute("DELETE FROM search_rows")
            for row_id, (kind, task, attempt, step, criterion, grader, text) in enumerate(
                    documents, start=1):
                self.db.execute("INSERT INTO search_rows VALUES (?, ?, ?, ?, ?, ?, ?)",
                                (row_id, kind, task, attempt, step, criterion, grader))
                self.db.execute("INSERT INTO search_index (rowid, text) VALUES (?, ?)",
                                (row_id, text))
            self.set_meta(SEARCH_STAMP, self.search_sources())

    @staticmethod
    def _search_where(match: str, model: str, task: str, check: str
                      ) -> tuple[str, list[object]]:
        """The FTS5 `match` narrowed to attempts of a model (part of its name), a task (by id)
        or tasks with a finding of a check: the SQL after FROM, and its arguments."""
        sql = ["search_index JOIN search_rows r ON r.id = search_index.rowid "
               "LEFT JOIN attempts a ON a.attempt_id = r.attempt_id "
               "WHERE search_index MATCH ?"]
        args: list[object] = [match]
        if model:
            sql.append("AND (a.model LIKE ? OR (r.attempt_id IS NULL AND r.task_id IN "
                       "(SELECT task_id FROM attempts WHERE model LIKE ?)))")
            args += [f"%{model}%"] * 2
        if task:
            sql.append("AND r.task_id = ?")
            args.append(task)
        if check:
            sql.append("AND r.task_id IN (SELECT task_id FROM findings WHERE check_name = ?)")
            args.append(check)
        return " ".join(sql), args

    def search(self, match: str, model: str = "", task: str = "", check: str = "",
               limit: int = 50) -> tuple[list[SearchRow], int]:
        """The indexed texts an FTS5 `match` finds, best first (at most `limit`), narrowed as
        `_search_where` says, and how many there are in all."""
        where, args = self._search_where(match, model, task, check)
        with self._search_index_in_use():
            rows = self.db.execute(
                "SELECT r.kind, r.task_id, r.attempt_id, r.step, r.criterion_id, r.grader, "
                f"a.model FROM {where} ORDER BY rank LIMIT ?", [*args, limit]).fetchall()
            total = len(rows) if len(rows) < limit else int(self.db.execute(
                f"SELECT count(*) FROM {where}", args).fetchone()[0])
        return rows, total

    def search_tasks(self, match: str) -> set[str]:
        """Tasks with any indexed text an FTS5 `match` finds."""
        with self._search_index_in_use():
            return {r[0] for r in self.db.execute(
                "SELECT DISTINCT r.task_id FROM search_index JOIN search_rows r "
                "ON r.id = search_index.rowid WHERE search_index MATCH ?", (match,))}

    def task(self, task_id: str) -> Task | None:
        row = self.db.execute("SELECT json FROM tasks WHERE task_id = ?", (task_id,)).fetchone()
        return self._load(Task, row[0]) if row else None

    def attempt(self, attempt_id: str) -> Attempt | None:
        row = self.db.execute("SELECT json FROM attempts WHERE attempt_id = ?",
                              (attempt_id,)).fetchone()
        return self._load(Attempt, row[0]) if row else None

    def benchmark_name(self) -> str | None:
        row = self.db.execute("SELECT name FROM benchmark").fetchone()
        return row[0] if row else None

    def benchmark_root(self) -> str | None:
        """The benchmark folder as the audit was given it."""
        row = self.db.execute("SELECT root FROM benchmark").fetchone()
        return row[0] if row else None

    def benchmark_version(self) -> BenchmarkVersion | None:
        """The version of the benchmark audited (None: an audit of runs alone, or one stored
        before versions were)."""
        stored = self.meta(VERSION_META)
        return None if stored is None else self._load(BenchmarkVersion, json.dumps(stored))

    def tasks(self) -> list[Task]:
        return [self._load(Task, r[0])
                for r in self.db.execute("SELECT json FROM tasks ORDER BY task_id")]

    def worlds(self) -> list[World]:
        return [self._load(World, r[0])
                for r in self.db.execute("SELECT json FROM worlds ORDER BY world_id")]

    def attempts(self) -> list[Attempt]:
        return [self._load(Attempt, r[0]) for r in self.db.execute(
            "SELECT json FROM attempts ORDER BY variant, task_id, attempt_index")]

    def attempt_rows(self) -> list[tuple[str, str, str, str, str]]:
        """(attempt id, task id, model, variant, state) of every attempt, without parsing JSON."""
        return list(self.db.execute("SELECT attempt_id, task_id, model, variant, state FROM "
                                    "attempts ORDER BY variant, task_id, attempt_index"))

    def attempt_lines(self) -> list[AttemptLine]:
        """Every attempt as its row's columns give it (in the order of `attempts`), without
        parsing its JSON: what scores read, at a few hundred bytes an attempt."""
        common: dict[str, str] = {}
        no_tokens = Tokens(None)
        lines = []
        try:
            rows = self.db.execute(
                "SELECT attempt_id, task_id, model, variant, state, "
                "json_extract(json, '$.unavailable_reason'), "
                "json_extract(json, '$.usage.completion_tokens') FROM attempts "
                "ORDER BY variant, task_id, attempt_index")
            for attempt_id, task_id, model, variant, state, reason, tokens in rows:
                if not isinstance(reason, str | None) or not isinstance(tokens, int | None):
                    raise sqlite3.DataError(f"attempt {attempt_id}: a reason or token count of "
                                            f"another kind")
                lines.append(AttemptLine(
                    attempt_id, common.setdefault(task_id, task_id),
                    common.setdefault(model, model), common.setdefault(variant, variant),
                    common.setdefault(state, state), reason,
                    no_tokens if tokens is None else Tokens(tokens)))
        except (sqlite3.OperationalError, sqlite3.DataError) as exc:
            raise InputError(self.path, "Attempt row", f"{str(exc)[:200]}: not a usable "
                                                        f"audit.db (edited by hand?)") from None
        return lines

    def grade_lines(self, attempts: list[AttemptLine]) -> list[GradeLine]:
        """Every grader's grades but the code checker's, without their rationales (in the
        order of `grades`); each attempt id is the string object of its line in `attempts`."""
        ids = {a.id: a.id for a in attempts}
        common: dict[str, str] = {}
        return [GradeLine(ids.get(attempt_id, attempt_id),
                          common.setdefault(criterion_id, criterion_id),
                          common.setdefault(grader, grader), common.setdefault(verdict, verdict))
                for attempt_id, criterion_id, grader, verdict in self.db.execute(
                    "SELECT attempt_id, criterion_id, grader, verdict FROM grades "
                    "WHERE grader != ? ORDER BY attempt_id, criterion_id, grader",
                    (CODE_GRADER,))]

    def code_verdicts(self) -> Iterator[tuple[str, str]]:
        """The code checker's verdicts, each with its reason (why it was not applicable)."""
        yield from self.db.execute(
            "SELECT verdict, json_extract(json, '$.rationale') FROM grades WHERE grader = ?",
            (CODE_GRADER,))

    def agreement_with_code(self, grader: str) -> tuple[int, int]:
        """(pairs, agreeing): a grader's pass or fail where the code checker decided the same
        attempt's criterion."""
        checked, agree = self.db.execute(
            "SELECT count(*), total(c.verdict = o.verdict) FROM grades c JOIN grades o "
            "ON o.attempt_id = c.attempt_id AND o.criterion_id = c.criterion_id "
            "WHERE c.grader = ? AND c.verdict IN ('pass', 'fail') AND o.grader = ? "
            "AND o.verdict IN ('pass', 'fail')", (CODE_GRADER, grader)).fetchone()
        return checked, int(agree)

    def judge_replies(self) -> dict[str, tuple[int, int]]:
        """Per LLM judge rubric-audit ran (`judge:<model>`): its verdicts on attempts, and how
        many of them are unscored."""
        return {grader: (n, int(unscored)) for grader, n, unscored in self.db.execute(
            "SELECT grader, count(*), total(verdict = 'unscored') FROM grades "
            "WHERE substr(grader, 1, 6) = 'judge:' GROUP BY grader")}

    def finding_rows(self) -> Iterator[tuple[str, str, str | None, str]]:
        """(check, severity, task id, JSON) of every finding, one at a time."""
        yield from self.db.execute("SELECT check_name, severity, task_id, json FROM findings "
                                   "ORDER BY task_id, check_name, criterion_id, json")

    def attempts_for_task(self, task_id: str) -> list[Attempt]:
        return [self._load(Attempt, r[0]) for r in self.db.execute(
            "SELECT json FROM attempts WHERE task_id = ? ORDER BY variant, attempt_index",
            (task_id,))]

    def verdicts(self, grader: str) -> list[tuple[str, str, str]]:
        """(attempt id, criterion id, verdict) of one grader, without parsing JSON."""
        return list(self.db.execute("SELECT attempt_id, criterion_id, verdict FROM grades "
                                    "WHERE grader = ?", (grader,)))

    def grades_for_attempts(self, attempt_ids: list[str]) -> list[CriterionGrade]:
        marks = ",".join("?" * len(attempt_ids))
        return [self._load(CriterionGrade, r[0]) for r in self.db.execute(
            f"SELECT json FROM grades WHERE attempt_id IN ({marks}) ORDER BY attempt_id, "
            f"criterion_id, grader", attempt_ids)] if attempt_ids else []

    def graders(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT DISTINCT grader FROM grades ORDER BY 1")]

    def grades(self, grader: str | None = None) -> list[CriterionGrade]:
        query = "SELECT json FROM grades"
        rows = (self.db.execute(query + " WHERE grader = ? ORDER BY attempt_id, criterion_id",
                                (grader,)) if grader
                else self.db.execute(query + " ORDER BY attempt_id, criterion_id, grader"))
        return [self._load(CriterionGrade, r[0]) for r in rows]

    def findings(self, shown_only: bool = False) -> list[Finding]:
        """Every finding, or only those a report shows (`shown_only`: not info)."""
        return list(self.iter_findings(shown_only))

    def iter_findings(self, shown_only: bool = False) -> Iterator[Finding]:
        """The findings one at a time (an archive's are many), in the order `findings` gives."""
        for (raw,) in self.db.execute(
                "SELECT json FROM findings" + (" WHERE severity != 'info'" if shown_only else "")
                + " ORDER BY task_id, check_name, criterion_id, json"):
            yield self._load(Finding, raw)

    def reviews(self) -> list[tuple[int, Review]]:
        rows = self.db.execute(
            "SELECT id, reviewer, created_at, task_id, label, note, evidence_hash, retracts"
            " FROM reviews ORDER BY id")
        try:
            return [(r[0], Review(reviewer=r[1], created_at=r[2], task_id=r[3], label=r[4],
                                  note=r[5], evidence_hash=r[6], retracts=r[7])) for r in rows]
        except ValidationError as exc:
            raise invalid(self.path, "reviews", exc) from None


def open_audit(db: Path) -> AuditStore:
    """An existing audit's store; one line naming the file when there is none."""
    if not db.is_file():
        if is_benchmark(db.parent):
            raise InputError(db.parent, None, "a benchmark, not an audit's output folder: audit "
                                              "it first (`rubric-audit audit BENCH --out OUT`), "
                                              "then give OUT")
        raise InputError(db, None, "no audit.db here: run `rubric-audit audit` first")
    return AuditStore(db)
