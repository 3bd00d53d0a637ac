"""Load Harbor job folders (the Terminal-Bench harness), as `harbor run` writes them.

The schemas are Harbor's own (`harbor.models`): a job folder holds `config.json` (JobConfig),
`result.json` (JobResult) and one folder per trial; a trial folder holds `result.json`
(TrialResult: task_name, trial_name, task_checksum, agent_info, verifier_result.rewards,
exception_info), `agent/trajectory.json` (ATIF: steps with source, message, tool_calls) and
`verifier/` (reward.json or reward.txt, test-stdout.txt).

Each trial becomes an attempt whose criteria are the verifier's reward keys (full reward passes).
A trial without a valid reward is unavailable: Harbor's own rule (`TrialResult.reward_valid`) is
that the verifier gave rewards and no recorded exception invalidates them. Trials of the `oracle`
agent (the reference solution) and the `nop` agent (does nothing) are the gold and null controls.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict

from rubric_audit.checks.controls import Control
from rubric_audit.errors import InputError, decode_text, parse_json, read_bytes, read_json, validated
from rubric_audit.load.runs import AttemptFiles, RecordedRuns, fingerprint, summarize
from rubric_audit.load.trajectory import normalise_trajectory
from rubric_audit.model import (
    Attempt,
    Criterion,
    CriterionGrade,
    Task,
    Trajectory,
    Usage,
    safe_id,
)

RESULT = "result.json"
TRAJECTORY = Path("agent") / "trajectory.json"
TEST_STDOUT = Path("verifier") / "test-stdout.txt"
MAX_RESULT_BYTES = 5_000_000
MAX_TRAJECTORY_BYTES = 50_000_000
MAX_RATIONALE_CHARS = 4_000
MAX_DEPTH = 6
ATIF_SOURCES = ("system", "user", "agent")
CONTROL_AGENTS = {"oracle": ("gold", "pass"), "nop": ("null", "fail")}
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


class _Verifier(_Lenient):
    rewards: dict[str, float] | None = None


class _Policy(_Lenient):
    has_valid_reward: bool


class _Exception(_Lenient):
    exception_type: str
    exception_message: str = ""
    policy: _Policy | None = None


class _AgentResult(_Lenient):
    n_input_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None


class _TrialResult(_Lenient):
    task_name: Annotated[str, AfterValidator(safe_id)]  # our task id: one path-safe name
    trial_name: str
    task_checksum: str = ""
    source: str | None = None
    agent_info: _AgentInfo
    agent_result: _AgentResult | None = None
    verifier_result: _Verifier | None = None
    exception_info: _Exception | None = None
    step_results: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class _Trial:
    """A trial folder as the walk found it: its result.json's bytes (part of the attempt's
    fingerprint) and the TrialResult they hold, or why the file is unusable (raised when its job
    loads, so finding jobs never fails on a bad trial)."""

    folder: Path
    data: bytes
    result: _TrialResult | InputError

    def read(self) -> _TrialResult:
        if isinstance(self.result, InputError):
            raise self.result
        return self.result


def _trial(folder: Path) -> _Trial | None:
    """The trial in `folder`, read once (size-capped): a folder whose result.json is a
    TrialResult, or is unreadable (then loading says why); None for any other folder."""
    path = folder / RESULT
    if not path.is_file() or path.is_symlink():
        return None
    try:
        data = read_bytes(path, MAX_RESULT_BYTES)
        raw = parse_json(path, decode_text(path, data))
        if not isinstance(raw, dict) or "trial_name" not in raw:
            return None
        return _Trial(folder, data, validated(path, raw, _TrialResult))
    except InputError as exc:
        return _Trial(folder, b"", exc)


Jobs = dict[Path, list[_Trial]]


def harbor_jobs(path: Path) -> Jobs:
    """The trials under `path` (a trial, a job, or a folder of jobs; links not followed, at most
    MAX_DEPTH deep), each read once, by job folder; empty when `path` holds no Harbor trial."""
    found: Jobs = defaultdict(list)
    if not path.is_dir():
        return found
    if (own := _trial(path)) is not None:
        found[path.parent].append(own)
        return found
    stack = [(path, 0)]
    while stack:
        folder, depth = stack.pop()
        for child in sorted(folder.iterdir()):
            if not child.is_dir() or child.is_symlink():
                continue
            if (trial := _trial(child)) is not None:
                found[folder].append(trial)
            elif depth + 1 < MAX_DEPTH:
                stack.append((child, depth + 1))
    return found


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
        unmapped.append(f"{folder.name}/{TRAJECTORY.as_posix()}: {len(skipped)} step(s) not "
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
            first_line = exc.exception_message.strip().splitlines()[:1]
            return f"{exc.exception_type}: {first_line[0]}" if first_line else exc.exception_type
    if not rewards:
        return "no reward: the verifier did not run or wrote none"
    return None


def _criterion_id(task_name: str, key: str) -> str:
    return f"{task_name}:{key}"


def _rationale(folder: Path) -> str:
    path = folder / TEST_STDOUT
    if not path.is_file() or path.is_symlink():
        return ""
    with path.open("rb") as fh:
        return fh.read(MAX_RATIONALE_CHARS).decode("utf-8", "replace")


def load_job(job: Path, trials: list[_Trial], variant: str) -> RecordedRuns:
    """One job's trials: attempts with their reward grades, and oracle and nop controls."""
    runs = RecordedRuns()
    unmapped: list[str] = []
    read = sorted(((t, t.read()) for t in trials), key=lambda r: (r[1].task_name,
                                                                  r[1].trial_name))
    messages = {t.folder: _trajectory(t.folder, unmapped) for t, _ in read}
    checksums: dict[str, set[str]] = defaultdict(set)
    keys: dict[str, set[str]] = defaultdict(set)
    prompts: dict[str, str] = {}
    for found, trial in read:
        folder = found.folder
        checksums[trial.task_name].add(trial.task_checksum)
        keys[trial.task_name].update((trial.verifier_result.rewards or {})
                                     if trial.verifier_result else {})
        prompt = next((s.text for s in messages[folder].steps if s.role == "user"), "")
        if prompt and trial.task_name not in prompts:
            prompts[trial.task_name] = prompt
        if trial.step_results:
            unmapped.append(f"{folder.name}: multi-step trial, per-step results not mapped")
    domains = {trial.task_name: trial.source or "" for _, trial in read}
    for name in checksums:
        runs.recorded[name] = {variant: Task(
            id=name, name=name, domain=domains[name], world_id="", prompt=prompts.get(name, ""),
            source="runs", criteria=[
                Criterion(id=_criterion_id(name, key),
                          text=f"Passes the task's tests (verifier reward {key!r} at its "
                               f"maximum)") for key in sorted(keys[name])])}
    index: dict[tuple[str, str], int] = defaultdict(int)
    for found, trial in read:
        folder = found.folder
        rewards = dict(sorted((trial.verifier_result.rewards or {}).items())) \
            if trial.verifier_result else {}
        agent = trial.agent_info
        model = agent.model_info.name if agent.model_info else agent.name
        if agent.model_info and agent.model_info.provider:
            model = f"{agent.model_info.provider}/{model}"
        kind = CONTROL_AGENTS.get(agent.name)
        index[(agent.name if kind else "", trial.task_name)] += 1
        k = index[(agent.name if kind else "", trial.task_name)]
        reason = _reason(trial)
        item_id = (f"{variant}/{trial.task_name}/{agent.name}/{k}" if kind
                   else Attempt.make_id(variant, trial.task_name, k))
        rationale = None if reason else _rationale(folder)
        grades = [] if reason else [
            CriterionGrade(attempt_id=item_id, criterion_id=_criterion_id(trial.task_name, key),
                           grader="recorded", verdict="pass" if value >= 1.0 else "fail",
                           score=value, rationale=rationale)
            for key, value in rewards.items()]
        if kind:
            if reason:
                unmapped.append(f"{folder.name}: {agent.name} trial without a valid reward "
                                f"({reason}), no {kind[0]} control")
                continue
            runs.controls.append(Control(id=item_id, task_id=trial.task_name,
                                         task_version="", kind=kind[0], answer="",
                                         expect=kind[1]))
            runs.control_grades += grades
            continue
        usage = trial.agent_result or _AgentResult()
        runs.attempts.append(Attempt(
            id=item_id, task_id=trial.task_name, model=model, variant=variant, index=k,
            state="unavailable" if reason else "graded", unavailable_reason=reason,
            answer=next((s.text for s in reversed(messages[folder].steps)
                         if s.role == "assistant" and s.text), None),
            trajectory=messages[folder],
            usage=Usage(prompt_tokens=usage.n_input_tokens,
                        completion_tokens=usage.n_output_tokens,
                        total_tokens=None if usage.n_input_tokens is None
                        or usage.n_output_tokens is None
                        else usage.n_input_tokens + usage.n_output_tokens,
                        cost=usage.cost_usd),
            agent_status=trial.exception_info.exception_type if trial.exception_info else None,
            source=str(folder), fingerprint=fingerprint(
                folder, AttemptFiles(folder, {RESULT: found.data}).files)))
        runs.grades += grades
    unmapped += [f"task {name}: trials ran {len(sums)} versions of it (task_checksum "
                 f"{', '.join(sorted(s[:12] for s in sums))})"
                 for name, sums in sorted(checksums.items()) if len(sums) > 1]
    runs.sources.append(summarize(job, "harbor", runs, unmapped))
    return runs


def _variant_names(path: Path, jobs: list[Path]) -> dict[Path, str]:
    """Each job's variant name: its folder and the one above it (`baseline/2026-03-03__14-01-58`),
    or its whole path under `path` where two jobs would share that."""
    def parts(job: Path) -> tuple[str, ...]:
        return job.relative_to(path).parts if job.is_relative_to(path) and job != path \
            else (job.name,)

    short = {job: "/".join(parts(job)[-2:]) for job in jobs}
    return {job: name if list(short.values()).count(name) == 1 else "/".join(parts(job))
            for job, name in short.items()}


def load_harbor(path: Path, jobs: Jobs) -> RecordedRuns:
    """Every job under `path` (a trial, a job, or a folder of jobs), as `harbor_jobs` found
    them; each job is a variant."""
    runs = RecordedRuns()
    names = _variant_names(path, list(jobs))
    for job, trials in sorted(jobs.items()):
        runs.extend(load_job(job, trials, names[job]))
    return runs
