"""Which named subject each of an answer's values is said of, where the answer pairs values of
one kind with subjects of one kind, and whether a value that meets a criterion's target is said
of another subject than the criterion's.

A value's owner is the nearest subject its clause names before it ("Riverside Hospital ran at
33.1% ..., while St Aldhelm's was 36.4% and Kingsmead 38.9%": 38.9% is Kingsmead's), the name a
"respectively" sentence gives it by order ("Oakfield and Ridgeway pay £36,500 and £28,300
respectively": £36,500 is Oakfield's), its list item's label ("- Fire alarm: £4,800") or, in a
criterion with several targets, the word it counts by ("188 new fittings and 642 repeat
fittings"). A value meeting the target whose owner is another subject of the kind, where the
answer gives the criterion's subject a value of its own, is no evidence for the criterion: the
checker fails where that own value misses the target and abstains where it is not one value.
Every pass is linear in the answer.
"""

from __future__ import annotations

import bisect
import functools
import re
from typing import Literal

from rubric_audit.checks.answer import FIRST_NAME, NAME, NOT_NAMES, Reading, clauses_of, read_answer
from rubric_audit.checks.binding import TargetCheck, set_aside
from rubric_audit.checks.criterion import Claim
from rubric_audit.checks.numbers import Quantity, value_in_terms_of
from rubric_audit.checks.text import content_tokens

RESPECTIVELY = re.compile(r"\brespectively\b", re.I)
LIST_JOIN = re.compile(r",\s*(?:and\s+)?|\s+and\s+|\s*&\s*(?=[A-Z][a-z]{2,})")
# "- Fire alarm: £4,800", "2. Sprinklers: £6,250": a list item's label
LIST_ITEM = re.compile(r"[ \t]*(?:[-*•+]|\d{1,2}[.)])[ \t]+(?:\*\*|__)?([^:\n|*_]{1,40}?)"
                       r"(?:\*\*|__)?[ \t]*:")
TOTALS = frozenset(content_tokens("total sum overall combined net gross all average subtotal"))
COUNTED_BY = re.compile(r"[*_\s]*([a-z]{3,})\b")  # the word after a value: "188 new fittings"

ORDER = 10  # a subject's own value is a figure of the target's kind: within 10x of it
Owner = tuple[Literal["name", "label", "word"], frozenset[str], str]  # (kind, keys, as written)


def _names_before(text: str, start: int, end: int) -> Owner | None:
    """The proper names written in text[start:end] ("Riverside Hospital"), as an owner."""
    found = {m.span(): m.group(0) for m in NAME.finditer(text, start, end)}
    found |= {m.span(1): m.group(1) for m in FIRST_NAME.finditer(text, start, end)
              if m.start(1) >= start}
    names = {span: name for span, name in found.items() if name.lower() not in NOT_NAMES}
    if not names:
        return None
    return ("name", frozenset(name.lower() for name in names.values()),
            " ".join(names[span] for span in sorted(names)))


@functools.lru_cache(maxsize=1024)
def owners(answer: str) -> tuple[Owner | None, ...]:
    """Per value of the answer, the subject it is said of (`Owner`), or None."""
    reading = read_answer(answer)
    text, quantities = reading.text, reading.quantities
    found: list[Owner | None] = [None] * len(quantities)
    if not quantities:
        return ()
    clauses = clauses_of(text)[0]
    starts = [a for a, _ in clauses]
    previous_end: dict[int, int] = {}
    for i, q in enumerate(quantities):
        n = bisect.bisect_right(starts, q.start) - 1
        if n < 0:
            continue
        begin = max(clauses[n][0], previous_end.get(n, clauses[n][0]))
        previous_end[n] = q.end
        found[i] = _names_before(text, begin, q.start)
    for i, q in enumerate(quantities):
        line = text.rfind("\n", 0, q.start) + 1
        item = LIST_ITEM.match(text, line)
        if item and item.end() <= q.start and not any(
                line <= r.start < q.start for r in quantities[:i]):
            found[i] = ("label", content_tokens(item.group(1)), item.group(1).strip())
    _respectively(reading, found)
    return tuple(found) if any(found) else ()


LISTED = re.compile(r"(?m)^[ \t]*(?:[-*•+]|\d{1,2}[.)])[ \t]+[^:\n|]{1,44}:")


@functools.lru_cache(maxsize=1024)
def _listed(answer: str) -> bool:
    """Whether the answer has a list item with a label at all, looked for before its owners."""
    return LISTED.search(answer) is not None


@functools.lru_cache(maxsize=1024)
def _labelled(answer: str) -> bool:
    """Whether any value of the answer has a list item's label for its owner."""
    return any(o is not None and o[0] == "label" for o in owners(answer))


def _respectively(reading: Reading, found: list[Owner | None]) -> None:
    """The names a "respectively" sentence lists before its values, given to them in order."""
    text = reading.text
    for mark in RESPECTIVELY.finditer(text):
        segment = bisect.bisect_right(reading.bounds, mark.start()) - 1
        values = [i for i, q in enumerate(reading.quantities)
                  if reading.segment_of[i] == segment and q.end <= mark.start()]
        if len(values) < 2:
            continue
        head = text[reading.bounds[segment]:reading.quantities[values[0]].start]
        parts = [part for part in LIST_JOIN.split(head) if part.strip()]
        named = [names for part in parts if (names := _names_before(part, 0, len(part)))]
        if len(named) == len(values):
            for i, names in zip(values, named, strict=True):
                found[i] = names


def said_of_another(claim: Claim, reading: Reading, checks: list[TargetCheck]
                    ) -> tuple[Literal["fail", "not_applicable"], str] | None:
    """Whether a value deciding a target is said of another subject of its kind than the
    criterion's while the answer gives the criterion's subject a value of its own: for a pass,
    (fail, why) where that own value misses the target and (not_applicable, why) where it is
    not one value; for a fail, (not_applicable, why) where that own value meets it. None where
    no deciding value is said of another subject."""
    words = claim.counted_by or None
    if words is None and len(claim.targets) != 1:
        return None  # names and labels are read against a criterion with one target
    if words is None and not claim.names and not _listed(reading.text):
        return None  # no name to read, no list item labelled
    owned = owners(reading.text) if words is None else ()
    if words is None and not (claim.names and owned) and not _labelled(reading.text):
        return None
    for n, c in enumerate(checks):
        if c.outcome not in ("pass", "fail") or c.hedged or claim.roles[n] != "level":
            continue
        subject = claim.subjects[n]

        def owner_of(j: int) -> Owner | None:
            return owned[j] if words is None else _counted_by(reading, j, words)

        deciding = {id(q) for q in (c.matched if c.outcome == "pass" else c.missed)}
        for i in [i for i, q in enumerate(reading.quantities) if id(q) in deciding]:
            owner = owner_of(i)
            mine = _wanted(owner, claim, subject, words, n)
            if owner is None or not mine or owner[1] & mine == owner[1] \
                    or (owner[0] == "label" and owner[1] & TOTALS):
                continue
            kind = reading.of_kind(c.target)[1]
            aside = set_aside(reading, subject)
            theirs = {j: len(o[1] & mine) for j, ok in enumerate(kind)
                      if ok and j != i and j not in aside and j not in reading.references
                      and j not in reading.changes and (o := owner_of(j)) is not None
                      and o[0] == owner[0] and o[1] & mine
                      and _same_order(reading.quantities[j], c.target)}
            best = max(theirs.values(), default=0)
            own = [j for j, score in theirs.items() if score == best]
            if not own or len(owner[1] & mine) >= best \
                    or (owner[0] == "label" and len(own) != 1):
                continue
            q, value = reading.quantities[i], reading.quantities[own[0]]
            theirs_owner = owner_of(own[0])
            said = (f"the answer gives {q.text} for {owner[2]} and {value.text} for "
                    f"{theirs_owner[2] if theirs_owner else 'its subject'}")
            meets = [c.tolerance.contains(value_in_terms_of(reading.quantities[j], c.target))
                     for j in own]
            if c.outcome == "pass" and len(own) == 1 and not meets[0]:
                return "fail", f"{said}; target {c.target.text} ({c.tolerance.basis})"
            if c.outcome == "pass" or any(meets):
                return "not_applicable", (f"{said}; which value it says of the criterion's "
                                          "subject is not certain")
    return None


def _wanted(owner: Owner | None, claim: Claim, subject: frozenset[str],
            words: tuple[str, ...] | None, n: int) -> frozenset[str]:
    """What the criterion calls its subject in the owner's terms: its names, its subject's
    words, or the word its target counts by."""
    if owner is None:
        return frozenset()
    if owner[0] != "word":  # whom or what a criterion with one target names
        single = len(claim.targets) == 1
        return frozenset() if not single else claim.names if owner[0] == "name" else subject
    word = words[n] if words is not None else None
    return frozenset({word}) if word else frozenset()


def _same_order(q: Quantity, target: Quantity) -> bool:
    """Whether a value can be the same kind of figure as the target: within ORDER of it."""
    value = value_in_terms_of(q, target)
    return bool(value and target.value) and 1 / ORDER <= value / target.value <= ORDER


def _counted_by(reading: Reading, i: int, words: tuple[str, ...]) -> Owner | None:
    """The word after an answer's value, where it is one the criterion counts a target by."""
    after = COUNTED_BY.match(reading.text, reading.quantities[i].end)
    if after is None or after.group(1) not in words:
        return None
    return "word", frozenset({after.group(1)}), after.group(1)


def forget() -> None:
    """Forget every answer read so far (its owners, whether it labels list items)."""
    for cached in (owners, _labelled, _listed):
        cached.cache_clear()
