"""The agent runner, through litellm, against a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from rubric_audit.cli import app
from rubric_audit.core.llm import ModelConfig
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.load.runs import load_runs
from rubric_audit.run.runner import AttemptResult, Budget, Runner, worker_context
from rubric_audit.run.variants import make_variant
from tests.conftest import SAMPLE
from tests.fakes.openai_server import FakeOpenAI, Reply, error, scripted, text, tool_call

MODEL = "openai/fake-agent"


@pytest.fixture(scope="module")
def sample():
    return load_benchmark(SAMPLE)


def tool_turns(body: dict[str, Any]) -> int:
    return sum(m["role"] == "tool" for m in body["messages"])


def reads_mail_and_workbook(body: dict[str, Any]) -> Reply:
    """A scripted agent: search mail, read the model's DCF, then answer."""
    steps = [
        tool_call("mail_search", {"text": "revolving"}),
        tool_call("files_read_sheet", {"path": "Project_Nordlys/Nordlys_Model.xlsx",
                                       "sheet": "DCF", "cell_range": "B18:B18"}),
        tool_call("final_answer", {"answer": "NOK 47.63 per share"}),
    ]
    return steps[min(tool_turns(body), len(steps) - 1)]


def runner_for(sample, tmp_path: Path, server: FakeOpenAI, **budget: Any) -> Runner:
    variant = make_variant(MODEL, None, None, [], [])
    config = ModelConfig(model=MODEL, api_base=server.url, api_key="sk-test", backoff=0.01,
                         retries=2)
    return Runner(sample, tmp_path / "runs", variant, config, Budget(**budget))


def run_one(runner: Runner, task) -> AttemptResult:
    """Run attempt 1 of `task` the way the CLI does, and read back how it ended."""
    anyio.run(runner.run, [(task, 1)], 1)
    path = runner.folder / task.id / "attempt_1" / "run_result.json"
    return AttemptResult.model_validate_json(path.read_text())


def test_scripted_model_reads_mail_and_file_then_answers(sample, tmp_path: Path) -> None:
    with FakeOpenAI(reads_mail_and_workbook) as server:
        runner = runner_for(sample, tmp_path, server)
        result = run_one(runner, sample.task("nordlys_06"))
    assert (result.state, result.steps, result.usage.total_tokens) == ("completed", 3, 360)
    folder = tmp_path / "runs" / runner.variant.name / sample.task("nordlys_06").id / "attempt_1"
    trajectory = json.loads((folder / "trajectory.json").read_text())
    tool_results = [m["content"] for m in trajectory["messages"] if m["role"] == "tool"]
    assert "nordlys-netdebt@nordlysfoods.no" in tool_results[0]
    assert "2360.03" in tool_results[1]
    assert trajectory["output"] == "NOK 47.63 per share" and trajectory["status"] == "completed"
    sent_tools = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert {"mail_search", "files_read_sheet", "final_answer"} <= sent_tools
    telemetry = [json.loads(line) for line in (folder / "telemetry.jsonl").read_text().splitlines()]
    assert [t["tool"] for t in telemetry] == ["mail_search", "files_read_sheet"]
    [attempt] = load_runs([tmp_path / "runs"]).attempts
    assert (attempt.answer, attempt.model, attempt.index) == ("NOK 47.63 per share", MODEL, 1)
    assert (attempt.state, attempt.unavailable_reason) == ("ungraded", None), \
        "it ran and answered; no grader has graded it yet"


def test_rate_limit_then_success(sample, tmp_path: Path) -> None:
    with FakeOpenAI(scripted([error(429), tool_call("final_answer", {"answer": "45 days"})])
                    ) as server:
        result = run_one(runner_for(sample, tmp_path, server), sample.task("meridian_04"))
        assert len(server.requests) == 2
    assert result.state == "completed"


def test_provider_that_keeps_failing_is_unavailable(sample, tmp_path: Path) -> None:
    with FakeOpenAI(scripted([error(503)])) as server:
        runner = runner_for(sample, tmp_path, server)
        result = run_one(runner, sample.task("meridian_04"))
        assert len(server.requests) == 3, "one try and two retries"
    assert result.state == "unavailable" and "ServiceUnavailable" in result.reason
    failures = (runner.folder / "results.failures.jsonl").read_text().splitlines()
    assert json.loads(failures[0])["attempt"] == 1
    [attempt] = load_runs([tmp_path / "runs"]).attempts
    assert attempt.state == "unavailable" and "ServiceUnavailable" in attempt.unavailable_reason


@pytest.mark.parametrize("reply", [tool_call("mail_list", {}), text("Still thinking.")])
def test_model_that_never_answers_exhausts_the_budget(sample, tmp_path: Path, reply) -> None:
    with FakeOpenAI(scripted([reply])) as server:
        runner = runner_for(sample, tmp_path, server, max_steps=4)
        result = run_one(runner, sample.task("kestrel_06"))
        assert len(server.requests) == 4
    assert result.state == "budget_exhausted" and "step budget of 4" in result.reason
    [row] = csv.DictReader((runner.folder / "results.csv").open())
    assert (row["status"], row["agent_status"]) == ("ungraded", "budget_exhausted")
    [attempt] = load_runs([runner.folder]).attempts
    assert attempt.state == "ungraded", "the agent's own failure: a judge grades it, never unavailable"


def test_token_and_wall_time_budgets(sample, tmp_path: Path) -> None:
    with FakeOpenAI(scripted([tool_call("mail_list", {})])) as server:
        result = run_one(runner_for(sample, tmp_path / "a", server, max_tokens=250),
                         sample.task("kestrel_06"))
    assert result.state == "budget_exhausted" and "token budget of 250" in result.reason
    with FakeOpenAI(scripted([tool_call("mail_list", {})]), latency=0.3) as server:
        result = run_one(runner_for(sample, tmp_path / "b", server, timeout=1.0),
                         sample.task("kestrel_06"))
    assert result.state == "budget_exhausted" and "wall-time budget" in result.reason


def test_malformed_tool_arguments_go_back_to_the_model(sample, tmp_path: Path) -> None:
    replies = [tool_call("files_read", "{not json"), tool_call("files_read", {"path": 7}),
               tool_call("final_answer", {"answer": "done"})]
    with FakeOpenAI(scripted(replies)) as server:
        runner = runner_for(sample, tmp_path, server)
        result = run_one(runner, sample.task("kestrel_06"))
        third = server.requests[2]["messages"]
    assert result.state == "completed"
    errors = [m["content"] for m in third if m["role"] == "tool"]
    assert errors[0].startswith("ERROR: the arguments are not valid JSON")
    assert errors[1].startswith("ERROR:") and "valid string" in errors[1]


def test_a_system_prompt_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    prompt = tmp_path / "system.txt"
    prompt.write_bytes(b"You are an agent.\xff")
    result = CliRunner().invoke(app, ["run", str(SAMPLE), "--model", MODEL, "--out",
                                      str(tmp_path / "runs"), "--tasks", "kestrel_06",
                                      "--system-prompt", str(prompt),
                                      "--api-base", "http://127.0.0.1:9/v1"],
                                env={"OPENAI_API_KEY": "sk-test"})
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.stderr.strip() == f"error: {prompt}: not UTF-8 text (byte 17)"
    assert not (tmp_path / "runs").exists()


def test_variant_stores_the_prompt_with_the_sentence_added(tmp_path: Path) -> None:
    sentence = "Read every email before you answer."
    with FakeOpenAI(scripted([tool_call("final_answer", {"answer": "ok"})])) as server:
        args = ["run", str(SAMPLE), "--model", MODEL, "--out", str(tmp_path / "runs"),
                "--tasks", "kestrel_06,kestrel_07", "--variant", "mail-first",
                "--add-sentence", sentence, "--api-base", server.url]
        result = CliRunner().invoke(app, args, env={"OPENAI_API_KEY": "sk-test"})
        assert result.exit_code == 0, result.output
        assert all(r["messages"][0]["content"].endswith(sentence) for r in server.work_requests)
    folder = tmp_path / "runs" / "mail-first"
    sent = json.loads(next(folder.glob("*/attempt_1/initial_messages.json")).read_text())
    assert sent[0]["content"].endswith(" " + sentence)
    assert json.loads((folder / "variant.json").read_text())["added"] == [sentence]
    other = CliRunner().invoke(app, [*args[:-4], "--add-sentence", "Something else.",
                                     "--api-base", "http://127.0.0.1:9/v1"])
    assert other.exit_code == 2 and "already exists" in other.stderr


def test_run_without_a_terminal_prints_progress_lines_and_caps_each_step(
        tmp_path: Path) -> None:
    with FakeOpenAI(scripted([tool_call("final_answer", {"answer": "ok"})])) as server:
        result = CliRunner().invoke(app, [
            "run", str(SAMPLE), "--model", MODEL, "--out", str(tmp_path / "runs"), "--tasks",
            "kestrel_06,kestrel_07", "--api-base", server.url, "--max-output-tokens", "300"],
            env={"OPENAI_API_KEY": "sk-test"})
        assert result.exit_code == 0, result.output
        assert {r["max_tokens"] for r in server.work_requests} == {300}
    lines = [line for line in result.stderr.splitlines() if " attempts (" in line]
    assert lines and lines[-1].split(": ", 1)[1].startswith("2/2 attempts (completed 2 |"), \
        result.stderr


def test_interrupted_run_resumes_without_duplicates(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    args = [sys.executable, "-m", "rubric_audit", "run", str(SAMPLE), "--model", MODEL,
            "--out", str(runs), "--tasks", "kestrel_06,kestrel_07,meridian_04",
            "--attempts", "2", "--concurrency", "2", "--variant", "v"]
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    with FakeOpenAI(scripted([tool_call("final_answer", {"answer": "ok"})]),
                    latency=0.5) as server:
        proc = subprocess.Popen([*args, "--api-base", server.url], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not list(runs.glob("v/*/attempt_*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        finished_before = len(list(runs.glob("v/*/attempt_*")))
        assert 1 <= finished_before < 6
        done = subprocess.run([*args, "--api-base", server.url], env=env, capture_output=True,
                              text=True, check=False)
        assert done.returncode == 0, done.stderr
        assert f"{6 - finished_before} attempts to run, {finished_before} already finished" \
            in done.stdout
    attempts = sorted(p.relative_to(runs / "v").as_posix() for p in runs.glob("v/*/attempt_*"))
    assert len(attempts) == 6 and {a.split("/")[1] for a in attempts} == {"attempt_1",
                                                                         "attempt_2"}
    assert not list(runs.rglob(".attempt_*")), "no half-written attempt folder is left"
    assert len(load_runs([runs / "v"]).attempts) == 6


def test_attempts_shared_across_worker_processes(sample, tmp_path: Path) -> None:
    with FakeOpenAI(scripted([tool_call("final_answer", {"answer": "ok"})])) as server:
        runner = runner_for(sample, tmp_path, server)
        tasks = [sample.task(n) for n in ("kestrel_06", "kestrel_07", "meridian_04")]
        seen: list[str] = []
        states = runner.run_in_processes([(t, 1) for t in tasks], 4, 2,
                                         lambda r: seen.append(r.task_id))
    assert states == {"completed": 3} and sorted(seen) == sorted(t.id for t in tasks)
    rows = (runner.folder / "results.csv").read_text().splitlines()
    assert len(rows) == 4, "the parent writes every worker's attempts to results.csv"
    assert len(load_runs([runner.folder]).attempts) == 3


def _report_state(sender: Any) -> None:
    """What a worker process starts with: litellm loaded, its cached clients, threads."""
    import threading

    litellm = sys.modules.get("litellm")
    cache = getattr(litellm, "in_memory_llm_clients_cache", None)
    sender.send({"litellm_imported": litellm is not None,
                 "cached_clients": sorted(getattr(cache, "cache_dict", {})),
                 "threads": threading.active_count()})


def test_a_worker_starts_from_a_clean_state(sample, tmp_path: Path) -> None:
    """Workers are not forked from the parent, which by then has called models and holds
    litellm's HTTP clients (and their sockets): they come from a server process that has only
    imported the modules they need."""
    import litellm

    with FakeOpenAI(scripted([tool_call("final_answer", {"answer": "ok"})])) as server:
        run_one(runner_for(sample, tmp_path, server), sample.task("kestrel_06"))
    imported = json.loads(subprocess.run(
        [sys.executable, "-c", "import json, litellm; print(json.dumps(sorted("
                               "litellm.in_memory_llm_clients_cache.cache_dict)))"],
        capture_output=True, text=True, check=True).stdout)
    assert set(litellm.in_memory_llm_clients_cache.cache_dict) - set(imported), \
        "the parent holds clients of its calls"
    context = worker_context()
    reader, sender = context.Pipe(duplex=False)
    worker = context.Process(target=_report_state, args=(sender,))
    worker.start()
    sender.close()
    state = reader.recv()
    worker.join()
    assert state == {"litellm_imported": True, "cached_clients": imported, "threads": 1}


@contextmanager
def within(seconds: int) -> Iterator[None]:
    """A hang in the block fails the test (TimeoutError), not the whole suite."""
    def hung(*_: object) -> None:
        raise TimeoutError(f"still waiting after {seconds} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_a_worker_process_that_dies_is_noticed(sample, tmp_path: Path) -> None:
    """A worker killed mid-run (OOM, kill -9): the parent waited forever for its attempts; it
    sees the worker's exit and reports those it never finished as unavailable, unwritten."""
    import multiprocessing

    def kill_a_worker_once(result: AttemptResult) -> None:
        seen.append(result)
        if len(seen) == 1:
            worker = multiprocessing.active_children()[0]
            os.kill(worker.pid, signal.SIGKILL)

    seen: list[AttemptResult] = []
    with within(60), FakeOpenAI(scripted([tool_call("final_answer", {"answer": "ok"})]),
                                latency=0.3) as server:
        runner = runner_for(sample, tmp_path, server)
        tasks = [sample.task(n) for n in ("kestrel_06", "kestrel_07", "meridian_04")]
        todo = [(t, k) for t in tasks for k in (1, 2)]
        states = runner.run_in_processes(todo, 2, 2, kill_a_worker_once)
    assert sorted((r.task_id, r.attempt) for r in seen) == sorted((t.id, k) for t, k in todo)
    lost = [r for r in seen if r.state == "unavailable"]
    assert lost and states == {"completed": 6 - len(lost), "unavailable": len(lost)}
    assert {r.reason for r in lost} == {"the worker process running it died (killed by signal 9)"}
    written = {(p.parent.name, int(p.name.removeprefix("attempt_")))
               for p in runner.folder.glob("*/attempt_*")}
    assert written == {(r.task_id, r.attempt) for r in seen if r.state == "completed"}


@pytest.mark.parametrize("processes", [1, 2])
def test_unusable_input_inside_the_runs_task_group_is_one_line(tmp_path: Path,
                                                               processes: int) -> None:
    """A world file the workspace cannot read is an InputError raised inside the runner's task
    group (an ExceptionGroup, exit 1, before) or a worker process (the parent waited forever)."""
    from tests.conftest import make_benchmark

    bench = make_benchmark(tmp_path / "bench")
    ics = bench / "worlds" / "world_a" / ".apps_data" / "calendar" / "work.ics"
    ics.write_text("x")
    with within(60), FakeOpenAI(scripted([tool_call("final_answer", {"answer": "ok"})])) as server:
        result = CliRunner().invoke(app, ["run", str(bench), "--model", MODEL, "--out",
                                          str(tmp_path / "runs"), "--attempts", "2",
                                          "--processes", str(processes),
                                          "--api-base", server.url],
                                    env={"OPENAI_API_KEY": "sk-test"})
    assert result.exit_code == 2, (result.output, result.exception)
    [line] = result.stderr.strip().splitlines()[-1:]
    assert line.startswith("error: .apps_data/calendar/work.ics: not a valid iCalendar file"), line
    assert "internal error" not in result.stderr


def test_rerun_failures_runs_one_more_attempt_on_the_all_fail_tasks(tmp_path: Path) -> None:
    out = tmp_path / "audit"
    assert CliRunner().invoke(app, ["audit", str(SAMPLE), "--out", str(out)]).exit_code == 0
    runs = tmp_path / "runs"
    with FakeOpenAI(scripted([tool_call("final_answer", {"answer": "ok"})])) as server:
        args = ["run", str(SAMPLE), "--model", MODEL, "--out", str(runs), "--variant", "again",
                "--rerun-failures", str(out / "audit.db"), "--api-base", server.url]
        first = CliRunner().invoke(app, args, env={"OPENAI_API_KEY": "sk-test"})
        second = CliRunner().invoke(app, args, env={"OPENAI_API_KEY": "sk-test"})
    assert first.exit_code == 0 and second.exit_code == 0, first.output + second.output
    bench = load_benchmark(SAMPLE)
    expected = {bench.task(n).id for n in ("nordlys_02", "nordlys_03", "nordlys_04",
                                           "meridian_04", "meridian_05", "kestrel_02",
                                           "kestrel_03")}
    folders = sorted(p.relative_to(runs / "again").as_posix()
                     for p in (runs / "again").glob("*/attempt_*"))
    assert {f.split("/")[0] for f in folders} == expected
    assert {f.split("/")[1] for f in folders} == {"attempt_1", "attempt_2"}, \
        "each rerun adds one attempt beyond the last"


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", MODEL])
def test_usage_carries_the_price_litellm_knows(model: str) -> None:
    """The cost litellm computed with its reply is the one recorded (unknown stays None)."""
    import litellm

    from rubric_audit.core.llm import complete

    with FakeOpenAI(lambda body: text("ok")) as server:
        config = ModelConfig(model=model, api_base=server.url, api_key="sk-test")
        reply = anyio.run(complete, config, [{"role": "user", "content": "hi"}])
    if model == MODEL:
        assert reply.usage.cost is None
        return
    expected = litellm.cost_per_token(model=model,
                                      prompt_tokens=reply.usage.prompt_tokens,
                                      completion_tokens=reply.usage.completion_tokens)
    assert reply.usage.cost == pytest.approx(sum(expected)) and reply.usage.cost > 0


@pytest.mark.parametrize("content", ["{not json", '{"name": 3}', "\xff"])
def test_a_broken_variant_record_is_one_input_error(tmp_path: Path, content: str) -> None:
    from rubric_audit.core.errors import InputError
    from rubric_audit.run.variants import check_variant

    spec = make_variant("openai/m", "v1", None, [], [])
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "variant.json").write_bytes(content.encode("latin-1"))
    with pytest.raises(InputError, match=r"variant\.json"):
        check_variant(tmp_path, spec)


def test_a_broken_run_result_is_one_input_error(tmp_path: Path) -> None:
    from rubric_audit.core.errors import InputError

    bench = load_benchmark(SAMPLE)
    runner = Runner(bench, tmp_path, make_variant("openai/m", "v1", None, [], []),
                    ModelConfig(model="openai/m"), Budget())
    result = runner.folder / "kestrel_01" / "attempt_1" / "run_result.json"
    result.parent.mkdir(parents=True)
    result.write_text('{"task_id": "kestrel_01", "attempt": "first"}')
    with pytest.raises(InputError, match=r"run_result\.json: attempt"):
        runner.write_results()
