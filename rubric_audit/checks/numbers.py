"""Quantities in rubric and answer text: parse, normalise, and decide whether two agree.

Handles currency symbols and codes, %, percentage points, basis points, multiples (4.6x),
scale words and suffixes (k, m, mm, M, bn, B, million, billion), thousands separators, negatives
with a sign or in parentheses, and ranges. Years, dates, clause numbers, thresholds ("more than
5%") and identifiers (FY2025, K01) are not quantities. Values are normalised to base units
(currency in units, percentages in percent), so "$2.1bn" and "$2,100M" compare equal.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, replace
from typing import Literal

Dimension = Literal["currency", "percent", "multiple", "plain"]

CURRENCY_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
CURRENCY_CODES = ("USD", "EUR", "GBP", "NOK", "SEK", "DKK", "CHF", "JPY", "CAD", "AUD", "CNY",
                  "INR", "HKD", "SGD", "NZD", "ZAR", "BRL", "MXN")
SCALES = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mm": 1e6, "mn": 1e6, "million": 1e6,
          "bn": 1e9, "b": 1e9, "billion": 1e9, "tn": 1e12, "trillion": 1e12}
MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|"
          "december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
THRESHOLD = re.compile(r"(?:more|less|greater|fewer|higher|lower)\s+than\s*$|(?:above|below|over|"
                       r"under|exceeding|at\s+least|at\s+most|up\s+to|[<>]=?)\s*$", re.I)
REFERENCE = re.compile(r"(?:clause|section|article|note|schedule|paragraph|item|page|§|"
                       r"\bno\.?|number|amendment|version)\s*$", re.I)
MONTH_BEFORE = re.compile(rf"\b(?:{MONTHS})\.?\s*$", re.I)
MONTH_AFTER = re.compile(rf"^\s*(?:{MONTHS})\b", re.I)

_CODES = "|".join(CURRENCY_CODES)
QUANTITY = re.compile(
    rf"""
    (?<![\w.,%)])
    (?P<sign>[-−](?=\s?(?:[$€£¥]|\d|(?:{_CODES})\b)))?
    (?:(?P<cur_sym>[$€£¥])|(?P<cur_pre>(?:{_CODES}))\s?)?
    (?P<sign2>[-−])?
    (?P<num>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)
    (?:\s?(?P<scale_word>billion|million|thousand|trillion|bn|mm|mn|tn)\b
       |(?P<scale>[kKmMbB])(?![A-Za-z]))?
    (?:\s?(?P<unit>%|percent\b|per\s?cent\b|percentage\s+points?\b|pp\b|bps?\b|basis\s+points?\b
       |[x×](?![A-Za-z])|times\b))?
    (?:\s?(?P<cur_post>{_CODES})\b)?
    (?![\w])
    """,
    re.X,
)
RANGE_JOIN = re.compile(r"^\s*(?:-|–|—|to|and)\s*$", re.I)


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

    @property
    def step(self) -> float:
        """One unit of the last written digit, in base units ("2.1bn" -> 1e8)."""
        return 10.0 ** -self.decimals * self.scale

    def compatible(self, other: Quantity) -> bool:
        """Same kind of thing: currencies must agree when both are named."""
        if self.dimension != other.dimension:
            return False
        return not (self.currency and other.currency and self.currency != other.currency)

    def show(self) -> str:
        return self.text


def _decimals(num: str) -> int:
    return len(num.split(".")[1]) if "." in num else 0


def _quantity(match: re.Match[str], text: str) -> Quantity | None:
    g = match.groupdict()
    num = g["num"]
    before, after = text[:match.start()], text[match.end():]
    currency = (CURRENCY_SYMBOLS.get(g["cur_sym"] or "") or g["cur_pre"] or g["cur_post"])
    scale_name = (g["scale_word"] or g["scale"] or "").lower()
    unit = re.sub(r"\s+", " ", (g["unit"] or "").lower())
    if unit in ("x", "×", "times"):
        dimension: Dimension = "multiple"
    elif unit:
        dimension = "percent"
    elif currency:
        dimension = "currency"
    else:
        dimension = "plain"
    factor = SCALES.get(scale_name, 1.0)
    if dimension == "plain" and factor == 1.0:
        whole = float(num.replace(",", ""))
        if "." not in num and "," not in num and 1900 <= whole <= 2100:
            return None  # a year
        if MONTH_BEFORE.search(before) or MONTH_AFTER.search(after):
            return None  # part of a date
        if REFERENCE.search(before):
            return None  # clause 14.1, section 3
    if dimension == "plain" and g["scale"] and not currency:
        return None  # "5m" alone could be metres or months: not a quantity we can trust
    if unit.startswith("b"):  # basis points, in percent
        factor *= 0.01
    value = float(num.replace(",", "")) * factor
    negative = bool(g["sign"] or g["sign2"])
    if before.endswith("(") and after.startswith(")"):
        negative = True  # accounting notation: (182.95) or $(182.95)
        outside = re.search(r"([$€£¥])\s?\($", before)
        if outside and not currency:
            currency, dimension = CURRENCY_SYMBOLS[outside.group(1)], "currency"
    return Quantity(value=-value if negative else value, dimension=dimension, currency=currency,
                    scale=factor, decimals=_decimals(num), text=match.group(0).strip(),
                    start=match.start(), end=match.end())


def find_quantities(text: str, thresholds: bool = False) -> list[Quantity]:
    """Quantities in `text`, in order; values after 'more than', 'below' ... only if asked."""
    return list(_quantities(text, thresholds))


@functools.lru_cache(maxsize=4096)
def _quantities(text: str, thresholds: bool) -> tuple[Quantity, ...]:
    """Parsed once per text: prompts and criteria recur across every attempt."""
    out = []
    for match in QUANTITY.finditer(text):
        if not match.group("num"):
            continue
        q = _quantity(match, text)
        if q is None:
            continue
        if not thresholds and THRESHOLD.search(text[:match.start()]):
            continue
        out.append(q)
    return tuple(_share_units_in_ranges(text, out))


def _share_units_in_ranges(text: str, found: list[Quantity]) -> list[Quantity]:
    """In '70-75%' or 'NOK 2,359m to 2,361m' the unit written once applies to both ends."""
    out = list(found)
    for i in range(len(out) - 1):
        a, b = out[i], out[i + 1]
        if not _range_gap(text, a, b):
            continue
        if a.dimension == "plain" and b.dimension != "plain":
            out[i] = _like(a, b)
        elif b.dimension == "plain" and a.dimension != "plain":
            out[i + 1] = _like(b, a)
    return out


def _like(bare: Quantity, unit_from: Quantity) -> Quantity:
    return replace(bare, value=bare.value * unit_from.scale, dimension=unit_from.dimension,
                   currency=unit_from.currency, scale=unit_from.scale)


def _range_gap(text: str, a: Quantity, b: Quantity) -> bool:
    """Whether the text between two quantities joins them as a range."""
    between = text[a.end:b.start]
    if not RANGE_JOIN.match(between):
        return False
    return between.strip().lower() != "and" or bool(re.search(r"between\s*$", text[:a.start],
                                                              re.I))


def find_ranges(text: str, quantities: list[Quantity]) -> list[tuple[Quantity, Quantity]]:
    """Pairs written as a range: 'A-B', 'A to B', 'between A and B'."""
    pairs = []
    for a, b in itertools.pairwise(quantities):
        if not a.compatible(b) or not _range_gap(text, a, b):
            continue
        pairs.append((a, b) if a.value <= b.value else (b, a))
    return pairs
