"""The deterministic numeric checker: grade a criterion's stated value against an answer in code.

A criterion's targets are the quantities after its last copula ("... IRR at 15.0% premium is
15.6%" targets 15.6%), or all of its quantities when it has none. A tolerance is taken from the
criterion ("accept A to B", "15.6% within 0.2 of it", "+/- X", "to one decimal", "nearest
million"), else from the prompt's rounding or tolerance sentences ("to the nearest $ million",
"nearest 0.01%", "in $m to one decimal place"), else from the criterion's own precision ("2.1bn"
accepts what rounds to it, 2.07bn). "Within 14 days" is a value, not a tolerance, and beside
another value ("68% of purchases within 7 days") a condition of it.

The answer is read where it speaks of the criterion's subject: a value binds to a target through
its segment (sentence, line, list item or table row) and the words it shares with the criterion;
bare numbers take the unit a table header, a label or their sentence gives them. A value the
answer says of a rival of the criterion's qualifier ("7.9% with active treatment vs 3.1% with
placebo" for a placebo rate of 7.9%; Tier-1 for Tier-2, FY2023 for FY2024) decides nothing: the
checker abstains and says so. Criteria whose claim is not a number (yes/no, a choice, a named
entity) are not decided by number overlap.
Plain fails are decided where the final answer is the deliverable: a refusal, an answer with no
number, a value the answer gives for the same subject and unit far outside the tolerance. Where
the deliverable is a file, the checker abstains and says so.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal

from rubric_audit.checks.answer import (
    COMPARISON,
    Reading,
    is_qualifier,
    names_in,
    read_answer,
    terms,
)
from rubric_audit.checks.numbers import (
    CURRENCY_CODES,
    SCALES,
    Quantity,
    find_quantities,
    find_ranges,
    unread,
)
from rubric_audit.checks.text import content_tokens
from rubric_audit.model import Attempt, CriterionGrade, Finding, Task

WORD_DIGITS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_QTY = r"[-−]?[$€£¥]?\s?\d[\d,]*(?:\.\d+)?|[-−]?[$€£¥]?\s?\.\d+"
TOLERANCE_CLAUSE = re.compile(
    rf"""\([^()]*(?:\baccept|\bwithin\b|±|\+/[-−]|\bplus\s+or\s+minus\b|\btolerance\b)[^()]*\)
    |\baccept(?:s|ed|ing|able)?\b[^.;()]*
    |\btolerance\b[^.;()]*
    |(?:±|\+/[-−]|\bplus\s+or\s+minus\b)\s*(?:{_QTY})[^,.;()]*
    |\bwithin\s+(?:±|\+/[-−])?\s*(?:{_QTY})\s*(?:%|percent|bps?|basis\s+points?|percentage\s+points?
       |pp|bn|mm|m|k|million|billion|x)?\s*(?:of\b[^,.;()]*)?""",
    re.I | re.X)
WINDOW_BEFORE = re.compile(r"\bwithin\s*$", re.I)
COPULA = re.compile(r"\b(?:is|are|was|were|equals|to\s+be)\b|=", re.I)
DECIMALS = re.compile(r"(?:\bto|\bat|\bwith|\bin)\s+(\d|zero|one|two|three|four|five|six)\s+"
                      r"(?:decimal|d\.?p\b|dp\b)|\b(\d)\s*d\.?p\b", re.I)
NEAREST = re.compile(
    rf"nearest\s+(?:whole\s+)?(?P<sym>(?:[$€£¥]|\b(?:{'|'.join(CURRENCY_CODES)})\b)\s?)?"
    r"(?:(?P<num>\d[\d,]*(?:\.\d+)?|\.\d+)\s*"
    r"(?P<unit>%|percent|percentage\s+points?|pp|bps?|basis\s+points?|k|m|bn|million|billion)?"
    r"|(?P<word>cent|penny|whole\s+number|integer|dollar|euro|pound|unit|hundred|thousand|"
    r"million|billion"
    r"|percentage\s+point|percent|tenth|hundredth|basis\s+point|bp))", re.I)
NEAREST_STEP = {"cent": 0.01, "penny": 0.01, "whole number": 1.0, "integer": 1.0, "dollar": 1.0,
                "euro": 1.0, "pound": 1.0, "unit": 1.0, "hundred": 100.0, "thousand": 1e3, "million": 1e6,
                "billion": 1e9, "percent": 1.0, "percentage point": 1.0, "tenth": 0.1,
                "hundredth": 0.01, "basis point": 0.01, "bp": 0.01}
ROUNDING_SENTENCE = re.compile(r"within|±|\+/-|accept|round|decimal|nearest|\bd\.?p\b|tolerance",
                               re.I)
IN_SCALE = re.compile(r"\bin\s+(?:[$€£¥]\s?|(?:USD|EUR|GBP|NOK|SEK|CHF)\s?)?"
                      r"(k|m|mm|mn|bn|thousands|millions|billions)\b", re.I)
ALTERNATIVE_GAP = re.compile(r"\s*,?\s*(?:or|/|either)\s*(?:possibly|perhaps|maybe|about|roughly|"
                             r"around|approximately|up\s+to)?\s*", re.I)
BARE_ANSWER = re.compile(r"\s*([-−]?\d[\d,]*(?:\.\d+)?)\s*\.?\s*")
NEAR = (0.8, 1.25)  # values within this ratio of the target are taken as claims about it

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
CHANGE_BEFORE = re.compile(r"\b(?:by|of)\s+(?:about\s+|approximately\s+)?[-−]?$|"
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


@dataclass(frozen=True)
class Tolerance:
    low: float
    high: float
    basis: str

    def contains(self, value: float) -> bool:
        slack = 1e-9 * max(1.0, abs(self.low), abs(self.high))
        return self.low - slack <= value <= self.high + slack


@dataclass(frozen=True)
class TargetCheck:
    """How one target quantity fared in the answer."""

    target: Quantity
    tolerance: Tolerance
    matched: list[Quantity]
    missed: list[Quantity]
    hedged: bool
    outcome: Literal["pass", "fail", "not_found", "other_subject"]
    note: str = ""  # why the outcome is other_subject


@dataclass(frozen=True)
class CodeVerdict:
    verdict: Literal["pass", "fail", "not_applicable"]
    reason: str
    checks: list[TargetCheck]

    @property
    def hedged(self) -> bool:
        return any(c.hedged for c in self.checks)


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
    if width.noun:
        return False
    return width.dimension in ("plain", "percent", value.dimension)


def criterion_targets(criterion: str) -> list[Quantity]:
    """The quantities a criterion's text asks for (after its last copula), its tolerance clauses
    set aside."""
    return _targets_and_conditions(split_criterion(criterion)[0])[0]


def _targets_and_conditions(body: str) -> tuple[list[Quantity], list[Quantity]]:
    """(targets, condition quantities) of a criterion with its tolerance clauses removed.

    The targets are the values after the last copula. A window ("within 48 hours") says where a
    value is measured: beside another value it is a condition, so in "92% of orders were
    delivered within 48 hours" the 'were' states no value and 92% is the target."""
    copulas = list(COPULA.finditer(body))
    found = find_quantities(body)
    windows = [q for q in found if q.noun and WINDOW_BEFORE.search(body, max(0, q.start - 12),
                                                                      q.start)]
    claims = [q for q in found if q not in windows] or found
    if not copulas:
        return claims, [q for q in found if q not in claims]
    cut = copulas[-1].end()
    targets = [q for q in claims if q.start >= cut]
    if not targets and any(q.start >= cut for q in windows):
        targets = claims
    return targets, [q for q in found if q not in targets]


def _display(q: Quantity, target: Quantity) -> float:
    """q's value in the target's terms: an unscaled side is read in the other side's scale."""
    if q.dimension in ("percent", "multiple") or q.scale == target.scale:
        return q.value
    if q.scale == 1.0:  # "2433" beside "$2,470 million"; "$2,860,000" is already in units
        return q.value if abs(q.value) >= target.scale else q.value * target.scale
    if target.scale == 1.0:  # "1,284" under "($000s)" against "$1,284,000": already units
        return q.value if abs(target.value) >= q.scale else q.value / q.scale
    return q.value


def _compatible(q: Quantity, target: Quantity) -> bool:
    if q.compatible(target):
        return True
    kinds = {q.dimension, target.dimension}
    return kinds == {"plain", "currency"} and not (q.noun or target.noun)


def _stated_tolerance(text: str, target: Quantity) -> Tolerance | None:
    if not text:
        return None
    found = find_quantities(text)
    for low, high in find_ranges(text, found):
        if high.value < 0 < target.value:  # "a loss of USD 3.2m (accept -USD 3.1m to -USD 3.3m)"
            target = replace(target, value=-target.value)
        if _compatible(low, target) and _display(low, target) <= target.value * 1.0001 + 1e-12 \
                and _display(high, target) >= target.value * 0.9999 - 1e-12:
            return Tolerance(_display(low, target), _display(high, target),
                             f"stated range {low.text} to {high.text}")
    plus_minus = re.search(r"(?:within|±|\+/[-−]|plus\s+or\s+minus)\s*", text, re.I)
    if plus_minus:
        after = [q for q in found if q.start >= plus_minus.end()]
        if after:
            width = after[0]
            if width.dimension == "percent" and target.dimension != "percent":
                delta = abs(target.value) * width.value / 100
            else:
                delta = abs(_display(width, target))
            return Tolerance(target.value - delta, target.value + delta, f"stated +/- {width.text}")
    return _rounding_tolerance(text, target)


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
        return Tolerance(target.value - half, target.value + half, f"rounded to {places_text}")
    nearest = NEAREST.search(text)
    if nearest:
        step = _nearest_step(nearest)
        if step is not None:
            half = 0.5 * step
            return Tolerance(target.value - half, target.value + half,
                             f"rounded to nearest {nearest.group(0)[8:].strip()}")
    return None


def _nearest_step(match: re.Match[str]) -> float | None:
    if match.group("word"):
        return NEAREST_STEP[re.sub(r"\s+", " ", match.group("word").lower())]
    number = float(match.group("num").replace(",", ""))
    unit = (match.group("unit") or "").lower()
    if unit.startswith("b"):
        return number * (0.01 if unit in ("bp", "bps") or unit.startswith("basis") else 1e9)
    return number * SCALES.get(unit, 1.0)  # %, pp and points are 1


def tolerance_for(target: Quantity, criterion_tolerance: str, prompt: str) -> Tolerance:
    """The stated tolerance (criterion first, then prompt), else the criterion's precision."""
    stated = _stated_tolerance(criterion_tolerance, target)
    if stated is None:
        stated = _stated_tolerance(_tolerance_sentences(prompt), target)
    if stated is not None:
        return stated
    half = target.step / 2
    return Tolerance(target.value - half, target.value + half, f"precision of {target.text}")


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


@dataclass(frozen=True)
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
    if CHOICE.search(body) or SUPERLATIVE_CHOICE.search(body) or _prompt_choice(prompt, body):
        return "the criterion's claim is a choice or a named entity, not a number"
    return None


@functools.lru_cache(maxsize=4096)
def read_claim(criterion: str, prompt: str) -> Claim:
    body, tolerance_text = split_criterion(criterion)
    targets, conditions = _targets_and_conditions(body)
    spans = [(a.start, b.end) for a, b in find_ranges(body, targets)]
    subjects = []
    previous = 0
    for n, t in enumerate(targets):
        following = [u.start for u in targets[n + 1:]
                     if not any(a <= t.start < b and a <= u.start < b for a, b in spans)]
        words = content_tokens(body[previous:following[0] if following else len(body)])
        unit_words = content_tokens(t.noun or "")  # "years" is the unit, not the subject
        subjects.append(frozenset(words - {_digits(t.text)} - unit_words))
        if not any(a <= t.start < b for a, b in spans):
            previous = t.end
    context = frozenset((q.dimension, round(q.value, 9))
                        for q in [*conditions, *find_quantities(prompt)])
    return Claim(
        targets=tuple(targets),
        tolerances=tuple(_range_tolerance(body, t, targets)
                         or tolerance_for(t, tolerance_text, prompt) for t in targets),
        subjects=tuple(subjects), qualifiers=tuple(_qualifiers(body, t) for t in targets),
        mentioned=frozenset(key for key, _, _ in terms(body) if is_qualifier(key)),
        names=names_in(body), context=context,
        not_numeric=not_numeric_reason(body, prompt),
        file_deliverable=bool(FILE_DELIVERABLE.search(prompt)) and not REPLY_HERE.search(prompt),
        limit=bool(LIMIT_WORDS.search(body)),
        roles=tuple(_role(body, t) for t in targets))


def _role(body: str, target: Quantity) -> Role:
    """What a criterion's target is: a change ("falls by X"), the value compared with ("rose
    from X to Y": the answer's own 'from X' is then its claim, not an aside), or a level."""
    if CHANGE_BEFORE.search(body, max(0, target.start - 24), target.start):
        return "change"
    if COMPARISON.search(body, max(0, target.start - 40), target.start):
        return "compared"
    return "level"


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


def _digits(text: str) -> str:
    return re.sub(r"[^0-9.]", "", text).strip(".")


def _range_tolerance(body: str, target: Quantity, targets: list[Quantity]) -> Tolerance | None:
    """A criterion whose value is a range ('37-46 months') accepts either end at its precision
    and the answer's range must match it end for end (checked in `_decide`)."""
    for low, high in find_ranges(body, targets):
        if target in (low, high):
            return Tolerance(target.value - target.step / 2, target.value + target.step / 2,
                             f"end of the range {low.text} to {high.text}")
    return None


def _near(q: Quantity, target: Quantity, tolerance: Tolerance) -> bool:
    """Close enough to be a claim about the target: inside its tolerance or within NEAR."""
    value = _display(q, target)
    if tolerance.contains(value):
        return True
    if target.value == 0:
        return abs(value) <= 10 * target.step
    ratio = value / target.value
    return NEAR[0] <= ratio <= NEAR[1]


def _is_context(q: Quantity, context: Collection[tuple[str, float]], target: Quantity) -> bool:
    return (q.dimension, round(q.value, 9)) in context and abs(q.value - target.value) > target.step


def _alternatives(answer: str, values: list[Quantity], matched: list[Quantity]) -> bool:
    """A matching value offered beside another as alternatives: 'X or Y', 'X / Y'.

    Both must be of the same order (within 3x): "NOK 1,940m, or NOK 48.50 per share" restates
    one figure in other terms rather than offering two.
    """
    hits = {id(q) for q in matched}
    for a, b in itertools.pairwise(values):
        if b.start - a.end > 30 or (id(a) in hits) == (id(b) in hits):
            continue
        gap = answer[a.end:b.start]
        same_order = a.value and b.value and 1 / 3 <= b.value / a.value <= 3
        if same_order and ALTERNATIVE_GAP.fullmatch(gap):
            return True
    return False


def _named(reading: Reading, index: int, names: frozenset[str]) -> bool:
    """Whether a value's label (else its segment) names everyone the criterion names."""
    if not names:
        return False
    own = reading.label_names[index]
    return names <= (own if own else reading.segment_names[reading.segment_of[index]])


def _names_another(reading: Reading, index: int, names: frozenset[str]) -> bool:
    """A value said of something else the answer names ("Exit Multiple Approach: $46.22" when
    the criterion names the Gordon Growth Model)."""
    own = reading.label_names[index]
    return bool(names and own and not names & own)


def _labelled_apart(reading: Reading, other: int, bound: int, subject: frozenset[str]) -> bool:
    """The other value is said of something the criterion does not name ("US 21.4%") while the
    bound one carries a word of the criterion the other lacks ("UK 25.0%")."""
    own, theirs = reading.labels[bound], reading.labels[other]
    return bool(theirs - subject) and bool((own & subject) - theirs)


def _score(reading: Reading, index: int, subject: frozenset[str], names: frozenset[str]) -> int:
    segment = reading.segment_of[index]
    return (10 * _named(reading, index, names) + 2 * len(subject & reading.labels[index])
            + len(subject & reading.segments[segment]))


def check_target(target: Quantity, tolerance: Tolerance, answer: str,
                 context: Collection[tuple[str, float]] = (), subject: frozenset[str] = frozenset(),
                 names: frozenset[str] = frozenset(), limit: bool = False,
                 role: Role = "level", qualifiers: frozenset[str] = frozenset(),
                 mentioned: frozenset[str] = frozenset()) -> TargetCheck:
    """Whether the answer states the target where it speaks of the target's subject, and not
    only in values it says of a rival of that subject (`_said_of_another`; `qualifiers` are the
    criterion's terms that may say which value it means, `mentioned` all its terms)."""
    check = _bind(target, tolerance, answer, context, subject, names, limit, role)
    reading = read_answer(answer)
    kin = [i for i, q in enumerate(reading.quantities) if q.compatible(target)]
    if (not qualifiers or check.outcome not in ("pass", "fail") or check.hedged
            or len(kin) < 2):
        return check  # no other value of the target's kind can be said of its qualifier
    deciding = {id(q) for q in (check.matched if check.outcome == "pass" else check.missed)}
    holders = {w: list(itertools.islice(
        (j for group in reading.qualified.holders.get(w, ()) for j in group
         if reading.quantities[j].compatible(target)), 2)) for w in qualifiers}
    notes = [_said_of_another(reading, i, holders, mentioned) for i in kin
             if id(reading.quantities[i]) in deciding]
    if notes and len(notes) == len(deciding) and all(notes):
        return replace(check, outcome="other_subject", note=notes[0])
    return check


def _said_of_another(reading: Reading, index: int, holders: dict[str, list[int]],
                     mentioned: frozenset[str]) -> str | None:
    """Why the value at `index` is said of another subject than the criterion's, or None.

    It is when it is said of a qualifier the criterion does not name (Tier-1, FY2023, 'active
    treatment', 30 days) of the same kind as one the criterion names (Tier-2, FY2024,
    'placebo', 14 days), which the answer says of another value of the target's kind instead:
    "7.9% with active treatment vs 3.1% with placebo" is no placebo rate of 7.9%. `holders`:
    per criterion qualifier, the values of the target's kind said of it.
    """
    qualified = reading.qualified
    own = qualified.said[index]
    for wanted in sorted(set(holders) - own):
        for holder in (j for j in holders[wanted] if j != index):
            for rival in sorted(own - mentioned):
                if _same_kind(reading, (rival, index), (wanted, holder)):
                    return (f"the answer gives {reading.quantities[index].text} for "
                            f"{qualified.written[rival]} and {reading.quantities[holder].text} "
                            f"for {qualified.written[wanted]}")
    return None


def _same_kind(reading: Reading, one: tuple[str, int], other: tuple[str, int]) -> bool:
    """Whether two (term, the value it is said of) pairs name one kind of thing: one code with
    two values (tier:1, tier:2), terms heading the columns or rows of one table, or terms in
    one frame in one segment: as far from their values, each tied to it by the same word
    ("4.6% in the test group against 3.9% in the control group": 'in' ties both)."""
    (a, i), (b, j) = one, other
    if ":" in a and ":" in b:
        return a.split(":")[0] == b.split(":")[0]
    qualified = reading.qualified
    if qualified.headings.get(a, frozenset()) & qualified.headings.get(b, frozenset()):
        return True
    if reading.segment_of[i] != reading.segment_of[j]:
        return False
    mine, theirs = qualified.nearby[i], qualified.nearby[j]
    places = {d for t, d in mine if t == a} & {d for t, d in theirs if t == b}
    return any((t, tie) in theirs for t, tie in mine for place in places
               if t not in (a, b) and 0 < tie / place < 1)


def _bind(target: Quantity, tolerance: Tolerance, answer: str,
          context: Collection[tuple[str, float]], subject: frozenset[str],
          names: frozenset[str], limit: bool, role: Role) -> TargetCheck:
    """Whether the answer states the target where it speaks of the target's subject.

    A value binds to the target through its label (the words since the previous value) and its
    segment (sentence, line, list item, table row): if the criterion names someone, only values
    said of them count; else the values whose label and segment share most words with the
    criterion. A bound value near the target decides; a bound value far from it fails the
    criterion only when it is plainly the same subject in the same unit; otherwise the answer
    gives no evidence (not_found).
    """
    reading = read_answer(answer)
    if tolerance.basis.startswith("end of the range"):
        return _range_end(target, tolerance, reading)
    pool = list(reading.quantities) + (list(reading.thresholds) if limit else [])
    candidates = [i for i, q in enumerate(pool)
                  if i < len(reading.quantities)
                  and (role == "compared" or i not in reading.references)
                  and (role == "change" or i not in reading.changes)
                  and _compatible(q, target) and not _is_context(q, context, target)]
    if limit:
        candidates += [i for i in range(len(reading.quantities), len(pool))
                       if _compatible(pool[i], target) and tolerance.contains(
                           _display(pool[i], target))]
    if not candidates:
        return TargetCheck(target, tolerance, [], [], False, "not_found")
    if limit and any(i >= len(reading.quantities) for i in candidates):
        matched = [pool[i] for i in candidates if i >= len(reading.quantities)]
        return TargetCheck(target, tolerance, matched, [], False, "pass")
    named = [i for i in candidates if _named(reading, i, names)]
    if named:
        candidates = named
    scores = {i: _score(reading, i, subject, names) for i in candidates}
    best = max(scores.values())
    bound = [i for i in candidates if scores[i] == best] if best > 0 else candidates
    near = [i for i in bound if _near(reading.quantities[i], target, tolerance)]
    if not near and best > 0 and len(bound) == 1 and role != "change":
        i = bound[0]
        q = reading.quantities[i]
        shared = len(subject & reading.labels[i])
        alone = sum(_strictly_same_unit(reading.quantities[j], target) for j in candidates) == 1 \
            and not any(_near(reading.quantities[j], target, tolerance) for j in candidates)
        plainly = bool(named) or (shared >= 2 and shared >= 0.6 * len(subject)) \
            or (shared >= 1 and alone)  # the answer's only value in this unit, said of it
        if plainly and _strictly_same_unit(q, target):
            return TargetCheck(target, tolerance, [], [q], False, "fail")
    if not near:  # the best-bound value is another quantity; a near one said of the subject
        close = [i for i in candidates if scores[i] > 0
                 and _near(reading.quantities[i], target, tolerance)]
        if close:
            top = max(scores[i] for i in close)
            bound = near = [i for i in close if scores[i] == top]
            best = top
    if near:
        segments = {reading.segment_of[i] for i in near}
        beside = [i for i in candidates if reading.segment_of[i] in segments]
        decided = _decide(target, tolerance, reading, near, beside)
        if decided.hedged:
            return decided
        rivals = [i for i in candidates if i not in bound and 2 * scores[i] >= best > 0
                  and not named and _near(reading.quantities[i], target, tolerance)
                  and not _names_another(reading, i, names)
                  and not any(_labelled_apart(reading, i, j, subject) for j in near)
                  and tolerance.contains(_display(reading.quantities[i], target))
                  != (decided.outcome == "pass")]
        if rivals:  # another value as plainly about the subject says otherwise
            return TargetCheck(target, tolerance, decided.matched, decided.missed, False,
                               "not_found")
        return decided
    return TargetCheck(target, tolerance, [], [], False, "not_found")


def _range_end(target: Quantity, tolerance: Tolerance, reading: Reading) -> TargetCheck:
    """One end of a criterion's range against the ends of the answer's ranges."""
    ends = [q for r in reading.ranges for q in r if _compatible(q, target)
            and _near(q, target, tolerance)]
    matched = [q for q in ends if tolerance.contains(_display(q, target))]
    if not ends:
        return TargetCheck(target, tolerance, [], [], False, "not_found")
    missed = [q for q in ends if q not in matched]
    return TargetCheck(target, tolerance, matched, missed, False, "pass" if matched else "fail")


def _decide(target: Quantity, tolerance: Tolerance, reading: Reading, near: list[int],
            bound: list[int]) -> TargetCheck:
    """Pass when the bound values near the target all meet it and none is hedged; fail when
    they all miss it or a hedge offers it beside another value; undecided when they differ."""
    quantities = [reading.quantities[i] for i in near]
    matched = [q for q in quantities if tolerance.contains(_display(q, target))]
    missed = [q for q in quantities if not tolerance.contains(_display(q, target))]
    in_range = {id(q) for r in reading.ranges for q in r}
    standalone = [q for q in matched if id(q) not in in_range]
    ids = {id(q) for q in quantities}
    ranges = [r for r in reading.ranges
              if (id(r[0]) in ids or id(r[1]) in ids) and _compatible(r[0], target)
              and _compatible(r[1], target)
              and not all(tolerance.contains(_display(q, target)) for q in r)]
    beside = [reading.quantities[i] for i in bound]
    hedged = (bool(ranges) and not standalone) or _alternatives(
        reading.text, beside, [q for q in beside if tolerance.contains(_display(q, target))])
    if matched and missed and not hedged:
        return TargetCheck(target, tolerance, matched, missed, False, "not_found")
    outcome: Literal["pass", "fail"] = "pass" if matched and not hedged else "fail"
    return TargetCheck(target, tolerance, matched, missed, hedged, outcome)


def _strictly_same_unit(q: Quantity, target: Quantity) -> bool:
    if q.dimension != target.dimension or q.per != target.per:
        return False
    if q.dimension == "plain":
        return bool(q.noun and q.noun == target.noun)
    return q.currency == target.currency


def grade_numeric(criterion: str, answer: str | None, prompt: str = "",
                  artifacts: bool = False) -> CodeVerdict:
    """pass / fail / not_applicable for one criterion and one answer, with the reason.

    `artifacts`: whether the run folder holds files the agent wrote (a file deliverable the
    checker does not read).
    """
    too_long = unread(criterion=criterion, prompt=prompt, answer=answer)
    if too_long:
        return CodeVerdict("not_applicable", too_long, [])
    claim = read_claim(criterion, prompt)
    if not claim.targets:
        return CodeVerdict("not_applicable", "the criterion states no numeric value", [])
    if claim.not_numeric:
        return CodeVerdict("not_applicable", claim.not_numeric, [])
    if claim.file_deliverable:
        where = ("the run folder holds the agent's files, which the checker does not read"
                 if artifacts else "the run folder does not hold it")
        return CodeVerdict("not_applicable", f"the deliverable is a file ({where})", [])
    if not answer or not answer.strip():
        return CodeVerdict("fail", "the answer is empty", [])
    bare = BARE_ANSWER.fullmatch(answer)
    if bare and len(claim.targets) == 1:
        return _bare_answer(claim, bare.group(1))
    reading = read_answer(answer)
    checks = [check_target(t, tol, answer, claim.context, subject, claim.names, claim.limit,
                           role, qualifiers, claim.mentioned)
              for t, tol, subject, role, qualifiers in zip(
                  claim.targets, claim.tolerances, claim.subjects, claim.roles, claim.qualifiers,
                  strict=True)]
    elsewhere = [c for c in checks if c.outcome == "other_subject"]
    if elsewhere:
        return CodeVerdict("not_applicable", "; ".join(
            f"{c.note}, so its value for the criterion's subject is not {c.target.text}"
            for c in elsewhere), checks)
    missing = [c for c in checks if c.outcome == "not_found"]
    if missing:
        return _missing(claim, reading, checks, missing, artifacts)
    failed = [c for c in checks if c.outcome == "fail"]
    if not failed:
        return CodeVerdict("pass", "; ".join(
            f"{c.matched[0].text} meets {c.target.text} ({c.tolerance.basis})" for c in checks),
            checks)
    parts = []
    for c in failed:
        said = ", ".join(q.text for q in c.matched + c.missed) or "nothing near it"
        kind = "hedged between" if c.hedged else "states"
        parts.append(f"answer {kind} {said}; target {c.target.text} ({c.tolerance.basis})")
    return CodeVerdict("fail", "; ".join(parts), checks)


def _bare_answer(claim: Claim, number: str) -> CodeVerdict:
    """An answer that is one bare number is the value asked for, in the criterion's unit."""
    target, tolerance = claim.targets[0], claim.tolerances[0]
    value = float(number.replace(",", "").replace("−", "-"))
    if target.dimension != "plain" and target.scale != 1.0 and abs(value) < abs(target.value):
        value *= target.scale  # "2433" for "$2,470 million"
    q = replace(target, value=value, text=number, start=0, end=len(number))
    check = TargetCheck(target, tolerance, [q] if tolerance.contains(value) else [],
                        [] if tolerance.contains(value) else [q], False,
                        "pass" if tolerance.contains(value) else "fail")
    if check.outcome == "pass":
        return CodeVerdict("pass", f"the answer {number} meets {target.text} ({tolerance.basis})",
                           [check])
    return CodeVerdict("fail", f"the answer is {number}; target {target.text} ({tolerance.basis})",
                       [check])


def _missing(claim: Claim, reading: Reading, checks: list[TargetCheck],
             missing: list[TargetCheck], artifacts: bool) -> CodeVerdict:
    names = ", ".join(c.target.text for c in missing)
    if reading.saved_file:
        where = ("the run folder holds the agent's files, which the checker does not read"
                 if artifacts else "the run folder does not hold it")
        return CodeVerdict("not_applicable",
                           f"the deliverable is a file ({where}); the answer states no value "
                           f"near {names}", checks)
    if reading.refusal and not any(c.matched for c in checks):
        return CodeVerdict("fail", f"the answer declines or could not find the value ({names})",
                           checks)
    if not reading.quantities and not reading.thresholds:
        return CodeVerdict("fail", f"the answer states no number at all; target {names}",
                           checks)
    return CodeVerdict("not_applicable", f"the answer states no value near {names}", checks)


def code_verdicts(task: Task, attempt: Attempt) -> dict[str, CodeVerdict]:
    """The code checker's verdict on every criterion of an attempt that has an answer."""
    if attempt.answer is None:
        return {}
    return {c.id: grade_numeric(c.text, attempt.answer, task.prompt, bool(attempt.artifacts))
            for c in task.criteria}


def code_grades(attempt: Attempt, verdicts: dict[str, CodeVerdict]) -> list[CriterionGrade]:
    return [CriterionGrade(attempt_id=attempt.id, criterion_id=criterion_id, grader="code",
                           verdict=v.verdict, rationale=v.reason)
            for criterion_id, v in verdicts.items()]


def _evidence(attempt: Attempt, judge: CriterionGrade, verdict: CodeVerdict) -> dict[str, Any]:
    return {
        "attempt": attempt.id, "grader": judge.grader, "judge_rationale": judge.rationale[:500],
        "code_reason": verdict.reason,
        "targets": [{"text": c.target.text, "value": c.target.value,
                     "tolerance": [c.tolerance.low, c.tolerance.high],
                     "tolerance_basis": c.tolerance.basis,
                     "answer_values": [q.text for q in c.matched + c.missed],
                     "quotes": [attempt.answer[max(0, q.start - 60):q.end + 20].strip()
                                for q in c.matched + c.missed] if attempt.answer else []}
                    for c in verdict.checks],
    }


def judge_disagrees_with_code(task: Task, attempt: Attempt, judge_grades: list[CriterionGrade],
                              verdicts: dict[str, CodeVerdict]) -> Iterator[Finding]:
    """Where a judge and the code checker disagree on a numeric criterion.

    judge fail + code pass: possible grader error (`judge_failed_value_within_tolerance`);
    judge pass + hedged answer: possible hedge credited (`judge_credited_hedge`);
    judge pass + code fail: possible unearned credit (`judge_passed_value_outside_tolerance`).
    """
    for judge in judge_grades:
        verdict = verdicts.get(judge.criterion_id)
        if verdict is None or judge.verdict not in ("pass", "fail"):
            continue
        if verdict.verdict == "not_applicable" or verdict.verdict == judge.verdict:
            continue
        if judge.verdict == "fail":
            check, message = ("judge_failed_value_within_tolerance",
                              f"{judge.grader} failed {attempt.id}, but its answer states a value "
                              f"within tolerance: {verdict.reason}")
        elif verdict.hedged:
            check, message = ("judge_credited_hedge",
                              f"{judge.grader} passed {attempt.id}, whose answer hedges: "
                              f"{verdict.reason}")
        else:
            check, message = ("judge_passed_value_outside_tolerance",
                              f"{judge.grader} passed {attempt.id}, but {verdict.reason}")
        yield Finding(task_id=task.id, criterion_id=judge.criterion_id, check=check,
                      severity="warning", message=message,
                      evidence=_evidence(attempt, judge, verdict))
