"""`rubric-audit serve` under other harnesses' MCP clients: an inspect_ai agent (its stdio MCP
client, the model being the local fake) and the official MCP Inspector's command-line mode."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLE
from tests.fakes.openai_server import FakeOpenAI, Reply, text, tool_call

WORKSPACE_TOOLS = {
    "mail_list", "mail_search", "mail_read", "mail_send", "mail_reply", "mail_reply_all",
    "mail_forward", "calendar_list", "calendar_read", "calendar_create", "calendar_update",
    "calendar_delete", "chat_list_spaces", "chat_get_history", "chat_post", "chat_reply",
    "chat_list_members", "files_list", "files_read", "files_read_sheet", "files_write"}
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
SERVE = [sys.executable, "-m", "rubric_audit", "serve", str(SAMPLE), "kestrel_06"]


def _agent(request: dict) -> Reply:
    """Look at the calendar, then try a file outside the world, then answer with what it saw."""
    results = [m for m in request["messages"] if m["role"] == "tool"]
    if not results:
        return tool_call("calendar_list", {}, "call_1")
    if len(results) == 1:
        return tool_call("files_read", {"path": "../tasks_and_rubrics.json"}, "call_2")
    return text("Calendar: " + json.dumps([m["content"] for m in results]))


def test_an_inspect_agent_works_in_the_task_world_over_stdio(tmp_path: Path) -> None:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import mcp_server_stdio, mcp_tools

    telemetry = tmp_path / "telemetry.jsonl"
    workspace = mcp_server_stdio(command=SERVE[0], args=[*SERVE[1:], "--telemetry",
                                                         str(telemetry)],
                                 cwd=str(ROOT), env={"PYTHONPATH": str(ROOT)})
    with FakeOpenAI(_agent) as server, pytest.MonkeyPatch.context() as env:
        # A service name of its own: inspect keeps model clients per process, by name.
        env.setenv("SERVECLIENT_BASE_URL", server.url)
        env.setenv("SERVECLIENT_API_KEY", "local")
        task = Task(dataset=[Sample(input="When is the Kestrel steering committee?",
                                    target="Kestrel steering committee")],
                    solver=[use_tools(mcp_tools(workspace)), generate()], scorer=includes())
        [log] = inspect_eval(task, model="openai-api/serveclient/agent-1", log_dir=str(tmp_path / "logs"),
                             display="none", max_retries=1, timeout=120)
        offered = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert offered == WORKSPACE_TOOLS
    assert log.status == "success"
    [sample] = log.samples
    tools = [m for m in sample.messages if m.role == "tool"]
    assert "Kestrel steering committee" in tools[0].text and tools[0].error is None
    assert "path leaves the workspace" in (tools[1].error.message if tools[1].error
                                           else tools[1].text)
    assert sample.scores["includes"].value == "C"
    calls = [json.loads(line) for line in telemetry.read_text().splitlines()]
    assert [c["tool"] for c in calls] == ["calendar_list", "files_read"]


def _inspector() -> list[str]:
    """The MCP Inspector's command: the one .ci/run installs, or npx fetching the pinned one."""
    installed = os.environ.get("MCP_INSPECTOR_BIN")
    if installed and Path(installed).is_file():
        return [installed]
    if shutil.which("node") and shutil.which("npx"):
        return ["npx", "--yes", INSPECTOR]
    if os.environ.get("REQUIRE_MCP_INSPECTOR"):
        pytest.fail("the MCP Inspector is required here but node/npx is missing")
    pytest.skip("needs node and npx for the MCP Inspector (.ci/run installs them)")


def _cli(*args: str) -> dict:
    done = subprocess.run([*_inspector(), "--cli", *SERVE, *args], capture_output=True,
                          text=True, timeout=300, cwd=ROOT, env={**os.environ,
                                                                 "PYTHONPATH": str(ROOT)})
    assert done.stdout.strip(), done.stderr
    reply, _ = json.JSONDecoder().raw_decode(done.stdout.strip())
    return reply


def test_the_mcp_inspector_lists_and_calls_the_workspace_tools() -> None:
    listed = _cli("--method", "tools/list")
    assert {t["name"] for t in listed["tools"]} == WORKSPACE_TOOLS
    events = _cli("--method", "tools/call", "--tool-name", "calendar_list")
    assert events["isError"] is False
    assert "Kestrel steering committee" in events["content"][0]["text"]
    refused = _cli("--method", "tools/call", "--tool-name", "files_read", "--tool-arg",
                   "path=../tasks_and_rubrics.json")
    assert refused["isError"] is True
    assert "path leaves the workspace" in refused["content"][0]["text"]
