"""Trajectories normalised from Archipelago, inspect_ai and ATIF, and kept compressed in audit.db."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from rubric_audit.audit.job import import_runs
from rubric_audit.load.runs import load_runs
from rubric_audit.load.trajectory import normalise_trajectory
from rubric_audit.store.audit_store import MIGRATIONS, AuditStore
from tests.conftest import SHARED_RUNS

FIXTURES = Path(__file__).parent / "fixtures"
DCF_ATTEMPT = SHARED_RUNS / "grok43high-dc-rs" / "task_ad52b80191404ec2afc47fc1c29604b4"
ATIF = FIXTURES / "harbor-jobs/agent-diagnostics/tests/fixtures/golden_corpus/2448941ec16d"
TERMINUS = FIXTURES / ("harbor-jobs/harbor/tests/golden/terminus_2/"
                       "hello-world-invalid-json.trajectory.json")
INSPECT = FIXTURES / ("inspect-logs/inspect_ai/tests/analysis/test_logs/"
                      "2025-05-12T20-28-26-04-00_security-guide.json")


def test_archipelago_calls_carry_their_results() -> None:
    raw = json.loads((DCF_ATTEMPT / "trajectory.json").read_text())
    trajectory = normalise_trajectory(raw["messages"], "archipelago")
    assert [s.role for s in trajectory.steps[:3]] == ["system", "user", "assistant"]
    calls = [call for _, call in trajectory.calls()]
    tool_messages = [m for m in raw["messages"] if m["role"] == "tool"]
    assert len(calls) == len(tool_messages), "every result found its call: no orphan tool steps"
    assert all(s.role != "tool" for s in trajectory.steps)
    sheets = next(c for c in calls if c.name == "sheets_server_sheets")
    assert "list_tabs" in sheets.arguments and "WACC Build" in (sheets.result or "")
    assert calls[-1].name == "final_answer" and calls[-1].result == "48.31"
    assert trajectory.steps[2].reasoning.startswith("The task is")


def test_a_result_without_its_call_is_a_tool_step() -> None:
    trajectory = normalise_trajectory(
        [{"role": "user", "content": "go"}, {"role": "tool", "name": "final_answer",
                                             "content": "1.2m"}, "not a message"], "archipelago")
    assert [s.role for s in trajectory.steps] == ["user", "tool"]
    assert trajectory.steps[1].tool_calls[0].name == "final_answer"
    assert trajectory.steps[1].tool_calls[0].result == "1.2m"


def test_inspect_messages_with_typed_content_and_tool_errors() -> None:
    sample = json.loads(INSPECT.read_text())["samples"][0]
    real = normalise_trajectory(sample["messages"], "inspect")
    assert [s.role for s in real.steps] == ["system", "user", "assistant"]
    assert "parameterized queries" in real.steps[2].text
    # inspect's own shapes: `function` is the name, `arguments` an object, errors on the result
    trajectory = normalise_trajectory([
        {"role": "assistant", "content": [{"type": "reasoning", "reasoning": "look it up"},
                                          {"type": "text", "text": "Reading."}],
         "tool_calls": [{"id": "t1", "function": "read_sheet", "arguments": {"cell": "B12"}}]},
        {"role": "tool", "tool_call_id": "t1", "function": "read_sheet", "content": "",
         "error": {"type": "timeout", "message": "took too long"}}], "inspect")
    step = trajectory.steps[0]
    assert (step.text, step.reasoning) == ("Reading.", "look it up")
    call = step.tool_calls[0]
    assert (call.name, json.loads(call.arguments), call.result, call.error) == (
        "read_sheet", {"cell": "B12"}, "took too long", True)


def test_atif_steps_with_observations_and_tokens() -> None:
    raw = json.loads((ATIF / "trajectory.json").read_text())
    trajectory = normalise_trajectory(raw, "atif")
    assert len(trajectory.steps) == len(raw["steps"])
    calls = [call for _, call in trajectory.calls()]
    recorded = [c for s in raw["steps"] for c in s.get("tool_calls") or []]
    assert [c.name for c in calls] == [c["function_name"] for c in recorded]
    assert any(s.tokens for s in trajectory.steps) == any(
        (s.get("metrics") or {}).get("completion_tokens") for s in raw["steps"])


def test_store_keeps_trajectories_compressed_and_apart(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    import_runs([SHARED_RUNS], db, None)
    loaded = {a.id: a.trajectory for a in load_runs([SHARED_RUNS]).attempts}
    with AuditStore(db) as store:
        assert all(a.trajectory is None for a in store.attempts()), "attempt rows stay light"
        stored = dict(store.trajectories())
        assert stored == loaded
        rows = store.db.execute("SELECT group_concat(json) FROM attempts").fetchone()[0]
        packed = store.db.execute("SELECT sum(length(data)) FROM trajectories").fetchone()[0]
    plain = sum(len(t.model_dump_json()) for t in loaded.values() if t)
    assert packed < plain / 3, "compressed"
    assert '"trajectory"' not in rows


def test_older_store_moves_inline_messages_out(tmp_path: Path) -> None:
    db_path = tmp_path / "audit.db"
    step = next(i for i, m in enumerate(MIGRATIONS) if callable(m))
    db = sqlite3.connect(db_path, isolation_level=None)
    for script in MIGRATIONS[:step]:
        db.executescript(script)
    messages = [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "function": {"name": "files_read", "arguments": "{\"path\": \"a.md\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "name": "files_read", "content": "151.2"}]
    record = {"id": "v/t/1", "task_id": "t", "model": "m", "variant": "v", "index": 1,
              "state": "graded", "answer": "151.2", "trajectory": messages}
    db.execute("INSERT INTO attempts VALUES ('v/t/1', 't', 'm', 'v', 1, 'graded', 'f', ?)",
               (json.dumps(record),))
    db.execute(f"PRAGMA user_version = {step}")
    db.close()
    with AuditStore(db_path) as store:
        (attempt,) = store.attempts()
        trajectory = store.trajectory(attempt.id)
    assert attempt.answer == "151.2" and attempt.trajectory is None
    assert trajectory is not None and trajectory.calls()[0][1].result == "151.2"


def _atif_step(calls: int, results: list[str | None], source: str = "agent") -> dict:
    """One ATIF agent step with `calls` tool calls (ids c0, c1, ...) and its observation's
    results, each answering the call id given (None: no source_call_id)."""
    return {"step_id": 2, "source": source, "message": "",
            "tool_calls": [{"tool_call_id": f"c{i}", "function_name": "bash",
                            "arguments": {"cmd": f"ls {i}"}} for i in range(calls)],
            "observation": {"results": [
                {"content": f"out {i}", **({} if call is None else {"source_call_id": call})}
                for i, call in enumerate(results)]}}


def _normalised(*steps: dict):
    return normalise_trajectory({"schema_version": "ATIF-v1.5", "steps": [
        {"step_id": 1, "source": "user", "message": "go"}, *steps]}, "atif")


def test_atif_results_without_a_call_id_answer_their_own_steps_calls() -> None:
    one = _normalised(_atif_step(1, [None, None]))
    assert [(c.name, c.result) for _, c in one.calls()] == [("bash", "out 0\nout 1")]
    assert [s.role for s in one.steps] == ["user", "assistant"], "no step was added"
    in_order = _normalised(_atif_step(2, [None, None]))
    assert [c.result for _, c in in_order.calls()] == ["out 0", "out 1"]
    mixed = _normalised(_atif_step(2, ["c1", None]))  # c1 by its id, the other to c0
    assert [c.result for _, c in mixed.calls()] == ["out 1", "out 0"]


def test_atif_results_no_call_is_known_for_stay_results_and_add_no_call() -> None:
    for step in (_atif_step(0, [None]),           # terminus-2: keystrokes, no tool calls
                 _atif_step(3, [None, None]),     # two results for three calls: which is which?
                 _atif_step(1, ["elsewhere"])):   # an id no call has
        trajectory = _normalised(step)
        calls = step["tool_calls"]
        assert len(trajectory.calls()) == len(calls), "results are never counted as calls"
        loose = [s for s in trajectory.steps if s.role == "tool"]
        assert [s.text for s in loose] == [f"out {i}" for i in range(len(loose))]
        assert all(not s.tool_calls for s in loose) and loose


def test_terminus_2_observations_count_no_call_the_agent_did_not_make() -> None:
    """Harbor's own terminus-2 trajectory: its observations carry no source_call_id where the
    step made one call (or none, when the reply did not parse)."""
    raw = json.loads(TERMINUS.read_text())
    trajectory = normalise_trajectory(raw, "atif")
    recorded = [c["tool_call_id"] for s in raw["steps"] for c in s.get("tool_calls") or []]
    assert [c.id for _, c in trajectory.calls()] == recorded
    assert all(c.result is not None for _, c in trajectory.calls()), "each has its output"
    [loose] = [s for s in trajectory.steps if s.role == "tool"]
    assert loose.text.startswith("Previous response had parsing errors") and not loose.tool_calls
