"""Quantity parsing: every format the checker reads, the traps, and properties (hypothesis)."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rubric_audit.checks.code_grade import grade_numeric
from rubric_audit.checks.lints import FILE_NAME
from rubric_audit.checks.numbers import find_quantities, find_ranges


def one(text: str):
    [q] = find_quantities(text)
    return q


@pytest.mark.parametrize(("text", "value", "dimension", "currency"), [
    ("$2.1bn", 2.1e9, "currency", "USD"),
    ("$2,100M", 2.1e9, "currency", "USD"),
    ("USD 2,100 million", 2.1e9, "currency", "USD"),
    ("2.1 billion USD", 2.1e9, "currency", "USD"),
    ("EUR 20m", 20e6, "currency", "EUR"),
    ("€20mm", 20e6, "currency", "EUR"),
    ("£480,900", 480_900, "currency", "GBP"),
    ("NOK 2,360.0m", 2_360e6, "currency", "NOK"),
    ("$150k", 150e3, "currency", "USD"),
    ("-$182.95", -182.95, "currency", "USD"),
    ("$(182.95)", -182.95, "currency", "USD"),
    ("(1,250)", -1250, "plain", None),
    ("−1.56%", -1.56, "percent", None),
    ("21.5%", 21.5, "percent", None),
    ("21.5 percent", 21.5, "percent", None),
    ("2.0 percentage points", 2.0, "percent", None),
    ("150bp", 1.5, "percent", None),
    ("25 basis points", 0.25, "percent", None),
    ("4.6x", 4.6, "multiple", None),
    ("4.6×", 4.6, "multiple", None),
    ("1,234", 1234, "plain", None),
    ("1.234", 1.234, "plain", None),
    ("50.57", 50.57, "plain", None),
])
def test_formats(text: str, value: float, dimension: str, currency: str | None) -> None:
    q = one(f"The value is {text} today.")
    assert q.value == pytest.approx(value)
    assert (q.dimension, q.currency) == (dimension, currency)


def test_multiple_is_not_a_percentage() -> None:
    multiple, percent = find_quantities("EV/EBITDA of 4.6x and margin of 4.6%")
    assert (multiple.dimension, percent.dimension) == ("multiple", "percent")
    assert not multiple.compatible(percent)


def test_thousands_separator_is_not_a_decimal_point() -> None:
    comma, point = find_quantities("1,234 and 1.234")
    assert (comma.value, point.value) == (1234, 1.234)


def test_scale_words_normalise() -> None:
    bn, m = find_quantities("$2.1bn equals $2,100M")
    assert bn.value == m.value and bn.step == 1e8 and m.step == 1e6


@pytest.mark.parametrize(("text", "value"), [
    ("$622.85MM", 622.85e6), ("USD 45.6 MM", 45.6e6), ("EUR 2.1BN", 2.1e9), ("$3.5 Million", 3.5e6)])
def test_scale_words_in_capitals(text: str, value: float) -> None:
    (quantity,) = find_quantities(text)
    assert quantity.value == pytest.approx(value) and quantity.text == text


def test_a_number_is_never_read_cut_short() -> None:
    """An unknown suffix leaves the number unread rather than read as its first digits."""
    assert find_quantities("$622.85QQ and 1234.5zz") == []


@pytest.mark.parametrize("text", [
    "In FY2025 the firm grew", "Store K01 leads", "on 2 April 2025", "clause 14.1 applies",
    "more than 5% of stores", "at least 3 stores", "in 2024 and 2025", "Q3 results",
    "the 2025E EBITDA", "Purchase order PO 3150 was raised", "see P.O. 3150", "RFQ 1187 closed",
    "Batch 4410 failed release", "under Protocol 2207", "GRN 5521 booked", "AUC0-12 rose",
    "the CL0-24 estimate",
])
def test_identifiers_dates_references_and_thresholds_are_not_quantities(text: str) -> None:
    assert find_quantities(text) == []


def test_a_document_prefix_leaves_the_quantities_beside_it() -> None:
    """'PO 7731' is the order's number; '2,400 units' and 'USD100-200' are still read."""
    assert [(q.value, q.noun) for q in find_quantities("PO 7731 covers 2,400 units")] == [
        (2400, "unit")]
    assert [q.value for q in find_quantities("a band of USD100-200")] == [100, 200]


@pytest.mark.parametrize(("text", "unit"), [
    ("18.6 µg·h/mL", "µg·h/mL"), ("18.6 μg·h/ml", "µg·h/mL"), ("18.6 ug⋅h/mL", "µg·h/mL"),
    ("400 mcg", "µg"), ("1,240 ng/mL", "ng/mL"), ("3 mmol/l", "mmol/L"), ("12 MWh", "MWh"),
    ("12 mW", "mW"), ("5 Kg", "kg"), ("25 mg/kg/day", "mg/kg/day"),
])
def test_a_unit_of_measure_is_read_whole_and_written_one_way(text: str, unit: str) -> None:
    """The unit a value is measured in is what it counts: its prefix sets its scale, so ng·h/mL
    and µg·h/mL are different units (and MW is not mW)."""
    assert one(f"It was {text} at peak.").noun == unit


def test_thresholds_are_returned_when_asked() -> None:
    assert [q.value for q in find_quantities("more than 5%", thresholds=True)] == [5.0]


@pytest.mark.parametrize(("text", "low", "high"), [
    ("accept 21.5%-22.0%", 21.5, 22.0),
    ("between 70 and 75%", 70, 75),
    ("roughly 70% to 75%", 70, 75),
    ("NOK 2,359.0m to NOK 2,361.0m", 2_359e6, 2_361e6),
    ("70–75%", 70, 75),
])
def test_ranges(text: str, low: float, high: float) -> None:
    found = find_quantities(text)
    [(a, b)] = find_ranges(text, found)
    assert (a.value, b.value) == pytest.approx((low, high))
    assert a.dimension == b.dimension


def test_a_list_is_not_a_range() -> None:
    text = "GBP 480,900 and GBP 483,600"
    assert find_ranges(text, find_quantities(text)) == []


amounts = st.decimals(min_value="0.01", max_value="999999999", places=2, allow_nan=False,
                      allow_infinity=False)


@given(amounts, st.sampled_from(["$", "EUR ", "£"]))
def test_thousands_separators_parse_back(amount, currency) -> None:
    text = f"{currency}{amount:,.2f}"
    q = one(f"It is {text}.")
    assert q.value == pytest.approx(float(amount))
    assert q.decimals == 2 and q.step == pytest.approx(0.01)


@given(st.decimals(min_value="0.1", max_value="999", places=1))
def test_billions_equal_millions(amount) -> None:
    bn, m = find_quantities(f"${amount}bn vs ${float(amount) * 1000:,.0f}M")
    assert bn.value == pytest.approx(m.value)


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), st.integers(0, 4))
def test_precision_is_the_last_written_digit(value: float, places: int) -> None:
    text = f"{value:.{places}f}%"
    q = one(f"Rate: {text} now")
    assert q.step == pytest.approx(10.0 ** -places)
    assert q.value == pytest.approx(float(f"{value:.{places}f}"))


MIXED = ("Revenue rose 4.5% to $2.1bn in FY2025; see 29 CFR 1910.1200(b)(2) and Rule 26(a)(1). "
         "(14) | 1,250 | (3.4) |\n1. more than 5% of 12,345,678.9 stores, or $(1.2)m " + "a" * 300
         + " x.y.z" * 40 + " § .1600 ((((" + "-" * 60 + "1" * 80 + " 1," * 40 + " report_v2.\n")


def _seconds(size: int) -> float:
    """Reading numbers and file names in `size` characters of mixed text, and grading on it."""
    text = (MIXED * (size // len(MIXED) + 1))[:size]
    start = time.perf_counter()
    find_quantities(text)
    list(FILE_NAME.finditer(text))
    grade_numeric("States the EV is $2.1bn (+/- $0.1bn)", text, text)
    return time.perf_counter() - start


def test_number_reading_is_linear_on_a_megabyte_of_mixed_text() -> None:
    small = min(_seconds(250_000) for _ in range(2))
    large = min(_seconds(1_000_000) for _ in range(2))
    assert large < 8 * small + 0.05, (small, large)  # 4x the text: linear is ~4x, quadratic 16x


@pytest.mark.parametrize(("text", "value"), [
    ("CHF 48'600'000", 48_600_000),  # Swiss apostrophes separate thousands
    ("CHF 45\u2019850\u2019000", 45_850_000),
    ("£1.30¹", 1.30),  # a superscript glued to a value marks a footnote
])
def test_separators_and_footnote_marks(text: str, value: float) -> None:
    assert one(text).value == pytest.approx(value)


def test_a_superscript_after_a_unit_is_still_no_footnote() -> None:
    """"120m²" is an area, never 120 million."""
    assert all(q.value != 120e6 for q in find_quantities("a 120m² floor"))


@pytest.mark.parametrize("text", ["in Term 2 we", "Ward 3 beds", "at Store 12 on", "zone-4 probe"])
def test_a_capitalised_or_hyphenated_place_or_period_with_a_number_is_its_name(text: str) -> None:
    assert find_quantities(text) == []


def test_a_lower_case_term_is_still_a_value() -> None:
    assert one("a term of 5 years").noun == "year"


@pytest.mark.parametrize(("text", "value", "noun"), [
    ("stays for two and a half terms", 2.5, "term"),
    ("one and a half years", 1.5, "year"),
])
def test_numbers_in_words_with_a_half(text: str, value: float, noun: str) -> None:
    from rubric_audit.checks.numbers import find_word_numbers

    [q] = find_word_numbers(text)
    assert (q.value, q.noun) == (value, noun)


@pytest.mark.parametrize(("text", "measure"), [
    ("a rate of −1.8 s/day", "second/day"),
    ("+3.1 s/week", "second/week"),
    ("a release of 3.2 m³/s", "meter**3/second"),
])
def test_rates_of_time_and_flow_are_units(text: str, measure: str) -> None:
    assert one(text).measure == measure


def test_a_duration_counted_after_a_modifier_is_the_duration() -> None:
    """"10 teaching weeks" counts weeks; "event-day staff" counts no days."""
    assert one("runs for 10 teaching weeks").noun == "week"
    assert one("1,240 event-day staff").noun != "day"


def _ending_with_patterns():
    from rubric_audit.checks import answer, asides, numbers, restatements

    found = [getattr(module, name) for module in (numbers, answer, restatements, asides)
             for name in dir(module)]
    return [p for p in found if isinstance(p, numbers.NeedsWord)]


@given(st.lists(st.sampled_from(["from ", "vs. ", "above the ", "more than ", "by ", "Jan ",
                                 "section ", "per ", "overrun of ", "$", "€12m - ", "USD ", "x",
                                 "not ", " ", "budget ", "12", ",", "(", "Overspend ",
                                 "Corrected: ", "I can't ", "unable to find ", "saved to a.xlsx",
                                 "roughly ", "which I'll use", "; I use ", "On reflection",
                                 "Had ", "would have been ", "industry forecasts put ",
                                 "ranged from ", "the correct figure is "]),
                max_size=12).map("".join))
def test_a_search_skipped_for_want_of_its_words_would_have_found_nothing(text: str) -> None:
    """Each pattern searched only where one of its words stands finds exactly what a search of
    every window (or of the whole text) would."""
    patterns = _ending_with_patterns()
    assert len(patterns) >= 12
    for ending in patterns:
        for start in range(0, len(text) + 1, 3):
            assert bool(ending.search(text, start, len(text))) == bool(
                ending.pattern.search(text, start, len(text))), (ending.pattern.pattern, text)


@pytest.mark.parametrize(("text", "value", "noun", "scale"), [
    ("a **twenty-two-week** stage", 22, "week", 1.0),
    ("a forty-six-week cycle", 46, "week", 1.0),
    ("up to sixty thousand tonnes a year", 60_000, "tonne", 1e3),
    ("three hundred and twelve days", 312, "day", 1.0),
    ("two million, three hundred thousand visitors", 2_300_000, "visitor", 1e3),
])
def test_numbers_in_words_as_adjectives_and_with_scale_words(text: str, value: float, noun: str,
                                                             scale: float) -> None:
    """A compound number word before a hyphen counts what follows it, and a scale word in words
    multiplies it, at the scale word's precision."""
    from rubric_audit.checks.numbers import find_word_numbers

    [q] = find_word_numbers(text)
    assert (q.value, q.noun, q.scale) == (value, noun, scale)


def test_fractions_in_words_count_nothing_and_an_amount_in_words_is_money() -> None:
    from rubric_audit.checks.numbers import find_word_numbers

    assert find_word_numbers("two-thirds of the fleet and three-quarters of staff") == []
    [q] = find_word_numbers("a premium of ninety thousand six hundred dollars ($90.6k)")
    assert (q.value, q.dimension) == (90_600, "currency")
    assert one("ninety thousand six hundred dollars ($90.6k)").value == 90_600  # no negative


@pytest.mark.parametrize(("text", "values"), [
    ("so the number still open is seven.", [7.0]),
    ("The count was thirty-two\nNext line", [32.0]),
    ("- Q4: nil", [0.0]),
    ("Claims outstanding: none.", [0.0]),
    ("The total comes to two hundred and five. Done", [205.0]),
    ("None of the sites is open", []),  # no copula or label before it
    ("The answer is seven days", []),  # what it counts follows: a count in words
    ("is seven of the twelve sites", []),  # the sentence runs on
])
def test_a_number_in_words_stated_as_a_sentence_s_value(text: str, values: list[float]) -> None:
    """A number word, nil or none that a copula or a label states as the value its sentence or
    line ends on is read; one that counts what follows it, or that the sentence runs past, is
    not (that is `find_word_numbers`' or nothing)."""
    from rubric_audit.checks.numbers import find_stated_word_numbers

    assert [q.value for q in find_stated_word_numbers(text)] == values


def test_calendar_durations_convert_among_themselves_and_never_into_weeks() -> None:
    from rubric_audit.checks.numbers import duration_ratio, value_in_terms_of

    assert value_in_terms_of(one("a term of 2 years"), one("a term of 24 months")) == 24
    assert one("2 years 6 months").value == 30
    assert duration_ratio("quarter", "month") == 3
    assert duration_ratio("week", "month") is None  # "12 weeks" is no "3 months"
    assert not one("12 weeks").compatible(one("3 months"))


def test_h_mm_is_a_duration_only_where_an_hour_word_or_its_column_says_so() -> None:
    from rubric_audit.checks.answer import read_answer

    table = ("| Possession | Average (h:mm) |\n|---|---|\n| Start | 22:15 |\n| **Duration** | "
             "**6:45** |")
    assert [(q.text, q.value) for q in read_answer(table).quantities][-1] == ("6:45", 405)
    prose = read_answer("The shift starts at 7:30 and the changeover takes 1:15 hours.")
    assert [(q.text, q.noun, q.value) for q in prose.quantities] == [("1:15 hours", "minute", 75)]


def test_a_count_names_the_thing_its_phrase_counts() -> None:
    """"1,140 student accounts" counts accounts, as "1,140 accounts" does; "14 complaint lines"
    count lines, not complaints; a participle after a count counts nothing."""
    assert one("1,140 student accounts").compatible(one("1,140 accounts opened"))
    assert not one("14 complaint lines").compatible(one("9 customer complaints"))
    assert one("1,240 returned within six weeks").noun is None
    assert one("12 hour shifts").noun == "hour"


def test_a_category_number_is_an_identifier() -> None:
    assert find_quantities("Category 1 purchased goods, Category 12 end-of-life") == []


def test_a_period_written_short_is_the_period() -> None:
    from rubric_audit.checks.numbers import per_of

    assert per_of("/hr") == per_of(" per hour") == "hour"
    assert per_of(" per annum") == per_of("/yr") == "year"
    assert one("22 t per shift").per == "shift"  # the unit of measure before 'per'
