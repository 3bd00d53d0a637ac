"""Static task checks: each fires on its defect and stays quiet on a sound task."""

from __future__ import annotations

import pytest

from rubric_audit.checks import lints
from rubric_audit.model import ChatMessage, ChatSpace, Criterion, Gold, MailMessage, Task, WorldFile
from rubric_audit.model import WorldContents as World

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


def test_numeric_criterion_without_tolerance_is_info() -> None:
    t = task(("States the EV is NOK 2,360.0m", ""))
    [finding] = lints.numeric_criterion_without_tolerance(t, WORLD)
    assert finding.severity == "info"
    assert checks(lints.numeric_criterion_without_tolerance, SOUND) == []


@pytest.mark.parametrize("rounding", ["Round to the nearest EUR 10k.",
                                      "Give it to the nearest NOK million.",
                                      "Round to the nearest USD 1,000."])
def test_a_rounding_step_with_a_currency_code_is_a_stated_precision(rounding: str) -> None:
    t = task(("States the EV is NOK 2,360.0m", ""), prompt=f"What is the EV? {rounding}")
    assert checks(lints.numeric_criterion_without_tolerance, t) == []
