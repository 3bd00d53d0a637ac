"""Load Archipelago run folders: attempts, their recorded grades, and the tasks they name.

A variant folder holds `<task_id>/` attempt folders (or `<task_id>/attempt_<k>/` for several
attempts), `results.csv` and `results.failures.jsonl`. Machine paths in results.csv are ignored:
attempts are found by task id under the variant folder. An attempt with a completed grading run
(recorded, or a judge's `grades/<judge>.json`) is `graded`. One listed in the failures file, whose
grading failed, or whose agent run did not finish is `unavailable`, with its reason. One whose
agent finished (a trajectory, not listed as failed) but that no grader has graded yet is
`ungraded`: `rubric-audit grade` can grade it.

Each attempt says which model ran in its own `orchestrator_config.json`, which agent in
`agent_config.json` and which judge in `grading_settings.json`; where the attempt does not say,
the model is results.csv's `agent_model` (its row, else the variant's most common one), then the
folder's name, and the source summary counts which. The answer is the last `final_answer` tool
result (or call, when its result was not recorded), else a string `output`, else the last
assistant message with text (Claude Code and other agents answer in plain text; Archipelago's
`output` is otherwise a dict of metadata, never the answer); the summary counts each rule.
The files the judge graded are the attempt's artifacts (`snapshots.py`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from rubric_audit.core.errors import (
    InputError,
    decode_text,
    file_digest,
    parse_json,
    read_bytes,
    read_json,
    read_text,
    utf8_path,
    validated,
)
from rubric_audit.core.limits import MAX_ARCHIVE_BYTES
from rubric_audit.core.model import (
    MAX_INDEX,
    Attempt,
    Control,
    Count,
    Criterion,
    CriterionGrade,
    Measurement,
    Number,
    SourceMetric,
    SourceSummary,
    Task,
    Usage,
    VariantPrompt,
    Verdict,
    path_safe,
)
from rubric_audit.core.text import first_line
from rubric_audit.load.snapshots import (
    ARTIFACTS_DIR,
    FINAL_SNAPSHOT,
    attempt_artifacts,
    exported_files,
)
from rubric_audit.load.trajectory import normalise_trajectory
from rubric_audit.load.variant_tasks import shared_task

RESULTS_CSV = "results.csv"
JUDGE_RUNS = "grades"  # grades/<judge>.json: what `rubric-audit grade` wrote beside the recording
FAILURES_JSONL = "results.failures.jsonl"
ATTEMPT_FILES = ("trajectory.json", "verifiers.json", "initial_messages.json", "grades.json")
ATTEMPT_DIR = re.compile(r"attempt_(\d+)")
# Archipelago's AgentStatus values of a run that did not finish: its harness grades only
# `completed` runs (examples/*/main.py skip grading otherwise), so none of these gets a grade.
UNFINISHED = frozenset({"pending", "running", "cancelled", "failed", "error"})
M = TypeVar("M", bound=BaseModel)


class _Archipelago(BaseModel):
    """Archipelago's files, typed where rubric-audit reads them (other fields are ignored), so a
    value of the wrong kind is an InputError naming its field, never a crash further on; the
    runner writes its attempt folders through the same models."""

    model_config = ConfigDict(extra="ignore")


class RecordedUsage(_Archipelago):
    prompt_tokens: Count | None = None
    completion_tokens: Count | None = None
    total_tokens: Count | None = None
    cost: Number | None = None


class RecordedTrajectory(_Archipelago):
    messages: list[dict[str, Any]] | None = None
    output: Any = None
    status: str | None = None
    time_elapsed: Number | None = None
    usage: RecordedUsage | None = None


class ResultValues(_Archipelago):
    judge_grade: Literal["pass", "fail"] | None = None
    grade_rationale: str | None = None


class VerifierResult(_Archipelago):
    verifier_id: str = Field(min_length=1)
    score: Number | None = None
    status: str | None = "ok"
    verifier_result_values: ResultValues | None = None


class RecordedGrading(_Archipelago):
    """grades.json, or a judge's grades/<judge>.json written by `rubric-audit grade`."""

    grading_run_status: str | None = None
    verifier_results: list[VerifierResult] | None = None
    judge_model: str | None = None
    error: Any = None


class VerifierValues(_Archipelago):
    criteria: str = ""
    is_primary_objective: bool | None = None


class RecordedVerifier(_Archipelago):
    verifier_id: str = Field(min_length=1)
    verifier_version: int | None = None
    world_id: str | None = None
    task_id: str | None = None
    eval_config_id: str | None = None
    verifier_values: VerifierValues | None = None
    verifier_index: int | None = None
    verifier_dependencies: list[str] | None = None


class GradingSettings(_Archipelago):
    llm_judge_model: str | None = None


class OrchestratorConfig(_Archipelago):
    """orchestrator_config.json: the model the agent ran on."""

    model: str | None = None


class AgentConfig(_Archipelago):
    """agent_config.json: which of the harness's agents ran."""

    agent_config_id: str | None = None
    agent_name: str | None = None
    agent_config_values: dict[str, Any] | None = None


Verifiers = TypeAdapter(list[RecordedVerifier])
InitialMessages = TypeAdapter(list[dict[str, Any]])


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
    measurements: list[Measurement] = Field(default_factory=list, description="recorded score "
                                            "values that are no verdicts")
    metrics: list[SourceMetric] = Field(default_factory=list, description="the sources' own "
                                        "metrics, each beside the number read from its samples")

    def extend(self, other: RecordedRuns) -> None:
        """Add another source's runs (call `share_tasks` once all are in)."""
        self.attempts.extend(other.attempts)
        self.grades.extend(other.grades)
        self.measurements.extend(other.measurements)
        self.metrics.extend(other.metrics)
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


class SourceTally:
    """A source's summary counted as its attempts are read, a batch at a time."""

    def __init__(self) -> None:
        self.states: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()
        self.task_ids: set[str] = set()
        self.criteria = 0

    def add(self, runs: RecordedRuns) -> None:
        """Count a batch's attempts, and the criteria of the tasks (as the batch recorded them)
        that attempts of the batch ran first in this source."""
        new = {a.task_id for a in runs.attempts} - self.task_ids
        for attempt in runs.attempts:
            self.states[attempt.state] += 1
            if attempt.state == "unavailable":
                self.reasons[first_line(attempt.unavailable_reason or "no reason recorded")] += 1
        self.task_ids |= new
        self.criteria += sum(len(task.criteria) for t in new
                             for task in runs.recorded.get(t, {}).values())

    def merge(self, other: SourceTally) -> None:
        """Count another batch's tally (of attempts of tasks not counted here yet)."""
        self.states.update(other.states)
        self.reasons.update(other.reasons)
        self.task_ids |= other.task_ids
        self.criteria += other.criteria

    def summary(self, path: Path, fmt: str, unmapped: list[str],
                model_from: Counter[str] | None = None,
                answer_rules: Counter[str] | None = None) -> SourceSummary:
        return SourceSummary(
            path=str(path), format=fmt, attempts=sum(self.states.values()),
            graded=self.states["graded"], ungraded=self.states["ungraded"],
            unavailable=sum(self.reasons.values()),
            unavailable_reasons=dict(self.reasons.most_common()), tasks=len(self.task_ids),
            criteria=self.criteria, unmapped=unmapped,
            model_from=dict((model_from or Counter()).most_common()),
            answer_rules=dict((answer_rules or Counter()).most_common()))


def summarize(path: Path, fmt: str, runs: RecordedRuns, unmapped: list[str],
              model_from: Counter[str] | None = None,
              answer_rules: Counter[str] | None = None) -> SourceSummary:
    """What a source (one variant) gave: attempts by state, unavailable reasons (each its first
    line, cut to 200 characters, then counted: a reason quoting a whole prompt groups with its
    kind), tasks and criteria (each task's as the variant recorded it: the tasks are shared over
    the variants of every source once all are loaded), and where the format has a choice, where
    the models and answers were read from."""
    tally = SourceTally()
    tally.add(runs)
    return tally.summary(path, fmt, unmapped, model_from, answer_rules)


def _utf8_name(entry: os.DirEntry[str]) -> str:
    """An entry's name, refused where it is not UTF-8 (it is stored and printed)."""
    try:
        entry.name.encode("utf-8")
    except UnicodeEncodeError:
        utf8_path(Path(entry.path))
    return entry.name


def _is_attempt_dir(folder: Path) -> bool:
    return any((folder / name).is_file() for name in ATTEMPT_FILES)


def _subfolders(folder: Path) -> tuple[list[Path], list[str]]:
    """The folders in `folder`, sorted, and the names of its links to folders: those are not
    entered (a link could lead anywhere on this machine, and its text would reach audit.db and a
    judge), and are named in the source summary instead. Every name must be UTF-8 (a variant's,
    task's or attempt's name is stored and printed)."""
    with os.scandir(folder) as entries:
        listed = sorted(entries, key=lambda e: e.name)
    return ([utf8_path(Path(e.path)) for e in listed if e.is_dir(follow_symlinks=False)],
            [utf8_path(Path(e.path)).name for e in listed if e.is_symlink() and e.is_dir()])


def _linked(folder: Path, names: list[str]) -> list[str]:
    return [f"{(folder / name).as_posix()}/: a symbolic link to a folder, not followed"
            for name in names]


def _has_own_files(folder: Path) -> bool:
    return (folder / RESULTS_CSV).is_file() or (folder / FAILURES_JSONL).is_file()


def _is_variant_dir(folder: Path) -> bool:
    if _has_own_files(folder):
        return True
    return any(_is_attempt_dir(child) or any(_attempt_subdirs(child)[0])
               for child in _subfolders(folder)[0])


def _attempt_subdirs(task_dir: Path) -> tuple[list[tuple[int, Path]], list[str]]:
    """The numbered attempt folders of a task, and the names of its links to folders."""
    found = []
    folders, linked = _subfolders(task_dir)
    for child in folders:
        match = ATTEMPT_DIR.fullmatch(child.name)
        if match and int(match.group(1)) >= 1:
            if int(match.group(1)) > MAX_INDEX:
                raise InputError(child, None, f"attempt number above {MAX_INDEX:,}")
            found.append((int(match.group(1)), child))
    return sorted(found), linked


ARCHIPELAGO_LAYOUT = "results.csv or task folders, or a folder of such variant folders"


def marked_variant_dirs(path: Path) -> list[Path]:
    """The variant folders Archipelago's own files (results.csv, results.failures.jsonl, which
    no other layout writes) mark at `path`: itself, or every one of its subfolders; empty where
    that is not so (then `path` is walked for every layout's markers)."""
    if not path.is_dir():
        return []
    if _has_own_files(path):
        return [path]
    folders = _subfolders(path)[0]
    return folders if folders and all(_has_own_files(f) for f in folders) else []


def variant_dirs(path: Path, expected: str = ARCHIPELAGO_LAYOUT) -> list[Path]:
    """The variant folders under `path`: itself, or its child folders that are variant folders;
    where there are none, the refusal says what was `expected`."""
    path = Path(path)
    if not path.is_dir():
        raise InputError(path, None, "no such run folder")
    if _is_variant_dir(path):
        return [path]
    found = [child for child in _subfolders(path)[0] if _is_variant_dir(child)]
    if not found:
        from rubric_audit.load.benchmark import is_audit_output, is_benchmark

        if is_benchmark(path):
            raise InputError(path, None, "a benchmark, not a run folder: give it as the "
                                         "benchmark (--bench), its runs as run folders")
        if is_audit_output(path):
            raise InputError(path, None, "an audit's output folder (audit.db, reports), not a "
                                         "run folder: give the run folders it read")
        raise InputError(path, None, f"not a run folder: expected {expected}")
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
    one, all of them hashed for the fingerprint. A zip (a workspace snapshot, as large as a world)
    is not read whole: it stands in as its SHA-256. `read` holds those a loader already read, by
    name (Harbor's result.json, read when its trials were found)."""

    def __init__(self, folder: Path, read: dict[str, bytes] | None = None) -> None:
        self.folder = folder
        read = read or {}
        # file types from one listing, not a stat each; a link is kept so that reading it is
        # refused with its name (read_bytes), never followed nor passed over in silence
        with os.scandir(folder) as entries:
            listed = list(entries)
        names = sorted(_utf8_name(e) for e in listed
                       if e.is_file(follow_symlinks=False) or e.is_symlink())
        self.folders = frozenset(e.name for e in listed if e.is_dir())  # links to folders too
        base = os.fspath(folder)
        self.files = {name: read[name] if name in read
                      else file_digest(os.path.join(base, name), MAX_ARCHIVE_BYTES)
                      if name.endswith(".zip") else read_bytes(os.path.join(base, name))
                      for name in names}

    def artifacts(self) -> list[str]:
        """`snapshots.attempt_artifacts` of the folder (none without the files they are in)."""
        if ARTIFACTS_DIR in self.folders or FINAL_SNAPSHOT in self.files:
            return attempt_artifacts(self.folder)
        return []

    def json(self, name: str) -> Any:
        """The parsed JSON file `name`, or None where the folder has none."""
        data = self.files.get(name)
        if data is None:
            return None
        path = self.folder / name
        return parse_json(path, decode_text(path, data))

    def parsed(self, name: str, model: type[M] | TypeAdapter[Any]) -> Any:
        """The JSON file `name` validated by its model (None where the folder has none): a value
        of the wrong kind is an InputError naming its field."""
        data = self.json(name)
        return None if data is None else validated(self.folder / name, data, model)


def fingerprint(folder: Path, files: dict[str, bytes]) -> str:
    """Hash of the attempt folder's own files (not nested attempt folders), given as read (by
    name), and of its artifacts."""
    digest = hashlib.sha256()
    for name, data in sorted(files.items()):
        digest.update(name.encode() + b"\0" + data + b"\0")
    for path in exported_files(folder):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + read_bytes(path))
    return digest.hexdigest()[:16]


FINAL_ANSWER = "final_answer"


def _text(content: Any) -> str | None:
    """A message's text: a string, or the text parts of a list of parts; None when empty."""
    if isinstance(content, list):
        content = "\n".join(p["text"] for p in content
                            if isinstance(p, dict) and isinstance(p.get("text"), str))
    return content if isinstance(content, str) and content.strip() else None


def _call_answer(arguments: Any) -> str | None:
    """The `answer` of a final_answer call's arguments (a JSON object, usually as text), else
    the arguments as given."""
    parsed = arguments
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except (ValueError, RecursionError):
            return _text(arguments)
    answer = parsed.get("answer") if isinstance(parsed, dict) else None
    if isinstance(answer, str):
        return answer
    return _text(arguments) if isinstance(arguments, str) else None


def recorded_answer(trajectory: RecordedTrajectory) -> tuple[str | None, str]:
    """The attempt's answer and the rule that found it (see the module docstring)."""
    messages = [m for m in trajectory.messages or [] if isinstance(m, dict)]
    for message in reversed(messages):
        if message.get("role") == "tool" and message.get("name") == FINAL_ANSWER:
            content = message.get("content")
            return (content if isinstance(content, str) else json.dumps(content),
                    "final_answer result")
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        for call in reversed(calls if isinstance(calls, list) else []):
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and function.get("name") == FINAL_ANSWER:
                return _call_answer(function.get("arguments")), "final_answer call"
    if isinstance(trajectory.output, str):
        return trajectory.output, "trajectory output"
    for message in reversed(messages):
        text = _text(message.get("content")) if message.get("role") == "assistant" else None
        if text is not None:
            return text, "last assistant message"
    return None, "no answer"


def _usage(raw: RecordedUsage | None) -> Usage:
    return Usage(**raw.model_dump()) if raw else Usage()


def _grades(attempt_id: str, raw: RecordedGrading, grader: str = "recorded"
            ) -> list[CriterionGrade]:
    out = []
    verdict: Verdict
    for result in raw.verifier_results or []:
        values = result.verifier_result_values or ResultValues()
        grade, score = values.judge_grade, result.score
        if result.status != "ok" or (grade is None and score is None):
            verdict = "unscored"
        elif grade is not None:
            verdict = grade
        else:
            verdict = "pass" if score is not None and score >= 1.0 else "fail"
        out.append(CriterionGrade(attempt_id=attempt_id, criterion_id=result.verifier_id,
                                  grader=grader, verdict=verdict,
                                  rationale=values.grade_rationale or "", score=score))
    return out


def _task_from_run(files: AttemptFiles, task_id: str, row: dict[str, str]) -> Task:
    """The task as the run recorded it (prompt and verifiers), for runs imported without a bench."""
    verifiers = files.parsed("verifiers.json", Verifiers) or []
    criteria = []
    world_id = row.get("world_id", "")
    for v in verifiers:
        values = v.verifier_values or VerifierValues()
        criteria.append(Criterion(id=v.verifier_id, text=values.criteria,
                                  primary=bool(values.is_primary_objective)))
        world_id = world_id or v.world_id or ""
    messages = files.parsed("initial_messages.json", InitialMessages) or []
    prompt = next((m.get("content", "") for m in messages if m.get("role") == "user"), "")
    return Task(id=task_id, name=task_id, domain=row.get("domain", ""), world_id=world_id,
                prompt=prompt if isinstance(prompt, str) else json.dumps(prompt),
                criteria=criteria, source="runs")


ORCHESTRATOR_CONFIG = "orchestrator_config.json"


@dataclass
class _ReadAttempt:
    """One attempt as read, with where its model came from and which rule found its answer."""

    attempt: Attempt
    grades: list[CriterionGrade]
    model_from: str
    answer_rule: str


def _attempt(files: AttemptFiles, variant: str, task_id: str, index: int,
             fallback_model: tuple[str, str], failure: dict[str, Any] | None) -> _ReadAttempt:
    """One attempt folder; `fallback_model` is (model, where it was read) for an attempt whose
    own orchestrator_config.json names none."""
    folder = files.folder
    attempt_id = Attempt.make_id(variant, task_id, index)
    trajectory = files.parsed("trajectory.json", RecordedTrajectory) or RecordedTrajectory()
    recorded = files.parsed("grades.json", RecordedGrading)
    settings = files.parsed("grading_settings.json", GradingSettings) or GradingSettings()
    orchestrator = files.parsed(ORCHESTRATOR_CONFIG, OrchestratorConfig) or OrchestratorConfig()
    agent = files.parsed("agent_config.json", AgentConfig) or AgentConfig()
    model, model_from = ((orchestrator.model, ORCHESTRATOR_CONFIG) if orchestrator.model
                         else fallback_model)
    answer, answer_rule = recorded_answer(trajectory)
    status = recorded.grading_run_status if recorded else None
    judge_runs = _judge_runs(folder) if JUDGE_RUNS in files.folders else []
    completed = [(grader, raw) for grader, raw in judge_runs
                 if raw.grading_run_status == "completed"]
    graded = status == "completed" or bool(completed)
    if graded:
        reason = None
    elif failure is not None:
        reason = str(failure.get("error") or failure.get("status") or "listed in failures file")
    elif judge_runs:
        grader, raw = judge_runs[0]
        reason = f"grading by {grader} failed: {raw.error or raw.grading_run_status}"
    elif recorded is not None:
        reason = f"grading_run_status is {status!r}, not 'completed'"
    elif "trajectory.json" not in files.files:
        reason = "no trajectory.json and no grades.json: nothing was recorded to grade"
    elif trajectory.status in UNFINISHED:
        reason = f"agent_status {trajectory.status!r}: the run did not finish, so it was not graded"
    else:
        reason = None  # the agent finished and no grader has graded it yet: ungraded
    attempt = Attempt(
        id=attempt_id, task_id=task_id, model=model, variant=variant, index=index,
        state="graded" if graded else "unavailable" if reason else "ungraded",
        unavailable_reason=reason,
        answer=answer,
        artifacts=files.artifacts(),
        trajectory=normalise_trajectory(trajectory.messages, "archipelago"),
        usage=_usage(trajectory.usage),
        wall_time=trajectory.time_elapsed,
        agent_status=trajectory.status,
        agent=agent.agent_config_id or agent.agent_name,
        judge_model=settings.llm_judge_model,
        source=str(folder),
        fingerprint=fingerprint(folder, files.files),
    )
    grades = _grades(attempt_id, recorded) if recorded and status == "completed" else []
    for grader, raw in completed:
        grades += _grades(attempt_id, raw, grader)
    return _ReadAttempt(attempt, grades, model_from, answer_rule)


def _judge_runs(folder: Path) -> list[tuple[str, RecordedGrading]]:
    """Grading runs written by `rubric-audit grade` beside the recorded one: grades/<judge>.json."""
    runs = []
    for path in sorted((folder / JUDGE_RUNS).glob("*.json")):
        raw = validated(path, read_json(path), RecordedGrading)
        runs.append((f"judge:{raw.judge_model or path.stem}", raw))
    return runs


def _attempt_folders(task_dir: Path) -> tuple[list[tuple[int, Path]], list[str]]:
    """Attempt k of a task: `attempt_<k>/` folders; files directly in the task folder are attempt
    1. And the names of the task folder's links to folders, not followed."""
    numbered, linked = _attempt_subdirs(task_dir)
    if _is_attempt_dir(task_dir):
        if any(k == 1 for k, _ in numbered):
            raise InputError(task_dir, None, "holds attempt files and an attempt_1 folder: "
                                             "which one is attempt 1 is ambiguous")
        numbered.insert(0, (1, task_dir))
    return numbered, linked


def _fallback_models(variant: str, rows: list[dict[str, str]],
                     failures: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """Per task id, the model an attempt without its own orchestrator_config.json ran, and where
    that was read: its results.csv row (or failures line), else the variant's most common
    agent_model; "" is the key for a task named nowhere."""
    named: dict[str, tuple[str, str]] = {}
    for where, records in ((FAILURES_JSONL, failures), (RESULTS_CSV, rows)):
        for record in records:
            if isinstance(record.get("agent_model"), str) and record["agent_model"]:
                named[record["task_id"]] = (record["agent_model"], f"{where} agent_model")
    models = Counter(model for model, _ in named.values())
    named[""] = ((models.most_common(1)[0][0], "the variant's most common agent_model")
                 if models else (variant, "the variant folder's name"))
    return named


@dataclass
class TaskRead:
    """One task folder of a variant, read: its attempts (with the task as the variant recorded
    it), and what the variant's summary counts of them."""

    runs: RecordedRuns
    tally: SourceTally
    unmapped: list[str]
    model_from: Counter[str]
    answer_rules: Counter[str]


class VariantReader:
    """One variant folder: its own files (results.csv, the failures file) read once, then its
    task folders one at a time, in any process (`read_task` changes nothing here), then its
    summary of every task read, counted in order (`count`)."""

    def __init__(self, variant_dir: Path) -> None:
        self.folder = variant_dir
        self.variant = variant_dir.name
        rows = _results_rows(variant_dir)
        failures = _failures(variant_dir)
        self.row_by_task = {r["task_id"]: r for r in rows}
        self.failure_by_task = {f["task_id"]: f for f in failures}
        self.failure_by_attempt = {
            (f["task_id"], int(f["attempt"])): f for f in failures
            if str(f.get("attempt", "")).isdecimal() and len(str(f["attempt"])) < 10}
        self.fallback = _fallback_models(self.variant, rows, failures)
        self.task_dirs, linked = _subfolders(variant_dir)
        self._tally = SourceTally()
        self._unmapped = _linked(Path(self.variant), linked)
        self._model_from: Counter[str] = Counter()
        self._answer_rules: Counter[str] = Counter()

    def read_task(self, task_dir: Path) -> TaskRead:
        task_id = task_dir.name
        try:
            path_safe(task_id)
        except ValueError as exc:
            raise InputError(task_dir, "name", str(exc)) from None
        row = self.row_by_task.get(task_id) or {
            k: str(v) for k, v in self.failure_by_task.get(task_id, {}).items()}
        folders, linked = _attempt_folders(task_dir)
        read = TaskRead(RecordedRuns(), SourceTally(),
                        _linked(Path(self.variant, task_id), linked), Counter(), Counter())
        if not folders:
            read.unmapped.append(f"{task_dir.name}/: no attempt files")
        runs = read.runs
        for index, folder in folders:
            failure = self.failure_by_attempt.get((task_id, index),
                                                  self.failure_by_task.get(task_id))
            files = AttemptFiles(folder)
            attempt_read = _attempt(files, self.variant, task_id, index,
                                    self.fallback.get(task_id, self.fallback[""]), failure)
            attempt = attempt_read.attempt
            if attempt.judge_model is None and row.get("judge_model"):
                attempt = attempt.model_copy(update={"judge_model": row["judge_model"]})
            runs.attempts.append(attempt)
            runs.grades.extend(attempt_read.grades)
            if attempt_read.model_from != ORCHESTRATOR_CONFIG:
                read.model_from[attempt_read.model_from] += 1
            read.answer_rules[attempt_read.answer_rule] += 1
            recorded = runs.recorded.setdefault(task_id, {})
            if self.variant not in recorded:
                recorded[self.variant] = _task_from_run(files, task_id, row)
        read.tally.add(runs)
        return read

    def count(self, read: TaskRead) -> None:
        self._tally.merge(read.tally)
        self._unmapped += read.unmapped
        self._model_from.update(read.model_from)
        self._answer_rules.update(read.answer_rules)

    def summary(self) -> SourceSummary:
        """What the variant gave, over the tasks counted."""
        unmapped = self._unmapped + [f"{RESULTS_CSV}: row for {task_id} has no task folder"
                                     for task_id in self.row_by_task
                                     if task_id not in self._tally.task_ids]
        return self._tally.summary(self.folder, "archipelago", unmapped, self._model_from,
                                   self._answer_rules)


def variant_batches(variant_dir: Path) -> Iterator[RecordedRuns]:
    """The attempts under one variant folder, a task folder at a time (each batch holds the
    task as this variant recorded it); the last batch holds only the variant's summary."""
    reader = VariantReader(variant_dir)
    for task_dir in reader.task_dirs:
        read = reader.read_task(task_dir)
        reader.count(read)
        if read.runs.attempts:
            yield read.runs
    yield RecordedRuns(sources=[reader.summary()])


def load_variant(variant_dir: Path) -> RecordedRuns:
    """All attempts under one variant folder."""
    runs = RecordedRuns()
    for batch in variant_batches(variant_dir):
        runs.extend(batch)
    return runs


def load_runs(paths: list[Path]) -> RecordedRuns:
    """Attempts from run folders: each a variant folder or a folder of variant folders."""
    combined = RecordedRuns()
    for path in paths:
        for variant_dir in variant_dirs(Path(path)):
            combined.extend(load_variant(variant_dir))
    combined.share_tasks()
    return combined
