"""Load Archipelago run folders: attempts, their recorded grades, and the tasks they name.

A variant folder holds `<task_id>/` attempt folders (or `<task_id>/attempt_<k>/` for several
attempts), `results.csv` and `results.failures.jsonl`. Machine paths in results.csv are ignored:
attempts are found by task id under the variant folder. An attempt whose grading run did not
complete is `unavailable`, with the reason from the failures file where one is given.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rubric_audit.checks.controls import Control
from rubric_audit.errors import (
    InputError,
    decode_text,
    parse_json,
    read_bytes,
    read_json,
    read_text,
)
from rubric_audit.load.trajectory import normalise_trajectory
from rubric_audit.load.variant_tasks import shared_task
from rubric_audit.model import (
    Attempt,
    Criterion,
    CriterionGrade,
    SourceSummary,
    Task,
    Usage,
    VariantPrompt,
    path_safe,
)

RESULTS_CSV = "results.csv"
FAILURES_JSONL = "results.failures.jsonl"
ATTEMPT_FILES = ("trajectory.json", "verifiers.json", "initial_messages.json", "grades.json")
ATTEMPT_DIR = re.compile(r"attempt_(\d+)")


class RecordedRuns(BaseModel):
    """Everything read from run folders: attempts, recorded grades, and tasks as the runs saw them.

    `recorded` holds each task as each variant recorded it; `tasks` the task as its variants share
    it, and `differences` what each variant's prompt added or dropped (see `variant_tasks`).
    """

    attempts: list[Attempt] = Field(default_factory=list)
    grades: list[CriterionGrade] = Field(default_factory=list)
    tasks: dict[str, Task] = Field(default_factory=dict)
    recorded: dict[str, dict[str, Task]] = Field(default_factory=dict)
    differences: list[VariantPrompt] = Field(default_factory=list)
    sources: list[SourceSummary] = Field(default_factory=list)
    controls: list[Control] = Field(default_factory=list, description="recorded gold and null "
                                    "controls (Harbor's oracle and nop trials)")
    control_grades: list[CriterionGrade] = Field(default_factory=list)

    def extend(self, other: RecordedRuns) -> None:
        """Add another source's runs (call `share_tasks` once all are in)."""
        self.attempts.extend(other.attempts)
        self.grades.extend(other.grades)
        self.sources.extend(other.sources)
        self.controls.extend(other.controls)
        self.control_grades.extend(other.control_grades)
        for task_id, by_variant in other.recorded.items():
            for variant, task in by_variant.items():
                self.recorded.setdefault(task_id, {}).setdefault(variant, task)

    def share_tasks(self) -> None:
        """Each task as its variants share it, and what each variant's prompt changed."""
        self.differences = []
        for task_id, by_variant in self.recorded.items():
            self.tasks[task_id], differences = shared_task(task_id, by_variant)
            self.differences += differences


def summarize(path: Path, fmt: str, runs: RecordedRuns, unmapped: list[str]) -> SourceSummary:
    """What a source gave: attempts by state, unavailable reasons, tasks and criteria."""
    reasons = Counter(a.unavailable_reason or "no reason recorded" for a in runs.attempts
                      if a.state == "unavailable")
    task_ids = {a.task_id for a in runs.attempts}
    return SourceSummary(
        path=str(path), format=fmt, attempts=len(runs.attempts),
        graded=sum(a.state == "graded" for a in runs.attempts), unavailable=sum(reasons.values()),
        unavailable_reasons=dict(reasons.most_common()), tasks=len(task_ids),
        criteria=sum(len(runs.tasks[t].criteria) for t in task_ids if t in runs.tasks),
        unmapped=unmapped)


def _is_attempt_dir(folder: Path) -> bool:
    return any((folder / name).is_file() for name in ATTEMPT_FILES)


def _is_variant_dir(folder: Path) -> bool:
    if (folder / RESULTS_CSV).is_file() or (folder / FAILURES_JSONL).is_file():
        return True
    return any(child.is_dir() and (_is_attempt_dir(child) or any(_attempt_subdirs(child)))
               for child in folder.iterdir())


def _attempt_subdirs(task_dir: Path) -> list[tuple[int, Path]]:
    found = []
    for child in task_dir.iterdir():
        match = ATTEMPT_DIR.fullmatch(child.name)
        if child.is_dir() and match and int(match.group(1)) >= 1:
            found.append((int(match.group(1)), child))
    return sorted(found)


def variant_dirs(path: Path) -> list[Path]:
    """The variant folders under `path`: itself, or its child folders that are variant folders."""
    path = Path(path)
    if not path.is_dir():
        raise InputError(path, None, "no such run folder")
    if _is_variant_dir(path):
        return [path]
    found = sorted(child for child in path.iterdir() if child.is_dir() and _is_variant_dir(child))
    if not found:
        raise InputError(path, None, "not a run folder: expected results.csv or task folders, "
                                     "or a folder of such variant folders")
    return found


def _results_rows(variant: Path) -> list[dict[str, str]]:
    path = variant / RESULTS_CSV
    if not path.is_file():
        return []
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
    try:
        if reader.fieldnames is None or "task_id" not in reader.fieldnames:
            raise InputError(path, "task_id", "missing required column")
        rows = list(reader)
    except csv.Error as exc:
        raise InputError(path, f"line {reader.line_num}", f"malformed CSV: {exc}") from None
    for number, row in enumerate(rows, start=1):
        if None in row.values() or None in row:
            raise InputError(path, f"row {number}", "has fewer or more columns than the header")
    return rows


def _failures(variant: Path) -> list[dict[str, Any]]:
    path = variant / FAILURES_JSONL
    if not path.is_file():
        return []
    out = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = parse_json(path, line)
        except InputError as exc:
            raise InputError(path, f"line {number}", exc.problem) from None
        if not isinstance(record, dict) or not isinstance(record.get("task_id"), str):
            raise InputError(path, f"line {number}.task_id", "missing required field")
        out.append(record)
    return out


class AttemptFiles:
    """An attempt folder's own files, each read once (size-capped): parsed where a step needs
    one, all of them hashed for the fingerprint."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        with os.scandir(folder) as entries:  # file types from one listing, not a stat each
            names = sorted(e.name for e in entries if e.is_file())
        self.files = {name: read_bytes(folder / name) for name in names}

    def json(self, name: str) -> Any:
        """The parsed JSON file `name`, or None where the folder has none."""
        data = self.files.get(name)
        path = self.folder / name
        return None if data is None else parse_json(path, decode_text(path, data))


def _expect(value: Any, kind: type, path: Path, field: str) -> Any:
    if not isinstance(value, kind):
        raise InputError(path, field, f"expected {'an object' if kind is dict else 'a list'}, "
                                      f"found {type(value).__name__}")
    return value


def fingerprint(folder: Path, files: dict[str, bytes] | None = None) -> str:
    """Hash of the attempt folder's own files (not nested attempt folders); `files` are those
    files already read, by name."""
    digest = hashlib.sha256()
    if files is None:
        files = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}
    for name, data in sorted(files.items()):
        digest.update(name.encode() + b"\0" + data + b"\0")
    artifacts = folder / "artifacts"
    if artifacts.is_dir():
        for path in sorted(p for p in artifacts.rglob("*") if p.is_file()):
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def final_answer(trajectory: dict[str, Any]) -> str | None:
    """The last `final_answer` tool message, else the trajectory's `output`."""
    for message in reversed(trajectory.get("messages") or []):
        if message.get("role") == "tool" and message.get("name") == "final_answer":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    output = trajectory.get("output")
    if output is None or isinstance(output, str):
        return output
    return json.dumps(output)


def _usage(raw: Any) -> Usage:
    raw = raw if isinstance(raw, dict) else {}
    return Usage(**{k: raw.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")},
                 cost=raw.get("cost"))


def _grades(attempt_id: str, raw: dict[str, Any], path: Path,
            grader: str = "recorded") -> list[CriterionGrade]:
    out = []
    results = _expect(raw.get("verifier_results") or [], list, path, "verifier_results")
    for i, result in enumerate(results):
        result = _expect(result, dict, path, f"verifier_results[{i}]")
        if not result.get("verifier_id"):
            raise InputError(path, f"verifier_results[{i}].verifier_id", "missing required field")
        values = result.get("verifier_result_values") or {}
        grade = values.get("judge_grade")
        score = result.get("score")
        if result.get("status", "ok") != "ok" or (grade is None and score is None):
            verdict = "unscored"
        elif grade in ("pass", "fail"):
            verdict = grade
        else:
            verdict = "pass" if float(score) >= 1.0 else "fail"
        out.append(CriterionGrade(attempt_id=attempt_id, criterion_id=result["verifier_id"],
                                  grader=grader, verdict=verdict,
                                  rationale=values.get("grade_rationale") or "",
                                  score=None if score is None else float(score)))
    return out


def _task_from_run(files: AttemptFiles, task_id: str, row: dict[str, str]) -> Task:
    """The task as the run recorded it (prompt and verifiers), for runs imported without a bench."""
    path = files.folder / "verifiers.json"
    verifiers = _expect(files.json("verifiers.json") or [], list, path, "(top level)")
    criteria = []
    world_id = row.get("world_id", "")
    for i, v in enumerate(verifiers):
        v = _expect(v, dict, path, f"[{i}]")
        values = v.get("verifier_values") or {}
        if not v.get("verifier_id"):
            raise InputError(path, f"[{i}].verifier_id", "missing required field")
        criteria.append(Criterion(id=v["verifier_id"], text=values.get("criteria", ""),
                                  primary=bool(values.get("is_primary_objective"))))
        world_id = world_id or v.get("world_id", "")
    messages = files.json("initial_messages.json") or []
    prompt = next((m.get("content", "") for m in messages
                   if isinstance(m, dict) and m.get("role") == "user"), "")
    return Task(id=task_id, name=task_id, domain=row.get("domain", ""), world_id=world_id,
                prompt=prompt if isinstance(prompt, str) else json.dumps(prompt),
                criteria=criteria, source="runs")


def _attempt(files: AttemptFiles, variant: str, task_id: str, index: int, model: str,
             failure: dict[str, Any] | None) -> tuple[Attempt, list[CriterionGrade]]:
    folder = files.folder
    attempt_id = Attempt.make_id(variant, task_id, index)
    trajectory = files.json("trajectory.json") or {}
    _expect(trajectory, dict, folder / "trajectory.json", "(top level)")
    grades_raw = files.json("grades.json")
    settings = files.json("grading_settings.json") or {}
    status = grades_raw.get("grading_run_status") if isinstance(grades_raw, dict) else None
    judge_runs = _judge_runs(folder)
    completed = [(grader, raw, path) for grader, raw, path in judge_runs
                 if raw.get("grading_run_status") == "completed"]
    graded = status == "completed" or bool(completed)
    if graded:
        reason = None
    elif failure is not None:
        reason = str(failure.get("error") or failure.get("status") or "listed in failures file")
    elif judge_runs:
        grader, raw, _ = judge_runs[0]
        reason = f"grading by {grader} failed: {raw.get('error') or raw.get('grading_run_status')}"
    elif grades_raw is None:
        reason = "no grades.json: the attempt never reached grading"
    else:
        reason = f"grading_run_status is {status!r}, not 'completed'"
    artifacts_dir = folder / "artifacts"
    attempt = Attempt(
        id=attempt_id, task_id=task_id, model=model, variant=variant, index=index,
        state="graded" if graded else "unavailable", unavailable_reason=reason,
        answer=final_answer(trajectory),
        artifacts=sorted(p.relative_to(folder).as_posix() for p in artifacts_dir.rglob("*")
                         if p.is_file()) if artifacts_dir.is_dir() else [],
        trajectory=normalise_trajectory(trajectory.get("messages"), "archipelago"),
        usage=_usage(trajectory.get("usage")),
        wall_time=trajectory.get("time_elapsed"),
        agent_status=trajectory.get("status"),
        judge_model=settings.get("llm_judge_model") if isinstance(settings, dict) else None,
        source=str(folder),
        fingerprint=fingerprint(folder, files.files),
    )
    grades = _grades(attempt_id, grades_raw, folder / "grades.json") if status == "completed" \
        else []
    for grader, raw, path in completed:
        grades += _grades(attempt_id, raw, path, grader)
    return attempt, grades


def _judge_runs(folder: Path) -> list[tuple[str, dict[str, Any], Path]]:
    """Grading runs written by `rubric-audit grade` beside the recorded one: grades/<judge>.json."""
    runs = []
    for path in sorted((folder / "grades").glob("*.json")):
        raw = _expect(read_json(path), dict, path, "(top level)")
        runs.append((f"judge:{raw.get('judge_model') or path.stem}", raw, path))
    return runs


def _attempt_folders(task_dir: Path) -> list[tuple[int, Path]]:
    """Attempt k of a task: `attempt_<k>/` folders; files directly in the task folder are attempt 1."""
    numbered = _attempt_subdirs(task_dir)
    if _is_attempt_dir(task_dir):
        if any(k == 1 for k, _ in numbered):
            raise InputError(task_dir, None, "holds attempt files and an attempt_1 folder: "
                                             "which one is attempt 1 is ambiguous")
        numbered.insert(0, (1, task_dir))
    return numbered


def load_variant(variant_dir: Path) -> RecordedRuns:
    """All attempts under one variant folder."""
    variant = variant_dir.name
    rows = _results_rows(variant_dir)
    failures = _failures(variant_dir)
    row_by_task = {r["task_id"]: r for r in rows}
    failure_by_task = {f["task_id"]: f for f in failures}
    failure_by_attempt = {(f["task_id"], int(f["attempt"])): f for f in failures
                          if str(f.get("attempt", "")).isdigit()}
    models = Counter(r.get("agent_model") for r in [*rows, *failures] if r.get("agent_model"))
    default_model = models.most_common(1)[0][0] if models else variant
    runs = RecordedRuns()
    unmapped = []
    for task_dir in sorted(p for p in variant_dir.iterdir() if p.is_dir()):
        task_id = task_dir.name
        try:
            path_safe(task_id)
        except ValueError as exc:
            raise InputError(task_dir, "name", str(exc)) from None
        row = row_by_task.get(task_id) or {
            k: str(v) for k, v in failure_by_task.get(task_id, {}).items()}
        model = row.get("agent_model") or default_model
        folders = _attempt_folders(task_dir)
        if not folders:
            unmapped.append(f"{task_dir.name}/: no attempt files")
        for index, folder in folders:
            failure = failure_by_attempt.get((task_id, index), failure_by_task.get(task_id))
            files = AttemptFiles(folder)
            attempt, grades = _attempt(files, variant, task_id, index, model, failure)
            if attempt.judge_model is None and row.get("judge_model"):
                attempt = attempt.model_copy(update={"judge_model": row["judge_model"]})
            runs.attempts.append(attempt)
            runs.grades.extend(grades)
            recorded = runs.recorded.setdefault(task_id, {})
            if variant not in recorded:
                recorded[variant] = _task_from_run(files, task_id, row)
    stored = {a.task_id for a in runs.attempts}
    unmapped += [f"{RESULTS_CSV}: row for {task_id} has no task folder"
                 for task_id in row_by_task if task_id not in stored]
    runs.share_tasks()
    runs.sources.append(summarize(variant_dir, "archipelago", runs, unmapped))
    return runs


def load_runs(paths: list[Path]) -> RecordedRuns:
    """Attempts from run folders: each a variant folder or a folder of variant folders."""
    combined = RecordedRuns()
    for path in paths:
        for variant_dir in variant_dirs(Path(path)):
            combined.extend(load_variant(variant_dir))
    combined.share_tasks()
    return combined
