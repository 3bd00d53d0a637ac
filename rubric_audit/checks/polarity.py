"""Polarity: whether a value says up or down, gain or loss, above or below.

A criterion that says "fell by 4.5%", "a loss of USD 3.2m" or "6.1% above its baseline" states a
direction with its value; an answer meets it only when its value goes the same way. The
direction is read from the value's own sign (a minus sign, accounting parentheses, an explicit
plus, an arrow "▼") and from the words right beside it: a change word before it ("rose", "fell
by", "down"), a state word beside it ("loss of", "deficit", "owed", "unrecouped", "above", "over
budget", a rate "slow" or "fast"). In an answer, a value with no such word takes the one
direction its sentence speaks of, if it speaks of only one. A change whose direction the answer
leaves unsaid is unresolved: the checker abstains. Who pays whom ("the promoter owes the venue")
is a direction too (`payments`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from rubric_audit.checks.numbers import DURATION_NOUNS, Quantity
from rubric_audit.checks.text import STOPWORDS

Direction = Literal["up", "down"]
Valence = Literal["favourable", "adverse"]

_CHANGE_UP = (r"rose|rise[sn]?|rising|increase[sd]?|increasing|grew|grow(?:s|n|ing)?|growth|"
              r"gain(?:ed|ing)?|up|climb(?:ed|s)?|jump(?:ed|s)?|surged?|widened|lengthen(?:ed|s)?|"
              r"extended")
_CHANGE_DOWN = (r"fell|fall(?:s|en|ing)?|decrease[sd]?|decreasing|decline[sd]?|declining|"
                r"drop(?:ped|s)?|down|dipped|shr[au]nk|shrinks?|reduced|reduces|reduction|"
                r"contracted|slipped|slid|narrowed|shorten(?:ed|s)?|cuts")
_STATE_UP = (r"surplus|profit|gain|owed|owing|recouped|in\s+credit|extra|additional|tailwind|"
             r"in\s+our\s+favou?r|overrun|overspend|overage|excess")
_STATE_DOWN = (r"loss(?:es)?|deficit|shortfall|short\s+of|unrecouped|overdrawn|savings?|saves?|"
               r"saved|saving|headwind|drag|underspend")
_REFERENCE = (r"(?=\s+(?:\w+\s+){0,5}?(?:budget|target|plan|forecast|baseline|guidance|benchmark|"
              r"cap|limit|threshold|average|median|consensus|estimate[ds]?|prior|previous|last|"
              r"covenant|ceiling|floor|minimum|maximum|system|books?|ledger|records?|"
              r"balance)\b)")
_NOT_AFTER_PREPOSITION = r"(?<!\bon\s)(?<!\bfor\s)(?<!\bfrom\s)(?<!\bof\s)"  # "on losses"
_NOT_A_CHANGE = (r"(?!\s+(?:rates?|ratios?|risks?|prevention|counts?|lines?|season|protection|"
                 r"below|above|short)\b)")  # "84% falls below the 85% target": a side of a bar
GOVERNING = re.compile(rf"(?<![-\w])(?:(?P<up>{_CHANGE_UP}|raise[sd]?|raising|boost(?:s|ed)?)|"
                       rf"(?P<down>{_CHANGE_DOWN}|lower(?:s|ed)?))\b(?!-){_NOT_A_CHANGE}", re.I)
_CELL_END = r"(?=\s*(?:\||$|[.;,)]))"  # "| (38,600) over |": over what its row is a variance of
CHANGE_BEFORE = re.compile(rf"(?<![-\w])(?:(?P<up>{_CHANGE_UP})|(?P<down>{_CHANGE_DOWN}))\b(?!-)"
                           rf"{_NOT_A_CHANGE}", re.I)  # a write-down or step-up is a noun
STATE_BEFORE = re.compile(rf"{_NOT_AFTER_PREPOSITION}"
                          rf"\b(?:(?P<up>{_STATE_UP})|(?P<down>{_STATE_DOWN}))"
                          r"\s*(?:(?:of|by|was|is|were|at|stood\s+at|came\s+to|:)\s*)*$", re.I)
AFTER = re.compile(
    rf"(?:\s?(?:[µ°/³²·A-Za-z]{{1,4}}|[a-z]{{5,12}})(?=\s+(?:over|under|above|below|ahead|"
    rf"behind)\b))?"
    rf"[\s*)]{{0,3}}(?:(?:(?!of\b|in\b|on\b|to\b|for\b|from\b)[a-z]+\s+)?"
    rf"(?:(?P<cup>{_CHANGE_UP}|higher|more)|(?P<cdown>{_CHANGE_DOWN}|lower|cut|less|fewer|cheaper))"
    rf"{_NOT_A_CHANGE}"
    rf"|(?:in\s+)?(?P<up>{_STATE_UP}|ahead|(?:above|over)(?:{_REFERENCE}|{_CELL_END}))"
    rf"|(?:in\s+)?(?P<down>{_STATE_DOWN}|short|behind|(?:below|under)(?:{_REFERENCE}|{_CELL_END})))\b",
    re.I)
STATE_WORD = re.compile(rf"{_NOT_AFTER_PREPOSITION}"
                        rf"\b(?:(?P<up>{_STATE_UP})|(?P<down>{_STATE_DOWN}))\b", re.I)
BUDGET_STATE = re.compile(rf"\b(?:(?P<up>above|over|ahead\s+of)|(?P<down>below|under|behind))"
                          rf"{_REFERENCE}", re.I)
_UNIT_TOKEN = r"(?:\s?[A-Za-zµ°/³²·]{1,8}(?=\s))?"  # "3,200 m³ below plan": the unit between
OFFSET_AFTER = re.compile(rf"{_UNIT_TOKEN}\s+(?:over|under|above|below|ahead\s+of|behind){_REFERENCE}",
                          re.I)
CLAUSE_START = re.compile(r"[,;:()\[\]\n|]|\s[-–—]\s|\b(?:and|but|while|whereas|vs\.?|versus)\b",
                          re.I)
WORDS_BEFORE = 3  # change words read this many words before a value
SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")
CHANGE_HEADER = re.compile(r"\b(?:change|chg|delta|movement|diff(?:erence)?)\b|Δ|±", re.I)
# (not "variance": whether its sign is budget less actual or actual less budget varies)


@dataclass(frozen=True)
class Polarity:
    """The direction a criterion states for a target, and whether it is of a change ("fell
    by 4.5%": the answer must say which way) or of a state ("a loss of USD 3.2m": a plain
    positive value is no loss, but a value with no word is no contrary evidence of a profit)."""

    direction: Direction
    change: bool


def _last_words(text: str, count: int) -> str:
    return " ".join(re.findall(r"[\w+\-]+", text)[-count:])


# a clock's or a process's rate: "1.8 s/day slow" loses time, "+2.4 s/day fast" gains it
RATE_SIDE = re.compile(r"(?:\s?[A-Za-zµ/]{1,8})?\s+(?:(?P<up>fast|gaining)|(?P<down>slow|losing))\b",
                       re.I)
GLOSS = re.compile(r"\s*\([^()\n]{1,40}\)(?=\s*\S)")  # "a stock loss (shrinkage) of 42 hL"


def _clause_before(text: str, start: int) -> str:
    """The text of the value's clause before it (from the last comma, bracket, 'and' ...); a
    short gloss in brackets within it is passed over, not taken for the clause's start."""
    window = GLOSS.sub("", text[max(0, start - 80):start])
    cut = 0
    for m in CLAUSE_START.finditer(window):
        cut = m.end()
    return window[cut:]


def _direction(match: re.Match[str]) -> Direction:
    return "up" if match.group("up") else "down"


def _worded(text: str, q: Quantity) -> tuple[Direction, bool] | None:
    """(direction, whether a change word said it) from the words beside `q` in `text`: a change
    word among the few before it or right after it, else a state word before or after it."""
    before = _clause_before(text, q.start)
    after = AFTER.match(text, q.end, q.end + 60)
    # "raises annual cost by X", "reduces revenue by about X": the verb governs X
    governed = re.search(r"\bby\s*(?:about|approximately|around|roughly|some|nearly|almost)?\s*\W*$",
                         before, re.I)
    changes = list((GOVERNING if governed else CHANGE_BEFORE).finditer(
        before if governed else _last_words(before, WORDS_BEFORE)))
    if changes:
        return _direction(changes[-1]), True
    if after and (after.group("cup") or after.group("cdown")):
        return ("up" if after.group("cup") else "down"), True
    state = STATE_BEFORE.search(before.rstrip(" *$€£¥"))
    if state:
        return _direction(state), False
    if after:
        return _direction(after), False
    rate = RATE_SIDE.match(text, q.end, q.end + 30)
    return None if rate is None else (_direction(rate), False)


def criterion_polarity(body: str, target: Quantity) -> Polarity | None:
    """The direction a criterion's words give its target, if any (a duration has none)."""
    if target.noun in DURATION_NOUNS and body[target.end:target.end + 1] == "-":
        return None  # "12-month retention": a duration naming what is measured
    worded = _worded(body, target)
    if worded is None:
        return None
    direction, change = worded
    if target.value < 0:  # "a change of -4.5%" says down by itself
        direction = "down"
    return Polarity(direction, change)


def _sentence(text: str, q: Quantity) -> tuple[str, int]:
    """The sentence (or line) `q` stands in, read from a bounded window around it, and where
    `q` starts in it."""
    start = max(0, q.start - 300)
    ends = [m.end() for m in SENTENCE_END.finditer(text, start, q.start)]
    begin = ends[-1] if ends else start
    after = SENTENCE_END.search(text, q.end, q.end + 300)
    return text[begin:after.start() if after else q.end + 300], q.start - begin


# "EUR 4.7m adverse"; "improves working capital by $2.3m" is favourable, "worsens" adverse
VALENCE = re.compile(r"\b(?:(?P<favourable>favou?rable|improv(?:e[sd]?|ing))|"
                     r"(?P<adverse>adverse|unfavou?rable|worsen(?:s|ed|ing)?|deteriorat(?:e[sd]?|ing)))\b",
                     re.I)
VALENCE_REACH = 60  # characters after a value its clause's "favourable" or "adverse" may stand
# a variance cell's flag: "(£4,380) A", "€18,300 F |", "$2.1m Fav"
VARIANCE_FLAG = re.compile(r"\)?\s?(?:(?P<favourable>F|Fav)|(?P<adverse>A|Adv))(?=\s*(?:\||$))|"
                           r"\s{0,4}\((?:(?P<fav>F|Fav)|(?P<adv>A|Adv))\)", re.M)  # "£3,200 (F)"


def variance_flag(text: str, q: Quantity) -> Valence | None:
    """The A or F (adverse, favourable) a variance table writes after a value, where it does:
    brackets beside such a flag mark the adverse side, not a direction."""
    flag = VARIANCE_FLAG.match(text, q.end)
    if flag is None or q.currency is None:  # "16 A" is a current
        return None
    return "favourable" if flag.group("favourable") or flag.group("fav") else "adverse"


def valence(text: str, q: Quantity) -> Valence | None:
    """Whether the value's own clause calls it favourable or adverse ("EUR 4.7m adverse", "0.12
    GJ/t above budget (an adverse variance)", a variance cell's flag "€18,300 F"): a variance's
    good or bad side, which says nothing of up or down (an adverse cost is up, an adverse
    revenue down); None where it says neither or both."""
    flag = variance_flag(text, q)
    if flag is not None:
        return flag
    after = text[q.end:q.end + VALENCE_REACH]
    end = SENTENCE_END.search(after)
    clause = _clause_before(text, q.start) + " " + (after[:end.start()] if end else after)
    said: set[Valence] = {"favourable" if m.group("favourable") else "adverse"
                          for m in VALENCE.finditer(clause)}
    return said.pop() if len(said) == 1 else None


ARROW_BEFORE = re.compile(r"(?:(?P<up>[▲↑⬆△⇧])|(?P<down>[▼↓⬇▽⇩]))\s?[+−-]?\s?$")
ARROW_AFTER = re.compile(r"\s?(?:(?P<up>[▲↑⬆△⇧])|(?P<down>[▼↓⬇▽⇩]))")


def _arrow(text: str, q: Quantity) -> Direction | None:
    """The direction an arrow marks on a value ("▼ $0.4m", "4.2% ▲")."""
    mark = ARROW_BEFORE.search(text, max(0, q.start - 4), q.start) or ARROW_AFTER.match(text, q.end)
    return None if mark is None else _direction(mark)


def answer_direction(text: str, q: Quantity, header: str = "") -> Direction | None:
    """The direction an answer's value says: an arrow, its sign, the words beside it, a sign in
    a change column (`header`), else the one direction its sentence speaks of (None where it
    says none, or both)."""
    arrow = _arrow(text, q)
    if arrow is not None:
        return None if q.value < 0 and arrow == "up" else arrow  # "▲ −4%" says nothing
    worded = _worded(text, q)
    if q.value < 0:  # "(38,600) over" in a variance column: the sign and the word disagree
        return "down" if worded is None or worded[0] == "down" else None
    if worded is not None:
        return worded[0]
    sentence, at = _sentence(text, q)
    said = {_direction(m) for m in CHANGE_BEFORE.finditer(sentence)}
    said |= {_direction(m) for m in STATE_WORD.finditer(sentence, 0, at)}
    said |= {_direction(m) for m in BUDGET_STATE.finditer(sentence)}
    if text[max(0, q.start - 1):q.start] == "+" or (not said and CHANGE_HEADER.search(header)):
        said.add("up")  # a sign and the sentence's words that disagree leave it unsaid
    return said.pop() if len(said) == 1 else None


def meets(polarity: Polarity, q: Quantity, text: str, header: str = "") -> bool | None:
    """Whether the answer's value `q` goes the criterion's way: True, False, or None where the
    answer does not say (a change with no direction word, sign or sentence to tell)."""
    said = answer_direction(text, q, header)
    if said is None:
        return None if polarity.change or polarity.direction == "down" else True
    return said == polarity.direction


PARTY = r"(?:the\s+)?([A-Za-z][\w&-]*)"
PAYMENT = re.compile(
    rf"\b{PARTY}\s+(?:owes|pays|refunds|reimburses|remits|(?:will|must|should|would|has\s+to|"
    rf"needs\s+to|is\s+to)\s+(?:owe|pay|refund|reimburse|remit))\s+{PARTY}\b"
    rf"|\b{PARTY}\s+is\s+owed\b[^.;\n]{{0,60}}?\bby\s+{PARTY}\b", re.I)


def payments(text: str) -> list[tuple[str, str]]:
    """(payer, payee) for every "X owes Y", "X pays Y", "Y is owed ... by X" in `text`, lower
    case: who owes whom is the direction of an amount settled between two parties."""
    out = []
    for m in PAYMENT.finditer(text):
        payer, payee = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        if not {payer.lower(), payee.lower()} & STOPWORDS:
            out.append((payer.lower(), payee.lower()))
    return out


# A position's name is its sign: net debt is borrowings above cash, net cash the other way
POSITION = re.compile(r"\bnet\s+(?:(?P<down>debt|borrowings?)|(?P<up>cash|funds))\b", re.I)


@functools.lru_cache(maxsize=1024)
def positions(text: str) -> frozenset[Direction]:
    """The sides of a net position `text` names ("net debt": down, "net cash": up)."""
    return frozenset(_direction(m) for m in POSITION.finditer(text))
