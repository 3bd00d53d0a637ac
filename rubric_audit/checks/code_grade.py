"""The deterministic numeric checker: grade a criterion's stated value against an answer in code.

The criterion is read by `criterion.read_claim` and each of its targets bound to the answer by
`binding.check_target`; this module decides from their outcomes. Criteria whose claim is not a
number (yes/no, a choice, a named entity) are not decided by number overlap, and a value said of
another subject than the criterion's makes the checker abstain and say so.
Plain fails are decided where the final answer is the deliverable: a refusal, an answer with no
number, a value the answer gives for the same subject and unit far outside the tolerance. Where
the deliverable is a file, the checker abstains and says so.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Literal

from rubric_audit.checks import units
from rubric_audit.checks.answer import HEADER_PARENS, Reading, read_answer
from rubric_audit.checks.binding import (
    TargetCheck,
    approximate,
    check_target,
    is_near,
    rounds_from,
    set_aside,
)
from rubric_audit.checks.criterion import Claim, read_claim
from rubric_audit.checks.numbers import (
    MAX_READ_CHARS,
    MEASURE_AFTER,
    Quantity,
    unread,
    value_in_terms_of,
)
from rubric_audit.checks.owners import said_of_another
from rubric_audit.checks.polarity import (
    Polarity,
    meets,
    payments,
    positions,
    valence,
    variance_flag,
)
from rubric_audit.core.model import CODE_GRADER, Attempt, CriterionGrade, Task

# numbers the reader does not take as values: "21.1,8650" in a CSV row, "€1.250.500", and
# scientific notation ("1.512e6" from code)
UNREAD_NUMBERS = re.compile(r"\d+(?:[.,]\d+){2,}|\b\d+(?:\.\d+)?[eE][+-]?\d+\b")
# Continental notation: dots or spaces grouping thousands ("€1.386.400", "12 450"), a decimal
# comma ("€ 471,40"): the reader takes "12 450" for two numbers and "471,40" for 471
CONTINENTAL = re.compile(r"(?<![\d.,])\d{1,3}(?:\.\d{3}){2,}(?![\d.,])|(?:€|EUR)\s?\d{1,3}"
                         r"(?:\.\d{3})*,\d{2}(?![\d.,])|(?<![\d.,])\d{1,3}(?:[ \u00a0\u202f]\d{3})+"
                         r"(?![\d.,])")
# A span the reader does not take as a value: said in words ("a year and a half", "half a
# year's", "a quarter of a century", "a fortnight") or given by two points in time a duration may
# lie between (a clock time "08:00", a date "1 May 2024"). An answer that says one is not an
# answer "with no number at all".
_SPAN = r"(?:minutes?|hours?|days?|weeks?|fortnights?|months?|years?|decades?|centur(?:y|ies))"
UNREAD_SPAN = re.compile(
    rf"\b(?:(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|half|quarter|"
    rf"couple\s+of|few)[\s-]+{_SPAN}|an?\s+{_SPAN}\s+and\s+a\s+half|(?:quarter|half|third)\s+"
    rf"(?:of\s+)?an?\s+{_SPAN}|a\s+fortnight|a\s+dozen\s+\w+)\b|(?<![\d:])\d{{1,2}}:\d{{2}}"
    r"(?![\d:])|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{4}\b",
    re.I)
BARE_ANSWER = re.compile(r"\s*([-−]?\d[\d,]*(?:\.\d+)?)\s*\.?\s*")


@dataclass(frozen=True, kw_only=True)
class CodeVerdict:
    verdict: Literal["pass", "fail", "not_applicable"]
    reason: str
    checks: list[TargetCheck]

    @property
    def hedged(self) -> bool:
        return any(c.hedged for c in self.checks)


def grade_numeric(criterion: str, answer: str | None, prompt: str = "",
                  artifacts: bool = False) -> CodeVerdict:
    """pass / fail / not_applicable for one criterion and one answer, with the reason.

    `artifacts`: whether the run folder holds files the agent wrote (a file deliverable the
    checker does not read).
    """
    if max(len(criterion), len(prompt), len(answer or "")) > MAX_READ_CHARS:
        return CodeVerdict(verdict="not_applicable", checks=[],
                           reason=unread(criterion=criterion, prompt=prompt, answer=answer) or "")
    claim = read_claim(criterion, prompt)
    if not claim.targets:
        return CodeVerdict(verdict="not_applicable", reason="the criterion states no numeric value",
                           checks=[])
    if claim.not_numeric:
        return CodeVerdict(verdict="not_applicable", reason=claim.not_numeric, checks=[])
    if claim.file_deliverable:
        where = ("the run folder holds the agent's files, which the checker does not read"
                 if artifacts else "the run folder does not hold it")
        return CodeVerdict(verdict="not_applicable", reason=f"the deliverable is a file ({where})",
                           checks=[])
    if not answer or not answer.strip():
        return CodeVerdict(verdict="fail", reason="the answer is empty", checks=[])
    bare = BARE_ANSWER.fullmatch(answer)
    if bare and len(claim.targets) == 1:
        return _bare_answer(claim, bare.group(1))
    reading = read_answer(answer)
    checks = [_polar_check(claim, n, answer) for n in range(len(claim.targets))]
    elsewhere = [c for c in checks if c.outcome == "other_subject"]
    if elsewhere:
        return CodeVerdict(verdict="not_applicable", reason="; ".join(
            f"{c.note}, so its value for the criterion's subject is not {c.target.text}"
            for c in elsewhere), checks=checks)
    unresolved = [c for c in checks if c.outcome == "unresolved"]
    if unresolved:
        return CodeVerdict(verdict="not_applicable", reason="; ".join(c.note for c in unresolved),
                           checks=checks)
    missing = [c for c in checks if c.outcome == "not_found"]
    if missing:
        return _missing(claim, criterion, reading, checks, missing, artifacts)
    doubt = (_quoted_doubt(reading, checks) or _window_doubt(criterion, reading, checks)
             or _basis_doubt(criterion, reading, checks) or _period_doubt(criterion, reading, checks)
             or _rank_doubt(criterion, reading, checks))
    if doubt is not None:
        return CodeVerdict(verdict="not_applicable", reason=doubt, checks=checks)
    owned = said_of_another(claim, reading, checks)
    if owned is not None:
        return CodeVerdict(verdict=owned[0], reason=owned[1], checks=checks)
    failed = [c for c in checks if c.outcome == "fail"]
    if not failed and claim.qualitative:
        return CodeVerdict(verdict="not_applicable", reason=(
            f"the values meet the criterion, which also asks for {claim.qualitative}, which "
            "numbers cannot check: "
            + "; ".join(f"{c.matched[0].text} meets {c.target.text}" for c in checks)),
            checks=checks)
    if not failed and claim.payment:
        paid = _paid_the_other_way(claim.payment, reading.text, checks)
        if paid is not None:
            return paid
    if not failed:
        marked = _footnoted(answer, checks)
        if marked is not None:
            return CodeVerdict(verdict="not_applicable", reason=marked, checks=checks)
        preferred = _preferred_elsewhere(reading, checks)
        if preferred is not None:
            return preferred
        sided = _position_the_other_way(criterion, reading.text, checks)
        if sided is not None:
            return sided
        doubted = _missing_elsewhere(claim, criterion, answer, reading, checks)
        if doubted is not None:
            return doubted
        return CodeVerdict(verdict="pass", reason="; ".join(
            f"{c.matched[0].text} meets {c.target.text} ({c.tolerance.basis})" for c in checks),
            checks=checks)
    rivals = _meeting_elsewhere(claim, answer, reading, failed)
    if rivals is not None:
        return rivals
    if CONTINENTAL.search(reading.text):
        return CodeVerdict(verdict="not_applicable", checks=checks, reason=(
            "the answer writes numbers with dots or spaces grouping thousands or a decimal comma, "
            "which the checker does not read as one value, so a miss decides nothing"))
    parts = []
    directed = any(claim.polarities) or any(claim.valences)
    for c in failed:
        said = ", ".join(q.text for q in c.matched + c.missed) or "nothing near it"
        kind = "hedged between" if c.hedged else "states"
        turned = directed and not c.hedged and any(
            c.tolerance.contains(abs(value_in_terms_of(q, c.target)))
            or c.tolerance.contains(-abs(value_in_terms_of(q, c.target))) for q in c.missed)
        way = " (the other way from the criterion's direction or side)" if turned else ""
        parts.append(f"answer {kind} {said}{way}; target {c.target.text} ({c.tolerance.basis})")
    return CodeVerdict(verdict="fail", reason="; ".join(parts), checks=checks)


def _meeting_elsewhere(claim: Claim, answer: str, reading: Reading,
                       failed: list[TargetCheck]) -> CodeVerdict | None:
    """A fail needs no value the answer commits to that meets the target (#25 round 8,
    precondition a): where the answer commits (in bold, or as the result of its working after
    "=" or "→") to a value of the target's kind that meets it, and commits to none of the values
    that miss, which of them answers is not certain ("Load factor = 412,800 / 560,000 =
    **73.7%** ... the group-wide load factor last year was 69.8%"), and the checker abstains.
    Only the answer's own values count (`_own_values`). Where every value that misses is an
    approximation the answer rounds from one that meets ("about 84%" beside the table's 83.6%),
    they are one figure and it passes. A hedge's fail, a fail on a value's direction (its number
    meets) and a fail on the value said of the criterion's named subject stand."""
    committed = _committed_values(answer)
    approximates = _approximates(answer)
    if not committed and not approximates:
        return None
    for c in failed:
        if c.hedged or any(c.tolerance.contains(value_in_terms_of(q, c.target)) for q in c.missed):
            continue
        rounded = bool(c.missed) and approximates \
            and all(approximate(reading.text, q) for q in c.missed)
        if not committed and not rounded:
            continue
        own = _own_values(claim, reading, c, None if rounded else committed)
        meeting = [i for i in own if _meets(reading, i, c)]
        if not meeting:
            continue
        exact = reading.quantities[meeting[0]]
        if rounded and all(rounds_from(reading.text, q, exact, c.target) for q in c.missed):
            return CodeVerdict(verdict="pass", checks=failed, reason=(
                f"{exact.text} meets {c.target.text} ({c.tolerance.basis}); the answer's "
                f"{', '.join(q.text for q in c.missed)} is its rounding"))
        chosen = next((reading.quantities[i] for i in meeting if i in committed), None)
        if chosen is not None and (_names_all(reading, chosen, claim.names)
                                   or not any(_names_all(reading, q, claim.names)
                                              for q in c.missed)) and not any(
                i in committed and not _meets(reading, i, c) for i in own):
            return CodeVerdict(verdict="not_applicable", checks=failed, reason=(
                f"the answer states {', '.join(q.text for q in c.missed) or 'a value'} and "
                f"commits to {chosen.text}, which meets {c.target.text}; which one answers "
                "is not certain"))
    return None


CRITERION_NUMBER = re.compile(r"\d+(?:\.\d+)?")
APPROXIMATE_WORD = re.compile(r"about|around|rough|approx|circa|c\.|nearly|almost|some|just|~|≈",
                              re.I)  # what `binding.approximate` needs, looked for first


@functools.lru_cache(maxsize=1024)
def _approximates(answer: str) -> bool:
    """Whether the answer has a word `binding.approximate` reads, looked for once per answer."""
    return APPROXIMATE_WORD.search(answer) is not None


def _missing_elsewhere(claim: Claim, criterion: str, answer: str, reading: Reading,
                       passed: list[TargetCheck]) -> CodeVerdict | None:
    """A pass needs no value the answer commits to that misses the target where it commits to
    none that meets it (#25 round 8, the mirror of precondition a): "The cost plan put it at
    £18.4m ... lowest tender **£17.9m**" against a criterion of £18.4m, where the matching
    value plays another role (a comparison, a target, a forecast, a prior period) the reader
    did not name. A committed value near the target (within `binding.NEAR`) that misses it
    makes the checker abstain; one that meets another of the criterion's targets, is a number
    the criterion writes (a threshold, a class) or the answer's rounding or restatement of
    another value (`_final_figures` decides between those) is none."""
    committed = _committed_values(answer)
    if not committed:
        return None
    restated = {pair[1] for pair in (*reading.roundings, *reading.conversions)}
    ids = {id(reading.quantities[i]) for i in committed}
    for c in passed:
        if c.hedged or any(id(q) in ids for q in c.matched):
            continue
        echoed = all((q.dimension, round(q.value, 9)) in claim.context for q in c.matched)
        rivals = [i for i in _own_values(claim, reading, c, committed, echoes=echoed)
                  if i not in restated
                  and not any(reading.of_kind(other.target)[1][i] and _meets(reading, i, other)
                              for other in passed)
                  and is_near(reading.quantities[i], c.target, c.tolerance)]
        said = set(CRITERION_NUMBER.findall(criterion.replace(",", ""))) if rivals else set()
        rival = next((q for i in rivals if (q := reading.quantities[i]).text.replace(",", "")
                      .strip("$€£¥%") not in said), None)
        if rival is not None:
            return CodeVerdict(verdict="not_applicable", checks=passed, reason=(
                f"the answer states {c.matched[0].text}, which meets {c.target.text}, and "
                f"commits to {rival.text}, which does not; which one answers is not certain"))
    return None


def _own_values(claim: Claim, reading: Reading, c: TargetCheck,
                among: Collection[int] | None = None, echoes: bool = False) -> list[int]:
    """The answer's values of the target's kind (of `among`, else all) it gives as its own
    figure: not a comparison, a change, a struck or negated value, a plan, bar or assumption
    the criterion does not ask for, one a self-correction replaced, an echo of the prompt's
    value (unless `echoes`: the prompt gives the matching value too, so an echo is as much the
    answer's), a value labelled with a name the criterion does not name or a percentage said as
    a share of something."""
    kind = reading.of_kind(c.target)[1]
    aside = set_aside(reading, claim.subjects[claim.targets.index(c.target)])
    return [i for i in (range(len(reading.quantities)) if among is None else sorted(among))
            if kind[i] and i not in reading.references and i not in reading.changes
            and i not in aside and (q := reading.quantities[i]).start > reading.revised_at
            and (echoes or reading.value_keys[i] not in claim.context)
            and not (claim.names and reading.label_names[i]
                     and not claim.names & reading.label_names[i])
            and not _share_of_other(reading.text, q, c.target)]


def _meets(reading: Reading, index: int, c: TargetCheck) -> bool:
    return c.tolerance.contains(value_in_terms_of(reading.quantities[index], c.target))


def _names_all(reading: Reading, q: Quantity, names: frozenset[str]) -> bool:
    """Whether a value is said of everyone the criterion names (its label, else its segment):
    "Lena Ask (70%): £22,960" is bound by name, and a fail on it stands beside "Mira Holt
    (30%): **£9,840**"."""
    i = next(j for j, r in enumerate(reading.quantities) if r is q)
    own = reading.label_names[i] or reading.segment_names[reading.segment_of[i]]
    return bool(names) and names <= own


SHARE_OF = re.compile(r"\s*of\s+(?:the\s+|its\s+)?([a-z]+)", re.I)


def _share_of_other(text: str, q: Quantity, target: Quantity) -> bool:
    """Whether a percentage is said as a share of something ("98.5% of target")."""
    return q.dimension == "percent" and target.dimension == "percent" \
        and bool(SHARE_OF.match(text, q.end))


BOLD = re.compile(r"\*\*[^*\n]{1,200}?\*\*|__[^_\n]{1,200}?__")
RESULT_BEFORE = re.compile(r"(?:=|→|->|≈)\s*[~*]*\s*(?:[A-Z]{3}\s?|[A-Z]?[$€£¥]\s?)?$")
COMMIT_MARK = re.compile(r"\*\*|__|[=→≈]|->")
OPERAND_AFTER = re.compile(r"\s*(?:[/÷×*+−]|-\s|x\s)")  # "= 186,300 / 512,400 = ...": an operand


@functools.lru_cache(maxsize=1024)
def _committed_values(answer: str) -> frozenset[int]:
    """The indices of the answer's values it commits to: in bold, or as its working's result
    ("= 73.7%", not an operand: "= 186,300 / 512,400"); read once per answer, LaTeX read as
    text."""
    if not COMMIT_MARK.search(answer):
        return frozenset()
    reading = read_answer(answer)
    spans = [m.span() for m in BOLD.finditer(answer)]
    return frozenset(i for i, q in enumerate(reading.quantities)
                     if (RESULT_BEFORE.search(reading.text, max(0, q.start - 12), q.start)
                         and not OPERAND_AFTER.match(reading.text, q.end))
                     or any(a < q.start and q.end <= b for a, b in spans))


def _target_check(claim: Claim, n: int, answer: str, negated: bool = False) -> TargetCheck:
    target, tolerance = claim.targets[n], claim.tolerances[n]
    if negated:
        target, tolerance = replace(target, value=-target.value), tolerance.negated()
    check = check_target(target, tolerance, answer, claim.context, claim.subjects[n], claim.names,
                         claim.limit, claim.roles[n], claim.qualifiers[n], claim.mentioned,
                         windows=claim.windows)
    if tolerance.basis.startswith("approximately") and check.missed and _approximates(answer) \
            and any(approximate(read_answer(answer).text, q) for q in check.missed):
        # the answer's own approximation beside its exact figure ("£1,795 per month — call it
        # roughly £2,000"): held to the criterion's figure as written, not widened
        half = target.step / 2
        precise = replace(tolerance, low=target.value - half, high=target.value + half,
                          basis=f"precision of {target.text}")
        check = check_target(target, precise, answer, claim.context, claim.subjects[n],
                             claim.names, claim.limit, claim.roles[n], claim.qualifiers[n],
                             claim.mentioned, windows=claim.windows)
    return check


def _polar_check(claim: Claim, n: int, answer: str) -> TargetCheck:
    """Target n bound to the answer, its direction as part of its value: where the criterion
    states one ("fell by 4.5%", "a loss of USD 3.2m"), a value of the same size counts with its
    sign either way ("(1,204)" for "decreased by 1,204") and then meets the target only if it
    goes the criterion's way; a value whose direction the answer leaves unsaid decides nothing."""
    check = _target_check(claim, n, answer)
    reading = read_answer(answer)
    if claim.valences[n] is not None and check.outcome == "pass":
        contrary = [q for q in check.matched
                    if valence(reading.text, q) not in (None, claim.valences[n])]
        if contrary:  # "EUR 4.7m favourable" for "EUR 4.7m adverse"
            return replace(check, matched=[], missed=contrary, outcome="fail")
    polarity = claim.polarities[n]
    if polarity is None:
        return check
    if check.outcome in ("fail", "not_found") and claim.targets[n].value:
        flipped = _target_check(claim, n, answer, negated=True)
        if flipped.outcome == "pass" or (flipped.outcome == "fail" and check.outcome != "fail"):
            check = replace(flipped, target=claim.targets[n], tolerance=claim.tolerances[n])
    if check.outcome != "pass":
        return check
    headers = dict(zip(map(id, reading.quantities), reading.headers, strict=True))
    ways = [(q, _way(claim, n, polarity, q, reading.text, headers.get(id(q), "")))
            for q in check.matched]
    against = [q for q, way in ways if way is False]
    if against:
        return replace(check, matched=[], missed=against, outcome="fail")
    unsaid = [q for q, way in ways if way is None]
    if unsaid:
        word = "rose or fell" if polarity.change else "is a gain or a loss"
        return replace(check, outcome="unresolved",
                       note=f"the answer states {unsaid[0].text} but not whether it {word}, "
                            f"which {claim.targets[n].text} says")
    return check


def _way(claim: Claim, n: int, polarity: Polarity, q: Quantity, answer: str,
         header: str) -> bool | None:
    """Whether the answer's value goes the criterion's way (`polarity.meets`), except a value a
    variance table flags A or F ("(£4,380) A"): its brackets mark the adverse side, not a
    direction, so the flag decides against a criterion that names its side ("over budget
    (adverse)") and nothing where the criterion names none."""
    flag = variance_flag(answer, q)
    if flag is None:
        return meets(polarity, q, answer, header)
    return None if claim.valences[n] is None else flag == claim.valences[n]


# A sentence the answer quotes or gives as another's claim: "> Board pack: "... 19.8%"", "The
# draft board paper quotes a payback of 4.1 years"
QUOTED = re.compile(r"\"[^\"\n]{1,300}\"|“[^”\n]{1,300}”|(?m:^[ \t]*>[^\n]*)|"
                    r"\b(?:paper|pack|brochure|report|memo|deck|letter|vendor|seller|broker|board|"
                    r"management|draft|press\s+release|website|prospectus|proposal)\s+"
                    r"(?:quotes?|claims?|says?|states?|puts?|cites?|gives?)\b[^.!?\n]{0,160}", re.I)


def _quoted_doubt(reading: Reading, checks: list[TargetCheck]) -> str | None:
    """Why the checker abstains where every value deciding a target lies in a sentence the
    answer quotes or attributes to another ("The draft board paper quotes a payback of 4.1
    years, but ... 4.6 years") and the answer gives another value of the target's kind outside
    it: whose figure speaks is not for numbers to say."""
    spans = _quoted_spans(reading.text)
    if not spans:
        return None
    for c in checks:
        deciding = c.matched if c.outcome == "pass" else c.missed if c.outcome == "fail" else []
        if not deciding or not all(any(a <= q.start < b for a, b in spans) for q in deciding):
            continue
        kind = reading.of_kind(c.target)[1]
        own = next((q for i, (q, ok) in enumerate(zip(reading.quantities, kind, strict=True))
                    if ok and i not in reading.references
                    and not any(a <= q.start < b for a, b in spans)), None)
        if own is not None:
            return (f"the answer gives {deciding[0].text} only in a sentence it quotes or "
                    f"attributes to another, and {own.text} of its own")
    return None


WINDOW_WORD = re.compile(r"\b(?:within|inside)\b", re.I)  # "paid within the 14-day period"


def _window_doubt(criterion: str, reading: Reading, checks: list[TargetCheck]) -> str | None:
    """Why the checker abstains where the criterion counts within a window ("paid within the
    14-day discount period", "commissioned within the first week"), the answer says the
    deciding value only in sentences that say no window, and another value of the target's
    kind in a sentence that does ("1,218 were paid within the window; 312 were paid after
    it", "All 14 are commissioned. Within the first week only 9 were"): which count is the
    window's is not for numbers to say. Only counts are read so; a window's own value
    ("within a 30-minute drive") and a range's ends are no such value; a criterion whose target
    is the window is no such count."""
    if not WINDOW_WORD.search(criterion):
        return None
    windowed = [bool(WINDOW_WORD.search(reading.text, a, b))
                for a, b in itertools.pairwise(reading.bounds)]
    ends = {id(q) for pair in reading.ranges for q in pair}
    for c in checks:
        if c.target.dimension != "plain" or _after_window_word(criterion, c.target):
            continue  # a count, not a share or an amount within a band ("within the 10-12% range")
        deciding = {q.value for q in (c.matched if c.outcome == "pass" else
                                      c.missed if c.outcome == "fail" else [])}
        if not deciding or any(windowed[reading.segment_of[i]]
                               for i, q in enumerate(reading.quantities) if q.value in deciding):
            continue
        kind = reading.of_kind(c.target)[1]
        other = next((q for i, (q, ok) in enumerate(zip(reading.quantities, kind, strict=True))
                      if ok and q.value not in deciding and windowed[reading.segment_of[i]]
                      and i not in reading.windows and id(q) not in ends
                      and not _after_window_word(reading.text, q)), None)
        if other is not None:
            said = next(q.text for q in c.matched + c.missed)
            return (f"the criterion counts within a window, and the answer gives {said} in a "
                    f"sentence that says no window and {other.text} in one that does")
    return None


PACK = re.compile(r"\b(case|box|pack|carton|crate|pallet|bundle|tray)(?:e?s)?\s+of\s+\d+", re.I)
TAX_OUT = re.compile(r"\b(?:ex|excl|excluding|exclusive\s+of|net\s+of|before)\.?[-\s]*(?:GST|VAT)\b", re.I)
TAX_IN = re.compile(r"\b(?:inc|incl|including|inclusive\s+of)\.?[-\s]*(?:GST|VAT)\b", re.I)
FIGURES_PER = re.compile(r"\b(?:figures|values|numbers|amounts|rates)\b[^.\n]{0,40}?\bper\s+"
                         r"(?:\d+-\w+\s+)?(\w+)", re.I)
PERIODS = {"term": "term", "termly": "term", "day": "day", "daily": "day", "week": "week",
           "weekly": "week", "month": "month",
           "monthly": "month", "quarter": "quarter", "quarterly": "quarter", "year": "year",
           "annual": "year", "annually": "year", "yearly": "year", "annum": "year"}
PERIOD_WORD = re.compile(rf"\b({'|'.join(PERIODS)})\b", re.I)
# a table row's label saying what its value is per: "| Cost per pupil (£ per term) | 1,450 |"
ROW_LABEL_PER = re.compile(r"^\s*\|[^|\n]*\bper\s+(day|week|month|quarter|term|year|annum)\b"
                           r"[^|\n]*\|[^|\n]*$", re.I | re.M)
PERIOD_AFTER = re.compile(r"\s*(?:[A-Za-z]+\s+)?(?:per|a|an|each|every|/)\s*"
                          r"(day|week|month|quarter|year|annum)\b", re.I)


def _basis_doubt(criterion: str, reading: Reading, checks: list[TargetCheck]) -> str | None:
    """Why the checker abstains where what a value counts or is per, said by its table header
    or a sentence above it, is not what the criterion says: a header counting packs ("Stock
    (cases of 6)") against units the criterion names, a price ex-tax against one including it,
    "figures ... per 8-hour shift" against a per-hour claim, "A$212 thousand per quarter"
    against an annual one. Numbers alone do not convert a basis."""
    for c in checks:
        for q in c.matched if c.outcome == "pass" else c.missed if c.outcome == "fail" else []:
            i = next((j for j, r in enumerate(reading.quantities) if r is q), -1)
            header = reading.headers[i] if i >= 0 else ""
            pack = PACK.search(header)
            if pack and pack.group(1).lower() not in criterion.lower():
                return (f"the answer's header counts {q.text} in {pack.group(0)}, which the "
                        "criterion does not count in")
            if (TAX_OUT.search(header) and TAX_IN.search(criterion)) or (
                    TAX_IN.search(header) and TAX_OUT.search(criterion)):
                return f"the answer's header gives {q.text} on another tax basis than the criterion"
            above = [m.group(1).lower() for m in FIGURES_PER.finditer(reading.text, 0, q.start)]
            if above and above[-1] not in criterion.lower():
                return (f"the answer says its figures are per {above[-1]}, and {q.text} is one; "
                        "the criterion says no such basis")
            period = PERIOD_AFTER.match(reading.text, q.end)
            said = {PERIODS[w.lower()] for w in PERIOD_WORD.findall(criterion)}
            if period and said and PERIODS[period.group(1).lower()] not in said:
                return (f"the answer gives {q.text} per {period.group(1).lower()}, and the "
                        f"criterion a figure per {sorted(said)[0]}")
            label = ROW_LABEL_PER.search(reading.text, reading.text.rfind("\n", 0, q.start) + 1,
                                         q.start)
            if label and said and PERIODS[label.group(1).lower()] not in said:
                return (f"the answer's row label gives {q.text} per {label.group(1).lower()}, "
                        f"and the criterion a figure per {sorted(said)[0]}")
    return None


YEAR = r"(?:FY\s?'?(\d{2}(?:\d{2})?)|((?:19|20)\d\d))\b"
CRITERION_YEAR = re.compile(rf"\b{YEAR}", re.I)
# "£130.8m in 2023", "$45.6m for FY2024": the year written right after a value is its own
YEAR_SAID = re.compile(r"\b(?:in|for|during|over)\s+(?:the\s+)?(?:year\s+)?(?:FY|19\d\d|20\d\d)",
                       re.I)
OWN_YEAR = re.compile(rf"\s*\)?\s*(?:in|for|during|over)\s+(?:the\s+)?(?:year\s+)?{YEAR}", re.I)


def _years(match: re.Match[str] | None) -> int | None:
    if match is None:
        return None
    digits = match.group(1) or match.group(2)
    return int(digits) + (2000 if len(digits) == 2 else 0)


@functools.lru_cache(maxsize=1024)
def _says_years(answer: str) -> bool:
    """Whether the answer writes a year after "in", "for", "during" or "over" at all."""
    return YEAR_SAID.search(answer) is not None


@functools.lru_cache(maxsize=4096)
def _criterion_years(criterion: str) -> frozenset[int | None]:
    return frozenset(_years(m) for m in CRITERION_YEAR.finditer(criterion))


def _period_doubt(criterion: str, reading: Reading, checks: list[TargetCheck]) -> str | None:
    """Why the checker abstains where a deciding value has its own year written right after it
    ("from £121.4m in 2024 to £130.8m in 2023") and the criterion names other years only: the
    value is said of another period, whatever the sentence's order suggests."""
    wanted = _criterion_years(criterion)
    if not wanted or not _says_years(reading.text):
        return None
    for c in checks:
        for q in c.matched if c.outcome == "pass" else c.missed if c.outcome == "fail" else []:
            own = _years(OWN_YEAR.match(reading.text, q.end))
            if own is not None and own not in wanted:
                return (f"the answer gives {q.text} for {own}, and the criterion a figure for "
                        f"{', '.join(str(y) for y in sorted(y for y in wanted if y))}")
    return None


SUPERLATIVE = re.compile(r"\b(?:largest|biggest|highest|greatest|top|smallest|lowest|least|"
                         r"most\s+\w+)\b", re.I)
RANKED_ITEM = re.compile(r"^[ \t>*_-]*(\d{1,2})[.)]\s", re.M)  # "1. Harland ...", "2) Civic ..."


@functools.lru_cache(maxsize=4096)
def _superlative(criterion: str) -> str | None:
    found = SUPERLATIVE.search(criterion)
    return found.group(0).lower() if found else None


@functools.lru_cache(maxsize=1024)
def _ranked_items(answer: str) -> dict[int, int]:
    """Where each numbered list item of the answer starts, and its number."""
    return {m.start(): int(m.group(1)) for m in RANKED_ITEM.finditer(answer)}


def _rank_doubt(criterion: str, reading: Reading, checks: list[TargetCheck]) -> str | None:
    """Why the checker abstains where the criterion names a superlative ("the largest Q1 job")
    and the answer gives the deciding value in a numbered list other than as item 1 while
    item 1 gives another value of its kind: which figure the answer calls the largest is its
    list's order, not the number."""
    superlative = _superlative(criterion)
    if superlative is None:
        return None
    items = _ranked_items(reading.text)
    if not items:
        return None
    for c in checks:
        if c.outcome != "pass":
            continue
        kind = reading.of_kind(c.target)[1]
        for q in c.matched:
            rank = items.get(reading.text.rfind("\n", 0, q.start) + 1)
            first = next((r for i, r in enumerate(reading.quantities) if kind[i]
                          and items.get(reading.text.rfind("\n", 0, r.start) + 1) == 1), None)
            if rank is not None and rank != 1 and first is not None:
                return (f"the answer lists {first.text} first and {q.text} as item {rank}; which "
                        f"it calls the {superlative} is its list's order")
    return None


def _after_window_word(text: str, q: Quantity) -> bool:
    """Whether `q` is a window's own value: "within a 30-minute drive", "inside 90 minutes"."""
    return bool(WINDOW_WORD.search(text, max(0, q.start - 16), q.start))


@functools.lru_cache(maxsize=1024)
def _quoted_spans(answer: str) -> tuple[tuple[int, int], ...]:
    """Where the answer quotes or attributes (`QUOTED`), read once per answer."""
    return tuple(m.span() for m in QUOTED.finditer(answer))


def _paid_the_other_way(payment: tuple[str, str], answer: str,
                        checks: list[TargetCheck]) -> CodeVerdict | None:
    """A criterion that says who owes whom ("the promoter owes the venue $212k") met by the
    amount alone: a fail where the answer says the other party pays and never the criterion's,
    an abstention where it says neither; None where it says the criterion's way."""
    payer, payee = payment
    said = payments(answer)
    if (payer, payee) in said:
        return None
    amounts = ", ".join(q.text for c in checks for q in c.matched)
    if (payee, payer) in said:
        return CodeVerdict(verdict="fail", checks=checks, reason=(
            f"the answer states {amounts}, but that the {payee} owes the {payer}, not the "
            f"{payer} the {payee}"))
    return CodeVerdict(verdict="not_applicable", checks=checks, reason=(
        f"the answer states {amounts} but not who owes whom, which the criterion says (the "
        f"{payer} owes the {payee})"))


# "~42%*" ... "*on oyster only": a marker right after a value, and the note it refers to
FOOTNOTE_MARK = re.compile(r"(?:\*|†|‡)(?![*\w])")
FOOTNOTE_LINE = re.compile(r"(?m)^[ \t>_]*(?:\*|†|‡)(?!\*)\s*(\S[^\n]{0,80})")


def _footnoted(answer: str, checks: list[TargetCheck]) -> str | None:
    """Why a value that meets decides nothing where a footnote marker binds it to what its
    note says ("Gross margin ~42%*" ... "*on oyster only; blended margin ... is 36%"): the
    note may limit it to a part of what the criterion asks about."""
    for c in checks:
        for q in c.matched:
            if FOOTNOTE_MARK.match(answer, q.end) and answer[q.start - 1:q.start] != "*":
                note = FOOTNOTE_LINE.search(answer, q.end + 1)
                if note is not None:
                    return (f"{q.text} carries a footnote marker, and its note ('{note.group(1)}') "
                            "may limit it to part of what the criterion asks about")
    return None


# "— I'd treat that as the more prudent figure", "— that is the profit to report": the answer
# commits to the value just before, over what it said earlier
I_WOULD_TAKE = r"(?:I|we)(?:'d|\s+would)\s+(?:treat|take|use|report|regard)"
TO_REPORT = r"to\s+(?:report|use|quote|book)"
PREFERRED_AFTER = re.compile(
    r"[*_)]*\s*(?:net\s+of\s+[\w\s-]{1,30}?\s*)?[-–—,;:]\s*(?:" + I_WOULD_TAKE
    + r"\s+(?:that|this|it)\s+as\s+the\s+(?:more\s+|most\s+)?(?:prudent|conservative|"
    r"safer?|better|right|correct|appropriate)|(?:that|this)\s+is\s+the\s+(?:\w+\s+){0,2}?"
    + TO_REPORT + r")\b", re.I)
# The words PREFERRED_AFTER needs, looked for first: most answers have none
PREFERENCE_WORD = re.compile(I_WOULD_TAKE + r"\b|\b" + TO_REPORT + r"\b", re.I)


@functools.lru_cache(maxsize=1024)
def _prefers(answer: str) -> bool:
    """Whether the answer has words of preferring a figure, looked for once per answer."""
    return PREFERENCE_WORD.search(answer) is not None


def _preferred_elsewhere(reading: Reading, checks: list[TargetCheck]) -> CodeVerdict | None:
    """A fail where, after the values that meet, the answer says it prefers or reports another
    value of the target's kind that misses ("**£38,700**. (Note: ... the figure would be £29,300
    — I'd treat that as the more prudent figure.)"): the later preference is its commitment."""
    if not _prefers(reading.text):
        return None
    for c in checks:
        last = max(q.end for q in c.matched)
        for q in reading.quantities:
            if q.start >= last and c.target.compatible(q) \
                    and not c.tolerance.contains(value_in_terms_of(q, c.target)) \
                    and PREFERRED_AFTER.match(reading.text, q.end):
                return CodeVerdict(verdict="fail", checks=checks, reason=(
                    f"the answer states {c.matched[0].text} but then commits to {q.text} as its "
                    f"figure; target {c.target.text} ({c.tolerance.basis})"))
    return None


def _position_the_other_way(criterion: str, answer: str,
                            checks: list[TargetCheck]) -> CodeVerdict | None:
    """A criterion that names one side of a net position ("a net debt position of £15,500")
    met by a positive amount the answer names only as the other side ("Net cash = ... =
    £15,500"): a fail, as a position's name is its sign."""
    wanted = positions(criterion)
    if len(wanted) != 1:
        return None
    said = positions(answer)
    if not said or said & wanted or any(q.value <= 0 for c in checks for q in c.matched):
        return None
    other, = wanted
    names = {"down": "net debt", "up": "net cash"}
    amounts = ", ".join(q.text for c in checks for q in c.matched)
    return CodeVerdict(verdict="fail", checks=checks, reason=(
        f"the answer states {amounts} as {names['up' if other == 'down' else 'down']}, the "
        f"other side from the criterion's {names[other]}"))


def _bare_answer(claim: Claim, number: str) -> CodeVerdict:
    """An answer that is one bare number is the value asked for, in the criterion's unit."""
    target, tolerance = claim.targets[0], claim.tolerances[0]
    value = float(number.replace(",", "").replace("−", "-"))
    if target.dimension != "plain" and target.scale != 1.0 and abs(value) < abs(target.value):
        value *= target.scale  # "2433" for "$2,470 million"
    q = replace(target, value=value, text=number, start=0, end=len(number))
    check = TargetCheck(target=target, tolerance=tolerance,
                        matched=[q] if tolerance.contains(value) else [],
                        missed=[] if tolerance.contains(value) else [q], hedged=False,
                        outcome="pass" if tolerance.contains(value) else "fail")
    if check.outcome == "pass":
        return CodeVerdict(verdict="pass",
                           reason=f"the answer {number} meets {target.text} ({tolerance.basis})",
                           checks=[check])
    return CodeVerdict(verdict="fail",
                       reason=f"the answer is {number}; target {target.text} ({tolerance.basis})",
                       checks=[check])


# what may follow a unit and make it part of one the reader does not read whole: "MWh per
# hour" (MW), "mg per kernel", "kg m⁻²", "t·km"
UNIT_GOES_ON = re.compile(r"\s*(?:/|per\b|[⁻¹²³·*×])", re.I)


def _unit_certain(text: str, q: Quantity) -> bool:
    """Whether the unit of `q` is written right after it and nothing after the unit makes it
    part of a larger one (a rate per something, a negative exponent); a column header's
    brackets naming it ("Recovered (troy oz)") are as certain."""
    after = text[q.end:q.end + 64]
    unit = units.COMPOUND_AFTER.match(after) or units.UNIT_AFTER.match(after) \
        or MEASURE_AFTER.match(after)
    return unit is not None and not UNIT_GOES_ON.match(after, unit.end())


def _other_unit(criterion: str, reading: Reading,
                missing: list[TargetCheck]) -> tuple[Literal["fail", "not_applicable"], str] | None:
    """Why the answer fails where it gives a target's number in a unit the reader names with
    certainty and the criterion's unit is another: of another kind ("15 kg/m²" for 15 kg/m³)
    or of the same kind converting to another value ("118 g/mile" is 73.3 g/km). Different
    kinds never match (#25 item 2); the number alone is no answer in the criterion's unit.
    Where one unit is the other over something ("64.8 kg/day" for "64.8 kg ... per day"), or
    either goes on past what the reader names ("4.2 MWh per hour"), the basis may be said in
    words, so nothing is decided here. Where the answer states a concentration or rate from
    one kind to the other ("60 ml of 1 mg/ml solution"), it converts, which the checker does
    not do: it abstains and says so."""
    for c in missing:
        target = c.target
        if not target.measure or not _unit_certain(criterion, target):
            continue
        for q, header in zip(reading.quantities, reading.headers, strict=True):
            if not q.measure or q.measure == target.measure or q.value != target.value:
                continue
            headed = q.measure in map(units.unit_heading, HEADER_PARENS.findall(header))
            if (q.measure.startswith(target.measure + "/")
                    or target.measure.startswith(q.measure + "/")
                    or not (headed or _unit_certain(reading.text, q))):
                continue
            if not units.same_kind(q.measure, target.measure):
                rate = _concentration(reading, q.measure, target.measure)
                if rate is not None:
                    return "not_applicable", (
                        f"the answer states {q.text} in {q.measure} and {rate.text} in "
                        f"{rate.measure}, which converts it to the criterion's {target.measure}; "
                        "the checker does not convert through a stated concentration")
                return "fail", (f"the answer states {q.text} in {q.measure}, a unit of another "
                                f"kind than the criterion's {target.text} ({target.measure})")
            converted = units.convert(q.value, q.measure, target.measure)
            if not c.tolerance.contains(converted):
                return "fail", (f"the answer states {q.text} in {q.measure}, which is "
                                f"{converted:,.4g} in the criterion's {target.measure}; target "
                                f"{target.text}")
    return None


def _concentration(reading: Reading, one: str, other: str) -> Quantity | None:
    """A value the answer states in a unit of one kind over the other ("1 mg/ml" for ml and
    mg): a concentration or rate through which a value in one converts to the other, which the
    checker does not do, so a mismatch of kinds decides nothing."""
    for q in reading.quantities:
        top, _, bottom = (q.measure or "").partition("/")
        if bottom and ((units.same_kind(top, other) and units.same_kind(bottom, one))
                       or (units.same_kind(top, one) and units.same_kind(bottom, other))):
            return q
    return None


def _missing(claim: Claim, criterion: str, reading: Reading, checks: list[TargetCheck],
             missing: list[TargetCheck], artifacts: bool) -> CodeVerdict:
    names = ", ".join(c.target.text for c in missing)
    if reading.saved_file:
        where = ("the run folder holds the agent's files, which the checker does not read"
                 if artifacts else "the run folder does not hold it")
        return CodeVerdict(verdict="not_applicable",
                           reason=f"the deliverable is a file ({where}); the answer states no value "
                           f"near {names}", checks=checks)
    if reading.refusal and not any(c.matched for c in checks):
        return CodeVerdict(verdict="fail",
                           reason=f"the answer declines or could not find the value ({names})",
                           checks=checks)
    if not reading.quantities and not reading.thresholds:
        if UNREAD_NUMBERS.search(reading.text):  # numbers the reader could not read as values
            return CodeVerdict(verdict="not_applicable", checks=checks,
                               reason=f"the answer's numbers could not be read; target {names}")
        if UNREAD_SPAN.search(reading.text):
            return CodeVerdict(verdict="not_applicable", checks=checks, reason=(
                "the answer says a span in words or by clock times or dates, which is not read "
                f"as a value (so it is not without a number); target {names}"))
        return CodeVerdict(verdict="fail",
                           reason=f"the answer states no number at all; target {names}", checks=checks)
    mislabelled = _other_unit(criterion, reading, missing)
    if mislabelled is not None:
        return CodeVerdict(verdict=mislabelled[0], reason=mislabelled[1], checks=checks)
    return CodeVerdict(verdict="not_applicable", reason=f"the answer states no value near {names}",
                       checks=checks)


def code_verdicts(task: Task, attempt: Attempt) -> dict[str, CodeVerdict]:
    """The code checker's verdict on every criterion of an attempt that has an answer."""
    if attempt.answer is None:
        return {}
    return {c.id: grade_numeric(c.text, attempt.answer, task.prompt, bool(attempt.artifacts))
            for c in task.criteria}


def code_grades(attempt: Attempt, verdicts: dict[str, CodeVerdict]) -> list[CriterionGrade]:
    return [CriterionGrade(attempt_id=attempt.id, criterion_id=criterion_id, grader=CODE_GRADER,
                           verdict=v.verdict, rationale=v.reason)
            for criterion_id, v in verdicts.items()]
