"""The deterministic numeric checker, its disagreements with judges, and its record on real runs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from rubric_audit.checks.code_grade import code_verdicts, grade_numeric
from rubric_audit.checks.judge_vs_code import judge_disagrees_with_code
from rubric_audit.cli import app
from rubric_audit.core.model import Attempt, Criterion, CriterionGrade, Task
from rubric_audit.load.runs import load_runs
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


def test_a_window_beside_a_value_is_its_condition_not_its_tolerance() -> None:
    """'Within 3 days' says where a share is measured: 74% is the target, not 74% +/- 3. A width
    in the value's own terms stays a tolerance."""
    share = "States that 74% of support tickets were closed within 3 days"
    assert verdict(share, "74% of support tickets were closed within 3 days.") == "pass"
    assert verdict(share, "71% of support tickets were closed within 3 days.") == "fail"
    assert verdict("States the loss ratio is 64.2% (within 0.5 percentage points)",
                   "The loss ratio is 64.6%.") == "pass"
    assert verdict("States the budget is EUR 2.0m (within 5%)", "The budget is EUR 2.08m.") == "pass"
    assert verdict("States the budget is EUR 2.0m (within 5%)", "The budget is EUR 2.2m.") == "fail"


RIVALS = [  # (criterion, answer: the criterion's value said of a rival, the value said of it)
    ("States Q4 churn of 2.1%",
     "Monthly churn was 2.1% in Q3 and climbed to 4.8% in Q4 after the price rise.", "4.8%"),
    ("States that Cohort B retained 61% of users",
     "Retention was 61% for Cohort A and 38% for Cohort B.", "38%"),
    ("States that online sales grew 14%", "In-store sales grew 14% while online sales grew 3%.",
     "3%"),
    ("States the 2025 readmission rate at the North site is 7.4%",
     "| Site | 2024 | 2025 |\n|---|---|---|\n| North | 7.4% | 3.9% |\n| South | 8.8% | 5.1% |",
     "3.9%"),
]


@pytest.mark.parametrize(("criterion", "answer", "own"), RIVALS)
def test_a_value_said_of_a_rival_qualifier_decides_nothing(criterion: str, answer: str,
                                                            own: str) -> None:
    """The target value is in the answer, but said of another quarter, cohort, channel, column
    or window than the criterion names, which the answer gives another value: no pass, and the
    reason names both."""
    result = grade_numeric(criterion, answer)
    assert result.verdict == "not_applicable"
    assert "so its value for the criterion's subject is not" in result.reason
    assert own in result.reason


@pytest.mark.parametrize(("criterion", "answer", "own"), RIVALS)
def test_the_value_said_of_the_criterions_own_qualifier_still_decides(
        criterion: str, answer: str, own: str) -> None:
    """Asked for the value the answer does give the criterion's qualifier, the checker passes:
    the rival's value beside it is no reason to abstain."""
    [target] = grade_numeric(criterion, answer).checks
    assert verdict(criterion.replace(target.target.text, own), answer) == "pass"


def test_words_naming_another_value_of_the_criterion_are_no_qualifier() -> None:
    """'2% terminal growth rate' names the criterion's condition, not which method's yield it
    asks for: the answer's 'perpetuity growth method' is no rival of 'exit multiple'."""
    criterion = "States the FCF yield assuming a 2% terminal growth rate is 8.2%"
    assert verdict(criterion, "8.0% (perpetuity growth method) and 6.8% (exit multiple method)"
                   ) == "fail"


def test_a_change_from_one_value_to_another_binds_both() -> None:
    """'Rose from X to Y': the answer's own 'from X' is the criterion's X, not an aside."""
    criterion = "States that the gross margin rose from 12.0% to 14.5%"
    assert verdict(criterion, "The gross margin rose from 12.0% to 14.5%.") == "pass"
    assert verdict(criterion, "The gross margin rose from 12.0% to 13.9%.") == "fail"


def test_a_document_number_is_no_quantity() -> None:
    """'PO 2400' is an order's number; the answer's quantity is 1,500 units."""
    assert verdict("States the order quantity is 2,400 units",
                   "Purchase order PO 2400 covers 1,500 units.") == "fail"
    assert verdict("States the settlement is $2,500", "Under Protocol 2500 the parties agreed a "
                   "settlement of $1,800.") == "fail"


def test_a_header_unit_of_another_scale_is_not_ignored() -> None:
    """A column in kWh holds 1,250: it is 1.25 MWh, not 1,250 MWh, so the criterion's number
    in the header's other unit fails; 8.2 in a µg/mL column is 8.2 mg/L (converted, through
    pint)."""
    table = "| Site | Consumption ({unit}) |\n|---|---|\n| Leeds | 1,250 |\n| York | 980 |"
    criterion = "States annual consumption of 1,250 MWh at Leeds"
    assert verdict(criterion, table.format(unit="kWh")) == "fail"  # 1.25 MWh
    assert verdict(criterion, table.format(unit="MWh")) == "pass"
    assert verdict("States a peak of 8.2 mg/L", "| Sample | Level (µg/mL) |\n|---|---|\n"
                   "| Peak | 8.2 |") == "pass"


@pytest.mark.parametrize(("criterion", "answer", "expected"), [
    ("States a vertical drop of 350 m", "The vertical drop is **1,150 ft**.", "pass"),
    ("States a yield of 2.5 t/ha", "Yield came in at 1.01 t/acre.", "pass"),
    ("States a yield of 2.5 t/ha", "Yield came in at 1.2 t/acre.", "fail"),
    ("States a floor area of 297 m²", "| Unit | Area (sq ft) |\n|---|---|\n| A | 3,200 |", "pass"),
    ("States a hold temperature of 68 °F", "Held at 20 °C throughout.", "pass"),
    ("States a hold temperature of 68 °F", "Held at 25 °C throughout.", "fail"),
    ("States a cargo volume of 54.7 ft³", "Total cargo: **1.55 m³**.", "pass"),
    ("States a fabric weight of 288 g/m²", "Spec sheet: **8.5 oz/yd²**.", "pass"),
    ("States Scope 3 emissions of 169 thousand tCO2e (±1,000 t)",
     "Scope 3: **168.9 kt CO₂e** in 2024.", "pass"),
    ("States a finished width of 144 cm", "Finished width: **56.7 in**.", "pass"),
    ("States a delay penalty of $1.68m", "Penalty = **1.68 million dollars**.", "pass"),
], ids=["ft-as-m", "yield", "yield-off", "header-sq-ft", "celsius", "celsius-off", "cubic-feet",
        "areal-weight", "co2e", "inches", "dollars-in-words"])
def test_a_measure_in_another_unit_of_its_kind_is_converted(criterion: str, answer: str,
                                                            expected: str) -> None:
    assert verdict(criterion, answer) == expected


@pytest.mark.parametrize(("criterion", "answer"), [
    ("States a vertical drop of 1,150 m", "The vertical drop is **1,150 ft**."),
    ("States a floor area of 3,200 m²", "| Unit | Area (sq ft) |\n|---|---|\n| A | 3,200 |"),
], ids=["ft-not-m", "sq-ft-not-m2"])
def test_the_same_digits_in_another_unit_never_pass(criterion: str, answer: str) -> None:
    """They passed when the unit was read as a word only one side named."""
    assert verdict(criterion, answer) != "pass"


def test_measures_of_different_kinds_never_match() -> None:
    """350 m is no area, no mass and no count of visitors; 445 kN is a force, not 445 t; a
    million boxes are no million TEU: nothing is passed on them."""
    for answer in ("The site covers 350 m².", "It shipped 350 kg.", "It had 350 visitors."):
        assert verdict("States a vertical drop of 350 m", answer) != "pass", answer
    assert verdict("States a lift capacity of 445 t", "Capacity: **445 kN** SWL.") != "pass"
    assert verdict("States 2025 throughput of 1,790,000 TEU",
                   "2025 volume: **1.79 million boxes**.") != "pass"


@pytest.mark.parametrize(("criterion", "answer"), [
    ("States a fit-out of 26 days", "About **three weeks and five days** from strip-out."),
    ("States the tank is out of service for 3 days 6 hours",
     "Total downtime: three days and six hours."),
    ("States a window of 1.75 hours", "Window: 6:00 to 7:45, **1¾ hours**."),
], ids=["weeks-and-days-in-words", "days-and-hours-in-words", "vulgar-fraction"])
def test_durations_in_words_and_fractions_are_one_value(criterion: str, answer: str) -> None:
    assert verdict(criterion, answer) == "pass"


def test_a_letter_that_starts_a_word_is_no_unit() -> None:
    """'12 t-shirts' holds no tonnes and '56.7 in 2024' no inches."""
    from rubric_audit.checks.numbers import find_quantities

    assert [q.measure for q in find_quantities("We sold 12 t-shirts and 56.7 in 2024.")] == [
        None, None]


def test_a_rounding_step_written_with_a_currency_code() -> None:
    """'Round to the nearest GBP 10k' is the prompt's precision, as '£10k' would be."""
    criterion = "States the five-year cost is GBP 2,840,000"
    prompt = "What is the five-year cost? Round to the nearest GBP 10k."
    assert verdict(criterion, "The five-year cost is GBP 2,843,100.", prompt) == "pass"
    assert verdict(criterion, "The five-year cost is GBP 2,843,100.") == "fail"


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


@pytest.mark.parametrize("answer", [
    "Margin was 5.8% this year and 5.2% last year.",  # another value of the target's kind
    "Margin is 5.84%, i.e. 6% rounded.",  # the answer rounds its own figure
])
def test_a_judge_error_needs_the_checker_to_read_the_answer_one_way(answer: str) -> None:
    """The checker may pass these, but a judge's fail is no judge error unless the checker's
    pass rests on the answer's one value of the target's kind, with nothing else in play."""
    tolerant = "States margin of 5.7% (accept 5.5% to 5.9%)"
    assert "judge_failed_value_within_tolerance" not in _findings(tolerant, answer, "fail")


def test_a_judge_error_names_its_preconditions_and_the_doubts() -> None:
    task = _task("States IRR is 15.6%")
    attempt = Attempt(id="v/t/1", task_id="t", model="m", variant="v", index=1,
                      state="graded", answer="IRR is 14.1% (15.6% was last year's).")
    judge = [CriterionGrade(attempt_id=attempt.id, criterion_id="c", grader="recorded",
                            verdict="pass")]
    [finding] = judge_disagrees_with_code(task, attempt, judge, code_verdicts(task, attempt))
    assert finding.evidence["preconditions"] and finding.evidence["doubts"] == [
        "the answer states 2 values of the kind of 15.6%"]


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


@pytest.mark.parametrize(("criterion", "answer", "expected"), [
    # a direction the criterion states is part of its value
    ("States that unit cost fell by 2.4% (accept 2.3%-2.5%)",
     "Unit cost rose 2.4% year on year, from EUR 8.10 to EUR 8.29.", "fail"),
    ("States that unit cost fell by 2.4% (accept 2.3%-2.5%)",
     "Unit cost fell 2.4% year on year, to EUR 8.10.", "pass"),
    ("States that unit cost fell by 2.4% (accept 2.3%-2.5%)",
     "Unit cost moved -2.4% year on year.", "pass"),
    ("States that headcount grew 3.5%", "Headcount: 412 vs 427 last year, -3.5%.", "fail"),
    ("States that the fund ended the year 4.2% above its benchmark",
     "The fund finished 4.2% below its benchmark after a weak fourth quarter.", "fail"),
    ("States a net loss of EUR 1.8m", "The division made a net profit of EUR 1.8m.", "fail"),
    ("States a net loss of EUR 1.8m", "Net loss for the year: EUR 1.8m.", "pass"),
    ("States a net loss of EUR 1.8m", "Net result: EUR (1.8)m.", "pass"),
    ("States that the account is in surplus by GBP 2,150",
     "The account closes GBP 2,150 in deficit after the final invoice.", "fail"),
    # accounting negatives in a change column meet a stated decrease
    ("States that water use decreased by 3,410 m3",
     "| Site | 2023 | 2024 | Change |\n|---|---|---|---|\n| All sites | 51,200 | 47,790 | "
     "(3,410) |", "pass"),
    # a change whose direction the answer leaves unsaid decides nothing
    ("States that churn fell by 1.1 percentage points", "Churn: 1.1 percentage points.",
     "not_applicable"),
    # words that only look like a direction
    ("States the fall rate is 3.4 per 1,000 bed days", "Fall rate: 3.40 per 1,000 bed days.",
     "pass"),
    ("States the allowance for losses is USD 2.7m", "Allowance for losses: USD 2.7m.", "pass"),
    ("States a 12-month retention of 88%", "12-month retention was 88%.", "pass"),
    # a gloss in brackets between the state word and its value
    ("States a stock loss (shrinkage) of 42 hL", "The count is 42 hL over book: a stock gain.",
     "fail"),
    ("States a stock loss (shrinkage) of 42 hL", "A stock loss of 42 hL against book.", "pass"),
    # favourable or adverse: a variance's side, whichever way its value goes
    ("States a variance at completion of EUR 4.7m adverse",
     "Variance at completion: EUR 4.7m favourable, some headroom.", "fail"),
    ("States heat use was 0.12 GJ/t above budget (an adverse variance)",
     "Heat variance: 0.12 GJ/t adverse, from the worn cooler grates.", "pass"),
    # a spaced em dash is an aside, not a range; "fell short of" is a side of the estimate, as
    # "below" is (not a fall whose direction the answer leaves unsaid)
    ("States the hammer total fell short of the low estimate by GBP 1.35m",
     "Hammer total GBP 17.25m — GBP 1.35m below the GBP 18.6m low estimate.", "pass"),
])
def test_the_direction_a_criterion_states_is_part_of_its_value(criterion: str, answer: str,
                                                                expected: str) -> None:
    assert verdict(criterion, answer) == expected


@pytest.mark.parametrize(("criterion", "answer", "expected"), [
    # alternatives in prose are a hedge
    ("States the payback period is 4.2 years",
     "Payback is 4.2 years — or 5.1 years if the grant is paid a year late.", "fail"),
    ("States the loss ratio is 64.0% (±0.2 pp)",
     "The loss ratio is 64.0% if large losses are capped at GBP 1m per claim, or 71.5% if they "
     "are not; the treaty wording leaves either reading open.", "fail"),
    ("States a fill rate of 96.5% (±0.1 pp)",
     "Fill rate was about 96.5%, possibly closer to 98.0% once back-orders are netted.", "fail"),
    ("States a weekly cost of $214,656",
     "The weekly cost is either $214,656 (8 services) or $241,488 with a ninth.", "fail"),
    ("States a defect density of 4 per 1,000 units",
     "4 per 1,000 units on the first count; the recount found 1, so likely somewhere between 1 "
     "and 4 per 1,000 units.", "fail"),
    # a range that is the quantity, not the answer's doubt, is no hedge
    ("States Q2 unit cost of EUR 8.40", "Q2 unit cost was EUR 8.40, inside the EUR 8.00-9.00 "
     "budget band.", "pass"),
    # a self-correction's value replaces the one it corrects
    ("States the blended rate is 5.35%",
     "Blended rate: 4.90%.\n\nCorrection: I used the wrong weights; the blended rate is 5.35%.",
     "pass"),
    ("States the blended rate is 4.90%",
     "Blended rate: 4.90%.\n\nCorrection: I used the wrong weights; the blended rate is 5.35%.",
     "fail"),
])
def test_hedges_fail_and_a_correction_replaces_what_it_corrects(criterion: str, answer: str,
                                                                 expected: str) -> None:
    assert verdict(criterion, answer) == expected


@pytest.mark.parametrize(("criterion", "answer", "expected"), [
    # a value the answer gives for another code of the criterion's kind decides nothing
    ("States that store 2281 had the highest shrink, at GBP 41,200",
     "Highest shrink: Store 2218, GBP 41,200 (Leeds). Store 2281 followed at GBP 36,900.",
     "not_applicable"),
    ("States that bore BH-12 shows nitrate at 38 mg/L",
     "Nitrate: BH-07 38 mg/L, BH-12 21 mg/L, BH-15 below detection.", "not_applicable"),
    ("States that bore BH-12 shows nitrate at 21 mg/L",
     "Nitrate: BH-07 38 mg/L, BH-12 21 mg/L, BH-15 below detection.", "pass"),
    # a value offered for comparison is not the subject's: the subject's own value decides
    ("States a cost per hire of USD 4,650", "Cost per hire: USD 5,120, against an industry "
     "median of USD 4,650.", "fail"),
    # a citation is not a number
    ("Cites clause 14.2 as the source of the 30-day notice period",
     "The 30-day notice period is set in clause 14.3 of the MSA.", "not_applicable"),
])
def test_codes_comparisons_and_citations(criterion: str, answer: str, expected: str) -> None:
    assert verdict(criterion, answer) == expected


@pytest.mark.parametrize(("criterion", "answer", "expected"), [
    # a change in points is not a relative change in percent; levels convert either way
    ("States that gross margin widened by 1.5 percentage points",
     "Gross margin widened 1.5% to 31.2%.", "not_applicable"),
    ("States that gross margin widened by 1.5 percentage points",
     "Gross margin widened by 150 bps to 31.2%.", "pass"),
    ("States the spread is 245 bps", "The bonds trade at a spread of 2.45% over gilts.", "pass"),
    # a bar the claim measures against is a condition, not its target
    ("States that uptime beat the 99.5% SLA target, at 99.8%",
     "Uptime was 99.8% for the quarter, above the 99.5% SLA.", "pass"),
    ("States that uptime beat the 99.5% SLA target, at 99.8%",
     "Uptime was 99.6% for the quarter, above the 99.5% SLA.", "fail"),
    # dollar prefixes name their currency
    ("States a unit cost of A$14.20", "Unit cost: A$14.20 (US$9.30).", "pass"),
    ("States a unit cost of A$14.20", "Unit cost: US$14.20.", "not_applicable"),
])
def test_points_bars_and_dollar_prefixes(criterion: str, answer: str, expected: str) -> None:
    assert verdict(criterion, answer) == expected


@pytest.mark.parametrize(("criterion", "answer", "expected"), [
    # an offset from a reference is neither the level nor the reference
    ("States Q2 unit cost of EUR 8.45", "Q2 unit cost came in EUR 0.45 above the EUR 8.00 "
     "budget.", "not_applicable"),
    # a rate per 1,000 is not a rate per one
    ("States a fee of $0.0021 per click", "Fees ran at $0.0021 per 1,000 clicks.",
     "not_applicable"),
    ("States a rate of 2.4 per 1,000 admissions", "2.40 per 1,000 admissions (14 of 5,830).",
     "pass"),
    # thousands written with k; a bare tolerance larger than the value is in units
    ("States 4.8k units sold (±100)", "Units sold: 4,850.", "pass"),
    ("States 4.8k units sold (±100)", "Units sold: 4.6k.", "fail"),
    # a duration in two units is one, and durations convert
    ("States the outage lasted 1 day 6 hours (±1 hour)", "Down for 1 day 6 hours in all.",
     "pass"),
    ("States the outage lasted 30 hours (±1 hour)", "Down for 1 day 2 hours in all.", "fail"),
    ("States the outage lasted 1.25 days", "Down for 30 hours.", "pass"),
    # a two-letter carrier and a number is a flight, not a quantity
    ("States that KL 1102 was delayed 48 minutes", "KL 1102 (AMS-OSL) arrived 48 minutes late; "
     "KL 1106 was on time.", "pass"),
])
def test_offsets_rates_per_count_scales_durations_and_flights(criterion: str, answer: str,
                                                              expected: str) -> None:
    assert verdict(criterion, answer) == expected


@pytest.mark.parametrize(("criterion", "answer", "expected"), [
    # "a fee of X" is a level, not a change: the subject's own far value fails it
    ("States a success fee of NOK 18.2m", "The success fee would be NOK 21.4m, above the "
     "NOK 5.0m minimum.", "fail"),
    # a far value of another order is no claim about the target
    ("States a per-click rate of $0.0041", "Search revenue of $212,400 on 51.8m clicks.",
     "not_applicable"),
    # a rate per period is not a rate per another period
    ("States a price of $29 per seat per month", "Pro plan: $348 per seat per year.",
     "not_applicable"),
])
def test_levels_orders_of_magnitude_and_periods(criterion: str, answer: str,
                                                expected: str) -> None:
    assert verdict(criterion, answer) == expected


@pytest.mark.parametrize(("criterion", "answer", "expected"), [
    # a rate per one thing is not a rate per another
    ("States an average of $52 per guest", "Average spend: $52 per party (parties of three).",
     "not_applicable"),
    ("States a fee of £9.40 per pallet", "Storage costs £9.40 per pallet per week.",
     "not_applicable"),
    ("States a fee of £9.40 per pallet per week", "Storage costs £9.40 per pallet per week, "
     "billed monthly.", "pass"),
    # budget or plan beside the actual: the actual is the claim
    ("States Q3 marketing spend of EUR 610k", "Q3 marketing: budget EUR 580k; actual EUR 610k.",
     "pass"),
    # over and under a budget are directions; a sign and words that disagree decide nothing
    ("States that freight was USD 22,400 over budget",
     "Freight: USD 22,400 under budget (actual USD 301,600 vs budget USD 324,000).", "fail"),
    ("States that energy was EUR 95k under budget",
     "Energy variance: +EUR 95k favourable (under budget).", "not_applicable"),  # sign vs words
    ("States that option B costs $14,000 more than option A",
     "Option B saves $14,000 against option A.", "fail"),
    # a cause the criterion also asks for is not checked by numbers
    ("States the 4.1-point fall in gross margin and attributes it to freight costs",
     "Gross margin fell 4.1 points, mainly on the new labour agreement.", "not_applicable"),
    # a claim made only of bars is a conclusion
    ("States that the store can add a shift without breaching the 28% wage ceiling",
     "Yes: with the extra shift wages stay under the ceiling.", "not_applicable"),
])
def test_per_bases_plans_budget_directions_causes_and_bars(criterion: str, answer: str,
                                                           expected: str) -> None:
    assert verdict(criterion, answer) == expected


@pytest.mark.parametrize(("criterion", "answer", "expected"), [
    # numbers the reader cannot read are no proof that the answer states none
    ("States a volume of 4,120 m3 for block 7c", "```csv\nblock,area_ha,volume_m3\n7b,18.2,"
     "5310\n7c,12.9,4120\n```", "not_applicable"),
    ("States an answer of 12", "I could not find the figures in the shared drive.", "fail"),
    # a basis written before the value is the target's
    ("States an average spend per guest of $52", "Average spend was $52 per party.",
     "not_applicable"),
    # which of two subjects did better is a comparison, not a number
    ("States that Line 2 outperformed Line 4 on first-pass yield",
     "First-pass yield: Line 2 96.1%, Line 4 97.3%.", "not_applicable"),
])
def test_unreadable_numbers_bases_before_values_and_comparisons(criterion: str, answer: str,
                                                                expected: str) -> None:
    assert verdict(criterion, answer) == expected


@pytest.mark.parametrize(("criterion", "answer", "expected"), [
    # markdown emphasis is presentation: "from **X**" is still from X, and the end value decides
    ("States that claims reserves at year end were GBP 212m", "Reserves rose from **GBP 212m** "
     "at the start of the year to **GBP 236m** at year end.", "fail"),
    ("States a churn rate of 3.4%", "Customers lost 41 over average base 1,206: churn **3.4%**.",
     "pass"),
    # a value the answer rejects is not its claim
    ("States that uptime in June was 99.2%", "Uptime was not 99.2% as the status page shows; "
     "counting the maintenance window it is 98.7%.", "fail"),
    # an en dash before a number in a table is a minus
    ("States that footfall fell by 6.2%", "| Store | 2023 | 2024 | Change |\n|---|---|---|---|\n"
     "| Leeds | 1.30m | 1.22m | –6.2% |", "pass"),
    # a sign and the sentence's words that disagree leave the direction unsaid
    ("States that Q2 revenue declined by 9%", "Q2 revenue was $4.1m, +9% on Q1, after the "
     "summer product drop.", "not_applicable"),
    # a variance against a plan is a change, as the answer's shortfall is
    ("States that output was 1,450 t below plan", "Output: 18,550 t against a plan of 20,000 t,"
     " a shortfall of 1,450 t.", "pass"),
    ("States that output was 1,450 t below plan", "Output: 18,550 t against a plan of 20,000 t,"
     " an overrun of 1,450 t.", "fail"),
    # a superlative the criterion also claims is not checked by numbers
    ("States that Hall B is the largest venue at 4,200 seats", "Hall B seats 4,200; Hall A "
     "seats 5,100.", "not_applicable"),
])
def test_emphasis_rejections_dashes_conflicts_variances_and_superlatives(
        criterion: str, answer: str, expected: str) -> None:
    assert verdict(criterion, answer) == expected


@pytest.mark.parametrize(("criterion", "answer", "expected"), [
    # the verb a "by X" hangs on gives its direction, however far before it stands
    ("States that the new rota increases weekly overtime by 46 hours",
     "The new rota cuts weekly overtime across both depots by 46 hours.", "fail"),
    ("States that the new rota increases weekly overtime by 46 hours",
     "The new rota raises weekly overtime across both depots by 46 hours.", "pass"),
    ("States that queue time shortened by 1.5 hours", "Queue time lengthened by 1.5 hours.",
     "fail"),
    # funds raised are no rise; "on reflection" revises
    ("States that the appeal raised $42,300", "| Appeal | Income |\n|---|---|\n| Spring | "
     "$42,300 |", "pass"),
    ("States a payback of 3.1 years", "Payback is 3.1 years on list price. On reflection the "
     "brief asks for net price, on which payback is 3.6 years.", "fail"),
])
def test_governing_verbs_and_reflections(criterion: str, answer: str, expected: str) -> None:
    assert verdict(criterion, answer) == expected


def test_a_change_column_is_no_rival_of_the_period_it_changes_to() -> None:
    """"Q3 deposits fell by $2.6m" read from a Change column beside Q2 and Q3 columns is the
    Q3 change, not a value said of another subject."""
    table = ("| | Q2 | Q3 | Change |\n|---|---|---|---|\n| Deposits | $84.1m | $81.5m | -$2.6m |\n"
             "| Loans | $62.0m | $63.3m | $1.3m |")
    assert verdict("States that Q3 deposits fell by $2.6m", table) == "pass"


@pytest.mark.parametrize(("criterion", "answer", "prompt", "expected"), [
    # the answer's own rounding of its working value is its final figure, right or wrong
    ("States a mean age at issue of 15 days", "Mean age at issue = 14.6 days, i.e. **14 days** "
     "to the nearest whole day.", "Round to the nearest whole day.", "fail"),
    ("States a mean age at issue of 15 days", "Mean age at issue = 14.6 days, i.e. **15 days** "
     "to the nearest whole day.", "Round to the nearest whole day.", "pass"),
    ("States an average fee of A$68 per tutoring hour", "A$612,480 / 9,067 hours = A$67.55 → "
     "**A$67 per hour** (nearest dollar).", "Round to the nearest whole dollar.", "fail"),
    # ... unless the criterion asks for the precise figure, which the answer states
    ("States a mean triage wait of 14.6 minutes", "Mean triage wait was 14.6 minutes, i.e. about "
     "15 minutes.", "", "pass"),
    # "the nearest ten" is a rounding instruction
    ("States Term 2 enrolment of 1,280 students", "Term 2 enrolment: **1,276 students**.",
     "Roughly how many students? Round to the nearest ten.", "pass"),
    ("States Term 2 enrolment of 1,280 students", "Term 2 enrolment: **1,292 students**.",
     "Roughly how many students? Round to the nearest ten.", "fail"),
])
def test_the_answers_own_rounding_and_the_nearest_ten(criterion: str, answer: str, prompt: str,
                                                      expected: str) -> None:
    assert verdict(criterion, answer, prompt) == expected


@pytest.mark.parametrize(("criterion", "answer"), [
    # a header's unit of another kind or scale never passes the criterion's
    ("States that the Elland branch holds 4.5 weeks of stock cover",
     "| Branch | Stock cover (days) |\n|---|---|\n| Elland | 4.5 |\n| Brighouse | 4.1 |"),
    ("States 2024 inflow of 612 million m³ to the reservoir",
     "| Year | Inflow (GWh equiv.) |\n|---|---|\n| 2023 | 655 |\n| 2024 | 612 |"),
    ("States CV-21 movements averaged +3.1 s/day at final control",
     "| Test | Avg deviation (s/week) |\n|---|---|\n| CV-21 final control | +3.1 |\n"
     "| CV-28 final control | +1.9 |"),
    # a bare number the answer also gives in a unit of measure is in that unit
    ("States the ferry uses 4.6 tonnes of fuel per round trip",
     "| Metric | Fuel per round trip (m³) |\n|---|---|\n| Mean | 4.6 |\n| Maximum | 5.3 |\n\n"
     "So the ferry burns 4.6 per round trip on average."),
])
def test_a_unit_the_answer_gives_elsewhere_of_another_kind_never_passes(criterion: str,
                                                                        answer: str) -> None:
    assert verdict(criterion, answer) != "pass"


def test_only_the_answers_values_in_another_window_abstain_and_say_why() -> None:
    graded = grade_numeric("States that the reservoir was within 5 m of HRWL on 63 days",
                           "- within 10 m of HRWL: 63 days\n- within 20 m of HRWL: 90 days")
    assert graded.verdict == "not_applicable"
    assert "within another window than 5" in graded.reason


@pytest.mark.parametrize(("criterion", "prompt"), [
    ("States that the 3.2 m³/s release met the 3.0 m³/s summer minimum",
     "The release was 3.2 m³/s. The summer minimum is 3.0 m³/s. Was the condition met?"),
    ("States that the 81.5% utilisation exceeds the 80% trigger, so a tutor should be hired",
     "Policy: hire when utilisation exceeds 80%. Kellerton ran at 81.5%. Should it hire?"),
])
def test_a_conclusion_from_the_prompts_own_values_is_no_number(criterion: str, prompt: str) -> None:
    """The answer that repeats the prompt's values may conclude either way: numbers decide
    nothing, and the reason says so."""
    graded = grade_numeric(criterion, "The figures are 3.2 m³/s and 3.0 m³/s, 81.5% and 80%; "
                           "on balance the answer is no.", prompt)
    assert graded.verdict == "not_applicable" and "the prompt's own" in graded.reason


CHANGES = "| | 2023 | 2024 | Change |\n|---|---|---|---|\n| Merch | $2.5m | $2.1m | ▼ $0.4m |\n" \
          "| F&B | $14.2m | $15.6m | ▲ $1.4m |"


# The classes fixed after holdout11's and holdout10's first measurements (#25), each case general
# to its class.
CLASSES_AFTER_HOLDOUTS = [
    # LaTeX is notation: $92.5\%$ is 92.5%, 23{,}100 is 23,100
    ("States a Line 1 overrun of 92.5%", "$$\\text{overrun} = \\frac{23{,}100 - 12{,}000}{12{,}000}"
     " = 92.5\\%$$\n\nSo Line 1 ran at an overrun of $92.5\\%$, above the 90% target.", "pass"),
    ("States a haul of 23,100 t", "$$\\text{haul} = 23{,}100\\ \\text{t}$$", "pass"),
    # a value struck through is retracted
    ("States net yield of £9.12 per passenger", "Net yield: ~~£9.12~~ that used the gross count; "
     "on fare-paying passengers it is **£9.37** per passenger.", "fail"),
    ("States net yield of £9.37 per passenger", "Net yield: ~~£9.12~~ that used the gross count; "
     "on fare-paying passengers it is **£9.37** per passenger.", "pass"),
    # a footnote mark glued to a value, Swiss separators
    ("States fee income of £1.30 per item", "Fee income per item was **£1.30¹** in March.\n\n"
     "¹ Excludes consultation fees.", "pass"),
    ("States 2024 revenue of CHF 48.6m", "Revenue 2024: **CHF 48'600'000** (2023: CHF 45'850'000).",
     "pass"),
    # "and a half" in words
    ("States that the average student stays 2.5 terms", "The average student stays for **two and "
     "a half terms**.", "pass"),
    ("States that the average student stays 2.5 terms", "The average student stays for **one and "
     "a half terms**.", "fail"),
    # a place or period named by a number is no value; a variance word the criterion also uses
    ("States a Ward 3 bed occupancy of 91.3%", "Ward 3 ran at 91.3% occupancy, above the 85% "
     "safe level.", "pass"),
    # "within 5 m of HRWL" beside a count of days is its condition: bind by the window
    ("States the reservoir was within 5 m of HRWL on 63 days in 2024", "- within 2 m of HRWL: 19 "
     "days\n- within 5 m of HRWL: **48 days**\n- within 10 m of HRWL: 63 days", "fail"),
    ("States the reservoir was within 5 m of HRWL on 48 days in 2024", "- within 2 m of HRWL: 19 "
     "days\n- within 5 m of HRWL: **48 days**\n- within 10 m of HRWL: 63 days", "pass"),
    ("States that 55% of invoices were paid within 30 days",
     "55% of invoices were paid within 60 days; within 30 days the share was 38%.", "fail"),
    # a lopsided window is no tolerance either
    ("States that 96.1% of movements ran within −4/+6 s/day", "- within −4/+6 s/day: **2,316 "
     "(93.7%)**\n- within ±10 s/day: 2,376 (96.1%)", "fail"),
    ("States that 93.7% of movements ran within −4/+6 s/day", "- within −4/+6 s/day: **2,316 "
     "(93.7%)**\n- within ±10 s/day: 2,376 (96.1%)", "pass"),
    # ranges said of categories or peers are no hedge of the answer's committed value
    ("States an overrun of 32% (accept 31% to 33%)", "Overrun = (1,320 − 1,000) / 1,000 = "
     "**32%**.\n\nTypical overrun ranges: super-premium 20–50%, soft-serve 30–60%. At 32% the "
     "line sits in the super-premium range.", "pass"),
    ("States a Q4 rebate of £2,960 (accept £2,940 to £2,980)", "Rebate = 1.5% × £197,300 = "
     "**£2,959.50**.\n\nComparable groups report quarterly rebates between £3,000 and £3,500.",
     "pass"),
    # a range the answer offers as its doubt still is one
    ("States a net interest margin of 3.12%", "The margin was probably somewhere between 3.0% "
     "and 3.3%.", "fail"),
    # an arrow marks a change's direction
    ("States merchandise revenue decreased by $0.4m", CHANGES, "pass"),
    ("States F&B revenue decreased by $1.4m", CHANGES, "fail"),
    # a negative rate is slow, a positive one fast
    ("States that the movements ran 1.8 s/day slow", "Mean rate **−1.8 s/day**, standard "
     "deviation 1.6 s/day.", "pass"),
    ("States that the movements ran 1.8 s/day slow", "Mean rate **+1.8 s/day** over the 120 "
     "movements sampled.", "fail"),
    # who owes whom is the amount's direction
    ("States that the promoter owes the venue $212k", "Net position: the venue owes the promoter "
     "$212k.", "fail"),
    ("States that the promoter owes the venue $212k", "Net position: the promoter owes the venue "
     "$212k.", "pass"),
    ("States that the promoter owes the venue $212k", "| Line | $k |\n|---|---|\n| Net | (212) "
     "|", "not_applicable"),
    # the column the criterion names binds; a Target or Budget column is the plan
    ("States actual Term 2 revenue of A$612,480", "| Term 2 | Target | Actual | Variance |\n"
     "|---|---|---|---|\n| Revenue (A$) | 650,000 | 612,480 | (37,520) |", "pass"),
    ("States actual Q3 opex of $4.38m", "| Q3 | Budget | Actual |\n|---|---|---|\n| Opex ($m) | "
     "4.38 | 4.61 |", "fail"),
    # a rate per unit beside a total of the same noun; a count named by a passive's agent
    ("States 38 tutors and an average load of 33.6 students per tutor", "We employ **38 tutors**"
     ". With 1,276 students that is an average load of **33.6 students per tutor**.", "pass"),
    ("States 26 analysts", "The programme is staffed by **26 analysts**.", "pass"),
    # per hectare however written
    ("States that the 2019 compartment has 1,980 stems per hectare", "2018 planting 2,150 "
     "stems/ha; **2019 planting 1,980 stems/ha**.", "pass"),
    # a working value restated in another unit: the restatement is the answer's figure
    ("States about 540 hours of theatre time", "412 cases × 78 min = 32,136 min ≈ **53.6 hours** "
     "of theatre time.", "fail"),
    ("States about 536 hours of theatre time", "412 cases × 78 min = 32,136 min ≈ **535.6 hours** "
     "of theatre time.", "pass"),
    ("States an office floor area of 12,900 sq ft", "Floor area = 1,200 m² → 1,200 × 3.281 = "
     "**3,937 sq ft**.", "fail"),
    # ... and where it rightly rounds the working value, either precision may meet the target
    ("States about 3.84 kg of mercury captured", "Captured: 2,610 × 1.5 g × 98% = **3,836.7 g** "
     "(≈ 3.8 kg).", "pass"),
    # compact durations, a decimal comma before a trailing €
    ("States the handover was delayed by 1 hour 40 minutes", "Arrived 10:05, handed over 11:45: "
     "a delay of **1h40m**.", "pass"),
    ("States the handover was delayed by 1 hour 40 minutes", "A delay of **1 h 20 min**.", "fail"),
    ("States an average basket of EUR 18.60", "Le panier moyen était de **18,60 €**.", "pass"),
    # a rate per another period than the criterion's is no value of it
    ("States drivers work 6.5 paid hours per day", "Each shift is **3.25 paid hours per shift**.",
     "not_applicable"),
    # holdout10's classes: numbers in words and durations, passive counts and counted nouns,
    # spreads and asides, hedges, per-units and counts, directions and their side
    # numbers in words as adjectives and with scale words; calendar durations; h:mm columns
    ("States a design stage of 22 weeks", "Stage 3 is a **twenty-two-week** stage.", "pass"),
    ("States a design stage of 26 weeks", "Stage 3 is a **twenty-two-week** stage.", "fail"),
    ("States a permitted intake of 60,000 tonnes per year", "The permit allows up to **sixty "
     "thousand tonnes a year**.", "pass"),
    ("States a notice period of 24 months", "The contract sets a **two-year** notice period.",
     "pass"),
    ("States a notice period of 12 months", "The contract sets a **two-year** notice period.",
     "fail"),
    ("States an average changeover of 1 hour 20 minutes", "| Line | Changeover (h:mm) |\n"
     "|---|---|\n| Start | 06:00 |\n| **Average** | **1:20** |", "pass"),
    # a count before a passive is the criterion's value, counted by its phrase's noun
    ("States that 1,140 student accounts were opened in Term 3", "Term 3: **1,140 accounts "
     "opened**.", "pass"),
    ("States that 350,000 invoices were processed in 2024", "In 2024 the centre processed "
     "**310,000 invoices**.", "fail"),
    ("States that 1,240 watches were returned within 6 weeks", "1,780 watches serviced; **1,240 "
     "returned within 6 weeks** of receipt.", "pass"),
    # "within the next 90 days" is a window, not the value
    ("States that $84,000 is payable within the next 90 days", "- Payable within 30 days: "
     "$84,000\n- Payable within 90 days (cumulative): **$131,000**", "fail"),
    # the verb that governs "by about X" states the direction
    ("States that the price rise reduces revenue by about £126k", "The price rise **raises "
     "revenue by £126k**.", "fail"),
    ("States that the price rise reduces revenue by about £126k", "The price rise **cuts "
     "revenue by £126k**.", "pass"),
    # a figure and its exact restatement in brackets are one value at two precisions
    ("States a lease cost of $1,468,800", "Total: **$1.47 million ($1,468,800)**.", "pass"),
    ("States a lease cost of $1.5m", "Total: **$1.47 million ($1,468,800)**.", "pass"),
    # a spread the answer describes, or another party's figures, beside the value it commits
    ("States an average ward stay of 4.3 days", "Stays ranged from 1.2 days (day surgery) to 5.1 "
     "days (trauma); the average stay was **4.3 days**.", "pass"),
    ("States an average ward stay of 4.3 days", "Stays ranged from 1.2 days (day surgery) to 5.1 "
     "days (trauma); the average stay was **4.8 days**.", "fail"),
    ("States an average bale weight of 412 kg", "Bale weights varied from 360 kg to 465 kg "
     "depending on moisture; the average was **412 kg**.", "pass"),
    ("States an average Brix of 6.8", "Brix ranged from 5.9 (week 3) to 7.6 (week 31).\n\n"
     "**Season average: 6.8**, comfortably above the 6.0 retailer minimum.", "pass"),
    ("States a plant heritability of 0.62", "Published estimates range from 0.4 to 0.7; our "
     "trials give **0.62**.", "pass"),
    ("States a 2024 churn of 11% (accept 10% to 12%)", "Industry forecasts put churn at 10–12%. "
     "Our churn was actually **17%** in 2024.", "fail"),
    # a plan row, and a counterfactual, are not the answer's figure unless the criterion asks
    ("States that the lowest fee quote was £225k", "| Firm | Fee quote |\n|---|---|\n| Hale | "
     "£212k (lowest) |\n| Marsh | £236k |\n| *Internal budget* | *£225k* |", "fail"),
    ("States a quarterly coupon of $412,000", "Had the rate cap not applied, the coupon would "
     "have been **$412,000**. With the cap, the coupon is **$375,000**.", "fail"),
    ("States a quarterly coupon of $375,000", "Had the rate cap not applied, the coupon would "
     "have been **$412,000**. With the cap, the coupon is **$375,000**.", "pass"),
    ("States that the coupon would have been $412,000 without the cap", "Had the rate cap not "
     "applied, the coupon would have been **$412,000**. With the cap, the coupon is "
     "**$375,000**.", "pass"),
    # a hedge after a gloss or with 'though possibly'; a hedge the answer resolves; a fraction
    ("States an NPL ratio of 3.4%", "The NPL ratio is 3.4% of gross loans (regulatory basis), or "
     "possibly 3.9% if restructured loans count.", "fail"),
    ("States 23,400 parcels on the peak day", "Peak day: 23,400 parcels, though possibly 24,900 "
     "if the late trunk is counted.", "fail"),
    ("States 412 admissions in January", "The registers show either 412 or 421 admissions. "
     "Checking the log, the correct figure is **412**.", "pass"),
    ("States that 346 procedures were performed in 2024", "The report shows 362 procedures for "
     "2024. Having removed the 16 duplicate entries, I count **346 procedures**.", "pass"),
    ("States 38,420 tickets sold", "**Sold: 38,420/41,500** (92.6%).", "not_applicable"),
    # what a value is per, from its header, a note or the unit before it, and what it counts
    ("States an average fee of £34.50 per month", "| Tier | Average fee (£ per four-week billing "
     "cycle) |\n|---|---|\n| All | 34.50 |", "not_applicable"),
    ("States a Block A yield of 18.4 kg/m²", "| Block | Yield (kg/plant) |\n|---|---|\n| A | "
     "18.4 |", "not_applicable"),
    ("States an OCC price of £96 per tonne", "Note: all prices in this section are per bale.\n\n"
     "- OCC: £96\n- Mixed paper: £41", "not_applicable"),
    ("States an OCC price of £96 per bale", "Note: all prices in this section are per bale.\n\n"
     "- OCC: £96\n- Mixed paper: £41", "pass"),
    ("States a screen throughput of 22 tonnes per hour", "The screen averages **22 t per shift** "
     "(8 hours).", "not_applicable"),
    ("States Q3 HGV revenue of €14.6m", "| Quarter | HGV transactions (m) |\n|---|---|\n| Q3 | "
     "14.6 |", "not_applicable"),
    ("States the partner's billing rate of $925 per hour", "Rates (USD/hr): Partner 875; "
     "Associate 465.", "fail"),
    # 'improves' and 'worsens' say whether a change is favourable
    ("States that weekly billing improves working capital by $2.3m", "Weekly billing **worsens "
     "working capital by $2.3m**.", "fail"),
    ("States that weekly billing improves working capital by $2.3m", "Weekly billing **improves "
     "working capital by $2.3m**.", "pass"),
]


@pytest.mark.parametrize(("criterion", "answer", "expected"), CLASSES_AFTER_HOLDOUTS)
def test_classes_fixed_after_holdout11_and_holdout10(criterion: str, answer: str,
                                                     expected: str) -> None:
    """holdout11's: markup, separators, footnotes and halves; windows as conditions; ranges said
    of something else; arrows, slow and fast, who owes whom; named columns, rates beside totals
    and bases; restated units, compact durations and decimal commas. holdout10's: numbers in
    words, calendar and h:mm durations; passive counts and counted nouns; windows named 'the
    next'; governing verbs; bracketed restatements; spreads, others' figures, plans, bars and
    counterfactuals beside the committed value; hedges and their resolution; what a value is per
    and what it counts; favourable and adverse changes."""
    assert verdict(criterion, answer) == expected


ROUND_TO_A_QUARTER = "What is the 2025 fee, rounded to the nearest $0.25?"
COMBINED = "What is the combined 2024 cost? Round to the nearest $0.1m."
HEADLINE = ("**Bottom line: ~$4.2m.**\n\n| Region | Cost ($k) |\n|---|---|\n| North | 1,930 |\n"
            "| South | 2,020 |\n| **Total** | **3,950** |")


@pytest.mark.parametrize(("criterion", "answer", "prompt", "expected"), [
    # a rounding step no power of ten: a value off it never passes
    ("States a 2025 fee of $12.50", "Fee = $12.10 × 1.03 = **$12.46**.", ROUND_TO_A_QUARTER,
     "not_applicable"),
    ("States a 2025 fee of $12.50", "Fee = $12.10 × 1.03 = $12.463 → **$12.50**.",
     ROUND_TO_A_QUARTER, "pass"),
    ("States a 2025 fee of $12.50", "Fee = $12.10 × 1.03 = $12.463 → **$12.75**.",
     ROUND_TO_A_QUARTER, "fail"),
    # "nearest 5 kg" is a step of 5, not 5 thousand
    ("States a flour requirement of 1,095 kg", "Mixing sheet: **1,100 kg** flour.",
     "Give the flour requirement rounded to the nearest 5 kg.", "fail"),
    # a headline the answer's own table contradicts
    ("States a combined 2024 cost of $4.0m", HEADLINE, COMBINED, "not_applicable"),
    ("States a combined 2024 cost of $4.0m", HEADLINE.replace("~$4.2m", "~$4.0m"), COMBINED,
     "pass"),
])
def test_rounding_steps_and_headlines_after_holdout10(criterion: str, answer: str, prompt: str,
                                                      expected: str) -> None:
    assert verdict(criterion, answer, prompt) == expected




# The classes fixed after holdout13's first measurement (#25), each case general to its class.
CLASSES_AFTER_HOLDOUT13 = [
    # pence: "48.0p" is £0.48; a value half a step away rounds away from the target
    ("States a cost per letter of 48.0p", "Cost per letter = £41,472 ÷ 86,400 = **£0.480**.",
     "", "pass"),
    ("States a fuel cost of 23p per parcel", "Fuel cost per parcel = £0.235.",
     "To the nearest penny?", "fail"),
    ("States a fuel cost of 24p per parcel", "Fuel cost per parcel = £0.235.",
     "To the nearest penny?", "pass"),
    ("States a yield of 4.1 t/ha", "Yield = **4.15 t/ha**.", "", "fail"),
    # a recommendation or a conclusion drawn from the prompt's values is no number
    ("Recommends Brand B at £2.58 per pack", "Brand B is £2.58 per pack; stock Brand A.",
     "Brand A costs £4.12 per pack and Brand B £2.58. Which should we stock?", "not_applicable"),
    ("States that purchases of ₹1.14 crore fall short of the ₹1.2 crore minimum",
     "Purchases were ₹1.14 crore against the ₹1.2 crore minimum, so the obligation is met.",
     "The franchise requires ₹1.2 crore of purchases; purchases were ₹1.14 crore. Was it met?",
     "not_applicable"),
    # a table's caption gives its bare numbers their unit, and the prose restating them too
    ("States a Leeds payroll cost of £412,000",
     "Payroll by office, FY2025 (£000)\n\n| Office | Cost |\n|---|---|\n| Leeds | 412 |", "",
     "pass"),
    ("States a Hale fee of €1,200 per quarter", "Fees below are in euros per month:\n\n| Service "
     "| Fee |\n|---|---|\n| Bookkeeping | 1,200 |\n\nHale pays 1,200.", "", "not_applicable"),
    ("States a desk price of A$750 per month", "Price card (A$ per week):\n\n| Product | Price |"
     "\n|---|---|\n| Desk | 750 |\n\nDesks are 750.", "", "not_applicable"),
    ("States a session fee of A$148 per hour", "| Program | Fee (A$ per 90-min session) |\n|---|"
     "---|\n| Intensive | 148 |", "", "not_applicable"),
    # a rounding step in A$; a correction said as 'correcting to' or 'having re-checked'
    ("States revenue per desk of A$530", "A$612,000 ÷ 1,148 = **A$533.10** per desk.",
     "Revenue per desk, to the nearest A$10?", "pass"),
    ("States a repeat rate of 42.6%", "Rate = 1,022 ÷ 2,493 = 41.0%.\n\nInitially I used the "
     "wrong denominator; correcting to 2,399 customers: **42.6%**.", "", "pass"),
    ("States a hit rate of 31.5%", "Hit rate = 63 ÷ 180 = 35.0%.\n\nHaving re-checked the log, "
     "20 calls were duplicates, so on 200 calls the hit rate is 31.5%.", "", "pass"),
    # decide only when sure: a value only in a quoted or attributed sentence, beside one of the
    # answer's own, makes the checker abstain
    ("States a margin of 19.8%", '> Board pack: "The margin was 19.8%."\n\nRecalculated: '
     "**20.7%**.", "", "not_applicable"),
    ("States a payback of 4.1 years", "The draft paper quotes a payback of 4.1 years, but on net "
     "cash it is not 4.1 years but 4.6 years.", "", "not_applicable"),
    # a value with a conclusion against a bar beside it: numbers check the value, not the verdict
    ("States net leverage of 5.8x, breaching the 5.5x covenant", "Leverage = **5.8x**; that is "
     "within the covenant on an annualised basis.", "", "not_applicable"),
    ("States interest cover of 2.05x, below the 2.25x covenant", "Cover = **2.05x**, which clears "
     "the covenant on a pro-forma basis.", "", "not_applicable"),
    # a conversion factor is no value of the subject
    ("States a dose of 2 mg", "The dose is 2 mg (1 mg = 1,000 µg).", "", "pass"),
    ("States a volume of 1 gal", "It holds 12 litres (1 gal = 3.785 litres).", "",
     "not_applicable"),
]


@pytest.mark.parametrize(("criterion", "answer", "prompt", "expected"), CLASSES_AFTER_HOLDOUT13)
def test_classes_fixed_after_holdout13(criterion: str, answer: str, prompt: str,
                                       expected: str) -> None:
    """holdout13's: pence and rounding half up; recommendations and conclusions from the
    prompt's values; a caption's unit; conversion factors; rounding steps in A$; corrections
    said in prose."""
    assert verdict(criterion, answer, prompt) == expected


# The tuned cases' classes the last round left open (#25): each general to its class.
CLASSES_OF_ROUND3_TUNED_CASES = [
    # a number in words (or nil, none) stated as the value its sentence or line ends on
    ("States that 12 vessels remain in service",
     "The register lists 14 vessels.\n\nHaving re-checked the register, two were sold in May, "
     "so the number in service is twelve.", "", "pass"),
    ("States that 12 vessels remain in service", "The number of vessels in service is eleven.", "",
     "fail"),
    ("States 3 safety incidents in Q4",
     "**Safety incidents**\n\n- Q3: 3 incidents (all minor)\n- Q4: nil", "", "not_applicable"),
    ("States 0 safety incidents in Q4", "Safety incidents in Q4: none.", "", "pass"),
    # a line label's "per X" says what the line's result is per (not its working values)
    ("States a maintenance cost per vehicle of $4,000",
     "- Maintenance cost per depot: $96,000 ÷ 24 = $4,000\n- Maintenance cost per vehicle: "
     "$96,000 ÷ 120 = $800", "", "not_applicable"),
    ("States a maintenance cost per depot of $4,000",
     "- Maintenance cost per depot: $96,000 ÷ 24 = $4,000", "", "pass"),
    ("States a total maintenance cost of $96,000",
     "- Maintenance cost per depot: $96,000 ÷ 24 = $4,000", "", "pass"),
    ("States a daily hire rate of $2.10", "Chassis per diem: $2.10 (3-year term).", "", "pass"),
    # a rounding said in the sentence after the value it rounds is the answer's final figure
    ("States 73,000 passengers in 2024", "Passengers carried, 2024: 72,640.\n\nRounded to the "
     "nearest thousand: **72,000 passengers**.", "Round to the nearest thousand.", "fail"),
    ("States 73,000 passengers in 2024", "Passengers carried, 2024: 72,640.\n\nRounded to the "
     "nearest thousand: **73,000 passengers**.", "Round to the nearest thousand.", "pass"),
    ("States 72,640 passengers in 2024", "Passengers carried, 2024: 72,640.\n\nRounded to the "
     "nearest thousand: **72,000 passengers**.", "", "pass"),
]


@pytest.mark.parametrize(("criterion", "answer", "prompt", "expected"),
                         CLASSES_OF_ROUND3_TUNED_CASES)
def test_classes_of_round3_tuned_cases(criterion: str, answer: str, prompt: str,
                                       expected: str) -> None:
    """Number words and nil stated as a value; a label's 'per X'; a rounding in the next
    sentence."""
    assert verdict(criterion, answer, prompt) == expected


@pytest.mark.parametrize(("criterion", "answer", "named"), [
    ("States net leverage of 5.8x, breaching the 5.5x covenant", "Leverage = **5.8x**.",
     "a verdict against a bar"),
    ("States a margin of 12.5% because of lower freight costs", "Margin = 12.5%.",
     "a cause or reason"),
    ("States a payback of 4.1 years", "The draft paper quotes a payback of 4.1 years, but on net "
     "cash it is 4.6 years.", "quotes or attributes to another"),
])
def test_the_preconditions_abstain_with_a_named_reason(criterion: str, answer: str,
                                                       named: str) -> None:
    """Decide only when sure: a verdict against a bar, a cause, and a value only in a quoted or
    attributed sentence each leave the checker abstaining, and the reason says which."""
    graded = grade_numeric(criterion, answer)
    assert graded.verdict == "not_applicable" and named in graded.reason


# holdout14's classes (#25, round 4): each general to its class.
CLASSES_AFTER_HOLDOUT14 = [
    # a variance cell's A or F flag is the value's side; its brackets then mark no direction
    ("States that March fuel costs were $3,120 over budget (adverse)",
     "| Line | Budget | Actual | Variance |\n|---|---|---|---|\n| Fuel | $40,000 | $43,120 | "
     "($3,120) A |", "", "pass"),
    ("States an adverse March fuel-cost variance of $3,120",
     "| Line | Budget | Actual | Variance |\n|---|---|---|---|\n| Fuel | $46,000 | $42,880 | "
     "$3,120 F |", "", "fail"),
    ("States that March fuel costs were $3,120 over budget",
     "| Line | Budget | Actual | Variance |\n|---|---|---|---|\n| Fuel | $40,000 | $43,120 | "
     "($3,120) A |", "", "not_applicable"),
    # a count within a window: another count said within it, beside the target said outside
    # it, leaves the checker abstaining; the target said within it beside a far total passes
    ("States that 88 claims were settled within 10 working days",
     "Of 140 claims, 52 were settled within 10 working days; 88 took longer.", "",
     "not_applicable"),
    ("States that 31 vans were serviced within the first fortnight",
     "All **31** vans are serviced. Within the first fortnight only 19 were done.", "",
     "not_applicable"),
    ("States that 640 members renewed within the grace period",
     "**640 members** (12.1% of the 5,290 lapsed) renewed within the grace period.", "", "pass"),
    # a basis the value's header or a sentence above it says, which the criterion does not
    ("States that 900 jars are in stock", "| Item | Stock (trays of 24) |\n|---|---|\n| Jam | 900 |",
     "", "not_applicable"),
    ("States a room rate of NZ$310 including GST",
     "| Room | Rate (NZ$, excl. GST) |\n|---|---|\n| King | 310 |", "", "not_applicable"),
    ("States that press 3 moulds 150 parts per hour",
     "All figures below are per 12-hour shift.\n\n- Press 3: 150 parts", "", "not_applicable"),
    ("States yearly licence fees of $48,000", "Licence fees come to $48,000 per month.", "",
     "not_applicable"),
    # continental notation is not read as one value, so a miss there decides nothing
    ("States an average cost of €52.30 per hour",
     "€4.184.000 ÷ 80.000 uur = **€ 52,30 per uur**", "", "not_applicable"),
    ("States 2024 deliveries to Vinval of 8,320 bottles",
     "Per Vinval's statement:\n\n- Bouteilles livrées : **8 320**\n- Valeur : 94 150 €", "",
     "not_applicable"),
]


@pytest.mark.parametrize(("criterion", "answer", "prompt", "expected"), CLASSES_AFTER_HOLDOUT14)
def test_classes_fixed_after_holdout14(criterion: str, answer: str, prompt: str,
                                       expected: str) -> None:
    """holdout14's: a variance's A/F flag; a count within a window; a header's or caption's
    basis (packs, tax, per shift, per period) the criterion does not share; continental
    notation."""
    assert verdict(criterion, answer, prompt) == expected


CLASSES_AFTER_HOLDOUT15 = [
    # a quotient's operands in its working are no alternatives to each other
    ("States 18 drivers, 27 vans and 1.5 vans per driver",
     "- Drivers: **18**\n- Vans: **27**\n- Vans per driver: 27 / 18 = **1.5**", "", "pass"),
    # an alternative raised and then rejected: the value a later sentence settles on decides
    ("States a load factor of 78.4%",
     "The load factor is 78.4%, or possibly 80.1% if positioning flights are left out. They "
     "count under the carrier's definition, so the figure to report is **78.4%**.", "", "pass"),
    ("States a load factor of 78.4%",
     "The load factor is 78.4%, or possibly 80.1% if positioning flights are left out. They "
     "do not count under the carrier's definition, so the figure to report is **80.1%**.", "",
     "fail"),
    ("States a load factor of 78.4%",
     "The load factor is 78.4%, or possibly 80.1% if positioning flights are left out.", "",
     "fail"),
    # a bar a possessive names ("within the fund's 15% cap") is no value of the subject
    ("States a sector exposure of 15.0%",
     "Property exposure stayed within the fund's 15% cap, at **13.1%** of assets.", "", "fail"),
    # a reference whose parts a slash joins ("PL/45000/2023") is an identifier, not a value
    ("States a licensed capacity of 3,000 visitors",
     "Licence **VL/3000/2022** (Harrow Council) permits at most **2,700** visitors.", "",
     "not_applicable"),
    # scientific notation is not read, so an answer written in it is no answer without a number
    ("States 2.75 million page views in June", "June page views: `2.75e6` (`df.views.sum()`).",
     "", "not_applicable"),
]


@pytest.mark.parametrize(("criterion", "answer", "prompt", "expected"), CLASSES_AFTER_HOLDOUT15)
def test_classes_fixed_after_holdout15(criterion: str, answer: str, prompt: str,
                                       expected: str) -> None:
    """holdout15's: a quotient's working; an alternative raised and rejected; a bar a
    possessive names; a reference joined by slashes; scientific notation unread."""
    assert verdict(criterion, answer, prompt) == expected


CLASSES_AFTER_HOLDOUT16 = [
    # a unit over a unit is one quantity: an areal density is no volumetric one
    ("States a panel density of 32 kg/m³", "The insulation panels weigh **32 kg/m²**.", "",
     "fail"),
    # another unit of the same kind converts, and 95 g/mile is no 95 g/km
    ("States tailpipe emissions of 95 g/km", "The hatchback emits **95 g/mile** (WLTP).", "",
     "fail"),
    ("States tailpipe emissions of 95 g/km", "The hatchback emits **152.9 g/mile** (WLTP).", "",
     "pass"),
    # a rate the criterion may say in words ("per day") is not failed as another kind
    ("States 40 kg of flour used per day", "Flour: **40 kg/day** across both lines.", "",
     "not_applicable"),
    # a unit that goes on past what the reader names decides nothing ("MWh per hour" is MW)
    ("States an average load of 3.1 MW", "The hall drew **3.1 MWh per hour** on average.", "",
     "not_applicable"),
    # a column header's unit is the value's: 2.4 troy oz is no 2.4 kg
    ("States 2.4 kg of platinum held",
     "| Metal | Held (troy oz) |\n|---|---|\n| Platinum | 2.4 |\n| Rhodium | 0.9 |", "", "fail"),
    # a row label's period ("$ per month") against an annual figure decides nothing
    ("States an annual licence fee of $2,300",
     "| Item | Amount |\n|---|---|\n| Seats | 40 |\n| Fee per seat ($ per month) | 2,300 |",
     "", "not_applicable"),
    # a header's "(000 km)" scales its column, so 18.2 is no miss of 18,200 km
    ("States that van 7 drove 18,200 km",
     "| Van | Distance (000 km) |\n|---|---|\n| 6 | 15.9 |\n| 7 | 18.2 |", "", "not_applicable"),
]


@pytest.mark.parametrize(("criterion", "answer", "prompt", "expected"), CLASSES_AFTER_HOLDOUT16)
def test_classes_fixed_after_holdout16(criterion: str, answer: str, prompt: str,
                                       expected: str) -> None:
    """holdout16's: a unit of another kind, or another unit of the same kind, beside the
    criterion's number; a header's unit or scale, a row label's period."""
    assert verdict(criterion, answer, prompt) == expected


CLASSES_AFTER_HOLDOUT17 = [
    # a planning reference with a letter suffix is an identifier, not two values: with the
    # criterion's "up to" bound set aside nothing is left to pass on
    ("States that consent 20/03117/OUT allows up to 75 homes",
     "Outline consent **20/03117/OUT** allows **64 homes** on the field.", "", "not_applicable"),
    # a column in horsepower converts: 90 hp is 67.1 kW, no 90 kW
    ("States that the dredger's pump is rated at 90 kW",
     "| Pump | Drive (hp) | Fitted |\n|---|---|---|\n| Main | 90 | 2014 |", "", "fail"),
    ("States that the dredger's pump is rated at 67 kW",
     "| Pump | Drive (hp) | Fitted |\n|---|---|---|\n| Main | 90 | 2014 |", "", "pass"),
    # a span said in words of a period is not read, so it is no answer without a number
    ("States that the concession runs for 50 years",
     "The concession runs for half a century, expiring on 30 June 2076.", "", "not_applicable"),
]


@pytest.mark.parametrize(("criterion", "answer", "prompt", "expected"), CLASSES_AFTER_HOLDOUT17)
def test_classes_fixed_after_holdout17(criterion: str, answer: str, prompt: str,
                                       expected: str) -> None:
    """holdout17's: a reference with a letter suffix; a '(hp)' column; a range the value is
    'above'; words for a duration; an arrow to an approximate result; direction words."""
    assert verdict(criterion, answer, prompt) == expected


CLASSES_AFTER_HOLDOUT18 = [
    # a duration in words beside no digit is no answer "without a number": it is not read
    ("States that the refit takes 18 months",
     "The refit is scheduled to take **a year and a half**, from the spring.", "", "not_applicable"),
    # "hh:mm" written after a value makes it a duration; the clock times beside it are not
    ("States a changeover time of 14 minutes",
     "Changeover: **00:14** (hh:mm); a 10:05 stop restarts at 10:19.", "", "pass"),
    ("States a changeover time of 20 minutes",
     "The changeover time is **00:14** (hh:mm); a 10:05 stop restarts at 10:19.", "", "fail"),
    # a summary's rounding ("about 84%") of the table's exact 83.6% is the same figure
    ("States a net-to-gross efficiency of 83.6%",
     "**Summary:** the block is about 84% efficient.\n\n| Block | NIA | GIA | Efficiency |\n"
     "|---|---|---|---|\n| A | 2,090 | 2,500 | 83.6% |", "Give one decimal place.", "pass"),
    # another subject's value of the kind after the answer's: a fail needs no value the answer
    # commits to (in bold, or as its working's result) that meets the target
    ("States the route's load factor is 73.7%",
     "Load factor = 412,800 / 560,000 = **73.7%**.\n\nThe group-wide load factor last year "
     "was 69.8%.", "Give one decimal place.", "not_applicable"),
    # ... but a fail on the value said of the criterion's named subject stands
    ("States Lena Ask's publishing share of £9,840",
     "Publishing income: £32,800.\n- Lena Ask (70%): £22,960\n- Mira Holt (30%): **£9,840**", "",
     "fail"),
    # a pass needs no committed value near the target that misses it where the match is not
    # committed: the summary's $2.48m against the table's bold total of $2,410k
    ("States that the appeal has raised $2.48m",
     "Summary: the appeal has raised $2.48m so far.\n\n| Source | $000 |\n|---|---|\n"
     "| Trusts | 1,400 |\n| Donors | 1,010 |\n| **Total** | **2,410** |", "", "not_applicable"),
    ("States that the appeal has raised $2.48m",
     "Summary: the appeal has raised $2.48m so far.\n\n| Source | $000 |\n|---|---|\n"
     "| Trusts | 1,470 |\n| Donors | 1,010 |\n| **Total** | **2,480** |", "", "pass"),
    # years written the wrong way round: the value is bound to the other year
    ("States 2024 revenue of £130.8m",
     "Revenue grew 7.7%, from £121.4m in 2024 to £130.8m in 2023.", "", "not_applicable"),
    # a list's "all figures in €000": a bare 1,140 is €1.14m, not €1,140
    ("States a crew cost of €1,140 per sailing",
     "Winter crew cost (all figures in €000 unless stated):\n\n- Total crew cost: 1,140\n"
     "- Sailings: 2,280\n- Cost per sailing: 500", "", "not_applicable"),
    ("States a total crew cost of €1.14m",
     "Winter crew cost (all figures in €000 unless stated):\n\n- Total crew cost: 1,140\n"
     "- Sailings: 2,280", "", "pass"),
    # a target range beside the result: the range is the target's, not the answer's
    ("States an average wait of 12 minutes (accept 10 to 14)",
     "Target wait is 10–14 minutes; the audited **average was 19 minutes**.", "", "fail"),
    # ml of a mg/ml solution: the concentration converts, so the ml decide nothing here
    ("States a standard dose of 60 mg",
     "Standard dose: **60 ml** of 1 mg/ml oral solution.", "", "not_applicable"),
    # "better" says how good, not which way: against "below" it decides nothing
    ("States the job was £1,240 below its estimated margin",
     "Estimated margin £5,860; actual £7,100, **£1,240 better** than estimate.", "",
     "not_applicable"),
    # a ranked list whose first item is not the value the criterion calls the largest
    ("States that the largest Q1 job was worth £46,200",
     "Top jobs, Q1:\n1. Harland annual report — £38,900\n2. Civic theatre brochure — £46,200\n"
     "3. Marlow catalogue — £21,750", "", "not_applicable"),
    ("States that the largest Q1 job was worth £46,200",
     "Top jobs, Q1:\n1. Civic theatre brochure — £46,200\n2. Harland annual report — £38,900\n"
     "3. Marlow catalogue — £21,750", "", "pass"),
    # a value said only on an assumptions line is no answer to the criterion (the NPV given,
    # £142,000, is too far from £180,000 to be read as a claim about it)
    ("States an NPV of £180,000 (accept ±£10,000)",
     "**NPV: £142,000** over 8 years.\n\n_Assumptions: 8% discount rate; residual value "
     "£180,000; 2% annual price inflation._", "", "not_applicable"),
    ("States an NPV of £160,000 (accept ±£10,000)",
     "**NPV: £142,000** over 8 years.\n\n_Assumptions: 8% discount rate; residual value "
     "£160,000; 2% annual price inflation._", "", "fail"),
]


@pytest.mark.parametrize(("criterion", "answer", "prompt", "expected"), CLASSES_AFTER_HOLDOUT18)
def test_classes_fixed_after_holdout18(criterion: str, answer: str, prompt: str,
                                       expected: str) -> None:
    """holdout18's: words and hh:mm for durations; a summary's rounding; another subject's value
    for the fail; swapped years; a heading's scale; a target range; ml of a mg/ml solution;
    'better' against 'below'; a ranked list against 'largest'; an assumptions line."""
    assert verdict(criterion, answer, prompt) == expected


CLASSES_AFTER_HOLDOUT19 = [
    # the nearest name before a value in its clause says whose it is: a match said of another
    # named subject, where the criterion's subject has a value of its own, is no evidence
    ("States Eastfield's occupancy is 82%",
     "Eastfield filled 77% of its beds this winter, while Westbury reached 82%.",
     "Occupancy: Westbury 77%, Eastfield 82%.", "fail"),
    ("States Eastfield's occupancy is 82%",
     "Eastfield filled 82% of its beds this winter, while Westbury reached 77%.",
     "Occupancy: Westbury 77%, Eastfield 82%.", "pass"),
    ("States Marsh Lane's collection rate is 96.1%",
     "Marsh Lane's collection rate of **94.0%** trails; Dock Road runs at 96.1%.", "", "fail"),
    # "respectively" gives the names to the values in order
    ("States Calder's licence fee is £7,400",
     "Calder and Wenlow pay £9,100 and £7,400 respectively.", "", "fail"),
    # ... and a fail on a value said of another subject, where the criterion's own meets,
    # decides nothing
    ("States Calder's licence fee is £7,400",
     "Wenlow and Calder pay £9,100 and £7,400 respectively.", "", "not_applicable"),
    # a list item's label says whose the value is
    ("States an annual lift servicing fee of £2,900",
     "Annual contracts:\n- Boiler servicing: £2,900\n- Lift servicing: £3,650\n"
     "- Gutter clearing: £540", "", "fail"),
    ("States an annual lift servicing fee of £2,900",
     "Annual contracts:\n- Boiler servicing: £3,650\n- Lift servicing: £2,900\n"
     "- Gutter clearing: £540", "", "pass"),
    # the word each target counts by: two categories swapped
    ("States 310 inbound calls and 95 outbound calls",
     "The desk logged **95 inbound calls** and **310 outbound calls** in May.", "", "fail"),
    # a final sentence committing to another row's value, where the prompt gives both
    # a range another party quotes, or an agreement allows, beside the answer's own figure
    ("States a payback of 1.8 years (accept 1.7 to 1.9 years)",
     "Payback = £45,000 ÷ £17,300 = **2.6 years**.\n\nThe manufacturer quotes a typical payback "
     "of 1.7–1.9 years for larger fleets.",
     "A van costs £45,000 and saves £17,300 a year. What is the simple payback?",
     "not_applicable"),
    ("States the audit took 11 days (accept 10 to 12 days)",
     "The agreement permits 10–12 days per audit; this audit actually took **15 days**.",
     "The audit took 15 days.", "not_applicable"),
    # "within X" in the answer is a window, not the figure, where the criterion counts none
    ("States an average delay of 15 minutes on school runs",
     "96% of May school runs left within 15 minutes of schedule. The average delay across all "
     "240 runs was **5.2 minutes**.",
     "What was the average delay on school runs in May? Answer in minutes.", "fail"),
    ("States the nearest fuel store is 10 m from a building",
     "Fuel stores must not stand within 10 m of a building. The nearest store stands **6 m** "
     "away.", "", "not_applicable"),
    # "within a single day" is a window of one day: a count said within three days is not it
    ("States the clinic booked 120 patients within a single day",
     "The clinic booked 120 patients within three days; its busiest single day was 52.", "",
     "not_applicable"),
    # "at least 80% ... within 10 days": the bound is the claim, the window its condition
    ("States that at least 80% of claims were settled within 10 days",
     "812 / 1,050 = **77.3%** settled within 10 days.", "", "fail"),
    ("States that at least 80% of claims were settled within 10 days",
     "872 / 1,050 = **83.0%** settled within 10 days.", "", "pass"),
    # a variance's "(F)" or "(A)" and a count's "over" or "under" are part of its value
    ("States an adverse variance of £1,850 on the Quay Street job",
     "Quay Street variance: **+£1,850** (F) against budget.", "", "fail"),
    ("States an adverse variance of £1,850 on the Quay Street job",
     "Quay Street variance: **£1,850** (A) against budget.", "", "pass"),
    ("States the count was 17 pallets under the book quantity",
     "The count came out **17 pallets over** the book quantity.", "", "fail"),
    ("States the count was 17 pallets under the book quantity",
     "The count came out **17 pallets under** the book quantity.", "", "pass"),
    # "though if ... it may be closer to Y" offers Y beside the value: a hedge
    ("States an on-time rate of 88.4%",
     "The on-time rate is 88.4%, although if the diverted flights are dropped it might be "
     "closer to 89.6%.", "", "fail"),
    # "Bridge 7" names a place, as "Ward 3" does: the criterion's value is the count
    ("States that 3,480 crossings were logged at Bridge 7 in June",
     "The counter export (dated 07/06/2025) shows 3,112 crossings at Bridge 7 for June, up "
     "from 2,904 in May.", "", "fail"),
    # "6.5 mm" with no currency is millimetres (not "mm", millions), and a "(cm)" header's 6.5 is
    # 65 mm; "USD 4.2mm" is still millions
    ("States a mean pad thickness of 6.5 mm",
     "| Measure | Value (cm) |\n|---|---|\n| Mean pad thickness | 6.5 |", "", "fail"),
    ("States revenue of USD 4.2mm", "Revenue came to USD 4.2 million.", "", "pass"),
    # a number inside a header's unit is the unit's, not a value
    ("States a capacity of 180 bottles",
     "| Unit | Capacity (crates of 12 bottles) |\n|---|---|\n| C-1 | 15 |\n| C-2 | 9 |", "",
     "not_applicable"),
    # LaTeX's "{,}" groups with decimals after them, and "\pounds" is £
    ("States an average price of £1,502.75 per unit",
     "$$\\text{ASP} = \\frac{\\pounds 601{,}100}{400} = \\pounds 1{,}502.75$$", "", "pass"),
    # a line label's "%" is the working's result's unit, not its operands'
    ("States a labour cost percentage of 35.1% (accept 34.9% to 35.3%)",
     "| | £ |\n|---|---|\n| Labour | 88,240 |\n| Sales | 251,600 |\n\n"
     "Labour cost % = 88,240 / 251,600 = **35.07%**\n\nThat is under the 37% ceiling.",
     "Sales were £251,600 and labour £88,240. What was the labour cost percentage?", "pass"),
    # a working's operands ("≈ 18.4 / 1.23 →") are not values it commits to: its bold result
    # meets, so a fail on an operand decides nothing
    ("States a remaining life of 15.0 years",
     "Remaining life ≈ 18.4 / 1.23 → **~15.0 years**", "", "not_applicable"),
    # "approximately 47,000" holds what rounds to it at its last non-zero digit; one figure
    # ("about £40") states no such rule, and the answer's own rounding is held as written
    ("States that the depot handled approximately 47,000 parcels in May",
     "The depot handled 46,820 parcels in May, about 1,510 a day.", "", "pass"),
    ("States an average fare of approximately £40",
     "The average fare across all 9,120 journeys is **£36.20**.", "", "fail"),
    ("States approximately £2,400 per month on cleaning",
     "£28,620 / 12 = £2,385 per month — call it **roughly £3,000 a month**.", "", "fail"),
    # "falls below the 92% target" is the value's side of a bar, not a fall; the bar's words
    # are no subject
    ("States that the fill rate of about 91% falls below the 92% target",
     "612 / 673 = **90.9%** of lines were filled, which is **below** the 92% target by 1.1 "
     "points.", "", "pass"),
    # feet and inches are one length
    ("States the mast height is 9.0 m", "The mast stands **29 ft 6.5 in** tall.", "", "pass"),
    ("States a 2025 retention rate of 88.2%",
     "| Year | Retention |\n|---|---|\n| 2024 | 85.7% |\n| 2025 | 88.2% |\n\n"
     "The latest retention rate shown is **85.7%**.",
     "Retention: 2024 85.7%, 2025 88.2%.", "not_applicable"),
]


@pytest.mark.parametrize(("criterion", "answer", "prompt", "expected"), CLASSES_AFTER_HOLDOUT19)
def test_classes_fixed_after_holdout19(criterion: str, answer: str, prompt: str,
                                       expected: str) -> None:
    """holdout19's and holdout20's: values swapped between named subjects (a clause's name,
    'respectively', a list item's label, the word a value counts by); a final sentence binding
    another row."""
    assert verdict(criterion, answer, prompt) == expected


def test_a_bound_criterion_gives_an_open_tolerance_in_json_evidence() -> None:
    """A judge-vs-code finding on a criterion claiming a bound ("at least 80% ... within 10
    days") writes the open end of its tolerance as null, so the evidence stays strict JSON."""
    task = _task("States that at least 80% of claims were settled within 10 days")
    attempt = Attempt(id="v/t/1", task_id="t", model="m", variant="v", index=1,
                      state="graded", answer="812 / 1,050 = **77.3%** settled within 10 days.")
    judge = [CriterionGrade(attempt_id=attempt.id, criterion_id="c", grader="recorded",
                            verdict="pass")]
    findings = list(judge_disagrees_with_code(task, attempt, judge, code_verdicts(task, attempt)))
    assert [f.check for f in findings] == ["judge_passed_value_outside_tolerance"]
    evidence = json.loads(json.dumps(findings[0].evidence, allow_nan=False))
    assert evidence["targets"][0]["tolerance"] == [80.0, None]



CLASSES_AFTER_HOLDOUT21 = [
    # a range given "for reference" about something else is not the answer's figure
    ("States a break-even of 140 covers per week (accept 136 to 144)",
     "Contribution per cover = £31 − £12 = £19.\n\nBreak-even = £3,420 / £19 = **180 covers "
     "per week**.\n\nFor reference, quiet weeks serve between 136 and 144 covers.",
     "A bistro's fixed costs are £3,420 a week. How many covers a week break even?", "fail"),
    # ... and a sentence opening "For context," gives another figure, not a rival to the answer's
    ("States the route's load factor is 73.7%",
     "Load factor = 412,800 / 560,000 = **73.7%**.\n\nFor context, the group-wide load factor "
     "last year was 69.8%.", "Give one decimal place.", "pass"),
    # a position's name is its sign: net cash is not net debt
    ("States a net debt position of £8,200",
     "Net cash = £21,300 − £29,500 = **£8,200**. The branch holds a net cash position.",
     "What is the branch's net cash position (cash £21,300; overdraft £29,500)?", "fail"),
    ("States a net debt position of £8,200",
     "Net debt = £29,500 − £21,300 = **£8,200**.",
     "What is the branch's net cash position (cash £21,300; overdraft £29,500)?", "pass"),
    # a closing note that prefers another figure takes the commitment away
    ("States H2 operating profit of £61,400",
     "H2 operating profit: **£61,400**.\n\n(Note: if the £17,200 bonus accrual falls in H2 "
     "rather than H1, the figure would be £44,200 — I'd treat that as the more prudent figure.)",
     "What was the studio's H2 operating profit?", "fail"),
    # a figure "before" an adjustment, then the committed net figure
    ("States a gross margin of £4,700",
     "Gross margin = £18,900 − £14,200 = £4,700 before the £1,650 delivery charge, so "
     "**£3,050** net of delivery — that is the margin to report.",
     "What gross margin did the dealer make on the tractor (buy £14,200, sell £18,900)?", "fail"),
    # a control band is no tolerance for the criterion's figure: its centre is another value
    ("States Freezer B averaged -18.4 °C in June",
     "Freezer B held within ±1 °C of its -18 °C set point all month, averaging **-17.6 °C**.",
     "Freezers must be kept within ±1 °C of -18 °C. What was Freezer B's average in June?",
     "fail"),
    # the answer's unrounded working before an arrow is not its committed figure
    ("States a defect rate of 3.46%",
     "83 / 2,400 = 3.458% → **3.5%**.",
     "What share of units were defective (83 of 2,400)? Give two decimal places.", "fail"),
    # a footnote marker binds a value to one line of business
    ("States a March gross margin of 38%",
     "Gross margin ~38%*\n\n*on the bakery line only; blended margin across all lines is 31%.",
     "What was the café's March gross margin?", "not_applicable"),
    # an identifier in the criterion ("job 2275") is no target
    ("States a fee of £3,140 for job 2275",
     "Job **3140** (Mill Street survey) — fee **£2,275 + VAT**.\n\nJob 2275 is the Canal Walk "
     "survey, still open.",
     "What fee was invoiced for the Mill Street survey (job 2275)?", "fail"),
    ("States a fee of £3,140 for job 2275",
     "Job 2275 (Mill Street survey) — fee **£3,140 + VAT**.",
     "What fee was invoiced for the Mill Street survey (job 2275)?", "pass"),
]


@pytest.mark.parametrize(("criterion", "answer", "prompt", "expected"), CLASSES_AFTER_HOLDOUT21)
def test_classes_fixed_after_holdout21(criterion: str, answer: str, prompt: str,
                                       expected: str) -> None:
    """holdout21's: a reference range; a position's name as its sign; a note preferring another
    figure; a figure before an adjustment; a band around another value; an unrounded working;
    a footnote marker; an identifier in the criterion."""
    assert verdict(criterion, answer, prompt) == expected
