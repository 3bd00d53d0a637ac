"""Search an audit's text: task prompts, answers, trajectory steps (text, tool calls, results) and
judge rationales, through an SQLite FTS5 index in audit.db; and the review queue's filters.

The index holds only the words (a contentless FTS5 table, so audit.db does not store the text
twice); `search_rows` says where each indexed text lives, and a hit's line is read back from the
store. The index is rebuilt when what it was built from changed (a stamp in `meta`), so imports
and audits do not pay for it and a search never sees stale text.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rubric_audit.core.errors import InputError
from rubric_audit.core.model import Attempt, Record, Task, Trajectory
from rubric_audit.store.audit_store import AuditStore, open_audit

INDEX_META = "search_index"
CONTEXT = 70
FILTER_KEYS = ("model", "domain", "check", "label")
FILTER_TOKEN = re.compile(rf"\b({'|'.join(FILTER_KEYS)}):(\"[^\"]*\"|\S+)", re.I)


class Hit(Record):
    """One indexed text that matched: where it is, and its first matching line in context."""

    task_id: str
    attempt_id: str | None
    model: str | None
    place: str
    line: str


class QueueFilter(Record):
    """What the review queue is narrowed to: words anywhere, and model, domain, finding check or
    label (each a case-insensitive part of the name)."""

    text: str = ""
    model: str = ""
    domain: str = ""
    check: str = ""
    label: str = ""

    def is_empty(self) -> bool:
        return not any(self.model_dump().values())

    def describe(self) -> str:
        parts = [f"{k}:{v}" for k, v in self.model_dump().items() if v and k != "text"]
        return " ".join([*parts, self.text]).strip()


def parse_filter(query: str) -> QueueFilter:
    """'model:grok check:answer_value PIK' -> model, check and the words 'PIK'."""
    fields = {key.lower(): value.strip('"') for key, value in FILTER_TOKEN.findall(query)}
    return QueueFilter(text=" ".join(FILTER_TOKEN.sub(" ", query).split()), **fields)


def _step_text(trajectory: Trajectory, index: int) -> str:
    step = trajectory.steps[index]
    parts = [step.text, step.reasoning]
    for call in step.tool_calls:
        parts += [f"{call.name} {call.arguments}", call.result or ""]
    return "\n".join(p for p in parts if p)


def _place(kind: str, step: int | None, criterion: str | None, grader: str | None,
           trajectory: Trajectory | None) -> str:
    if kind == "step" and trajectory is not None and step is not None:
        names = ", ".join(dict.fromkeys(c.name for c in trajectory.steps[step].tool_calls))
        return f"step {step}" + (f" {names}" if names else "")
    if kind == "rationale":
        return f"rationale {criterion} ({grader})"
    return kind


def _documents(store: AuditStore) -> Iterator[tuple[str, str, str | None, int | None, str | None,
                                                     str | None, str]]:
    """(kind, task id, attempt id, step, criterion, grader, text) of everything searchable."""
    for task in store.tasks():
        yield "prompt", task.id, None, None, None, None, task.prompt
    tasks = {}
    for attempt in store.attempts():
        tasks[attempt.id] = attempt.task_id
        if attempt.answer:
            yield "answer", attempt.task_id, attempt.id, None, None, None, attempt.answer
    for attempt_id, trajectory in store.trajectories():
        for index in range(len(trajectory.steps)):
            yield ("step", tasks.get(attempt_id, ""), attempt_id, index, None, None,
                   _step_text(trajectory, index))
    for grade in store.grades():
        if grade.rationale:
            yield ("rationale", tasks.get(grade.attempt_id, ""), grade.attempt_id, None,
                   grade.criterion_id, grade.grader, grade.rationale)


def _stamp(store: AuditStore) -> list[float]:
    """What the index was built from: counts and total sizes of tasks, attempts, grades."""
    return [v for table, column in (("tasks", "json"), ("attempts", "json"), ("grades", "json"),
                                    ("trajectories", "data"))
            for v in store.db.execute(f"SELECT count(*), total(length({column})) FROM {table}")
            .fetchone()]


@contextmanager
def _index_in_use(store: AuditStore) -> Iterator[None]:
    """Reading or rebuilding the index: SQLite refusing it (its blocks altered, so FTS5 cannot
    even open the table) is a damaged store, said in one line, not an internal error."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        raise InputError(store.path, "search index", f"damaged ({exc}): this audit.db cannot be "
                                                     "searched; audit again into a new --out "
                                                     "to search it") from None


def ensure_index(store: AuditStore) -> None:
    """Build the index if it is missing or older than what it indexes."""
    stamp = _stamp(store)
    if store.meta(INDEX_META) == stamp:
        return
    with _index_in_use(store), store.transaction():
        store.db.execute("INSERT INTO search_index (search_index) VALUES ('delete-all')")
        store.db.execute("DELETE FROM search_rows")
        for row_id, (kind, task, attempt, step, criterion, grader, text) in enumerate(
                _documents(store), start=1):
            store.db.execute("INSERT INTO search_rows VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (row_id, kind, task, attempt, step, criterion, grader))
            store.db.execute("INSERT INTO search_index (rowid, text) VALUES (?, ?)",
                             (row_id, text))
        store.set_meta(INDEX_META, stamp)


def _match(text: str) -> str:
    """The query as one FTS5 phrase: its words in order, punctuation between them ignored (so
    'Q3_Forecast.xlsx' finds q3, forecast, xlsx in a row)."""
    return '"' + text.replace('"', '""') + '"'


def _pattern(text: str) -> re.Pattern[str]:
    """The phrase as a regex over the original text: its words (FTS5 splits at "_" too), and
    anything else between them."""
    return re.compile(r"[\W_]+".join(re.escape(w) for w in re.findall(r"[^\W_]+", text)), re.I)


def _line(text: str, query: str) -> str:
    """The line where the phrase first occurs, cut to the words around it."""
    found = _pattern(query).search(text)
    at = found.start() if found else 0
    start = max(text.rfind("\n", 0, at) + 1, at - CONTEXT)
    end = text.find("\n", at)
    end = min(end if end >= 0 else len(text), at + CONTEXT * 2)
    return ("…" if start > 0 and text[start - 1] != "\n" else "") + " ".join(
        text[start:end].split()) + ("…" if end < len(text) and text[end] != "\n" else "")


def search(store: AuditStore, query: str, model: str = "", task: str = "", check: str = "",
           limit: int = 50) -> list[Hit]:
    """Indexed texts holding the phrase `query`, best first, narrowed to attempts of a model
    (part of its name), a task (id or name) or tasks with a finding of a check."""
    ensure_index(store)
    if not re.search(r"\w", query):
        return []
    sql = ["SELECT r.kind, r.task_id, r.attempt_id, r.step, r.criterion_id, r.grader, a.model "
           "FROM search_index JOIN search_rows r ON r.id = search_index.rowid "
           "LEFT JOIN attempts a ON a.attempt_id = r.attempt_id "
           "WHERE search_index MATCH ?"]
    args: list[object] = [_match(query)]
    if model:
        sql.append("AND (a.model LIKE ? OR (r.attempt_id IS NULL AND r.task_id IN "
                   "(SELECT task_id FROM attempts WHERE model LIKE ?)))")
        args += [f"%{model}%"] * 2
    if task:
        sql.append("AND r.task_id IN (SELECT task_id FROM tasks WHERE task_id = ? OR name = ?)")
        args += [task, task]
    if check:
        sql.append("AND r.task_id IN (SELECT task_id FROM findings WHERE check_name = ?)")
        args.append(check)
    sql.append("ORDER BY rank LIMIT ?")
    args.append(limit)
    with _index_in_use(store):
        rows = store.db.execute(" ".join(sql), args).fetchall()
    read: dict[str, Trajectory | None] = {}
    return [_hit(store, row, query, read) for row in rows]


def _hit(store: AuditStore, row: tuple[Any, ...], query: str, read: dict[str, Trajectory | None]
         ) -> Hit:
    """`row`: search's columns as sqlite gives them (which are NULL depends on the row's kind)."""
    kind, task_id, attempt_id, step, criterion, grader, model = row
    trajectory = None
    if kind == "step":
        if attempt_id not in read:
            read[attempt_id] = store.trajectory(attempt_id)
        trajectory = read[attempt_id]
    if kind == "prompt":
        found = store.db.execute("SELECT json FROM tasks WHERE task_id = ?", (task_id,)).fetchone()
        text = Task.model_validate_json(found[0]).prompt if found else ""
    elif kind == "answer":
        found = store.db.execute("SELECT json FROM attempts WHERE attempt_id = ?",
                                 (attempt_id,)).fetchone()
        text = (Attempt.model_validate_json(found[0]).answer or "") if found else ""
    elif kind == "step":
        text = _step_text(trajectory, step) if trajectory else ""
    else:
        text = next((g.rationale for g in store.grades_for_attempts([attempt_id])
                     if g.criterion_id == criterion and g.grader == grader), "")
    return Hit(task_id=task_id, attempt_id=attempt_id, model=model,
               place=_place(kind, step, criterion, grader, trajectory), line=_line(text, query))


def matching_tasks(store: AuditStore, text: str) -> set[str]:
    """Tasks with any indexed text (prompt, answer, step, rationale) holding the phrase."""
    ensure_index(store)
    if not re.search(r"\w", text):
        return set()
    with _index_in_use(store):
        return {r[0] for r in store.db.execute(
            "SELECT DISTINCT r.task_id FROM search_index JOIN search_rows r "
            "ON r.id = search_index.rowid WHERE search_index MATCH ?", (_match(text),))}


def search_audit(out: Path, query: str, model: str = "", task: str = "", check: str = "",
                 limit: int = 50) -> list[Hit]:
    """`rubric-audit search OUT QUERY`: `search` on OUT/audit.db."""
    with open_audit(Path(out) / "audit.db") as store:
        return search(store, query, model, task, check, limit)


def filter_tasks(store: AuditStore, tasks: dict[str, Task], wanted: QueueFilter,
                 labels: dict[str, str]) -> set[str]:
    """The tasks every part of the filter keeps: words in any of their texts, an attempt of the
    model, the domain, a finding of the check, a label (`labels`: task -> label, as named)."""
    kept = set(tasks)
    if wanted.text:
        kept &= matching_tasks(store, wanted.text)
    if wanted.model:
        kept &= {t for _, t, model, _, _ in store.attempt_rows()
                 if wanted.model.lower() in model.lower()}
    if wanted.domain:
        kept &= {t for t, task in tasks.items() if wanted.domain.lower() in task.domain.lower()}
    if wanted.check:
        kept &= {f.task_id for f in store.findings()
                 if f.task_id and wanted.check.lower() in f.check.lower()}
    if wanted.label:
        kept &= {t for t, label in labels.items() if wanted.label.lower() in label.lower()}
    return kept
