"""Where an answer's numbers came from: seen in a tool result, computed from two, or unsupported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from mcp import Client
from openpyxl import Workbook

from mock_workspace.server import build_server
from mock_workspace.session import Session
from rubric_audit.audit.job import import_runs
from rubric_audit.audit.stages import check_provenance
from rubric_audit.checks import provenance
from rubric_audit.checks.numbers import find_quantities
from rubric_audit.checks.provenance import (
    SCALES,
    _interval,
    _Seen,
    _significant,
    answer_provenance,
    answer_value_unsupported,
)
from rubric_audit.checks.result_places import MAX_PARSED_CHARS, MAX_PLACE
from rubric_audit.core.model import Attempt, Step, ToolCall, Trajectory
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.load.runs import load_runs
from rubric_audit.store.audit_store import AuditStore
from tests.conftest import SAMPLE, SHARED_RUNS, make_benchmark

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
    assert source.place == "Nordlys_Model.xlsx DCF!B18"
    assert source.describe() == (
        "NOK 2,360.0m first seen in step 1 files_read_sheet Nordlys_Model.xlsx DCF!B18")
    assert list(answer_value_unsupported(attempt, trajectory)) == []


def test_a_planted_value_in_no_tool_result_is_a_finding() -> None:
    attempt, trajectory = _attempt("Enterprise value is NOK 2,512.4m.", _sheet_read())
    [finding] = answer_value_unsupported(attempt, trajectory)
    assert (finding.check, finding.severity) == ("answer_value_unsupported", "info")
    assert finding.evidence["values"] == ["NOK 2,512.4m"]


@pytest.mark.parametrize("calls", [
    [],  # answered without any tool
    [ToolCall(id="c1", name="files_read", arguments="{}", result=None)],  # no result recorded
    [ToolCall(id="c1", name="files_read", arguments="{}", result="  ")],
], ids=["no tool", "no result recorded", "blank result"])
def test_an_attempt_with_no_tool_result_to_trace_is_no_finding(calls: list[ToolCall]) -> None:
    """Nothing to trace through is no evidence: a number found nowhere says nothing there."""
    attempt, trajectory = _attempt("Enterprise value is NOK 2,512.4m.", *calls)
    assert list(answer_value_unsupported(attempt, trajectory)) == []
    with_result, read = _attempt("Enterprise value is NOK 2,512.4m.", _sheet_read(), *calls)
    assert [f.evidence["values"] for f in answer_value_unsupported(with_result, read)] == [
        ["NOK 2,512.4m"]]


def test_a_value_the_tasks_workbook_computes_is_no_finding() -> None:
    """The recomputed workbook (gold recomputation) computes 44.21 per share at the prompt's
    9.0% WACC: an answer stating it is supported though no tool result shows it."""
    workbook = {"DCF!B21": 44.209357, "DCF!B18": 2188.4329}
    attempt, trajectory = _attempt("The EV is NOK 2,188.4m and equity NOK 44.21 per share; "
                                   "NOK 2,512.4m was the earlier draft.", _sheet_read())
    sources = {s.text: s for s in answer_provenance(attempt.answer, trajectory, workbook)}
    assert sources["NOK 44.21"].status == "workbook"
    assert "DCF!B21 = 44.2094" in sources["NOK 44.21"].describe()
    assert sources["NOK 2,188.4m"].status == "workbook"
    [finding] = answer_value_unsupported(attempt, trajectory, workbook)
    assert finding.evidence["values"] == ["NOK 2,512.4m"]
    assert "not what the task's workbook computes" in finding.message
    [without] = answer_value_unsupported(attempt, trajectory)
    assert without.evidence["values"] == ["NOK 2,188.4m", "NOK 44.21", "NOK 2,512.4m"]


def test_one_finding_per_attempt_lists_each_number_once() -> None:
    attempt, trajectory = _attempt("EV is NOK 2,512.4m. To repeat: NOK 2,512.4m, on NOK 311.9m "
                                   "of EBITDA.", _sheet_read())
    [finding] = answer_value_unsupported(attempt, trajectory)
    assert finding.evidence["values"] == ["NOK 2,512.4m", "NOK 311.9m"]


def test_the_sample_audit_flags_no_value_its_workbooks_compute(tmp_path: Path) -> None:
    """nordlys_02's NOK 44.21 (and the EV and equity it rests on) is what `regold` recomputes
    at the prompt's WACC; audited, no attempt of the task is flagged, and every attempt that is
    has one finding."""
    from typer.testing import CliRunner

    from rubric_audit.cli import app

    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["audit", str(SAMPLE), "--out", str(out)]).exit_code == 0
    bench = load_benchmark(SAMPLE)
    found = [json.loads(line) for line in (out / "findings.jsonl").read_text().splitlines()]
    unsupported = [f for f in found if f["check"] == "answer_value_unsupported"]
    attempts = [f["evidence"]["attempt_id"] for f in unsupported]
    assert unsupported and len(attempts) == len(set(attempts))
    flagged = {f["task_id"] for f in unsupported}
    assert bench.task("nordlys_02").id not in flagged
    assert bench.task("meridian_01").id in flagged, "its wrong sums are still found"
    assert all("44.21" not in v for f in unsupported for v in f["evidence"]["values"])


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
    # the grid the sheets server prints: row 94's cell under column L holds 0.0985
    assert wacc.place == "read_tab.raw_output L94"
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


@pytest.mark.anyio
async def test_a_cell_read_through_the_workspace_client_is_named(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b")
    book = Workbook()
    sheet = book.active
    sheet.title = "Q3"
    sheet["A12"], sheet["B11"], sheet["B12"], sheet["C12"] = "Revenue", "88.4", 151.2, 151.25
    book.save(root / "worlds/world_a/filesystem/Q3_Forecast.xlsx")
    bench = load_benchmark(root)
    arguments = {"path": "Q3_Forecast.xlsx", "sheet": "Q3"}
    with Session(bench, bench.tasks[0]) as session:
        async with Client(build_server(session)) as client:
            result = (await client.call_tool("files_read_sheet", arguments)).content[0].text
    read = ToolCall(id="c1", name="files_read_sheet", arguments=json.dumps(arguments),
                    result=result)
    _, trajectory = _attempt("Q3 revenue was 151.2, against 88.4 in Q2.", read)
    revenue, before = answer_provenance("Q3 revenue was 151.2, against 88.4 in Q2.", trajectory)
    assert revenue.describe() == "151.2 first seen in step 1 files_read_sheet Q3_Forecast.xlsx Q3!B12"
    assert before.place == "Q3_Forecast.xlsx Q3!B11"


def _place_of(answer: str, result: str) -> str:
    _, trajectory = _attempt(answer, ToolCall(id="c1", name="files_read", arguments="{}",
                                              result=result))
    [source] = answer_provenance(answer, trajectory)
    assert source.status == "seen"
    return source.place


def test_a_table_gives_the_row_label_and_column_header() -> None:
    csv_text = 'line,Q2,Q3\nCosts,"1,204.5",88.4\nRevenue,140.1,151.2\n'
    assert _place_of("Revenue was 151.2", csv_text) == "row 'Revenue', column 'Q3'"
    assert _place_of("Costs were 1,204.5", csv_text) == "row 'Costs', column 'Q2'"
    markdown = "Forecast:\n\n| line | Q3 |\n|---|---:|\n| Revenue | 151.2 |\n"
    assert _place_of("Revenue was 151.2", json.dumps({"text": markdown})) == \
        "text row 'Revenue', column 'Q3'"
    rows = json.dumps({"rows": [{"quarter": "Q2", "revenue": 140.1},
                                {"quarter": "Q3", "revenue": 151.2}]})
    assert _place_of("Revenue was 151.2", rows) == "rows[1].revenue"
    assert _place_of("Paid 151.2", "id,USD\n17,151.2\n") == "row '17', column 'USD'"  # no grid


def test_hostile_json_is_walked_without_recursion_and_capped() -> None:
    deep = "[" * 900 + '{"revenue": 151.2}' + "]" * 900
    assert _place_of("Revenue was 151.2", deep) == ("[0]" * 900 + ".revenue")[:MAX_PLACE - 1] + "…"
    padded = json.dumps({"pad": "x" * MAX_PARSED_CHARS, "revenue": 151.2})
    assert _place_of("Revenue was 151.2", padded) == ""  # too big to parse: text context only


def test_a_number_outside_any_structure_keeps_the_text_around_it() -> None:
    prose = "The board noted that Q3 revenue came to 151.2 million, ahead of plan."
    _, trajectory = _attempt("Revenue was 151.2", ToolCall(id="c1", name="mail_read",
                                                          arguments="{}", result=prose))
    [source] = answer_provenance("Revenue was 151.2", trajectory)
    assert source.place == "" and "came to 151.2 million" in source.where
    assert source.describe() == f"151.2 first seen in step 1 mail_read: {source.where}"
    # in JSON, a number first written in prose is not placed by a later table cell
    assert _place_of("Revenue was 151.2", json.dumps(
        {"note": prose, "rows": [{"revenue": 151.2}]})) == ""
    assert _place_of("Revenue was 151.2", "a,b\n151.2,3\n") == ""  # a header of numbers


def _by_brute_force(answer: str, trajectory: Trajectory) -> list[tuple]:
    """(text, status, step, tool, how) of each judged number, by plain loops over every value
    and every pair of values seen, as the module's docstring defines them."""
    seen = _Seen(trajectory)  # the trajectory's numbers as read: values, tokens, their sources
    values, tokens = seen.values.tolist(), seen.tokens
    sources = [seen.sources[owner][:2] for owner in seen.owners.tolist()]  # (step, tool)
    ways = (("sum of {b:g} and {a:g}", lambda m, b: m - b),
            ("difference of {a:g} and {b:g}", lambda m, b: b + m),
            ("ratio of {a:g} to {b:g}", lambda m, b: b * m),
            ("product of {a:g} and {b:g}", lambda m, b: m / b if b else float("inf")),
            ("change from {b:g} to {a:g}", lambda m, b: b * (1 + m)),
            ("share of {b:g} other than {a:g}", lambda m, b: b * (1 - m)))
    out = []
    for q in find_quantities(answer):
        if (digits := _significant(q.text)) < 2:
            continue
        low, high = _interval(q)
        # operands: two significant digits or more, any where the result has four or more;
        # each fraction also as a percentage
        operands = {float(t) for t in tokens if digits >= 4 or _significant(t) >= 2}
        pool = sorted(operands | {v * 100 for v in operands if 0 < v < 1})
        # as precise as the answer's number at any scale, else any; at a scale, the earliest
        hit = next((min(hits) for need in (digits, 0) for s in SCALES
                    if (hits := [(sources[i][0], i) for i in range(len(values))
                                 if low / s <= values[i] <= high / s
                                 and _significant(tokens[i]) >= need])), None)
        if hit is not None:
            out.append((q.text, "seen", *sources[hit[1]], ""))
            continue
        how = next((text.format(a=float(operand((low / s + high / s) / 2, b)), b=b)
                    + " (values seen)"
                    for s in SCALES for i, (text, operand) in enumerate(ways)
                    if i < 4 or high / s < 1  # a change or complement past 100%: none
                    for b in pool if _operand_between(pool, operand(low / s, b),
                                                      operand(high / s, b))), None)
        out.append((q.text, "computed" if how else "unsupported", None, None, how or ""))
    return out


def _operand_between(pool: list[float], one: float, other: float) -> bool:
    return any(min(one, other) <= a <= max(one, other) for a in pool)


def _written(mantissa: float, power: int, places: int) -> str:
    return f"{mantissa * 10.0 ** power:.{places}f}"


def _change(a: float, b: float) -> float:
    return (a - b) / b if b else a


@st.composite
def _values_and_answer(draw: st.DrawFn) -> tuple[list[list[str]], str]:
    """Tool results of numbers at several scales and precisions, then results that write some
    of them again slightly apart (so an interval holds several, written differently); and an
    answer of numbers seen, computed from two seen, at another scale, or made up."""
    numbers = st.builds(_written, st.integers(1, 99), st.integers(-3, 3), st.integers(0, 3))
    results = draw(st.lists(st.lists(numbers, min_size=1, max_size=10), min_size=1, max_size=3))
    picked = st.sampled_from([float(n) for result in results for n in result])
    near = st.builds(lambda v, e: v * (1 + e), picked, st.floats(-0.004, 0.004))
    results += draw(st.lists(st.lists(st.builds(_written, near, st.just(0), st.integers(0, 4)),
                                      min_size=1, max_size=5), max_size=2))
    value = st.one_of(picked, near, st.floats(0.01, 9_999),
                      *(st.builds(how, picked, picked) for how in (
                          float.__add__, float.__sub__, _change,
                          lambda a, b: a / b if b else a)))
    form = st.sampled_from(["{:.0f}", "{:.1f}", "{:,.2f}", "{:.3f}", "{:.4f}", "{:.1f}%",
                            "${:.2f}m", "NOK {:.1f}bn", "{:.2f}x"])
    answer = " and ".join(
        draw(form).format(abs(draw(value)) * 10.0 ** draw(st.sampled_from([0, 0, 2, -2, 3, 6])))
        for _ in range(draw(st.integers(1, 4))))
    return results, answer


@settings(max_examples=200, deadline=None)
@example(([["17", "2.45"]], "Rate 2.5"), 1)  # 2.45 is the lowest value 2.5 stands for
@given(_values_and_answer(), st.sampled_from([1, 16, 100, provenance.LOOKUPS_PER_SEARCH]))
def test_sources_are_those_a_brute_force_search_finds(
        case: tuple[list[list[str]], str], lookups_per_search: int) -> None:
    """The sorted lookups (every scale at once, ways and scales batched per search) find the
    same first source and the same first computation as trying every value and pair in turn."""
    results, answer = case
    trajectory = Trajectory(format="archipelago", steps=[Step(role="user", text="Report.")] + [
        Step(role="assistant", tool_calls=[ToolCall(id=str(i), name=f"read_{i}",
                                                    result=", ".join(result))])
        for i, result in enumerate(results)])
    with pytest.MonkeyPatch.context() as patch:  # small pools split into several searches too
        patch.setattr(provenance, "LOOKUPS_PER_SEARCH", lookups_per_search)
        found = [(v.text, v.status, v.step, v.tool, "" if v.status == "seen" else v.where)
                 for v in answer_provenance(answer, trajectory)]
    assert found == _by_brute_force(answer, trajectory)


@pytest.mark.parametrize(("result", "workbook", "answer"), [
    # a difference of two values the task's workbook computes
    ("Sep target 52.75", {"Val!C24": 48.61}, "The breakeven of $48.61 sits $4.14 below the strike"),
    # a fraction in the result, subtracted as a percentage from the prompt's 98.5%
    ("on_time 0.9712", {}, "97.12% on time, 1.38 points under the SLA"),
    # a rate written with a decimal comma
    ("de toeslag bedraagt 13,9% per 1 september", {}, "The surcharge is 13.9% from September"),
    # a complement of a ratio: accuracy is 1 - 488/82,631
    ("mispicks 488, lines 82631", {}, "Pick accuracy was 99.41%"),
    # a precise average over a single-digit count
    ("branches 5, total_deposits 551331667", {}, "They average $110.27m of deposits"),
], ids=["workbook operand", "fraction as percent", "decimal comma", "complement", "per unit"])
def test_values_a_reviewer_can_trace_are_not_findings(result: str, workbook: dict[str, float],
                                                       answer: str) -> None:
    """Each way of coming to a number from what the agent saw, on a case where it is the only
    way: none is unsupported (prompt: 'the 98.5% SLA')."""
    call = ToolCall(id="c1", name="files_read", arguments="{}", result=result)
    attempt, trajectory = _attempt(answer, call)
    trajectory.steps[0].text += " The SLA is 98.5%."
    assert list(answer_value_unsupported(attempt, trajectory, workbook)) == []


def test_a_short_made_up_number_still_needs_two_precise_operands() -> None:
    """A single-digit operand counts only for a result of four significant digits or more:
    '12%' is not 'computed' from 5 and 60."""
    call = ToolCall(id="c1", name="files_read", arguments="{}", result="branches 5, staff 60")
    attempt, trajectory = _attempt("Attrition was 12.3% last year", call)
    [finding] = answer_value_unsupported(attempt, trajectory)
    assert finding.evidence["values"] == ["12.3%"]
