"""The report's site: a page per task beside report.html, written whole with the reports, what a
page holds, and in headless Chromium: navigation, a filter, a sort and a fold."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rubric_audit.audit import reports
from rubric_audit.audit.reports import write_reports
from rubric_audit.cli import app
from rubric_audit.core.model import Review
from rubric_audit.store.audit_store import AuditStore
from tests.browser import CHROMIUM, Browser
from tests.conftest import SAMPLE, folder_contents
from tests.test_actions import JUDGE_FAILED_MEASURED

runner = CliRunner()
HREF = re.compile(r'<a href="([^"]*)">(.*?)</a>')


def _review(store: AuditStore, reviewer: str, task: str, label: str | None, note: str = "") -> None:
    task_id = next(t.id for t in store.tasks() if t.name == task)
    store.append_review(Review(reviewer=reviewer, created_at="2026-12-01T00:00:00Z",
                               task_id=task_id, label=label, note=note))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample audited, then reviewed: meridian_04 disputed (ana: model error with a note,
    ben: defective task), a note alone from ana on kestrel_05, and the reports written again."""
    out = tmp_path_factory.mktemp("site") / "out"
    assert runner.invoke(app, ["audit", str(SAMPLE), "--out", str(out)]).exit_code == 0
    with AuditStore(out / "audit.db") as store:
        _review(store, "ana", "meridian_04", "model_error", "both missed the amendment of 3 May")
        _review(store, "ben", "meridian_04", "defective_task")
        _review(store, "ana", "kestrel_05", None, "5.8% is inside the stated 0.2 points")
    assert runner.invoke(app, ["report", str(out)]).exit_code == 0
    return out


@pytest.fixture
def copied(audited: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "out"
    shutil.copytree(audited, copy, symlinks=True)
    return copy


def _pages(out: Path) -> dict[str, Path]:
    """Task name -> its page, as report.html's Tasks table links it."""
    table = (out / "report.html").read_text().split('id="tasks-table"', 1)[1].split("</table>")[0]
    return {html.unescape(name): out / href for href, name in HREF.findall(table)}


def _text(page: Path) -> str:
    return html.unescape(re.sub(r"<[^>]*>", " ", page.read_text()))


def test_every_task_has_a_page_and_every_link_stays_inside_the_folder(audited: Path) -> None:
    names = json.loads((audited / "audit.json").read_text())["task_names"]
    pages = _pages(audited)
    assert sorted(pages) == sorted(names.values())
    assert sorted(pages.values()) == sorted((audited / "site" / "tasks").iterdir())
    for page in [audited / "report.html", *pages.values()]:
        for href, _ in HREF.findall(page.read_text()):
            assert not re.match(r"[a-z]+:|/", href), f"relative: {href}"
            target = (page.parent / href.partition("#")[0]).resolve()
            assert target.is_file() and target.is_relative_to(audited.resolve()), href


def test_a_task_page_holds_prompt_rubric_answers_verdicts_findings_trajectory_and_notes(
        audited: Path) -> None:
    with AuditStore(audited / "audit.db") as store:
        task = next(t for t in store.tasks() if t.name == "kestrel_05")
        attempts = store.attempts_for_task(task.id)
        trajectory = store.trajectory(attempts[0].id)
    assert trajectory is not None
    text = " ".join(_text(_pages(audited)["kestrel_05"]).split())
    assert " ".join(task.prompt.split()) in text
    assert f"C1 {task.criteria[0].text}" in text
    assert all(" ".join((a.answer or "").split()) in text for a in attempts)
    assert "fail : ## Evidence The answer states an average contribution margin of 5.8%" in text, \
        "the recorded judge's verdict and rationale"
    assert "pass : 5.8% meets 5.7% (stated range 5.5% to 5.9%)" in text, "the code checker's"
    assert "judge_failed_value_within_tolerance" in text
    assert f"the check is right on {JUDGE_FAILED_MEASURED}" in text
    assert "fix: re-grade C1: the answer's value is within its tolerance" in text
    [read] = [c for _, c in trajectory.calls() if c.name == "files_read"]
    assert "trajectory: 4 steps, 2 tool calls" in text
    assert f"call {read.name} with its arguments" in text
    assert " ".join((read.result or "").split()[:20]) in text, "the tool's result"
    assert "ana none (notes only) 5.8% is inside the stated 0.2 points" in text
    disputed = " ".join(_text(_pages(audited)["meridian_04"]).split())
    assert "review: disputed" in disputed
    assert "ana model error both missed the amendment of 3 May" in disputed
    assert "ben defective task" in disputed


def test_the_report_shows_notes_and_the_dispute_to_settle(audited: Path) -> None:
    report = (audited / "report.md").read_text()
    tasks = report.split("\n## Tasks\n", 1)[1].split("\n## ", 1)[0]
    assert "- Disputes to settle: meridian_04 (ana: model error, ben: defective task)." in report
    [row] = [line for line in tasks.splitlines() if line.startswith("| meridian_04 | ")]
    assert row.endswith("| disputed | ana: both missed the amendment of 3 May |")
    [row] = [line for line in tasks.splitlines() if line.startswith("| kestrel_05 | ")]
    assert "judge_failed_value_within_tolerance" in row, "the strongest finding, info included"
    assert row.endswith(r"| not reviewed | ana: 5\.8% is inside the stated 0.2 points |"), \
        "a note's leading number escaped (a markdown list would start)"


def test_the_site_is_made_again_only_when_what_it_shows_changed(copied: Path) -> None:
    page = _pages(copied)["kestrel_05"]
    made = page.stat().st_mtime_ns
    assert runner.invoke(app, ["report", str(copied)]).exit_code == 0
    assert page.stat().st_mtime_ns == made, "nothing changed: the pages are kept"
    with AuditStore(copied / "audit.db") as store:
        _review(store, "ben", "kestrel_05", "sound", "checked the stores sheet")
    assert runner.invoke(app, ["report", str(copied)]).exit_code == 0
    assert "ben sound pass checked the stores sheet" in " ".join(_text(page).split())
    stray = copied / "site" / "tasks" / "a-task-no-longer-here.html"
    stray.write_text("old")
    assert runner.invoke(app, ["report", str(copied)]).exit_code == 0
    assert not stray.exists(), "the site is written whole, not over the previous one"


def _made(out: Path) -> dict[Path, tuple[bytes, int]]:
    """Each page of the site with its bytes and modification time."""
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (out / "site").rglob("*.html")}


def _changed(before: dict[Path, tuple[bytes, int]]) -> tuple[set[Path], set[Path]]:
    """The pages whose bytes changed since `before`, and those written again (a new mtime)."""
    return ({p for p, (data, _) in before.items() if p.read_bytes() != data},
            {p for p, (_, made) in before.items() if p.stat().st_mtime_ns != made})


def test_a_review_makes_again_the_page_of_its_task_and_no_other(copied: Path) -> None:
    before = _made(copied)
    with AuditStore(copied / "audit.db") as store:
        _review(store, "ben", "kestrel_05", "sound")
    assert runner.invoke(app, ["report", str(copied)]).exit_code == 0
    page = _pages(copied)["kestrel_05"]
    assert "ben sound" in " ".join(_text(page).split())
    assert _made(copied).keys() == before.keys()
    assert _changed(before) == ({page}, {page}), "the other pages are kept as they were"


def test_a_changed_attempt_makes_again_the_page_that_shows_it_and_no_other(
        tmp_path: Path) -> None:
    """Nothing stale, nothing made for nothing: a recorded rationale edited in one attempt's
    grades.json (a conflict with the stored recording, which is kept) changes its task's page,
    which shows that finding, and every other page is the file it was."""
    bench, out = tmp_path / "sample", tmp_path / "out"
    shutil.copytree(SAMPLE, bench)
    assert runner.invoke(app, ["audit", str(bench), "--out", str(out)]).exit_code == 0
    before = _made(out)
    grades = sorted((bench / "runs" / "cirrus-2").rglob("grades.json"))[0]
    text = grades.read_text()
    assert '"grade_rationale": "' in text
    grades.write_text(text.replace('"grade_rationale": "', '"grade_rationale": "Read again. ', 1))
    assert runner.invoke(app, ["audit", str(bench), "--out", str(out)]).exit_code == 0
    task_id = grades.parent.parent.name
    shown = [p for p in before if f"task id: {task_id}" in _text(p)]
    assert len(shown) == 1 and len(before) > 1
    assert "input_attempt_conflict" in shown[0].read_text()
    assert _made(out).keys() == before.keys()
    assert _changed(before) == (set(shown), set(shown))


def test_a_failure_while_the_site_is_made_keeps_the_previous_one(
        copied: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = folder_contents(copied, "audit.db")
    real = reports.site_pages

    def failing(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        pages = real(*args, **kwargs)  # type: ignore[arg-type]
        yield next(pages)
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(reports, "site_pages", failing)
    with AuditStore(copied / "audit.db") as store, pytest.raises(RuntimeError):
        _review(store, "ben", "kestrel_05", "sound")  # what a page shows changed
        write_reports(store, copied)
    assert folder_contents(copied, "audit.db") == before, "the previous reports and site"
    assert not list(copied.glob(".site.*")), "no staging folder left"


def test_a_site_that_is_not_the_tools_own_folder_is_refused(copied: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("mine")
    shutil.rmtree(copied / "site")
    (copied / "site").symlink_to(elsewhere)
    report = (copied / "report.md").read_bytes()
    result = runner.invoke(app, ["report", str(copied)])
    assert result.exit_code == 2 and "is not the site folder rubric-audit writes" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert (elsewhere / "keep.txt").read_text() == "mine" and len(list(elsewhere.iterdir())) == 1
    assert (copied / "report.md").read_bytes() == report, "nothing written"


@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("REQUIRE_CHROMIUM"),
                    reason="chromium is not on PATH, so the site was not opened in a browser: "
                           "install Debian's chromium (apt-get install chromium; .ci/run does)")
def test_the_site_in_chromium_navigates_filters_sorts_and_unfolds(audited: Path,
                                                                  tmp_path: Path) -> None:
    """Driven as a reader would, with the mouse and the keyboard: report.html filters its Tasks
    table by a word and sorts it by a column, a task's name opens its page, the page's links
    lead to the next task and back to the report, a trajectory unfolds; no page logs an error
    and the page's content security policy is the one it ships with."""
    assert CHROMIUM, "REQUIRE_CHROMIUM is set but chromium is not installed"
    visible = ("Array.from(document.querySelectorAll('#tasks-table tbody tr'))"
               ".filter((r) => !r.hidden).map((r) => r.cells[0].textContent)")
    with Browser(tmp_path) as browser:
        browser.open(audited / "report.html")
        assert browser.evaluate("document.querySelector('meta[http-equiv]').content").startswith(
            "default-src 'none'; script-src 'sha256-")
        assert len(browser.evaluate(visible)) == 20
        browser.click("input[data-filter=tasks]")
        browser.type("nordlys")
        assert browser.evaluate(visible) == [f"nordlys_0{i}" for i in range(1, 8)]
        assert browser.evaluate("document.getElementById('tasks-count').textContent") == \
            "7 of 20 rows"
        browser.click("#tasks-table th:nth-child(5)")  # findings, fewest first
        counts = browser.evaluate("Array.from(document.querySelectorAll('#tasks-table tbody tr'))"
                                  ".filter((r) => !r.hidden).map((r) => +r.cells[4].textContent)")
        assert counts == sorted(counts) and counts != sorted(counts, reverse=True)
        browser.click("#tasks-table th:nth-child(5)")
        counts = browser.evaluate("Array.from(document.querySelectorAll('#tasks-table tbody tr'))"
                                  ".filter((r) => !r.hidden).map((r) => +r.cells[4].textContent)")
        assert counts == sorted(counts, reverse=True), "a second click sorts the other way"
        assert browser.console_errors() == []
        browser.click("#tasks-table a[href*='nordlys_02-']")
        browser.wait_for("Page.loadEventFired")
        assert re.search(r"/site/tasks/nordlys_02-[0-9a-f]{12}\.html$",
                         browser.evaluate("location.href"))
        assert browser.evaluate("document.querySelector('h1').textContent") == "nordlys_02"
        browser.click("nav a[href*='nordlys_03-']")
        browser.wait_for("Page.loadEventFired")
        assert browser.evaluate("document.querySelector('h1').textContent") == "nordlys_03"
        folded = "document.querySelector('#attempt-1 ~ details')"
        assert browser.evaluate(f"{folded}.open") is False
        browser.click("#attempt-1 ~ details > summary")
        assert browser.evaluate(f"{folded}.open") is True
        assert browser.evaluate(f"{folded}.querySelector('details').getBoundingClientRect()"
                                ".height") > 0, "its steps are shown"
        assert browser.console_errors() == []
        browser.click("nav a[href$='report.html#tasks']")
        browser.wait_for("Page.loadEventFired")
        assert browser.evaluate("location.href").endswith("/report.html#tasks")
        assert browser.evaluate("document.getElementById('tasks').getBoundingClientRect().top") \
            < 50, "at the Tasks table"
