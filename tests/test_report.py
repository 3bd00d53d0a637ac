"""The report: statistics against known values, report.html in headless Chromium, `report`."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import bootstrap
from typer.testing import CliRunner

from rubric_audit.cli import app
from rubric_audit.core.model import Review
from rubric_audit.report.stats import (
    RESAMPLES,
    mean_interval,
    paired_difference,
    pass_at_k,
    pass_hat_k,
    proportion,
)
from rubric_audit.store.audit_store import AuditStore
from tests.browser import CHROMIUM, Browser
from tests.conftest import SAMPLE, make_task, make_variant


def test_wilson_and_clopper_pearson_for_1_of_30() -> None:
    wilson = proportion(1, 30)
    assert (round(wilson.low, 3), round(wilson.high, 3)) == (0.006, 0.167)
    exact = proportion(1, 30, "beta")
    assert (round(exact.low, 4), round(exact.high, 3)) == (0.0008, 0.172)
    assert proportion(0, 0).estimate is None


@pytest.mark.parametrize("method", ["wilson", "beta"])
def test_proportion_intervals_are_statsmodels_bit_for_bit(method: str) -> None:
    from statsmodels.stats.proportion import proportion_confint

    for n in [*range(1, 41), 97, 3840]:
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            ours = proportion(k, n, method)
            low, high = (float(x) for x in proportion_confint(k, n, alpha=0.05, method=method))
            # where statsmodels' rounding puts a bound past the estimate, ours is the estimate
            assert (ours.low, ours.high) == (min(low, k / n), max(high, k / n)), (k, n)


def test_paired_bootstrap_matches_scipy() -> None:
    rng = np.random.default_rng(7)
    a, b = rng.random(40), rng.random(40)
    ours = paired_difference(list(a), list(b), seed=11)
    theirs = bootstrap((a, b), lambda x, y: np.mean(x - y), paired=True, vectorized=False,
                       n_resamples=RESAMPLES, method="percentile",
                       random_state=np.random.default_rng(11)).confidence_interval
    assert (ours.low, ours.high) == pytest.approx((theirs.low, theirs.high))
    assert ours.estimate == pytest.approx(float(np.mean(a - b)))
    flat = mean_interval([0.5, 0.5, 0.5])
    assert (flat.low, flat.high) == (0.5, 0.5)


@pytest.mark.parametrize("seed", [0, 3, 20_260_529])
@pytest.mark.parametrize("n", [2, 7, 31])
def test_vectorised_bootstrap_gives_scipy_intervals(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed + n)
    passes, scores = (rng.random(n) < 0.4).astype(float), rng.random(n)
    if np.all(passes == passes[0]):
        passes[0] = 1 - passes[0]
    for values in (passes, scores):
        theirs = bootstrap((values,), np.mean, vectorized=False, n_resamples=RESAMPLES,
                           method="percentile", random_state=np.random.default_rng(seed))
        ours = mean_interval(list(values), seed=seed)
        assert (ours.low, ours.high) == tuple(theirs.confidence_interval)
    theirs = bootstrap((passes, scores), lambda x, y: np.mean(x - y), paired=True,
                       vectorized=False, n_resamples=RESAMPLES, method="percentile",
                       random_state=np.random.default_rng(seed))
    ours = paired_difference(list(passes), list(scores), seed=seed)
    assert (ours.low, ours.high) == tuple(theirs.confidence_interval)


def test_pass_at_k_and_pass_hat_k() -> None:
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)
    assert pass_at_k(4, 0, 2) == 0 and pass_at_k(4, 3, 2) == 1
    assert pass_hat_k(4, 3, 2) == pytest.approx(0.5)
    assert pass_hat_k(4, 4, 4) == 1 and pass_hat_k(4, 3, 4) == 0


def chromium(page: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium on `page`, with a profile of its own (a profile still held by the
    previous, exiting browser makes the next one abort)."""
    profile = tempfile.mkdtemp(prefix="profile-", dir=page.parent)
    return subprocess.run(
        [CHROMIUM or "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
         *options, page.as_uri()], capture_output=True, text=True, timeout=120, check=False)


def console_messages(page: Path) -> list[str]:
    done = chromium(page, "--dump-dom")
    assert "</html>" in done.stdout, done.stderr[-2000:]
    return re.findall(r":CONSOLE[^\]]*\] (.*)", done.stderr)


FIRST_SCREEN = """(() => {
  const box = (q) => document.querySelector(q)?.getBoundingClientRect();
  return {scrollWidth: document.documentElement.scrollWidth, width: innerWidth,
          height: innerHeight, actionsTop: box("#next-actions")?.top ?? null,
          firstActionBottom: box("#next-actions-table tbody tr")?.bottom ?? null,
          headline: document.querySelector("#scores + p")?.textContent ?? null};
})()"""


def first_screen(browser: Browser, page: Path) -> dict[str, Any]:
    """`page` laid out in headless Chromium: its width against the window's, where Next actions
    and its first row are, the headline's text."""
    browser.open(page)
    return browser.evaluate(FIRST_SCREEN)  # type: ignore[no-any-return]


# Six tasks of two criteria, three attempts each: (criterion verdicts per attempt)
RESCORED_TASKS = {
    "t1": [("fail", "pass")] * 3,  # labelled ambiguous
    "t2": [("pass", "pass"), ("fail", "fail"), ("pass", "fail")],  # labelled defective
    "t3": [("pass", "pass"), ("pass", "pass"), ("fail", "pass")],
    "t4": [("fail", "fail")] * 3,  # an error finding flags it; its gold fails (not achievable)
    "t5": [("fail", "pass"), ("pass", "pass"), ("fail", "fail")],  # labelled grader error
    "t6": [("pass", "pass")] * 3,  # labelled unearned credit
}
# option -> (pass@1, mean criterion score, pass@3, pass^3), by hand from the table above; per
# task as graded: t1 (0, 1/2, 0, 0), t2 (1/3, 1/2, 1, 0), t3 (2/3, 5/6, 1, 0), t4 (0, 0, 0, 0),
# t5 (1/3, 1/2, 1, 0), t6 (1, 1, 1, 1)
RESCORED = {
    "as_graded": ((0 + 1 / 3 + 2 / 3 + 0 + 1 / 3 + 1) / 6,
                  (0.5 + 0.5 + 5 / 6 + 0 + 0.5 + 1) / 6, 4 / 6, 1 / 6),
    "without_defective": ((0 + 2 / 3 + 0 + 1 / 3 + 1) / 5, (0.5 + 5 / 6 + 0 + 0.5 + 1) / 5,
                          3 / 5, 1 / 5),
    "without_defective_or_ambiguous": ((2 / 3 + 0 + 1 / 3 + 1) / 4, (5 / 6 + 0 + 0.5 + 1) / 4,
                                       3 / 4, 1 / 4),
    "ambiguous_as_pass": ((1 + 1 / 3 + 2 / 3 + 0 + 1 / 3 + 1) / 6,
                          (1 + 0.5 + 5 / 6 + 0 + 0.5 + 1) / 6, 5 / 6, 2 / 6),
    "grader_error_as_pass": ((0 + 1 / 3 + 2 / 3 + 0 + 1 + 1) / 6,
                             (0.5 + 0.5 + 5 / 6 + 0 + 1 + 1) / 6, 4 / 6, 2 / 6),
    # t6 fails on every attempt; its criterion score stays as graded
    "unearned_as_fail": ((0 + 1 / 3 + 2 / 3 + 0 + 1 / 3 + 0) / 6,
                         (0.5 + 0.5 + 5 / 6 + 0 + 0.5 + 1) / 6, 3 / 6, 0.0),
    "achievable": ((0 + 2 / 3) / 2, (0.5 + 5 / 6) / 2, 1 / 2, 0.0),
    "without_flagged": ((0 + 1 / 3 + 2 / 3 + 1 / 3 + 1) / 5, (0.5 + 0.5 + 5 / 6 + 0.5 + 1) / 5,
                        4 / 5, 1 / 5),
}


def test_every_rescoring_option_scores_its_tasks_as_computed_by_hand() -> None:
    """pass@1, the mean criterion score, pass@k and pass^k of each rescoring option, from
    reviewers' labels, the achievable set and the flagged tasks; under `ambiguous_as_pass` and
    `grader_error_as_pass` the task so labelled counts as passed in all four (it moved pass@1
    only), under `unearned_as_fail` as failed in pass@1, pass@k and pass^k."""
    from rubric_audit.core.model import Attempt, Criterion, CriterionGrade, Finding, Task
    from rubric_audit.report.statistics import OPTIONS, FindingRow, build_statistics

    tasks = [Task(id=t, name=t, world_id="w", prompt="p", criteria=[
        Criterion(id=f"{t}_c1", text="a"), Criterion(id=f"{t}_c2", text="b")])
        for t in RESCORED_TASKS]
    attempts, grades = [], []
    for t, runs in RESCORED_TASKS.items():
        for k, verdicts in enumerate(runs, start=1):
            attempts.append(Attempt(id=f"{t}_{k}", task_id=t, model="m", variant="v", index=k,
                                    state="graded"))
            grades += [CriterionGrade(attempt_id=f"{t}_{k}", criterion_id=f"{t}_c{i}",
                                      grader="recorded", verdict=v)
                       for i, v in enumerate(verdicts, start=1)]
    flag = Finding(task_id="t4", check="control_gold_fails", severity="error", message="m")
    labels: dict[str, str | None] = {"t1": "ambiguous", "t2": "defective_task",
                                     "t5": "grader_error", "t6": "unearned"}
    stats = build_statistics(tasks, attempts, grades, ["recorded"], [FindingRow.of(flag)], {},
                             labels, achievable={"t1", "t3"}, finding_reviews=[])
    rows = {r.option: r for r in stats.scores}
    assert set(rows) == set(OPTIONS) == set(RESCORED)
    for option, expected in RESCORED.items():
        row = rows[option]
        got = (row.pass_at_1.estimate, row.criterion_score.estimate,
               row.pass_at_k.estimate if row.pass_at_k else None,
               row.pass_hat_k.estimate if row.pass_hat_k else None)
        assert row.k == 3, option
        assert got == pytest.approx(expected), option


@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("REQUIRE_CHROMIUM"),
                    reason="needs Debian's chromium (CI installs it and sets REQUIRE_CHROMIUM)")
def test_report_first_screen_opens_with_next_actions_and_does_not_scroll_sideways(
        tmp_path: Path) -> None:
    """At 1400x900 the report opens on what to fix: the Next actions heading and its first task
    on the first screen, no sideways scroll; the headline follows."""
    assert CHROMIUM, "REQUIRE_CHROMIUM is set but chromium is not installed"
    wide = tmp_path / "wide.html"
    wide.write_text('<!DOCTYPE html><html><body><h2 id="next-actions">x</h2>'
                    '<div style="width:3000px;margin-top:2000px">x</div></body></html>')
    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["audit", str(SAMPLE), "--out", str(out)]).exit_code == 0
    with Browser(tmp_path, 1400, 900) as browser:
        planted = first_screen(browser, wide)
        assert planted["scrollWidth"] > planted["width"], "the check can fail"
        assert planted["firstActionBottom"] is None, "the check can fail"
        seen = first_screen(browser, out / "report.html")
    assert seen["scrollWidth"] <= seen["width"] == 1400, "no horizontal scroll at 1400 px"
    assert seen["actionsTop"] < seen["firstActionBottom"] <= seen["height"] == 900, \
        "Next actions and its first task on the first screen"
    assert re.search(r"atlas-1 passes 57\.5% \[[\d.]+%, [\d.]+%\] of 20 tasks as graded, "
                     r"67\.9% .* of the 14 achievable tasks, .* after review", seen["headline"])
    shot = tmp_path / "first-screen.png"
    chromium(out / "report.html", "--window-size=1400,900", "--hide-scrollbars",
             f"--screenshot={shot}")
    assert shot.read_bytes()[16:24] == (1400).to_bytes(4, "big") + (900).to_bytes(4, "big")


@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("REQUIRE_CHROMIUM"),
                    reason="chromium is not on PATH, so report.html was not opened in a browser: "
                           "install Debian's chromium (apt-get install chromium; .ci/run does)")
def test_html_report_opens_in_chromium_without_console_errors(tmp_path: Path) -> None:
    assert CHROMIUM, "REQUIRE_CHROMIUM is set but chromium is not installed"
    planted = tmp_path / "planted.html"
    planted.write_text('<!DOCTYPE html><html><body><script>console.error("planted")</script>'
                       '</body></html>')
    assert any("planted" in m for m in console_messages(planted)), "the check can fail"
    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["audit", str(SAMPLE), "--out", str(out)]).exit_code == 0
    page = (out / "report.html").read_text()
    assert "<svg" in page
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page), "self-contained"
    assert console_messages(out / "report.html") == []


def test_report_command_shows_reviews_recorded_since(tmp_path: Path) -> None:
    out = tmp_path / "out"
    runner = CliRunner()
    assert runner.invoke(app, ["audit", str(SAMPLE), "--out", str(out)]).exit_code == 0
    before = (out / "report.md").read_text()
    assert "reviewed 0" in before
    with AuditStore(out / "audit.db") as store:
        failures = [t for t in store.tasks() if t.name in ("meridian_04", "nordlys_02")]
        for task, label in zip(failures, ("model_error", "defective_task"), strict=True):
            store.append_review(Review(reviewer="ana", created_at="2026-11-29T00:00:00Z",
                                       task_id=task.id, label=label))
    result = runner.invoke(app, ["report", str(out)])
    assert result.exit_code == 0 and "2/7 failures" in result.stdout
    after = (out / "report.md").read_text()
    assert "| defective task | 1 |" in after and "| model error | 1 |" in after
    assert "Ran offline: no model was called." in after, "the audit's settings are kept"


def test_a_disputed_task_is_reviewed_and_its_own_group_never_unreviewed(tmp_path: Path) -> None:
    """Two reviewers tied on two of the four failures they labelled: those two count as
    labelled, in a disputed group of their own, and the unreviewed share is only the failures
    nobody labelled (it counted the disputed as unreviewed)."""
    out = tmp_path / "out"
    runner = CliRunner()
    assert runner.invoke(app, ["audit", str(SAMPLE), "--out", str(out)]).exit_code == 0
    labels = {"nordlys_02": ("defective_task", "defective_task"),
              "nordlys_03": ("model_error", "grader_error"),
              "nordlys_04": ("ambiguous", "model_error"), "meridian_04": ("model_error", None)}
    with AuditStore(out / "audit.db") as store:
        ids = {t.name: t.id for t in store.tasks()}
        for name, by in labels.items():
            for reviewer, label in zip(("ana", "ben"), by, strict=True):
                if label:
                    store.append_review(Review(reviewer=reviewer, created_at="2026-11-29",
                                               task_id=ids[name], label=label))
    assert runner.invoke(app, ["report", str(out)]).exit_code == 0
    summary = json.loads((out / "audit.json").read_text())
    review, split = summary["statistics"]["review"], summary["failure_split"]
    assert (review["failures_reviewed"], review["disputed"]) == (4, 2)
    assert review["failure_groups"] == {"defective_task": 1, "grader_error": 0, "ambiguous": 0,
                                        "model_error": 1, "disputed": 2}
    assert review["grader_error_rate"]["n"] == 2, "rates are over the tasks with a majority"
    assert {summary["task_names"][t]: s for t, s in summary["review_labels"].items()} == {
        "nordlys_02": "defective_task", "nordlys_03": "disputed", "nordlys_04": "disputed",
        "meridian_04": "model_error"}
    outcomes = [o for o in summary["task_outcomes"] if o["grader"] == split["grader"]]
    failed = [(t, o["model"]) for o in outcomes for t, v in o["tasks"].items() if v == "fail"]
    unlabelled = [t for t, _ in failed if summary["task_names"][t] not in labels]
    disputed = [t for t, _ in failed if summary["task_names"][t] in ("nordlys_03", "nordlys_04")]
    def share(group: str) -> float:
        return split["groups"][group]["estimate"]

    assert share("unreviewed") == pytest.approx(len(unlabelled) / len(failed))
    assert disputed and share("disputed") == pytest.approx(len(disputed) / len(failed))
    report = (out / "report.md").read_text()
    queued = review["failures_queue"] + review["passes_queue"]
    assert f"Reviewers have labelled 4 of the {queued} queued tasks (2 of them disputed: no " \
           "majority label)" in report
    # the Tasks table's review column: the majority label, or disputed where reviewers tie
    assert re.search(r"\| nordlys_03 \| [^\n]* \| disputed \| [^|\n]* \|\n", report)
    assert re.search(r"\| meridian_04 \| [^\n]* \| model error \| [^|\n]* \|\n", report)


def test_the_readme_defines_each_label_in_the_words_the_code_uses() -> None:
    from rubric_audit.core.model import LABELS

    readme = (Path(__file__).parent.parent / "README.md").read_text()
    for meaning in LABELS.values():
        assert f"| {meaning.name} | {meaning.means} | {meaning.example} |" in readme, meaning.name


def test_report_without_an_audit_is_a_user_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2 and "run `rubric-audit audit` first" in result.stderr


def test_outcomes_per_task_and_model(tmp_path: Path) -> None:
    import json

    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["audit", str(SAMPLE), "--out", str(out)]).exit_code == 0
    summary = json.loads((out / "audit.json").read_text())
    names = {v: k for k, v in summary["task_names"].items()}
    broken = {t for ids in summary["achievable"]["excluded"].values() for t in ids}
    for outcome in summary["task_outcomes"]:
        counts = outcome["counts"]
        assert counts["pass"] + counts["fail"] + counts["unavailable"] == 20
        assert outcome["tasks"][names["nordlys_02"]] == "fail", "failed as graded"
        assert names["nordlys_02"] in broken and counts["unachievable"] == len(broken), \
            "its gold is broken: unachievable, not unavailable"
        assert outcome["tasks"][names["meridian_04"]] == "fail", "a genuine model error"
    cirrus = next(o for o in summary["task_outcomes"] if o["variant"] == "cirrus-2")
    assert cirrus["tasks"][names["nordlys_06"]] == "fail"
    assert "| error | nordlys_04 | not reviewed |" in (out / "report.md").read_text()


def test_report_names_criteria_and_tasks_and_repeats_no_row(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["audit", str(SAMPLE), "--out", str(out)]).exit_code == 0
    report = (out / "report.md").read_text()
    with AuditStore(out / "audit.db") as store:
        ids = [t.id for t in store.tasks()] + [c.id for t in store.tasks() for c in t.criteria]
    assert not [i for i in ids if i in report], "criteria as C1 ..., tasks by name"
    assert "| error | nordlys_04 | not reviewed | C1 States a success fee of NOK 25.9m |" in report
    tables = re.findall(r"((?:^\|.*\|\n)+)", report, re.M)
    for table in tables:
        rows = table.splitlines()[2:]
        assert len(rows) == len(set(rows)), rows
    assert "| `as_graded` = `without_defective` = `without_defective_or_ambiguous` = " \
           "`ambiguous_as_pass` = `grader_error_as_pass` = `unearned_as_fail` | " \
           "fictional/atlas-1 |" in report, "no reviews: one row"
    assert "| 0.3 to 0.7 | 4 | 0 | 0 | 1 | 2 | 1 |" in report
    assert report.count("*unavailable*:") == 1 and "A task is unavailable for a model when its " \
        "gold fails" not in report, "defined once, and only for what never completed grading"


def test_a_check_that_fires_on_most_tasks_is_one_line_in_the_report_and_the_export(
        tmp_path: Path) -> None:
    """The tolerance lint: n of N numeric criteria state no tolerance, once for the benchmark in
    audit.json, report.md, report.html and the export, beside its few findings."""
    import json

    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["audit", str(SAMPLE), "--out", str(out)]).exit_code == 0
    summary = json.loads((out / "audit.json").read_text())
    [line] = [s for s in summary["findings"]["summaries"]
              if s["check"] == "numeric_criterion_without_tolerance"]
    findings = summary["findings"]["by_check"]["numeric_criterion_without_tolerance"]
    assert line["findings"] == findings and 0 < findings < line["counted"] <= line["total"]
    with AuditStore(out / "audit.db") as store:
        numeric_criteria = sum(len(t.criteria) for t in store.tasks())
    assert line["total"] < numeric_criteria, "only numeric criteria are counted"
    said = (f"{line['counted']} of {line['total']} numeric criteria state no tolerance or "
            f"rounding rule")
    assert said in (out / "report.md").read_text()
    assert said in html.unescape((out / "report.html").read_text())
    assert CliRunner().invoke(app, ["export", str(out), "--format", "json"]).exit_code == 0
    [exported] = json.loads((out / "export" / "check_summaries.json").read_text())
    assert {k: exported[k] for k in line} == line and exported["line"].startswith(said)


def test_ungraded_is_its_own_state_in_outcomes_scores_and_screen(tmp_path: Path) -> None:
    """m/one: task_1 failed twice and once not graded yet, task_2 not graded yet, task_3 failed
    outside the model; m/two ran only task_1, never graded. Nothing ungraded is a fail or
    unavailable, and no task is unavailable for a model that never attempted it."""
    t1, t2, t3 = (make_task(t) for t in ("task_1", "task_2", "task_3"))
    fail = {"task_1_c1": "fail", "task_1_c2": "pass"}
    make_variant(tmp_path / "runs", "m1", "m/one", [
        (t1, 1, fail), (t1, 2, fail), (t1, 3, None), (t2, 1, None), (t3, 1, None)],
        failures=["task_3"])
    make_variant(tmp_path / "runs", "m2", "m/two", [(t1, 1, None)])
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["audit", str(tmp_path / "runs"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "audit.json").read_text())
    outcomes = {o["variant"]: o for o in summary["task_outcomes"]}
    assert outcomes["m1"]["tasks"] == {"task_1": "fail", "task_2": "ungraded",
                                       "task_3": "unavailable"}
    assert outcomes["m2"]["tasks"] == {"task_1": "ungraded"}, "task_2 and 3 never attempted"
    assert outcomes["m2"]["counts"] == {"pass": 0, "fail": 0, "ungraded": 1, "unavailable": 0,
                                        "unachievable": 0, "unknown": 1}, \
        "no gold without a benchmark: achievability unknown, never unachievable"
    assert (outcomes["m1"]["unavailable_rate"], outcomes["m2"]["unavailable_rate"]) == (1 / 3, 0)
    scores = {s["variant"]: s for s in summary["scores"]}
    assert [(s["graded_attempts"], s["ungraded_attempts"], s["unavailable_attempts"],
             s["tasks_scored"], s["pass_at_1"]) for s in (scores["m1"], scores["m2"])] == [
        (2, 2, 1, 1, 0.0), (0, 1, 0, 0, None)], "m/two is listed though no grader scored it"
    assert summary["ungraded"] == 3
    assert summary["screen"]["tasks"] == {"task_1": "uncertified", "task_2": "ungraded",
                                          "task_3": "infra_limited"}
    report = (out / "report.md").read_text()
    assert "| m2 | m2 | recorded | 0/1 | 0 | 1 | 0 | n/a | n/a |" in report
    assert "| m2 | m2 | recorded | 0 | 0 | 1 | 0 | 0.0% | 0 | 0 | 1 |" in report
    assert "| m/one | m1 | recorded | 0 | 1 | 1 | 1 | 33.3% | 1 | 0 | 3 |" in report, \
        "the unavailable attempt the scores count, beside the unavailable task"
    assert "| task_1 | m1 fail, m2 ungraded | unknown (no gold) |" in report
    assert "unachievable (" not in report, "without a gold nothing is unachievable"
    assert "**m1** passes 0.0% of 1 task as graded, 0.0% after review (1 task, " in report
    assert "| task_2 | m1 ungraded, m2 - |" in report and "| task_3 | m1 unavailable, m2 - |" \
        in report
    assert "3 of them ungraded" in report and report.count("*ungraded*:") == 1
    text = " ".join(result.stdout.split())
    assert "m1 (archipelago): 5 attempts, 2 graded, 2 ungraded, 1 unavailable" in text
    assert "3 attempts are ungraded" in text


def test_a_log_of_runs_no_grader_graded_is_scored_nowhere_and_screened_ungraded(
        tmp_path: Path) -> None:
    """With no grade at all (a run just made), every task is ungraded: none infra-limited."""
    tasks = [make_task(f"task_{i}") for i in range(3)]
    make_variant(tmp_path / "runs", "m1", "m/one", [(t, 1, None) for t in tasks])
    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["audit", str(tmp_path / "runs"), "--out",
                                    str(out)]).exit_code == 0
    summary = json.loads((out / "audit.json").read_text())
    assert summary["screen"]["partition"]["ungraded"] == 3
    assert summary["screen"]["partition"]["infra_limited"] == 0
    [score] = summary["scores"]
    assert (score["grader"], score["ungraded_attempts"], score["pass_at_1"]) == ("", 3, None)
    assert "| m1 | m1 | none | 0/3 | 0 | 3 | 0 | n/a | n/a |" in (out / "report.md").read_text()
