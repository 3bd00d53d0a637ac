"""Load inspect_ai eval logs (`.eval` and `.json`) through inspect_ai's own log reader.

inspect_ai is an optional extra (`pip install 'rubric-audit[inspect]'`): its reader knows every
version of its format, so no parser is written here. Each log is a variant; each sample epoch an
attempt of the task `<eval task>:<sample id>` (so logs of several models share tasks). A score
becomes one criterion; a score whose value is a dict becomes one criterion per key, and one whose
metadata lists rubric items (`rubric`, `rubric_items` or `criteria`: objects with a text and a
value) one criterion per item. Values become verdicts with inspect's `value_to_float` (full marks
pass). A sample that errored, was invalidated or was never scored is unavailable.
"""

from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from rubric_audit.errors import InputError, invalid
from rubric_audit.limits import ZIP_ERRORS, check_zip
from rubric_audit.load.runs import RecordedRuns, summarize
from rubric_audit.load.trajectory import normalise_trajectory
from rubric_audit.model import Attempt, Criterion, CriterionGrade, Gold, Task, Usage, safe_id

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.scorer import Score

SUFFIXES = (".eval", ".json")
MAX_LOG_BYTES = 2_000_000_000
MAX_TARGET_IN_CRITERION = 200
RUBRIC_KEYS = ("rubric", "rubric_items", "criteria")
TEXT_KEYS = ("criterion", "text", "description", "name")
VALUE_KEYS = ("value", "score", "passed", "met", "grade", "verdict")
EXPLANATION_KEYS = ("explanation", "rationale", "reasoning", "reason")
EXTRA = "reading inspect_ai logs needs the inspect extra: pip install 'rubric-audit[inspect]'"


def is_inspect_log(path: Path) -> bool:
    """A log file, or a folder holding `.eval` logs."""
    if path.is_file():
        return path.suffix in SUFFIXES
    return path.is_dir() and any(p.suffix == ".eval" for p in path.iterdir() if p.is_file())


def log_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.iterdir() if p.is_file() and not p.is_symlink()
                  and p.suffix in SUFFIXES)


def _read(path: Path) -> EvalLog:
    try:
        import zstandard  # the codec of .eval entries (inspect_ai's dependency)
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise InputError(path, None, EXTRA) from None
    if path.stat().st_size > MAX_LOG_BYTES:
        raise InputError(path, None, f"larger than {MAX_LOG_BYTES:,} bytes")
    if zipfile.is_zipfile(path):  # an .eval log: its entries checked by declared and real size first
        check_zip(path, path)
    try:
        return read_eval_log(str(path))
    except ValidationError as exc:
        raise invalid(path, "", exc) from None
    # inspect_ai reads .eval zips itself: a damaged one fails as any zip does, or in its own
    # header parsing (struct) and zstd decoding; an entry of the wrong JSON type that it reads
    # before validating (reductions.json not a list) with a TypeError
    except (*ZIP_ERRORS, struct.error, zstandard.ZstdError, TypeError) as exc:
        raise InputError(path, None, f"not an inspect_ai log: {exc}") from None


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of its content list."""
    if isinstance(content, str):
        return content
    return "\n".join(getattr(p, "text", "") for p in content or [] if getattr(p, "text", None))


def _prompt(sample: EvalSample) -> str:
    if isinstance(sample.input, str):
        return sample.input
    return "\n\n".join(_text(m.content) for m in sample.input if m.role == "user")


def _target(sample: EvalSample) -> str:
    target = sample.target if isinstance(sample.target, str) else "\n".join(sample.target)
    return target.strip()


def _first(item: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((item[k] for k in keys if k in item), None)


def _items(task_id: str, scorer: str, score: Score, target: str,
           unmapped: list[str]) -> list[tuple[Criterion, Any, str]]:
    """(criterion, value, explanation) for each criterion one score grades."""
    explanation = score.explanation or ""
    metadata = score.metadata or {}
    listed = next((metadata[k] for k in RUBRIC_KEYS if isinstance(metadata.get(k), list)), None)
    if listed is not None:
        out = []
        for i, item in enumerate(listed):
            text = _first(item, TEXT_KEYS) if isinstance(item, dict) else None
            if not isinstance(text, str) or _first(item, VALUE_KEYS) is None:
                unmapped.append(f"{task_id}: {scorer} rubric item {i} has no text or value")
                continue
            criterion_id = str(item.get("id") or f"{task_id}:{scorer}:{i + 1}")
            out.append((Criterion(id=criterion_id, text=text), _first(item, VALUE_KEYS),
                        str(_first(item, EXPLANATION_KEYS) or explanation)))
        return out
    if isinstance(score.value, dict):
        return [(Criterion(id=f"{task_id}:{scorer}:{key}", text=f"{scorer}: {key}"), value,
                 explanation) for key, value in score.value.items()]
    shown = f" ({target})" if target and len(target) <= MAX_TARGET_IN_CRITERION else ""
    return [(Criterion(id=f"{task_id}:{scorer}",
                       text=f"{scorer}: the answer matches the target{shown}"),
             score.value, explanation)]


def _verdict(value: Any) -> tuple[str, float | None]:
    from inspect_ai.scorer import value_to_float

    if isinstance(value, (list, dict)) or value is None:
        return "unscored", None
    number = value_to_float()(value)
    return ("pass" if number >= 1.0 else "fail"), number


def _unavailable(sample: EvalSample) -> str | None:
    if sample.error is not None:
        return f"sample errored: {sample.error.message.strip().splitlines()[0]}" \
            if sample.error.message.strip() else "sample errored"
    if sample.invalidation is not None:
        return "sample invalidated"
    if not sample.scores:
        return "not scored: the log holds no scores for this sample"
    return None


def _usage(sample: EvalSample, model: str) -> Usage:
    used = (sample.model_usage or {}).get(model)
    if used is None:
        return Usage()
    return Usage(prompt_tokens=used.input_tokens, completion_tokens=used.output_tokens,
                 total_tokens=used.total_tokens, cost=getattr(used, "total_cost", None))


def load_log(path: Path) -> RecordedRuns:
    """One log: its samples as attempts, their scores as per-criterion grades."""
    log = _read(path)
    runs = RecordedRuns()
    unmapped: list[str] = []
    variant, model = path.stem, log.eval.model
    if log.status != "success":
        unmapped.append(f"log status {log.status!r}"
                        + (f": {log.error.message.strip()[:200]}" if log.error else ""))
    if not log.samples:
        unmapped.append("no samples in the log (header only): nothing to map")
    criteria: dict[str, dict[str, Criterion]] = {}
    for number, sample in enumerate(log.samples or []):
        if sample.epoch < 1:  # inspect counts epochs from 1; an attempt's index is one of them
            raise InputError(path, f"samples[{number}].epoch",
                             f"must be at least 1, found {sample.epoch}")
        task_id = safe_id(f"{log.eval.task}:{sample.id}")
        target = _target(sample)
        attempt_id = Attempt.make_id(variant, task_id, sample.epoch)
        reason = _unavailable(sample)
        own = criteria.setdefault(task_id, {})
        for scorer, score in (sample.scores or {}).items():
            for criterion, value, explanation in _items(task_id, scorer, score, target,
                                                        unmapped):
                own.setdefault(criterion.id, criterion)
                if reason is None:
                    verdict, number = _verdict(value)
                    runs.grades.append(CriterionGrade(
                        attempt_id=attempt_id, criterion_id=criterion.id, grader="recorded",
                        verdict=verdict, score=number, rationale=explanation))
        runs.recorded.setdefault(task_id, {})[variant] = Task(
            id=task_id, name=task_id, domain=log.eval.task, world_id="", prompt=_prompt(sample),
            criteria=list(own.values()), source="runs",
            gold=Gold(text=target) if target else None)
        runs.attempts.append(Attempt(
            id=attempt_id, task_id=task_id, model=model, variant=variant, index=sample.epoch,
            state="unavailable" if reason else "graded", unavailable_reason=reason,
            answer=sample.output.completion if sample.output else None,
            trajectory=normalise_trajectory(
                [m.model_dump(mode="json") for m in sample.messages], "inspect"),
            usage=_usage(sample, model), wall_time=sample.total_time,
            agent_status=sample.limit.type if sample.limit else None,
            judge_model=_grader_model(log), source=str(path),
            fingerprint=f"{log.eval.run_id}:{sample.uuid or sample.id}:{sample.epoch}"))
    runs.sources.append(summarize(path, "inspect", runs, unmapped))
    return runs


def _grader_model(log: EvalLog) -> str | None:
    """The grader model a scorer was given (model_graded_* scorers take `model`), if any."""
    for scorer in log.eval.scorers or []:
        model = (scorer.options or {}).get("model")
        if model:
            return model if isinstance(model, str) else json.dumps(model)
    return None


def load_inspect(path: Path) -> RecordedRuns:
    """Every log at `path` (a log file, or a folder of them)."""
    runs = RecordedRuns()
    for file in log_files(path):
        runs.extend(load_log(file))
    return runs
