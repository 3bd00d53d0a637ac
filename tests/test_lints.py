"""Static task checks: each fires on its defect and stays quiet on a sound task."""

from __future__ import annotations

import pytest

from rubric_audit.checks import lints
from rubric_audit.core.model import ChatMessage, ChatSpace, Criterion, Gold, MailMessage, Task, WorldFile
from rubric_audit.core.model import WorldContents as World

WORLD = World(
    files=[WorldFile(path="Deal/Model.xlsx", size=10, text="DCF!B18 = =B15+B17 revenue growth"),
           WorldFile(path="Deal/Memo.md", size=10, text="The fee is 1.25% of enterprise value.")],
    mail=[MailMessage(message_id="<m1>", mailbox="inbox", date="2025-03-04", sender="a@x",
                      subject="Comps", body="Exclude Fjordkost from the peer set.")],
    chat=[ChatSpace(name="Team", messages=[ChatMessage(message_id="c1", author="Mari",
                                                       text="Use end-of-year discounting.")])],
)


def task(*criteria: tuple[str, str], prompt: str = "What enterprise value does the model imply?",
         gold: str = "The enterprise value is NOK 2,360.0m.") -> Task:
    return Task(id="t", name="t", world_id="w", prompt=prompt, gold=Gold(text=gold),
                criteria=[Criterion(id=f"c{i}", text=text, explanation=why)
                          for i, (text, why) in enumerate(criteria, start=1)])


SOUND = task(("States that the enterprise value is NOK 2,360.0m (accept NOK 2,359.0m to "
              "NOK 2,361.0m)", "Sum of PV of FCF NOK 590.9m plus PV of TV NOK 1,769.1m = "
                               "NOK 2,360.0m."))


def checks(check, t: Task, world: World = WORLD) -> list[str]:
    return [f.check for f in check(t, world)]


@pytest.mark.parametrize("check", lints.TASK_CHECKS)
def test_sound_task_has_no_finding_above_info(check) -> None:
    assert all(f.severity == "info" for f in check(SOUND, WORLD))


def test_criterion_contradicts_explanation() -> None:
    t = task(("States a success fee of NOK 25.9m", "1.25% x EV of NOK 2,360.0m = NOK 29.5m."))
    [finding] = lints.criterion_contradicts_explanation(t, WORLD)
    assert finding.evidence["criterion_value"] == 25.9e6
    assert finding.evidence["explanation_value"] == 29.5e6
    same = task(("States a success fee of NOK 29.5m", "1.25% x EV of NOK 2,360.0m = NOK 29.5m."))
    assert checks(lints.criterion_contradicts_explanation, same) == []
    reference = task(("States that the supplier has 45 days",
                      "Amendment No. 1 replaced thirty days with forty-five days."))
    assert checks(lints.criterion_contradicts_explanation, reference) == []


def test_gold_contradicts_criterion() -> None:
    t = task(("States FY2027 EBITDA of NOK 268.0m", ""), gold="FY2027 EBITDA is NOK 252.8m.")
    assert checks(lints.gold_contradicts_criterion, t) == ["gold_contradicts_criterion"]


def test_criteria_conflict_on_quantity() -> None:
    t = task(("States total FY2025 revenue of GBP 45.3m", ""),
             ("States total FY2025 revenue of GBP 41.6m, up 3.0% on FY2024", ""))
    assert checks(lints.criteria_conflict_on_quantity, t) == ["criteria_conflict_on_quantity"]
    two_methods = task(("States that the share price using the Gordon Growth Model is $52.46", ""),
                       ("States that the share price using the Exit Multiple Approach is $58.19",
                        ""))
    assert checks(lints.criteria_conflict_on_quantity, two_methods) == []


def test_criterion_restates_premise() -> None:
    prompt = ("The MSA caps the supplier's liability at the fees paid in the 12 months before a "
              "claim is notified. Calculate the cap.")
    t = task(("States that the supplier's liability is capped at the fees paid in the 12 months "
              "before the claim is notified", ""), ("States that the cap is GBP 480,900", ""),
             prompt=prompt)
    found = list(lints.criterion_restates_premise(t, WORLD))
    assert [(f.check, f.criterion_id) for f in found] == [("criterion_restates_premise", "c1")]


@pytest.mark.parametrize(("prompt", "criterion"), [
    ("Using the Q3 export, which store had the most returns?",
     "Identifies the flagship store as the store with the most returns in Q3"),
    ("The cohort of 1,200 users was split 50/50. Is the uplift statistically significant?",
     "States that the uplift is statistically significant"),
    ("Materiality is 5% of pre-tax profit. Is the GBP 140k misstatement material?",
     "States that the misstatement is material"),
    ("The licence caps annual revenue at GBP 2m. Did Harlow's revenue exceed the cap in 2025?",
     "States that Harlow's revenue exceeded the cap in 2025"),
    # a pick, a recommendation or a conclusion drawn from the prompt's own values
    ("Plan A costs £3.4m and Plan B £2.9m. Which should the trust adopt?",
     "Recommends Plan B at £2.9m"),
    ("The lease can be broken in 2027 for £57k. Should the clinic close?",
     "Recommends closing the clinic despite the £57k break penalty"),
    ("The pump costs €90,000 and saves €31,000 a year. Does it pay back within the 3-year "
     "hurdle?", "States that the pump, costing €90,000, pays back within the 3-year hurdle"),
    ("The tank peaked at −12.5 °C; the limit is −15 °C. Was the limit breached?",
     "States that the −12.5 °C peak breached the −15 °C limit"),
    ("Output was 9,400 t against a 10,000 t minimum. Is the penalty due?",
     "States that output of 9,400 t falls short of the 10,000 t minimum, so the penalty is due"),
    ("The board set a 15% cap on overheads. Did 2024 stay under it?",
     "States that 2024 overheads were under the 15% cap"),
    ("Hale processed 4,400 kg at a cost of £2,200. What was the cost per kg in pence?",
     "States that, on 4,400 kg, the cost per kg is 50.0p"),  # a computed value in pence
])
def test_an_answer_in_the_words_of_the_question_is_no_premise(prompt: str, criterion: str
                                                               ) -> None:
    """A superlative pick or a yes/no conclusion the prompt asks for is the answer, even when
    every word of it comes from the question."""
    t = task((criterion, ""), prompt=prompt)
    assert checks(lints.criterion_restates_premise, t) == []


def test_criterion_terms_absent_from_world() -> None:
    t = task(("Explains the impact of the carbon-offset programme on the margin", ""))
    [finding] = lints.criterion_terms_absent_from_world(t, WORLD)
    assert {"carbon", "offset", "programme"} <= set(finding.evidence["absent_terms"])
    present = task(("Excludes Fjordkost from the peer set", ""))
    assert checks(lints.criterion_terms_absent_from_world, present) == []
    assert checks(lints.criterion_terms_absent_from_world, t, World()) == [], \
        "without a world there is nothing to compare with"


def test_prompt_names_missing_file() -> None:
    t = task(("States the EV", ""), prompt="Using Model.xlsx and Expert_Report.pdf, what is EV?")
    [finding] = lints.prompt_names_missing_file(t, WORLD)
    assert finding.evidence["file"] == "Expert_Report.pdf"


def test_rubric_only_negative_criteria() -> None:
    t = task(("Does not advise terminating the contract", ""),
             ("Does not threaten litigation", ""))
    assert checks(lints.rubric_only_negative_criteria, t) == ["rubric_only_negative_criteria"]
    mixed = task(("Does not threaten litigation", ""), ("Recommends escalation", ""))
    assert checks(lints.rubric_only_negative_criteria, mixed) == []


def test_criterion_duplicated() -> None:
    t = task(("States the EV is NOK 2,360.0m", ""), ("States the EV is NOK 2,360.0m.", ""))
    assert checks(lints.criterion_duplicated, t) == ["criterion_duplicated"]


@pytest.mark.parametrize(("prompt", "criterion"), [
    ("Store margins: Leeds 24%, York 11%, Hull −6%. Which store is weakest?",
     "States that Hull's margin is −6%"),  # a possessive names the prompt's Hull
    ("Glow Serum's launch cost £43,200; each unit contributes £24. How many must be sold?",
     "States that each Glow Serum unit contributes £24"),
    ("A van costs $3,000 with a residual value of $1,050. What is annual depreciation?",
     "States that the residual value is $1,050 per van"),  # "per van" is a unit
    ("8,000 towers, 12,960 tenancies. What is the tenancy ratio?",
     "States that Sierra has 8,000 towers"),  # the prompt asks no 'which': Sierra is its subject
    ("Orders are credited to the last click within a 7-day window. Which channel led?",
     "States that orders are credited to the last click within a 7-day window"),  # a window
])
def test_an_input_restated_in_other_words_is_a_premise(prompt: str, criterion: str) -> None:
    t = task((criterion, ""), prompt=prompt)
    assert checks(lints.criterion_restates_premise, t) == ["criterion_restates_premise"]


def test_a_name_the_prompt_does_not_give_answers_its_which() -> None:
    t = task(("States that Acme charged $4.2m", ""),
             prompt="Suppliers charged $4.2m and $3.1m. Which supplier charged $4.2m?")
    assert checks(lints.criterion_restates_premise, t) == []


def test_numeric_criterion_without_tolerance_is_info() -> None:
    t = task(("States the EV is NOK 2,360.0m", ""))
    [finding] = lints.numeric_criterion_without_tolerance(t, WORLD)
    assert finding.severity == "info"
    assert finding.evidence["values"] == ["NOK 2,360.0m"]
    assert checks(lints.numeric_criterion_without_tolerance, SOUND) == []


@pytest.mark.parametrize("criterion, prompt", [
    ("States that recovery is capped at GBP 480,900", "What is the cap?"),  # to the unit
    ("States the Z-spread is 312 bps", "What Z-spread do the notes trade at?"),
    ("States that 4 of the 12 borrowers breach the 1.25x DSCR covenant", "Who breaches?"),
    ("States that 2 of the 9 wards exceeded the 1.5 falls per 1,000 patient days threshold",
     "Which wards exceeded the threshold?"),
    ("States a sponsor IRR between 14.5% and 16.5%", "What IRR does the base case give?"),
    ("States an effective tax rate in the range 24.5% to 25.5%", "What ETR?"),
    ("States a target INR between 2.0 and 3.0", "What INR range?"),
    ("Uses a WACC of 9.5%", "Assume a WACC of 9.5%. What is the EV?"),  # the prompt's input
    ("States the Norwegian statutory rate is 22.5%", "What rate applies?"),
    ("States the EV is NOK 2,360.0m", "What is the EV? Give NOK millions to one decimal place."),
    ("States a mean stay of 5.7 days (to one decimal place)", "What is the mean stay?"),
    ("States a realised rate of £212.46 per hour", "What rate? Give two decimal places."),
])
def test_no_tolerance_finding_where_none_is_needed(criterion: str, prompt: str) -> None:
    """Whole numbers, thresholds the claim compares with, the ends of a range, the prompt's own
    inputs, values set by rule and values the prompt's rounding fixes: no finding."""
    t = task((criterion, ""), prompt=prompt)
    assert checks(lints.numeric_criterion_without_tolerance, t) == []


def test_a_tolerance_finding_names_the_values_that_need_one_once_per_criterion() -> None:
    t = task(("States total FY2025 revenue of GBP 41.6m, up 3.0% on FY2024", ""),
             ("States a first-year DSCR of 1.42x, above the 1.20x lock-up threshold", ""),
             ("States that average utilisation rose from 76.2% to 80.6%", ""))
    found = list(lints.numeric_criterion_without_tolerance(t, WORLD))
    assert [(f.criterion_id, f.evidence["values"]) for f in found] == [
        ("c1", ["GBP 41.6m", "3.0%"]), ("c2", ["1.42x"]), ("c3", ["80.6%"])]
    assert "GBP 41.55m to GBP 41.65m" in found[0].message


def test_the_tolerance_summary_counts_every_numeric_criterion_once() -> None:
    """n of N numeric criteria state no tolerance, said once for the benchmark; the findings
    are those of them where a tolerance matters, exactly as the check reports them."""
    tasks = [task(("States the EV is NOK 2,360.0m", ""),  # no tolerance, a finding
                  ("States that recovery is capped at GBP 480,900", ""),  # no tolerance
                  ("States a sponsor IRR between 14.5% and 16.5%", ""),  # the range states it
                  ("Identifies clause 14.1 as the source of the cap", ""),  # not numeric
                  ("States the IRR is 21.7% (accept 21.5%-21.9%)", "")),  # stated
             task(("States the margin is 38.2%", ""),
                  prompt="What margin? Give all percentages to one decimal place.")]
    [summary] = [summarise(tasks) for summarise in lints.CHECK_SUMMARIES]
    assert (summary.check, summary.counted, summary.total, summary.findings) == (
        "numeric_criterion_without_tolerance", 2, 5, 1)
    assert summary.findings == sum(1 for t in tasks for _ in
                                   lints.numeric_criterion_without_tolerance(t, WORLD))
    assert summary.describe().startswith("2 of 5 numeric criteria state no tolerance")


def test_the_tolerance_summary_counts_a_task_too_long_to_read_apart() -> None:
    """A task whose text the number reader does not read is in no count (its check is silent
    on it) and the line says how many there were."""
    from rubric_audit.checks.numbers import MAX_READ_CHARS
    read = task(("States the EV is NOK 2,360.0m", ""))
    unread = task(("States the EV is NOK 2,360.0m", ""), ("States the margin is 38.2%", ""),
                  prompt="What is the EV? " + "x" * MAX_READ_CHARS)
    assert checks(lints.numeric_criterion_without_tolerance, unread) == []
    summary = lints.tolerance_summary([read, unread])
    assert (summary.counted, summary.total, summary.findings, summary.unread_tasks) == (1, 1, 1, 1)
    assert summary.describe().endswith("; 1 task not read, a text too long to read for numbers")
    assert "not read" not in lints.tolerance_summary([read]).describe()


@pytest.mark.parametrize("rounding", ["Round to the nearest EUR 10k.",
                                      "Give it to the nearest NOK million.",
                                      "Round to the nearest USD 1,000."])
def test_a_rounding_step_with_a_currency_code_is_a_stated_precision(rounding: str) -> None:
    t = task(("States the EV is NOK 2,360.0m", ""), prompt=f"What is the EV? {rounding}")
    assert checks(lints.numeric_criterion_without_tolerance, t) == []
