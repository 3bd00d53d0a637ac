"""Where an answer's numbers came from: seen in a tool result, computed from two, or unsupported."""

from __future__ import annotations

import json
from pathlib import Path

from mock_workspace.session import Session
from rubric_audit.audit import check_provenance, import_runs
from rubric_audit.checks.provenance import answer_provenance, answer_value_unsupported
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.load.runs import load_runs
from rubric_audit.model import Attempt, Step, ToolCall, Trajectory
from rubric_audit.store import AuditStore
from tests.conftest import SAMPLE, SHARED_RUNS

MODEL_XLSX = "Project_Nordlys/Nordlys_Model.xlsx"


def _sheet_read() -> ToolCall:
    """A real files_read_sheet result from the sample's workbook (EV in B18: 2360.03)."""
    bench = load_benchmark(SAMPLE)
    arguments = {"path": MODEL_XLSX, "sheet": "DCF", "cell_range": "B18:B21"}
    with Session(bench, bench.task("nordlys_06")) as session:
        result = session.files.read_sheet(**arguments)
    return ToolCall(id="c1", name="files_read_sheet", arguments=json.dumps(arguments),
                    result=json.dumps(result))


def _attempt(answer: str, *calls: ToolCall) -> tuple[Attempt, Trajectory]:
    trajectory = Trajectory(format="archipelago", steps=[
        Step(role="user", text="What is Nordlys's enterprise value, in NOK m?"),
        Step(role="assistant", tool_calls=list(calls)),
        Step(role="assistant", tool_calls=[ToolCall(id="f", name="final_answer",
                                                    arguments=json.dumps({"answer": answer}),
                                                    result=answer)])])
    attempt = Attempt(id="v/t/1", task_id="t", model="m", variant="v", index=1, state="graded",
                      answer=answer)
    return attempt, trajectory


def test_a_value_read_from_the_workbook_is_marked_with_its_step_and_cell() -> None:
    attempt, trajectory = _attempt("Enterprise value is NOK 2,360.0m.", _sheet_read())
    [source] = answer_provenance(attempt.answer or "", trajectory)
    assert (source.status, source.step, source.tool) == ("seen", 1, "files_read_sheet")
    assert "B18" in source.where and "2,360.0m first seen in step 1 files_read_sheet" in \
        source.describe()
    assert list(answer_value_unsupported(attempt, trajectory)) == []


def test_a_planted_value_in_no_tool_result_is_a_finding() -> None:
    attempt, trajectory = _attempt("Enterprise value is NOK 2,512.4m.", _sheet_read())
    [finding] = answer_value_unsupported(attempt, trajectory)
    assert (finding.check, finding.severity) == ("answer_value_unsupported", "info")
    assert finding.evidence["values"] == ["NOK 2,512.4m"]


def test_an_echo_of_the_agents_own_words_is_no_source() -> None:
    todo = ToolCall(id="c2", name="todo_write", arguments='{"todo": "report EV of 2512.4"}',
                    result='{"todos": [{"content": "report EV of 2512.4"}]}')
    attempt, trajectory = _attempt("Enterprise value is NOK 2,512.4m.", _sheet_read(), todo)
    assert [f.evidence["values"] for f in answer_value_unsupported(attempt, trajectory)] == [
        ["NOK 2,512.4m"]]


def test_values_computed_from_two_seen_are_not_findings() -> None:
    cells = ToolCall(id="c3", name="files_read_sheet", arguments="{}", result=json.dumps(
        {"items": [{"cell": "B3", "value": 151.2}, {"cell": "B4", "value": 88.4}]}))
    for answer in ("Total 239.6", "Gap 62.8", "B3 is 171.0% of B4", "Growth of 71.0%"):
        attempt, trajectory = _attempt(answer, cells)
        [source] = answer_provenance(answer, trajectory)
        assert source.status == "computed", (answer, source)
        assert list(answer_value_unsupported(attempt, trajectory)) == []


def test_real_runs_an_answer_given_without_reading_anything_and_one_computed() -> None:
    runs = {a.id: a for a in load_runs([SHARED_RUNS]).attempts}
    blind = runs["grok43high-baseline/task_34254f339d6e4f65b59bb2bd97e606e2/1"]
    [finding] = answer_value_unsupported(blind, blind.trajectory)
    assert finding.evidence["values"] == ["21.5%", "3.2x"]
    read = runs["grok43high-baseline/task_1da4eacde8434166b08bd64d9011095c/1"]
    sources = answer_provenance(read.answer, read.trajectory)
    wacc = next(s for s in sources if s.text == "9.85%")
    assert (wacc.status, wacc.tool) == ("seen", "sheets_server_sheets") and "0.0985" in wacc.where
    assert list(answer_value_unsupported(read, read.trajectory)) == []


def test_the_audit_stage_keeps_findings_per_attempt(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    import_runs([SHARED_RUNS], db, None)
    with AuditStore(db) as store:
        check_provenance(store)
        check_provenance(store)  # replaces, never adds twice
        found = [f for f in store.findings() if f.check == "answer_value_unsupported"]
    assert [f.evidence["attempt_id"] for f in found] == [
        "grok43high-baseline/task_34254f339d6e4f65b59bb2bd97e606e2/1"]
