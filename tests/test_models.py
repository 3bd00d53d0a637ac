"""The door to models: every model command checks its models before any work, and retries only
what may pass on a second try. Real litellm calls, against the fake server or no server at all."""

from __future__ import annotations

import importlib
import json
import shutil
import socket
import tempfile
import time
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from rubric_audit.cli import app
from rubric_audit.core.llm import (
    AGENT_OUTPUT_CAP,
    STRUCTURED_OUTPUT_CAP,
    ModelConfig,
    ModelUnavailable,
    _quiet_libraries,
    capability_mode,
    check_models,
    complete,
    provider_answer,
    structured,
)
from tests.conftest import SAMPLE, make_benchmark, make_task, make_variant
from tests.fakes.openai_server import FakeOpenAI, Reply, error, scripted, text, tool_call

NO_KEY = {"OPENAI_API_KEY": None, "OPENAI_API_BASE": None, "OPENAI_BASE_URL": None}


def files_under(folder: Path) -> dict[str, int]:
    return {p.relative_to(folder).as_posix(): p.stat().st_mtime_ns
            for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """Cache and config folders inside tmp_path, so 'nothing written' covers them too.

    litellm is imported first: the timings below bound what the command does (no retries),
    not the one-time import, which on a loaded machine alone can take several seconds.
    """
    importlib.import_module("litellm")
    return {"XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "RUBRIC_AUDIT_CACHE": None}


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_line_exit_2(result, *expected: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and len(result.stderr.strip().splitlines()) == 1, result.stderr
    for part in expected:
        assert part in result.stderr, result.stderr


def test_grade_without_a_key_stops_at_once_and_writes_nothing(tmp_path: Path, home) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(SAMPLE / "runs", runs)
    before = files_under(tmp_path)
    started = time.monotonic()
    result = CliRunner().invoke(app, ["grade", str(runs), "--judge", "openai/gpt-4o-mini"],
                                env={**NO_KEY, **home})
    elapsed = time.monotonic() - started
    one_line_exit_2(result, "openai/gpt-4o-mini", "--judge", "OPENAI_API_KEY")
    assert elapsed < 10, f"{elapsed:.1f} s: a missing key is never retried"
    assert files_under(tmp_path) == before


def test_suggest_without_a_key_stops_at_once_and_writes_nothing(tmp_path: Path, home) -> None:
    task = make_task()
    bench = make_benchmark(tmp_path / "b", tasks=[task])
    make_variant(bench / "runs", "m1", "m/one", [(task, 1, {"task_1_c1": "fail",
                                                             "task_1_c2": "fail"})])
    assert CliRunner().invoke(app, ["audit", str(bench), "--out", str(tmp_path / "out")]
                              ).exit_code == 0
    before = files_under(tmp_path)
    started = time.monotonic()
    result = CliRunner().invoke(app, ["suggest", str(tmp_path / "out"), "--model",
                                      "openai/gpt-4o-mini"], env={**NO_KEY, **home})
    one_line_exit_2(result, "openai/gpt-4o-mini", "--model", "OPENAI_API_KEY")
    assert time.monotonic() - started < 10
    assert files_under(tmp_path) == before


@pytest.mark.parametrize("command", [
    ["audit", str(SAMPLE), "--judge", "openai/gpt-4o-mini", "--out"],
    ["audit", str(SAMPLE), "--lint-model", "openai/gpt-4o-mini", "--out"],
    ["audit", str(SAMPLE), "--near-miss-model", "openai/gpt-4o-mini", "--out"],
    ["run", str(SAMPLE), "--model", "openai/gpt-4o-mini", "--tasks", "kestrel_06", "--out"],
    ["ablate", str(SAMPLE), "--model", "openai/gpt-4o-mini", "--sentence", "Read mail.",
     "--judge", "openai/gpt-4o-mini", "--out"],
], ids=["audit-judge", "audit-lint", "audit-near-miss", "run", "ablate"])
def test_every_model_command_checks_first(command: list[str], tmp_path: Path, home) -> None:
    result = CliRunner().invoke(app, [*command, str(tmp_path / "out")], env={**NO_KEY, **home})
    option = next(a for a in command if a in ("--judge", "--lint-model", "--near-miss-model",
                                              "--model"))
    one_line_exit_2(result, "openai/gpt-4o-mini", option, "no credentials: set OPENAI_API_KEY")
    assert files_under(tmp_path) == {}


def grade_against(server_url: str, tmp_path: Path, judge: str = "openai/fake-judge"):
    runs = tmp_path / "runs"
    if not runs.exists():
        shutil.copytree(SAMPLE / "runs" / "atlas-1", runs / "atlas-1")
    before = files_under(runs)
    result = CliRunner().invoke(app, ["grade", str(runs), "--judge", judge, "--api-base",
                                      server_url, "--cache", str(tmp_path / "c.db")],
                                env={"OPENAI_API_KEY": "sk-test"})
    assert files_under(runs) == before and not (tmp_path / "c.db").exists()
    return result


def test_a_rejected_key_is_one_line_and_never_retried(tmp_path: Path) -> None:
    with FakeOpenAI(scripted([error(401)])) as server:
        result = grade_against(server.url, tmp_path)
        assert len(server.requests) == 1
    one_line_exit_2(result, "openai/fake-judge", "--judge", "credentials rejected (HTTP 401)",
                    "OPENAI_API_KEY")


def test_a_model_the_provider_does_not_know(tmp_path: Path) -> None:
    with FakeOpenAI(scripted([error(404)])) as server:
        result = grade_against(server.url, tmp_path, "openai/no-such-model")
        assert len(server.requests) == 1
    one_line_exit_2(result, "openai/no-such-model", "does not know this model")


def test_a_name_litellm_cannot_route(tmp_path: Path) -> None:
    result = grade_against("http://127.0.0.1:9/v1", tmp_path, "no-such-provider-model")
    one_line_exit_2(result, "no-such-provider-model", "unknown model")


def test_an_unreachable_base_url(tmp_path: Path, home) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    started = time.monotonic()
    result = grade_against(url, tmp_path)
    one_line_exit_2(result, f"cannot reach {url}", "--api-base")
    assert time.monotonic() - started < 10, "the check retries once at most"


def test_a_provider_down_at_the_check(tmp_path: Path) -> None:
    with FakeOpenAI(scripted([error(503)])) as server:
        result = grade_against(server.url, tmp_path)
        assert len(server.requests) == 2, "the check retries once"
    one_line_exit_2(result, "openai/fake-judge", "provider unavailable after 2 tries",
                    "ServiceUnavailable")


def config(server: FakeOpenAI, **changes) -> ModelConfig:
    return ModelConfig(model="openai/fake", api_base=server.url, api_key="sk-test",
                       backoff=0.01, **changes)


def test_rate_limit_waits_as_long_as_the_provider_asks() -> None:
    with FakeOpenAI(scripted([error(429, retry_after=1.5), text("ok")])) as server:
        started = time.monotonic()
        reply = anyio.run(complete, config(server), [{"role": "user", "content": "hi"}])
        elapsed = time.monotonic() - started
        assert len(server.requests) == 2
    assert reply.message["content"] == "ok"
    assert elapsed >= 1.5, "Retry-After is honoured (backoff alone would wait 0.01 s)"


def test_server_errors_are_retried_then_given_up() -> None:
    with FakeOpenAI(scripted([error(500), error(502), text("ok")])) as server:
        reply = anyio.run(complete, config(server), [{"role": "user", "content": "hi"}])
        assert len(server.requests) == 3 and reply.message["content"] == "ok"
    with FakeOpenAI(scripted([error(503)])) as server, pytest.raises(ModelUnavailable) as down:
        anyio.run(complete, config(server, retries=2), [{"role": "user", "content": "hi"}])
    assert len(server.requests) == 3 and "ServiceUnavailable" in down.value.reason


class Verdict(BaseModel):
    verdict: str


@pytest.mark.parametrize("status", [401, 403, 400])
def test_refusals_during_work_are_never_retried(status: int) -> None:
    messages = [{"role": "user", "content": "hi"}]
    with FakeOpenAI(scripted([error(status)])) as server:
        with pytest.raises(ModelUnavailable):
            anyio.run(complete, config(server), messages)
        assert len(server.requests) == 1
        with pytest.raises(ModelUnavailable):
            anyio.run(structured, config(server), messages, Verdict)
        assert len(server.requests) == 2, "instructor's re-asks are for unparseable replies only"


def test_structured_replies_retry_rate_limits() -> None:
    replies = [error(429, retry_after=0), text('{"verdict": "pass"}')]
    with FakeOpenAI(scripted(replies)) as server:
        reply = anyio.run(structured, config(server), [{"role": "user", "content": "hi"}],
                          Verdict)
        assert len(server.requests) == 2
    assert reply.value.verdict == "pass"


# Bounded calls: an output cap on every call, a timeout that cuts each request.

def test_every_call_carries_an_output_cap_and_the_config_overrides_it() -> None:
    with FakeOpenAI(lambda body: text('{"verdict": "pass"}')) as server:
        anyio.run(complete, config(server), [{"role": "user", "content": "hi"}])
        anyio.run(structured, config(server), [{"role": "user", "content": "hi"}], Verdict)
        anyio.run(complete, config(server, max_output_tokens=77),
                  [{"role": "user", "content": "hi"}])
        caps = [r["max_tokens"] for r in server.requests]
    assert caps == [AGENT_OUTPUT_CAP, STRUCTURED_OUTPUT_CAP, 77]


def test_a_request_past_its_timeout_is_cut_and_retried_then_unavailable() -> None:
    with FakeOpenAI(lambda body: text("ok"), latency=3.0) as server:
        started = time.monotonic()
        with pytest.raises(ModelUnavailable) as slow:
            anyio.run(complete, config(server, timeout=0.5, retries=1),
                      [{"role": "user", "content": "hi"}])
        elapsed = time.monotonic() - started
        assert len(server.requests) == 2, "one try and one retry"
    assert elapsed < 2.5, f"{elapsed:.1f} s: each request is cut at 0.5 s, never waited on"
    assert "0.5 s" in slow.value.reason or "Timeout" in slow.value.reason


def test_the_time_budget_cuts_a_request_at_its_end_and_starts_none_after_it() -> None:
    """A request running when the command's budget ends is cut then (not at its own 120 s
    timeout), is not retried, and is unavailable; a call after the end never reaches the server."""
    from rubric_audit.core.llm import BUDGET_SPENT, deadline_after, litellm_module

    litellm_module()  # imported first: its import (seconds) would spend the budget before the request
    with FakeOpenAI(lambda body: text("ok"), latency=3.0) as server:
        started = time.monotonic()
        with pytest.raises(ModelUnavailable) as spent:
            anyio.run(complete, config(server, deadline=deadline_after(1.0)),
                      [{"role": "user", "content": "hi"}])
        elapsed = time.monotonic() - started
        assert len(server.requests) == 1, "no retry after the budget's end"
        with pytest.raises(ModelUnavailable):
            anyio.run(structured, config(server, deadline=time.monotonic() - 1),
                      [{"role": "user", "content": "hi"}], Verdict)
        assert len(server.requests) == 1, "no request starts after the end"
    assert spent.value.reason == BUDGET_SPENT
    assert 0.9 < elapsed < 2.0, f"{elapsed:.1f} s"


def test_grading_out_of_time_writes_nothing_and_says_how_many_were_left(tmp_path: Path,
                                                                       home) -> None:
    """The check (a few calls of 0.5 s each) is not counted against the budget's calls, but
    the budget runs from the command's start: none is left for the work, whose attempts are
    counted as left for lack of time, not as provider failures, and get no grade file."""
    runs = tmp_path / "runs"
    shutil.copytree(SAMPLE / "runs", runs)
    with FakeOpenAI(lambda body: text('{"rationale": "r", "verdict": "pass"}'),
                    latency=0.5) as server:
        started = time.monotonic()
        result = CliRunner().invoke(app, [
            "grade", str(runs), "--judge", "openai/fake", "--api-base", server.url,
            "--time-budget", "1", "--cache", str(tmp_path / "c.db")],
            env={"OPENAI_API_KEY": "sk-test", **home})
        elapsed = time.monotonic() - started
        checked = len(server.requests)
        assert server.work_requests == []
    assert result.exit_code == 0, result.output
    assert "79 not graded: the time budget was spent" in result.output
    assert "0 could not be graded: provider unavailable" in result.output
    assert not list(runs.rglob("grades/*.json"))
    assert elapsed < checked * 0.5 + 8, f"{elapsed:.1f} s"


def test_a_reply_cut_at_the_output_cap_is_unscored_and_not_re_asked() -> None:
    cut = Reply({"role": "assistant", "content": '{"verdict": "pa'}, finish_reason="length")
    with FakeOpenAI(scripted([cut])) as server:
        reply = anyio.run(structured, config(server, max_output_tokens=5),
                          [{"role": "user", "content": "hi"}], Verdict)
        assert len(server.requests) == 1, "a runaway reply is not asked for again"
    assert reply.value is None and reply.cut
    assert "output cap of 5 tokens" in reply.error
    assert reply.usage.total_tokens == 120, "the cut reply's tokens are counted"


# Structured output by what the provider applies.

def check(server: FakeOpenAI, mode: str | None = None) -> ModelConfig:
    return check_models({"--judge": config(server, structured_mode=mode)},
                        structured={"--judge"})["--judge"]


@pytest.mark.parametrize(("applies", "refuses", "chosen"), [
    ({"json-schema", "json-object-schema", "tools"}, set(), "json-schema"),
    ({"json-object-schema"}, {"json-schema"}, "json-object-schema"),
    ({"tools"}, {"json-schema"}, "tools"),
    (set(), {"json-schema"}, "json"),
], ids=["json-schema", "llama.cpp", "tools-only", "nothing-applied"])
def test_the_check_chooses_the_strictest_mode_the_provider_applies(applies, refuses,
                                                                   chosen) -> None:
    with FakeOpenAI(lambda body: text("ok"), applies=frozenset(applies),
                    refuses=frozenset(refuses)) as server:
        assert check(server).structured_mode == chosen


def test_each_mode_asks_for_the_reply_its_own_way() -> None:
    reply = {"verdict": "pass"}

    def answer(body: dict) -> Reply:
        return (tool_call(body["tools"][0]["function"]["name"], reply) if body.get("tools")
                else text(json.dumps(reply)))

    asked = {}
    for mode in ("json-schema", "json-object-schema", "tools", "json"):
        with FakeOpenAI(answer) as server:
            got = anyio.run(structured, config(server, structured_mode=mode),
                            [{"role": "user", "content": "hi"}], Verdict)
            asked[mode] = server.requests[-1]
        assert got.value.model_dump() == reply, mode
    assert asked["json-schema"]["response_format"]["type"] == "json_schema"
    assert asked["json-object-schema"]["response_format"] == {
        "type": "json_object", "schema": Verdict.model_json_schema()}
    assert asked["tools"]["tool_choice"]["function"]["name"] == asked["tools"]["tools"][0][
        "function"]["name"]
    assert asked["json"]["response_format"] == {"type": "json_object"}


def test_a_mode_the_user_forces_is_checked_and_one_the_provider_refuses_is_one_line(
        tmp_path: Path) -> None:
    with FakeOpenAI(lambda body: text("ok"), refuses=frozenset({"json-schema"})) as server:
        assert check(server, "tools").structured_mode == "tools", "taken, obeyed or not"
        result = CliRunner().invoke(app, [
            "grade", str(SAMPLE / "runs"), "--judge", "openai/fake", "--api-base", server.url,
            "--judge-mode", "json-schema", "--cache", str(tmp_path / "c.db")],
            env={"OPENAI_API_KEY": "sk-test"})
    one_line_exit_2(result, "--judge-mode", "refused json-schema")


def test_capability_data_chooses_for_the_providers_own_endpoint_only() -> None:
    assert capability_mode(ModelConfig(model="openai/gpt-4o-mini")) == "json-schema"
    assert capability_mode(ModelConfig(model="openai/gpt-4o-mini",
                                       api_base="http://127.0.0.1:1/v1")) == "json"


# A check that tells slow from down.

def test_a_slow_server_is_not_called_unreachable(tmp_path: Path) -> None:
    with FakeOpenAI(lambda body: text("ok"), latency=4.0) as server:
        started = time.monotonic()
        result = CliRunner().invoke(app, [
            "grade", str(SAMPLE / "runs"), "--judge", "openai/fake", "--api-base", server.url,
            "--call-timeout", "1", "--cache", str(tmp_path / "c.db")],
            env={"OPENAI_API_KEY": "sk-test"})
        elapsed = time.monotonic() - started
    one_line_exit_2(result, server.url, "within 1 s", "slow or busy, not down")
    assert "cannot reach" not in result.stderr
    assert elapsed < 10, f"{elapsed:.1f} s: two tries of 1 s"


def test_a_server_that_is_down_is_called_so() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    result = grade_against(url, Path(tempfile.mkdtemp()))
    one_line_exit_2(result, f"cannot reach {url}", "connection refused")


def test_a_name_that_does_not_resolve_is_called_so() -> None:
    """Classified from the socket's own error (no lookup is made here)."""
    import httpx

    try:
        try:
            raise socket.gaierror(-2, "Name or service not known")
        except socket.gaierror as lookup:
            raise httpx.ConnectError("no such host") from lookup
    except httpx.ConnectError as failed:
        answer = provider_answer(failed)
    assert (answer.kind, answer.detail) == ("unreachable", "the host name does not resolve (DNS)")
    assert answer.transient


# Quiet libraries.

def test_litellm_log_lines_go_to_the_log_file_not_the_screen(tmp_path: Path, capfd,
                                                            monkeypatch) -> None:
    import logging

    log = tmp_path / "rubric-audit.log"
    monkeypatch.setenv("RUBRIC_AUDIT_LOG", str(log))
    monkeypatch.delenv("RUBRIC_AUDIT_DEBUG", raising=False)
    _quiet_libraries()
    logging.getLogger("LiteLLM").warning("LoggingWorker: event loop changed; test")
    assert "event loop changed" not in capfd.readouterr().err
    assert "event loop changed" in log.read_text()
    monkeypatch.setenv("RUBRIC_AUDIT_DEBUG", "1")
    _quiet_libraries()
    logging.getLogger("LiteLLM").warning("shown with --debug")
    assert "shown with --debug" in capfd.readouterr().err
    monkeypatch.undo()
    _quiet_libraries()  # as the session had it


def test_raw_control_characters_inside_json_strings_are_read_not_re_asked() -> None:
    """llama.cpp's grammar lets a small model write a newline inside a string."""
    with FakeOpenAI(scripted([text('{"verdict": "line one\nline two"}')])) as server:
        reply = anyio.run(structured, config(server), [{"role": "user", "content": "hi"}],
                          Verdict)
        assert len(server.requests) == 1
    assert reply.value.verdict == "line one\nline two"
    assert 0 < reply.longest_request_seconds < 5
