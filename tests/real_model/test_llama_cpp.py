"""rubric-audit against a real engine (llama.cpp's server, Gemma 3 270M): the plumbing, not the
quality. Replies parse in the constrained mode the check chooses, no call outlives its timeout,
attempts end in the right states, and the files are those the fake server's tests read."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from rubric_audit.cli import app
from rubric_audit.core.llm import CONSTRAINED_MODES, ModelConfig, check_models, structured
from rubric_audit.grade.judge import GradingRun
from rubric_audit.load.runs import load_runs
from rubric_audit.run.runner import AttemptResult
from tests.conftest import SAMPLE, make_benchmark, make_task, make_variant, sample_runs_of
from tests.real_model.conftest import LlamaServer

TASKS = ("kestrel_05", "meridian_04", "kestrel_04")
CALL_TIMEOUT = 120
ENV = {"OPENAI_API_KEY": "sk-local"}  # llama.cpp's server asks for none; litellm wants one


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """Three tasks of atlas-1's recorded runs (grading writes beside them)."""
    return sample_runs_of(tmp_path, TASKS)


def test_grade_parses_in_a_constrained_mode_within_the_timeout(
        llama_server: LlamaServer, runs: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, [
        "grade", str(runs), "--judge", llama_server.model, "--bench", str(SAMPLE),
        "--api-base", llama_server.url, "--cache", str(tmp_path / "cache.db"),
        "--concurrency", "1", "--call-timeout", str(CALL_TIMEOUT)], env=ENV)
    assert result.exit_code == 0, f"{result.output}\n{llama_server.log_tail()}"
    written = [GradingRun.model_validate_json(p.read_text())
               for p in sorted(runs.rglob("grades/*.json"))]
    attempts = load_runs([runs]).attempts
    assert len(written) == len(attempts), "every attempt graded by the judge"
    assert {w.structured_mode for w in written} <= CONSTRAINED_MODES
    verdicts = [r["verifier_result_values"]["judge_grade"] for w in written
                for r in w.verifier_results]
    parsed = sum(v is not None for v in verdicts)
    assert parsed >= 0.95 * len(verdicts), (verdicts, result.stdout)
    assert max(w.longest_request_seconds for w in written) <= CALL_TIMEOUT
    judged = [g for g in load_runs([runs]).grades if g.grader == f"judge:{llama_server.model}"]
    assert len(judged) == len(verdicts) and {g.verdict for g in judged} <= {"pass", "fail",
                                                                             "unscored"}
    assert {a.state for a in load_runs([runs]).attempts} == {"graded"}
    said = " ".join(result.stdout.split())
    assert f"in {written[0].structured_mode} mode" in said
    assert any(line.startswith(f"grading with {llama_server.model}: ")
               for line in result.stderr.splitlines()), "progress lines without a terminal"


class Word(BaseModel):
    word: str


def test_a_reply_past_the_output_cap_is_cut_not_waited_on(llama_server: LlamaServer) -> None:
    config = ModelConfig(model=llama_server.model, api_base=llama_server.url,
                         api_key="sk-local", max_output_tokens=4, timeout=CALL_TIMEOUT)
    [config] = check_models({"--judge": config}, structured={"--judge"}).values()
    reply = anyio.run(structured, config, [{"role": "user", "content": (
        "Write a long essay about rivers, then give one word.")}], Word)
    assert reply.value is None and reply.cut, reply
    assert "output cap of 4 tokens" in reply.error


def test_run_one_task_writes_an_attempt_in_the_archipelago_layout(
        llama_server: LlamaServer, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    result = CliRunner().invoke(app, [
        "run", str(SAMPLE), "--model", llama_server.model, "--api-base", llama_server.url,
        "--tasks", "kestrel_04", "--out", str(out), "--max-steps", "2",
        "--max-output-tokens", "96", "--call-timeout", str(CALL_TIMEOUT),
        "--concurrency", "1"], env=ENV)
    assert result.exit_code == 0, f"{result.output}\n{llama_server.log_tail()}"
    [attempt_dir] = list(out.glob("*/*/attempt_1"))
    outcome = AttemptResult.model_validate_json((attempt_dir / "run_result.json").read_text())
    assert outcome.state in ("completed", "budget_exhausted"), outcome
    assert outcome.steps <= 2 and outcome.usage.total_tokens
    for name in ("initial_messages.json", "verifiers.json", "trajectory.json",
                 "agent_config.json", "orchestrator_extra_args.json"):
        assert (attempt_dir / name).is_file(), name
    assert json.loads((attempt_dir / "orchestrator_extra_args.json").read_text())[
        "max_tokens"] == 96
    [row] = csv.DictReader((attempt_dir.parents[1] / "results.csv").open())
    assert (row["status"], row["agent_status"]) == ("ungraded", outcome.state)
    [attempt] = load_runs([out]).attempts
    assert attempt.state == "ungraded", "the agent's own ending: a judge grades it"


def test_audit_with_every_model_step_then_suggest(llama_server: LlamaServer,
                                                  tmp_path: Path) -> None:
    """The judge on the controls, model lints and model near misses, then suggestions, on a
    one-task benchmark: every step answers (no provider failure) and the judge's replies parse."""
    task = make_task()
    bench = make_benchmark(tmp_path / "bench", tasks=[task])
    make_variant(bench / "runs", "m1-base", "m/one", [
        (task, 1, {"task_1_c1": "fail", "task_1_c2": "fail"}),
        (task, 2, {"task_1_c1": "pass", "task_1_c2": "fail"})])
    out = tmp_path / "out"
    model = ["--api-base", llama_server.url, "--call-timeout", str(CALL_TIMEOUT)]
    env = {**ENV, "RUBRIC_AUDIT_CACHE": str(tmp_path / "cache.db")}  # every reply asked anew
    result = CliRunner().invoke(app, [
        "audit", str(bench), "--out", str(out), "--judge", llama_server.model,
        "--lint-model", llama_server.model, "--near-miss-model", llama_server.model,
        "--concurrency", "1", *model], env=env)
    assert result.exit_code == 0, f"{result.output}\n{llama_server.log_tail()}"
    audited = json.loads((out / "audit.json").read_text())
    assert audited["model_failures"] == [], audited["model_failures"]
    [replies] = audited["judge_replies"]
    assert replies["replies"] > 0 and replies["parse_rate"] >= 0.95, replies
    suggested = CliRunner().invoke(app, ["suggest", str(out), "--model", llama_server.model,
                                         *model], env=env)
    assert suggested.exit_code == 0, f"{suggested.output}\n{llama_server.log_tail()}"
    # plumbing, not quality: the one queued task's reply is stored or counted unusable, and the
    # provider answered (a 270M model may well name no label the task offers)
    stored = re.search(r"Stored (\d+) suggestions", suggested.stdout)
    unusable = re.search(r"(\d+) replies unusable", suggested.stdout)
    assert stored is not None and "got none" not in suggested.stdout, suggested.stdout
    assert int(stored.group(1)) + (int(unusable.group(1)) if unusable else 0) == 1, \
        suggested.stdout
