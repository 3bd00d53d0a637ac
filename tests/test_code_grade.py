"""The deterministic numeric checker, its disagreements with judges, and its record on real runs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from rubric_audit.checks.code_grade import code_verdicts, grade_numeric, judge_disagrees_with_code
from rubric_audit.cli import app
from rubric_audit.load.runs import load_runs
from rubric_audit.model import Attempt, Criterion, CriterionGrade, Task
from tests.conftest import SHARED_RUNS, bench_of_shared_runs


def verdict(criterion: str, answer: str, prompt: str = "") -> str:
    return grade_numeric(criterion, answer, prompt).verdict


@pytest.mark.parametrize(("criterion", "answer", "expected"), [
    ("States the EV is $2.1bn", "EV: $2,100M", "pass"),
    ("States the EV is $2.1bn", "EV of roughly $2.07bn", "pass"),
    ("States the EV is $2.1bn", "EV of $2.3bn", "fail"),
    ("States the EV/EBITDA multiple is 4.6x", "The multiple is 4.6%", "not_applicable"),
    ("States the implied TGR is 1.64%", "The implied TGR is 1.64%.", "pass"),
    ("States the implied TGR is 1.64%", "The implied TGR is 1.6%.", "fail"),
    ("States the implied TGR is 1.64%", "The implied TGR is 1.6449%.", "pass"),
    ("States Net Debt is -$182.95", "Net debt: $(182.95)", "pass"),
    ("States the cost is EUR 1,000 (within EUR 20)", "It costs EUR 1,015", "pass"),
    ("States the cost is EUR 1,000 (within EUR 20)", "It costs EUR 1,025", "fail"),
    ("States revenue of $10.0M (+/- $1.0M)", "Revenue is $10.9M", "pass"),
    ("States revenue of $10.0M (+/- $1.0M)", "Revenue is $11.2M", "fail"),
    ("States margin of 21.8% (accept 21.5%-22.0%)", "Margin 21.6%", "pass"),
    ("States margin of 21.8% (accept 21.5%-22.0%)", "Margin 22.1%", "fail"),
    ("States that three stores grew by more than 5%", "Three stores grew 6%", "not_applicable"),
    ("Names the three lowest-margin stores", "Leeds, York and Hull", "not_applicable"),
    ("States the share price is $51.03", "", "fail"),
    ("States the Sponsor IRR at 15.0% premium and 17.5x exit multiple is 15.6%",
     "At a 15.0% premium and 17.5x exit, the sponsor IRR is 15.6%.", "pass"),
    ("States the Sponsor IRR at 15.0% premium and 17.5x exit multiple is 15.6%",
     "At a 15.0% premium and 17.5x exit, the sponsor IRR is 14.1%.", "fail"),
])
def test_verdicts(criterion: str, answer: str, expected: str) -> None:
    assert verdict(criterion, answer) == expected


def test_a_duration_is_a_value_and_within_is_not_its_tolerance() -> None:
    criterion = "States that Brightwater has 45 days to remedy the breach"
    assert verdict(criterion, "Brightwater has 45 days to remedy it.") == "pass"
    assert verdict(criterion, "Brightwater has 30 days to remedy the breach.") == "fail"
    deadline = "States the certificate must be delivered within 45 days of quarter-end"
    assert verdict(deadline, "Deliver it within 60 days of quarter-end.") == "fail"
    assert verdict(deadline, "Deliver it within forty-five days of quarter-end.") == "pass"


def test_rounding_rules_from_the_criterion_and_the_prompt() -> None:
    assert verdict("States EV of $2,360 million, rounded to the nearest million",
                   "EV is $2,360.4 million") == "pass"
    prompt = "Give the share price. Answers within $0.10 are acceptable."
    assert verdict("States the share price is $48.50", "It is $48.58", prompt) == "pass"
    assert verdict("States the share price is $48.50", "It is $48.58") == "fail"


def test_several_quantities_are_not_a_hedge_but_alternatives_are() -> None:
    both = "Gordon growth: $41.62 per share; exit multiple: $46.22 per share."
    assert verdict("States the Gordon growth share price is $41.62", both) == "pass"
    assert verdict("States the exit multiple share price is $46.22", both) == "pass"
    hedged = grade_numeric("States the share price is $41.62", "It is $41.62 or $46.22.")
    assert (hedged.verdict, hedged.hedged) == ("fail", True)
    ranged = grade_numeric("States TV is 75.0% of EV", "TV is roughly 70% to 75% of EV.")
    assert (ranged.verdict, ranged.hedged) == ("fail", True)


def test_a_sentence_opening_with_a_pronoun_speaks_of_whom_the_one_before_named() -> None:
    """The grade's range is said of Rosa's grade; 'Her new salary' is said of Rosa too."""
    answer = "Rosa moves to Grade 7 (range $72,000-$98,000). Her new salary is $84,000."
    assert verdict("States Rosa's new salary is $84,000", answer) == "pass"
    assert verdict("States Rosa's new salary is $90,000", answer) == "fail"


def test_a_rate_per_unit_is_no_rival_to_a_total() -> None:
    """'$40.00/RSF' is a rent per square foot: it cannot fail a criterion on the annual rent."""
    answer = "Suite 1400 carries base rent of $40.00/RSF on 12,150 RSF."
    assert verdict("States the annual base rent for Suite 1400 is $486,000", answer) != "fail"
    assert verdict("States the base rent is $40.00 per RSF", answer) == "pass"


def test_values_the_prompt_gives_are_not_claims() -> None:
    prompt = "Assume a 9.0% WACC. What is the IRR?"
    assert verdict("States the IRR is 9.5%", "With WACC at 9.0%, the IRR is 9.5%", prompt) == "pass"


@given(st.integers(100, 10_000), st.integers(-300, 300))
def test_stated_tolerance_is_honoured(target: int, offset: int) -> None:
    criterion = f"States the fee is ${target:,} (+/- $200)"
    result = verdict(criterion, f"The fee is ${target + offset:,}.")
    # Inside the tolerance passes; outside it the answer's one fee, said of the fee, fails.
    assert result == ("pass" if abs(offset) <= 200 else "fail")


def _task(criterion: str) -> Task:
    return Task(id="t", name="t", world_id="w", prompt="p",
                criteria=[Criterion(id="c", text=criterion)])


def _findings(criterion: str, answer: str, judge_verdict: str) -> list[str]:
    task = _task(criterion)
    attempt = Attempt(id="v/t/1", task_id="t", model="m", variant="v", index=1,
                      state="graded", answer=answer)
    judge = [CriterionGrade(attempt_id=attempt.id, criterion_id="c", grader="recorded",
                            verdict=judge_verdict)]
    return [f.check for f in judge_disagrees_with_code(task, attempt, judge,
                                                        code_verdicts(task, attempt))]


def test_judge_disagreements() -> None:
    tolerant = "States margin of 5.7% (accept 5.5% to 5.9%)"
    assert _findings(tolerant, "Margin is 5.8%", "fail") == ["judge_failed_value_within_tolerance"]
    assert _findings(tolerant, "Margin is 5.8%", "pass") == []
    assert _findings("States TV is 75.0% of EV", "roughly 70% to 75%", "pass") == [
        "judge_credited_hedge"]
    assert _findings("States IRR is 15.6%", "IRR is 14.1%", "pass") == [
        "judge_passed_value_outside_tolerance"]
    assert _findings("States IRR is 15.6%", "IRR is 14.1%", "fail") == []
    assert _findings("Names the stores", "Leeds", "pass") == []


def test_shared_fixtures_every_criterion_checked_or_explained() -> None:
    runs = load_runs([SHARED_RUNS])
    by_attempt = {a.id: a for a in runs.attempts}
    outcomes = Counter()
    for grade in runs.grades:
        attempt = by_attempt[grade.attempt_id]
        criterion = runs.tasks[attempt.task_id].criterion(grade.criterion_id)
        result = grade_numeric(criterion.text, attempt.answer, runs.tasks[attempt.task_id].prompt)
        assert result.reason, "every verdict carries its reason"
        if result.verdict == "not_applicable":
            outcomes["not_applicable"] += 1
        else:
            outcomes["agree" if result.verdict == grade.verdict else "disagree"] += 1
    assert outcomes == {"agree": 35, "not_applicable": 15}


def test_audit_reports_agreement_on_the_shared_fixtures(tmp_path: Path) -> None:
    bench = bench_of_shared_runs(tmp_path / "bench")
    result = CliRunner().invoke(app, ["audit", str(bench), "--runs", str(SHARED_RUNS),
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    checker = json.loads((tmp_path / "out" / "audit.json").read_text())["code_checker"]
    # 55 pairs: the 50 graded ones plus an unavailable attempt that has an answer.
    assert (checker["criteria"], checker["checked"]) == (55, 35)
    [agreement] = checker["agreement"]
    assert (agreement["grader"], agreement["checked"], agreement["agree"]) == ("recorded", 35, 35)
    assert agreement["rate"] == pytest.approx(1.0)
    assert agreement["interval"]["method"] == "wilson"
    assert agreement["interval"]["low"] < 1.0 <= agreement["interval"]["high"] + 1e-9
