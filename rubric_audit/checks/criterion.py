"""Reading a criterion: the values it asks for, the tolerance each is held to, and what it claims.

A criterion's targets are the quantities after its last copula ("... IRR at 15.0% premium is
15.6%" targets 15.6%), or all of its quantities when it has none. A tolerance is taken from the
criterion ("accept A to B", "15.6% within 0.2 of it", "+/- X", "to one decimal", "nearest
million"), else from the prompt's rounding or tolerance sentences ("to the nearest $ million",
"nearest 0.01%", "in $m to one decimal place"), else from the criterion's own precision ("2.1bn"
accepts what rounds to it, 2.07bn). "Within 14 days" is a value, not a tolerance, and beside
another value ("68% of purchases within 7 days") a condition of it.

A criterion is read once into a `Claim`: per target its tolerance, subject, qualifiers and role
(a level, a change, the value compared with), which the binding to the answer needs, and why its
claim is not a number (yes/no, a conclusion, a choice or named entity) when it is not, so the
checker does not decide it by number overlap.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, replace
from typing import Literal

from rubric_audit.checks.answer import (
    COMPARISON,
    VARIANCE_BEFORE,
    is_qualifier,
    names_in,
    terms,
)
from rubric_audit.checks.asides import (
    BAR_AFTER,
    BAR_BEFORE,
    HYPOTHETICAL,
    WINDOWED,
    counterfactual,
)
from rubric_audit.checks.numbers import (
    NEAREST,
    SCALES,
    Quantity,
    comparable,
    find_quantities,
    find_ranges,
    find_word_numbers,
    nearest_step,
    per_of,
    value_in_terms_of,
    windows_in,
)
from rubric_audit.checks.polarity import (
    OFFSET_AFTER,
    Polarity,
    Valence,
    criterion_polarity,
    payments,
    valence,
)
from rubric_audit.checks.text import STOPWORDS, content_tokens
from rubric_audit.checks.units import same_kind

WORD_DIGITS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_QTY = r"[-−]?[$€£¥]?\s?\d[\d,]*(?:\.\d+)?|[-−]?[$€£¥]?\s?\.\d+"
TOLERANCE_CLAUSE = re.compile(
    rf"""\([^()]*(?:\baccept|\bwithin\b|±|\+/[-−]|\bplus\s+or\s+minus\b|\btolerance\b|\bdecimal\b
       |\bnearest\b|\bround(?:ed|ing)?\b)[^()]*\)
    |\baccept(?:s|ed|ing|able)?\b[^.;()]*
    |\btolerance\b[^.;()]*
    |(?:±|\+/[-−]|\bplus\s+or\s+minus\b)\s*(?:{_QTY})[^,.;()]*
    |\bwithin\s+(?:±|\+/[-−])?\s*(?:{_QTY})\s*(?:%|percent|bps?|basis\s+points?|percentage\s+points?
       |pp|bn|mm|m|k|million|billion|x)?\s*(?:of\b[^,.;()]*)?""",
    re.I | re.X)
COPULA = re.compile(r"\b(?:is|are|was|were|equals|to\s+be)\b|=", re.I)
DECIMALS = re.compile(r"(?:\b(?:to|at|with|in|give|gives|giving|use|using|show|report|state)\s+"
                      r"(?:it\s+|them\s+|the\s+\w+\s+)?)(\d|zero|one|two|three|four|five|six)\s+"
                      r"(?:decimal|d\.?p\b|dp\b)|\b(\d)\s*d\.?p\b", re.I)
ROUNDING_SENTENCE = re.compile(r"within|±|\+/-|accept|round|decimal|nearest|\bd\.?p\b|tolerance",
                               re.I)
IN_SCALE = re.compile(r"\bin\s+(?:[$€£¥]\s?|(?:USD|EUR|GBP|NOK|SEK|CHF)\s?)?"
                      r"(k|m|mm|mn|bn|thousands|millions|billions)\b", re.I)

# Claims that are not a number: a yes/no answer, a conclusion, a choice of a named thing.
YES_NO = re.compile(r"(?:^|\b(?:states?|answers?|concludes?|says?|responds?|replies|confirms?|"
                    r"indicates?|that)\b)[\s:,\"'“]*\b(?:yes|no)\b(?![\s.]*\d)", re.I)
CONCLUSION = re.compile(
    r"\bwhether\b|\bconclud(?:es?|ing)\b|\b(?:does|do|did|is|are|was|were|can|will|would|should|must|has|have)\s+not\b|"
    r"\b(?:cannot|isn't|aren't|doesn't|won't|hasn't|haven't)\b|"
    r"\b(?:is|are|was|were|be|becomes?)\s+(?:not\s+)?(?:eligible|ineligible|exempt|compliant|"
    r"non-compliant|permitted|prohibited|allowed|required|sufficient|insufficient|in\s+breach|"
    r"in\s+compliance|subject\s+to|liable|entitled|valid|invalid|enforceable|unenforceable|"
    r"applicable|inapplicable|triggered|breached|met|satisfied|covered|deductible|taxable|"
    r"(?:statistically\s+)?(?:significant|insignificant)|material|immaterial|feasible|"
    r"infeasible|viable|justified|unjustified|adequate|inadequate|reasonable|unreasonable)\b|"
    r"\bthat\s+(?:(?!\d)[\w\s'\u2019-]){0,60}?\b(?:appl(?:ies|ied)|qualifie[sd]|breache[sd]|"
    r"violate[sd]|trigger(?:s|ed)|exceed(?:s|ed)|meets|met|satisf(?:ies|ied)|compl(?:ies|ied)|"
    r"(?:falls|fell)\s+(?:below|short)|outweigh(?:s|ed)|justifie[sd])\b", re.I)
CHOICE = re.compile(
    r"\b(?:identif(?:y|ies)|names?|selects?|chooses?|recommends?|picks?|ranks?|prefers?|"
    r"favou?rs?|advises?)\s+(?:that\s+|the\s+)?(?-i:[A-Z][a-z][\w&'.-]*)(?:\s+(?-i:[A-Z][\w&'.-]*))*"
    r"(?:\s+(?:as|over|for|to|rather)\b(?!\s*(?:[$€£¥\d−-]|approximately|about|roughly))|\s*[,.;]|\s*$)",
    re.I)
OUTPERFORM = re.compile(r"\b(?:out|under)perform(?:s|ed|ing)?\b|\b(?:beat|beats|trailed|lagged)\s+"
                        r"(?-i:[A-Z])", re.I)
# A criterion that opens by recommending ("Recommends the CLT frame at 410 kgCO₂e/m²",
# "Recommends closing Croydon despite the £57k break penalty") claims a pick or an action
RECOMMENDATION = re.compile(r"^\W*(?:recommends?|advises?|proposes?|urges?)\b", re.I)
CITATION = re.compile(r"^\s*(?:cites?|references?|quotes?|points?\s+to|attributes?)\b|"
                      r"\bas\s+the\s+(?:source|basis|authority|reference)\b", re.I)
QUALITATIVE_PART = re.compile(
    r"\b(?:is|was|are|were|as)\s+the\s+(?:[\w-]+\s+)?(?:tallest|largest|highest|lowest|biggest|"
    r"smallest|fastest|slowest|longest|shortest|best|worst|first|only|top|most|least)\b|"
    r"\band\s+(?:attributes?|explains?|identifies|notes?|recommends?|names?|describes?|cites?|"
    r"links?|ties?|traces?|justifies|assesses)\b|\b(?:attribut(?:es|ing)|because|due\s+to|driven\s+by|"
    r"owing\s+to|as\s+a\s+result\s+of|caused\s+by)\b", re.I)
# "5.8x, breaching the 5.5x covenant", "2.05x, below the 2.25x covenant": a verdict against a bar
# beside the value, which numbers do not check (the answer may weigh the bar otherwise)
BAR_VERDICT = re.compile(
    r",\s*(?:breaching|breaking|exceeding|missing|meeting|satisfying|beating|clearing)\s+the\b|"
    r",\s*(?:below|above|under|over|inside|outside)\s+the\s+\S+\s+(?:\w+\s+)?(?:covenant|limit|"
    r"threshold|cap|minimum|maximum|hurdle|floor|ceiling|trigger)\b", re.I)
PROMPT_CHOICE = re.compile(r"\b(?:is|are|was|were|should|does|do|did|will|would|can|could)\b"
                           r"[^?\n]{0,120}?\b([a-z]+)\s+or\s+(?:an?\s+|the\s+)?([a-z]+)\b"
                           r"[^?\n]{0,80}\?", re.I)
QUESTION_FILLERS = frozenset("""
not more less higher lower above below it this that them they and the a an of
""".split())
SUPERLATIVE_CHOICE = re.compile(
    r"\b(?:identif(?:y|ies)|names?|selects?|chooses?|picks?|flags?)\b[^.]{0,80}?\bas\s+"
    r"(?:\w+\s+){0,2}?(?:the\s+)?(?:largest|highest|lowest|smallest|biggest|best|worst|most|least|top|main|"
    r"primary|greatest|cheapest|preferred|recommended|only)\b", re.I)
CHANGE_BEFORE = re.compile(r"\bby\s+(?:about\s+|approximately\s+)?[-−]?$|"
                           r"\b(?:increase|decrease|change|reduction|rise|fall|drop|uplift|"
                           r"improvement|decline|growth)\s+(?:of\s+)?$", re.I)
LIMIT_WORDS = re.compile(r"\b(?:caps?|capped|limits?|maximum|minimum|max|min|ceiling|floor|"
                         r"thresholds?|up\s+to|at\s+least|at\s+most|no\s+more\s+than)\b", re.I)
FILE_DELIVERABLE = re.compile(
    r"\b(?:create|build|prepare|draft|produce|save|write|update|generate|populate|fill\s+in|"
    r"complete|return|deliver|upload|export|edit|amend|revise|make)\b[^\n]{0,80}?\b(?:"
    r"spreadsheet|workbook|excel|xlsx|docx|word\s+(?:document|file)|deck|slides?|pptx|"
    r"powerpoint|presentation|pdf|csv|file|document|template|model|sheet|tab)\b", re.I)
REPLY_HERE = re.compile(r"\b(?:reply|respond|answer|message|write\s+back)\b|\bhere\b|"
                        r"\bin\s+(?:the|your)\s+(?:reply|response|chat)\b", re.I)


@dataclass(frozen=True, kw_only=True)
class Tolerance:
    low: float
    high: float
    basis: str
    grid: float = 0.0  # a rounding step no power of ten ("nearest €0.05") the value lies on
    grid_digit: float = 0.0  # the step's last written digit (0.01 for €0.05)
    rounds: bool = False  # what rounds to the target: a value half a step away rounds away from it

    def on_grid(self, value: float) -> bool:
        """Whether `value` is a multiple of the rounding step (always, where there is none)."""
        if not self.grid:
            return True
        steps = value / self.grid
        return abs(steps - round(steps)) <= 1e-6 * max(1.0, abs(steps))

    @property
    def instructed(self) -> bool:
        """The criterion or prompt says to what precision the value is given ("two decimal
        places", "nearest £100"), not only the target's own precision."""
        return self.basis.startswith("rounded to ")

    @functools.cached_property
    def _bounds(self) -> tuple[float, float]:
        slack = 1e-9 * max(1.0, *(abs(x) for x in (self.low, self.high) if math.isfinite(x)))
        return self.low - slack, self.high + slack

    def contains(self, value: float) -> bool:
        low, high = self._bounds
        if not low <= value <= high:
            return False
        if self.rounds:  # £0.185 rounds half up to 19p, not to 18p
            middle = (self.low + self.high) / 2
            edge = self.high if middle >= 0 else self.low
            return abs(value - edge) > 1e-9 * max(1.0, abs(edge)) or value == middle
        return True

    def negated(self) -> Tolerance:
        """The same tolerance about the negated target."""
        return replace(self, low=-self.high, high=-self.low)


@functools.lru_cache(maxsize=4096)
def split_criterion(text: str) -> tuple[str, str]:
    """(the criterion without its tolerance clauses, the tolerance clauses).

    "Within X" is a tolerance only when it qualifies a value already stated and X can measure
    that value's distance: "within 14 days" is a value (X counts days; a share of purchases
    "within 7 days" is not 68% +/- 7), "within policy" has none.
    """
    clauses = []
    for m in TOLERANCE_CLAUSE.finditer(text):
        clause = m.group(0)
        quantities = find_quantities(clause)
        if not quantities and not DECIMALS.search(clause) and not NEAREST.search(clause):
            continue
        if clause.lower().startswith("within"):
            stated_before = find_quantities(text[:m.start()])
            width = next((q for q in find_quantities(text) if q.start >= m.start()), None)
            if not stated_before or width is None or not _can_be_width(width, stated_before[-1]):
                continue
        clauses.append(clause)
    for clause in clauses:
        text = text.replace(clause, " ")
    return text, " ".join(clauses)


def _can_be_width(width: Quantity, value: Quantity) -> bool:
    """Whether `width` can be a distance from `value`: not a count or duration ("7 days"), and a
    bare number, the value's own unit or a percentage of it ("within 5%")."""
    if width.noun or _other_measure(width, value):
        return False
    return width.dimension in ("plain", "percent", value.dimension)


def _other_measure(width: Quantity, value: Quantity) -> bool:
    """A width that measures another thing than the value ("within 5 m of HRWL" beside a count
    of days) or is one side of a lopsided window ("within −4/+6 s/day"): a condition, never a
    tolerance."""
    if width.value < 0 or width.text.startswith(("-", "−", "+")):
        return True
    return bool(width.measure) and not (value.measure and same_kind(width.measure, value.measure))


def criterion_targets(criterion: str) -> list[Quantity]:
    """The quantities a criterion's text asks for (after its last copula), its tolerance clauses
    set aside."""
    return _targets_and_conditions(split_criterion(criterion)[0])[0]


def _targets_and_conditions(body: str) -> tuple[list[Quantity], list[Quantity]]:
    """(targets, condition quantities) of a criterion with its tolerance clauses removed.

    The targets are the values after the last copula, bars the claim compares against aside
    (`BAR_BEFORE`) where another value remains. A window ("within 48 hours") says where a
    value is measured: beside another value it is a condition, so in "92% of orders were
    delivered within 48 hours" the 'were' states no value and 92% is the target."""
    copulas = list(COPULA.finditer(body))
    found = find_quantities(body)
    windows = _windows(body, found)
    bars = [q for q in found if BAR_BEFORE.search(body, max(0, q.start - 60), q.start)
            and BAR_AFTER.match(body, q.end)]
    named = [q for q in found if q.noun and re.match(r"-[a-z]", body[q.end:q.end + 2])]
    found = [q for q in found if q not in named]  # "the 10-working-day SLA" names a window
    if bars and all(q in bars or q in windows for q in found):
        return [], found  # every value is a bar: the claim is whether it is met, not a number
    claims = [q for q in found if q not in windows and q not in bars]
    if not claims and windows:  # "at least 95% of orders were fitted within 3 days"
        starts = {q.start for q in found}
        bounded = [q for q in find_quantities(body, thresholds=True) if q.start not in starts]
        if len(bounded) == 1 and BOUND_BEFORE.search(body, max(0, bounded[0].start - 20),
                                                     bounded[0].start):
            return bounded, found
    claims = claims or found
    if not copulas:
        return claims, [q for q in found if q not in claims]
    cut = copulas[-1].end()
    targets = [q for q in claims if q.start >= cut]
    if not targets and any(q.start >= cut for q in windows):
        targets = claims
    if not targets and PASSIVE.match(body, cut) and not JUDGED.match(body, cut):
        targets = [q for q in claims if q.noun]  # "350,000 invoices were processed in 2024"
    return targets, [q for q in found if q not in targets]


# "at least 95%", "no more than 2%": a bound the criterion claims of a value (`_bound_tolerance`)
BOUND_BEFORE = re.compile(r"\b(?:(at\s+least|no\s+less\s+than|not\s+less\s+than|a\s+minimum\s+of)|"
                          r"(at\s+most|no\s+more\s+than|not\s+more\s+than|a\s+maximum\s+of))\s*$",
                          re.I)


def _without_bars(body: str, conditions: list[Quantity]) -> str:
    """The criterion with each bar it measures a value against ("below the 85% target")
    blanked, so its words ("target") say no subject the answer's own bar could bind to."""
    for q in conditions:
        before = BAR_BEFORE.search(body, max(0, q.start - 60), q.start)
        after = BAR_AFTER.match(body, q.end) if before else None
        if before and after:
            body = body[:before.start()] + " " * (after.end() - before.start()) + body[after.end():]
    return body


# A passive after the last copula says what was done to the counted values before it; a verb
# of measuring against a bar ("was exceeded") makes the claim whether the bar was met.
PASSIVE = re.compile(r"\s*(?:\w+ly\s+)?(?:[a-z]+ed|[a-z]+en|sold|spent|paid|built|held|kept|"
                     r"made|lost|won|sent|run|cut|set)\b", re.I)
JUDGED = re.compile(r"\s*(?:\w+ly\s+)?(?:exceeded|surpassed|missed|breached|met|achieved|reached|"
                    r"beaten|overshot|undershot|triggered|satisfied|passed|failed|exhausted|"
                    r"capped|limited|restricted|required|needed|expected|forecast|budgeted|"
                    r"planned|targeted|allowed|permitted|deemed|considered)\b", re.I)


WITHIN = re.compile(r"\bwithin\b", re.I)
# "within a single week", "within one day": a window of one period, said without a number
SINGLE_WINDOW = re.compile(r"\bwithin\s+(?:a|one)\s+(?:single\s+)?(hour|day|week|month|quarter|"
                           r"year|shift)\b", re.I)


def _windows(body: str, found: list[Quantity]) -> list[Quantity]:
    """The values that say within what a criterion's values are measured, in digits or in
    words ("within the next two years", "within a single week")."""
    words = find_word_numbers(body)
    single = [Quantity(value=1.0, dimension="plain", currency=None, scale=1.0, decimals=0,
                       text=m.group(0)[7:], start=m.start(), end=m.end(),
                       noun=m.group(1).lower()) for m in SINGLE_WINDOW.finditer(body)]
    return windows_in(body, sorted([*found, *words], key=lambda q: q.start) if words else found) \
        + single


def _stated_tolerance(text: str, target: Quantity) -> Tolerance | None:
    if not text:
        return None
    found = find_quantities(text)
    for low, high in find_ranges(text, found):
        if high.value < 0 < target.value:  # "a loss of USD 3.2m (accept -USD 3.1m to -USD 3.3m)"
            target = replace(target, value=-target.value)
        if comparable(low, target) and value_in_terms_of(low, target) <= target.value * 1.0001 + 1e-12 \
                and value_in_terms_of(high, target) >= target.value * 0.9999 - 1e-12:
            return Tolerance(low=value_in_terms_of(low, target), high=value_in_terms_of(high, target),
                             basis=f"stated range {low.text} to {high.text}")
    plus_minus = re.search(r"(?:within|±|\+/[-−]|plus\s+or\s+minus)\s*", text, re.I)
    if plus_minus:
        after = [q for q in found if q.start >= plus_minus.end()]
        if after and not _other_measure(after[0], target) and not _band_of_another(text, after,
                                                                                   target):
            width = after[0]
            if width.dimension == "percent" and target.dimension != "percent":
                delta = abs(target.value) * width.value / 100
            else:
                delta = abs(value_in_terms_of(width, target))
                if width.scale == 1.0 and target.value and delta >= abs(target.value):
                    delta = abs(width.value)  # "1.2k units (±50)": 50 units, not 50 thousand
            return Tolerance(low=target.value - delta, high=target.value + delta,
                             basis=f"stated +/- {width.text}")
    return _rounding_tolerance(text, target)


# "within ±1 °C of 18 °C": a band around its centre, which follows the width
BAND_CENTRE = re.compile(r"\s*(?:°\s*[CF]|[a-z]{1,3})?\s+of\s+(?:the\s+|its\s+|a\s+)?$", re.I)


def _band_of_another(text: str, after: list[Quantity], target: Quantity) -> bool:
    """A width is a band around another value where its centre ("of 18 °C") is the same kind
    as the target but not it: a control band ("held within ±1 °C of 18 °C") is no tolerance for
    a reading of 18.6 °C."""
    if len(after) < 2 or not BAND_CENTRE.match(text[after[0].end:after[1].start]):
        return False
    centre = after[1]
    return comparable(centre, target) \
        and abs(value_in_terms_of(centre, target) - target.value) > 1e-9 * max(1.0, abs(target.value))


def _rounding_tolerance(text: str, target: Quantity) -> Tolerance | None:
    decimals = DECIMALS.search(text)
    if decimals:
        places = (decimals.group(1) or decimals.group(2)).lower()
        d = WORD_DIGITS.get(places, int(places) if places.isdigit() else 0)
        scale = target.scale if target.dimension != "percent" else 1.0
        in_scale = IN_SCALE.search(text)
        if in_scale and target.dimension != "percent" \
                and abs(target.value) >= SCALES[in_scale.group(1).lower()]:
            scale = SCALES[in_scale.group(1).lower()]  # "in $m" speaks of values of millions
        half = 0.5 * 10.0 ** -d * scale
        places_text = f"{d} decimal place" + ("" if d == 1 else "s")
        return Tolerance(low=target.value - half, high=target.value + half,
                         basis=f"rounded to {places_text}", rounds=True)
    nearest = NEAREST.search(text)
    if nearest:
        step, digit = nearest_step(nearest)
        half = 0.5 * step
        power_of_ten = step <= 0 or abs(step / 10.0 ** math.floor(math.log10(step)) - 1) < 1e-9
        return Tolerance(low=target.value - half, high=target.value + half,
                         basis=f"rounded to nearest {nearest.group(0)[8:].strip()}",
                         grid=0.0 if power_of_ten else step, grid_digit=digit, rounds=True)
    return None


def tolerance_for(target: Quantity, criterion_tolerance: str, prompt: str) -> Tolerance:
    """The stated tolerance (criterion first, then prompt), else the criterion's precision."""
    stated = _stated_tolerance(criterion_tolerance, target)
    if stated is None:
        stated = _stated_tolerance(_tolerance_sentences(prompt), target)
    if stated is not None:
        return stated
    half = target.step / 2
    return Tolerance(low=target.value - half, high=target.value + half,
                     basis=f"precision of {target.text}", rounds=True)


@functools.lru_cache(maxsize=1024)
def _tolerance_sentences(prompt: str) -> str:
    """Only the prompt's sentences about tolerance or rounding, not its input values."""
    sentences = re.split(r"(?<=[.!?])\s+|\n", prompt)
    kept = []
    for s in sentences:
        if not ROUNDING_SENTENCE.search(s):
            continue
        if re.search(r"\bwithin\b", s, re.I) and not re.search(
                r"±|\+/-|accept|round|decimal|nearest|tolerance|within\s+[$€£¥]?\s?\d[\d,.]*"
                r"\s*(?:%|bps?|[kmb]n?|million|billion)?\s+of\b", s, re.I):
            continue  # "respond within 14 days": not a tolerance
        kept.append(s)
    return " ".join(kept)


Role = Literal["level", "change", "compared"]


@dataclass(frozen=True, kw_only=True)
class Claim:
    """A criterion read once: its targets with tolerance and subject, and what it claims."""

    targets: tuple[Quantity, ...]
    tolerances: tuple[Tolerance, ...]
    subjects: tuple[frozenset[str], ...]
    qualifiers: tuple[frozenset[str], ...]  # per target, the terms that may say which it is
    mentioned: frozenset[str]  # every term of the criterion
    names: frozenset[str]
    context: frozenset[tuple[str, float]]
    not_numeric: str | None
    file_deliverable: bool
    limit: bool  # the criterion speaks of a cap, limit or threshold: "up to X" states it
    roles: tuple[Role, ...]  # per target: a level, a change ("falls by X") or compared ("from X")
    polarities: tuple[Polarity | None, ...]  # per target: the direction its words state
    valences: tuple[Valence | None, ...]  # per target: favourable or adverse, where said
    qualitative: str | None  # what else the criterion asks for that numbers cannot check: a
    # cause or reason ("and attributes it to"), a verdict against a bar (", breaching the ...")
    windows: tuple[Quantity, ...]  # within what its values are measured ("within 5 m of HRWL")
    payment: tuple[str, str] | None  # who owes whom: (payer, payee), "the promoter owes the venue"
    counted_by: tuple[str, ...] = ()  # per target of several, the word written right after
    # it, where each has one and they differ: "642 new fittings and 188 repeat fittings"


def _prompt_choice(prompt: str, body: str) -> bool:
    """The prompt asks 'is it A or B?' and the criterion picks one of them."""
    words = set(re.findall(r"[a-z]+", body.lower()))
    for m in PROMPT_CHOICE.finditer(prompt):
        options = {m.group(1).lower(), m.group(2).lower()} - QUESTION_FILLERS
        if options & words:
            return True
    return False


def not_numeric_reason(body: str, prompt: str) -> str | None:
    """Why a criterion's claim is not a number (a yes/no answer, a conclusion, a choice or named
    entity), or None; `body` is the criterion with its tolerance clauses removed."""
    if YES_NO.search(body):
        return "the criterion's claim is a yes/no answer, not a number"
    if CONCLUSION.search(body):
        return "the criterion's claim is a conclusion, not a number"
    if OUTPERFORM.search(body):
        return "the criterion's claim is a comparison of two subjects, not a number"
    if CITATION.search(body):
        return "the criterion's claim is a citation or a source, not a number"
    if CHOICE.search(body) or SUPERLATIVE_CHOICE.search(body) or RECOMMENDATION.match(body) \
            or _prompt_choice(prompt, body):
        return "the criterion's claim is a choice or a named entity, not a number"
    return None


# A conclusion drawn from values: a verdict against a bar ("breached", "falls short of", "within
# the 4-year hurdle", "pays back"), a consequence ("so the claim must change") or what is possible
# ("can receive"); not a window ("within 24 hours") or a rule the prompt states ("must be
# examined every 6 months")
DRAWN = re.compile(r"\b(?:met|meets?|breach(?:es|ed)?|exceed(?:s|ed)?|trigger(?:s|ed)?|"
                   r"satisf(?:y|ies|ied)|compl(?:y|ies|ied)|violat(?:es|ed)|qualif(?:y|ies|ied)|"
                   r"so|therefore|hence|fail(?:s|ed)?|pass(?:es|ed)|"
                   r"(?:within|above|below|under|over)\s+(?:the|its|their)\s+(?:\S+\s+){0,2}"
                   r"(?:hurdle|limit|budget|cap|threshold|covenant|target|minimum|maximum|ceiling|"
                   r"floor|trigger|requirement|standard)|above|below|"
                   r"falls?\s+short|short\s+of|pays?\s+back|paid\s+back|"
                   r"despite|recover(?:s|ed)?|can(?:not)?\s+[a-z]+|could\s+[a-z]+)\b", re.I)


def _premise_conclusion(body: str, prompt: str) -> str | None:
    """Why numbers cannot decide a criterion whose values the prompt gives, all of them, and
    which draws a conclusion from them ("States that the 3.2 m³/s release met the 3.0 m³/s
    minimum", "... fall short of the £5m threshold, so no bonus is payable"): an answer that
    repeats the prompt's values says nothing of the conclusion. A criterion with no value that
    draws one ("stayed under the cap") claims it too."""
    if not DRAWN.search(body):
        return None
    given = _given(prompt)
    if all((q.dimension, round(q.value, 9)) in given for q in find_quantities(body)):
        return ("the criterion's values are all the prompt's own; its claim is the conclusion "
                "drawn from them, not a number")
    return None


@functools.lru_cache(maxsize=1024)
def _given(prompt: str) -> frozenset[tuple[str, float]]:
    """The values a prompt gives, by kind and value."""
    return frozenset((q.dimension, round(q.value, 9)) for q in find_quantities(prompt))


@functools.lru_cache(maxsize=4096)
def read_claim(criterion: str, prompt: str) -> Claim:
    body, tolerance_text = split_criterion(criterion)
    targets, conditions = _targets_and_conditions(body)
    said = _without_bars(body, conditions)  # "... falls below the 85% target": no subject words
    spans = [(a.start, b.end) for a, b in find_ranges(body, targets)]
    subjects = []
    previous = 0
    for n, t in enumerate(targets):
        following = [u.start for u in targets[n + 1:]
                     if not any(a <= t.start < b and a <= u.start < b for a, b in spans)]
        words = content_tokens(said[previous:following[0] if following else len(body)])
        unit_words = content_tokens(t.noun or "")  # "years" is the unit, not the subject
        subjects.append(frozenset(words - {_digits(t.text)} - unit_words)
                        | ({HYPOTHETICAL} if counterfactual(body) else frozenset())
                        | ({WINDOWED} if WITHIN.search(body) else frozenset()))
        if not any(a <= t.start < b for a, b in spans):
            previous = t.end
    context = frozenset((q.dimension, round(q.value, 9))
                        for q in [*conditions, *find_quantities(prompt)])
    targets = [_with_basis(body, t) for t in targets]
    roles = tuple(_role(body, t) for t in targets)
    return Claim(
        targets=tuple(targets),
        tolerances=tuple(_range_tolerance(body, t, targets) or _bound_tolerance(body, t)
                         or _approximate_tolerance(body, t, tolerance_for(t, tolerance_text, prompt))
                         for t in targets),
        subjects=tuple(subjects),
        qualifiers=tuple(_qualifiers(body, t) - _reference_terms(body, t) for t in targets),
        mentioned=frozenset(key for key, _, _ in terms(body) if is_qualifier(key)),
        names=names_in(body), context=context,
        not_numeric=not_numeric_reason(body, prompt) or _premise_conclusion(body, prompt),
        file_deliverable=bool(FILE_DELIVERABLE.search(prompt)) and not REPLY_HERE.search(prompt),
        limit=bool(LIMIT_WORDS.search(body)),
        qualitative="a cause or reason" if QUALITATIVE_PART.search(body)
        else "a verdict against a bar" if BAR_VERDICT.search(body) else None,
        windows=tuple(w for w in _windows(body, find_quantities(body)) if w not in targets),
        payment=next(iter(payments(body)), None),
        counted_by=_counted_by(body, targets),
        roles=roles, polarities=tuple(_polarity(body, t, r) for t, r in zip(targets, roles,
                                                                             strict=True)),
        valences=tuple(valence(body, t) for t in targets))


PER_BEFORE = re.compile(r"\bper\s+[A-Za-z][\w-]*(?:\s+[a-z][\w-]*)?\s+(?:of|was|is|at|were|=|:)\s*"
                        r"(?:about\s+|approximately\s+|around\s+)?$", re.I)


def _reference_terms(body: str, target: Quantity) -> frozenset[str]:
    """The terms naming what a variance is measured from ("below plan"): its reference, not a
    qualifier that says which value it is."""
    if not OFFSET_AFTER.match(body, target.end):
        return frozenset()
    after = re.split(r"[,;.(]", body[target.end:target.end + 80], maxsplit=1)[0]
    return frozenset(key for key, _, _ in terms(after)) - {"#"}


def _with_basis(body: str, target: Quantity) -> Quantity:
    """A target whose basis the criterion gives before it ("spend per cover of GBP 38.50") is
    per that basis, as if written after it."""
    if target.per:
        return target
    basis = PER_BEFORE.search(body, max(0, target.start - 50), target.start)
    return replace(target, per=per_of(" " + basis.group(0))) if basis else target


def _role(body: str, target: Quantity) -> Role:
    """What a criterion's target is: a change ("falls by X"), the value compared with ("rose
    from X to Y": the answer's own 'from X' is then its claim, not an aside), or a level."""
    if CHANGE_BEFORE.search(body, max(0, target.start - 24), target.start) \
            or VARIANCE_BEFORE.search(body, max(0, target.start - 30), target.start):
        return "change"  # "an overrun of 92.5%" is what the answer's "overrun of" gives too
    if COMPARISON.search(body, max(0, target.start - 40), target.start):
        return "compared"
    polarity = criterion_polarity(body, target)
    if OFFSET_AFTER.match(body, target.end):  # "USD 1.42m over plan": a variance
        return "change"
    return "change" if polarity is not None and polarity.change else "level"


def _polarity(body: str, target: Quantity, role: Role) -> Polarity | None:
    """The direction a target's words state: of a change only where the target is one ("fell
    from 14.2% to 11.8%" states no direction of 14.2%)."""
    polarity = criterion_polarity(body, target)
    return polarity if polarity is None or not polarity.change or role == "change" else None


def _qualifiers(body: str, target: Quantity) -> frozenset[str]:
    """The terms of a criterion that may say which value it means: its codes (Tier-2, FY2024, a
    window of 14 days) and its content words, but for the words that name another of its values
    ("assuming a 10% WACC and 2% terminal growth rate", "5% of pre-tax income")."""
    sequence = [key for key, _, _ in terms(body[:target.start] + " " + body[target.end:])]
    naming = set()
    for n, key in enumerate(sequence):
        if key != "#":
            continue
        for step in (-1, 1):
            k = n + step
            while 0 <= k < len(sequence) and ":" not in sequence[k] \
                    and (is_qualifier(sequence[k]) or sequence[k] == "of"):
                naming.add(k)
                k += step
    return frozenset(key for n, key in enumerate(sequence)
                     if is_qualifier(key) and n not in naming)


WORD_AFTER = re.compile(r"\s+([a-z]{3,})\b")


def _counted_by(body: str, targets: list[Quantity]) -> tuple[str, ...]:
    """Per target of a criterion with several, the word written right after it, lower case
    ("642 new fittings and 188 repeat fittings": new, repeat), where each has one and they
    differ; else ()."""
    if len(targets) < 2:
        return ()
    found = [m.group(1) if (m := WORD_AFTER.match(body, t.end)) and m.group(1) not in STOPWORDS
             else "" for t in targets]
    return tuple(found) if all(found) and len(set(found)) == len(found) else ()


def _digits(text: str) -> str:
    return re.sub(r"[^0-9.]", "", text).strip(".")


def _bound_tolerance(body: str, target: Quantity) -> Tolerance | None:
    """A target the criterion claims as a bound ("at least 95% of orders ... within 3 days")
    holds every value on its side of it."""
    bound = BOUND_BEFORE.search(body, max(0, target.start - 20), target.start)
    if bound is None:
        return None
    if bound.group(1):
        return Tolerance(low=target.value, high=math.inf, basis=f"at least {target.text}")
    return Tolerance(low=-math.inf, high=target.value, basis=f"at most {target.text}")


APPROXIMATE_BEFORE = re.compile(r"\b(?:approximately|approx\.?|about|around|roughly|circa|"
                                r"some)\s*[$€£¥]?\s*$|[~≈]\s*[$€£¥]?\s*$", re.I)


def _approximate_tolerance(body: str, target: Quantity, stated: Tolerance) -> Tolerance:
    """A whole number of two or more significant figures the criterion calls approximate
    ("approximately 85,000 meals") holds what rounds to it at its last non-zero digit (84,500
    to 85,500); else `stated`, the tolerance the criterion or prompt states or its precision:
    where one is stated, where it is not approximate, where that is its own precision, or where
    it has one significant figure ("about £60": how near is near is not written)."""
    if target.decimals or not stated.basis.startswith("precision of") \
            or not APPROXIMATE_BEFORE.search(body, max(0, target.start - 16), target.start):
        return stated
    digits = re.sub(r"\D", "", target.text.split(".")[0]).lstrip("0")
    zeros = len(digits) - len(digits.rstrip("0"))
    if not zeros or len(digits) - zeros < 2:
        return stated  # "about £60", "approximately 3,000": one figure, no rule to read
    half = 10.0 ** zeros * target.step / 2
    return Tolerance(low=target.value - half, high=target.value + half,
                     basis=f"approximately {target.text}: what rounds to it", rounds=True)


def _range_tolerance(body: str, target: Quantity, targets: list[Quantity]) -> Tolerance | None:
    """A criterion whose value is a range ('37-46 months') accepts either end at its precision
    and the answer's range must match it end for end (checked in `binding._range_end`)."""
    for low, high in find_ranges(body, targets):
        if target in (low, high):
            return Tolerance(low=target.value - target.step / 2, high=target.value + target.step / 2,
                             basis=f"end of the range {low.text} to {high.text}")
    return None
