"""Which of an answer's values it gives as not its own figure for the subject: a plan or budget,
a bar it measures against, another party's figure, a counterfactual, a figure given for
reference.

"Budget: $4.6m" and a row or column headed Target or Plan give a plan (`planned`); "above the
6.0 retailer minimum" a bar; "Industry forecasts put the uplift at 35–40%" and "Published
estimates range from 0.4 to 0.7" another party's figures; "Had the cap not applied, the coupon
would have been $412,000" a counterfactual. Each kind carries the words a criterion that means
it uses (its subject's stems: "budget", "minimum", "industry", "counterfactual"), so the binding
sets such values aside only where the criterion does not ask for them and the answer gives a
figure of its own. Every pass is linear in the answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rubric_audit.checks.numbers import NeedsWord, Quantity
from rubric_audit.checks.text import stem

# The words naming a planned or earlier value rather than the actual one, written once: as
# stems for a criterion's subject, and as what may stand right before a value in an answer.
PLAN_TERMS = ("budget", "budgeted", "plan", "planned", "forecast", "target", "guidance",
              "baseline", "benchmark", "estimate", "estimated", "prior", "previous")
PLANNED = NeedsWord(re.compile(rf"\b(?:{'|'.join(PLAN_TERMS)})(?:\s+year)?\b(?:\s+(?:of|at|was|is|figure|"
                               r"amount|value|level))?\s*[:=]?\s*\**\s*(?:(?:US|A|C)?[$€£¥]|USD|EUR|GBP|NOK)?"
                               r"\s?$", re.I),
                    PLAN_TERMS)
PLAN_HEADER = re.compile(rf"\W*(?:{'|'.join(PLAN_TERMS)})(?:\s+(?:year|figure|\d{{4}}))?\s*"
                         r"(?:\([^()]*\))?\W*", re.I)  # a column headed "Target" or "Budget ($m)"
# a row labelled "*Pre-tender cost plan*" or "Internal budget", not "Variance vs budget"
PLAN_ROW = re.compile(rf"\W*(?:(?!(?:variance|vs|versus|against|change|delta|difference|gap|over|"
                      rf"under)\b)[\w-]+\s+){{0,3}}(?:{'|'.join(PLAN_TERMS)})\s*(?:\([^()]*\))?\W*",
                      re.I)

# "Target wait is 10–14 minutes", "Our goal is a median of 40–50 minutes", "The forecast we
# modelled in January gave 4 years": a plan named as a clause's subject a few words before
PLAN_CLAUSE = NeedsWord(re.compile(
    rf"\b(?:{'|'.join(PLAN_TERMS)}|goal|projection|prediction|predicted|projected)\b"
    r"(?:\s+(?!(?:variance|gap|difference|shortfall|overrun|vs|versus|against)\b)[\w'-]+){0,5}?"
    r"\s+(?:is|was|are|were|gave|gives|put|puts|set|sets|showed|shows)\s+(?:an?\s+|the\s+)?"
    r"(?:[\w-]+\s+of\s+)?(?:(?:US|A|C)?[$€£¥]|USD|EUR|GBP)?\s?$", re.I),
    (*PLAN_TERMS, "goal", "projection", "prediction", "predicted", "projected"))
RANGE_JOIN = re.compile(r"\s*(?:[-–—]|to)\s*(?:(?:US|A|C)?[$€£¥])?\s*")  # "10–14", "£40k to £50k"
# a line of the answer's assumptions or inputs: "_Assumptions: 8% discount rate; residual value
# £180,000_", "Key inputs: ..."
ASSUMPTION_LINE = re.compile(r"[^A-Za-z0-9\n]*(?:key\s+|main\s+)?(?:assumptions?|assuming|inputs?)\b",
                             re.I)
ASSUMPTION_TERMS = ("assumption", "assumed", "assuming", "input")

# "The contract allows 6–7 hours per pitch", "the service agreement permits 3–5 hours": what
# an agreement or policy allows, not the figure achieved
ALLOWANCE_TERMS = ("contract", "contracts", "agreement", "policy", "specification", "sla",
                   "schedule", "tender", "allowance", "allows", "allowed", "permits", "permitted")
ALLOWED = NeedsWord(re.compile(
    r"\b(?:contract|agreement|policy|specification|sla|schedule|tender)\b[^.;\n]{0,40}?\b(?:allows?|"
    r"allowed|permits?|permitted|specifies|sets?|caps?|provides\s+for|budgets?)\b[^.;\n]{0,40}$", re.I),
    ("contract", "agreement", "policy", "specification", "sla", "schedule", "tender"))
WINDOWED = "window"  # the subject word of a criterion that counts within a window ("within 3 days")

# "exceeded the 99.0% contractual target", "above the 6.0 retailer minimum", "within the
# group's 22% cap": a bar the claim
# measures its value against
BAR_TERMS = ("target", "threshold", "ceiling", "floor", "limit", "cap", "covenant", "guidance",
             "budget", "benchmark", "minimum", "maximum", "hurdle", "trigger", "standard",
             "requirement", "objective", "goal", "plan")
BAR_BEFORE = NeedsWord(re.compile(
    r"\b(?:exceed(?:s|ed|ing)?|above|below|under|over|beat(?:s|ing)?|miss(?:es|ed)?|meets?|met|"
    r"short\s+of|breach(?:es|ed|ing)?|within|inside|outside)\s+(?:the|its|a|an|our|their|this)\s+"
    r"(?:[\w'\u2019-]+\s+){0,2}$", re.I),  # "within the group's 22% cap"
    ("exceed", "above", "below", "under", "over", "beat", "miss", "meet", "met", "short", "breach",
     "within", "inside", "outside"))
BAR_AFTER = re.compile(rf"\S*\s*(?:[\w-]+\s+){{0,2}}(?:{'|'.join(BAR_TERMS)})\b", re.I)

# "Industry forecasts put ... at", "Published estimates ... range from": another party's figure
SOURCE_TERMS = ("industry", "published", "literature", "analyst", "analysts", "consensus", "peer",
                "peers", "competitor", "competitors", "comparable", "comparables", "manufacturer",
                "manufacturers", "vendor", "vendors", "supplier", "suppliers", "maker", "makers")
ATTRIBUTED = NeedsWord(re.compile(
    rf"\b(?:{'|'.join(SOURCE_TERMS)})\b[^.;\n]{{0,60}}?\b(?:forecasts?|estimates?|expects?|"
    r"expected|reports?|reported|put|puts|ranges?|ranged|averages?|medians?|suggests?|quotes?|"
    r"gives?|figures?|norms?|typically|sees?|shows?)\b", re.I), SOURCE_TERMS)
FIRST_PERSON = re.compile(r"\b(?:our|we|us|my|I)\b")

# "Had full indexation applied, the tariff would be €4.35", "would have been $412,000", "If all
# 40 beds had been open, ...": a value under a condition the answer says did not hold
COUNTERFACTUAL = NeedsWord(re.compile(
    r"^\W*(?:had|were)\s|\bwould\s+have\s+(?:been|cost|reached|totalled|come|stood)\b|"
    r"\bif\b[^.;\n]{0,80}\bhad\b", re.I), ("had", "were", "would"))
# "For reference, peak-season weeks sell between 208 and 216 jumps": a sentence that opens by
# giving a figure for comparison, not the answer's own
REFERENCE_LEAD = re.compile(r"[\W_]*(?:for\s+(?:reference|context|comparison)|by\s+comparison|"
                            r"as\s+a\s+(?:reference|comparison|benchmark))\b", re.I)
REFERENCE_TERMS = ("reference", "comparison", "context")
HYPOTHETICAL = "counterfactual"  # the subject word of a criterion that asks for a counterfactual


@dataclass(frozen=True)
class Aside:
    """Values (by index) the answer gives as a `kind` of figure not its own, the stems a
    criterion that means them has in its subject, and whether such a criterion means only them
    (a counterfactual criterion asks for no actual figure; one asking for a budget may still
    name the actual beside it)."""

    kind: str
    values: frozenset[int]
    wanted: frozenset[str]
    only: bool = False


PLAN_WORDS = frozenset(stem(w) for w in PLAN_TERMS)
BAR_WORDS = frozenset(stem(w) for w in BAR_TERMS)
SOURCE_WORDS = frozenset(stem(w) for w in SOURCE_TERMS)
ALLOWANCE_WORDS = frozenset(stem(w) for w in ALLOWANCE_TERMS)
ASSUMPTION_WORDS = frozenset(stem(w) for w in ASSUMPTION_TERMS)
REFERENCE_WORDS = frozenset(stem(w) for w in REFERENCE_TERMS)


def asides(text: str, quantities: Sequence[Quantity], headers: Sequence[str],
           bounds: Sequence[int], segment_of: Sequence[int],
           windows: frozenset[int] = frozenset()) -> tuple[Aside, ...]:
    """The answer's values of each kind it gives as not its own figure; `windows`: the values
    that say within what another is measured ("arrived within 12 minutes", "must not be placed
    within 5 m"), a window and not the figure, unless the criterion counts within one."""
    planned, bars, attributed, counterfactual, assumed = set(), set(), set(), set(), set()
    allowed, referenced = set(), set()
    leads: dict[int, bool] = {}  # per segment: does it open by giving a reference figure
    spoken: dict[int, tuple[bool, bool, bool]] = {}  # per segment: may it attribute, suppose, allow
    lowered = text.lower()
    may_assume = "assum" in lowered or "input" in lowered
    for i, q in enumerate(quantities):
        segment = segment_of[i]
        if segment not in spoken:
            words = text[bounds[segment]:bounds[segment + 1]].lower()
            spoken[segment] = (any(w in words for w in ATTRIBUTED.needs),
                               any(w in words for w in COUNTERFACTUAL.needs),
                               any(w in words for w in ALLOWED.needs))
        may_attribute, may_suppose, may_allow = spoken[segment]
        if segment not in leads:
            leads[segment] = bool(REFERENCE_LEAD.match(text, bounds[segment]))
        if leads[segment]:
            referenced.add(i)
        if (PLANNED.search(text, max(0, q.start - 40), q.start) or PLAN_HEADER.fullmatch(headers[i])
                or _plan_row(text, q)
                or PLAN_CLAUSE.search(text, max(bounds[segment], q.start - 80), q.start)
                or (i - 1 in planned and RANGE_JOIN.fullmatch(text, quantities[i - 1].end, q.start))):
            planned.add(i)
        if may_assume and ASSUMPTION_LINE.match(text, text.rfind("\n", 0, q.start) + 1):
            assumed.add(i)
        if BAR_BEFORE.search(text, max(0, q.start - 60), q.start) and BAR_AFTER.match(text, q.end):
            bars.add(i)
        before = text[bounds[segment]:q.start] if may_attribute or may_suppose or may_allow \
            else ""
        if may_attribute and ATTRIBUTED.search(before) and not FIRST_PERSON.search(before):
            attributed.add(i)
        if may_allow and (ALLOWED.search(before) or (i - 1 in allowed and RANGE_JOIN.fullmatch(
                text, quantities[i - 1].end, q.start))):
            allowed.add(i)
        if may_suppose and COUNTERFACTUAL.search(before):
            counterfactual.add(i)
    return (Aside("plan", frozenset(planned), PLAN_WORDS),
            Aside("bar", frozenset(bars), BAR_WORDS),
            Aside("another party's figure", frozenset(attributed), SOURCE_WORDS),
            Aside("counterfactual", frozenset(counterfactual), frozenset({HYPOTHETICAL}), only=True),
            Aside("assumption", frozenset(assumed), ASSUMPTION_WORDS),
            Aside("allowance", frozenset(allowed), ALLOWANCE_WORDS),
            Aside("reference figure", frozenset(referenced), REFERENCE_WORDS),
            Aside("window", windows, frozenset({WINDOWED})))


def _plan_row(text: str, q: Quantity) -> bool:
    """Whether `q` stands in a table row whose first cell names a plan ("| Internal budget |
    £225k |")."""
    line_start = text.rfind("\n", 0, q.start) + 1
    if not text[line_start:q.start].lstrip().startswith("|"):
        return False
    first = text.find("|", line_start)
    second = text.find("|", first + 1)
    return 0 <= second < q.start and bool(PLAN_ROW.fullmatch(text, first + 1, second))


def counterfactual(criterion: str) -> bool:
    """Whether a criterion asks for a counterfactual value ("would have been")."""
    return bool(COUNTERFACTUAL.search(criterion))
