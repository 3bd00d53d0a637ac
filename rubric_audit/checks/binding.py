"""Binding a criterion's target to the answer: which of its values speak of the target's subject,
and whether they meet the target's tolerance.

The answer is read where it speaks of the criterion's subject: a value binds to a target through
its segment (sentence, line, list item or table row) and the words it shares with the criterion;
bare numbers take the unit a table header, a label or their sentence gives them. A value the
answer says of a rival of the criterion's qualifier ("7.9% with active treatment vs 3.1% with
placebo" for a placebo rate of 7.9%; Tier-1 for Tier-2, FY2023 for FY2024) decides nothing: the
checker abstains and says so. A value offered beside another ("X or Y") is a hedge, and a bound
value far from the target fails it only when plainly the same subject in the same unit.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Literal

from rubric_audit.checks.answer import Reading, read_answer
from rubric_audit.checks.criterion import Role, Tolerance
from rubric_audit.checks.numbers import Quantity, comparable, duration_ratio, value_in_terms_of
from rubric_audit.checks.polarity import CHANGE_HEADER, GLOSS

ALTERNATIVE_GAP = re.compile(
    r"(?:\s*[A-Za-zµ/·]+)?\s*[,;]?\s*(?:[-–—]\s*)?(?:(?:or|/|either)\s*(?:possibly|perhaps|maybe|about|roughly|around|"
    r"approximately|up\s+to)?|(?:or\s+)?(?:possibly|perhaps|maybe|probably)\s+(?:closer\s+to|"
    r"nearer(?:\s+to)?|as\s+(?:high|low|much)\s+as|up\s+to|around|about)?)\s*", re.I)
CONDITIONAL_ALTERNATIVE = re.compile(r"\bif\b[^.!?\n]*\bor\b|\bdepending\b|\beither\b", re.I)
# "2.1% of the fleet (39 bikes of 1,850), or possibly 2.6% if ...", "23,400 parcels, though
# possibly 24,900": a doubt word right before the other value makes it an alternative
DOUBTED_ALTERNATIVE = re.compile(
    r"[,;]?\s*(?:[-–—]\s*)?(?:or|though|although|but)\s+(?:possibly|perhaps|maybe|potentially|"
    r"conceivably)\s+(?:closer\s+to|nearer(?:\s+to)?|as\s+(?:high|low|much)\s+as|up\s+to|around|"
    r"about)?\s*$"
    # "54.6% — though if the two cancelled tests are excluded it may be closer to 55.3%"
    r"|[,;]?\s*(?:[-–—]\s*)?(?:or|though|although|but)\b[^.!?\n]{0,100}?\b(?:may|might|could)\s+"
    r"(?:well\s+|also\s+)?be\s+(?:closer\s+to|nearer(?:\s+to)?|as\s+(?:high|low|much)\s+as|up\s+to|"
    r"around|about)\s*$", re.I)
CONDITIONAL_GAP = 160  # "81.6% if cancelled flights are excluded ..., or 79.9% if ..."
NEAR = (0.8, 1.25)  # values within this ratio of the target are taken as claims about it


@dataclass(frozen=True, kw_only=True)
class TargetCheck:
    """How one target quantity fared in the answer."""

    target: Quantity
    tolerance: Tolerance
    matched: list[Quantity]
    missed: list[Quantity]
    hedged: bool
    outcome: Literal["pass", "fail", "not_found", "other_subject", "unresolved"]
    note: str = ""  # why the outcome is other_subject or unresolved


def is_near(q: Quantity, target: Quantity, tolerance: Tolerance) -> bool:
    """Close enough to be a claim about the target: inside its tolerance or within NEAR."""
    value = value_in_terms_of(q, target)
    if tolerance.contains(value):
        return True
    if target.value == 0:
        return abs(value) <= 10 * target.step
    ratio = value / target.value
    return NEAR[0] <= ratio <= NEAR[1]


def _alternatives(answer: str, values: list[Quantity], matched: list[Quantity]) -> Quantity | None:
    """The value a matching value is offered beside as an alternative ('X or Y', 'X / Y', 'X,
    though possibly Y'), or None.

    Both must be of the same order (within 3x): "NOK 1,940m, or NOK 48.50 per share" restates
    one figure in other terms rather than offering two; "38,420/41,500 (92.6%)" is a fraction.
    """
    hits = {id(q) for q in matched}
    for i, a in enumerate(values):
        # the next value of a's kind: "either $214,656 (8 services) or $241,488"
        b = next((v for v in values[i + 1:] if v.compatible(a)), None)
        if b is None or b.start - a.end > CONDITIONAL_GAP or (id(a) in hits) == (id(b) in hits):
            continue
        gap = GLOSS.sub("", answer[a.end:b.start])
        same_order = a.value and b.value and 1 / 3 <= b.value / a.value <= 3
        if not same_order or re.search(r"[.!?](?=\s)|\n", gap) or _fraction(answer, a, b):
            continue
        if ALTERNATIVE_GAP.fullmatch(gap) or CONDITIONAL_ALTERNATIVE.search(gap) \
                or DOUBTED_ALTERNATIVE.search(gap):
            return b if id(a) in hits else a
    return None


SHARE_AFTER = re.compile(r"\s*\(\s*(\d{1,3}(?:\.(\d+))?)\s*%")
RESULT_AFTER = re.compile(r"\s*\)?\s*[=≈]")  # "22 / 14 = 1.57": a quotient's working


def _fraction(answer: str, a: Quantity, b: Quantity) -> bool:
    """Whether "a/b" is a share the answer gives right after it ("38,420/41,500 (92.6%)") or a
    quotient in the answer's working ("22 / 14 = 1.57"): its operands, not alternatives."""
    if answer[a.end:b.start].strip() != "/":
        return False
    if RESULT_AFTER.match(answer, b.end):
        return True
    share = SHARE_AFTER.match(answer, b.end)
    if share is None or not b.value:
        return False
    half_step = 0.5 * 10.0 ** -len(share.group(2) or "")
    return abs(100 * a.value / b.value - float(share.group(1))) <= half_step + 1e-9


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
                 mentioned: frozenset[str] = frozenset(),
                 windows: tuple[Quantity, ...] = ()) -> TargetCheck:
    """Whether the answer states the target where it speaks of the target's subject, and not
    only in values it says of a rival of that subject (`_said_of_another`; `qualifiers` are the
    criterion's terms that may say which value it means, `mentioned` all its terms) or within
    another window than the criterion's (`windows`: "within 5 m of HRWL")."""
    check = _bind(target, tolerance, answer, context, subject, names, limit, role, windows)
    if not qualifiers or check.outcome not in ("pass", "fail") or check.hedged:
        return check
    reading = read_answer(answer)
    compatible = reading.of_kind(target)[1]
    kin = [i for i, ok in enumerate(compatible) if ok]
    aside = set_aside(reading, subject) if len(kin) > 1 else frozenset()
    kin = [i for i in kin if i not in aside]  # a plan row is no value said of the qualifier
    if len(kin) < 2:
        return check  # no other value of the target's kind can be said of its qualifier
    deciding = {id(q) for q in (check.matched if check.outcome == "pass" else check.missed)}
    ruling = [i for i in kin if id(reading.quantities[i]) in deciding]
    if len(ruling) != len(deciding) or any(not reading.qualified.said[i] - mentioned
                                            for i in ruling):
        return check  # a deciding value said of none but the criterion's terms is its own
    holders = {w: list(itertools.islice(
        (j for group in reading.qualified.holders.get(w, ()) for j in group
         if compatible[j] and j not in aside), 2)) for w in qualifiers}
    notes = [_said_of_another(reading, i, holders, mentioned) for i in ruling]
    said = [note for note in notes if note]
    if said and len(said) == len(notes):
        return replace(check, outcome="other_subject", note=said[0])
    return check


def _echo_beside(reading: Reading, held: tuple[bool, ...], aside: frozenset[int],
                 compared: frozenset[int], moved: frozenset[int], candidates: list[int]) -> bool:
    """Whether the answer gives, beside the values set aside, a figure of its own that echoes
    the prompt ("our actual average in 2024 was **8.2 hours**", the prompt's 8.2)."""
    return any(held[i] and i not in compared and i not in moved and i not in aside
               and i not in candidates for i in range(len(reading.quantities)))


def set_aside(reading: Reading, subject: frozenset[str]) -> frozenset[int]:
    """The values the answer gives as a plan, a bar, another party's figure or a counterfactual
    where the criterion's subject does not ask for that kind."""
    return frozenset(i for aside in reading.asides if not subject & aside.wanted
                     for i in aside.values)


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
                if CHANGE_HEADER.search(qualified.written[rival]):
                    continue  # a Change column says what a value is, not whose (Q2 to Q3)
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
          names: frozenset[str], limit: bool, role: Role,
          windows: tuple[Quantity, ...] = ()) -> TargetCheck:
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
    compared = frozenset() if role == "compared" else reading.references
    moved = frozenset() if role == "change" else reading.changes
    held = reading.of_kind(target)[0]
    keys = reading.value_keys
    candidates = [i for i, q in enumerate(reading.quantities)
                  if held[i] and i not in compared and i not in moved
                  and not (keys[i] in context and abs(q.value - target.value) > target.step)]
    for aside in reading.asides:  # the actual, not the budget, the bar or another's figure
        if not aside.values:
            continue
        given = [i for i in candidates if i in aside.values]
        if given and aside.only and subject & aside.wanted:
            candidates = given  # "would have been": the counterfactual the criterion asks for
        elif given and not subject & aside.wanted and (
                len(given) < len(candidates) or _echo_beside(reading, held, aside.values,
                                                             compared, moved, candidates)):
            candidates = [i for i in candidates if i not in given]
    if reading.revised_at >= 0:  # a self-correction's values replace those it corrects
        after = [i for i in candidates if pool[i].start > reading.revised_at]
        candidates = after or candidates
    candidates = _final_figures(reading, candidates, target, tolerance)
    windowed = False  # the candidates are said within the criterion's window, which binds them
    if windows:
        candidates, elsewhere, windowed = _within(reading, candidates, windows)
        if elsewhere and not candidates:
            q = reading.quantities[elsewhere[0]]
            return TargetCheck(target=target, tolerance=tolerance, matched=[], missed=[q],
                               hedged=False, outcome="other_subject",
                               note=f"the answer gives {q.text} within another window than "
                                    f"{' to '.join(w.text for w in windows)}")
    if role == "change":  # a change is read where the answer gives changes, if it does
        # "rose 2.1 pp" is not a relative "rose 2.1%", nor the other way round
        candidates = [i for i in candidates if not pool[i].other_points(target)]
        moving = [i for i in candidates if i in reading.changes
                  or CHANGE_HEADER.search(reading.headers[i])]
        candidates = moving or candidates
    if limit:
        candidates += [i for i in range(len(reading.quantities), len(pool))
                       if comparable(pool[i], target) and tolerance.contains(
                           value_in_terms_of(pool[i], target))]
    if not candidates:
        return TargetCheck(target=target, tolerance=tolerance, matched=[], missed=[], hedged=False,
                           outcome="not_found")
    if limit and any(i >= len(reading.quantities) for i in candidates):
        matched = [pool[i] for i in candidates if i >= len(reading.quantities)]
        return TargetCheck(target=target, tolerance=tolerance, matched=matched, missed=[], hedged=False,
                           outcome="pass")
    named = [i for i in candidates if _named(reading, i, names)] if names else []
    unnamed = [i for i in candidates if i not in named
               and not _names_another(reading, i, names)] if named else []
    if named:
        candidates = named
    scores = {i: _score(reading, i, subject, names) for i in candidates + unnamed}
    best = max(scores[i] for i in candidates)
    bound = [i for i in candidates if scores[i] == best] if best > 0 else candidates
    # a spread said of the criterion's name ("Brix ranged from 5.9 to 7.6") beside the value
    # the answer commits without repeating the name ("Season average: 6.8")
    described = _described_ranges(reading, candidates + unnamed, bound, scores, target,
                                  tolerance)
    if described:  # the ranges describe something else; the answer commits a value of its own
        best = max(scores[i] for i in described)
        bound = [i for i in described if scores[i] == best]
    near = [i for i in bound if is_near(reading.quantities[i], target, tolerance)]
    if not near and best > 0 and len(bound) == 1 and role != "change":
        i = bound[0]
        q = reading.quantities[i]
        shared = len(subject & reading.labels[i])
        alone = sum(_strictly_same_unit(reading.quantities[j], target) for j in candidates) == 1 \
            and not any(is_near(reading.quantities[j], target, tolerance) for j in candidates)
        # said within the criterion's window binds it, unless a value near the target is too
        windowed_alone = windowed and not any(is_near(reading.quantities[j], target, tolerance)
                                              for j in candidates)
        plainly = bool(named) or windowed_alone \
            or (shared >= 2 and shared >= 0.6 * len(subject)) \
            or (shared >= 1 and alone)  # the answer's only value in this unit, said of it
        if plainly and _strictly_same_unit(q, target) and _same_order(q, target):
            return TargetCheck(target=target, tolerance=tolerance, matched=[], missed=[q], hedged=False,
                               outcome="fail")
    if not near:  # the best-bound value is another quantity; a near one said of the subject
        close = [i for i in candidates if scores[i] > 0
                 and is_near(reading.quantities[i], target, tolerance)]
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
                  and not named and is_near(reading.quantities[i], target, tolerance)
                  and not _names_another(reading, i, names)
                  and not any(_labelled_apart(reading, i, j, subject) for j in near)
                  and not (described and _in_a_range(reading, i))
                  and tolerance.contains(value_in_terms_of(reading.quantities[i], target))
                  != (decided.outcome == "pass")]
        if rivals:  # another value as plainly about the subject says otherwise
            return TargetCheck(target=target, tolerance=tolerance, matched=decided.matched,
                               missed=decided.missed, hedged=False, outcome="not_found")
        headline = next((reading.quantities[i] for i in candidates if reading.headlines
                         and i in reading.headlines and i not in near
                         and is_near(reading.quantities[i], target, tolerance)
                         and decided.outcome in ("pass", "fail")
                         and not any(rounds_from(reading.text, reading.quantities[i], q, target)
                                     for q in decided.matched)
                         and tolerance.contains(value_in_terms_of(reading.quantities[i], target))
                         != (decided.outcome == "pass")), None)
        if headline is not None:  # "TL;DR: ~£1.3m" above a table whose total is £1,246k
            body = (decided.matched + decided.missed)[0].text
            return replace(decided, outcome="unresolved", note=(
                f"the answer's headline states {headline.text} and its body {body}, which "
                f"{'meets' if decided.outcome == 'pass' else 'misses'} {target.text}"))
        return decided
    return TargetCheck(target=target, tolerance=tolerance, matched=[], missed=[], hedged=False,
                       outcome="not_found")


def _in_a_range(reading: Reading, index: int) -> bool:
    q = reading.quantities[index]
    return any(q is low or q is high for low, high in reading.ranges)


def _described_ranges(reading: Reading, candidates: list[int], bound: list[int],
                      scores: dict[int, int], target: Quantity, tolerance: Tolerance) -> list[int]:
    """Where a best-bound value is an end of a range the answer does not offer as its doubt
    ("Typical overrun ranges: super-premium 20–50%", "peers report between £3,000 and £3,500")
    and the answer commits a standalone value near the target said of its subject ("Overrun =
    **32%**"), the committed values; else none."""
    if not any(_in_a_range(reading, i) for i in bound):
        return []
    doubts = {id(q) for r in reading.doubted_ranges for q in r}
    if any(id(reading.quantities[i]) in doubts for i in candidates):
        return []
    return [i for i in candidates if scores[i] > 0 and not _in_a_range(reading, i)
            and is_near(reading.quantities[i], target, tolerance)]


def _within(reading: Reading, candidates: list[int],
            windows: tuple[Quantity, ...]) -> tuple[list[int], list[int], bool]:
    """(the candidates said within the criterion's window, or else those said within none;
    the candidates said within another window of its kind; whether the first are said within
    the criterion's): "within 5 m of HRWL: 48 days", "within 10 m of HRWL: 63 days" against
    63 days within 5 m."""
    ours, others, unsaid = [], [], []
    for i in candidates:
        stated = [reading.quantities[j] for j in reading.windows
                  if reading.segment_of[j] == reading.segment_of[i]]
        if not any(w.compatible(c) for w in stated for c in windows):
            unsaid.append(i)
        elif len(stated) == len(windows) and all(
                w.compatible(c) and abs(value_in_terms_of(w, c) - c.value) <= c.step / 2
                for w, c in zip(stated, windows, strict=True)):
            ours.append(i)
        else:
            others.append(i)
    return ours or unsaid, others, bool(ours)


def _final_figures(reading: Reading, candidates: list[int], target: Quantity,
                   tolerance: Tolerance) -> list[int]:
    """Of a working value and the answer's own rounding of it ("14.6 days, i.e. 14 days"), the
    one the criterion asks for: the rounding where the target is no more precise than it, or
    where the criterion or prompt says to what it rounds ("give two decimal places": the answer
    commits to its final figure, right or wrong), else the working value (the
    criterion asks for the precise figure, which the answer states). Of a working value and its
    restatement in another unit ("42,615 min ≈ 71 hours"), the restatement; where the
    restatement rightly rounds the working value, the two are one value at two precisions, and
    the one that meets the target speaks ("3,836.7 g (≈ 3.8 kg)" for 3.84 kg)."""
    dropped = set()
    for working, rounded, step in reading.roundings:
        if working in candidates and rounded in candidates:
            coarse = tolerance.instructed or tolerance.high - tolerance.low >= step * 0.999
            dropped.add(working if coarse else rounded)
    for working, final in reading.conversions:
        if working in candidates and final in candidates:
            x, y = reading.quantities[working], reading.quantities[final]
            same = abs(value_in_terms_of(x, y) - y.value) <= y.step / 2 * 1.000001
            x_meets = tolerance.contains(value_in_terms_of(x, target))
            y_meets = tolerance.contains(value_in_terms_of(y, target))
            dropped.add(final if same and x_meets and not y_meets else working)
    return [i for i in candidates if i not in dropped]


def _range_end(target: Quantity, tolerance: Tolerance, reading: Reading) -> TargetCheck:
    """One end of a criterion's range against the ends of the answer's ranges."""
    ends = [q for r in reading.ranges for q in r if comparable(q, target)
            and is_near(q, target, tolerance)]
    matched = [q for q in ends if tolerance.contains(value_in_terms_of(q, target))]
    if not ends:
        return TargetCheck(target=target, tolerance=tolerance, matched=[], missed=[], hedged=False,
                           outcome="not_found")
    missed = [q for q in ends if q not in matched]
    return TargetCheck(target=target, tolerance=tolerance, matched=matched, missed=missed, hedged=False,
                       outcome="pass" if matched else "fail")


def _decide(target: Quantity, tolerance: Tolerance, reading: Reading, near: list[int],
            bound: list[int]) -> TargetCheck:
    """Pass when the bound values near the target all meet it and none is hedged; fail when
    they all miss it or a hedge offers it beside another value; undecided when they differ."""
    quantities = [reading.quantities[i] for i in near]
    matched = [q for q in quantities if tolerance.contains(value_in_terms_of(q, target))]
    missed = [q for q in quantities if not tolerance.contains(value_in_terms_of(q, target))]
    off_grid = [q for q in matched if tolerance.grid
                and not tolerance.on_grid(value_in_terms_of(q, target))]
    if off_grid:  # "nearest €0.05": €3.18 and €3.1775 are not on the step asked for
        matched = [q for q in matched if q not in off_grid]
        if not matched and not missed:  # graders differ on an answer that never rounds to it
            return TargetCheck(target=target, tolerance=tolerance, matched=[], missed=off_grid,
                               hedged=False, outcome="unresolved",
                               note=f"the answer gives {off_grid[0].text}, not on the step the "
                                    f"criterion's tolerance is ({tolerance.basis})")
    in_range = {id(q) for r in reading.ranges for q in r}
    standalone = [q for q in matched if id(q) not in in_range]
    ids = {id(q) for q in quantities}
    ranges = [r for r in reading.ranges
              if (id(r[0]) in ids or id(r[1]) in ids) and comparable(r[0], target)
              and comparable(r[1], target) and id(r[0]) not in reading.spread_ends
              and not all(tolerance.contains(value_in_terms_of(q, target)) for q in r)]
    beside = [reading.quantities[i] for i in bound
              if id(reading.quantities[i]) not in reading.spread_ends]
    hedged_range = any(comparable(q, target) and tolerance.contains(value_in_terms_of(q, target))
                       for r in reading.doubted_ranges for q in r)
    alternative = _alternatives(reading.text, beside, [
        q for q in beside if tolerance.contains(value_in_terms_of(q, target))])
    settled = _settled(reading, matched + missed, alternative) if alternative else None
    if settled is not None:  # "86.1%, or possibly 85.7% ... so the figure to report is 86.1%"
        meets_it = tolerance.contains(value_in_terms_of(settled, target))
        return TargetCheck(target=target, tolerance=tolerance, matched=[settled] if meets_it
                           else [], missed=[] if meets_it else [settled], hedged=False,
                           outcome="pass" if meets_it else "fail")
    if alternative is not None and all(alternative is not q for q in missed):
        missed.append(alternative)  # the reason names both values the answer offers
    hedged = (bool(ranges) and not standalone) or hedged_range or alternative is not None
    if matched and missed and not hedged:
        return TargetCheck(target=target, tolerance=tolerance, matched=matched, missed=missed,
                           hedged=False, outcome="not_found")
    outcome: Literal["pass", "fail"] = "pass" if matched and not hedged else "fail"
    return TargetCheck(target=target, tolerance=tolerance, matched=matched, missed=missed, hedged=hedged,
                       outcome=outcome)


# A sentence that settles which figure the answer gives: "so the figure to report is 86.1%",
# "the rate we use is 13.6%", "Final answer: 24.6%"
SETTLES = re.compile(r"\b(?:(?:figure|rate|ratio|value|number|amount|answer|one|estimate)\s+"
                     r"(?:to\s+(?:report|use|quote|adopt|give)|(?:I|we)\s+(?:report|use|adopt|"
                     r"give))|(?:final|reported)\s+(?:figure|answer|value|rate))\b", re.I)


def _settled(reading: Reading, offered: list[Quantity], alternative: Quantity) -> Quantity | None:
    """The value a later sentence settles on, where the answer raises an alternative and then
    rejects it ("Closing occupancy is 86.1% — or possibly 85.7% if ... The KPI definition does
    not exclude them, so the figure to report is **86.1%**"): one of the values offered, said
    again in a later sentence that says it is the one given; else None (a hedge)."""
    raised = next(reading.segment_of[i] for i, q in enumerate(reading.quantities)
                  if q is alternative)
    values = [q.value for q in [*offered, alternative]]
    settled = None
    for i, q in enumerate(reading.quantities):
        start = reading.bounds[reading.segment_of[i]]
        if reading.segment_of[i] > raised and q.compatible(alternative) \
                and any(abs(q.value - v) <= 1e-9 * max(1.0, abs(v)) for v in values) \
                and SETTLES.search(reading.text, start, q.start):
            settled = q
    return settled


# "about 84%", "roughly 76%", "~£1.3m": a value the answer gives as a rounding
APPROXIMATE_BEFORE = re.compile(r"(?:\b(?:about|around|roughly|approximately|approx\.?|circa|c\.|"
                                r"nearly|almost|some|just\s+(?:over|under))|~|≈)\s*[$€£¥]?\s*$",
                                re.I)


def approximate(text: str, q: Quantity) -> bool:
    """Whether the answer writes `q` as an approximation ("about 84%", "~£1.3m")."""
    return bool(APPROXIMATE_BEFORE.search(text, max(0, q.start - 24), q.start))


def rounds_from(text: str, rounded: Quantity, exact: Quantity, target: Quantity) -> bool:
    """Whether `rounded` is written as an approximation ("about 84%") and is `exact` rounded
    to its own precision."""
    if not approximate(text, rounded):
        return False
    value = value_in_terms_of(exact, target)
    step = rounded.step / rounded.scale * (value_in_terms_of(rounded, target) / rounded.value
                                           if rounded.value else 1.0)
    return abs(value - value_in_terms_of(rounded, target)) <= step / 2 * 1.000001


SAME_ORDER = 1e4  # a scale slip (k for m, m for bn, % for a fraction) is within 1,000x


def _same_order(q: Quantity, target: Quantity) -> bool:
    """Whether a far value can be a claim about the target at all: within SAME_ORDER of it, as
    a scale slip is (USD 156,630 of revenue is no per-stream rate of USD 0.0038)."""
    value = abs(value_in_terms_of(q, target))
    return value == 0 or (bool(target.value) and abs(target.value) / SAME_ORDER <= value
                          <= abs(target.value) * SAME_ORDER)


def _strictly_same_unit(q: Quantity, target: Quantity) -> bool:
    if q.dimension != target.dimension or q.per != target.per:
        return False
    if q.dimension == "plain":  # a count of one thing, or a duration in one family ("2 years")
        return bool(q.noun and (q.counts_as(target)
                                or duration_ratio(q.noun, target.noun) is not None))
    return q.currency == target.currency
