"""Which of an answer's values are its final figures: the ones it restates, rounds, converts
or corrects.

"Correction: ..." or "..., which I'll use" starts a self-correction whose values replace the
ones before it (`revised_at`); "14.6 days, i.e. **14 days**" rounds a working value
(`roundings`); "42,615 min ≈ 71 hours" restates one in another unit (`conversions`). The binding
decides which of each pair a criterion asks for. Every pass is linear in the answer.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections import deque

from rubric_audit.checks.numbers import NEAREST, NeedsWord, Quantity, is_duration, nearest_step

REVISION = NeedsWord(re.compile(
    r"\b(?:correction|corrected|correcting|revised|revision|update[ds]?|on\s+reflection|"
    r"re-?checking|scratch\s+that|I\s+(?:mis(?:read|calculated|stated|computed)|made\s+an\s+error))"
    r"\b\s*[:*,\-–—]|\bthe\s+(?:correct|right|true)\s+(?:figure|value|number|total|answer|amount)"
    r"\s+is\b|"
    r"\bon\s+reflection\b|\bwhich\s+I(?:'ll|\s+will)\s+use\b|;\s*I\s+(?:use|will\s+use|'ll\s+use)\b|"
    r"\bhaving\s+(?:removed|corrected|de-?duplicated|stripped\s+out|re-?read|re-?checked|"
    r"re-?counted|re-?run|excluded)\b|\bcorrect(?:ing|ed)\s+(?:this\s+|it\s+|that\s+)?to\b",
    re.I),
    ("correct", "revis", "update", "reflection", "check", "scratch", "mis", "error",
     "which", ";", "right", "true", "having"))

TRAILING_REVISION = re.compile(r"which\s+I|;\s*I\s", re.I)  # "..., which I'll use"


def revised_at(answer: str, bounds: list[int]) -> int:
    """Where the answer's last self-correction starts, or -1: at its marker ("Correction:",
    "On reflection"), or, for a marker that follows the value it adopts ("DIO is 104 days,
    which I'll use"), at the start of that sentence."""
    last = next(iter(deque(REVISION.finditer(answer), maxlen=1)), None)
    if last is None:
        return -1
    if TRAILING_REVISION.match(last.group(0)):
        return bounds[bisect.bisect_right(bounds, last.start()) - 1]
    return last.start()


ROUNDED_GAP = re.compile(r"[^.!?;|\d]{0,40}")  # a wrapped line too, not a paragraph break
ROUNDING_WORD = re.compile(r"\bie\b|→|->|⇒|≈|\bround|\bnearest\b|\bthat\s+is\b|\bcall\s+it\b",
                           re.I)


BRACKETED = re.compile(r"\s*\(\s*")
BRACKET_END = re.compile(r"\s*\)")


# "48,760.\n\nRounded to the nearest thousand: 48,000": a sentence or line that opens by
# rounding, right after the value it rounds
ROUNDED_NEXT = re.compile(r"\s*[.!?]?(?:[ \t]*\n\s*|[ \t]+)[*_#>\-\s]*(?:[A-Za-z][\w ,'-]{0,30}?\s)?"
                          r"round(?:ed|ing)\b[^.!?;|\d\n]{0,50}", re.I)


def roundings(answer: str, quantities: list[Quantity]) -> tuple[tuple[int, int, float], ...]:
    """(working, rounded, the rounding's step) where one value restates the other rounded:
    after it, as the answer's own final figure ("14.6 days, i.e. **14 days** to the nearest
    whole day", "A$67.55 → A$67", "48,760.\n\nRounded to the nearest thousand: 48,000"), or
    either in brackets right after the other, one value at two precisions ("$1.47 million
    ($1,468,800)"). The step is the rounded value's last digit or the step the gap says
    ("nearest thousand"); the rounding is coarser than the working value and within one step of
    it (a truncation too)."""
    out = []
    for i, (first, second) in enumerate(itertools.pairwise(quantities)):
        gap = re.sub(r"\bi\.\s?e\.", "ie", answer[first.end:second.start])
        if BRACKETED.fullmatch(gap) and BRACKET_END.match(answer, second.end):
            pair = (i, i + 1) if second.step > first.step else (i + 1, i)
        elif (ROUNDED_GAP.fullmatch(gap) and "\n\n" not in gap and ROUNDING_WORD.search(gap)) \
                or ROUNDED_NEXT.fullmatch(gap):
            pair = (i, i + 1)
        else:
            continue
        working, rounded = quantities[pair[0]], quantities[pair[1]]
        said = NEAREST.search(gap)
        step = max(rounded.step, nearest_step(said)[0] if said else 0.0)
        if (step > working.step and working.compatible(rounded)
                and abs(working.value - rounded.value) < step):
            out.append((*pair, step))
    return tuple(out)


CONVERTED_TO = re.compile(r"≈|→|->|⇒|=|\bi\.\s?e\.|\bthat\s+is\b")


def conversions(answer: str, quantities: list[Quantity],
                 segment_of: list[int]) -> tuple[tuple[int, int], ...]:
    """(i, j) where value j restates value i in another unit as the answer's final figure, the
    numbers between them bare factors: "42,615 min ≈ **71 hours**", "1,200 m² → 1,200 × 3.281 =
    3,937 sq ft". Right or wrong, the restatement is the answer's figure."""
    out = []
    for i, working in enumerate(quantities):
        if not (working.measure or is_duration(working.noun)):
            continue
        for j in range(i + 1, len(quantities)):
            final = quantities[j]
            if segment_of[j] != segment_of[i] or final.start - working.end > 80:
                break
            if final.dimension == "plain" and not (final.noun or final.measure):
                continue  # a factor of the conversion
            if (working.compatible(final) and (final.measure, final.noun) != (working.measure,
                                                                          working.noun)
                    and CONVERTED_TO.search(answer, working.end, final.start)):
                out.append((i, j))
            break
    return tuple(out)


# "**TL;DR: ~£1.3m.**", "Bottom line: $4.2m", "Answer: 17 days": the figure the answer leads with
HEADLINE = re.compile(r"(?im)^[\s*_#>-]*(?:tl;?dr|bottom\s+line|in\s+short|short\s+answer|"
                      r"final\s+answer|answer|summary|headline|conclusion)\s*[:—–-][^\n]*")


def headlines(answer: str, quantities: list[Quantity]) -> frozenset[int]:
    """The values on the line the answer leads its conclusion with ("TL;DR: ~£1.3m")."""
    spans = [m.span() for m in HEADLINE.finditer(answer)]
    return frozenset(i for i, q in enumerate(quantities) if any(a <= q.start < b for a, b in spans))
