"""Load Harbor job folders (the Terminal-Bench harness), as `harbor run` writes them.

The schemas are Harbor's own (`harbor.models`): a job folder holds `config.json` (JobConfig),
`result.json` (JobResult) and one folder per trial; a trial folder holds `config.json`
(TrialConfig: task, trial_name, agent {name, import_path, model_name, kwargs}), `trial.log`, and
once the trial finished `result.json` (TrialResult: task_name, trial_name, task_checksum, config,
agent_info, verifier_result.rewards, exception_info, started_at/finished_at and per-phase
timings), `agent/trajectory.json` (ATIF: steps with source, message, tool_calls) and `verifier/`
(reward.json or reward.txt, test-stdout.txt). A trial that raised also has `exception.txt` (the
traceback).

Each trial becomes an attempt whose criteria are the verifier's reward keys (full reward passes).
A trial without a valid reward is unavailable: Harbor's own rule (`TrialResult.reward_valid`) is
that the verifier gave rewards and no recorded exception invalidates them. A trial of an
interrupted job (a config.json but no result.json) is unavailable too, with the exception its
exception.txt ends with, else "interrupted: no result.json"; its task and agent are its config's
(named as a finished trial with the same config names them). Trials of the `oracle` agent (the
reference solution) and the `nop` agent (does nothing) are the gold and null controls.

Trials are grouped into variants by what ran them, whatever job folder they sit in: Harbor's own
key `agent__model__dataset` (`JobStats.format_agent_evals_key`), followed in brackets by the
agent's kwargs and the job's extra instructions where there are any (they change what the agent
does or reads). An attempt's `wall_time` is the agent's execution time (`agent_execution`) where
recorded, else the trial's (`finished_at - started_at`). Each job's own result.json stats (trials,
errors, mean reward per agent and model) are checked against what was read; a difference is said
in the read summary.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from statistics import mean
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from rubric_audit.core.errors import (
    InputError,
    decode_text,
    open_regular,
    parse_json,
    read_bytes,
    read_json,
    utf8_path,
    validated,
)
from rubric_audit.core.model import (
    Attempt,
    Control,
    Count,
    Criterion,
    CriterionGrade,
    Expectation,
    Measurement,
    Number,
    Task,
    Trajectory,
    Usage,
    safe_id,
)
from rubric_audit.core.text import first_line
from rubric_audit.core.words import plural
from rubric_audit.load.runs import AttemptFiles, RecordedRuns, fingerprint, summarize
from rubric_audit.load.trajectory import normalise_trajectory

RESULT = "result.json"
CONFIG = "config.json"
EXCEPTION = "exception.txt"
TRACEBACK_START = "Traceback (most recent call last):"
TRAJECTORY = Path("agent") / "trajectory.json"
TEST_STDOUT = Path("verifier") / "test-stdout.txt"
MAX_RESULT_BYTES = 5_000_000
MAX_TRAJECTORY_BYTES = 50_000_000
MAX_RATIONALE_CHARS = 4_000
MAX_SETUP_CHARS = 60
MAX_DEPTH = 6
ATIF_SOURCES = ("system", "user", "agent")
CONTROL_AGENTS: dict[str, tuple[str, Expectation]] = {"oracle": ("gold", "pass"), "nop": ("null", "fail")}
# Harbor's own rule for naming a setting that may hold a secret (it redacts their values).
SENSITIVE_KEY = re.compile(r"KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL|AUTH", re.IGNORECASE)
# Exception types whose reward Harbor does not count (has_valid_reward False in
# harbor.models.trial.error_policy): infrastructure, provider and verifier failures. Newer
# results also record the policy itself with the exception, which is used first.
INVALID_REWARD_EXCEPTIONS = frozenset("""
EnvironmentStartTimeoutError SandboxBuildFailedError AgentSetupTimeoutError HealthcheckError
SandboxLikelyOutOfMemoryError MemoryLimitExceededError SSHAccessError GKEExecStreamClosedError
GKEPodNotFoundError RuntimeRequestError AddTestsDirError DownloadVerifierDirError ApiError
ApiRateLimitError ApiInternalServerError ApiOverloadedError ApiConnectionClosedError
ApiResponseStalledError UnknownApiError NetworkConnectionError ApiConnectionError
ApiUsageLimitError RateLimitError InternalServerError ServiceUnavailableError APIConnectionError
APIError Timeout UnsupportedModelParametersError BadRequestError UnprocessableEntityError
UnsupportedParamsError APIResponseValidationError BudgetExceededError VerifierTimeoutError
RewardFileNotFoundError RewardFileEmptyError VerifierOutputParseError AgentAuthenticationError
ModelNotFoundError ApiProviderResourceNotFoundError AuthenticationError PermissionDeniedError
NotFoundError ServiceOperationsUnsupportedError VercelScopeError DspyImportError
MissingExtraError RegradeError CancelledError
""".split())


class _Lenient(BaseModel):
    """Harbor's models gain fields between versions: unknown ones are ignored here."""

    model_config = ConfigDict(extra="ignore")


class _ModelInfo(_Lenient):
    name: str
    provider: str | None = None


class _AgentInfo(_Lenient):
    name: str
    version: str = ""
    model_info: _ModelInfo | None = None


class _TaskConfig(_Lenient):
    path: str | None = None
    name: str | None = None
    git_url: str | None = None
    source: str | None = None

    @model_validator(mode="after")
    def _names_a_task(self) -> _TaskConfig:
        if not self.path and not self.name:
            raise ValueError("names no task: neither path nor name is set")
        return self

    def task_name(self) -> str:
        """Harbor's name for the task when its task.toml gives none: the package name, else the
        task folder's name."""
        return self.name or PurePosixPath(str(self.path).replace("\\", "/")).name


class _AgentConfig(_Lenient):
    name: str | None = None
    import_path: str | None = None
    model_name: str | None = None
    kwargs: dict[str, Any] = Field(default_factory=dict)

    def agent_info(self) -> _AgentInfo:
        """What Harbor would record as agent_info for this config, as far as the config says:
        the agent named (an agent given only by import path is named by it; neither is Harbor's
        default, `oracle`), and the model split at its first `/` into provider and name."""
        provider, split, name = (self.model_name or "").partition("/")
        if not split:
            provider, name = "", provider
        return _AgentInfo(name=self.name or self.import_path or "oracle",
                          model_info=_ModelInfo(name=name, provider=provider or None)
                          if name else None)


class _TrialConfig(_Lenient):
    task: _TaskConfig
    trial_name: str
    agent: _AgentConfig = Field(default_factory=_AgentConfig)


class _Verifier(_Lenient):
    rewards: dict[str, Number] | None = None


class _Policy(_Lenient):
    has_valid_reward: bool


class _Exception(_Lenient):
    exception_type: str
    exception_message: str = ""
    policy: _Policy | None = None


class _AgentResult(_Lenient):
    n_input_tokens: Count | None = None
    n_output_tokens: Count | None = None
    cost_usd: Number | None = None


class _Timing(_Lenient):
    started_at: datetime | None = None
    finished_at: datetime | None = None

    def seconds(self) -> float | None:
        """The phase's duration; None unless both ends are recorded, comparable and in order."""
        start, end = self.started_at, self.finished_at
        if start is None or end is None or (start.tzinfo is None) != (end.tzinfo is None):
            return None
        seconds = (end - start).total_seconds()
        return seconds if seconds >= 0 else None


class _TrialResult(_Timing):
    task_name: Annotated[str, AfterValidator(safe_id)]  # our task id: one path-safe name
    trial_name: str
    task_checksum: str = ""
    source: str | None = None
    config: _TrialConfig | None = None
    agent_info: _AgentInfo
    agent_result: _AgentResult | None = None
    verifier_result: _Verifier | None = None
    exception_info: _Exception | None = None
    agent_execution: _Timing | None = None
    step_results: list[dict[str, Any]] | None = None


class _JobConfig(_Lenient):
    extra_instructions: list[str] = Field(default_factory=list)
    extra_instruction_paths: list[str] = Field(default_factory=list)


class _EvalStats(_Lenient):
    n_trials: Count = 0
    n_errors: Count = 0
    metrics: list[dict[str, Any]] = Field(default_factory=list)


class _JobStats(_Lenient):
    n_completed_trials: Count | None = None
    n_trials: Count | None = None  # older jobs' name for n_completed_trials
    evals: dict[str, _EvalStats] = Field(default_factory=dict)


class _JobResult(_Lenient):
    n_total_trials: Count | None = None
    stats: _JobStats = Field(default_factory=_JobStats)


@dataclass(frozen=True)
class _Trial:
    """A trial folder as the walk found it: the file that makes it one (result.json, or for an
    interrupted trial config.json) with its bytes (part of the attempt's fingerprint), and the
    TrialResult or TrialConfig they hold, or why the file is unusable (raised when it loads, so
    finding jobs never fails on a bad trial)."""

    folder: Path
    file: str
    data: bytes
    record: _TrialResult | _TrialConfig | InputError

    def read(self) -> _TrialResult | _TrialConfig:
        if isinstance(self.record, InputError):
            raise self.record
        return self.record


@dataclass
class _Job:
    """A job folder's trials, and its own config.json and result.json where the job was given
    (not for a trial given alone: the folder above it is not read)."""

    trials: list[_Trial] = field(default_factory=list)
    config: _JobConfig = field(default_factory=_JobConfig)
    result: _JobResult | None = None


Jobs = dict[Path, _Job]


def _marked(folder: Path, name: str, keys: tuple[str, ...]) -> tuple[bytes, Any] | None:
    """The bytes and parsed JSON of `folder/name` when it is an object holding every key in
    `keys`; None when the file is absent, a link, too large, malformed or another object."""
    path = folder / name
    if not path.is_file() or path.is_symlink():
        return None
    try:
        data = read_bytes(path, MAX_RESULT_BYTES)
        raw = parse_json(path, decode_text(path, data))
    except InputError:
        return None
    return (data, raw) if isinstance(raw, dict) and all(k in raw for k in keys) else None


def _trial(folder: Path, others: dict[Path, dict[str, Any]]) -> _Trial | None:
    """The trial in `folder`, its marker file read once (size-capped): a finished trial (its
    result.json is a TrialResult, or is unreadable: then loading says why), or an interrupted one
    (no result.json, and its config.json is a TrialConfig); None for any other folder (whose
    result.json, a job's JobResult perhaps, is kept in `others`)."""
    path = folder / RESULT
    if path.is_file() and not path.is_symlink():
        try:
            data = read_bytes(path, MAX_RESULT_BYTES)
            raw = parse_json(path, decode_text(path, data))
            if not isinstance(raw, dict) or "trial_name" not in raw:
                if isinstance(raw, dict):
                    others[folder] = raw
                return None
            return _Trial(folder, RESULT, data, validated(path, raw, _TrialResult))
        except InputError as exc:
            return _Trial(folder, RESULT, b"", exc)
    if (marked := _marked(folder, CONFIG, ("trial_name", "task"))) is None:
        return None
    data, raw = marked
    try:
        return _Trial(folder, CONFIG, data, validated(folder / CONFIG, raw, _TrialConfig))
    except InputError as exc:
        return _Trial(folder, CONFIG, data, exc)


def _job_files(folder: Path, job: _Job, result: dict[str, Any] | None) -> None:
    """The job's own config.json (its extra instructions) and result.json (its stats, as the
    walk read it)."""
    if (marked := _marked(folder, CONFIG, ("job_name",))) is not None:
        job.config = validated(folder / CONFIG, marked[1], _JobConfig)
    if result is not None and "stats" in result:
        job.result = validated(folder / RESULT, result, _JobResult)


def harbor_jobs(path: Path) -> Jobs:
    """The trials under `path` (a trial, a job, or a folder of jobs; links not followed, at most
    MAX_DEPTH deep), each read once, by job folder; empty when `path` holds no Harbor trial."""
    found: Jobs = defaultdict(_Job)
    others: dict[Path, dict[str, Any]] = {}
    if not path.is_dir():
        return found
    if (own := _trial(path, others)) is not None:
        found[path.parent].trials.append(own)
        return found
    stack = [(path, 0)]
    while stack:
        folder, depth = stack.pop()
        for child in sorted(folder.iterdir()):
            if not child.is_dir() or child.is_symlink():
                continue
            utf8_path(child)  # a trial's or a job's name is stored and printed
            if (trial := _trial(child, others)) is not None:
                found[folder].trials.append(trial)
            elif depth + 1 < MAX_DEPTH:
                stack.append((child, depth + 1))
    for folder, job in found.items():
        _job_files(folder, job, others.get(folder))
    return found


@dataclass(frozen=True)
class _Seen:
    """One trial as it is loaded: what Harbor names it by (task, agent, model, dataset), how its
    agent was set up, and its result (None for an interrupted trial)."""

    trial: _Trial
    job: Path
    task: str
    agent: _AgentInfo
    dataset: str
    setup: str
    result: _TrialResult | None

    @property
    def evals_key(self) -> str:
        """Harbor's key for the trial's agent, model and dataset in a job's stats."""
        model = self.agent.model_info.name if self.agent.model_info else None
        return "__".join(part for part in (self.agent.name, model, self.dataset) if part)

    @property
    def variant(self) -> str:
        return f"{self.evals_key} [{self.setup}]" if self.setup else self.evals_key

    @property
    def model(self) -> str:
        info = self.agent.model_info
        if info is None:
            return self.agent.name
        return f"{info.provider}/{info.name}" if info.provider else info.name


def _canonical(model: BaseModel) -> str:
    return json.dumps(model.model_dump(mode="json"), sort_keys=True)


def _setup(kwargs: dict[str, Any], job: _JobConfig, names: tuple[str, ...]) -> str:
    """The agent's kwargs and the job's extra instructions, as `key=value` pairs where that is
    short, printable and names no secret; else a digest of them ("" when there are none). A
    kwarg whose value names the trial's task, the trial or its job (a run's own id, such as
    `cell_id: fix-git--pi`) identifies the run, not how the agent was set up: it is left out."""
    settings = {key: value for key, value in kwargs.items()
                if not (isinstance(value, str) and any(name in value for name in names))}
    if job.extra_instructions or job.extra_instruction_paths:
        settings["extra_instructions"] = [*job.extra_instructions, *job.extra_instruction_paths]
    if not settings:
        return ""
    text = ",".join(f"{key}={value}" for key, value in sorted(settings.items()))
    readable = (len(text) <= MAX_SETUP_CHARS and text.isprintable()
                and not any(SENSITIVE_KEY.search(key) for key in settings)
                and all(isinstance(v, str | int | float | bool) for v in settings.values()))
    if readable:
        return text
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode())
    return f"config {digest.hexdigest()[:8]}"


def _run_names(task: str, trial: str, job: Path) -> tuple[str, ...]:
    """What names one run: its task (without the dataset's `org/`), its trial and its job."""
    return tuple(name for name in (task.rpartition("/")[2], trial, job.name) if len(name) > 2)


def _identify(jobs: Jobs) -> list[_Seen]:
    """Every trial named as Harbor names it. An interrupted trial is named by its config, as a
    finished trial with the same agent and task config was (Harbor records the agent's own name
    and the task's in result.json only when the trial ends), else as far as the config says."""
    read = [(folder, job, trial, trial.read()) for folder, job in sorted(jobs.items())
            for trial in job.trials]
    agents: dict[str, _AgentInfo] = {}
    tasks: dict[str, str] = {}
    for _, _, _, record in read:
        if isinstance(record, _TrialResult) and record.config is not None:
            agents.setdefault(_canonical(record.config.agent), record.agent_info)
            tasks.setdefault(_canonical(record.config.task), record.task_name)
    seen = []
    for folder, job, trial, record in read:
        config = record.config if isinstance(record, _TrialResult) else record
        kwargs = config.agent.kwargs if config else {}
        if isinstance(record, _TrialResult):
            names = _run_names(config.task.task_name() if config else record.task_name,
                               record.trial_name, folder)
            seen.append(_Seen(trial, folder, record.task_name, record.agent_info,
                              record.source or "adhoc", _setup(kwargs, job.config, names),
                              record))
            continue
        agent = agents.get(_canonical(record.agent)) or record.agent.agent_info()
        task = tasks.get(_canonical(record.task)) or safe_id(record.task.task_name())
        names = _run_names(record.task.task_name(), record.trial_name, folder)
        seen.append(_Seen(trial, folder, task, agent, record.task.source or "adhoc",
                          _setup(kwargs, job.config, names), None))
    return seen


def _trajectory(folder: Path, unmapped: list[str]) -> Trajectory:
    """The agent's ATIF trajectory, normalised (empty if the agent wrote none)."""
    path = folder / TRAJECTORY
    if not path.is_file() or path.is_symlink():
        return Trajectory(format="atif")
    if path.stat().st_size > MAX_TRAJECTORY_BYTES:
        unmapped.append(f"{folder.name}/{TRAJECTORY.as_posix()}: larger than "
                        f"{MAX_TRAJECTORY_BYTES:,} bytes, not read")
        return Trajectory(format="atif")
    raw = read_json(path)
    steps = raw.get("steps") if isinstance(raw, dict) else None
    if not isinstance(steps, list):
        raise InputError(path, "steps", "expected a list of ATIF steps")
    skipped = [i for i, step in enumerate(steps)
               if not isinstance(step, dict) or step.get("source") not in ATIF_SOURCES]
    if skipped:
        unmapped.append(f"{folder.name}/{TRAJECTORY.as_posix()}: {plural(len(skipped), 'step')} not "
                        f"from system, user or agent (first: steps[{skipped[0]}]), left out")
    return normalise_trajectory(raw, "atif")


def _reason(trial: _TrialResult) -> str | None:
    """Why the trial has no valid reward, or None when it has one (Harbor's reward_valid)."""
    exc = trial.exception_info
    rewards = trial.verifier_result.rewards if trial.verifier_result else None
    if exc is not None:
        valid = exc.policy.has_valid_reward if exc.policy else (
            exc.exception_type not in INVALID_REWARD_EXCEPTIONS)
        if not rewards or not valid:
            message = first_line(exc.exception_message)
            return f"{exc.exception_type}: {message}" if message else exc.exception_type
    if not rewards:
        return "no reward: the verifier did not run or wrote none"
    return None


def raised(traceback: str) -> str:
    """The exception a traceback (an exception.txt) ends with, on one line: the first line after
    the frames of its last `Traceback` block (the exception's message may run on over further
    lines, even hold a traceback of its own); the first line of a text that is no traceback.
    Linear in the text."""
    lines = traceback.splitlines()
    blocks = [i for i, line in enumerate(lines) if line.startswith(TRACEBACK_START)]
    if not blocks:
        return first_line(traceback)
    after = next((line for line in lines[blocks[-1] + 1:] if line.strip()
                  and not line[0].isspace()), "")
    return first_line(after or lines[blocks[-1]])


def _interrupted_reason(data: bytes | None) -> str:
    """Why a trial without result.json is unavailable: the exception it raised, if recorded."""
    line = raised(data.decode("utf-8", "replace")) if data else ""
    return f"interrupted: {line}" if line else "interrupted: no result.json"


def _criterion_id(task_name: str, key: str) -> str:
    return f"{task_name}:{key}"


def _rationale(folder: Path) -> str:
    path = folder / TEST_STDOUT
    if not path.is_file() or path.is_symlink():
        return ""
    with open_regular(path) as fh:
        return fh.read(MAX_RATIONALE_CHARS).decode("utf-8", "replace")


def _rewards(result: _TrialResult | None) -> dict[str, float]:
    rewards = result.verifier_result.rewards if result and result.verifier_result else None
    return dict(sorted((rewards or {}).items()))


Verdicts = set[tuple[str, str]]


def verdict_keys(seen: list[_Seen]) -> Verdicts:
    """The (dataset, reward key) pairs whose every value, over all trials read, is 0 or 1: those
    are verdicts (a test suite passed or not). A key with any other value in its dataset (0.84
    of a weighted checklist, a partial score) is a measurement there, never a pass/fail
    criterion: a 1.0 of a partial score is no pass."""
    values: dict[tuple[str, str], set[float]] = defaultdict(set)
    for s in seen:
        for key, value in _rewards(s.result).items():
            values[(s.dataset, key)].add(value)
    return {pair for pair, seen_values in values.items() if seen_values <= {0.0, 1.0}}


def _verdict_rewards(trial: _Seen, verdicts: Verdicts) -> set[str]:
    return {key for key in _rewards(trial.result) if (trial.dataset, key) in verdicts}


def _grades(item_id: str, trial: _Seen, verdicts: Verdicts
            ) -> tuple[list[CriterionGrade], list[Measurement]]:
    """The verifier's rewards: a verdict key as a grade (1 passes), with the test output as its
    rationale; any other key as a measurement of the verifier."""
    rewards, graded = _rewards(trial.result), _verdict_rewards(trial, verdicts)
    rationale = _rationale(trial.trial.folder) if graded else ""
    grades = [CriterionGrade(attempt_id=item_id, criterion_id=_criterion_id(trial.task, key),
                             grader="recorded", verdict="pass" if value >= 1.0 else "fail",
                             score=value, rationale=rationale)
              for key, value in rewards.items() if key in graded]
    measured = [Measurement(attempt_id=item_id, scorer="verifier", key=key, value=value,
                            recorded=json.dumps(value))
                for key, value in rewards.items() if key not in graded]
    return grades, measured


def _wall_time(result: _TrialResult | None) -> float | None:
    """The agent's execution time where recorded, else the whole trial's."""
    if result is None:
        return None
    agent = result.agent_execution.seconds() if result.agent_execution else None
    return agent if agent is not None else result.seconds()


def _usage(result: _TrialResult | None) -> Usage:
    usage = (result.agent_result if result else None) or _AgentResult()
    total = None if usage.n_input_tokens is None or usage.n_output_tokens is None \
        else usage.n_input_tokens + usage.n_output_tokens
    return Usage(prompt_tokens=usage.n_input_tokens, completion_tokens=usage.n_output_tokens,
                 total_tokens=total, cost=usage.cost_usd)


def _tasks(group: list[_Seen], variant: str, messages: dict[Path, Trajectory],
           unmapped: list[str], verdicts: Verdicts) -> dict[str, dict[str, Task]]:
    """Each task as this variant recorded it: its prompt (the first user step of a trial that
    has one) and one criterion per verdict reward key its trials were given."""
    checksums: dict[str, set[str]] = defaultdict(set)
    keys: dict[str, set[str]] = defaultdict(set)
    prompts: dict[str, str] = {}
    domains: dict[str, str] = {}
    for s in group:
        folder = s.trial.folder
        domains.setdefault(s.task, s.dataset if s.dataset != "adhoc" else "")
        keys[s.task].update(_verdict_rewards(s, verdicts))
        if s.result is not None:
            checksums[s.task].add(s.result.task_checksum)
            if s.result.step_results:
                unmapped.append(f"{folder.name}: multi-step trial, per-step results not mapped")
        prompt = next((st.text for st in messages[folder].steps if st.role == "user"), "")
        if prompt:
            prompts.setdefault(s.task, prompt)
    unmapped += [f"task {name}: trials ran {len(sums)} versions of it (task_checksum "
                 f"{', '.join(sorted(x[:12] for x in sums))})"
                 for name, sums in sorted(checksums.items()) if len(sums) > 1]
    return {name: {variant: Task(
        id=name, name=name, domain=domain, world_id="", prompt=prompts.get(name, ""),
        source="runs", criteria=[
            Criterion(id=_criterion_id(name, key),
                      text=f"Passes the task's tests (verifier reward {key!r} at its maximum)")
            for key in sorted(keys[name])])} for name, domain in domains.items()}


def _load_variant(path: Path, variant: str, group: list[_Seen], notes: list[str],
                  verdicts: Verdicts) -> RecordedRuns:
    """One variant's trials, over every job they sit in: attempts with their reward grades (and
    measurements), and oracle and nop controls. A trial whose rewards are all measurements is
    ungraded: nothing says whether it passed."""
    runs = RecordedRuns()
    unmapped: list[str] = []
    group = sorted(group, key=lambda s: (s.task, s.trial.folder.name))
    messages = {s.trial.folder: _trajectory(s.trial.folder, unmapped) for s in group}
    runs.recorded = _tasks(group, variant, messages, unmapped, verdicts)
    index: dict[str, int] = defaultdict(int)
    for s in group:
        folder, result = s.trial.folder, s.result
        index[s.task] += 1
        k = index[s.task]
        kind = CONTROL_AGENTS.get(s.agent.name)
        if kind:
            item_id = f"{variant}/{s.task}/{s.agent.name}/{k}"
            reason = _reason(result) if result else _interrupted_reason(None)
            if reason:
                unmapped.append(f"{folder.name}: {s.agent.name} trial without a valid reward "
                                f"({reason}), no {kind[0]} control")
                continue
            runs.controls.append(Control(id=item_id, task_id=s.task, task_version="",
                                         kind=kind[0], answer="", expect=kind[1]))
            runs.control_grades += _grades(item_id, s, verdicts)[0]
            continue
        item_id = Attempt.make_id(variant, s.task, k)
        files = AttemptFiles(folder, {s.trial.file: s.trial.data})
        reason = _reason(result) if result else _interrupted_reason(files.files.get(EXCEPTION))
        exception = result.exception_info if result else None
        grades, measured = ([], []) if reason else _grades(item_id, s, verdicts)
        runs.attempts.append(Attempt(
            id=item_id, task_id=s.task, model=s.model, variant=variant, index=k,
            state="unavailable" if reason else "graded" if grades else "ungraded",
            unavailable_reason=reason,
            answer=next((st.text for st in reversed(messages[folder].steps)
                         if st.role == "assistant" and st.text), None),
            trajectory=messages[folder], usage=_usage(result), wall_time=_wall_time(result),
            agent_status=exception.exception_type if exception else (
                "interrupted" if result is None else None),
            source=str(folder), fingerprint=fingerprint(folder, files.files)))
        runs.grades += grades
        runs.measurements += measured
    anchors = {s.job if s.job.is_relative_to(path) else path for s in group}
    summary = summarize(Path(os.path.commonpath(sorted(anchors))), "harbor", runs,
                        unmapped + notes)
    runs.sources.append(summary.model_copy(update={"variant": variant,
                                                   "controls": len(runs.controls)}))
    return runs


def _shown(job: Path, path: Path) -> str:
    return job.relative_to(path).as_posix() or "." if job.is_relative_to(path) else job.name


def _stats_differences(job: _Job, seen: list[_Seen], shown: str) -> dict[str, list[str]]:
    """Where the job's own result.json stats differ from the trials read, by Harbor's evals key
    ("" for the job as a whole): trials planned and completed, and per agent and model the trials
    given a reward, those that raised, and the mean reward (a missing reward counts 0, as in
    Harbor's Mean metric), each against what its trial folders hold."""
    if job.result is None:
        return {}
    stats, planned = job.result.stats, job.result.n_total_trials
    notes: dict[str, list[str]] = defaultdict(list)
    by_key: dict[str, list[_TrialResult]] = defaultdict(list)
    for s in seen:
        if s.result is not None:
            by_key[s.evals_key].append(s.result)
    finished = sum(len(results) for results in by_key.values())
    if planned is not None and planned != len(seen):
        notes[""].append(f"job {shown}: its result.json plans {planned} trials; {len(seen)} "
                         f"trial folders found ({len(seen) - finished} without result.json)")
    completed = stats.n_completed_trials if stats.n_completed_trials is not None \
        else stats.n_trials
    if completed is not None and completed != finished:
        notes[""].append(f"job {shown}: its result.json counts {completed} completed trials; "
                         f"{finished} trial folders hold a result.json")
    # Newer Harbor writes each part of the key with `/` as `-` (EvalDimensions.to_legacy_key).
    listed = {key.replace("/", "-"): (key, entry) for key, entry in stats.evals.items()}
    ours = {key.replace("/", "-"): key for key in by_key}
    for same in sorted(set(listed) | set(ours)):
        key = ours.get(same) or listed[same][0]
        results, recorded = by_key.get(key, []), listed.get(same, (key, None))[1]
        rewarded = sum(bool(r.verifier_result and r.verifier_result.rewards is not None)
                       for r in results)
        errored = sum(r.exception_info is not None for r in results)
        if recorded is None:
            notes[key].append(f"job {shown}: {len(results)} trials of {key}, which its "
                              f"result.json stats do not list")
            continue
        if (recorded.n_trials, recorded.n_errors) != (rewarded, errored):
            notes[key].append(f"job {shown}: its result.json counts {recorded.n_trials} "
                              f"rewarded and {recorded.n_errors} errored trials of {key}; "
                              f"{rewarded} and {errored} read")
        means = [m["mean"] for m in recorded.metrics
                 if isinstance(m.get("mean"), int | float) and len(m) == 1]
        rewards = [_rewards(r) for r in results]
        if means and results and all(len(r) <= 1 for r in rewards):
            read = mean(next(iter(r.values()), 0.0) for r in rewards)
            if abs(read - means[0]) > 1e-6:
                notes[key].append(f"job {shown}: its result.json gives {key} a mean reward of "
                                  f"{means[0]:.4g}; {read:.4g} read")
    return notes


def load_harbor(path: Path, jobs: Jobs) -> RecordedRuns:
    """Every trial under `path` (a trial, a job, or a folder of jobs), as `harbor_jobs` found
    them, one variant per agent setup however many jobs it spans; what differs from a job's own
    stats is said in the summary of the variant it concerns (for the job as a whole, the job's
    first variant, an agent's before a control's)."""
    seen = _identify(jobs)
    groups: dict[str, list[_Seen]] = defaultdict(list)
    by_job: dict[Path, list[_Seen]] = defaultdict(list)
    for s in seen:
        groups[s.variant].append(s)
        by_job[s.job].append(s)
    notes: dict[str, list[str]] = defaultdict(list)
    for folder, own in sorted(by_job.items()):
        differences = _stats_differences(jobs[folder], own, _shown(folder, path))
        variants = sorted({(s.agent.name in CONTROL_AGENTS, s.variant, s.evals_key)
                           for s in own})
        for key, lines in differences.items():
            notes[next((v for _, v, k in variants if not key or k == key), variants[0][1])] += lines
    runs = RecordedRuns()
    verdicts = verdict_keys(seen)
    for variant, group in sorted(groups.items()):
        runs.extend(_load_variant(path, variant, group, notes[variant], verdicts))
    return runs
