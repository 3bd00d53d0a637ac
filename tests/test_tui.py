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
from tui.data import benchmark_of, world_items

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
    await run(out, "ana", ["2", "k", "m", *"judge ignored the range", "enter"])
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
        await pilot.press("m", *"odd gold", "enter")
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
    await run(out, "ana", ["m", *"gold is stale", "enter", "1", "1", "4", "4", "p", "1", "1"])
    await run(out, "ben", ["1", "4", "4", "4", "p", "1", "2"])
    await run(out, "cy", ["1", "1", "4", "m", *"judge ok", "enter", "1", "p", "1"])
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


async def test_keys_can_be_remapped_and_the_app_names_the_new_key(out: Path,
                                                                   tmp_path: Path) -> None:
    keymap = tmp_path / "keys.toml"
    keymap.write_text('[keys]\n"review.label_1" = "v"\n"review.note" = "ctrl+n"\n')
    keys = load_keymap(keymap)
    data = ReviewData(out, "ana")
    app = ReviewApp(data, keys)
    async with app.run_test(size=(200, 40)) as pilot:
        await pilot.pause()
        status = str(app.query_one("#status").render())
        shown = footer(app)
        await pilot.press("1", "v")
        await pilot.pause()
    data.close()
    assert status.startswith("v defective task · 2 grader error"), status
    assert shown["v"] == "defective task" and "1" not in shown and shown["^n"] == "Note"
    assert labels(out, "ana") == {"nordlys_02": "defective_task"}, "1 no longer labels"


def test_the_keymap_is_checked_at_start_with_a_line_per_problem(out: Path,
                                                                tmp_path: Path) -> None:
    """A key another binding holds, an unknown id (with the id meant), a key Textual does not
    know: each its own line, exit 2, before the store is opened; a keymap file named that is
    not there is refused too."""
    keymap = tmp_path / "keys.toml"
    keymap.write_text('[keys]\n"review.label_1" = "x"\n"review.labl_2" = "y"\n'
                      '"review.skip" = "ctrl+nope"\n"trajectory.wrap" = "m"\n')
    before = (out / "audit.db").read_bytes()
    result = CliRunner().invoke(cli, ["review", str(out), "--keymap", str(keymap)])
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.stderr.strip().splitlines() == [
        f"error: {keymap}: keys.review.labl_2: no binding has this id (did you mean "
        "review.label_2?)",
        f"error: {keymap}: keys.review.skip: not a key: 'ctrl+nope' (a character, or a name "
        "such as f5, pagedown or ctrl+k)",
        f"error: {keymap}: keys.review.label_1: x is already finding.false_alarm's key",
        f"error: {keymap}: keys.trajectory.wrap: m is already review.note's key"]
    assert (out / "audit.db").read_bytes() == before
    missing = CliRunner().invoke(cli, ["review", str(out), "--keymap", str(tmp_path / "no")])
    assert missing.exit_code == 2
    assert missing.stderr.startswith(f"error: {tmp_path / 'no'}: no such keymap file")


def test_the_default_keys_clash_nowhere() -> None:
    from tui.keymap import check_keymap

    assert check_keymap(Path("keymap.toml"), {}, ReviewApp.binding_scopes()) == {}
    ids = [b.id for scope in ReviewApp.binding_scopes().values() for b in scope
           if b.id is not None]
    keys = check_keymap(Path("k.toml"), {i: "ctrl+f12" for i in ids[:1]},
                        ReviewApp.binding_scopes())
    assert keys == {ids[0]: "ctrl+f12"}


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
        await app.workers.wait_for_complete()
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
        await app.workers.wait_for_complete()
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
    [shown] = [blocks for label, blocks in world_items(benchmark_of(data), task)
               if "fenced_note" in label]
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
        await app.workers.wait_for_complete()
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


async def wait_for_world(app: ReviewApp, pilot) -> None:
    """Until the World tab has read the task's world (it reads in a thread)."""
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_each_task_opens_at_its_top_and_each_tab_keeps_its_place_per_task(
        out: Path) -> None:
    """Moved in every tab of one task, then on to the next: the next task opens at the top of
    every tab (the Findings tab's cursor had stayed on the previous task's third finding); back
    on the first task, every tab is where it was left."""
    from tui.widgets.document import DocumentView

    data = ReviewData(out, "ana")
    app = ReviewApp(data)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press(*"jjjjj")  # kestrel_02: three findings
        await pilot.pause()
        first = app.current_task
        await pilot.press("f3", "down", "down", "f1", "pagedown", "pagedown", "f2", "pagedown",
                          "f5")
        await wait_for_world(app, pilot)
        await pilot.press("down", "down", "tab", "pagedown")
        await pilot.pause()
        views = {name: app.query_one(f"#{name}-tab") for name in ("overview", "answers",
                                                                    "findings", "world")}
        left = {name: tab.position() for name, tab in views.items()}
        assert left["findings"][0] == 2 and left["world"][0] == 2
        assert left["overview"][0][1] > 0
        assert left["world"][1][1] > 0, "the world's third item, scrolled"
        await pilot.press("1")  # labelled: on to kestrel_03, six findings
        await pilot.pause()
        assert app.current_task != first and app.query_one("#task").active == "overview"

        async def each_tab() -> dict[str, Any]:
            """Each tab opened in turn: where it is."""
            found = {}
            for key, name in (("f1", "overview"), ("f2", "answers"), ("f3", "findings"),
                              ("f5", "world")):
                await pilot.press(key)
                await wait_for_world(app, pilot)
                found[name] = views[name].position()
            return found

        opened = await each_tab()
        await pilot.press("k")  # back on kestrel_02
        await pilot.pause()
        back = await each_tab()
        world_doc = app.query_one("#world", DocumentView)
        world_scroll = world_doc.scroll_y
    data.close()
    assert opened["overview"] == [(0, 0)] and opened["answers"] == [(0, 0)]
    assert opened["findings"] == (0, 0), "the next task's findings from the first"
    assert opened["world"] == (0, (0, 0))
    assert back == left and world_scroll == left["world"][1][1]


def focus_bar(widget) -> str:
    """The kind of border on the widget's left: the focus bar is "outer"."""
    return widget.styles.border_left[0]


async def test_every_pane_is_reached_with_visible_focus_and_arrows_act_on_it_only(
        out: Path) -> None:
    """Tab reaches every pane of every tab, the focused one (only) shows a bar on its left; ↓ in
    the World tab's list moves through the world (it moved to the next task and flipped back to
    Overview), ↓ in a text scrolls it, Esc gives the keys back to the queue, where ↓ is the next
    task."""
    from textual.widgets import Tabs

    from tui.widgets.document import LinesView
    from tui.widgets.lists import PaneList, TaskList

    data = ReviewData(out, "ana")
    app = ReviewApp(data)
    panes = (TaskList, PaneList, LinesView)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.focused, TaskList)
        reached = {}
        for key, name in (("f1", "overview"), ("f2", "answers"), ("f3", "findings"),
                          ("f4", "gold"), ("f5", "world"), ("f6", "trajectory")):
            await pilot.press(key)
            await wait_for_world(app, pilot)
            seen = []
            for _ in range(8):
                seen.append(app.focused)
                bars = [w for w in app.screen.query("*") if isinstance(w, panes) and w.display
                        and focus_bar(w) == "outer"]
                assert bars == ([app.focused] if isinstance(app.focused, panes) else []), name
                await pilot.press("tab")
                await pilot.pause()
            reached[name] = {w.id or w.classes for w in seen if not isinstance(w, Tabs)}
        await pilot.press("f5")
        await wait_for_world(app, pilot)
        items = app.query_one("#world-items", PaneList)
        position = app.position
        await pilot.press("down", "down", "down")  # the workbook: a long grid
        await pilot.pause()
        assert (items.highlighted, app.position) == (3, position), "the list moved, not the queue"
        assert app.query_one("#task").active == "world"
        await pilot.press("tab", "end")
        await pilot.pause()
        assert app.query_one("#world").scroll_y > 0, "the world's viewer scrolled"
        await pilot.press("escape", "down")
        await pilot.pause()
        assert isinstance(app.focused, TaskList) and app.position == position + 1
    data.close()
    assert reached["overview"] == {"tasks", "overview"}
    assert reached["answers"] == {"tasks", frozenset({"answer"})}
    assert reached["findings"] == {"tasks", "findings"}
    assert reached["gold"] == {"tasks", "gold"}
    assert reached["world"] == {"tasks", "world-items", "world"}
    assert reached["trajectory"] == {"tasks", "trajectory-attempts", "trajectory-steps"}


async def test_a_filter_that_matches_nothing_shows_no_task_and_names_what_there_is(
        out: Path) -> None:
    from tests.test_tui_trajectory import type_filter

    data = ReviewData(out, "ana")
    models = sorted({model for _, _, model, _, _ in data.store.attempt_rows()})
    app = ReviewApp(data)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await type_filter(app, pilot, "model:gpt-5")
        nothing = app.query_one("#nothing")
        said = str(nothing.render())
        tabs_shown = app.query_one("#tabs").display
        await type_filter(app, pilot, "check:no_such_check model:gpt-5")
        both = str(nothing.render())
        await type_filter(app, pilot, "domain:law label:sound")
        labels = str(nothing.render())
        await type_filter(app, pilot, "check:judge_credited_hedge")  # only passed tasks
        elsewhere = str(nothing.render())
        await type_filter(app, pilot, "")
        cleared = (app.query_one("#tabs").display, nothing.display, app.current_task)
    data.close()
    assert app.task_ids and cleared == (True, False, app.task_ids[0])
    assert not tabs_shown and said.startswith(
        f"no task matches model:gpt-5; models here: {', '.join(models)}"), said
    assert "no task matches check:no_such_check; checks with findings here: " in both
    assert "no task matches model:gpt-5" in both
    assert labels.startswith("no task matches label:sound; your labels here: none"), labels
    assert elsewhere.startswith("No task in Failures matches check:judge_credited_hedge; it "
                                "matches ") \
        and "(p)" in elsewhere, elsewhere


async def test_undo_after_a_skip_takes_back_the_skip(out: Path) -> None:
    data = ReviewData(out, "ana")
    app = ReviewApp(data)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        labelled, skipped = app.task_ids[:2]
        await pilot.press("1", "s", "u")
        await pilot.pause()
        after_one = (set(data.mine()), set(app.skipped), app.current_task)
        assert any("undid the skip of nordlys_03" in t for t in toasts(app))
        await pilot.press("u")
        await pilot.pause()
        after_two = (set(data.mine()), set(app.skipped), app.current_task)
    data.close()
    assert after_one == ({labelled}, set(), skipped), "the skip undone, the label kept"
    assert after_two == (set(), set(), labelled), "then the label"


@pytest.fixture
def disputed_out(out: Path) -> Path:
    """ana and ben labelled the first three failures: the same on the first, tied on the other
    two; each left a note on the second."""
    for reviewer, chosen in (("ana", ["defective_task", "model_error", "ambiguous"]),
                             ("ben", ["defective_task", "grader_error", "model_error"])):
        data = ReviewData(out, reviewer)
        for task_id, label in zip(data.queues["failures"], chosen, strict=False):
            data.record(task_id, label)
        data.record(data.queues["failures"][1], None, f"{reviewer}: the mail changes it")
        data.close()
    return out


async def test_disputed_tasks_are_their_own_queue_with_each_reviewers_label_and_note(
        disputed_out: Path) -> None:
    from tui.widgets.document import DocumentView

    data = ReviewData(disputed_out, "cy")
    disputed = data.queues["failures"][1:3]
    app = ReviewApp(data)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        progress = str(app.query_one("#progress").render())
        elsewhere = app.query_one("#overview", DocumentView).plain()
        await pilot.press("d")
        await pilot.pause()
        queue = list(app.task_ids)
        shown = app.query_one("#overview", DocumentView).plain()
        await pilot.press("4")  # cy's label settles it: model error, two against one
        await pilot.pause()
        after = list(app.task_ids)
    data.close()
    assert "disputed: 2 (d)" in progress
    assert queue == disputed and after == disputed[1:]
    assert shown.startswith("Reviewers disagree: your label settles it\n\nana: model error\n"
                            "    note: ana: the mail changes it\nben: grader error\n"
                            "    note: ben: the mail changes it"), shown
    assert "Reviewers disagree" not in elsewhere, "outside the Disputed queue, labels unseen"


async def test_help_defines_each_label_lists_every_key_and_pages(out: Path) -> None:
    from rich.console import Console
    from textual.containers import VerticalScroll
    from textual.widgets import Static

    from rubric_audit.core.model import LABELS
    from tui.screens.help import HelpScreen

    data = ReviewData(out, "ana")
    app = ReviewApp(data)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=400, record=True)
        console.print(app.screen.query_one(Static).content)
        shown = console.export_text()
        scroll = app.screen.query_one(VerticalScroll)
        await pilot.press("pagedown")
        await pilot.pause()
        paged = scroll.scroll_y
        keys = [(k, i) for _, rows in app.help_sections() for k, _, i in rows]
    data.close()
    for meaning in LABELS.values():
        assert meaning.name in shown and meaning.means in shown and meaning.example in shown
    assert paged > 0, "PageDown scrolls help (the app's PageDown took it)"
    for key in ("enter/space", "left", "right", "home", "end", "tab/shift+tab", "?", "escape"):
        assert any(k == key for k, _ in keys), key
    ids = {b.id for scope in ReviewApp.binding_scopes().values() for b in scope
           if b.id and not b.id.startswith(("help.", "ask.", "review.label_"))}
    assert ids <= {i for _, i in keys}, ids - {i for _, i in keys}


async def test_at_80_columns_answers_stack_the_queue_hides_and_the_tabs_zoom(out: Path) -> None:
    from tui.widgets.document import DocumentView

    data = ReviewData(out, "ana")
    attempts = len(data.attempts_of[data.queues["failures"][0]])
    app = ReviewApp(data)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        narrow = list(app.query(".answer").results(DocumentView))
        stacked = narrow[0].plain()
        keys = footer(app)
        await pilot.press("b")
        await pilot.pause()
        hidden = (app.query_one("#sidebar").display, app.query_one("#task").size.width)
        await pilot.press("b", "z")
        await pilot.pause()
        zoomed = app.screen.maximized is app.query_one("#task")
        await pilot.press("escape")
        await pilot.pause()
        back = (app.screen.maximized, app.focused.id)
    wide_app = ReviewApp(data)
    async with wide_app.run_test(size=(200, 48)) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        wide = len(wide_app.query(".answer"))
    data.close()
    assert attempts == 4 and len(narrow) == 1 and wide == 4
    assert [line for line in stacked.splitlines() if line.endswith("(graded)")] == [
        "atlas-1 #1 (graded)", "atlas-1 #2 (graded)", "cirrus-2 #1 (graded)",
        "cirrus-2 #2 (graded)"]
    assert keys.get("?") == "Help", keys
    assert hidden == (False, 80)
    assert zoomed and back == (None, "tasks")


async def test_the_world_tab_says_it_is_reading(out: Path, monkeypatch) -> None:
    import threading

    from textual.widgets import Static

    import tui.app

    release = threading.Event()
    read = tui.app.world_items

    def slow(*args):
        release.wait(10)
        return read(*args)

    monkeypatch.setattr(tui.app, "world_items", slow)
    data = ReviewData(out, "ana")
    app = ReviewApp(data)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("f5")
        await pilot.pause()
        progress = app.query_one("#world-progress", Static)
        reading = (progress.display, str(progress.render()))
        release.set()
        await wait_for_world(app, pilot)
        done = (progress.display, app.query_one("#world-items").option_count)
    data.close()
    assert reading == (True, "Reading the world's files, mail, calendar and chat…")
    assert done[0] is False and done[1] > 3


async def test_slash_searches_the_view_and_n_goes_from_match_to_match(out: Path) -> None:
    from tui.widgets.document import CURRENT_MATCH, MATCH, DocumentView

    data = ReviewData(out, "ana")
    app = ReviewApp(data)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("enter")  # the keys to the overview
        await pilot.pause()
        view = app.query_one("#overview", DocumentView)
        expected = [(i, line) for i, line in enumerate(view.plain().splitlines())
                    for _ in range(line.casefold().count("nok"))]
        await pilot.press("slash", *"nok", "enter")
        await pilot.pause()
        line = app.query_one("#search-line")
        first = str(line.render())
        await pilot.press("n", "n")
        await pilot.pause()
        third = str(line.render())
        row = expected[2][0]
        drawn = view.render_line(row - view.scroll_offset.y)
        styles = {segment.style.bgcolor for segment in drawn if segment.style}
        on_screen = view.scroll_offset.y <= row < view.scroll_offset.y + view.size.height
        await pilot.press("N")
        await pilot.pause()
        second = str(line.render())
        await pilot.press("slash", "ctrl+u", "enter")
        await pilot.pause()
        cleared = line.display
    data.close()
    assert len(expected) > 3
    assert first.startswith(f"/nok · 1 of {len(expected)} · n next · N previous"), first
    assert third.startswith(f"/nok · 3 of {len(expected)}") and second.startswith("/nok · 2 of")
    assert CURRENT_MATCH.bgcolor in styles, "the current match in its colour"
    assert on_screen, "the view goes to the match"
    assert MATCH.bgcolor is not None and not cleared


async def test_keys_pressed_faster_than_tasks_are_shown_land_where_they_were_pressed(
        out: Path) -> None:
    """j, j, F5 typed at once: the World tab of the third task. The queue's messages for the
    first two moves, handled after, took the view back to the second task's Overview."""
    data = ReviewData(out, "ana")
    app = ReviewApp(data)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await app.action_move(1)
        await app.action_move(1)
        app.action_open_tab("world")
        await wait_for_world(app, pilot)
        landed = (app.position, app.query_one("#task").active, app.focused.id)
    data.close()
    assert landed == (2, "world", "world-items")


async def test_verdicts_are_a_table_where_there_is_room_else_lines(out: Path) -> None:
    """At 80 columns each attempt's verdicts are a line with its rationale under it (the
    table's rationale column was a word wide); wide, a table."""
    from tui.widgets.document import DocumentView

    data = ReviewData(out, "ana")
    shown = {}
    for size in ((80, 24), (160, 48)):
        app = ReviewApp(data)
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            shown[size[0]] = app.query_one("#overview", DocumentView).plain()
    data.close()
    narrow, wide = shown[80].splitlines(), shown[160].splitlines()
    at = narrow.index("atlas-1 #1 · recorded: fail · code fail")
    assert narrow[at + 1].startswith("  ## Evidence The final answer says:")
    assert max(map(len, narrow)) <= 80
    assert any(re.match(r" +attempt +judge +code +rationale", line) for line in wide)
    assert any(re.match(r" +atlas-1 #1 +recorded: fail +fail +## Evidence", line)
               for line in wide)


async def test_label_words_are_the_same_in_the_app_the_report_and_the_exports(
        out: Path) -> None:
    import csv

    from rubric_audit.core.model import LABELS

    data = ReviewData(out, "ana")
    app = ReviewApp(data)
    async with app.run_test(size=(200, 40)) as pilot:
        await pilot.press("p")  # the pass audit: sound pass, unearned pass
        await pilot.pause()
        passed = app.current_task
        pass_words = {k: d for k, d in footer(app).items() if k in "12"}
        await pilot.press("2", "f")
        await pilot.pause()
        failed = app.current_task
        fail_words = {k: d for k, d in footer(app).items() if k in "1234"}
        await pilot.press("1")
        await pilot.pause()
    names = {data.tasks[passed].name: "unearned", data.tasks[failed].name: "defective_task"}
    data.close()
    assert pass_words == {"1": "sound pass", "2": "unearned pass"}
    assert list(fail_words.values()) == [LABELS[x].name for x in (
        "defective_task", "grader_error", "ambiguous", "model_error")]
    assert CliRunner().invoke(cli, ["report", str(out)]).exit_code == 0
    report = (out / "report.md").read_text()
    tasks = report.split("## Tasks")[1]
    for name, label in names.items():
        assert re.search(rf"\| {name} \|[^\n]*\| {LABELS[label].name} \|", tasks), name
    assert CliRunner().invoke(cli, ["export", str(out), "--format", "csv"]).exit_code == 0
    assert CliRunner().invoke(cli, ["reviews", str(out), "--format", "csv"]).exit_code == 0
    for path in (out / "export" / "reviews.csv", out / "export" / "labels.csv"):
        with path.open(newline="") as f:
            rows = list(csv.DictReader(f))
        assert {(r["label"], r["label_name"]) for r in rows if r["label"]} == {
            ("unearned", "unearned pass"), ("defective_task", "defective task")}, path
