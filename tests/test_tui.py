"""The review app with Textual's Pilot, its snapshots, and the review commands."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rubric_audit.audit.job import run_audit
from rubric_audit.cli import app as cli
from rubric_audit.core.model import LABEL_NAMES, Review
from rubric_audit.review.session import ReviewData
from tests.conftest import SAMPLE, SHARED_RUNS, bench_of_shared_runs, make_task, make_variant
from tests.fakes.openai_server import FakeOpenAI, Reply, text
from tui.app import ReviewApp, load_keymap
from tui.data import world_items

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("audit") / "out"
    run_audit(SAMPLE, None, out)
    return out


@pytest.fixture
def out(audited: Path, tmp_path: Path) -> Path:
    """A fresh copy of the sample's audit for each test (reviews are appended to it)."""
    copy = tmp_path / "out"
    shutil.copytree(audited, copy)
    return copy


async def run(out: Path, reviewer: str, keys: list[str], keymap: dict | None = None,
              size: tuple[int, int] = (120, 40)) -> dict[str, Any]:
    """Press `keys` in the app; returns what the status and progress lines said at the end."""
    data = ReviewData(out, reviewer)
    app = ReviewApp(data, keymap)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        seen = {"status": str(app.query_one("#status").render()),
                "progress": str(app.query_one("#progress").render()),
                "queue": app.queue, "tasks": list(app.task_ids)}
    data.close()
    return seen


def footer(app: ReviewApp) -> dict[str, str]:
    """Key -> description of every key the footer shows."""
    from textual.widgets._footer import FooterKey

    return {k.key_display: k.description for k in app.screen.query(FooterKey)}


def toasts(app: ReviewApp) -> list[str]:
    """The messages the app has notified and not yet timed out."""
    return [n.message for n in app._notifications]


def labels(out: Path, reviewer: str) -> dict[str, str]:
    data = ReviewData(out, reviewer)
    try:
        return {data.tasks[t].name: r.label for t, r in data.mine().items()}
    finally:
        data.close()


async def test_label_moves_on_and_undo_retracts(out: Path) -> None:
    await run(out, "ana", ["1", "4"])
    assert labels(out, "ana") == {"nordlys_02": "defective_task", "nordlys_03": "model_error"}
    await run(out, "ana", ["u"])
    assert labels(out, "ana") == {"nordlys_02": "defective_task"}
    data = ReviewData(out, "ana")
    log = data.store.reviews()
    data.close()
    assert [r.retracts is not None for _, r in log] == [False, False, True], "append-only"


async def test_note_is_kept_with_the_label(out: Path) -> None:
    await run(out, "ana", ["2", "k", "n", *"judge ignored the range", "enter"])
    data = ReviewData(out, "ana")
    first = data.queues["failures"][0]
    notes = [r.note for r in data.notes(first)]
    label = data.mine()[first].label
    data.close()
    assert notes == ["judge ignored the range"] and label == "grader_error"


@pytest.mark.parametrize("queue", ["f", "p", "a"])
async def test_visible_label_names_match_what_each_key_records(out: Path, queue: str) -> None:
    """On every task of every queue the footer and status line name the label keys, and a key
    (each in turn over the tasks) records the label it is named for: the keys' meaning follows
    the task under the cursor."""
    data = ReviewData(out, "ana")
    app = ReviewApp(data)
    checked: set[tuple[int, str]] = set()
    async with app.run_test(size=(200, 40)) as pilot:
        await pilot.press(queue)
        await pilot.pause()
        for i, task_id in enumerate(list(app.task_ids)):
            assert app.current_task == task_id
            shown = {k: d for k, d in footer(app).items() if k in "1234"}
            status = str(app.query_one("#status").render())
            assert shown and not any(d.startswith("Label") for d in shown.values())
            assert all(f"{key} {name}" in status for key, name in shown.items())
            key = sorted(shown)[i % len(shown)]
            await pilot.press(key)
            await pilot.pause()
            assert LABEL_NAMES[data.mine()[task_id].label] == shown[key], (task_id, key)
            checked.add((len(shown), key))
    mixed = {data.labels_for(t) for t in data.queues["all"]}
    data.close()
    assert {(2, "1"), (2, "2")} <= checked if queue == "p" else {(4, "4")} <= checked
    if queue == "a":
        assert len(mixed) == 2, "the All queue mixes failure and pass labels"


async def test_tab_keys_next_task_on_overview_and_page_down_scrolls(out: Path) -> None:
    from tui.widgets.document import DocumentView

    data = ReviewData(out, "ana")
    app = ReviewApp(data)
    async with app.run_test(size=(100, 24)) as pilot:
        await pilot.pause()
        view = app.query_one("#task")
        await pilot.press("f3")
        assert view.active == "findings"
        await pilot.press("right_square_bracket")
        assert view.active == "gold"
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert view.active == "answers"
        await pilot.press("j")
        await pilot.pause()
        assert view.active == "overview" and app.position == 1
        scroll = app.query_one("#overview-tab").query_one(DocumentView)
        await pilot.press("pagedown")
        await pilot.pause()
        assert scroll.scroll_y > 0 and app.position == 1, "PageDown scrolls, the queue stays"


async def test_skip_note_and_undo_say_what_they_did(out: Path) -> None:
    data = ReviewData(out, "ana")
    app = ReviewApp(data)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        first = app.current_task
        await pilot.press("s")
        await pilot.pause()
        assert any("skipped nordlys_02" in t for t in toasts(app))
        row = str(app.query_one("#tasks").get_option_at_index(0).prompt)
        assert row.startswith("»") and "skipped" in row
        await pilot.press("n", *"odd gold", "enter")
        await pilot.pause()
        assert any("note saved on nordlys_03" in t for t in toasts(app))
        await pilot.press("u")
        await pilot.pause()
        assert any("undid the note “odd gold” on nordlys_03" in t for t in toasts(app))
        assert first not in data.mine()
    data.close()


async def test_reopening_resumes_at_the_first_unreviewed_task(out: Path) -> None:
    await run(out, "ana", ["1", "1"])
    data = ReviewData(out, "ana")
    app = ReviewApp(data)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.position == 2
        assert data.tasks[app.current_task].name == "nordlys_04"
    data.close()


async def test_two_reviewers_and_their_kappa(out: Path) -> None:
    await run(out, "ana", ["1", "1", "4", "4"])
    await run(out, "ben", ["1", "4", "4", "4"])
    data = ReviewData(out, "ana")
    failures = data.agreements()["failures"]
    data.close()
    assert [(k.reviewers, k.tasks) for k in failures.pairs] == [(["ana", "ben"], 4)]
    assert failures.pairs[0].kappa == pytest.approx(0.5) and failures.fleiss is None
    seen = await run(out, "cy", ["1", "1", "4", "1"])
    assert "Fleiss 0.33 (4 tasks)" in seen["status"]


async def test_reviews_export_three_reviewers_kappas_and_notes(out: Path) -> None:
    """Three reviewers: a Cohen's kappa per pair and Fleiss' over the tasks all labelled, for
    failures and passes apart; notes kept with labels (a note before the label too)."""
    await run(out, "ana", ["n", *"gold is stale", "enter", "1", "1", "4", "4", "p", "1", "1"])
    await run(out, "ben", ["1", "4", "4", "4", "p", "1", "2"])
    await run(out, "cy", ["1", "1", "4", "n", *"judge ok", "enter", "1", "p", "1"])
    result = CliRunner().invoke(cli, ["reviews", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    exported = json.loads((out / "export" / "labels.json").read_text())
    failures, passes = exported["agreement"]["failures"], exported["agreement"]["passes"]
    assert [p["reviewers"] for p in failures["pairs"]] == [["ana", "ben"], ["ana", "cy"],
                                                           ["ben", "cy"]]
    assert all(p["tasks"] == 4 for p in failures["pairs"])
    assert failures["fleiss"]["tasks"] == 4 and failures["fleiss"]["kappa"] is not None
    assert {d["task"] for d in failures["disagreements"]} == {"nordlys_03", "meridian_04"}
    assert [(p["reviewers"], p["tasks"]) for p in passes["pairs"]] == [
        (["ana", "ben"], 2), (["ana", "cy"], 1), (["ben", "cy"], 1)]
    assert passes["fleiss"]["tasks"] == 1
    notes = {(r["task"], r["reviewer"]): r["notes"] for r in exported["labels"]}
    assert notes[("nordlys_02", "ana")] == ["gold is stale"]
    assert notes[("meridian_04", "cy")] == ["judge ok"]
    assert "Fleiss" in result.output and "nordlys_03: ana defective task" in result.output
    assert CliRunner().invoke(cli, ["reviews", str(out), "--format", "csv"]).exit_code == 0
    kappas = (out / "export" / "labels_agreement.csv").read_text().splitlines()
    assert len(kappas) == 1 + 4 + 4, "header, 3 pairs + Fleiss for failures and for passes"
    assert "gold is stale" in (out / "export" / "labels.csv").read_text()
    assert CliRunner().invoke(cli, ["report", str(out)]).exit_code == 0
    report = (out / "report.md").read_text()
    assert "- failures: Cohen ana-ben " in report and "Fleiss" in report
    assert "nordlys_03 (ana defective task, ben model error, cy defective task)" in report


async def test_pass_audit_takes_pass_labels(out: Path) -> None:
    await run(out, "ana", ["p", "3", "2"])
    data = ReviewData(out, "ana")
    sample = data.queues["passes"]
    stored = data.store.meta("pass_audit")
    result = {data.tasks[t].name: r.label for t, r in data.mine().items()}
    data.close()
    assert stored == {"seed": 0, "per_domain": 5, "tasks": sample}
    assert list(result.values()) == ["unearned"], "3 is not a pass label; 2 is unearned"


async def test_a_review_whose_evidence_changed_is_stale(out: Path) -> None:
    data = ReviewData(out, "ana")
    task = data.queues["failures"][0]
    with data.store.transaction():
        data.store.append_review(Review(reviewer="ana", created_at="2026-01-01T00:00:00Z",
                                        task_id=task, label="model_error",
                                        evidence_hash="old-evidence"))
    data.close()
    seen = await run(out, "ana", [])
    assert "1 of your reviews are stale" in seen["status"]


async def test_keys_can_be_remapped(out: Path, tmp_path: Path) -> None:
    keymap = tmp_path / "keys.toml"
    keymap.write_text('[keys]\n"review.label_1" = "x"\n')
    await run(out, "ana", ["1", "x"], load_keymap(keymap))
    assert labels(out, "ana") == {"nordlys_02": "defective_task"}


@pytest.mark.parametrize(("content", "problem"), [
    (b"[keys\nx = 1", "malformed TOML: Expected ']' at the end of a table declaration"),
    (b"keys = 3", "keys: expected a table of binding id = key, found 3"),
    (b'[keys]\n"review.label_1" = "\xff"', "not UTF-8 text (byte 27)")])
def test_an_unusable_keymap_is_one_line_before_the_store_is_opened(out: Path, tmp_path: Path,
                                                                    content: bytes,
                                                                    problem: str) -> None:
    keymap = tmp_path / "keys.toml"
    keymap.write_bytes(content)
    before = (out / "audit.db").read_bytes()
    result = CliRunner().invoke(cli, ["review", str(out), "--keymap", str(keymap)])
    assert result.exit_code == 2, (result.output, result.exception)
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {keymap}: {problem}"), line
    assert (out / "audit.db").read_bytes() == before


@pytest.fixture(scope="module")
def fixtures_audit(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fixtures")
    run_audit(bench_of_shared_runs(root / "bench"), [SHARED_RUNS], root / "out")
    return root / "out"


async def test_the_app_opens_the_audit_of_the_shared_fixtures(fixtures_audit: Path) -> None:
    seen = await run(fixtures_audit, "ana", ["j"], size=(80, 24))
    assert seen["queue"] == "failures" and len(seen["tasks"]) == 11
    assert "Failures" in seen["progress"]


def test_main_screen_at_80x24(snap_compare, audited: Path) -> None:
    assert snap_compare(ReviewApp(ReviewData(audited, "snapshot")), terminal_size=(80, 24))


def test_main_screen_large(snap_compare, audited: Path) -> None:
    assert snap_compare(ReviewApp(ReviewData(audited, "snapshot")), terminal_size=(160, 48))


def test_help_screen(snap_compare, audited: Path) -> None:
    assert snap_compare(ReviewApp(ReviewData(audited, "snapshot")), press=["question_mark"],
                        terminal_size=(100, 32))


def test_reviews_export_and_suggestions(out: Path) -> None:
    data = ReviewData(out, "ana")
    tasks = data.queues["failures"][:2]
    with data.store.transaction():
        for reviewer in ("ana", "ben"):
            for task in tasks:
                data.store.append_review(Review(reviewer=reviewer, created_at="t", task_id=task,
                                                label="model_error",
                                                evidence_hash=data.hashes[task]))
    data.close()
    result = CliRunner().invoke(cli, ["reviews", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    exported = json.loads((out / "export" / "labels.json").read_text())
    pair = exported["agreement"]["failures"]["pairs"][0]
    assert (pair["reviewers"], pair["kappa"], pair["tasks"]) == (["ana", "ben"], 1.0, 2)
    assert len(exported["labels"]) == 4 and not any(r["stale"] for r in exported["labels"])

    def suggester(body: dict[str, Any]) -> Reply:
        prompt = body["messages"][-1]["content"]
        label = "sound" if "passed this task" in prompt else "defective_task"
        return text(json.dumps({"label": label, "reasons": "the gold contradicts the prompt"}))

    with FakeOpenAI(suggester) as server:
        made = CliRunner().invoke(cli, ["suggest", str(out), "--model", "openai/s",
                                        "--api-base", server.url],
                                  env={"OPENAI_API_KEY": "k", "RUBRIC_AUDIT_CACHE":
                                       str(out / "cache.db")})
    assert made.exit_code == 0, made.output
    data = ReviewData(out, "ana")
    suggestions = data.store.meta("suggestions")
    shown = data.details(data.queues["failures"][0]).suggestion
    data.close()
    assert len(suggestions) == 14 and shown["label"] == "defective_task"
    assert labels(out, "cy") == {}, "a suggestion is never a label"


def test_recomputation_is_shown_beside_the_criterion(audited: Path) -> None:
    from tui.render import overview

    data = ReviewData(audited, "ana")
    try:
        by_name = {t.name: t.id for t in data.tasks.values()}
        sound = overview(data.details(by_name["nordlys_01"]), [])
        planted = overview(data.details(by_name["nordlys_02"]), [])
        hedged = overview(data.details(by_name["nordlys_07"]), [])
    finally:
        data.close()
    assert "recomputed from the workbook (DCF!B18): 2,360.03" in sound and "matches" in sound
    assert "44.2094" in planted and "MISMATCH" in planted
    assert "| cirrus-2 #1 | recorded: **pass** | ⚠ **fail** (judge passed) |" in hedged


async def test_world_viewer_shows_files_sheets_and_mail(out: Path) -> None:
    from textual.widgets import OptionList, TabbedContent

    from tui.widgets.document import DocumentView

    data = ReviewData(out, "ana")
    app = ReviewApp(data)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        app.query_one("#tabs", TabbedContent).active = "tab-world"
        await pilot.pause()
        items = app.query_one("#world-items", OptionList)
        labels = [str(items.get_option_at_index(i).prompt) for i in range(items.option_count)]
        shown = {}
        assert all(items.get_option_at_index(i).prompt.no_wrap
                   for i in range(items.option_count)), "names cut at the end, never wrapped"
        for wanted in ("file Nordlys_Model.xlsx · Project_Nordlys/",
                       "mail Updated net debt at 28 February", "calendar"):
            items.highlighted = labels.index(wanted)
            await pilot.pause()
            shown[wanted] = app.query_one("#world", DocumentView).plain()
        await pilot.press("j")
        await pilot.pause()
        assert app.query_one("#task").active == "overview", "the next task opens on Overview"
        await pilot.press("f5")
        await pilot.pause()
        moved = [str(items.get_option_at_index(i).prompt) for i in range(items.option_count)]
    data.close()
    workbook = shown["file Nordlys_Model.xlsx · Project_Nordlys/"]
    assert "DCF" in workbook.splitlines() and "B21 =B20/Assumptions!B12" in workbook
    assert re.search(r"│ 21 +│ Value per share \(NOK\) +│ 48.5008 ", workbook), \
        "a grid of rows and columns; formula cells show their computed values"
    mail = shown["mail Updated net debt at 28 February"]
    assert "NOK 455.0m" in mail and "\nBest regards,\nKari Solheim\nCFO, Nordlys Foods AS" in mail, \
        "the body's line breaks kept"
    assert "Investment Committee: Project Nordlys" in shown["calendar"]
    assert "chat Project Nordlys deal team" in labels
    assert moved == labels, "the next task of the same world lists the same items"


CHEATSHEET = ["Cheatsheet: budgets are revised in mail.", "Meetings are in the calendar.",
              "Read the latest mail first.", "Answer in one line."]


@pytest.fixture
def variant_audit(tmp_path: Path) -> Path:
    """Two variants of two tasks from run folders alone: variant cheat added four sentences to
    the prompt of task_1; both saw task_2's prompt as it is."""
    changed, same = make_task("task_1"), make_task("task_2")
    verdicts = {"task_1_c1": "fail", "task_2_c1": "fail"}
    base = make_variant(tmp_path / "runs", "base", "m/one",
                        [(changed, 1, verdicts), (same, 1, verdicts)])
    cheat = make_variant(tmp_path / "runs", "cheat", "m/one", [
        ({**changed, "prompt": " ".join([changed["prompt"], *CHEATSHEET])}, 1, verdicts),
        (same, 1, verdicts)])
    run_audit(None, [base, cheat], tmp_path / "out")
    return tmp_path / "out"


async def test_overview_shows_the_prompt_a_variant_changed(variant_audit: Path) -> None:
    from tui.widgets.document import DocumentView

    def overview_text() -> str:
        return app.query_one("#overview", DocumentView).plain()

    data = ReviewData(variant_audit, "ana")
    app = ReviewApp(data)
    shown = {}
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("a")
        for _ in range(2):
            await pilot.pause()
            shown[app.current_task] = overview_text()
            await pilot.press("j")
        await pilot.press("k", "e")
        await pilot.pause()
        expanded = overview_text()
    data.close()
    preview = [line.strip() for line in shown["task_1"].splitlines() if line.strip()]
    start = preview.index("Prompt of variant cheat")
    assert preview[start + 1:start + 6] == [
        "Its agents saw the prompt above with 4 sentences added:",
        *(f"+ {s}" for s in CHEATSHEET[:3]), "… 1 more sentence (e: expand)"]
    assert f"+ {CHEATSHEET[3]}" in expanded and "more sentence" not in expanded
    assert "variant base" not in shown["task_1"], "base saw the shared prompt"
    assert "Prompt of variant" not in shown["task_2"], "both saw the same prompt"


@pytest.fixture
def harbor_audit(tmp_path: Path) -> Path:
    from tests.test_load_harbor import job, trial

    j = job(tmp_path / "jobs")
    trial(j, "unsolved", "oracle", 1.0)
    trial(j, "unsolved", reward=0.0)
    trial(j, "solved", reward=1.0)
    run_audit(None, [j], tmp_path / "out")
    return tmp_path / "out"


async def test_the_app_opens_an_audit_of_a_harbor_job(harbor_audit: Path) -> None:
    seen = await run(harbor_audit, "ana", ["a", "j"], size=(100, 30))
    assert seen["queue"] == "all" and sorted(seen["tasks"]) == ["solved", "unsolved"]


async def test_a_finding_judged_false_alarm_counts_in_the_reports_precision(out: Path) -> None:
    data = ReviewData(out, "ana")
    app = ReviewApp(data)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("x")  # outside the Findings tab: opens it, records nothing
        await pilot.pause()
        assert app.query_one("#task").active == "findings"
        assert data.store.finding_reviews() == []
        await pilot.press("a", "j", "j", "j")  # nordlys_04, four findings
        await pilot.pause()
        await pilot.press("f3", "down", "x")
        await pilot.pause()
        first, judged = [f for _, f in data.details(app.current_task).keyed_findings()[:2]]
        await pilot.press("up", "c", "c")  # confirmed, then withdrawn
        await pilot.pause()
        shown = str(app.query_one("#findings").get_option_at_index(1).prompt.renderables[0])
        assert any(f"{first.check}: your judgement withdrawn" in t for t in toasts(app))
    log = data.store.finding_reviews()
    data.close()
    assert "✗ false alarm: ana" in shown
    assert [r.verdict for _, r in log] == ["false_alarm", "confirmed", None], "append-only"
    assert log[-1][1].retracts == log[1][0]
    result = CliRunner().invoke(cli, ["report", str(out)])
    assert result.exit_code == 0, result.output
    rows = json.loads((out / "audit.json").read_text())["statistics"]["finding_precision"]
    row = next(r for r in rows if r["check"] == judged.check)
    assert (row["reviewed"], row["confirmed"], row["false_alarms"]) == (1, 0, 1)
    assert row["precision"]["estimate"] == 0.0
    table = (out / "report.md").read_text().split("## Precision of each check")[1]
    assert re.search(rf"\| `{judged.check}` \| {row['findings']} \| [^|]+ \| [^|]+ \| 1 \| "
                     r"0 / 1 / 0 \| 0\.0% \[", table), "beside its unseen and corpus precision"


@pytest.fixture
def inspect_audit(tmp_path: Path) -> Path:
    from tests.test_load_inspect import SECURITY

    run_audit(None, [SECURITY], tmp_path / "out")
    return tmp_path / "out"


async def test_the_app_opens_an_audit_of_an_inspect_log(inspect_audit: Path) -> None:
    seen = await run(inspect_audit, "ana", ["a", "j"], size=(100, 30))
    assert seen["queue"] == "all" and len(seen["tasks"]) == 3


def test_findings_read_as_sentences_in_the_criterions_units(audited: Path) -> None:
    from tui.render import findings_text

    data = ReviewData(audited, "ana")
    try:
        by_name = {t.name: t.id for t in data.tasks.values()}
        text = findings_text(data.details(by_name["nordlys_04"]))
    finally:
        data.close()
    assert "tolerance: NOK 25.85m to NOK 25.95m" in text, "not 25850000.0 beside 25.9"
    assert "criterion value: NOK 25.9m" in text and "ver_" not in text
    assert "(C1 States a success fee of NOK 25.9m)" in text



def test_world_file_with_a_code_fence_shows_whole(tmp_path: Path) -> None:
    """A world file that itself holds a ``` fence is shown verbatim in one literal block."""
    from tui.document import Literal

    bench = tmp_path / "bench"
    shutil.copytree(SAMPLE, bench)
    note = "Run this first:\n```\nSELECT 1;\n```\nThen the ledger."
    world = next(p for p in (bench / "worlds").iterdir() if p.is_dir())
    (world / "filesystem" / "fenced_note.md").write_text(note)
    run_audit(bench, None, tmp_path / "out")
    data = ReviewData(tmp_path / "out", "ana")
    task = next(t for t in data.tasks.values() if t.world_id == world.name)
    [shown] = [blocks for label, blocks in world_items(data, task.id) if "fenced_note" in label]
    assert shown == [Literal(note)]


HOSTILE_NAME = "[@click=app.quit]Q3 memo[/] \x1b]52;c;cm0gLXJmIH4K\x07\x1b[2J"


@pytest.fixture
def hostile_audit(tmp_path: Path) -> Path:
    """The sample with every task named by a stranger: a click action in markup, an OSC 52
    clipboard write and a screen clear."""
    bench = tmp_path / "bench"
    shutil.copytree(SAMPLE, bench)
    tasks = json.loads((bench / "tasks_and_rubrics.json").read_text())
    for task in tasks:
        task["task_name"] = f"{HOSTILE_NAME} {task['task_id']}"
    (bench / "tasks_and_rubrics.json").write_text(json.dumps(tasks))
    run_audit(bench, None, tmp_path / "out")
    return tmp_path / "out"


async def test_a_task_name_is_shown_as_written_never_run(hostile_audit: Path) -> None:
    """Labelling, skipping and noting a task named with markup and escapes: the toasts and the
    queue show the name with its escapes visible, no action runs (the app stays open, no label
    is recorded that nobody pressed), and the label pressed is the one recorded."""
    data = ReviewData(hostile_audit, "ana")
    app = ReviewApp(data)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        first = app.current_task
        await pilot.press("1")
        await pilot.pause()
        shown = toasts(app)
        markup = {n.markup for n in app._notifications}
        queue = "".join(s.text for s in app.query_one("#tasks").render_line(0))
        assert app.is_running
    data.close()
    assert markup == {False}, "a toast's text is never read as markup (or its actions)"
    assert any("[@click=app.quit]Q3 memo[/] \\x1b]52;c;cm0gLXJmIH4K\\x07\\x1b[2J" in t
               for t in map(str, shown)), shown
    assert not any("\x1b" in str(t) for t in shown)
    mine = labels(hostile_audit, "ana")
    assert len(mine) == 1 and first is not None
    assert next(iter(mine.values())) == "defective_task"
    assert "\x1b" not in queue


def test_csv_exports_hold_no_formula(out: Path) -> None:
    """A reviewer name and a note that a spreadsheet would run (=, +, -, @) are text in every
    CSV the tool writes: `export --format csv` and `reviews --export csv`."""
    import csv

    reviewer, note = '=HYPERLINK("http://x","y")', "+SUM(A1:A9)"
    data = ReviewData(out, reviewer)
    task_id = data.queues["failures"][0]
    data.record(task_id, "defective_task")
    data.record(task_id, None, note)
    data.close()
    assert CliRunner().invoke(cli, ["export", str(out), "--format", "csv"]).exit_code == 0
    cells = []
    for path in (out / "export").glob("*.csv"):  # the labels with their notes among them
        with path.open(newline="") as f:
            cells += [c for row in csv.reader(f) for c in row]
    assert f"'{reviewer}" in cells and any(c.startswith(f"'{note}") for c in cells)
    assert not [c for c in cells if c[:1] in ("=", "+", "@")], "no cell opens a formula"


def test_an_ungraded_attempt_says_it_is_not_graded_yet(tmp_path: Path) -> None:
    from tui.render import overview

    task = make_task()
    make_variant(tmp_path / "runs", "v", "m", [(task, 1, {"task_1_c1": "fail"}), (task, 2, None)])
    out = tmp_path / "out"
    run_audit(None, [tmp_path / "runs"], out)
    data = ReviewData(out, "ana")
    try:
        shown = overview(data.details("task_1"), [])
    finally:
        data.close()
    assert "| v #1 | recorded: **fail** |" in shown
    assert ("| v #2 | ungraded | not_applicable | no grader has graded this attempt yet "
            "(`rubric-audit grade` grades it) |") in shown


STRANGER_LINES = ["cell `<B12>` is the total", "<details><summary>more</summary>",
                  "hidden part</details>", "[draft] costs [$100]", "[click](javascript:alert(1))",
                  "[open](file:///etc/passwd)", "esc \x1b]0;pwned\x07 here **not bold**"]
STRANGER = "\n".join(STRANGER_LINES)


@pytest.fixture
def stranger_audit(tmp_path: Path) -> tuple[Path, str]:
    """The sample with one task whose prompt, gold, a world file, and its attempt's answer and
    rationale hold Markdown, HTML, Rich markup, links and an escape (its id is returned)."""
    bench = tmp_path / "bench"
    shutil.copytree(SAMPLE, bench)
    tasks = json.loads((bench / "tasks_and_rubrics.json").read_text())
    task = tasks[0]
    task.update(prompt=STRANGER, gold_response=STRANGER)
    (bench / "tasks_and_rubrics.json").write_text(json.dumps(tasks))
    (bench / "worlds" / task["world_id"] / "filesystem" / "stranger.md").write_text(STRANGER)
    variant = make_variant(tmp_path / "runs", "base", "m/one", [
        (task, 1, {c["verifier_id"]: "fail" for c in task["rubric"]})])
    attempt = variant / task["task_id"]
    trajectory = json.loads((attempt / "trajectory.json").read_text())
    trajectory["messages"][-1]["content"] = STRANGER
    (attempt / "trajectory.json").write_text(json.dumps(trajectory))
    grades = json.loads((attempt / "grades.json").read_text())
    for result in grades["verifier_results"]:
        result["verifier_result_values"]["grade_rationale"] = STRANGER
    (attempt / "grades.json").write_text(json.dumps(grades))
    run_audit(bench, [variant], tmp_path / "out")
    return tmp_path / "out", task["task_id"]


def linked_segments(app: ReviewApp) -> list[str]:
    """The text of every segment drawn in a document view that carries a link or an action."""
    from tui.widgets.document import DocumentView

    return [segment.text for view in app.query(DocumentView)
            for line in range(view.line_count())
            for segment in view.line_strip(line, max(view.size.width, 1))
            if segment.style and (segment.style.link or "@click" in segment.style.meta)]


async def test_stranger_text_is_shown_character_for_character(
        stranger_audit: tuple[Path, str]) -> None:
    """The prompt, the expanded rationale, the answer, the gold and a world file each show every
    line of the stranger's text as written (the escape as its four characters), nothing is read
    as Markdown or markup, no link is clickable, and the app keeps running."""
    from textual.widgets import OptionList

    from rubric_audit.core.text import visible
    from tests.test_tui_trajectory import screen_text

    out, task_id = stranger_audit
    wanted = [visible(line) for line in STRANGER_LINES]
    data = ReviewData(out, "ana")
    app = ReviewApp(data)
    seen: dict[str, str] = {}
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("a", "e")
        app.position = app.task_ids.index(task_id)
        await app.show_task()
        await pilot.pause()
        pages = []
        for _ in range(6):  # the overview, page by page: the prompt, then the rationale
            pages.append(screen_text(app))
            await pilot.press("pagedown")
            await pilot.pause()
        seen["overview"] = "".join(pages)
        for key, tab in (("f2", "answers"), ("f4", "gold")):
            await pilot.press(key)
            await pilot.pause()
            seen[tab] = screen_text(app)
        await pilot.press("f5")
        await pilot.pause()
        items = app.query_one("#world-items", OptionList)
        items.highlighted = next(i for i in range(items.option_count)
                                 if "stranger.md" in str(items.get_option_at_index(i).prompt))
        await pilot.pause()
        seen["world"] = screen_text(app)
        links = linked_segments(app)
        assert app.is_running
    data.close()
    for tab, shown in seen.items():
        missing = [line for line in wanted if line not in shown]
        assert not missing, f"{tab} lost {missing}"
        assert "\x1b" not in shown
    assert seen["overview"].count(wanted[0]) >= 2, "the prompt and the rationale in full"
    assert not links, links
