"""The sample's tasks: prompts, rubrics, golds, planted defects, and the scripted runs.

Each task says what is planted and which check (by name) should catch it; DEFECTS.md and the
illustrative runs are generated from these records. The two models are fictional and their
answers hand-written.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sample_numbers as n

MODELS = {"atlas-1": "fictional/atlas-1", "cirrus-2": "fictional/cirrus-2"}
JUDGE = "fictional/judge-1"
MODEL_CHECKS = {"gold_ignores_message_instruction", "prompt_has_two_readings",
                "criterion_not_asked_by_prompt"}


@dataclass
class Answer:
    """A scripted final answer, the recorded judge's verdict per criterion, and what it read."""

    text: str
    verdicts: list[str]
    sources: list[str] | None = None
    rationales: dict[int, str] = field(default_factory=dict)


@dataclass
class TaskSpec:
    key: str
    world_id: str
    domain: str
    prompt: str
    criteria: list[tuple[str, str]]
    gold: str
    kind: str  # "sound" or "defective"
    planted: str
    checks: list[str]
    sources: list[str]
    answers: dict[str, Answer]
    plan: dict[str, list[str | None]]  # variant -> answer key per attempt; None = unavailable
    runs_show: str
    expected_output: str = "message_in_console"
    overlay_files: dict[str, str] = field(default_factory=dict)  # task_files/<id>/filesystem/
    recipe: dict | None = None  # regold/<task_id>.toml: workbook, overrides, criterion exprs


IB, LAW, MC = "world_halvorsen_lund", "world_carrow_vance", "world_brightline"
MODEL_PATH = "Project_Nordlys/Nordlys_Model.xlsx"
FEES_PATH = "Meridian/Fee_Schedule.xlsx"
STORES_PATH = "Kestrel/Store_Performance_FY2025.xlsx"
FJORDKOST_MAIL = "mail <nordlys-comps-1@halvorsenlund.no>: Exclude Fjordkost from the peer set"
NET_DEBT_MAIL = ("mail <nordlys-netdebt@nordlysfoods.no>: net debt at 28 February 2025 was "
                 "NOK 455.0m")
MODEL_XLSX = "file:Project_Nordlys/Nordlys_Model.xlsx"

base = n.nordlys_dcf()
downside = n.nordlys_dcf(n.with_changes(wacc=0.09))
updated = n.nordlys_dcf(n.with_changes(net_debt=n.NET_DEBT_FEB_2025))
EV = f"NOK {base.enterprise_value:,.1f}m"
FEE = n.SUCCESS_FEE_RATE * base.enterprise_value
MEAN_ALL = n.peer_mean_multiple()
MEAN_EX = n.peer_mean_multiple(exclude=("Fjordkost ASA",))
CAP = n.liability_cap()
CAP_BY_SERVICE_MONTH = sum(a for month, d, a, _ in n.INVOICES if "2024-03" <= month <= "2025-02")
LOW3 = n.lowest_margin_stores(3, standard_only=True)
LOW3_ALL = n.lowest_margin_stores(3, standard_only=False)
NORTH_REV = n.region_revenue("North")
NORTH_CM = n.region_contribution_margin("North")
SOUTH_25, SOUTH_24 = n.region_revenue("South"), n.region_revenue("South", 4)
TOTAL_25 = sum(s[5] for s in n.STORES)
TOTAL_24 = sum(s[4] for s in n.STORES)
STANDARD_25 = sum(s[5] for s in n.standard_stores())
AVG_CM = sum(n.contribution_margin(s) for s in n.standard_stores()) / len(n.standard_stores())
GROWERS = [s for s in n.STORES if n.growth(s) > 0.05]


def pct(x: float, places: int = 1) -> str:
    return f"{100 * x:.{places}f}%"


def names(stores: list[tuple]) -> str:
    *head, last = [s[1] for s in stores]
    return f"{', '.join(head)} and {last}"


def margins(stores: list[tuple]) -> str:
    return "; ".join(f"{s[1]} {pct(n.contribution_margin(s))}" for s in stores)


CLAIM_NOTICE = f"""# Notice of claim

From Meridian Logistics Ltd to Brightwater Freight Systems Ltd, delivered to its registered office
on 3 March 2025 under clause 21.1 of the Master Services Agreement.

Meridian claims GBP {n.CLAIMED_LOSSES:,} for losses caused by the network outages of 14-16 January
and 3-4 February 2025.
"""

TOLERANCE_IGNORED = ("## Evidence\nThe answer states an average contribution margin of 5.8%.\n\n"
                     "## Assessment\n- Criterion requirement: 5.7%\n- Conclusion: 5.8% is not "
                     "5.7%, so the criterion is not met.")
HEDGE_CREDITED = ("## Evidence\nThe answer says the terminal value accounts for \"roughly 70% to "
                  "75%\" of enterprise value.\n\n## Assessment\n- Criterion requirement: 75.0%\n"
                  "- Conclusion: the stated range includes 75%, so the criterion is met.")

TASKS: list[TaskSpec] = [
    TaskSpec(
        key="nordlys_01", world_id=IB, domain="Investment Banking",
        prompt="Using the base case in Nordlys_Model.xlsx, what enterprise value does the DCF "
               "imply for Nordlys Foods? Give the answer in NOK millions to one decimal place.",
        criteria=[(f"States that the implied enterprise value is {EV} (accept NOK "
                   f"{base.enterprise_value - 1:,.1f}m to NOK {base.enterprise_value + 1:,.1f}m)",
                   f"Sum of PV of FCF NOK {base.sum_pv_fcf:,.1f}m plus PV of terminal value NOK "
                   f"{base.pv_terminal_value:,.1f}m = {EV}.")],
        gold=f"The base-case DCF implies an enterprise value of {EV}: the present value of the "
             f"FY2025-FY2029 free cash flows is NOK {base.sum_pv_fcf:,.1f}m and the present "
             f"value of the terminal value is NOK {base.pv_terminal_value:,.1f}m (8.5% WACC, "
             f"2.0% terminal growth).",
        kind="sound", planted="nothing", checks=[], sources=[MODEL_XLSX],
        answers={
            "right": Answer(f"The base-case DCF implies an enterprise value of {EV} (PV of FCF "
                            f"NOK {base.sum_pv_fcf:,.1f}m plus PV of terminal value NOK "
                            f"{base.pv_terminal_value:,.1f}m).", ["pass"]),
            "right_bn": Answer(f"Enterprise value is about NOK "
                               f"{base.enterprise_value / 1000:.2f}bn, i.e. {EV}.", ["pass"]),
        },
        plan={"atlas-1": ["right", "right"], "cirrus-2": ["right_bn", "right"]},
        runs_show="passes on every attempt",
        recipe={"workbook": MODEL_PATH, "criterion": [(1, "DCF!B18")]},
    ),
    TaskSpec(
        key="nordlys_02", world_id=IB, domain="Investment Banking",
        prompt="The Investment Committee wants a downside view. Assume a WACC of 9.0%, with "
               "every other base-case assumption in Nordlys_Model.xlsx unchanged. What equity "
               "value per share does the DCF imply? Answer in NOK to two decimal places.",
        criteria=[(f"States an implied equity value per share of NOK {base.value_per_share:.2f}",
                   f"Equity value NOK {base.equity_value:,.1f}m ({EV} less net debt NOK 420.0m) "
                   f"divided by 40.0m shares = NOK {base.value_per_share:.2f}.")],
        gold=f"At a 9.0% WACC the DCF implies an equity value of NOK {base.equity_value:,.1f}m, "
             f"or NOK {base.value_per_share:.2f} per share.",
        kind="defective",
        planted=f"The gold and the criterion were computed at the base-case 8.5% WACC although "
                f"the prompt states 9.0%; at 9.0% the value is NOK {downside.value_per_share:.2f} "
                f"per share.",
        checks=["gold_recompute_mismatch"], sources=[MODEL_XLSX],
        answers={"right": Answer(
            f"At a 9.0% WACC the enterprise value falls to NOK "
            f"{downside.enterprise_value:,.1f}m; less net debt of NOK 420.0m gives equity of NOK "
            f"{downside.equity_value:,.1f}m, or NOK {downside.value_per_share:.2f} per share.",
            ["fail"])},
        plan={"atlas-1": ["right", "right"], "cirrus-2": ["right", "right"]},
        runs_show="both models fail every attempt with the correct 9.0% answer",
        recipe={"workbook": MODEL_PATH,
                "override": [("Assumptions!B9", 0.09, "prompt: Assume a WACC of 9.0%")],
                "criterion": [(1, "DCF!B21")]},
    ),
    TaskSpec(
        key="nordlys_03", world_id=IB, domain="Investment Banking",
        prompt="What is the mean EV/EBITDA multiple of the Nordlys trading comparables? Give it "
               "to one decimal place.",
        criteria=[(f"States a mean EV/EBITDA multiple of {MEAN_ALL:.1f}x",
                   "Mean of the peers' EV / FY2024 EBITDA multiples on the Comps sheet.")],
        gold=f"The mean EV/EBITDA multiple of the six peers on the Comps sheet is "
             f"{MEAN_ALL:.1f}x.",
        kind="defective",
        planted=f"Ingrid Halvorsen's mail of 4 March tells the team to exclude Fjordkost (under "
                f"offer) from every multiple including the mean; without it the mean is "
                f"{MEAN_EX:.1f}x. The gold and the criterion ignore that instruction.",
        checks=["gold_ignores_message_instruction", "gold_recompute_mismatch"],
        sources=[MODEL_XLSX, "mail:<nordlys-comps-1@halvorsenlund.no>"],
        answers={"right": Answer(
            f"Excluding Fjordkost ASA, which the deal team dropped because it is under offer, "
            f"the mean EV/EBITDA of the five remaining peers is {MEAN_EX:.1f}x.", ["fail"])},
        plan={"atlas-1": ["right", "right"], "cirrus-2": ["right", "right"]},
        runs_show="both models follow the mail and fail every attempt",
        recipe={"workbook": MODEL_PATH,
                "override": [("Comps!E2", "N",
                              FJORDKOST_MAIL)],
                "criterion": [(1, "Comps!F9")]},
    ),
    TaskSpec(
        key="nordlys_04", world_id=IB, domain="Investment Banking",
        prompt="Using the engagement letter terms, what success fee would Halvorsen & Lund earn "
               "if the deal completed at the base-case DCF enterprise value? Answer in NOK "
               "millions to one decimal place.",
        criteria=[("States a success fee of NOK 25.9m",
                   f"{n.SUCCESS_FEE_RATE:.2%} x base-case EV of {EV} = NOK {FEE:.1f}m (above the "
                   f"NOK 6.0m minimum).")],
        gold=f"The success fee would be NOK {FEE:.1f}m: {n.SUCCESS_FEE_RATE:.2%} of the "
             f"base-case enterprise value of {EV}, above the NOK 6.0m minimum.",
        kind="defective",
        planted=f"The criterion's value (NOK 25.9m) contradicts its own explanation (NOK "
                f"{FEE:.1f}m); the gold follows the explanation, so it fails the criterion too.",
        checks=["criterion_contradicts_explanation", "gold_contradicts_criterion"],
        sources=[MODEL_XLSX, "file:Project_Nordlys/Engagement_Letter.docx"],
        answers={"right": Answer(
            f"The engagement letter sets the success fee at {n.SUCCESS_FEE_RATE:.2%} of EV: "
            f"{n.SUCCESS_FEE_RATE:.2%} x {EV} = NOK {FEE:.1f}m, above the NOK 6.0m minimum.",
            ["fail"])},
        plan={"atlas-1": ["right", "right"], "cirrus-2": ["right", "right"]},
        runs_show="both models fail every attempt with the fee the explanation computes",
        recipe={"workbook": MODEL_PATH, "criterion": [(1, "0.0125 * DCF!B18")]},
    ),
    TaskSpec(
        key="nordlys_05", world_id=IB, domain="Investment Banking",
        prompt="What EBITDA does the base case in Nordlys_Model.xlsx project for FY2027? Answer "
               "in NOK millions to one decimal place.",
        criteria=[(f"States FY2027 EBITDA of NOK {base.ebitda[2]:.1f}m",
                   f"FY2027 revenue NOK {base.revenue[2]:,.1f}m x 18% EBITDA margin = NOK "
                   f"{base.ebitda[2]:.1f}m.")],
        gold=f"Base-case FY2027 EBITDA is NOK {base.ebitda[1]:.1f}m (revenue of NOK "
             f"{base.revenue[1]:,.1f}m at an 18% margin).",
        kind="defective",
        planted=f"The gold quotes FY2026 (NOK {base.ebitda[1]:.1f}m) instead of FY2027 (NOK "
                f"{base.ebitda[2]:.1f}m), so it fails its own criterion.",
        checks=["gold_contradicts_criterion", "control_gold_fails"], sources=[MODEL_XLSX],
        answers={"right": Answer(
            f"FY2027 EBITDA is NOK {base.ebitda[2]:.1f}m (revenue NOK {base.revenue[2]:,.1f}m "
            f"at an 18% margin).", ["pass"])},
        plan={"atlas-1": ["right", "right"], "cirrus-2": ["right", "right"]},
        runs_show="both models pass; only the gold is wrong",
        recipe={"workbook": MODEL_PATH, "criterion": [(1, "DCF!E4")]},
    ),
    TaskSpec(
        key="nordlys_06", world_id=IB, domain="Investment Banking",
        prompt="Nordlys's CFO has sent an updated net debt figure. Using it in the equity bridge, "
               "with the base-case DCF otherwise unchanged, what is the implied equity value per "
               "share? Answer in NOK to two decimal places.",
        criteria=[(f"States an implied equity value per share of NOK {updated.value_per_share:.2f}"
                   f" (accept NOK {updated.value_per_share - 0.03:.2f} to NOK "
                   f"{updated.value_per_share + 0.03:.2f})",
                   f"{EV} less net debt of NOK {n.NET_DEBT_FEB_2025:.1f}m at 28 February 2025 "
                   f"(CFO's mail of 6 March) = NOK {updated.equity_value:,.1f}m, over 40.0m "
                   f"shares = NOK {updated.value_per_share:.2f}.")],
        gold=f"With net debt of NOK {n.NET_DEBT_FEB_2025:.1f}m at 28 February 2025, equity value "
             f"is NOK {updated.equity_value:,.1f}m, or NOK {updated.value_per_share:.2f} per "
             f"share.",
        kind="sound", planted="nothing; the answer needs the CFO's mail", checks=[],
        sources=[MODEL_XLSX, "mail:<nordlys-netdebt@nordlysfoods.no>"],
        answers={
            "right": Answer(f"Using net debt of NOK {n.NET_DEBT_FEB_2025:.1f}m from the CFO's "
                            f"6 March mail: equity value NOK {updated.equity_value:,.1f}m, i.e. "
                            f"NOK {updated.value_per_share:.2f} per share.", ["pass"]),
            "stale": Answer(f"Equity value is {EV} less net debt of NOK 420.0m = NOK "
                            f"{base.equity_value:,.1f}m, or NOK {base.value_per_share:.2f} per "
                            f"share.", ["fail"], sources=[MODEL_XLSX]),
        },
        plan={"atlas-1": ["right", "right"], "cirrus-2": ["stale", "stale"]},
        runs_show="cirrus-2 never opens the mailbox and uses the stale net debt (model error)",
        recipe={"workbook": MODEL_PATH,
                "override": [("Assumptions!B11", 455.0, NET_DEBT_MAIL)],
                "criterion": [(1, "DCF!B21")]},
    ),
    TaskSpec(
        key="nordlys_07", world_id=IB, domain="Investment Banking",
        prompt="What share of the base-case enterprise value comes from the terminal value? Give "
               "a percentage to one decimal place.",
        criteria=[(f"States that the terminal value accounts for {pct(base.terminal_share_of_ev)}"
                   f" of enterprise value",
                   f"PV of terminal value NOK {base.pv_terminal_value:,.1f}m / {EV} = "
                   f"{pct(base.terminal_share_of_ev)}.")],
        gold=f"The terminal value accounts for {pct(base.terminal_share_of_ev)} of the base-case "
             f"enterprise value (NOK {base.pv_terminal_value:,.1f}m of {EV}).",
        kind="sound", planted="nothing", checks=[], sources=[MODEL_XLSX],
        answers={
            "right": Answer(f"The terminal value is {pct(base.terminal_share_of_ev)} of EV (NOK "
                            f"{base.pv_terminal_value:,.1f}m of {EV}).", ["pass"]),
            "hedged": Answer("The terminal value accounts for roughly 70% to 75% of enterprise "
                             "value, depending on rounding of the discount factors.", ["pass"],
                             rationales={0: HEDGE_CREDITED}),
        },
        plan={"atlas-1": ["right", "right"], "cirrus-2": ["hedged", "right"]},
        runs_show="cirrus-2's first attempt hedges with a range and the judge credits it",
        recipe={"workbook": MODEL_PATH, "criterion": [(1, "DCF!B22 * 100")]},
    ),
    TaskSpec(
        key="meridian_01", world_id=LAW, domain="Law",
        prompt="Meridian notified its claim against Brightwater on 3 March 2025. What is the "
               "maximum amount Meridian can recover under the MSA's limitation of liability? "
               "Answer in GBP.",
        criteria=[
            (f"States that recovery is capped at GBP {CAP:,}",
             f"Clause 14.1 caps liability at the fees paid in the 12 months before the claim was "
             f"notified (3 March 2024 to 2 March 2025). The invoices paid in that window "
             f"(Fee_Schedule.xlsx, service months February 2024 to January 2025) total GBP "
             f"{CAP:,}."),
            ("Identifies clause 14.1 of the MSA as the source of the cap",
             "Clause 14.1 (Limitation of liability)."),
        ],
        gold=f"Under clause 14.1 Brightwater's liability is capped at the fees Meridian paid in "
             f"the 12 months before 3 March 2025: GBP {CAP:,}. The GBP {n.CLAIMED_LOSSES:,} "
             f"claimed exceeds the cap, so recovery is limited to GBP {CAP:,}.",
        kind="sound", planted="nothing; the window is by payment date, not service month",
        checks=[], sources=["file:Meridian/Master_Services_Agreement.md",
                            "file:Meridian/Fee_Schedule.xlsx"],
        answers={
            "right": Answer(f"Clause 14.1 caps Brightwater's liability at the fees paid in the 12 "
                            f"months before the claim: GBP {CAP:,} (payments from 15 March 2024 "
                            f"to 15 February 2025). The GBP {n.CLAIMED_LOSSES:,} claimed is above "
                            f"the cap, so Meridian can recover at most GBP {CAP:,}.",
                            ["pass", "pass"]),
            "by_month": Answer(f"Under clause 14.1 the cap is the fees for the 12 service months "
                               f"March 2024 to February 2025: GBP {CAP_BY_SERVICE_MONTH:,}.",
                               ["fail", "pass"]),
        },
        plan={"atlas-1": ["right", "right"], "cirrus-2": ["by_month", "right"]},
        runs_show="cirrus-2's first attempt counts service months instead of payments",
        overlay_files={"Meridian/Claim_Notice_2025-03-03.md": CLAIM_NOTICE},
        recipe={"workbook": FEES_PATH, "criterion": [(1, "sum(Invoices!E4:E15)")]},
    ),
    TaskSpec(
        key="meridian_02", world_id=LAW, domain="Law",
        prompt="The MSA caps Brightwater's liability at the fees Meridian paid in the 12 months "
               "before a claim is notified. Meridian notified its claim on 3 March 2025. "
               "Calculate the cap in GBP.",
        criteria=[
            ("States that Brightwater's liability is capped at the fees Meridian paid in the 12 "
             "months before the claim is notified", "Clause 14.1 of the MSA."),
            (f"States that the cap is GBP {CAP:,}",
             f"Invoices paid between 3 March 2024 and 2 March 2025 total GBP {CAP:,}."),
        ],
        gold=f"The cap is GBP {CAP:,}: the fees paid in the 12 months before 3 March 2025.",
        kind="defective",
        planted="The first criterion only restates the premise the prompt gives, so it credits "
                "any answer that repeats the question.",
        checks=["criterion_restates_premise"],
        sources=["file:Meridian/Fee_Schedule.xlsx"],
        answers={"right": Answer(f"The cap is GBP {CAP:,}, being the fees Meridian paid in the 12 "
                                 f"months before the claim was notified on 3 March 2025.",
                                 ["pass", "pass"])},
        plan={"atlas-1": ["right", "right"], "cirrus-2": ["right", "right"]},
        runs_show="both models pass",
        recipe={"workbook": FEES_PATH, "criterion": [(2, "sum(Invoices!E4:E15)")]},
    ),
    TaskSpec(
        key="meridian_03", world_id=LAW, domain="Law",
        prompt="Write a short note to Meridian's General Counsel on whether Meridian should "
               "terminate the MSA now because of the outages.",
        criteria=[
            ("Does not advise Meridian to terminate the MSA immediately",
             "Eleanor Vance's mail of 4 March: do not advise terminating at this stage."),
            ("Does not threaten Brightwater with litigation",
             "The client wants to keep Brightwater as a supplier (mail of 4 March)."),
        ],
        gold="Hannah, we recommend that Meridian does not terminate the MSA now. The agreement "
             "allows termination for material breach only if the breach is not remedied within "
             "45 days of written notice (clause 17.2 as amended), and Meridian's priority is to "
             "keep Brightwater as a supplier. We propose referring the dispute to senior "
             "executives under clause 23.1, with mediation under clause 23.2 if that fails.",
        kind="defective",
        planted="Every criterion is negative (\"does not ...\"), so an empty answer passes the "
                "rubric.",
        checks=["rubric_only_negative_criteria", "control_null_passes"],
        sources=["file:Meridian/Master_Services_Agreement.md",
                 "mail:<meridian-approach@carrowvance.co.uk>"],
        answers={"right": Answer(
            "Hannah, we do not recommend terminating the MSA now. Termination for material "
            "breach requires written notice and a 45-day cure period (clause 17.2 as amended). "
            "We suggest escalating to senior executives under clause 23.1 instead.",
            ["pass", "pass"])},
        plan={"atlas-1": ["right", "right"], "cirrus-2": ["right", "right"]},
        runs_show="both models pass",
        expected_output="make_new_doc",
    ),
    TaskSpec(
        key="meridian_04", world_id=LAW, domain="Law",
        prompt="If Meridian serves written notice of material breach on Brightwater, how many "
               "days does Brightwater have to remedy the breach before Meridian can terminate "
               "under clause 17.2?",
        criteria=[("States that Brightwater has 45 days to remedy the breach",
                   "Amendment No. 1 (1 September 2024) replaced thirty days with forty-five "
                   "days in clause 17.2.")],
        gold="45 days. Clause 17.2 originally gave 30 days, but Amendment No. 1 of 1 September "
             "2024 extended the cure period to 45 days.",
        kind="sound", planted="nothing; the trap is the amendment", checks=[],
        sources=["file:Meridian/Master_Services_Agreement.md"],
        answers={"thirty": Answer("Under clause 17.2 Brightwater has 30 days after receiving "
                                  "written notice to remedy the breach.", ["fail"])},
        plan={"atlas-1": ["thirty", "thirty"], "cirrus-2": ["thirty", "thirty"]},
        runs_show="both models miss the amendment and fail every attempt (model error)",
    ),
    TaskSpec(
        key="meridian_05", world_id=LAW, domain="Law",
        prompt="Summarise the conclusions of the independent expert report on the outages "
               "(Brightwater_Outage_Expert_Report.pdf) in three bullet points.",
        criteria=[
            ("States that the expert attributes the outages to Brightwater's failed network "
             "upgrade", "Expert report, section 4."),
            ("States that the outages lasted 5 days in total", "Expert report, summary."),
        ],
        gold="- The outages were caused by Brightwater's failed network upgrade.\n- They lasted "
             "5 days in total.\n- Brightwater's incident response fell short of the service "
             "levels.",
        kind="defective",
        planted="The prompt names Brightwater_Outage_Expert_Report.pdf, which is in neither the "
                "world nor the task files.",
        checks=["prompt_names_missing_file"],
        sources=["file:Meridian/Case_Notes.docx"],
        answers={"missing": Answer("I could not find Brightwater_Outage_Expert_Report.pdf in the "
                                   "matter files. The case notes record outages on 14-16 January "
                                   "and 3-4 February 2025 but no expert findings.",
                                   ["fail", "fail"])},
        plan={"atlas-1": ["missing", "missing"], "cirrus-2": ["missing", "missing"]},
        runs_show="both models report the file missing and fail every attempt",
    ),
    TaskSpec(
        key="meridian_06", world_id=LAW, domain="Law",
        prompt="Under the MSA's dispute resolution clause, what must happen before Meridian can "
               "start court proceedings against Brightwater, and how long does the first step "
               "last?",
        criteria=[
            ("States that the dispute must first go to senior executives, who have 20 business "
             "days to resolve it", "Clause 23.1."),
            ("States that mediation must be attempted before court proceedings",
             "Clause 23.2."),
        ],
        gold="First, the dispute is referred to both parties' senior executives, who have 20 "
             "business days to resolve it (clause 23.1). If that fails, the parties must try "
             "mediation (clause 23.2) before either starts court proceedings.",
        kind="sound", planted="nothing", checks=[],
        sources=["file:Meridian/Master_Services_Agreement.md"],
        answers={"right": Answer("Clause 23.1 requires referral to senior executives, who have "
                                 "20 business days to settle it; if they do not, clause 23.2 "
                                 "requires mediation before court proceedings.",
                                 ["pass", "pass"])},
        plan={"atlas-1": ["right", "right"], "cirrus-2": ["right", None]},
        runs_show="cirrus-2's second attempt crashed before grading (unavailable, not a fail)",
    ),
    TaskSpec(
        key="kestrel_01", world_id=MC, domain="Management Consulting",
        prompt="Which three Kestrel stores have the lowest FY2025 contribution margin? Follow the "
               "client's instructions on the scope of the ranking, and give each store's margin "
               "to one decimal place.",
        criteria=[
            (f"Names {names(LOW3)} as the three lowest-margin stores",
             f"Priya Natarajan's mail of 10 March excludes the two outlet stores. Among the ten "
             f"standard-format stores the lowest contribution margins are {margins(LOW3)}."),
            (f"States {LOW3[0][1]}'s contribution margin as {pct(n.contribution_margin(LOW3[0]))}",
             f"({LOW3[0][5]} x {LOW3[0][6]:.0%} - {LOW3[0][7]}) / {LOW3[0][5]} = "
             f"{pct(n.contribution_margin(LOW3[0]))}."),
        ],
        gold=f"Excluding the two outlet stores, as the COO asked, the lowest FY2025 contribution "
             f"margins are: {margins(LOW3)}.",
        kind="sound", planted="nothing; the scope comes from the COO's mail", checks=[],
        sources=["file:Kestrel/Store_Performance_FY2025.xlsx",
                 "mail:<kestrel-scope@kestrelhg.co.uk>"],
        answers={
            "right": Answer(f"Ranking the ten standard-format stores (the outlets are out of "
                            f"scope per the COO): {margins(LOW3)}.", ["pass", "pass"]),
            "with_outlets": Answer(f"The lowest FY2025 contribution margins are "
                                   f"{margins(LOW3_ALL)}.", ["fail", "pass"],
                                   sources=["file:Kestrel/Store_Performance_FY2025.xlsx"]),
        },
        plan={"atlas-1": ["right", "right"], "cirrus-2": ["with_outlets", "with_outlets"]},
        runs_show="cirrus-2 ignores the COO's scope mail and includes the outlets (model error)",
        recipe={"workbook": STORES_PATH, "criterion": [(2, "Stores!K11 * 100")]},
    ),
    TaskSpec(
        key="kestrel_02", world_id=MC, domain="Management Consulting",
        prompt="Summarise the Northern region's FY2025 performance: its total revenue and the "
               "region's contribution margin.",
        criteria=[
            (f"States Northern region FY2025 revenue of GBP {NORTH_REV:.1f}m",
             f"Stores K01-K04: GBP {NORTH_REV:.2f}m (Summary sheet)."),
            (f"States the region's FY2025 contribution margin of {pct(NORTH_CM)}",
             "Total contribution of the four Northern stores over their FY2025 revenue."),
            ("Explains the impact of the carbon-offset programme on the region's margin",
             "The offset levy charged to stores reduced the regional margin."),
        ],
        gold=f"The Northern region's four stores generated GBP {NORTH_REV:.1f}m of FY2025 "
             f"revenue at a contribution margin of {pct(NORTH_CM)}; Sheffield Meadowhall is the "
             f"strongest store and Newcastle Gosforth's revenue fell.",
        kind="defective",
        planted="The third criterion grades a carbon-offset programme that the prompt, files, "
                "mail, calendar and chat never mention.",
        checks=["criterion_terms_absent_from_world"],
        sources=["file:Kestrel/Store_Performance_FY2025.xlsx"],
        answers={"right": Answer(f"Northern region FY2025: revenue GBP {NORTH_REV:.1f}m across "
                                 f"four stores, contribution margin {pct(NORTH_CM)}. Sheffield "
                                 f"Meadowhall leads; Newcastle Gosforth's revenue declined.",
                                 ["pass", "pass", "fail"])},
        plan={"atlas-1": ["right", "right"], "cirrus-2": ["right", "right"]},
        runs_show="both models fail every attempt on the carbon-offset criterion",
        recipe={"workbook": STORES_PATH,
                "criterion": [(1, "Summary!C3"), (2, "sum(Stores!J2:J5) / Summary!C3 * 100")]},
    ),
    TaskSpec(
        key="kestrel_03", world_id=MC, domain="Management Consulting",
        prompt="What was Kestrel's total revenue across all stores in FY2025, and how did it "
               "change from FY2024?",
        criteria=[
            (f"States total FY2025 revenue of GBP {TOTAL_25:.1f}m",
             "Sum of the twelve stores' FY2025 revenue (Summary sheet)."),
            (f"States total FY2025 revenue of GBP {STANDARD_25:.1f}m, up "
             f"{pct(TOTAL_25 / TOTAL_24 - 1)} on FY2024",
             "Total revenue compared with the prior year."),
        ],
        gold=f"Total FY2025 revenue was GBP {TOTAL_25:.1f}m, up {pct(TOTAL_25 / TOTAL_24 - 1)} "
             f"from GBP {TOTAL_24:.1f}m in FY2024.",
        kind="defective",
        planted=f"The two criteria require different totals for the same quantity (GBP "
                f"{TOTAL_25:.1f}m and GBP {STANDARD_25:.1f}m), so no answer, the gold included, "
                f"can pass both.",
        checks=["criteria_conflict_on_quantity"],
        sources=["file:Kestrel/Store_Performance_FY2025.xlsx"],
        answers={"right": Answer(f"Total FY2025 revenue was GBP {TOTAL_25:.1f}m, up "
                                 f"{pct(TOTAL_25 / TOTAL_24 - 1)} on FY2024's GBP "
                                 f"{TOTAL_24:.1f}m.", ["pass", "fail"])},
        plan={"atlas-1": ["right", "right"], "cirrus-2": ["right", "right"]},
        runs_show="both models fail every attempt on one of the two criteria",
        recipe={"workbook": STORES_PATH, "criterion": [(1, "Summary!C2"), (2, "Summary!C2")]},
    ),
    TaskSpec(
        key="kestrel_04", world_id=MC, domain="Management Consulting",
        prompt="What was the Southern region's revenue growth in FY2025?",
        criteria=[(f"States Southern region revenue growth of {pct(SOUTH_25 / SOUTH_24 - 1)}",
                   f"FY2025 GBP {SOUTH_25:.2f}m versus FY2024 GBP {SOUTH_24:.2f}m.")],
        gold=f"Southern region revenue grew {pct(SOUTH_25 / SOUTH_24 - 1)} in FY2025.",
        kind="defective",
        planted=f"\"Revenue growth\" reads as the increase in GBP (GBP "
                f"{SOUTH_25 - SOUTH_24:.2f}m) or as a percentage ({pct(SOUTH_25 / SOUTH_24 - 1)});"
                f" the rubric accepts only the percentage.",
        checks=["prompt_has_two_readings"],
        sources=["file:Kestrel/Store_Performance_FY2025.xlsx"],
        answers={
            "absolute": Answer(f"Southern region revenue grew by GBP {SOUTH_25 - SOUTH_24:.2f}m, "
                               f"from GBP {SOUTH_24:.2f}m to GBP {SOUTH_25:.2f}m.", ["fail"]),
            "percent": Answer(f"Southern region revenue grew {pct(SOUTH_25 / SOUTH_24 - 1)} in "
                              f"FY2025.", ["pass"]),
        },
        plan={"atlas-1": ["absolute", "absolute"], "cirrus-2": ["percent", "percent"]},
        runs_show="atlas-1 answers in GBP and fails; cirrus-2 answers in percent and passes",
        recipe={"workbook": STORES_PATH, "criterion": [(1, "(Summary!C4 / Summary!B4 - 1) * 100")]},
    ),
    TaskSpec(
        key="kestrel_05", world_id=MC, domain="Management Consulting",
        prompt="What is the average contribution margin across Kestrel's ten standard-format "
               "stores (the simple average of the store margins)? Answers within 0.2 percentage "
               "points are acceptable.",
        criteria=[(f"States an average contribution margin of {pct(AVG_CM)} (accept "
                   f"{pct(AVG_CM - 0.002)} to {pct(AVG_CM + 0.002)})",
                   f"Mean of column M of the Stores sheet = {pct(AVG_CM, 2)}.")],
        gold=f"The ten standard-format stores average a contribution margin of {pct(AVG_CM)}.",
        kind="sound", planted="nothing", checks=[],
        sources=["file:Kestrel/Store_Performance_FY2025.xlsx"],
        answers={
            "right": Answer(f"The simple average contribution margin of the ten standard-format "
                            f"stores is {pct(AVG_CM)}.", ["pass"]),
            "near": Answer("Averaging the ten standard-format stores' margins gives 5.8%.",
                           ["fail"], rationales={0: TOLERANCE_IGNORED}),
        },
        plan={"atlas-1": ["near", "right"], "cirrus-2": ["right", "right"]},
        runs_show="the judge fails atlas-1's 5.8%, inside the stated 0.2-point tolerance",
        recipe={"workbook": STORES_PATH, "criterion": [(1, "sum(Stores!M2:M11) / 10 * 100")]},
    ),
    TaskSpec(
        key="kestrel_06", world_id=MC, domain="Management Consulting",
        prompt="When is the Kestrel steering committee meeting, where is it held, and who is "
               "invited?",
        criteria=[
            ("States that the steering committee meets on 2 April 2025", "Calendar event."),
            ("States that it is held at Kestrel's head office in Reading", "Calendar event."),
            ("Names Priya Natarajan, Tom Hale, David Okafor and Sofia Marques as invitees",
             "Attendees of the calendar event."),
        ],
        gold="The steering committee meets on 2 April 2025, 13:00-15:00 UTC, at Kestrel's head "
             "office in Reading. Invitees: Priya Natarajan, Tom Hale, David Okafor and Sofia "
             "Marques.",
        kind="sound", planted="nothing", checks=[], sources=["calendar"],
        answers={"right": Answer("2 April 2025 at Kestrel's head office in Reading; invitees are "
                                 "Priya Natarajan, Tom Hale, David Okafor and Sofia Marques.",
                                 ["pass", "pass", "pass"])},
        plan={"atlas-1": ["right", "right"], "cirrus-2": ["right", "right"]},
        runs_show="passes on every attempt",
    ),
    TaskSpec(
        key="kestrel_07", world_id=MC, domain="Management Consulting",
        prompt="How many of Kestrel's twelve stores grew revenue by more than 5% in FY2025? Name "
               "them.",
        criteria=[
            (f"States that {len(GROWERS)} stores grew revenue by more than 5%",
             "Column L of the Stores sheet."),
            (f"Names {names(GROWERS)}",
             "; ".join(f"{s[1]} {pct(n.growth(s))}" for s in GROWERS) + "."),
        ],
        gold=f"{len(GROWERS)} stores grew revenue by more than 5%: "
             f"{'; '.join(f'{s[1]} ({pct(n.growth(s))})' for s in GROWERS)}.",
        kind="sound", planted="nothing", checks=[],
        sources=["file:Kestrel/Store_Performance_FY2025.xlsx"],
        answers={
            "right": Answer(f"{len(GROWERS)} stores: "
                            f"{'; '.join(f'{s[1]} {pct(n.growth(s))}' for s in GROWERS)}.",
                            ["pass", "pass"]),
            "missed_one": Answer(f"Two stores: {GROWERS[1][1]} and {GROWERS[2][1]}.",
                                 ["fail", "fail"]),
        },
        plan={"atlas-1": ["right", "right"], "cirrus-2": ["missed_one", "right"]},
        runs_show="cirrus-2 misses a store on its first attempt",
    ),
]
