"""Load Terminal-Bench 1 run folders, as `tb run` (terminal-bench's harness) writes them.

The schemas are terminal-bench's own (`terminal_bench/harness/models.py`: RunMetadata,
TrialResults, BenchmarkResults; `terminal_bench/agents/failure_mode.py`: FailureMode). A run
folder `<run_id>/` holds `run_metadata.json` (RunMetadata: run_id, uuid, agent_name, model_name,
dataset, n_attempts, dataset_size; accuracy once the run ended), `tb.lock` (the run's config,
agent name and model again), `results.json` (BenchmarkResults: every trial's TrialResults with
n_resolved and accuracy, rewritten after each trial) and one folder per task holding one folder
per trial, `<task>.<k>-of-<n>.<run_id>/`, with `results.json` (TrialResults: trial_name, task_id,
instruction, is_resolved, failure_mode, parser_results {test: passed|failed}, token counts, phase
times), `commands.txt`, `sessions/`, `panes/` and `agent-logs/`. A trial the harness failed around
is only in the run's results.json; a summary file alone (`<name>results.json`, as leaderboard
submissions publish them) is a run without trial folders.

Mapping. Runs of one agent and model are one variant (several runs are more attempts: index k
counts a task's trials in run and attempt order). A run that records no model (run_metadata.json
and tb.lock say null, as custom agents' runs do) is a variant of its own, `agent/<folder>/<run>`,
its model shown as the agent ("not recorded" without run_metadata.json or tb.lock): two such runs
cannot be told to be of one model. A run copied into another folder (the same uuid, or summary
id) is read once. Each trial is an attempt with one criterion, the task's tests passing (tb's
is_resolved: every test its test run reported passed), with the per-test results as the rationale
and the share of them passed as the score. Per-test criteria are not made: the test names a
trial reports differ from trial to trial (tests an agent wrote into a repository's suite,
pytest's collection-error lines), so a task would have a rubric no two agents share. The prompt
is the instruction; there is no answer text (tb records none; `commands.txt` mixes the harness's
keystrokes with the agent's) and no trajectory. Usage is the token counts (0 and 0, which tb's
installed agents always report, is unknown); wall time is agent_ended_at - agent_started_at.
`oracle` and `nop` trials are the gold and null controls.

failure_mode, value by value (tb runs the tests after every agent failure, so a graded trial is
the container as the agent left it):
- unset, none: nothing failed; graded.
- agent_timeout, context_length_exceeded, output_length_exceeded, fatal_llm_parse_error: the
  agent ran out of time or the model out of context or output, or kept writing unparseable
  actions: the model's own failure; graded.
- agent_installation_failed: the harness could not install the agent, which never ran:
  unavailable.
- unknown_agent_error: the agent raised an unclassified error (its code, the provider) or the
  harness failed around the trial (then there are no phase times and no trial file); tb does not
  say which: unavailable.
- test_timeout, parse_error: the tests timed out or printed nothing the parser read, so there is
  no verdict; the agent may have caused either (a container it broke) or not (a slow machine, a
  task whose tests need the network), and tb does not say which: unavailable.
- unknown (declared, never set by tb) and any value tb 1 does not define: unavailable.
A trial with neither parser_results nor is_resolved is unavailable (no verdict), and so is a
trial folder with no results.json that the run's results.json does not list either (the run
stopped during it). Each run's own n_resolved and accuracy (resolved over every trial, the
unavailable counted) are checked against the trials read; a difference goes to the unmapped list
with its reason.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict

from rubric_audit.core.errors import (
    InputError,
    decode_text,
    parse_json,
    read_bytes,
    utf8_path,
    validated,
)
from rubric_audit.core.model import (
    Attempt,
    Control,
    Count,
    Criterion,
    CriterionGrade,
    Number,
    Task,
    Usage,
    safe_id,
)
from rubric_audit.core.words import plural
from rubric_audit.load.harbor import CONTROL_AGENTS
from rubric_audit.load.runs import RecordedRuns, fingerprint, summarize

RESULTS = "results.json"
METADATA = "run_metadata.json"
LOCK = "tb.lock"
MAX_SUMMARY_BYTES = 50_000_000
MAX_TRIAL_BYTES = 5_000_000
MAX_CONFIG_BYTES = 5_000_000
MAX_DEPTH = 6
MAX_RATIONALE_TESTS = 20
ATTEMPT_NUMBER = re.compile(r"\.(\d+)-of-\d+(?:\.|$)")
GRADED_MODES = frozenset({"unset", "none", "agent_timeout", "context_length_exceeded",
                          "output_length_exceeded", "fatal_llm_parse_error"})
UNAVAILABLE_MODES = {
    "agent_installation_failed": "the harness could not install the agent",
    "unknown_agent_error": "the agent or the harness failed with an unclassified error",
    "test_timeout": "the tests timed out: no verdict",
    "parse_error": "the test output could not be parsed: no verdict",
    "unknown": "an unknown failure",
}
NO_VERDICT = "no verdict: the trial recorded neither parser_results nor is_resolved"
NOT_RECORDED = "not recorded"
UNFINISHED = "the trial did not finish: its folder has no results.json"


class _Tb(BaseModel):
    """terminal-bench's models gain fields between versions (and forks add their own): unknown
    ones are ignored, the fields read are typed so a wrong value is an InputError naming it."""

    model_config = ConfigDict(extra="ignore")


class _TrialResults(_Tb):
    trial_name: str
    task_id: Annotated[str, AfterValidator(safe_id)]  # our task id: one path-safe name
    instruction: str = ""
    is_resolved: bool | None = None
    failure_mode: str = "unset"
    parser_results: dict[str, Literal["passed", "failed"]] | None = None
    total_input_tokens: Count | None = None
    total_output_tokens: Count | None = None
    agent_started_at: datetime | None = None
    agent_ended_at: datetime | None = None


class _BenchmarkResults(_Tb):
    id: str | None = None
    results: list[dict[str, Any]]  # each validated as a _TrialResults, naming its index
    n_resolved: Count | None = None
    accuracy: Number | None = None


class _RunMetadata(_Tb):
    run_id: str = ""
    uuid: str | None = None
    agent_name: str | None = None
    model_name: str | None = None
    dataset_name: str | None = None
    dataset_size: Count = 0
    n_attempts: Count = 1
    accuracy: Number | None = None


class _LockAgent(_Tb):
    name: str | None = None
    model_name: str | None = None


class _Lock(_Tb):
    agent: _LockAgent | None = None


@dataclass(frozen=True)
class _Run:
    """A run the walk found: its folder, and its summary (results.json, or a summary file given
    or found alone) read once, or why that file is unusable (raised when the run loads, so
    finding runs never fails on a bad file). `alone`: a summary file without its run folder."""

    folder: Path
    summary: Path | None
    parsed: _BenchmarkResults | InputError | None
    alone: bool = False


def _summary(path: Path, in_run: bool) -> _BenchmarkResults | InputError | None:
    """A BenchmarkResults file, read (size-capped) and validated. In a run folder any results.json
    is the run's (unusable: the error, raised on loading); elsewhere a file is a summary only if
    it holds a `results` list, and None otherwise."""
    try:
        raw = parse_json(path, decode_text(path, read_bytes(path, MAX_SUMMARY_BYTES)))
    except InputError as exc:
        return exc if in_run else None
    if not in_run and not (isinstance(raw, dict) and isinstance(raw.get("results"), list)):
        return None
    try:
        return validated(path, raw, _BenchmarkResults)
    except InputError as exc:
        return exc


def _is_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def _run_at(folder: Path) -> _Run | None:
    """The run whose folder this is (it holds run_metadata.json, or a results.json that is a
    BenchmarkResults), or None."""
    has_metadata = _is_file(folder / METADATA)
    summary = _summary(folder / RESULTS, has_metadata) if _is_file(folder / RESULTS) else None
    if not has_metadata and summary is None:
        return None
    return _Run(folder, folder / RESULTS if summary else None, summary)


def _summaries_alone(folder: Path) -> list[_Run]:
    """Summary files (`<name>results.json` holding a BenchmarkResults) in a folder that is no
    run folder: each a run without trial folders."""
    found = []
    for path in _entries(folder, folders=False):
        if path.name.endswith(RESULTS) and (summary := _summary(path, in_run=False)) is not None:
            found.append(_Run(folder, path, summary, alone=True))
    return found


def _entries(folder: Path, folders: bool) -> list[Path]:
    """The folder's subfolders (or its files), sorted; links are neither."""
    try:
        with os.scandir(folder) as entries:
            return sorted(utf8_path(Path(e.path)) for e in entries
                          if (e.is_dir if folders else e.is_file)(follow_symlinks=False))
    except OSError as exc:
        raise InputError(folder, None, f"cannot read: {exc.strerror or exc}") from None


def tb_runs(path: Path) -> list[_Run]:
    """The tb runs under `path` (a run folder, its results.json, a summary file, or a folder of
    them; links not followed, at most MAX_DEPTH deep), each summary read once; empty when `path`
    holds none. Inside a run folder only its children are looked at, for runs copied into it."""
    if path.is_file():
        if not path.name.endswith(RESULTS):
            return []
        if path.name == RESULTS and (run := _run_at(path.parent)) is not None:
            return [run]
        summary = _summary(path, in_run=False)
        return [_Run(path.parent, path, summary, alone=True)] if summary else []
    if not path.is_dir():
        return []
    found: list[_Run] = []
    stack = [(path, 0, False)]
    while stack:
        folder, depth, in_run = stack.pop()
        run = _run_at(folder)
        if run is None and in_run:
            continue  # a task folder of the run around it
        try:
            found += [run] if run is not None else _summaries_alone(folder)
            if depth + 1 < MAX_DEPTH:
                stack += [(child, depth + 1, run is not None)
                          for child in reversed(_entries(folder, folders=True))]
        except InputError:
            continue  # an unreadable folder holds no run that can be read
    return found


@dataclass
class _Trial:
    """One trial as read: its TrialResults (None for a folder the run stopped during), where it
    was read from, and the bytes its fingerprint hashes."""

    result: _TrialResults | None
    task_id: str
    name: str
    source: Path
    files: dict[str, bytes]


@dataclass
class _ReadRun:
    run: _Run
    metadata: _RunMetadata | None
    lock: _Lock | None
    trials: list[_Trial]
    notes: list[str] = field(default_factory=list)

    @property
    def where(self) -> Path:
        """The run's folder, or its summary file where that is all there is."""
        return self.run.summary if self.run.alone and self.run.summary else self.run.folder

    @property
    def name(self) -> str:
        return self.where.stem if self.run.alone else self.where.name

    @property
    def agent(self) -> str | None:
        lock_agent = self.lock.agent if self.lock else None
        return ((self.metadata.agent_name if self.metadata else None)
                or (lock_agent.name if lock_agent else None))

    @property
    def model(self) -> str | None:
        lock_agent = self.lock.agent if self.lock else None
        return ((self.metadata.model_name if self.metadata else None)
                or (lock_agent.model_name if lock_agent else None))

    @property
    def identity(self) -> str | None:
        """The run's own id (RunMetadata.uuid, else BenchmarkResults.id): a run copied into
        another folder has the same."""
        if self.metadata and self.metadata.uuid:
            return self.metadata.uuid
        parsed = self.run.parsed
        return parsed.id if isinstance(parsed, _BenchmarkResults) else None


def _config(path: Path, model: type[_RunMetadata] | type[_Lock]) -> Any:
    if not _is_file(path):
        return None
    data = read_bytes(path, MAX_CONFIG_BYTES)
    return validated(path, parse_json(path, decode_text(path, data)), model)


def _trial_file(path: Path) -> tuple[bytes, _TrialResults] | None:
    """A trial folder's results.json as a TrialResults; None where it holds no trial_name (not a
    trial's file)."""
    data = read_bytes(path, MAX_TRIAL_BYTES)
    raw = parse_json(path, decode_text(path, data))
    if not isinstance(raw, dict) or "trial_name" not in raw:
        return None
    return data, validated(path, raw, _TrialResults)


def _outcome(trial: _TrialResults) -> tuple[object, ...]:
    """What a trial's verdict is read from: two records of one trial that differ here disagree."""
    return trial.is_resolved, trial.failure_mode, trial.parser_results


def _read_run(run: _Run, run_folders: set[Path]) -> _ReadRun:
    """A run's files, read (size-capped) and validated: its trials are the run's results.json,
    each replaced by the trial folder's own results.json where there is one, and the trial folders
    it does not list."""
    if isinstance(run.parsed, InputError):
        raise run.parsed
    metadata = None if run.alone else _config(run.folder / METADATA, _RunMetadata)
    lock = None if run.alone else _config(run.folder / LOCK, _Lock)
    read = _ReadRun(run, metadata, lock, [])
    by_name: dict[str, _Trial] = {}
    if run.parsed is not None and run.summary is not None:
        for i, raw in enumerate(run.parsed.results):
            trial = validated(run.summary, raw, _TrialResults, f"results[{i}]")
            if trial.trial_name in by_name:
                read.notes.append(f"run {read.name}: trial {trial.trial_name} is listed twice in "
                                  f"its results.json: the first is read")
                continue
            by_name[trial.trial_name] = _Trial(trial, trial.task_id, trial.trial_name, run.summary,
                                               {f"{RESULTS}#{i}": trial.model_dump_json().encode()})
    if run.alone:
        read.trials = list(by_name.values())
        _check_counts(read, 0, 0, 0)
        return read
    unlisted = unfinished = disagree = 0
    for task_dir in _entries(run.folder, folders=True):
        if task_dir in run_folders:
            continue
        for trial_dir in _entries(task_dir, folders=True):
            path = trial_dir / RESULTS
            if _is_file(path):
                if (found := _trial_file(path)) is None:
                    read.notes.append(f"{task_dir.name}/{trial_dir.name}/{RESULTS}: not a "
                                      f"trial's TrialResults (no trial_name), not read")
                    continue
                data, trial = found
                before = by_name.get(trial.trial_name)
                if before is None:
                    unlisted += run.summary is not None
                elif before.result is not None and _outcome(before.result) != _outcome(trial):
                    disagree += 1
                by_name[trial.trial_name] = _Trial(trial, trial.task_id, trial.trial_name,
                                                   trial_dir, {RESULTS: data})
            elif (trial_dir.name.startswith(f"{task_dir.name}.")
                  and ATTEMPT_NUMBER.search(trial_dir.name)):
                before = by_name.get(trial_dir.name)
                if before is not None:  # listed by the run: the harness failed around it
                    before.source = trial_dir
                    continue
                unfinished += 1
                by_name[trial_dir.name] = _Trial(None, safe_id(task_dir.name), trial_dir.name,
                                                 trial_dir, {})
    read.trials = list(by_name.values())
    _check_counts(read, unlisted, unfinished, disagree)
    return read


def _check_counts(read: _ReadRun, unlisted: int, unfinished: int, disagree: int) -> None:
    """The run's own n_resolved and accuracy against the trials read, each difference with its
    reason (notes on the run)."""
    resolved = sum(bool(t.result and t.result.is_resolved) for t in read.trials)
    total = len(read.trials)
    parsed = read.run.parsed
    reasons = [f"{plural(n, noun)} {text}" for n, noun, text in (
        (unlisted, "trial folder", "with a results.json the run's results.json does not list"),
        (unfinished, "trial folder", "without a results.json (the run stopped during them)"),
        (disagree, "trial", "whose own results.json says otherwise than the run's "
                            "(the trial's own is read)")) if n]
    why = f" ({'; '.join(reasons)})" if reasons else ""
    if isinstance(parsed, _BenchmarkResults):
        own_resolved = parsed.n_resolved if parsed.n_resolved is not None else sum(
            bool(r.get("is_resolved")) for r in parsed.results)
        own_total = len(parsed.results)
        if (own_resolved, own_total) != (resolved, total):
            read.notes.append(f"run {read.name}: its results.json has {own_resolved} of "
                              f"{own_total} trials resolved; read {resolved} of {total}{why}")
        computed = own_resolved / own_total if own_total else 0.0
        if parsed.accuracy is not None and abs(parsed.accuracy - computed) > 1e-9:
            read.notes.append(f"run {read.name}: its results.json's accuracy "
                              f"{parsed.accuracy:.4f} is not its n_resolved / trials "
                              f"({computed:.4f})")
    elif read.metadata is not None and read.metadata.accuracy is not None:
        if total == 0 or abs(read.metadata.accuracy - resolved / total) > 1e-9:
            read.notes.append(f"run {read.name}: its run_metadata.json has accuracy "
                              f"{read.metadata.accuracy:.4f}; read {resolved} of {total} "
                              f"resolved{why}")
    else:
        read.notes.append(f"run {read.name}: no results.json and no accuracy in "
                          f"run_metadata.json (the run did not end): nothing to check "
                          f"{total} trials against")
    if read.metadata and read.metadata.dataset_size and (
            planned := read.metadata.dataset_size * max(read.metadata.n_attempts, 1)) != total:
        read.notes.append(f"run {read.name}: {planned} trials planned (dataset_size x "
                          f"n_attempts), {total} recorded")


def _reason(trial: _TrialResults | None) -> str | None:
    """Why the trial is unavailable (see the module docstring), or None when it is graded."""
    if trial is None:
        return UNFINISHED
    mode = trial.failure_mode
    if mode not in GRADED_MODES:
        shown = mode if mode in UNAVAILABLE_MODES else repr(mode[:60])
        return (f"tb failure_mode {shown}: "
                f"{UNAVAILABLE_MODES.get(mode, 'not a failure mode tb 1 defines')}")
    if trial.is_resolved is None and not trial.parser_results:
        return NO_VERDICT
    return None


def _criterion_id(task_id: str) -> str:
    return f"{task_id}:tests"


def _grade(item_id: str, trial: _TrialResults) -> CriterionGrade:
    """The criterion's grade: tb's is_resolved (all reported tests passed), the per-test results
    (failed first) as the rationale and the share passed as the score."""
    tests = trial.parser_results or {}
    resolved = bool(trial.is_resolved) if trial.is_resolved is not None else bool(tests) and all(
        status == "passed" for status in tests.values())
    if tests:
        failed = [name for name, status in tests.items() if status != "passed"]
        passed = [name for name, status in tests.items() if status == "passed"]
        listed = [f"failed: {name}" for name in failed] + [f"passed: {name}" for name in passed]
        more = len(listed) - MAX_RATIONALE_TESTS
        rationale = (f"{len(passed)} of {len(tests)} tests passed\n"
                     + "\n".join(line[:200] for line in listed[:MAX_RATIONALE_TESTS])
                     + (f"\n... and {more} more" if more > 0 else ""))
        score = len(passed) / len(tests)
    else:
        rationale, score = "no per-test results recorded: tb's is_resolved", float(resolved)
    return CriterionGrade(attempt_id=item_id, criterion_id=_criterion_id(trial.task_id),
                          grader="recorded", verdict="pass" if resolved else "fail",
                          score=score, rationale=rationale)


def _usage(trial: _TrialResults | None) -> Usage:
    if trial is None:
        return Usage()
    prompt, completion = trial.total_input_tokens, trial.total_output_tokens
    if prompt == 0 and completion == 0:
        return Usage()
    return Usage(prompt_tokens=prompt, completion_tokens=completion,
                 total_tokens=None if prompt is None or completion is None
                 else prompt + completion)


def _wall_time(trial: _TrialResults | None) -> float | None:
    """Seconds from agent_started_at to agent_ended_at, where both are recorded alike (both with
    a time zone or both without) and in order."""
    if trial is None or trial.agent_started_at is None or trial.agent_ended_at is None:
        return None
    start, end = trial.agent_started_at, trial.agent_ended_at
    if (start.tzinfo is None) != (end.tzinfo is None) or end < start:
        return None
    return (end - start).total_seconds()


def _attempt_order(trial: _Trial) -> tuple[int, str]:
    number = ATTEMPT_NUMBER.search(trial.name)
    return (int(number.group(1)) if number else 0, trial.name)


def _load_variant(variant: str, model: str, reads: list[_ReadRun], notes: list[str]
                 ) -> RecordedRuns:
    """One variant's runs: attempts with their recorded grades, and oracle and nop controls."""
    runs = RecordedRuns()
    unmapped = list(notes)
    for read in reads:
        unmapped += read.notes
    index: dict[tuple[str, str], int] = defaultdict(int)
    prompts: dict[str, str] = {}
    domains: dict[str, str] = {}
    uncounted = contradicted = 0
    for read in reads:
        agent = read.agent or ""
        kind = CONTROL_AGENTS.get(agent)
        dataset = (read.metadata.dataset_name if read.metadata else None) or ""
        for found in sorted(read.trials, key=lambda t: (t.task_id, _attempt_order(t))):
            trial, task_id = found.result, found.task_id
            if trial is not None and trial.instruction:
                prompts.setdefault(task_id, trial.instruction)
            domains.setdefault(task_id, dataset)
            index[(agent if kind else "", task_id)] += 1
            k = index[(agent if kind else "", task_id)]
            reason = _reason(trial)
            item_id = (f"{variant}/{task_id}/{agent}/{k}" if kind
                       else Attempt.make_id(variant, task_id, k))
            grades = [] if reason or trial is None else [_grade(item_id, trial)]
            contradicted += bool(trial and trial.parser_results and trial.is_resolved is not None
                                 and trial.is_resolved != all(
                                     s == "passed" for s in trial.parser_results.values()))
            if kind:
                if reason:
                    unmapped.append(f"{read.name}/{found.name}: {agent} trial unavailable "
                                    f"({reason}), no {kind[0]} control")
                    continue
                runs.controls.append(Control(id=item_id, task_id=task_id, task_version="",
                                             kind=kind[0], answer="", expect=kind[1]))
                runs.control_grades += grades
                continue
            usage = _usage(trial)
            uncounted += bool(trial and trial.total_input_tokens == 0
                              and trial.total_output_tokens == 0)
            mode = trial.failure_mode if trial is not None else None
            runs.attempts.append(Attempt(
                id=item_id, task_id=task_id, model=model, variant=variant, index=k,
                state="unavailable" if reason else "graded", unavailable_reason=reason,
                answer=None, usage=usage, wall_time=_wall_time(trial),
                agent_status=None if mode in (None, "unset", "none") else mode,
                source=str(found.source),
                fingerprint=fingerprint(found.source if found.source.is_dir()
                                        else found.source.parent, found.files)))
            runs.grades += grades
    for task_id in sorted(domains):
        runs.recorded[task_id] = {variant: Task(
            id=task_id, name=task_id, domain=domains[task_id], world_id="",
            prompt=prompts.get(task_id, ""), source="runs",
            criteria=[Criterion(id=_criterion_id(task_id),
                                text="Passes the task's tests (tb's is_resolved: every test its "
                                     "test run reported passed)")])}
    if contradicted:
        unmapped.append(f"{plural(contradicted, 'trial')} whose is_resolved is not what their "
                        f"parser_results say (all passed): is_resolved is the verdict")
    if uncounted:
        unmapped.append(f"{plural(uncounted, 'trial')} with 0 input and 0 output tokens (tb's "
                        f"installed agents count none): usage unknown")
    paths = [read.where for read in reads]
    runs.sources.append(summarize(Path(os.path.commonpath(paths)) if paths else Path(), "tb",
                                  runs, unmapped))
    return runs


def _variant_key(read: _ReadRun) -> tuple[str, str, str]:
    """(agent, model, run): the runs of one agent and model are one variant; a run that records no
    model is a variant of its own, since two such runs cannot be told to be of one model."""
    agent = read.agent or ""
    return (agent, read.model, "") if read.model else (agent, "", str(read.where))


def _variant_name(key: tuple[str, str, str], read: _ReadRun) -> str:
    """`agent/model`, or for a run without a model `agent/<folder holding it>/<run>`."""
    agent, model, _ = key
    holder = read.where.parent.name
    return "/".join(part for part in ((agent, model) if model else (agent, holder, read.name))
                    if part)


def load_tb(found: list[_Run]) -> RecordedRuns:
    """Every run `tb_runs` found, by variant (agent and model); a run copied into another folder
    (the same run id) is read once."""
    run_folders = {run.folder for run in found if not run.alone}
    groups: dict[tuple[str, str, str], list[_ReadRun]] = defaultdict(list)
    seen: dict[str, _ReadRun] = {}
    copies: list[tuple[_ReadRun, _ReadRun]] = []
    for run in sorted(found, key=lambda r: str(r.summary if r.alone else r.folder)):
        read = _read_run(run, run_folders)
        if read.identity is not None and (first := seen.get(read.identity)) is not None:
            copies.append((read, first))
            continue
        if read.identity is not None:
            seen[read.identity] = read
        groups[_variant_key(read)].append(read)
    names = {key: _variant_name(key, members[0]) for key, members in groups.items()}
    taken = Counter(names.values())
    runs = RecordedRuns()
    for n, (key, members) in enumerate(sorted(groups.items()), start=1):
        name = names[key] if taken[names[key]] == 1 else f"{names[key]} ({n})"
        agent, model, _ = key
        notes = [f"{copy.where}: not read, the same run (id {copy.identity}) as {first.where}"
                 for copy, first in copies if any(first is m for m in members)]
        if not model:
            notes.append(f"run {members[0].name} records no model: the model is shown as "
                         + (f"the agent, {agent!r}" if agent else f"{NOT_RECORDED!r} (no "
                            "run_metadata.json or tb.lock: no agent recorded either)")
                         + ", and the run is a variant of its own")
        runs.extend(_load_variant(name, model or agent or NOT_RECORDED, members, notes))
    return runs
