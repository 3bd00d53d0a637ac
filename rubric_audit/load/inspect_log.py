"""Load inspect_ai eval logs (`.eval` and `.json`) through inspect_ai's own log reader.

inspect_ai is an optional extra (`pip install 'rubric-audit[inspect]'`): its reader knows every
version of its format, so no parser is written here. A path is a log, or a folder holding logs at
any depth, `.eval` and `.json` mixed (a log directory, or the site `inspect view bundle` writes:
its viewer files and its `logs.json` or `listing.json` are no logs). A `.json` file is a log by
its own marker keys (a top-level object of EvalLog fields holding `eval`); in a folder, one that
is not is skipped and named in the summary. Links are never followed.

Each log is a variant; each sample epoch an attempt of the task `<eval task>:<sample id>` (so
logs of several models share tasks). A score's value, each key of a dict value, and each rubric
item a score's metadata lists (`rubric`, `rubric_items` or `criteria`: objects with a text and a
value) is a recorded value of its scorer. Where every value of a scorer's key (or of its rubric
items) across the log is a verdict (inspect's C/I/P/N, a boolean, or only 0 and 1), each is a
criterion graded with inspect's own mapping to numbers (full marks pass). Other values (a win
rate, a count of steps, a 0-10 rating; a score's own value beside its rubric items) are
measurements: recorded with the log's metrics, never criteria. The log's accuracy and mean per
scorer (`results.scores[].metrics`) are recomputed from its samples, and a difference is said
with its reason.

A sample that errored outside the model or was invalidated is unavailable, its reason one line.
A sample without verdicts (never scored, or only measured) is ungraded. A refusal is the model's
answer: output the provider's content filter stopped is graded like any other, and a sample
that failed on the evaluated model's own refusal (inspect's ModelRefusalError) is ungraded with
the refusal as its answer.
"""

from __future__ import annotations

import json
import math
import re
import struct
import zipfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from statistics import mean
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from rubric_audit.core.errors import InputError, files_under, invalid, open_regular, validated
from rubric_audit.core.limits import ZIP_ERRORS, check_zip
from rubric_audit.core.model import (
    MAX_INDEX,
    Attempt,
    Count,
    Criterion,
    CriterionGrade,
    Gold,
    Measurement,
    Number,
    SourceMetric,
    SourceSummary,
    Task,
    Usage,
    Verdict,
    safe_id,
)
from rubric_audit.core.text import first_line
from rubric_audit.load.runs import RecordedRuns, summarize
from rubric_audit.load.trajectory import normalise_trajectory

if TYPE_CHECKING:
    from inspect_ai.log import EvalError, EvalLog, EvalSample
    from inspect_ai.scorer import Score

SUFFIXES = (".eval", ".json")
MAX_LOG_BYTES = 2_000_000_000
MAX_TARGET_IN_CRITERION = 200
RUBRIC_KEYS = ("rubric", "rubric_items", "criteria")
TEXT_KEYS = ("criterion", "text", "description", "name")
VALUE_KEYS = ("value", "score", "passed", "met", "grade", "verdict")
EXPLANATION_KEYS = ("explanation", "rationale", "reasoning", "reason")
EXTRA = "reading inspect_ai logs needs the inspect extra: pip install 'rubric-audit[inspect]'"
LFS_POINTER = b"version https://git-lfs.github.com/spec/"
VERDICT_TEXT = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}  # CORRECT, INCORRECT, PARTIAL, NOANSWER
BOOLEAN_TEXT = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}
RECOMPUTED = ("accuracy", "mean")
REFUSAL = "Model refusal ("  # how ModelRefusalError's message starts
ERROR_TYPE = re.compile(r"[A-Za-z_][\w.]*(?=\(|: )")
ITEMS = None
"""The key grouping a scorer's rubric items: they are verdicts or measurements together."""

Group = tuple[str, str | None]  # (scorer, key): the key of a dict value, "" for the score's own
# value, ITEMS for its rubric items


def _top_level_keys(path: Path) -> Iterator[str]:
    """The keys of the JSON object in `path`, in order, streamed with ijson (inspect_ai's own
    JSON reader) so that the first few decide without reading a large log; ValueError where the
    file is no JSON object."""
    import ijson

    with open_regular(path) as fh:
        # use_float: its C parser given an integer past Python's 4,300 digits crashed the
        # process (a segmentation fault); so yajl's own 64-bit integers, past them a JSONError
        # basic_parse, not parse: parse's prefixes ("messages.item.item...") grow with depth,
        # and a deeply nested value cost memory quadratic in its depth (10 GB for 100k levels)
        events = ijson.basic_parse(fh, use_float=True)
        try:
            if next(events, None) != ("start_map", None):
                raise ValueError("not a JSON object")
            depth = 1
            for event, value in events:
                if depth == 1 and event == "map_key":
                    yield value
                elif event in ("start_map", "start_array"):
                    depth += 1
                elif event in ("end_map", "end_array"):
                    depth -= 1
                    if depth == 0:
                        return
        except ijson.JSONError as exc:
            raise ValueError(first_line(str(exc), 80) or "not JSON") from None


def _not_a_log(path: Path) -> str | None:
    """Why the file is no inspect_ai log, or None for one: an `.eval` file is one by its name (its
    reader says if it is not); a `.json` file by its top-level keys, EvalLog fields that include
    `eval` (a bundle's logs.json and listing.json are keyed by log file names)."""
    if path.suffix == ".eval":
        return None
    from inspect_ai.log import EvalLog

    try:
        for key in _top_level_keys(path):
            if key == "eval":
                return None
            if key not in EvalLog.model_fields:
                return f"its top-level key {first_line(key, 60)!r} is no field of an EvalLog"
    except (ValueError, OSError) as exc:
        return f"not JSON: {exc}"
    except InputError as exc:
        return exc.problem
    return "no `eval` among its top-level keys"


def is_inspect_log(path: Path) -> bool:
    """A log file, or a folder holding a log at any depth."""
    if path.is_file():
        return path.suffix in SUFFIXES
    try:
        return path.is_dir() and any(
            _not_a_log(p) is None for p in files_under(path) if p.suffix in SUFFIXES)
    except ImportError:  # no inspect_ai: only .eval files are known for logs
        return any(p.suffix == ".eval" for p in files_under(path))


def _read(path: Path) -> EvalLog:
    try:
        import zstandard  # the codec of .eval entries (inspect_ai's dependency)
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise InputError(path, None, EXTRA) from None
    if path.stat().st_size > MAX_LOG_BYTES:
        raise InputError(path, None, f"larger than {MAX_LOG_BYTES:,} bytes")
    with open_regular(path) as fh:
        if fh.read(len(LFS_POINTER)) == LFS_POINTER:
            raise InputError(path, None, "a Git LFS pointer, not the log: fetch the logs "
                                         "themselves (git lfs pull)")
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


Recorded = tuple[str | None, str, Criterion | None, Any, str]
"""(group key, key, the criterion it grades if it is a verdict, value, explanation)."""


def _recorded(task_id: str, scorer: str, score: Score, target: str,
              unmapped: list[str]) -> list[Recorded]:
    """Every value one score records. The score's own value beside rubric items sums them up:
    it grades no criterion of its own."""
    explanation = score.explanation or ""
    metadata = score.metadata or {}
    listed = next((metadata[k] for k in RUBRIC_KEYS if isinstance(metadata.get(k), list)), None)
    if listed is not None:
        out: list[Recorded] = [("", "", None, score.value, explanation)]
        for i, item in enumerate(listed):
            text = _first(item, TEXT_KEYS) if isinstance(item, dict) else None
            if not isinstance(text, str) or _first(item, VALUE_KEYS) is None:
                unmapped.append(f"{task_id}: {scorer} rubric item {i} has no text or value")
                continue
            criterion_id = str(item.get("id") or f"{task_id}:{scorer}:{i + 1}")
            out.append((ITEMS, f"{i + 1}: {first_line(text, 80)}",
                        Criterion(id=criterion_id, text=text),
                        _first(item, VALUE_KEYS),
                        str(_first(item, EXPLANATION_KEYS) or explanation)))
        return out
    if isinstance(score.value, dict):
        return [(key, key, Criterion(id=f"{task_id}:{scorer}:{key}", text=f"{scorer}: {key}"),
                 value, explanation) for key, value in score.value.items()]
    shown = f" ({target})" if target and len(target) <= MAX_TARGET_IN_CRITERION else ""
    return [("", "", Criterion(id=f"{task_id}:{scorer}",
                               text=f"{scorer}: the answer matches the target{shown}"),
             score.value, explanation)]


def _number(value: Any) -> float | None:
    """The number inspect's metrics take a value for (its value_to_float: C 1, P 0.5, I and N 0,
    yes and true 1, no and false 0, numbers and numeric text as they are); None for a value it
    maps to no number (a list, a dict, other text, an infinity)."""
    if isinstance(value, str):
        if value in VERDICT_TEXT:
            return VERDICT_TEXT[value]
        text = value.strip().lower()
        if text in BOOLEAN_TEXT:
            return BOOLEAN_TEXT[text]
    elif not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _missing(value: Any) -> bool:
    """No value: None, or NaN (inspect records a grade it could not parse as NaN)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _is_verdict(value: Any) -> bool:
    """C/I/P/N, a boolean (or its text), or 0 or 1."""
    if isinstance(value, bool) or (isinstance(value, str) and value in VERDICT_TEXT):
        return True
    if isinstance(value, str) and value.strip().lower() in BOOLEAN_TEXT:
        return True
    return _number(value) in (0.0, 1.0)


def _grade(attempt_id: str, criterion: Criterion, value: Any, explanation: str) -> CriterionGrade:
    number = _number(value)
    verdict: Verdict = "unscored" if number is None else "pass" if number >= 1.0 else "fail"
    return CriterionGrade(attempt_id=attempt_id, criterion_id=criterion.id, grader="recorded",
                          verdict=verdict, score=number, rationale=explanation)


def _error_line(error: EvalError) -> str:
    """The error's type and the first line of its message (inspect records an exception as its
    repr, `RuntimeError('...')`; where the message does not start with the type, the
    traceback's line raising it names it: `package.module.TypeName: <message>`)."""
    message = first_line(error.message, 10_000)
    if ERROR_TYPE.match(message):
        return message
    for line in reversed(error.traceback.splitlines()):
        found = ERROR_TYPE.match(line)
        if found and line[found.end():].removeprefix(": ").startswith(message[:80]):
            kind = found.group().rsplit(".", 1)[-1]
            return f"{kind}: {message}" if message else kind
    return message


def _refusal(sample: EvalSample, model: str) -> str | None:
    """The refusal, where the sample failed on the evaluated model's own refusal (ModelRefusalError:
    `Model refusal (<model>[, role <role>][, category <c>]): <text>`); a refusal by a model in
    another role (a grader) is no answer of the model's."""
    error = sample.error
    if error is None or "ModelRefusalError" not in error.message + error.traceback:
        return None
    at = error.message.find(REFUSAL)
    if at < 0:
        return None
    details, _, text = error.message[at + len(REFUSAL):].partition("): ")
    named = details.split(", ")
    if named[0] != model or any(part.startswith("role ") for part in named[1:]):
        return None
    return text.rstrip().removesuffix("')").removesuffix('")')


def _unavailable(sample: EvalSample, refusal: str | None) -> str | None:
    """Why the sample has no usable grade: it failed outside the model, or was invalidated."""
    if sample.error is not None and refusal is None:
        return first_line(f"sample errored: {_error_line(sample.error)}")
    if sample.invalidation is not None:
        return "sample invalidated"
    return None


class _Usage(BaseModel):
    """A sample's `model_usage` entry as the audit stores it: inspect's own model takes any int
    and float, so a negative count or a non-finite cost is refused here, naming its field."""

    model_config = ConfigDict(extra="ignore")
    input_tokens: Count | None = None
    output_tokens: Count | None = None
    total_tokens: Count | None = None
    total_cost: Number | None = None


class _Times(BaseModel):
    model_config = ConfigDict(extra="ignore")
    total_time: Number | None = None


def _check_numbers(path: Path, number: int, sample: EvalSample) -> None:
    """The sample's times and usage, checked as every loader's: finite, counts not negative."""
    validated(path, {"total_time": sample.total_time}, _Times, f"samples[{number}]")
    for model, used in (sample.model_usage or {}).items():
        validated(path, used.model_dump(), _Usage, f"samples[{number}].model_usage.{model}")


def _usage(sample: EvalSample, model: str) -> Usage:
    used = (sample.model_usage or {}).get(model)
    if used is None:
        return Usage()
    return Usage(prompt_tokens=used.input_tokens, completion_tokens=used.output_tokens,
                 total_tokens=used.total_tokens, cost=getattr(used, "total_cost", None))


def _label(scorer: str, key: str | None) -> str:
    """`scorer`, `scorer: key` or `scorer: rubric items`, as the summary names them."""
    if key is ITEMS:
        return f"{scorer}: rubric items"
    return f"{scorer}: {key}" if key else scorer


def _source_metrics(path: Path, variant: str, log: EvalLog,
                    numbers: dict[tuple[str, str], dict[Any, list[float]]],
                    unmapped: list[str]) -> list[SourceMetric]:
    """Each metric of the log's `results.scores`, beside the accuracy or mean its samples give
    (reduced over epochs per sample, by mean, as inspect does by default)."""
    out = []
    for score in log.results.scores if log.results else []:
        # a metric over a dict key is named by the key, which can be the scorer's own name
        key = score.name if (score.scorer, score.name) in numbers or score.name != score.scorer \
            else ""
        per_sample = numbers.get((score.scorer, key), {})
        for name, metric in score.metrics.items():
            value = _number(metric.value)
            computed, difference = None, ""
            if name not in RECOMPUTED:
                difference = "not recomputed: only accuracy and mean are"
            elif score.reducer not in (None, "mean"):
                difference = f"not recomputed: samples reduced over epochs by {score.reducer}"
            elif not per_sample:
                difference = "not recomputed: the log holds no values of it"
            else:
                computed = mean(mean(values) for values in per_sample.values())
                if value is None or not math.isclose(value, computed, rel_tol=1e-9,
                                                     abs_tol=1e-12):
                    difference = _why_different(log, score.scored_samples, per_sample)
                    unmapped.append(f"{_label(score.scorer, key)} {name}: the log says "
                                    f"{metric.value:.4g}, its samples give {computed:.4g}: "
                                    f"{difference}")
            out.append(SourceMetric(source=str(path), variant=variant, scorer=score.scorer,
                                    key=key, metric=name, value=value, computed=computed,
                                    samples=len(per_sample), difference=difference))
    return out


def _why_different(log: EvalLog, scored: int | None, per_sample: dict[Any, list[float]]) -> str:
    epochs = sum(len(values) for values in per_sample.values())
    if scored is not None and scored != len(per_sample):
        return f"the log's metric is over {scored} samples, the log holds values of " \
               f"{len(per_sample)}"
    if log.results and log.results.completed_samples > epochs:
        return f"the log completed {log.results.completed_samples} sample epochs and holds " \
               f"values of {epochs}"
    return "no reason found in the log (its scorer may compute it otherwise)"


def load_log(path: Path) -> RecordedRuns:
    """One log: its samples as attempts, their verdicts as per-criterion grades, their other
    values as measurements, and the log's own metrics beside what its samples give."""
    try:
        problem = _not_a_log(path)
    except ImportError:
        raise InputError(path, None, EXTRA) from None
    if problem:
        raise InputError(path, None, f"not an inspect_ai log: {problem}")
    log = _read(path)
    runs = RecordedRuns()
    unmapped: list[str] = []
    variant, model = path.stem, log.eval.model
    if log.status != "success":
        unmapped.append(f"log status {log.status!r}"
                        + (f": {first_line(log.error.message)}" if log.error else ""))
    if not log.samples:
        unmapped.append("no samples in the log (header only): nothing to map")
    recorded: list[list[tuple[str, Recorded]]] = []
    values: dict[Group, list[Any]] = defaultdict(list)
    numbers: dict[tuple[str, str], dict[Any, list[float]]] = defaultdict(lambda: defaultdict(list))
    for number, sample in enumerate(log.samples or []):
        if not 1 <= sample.epoch <= MAX_INDEX:  # inspect counts from 1; an attempt's index
            raise InputError(path, f"samples[{number}].epoch",
                             f"must be from 1 to {MAX_INDEX:,}, found {sample.epoch}")
        _check_numbers(path, number, sample)
        task_id = safe_id(f"{log.eval.task}:{sample.id}")
        own = [(scorer, item) for scorer, score in (sample.scores or {}).items()
               for item in _recorded(task_id, scorer, score, _target(sample), unmapped)]
        recorded.append(own)
        for scorer, (group, key, _, value, _) in own:
            values[(scorer, group)].append(value)
            if group is not ITEMS and (found := _number(value)) is not None:
                numbers[(scorer, key)][sample.id].append(found)
    verdicts = {group for group, seen in values.items()
                if all(_is_verdict(v) for v in seen if not _missing(v))}
    for measured in sorted(set(values) - verdicts, key=str):
        example = next(v for v in values[measured] if not _missing(v) and not _is_verdict(v))
        unmapped.append(f"{_label(*measured)}: values that are no verdicts "
                        f"(e.g. {first_line(json.dumps(example), 40)}): measurements, "
                        f"not criteria")
    criteria: dict[str, dict[str, Criterion]] = {}
    for sample, own in zip(log.samples or [], recorded, strict=True):
        name = f"{log.eval.task}:{sample.id}"  # shown as it is; its id is made path-safe
        task_id = safe_id(name)
        target = _target(sample)
        attempt_id = Attempt.make_id(variant, task_id, sample.epoch)
        refusal = _refusal(sample, model)
        reason = _unavailable(sample, refusal)
        task_criteria = criteria.setdefault(task_id, {})
        graded = False
        for scorer, (group, key, criterion, value, explanation) in own:
            if criterion is not None and (scorer, group) in verdicts:
                task_criteria.setdefault(criterion.id, criterion)
                if reason is None:
                    runs.grades.append(_grade(attempt_id, criterion, value, explanation))
                    graded = True
            elif reason is None:
                runs.measurements.append(Measurement(
                    attempt_id=attempt_id, scorer=scorer, key=key, value=_number(value),
                    recorded=json.dumps(value, default=str)))
        runs.recorded.setdefault(task_id, {})[variant] = Task(
            id=task_id, name=name, domain=log.eval.task, world_id="", prompt=_prompt(sample),
            criteria=list(task_criteria.values()), source="runs",
            gold=Gold(text=target) if target else None)
        answer = sample.output.completion if sample.output else None
        runs.attempts.append(Attempt(
            id=attempt_id, task_id=task_id, model=model, variant=variant, index=sample.epoch,
            state="unavailable" if reason else "graded" if graded else "ungraded",
            unavailable_reason=reason, answer=(answer or refusal) if refusal else answer,
            trajectory=normalise_trajectory(
                [m.model_dump(mode="json") for m in sample.messages], "inspect"),
            usage=_usage(sample, model), wall_time=sample.total_time,
            agent_status=sample.limit.type if sample.limit else None,
            judge_model=_grader_model(log), source=str(path),
            fingerprint=f"{log.eval.run_id}:{sample.uuid or sample.id}:{sample.epoch}"))
    runs.metrics = _source_metrics(path, variant, log, numbers, unmapped)
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
    """Every log at `path`: a log file, or a folder holding logs at any depth. In a folder, a
    `.json` file that is no log (a bundle's listing) is skipped and named in a summary of the
    folder's own."""
    if path.is_file():
        return load_log(path)
    runs, skipped = RecordedRuns(), []
    for file in files_under(path):
        if file.suffix not in SUFFIXES:
            continue  # a viewer's html, js, css and images
        try:
            problem = _not_a_log(file)
        except ImportError:
            raise InputError(file, None, EXTRA) from None
        if problem:
            skipped.append(f"{file.relative_to(path).as_posix()}: skipped, not an inspect_ai "
                           f"log ({problem})")
        else:
            runs.extend(load_log(file))
    if skipped:
        runs.sources.append(SourceSummary(path=str(path), format="inspect", unmapped=skipped))
    return runs
