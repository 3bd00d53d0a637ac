"""Quantities in rubric and answer text: parse, normalise, and decide whether two agree.

Handles currency symbols and codes, %, percentage points, basis points, multiples (4.6x),
scale words and suffixes (k, m, mm, M, bn, B, million, billion), thousands separators, negatives
with a sign or in parentheses, and ranges. Identifiers are not quantities: citations and section
numbers ("29 CFR 1910.1200(b)(2)", "Rule 26(a)(1)", "Part 487", "§ .1600"), parenthesised
subsections and list markers ("(14)", "(1)", "1."), form, docket, model and account numbers
("Form 10-K", "No. 21-cv-1234", "K01", "FY2025", "PL/45000/2023"), years, dates and thresholds
("more than 5%", "13 or more"). Values are normalised to base units (currency in units,
percentages in percent), so "$2.1bn" and "$2,100M" compare equal. A plain number keeps the word
it counts ("45 days").
Swiss apostrophes separate thousands ("CHF 48'600'000"), and a superscript glued to a value
("£1.30¹") is a footnote's mark, not a digit.

Every pass is linear: identifiers are found by one scan, quantities by another, and each
quantity's context is read from a bounded window around it, never from all the text before it.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from rubric_audit.checks import units

Dimension = Literal["currency", "percent", "multiple", "plain"]

CURRENCY_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "US$": "USD",
                    "A$": "AUD",
                    "C$": "CAD", "NZ$": "NZD", "HK$": "HKD", "S$": "SGD", "R$": "BRL"}
CURRENCY_CODES = ("USD", "EUR", "GBP", "NOK", "SEK", "DKK", "CHF", "JPY", "CAD", "AUD", "CNY",
                  "INR", "HKD", "SGD", "NZD", "ZAR", "BRL", "MXN")
SCALES = {"k": 1e3, "thousand": 1e3, "thousands": 1e3, "m": 1e6, "mm": 1e6, "mn": 1e6,
          "million": 1e6, "millions": 1e6, "bn": 1e9, "b": 1e9, "billion": 1e9, "billions": 1e9,
          "tn": 1e12, "trillion": 1e12}
MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|"
          "december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
NUMBER_WORDS = ("one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
                "fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|"
                "sixty|seventy|eighty|ninety|hundred")
WINDOW = 48  # characters of context read on each side of a number
MAX_READ_CHARS = 256 * 1024
"""The longest text the number reader reads. A longer prompt or answer is a dump or a log, not
a deliverable graded value by value, and each pass over it costs seconds: every check that would
read it abstains instead, and `input_text_too_long_to_read` says which text and why."""


class NeedsWord:
    """A pattern searched only where a word it cannot match without stands in the text (or
    the window of it searched): most texts and windows hold none, and a search tries the
    pattern at every position. Patterns that end where their window ends ("... compared with
    $") gain most, as a search tries every start in the window."""

    _last: tuple[str, str | None] = ("", "")  # the text last searched, lower-cased once

    def __init__(self, pattern: re.Pattern[str], needs: tuple[str, ...]) -> None:
        self.pattern, self.needs = pattern, needs

    def _absent(self, text: str, start: int, end: int | None) -> bool:
        if NeedsWord._last[0] is not text:  # one answer is searched many times in a row
            lowered = text.lower()
            NeedsWord._last = (text, lowered if len(lowered) == len(text) else None)
        whole = NeedsWord._last[1]
        window = whole[start:end] if whole is not None else text[start:end].lower()
        return not any(word in window for word in self.needs)

    def search(self, text: str, start: int = 0, end: int | None = None) -> re.Match[str] | None:
        if self._absent(text, start, end):
            return None
        return self.pattern.search(text, start, len(text) if end is None else end)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return iter(()) if self._absent(text, 0, None) else self.pattern.finditer(text)


THRESHOLD = NeedsWord(re.compile(
    r"\b(?:more|less|greater|fewer|higher|lower)\s+than\s*$|(?:\b(?:above|below|over|under|"
    r"exceeding|at\s+least|at\s+most|up\s+to|minimum\s+of|maximum\s+of)|[<>≤≥]=?)\s*$", re.I),
    ("than", "above", "below", "over", "under", "exceeding", "least", "most", "up", "minimum",
     "maximum", "<", ">", "≤", "≥"))  # "turnover 12.7%" is no threshold
# "250+ staff" is a threshold; "£1,850 + VAT" is an amount with tax added
THRESHOLD_AFTER = re.compile(r"\s*(?:\+(?![\d$€£¥]|\s*(?:VAT|GST|sales\s+tax|tax)\b)|"
                             r"or\s+(?:more|fewer|less|greater|higher|lower|above|below|over|under)\b)", re.I)
REFERENCE = NeedsWord(re.compile(r"(?:clause|section|article|note|schedule|paragraph|item|page|§|"
                                  r"\bno\.?|number|amendment|version)\s*$", re.I),
                       ("clause", "section", "article", "note", "schedule", "paragraph", "item",
                        "page", "§", "no", "number", "amendment", "version"))
MONTH_BEFORE = NeedsWord(re.compile(rf"\b(?:{MONTHS})\.?\s*$", re.I),
                          ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                           "nov", "dec"))
MONTH_AFTER = re.compile(rf"^\s*(?:{MONTHS})\b", re.I)
CURRENCY_RANGE_BEFORE = NeedsWord(re.compile(
    r"(?:[$€£¥]|\b[A-Z]{3})\s?[\d,.]+\s?(?:[kKmMbB]|bn|mm|mn)\s*(?:-|–|—|to)\s*$"),
    ("-", "–", "—", "to"))
PER_BEFORE = NeedsWord(re.compile(r"\bper\s*$", re.I), ("per",))
UNIT_SLASH_BEFORE = re.compile(r"(?<![\w/])[A-Za-z]{1,3}/$")  # "L/100 km", "kg/1000"
# "fourteen (14) days", "ninety thousand dollars ($90k)": the bracket restates the words
NUMBER_WORD_BEFORE = re.compile(rf"\b(?:{NUMBER_WORDS}|thousand|million|billion)"
                                r"(?:\s+(?:dollars?|euros?|pounds?(?:\s+sterling)?|yen|francs?))?\s*$", re.I)

# Words that name what follows them: "Section 3.2", "Part 487", "Form 10-K", "Rule 26(a)(1)".
_REFERENCE_WORDS = (
    "sections?|secs?|subsections?|subparagraphs?|parts?|chapters?|titles?|rules?|articles?|arts?|"
    "clauses?|paragraphs?|paras?|schedules?|items?|notes?|exhibits?|appendix|appendices|annex|"
    "forms?|dockets?|cases?|models?|accounts?|acct|polic(?:y|ies)|claims?|invoices?|tickets?|"
    "versions?|steps?|tables?|figures?|figs?|pages?|pp|lines?|box|codes?|regulations?|regs?|"
    "standards?|tiers?|phases?|periods?|rooms?|suites?|floors?|amendments?|questions?|cfr|usc|u\\.s\\.c|"
    "ifrs|ias|asc|irc|iso|stages?|levels?|scenarios?|series|lots?|buildings?|routes?|"
    "orders?|jobs?|contracts?|loans?|patents?|bills?|acts?|years?|quarters?|months?|weeks?|days?|"
    "options?|nos?|numbers?|ids?|refs?|references?|sku|serial|reg|scopes?|workstreams?|waves?|"
    "categor(?:y|ies)|"
    "drg|cpt|icd(?:-10)?|ndc|hcpcs|naics|npi|isin|cusip|ein|"
    "po|p\\.o|rf[qpi]s?|grns?|asns?|ncrs?|batch(?:es)?|protocols?|requisitions?|waybills?|awbs?")
# "Term 2", "Ward 3" or "zone-4" names a period or a place; "a term of 5 years" does not
_PLACE_WORDS = ("(?:term|semester|trimester|ward|site|store|plant|gate|station|berth|bay|dock|"
                "platform|zone|region|shift|team|unit|cohort|arm|group|round|cycle|grade|centre|"
                "center|branch|depot|hall|court|pier|terminal|kiln|furnace|tank|well|pit|mine|"
                "reactor|turbine|vessel|lock|bridge|junction|basin|quay|wharf|yard|aisle|runway|"
                "hangar)s?")
_CODES = "|".join(CURRENCY_CODES)
# A currency named in words after the amount; "dollars" alone names no one currency
CURRENCY_WORDS = {"us dollar": "USD", "euro": "EUR", "pounds sterling": "GBP",
                  "pound sterling": "GBP", "yen": "JPY", "swiss franc": "CHF"}
CURRENCY_WORD = re.compile(r"\s?((?:us\s+)?dollars?|euros?|pounds?\s+sterling|yen|swiss\s+francs?)"
                           r"\b", re.I)
_PAREN = r"\((?:\d{1,3}|[A-Za-z]{1,4})\)"
_NOT_AN_AMOUNT = (r"(?!\s?(?:%|percent|per\s?cent|percentage|bps?\b|basis|[x×]\b|million|"
                  r"billion|thousand|bn\b|mm\b|[kmb]\b))")
_ID_TAIL = rf"(?>(?:\d[\w.\-/]*|\.\d[\w.\-/]*)(?:{_PAREN})*){_NOT_AN_AMOUNT}"
# The alternatives are grouped by the character they start with (a symbol, a digit, a letter,
# a line's start), each group gated by one look at that character, so a position none can start
# at is passed once, not once per alternative; within a group they keep their order.
IDENTIFIER = re.compile(
    rf"""
    §+\s*(?:{_ID_TAIL}|[\w.\-]+)(?:\s*(?:,|and|or|to|through|[-–])\s*{_ID_TAIL})*
    |\#\s*\d[\w.\-/]*
    |[$€£]\s?'?000s?\b
    |\b(?=\d)(?:
        \d+\s+(?:C\.?F\.?R|U\.?S\.?C|Fed\.?\s*Reg|F\.\s*(?:Supp\.\s*)?\d?d?|U\.S|S\.\s*Ct)\.?
            \s*(?:§+\s*)?[\d.\-]+(?:{_PAREN})*
        |\d[\d.]*(?:{_PAREN})+
        |\d+(?:[-/]\d+){{2,}}\b
        |(?-i:\d+(?:/\d+)+/[A-Z]{{2,5}})\b(?!/)
        |\d+(?:\.\d+){{2,}}\b
        |\d{{1,2}}/\d{{1,2}}\b(?!\s?%)
        |\d+:\d+(?:-[\w\-]+)?\b
        |(?-i:\d+-(?:[A-Z]{{1,4}}\b|[a-z]{{1,3}}-\d)[\w\-]*))
    |\b(?=[a-z])(?:
        (?-i:(?=[A-Z]))(?=[a-z]+(?:\s+[\d.]|-\d)){_PLACE_WORDS}\s+{_ID_TAIL}
        |(?=[a-z]+-\d){_PLACE_WORDS}-\d{{1,4}}\b
        |(?=[a-z][\w.\-]*\.?\s*(?:No\.?\s*|\#\s*)?[\d.(])
            (?:{_REFERENCE_WORDS})\.?\s*(?:No\.?\s*|\#\s*)?(?:{_ID_TAIL}|{_PAREN}(?:{_PAREN})*)
            (?:\s*(?:,|and|or|to|through|[-–])\s*(?:{_ID_TAIL}|{_PAREN}(?:{_PAREN})*))*
        |(?-i:[A-Z][A-Za-z]*-\d[\w\-]*)
        |(?-i:[A-Z][A-Za-z]*/\d+[/\-]\w[\w\-/]*)
        |(?-i:[A-Z]{{2}}\s?\d{{2,5}}\b)(?![.,]\d|\s?%)
        |(?=[a-z]+\d)(?!(?:{_CODES})\d)[A-Za-z]+\d+(?:[-–]\d+)+\b)
    |(?m:^[ \t>*\-]*\(?\d{{1,3}}[.)](?=[ \t]))
    """,
    re.X | re.I,
)

DECIMAL_COMMA = re.compile(r"\d{1,3}(?:\.\d{3})*,\d\d")  # before a trailing €: "18,60 €"
FOOTNOTE_MARKS = "¹²³⁴⁵⁶⁷⁸⁹⁰"  # "£1.30¹": a superscript glued to a digit marks a footnote
QUANTITY = re.compile(
    rf"""
    (?<![\w.,%)])
    (?P<sign>(?:[-−]|(?i:negative|minus)\s)(?=\s?(?:[$€£¥]|\d|(?:{_CODES})\b))|–(?=[$€£¥\d]))?
    (?:(?P<cur_sym>(?:US|A|C|NZ|HK|S|R)?\$|[€£¥])|(?P<cur_pre>(?:{_CODES}))\s?)?
    (?P<sign2>[-−])?
    (?P<num>(?>\d{{1,3}}(?:\.\d{{3}})*,\d\d(?=\s?€)|\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?
       |\d{{1,3}}(?:['\u2019]\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+))(?P<frac>[¼½¾⅓⅔⅛⅜⅝⅞])?
    (?:\s?(?P<scale_word>(?i:billion|million|thousand|trillion|bn|(?(cur_sym)mm|(?(cur_pre)mm|(?!)))
       |mn|tn))\b
       |(?P<scale>[kKmMbB])(?![A-Za-z])|(?P<pence>p)(?![A-Za-z\d]))?
    (?:[\s-]?(?P<unit>%|percent\b|per\s?cent\b|percentage\s+points?\b|pp\b|bps?\b|basis\s+points?\b
       |(?:points?|pts?)\b(?![\s-]+(?:card|programme|program|scheme|system|balance))
       |[x×](?![A-Za-z])|times\b))?
    (?:\s?(?P<cur_post>{_CODES})\b|\s?(?P<cur_sym_post>€))?
    (?:(?<=\d)(?=[{FOOTNOTE_MARKS}])|(?![\w]))
    """,
    re.X,
)
# A unit of measure with an SI prefix, alone or compound: "mg", "µg·h/mL", "mmol/L", "MWh".
_SI_PREFIX = "(?:[pnµμu]|mc|[mcdkKMGT])"
_SI_BASE = "(?:g|L|l|mol|Wh|W|J|Pa|Hz)"
_SI_FACTOR = rf"(?:{_SI_PREFIX}?{_SI_BASE}|hr|h|min|s|day|d)"
MEASURE_UNIT = rf"{_SI_PREFIX}?{_SI_BASE}(?:[·⋅/]{_SI_FACTOR})*(?![\w·⋅/])"
MEASURE_AFTER = re.compile(rf"\s?({MEASURE_UNIT})")
_PER_STOP = (r"(?!(?:per|and|or|in|on|of|for|to|at|the|a|an|vs|with|from|by|is|was|were|are|be|"
             r"where|when|which|that|who|whose|if|as|than|under|over|after|before|into|through|"
             r"across|during|each|every|generally|only|including|excluding|plus|minus|less|"
             r"rather|instead|against|versus|it|its|this|these|those|so|but)\b)")
PER_UNIT = re.compile(rf"\s?(?:/\s?|per\s+)((?:\d[\d,]*[\s-]+)?[A-Za-z][A-Za-z-]*"
                      rf"(?:\s+{_PER_STOP}[a-z][a-z-]*){{0,2}})"
                      r"(?:\s?(?:/\s?|per\s+)([A-Za-z]+))?", re.I)
PERIODS = frozenset(("day", "week", "month", "year", "quarter", "hour", "night", "annum", "yr",
                     "mo"))
# a line's list dash joins nothing, nor a spaced em dash: "£17.25m — £1.35m below" is an aside
RANGE_JOIN = re.compile(r"^(?:[ \t]*(?:-|–|to|and)[ \t]*|—)$", re.I)
NOUN = re.compile(r"^\)?[\s-]?([A-Za-z]{2,})(?:[\s-]([A-Za-z]{2,}))?")
QUALIFIERS = frozenset(("business", "calendar", "working", "consecutive", "full", "additional",
                        "new", "total", "net", "gross", "separate", "distinct"))
DURATION_NOUNS = frozenset(("minute", "hour", "day", "week", "month", "quarter", "year"))
NOT_NOUNS = frozenset("""
and or to of in on at by for from with the a an than as is are was were be per each vs versus
over under above below after before between into more less fewer up down out off if but so
""".split())


@dataclass(frozen=True)
class Quantity:
    """A value in base units with what it measures and how precisely it was written."""

    value: float
    dimension: Dimension
    currency: str | None
    scale: float  # 1e9 for "2.1bn"; 0.01 for basis points (in percent)
    decimals: int
    text: str
    start: int
    end: int
    noun: str | None = None  # what a plain number counts: "day" in "45 days"
    per: str | None = None  # what a rate is per: "rsf" in "$40.00/RSF", "share" in "per share"
    points: bool | None = None  # a percent written as points (pp, bps) or not (%); None: unsaid
    measure: str | None = None  # the pint unit of a measured value: "foot" in "1,150 ft"
    head: str | None = None  # the plural noun `noun` qualifies: "account" in "40 student accounts"

    @property
    def step(self) -> float:
        """One unit of the last written digit, in base units ("2.1bn" -> 1e8)."""
        return 10.0 ** -self.decimals * self.scale

    def compatible(self, other: Quantity) -> bool:
        """Same kind of thing: currencies must agree when both are named, and so must the
        things two plain numbers count."""
        if self.dimension != other.dimension:
            return False
        if self.currency and other.currency and self.currency != other.currency:
            return False
        if self.per and other.per and (_per_count(self.per) != _per_count(other.per)
                                       or not _same_per(self.per, other.per)
                                       or _per_period(self.per) != _per_period(other.per)):
            return False  # "$0.0034 per stream" is not per 1,000 streams, per rack or per year
        if self.measure and other.measure:
            return units.same_kind(self.measure, other.measure)  # 1,150 ft is 350.52 m
        if (self.measure or other.measure) and (_counts_things(self, other)
                                                or _counts_things(other, self)):
            return False  # "350 m" is not 350 visitors
        if not (self.noun and other.noun) or self.counts_as(other):
            return True
        return duration_ratio(self.noun, other.noun) is not None  # 3 days 4 hours; 2 years

    def counts_as(self, other: Quantity) -> bool:
        """Whether two counted nouns name one thing: the same first noun, or the same thing
        counted, a phrase's head ("1,140 student accounts" and "1,140 accounts"; "14 complaint
        lines" count lines)."""
        return self.noun == other.noun or (self.head or self.noun) == (other.head or other.noun)

    def other_points(self, other: Quantity) -> bool:
        """Whether one is in points (pp, bps) and the other in percent: as levels 312 bps is
        3.12%, as changes "fell 3.2%" is relative, not 3.2 percentage points."""
        return self.points is not None and other.points is not None and self.points != other.points

    def show(self) -> str:
        return self.text


def _counts_things(measured: Quantity, other: Quantity) -> bool:
    """Whether `other` counts a thing (a noun that is no unit) where `measured` is a measure."""
    return bool(measured.measure and other.noun and not units.unit_named(other.noun))


VULGAR_FRACTIONS = {"¼": 0.25, "½": 0.5, "¾": 0.75, "⅓": 1 / 3, "⅔": 2 / 3, "⅛": 0.125, "⅜": 0.375,
                    "⅝": 0.625, "⅞": 0.875}  # "1¾ hours" is 1.75 hours


def _decimals(num: str) -> int:
    return len(num.split(".")[1]) if "." in num else 0


def measure_unit(text: str) -> str:
    """A unit of measure written one way: "μg·h/ml", "ug⋅h/mL" and "mcg·h/mL" are "µg·h/mL"."""
    unit = re.sub(r"^(?:[μu]|mc)(?=[a-zA-Z])", "µ", text.strip())
    unit = re.sub(r"(?<=[/·⋅])(?:[μu]|mc)(?=[a-zA-Z])", "µ", unit).replace("⋅", "·")
    unit = re.sub(r"^K(?=[a-zA-Z])", "k", unit)
    return re.sub(r"(?<![a-z])l\b|(?<=[µmdcnp])l\b", "L", unit)


def _measure(after: str) -> str | None:
    """The pint unit a plain number is measured in, from the words right after it."""
    compound = units.compound_after(after)  # "40 kg per m³" before "kg"
    if compound:
        return compound
    si = MEASURE_AFTER.match(after)
    return units.si_unit(measure_unit(si.group(1))) if si else units.unit_after(after)


HYPHENED = re.compile(r"^\)?[\s-]?[A-Za-z]+-")  # "event-day staff" counts staff


def _counted(after: str) -> tuple[str | None, str | None]:
    """(noun, head): the word a plain number counts, singular and lower case ("45 business
    days" -> day), or the unit it is measured in ("1,240 ng/mL" -> ng/mL: its case tells mW
    from MW); and the plural noun that word qualifies ("1,140 student accounts" counts
    accounts, "346 dental procedures" procedures), but not after a word that is itself plural,
    a duration or a unit ("12 hour shifts" are 12 hours), nor across a hyphen."""
    unit = MEASURE_AFTER.match(after)
    if unit:
        return measure_unit(unit.group(1)), None
    match = NOUN.match(after)
    if not match:
        return None, None
    first = word = match.group(1).lower()
    second = (match.group(2) or "").lower()
    spaced = not HYPHENED.match(after)
    if second and (word in QUALIFIERS or (spaced and second.rstrip("s") in DURATION_NOUNS)):
        word = second  # "10 teaching weeks" counts weeks
    if word in NOT_NOUNS or _participle(word):
        return None, None
    noun = word[:-1] if word.endswith("s") and len(word) > 3 else word
    if (not second or not spaced or first != noun or not second.endswith("s") or len(second) <= 3
            or first.endswith("s") or second in NOT_NOUNS or second in NOT_PLURAL_NOUNS
            or first in DURATION_NOUNS or units.unit_named(first) is not None):
        return noun, None
    return noun, second[:-1]


def _participle(word: str) -> bool:
    """A verb's past participle after a count ("1,240 returned within 6 weeks") counts nothing
    of its own; "seed" and "speed" are nouns."""
    return word.endswith("ed") and len(word) > 5 and not word.endswith("eed")


NOT_PLURAL_NOUNS = frozenset("has this its thus plus minus does his yes always perhaps across "
                             "unless whereas less ours theirs".split())


SWISS_SEPARATOR = re.compile(r"['\u2019]")
SPACES = re.compile(r"\s+")
SYMBOL_BEFORE_PAREN = re.compile(r"([$€£¥])\s?\($")
SCALE_AFTER_PAREN = re.compile(r"\)\s?(bn|mm|mn|m|k|million|billion)\b", re.I)


def _quantity(match: re.Match[str], text: str) -> Quantity | None:
    g = match.groupdict()
    num = g["num"]
    if g["cur_sym_post"] and DECIMAL_COMMA.fullmatch(num):
        num = num.replace(".", "").replace(",", ".")  # "1.240,50 €": a decimal comma
    num = SWISS_SEPARATOR.sub(",", num)  # "48'600'000": Swiss thousands separators
    before = text[max(0, match.start() - WINDOW):match.start()]
    after = text[match.end():match.end() + WINDOW]
    currency = (CURRENCY_SYMBOLS.get(g["cur_sym"] or g["cur_sym_post"] or "") or g["cur_pre"]
                or g["cur_post"])
    scale_name = (g["scale_word"] or g["scale"] or "").lower()
    unit = SPACES.sub(" ", (g["unit"] or "").lower())
    if g["pence"] and not (currency or unit):
        currency = "GBP"  # "72.0p" is £0.720
    if unit in ("x", "×", "times"):
        dimension: Dimension = "multiple"
    elif unit:
        dimension = "percent"
    elif currency:
        dimension = "currency"
    else:
        dimension = "plain"
    if dimension == "plain" and (word := CURRENCY_WORD.match(after)):
        dimension = "currency"  # "1.68 million dollars" is $1.68m
        currency = CURRENCY_WORDS.get(SPACES.sub(" ", word.group(1).lower()).rstrip("s"))
    factor = 0.01 if g["pence"] and currency == "GBP" else SCALES.get(scale_name, 1.0)
    noun = measure = None
    if dimension == "plain" and factor == 1.0:
        whole = float(num.replace(",", ""))
        if "." not in num and "," not in num and 1900 <= whole <= 2100:
            return None  # a year
        if MONTH_BEFORE.search(before) or MONTH_AFTER.search(after):
            return None  # part of a date
        if REFERENCE.search(before):
            return None  # clause 14.1, section 3
        if PER_BEFORE.search(before) or UNIT_SLASH_BEFORE.search(before):
            return None  # "rate per 1,000 patient days", "9.4 L/100 km": a denominator
    head = None
    if dimension == "plain":  # "1.2 million m³" too; "1.79 million boxes" counts boxes
        (noun, head), measure = _counted(after), _measure(after)
    if dimension == "plain" and g["scale"] and g["scale"] not in "kK" and not currency \
            and not CURRENCY_RANGE_BEFORE.search(before):
        return None  # "5m" alone could be metres or months ("12.5k" is thousands);
        # "EUR 12.5m-12.9m" is a range
    if unit.startswith("b"):  # basis points, in percent
        factor *= 0.01
    value = (float(num.replace(",", "")) + VULGAR_FRACTIONS.get(g["frac"] or "", 0.0)) * factor
    negative = bool(g["sign"] or g["sign2"])
    if before.endswith("(") and after.startswith(")"):
        outside = SYMBOL_BEFORE_PAREN.search(before)
        bare = dimension == "plain" and not outside and "," not in num and "." not in num
        aside = dimension in ("percent", "multiple") and not _in_table_cell(before)
        if aside:
            pass  # "two-thirds (64%)": an aside, not a negative
        elif NUMBER_WORD_BEFORE.search(before[:-1]):
            negative = False  # "fourteen (14) days" restates the number
        elif bare and not _in_table_cell(before):
            return None  # "(14)" in prose is a subsection or list marker
        else:
            negative = True  # accounting notation: (182.95), $(182.95), $(3.2)m
            suffix = SCALE_AFTER_PAREN.match(after)
            if suffix and factor == 1.0:
                factor = SCALES[suffix.group(1).lower()]
                value *= factor
            if outside and not currency:
                currency, dimension = CURRENCY_SYMBOLS[outside.group(1)], "currency"
    if not math.isfinite(value):
        return None  # digits past a float's range (5,000 nines read as inf): no checkable value
    points = None if dimension != "percent" else unit.startswith(("pp", "percentage", "b", "point", "pt"))
    return Quantity(value=-value if negative else value, dimension=dimension, currency=currency,
                    scale=factor, decimals=_decimals(num) + (2 if g["frac"] else 0),
                    text=match.group(0).strip(),
                    start=match.start(), end=match.end(), noun=noun,
                    per=_per_after(after, noun), points=points, measure=measure, head=head)


def _per_after(after: str, noun: str | None) -> str | None:
    """What a value is per, written right after it ("$40/RSF"), after its unit ("12 mg/kg per
    day") or after what it counts ("33.6 students per tutor")."""
    unit = (MEASURE_AFTER.match(after) or (NOUN.match(after) if noun else None)
            or units.UNIT_AFTER.match(after))  # "22 t per shift"
    if unit is None:
        return per_of(after)
    counted = unit.re is NOUN and unit.group(2) and unit.group(2).lower() not in NOT_NOUNS
    return per_of(after) or per_of(after[unit.end(2 if counted else 1):])  # "6.5 paid hours per day"


def _per_count(per: str) -> float:
    """How many of its unit a rate is per: 1,000 in "per 1,000 streams", else 1."""
    count = re.match(r"\d+", per)
    return float(count.group(0)) if count else 1.0


def _same_per(one: str, other: str) -> bool:
    """Whether two rates are per the same thing, by the first or the last word of what they are
    per: "1000 central-line day" and "1000 line day" (per day), "lb cu" and "lb payable copper"
    (per lb); "kw/month" and "rack/month" are not."""
    a, b = one.split("/")[0].split(), other.split("/")[0].split()
    a, b = [w for w in a if not w[0].isdigit()], [w for w in b if not w[0].isdigit()]
    return not a or not b or a[0] == b[0] or a[-1] == b[-1]


def _per_period(per: str) -> str | None:
    """The period a rate is per, if it names one ("seat/month" -> month, "tutoring hour" ->
    hour)."""
    return next((p.split()[-1] for p in reversed(per.split("/")) if p and p.split()[-1] in PERIODS),
                None)


def per_of(after: str) -> str | None:
    """The unit a value is given per ("/RSF", "per share"), lower case, if any; a unit of
    measure by its pint name, however written ("/ha" and "per hectare" are per hectare)."""
    found = PER_UNIT.match(after)
    if not found:
        return None
    parts = [units.unit_named(p) or p.lower().replace(",", "") for p in found.groups() if p]
    return "/".join(" ".join(PER_SPELLING.get(w, w[:-1] if w.endswith("s") and len(w) > 3 else w)
                             for w in p.split())
                    for p in parts)


# a period written short: "USD/hr" is per hour, "per annum" per year
PER_SPELLING = {"hr": "hour", "hrs": "hour", "h": "hour", "min": "minute", "mins": "minute",
                "wk": "week", "wks": "week", "mo": "month", "yr": "year", "yrs": "year",
                "annum": "year", "pa": "year", "diem": "day"}


def _in_table_cell(before: str) -> bool:
    """Whether the text before a '(' is the start of a table cell ('| (1,250)')."""
    return bool(re.search(r"[|\t]\s*\($", before))


def unread(**texts: str | None) -> str | None:
    """Why the number reader does not read these texts (the first one over MAX_READ_CHARS, by
    the name it is given), or None when it reads them all."""
    for name, text in texts.items():
        if text is not None and len(text) > MAX_READ_CHARS:
            return (f"the {name} is {len(text):,} characters long, over the "
                    f"{MAX_READ_CHARS:,} the number reader reads")
    return None


def find_quantities(text: str, thresholds: bool = False) -> list[Quantity]:
    """Quantities in `text`, in order; values after 'more than', 'below' ... only if asked."""
    return list(_quantities(text, thresholds))


def identifier_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every citation, section or list marker and other identifier, in order."""
    return [m.span() for m in IDENTIFIER.finditer(text) if m.end() > m.start()]


@functools.lru_cache(maxsize=4096)
def _quantities(text: str, thresholds: bool) -> tuple[Quantity, ...]:
    """Parsed once per text: prompts and criteria recur across every attempt."""
    found = [q for q, threshold in _scan(text) if thresholds or not threshold]
    return tuple(join_durations(text, _share_units_in_ranges(text, found)))


@functools.lru_cache(maxsize=4096)
def _scan(text: str) -> tuple[tuple[Quantity, bool], ...]:
    """Every quantity of `text` outside an identifier, with whether it is a threshold ("more
    than 5%"): one scan serves both readings of an answer, with thresholds and without."""
    spans = identifier_spans(text)
    starts = [s for s, _ in spans]
    out = []
    for match in QUANTITY.finditer(text):
        if not match.group("num") or _inside(spans, starts, match.start("num")):
            continue
        q = _quantity(match, text)
        if q is None:
            continue
        threshold = bool(THRESHOLD.search(text[max(0, match.start() - WINDOW):match.start()])
                         or THRESHOLD_AFTER.match(text, match.end(), match.end() + WINDOW))
        out.append((q, threshold))
    return tuple(out)


DURATION_HOURS = {"week": 168.0, "day": 24.0, "hour": 1.0, "hr": 1.0, "h": 1.0, "minute": 1 / 60,
                  "min": 1 / 60}
# Calendar durations convert among themselves exactly (2 years are 24 months), never into days
# or weeks, whose count in a month varies: "12 weeks" is no "3 months".
CALENDAR_MONTHS = {"month": 1.0, "quarter": 3.0, "year": 12.0, "yr": 12.0}
DURATION_TAIL = re.compile(rf"\s?[A-Za-z]+,?\s+(?:and\s+)?(\d{{1,4}}(?:\.\d+)?|{NUMBER_WORDS})\s?"
                           r"(weeks?|days?|hours?|hrs?|h|minutes?|mins?|months?|quarters?)\b", re.I)


def duration_ratio(noun: str | None, other: str | None) -> float | None:
    """How many `other` one `noun` is where both are durations of one family (a year is 12
    months, a day 24 hours), else None."""
    for family in (DURATION_HOURS, CALENDAR_MONTHS):
        if noun in family and other in family:
            return family[noun] / family[other]
    return None


def is_duration(noun: str | None) -> bool:
    return noun in DURATION_HOURS or noun in CALENDAR_MONTHS


def join_durations(text: str, found: list[Quantity]) -> list[Quantity]:
    """A duration written in two units is one: "2 days 14 hours" is 62 hours, in the smaller
    ("14" after "days" reads as a day number otherwise); "three weeks and five days" is 26
    days; "2 years 6 months" is 30 months."""
    out: list[Quantity] = []
    end = -1
    for q in found:
        if q.start < end:
            continue  # the second part of a duration joined before
        tail = DURATION_TAIL.match(text, q.end) if q.dimension == "plain" else None
        unit = tail.group(2).lower().rstrip("s") if tail else ""
        ratio = duration_ratio(q.noun, unit) if tail else None
        if tail and ratio is not None and ratio > 1:
            count = tail.group(1).lower()
            noun = {"h": "hour", "hr": "hour", "min": "minute"}.get(unit, unit)
            q = replace(q, value=q.value * ratio + float(WORD_VALUES.get(count, count)), noun=noun,
                        end=tail.end(), text=text[q.start:tail.end()],
                        decimals=_decimals(tail.group(1)))
            end = tail.end()
        out.append(q)
    return out


INCHES_TAIL = re.compile(r"\s?(?:ft\b\.?|feet\b|foot\b|['\u2032])\s*,?\s*(?:and\s+)?(\d{1,2}(?:\.\d+)?)"
                         r"\s?(?:in\b|inch(?:es)?\b|\"|\u2033)")  # 49 ft 2.5 in, 6' 2"


def join_feet_inches(text: str, found: list[Quantity]) -> list[Quantity]:
    """A length in feet and inches is one: "49 ft 2.5 in" is 590.5 inches (14.999 m), where the
    inches are under twelve; else the feet alone would be read, and the inches as a bare
    number."""
    out: list[Quantity] = []
    end = -1
    for q in found:
        if q.start < end:
            continue  # the inches of a length joined before
        tail = INCHES_TAIL.match(text, q.end) if q.measure == "foot" else None
        if tail and float(tail.group(1)) < 12:
            q = replace(q, value=q.value * 12 + float(tail.group(1)), measure="inch", noun="in",
                        end=tail.end(), text=text[q.start:tail.end()],
                        decimals=_decimals(tail.group(1)))
            end = tail.end()
        out.append(q)
    return out


def _inside(spans: list[tuple[int, int]], starts: list[int], position: int) -> bool:
    i = bisect.bisect_right(starts, position) - 1
    return i >= 0 and spans[i][0] <= position < spans[i][1]


def _share_units_in_ranges(text: str, found: list[Quantity]) -> list[Quantity]:
    """In '70-75%' or 'NOK 2,359m to 2,361m' the unit written once applies to both ends."""
    out = list(found)
    for i in range(len(out) - 1):
        a, b = out[i], out[i + 1]
        if not _range_gap(text, a, b):
            continue
        if a.dimension == "plain" and b.dimension != "plain":
            out[i] = with_unit(a, b)
        elif b.dimension == "plain" and a.dimension != "plain":
            out[i + 1] = with_unit(b, a)
        elif a.dimension == b.dimension == "plain" and not (a.noun or a.measure) \
                and (b.noun or b.measure):
            out[i] = replace(a, noun=b.noun, measure=b.measure)
    return out


def with_unit(bare: Quantity, unit_from: Quantity) -> Quantity:
    """A bare number read in the unit another quantity (or a header, or a label) gives it."""
    if bare.scale != 1.0:  # "12.9m" after "EUR 12.5m-": its own scale, the other's currency
        return replace(bare, dimension=unit_from.dimension, currency=unit_from.currency,
                       points=unit_from.points)
    return replace(bare, value=bare.value * unit_from.scale, dimension=unit_from.dimension,
                   currency=unit_from.currency, scale=unit_from.scale, noun=unit_from.noun,
                   points=unit_from.points, measure=unit_from.measure,
                   per=bare.per or unit_from.per)


def value_in_terms_of(q: Quantity, target: Quantity) -> float:
    """q's value in the target's terms: a duration in the target's unit of time; an unscaled
    side is read in the other side's scale; a measure in the target's unit of the same kind.

    A converted measure written at least as precisely as the target is known only to half its
    last digit in its own unit (1,150 ft is 350.37 to 350.67 m): the value taken is the one in
    that interval nearest the target's, so a tolerance around the target holds it exactly when
    the two intervals overlap. A coarser one is taken as written: 3.1 GWh is 3,100 MWh, not
    "anything from 3,050 to 3,150" against 3,125 MWh."""
    if q.measure and target.measure and q.measure != target.measure:
        low, high = sorted(units.convert(q.value + side * q.step / 2, q.measure, target.measure)
                           for side in (-1, 1))
        if high - low > target.step:
            return units.convert(q.value, q.measure, target.measure)
        return min(max(target.value, low), high)
    ratio = duration_ratio(q.noun, target.noun) if q.noun != target.noun else None
    if ratio is not None:
        return q.value * ratio
    if q.dimension in ("percent", "multiple") or q.scale == target.scale:
        return q.value
    if q.scale == 1.0:  # "2433" beside "$2,470 million"; "$2,860,000" is already in units
        if q.noun and q.counts_as(target):
            return q.value  # "65 broadcast hours" counts hours, not millions of them
        return q.value if abs(q.value) >= target.scale else q.value * target.scale
    if target.scale == 1.0:  # "1,284" under "($000s)" against "$1,284,000": already units
        return q.value if abs(target.value) >= q.scale else q.value / q.scale
    return q.value


def comparable(q: Quantity, target: Quantity) -> bool:
    """Whether q can be held against the target: the same kind, or a bare number against a
    currency amount (neither counting a thing)."""
    if q.compatible(target):
        return True
    kinds = {q.dimension, target.dimension}
    return kinds == {"plain", "currency"} and not (q.noun or target.noun)


# A spread the answer describes: "ranged from 5.9 (week 3) to 7.6", "routes range from 41 km
# to 162 km", "varied between 4 and 11 minutes", each end with its unit and a short gloss
SPREAD_BEFORE = NeedsWord(re.compile(
    r"\b(?:rang(?:e[sd]?|ing)|var(?:y|ies|ied|ying)|spann?(?:s|ed|ing)?|spread|"
    r"fluctuat(?:e[sd]?|ing))\s+(?:(?:from|between)\s+)?(?:about\s+|roughly\s+)?"
    r"(?:[$€£¥]|[A-Z]{3}\s)?$", re.I), ("rang", "var", "span", "spread", "fluctuat"))
SPREAD_GAP = re.compile(r"\s*(?:[A-Za-zµ°/²³·%]{1,12}\s*)?(?:\([^()\n]{1,40}\)\s*)?(?:to|and|-|–)\s*",
                        re.I)


def is_spread(text: str, a: Quantity, b: Quantity) -> bool:
    """Whether `a` and `b` (in the text's order) are the ends of a spread the text describes
    ("Brix ranged from 5.9 (week 3) to 7.6 (week 31)"): a distribution's or others' values,
    never a hedge of one value."""
    return (b.start - a.end <= 60 and bool(SPREAD_GAP.fullmatch(text, a.end, b.start))
            and bool(SPREAD_BEFORE.search(text, max(0, a.start - 40), a.start)))


def _range_gap(text: str, a: Quantity, b: Quantity) -> bool:
    """Whether the text between two quantities joins them as a range ('from A to B' and
    'by A to B' are a change, '210 bps to 54.9%' two quantities, 'ranged from A to B' a
    spread)."""
    if is_spread(text, a, b):
        return True
    if b.start - a.end > 12 or (a.dimension == b.dimension and a.scale != b.scale
                                and a.dimension == "percent"):
        return False
    if re.search(r"\b(?:from|by|rose|fell|grew|increased|decreased|declined|dropped|up|down|"
                 r"climbed|jumped|gained|lost)\s*$", text[max(0, a.start - 14):a.start], re.I) \
            and "to" in text[a.end:b.start].lower():
        return False  # "rose 2.5 points to 54.5%": a change, then the level it reached
    between = text[a.end:b.start]
    if not RANGE_JOIN.match(between):
        return False
    return between.strip().lower() != "and" or bool(
        re.search(r"between\s*$", text[max(0, a.start - WINDOW):a.start], re.I))


WINDOW_BEFORE = re.compile(r"\bwithin\s*(?:±|\+/[-−]|(?:the\s+)?(?:next|first|coming|following|"
                           r"last|past)\s+)?\s*$", re.I)  # "within the next two years"
WINDOW_JOIN = re.compile(r"\s*(?:/|to|-|–)\s*\+?")  # "−4/+6 s/day", "2 to 5 days"


def windows_in(text: str, found: Sequence[Quantity]) -> list[Quantity]:
    """The quantities that say within what a value is measured: "within 48 hours", "within 5 m
    of HRWL", "within −4/+6 s/day" (both sides, where one carries the unit). A bare "within 5"
    is left out: it may be a tolerance."""
    out: list[Quantity] = []
    for n, q in enumerate(found):
        if q in out or not WINDOW_BEFORE.search(text, max(0, q.start - 30), q.start):
            continue
        chain = [q]
        for later in found[n + 1:]:
            if not WINDOW_JOIN.fullmatch(text, chain[-1].end, later.start):
                break
            chain.append(later)
        if any(w.noun or w.measure for w in chain) or len(chain) > 1:
            out += chain
    return out


def find_ranges(text: str, quantities: list[Quantity]) -> list[tuple[Quantity, Quantity]]:
    """Pairs written as a range: 'A-B', 'A to B', 'between A and B'."""
    pairs = []
    for a, b in itertools.pairwise(quantities):
        if not a.compatible(b) or a.other_points(b) or not _range_gap(text, a, b):
            continue
        pairs.append((a, b) if a.value <= b.value else (b, a))
    return pairs


_UNITS_WORD = "one|two|three|four|five|six|seven|eight|nine"
_BELOW_HUNDRED = rf"(?:{NUMBER_WORDS}|zero)(?:-(?:{_UNITS_WORD}))?"
_BELOW_THOUSAND = rf"{_BELOW_HUNDRED}(?:\s+hundred(?:\s+and\s+{_BELOW_HUNDRED})?)?"
# "forty-six weeks", "a twenty-two-week stage", "three hundred and twelve days", "sixty thousand
# tonnes", "ninety thousand six hundred dollars"; "two-thirds" and "three-quarters" are
# fractions, not counts
WORD_NUMBER = re.compile(
    rf"(?<![-\w])({_BELOW_THOUSAND}(?:\s+(?:thousand|million|billion)(?:,?\s+(?:and\s+)?"
    rf"{_BELOW_THOUSAND})?)*)"
    r"(?:\s+|-(?!(?:thirds?|quarters?|halves|half|fifths?|sixths?|eighths?|tenths?)\b))"
    r"(?:and\s+a\s+(half|quarter)\s+)?(?!hundred|thousand|million|billion)(?=[a-z])", re.I)
FRACTION_WORDS = {"half": 0.5, "quarter": 0.25}  # "two and a half terms" is 2.5 terms
WORD_VALUES = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen".split())}
WORD_VALUES |= {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
                "eighty": 80, "ninety": 90}


def _words_value(words: str) -> tuple[float, float] | None:
    """The value of a number in words and the scale of its last scale word ("ninety thousand
    six hundred" is (90,600, 1)); None where a part is no number ("hundred" alone)."""
    total = part = 0.0
    scale = 1.0
    seen = False
    for word in re.findall(r"[a-z]+", words.lower()):
        if word in WORD_VALUES:
            part += WORD_VALUES[word]
            seen = True
        elif word == "hundred" and seen:
            part *= 100
        elif word in SCALES and seen:
            total, part, scale = total + part * SCALES[word], 0.0, SCALES[word]
        elif word != "and":
            return None
    return (total + part, 1.0 if part else scale) if seen else None


def find_word_numbers(text: str) -> list[Quantity]:
    """Counts written in words before what they count: 'three weeks', 'forty-five days', 'a
    twenty-two-week stage', 'two and a half terms', 'three hundred and twelve days', 'sixty
    thousand tonnes' (at the scale word's precision), 'twelve million euros' (an amount)."""
    out = []
    for m in WORD_NUMBER.finditer(text):
        read = _words_value(m.group(1))
        if read is None:
            continue
        value, scale = read
        fraction = FRACTION_WORDS[m.group(2).lower()] if m.group(2) else 0.0
        after = text[m.end() - 1:m.end() + WINDOW]
        money = CURRENCY_WORD.match(after)
        noun, head = (None, None) if money else _counted(after)
        if noun or money:
            out.append(Quantity(
                value=value + fraction, dimension="currency" if money else "plain",
                currency=CURRENCY_WORDS.get(re.sub(r"\s+", " ", money.group(1).lower()).rstrip("s"))
                if money else None,
                scale=scale, decimals=len(str(fraction)) - 2 if fraction else 0,
                text=m.group(0).strip().rstrip("-"), start=m.start(), end=m.end(), noun=noun,
                measure=None if money else _measure(after), head=head))
    return out


# "the number still open is seven.", "H2 2024: nil", "Late filings: none": a number in words
# (or nil, none) that a copula or a label's colon states, ending its sentence or line
STATED_WORD = re.compile(
    rf"(?:\b(?:is|are|was|were|equals|totals?|totalled|totaled|comes\s+to|stands\s+at)|:)"
    rf"[ \t]+[*_]{{0,2}}({_BELOW_THOUSAND}(?:\s+(?:thousand|million|billion)(?:,?\s+(?:and\s+)?"
    rf"{_BELOW_THOUSAND})?)*|nil|none)[*_]{{0,2}}[ \t]*(?=[.!?]?[ \t]*(?:\n|$)|[.!?][ \t])", re.I)
NIL_WORDS = frozenset(("nil", "none"))


def find_stated_word_numbers(text: str) -> list[Quantity]:
    """Values written in words with nothing they count after them, where a copula or a label
    states them as the value its sentence or line ends on ("the number still open is seven.",
    "H2 2024: nil"): plain numbers, what they count said by their subject."""
    out = []
    for m in STATED_WORD.finditer(text):
        word = m.group(1)
        read = (0.0, 1.0) if word.lower() in NIL_WORDS else _words_value(word)
        if read is not None:
            out.append(Quantity(value=read[0], dimension="plain", currency=None, scale=read[1],
                                decimals=0, text=word, start=m.start(1), end=m.end(1)))
    return out


# a rounding step said in words: "nearest thousand", "nearest €0.05", "nearest 5 bps"
NEAREST = re.compile(
    rf"nearest\s+(?:whole\s+)?(?P<sym>(?:(?:US|A|C|NZ|HK|S)?[$€£¥₹]|\b(?:{'|'.join(CURRENCY_CODES)})\b)\s?)?"
    r"(?:(?P<num>\d[\d,]*(?:\.\d+)?|\.\d+)\s*"
    r"(?:(?P<unit>%|percent|percentage\s+points?|pp|bps?|basis\s+points?|k|m|bn|million|billion)"
    r"(?![A-Za-z]))?"  # "nearest 5 kg" is 5, not 5 thousand
    r"|(?P<word>cent|penny|whole\s+number|integer|dollar|euro|pound|unit|hundred|thousand|"
    r"million|billion"
    r"|percentage\s+point|percent|tenth|hundredth|ten\b|basis\s+point|bp))", re.I)
NEAREST_STEP = {"cent": 0.01, "penny": 0.01, "whole number": 1.0, "integer": 1.0, "dollar": 1.0,
                "euro": 1.0, "pound": 1.0, "unit": 1.0, "hundred": 100.0, "thousand": 1e3, "million": 1e6,
                "billion": 1e9, "percent": 1.0, "percentage point": 1.0, "tenth": 0.1, "ten": 10.0,
                "hundredth": 0.01, "basis point": 0.01, "bp": 0.01}


def nearest_step(match: re.Match[str]) -> tuple[float, float]:
    """The rounding step of a "nearest ..." instruction, in base units, and its last written
    digit ("nearest €0.05": 0.05 and 0.01; "nearest 5 bps": 0.05 and 0.01 percent)."""
    if match.group("word"):
        step = NEAREST_STEP[re.sub(r"\s+", " ", match.group("word").lower())]
        return step, step
    written = match.group("num").replace(",", "")
    number = float(written)
    unit = (match.group("unit") or "").lower()
    if unit.startswith("b"):
        factor = 0.01 if unit in ("bp", "bps") or unit.startswith("basis") else 1e9
    else:
        factor = SCALES.get(unit, 1.0)  # %, pp and points are 1
    decimals = len(written.split(".")[1]) if "." in written else 0
    return number * factor, 10.0 ** -decimals * factor


COMPACT_DURATION = re.compile(r"(?<![\w.,:])(\d{1,3}(?:\.\d+)?)\s?h(?:\s?(\d{1,2})\s?m(?:in)?)?\b")
CLOCK_DURATION = re.compile(r"(?<![\w:.,])(\d{1,3}):([0-5]\d)(?![\d:])(\s?(?:h|hrs?|hours)\b)?")


def find_compact_durations(text: str) -> list[Quantity]:
    """Durations written the short way: "1h40m" and "1 h 40 min" are 100 minutes, "2.5h" is 2.5
    hours."""
    out = []
    for m in COMPACT_DURATION.finditer(text):
        hours, minutes = m.group(1), m.group(2)
        value, noun = ((float(hours) * 60 + float(minutes), "minute") if minutes
                       else (float(hours), "hour"))
        out.append(Quantity(value=value, dimension="plain", currency=None, scale=1.0,
                            decimals=0 if minutes else _decimals(hours), text=m.group(0),
                            start=m.start(), end=m.end(), noun=noun))
    return out


def find_clock_durations(text: str) -> list[Quantity]:
    """Every "h:mm" in `text` read as a duration in minutes ("6:45" is 405 minutes), with its
    hour word if one follows ("6:45 hours"). A clock time is written the same way: the answer's
    reader keeps only those an hour word or an "(h:mm)" column header says are durations."""
    return [Quantity(value=float(m.group(1)) * 60 + float(m.group(2)), dimension="plain",
                     currency=None, scale=1.0, decimals=0, text=m.group(0).strip(),
                     start=m.start(), end=m.end(), noun="minute")
            for m in CLOCK_DURATION.finditer(text)]


SCALE_SUFFIX = {1e3: "k", 1e6: "m", 1e9: "bn", 1e12: "tn"}


def in_units(value: float, target: Quantity | None) -> str:
    """A number as the criterion writes its target: 25850000.0 beside "NOK 25.9m" is NOK 25.85m.

    Evidence holds some values in base units (25850000.0) and some as written (25.9); whichever
    reading lands nearer the target's written value is taken. A value far from both stays bare.
    """
    if target is None or not math.isfinite(value) or target.value == 0:
        return f"{value:,.6g}"
    written = target.value / target.scale
    readings = [value / target.scale, value] if target.scale != 1 else [value]
    distance = [abs(math.log10(abs(r / written))) if r else math.inf for r in readings]
    shown = readings[distance.index(min(distance))]
    if min(distance) > 2:
        return f"{value:,.6g}"
    prefix = f"{target.currency} " if target.currency else ""
    if target.dimension == "percent":
        suffix = " bps" if target.scale == 0.01 else "%"
    elif target.dimension == "multiple":
        suffix = "x"
    else:
        suffix = SCALE_SUFFIX.get(target.scale, "")
    digits = f"{shown:,.{target.decimals + 2}f}"  # a half-step of the target's precision shows
    return f"{prefix}{digits.rstrip('0').rstrip('.') if '.' in digits else digits}{suffix}"
