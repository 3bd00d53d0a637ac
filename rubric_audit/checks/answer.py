"""An answer read once for the numeric checker: its quantities, where each is said, and of what.

Each value gets its segment (sentence, line, list item or table row), its label (the words since
the previous value and up to the next, with its table column's header), the names said beside it,
and the unit a header, a line label or a phrase gives a bare number ("Margin change (pp): 23",
"AUC (ng·h/mL)"). Values given for comparison ("from X", "versus X"), struck through or as a
change ("by X") are marked, so the checker does not take them for the answer's claim. Each value also gets the
qualifiers its clause says it of ("Tier-1", "FY2023", "with placebo"), so the checker can tell a
value said of a rival of the criterion's subject. Every pass is linear in the answer.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from rubric_audit.checks import asides, markup, restatements, units
from rubric_audit.checks.numbers import (
    CLOCK_DURATION,
    CURRENCY_CODES,
    CURRENCY_SYMBOLS,
    MEASURE_UNIT,
    SCALES,
    NeedsWord,
    Quantity,
    comparable,
    find_clock_durations,
    find_compact_durations,
    find_quantities,
    find_ranges,
    find_stated_word_numbers,
    find_word_numbers,
    is_spread,
    join_durations,
    join_feet_inches,
    measure_unit,
    per_of,
    windows_in,
    with_unit,
)
from rubric_audit.checks.text import STOPWORDS, content_tokens, stem

NAME = re.compile(r"(?<=[a-z0-9,;:.'\u2019)]\s)[A-Z][a-z]{2,}(?:[-'][A-Z][a-z]+)?"
                  r"(?:\s[A-Z0-9]\b(?![.,]\d))?")
FIRST_NAME = re.compile(r"(?:^|(?<=[\n|]))[\s*\-#>]*([A-Z][a-z]{2,}(?:\s[A-Z0-9]\b(?![.,]\d))?)")
NOT_NAMES = frozenset("""
the this that these those states state names identifies notes confirms reports calculates
explains recommends mentions lists provides gives says answer total net gross our their its
per and for with from into under over after before during since when where which while
january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday fy
he she his her hers him they them
""".split())
PRONOUN_START = re.compile(r"[\s*\-#>]*(?:he|she|his|her|its|their|they)\b", re.I)

COMPARISON = NeedsWord(re.compile(
    r"\b(?:from|previously|prior(?:\s+year)?|versus|vs\.?|compared\s+(?:to|with)|against|"
    r"relative\s+to|up\s+from|down\s+from|instead\s+of|rather\s+than|original(?:ly)?(?:\s+\w+){0,3}|"
    r"was\s+previously|not|(?:versus|vs\.?|against|compared\s+(?:to|with))\s+(?:an?\s+|the\s+)?"
    r"(?:[\w-]+\s+){1,3}(?:of|at))\s*(?:an?\s+|the\s+)?[$€£¥]?\s?$", re.I),
    ("from", "previous", "prior", "vs", "versus", "compared", "against", "relative", "instead",
     "rather", "original", "not"))
# "USD 12/oz above the USD 1,400/oz budget": the first is an offset (a change), the second what
# it is measured from (a reference); neither is the level. "USD 1,412, above the USD 1,400
# budget" (a comma) says where a level stands, and only the second is a reference.
_OFFSET_WORDS = (r"(?:above|below|over|under|more\s+than|less\s+than|higher\s+than|lower\s+than|"
                 r"short\s+of|ahead\s+of|behind)")
_AMOUNT = r"(?:(?:US|A|C)?[$€£¥]|(?:USD|EUR|GBP|NOK|SEK|CHF)\b|\d[\d,.]*\s?%)"
OFFSET = re.compile(rf"(?:/[A-Za-z]+)?\s*{_OFFSET_WORDS}\s+(?:(?:the|its|a|an|our|their)\s+"
                    rf"(?:[\w-]+\s+){{0,3}}?)?{_AMOUNT}", re.I)
OFFSET_FROM = NeedsWord(re.compile(
    rf"\d\S*\s*,?\s*{_OFFSET_WORDS}\s+(?:(?:the|its|a|an|our|their)\s+(?:[\w-]+\s+){{0,3}}?)?"
    rf"(?:(?:US|A|C)?[$€£¥]\s?|(?:USD|EUR|GBP|NOK|SEK|CHF)\s?)?$", re.I),
    ("above", "below", "over", "under", "more", "less", "higher", "lower", "short", "ahead",
     "behind"))
# "rose by X" is a change; "staffed by 26 analysts", "divided by 4" name who or what
CHANGE_BY = NeedsWord(re.compile(
    r"(?<!divided\s)(?<!multiplied\s)(?<!staffed\s)(?<!crewed\s)(?<!served\s)(?<!operated\s)"
    r"(?<!employed\s)(?<!attended\s)(?<!visited\s)(?<!occupied\s)\bby\s*$", re.I), ("by",))
VARIANCE_BEFORE = NeedsWord(re.compile(
    r"\b(?:overrun|overspend|underspend|variance|shortfall|excess|headwind|tailwind)\s+"
    r"(?:of\s+)?(?:about\s+)?[$€£¥]?\s?$", re.I),
    ("overrun", "overspend", "underspend", "variance", "shortfall", "excess", "headwind",
     "tailwind"))
REFUSAL = NeedsWord(re.compile(
    r"\b(?:I\s+(?:cannot|can't|can\s+not|am\s+unable|'m\s+unable|was\s+unable|could\s+not|"
    r"couldn't|do\s+not\s+have|don't\s+have|did\s+not\s+find|didn't\s+find)|unable\s+to\s+"
    r"(?:access|find|locate|complete|determine|compute|calculate|open|read)|"
    r"(?:can't|cannot)\s+help\s+with)\b", re.I),
    ("not", "n't", "unable"))

HEDGED_RANGE = NeedsWord(re.compile(r"\b(?:somewhere|likely|probably|roughly|possibly|perhaps|maybe|"
                          r"anywhere|could\s+be|may\s+be|might\s+be|treat\s+it\s+as)\b"
                          r"[^.!?\n]{0,24}$", re.I),
    ("somewhere", "likely", "probably", "roughly", "possibly", "perhaps", "maybe",
     "anywhere", "could", "may", "might", "treat"))
SAVED_FILE = NeedsWord(re.compile(r"\b(?:saved|created|attached|uploaded|written|exported|updated|"
                        r"added|built|populated|filled|wrote|edited)\b"
                        r"[^.\n]{0,80}?\.(?:xlsx|xlsm|docx|pptx|pdf|csv)\b", re.I),
    (".xlsx", ".xlsm", ".docx", ".pptx", ".pdf", ".csv"))
SEGMENT_END = re.compile(r"\n|(?<!\bi\.e)(?<!\be\.g)[.!?;](?=\s)")  # "i.e." and "e.g." end no sentence
TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}")
UNIT_MARK = re.compile(
    r"(?P<bps>\bbps?\b|basis\s+points?)|(?P<pct>%|\bpp\b|\bppts?\b|percentage\s+points?|"
    r"\bpercent\b|\bpts\b)|(?P<mult>\(x\)|\bmultiple\b)|"
    r"(?P<cur>(?:\b(?:US|A|C|NZ|HK|S|R))?\$|[€£¥₹]|\b(?:USD|EUR|GBP|NOK|SEK|DKK|CHF|JPY|CAD|AUD|"
    r"INR)\b)\s?(?P<cscale>k|m|mm|mn|bn|000s?|'000|thousands|millions|billions)?(?!\w)"
    r"|\b(?P<scale>thousands|millions|billions|'000s?|000s)\b")
HEADER_MEASURE = re.compile(rf"\(\s*({MEASURE_UNIT})\s*\)|\bin\s+({MEASURE_UNIT})")
HEADER_PARENS = re.compile(r"\(([^()]{1,24})\)")  # "Drop (m)", "Area (sq ft)"
HEADER_DURATION = re.compile(r"\(\s*(days?|weeks?|months?|years?|hours?|hrs?|h|minutes?|mins?)"
                             r"\s*\)", re.I)  # "Stock cover (days)"
DURATION_SPELLING = {"hrs": "hour", "hr": "hour", "h": "hour", "mins": "minute", "min": "minute"}
# What says which of several like values a value is: a period, tier, phase, arm or window
# ("FY2024", "Q3", "Tier-2", "Phase 3", "Arm B", "2025", "30 days"), or a word.
QUALIFIER_CODE = (
    r"(?P<period>(?i:fy|cy)\s?'?|(?i:q|h))(?P<pn>\d{1,4})\b"
    r"|(?P<word>(?i:tiers?|phases?|arms?|cohorts?|waves?|groups?|stages?|levels?|grades?|sites?|"
    r"rounds?|cycles?|years?|weeks?|days?|months?|quarters?|periods?|segments?|regions?|zones?|"
    r"plans?|options?|scenarios?|rooms?|units?|samples?|wells?|lots?|batch(?:es)?|flights?|"
    r"trains?|routes?|stores?|plants?|lines?|gates?|stations?|berths?|pits?|blocks?|"
    r"buildings?|floors?|shifts?|teams?))[\s-]?(?P<wn>\d{1,6}|[A-H]|[IVX]{1,4})\b"
    r"|(?P<prefix>(?-i:[A-Z]{1,4}))-(?P<pnum>\d{1,6})\b"
    r"|(?P<year>(?:19|20)\d\d)(?![\d%]|[,.]\d)\b"
    r"|(?P<count>\d{1,4})[\s-](?:(?i:business|calendar|working)\s)?"
    r"(?P<unit>(?i:days?|weeks?|months?|years?|hours?|hrs?|minutes?|mins?))\b")
QUALIFIER = re.compile(rf"\b(?:{QUALIFIER_CODE})")
TERM = re.compile(rf"\b(?:{QUALIFIER_CODE})|(?P<number>\d[\d,.]*(?:[%×]|x\b)?)|(?P<w>[A-Za-z]+)")
ARTICLES = frozenset(("the", "a", "an"))
UNIT_FAMILY = {"hr": "hour", "min": "minute"}
CLAUSE_BREAK = re.compile(r"\n|[.!?;](?=\s|$)|,(?=\s)|[()\[\]]|\s[-–—]\s|\b(?:vs\.?|versus|"
                          r"while|whereas|but|and|compared\s+(?:with|to)|against|"
                          r"relative\s+to)\b", re.I)
NEARBY = 4  # words on each side of a value whose place beside it is noted
MAX_LABELLED_LINE = 2000  # longer lines are prose, not a table row or a labelled value
HEADER_SCALES = SCALES | {"000": 1e3, "000s": 1e3}  # a column headed '000 or 000s
LABEL = re.compile(r"^[^:|=]{1,80}(?:[:=]|\s[-–]\s)")


def names_in(text: str, first_word: bool = False) -> frozenset[str]:
    """Proper names ("Aisha Roberts", "Deal B", "Nguyen"), lower case; sentence-initial words
    only if asked (an answer's line often starts with the name it is about)."""
    found = {m.group(0).lower() for m in NAME.finditer(text)}
    if first_word:
        found |= {m.group(1).lower() for m in FIRST_NAME.finditer(text)}
    return frozenset(found - NOT_NAMES)


@dataclass(frozen=True)
class Qualified:
    """What each of an answer's values is said of, and what tells two qualifiers of one kind.

    `said[i]`: the qualifiers (codes and content words, `terms`) of value i's clause, of the
    valueless clauses nearest it and of its column header. `nearby[i]`: (word, place) for the
    words up to NEARBY before (place < 0) or after it in its clause. `headings`: per term,
    the tables whose columns (or rows) it heads. `holders`: per term, the values it is said of
    (groups shared by the values of one clause, so the reading stays linear). `written`: each
    term as first written.
    """

    said: tuple[frozenset[str], ...]
    nearby: tuple[frozenset[tuple[str, int]], ...]
    headings: dict[str, frozenset[tuple[int, str]]]
    holders: dict[str, tuple[tuple[int, ...], ...]]
    written: dict[str, str]


@dataclass(frozen=True)
class Reading:
    """An answer read once: its quantities (units implied by headers and labels applied), the
    segment (sentence, line, list item, table row) each belongs to, the words of each segment
    and of each value's label (the text since the previous value or the line's label)."""

    text: str
    quantities: tuple[Quantity, ...]
    segment_of: tuple[int, ...]
    segments: tuple[frozenset[str], ...]
    segment_names: tuple[frozenset[str], ...]
    labels: tuple[frozenset[str], ...]
    label_names: tuple[frozenset[str], ...]
    headers: tuple[str, ...]  # per value, its table column's header ("" outside tables)
    bounds: tuple[int, ...]  # where each segment starts (and the end)
    references: frozenset[int]  # values given for comparison: 'from X', 'versus X'
    changes: frozenset[int]  # values given as a change: 'improved by X'
    ranges: tuple[tuple[Quantity, Quantity], ...]
    thresholds: tuple[Quantity, ...]
    refusal: bool
    saved_file: bool
    revised_at: int  # where the answer's last self-correction starts ("Correction: ..."), or -1
    roundings: tuple[tuple[int, int, float], ...]  # (a working value, the answer's own
    # rounding of it, the rounding's step)
    conversions: tuple[tuple[int, int], ...]  # (a working value, its restatement in another unit)
    windows: frozenset[int]  # values that say within what another is measured ("within 5 m")

    @functools.cached_property
    def asides(self) -> tuple[asides.Aside, ...]:
        """The values the answer gives as a plan, a bar, another party's figure or a
        counterfactual: read once per answer, asked of by every criterion."""
        return asides.asides(self.text, self.quantities, self.headers, self.bounds,
                             self.segment_of, self.windows)

    @functools.cached_property
    def doubted_ranges(self) -> tuple[tuple[Quantity, Quantity], ...]:
        """Ranges the answer offers as its uncertainty ("somewhere between 0 and 3", "treat it
        as roughly 3.8-4.1%"), not as a quantity that is a range (a guidance range)."""
        return tuple(r for r in self.ranges
                     if HEDGED_RANGE.search(self.text, max(0, r[0].start - 60), r[0].start))

    @functools.cached_property
    def value_keys(self) -> tuple[tuple[str, float], ...]:
        """Each value as (dimension, value), the key a criterion's context values are held by."""
        return tuple((q.dimension, round(q.value, 9)) for q in self.quantities)

    @functools.cached_property
    def _kinds(self) -> dict[tuple[object, ...], tuple[tuple[bool, ...], tuple[bool, ...]]]:
        return {}

    def of_kind(self, target: Quantity) -> tuple[tuple[bool, ...], tuple[bool, ...]]:
        """Per value, whether it can be held against a target of this kind (`comparable`) and
        whether it is of the target's kind (`Quantity.compatible`): read once per kind of
        target, as every criterion of a task asks it of the same answer."""
        key = (target.dimension, target.currency, target.per, target.measure, target.noun,
               target.head)
        found = self._kinds.get(key)
        if found is None:
            found = self._kinds[key] = (tuple(comparable(q, target) for q in self.quantities),
                                        tuple(q.compatible(target) for q in self.quantities))
        return found

    @functools.cached_property
    def headlines(self) -> frozenset[int]:
        """The values on the line the answer leads its conclusion with ("TL;DR: ~£1.3m")."""
        return restatements.headlines(self.text, list(self.quantities))

    @functools.cached_property
    def spread_ends(self) -> frozenset[int]:
        """The ids of the values that end a spread the answer describes ("ranged from 5.9 (week
        3) to 7.6"): a distribution's or others' values, never a hedge."""
        return frozenset(id(q) for low, high in self.ranges
                         if is_spread(self.text, *sorted((low, high), key=lambda q: q.start))
                         for q in (low, high))

    @functools.cached_property
    def qualified(self) -> Qualified:
        """What each value is said of: read when a decision needs it, not for every answer."""
        return _qualify(self.text, self.quantities, self.headers, self.bounds)


# "(1 fl oz = 29.57 ml)", "1 CAD = 0.735 USD": a conversion factor, no value of the subject
CONVERSION_FACTOR = re.compile(r"(?<![\d.,])1\s?[A-Za-z$€£¥][^\d=\n]{0,12}=\s?[$€£¥]?\d[\d,]*"
                               r"(?:\.\d+)?(?:\s?[A-Za-z$€£¥][A-Za-z.$€£¥ ]{0,12}[A-Za-z.$€£¥])?")
LABEL_END = re.compile(r"[,;(]")  # a value's label runs on after it to the next break


@functools.lru_cache(maxsize=1024)
def read_answer(written: str) -> Reading:
    """The answer read once (`Reading`), its markup blanked first (`markup.plain_text`)."""
    answer = markup.plain_text(written)
    bounds = [0] + [m.end() for m in SEGMENT_END.finditer(answer)] + [len(answer) + 1]
    line_labels = _line_labels(answer)
    pieces = [answer[a:b] for a, b in itertools.pairwise(bounds)]
    line_starts = [0] + [m.end() for m in re.finditer("\n", answer)]

    def line_of(position: int) -> int:
        return line_starts[bisect.bisect_right(line_starts, position) - 1]

    label_of_piece = [line_labels.get(line_of(a), "") for a in bounds[:-1]]
    compact = find_compact_durations(answer)
    spans = [(q.start, q.end) for q in compact]
    words = find_word_numbers(answer)
    counted = {q.start for q in words}
    units_said = _header_units(answer) if "|" in answer else []
    found = join_durations(answer, sorted(
        [*(q for q in find_quantities(answer) if not any(a <= q.start < b for a, b in spans)),
         *words, *(q for q in find_stated_word_numbers(answer) if q.start not in counted),
         *compact, *find_clock_durations(answer)],
        key=lambda q: q.start))
    if "ft" in answer or "feet" in answer:
        found = join_feet_inches(answer, found)
    if units_said:  # "| Capacity (cases of 24 cans) |": the 24 is the header's unit, no value
        found = [q for q in found if not any(a <= q.start < b for a, b in units_said)]
    quantities, headers = _clock_durations(answer, *_implied_units(answer, found))
    quantities = _noted_scale(answer, _noted_per(answer, quantities))
    quantities = _label_per(answer, quantities, line_labels, line_of)
    quantities = _restated_measures(quantities)
    segment_of = [bisect.bisect_right(bounds, q.start) - 1 for q in quantities]
    labels, label_names = [], []
    for i, q in enumerate(quantities):
        segment = segment_of[i]
        start = bounds[segment]
        if i and segment_of[i - 1] == segment:
            start = quantities[i - 1].end
        line_start = line_of(q.start)
        start = max(start, line_start + len(line_labels.get(line_start, "")), q.start - 200)
        end = bounds[segment + 1]
        if i + 1 < len(quantities) and segment_of[i + 1] == segment:
            end = quantities[i + 1].start
        before = answer[start:q.start]
        after = LABEL_END.split(answer[q.end:min(end, q.end + 200)], maxsplit=1)[0]
        labels.append(frozenset(content_tokens(f"{before} {after} {headers[i]}")))
        label_names.append(names_in(before, first_word=True))
    starts = {q.start for q in found}
    struck = markup.struck(answer)
    factors = [m.span() for m in CONVERSION_FACTOR.finditer(answer)] if "=" in answer else []
    references = frozenset(i for i, q in enumerate(quantities)
                           if COMPARISON.search(answer, max(0, q.start - 40), q.start)
                           or OFFSET_FROM.search(answer, max(0, q.start - 60), q.start)
                           or struck(q.start) or any(a <= q.start < b for a, b in factors))
    return Reading(
        text=answer, quantities=tuple(quantities), segment_of=tuple(segment_of),
        segments=tuple(frozenset(content_tokens(p + " " + lab))
                       for p, lab in zip(pieces, label_of_piece, strict=True)),
        segment_names=_segment_names(pieces),
        labels=tuple(labels), label_names=tuple(label_names), headers=tuple(headers),
        bounds=tuple(bounds), references=references,
        changes=frozenset(i for i, q in enumerate(quantities)
                          if CHANGE_BY.search(answer, max(0, q.start - 24), q.start)
                          or VARIANCE_BEFORE.search(answer, max(0, q.start - 30), q.start)
                          or OFFSET.match(answer, q.end)),
        ranges=tuple(find_ranges(answer, list(quantities))),
        thresholds=tuple(q for q in find_quantities(answer, thresholds=True)
                         if q.start not in starts),
        refusal=bool(REFUSAL.search(answer)), saved_file=bool(SAVED_FILE.search(answer)),
        revised_at=restatements.revised_at(answer, bounds),
        roundings=restatements.roundings(answer, quantities),
        conversions=restatements.conversions(answer, quantities, segment_of),
        windows=frozenset(map(quantities.index, windows_in(answer, quantities))))


def terms(text: str) -> list[tuple[str, str, int]]:
    """The words of `text` in order as (key, as written, start): a qualifier code keyed by its
    kind and value ("Tier-2" -> tier:2, "FY24" -> fy:2024, "30 days" -> day:30), a number (or
    its currency code or scale word) as '#', a stopword as itself, any other word by its stem;
    articles left out, so "with the placebo" puts 'placebo' two words after a value before it."""
    out = []
    for m in TERM.finditer(text):
        g = m.groupdict()
        written, word = m.group(0), m.group(0).lower()
        if g["period"]:
            kind, value = g["period"].strip(" '").lower(), g["pn"]
            key = f"{kind}:{'20' + value if kind in ('fy', 'cy') and len(value) == 2 else value}"
        elif g["word"]:
            key = f"{stem(g['word'].lower())}:{g['wn'].upper()}"
        elif g["prefix"]:  # "W-2211", "DS-04": a code of the kind its letters name
            key = f"{g['prefix'].lower()}:{int(g['pnum'])}"
        elif g["year"]:
            key = f"year:{g['year']}"
        elif g["count"]:
            unit = g["unit"].lower().rstrip("s")
            key = f"{UNIT_FAMILY.get(unit, unit)}:{g['count']}"
        elif g["number"] or word in SCALES or written.upper() in CURRENCY_CODES:
            key = "#"
        elif word in ARTICLES:
            continue
        else:
            key = word if word in STOPWORDS else stem(word)
        out.append((key, written, m.start()))
    return out


def is_qualifier(key: str) -> bool:
    """A code or a content word: what can say which value is meant (not '#' or 'with')."""
    return ":" in key or (key != "#" and len(key) > 1 and key not in STOPWORDS)


def _qualify(answer: str, quantities: tuple[Quantity, ...], headers: tuple[str, ...],
             bounds: tuple[int, ...]) -> Qualified:
    """What each value is said of (`Qualified`). Clauses are stretches of a line between commas,
    brackets, dashes, 'and', 'vs', 'while' ... (a table row is one); a clause holding no value
    (", in FY2024,") speaks of the nearest clause of its segment that does."""
    clauses, tables = clauses_of(answer)
    clause_starts = [a for a, _ in clauses]
    codes = [m.span() for m in QUALIFIER.finditer(answer)]
    code_starts = [a for a, _ in codes]
    valued: dict[int, list[int]] = {}
    for i, q in enumerate(quantities):
        k = bisect.bisect_right(code_starts, q.start) - 1
        if k >= 0 and q.start < codes[k][1]:
            continue  # "30 days" names a window: a qualifier, not a value it qualifies
        valued.setdefault(bisect.bisect_right(clause_starts, q.start) - 1, []).append(i)
    owner = _nearest_valued(clauses, [bisect.bisect_right(bounds, a) - 1 for a, _ in clauses],
                            valued)
    written: dict[str, str] = {}
    headings: dict[str, set[tuple[int, str]]] = {}
    by_clause: dict[int, set[str]] = {}
    nearby: list[frozenset[tuple[str, int]]] = [frozenset()] * len(quantities)
    for n, (a, b) in enumerate(clauses):
        sequence = terms(answer[a:b])
        keys = {key for key, _, _ in sequence if is_qualifier(key)}
        for key, text, _ in sequence:
            written.setdefault(key, text)
        if a in tables:  # a row: its first cell labels it, as other rows' first cells do theirs
            first = answer.find("|", answer.find("|", a) + 1, b)
            for key, _, start in sequence:
                if is_qualifier(key) and (first < 0 or a + start < first):
                    headings.setdefault(key, set()).add((tables[a], "row"))
        if (valued_clause := owner[n]) is not None:
            by_clause.setdefault(valued_clause, set()).update(keys)
        starts = [a + start for _, _, start in sequence]
        for i in valued.get(n, ()):
            at = bisect.bisect_left(starts, quantities[i].start)
            nearby[i] = frozenset(
                (sequence[at + d][0], d) for d in range(-NEARBY, NEARBY + 1)
                if d and 0 <= at + d < len(sequence) and sequence[at + d][0] != "#")
    said_of_clause = {n: frozenset(keys) for n, keys in by_clause.items()}
    said = [frozenset[str]()] * len(quantities)
    holders: dict[str, list[tuple[int, ...]]] = {}
    for n, values in valued.items():
        group = tuple(values)
        for i in values:
            said[i] = said_of_clause.get(n, frozenset())
        for key in said_of_clause.get(n, ()):
            holders.setdefault(key, []).append(group)
    for i, header in enumerate(headers):
        if not header:
            continue
        table = tables[clauses[bisect.bisect_right(clause_starts, quantities[i].start) - 1][0]]
        sequence = terms(header)
        keys = {key for key, _, _ in sequence if is_qualifier(key)}
        for key, text, _ in sequence:
            written.setdefault(key, text)
        said[i] = said[i] | keys
        for key in keys:
            holders.setdefault(key, []).append((i,))
            headings.setdefault(key, set()).add((table, "column"))
    return Qualified(said=tuple(said), nearby=tuple(nearby),
                     headings={k: frozenset(v) for k, v in headings.items()},
                     holders={k: tuple(v) for k, v in holders.items()}, written=written)


def clauses_of(answer: str) -> tuple[list[tuple[int, int]], dict[int, int]]:
    """The answer's clauses as (start, end), and for each table row's clause the start of its
    table. A table row is one clause; prose lines are cut at CLAUSE_BREAK."""
    clauses: list[tuple[int, int]] = []
    tables: dict[int, int] = {}
    table = None
    position = 0
    for line in answer.split("\n"):
        end = position + len(line)
        if line.lstrip().startswith("|"):
            table = position if table is None else table
            if not TABLE_SEPARATOR.match(line):
                clauses.append((position, end))
                tables[position] = table
        else:
            table = None
            cuts = [position] + [x for m in CLAUSE_BREAK.finditer(line)
                                 for x in (position + m.start(), position + m.end())] + [end]
            clauses += [(a, b) for a, b in zip(cuts[::2], cuts[1::2], strict=True)
                        if answer[a:b].strip()]
        position = end + 1
    return clauses, tables


def _nearest_valued(clauses: list[tuple[int, int]], segment: list[int],
                    valued: dict[int, list[int]]) -> list[int | None]:
    """Per clause, itself if it holds a value, else the nearest clause of its segment that does
    (the one before on a tie: '8.3% (Tier-2)')."""
    before: list[int | None] = []
    last = None
    for n in range(len(clauses)):
        last = n if n in valued else (last if last is not None
                                      and segment[last] == segment[n] else None)
        before.append(last)
    after: list[int | None] = [None] * len(clauses)
    following = None
    for n in range(len(clauses) - 1, -1, -1):
        following = n if n in valued else (following if following is not None
                                           and segment[following] == segment[n] else None)
        after[n] = following
    out: list[int | None] = []
    for n, (a, b) in enumerate(clauses):
        back, ahead = before[n], after[n]
        if back is None or ahead is None:
            out.append(back if ahead is None else ahead)
        else:
            out.append(back if a - clauses[back][1] <= clauses[ahead][0] - b else ahead)
    return out


def _segment_names(pieces: list[str]) -> tuple[frozenset[str], ...]:
    """The names each segment speaks of: its own, or, for a segment that names nobody and opens
    with a pronoun ("Her new salary is ..."), those the segment before it spoke of."""
    names: list[frozenset[str]] = []
    for piece in pieces:
        own = names_in(piece, first_word=True)
        if not own and names and PRONOUN_START.match(piece):
            own = names[-1]
        names.append(own)
    return tuple(names)


HEADER_LINE = re.compile(r"^[^\n]*\|[^\n]*\n(?=[ \t]*\|?[ \t]*:?-{2,})", re.M)


def _header_units(answer: str) -> list[tuple[int, int]]:
    """Where a table's header row writes a unit in brackets ("Capacity (cases of 24 cans)",
    "Dose (mg per 5 ml)"): what a number there says is the column's unit, not a value."""
    return [(line.start() + m.start(), line.start() + m.end())
            for line in HEADER_LINE.finditer(answer)
            for m in HEADER_PARENS.finditer(line.group(0))]


def _line_labels(answer: str) -> dict[int, str]:
    """Line start -> the line's label ('Average time to resolution (months):'), which speaks
    for every value on the line."""
    out = {}
    for m in re.finditer(r"(?m)^[^\n:|=]{1,80}(?<![\d.,%])(?<![\d.,%]\s):(?=\s)", answer):
        out[m.start()] = m.group(0)
    return out


def _unit_template(label: str) -> Quantity | None:
    """The unit a header, label or phrase gives bare numbers: '(pp)', '$m', 'USD 000s',
    '(ng·h/mL)', '(GWh equiv.)', '(days)', with what it is per ('(£ per four-week billing
    cycle)', '(kg/plant)'), or what it counts ('HGV transactions (m)')."""
    counted = COUNT_HEADER.search(label)
    base = Quantity(value=1.0, dimension="plain", currency=None, scale=1.0, decimals=0,
                    text="", start=0, end=0)
    thousands = THOUSANDS_OF.search(label)
    if thousands:  # "Avg mileage (000 miles)": thousands of the unit or thing it names
        named = units.unit_heading(thousands.group(1))
        return replace(base, scale=1e3, measure=named,
                       noun=None if named else thousands.group(1).lower().rstrip("s"))
    if counted and stem(counted.group(1).lower()) not in MONEY_WORDS:
        return replace(base, noun=counted.group(1).lower()[:-1],
                       scale=HEADER_SCALES[counted.group(2).lower().strip("'")])
    marks = list(UNIT_MARK.finditer(label))
    if not marks:
        measure = HEADER_MEASURE.search(label)
        if measure:
            unit = measure_unit(measure.group(1) or measure.group(2))
            return replace(base, noun=unit, measure=units.si_unit(unit))
        named = next(filter(None, map(units.unit_heading, HEADER_PARENS.findall(label))), None)
        if named:
            return replace(base, measure=named)
        duration = HEADER_DURATION.search(label)
        if duration:
            word = duration.group(1).lower()
            return replace(base, noun=DURATION_SPELLING.get(word, word.rstrip("s")))
        return _rate_template(label, base)
    m = marks[-1]
    if m.group("bps"):
        return replace(base, dimension="percent", scale=0.01, points=True)
    if m.group("pct"):  # a header's "(%)" may head levels or relative changes: unsaid
        return replace(base, dimension="percent",
                       points=None if m.group("pct").lower() in ("%", "percent") else True)
    if m.group("mult"):
        return replace(base, dimension="multiple")
    scale_word = (m.group("cscale") or m.group("scale") or "").lower().strip("'")
    scale = HEADER_SCALES.get(scale_word, 1.0)
    if m.group("cur"):
        currency = CURRENCY_SYMBOLS.get(m.group("cur"), m.group("cur").upper())
        return replace(base, dimension="currency", currency=currency, scale=scale,
                       per=per_of(label[m.end():]))  # "(£ per four-week billing cycle)"
    return replace(base, scale=scale) if scale != 1.0 else None


HEADER_RATE = re.compile(r"\(\s*([^()/]{1,16}?)\s*(?:/|\bper\s)\s*([^()]{1,40})\)", re.I)
THOUSANDS_OF = re.compile(r"\(\s*'?000s?\s+([A-Za-z][A-Za-z ]{0,19}?)\s*\)")
# "HGV transactions (m)", "Outpatient visits (k)": a count in a scale, not metres or money
COUNT_HEADER = re.compile(r"\b([A-Za-z]{3,}s)\s*\(\s*(k|m|mn|bn|000s?|'000s?)\s*\)\s*$")
MONEY_WORDS = frozenset(stem(w) for w in (
    "sales revenues costs fees charges earnings savings proceeds receipts takings expenses "
    "payments profits losses margins prices rates wages salaries funds assets liabilities "
    "reserves dues bills invoices budgets"
).split())


def _rate_template(label: str, base: Quantity) -> Quantity | None:
    """A header's rate in brackets: its unit of measure or counted noun per another thing
    ("(kg/plant)", "(units/staff)")."""
    rate = HEADER_RATE.search(label)
    if rate is None:
        return None
    per = per_of("/" + rate.group(2))
    measure = units.unit_heading(rate.group(1))
    if measure:
        return replace(base, measure=measure, per=per)
    word = rate.group(1).strip().lower()
    if re.fullmatch(r"[a-z]{3,}", word):
        return replace(base, noun=word[:-1] if word.endswith("s") and len(word) > 3 else word,
                       per=per)
    return None


def _implied_units(answer: str, found: list[Quantity]) -> tuple[list[Quantity], list[str]]:
    """Bare numbers read in the unit of their table column's header (or the table's corner
    cell), their line's label, or a unit phrase earlier in their line ("Margin change (pp): 23",
    "| Δ pp |" over "| 23 |"); with each value's column header ("" outside tables)."""
    out = list(found)
    headers = [""] * len(out)
    if not found:
        return out, headers
    line_starts = [0] + [m.end() for m in re.finditer(r"\n", answer)]
    header: list[str] | None = None
    caption: Quantity | None = None
    tabled: dict[str, set[Quantity]] = {}  # a table value's text -> the units it was read in
    header_line = -2
    i = 0
    for n, start in enumerate(line_starts):
        end = line_starts[n + 1] - 1 if n + 1 < len(line_starts) else len(answer)
        line = answer[start:end]
        if TABLE_SEPARATOR.match(line) and n > 0 and "|" in line:
            header, header_line = _cells(answer[line_starts[n - 1]:start - 1]), n - 1
            caption = _caption_unit(answer, line_starts, n - 1)
        elif "|" not in line:
            header = caption = None
        while i < len(out) and out[i].start < end + 1:
            q = out[i]
            if q.start < start or len(line) > MAX_LABELLED_LINE:
                i += 1
                continue
            template = None
            if header is not None and n > header_line and line.lstrip().startswith("|"):
                column = line[:q.start - start].count("|") - 1
                if 0 <= column < len(header):
                    headers[i] = header[column]
                    template = (_unit_template(header[column]) or _unit_template(header[0])
                                or caption)
            if template is None:
                label = LABEL.match(line)
                prefix = line[:q.start - start]
                if label and label.end() <= q.start - start:
                    # "Food cost % = 219,300 / 644,800 = 34.01%": the label's unit is the
                    # result's, after the working's last '=', not its operands'
                    result = line.rfind("=")
                    if result < label.end() or q.start - start > result:
                        template = _unit_template(label.group(0))
                elif re.search(r"\bin\s+\S+\s*$|\(\s*in\s+[^()]*\)\s*:?\s*$", prefix, re.I):
                    template = _unit_template(prefix[-40:])
            if template is not None and q.dimension == "plain" and q.scale == 1.0 \
                    and not (q.noun or q.measure):
                out[i] = with_unit(q, template)
                if headers[i]:
                    tabled.setdefault(q.text, set()).add(template)
            i += 1
    return _restated_from_tables(out, headers, tabled), headers


def _restated_from_tables(out: list[Quantity], headers: list[str],
                          tabled: dict[str, set[Quantity]]) -> list[Quantity]:
    """A bare number in prose that the answer's table gives in one unit is in that unit: under
    a caption "(kWh)", "Hull therefore used 86.4" is 86.4 kWh; "Dedicated desks are 750" under
    "(A$ per week)" is A$750 a week."""
    if not tabled:
        return out
    for i, q in enumerate(out):
        units_of = tabled.get(q.text)
        if units_of and len(units_of) == 1 and not headers[i] and q.dimension == "plain" \
                and q.scale == 1.0 and not (q.noun or q.measure):
            out[i] = with_unit(q, next(iter(units_of)))
    return out


CAPTION_LINES = 2  # a table's caption stands this many lines above its header at most (a blank)
MAX_CAPTION = 160
# "Diesel figures below are in litres per month:", "Fees below are in euros per month:"
CAPTION_IN = re.compile(r"\bin\s+((?:us\s+)?dollars|euros|pounds(?:\s+sterling)?|[a-z][a-z ]{1,20}?)"
                        r"(?:\s+(per\s+\w+))?\s*[:.]?\s*$", re.I)
CURRENCY_NAMES = {"dollars": "USD", "us dollars": "USD", "euros": "EUR", "pounds": "GBP",
                  "pounds sterling": "GBP"}


def _caption_unit(answer: str, line_starts: list[int], header_line: int) -> Quantity | None:
    """The unit a table's caption gives its bare numbers: the line just above its header (a
    blank line between) that is no table row, "Gas consumption by plant, February 2024 (kWh)",
    "Plant operating results, FY2024 (£000)", "Diesel figures below are in litres per month:"."""
    for n in range(header_line - 1, max(-1, header_line - 1 - CAPTION_LINES), -1):
        end = line_starts[n + 1] - 1
        line = answer[line_starts[n]:end].strip()
        if not line:
            continue
        if "|" in line or len(line) > MAX_CAPTION:
            return None
        said = CAPTION_IN.search(line)
        if said:
            base = Quantity(value=1.0, dimension="plain", currency=None, scale=1.0, decimals=0,
                            text="", start=0, end=0)
            named, per = said.group(1).lower(), per_of(" " + said.group(2)) if said.group(2) else None
            if named in CURRENCY_NAMES:
                return replace(base, dimension="currency", currency=CURRENCY_NAMES[named], per=per)
            unit = units.unit_heading(named)
            if unit:
                return replace(base, measure=unit, per=per)
        return _unit_template(line)
    return None


CLOCK_HEADER = re.compile(r"\bh{1,2}\s?:\s?mm\b", re.I)  # a column of durations: "Average (h:mm)"
CLOCK_MARK = re.compile(r"[\s*_]*(?:(?:per|a|each)\s+\w+[\s*_]*)?\(?\s*h{1,2}\s?:\s?mm\b",
                        re.I)  # "**00:14** (hh:mm)", "2:30 per day (hh:mm)"


def _clock_durations(answer: str, quantities: list[Quantity],
                     headers: list[str]) -> tuple[list[Quantity], list[str]]:
    """Of the "h:mm" values, only those an hour word ("6:45 hours"), an "(hh:mm)" written right
    after them or their column's header ("(h:mm)") says are durations: the others are clock
    times ("a 09:30 start")."""
    keep = [i for i, q in enumerate(quantities)
            if ":" not in q.text or not (clock := CLOCK_DURATION.fullmatch(q.text)) or clock.group(3)
            or CLOCK_HEADER.search(headers[i]) or CLOCK_MARK.match(answer, q.end)]
    return [quantities[i] for i in keep], [headers[i] for i in keep]


# "Note: all prices in this section are per bale", "fees below are quoted per quarter"
NOTED_PER = NeedsWord(re.compile(
    r"\b(?:prices|figures|amounts|values|rates|costs|fees|charges|tariffs)\b[^.\n]{0,40}?\b(?:are|is)"
    r"\s+(?:(?:quoted|given|shown|stated|expressed|invoiced|charged)\s+)?per\s+([a-z][\w-]*)", re.I),
    ("prices", "figures", "amounts", "values", "rates", "costs", "fees", "charges", "tariffs"))


def _noted_per(answer: str, quantities: list[Quantity]) -> list[Quantity]:
    """Amounts after a note saying what the answer's prices are per ("all prices in this section
    are per bale") are per that, unless they say what they are per themselves."""
    note = next(iter(NOTED_PER.finditer(answer)), None)
    if note is None:
        return quantities
    per = per_of(" per " + note.group(1))
    return [replace(q, per=per) if q.start > note.end() and q.dimension == "currency"
            and not q.per else q for q in quantities]


# "(all figures in €000 unless stated)", "Amounts are in $m": a note giving the scale (and
# currency) of the bare numbers after it
NOTED_SCALE = NeedsWord(re.compile(
    r"\b(?:figures|amounts|values|numbers)\b[^.\n]{0,30}?\bin\s+((?:(?:US|A|C)?[$€£¥]|USD|EUR|GBP)"
    r"\s?(?:'?000s?|k|m|mn|bn)|thousands|millions|billions)(?!\w)", re.I),
    ("figures", "amounts", "values", "numbers"))


def _noted_scale(answer: str, quantities: list[Quantity]) -> list[Quantity]:
    """Bare numbers after a note saying what the answer's figures are in ("all figures in €000
    unless stated") are in that scale and currency: "Total crew cost: 1,140" is €1.14m."""
    note = next(iter(NOTED_SCALE.finditer(answer)), None)
    template = _unit_template(note.group(1)) if note else None
    if note is None or template is None:
        return quantities
    return [with_unit(q, template) if q.start > note.end() and q.dimension == "plain"
            and q.scale == 1.0 and not (q.noun or q.measure) else q for q in quantities]


LABEL_PER = re.compile(r"\bper\s", re.I)
RESULT_MARK = re.compile(r"=|→|->")


def _label_per(answer: str, quantities: list[Quantity], line_labels: dict[int, str],
               line_of: Callable[[int], int]) -> list[Quantity]:
    """The value a line's label gives per something ("Fee income per branch: $3.6m ÷ 24 =
    $150,000", "Cost per reportable result: $9.12 (total $38.4m ...)") is per that, unless it
    says what it is per itself: the line's result (the value after its last '='), else its
    first value; the working values beside it are not."""
    out = list(quantities)
    done: set[int] = set()
    for i, q in enumerate(quantities):
        line = line_of(q.start)
        label = line_labels.get(line, "")
        if line in done or "per" not in label.lower() or not (said := LABEL_PER.search(label)):
            continue
        done.add(line)
        end = answer.find("\n", line)
        end = len(answer) if end < 0 else end
        marks = list(RESULT_MARK.finditer(answer, line + len(label), end))
        after = marks[-1].end() if marks else line + len(label)
        j = next((k for k in range(i, len(quantities)) if quantities[k].start >= after), None)
        if j is None or quantities[j].start >= end:
            continue
        result = quantities[j]
        per = per_of(" " + label[said.start():].rstrip(":").strip())
        if per and not result.per and (result.dimension == "currency" or (
                result.dimension == "plain" and not (result.noun or result.measure))):
            out[j] = replace(result, per=per)
    return out


def _restated_measures(quantities: list[Quantity]) -> list[Quantity]:
    """A bare number the answer also writes in one unit of measure is in that unit: after a
    column "Fuel per round trip (m³)" holding 4.6, "burns 4.6 per round trip" is 4.6 m³."""
    measures: dict[str, set[Quantity]] = {}
    for q in quantities:
        if q.measure and q.dimension == "plain":
            measures.setdefault(q.text, set()).add(replace(q, value=1.0, scale=1.0))
    out = list(quantities)
    for i, q in enumerate(quantities):
        same = {m.measure for m in measures.get(q.text, ())}
        if len(same) == 1 and q.dimension == "plain" and not (q.noun or q.measure) \
                and q.scale == 1.0:
            out[i] = replace(q, measure=same.pop())
    return out


def _cells(line: str) -> list[str]:
    cells = line.strip().strip("|").split("|")
    return [c.strip() for c in cells]
