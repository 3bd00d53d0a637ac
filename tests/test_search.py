"""Search over an audit's prompts, answers, trajectories and rationales (SQLite FTS5)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rubric_audit.audit.job import import_runs
from rubric_audit.cli import app
from rubric_audit.load.runs import load_runs
from rubric_audit.review.search import QueueFilter, parse_filter, search
from rubric_audit.store.audit_store import AuditStore
from tests.conftest import SAMPLE, SHARED_RUNS, make_task, make_variant

SHEET = "WACC Build"  # a tab of the DCF workbook the agents list and read


def _read_the_sheet() -> set[str]:
    """Attempts with a tool result naming the sheet, found without the index."""
    return {a.id for a in load_runs([SHARED_RUNS]).attempts if a.trajectory and any(
        SHEET.lower() in (call.result or "").lower() for _, call in a.trajectory.calls())}


def test_search_for_a_sheet_name_returns_the_attempts_that_read_it(imported_runs: Path) -> None:
    result = CliRunner().invoke(app, ["search", str(imported_runs), SHEET, "--limit", "500",
                                      "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    expected = _read_the_sheet()
    assert expected and expected <= {h["attempt_id"] for h in found["hits"]}, \
        "every attempt whose tool results name the sheet"
    assert found["total"] == len(found["hits"]) and found["query"] == SHEET
    assert any("sheets_server_sheets" in h["place"] for h in found["hits"])
    assert all(SHEET.lower() in h["line"].lower() for h in found["hits"]), \
        "each match's line in context"
    printed = CliRunner().invoke(app, ["search", str(imported_runs), SHEET, "--limit", "500"])
    lines = [line for line in printed.output.splitlines() if line.startswith("    ")]
    assert len(lines) == found["total"] and all(SHEET.lower() in line.lower() for line in lines)


@pytest.fixture(scope="module")
def sample_audit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample's runs imported with its benchmark: tasks with names apart from their ids."""
    out = tmp_path_factory.mktemp("sample") / "out"
    out.mkdir()
    import_runs([SAMPLE / "runs"], out / "audit.db", SAMPLE)
    return out


def test_search_names_tasks_attempts_and_criteria_and_gives_the_total(
        sample_audit: Path) -> None:
    """A hit reads as the task's name, the model, the variant and attempt number and where in it
    (a rationale's criterion as "C1"), never the hashes of ids; a limited search says how many
    there are in all."""
    imported_runs = sample_audit
    with AuditStore(imported_runs / "audit.db") as store:
        tasks = {t.id: t for t in store.tasks()}
        everything = search(store, "the", limit=100_000)
        first = search(store, "the", limit=3)
    assert everything.total == len(everything.hits) > 3
    assert (first.total, len(first.hits)) == (everything.total, 3)
    rationale = next(h for h in everything.hits if h.place.startswith("rationale"))
    assert re.fullmatch(r"rationale C\d+ \(recorded\)", rationale.place), rationale.place
    assert rationale.task == tasks[rationale.task_id].name and rationale.attempt is not None
    printed = CliRunner().invoke(app, ["search", str(imported_runs), "the", "--limit", "3"])
    assert printed.exit_code == 0, printed.output
    lines = printed.output.splitlines()
    assert lines[0] == f"The best 3 of {everything.total} matches for 'the' (raise --limit for more)"
    heads = [line for line in lines[1:] if not line.startswith(" ")]
    assert len(heads) == 3
    assert not any(re.search(r"task_[0-9a-f]{32}", line) for line in heads), heads
    assert all(line.startswith(tasks[h.task_id].name) for line, h in zip(heads, first.hits,
                                                                        strict=True))


def test_an_unknown_task_says_which_names_are_close(sample_audit: Path) -> None:
    imported_runs = sample_audit
    name = "nordlys_02"
    result = CliRunner().invoke(app, ["search", str(imported_runs), "the", "--task",
                                      "NORDLYS-02"])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    assert f"--task: no task 'NORDLYS-02' (by id or name); did you mean {name!r} or" in line, line
    same = CliRunner().invoke(app, ["search", str(imported_runs), "the", "--task", name.upper(),
                                    "--json"])
    assert same.exit_code == 0 and json.loads(same.stdout)["hits"], "a name but for case"


def test_filters_narrow_by_model_task_and_check(imported_runs: Path) -> None:
    with AuditStore(imported_runs / "audit.db") as store:
        everything = search(store, SHEET, limit=500).hits
        assert search(store, SHEET, model="claude").hits == []
        assert len(search(store, SHEET, model="grok", limit=500).hits) == len(everything)
        one = everything[0].task_id
        assert {h.task_id for h in search(store, SHEET, task=one, limit=500).hits} == {one}
        assert search(store, SHEET, check="answer_value_unsupported").hits == []
        blind = search(store, "IRR", check="answer_value_unsupported", limit=500).hits
        assert {h.task_id for h in blind} == {"task_34254f339d6e4f65b59bb2bd97e606e2"}
        assert any(h.place == "answer" and "21.5% IRR" in h.line for h in blind)


def test_the_index_follows_new_runs(tmp_path: Path, imported_runs: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(imported_runs, out)
    with AuditStore(out / "audit.db") as store:
        assert search(store, "Zanzibar").hits == []
    task = make_task()
    make_variant(tmp_path / "runs", "v1", "m/one", [(task, 1, {"task_1_c1": "pass"})])
    answer_run = next((tmp_path / "runs").rglob("trajectory.json"))
    answer_run.write_text(answer_run.read_text().replace("The budget is 1.2m.",
                                                         "The budget is set in Zanzibar."))
    import_runs([tmp_path / "runs"], out / "audit.db", None)
    with AuditStore(out / "audit.db") as store:
        hits = search(store, "zanzibar").hits
    assert {h.place for h in hits} == {"answer", "step 1 final_answer"}  # and its tool result
    assert all(h.model == "m/one" and "Zanzibar" in h.line for h in hits)


def test_queue_filter_parts_and_phrases(imported_runs: Path) -> None:
    assert parse_filter('model:grok label:"model error" PIK  notes') == QueueFilter(
        text="PIK notes", model="grok", label="model error")
    with AuditStore(imported_runs / "audit.db") as store:
        underscored = search(store, "dcf_model_v1", limit=500).hits  # punctuation does not matter
        assert underscored and all("DCF Model v1" in h.line for h in underscored)
    assert parse_filter("").is_empty() and not parse_filter("check:x").is_empty()


def test_search_without_an_audit_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["search", str(tmp_path), "x"])
    assert result.exit_code == 2 and "no audit.db here" in result.output


def test_a_query_holding_markup_is_echoed_as_written(imported_runs: Path) -> None:
    """The query is shown, never read as Rich markup: '[/]' crashed search, and a
    '[link=file:...]' query printed a live terminal hyperlink."""
    for query in ("[/]", "zz [link=file:///etc/passwd]x[/link]", "[red]zzz[/red]"):
        result = CliRunner().invoke(app, ["search", str(imported_runs), query])
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output
        assert repr(query) in result.output.splitlines()[0]


def test_zero_width_characters_are_shown_as_escapes() -> None:
    from rubric_audit.core.text import visible

    for char in "\u200b\u200c\u200d\u2060\ufeff":
        assert visible(f"pa{char}y") == f"pa\\u{ord(char):04x}y"


def test_a_damaged_search_index_is_one_line_and_exit_2(tmp_path: Path, imported_runs: Path) -> None:
    """FTS5 blocks overwritten (the table cannot even be opened): search says the store is
    damaged, naming it, where it was an internal error; the store is left as it was."""
    import sqlite3

    out = tmp_path / "out"
    shutil.copytree(imported_runs, out)
    assert CliRunner().invoke(app, ["search", str(out), SHEET]).exit_code == 0
    with sqlite3.connect(out / "audit.db") as db:
        db.execute("UPDATE search_index_data SET block = randomblob(64) WHERE id > 1")
    before = (out / "audit.db").read_bytes()
    result = CliRunner().invoke(app, ["search", str(out), SHEET])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    assert "audit.db: search index: damaged" in line and "internal error" not in line
    assert (out / "audit.db").read_bytes() == before
