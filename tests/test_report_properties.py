"""The report never fails on numbers: any counts, any names, every interval around its estimate.

Audits are built from generated runs (one model or several, one task or many, no passes, all
passes, all unavailable, with or without a gold, reviewed or not, names of any text), stored in a
real audit.db and written as every report; intervals are checked in audit.json, where readers and
plots take them from.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rubric_audit.audit.reports import write_reports
from rubric_audit.core.model import Attempt, Control, Criterion, CriterionGrade, Review, Task
from rubric_audit.load.runs import RecordedRuns
from rubric_audit.report.html import SCRIPT
from rubric_audit.report.stats import mean_interval, paired_difference, proportion
from rubric_audit.store.audit_store import AuditStore
from rubric_audit.store.run_import import add_runs

BOUNDED_METHODS = ("wilson", "clopper-pearson")


@pytest.mark.parametrize("method", ["wilson", "beta"])
def test_proportions_at_none_and_all_contain_their_estimate(method: str) -> None:
    """0/n and n/n for every n to 1,000: where the Wilson bounds' rounding used to land past the
    estimate (38 values of n in 1..100)."""
    for n in range(1, 1001):
        for k in (0, n):
            i = proportion(k, n, method)  # type: ignore[arg-type]
            assert i.low is not None and i.high is not None and i.estimate is not None
            assert 0.0 <= i.low <= i.estimate <= i.high <= 1.0, (k, n, i)


@given(st.integers(1, 1000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.sampled_from(["wilson", "beta"]))
def test_every_proportion_contains_its_estimate(counts: tuple[int, int], method: str) -> None:
    k, n = counts
    i = proportion(k, n, method)  # type: ignore[arg-type]
    assert i.low is not None and i.high is not None
    assert 0.0 <= i.low <= k / n <= i.high <= 1.0


@given(st.lists(st.floats(0, 1), min_size=1, max_size=60),
       st.lists(st.floats(0, 1), min_size=1, max_size=60))
def test_bootstrap_intervals_contain_their_estimate(a: list[float], b: list[float]) -> None:
    for i in (mean_interval(a), paired_difference(a[:len(b)], b[:len(a)])):
        assert i.low is not None and i.high is not None and i.estimate is not None
        assert i.low <= i.estimate <= i.high


NAMES = st.text(max_size=30)


@st.composite
def audits(draw: st.DrawFn) -> dict[str, Any]:
    """Runs of one or more models on one or more tasks, with outcomes of any mix."""
    models = draw(st.lists(NAMES, min_size=1, max_size=3, unique=True))
    tasks = draw(st.integers(1, 12))
    outcome = st.sampled_from(["pass", "fail", "unavailable"])
    return {
        "models": models,
        "task_names": [draw(NAMES) for _ in range(tasks)],
        "criteria": [draw(st.integers(1, 2)) for _ in range(tasks)],
        "outcomes": {(m, t, k): draw(outcome) for m in range(len(models)) for t in range(tasks)
                     for k in range(1, draw(st.integers(1, 2)) + 1)},
        "gold": [draw(st.sampled_from(["none", "pass", "fail"])) for _ in range(tasks)],
        "labels": [draw(st.sampled_from([None, "defective_task", "grader_error", "ambiguous",
                                         "model_error", "sound", "unearned"]))
                   for _ in range(tasks)],
        "reviewer": draw(NAMES),
    }


def _runs(spec: dict[str, Any]) -> RecordedRuns:
    runs = RecordedRuns()
    for t, (name, n_criteria) in enumerate(zip(spec["task_names"], spec["criteria"],
                                               strict=True)):
        task = Task(id=f"t{t}", name=name, world_id="w", prompt=f"Task {t}?", source="runs",
                    criteria=[Criterion(id=f"c{c}", text=f"States {c}") for c in range(n_criteria)])
        for m, model in enumerate(spec["models"]):
            runs.recorded.setdefault(task.id, {})[f"v{m} {model}"] = task
    for (m, t, k), outcome in spec["outcomes"].items():
        variant = f"v{m} {spec['models'][m]}"
        attempt_id = Attempt.make_id(variant, f"t{t}", k)
        runs.attempts.append(Attempt(
            id=attempt_id, task_id=f"t{t}", model=spec["models"][m], variant=variant, index=k,
            state="unavailable" if outcome == "unavailable" else "graded",
            unavailable_reason="provider down" if outcome == "unavailable" else None,
            answer=None if outcome == "unavailable" else "42"))
        if outcome != "unavailable":
            runs.grades += [CriterionGrade(attempt_id=attempt_id, criterion_id=f"c{c}",
                                           grader="recorded", verdict=outcome)
                            for c in range(spec["criteria"][t])]
    for t, gold in enumerate(spec["gold"]):
        if gold != "none":
            control = Control(id=f"gold/t{t}", task_id=f"t{t}", task_version="", kind="gold",
                              answer="", expect="pass")
            runs.controls.append(control)
            runs.control_grades += [CriterionGrade(attempt_id=control.id, criterion_id=f"c{c}",
                                                   grader="recorded", verdict=gold)
                                    for c in range(spec["criteria"][t])]
    runs.share_tasks()
    return runs


def _intervals(value: Any) -> list[dict[str, Any]]:
    """Every interval in a JSON document: objects with an estimate and both bounds."""
    if isinstance(value, dict):
        own = [value] if {"estimate", "low", "high", "method"} <= value.keys() else []
        return own + [i for v in value.values() for i in _intervals(v)]
    if isinstance(value, list):
        return [i for v in value for i in _intervals(v)]
    return []


def _write_audit(spec: dict[str, Any], folder: Path) -> dict[str, Any]:
    folder.mkdir()
    runs = _runs(spec)
    with AuditStore(folder / "audit.db") as store:
        with store.transaction():
            add_runs(store, runs)
            store.add_recorded_controls(runs.controls, runs.control_grades)
            for t, label in enumerate(spec["labels"]):
                if label:
                    store.append_review(Review(reviewer=spec["reviewer"] or "r",
                                               created_at="2026-12-01T00:00:00Z",
                                               task_id=f"t{t}", label=label))
        write_reports(store, folder)
    return json.loads((folder / "audit.json").read_text())


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(audits())
@example({"models": ["$\\frac{$ mathtext"], "task_names": ["only"], "criteria": [1],
          "outcomes": {(0, 0, 1): "pass"}, "gold": ["none"], "labels": [None],
          "reviewer": "r"})
@example({"models": ["m", "n"], "task_names": ["a"] * 7, "criteria": [1] * 7,
          "outcomes": {(m, t, 1): "fail" for m in range(2) for t in range(7)},
          "gold": ["pass"] * 7, "labels": [None] * 7, "reviewer": "r"})
@example({"models": ["m"], "task_names": ["a", "b"], "criteria": [2, 1],
          "outcomes": {(0, 0, 1): "unavailable", (0, 1, 1): "unavailable"},
          "gold": ["fail", "none"], "labels": [None, None], "reviewer": "r"})
def test_reports_render_for_any_counts_and_names(tmp_path_factory: pytest.TempPathFactory,
                                                 spec: dict[str, Any]) -> None:
    folder = tmp_path_factory.mktemp("audit") / "out"
    summary = _write_audit(spec, folder)
    page = (folder / "report.html").read_text()
    assert page.rstrip().endswith("</html>")
    assert "could not be drawn" not in page
    assert (folder / "report.md").read_text().startswith("# ")
    for i in _intervals(summary):
        if i["estimate"] is None or i["low"] is None:
            continue
        assert i["low"] <= i["estimate"] <= i["high"], i
        if i["method"] in BOUNDED_METHODS:
            assert i["low"] >= 0.0 and i["high"] <= 1.0, i


def test_a_figure_that_cannot_be_drawn_leaves_the_rest_of_the_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A drawing failure (here: matplotlib's SVG writer refusing) costs that figure alone; the
    page says which figure and why, and every other report is written."""
    import matplotlib.figure

    def refuse(*args: object, **kwargs: object) -> None:
        raise RuntimeError("no SVG backend\nsecond line")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", refuse)
    spec = {"models": ["m"], "task_names": ["a", "b"], "criteria": [1, 1],
            "outcomes": {(0, 0, 1): "pass", (0, 1, 1): "fail"}, "gold": ["pass", "none"],
            "labels": [None, None], "reviewer": "r"}
    _write_audit(spec, tmp_path / "out")
    page = (tmp_path / "out" / "report.html").read_text()
    assert "This figure could not be drawn (RuntimeError: no SVG backend second line)" in page
    assert "<figcaption>pass@1 with 95% bootstrap intervals</figcaption>" in page
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {
        "audit.json", "report.md", "report.html", "findings.jsonl"}


SCRIPTED = ["<img src=x onerror=alert(1)>", "[pay here](javascript:alert(1))",
            "![x](http://tracker.example/p.gif)", "<script>alert(2)</script>",
            "<!-- hidden --> \x1b]0;title\x07"]


def test_stranger_names_in_report_md_render_as_text(tmp_path: Path) -> None:
    """report.md through a CommonMark renderer (markdown-it, as GitHub-style viewers render it)
    and report.html: a task or model name holding HTML, a link, an image or a terminal escape
    is text there, never a tag, a link or an image."""
    from markdown_it import MarkdownIt

    spec = {"models": SCRIPTED[:2], "task_names": SCRIPTED, "criteria": [1] * 5,
            "outcomes": {(m, t, 1): "fail" for m in range(2) for t in range(5)},
            "gold": ["pass"] * 5, "labels": [None] * 5, "reviewer": "r"}
    _write_audit(spec, tmp_path / "out")
    report = (tmp_path / "out" / "report.md").read_text()
    rendered = MarkdownIt("commonmark").render(report)
    for tag in ("<img", "<script", "<a ", "<!--"):
        assert tag not in rendered, tag
    assert "\x1b" not in report and "&lt;img src=x onerror=alert(1)&gt;" in rendered
    pages = [tmp_path / "out" / "report.html", *(tmp_path / "out" / "site").rglob("*.html")]
    assert len(pages) == 6, "the report and a page per task"
    for path in pages:
        page = path.read_text()
        assert "<img" not in page and "\x1b" not in page
        assert page.count("<script") == 1 and f"<script>{SCRIPT}</script>" in page, "ours alone"
        for href in re.findall(r'href="([^"]*)"', page):
            assert OWN_LINK.fullmatch(href) or IN_PAGE.fullmatch(href), href
            assert IN_PAGE.fullmatch(href) or (path.parent / href.partition("#")[0]).is_file()


# Our own links: to a task's page (from the report, or from a page beside it), back to the
# report, to one of its sections; and a plot's references to its own parts (matplotlib's SVG)
OWN_LINK = re.compile(r"(?:\.\./\.\./)?(?:site/tasks/[\w-]+-[0-9a-f]{12}\.html|report\.html)"
                      r"(?:#[a-z-]+)?", re.ASCII)
IN_PAGE = re.compile(r"#[\w-]+", re.ASCII)
