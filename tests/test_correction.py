"""Pass@1 corrected for the judge's measured error (report/correction.py): by simulation against a
known truth, by hand on a small design, its refusals and its review plan, and on the sample."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from bench.correction_coverage import Scenario, simulate
from rubric_audit.cli import app
from rubric_audit.core.model import Criterion, Review, Task
from rubric_audit.report.correction import (
    MIN_PASS_REVIEWS,
    PLANNED_HALF_WIDTHS,
    build_correction,
    stratified_estimate,
)
from rubric_audit.review.session import ReviewData
from rubric_audit.store.audit_store import open_audit
from tests.conftest import SAMPLE

SIMULATIONS = 1000
DESIGN = Scenario("one model, 120 tasks in three domains of unequal size",
                  domain_sizes=(60, 36, 24), true_rates=((0.35, 0.5, 0.6),),
                  false_fail=0.2, false_pass=0.1, per_domain=5)


def _task(task_id: str, domain: str) -> Task:
    return Task(id=task_id, name=task_id, world_id="w", domain=domain, prompt="p",
                criteria=[Criterion(id=f"{task_id}-c", text="States x")])


@pytest.fixture(scope="module")
def simulated() -> tuple[float, np.ndarray, np.ndarray]:
    """SIMULATIONS benchmarks of one model, one attempt per task, judged with known errors (a
    false fail 20% of true passes, a false pass 10% of true fails) and reviewed as the app
    reviews: every failure, and 5 passes per domain drawn by the app's own sampler
    (bench/correction_coverage.py prints the same for other designs)."""
    result = simulate(DESIGN, SIMULATIONS)
    return float(result.truth[0]), result.corrected[:, 0], result.graded[:, 0]


def test_the_corrected_interval_covers_the_true_rate_in_93_to_97_percent(simulated) -> None:
    truth, corrected, _ = simulated
    covered = float(np.mean((corrected[:, 1] <= truth) & (truth <= corrected[:, 2])))
    assert 0.93 <= covered <= 0.97, f"coverage {covered:.3f} over {SIMULATIONS} simulations"


def test_the_corrected_estimate_is_unbiased_and_the_graded_one_is_not(simulated) -> None:
    """Within three standard errors of the true rate over the simulations; the pass@1 the judge
    gives is off by many, so the test fails for an estimator that ignores the reviews."""
    truth, corrected, graded = simulated
    error = corrected[:, 0].mean() - truth
    noise = corrected[:, 0].std(ddof=1) / np.sqrt(SIMULATIONS)
    assert abs(error) <= 3 * noise, f"bias {error:+.4f}, standard error {noise:.4f}"
    assert abs(graded.mean() - truth) > 10 * noise


def test_a_small_design_by_hand() -> None:
    """Two failures (one a grader error), four passes in one domain of which two are reviewed
    (one unearned), two mixed tasks graded 0.5 and 1: (1 + 0 + 0 + 1 + 0.5 + 0.5 + 0.5 + 1) / 8;
    the variance adds the spread over tasks to the domain's sampling variance."""
    graded = np.array([0, 0, 1, 1, 1, 1, 0.5, 1])
    stratum = np.array([0, 0, 1, 1, 1, 1, -1, -1])
    truth = np.array([1, 0, 0, 1, np.nan, np.nan, np.nan, np.nan])
    i = stratified_estimate(graded, stratum, truth)
    values = np.array([1, 0, 0, 1, 0.5, 0.5, 0.5, 1])
    estimate = values.mean()
    between = (((values - estimate) ** 2).sum() + 2 * 0.5 * 0.5) / (8 * 7)
    share = (1 + 0.5) / (2 + 1)
    within = (4 / 8) ** 2 * (1 - 2 / 4) * share * (1 - share) / 2
    half = 1.959963984540054 * np.sqrt(between + within)
    assert i.estimate == pytest.approx(estimate)
    assert (i.low, i.high) == pytest.approx((estimate - half, estimate + half))


def test_every_failure_and_each_domain_must_be_reviewed() -> None:
    tasks = [_task("f1", "A"), _task("f2", "A"), _task("p1", "A"), _task("p2", "A"),
             _task("p3", "B")]
    table = {("m", "v"): {"f1": (1, 0, []), "f2": (1, 0, []), "p1": (1, 1, []),
                          "p2": (1, 1, []), "p3": (1, 1, [])}}
    queues = (["f1", "f2"], ["p1", "p2", "p3"])
    sample = {"tasks": ["p1", "p2", "p3"]}
    none_drawn = build_correction(tasks, table, queues, {}, None, "j", {})
    assert none_drawn.scores == [] and len(none_drawn.refused) == 2
    assert "no pass-audit sample" in none_drawn.refused[0]
    disputed = build_correction(tasks, table, queues, {"f1": "model_error", "f2": None,
                                                       "p1": "sound", "p2": "sound",
                                                       "p3": "sound"}, sample, "j", {})
    assert disputed.refused == ["1 of the 2 failures are not reviewed (or disputed): all are "
                                "needed"]
    short = build_correction(tasks, table, queues, {"f1": "model_error", "f2": "grader_error",
                                                    "p1": "sound", "p3": "sound"},
                             sample, "j", {})
    assert short.refused == [f"1 of the 2 sampled passes in A are reviewed: {MIN_PASS_REVIEWS} "
                             "are needed"]
    enough = build_correction(tasks, table, queues, {"f1": "model_error", "f2": "grader_error",
                                                     "p1": "sound", "p2": "unearned",
                                                     "p3": "sound"}, sample, "j", {})
    assert enough.refused == []
    assert enough.scores[0].corrected.estimate == pytest.approx((0 + 1 + 1 + 0 + 1) / 5)
    assert enough.scores[0].strata == {"failures": 2, "passes": 3, "mixed": 0}
    assert enough.false_fail_rate.estimate == pytest.approx(0.5)
    assert enough.false_pass_rate.estimate == pytest.approx(2 / 3 * 0.5)


def test_a_pass_labelled_outside_the_sample_is_no_review() -> None:
    """The pass audit's random sample is the design; a pass labelled from the All tasks queue
    was chosen, not drawn, and does not count."""
    tasks = [_task(t, "A") for t in ("p1", "p2", "p3", "p4")]
    table = {("m", "v"): {t.id: (1, 1, []) for t in tasks}}
    labels: dict[str, str | None] = {"p1": "sound", "p2": "sound", "p4": "unearned"}
    result = build_correction(tasks, table, ([], [t.id for t in tasks]), labels,
                              {"tasks": ["p1", "p2"]}, "j", {})
    assert result.strata[0].reviewed == 2 and result.strata[0].errors == 0
    assert result.scores[0].corrected.estimate == pytest.approx(1.0)


def test_the_plan_needs_more_reviews_for_a_narrower_interval() -> None:
    tasks = [_task(f"p{i}", "A" if i % 2 else "B") for i in range(400)] + [
        _task(f"f{i}", "A") for i in range(100)]
    table = {("m", "v"): {t.id: (1, int(t.id.startswith("p")), []) for t in tasks}}
    result = build_correction(tasks, table, ([t.id for t in tasks if t.id.startswith("f")],
                                             [t.id for t in tasks if t.id.startswith("p")]),
                              {}, None, "j", {})
    needed = [p.per_domain for p in result.plan]
    assert [p.half_width for p in result.plan] == list(PLANNED_HALF_WIDTHS)
    assert needed == sorted(needed, reverse=True) and needed[0] > needed[-1] >= 1
    assert all(p.reviews == 100 + 2 * p.per_domain for p in result.plan)


def test_the_judge_on_controls_is_shown_beside_never_in_the_estimate() -> None:
    tasks = [_task("f1", "A"), _task("p1", "A")]
    table = {("m", "v"): {"f1": (1, 0, []), "p1": (1, 1, [])}}
    labels: dict[str, str | None] = {"f1": "grader_error", "p1": "sound"}
    plain = build_correction(tasks, table, (["f1"], ["p1"]), labels, {"tasks": ["p1"]}, "j", {})
    controls = {"gold": (1, 4), "alternative:reordered": (0, 4), "null": (2, 5),
                "near_miss": (0, 15)}
    checked = build_correction(tasks, table, (["f1"], ["p1"]), labels, {"tasks": ["p1"]}, "j",
                               controls)
    assert checked.controls is not None and plain.controls is None
    assert checked.controls.false_fails.estimate == pytest.approx(1 / 8)
    assert checked.controls.false_passes.estimate == pytest.approx(2 / 20)
    assert checked.scores[0].corrected == plain.scores[0].corrected


def test_the_sample_reviewed_shows_corrected_scores_with_their_strata(tmp_path: Path) -> None:
    """The sample audited, its failures all reviewed (the planted broken tasks defective, the
    others model errors but one grader error) and the pass audit drawn and reviewed: the headline
    and the section give the corrected pass@1 with each stratum's counts, and audit.json holds
    them."""
    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["audit", str(SAMPLE), "--out", str(out)]).exit_code == 0
    data = ReviewData(out, "ana")
    names = {t: data.tasks[t].name for t in data.tasks}
    labels = {"meridian_04": "grader_error", "nordlys_02": "defective_task",
              "nordlys_03": "defective_task", "nordlys_04": "defective_task",
              "kestrel_02": "defective_task", "kestrel_03": "defective_task",
              "meridian_05": "defective_task"}
    for task_id in data.queues["failures"]:
        data.store.append_review(Review(reviewer="ana", created_at="t", task_id=task_id,
                                        label=labels[names[task_id]]))  # type: ignore[arg-type]
    for task_id in data.queues["passes"]:
        data.store.append_review(Review(
            reviewer="ana", created_at="t", task_id=task_id,
            label="unearned" if names[task_id] == "meridian_03" else "sound"))
    data.close()
    assert CliRunner().invoke(app, ["report", str(out)]).exit_code == 0
    correction = json.loads((out / "audit.json").read_text())["correction"]
    assert correction["refused"] == []
    by_model = {s["variant"]: s for s in correction["scores"]}
    assert by_model["atlas-1"]["strata"] == {"failures": 7, "passes": 7, "mixed": 6}
    assert by_model["atlas-1"]["corrected"]["estimate"] > by_model["atlas-1"]["as_graded"] - 0.2
    report = (out / "report.md").read_text()
    atlas = by_model["atlas-1"]["corrected"]
    assert f"{100 * atlas['estimate']:.1f}% [{100 * atlas['low']:.1f}%, " \
           f"{100 * atlas['high']:.1f}%] *corrected* for the judge's measured error" in report
    assert "| fictional/atlas-1 | atlas-1 | 20: 7 / 7 / 6 |" in report
    with open_audit(out / "audit.db") as store:
        assert store.meta("pass_audit")["tasks"]
