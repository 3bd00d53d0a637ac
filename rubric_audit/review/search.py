"""Search an audit's text: task prompts, answers, trajectory steps (text, tool calls, results) and
judge rationales, through an SQLite FTS5 index in audit.db; and the review queue's filters.

The index holds only the words (a contentless FTS5 table, so audit.db does not store the text
twice); `search_rows` says where each indexed text lives, and a hit's line is read back from the
store. The index is rebuilt when what it was built from changed (a stamp in `meta`), so imports
and audits do not pay for it and a search never sees stale text. Its SQL is the store's
(`AuditStore.search`, `replace_search_index`); this module keeps the query language, what is
indexed and how a hit reads (task names, criteria as "C1", the line in context).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from rubric_audit.core.model import Record, Task, Trajectory, find_task, label_name
from rubric_audit.store.audit_store import AuditStore, SearchDocument, SearchRow, open_audit

CONTEXT = 70
FILTER_KEYS = ("model", "domain", "check", "label")
FILTER_TOKEN = re.compile(rf"\b({'|'.join(FILTER_KEYS)}):(\"[^\"]*\"|\S+)", re.I)


class Hit(Record):
    """One indexed text that matched: its task (id and name), its attempt (id, model, variant
    and index; none for a task's prompt), where in it (a criterion as "C1"), and its first
    matching line in context."""

    task_id: str
    task: str
    attempt_id: str | None
    model: str | None
    variant: str | None = None
    attempt: int | None = None
    place: str
    line: str


class SearchResult(Record):
    """The best hits (at most the limit asked) and how many texts matched in all."""

    query: str
    hits: list[Hit]
    total: int


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
           trajectory: Trajectory | None, task: Task | None) -> str:
    if kind == "step" and trajectory is not None and step is not None:
        names = ", ".join(dict.fromkeys(c.name for c in trajectory.steps[step].tool_calls))
        return f"step {step}" + (f" {names}" if names else "")
    if kind == "rationale":
        number = task.criterion_numbers().get(criterion or "") if task else None
        return f"rationale {number or criterion} ({grader})"
    return kind


def _documents(store: AuditStore) -> Iterator[SearchDocument]:
    """Everything searchable, as the index holds it."""
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


def ensure_index(store: AuditStore) -> None:
    """Build the index if it is missing or older than what it indexes."""
    if not store.search_index_is_current():
        store.replace_search_index(_documents(store))


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
           limit: int = 50) -> SearchResult:
    """Indexed texts holding the phrase `query`, best first, narrowed to attempts of a model
    (part of its name), a task (id or name: one the audit lacks is refused, with the closest
    names) or tasks with a finding of a check; with how many match in all."""
    if task:
        task = find_task(store.tasks(), task, str(store.path), "--task").id
    ensure_index(store)
    if not re.search(r"\w", query):
        return SearchResult(query=query, hits=[], total=0)
    rows, total = store.search(_match(query), model, task, check, limit)
    reader = _Reader(store)
    return SearchResult(query=query, hits=[reader.hit(row, query) for row in rows], total=total)


class _Reader:
    """Reads back what the hits point to, each task, attempt and trajectory once."""

    def __init__(self, store: AuditStore) -> None:
        self.store = store
        self.tasks: dict[str, Task | None] = {}
        self.trajectories: dict[str, Trajectory | None] = {}

    def task(self, task_id: str) -> Task | None:
        if task_id not in self.tasks:
            self.tasks[task_id] = self.store.task(task_id)
        return self.tasks[task_id]

    def trajectory(self, attempt_id: str) -> Trajectory | None:
        if attempt_id not in self.trajectories:
            self.trajectories[attempt_id] = self.store.trajectory(attempt_id)
        return self.trajectories[attempt_id]

    def hit(self, row: SearchRow, query: str) -> Hit:
        kind, task_id, attempt_id, step, criterion, grader, model = row
        task = self.task(task_id)
        attempt = self.store.attempt(attempt_id) if attempt_id else None
        trajectory = self.trajectory(attempt_id) if kind == "step" and attempt_id else None
        if kind == "prompt":
            text = task.prompt if task else ""
        elif kind == "answer":
            text = (attempt.answer or "") if attempt else ""
        elif kind == "step":
            text = _step_text(trajectory, step) if trajectory and step is not None else ""
        else:
            text = next((g.rationale for g in self.store.grades_for_attempts([attempt_id or ""])
                         if g.criterion_id == criterion and g.grader == grader), "")
        return Hit(task_id=task_id, task=task.name if task else task_id, attempt_id=attempt_id,
                   model=model, variant=attempt.variant if attempt else None,
                   attempt=attempt.index if attempt else None,
                   place=_place(kind, step, criterion, grader, trajectory, task),
                   line=_line(text, query))


def matching_tasks(store: AuditStore, text: str) -> set[str]:
    """Tasks with any indexed text (prompt, answer, step, rationale) holding the phrase."""
    ensure_index(store)
    if not re.search(r"\w", text):
        return set()
    return store.search_tasks(_match(text))


def search_audit(out: Path, query: str, model: str = "", task: str = "", check: str = "",
                 limit: int = 50) -> SearchResult:
    """`rubric-audit search OUT QUERY`: `search` on OUT/audit.db."""
    with open_audit(Path(out) / "audit.db") as store:
        return search(store, query, model, task, check, limit)


SHOWN_VALUES = 12  # values named when a part matches nothing; the rest are counted


def _parts(store: AuditStore, tasks: dict[str, Task], wanted: QueueFilter,
           labels: Mapping[str, str]) -> list[tuple[str, set[str], str, list[str]]]:
    """Each part of the filter: (as typed, the tasks it keeps, what its values are, the values
    there are to match)."""
    parts: list[tuple[str, set[str], str, list[str]]] = []
    if wanted.text:
        parts.append((f"“{wanted.text}”", matching_tasks(store, wanted.text), "", []))
    if wanted.model:
        rows = store.attempt_rows()
        parts.append((f"model:{wanted.model}", {t for _, t, model, _, _ in rows
                                               if wanted.model.lower() in model.lower()},
                      "models", sorted({model for _, _, model, _, _ in rows})))
    if wanted.domain:
        parts.append((f"domain:{wanted.domain}", {
            t for t, task in tasks.items() if wanted.domain.lower() in task.domain.lower()},
            "domains", sorted({task.domain for task in tasks.values()})))
    if wanted.check:
        found = [f for f in store.findings() if f.task_id]
        parts.append((f"check:{wanted.check}", {
            f.task_id for f in found if f.task_id and wanted.check.lower() in f.check.lower()},
            "checks with findings", sorted({f.check for f in found})))
    if wanted.label:
        parts.append((f"label:{wanted.label}", {
            t for t, label in labels.items()
            if wanted.label.lower() in f"{label} {label_name(label)}".lower()},
            "your labels", sorted({label_name(label) for label in labels.values()})))
    return parts


def filter_tasks(store: AuditStore, tasks: dict[str, Task], wanted: QueueFilter,
                 labels: Mapping[str, str]) -> set[str]:
    """The tasks every part of the filter keeps: words in any of their texts, an attempt of the
    model, the domain, a finding of the check, a label (`labels`: task -> the reviewer's label,
    matched by its id or its words)."""
    kept = set(tasks)
    for _, found, _, _ in _parts(store, tasks, wanted, labels):
        kept &= found
    return kept


def why_none(store: AuditStore, tasks: dict[str, Task], wanted: QueueFilter,
             labels: Mapping[str, str]) -> str:
    """Why a filter keeps no task: each part that alone matches none, with the values there
    are ("no task matches model:gpt-5; models here: atlas-1, cirrus-2"), else that its parts
    match no task together."""
    said = []
    for typed, found, kind, values in _parts(store, tasks, wanted, labels):
        if found:
            continue
        more = len(values) - SHOWN_VALUES
        named = ", ".join(values[:SHOWN_VALUES]) + (f" and {more} more" if more > 0 else "")
        said.append(f"no task matches {typed}" + (f"; {kind} here: {named or 'none'}"
                                                   if kind else ""))
    return "; ".join(said) or f"no task matches {wanted.describe()}: each part matches " \
                              "some task, but no task matches them all"
