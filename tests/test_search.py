"""Search over an audit's prompts, answers, trajectories and rationales (SQLite FTS5)."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from rubric_audit.audit.job import import_runs
from rubric_audit.cli import app
from rubric_audit.load.runs import load_runs
from rubric_audit.review.search import QueueFilter, parse_filter, search
from rubric_audit.store.audit_store import AuditStore
from tests.conftest import SHARED_RUNS, make_task, make_variant

SHEET = "WACC Build"  # a tab of the DCF workbook the agents list and read


def _read_the_sheet() -> set[str]:
    """Attempts with a tool result naming the sheet, found without the index."""
    return {a.id for a in load_runs([SHARED_RUNS]).attempts if a.trajectory and any(
        SHEET.lower() in (call.result or "").lower() for _, call in a.trajectory.calls())}


def test_search_for_a_sheet_name_returns_the_attempts_that_read_it(imported_runs: Path) -> None:
    result = CliRunner().invoke(app, ["search", str(imported_runs), SHEET, "--limit", "500"])
    assert result.exit_code == 0, result.output
    printed = {line.split()[0] for line in result.output.splitlines()[1:]
               if line and not line.startswith(" ")}
    expected = _read_the_sheet()
    assert expected and expected <= printed, "every attempt whose tool results name the sheet"
    assert SHEET in result.output and "sheets_server_sheets" in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("    ")]
    assert all(SHEET.lower() in line.lower() for line in lines), "each match's line in context"


def test_filters_narrow_by_model_task_and_check(imported_runs: Path) -> None:
    with AuditStore(imported_runs / "audit.db") as store:
        everything = search(store, SHEET, limit=500)
        assert search(store, SHEET, model="claude") == []
        assert len(search(store, SHEET, model="grok", limit=500)) == len(everything)
        one = everything[0].task_id
        assert {h.task_id for h in search(store, SHEET, task=one, limit=500)} == {one}
        assert search(store, SHEET, check="answer_value_unsupported") == []
        blind = search(store, "IRR", check="answer_value_unsupported", limit=500)
        assert {h.task_id for h in blind} == {"task_34254f339d6e4f65b59bb2bd97e606e2"}
        assert any(h.place == "answer" and "21.5% IRR" in h.line for h in blind)


def test_the_index_follows_new_runs(tmp_path: Path, imported_runs: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(imported_runs, out)
    with AuditStore(out / "audit.db") as store:
        assert search(store, "Zanzibar") == []
    task = make_task()
    make_variant(tmp_path / "runs", "v1", "m/one", [(task, 1, {"task_1_c1": "pass"})])
    answer_run = next((tmp_path / "runs").rglob("trajectory.json"))
    answer_run.write_text(answer_run.read_text().replace("The budget is 1.2m.",
                                                         "The budget is set in Zanzibar."))
    import_runs([tmp_path / "runs"], out / "audit.db", None)
    with AuditStore(out / "audit.db") as store:
        hits = search(store, "zanzibar")
    assert {h.place for h in hits} == {"answer", "step 1 final_answer"}  # and its tool result
    assert all(h.model == "m/one" and "Zanzibar" in h.line for h in hits)


def test_queue_filter_parts_and_phrases(imported_runs: Path) -> None:
    assert parse_filter('model:grok label:"model error" PIK  notes') == QueueFilter(
        text="PIK notes", model="grok", label="model error")
    with AuditStore(imported_runs / "audit.db") as store:
        underscored = search(store, "dcf_model_v1", limit=500)  # punctuation does not matter
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
