"""Harbor job folders: the real recorded fixtures, and jobs built in Harbor's own layout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rubric_audit.audit.job import run_audit
from rubric_audit.cli import app
from rubric_audit.core.errors import InputError
from rubric_audit.load import harbor
from rubric_audit.load.sources import load_sources
from rubric_audit.store.audit_store import AuditStore
from tests.conftest import FIXTURES, write_json

HARBOR = FIXTURES / "harbor-jobs"
ATIF = (HARBOR / "agent-diagnostics" / "tests" / "fixtures" / "golden_corpus" / "1e725679752e"
        / "trajectory.json")
runner = CliRunner()


def trial(job: Path, task: str, agent: str = "terminus-2", reward: float | None = 0.0,
          exception: str | None = None, n: int = 1, trajectory: Path | None = None,
          model: str = "openai/gpt-5", kwargs: dict[str, Any] | None = None,
          timings: dict[str, Any] | None = None) -> Path:
    """A trial folder as Harbor writes it: config.json (TrialConfig), result.json (TrialResult),
    trial.log, agent/, verifier/, and exception.txt when the trial raised."""
    name = f"{task[:32]}__{agent[:3]}{n:04d}"
    folder = job / name
    control = agent in ("oracle", "nop")
    provider, _, model_name = model.partition("/")
    config = {"task": {"path": f"/tasks/{task}", "source": "terminal-bench"}, "trial_name": name,
              "agent": {"name": agent, "model_name": None if control else model,
                        "kwargs": kwargs or {}}}
    result: dict[str, Any] = {
        "id": f"00000000-0000-0000-0000-{abs(hash((task, agent, n))) % 10**12:012d}",
        "task_name": task, "trial_name": name, "trial_uri": f"file:///jobs/{job.name}/{name}",
        "task_id": {"path": f"/tasks/{task}"}, "source": "terminal-bench",
        "task_checksum": "ab" * 32, "config": config,
        "agent_info": {"name": agent, "version": "1.0", "model_info": None if control else {
            "name": model_name, "provider": provider}},
        "agent_result": {"n_input_tokens": 1200, "n_cache_tokens": 0, "n_output_tokens": 80,
                         "cost_usd": 0.01},
        "verifier_result": None if reward is None else {"rewards": {"reward": reward}},
        "exception_info": None if exception is None else {
            "exception_type": exception, "exception_message": f"{exception} raised\nmore",
            "exception_traceback": "Traceback ...", "occurred_at": "2026-05-01T10:00:00"},
        "started_at": "2026-05-01T10:00:00", "finished_at": "2026-05-01T10:05:00",
        **(timings or {}),
    }
    write_json(folder / "config.json", config)
    (folder / "trial.log").write_text(f"Starting trial {name}\n")
    write_json(folder / "result.json", result)
    (folder / "agent").mkdir(parents=True, exist_ok=True)
    if trajectory is not None:
        shutil.copy(trajectory, folder / "agent" / "trajectory.json")
    if exception is not None:
        (folder / "exception.txt").write_text(
            f"Traceback (most recent call last):\n  File \"trial.py\", line 1\n"
            f"{exception}: {exception} raised\n")
    if reward is not None:
        (folder / "verifier").mkdir(exist_ok=True)
        (folder / "verifier" / "reward.txt").write_text(f"{reward}\n")
        (folder / "verifier" / "test-stdout.txt").write_text(
            f"test_outputs.py::test_result {'PASSED' if reward >= 1 else 'FAILED'}\n")
    return folder


def interrupted(job: Path, task: str, agent: str | None = "terminus-2", n: int = 1,
                model: str | None = "openai/gpt-5", traceback: str | None = None,
                import_path: str | None = None) -> Path:
    """A trial its job left unfinished: config.json (written with exclude_defaults, as Harbor
    does), trial.log and the agent's trajectory so far, exception.txt if it raised; no
    result.json."""
    name = f"{task[:32]}__int{n:04d}"
    folder = job / name
    agent_config = {k: v for k, v in (("name", agent), ("import_path", import_path),
                                      ("model_name", model)) if v is not None}
    write_json(folder / "config.json", {
        "task": {"path": f"/tasks/{task}", "source": "terminal-bench"}, "trial_name": name,
        **({"agent": agent_config} if agent_config else {})})
    (folder / "trial.log").write_text(f"Starting trial {name}\n")
    write_json(folder / "agent" / "trajectory.json", atif(f"Solve {task}."))
    if traceback is not None:
        (folder / "exception.txt").write_text(traceback)
    return folder


def atif(prompt: str, *steps: dict[str, Any]) -> dict[str, Any]:
    """An ATIF trajectory: the task's prompt as the user step, then `steps`."""
    return {"schema_version": "ATIF-v1.5", "session_id": "s", "agent": {"name": "terminus-2"},
            "steps": [{"step_id": 1, "source": "user", "message": prompt},
                      *({"step_id": i, **step} for i, step in enumerate(steps, start=2))]}


def job(root: Path, name: str = "2026-05-01__10-00-00", **config: Any) -> Path:
    """A job folder's config.json (JobConfig); `finished` writes its result.json."""
    folder = root / name
    write_json(folder / "config.json", {"job_name": name, "jobs_dir": str(root), "n_attempts": 1,
                                        "agents": [{"name": "terminus-2"}], "tasks": [],
                                        **config})
    return folder


def finished(job: Path, n_total_trials: int | None = None) -> Path:
    """The job's result.json (JobResult), with the stats Harbor computes from its trials'
    result.json (JobStats.increment: evals by agent__model__dataset, the trials given a reward,
    those that raised, the mean reward with a missing one counted 0)."""
    results = [json.loads(p.read_text()) for p in sorted(job.glob("*/result.json"))]
    evals: dict[str, dict[str, Any]] = {}
    rewards: dict[str, list[float]] = {}
    for r in results:
        model = (r["agent_info"].get("model_info") or {}).get("name")
        key = "__".join(p for p in (r["agent_info"]["name"], model, r["source"] or "adhoc") if p)
        stats = evals.setdefault(key, {"n_trials": 0, "n_errors": 0, "metrics": [],
                                       "reward_stats": {}, "exception_stats": {}})
        reward = (r["verifier_result"] or {}).get("rewards")
        stats["n_trials"] += reward is not None
        stats["n_errors"] += r["exception_info"] is not None
        rewards.setdefault(key, []).append(next(iter((reward or {}).values()), 0))
    for key, values in rewards.items():
        evals[key]["metrics"] = [{"mean": sum(values) / len(values)}]
    errored = sum(r["exception_info"] is not None for r in results)
    trials = len([p for p in job.iterdir() if p.is_dir()])
    write_json(job / "result.json", {
        "id": "11111111-2222-3333-4444-555555555555", "started_at": "2026-05-01T10:00:00",
        "finished_at": "2026-05-01T11:00:00",
        "n_total_trials": trials if n_total_trials is None else n_total_trials,
        "stats": {"n_completed_trials": len(results), "n_errored_trials": errored,
                  "n_running_trials": 0, "n_pending_trials": 0, "n_cancelled_trials": 0,
                  "n_retries": 0, "evals": evals}})
    return job


@pytest.fixture
def screened_job(tmp_path: Path) -> Path:
    """One task per category of the validity screen, plus a solved one."""
    j = job(tmp_path / "jobs")
    trial(j, "unsolved-certified", "oracle", 1.0)
    trial(j, "unsolved-certified", "nop", 0.0)
    trial(j, "unsolved-certified", reward=0.0, exception="AgentTimeoutError")
    trial(j, "oracle-broken", "oracle", 0.0)
    trial(j, "oracle-broken", reward=0.0)
    trial(j, "infra-down", "oracle", 1.0)
    trial(j, "infra-down", reward=None, exception="EnvironmentStartTimeoutError", n=1)
    trial(j, "infra-down", reward=0.0, exception="ApiRateLimitError", n=2)
    trial(j, "infra-down", reward=0.0, n=3)
    trial(j, "tests-vacuous", "oracle", 1.0)
    trial(j, "tests-vacuous", "nop", 1.0)
    trial(j, "tests-vacuous", reward=1.0, trajectory=ATIF)
    trial(j, "no-oracle", reward=0.0)
    trial(j, "solved", "oracle", 1.0)
    trial(j, "solved", reward=1.0)
    return finished(j)


def test_the_real_jobs_give_one_measured_attempt_each() -> None:
    """CodeContextBench's rewards are partial scores (a weighted checklist: 0.84, 0.4286):
    measurements of the verifier, never pass/fail criteria, so its attempts are ungraded."""
    runs = load_sources([HARBOR / "CodeContextBench"])
    assert {s.format for s in runs.sources} == {"harbor"}
    assert [a.state for a in runs.attempts] == ["ungraded"] * 4
    assert not runs.grades and not any(t.criteria for t in runs.tasks.values())
    assert sorted(m.value for m in runs.measurements) == [0.0, 0.4286, 0.84, 0.95]
    assert {(m.scorer, m.key) for m in runs.measurements} == {("verifier", "reward")}
    # one variant per agent and model (the baseline and MCP jobs ran the same agent and model,
    # on two tasks), named by Harbor's own stats key
    assert [(s.variant, s.attempts) for s in runs.sources] == [
        ("claude-code__claude-haiku-4-5-20251001__adhoc", 2),
        ("claude-code__claude-opus-4-5-20251101__adhoc", 1),
        ("claude-code__claude-sonnet-4-6__adhoc", 1)]
    assert not any(s.unmapped for s in runs.sources), "every job's own stats agree"
    assert {a.model for a in runs.attempts} >= {"anthropic/claude-haiku-4-5-20251001"}
    mcp = next(a for a in runs.attempts if a.task_id.startswith("mcp_"))
    assert mcp.wall_time == pytest.approx(116.824744), "its agent_execution, in its result.json"


def test_exceptions_that_void_the_reward_make_attempts_unavailable(screened_job: Path) -> None:
    runs = load_sources([screened_job])
    by_id = {a.id.split("/", 1)[1]: a for a in runs.attempts}
    assert by_id["infra-down/1"].state == "unavailable"
    assert by_id["infra-down/1"].unavailable_reason == \
        "EnvironmentStartTimeoutError: EnvironmentStartTimeoutError raised"
    assert by_id["infra-down/2"].state == "unavailable"  # a provider error voids the reward
    assert by_id["infra-down/3"].state == "graded"
    assert by_id["unsolved-certified/1"].state == "graded"  # a timeout is the agent's failure
    assert not any(a.task_id == t for a in runs.attempts for t in ("oracle", "nop"))
    kinds = sorted((c.task_id, c.kind) for c in runs.controls)
    assert ("oracle-broken", "gold") in kinds and ("tests-vacuous", "null") in kinds
    vacuous = by_id["tests-vacuous/1"]
    assert vacuous.trajectory and runs.tasks["tests-vacuous"].prompt.startswith(
        "## EVALUATION CONTEXT")
    assert vacuous.answer


def test_oracle_and_nop_trials_drive_the_validity_screen(screened_job: Path,
                                                         tmp_path: Path) -> None:
    result = run_audit(None, [screened_job], tmp_path / "out")
    screen = result.summary.screen
    assert screen.tasks == {"unsolved-certified": "certified_unsolved",
                            "oracle-broken": "broken_oracle", "infra-down": "infra_limited",
                            "tests-vacuous": "exploit_only", "no-oracle": "uncertified"}
    assert result.summary.achievable.excluded["gold fails"] == ["oracle-broken"]
    assert "solved" not in result.summary.achievable.excluded["no gold"]
    assert not any("no gold control could run for 6" in a for a in result.summary.alarms)
    with AuditStore(tmp_path / "out" / "audit.db") as store:
        findings = {(f.task_id, f.check) for f in store.findings()}
    assert ("oracle-broken", "control_gold_fails") in findings
    assert ("tests-vacuous", "control_null_passes") in findings
    again = runner.invoke(app, ["report", str(tmp_path / "out")])
    assert again.exit_code == 0, again.output
    assert "broken_oracle" in (tmp_path / "out" / "report.md").read_text()
    assert json.loads((tmp_path / "out" / "audit.json").read_text())["screen"]["tasks"] == \
        screen.tasks


def test_the_command_says_per_variant_what_it_read_and_as_what(screened_job: Path,
                                                               tmp_path: Path) -> None:
    result = runner.invoke(app, ["audit", str(screened_job.parent), "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "(harbor, variant terminus-2__gpt-5__terminal-bench): 8 attempts, 6 graded, 2 " \
           "unavailable (1 x EnvironmentStartTimeoutError: EnvironmentStartTimeoutError " \
           "raised; 1 x ApiRateLimitError: ApiRateLimitError raised); 6 tasks, 6 criteria." in text
    assert "(harbor, variant oracle__terminal-bench): 0 attempts, 0 graded, 0 unavailable; " \
           "0 tasks, 0 criteria, 5 recorded controls." in text


def test_a_trial_whose_task_changed_is_said_not_mapped(tmp_path: Path) -> None:
    j = job(tmp_path)
    trial(j, "t", n=1)
    other = trial(j, "t", n=2)
    raw = json.loads((other / "result.json").read_text())
    raw["task_checksum"] = "cd" * 32
    write_json(other / "result.json", raw)
    [source] = load_sources([j]).sources
    assert source.unmapped == ["task t: trials ran 2 versions of it (task_checksum "
                               "abababababab, cdcdcdcdcdcd)"]


@pytest.mark.parametrize(("change", "field"), [
    (lambda raw: raw.pop("task_name"), "task_name"),
    (lambda raw: raw.update(verifier_result={"rewards": {"reward": "high"}}),
     "verifier_result.rewards.reward"),
    (lambda raw: raw.update(agent_info=[]), "agent_info"),
])
def test_bad_trial_results_name_file_and_field(tmp_path: Path, change, field: str) -> None:
    j = job(tmp_path / "jobs")
    folder = trial(j, "t")
    raw = json.loads((folder / "result.json").read_text())
    change(raw)
    write_json(folder / "result.json", raw)
    with pytest.raises(InputError) as caught:
        load_sources([j])
    assert caught.value.field == field and caught.value.file.endswith("result.json")
    result = runner.invoke(app, ["audit", str(j), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and field in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_malformed_json_in_a_trial_is_refused(tmp_path: Path) -> None:
    j = job(tmp_path)
    folder = trial(j, "t")
    (folder / "result.json").write_text('{"trial_name": ')
    with pytest.raises(InputError, match="malformed JSON"):
        load_sources([j])


def test_a_trial_result_too_large_is_refused_by_its_size(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    j = job(tmp_path)
    folder = trial(j, "t")
    monkeypatch.setattr(harbor, "MAX_RESULT_BYTES", (folder / "result.json").stat().st_size - 1)
    with pytest.raises(InputError, match="file too large") as caught:
        load_sources([j])
    assert caught.value.file == str(folder / "result.json")


def test_each_trial_result_is_read_once(screened_job: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding the jobs, reading the trials and fingerprinting the attempts share one read."""
    import os

    opened: list[Path] = []
    os_open = os.open

    def counted(path, *args, **kwargs):
        opened.append(Path(path))
        return os_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counted)
    runs = load_sources([screened_job])
    results = [p for p in opened if p.name == "result.json"]
    assert len(runs.attempts) + len(runs.controls) == 15
    assert sorted(results) == sorted(set(results)) and len(results) == 16  # 15 trials, the job


def test_an_atif_trajectory_without_steps_is_refused(tmp_path: Path) -> None:
    j = job(tmp_path)
    folder = trial(j, "t")
    write_json(folder / "agent" / "trajectory.json", {"schema_version": "ATIF-v1.5",
                                                      "steps": {"source": "agent"}})
    with pytest.raises(InputError) as caught:
        load_sources([j])
    assert caught.value.field == "steps"


def test_steps_from_outside_atif_are_left_out_and_said(tmp_path: Path) -> None:
    j = job(tmp_path)
    trial(j, "t", trajectory=ATIF)  # the corpus trimmed it and left a `corpus_builder` step
    [source] = load_sources([j]).sources
    assert source.unmapped == ["t__ter0001/agent/trajectory.json: 1 step not from system, "
                               "user or agent (first: steps[15]), left out"]


def test_a_task_name_with_separators_becomes_one_safe_task_id(tmp_path: Path) -> None:
    j = job(tmp_path)
    trial(j, "org/../task", reward=1.0)
    [attempt] = load_sources([j]).attempts
    assert attempt.task_id == "org%2F..%2Ftask" and attempt.state == "graded"


def test_task_names_differing_only_in_a_separator_are_two_tasks(tmp_path: Path) -> None:
    """`dep/x` and `dep_x` were one task (separators became `_`): the escape keeps them apart,
    and a name already safe is its own id."""
    j = job(tmp_path)
    trial(j, "dep_x", reward=1.0)
    slashed = trial(j, "dep_x", reward=0.0, n=2)
    config, result = (json.loads((slashed / n).read_text()) for n in ("config.json", "result.json"))
    config["task"]["path"] = "/tasks/dep/x"
    write_json(slashed / "config.json", config)
    write_json(slashed / "result.json", {**result, "task_name": "dep/x", "config": config})
    runs = load_sources([j])
    assert sorted((a.task_id, a.index) for a in runs.attempts) == [("dep%2Fx", 1), ("dep_x", 1)]


def test_jobs_of_one_agent_and_model_are_one_variant(tmp_path: Path) -> None:
    """One job per task, as harnesses often run them: the trials of an agent and model form one
    variant over every job, and each model is scored over the tasks it ran."""
    jobs = tmp_path / "jobs"
    for task, rewards in (("t1", (1.0, 0.0)), ("t2", (1.0, 1.0)), ("t3", (0.0, None))):
        for model, reward in zip(("openai/gpt-5", "anthropic/claude-x"), rewards, strict=True):
            if reward is not None:
                folder = job(jobs, f"{task}--{model.split('/')[0]}")
                trial(folder, task, reward=reward, model=model)
                finished(folder)
    runs = load_sources([jobs])
    assert [(s.variant, s.attempts, s.path, s.unmapped) for s in runs.sources] == [
        ("terminus-2__claude-x__terminal-bench", 2, str(jobs), []),
        ("terminus-2__gpt-5__terminal-bench", 3, str(jobs), [])]
    result = run_audit(None, [jobs], tmp_path / "out")
    scores = {s.model: s.pass_at_1 for s in result.summary.scores}
    assert scores == {"openai/gpt-5": pytest.approx(2 / 3), "anthropic/claude-x": 0.5}
    outcomes = {o.model: o for o in result.summary.task_outcomes}
    assert outcomes["anthropic/claude-x"].tasks == {"t1": "fail", "t2": "pass"}
    assert outcomes["anthropic/claude-x"].counts["unavailable"] == 0, "t3 was never run"


def test_an_agents_kwargs_and_a_jobs_extra_instructions_make_their_own_variant(
        tmp_path: Path) -> None:
    trial(job(tmp_path, "2026-05-01__10-00-00"), "t", reward=1.0)
    trial(job(tmp_path, "2026-05-01__11-00-00"), "t", reward=1.0,
          kwargs={"reasoning_effort": "high"})
    trial(job(tmp_path, "2026-05-01__12-00-00", extra_instructions=["Use tabs."]), "t",
          reward=1.0)
    trial(job(tmp_path, "2026-05-01__13-00-00"), "t", reward=1.0, kwargs={"api_key": "sk-secret"})
    variants = sorted(s.variant for s in load_sources([tmp_path]).sources)
    base = "terminus-2__gpt-5__terminal-bench"
    assert variants[0] == base and f"{base} [reasoning_effort=high]" in variants
    assert len(variants) == 4 and not any("sk-secret" in v for v in variants)
    assert sum(v.startswith(f"{base} [config ") for v in variants) == 2, \
        "a list and a secret are not spelt out"


def test_an_interrupted_jobs_trials_are_unavailable_attempts(tmp_path: Path) -> None:
    """A job cut off mid-run: its unfinished trials have config.json and trial.log, perhaps an
    exception.txt, and no result.json. Each is an attempt, unavailable, with its reason; its
    agent and task are named as the finished trials with the same config are."""
    j = job(tmp_path / "jobs")
    trial(j, "t1", reward=1.0, model="openai/gpt-5")
    interrupted(j, "t1", n=2, traceback=(
        'Traceback (most recent call last):\n  File "harbor/trial/trial.py", line 9, in run\n'
        "    await self._run_agent()\nasyncio.exceptions.CancelledError\n\nDuring handling of "
        "the above exception, another exception occurred:\n\nTraceback (most recent call "
        'last):\n  File "x.py", line 2\nKeyboardInterrupt: stopped by the user\n'))
    interrupted(j, "t2", n=3)
    finished(j, n_total_trials=5)
    runs = load_sources([j])
    [source] = runs.sources
    assert (source.format, source.attempts, source.graded, source.unavailable) == (
        "harbor", 3, 1, 2)
    assert source.unavailable_reasons == {
        "interrupted: KeyboardInterrupt: stopped by the user": 1,
        "interrupted: no result.json": 1}
    assert source.unmapped == ["job .: its result.json plans 5 trials; 3 trial folders found "
                               "(2 without result.json)"]
    cut = [a for a in runs.attempts if a.state == "unavailable"]
    assert {(a.task_id, a.model, a.variant, a.agent_status) for a in cut} == {
        ("t1", "openai/gpt-5", "terminus-2__gpt-5__terminal-bench", "interrupted"),
        ("t2", "openai/gpt-5", "terminus-2__gpt-5__terminal-bench", "interrupted")}
    assert all(a.trajectory and a.trajectory.steps and a.wall_time is None for a in cut)
    assert runs.tasks["t2"].prompt == "Solve t2."


def test_an_interrupted_trial_is_named_as_its_finished_twin_was(tmp_path: Path) -> None:
    """An agent given by import path names itself only in result.json (agent_info)."""
    j = job(tmp_path)
    done = trial(j, "t", reward=1.0)
    raw = json.loads((done / "result.json").read_text())
    raw["config"]["agent"] = {"import_path": "agents.mine:Agent", "model_name": "openai/gpt-5"}
    write_json(done / "result.json", raw)
    interrupted(j, "t", agent=None, import_path="agents.mine:Agent", n=2)
    interrupted(j, "t", agent=None, import_path="agents.other:Agent", n=3)
    interrupted(j, "u", agent=None, model=None, n=4)  # no agent at all: Harbor's default
    runs = load_sources([j])
    assert sorted((a.variant, a.state) for a in runs.attempts) == [
        ("agents.other:Agent__gpt-5__terminal-bench", "unavailable"),
        ("terminus-2__gpt-5__terminal-bench", "graded"),
        ("terminus-2__gpt-5__terminal-bench", "unavailable")]
    assert any("oracle trial without a valid reward (interrupted: no result.json)" in line
               for s in runs.sources for line in s.unmapped)


def test_a_job_left_with_only_unfinished_trials_is_read_as_harbor(tmp_path: Path) -> None:
    """Its trials' agent/trajectory.json must not make it an Archipelago variant."""
    j = job(tmp_path / "jobs")
    interrupted(j, "fix-git", traceback="CancelledError\n")
    interrupted(j, "build-tcc", n=2)
    runs = load_sources([j])
    assert [(s.format, s.variant) for s in runs.sources] == [
        ("harbor", "terminus-2__gpt-5__terminal-bench")]
    assert sorted(a.task_id for a in runs.attempts) == ["build-tcc", "fix-git"]
    assert {a.unavailable_reason for a in runs.attempts} == {
        "interrupted: CancelledError", "interrupted: no result.json"}


def test_a_folder_of_no_format_is_refused_naming_every_layout(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "config.json").write_text('{"trial_name": "x"}')  # no task: no trial
    with pytest.raises(InputError) as caught:
        load_sources([tmp_path])
    for layout in ("Archipelago variant folder", "Harbor trial, job or folder of jobs",
                   "inspect_ai log", "Terminal-Bench 1 `tb run` output"):
        assert layout in caught.value.problem
    with pytest.raises(InputError, match="no such run file or folder"):
        load_sources([tmp_path / "missing"])


def test_a_jobs_own_stats_that_differ_from_its_trials_are_said(tmp_path: Path) -> None:
    j = job(tmp_path)
    trial(j, "t1", reward=1.0)
    trial(j, "t2", reward=0.0, exception="AgentTimeoutError")
    finished(j)
    assert [s.unmapped for s in load_sources([j]).sources] == [[]]
    raw = json.loads((j / "result.json").read_text())
    stats = raw["stats"]["evals"]["terminus-2__gpt-5__terminal-bench"]
    stats.update(n_errors=0, metrics=[{"mean": 0.75}])
    raw["stats"]["evals"]["claude-code__claude-x__adhoc"] = {"n_trials": 3}
    raw["stats"]["n_completed_trials"] = 3
    write_json(j / "result.json", raw)
    [source] = load_sources([j]).sources
    assert source.unmapped == [
        "job .: its result.json counts 3 completed trials; 2 trial folders hold a result.json",
        "job .: its result.json counts 3 rewarded and 0 errored trials of "
        "claude-code__claude-x__adhoc; 0 and 0 read",
        "job .: its result.json counts 2 rewarded and 0 errored trials of "
        "terminus-2__gpt-5__terminal-bench; 2 and 1 read",
        "job .: its result.json gives terminus-2__gpt-5__terminal-bench a mean reward of 0.75; "
        "0.5 read"]


@pytest.mark.parametrize(("timings", "seconds"), [
    ({"agent_execution": {"started_at": "2026-05-01T10:01:00.5Z",
                          "finished_at": "2026-05-01T10:03:00Z"}}, 119.5),
    ({"agent_execution": {"started_at": "2026-05-01T10:01:00", "finished_at": None}}, 300.0),
    ({}, 300.0),
    ({"started_at": None}, None),
    ({"started_at": "2026-05-01T10:00:00Z"}, None),  # one end with a zone, one without
    ({"finished_at": "2026-05-01T09:00:00"}, None),  # a clock that went back
])
def test_wall_time_is_the_agents_execution_else_the_trials(tmp_path: Path, timings,
                                                           seconds) -> None:
    trial(job(tmp_path), "t", timings=timings)
    [attempt] = load_sources([tmp_path]).attempts
    assert attempt.wall_time == seconds


def test_variants_whose_prompts_differ_by_shell_prompt_alone_agree(tmp_path: Path) -> None:
    """terminus-2 records the terminal's state in the prompt: another container each trial."""
    for model, host in (("openai/gpt-5", "3f2a1b9c8d7e"), ("anthropic/claude-x", "a1b2c3d4e5f6")):
        path = tmp_path / f"{host}.json"
        write_json(path, atif(f"Fix the build.\n\nCurrent terminal state:\nroot@{host}:/app# "))
        trial(job(tmp_path / "jobs", host), "t", model=model, reward=1.0, trajectory=path)
    result = run_audit(None, [tmp_path / "jobs"], tmp_path / "out")
    with AuditStore(tmp_path / "out" / "audit.db") as store:
        assert [f for f in store.findings() if f.check == "input_variants_disagree"] == []
    assert result.summary.tasks == 1


@pytest.mark.parametrize(("text", "line"), [
    ("asyncio.exceptions.CancelledError\n", "asyncio.exceptions.CancelledError"),
    ('Traceback (most recent call last):\n  File "t.py", line 3, in run\n    await x()\n'
     "    ^^^^^^^^^\nRuntimeError: runner failed: Traceback (most recent call last):\n"
     '  File "/opt/c.py", line 9\nRuntimeError: Unknown option: - You are given\nTask:\n'
     "  - Reconstruct the model\n", "RuntimeError: runner failed: Traceback (most recent call "
                                    "last):"),
    ("Traceback (most recent call last):\n  File \"a.py\"\n", "Traceback (most recent call last):"),
    ("", ""),
])
def test_the_exception_a_traceback_ends_with(text: str, line: str) -> None:
    assert harbor.raised(text) == line


def test_a_kwarg_that_names_its_run_does_not_split_the_variant(tmp_path: Path) -> None:
    """One job per task and harness, each agent given its cell's id (as a real TB 2.1 job set
    does): the harness splits the variants, the id does not."""
    for task in ("fix-git", "build-tcc"):
        for harness in ("pi", "thin"):
            trial(job(tmp_path, f"{task}--{harness}"), task, reward=1.0,
                  kwargs={"harness": harness, "cell_id": f"{task}--{harness}"})
    assert sorted((s.variant, s.attempts) for s in load_sources([tmp_path]).sources) == [
        ("terminus-2__gpt-5__terminal-bench [harness=pi]", 2),
        ("terminus-2__gpt-5__terminal-bench [harness=thin]", 2)]


def test_stats_keys_written_with_a_dash_for_each_slash_still_match(tmp_path: Path) -> None:
    """Newer Harbor writes `org/dataset` in its stats key as `org-dataset`."""
    j = job(tmp_path)
    folder = trial(j, "t", reward=1.0, model="openrouter/meta/llama-4")
    finished(j)
    raw = json.loads((j / "result.json").read_text())
    raw["stats"]["evals"] = {k.replace("/", "-"): v for k, v in raw["stats"]["evals"].items()}
    write_json(j / "result.json", raw)
    [source] = load_sources([j]).sources
    assert source.variant == "terminus-2__meta/llama-4__terminal-bench" and not source.unmapped
    assert json.loads((folder / "result.json").read_text())["agent_info"]["model_info"] == {
        "name": "meta/llama-4", "provider": "openrouter"}


def test_a_reward_key_of_zeros_and_ones_is_a_criterion_and_any_other_a_measurement(
        tmp_path: Path) -> None:
    """Per reward key over every trial read: 0/1 everywhere is a verdict (a suite passed or
    not); a key with any partial value is measured, in every trial, the 1.0s included."""
    binary = job(tmp_path / "binary")
    trial(binary, "t1", reward=1.0)
    trial(binary, "t2", reward=0.0)
    runs = load_sources([binary])
    assert {a.task_id: a.state for a in runs.attempts} == {"t1": "graded", "t2": "graded"}
    assert sorted((g.criterion_id, g.verdict) for g in runs.grades) == [
        ("t1:reward", "pass"), ("t2:reward", "fail")]
    assert not runs.measurements and runs.tasks["t1"].criteria
    partial = job(tmp_path / "partial")
    trial(partial, "p1", reward=1.0)
    trial(partial, "p2", reward=0.5)
    runs = load_sources([partial])
    assert {a.task_id: a.state for a in runs.attempts} == {"p1": "ungraded", "p2": "ungraded"}
    assert not runs.grades and not runs.tasks["p1"].criteria
    assert sorted(m.value for m in runs.measurements) == [0.5, 1.0]


@pytest.mark.parametrize(("field", "value", "where"), [
    ("reward", "NaN", "verifier_result.rewards.reward"),
    ("reward", "Infinity", "verifier_result.rewards.reward"),
    ("reward", "-Infinity", "verifier_result.rewards.reward"),
    ("reward", "1e400", "verifier_result.rewards.reward"),
    ("n_input_tokens", "-5", "agent_result.n_input_tokens"),
    ("n_output_tokens", "-1", "agent_result.n_output_tokens"),
    ("cost_usd", "NaN", "agent_result.cost_usd"),
])
def test_a_non_finite_number_or_negative_count_is_refused(tmp_path: Path, field: str, value: str,
                                                          where: str) -> None:
    """NaN read as a fail, Infinity as a pass: as in every loader, a reward, cost or time must be
    finite and a count not negative, else the trial's result.json is refused naming the field."""
    j = job(tmp_path)
    folder = trial(j, "t", reward=1.0)
    result = json.loads((folder / "result.json").read_text())
    placeholder = 987654.25
    if field == "reward":
        result["verifier_result"]["rewards"]["reward"] = placeholder
    else:
        result["agent_result"][field] = placeholder
    (folder / "result.json").write_text(json.dumps(result).replace(str(placeholder), value))
    with pytest.raises(InputError) as raised:
        load_sources([j])
    assert raised.value.field == where and Path(raised.value.file).name == "result.json"
