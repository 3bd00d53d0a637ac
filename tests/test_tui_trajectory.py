"""The Trajectory tab on the real recorded runs, through Textual's Pilot."""

from __future__ import annotations

import re
import shutil
from html import unescape
from pathlib import Path

import pytest

from rubric_audit.load.runs import load_runs
from rubric_audit.review.session import ReviewData
from tests.conftest import FIXTURES
from tests.test_tui import toasts
from tui.app import ReviewApp
from tui.widgets.trajectory import StepsView, row_text, trajectory_summary

pytestmark = pytest.mark.anyio
BLIND = "task_34254f339d6e4f65b59bb2bd97e606e2"  # baseline answered without reading a file
DCF = "task_ad52b80191404ec2afc47fc1c29604b4"  # both variants computed 48.31 in code


@pytest.fixture
def out(imported_runs: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "out"
    shutil.copytree(imported_runs, copy)
    return copy


def screen_text(app: ReviewApp) -> str:
    svg = app.export_screenshot()
    return unescape("".join(re.findall(r">([^<]*)</text>", svg))).replace("\xa0", " ")


async def open_task(app: ReviewApp, pilot, task_id: str) -> None:
    await pilot.press("a")  # the queue of all tasks
    app.position = app.task_ids.index(task_id)
    await app.show_task()
    await pilot.press("f6")
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_the_tab_shows_tool_calls_and_unfolds_a_result(out: Path) -> None:
    app = ReviewApp(ReviewData(out, "ana"))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await open_task(app, pilot, DCF)
        view = app.query_one(StepsView)
        assert view.has_focus, "the steps take the arrow keys"
        lines = [row_text(view.trajectory, r, view.unfolded)[0] for r in view.rows]
        assert any("→ sheets_server_sheets" in line and "list_tabs" in line for line in lines)
        text = screen_text(app)
        assert "→ toolbelt_list_tools" in text and "never opened: mail, calendar, chat" in text
        assert "Project Vanguard - DCF Model v1.xlsx" in text, "files opened"
        # the first call with a result: move onto it and unfold it
        target = next(i for i, r in enumerate(view.rows) if r.call >= 0)
        for _ in range(target):
            await pilot.press("down")
        folded = len(view.rows)
        await pilot.press("enter")
        await pilot.pause()
        assert len(view.rows) > folded and view.rows[target + 1].body is not None
        body = view.rows[target + 1].body or ""
        assert body[:40] in screen_text(app), "the result's lines are drawn"
        await pilot.press("down", "enter")  # Enter inside the result folds it again
        await pilot.pause()
        assert len(view.rows) == folded and view.cursor == target
        await pilot.press("end")
        await pilot.pause()
        assert view.cursor == len(view.rows) - 1 and view.scroll_offset.y > 0
        assert "→ final_answer" in screen_text(app), "the last lines are drawn"
        await pilot.press("home")
        await pilot.pause()
        assert view.cursor == 0 and view.scroll_offset.y == 0
        first = view.trajectory
        await pilot.press("right")  # the other variant's attempt of the task
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert view.trajectory is not first and "grok43high-dc-rs #1" in screen_text(app)


async def test_answer_numbers_are_marked_where_first_seen_or_said_unsupported(out: Path) -> None:
    app = ReviewApp(ReviewData(out, "ana"))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await open_task(app, pilot, DCF)
        view = app.query_one(StepsView)
        [(key, mark)] = view.marks.items()
        assert mark == "◆ 48.31 first seen here"
        call = view.trajectory.steps[key[0]].tool_calls[key[1]]
        assert call.name == "code_execution_server_code_exec" and "48.31" in (call.result or "")
        assert "48.31 first seen in step" in screen_text(app)
        await open_task(app, pilot, BLIND)
        text = screen_text(app)
        assert "21.5% appears in no tool result" in text and "files opened: none" in text


async def type_filter(app: ReviewApp, pilot, text: str) -> None:
    await pilot.press("F")
    await pilot.pause()
    field = app.screen.query_one("#filter-input")
    field.value = ""
    await pilot.press(*("space" if c == " " else c for c in text), "enter")
    await pilot.pause()


async def all_tasks(app: ReviewApp, pilot) -> list[str]:
    """The queue of all tasks, opened: its task ids."""
    await pilot.pause()
    await pilot.press("a")
    return list(app.task_ids)


async def test_slash_filters_the_queue_by_text_check_and_model(out: Path) -> None:
    from rubric_audit.review.search import matching_tasks

    app = ReviewApp(ReviewData(out, "ana"))
    async with app.run_test(size=(160, 48)) as pilot:
        everything = await all_tasks(app, pilot)
        await type_filter(app, pilot, "WACC Build")
        read = matching_tasks(app.data.store, "WACC Build")
        assert app.task_ids == [t for t in everything if t in read] and 0 < len(read) < len(
            everything)
        assert "filter: WACC Build" in str(app.query_one("#progress").render())
        await type_filter(app, pilot, "check:answer_value model:grok")
        assert app.task_ids == [BLIND]
        await type_filter(app, pilot, "check:answer_value model:claude")
        assert app.task_ids == []
        await type_filter(app, pilot, "")
        assert app.task_ids == everything, "an empty filter clears it"


async def test_a_filter_on_a_damaged_search_index_says_so_and_keeps_the_queue(out: Path) -> None:
    import sqlite3

    with sqlite3.connect(out / "audit.db") as db:
        db.execute("UPDATE search_index_data SET block = randomblob(64) WHERE id > 1")
    app = ReviewApp(ReviewData(out, "ana"))
    async with app.run_test(size=(160, 48)) as pilot:
        everything = await all_tasks(app, pilot)
        await type_filter(app, pilot, "WACC Build")
        assert app.task_ids == everything and app.is_running
        assert any("search index: damaged" in n.message for n in app._notifications)


@pytest.fixture
def markup_names_audit(tmp_path: Path) -> Path:
    """An audit of one variant folder named `x[@click="]`, of the model `m/[b]one`."""
    from rubric_audit.audit.job import run_audit
    from tests.conftest import make_task, make_variant

    task = make_task()
    runs = make_variant(tmp_path / "runs", 'x[@click="]', "m/[b]one",
                        [(task, 1, {"task_1_c1": "fail", "task_1_c2": "pass"})])
    run_audit(None, [runs], tmp_path / "out")
    return tmp_path / "out"


async def test_markup_in_a_variant_and_a_reviewer_name_is_text(markup_names_audit: Path) -> None:
    """The variant in the Trajectory tab and a reviewer named `eve[/]` at start-up: both shown
    as written, the app runs on (each crashed it)."""
    app = ReviewApp(ReviewData(markup_names_audit, "eve[/]"))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await open_task(app, pilot, "task_1")
        text = screen_text(app)
        assert app.is_running
    assert 'x[@click="] #1' in text and "reviewer eve[/]" in text and "m/[b]one" in text


async def test_the_attempt_view_names_the_files_left_for_the_judge() -> None:
    """Snapshot artifacts are shown by their path inside the snapshot, as the judge saw them."""
    runs = load_runs([FIXTURES / "archipelago-examples" / "examples"])
    shown = {a.task_id: trajectory_summary(a, a.trajectory, None).plain for a in runs.attempts}
    assert "files left for the judge: filesystem/hello.py" in shown["claude_code_task"]
    assert "files left for the judge" not in shown["simple_task"]


def test_controls_in_steps_and_results_are_shown_as_escapes() -> None:
    """A step's text and a tool result with a screen clear, an OSC 52 clipboard write, a bidi
    override and a tab: each line shows them as their escapes (the tab as spaces), never raw."""
    from rubric_audit.core.model import Step, ToolCall, Trajectory
    from tui.widgets.trajectory import Row, trajectory_rows

    hostile = "cut \x1b[2J here\x1b]52;c;cm0K\x07 \u202eevil\tcell"
    trajectory = Trajectory(format="archipelago", steps=[Step(
        role="assistant", text=hostile, tool_calls=[ToolCall(id="c", name="read", arguments="{}",
                                                             result=f"{hostile}\nsecond line")])])
    unfolded = {(0, -1), (0, 0)}
    lines = [row_text(trajectory, row, unfolded)[0]
             for row in [Row(0), *trajectory_rows(trajectory, unfolded)]]
    assert all("\x1b" not in line and "\u202e" not in line and "\t" not in line
               for line in lines)
    assert any("cut \\x1b[2J here\\x1b]52;c;cm0K\\x07 \\u202eevil cell" in line for line in lines)
    assert any("cut \\x1b[2J here\\x1b]52;c;cm0K\\x07 \\u202eevil   cell" in line
               for line in lines), "an unfolded result keeps its tab as spaces"


async def test_an_unfolded_result_wraps_is_copied_and_goes_to_the_pager(out: Path) -> None:
    """A 610-character tool result, unfolded, is cut at the pane's edge; w wraps it to the
    width (every character of it on screen, in order), w again cuts it; y copies the whole
    result; o hands it to $PAGER (Textual's test driver cannot suspend: it says so)."""
    from rubric_audit.core.text import visible
    from tui.widgets.trajectory import BODY_INDENT, part_text

    app = ReviewApp(ReviewData(out, "ana"))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await open_task(app, pilot, DCF)
        view = app.query_one(StepsView)
        target = next(i for i, r in enumerate(view.rows)
                      if (r.step, r.call) == (3, 0) and r.body is None)
        await pilot.press(*["down"] * target, "enter")
        await pilot.pause()
        result = view.trajectory.steps[3].tool_calls[0].result
        width = view.scrollable_content_region.width
        cut = [r.body for r in view.rows if (r.step, r.call) == (3, 0) and r.body is not None]
        await pilot.press("w")
        await pilot.pause()
        wrapped = [r.body for r in view.rows if (r.step, r.call) == (3, 0) and r.body is not None]
        drawn = [view.line_strip(i, width).text for i, r in enumerate(view.rows)
                 if (r.step, r.call) == (3, 0) and r.body is not None]
        await pilot.press("y", "o")
        await pilot.pause()
        copied = app.clipboard
        said = toasts(app)
        await pilot.press("w")
        await pilot.pause()
        again = [r.body for r in view.rows if (r.step, r.call) == (3, 0) and r.body is not None]
        what = part_text(view.trajectory, view.rows[view.cursor])[0]
    assert len(result) == 610 and "\n" not in result
    assert len(cut) == 1 and len(cut[0]) == 400, "cut: one line of its first 400 characters"
    assert len(wrapped) > 4 and "".join(wrapped) == visible(result)
    assert all(len(line.rstrip()) <= width for line in drawn) and \
        all(len(body) <= width - BODY_INDENT[True] for body in wrapped)
    assert copied == visible(result) and what == "the result of step 3's toolbelt_list_tools"
    assert any("copied the result of step 3's toolbelt_list_tools (610 characters)" in t
               for t in said)
    assert any("cannot hand over to $PAGER" in t for t in said)
    assert again == cut


def test_the_pager_gets_the_whole_text_with_controls_made_visible(tmp_path: Path) -> None:
    from tui.widgets.trajectory import show_in_pager

    text = "first line\n" + "x" * 5000 + "\x1b]52;c;cm0K\x07 end"
    paged = tmp_path / "paged.txt"
    assert show_in_pager(text, f"sh -c 'cat > {paged}'") is None
    assert paged.read_text() == "first line\n" + "x" * 5000 + "\\x1b]52;c;cm0K\\x07 end"
    assert "could not run" in (show_in_pager(text, str(tmp_path / "no-pager")) or "")


async def test_slash_searches_the_steps_and_n_moves_the_cursor(out: Path) -> None:
    app = ReviewApp(ReviewData(out, "ana"))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await open_task(app, pilot, DCF)
        view = app.query_one(StepsView)
        lines = [view.line_text(i).casefold() for i in range(view.line_count())]
        expected = [i for i, line in enumerate(lines) for _ in range(line.count("sheets"))]
        await pilot.press("slash", *"sheets", "enter")
        await pilot.pause()
        first = view.cursor
        await pilot.press("n")
        await pilot.pause()
        second = view.cursor
        said = str(app.query_one("#search-line").render())
    assert len(expected) > 2 and (first, second) == tuple(expected[:2])
    assert said.startswith(f"/sheets · 2 of {len(expected)}")
