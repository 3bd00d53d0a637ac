"""Where the numbers in an answer came from: a pure function of the answer and its trajectory.

A number the answer states is *seen* when a tool result (or the prompt) holds it, up to the
answer's precision (rounded or cut) and a power-of-ten scale (a workbook's 0.0985 is the answer's
9.85%, its 2,156.687 in millions the answer's $2.16bn); the first such step is its source. A number
seen nowhere may be what the task's *workbook* computes with the task's inputs (gold recomputation:
the recipe's values and every formula cell), which an agent that read the formulas can rightly
state; or *computed*: a sum, difference, ratio, product (a price times a count, X% of Y),
percentage or percentage change of two values seen. Anything else is *unsupported*, and
`answer_value_unsupported` says so (info), once per attempt, where the attempt has tool results to
trace it through at all.

Conservative by design: the final answer's own call and any result that merely echoes its
call's arguments (a todo list, a written file) are not sources; single-digit numbers are not
judged; and when the trajectory holds too many numbers for a pair to mean anything, the computed
test abstains (the value counts as computed). Tool output is machine text (CSV, JSON), so its
numbers are read by a plain pattern; the answer's by the project's quantity parser.

A number seen is also *placed* where its source is structured: a sheet read's `file sheet!cell`,
a JSON key path (`rows[3].revenue`), a table's row label and column header (a spreadsheet grid's
`M94`; `result_places.py`); where the place cannot be known, only the text around the number is
kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Literal

import numpy as np

from rubric_audit.checks.numbers import Quantity, find_quantities, unread
from rubric_audit.checks.result_places import PLAIN_NUMBER, ResultPlaces, readings
from rubric_audit.core.model import Attempt, Finding, Record, Trajectory

FINAL_ANSWER_TOOLS = frozenset({"final_answer", "submit"})
SCALES = (1.0, 1e2, 1e-2, 1e3, 1e-3, 1e6, 1e-6, 1e9, 1e-9)
SCALE_FACTORS = np.array(SCALES)  # the same, to search at every scale at once
MIN_SIGNIFICANT_DIGITS = 2
MAX_POOL_FOR_PAIRS = 5_000
CONTEXT = 40
ESCAPED_SPACE = re.compile(r"\\[tnr]")
NOT_DIGIT = re.compile(r"\D")



class ValueSource(Record):
    """One number of the answer and where it came from."""

    text: str
    status: Literal["seen", "workbook", "computed", "unsupported"]
    step: int | None = None
    tool: str | None = None
    where: str = ""
    place: str = ""  # the cell, key path or table row and column holding it, when known

    def describe(self) -> str:
        if self.status == "seen":
            where = f" {self.place}" if self.place else f": {self.where}"
            return f"{self.text} first seen in step {self.step} {self.tool}{where}"
        if self.status in ("workbook", "computed"):
            return f"{self.text}: {self.where}"
        return f"{self.text} appears in no tool result and is not computed from values seen"


class _Seen:
    """Every number of the prompt and the tool results, as arrays (a long trajectory holds
    hundreds of thousands); where a number was is worked out only for the one reported."""

    def __init__(self, trajectory: Trajectory) -> None:
        self.sources: list[tuple[int, str, str]] = []  # step, tool, text
        tokens: list[str] = []
        counts: list[int] = []
        for index, step in enumerate(trajectory.steps):
            if step.role in ("system", "user"):
                counts.append(self._add(index, "prompt", step.text, "", tokens))
            for call in step.tool_calls:
                if call.result and call.name not in FINAL_ANSWER_TOOLS:
                    counts.append(self._add(index, call.name, call.result, call.arguments, tokens))
        values = np.array(tokens, dtype=float) if tokens else np.zeros(0)
        owners = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        kept = values != 0
        self.values, self.owners = values[kept], owners[kept]
        self.tokens = [t for t, keep in zip(tokens, kept.tolist(), strict=True) if keep]
        self._order = np.argsort(self.values, kind="stable")  # positions, by value
        self._sorted = self.values[self._order]
        self._pools: dict[bool, np.ndarray] = {}  # operands, by whether any digits count
        self._read: dict[int, tuple[str, ResultPlaces]] = {}  # a source read for places

    def _add(self, step: int, tool: str, text: str, arguments: str, tokens: list[str]) -> int:
        """Add a source's numbers to `tokens`; returns how many."""
        found = readings(PLAIN_NUMBER.findall(ESCAPED_SPACE.sub(" ", text)))
        echoed = set(readings(PLAIN_NUMBER.findall(arguments)))
        if echoed:  # a result that repeats its call's own arguments (a todo list) is no source
            found = [t for t in found if t not in echoed]
        tokens += found
        self.sources.append((step, tool, text))
        return len(found)

    def first(self, lows: np.ndarray, highs: np.ndarray, digits: list[int]
              ) -> list[tuple[int, str, str, str] | None]:
        """For each answer number (its [low, high] and significant digits), (step, tool,
        context, place) of the earliest number in [low, high] at a power-of-ten scale: one
        written as precisely as the answer's number (`digits` significant digits or more) at
        any scale first, a shorter one (3 for 3.00) after. Every number's every scale is looked
        up in one search.

        Numbers are kept in the order of their steps, so the earliest is the first position."""
        starts = np.searchsorted(self._sorted, lows[:, None] / SCALE_FACTORS, "left").tolist()
        ends = np.searchsorted(self._sorted, highs[:, None] / SCALE_FACTORS, "right").tolist()
        return [self._first(begun, ended, wanted)
                for begun, ended, wanted in zip(starts, ends, digits, strict=True)]

    def _first(self, starts: list[int], ends: list[int], digits: int
               ) -> tuple[int, str, str, str] | None:
        found = [self._order[start:end] for start, end in zip(starts, ends, strict=True)
                 if start < end]  # positions, by scale
        for positions in found:
            best = next((i for i in np.sort(positions).tolist()
                         if _significant(self.tokens[i]) >= digits), None)
            if best is not None:
                return self._where(best)
        return self._where(int(found[0].min())) if found else None

    def _where(self, position: int) -> tuple[int, str, str, str]:
        """(step, tool, context, place) of the number at `position`."""
        owner, token = int(self.owners[position]), self.tokens[position]
        step, tool, text = self.sources[owner]
        if owner not in self._read:  # read once, however many of the answer's numbers it has
            self._read[owner] = ESCAPED_SPACE.sub(" ", text), ResultPlaces(text)
        plain, places = self._read[owner]
        return step, tool, _context(plain, token), places.place(token)

    def pool(self, extra: np.ndarray | None = None, any_digits: bool = False) -> np.ndarray:
        """The operands of a computation: distinct values written to two significant digits or
        more ("2 - 0.06" is no reason), or to any number of digits with `any_digits` (a precise
        result's operands: an average over 5 branches); each fraction also as a percentage
        (0.9712 is the 97.12% the answer subtracts from 98.5%); and `extra`, what the task's
        workbook computes (an agent that read it can compute from it)."""
        if any_digits not in self._pools:
            distinct = np.unique(self.values)
            if len(distinct) > MAX_POOL_FOR_PAIRS or any_digits:
                base = distinct
            else:
                precise = {float(t) for t in set(self.tokens)
                           if _significant(t) >= MIN_SIGNIFICANT_DIGITS}
                base = np.array(sorted(precise), dtype=float)
            self._pools[any_digits] = np.unique(np.concatenate(
                [base, base[(base > 0) & (base < 1)] * 100]))
        pool = self._pools[any_digits]
        return pool if extra is None or not len(extra) else np.unique(np.concatenate([pool,
                                                                                      extra]))


def _between(pool: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """For each [low, high], whether a pool value lies in it."""
    return np.searchsorted(pool, high, side="right") > np.searchsorted(pool, low, "left")


def _context(text: str, token: str) -> str:
    """The words around `token` in `text` (a tool result, its escaped spaces made spaces)."""
    at = text.find(token)
    if at < 0:  # a reading of "1,234" as cells
        at = text.find(token.split(".")[0])
    at = max(at, 0)
    return " ".join(text[max(0, at - CONTEXT):at + len(token) + CONTEXT].split())


def _significant(written: str) -> int:
    return len(NOT_DIGIT.sub("", written.split("e")[0].split("E")[0]).lstrip("0"))


def _interval(q: Quantity) -> tuple[float, float]:
    """The values the answer's number stands for, unsigned and without its scale word: any value
    that rounds, or is cut, to it at the answer's precision."""
    number, unit = abs(q.value / q.scale), 10.0 ** -q.decimals
    return number - unit / 2, number + unit * (1 - 1e-9)


Values = np.ndarray | float  # a value, or a grid of them searched at once
# How a value m comes from two values seen, a and b: for each b, the a it takes. The last two, a
# change and a complement, are read only for m under 1 (no percentage reads that way past 100%).
WAYS: tuple[tuple[str, Callable[[Values, Values], Values]], ...] = (
    ("sum of {b:g} and {a:g}", lambda m, b: m - b),
    ("difference of {a:g} and {b:g}", lambda m, b: b + m),
    ("ratio of {a:g} to {b:g}", lambda m, b: b * m),
    ("product of {a:g} and {b:g}", lambda m, b: m / b),  # a price times a count, X% of Y
    ("change from {b:g} to {a:g}", lambda m, b: b * (1 + m)),
    ("share of {b:g} other than {a:g}", lambda m, b: b * (1 - m)))  # accuracy: 1 - errors/lines
LOOKUPS_PER_SEARCH = 1_024
LOOKUPS_PER_BATCH = 16_384
PRECISE_RESULT = 4  # significant digits from which a single-digit operand counts


def _computed(seen: _Seen, lows: np.ndarray, highs: np.ndarray, digits: list[int],
              workbook: np.ndarray | None = None) -> list[str | None]:
    """For each answer number (its [low, high] and significant digits), how two values seen (or
    computed by the task's workbook) give a value in it (a sum, difference, ratio, product,
    change or complement): the first way at the first power-of-ten scale that has one, with the
    smallest b. A result of PRECISE_RESULT significant digits or more may have a single-digit
    operand (a total over 5 branches): a coincidence that precise is unlikely.

    The a each b needs is looked up in the sorted operands, every way of as many scales at once
    as keep a search near LOOKUPS_PER_SEARCH lookups per number: a few operands are tried at
    every scale in one search, many one scale at a time (the first usually answers); the
    numbers of one pool of operands are searched together, up to LOOKUPS_PER_BATCH lookups, and
    a number leaves the search at the first scale that answers it."""
    found_how: list[str | None] = [None] * len(digits)
    for any_digits in (False, True):
        numbers = [n for n, d in enumerate(digits) if (d >= PRECISE_RESULT) == any_digits]
        if not numbers:
            continue
        pool = seen.pool(workbook, any_digits=any_digits)
        if len(pool) > MAX_POOL_FOR_PAIRS:
            for n in numbers:
                found_how[n] = (f"not tested: {len(pool):,} numbers seen, too many for a pair "
                                f"to mean anything")
            continue
        per_search = max(1, LOOKUPS_PER_SEARCH // (len(WAYS) * max(len(pool), 1)))
        together = max(1, LOOKUPS_PER_BATCH // (len(WAYS) * max(len(pool), 1) * per_search))
        for first in range(0, len(numbers), together):
            batch = numbers[first:first + together]
            for n, how in zip(batch, _computed_batch(pool, lows[batch], highs[batch],
                                                     per_search), strict=True):
                found_how[n] = how
    return found_how


def _computed_batch(pool: np.ndarray, low: np.ndarray, high: np.ndarray, per_search: int
                    ) -> list[str | None]:
    """`_computed` of a few numbers with one pool of operands, `per_search` scales at a time."""
    out: list[str | None] = [None] * len(low)
    lows, highs = low[:, None] / SCALE_FACTORS, high[:, None] / SCALE_FACTORS  # number x scale
    left = list(range(len(low)))  # the numbers no scale has answered yet
    for start in range(0, len(SCALES), per_search):
        if not left:
            break
        scales = min(per_search, len(SCALES) - start)
        # one row per (number, scale), as a number's own search had them
        lo = lows[left, start:start + per_search].reshape(-1, 1)
        hi = highs[left, start:start + per_search].reshape(-1, 1)
        with np.errstate(divide="ignore", invalid="ignore"):  # a product's b of 0: no a
            ends = [np.stack([operand(m, pool) for _, operand in WAYS], axis=1) for m in (lo, hi)]
            # by row, way and b (a complement falls as m rises: its ends are swapped)
            found = _between(pool, np.fmin(*ends), np.fmax(*ends))
        found[hi[:, 0] >= 1, -2:] = False  # no change or complement of 100% or more
        by_way = found.any(axis=2).reshape(len(left), scales * len(WAYS))
        answered: list[bool] = np.any(by_way, axis=1).tolist()
        for row, (n, hit) in enumerate(zip(left, answered, strict=True)):
            if not hit:
                continue
            scale, way = divmod(int(by_way[row].argmax()), len(WAYS))
            at = row * scales + scale
            b = pool[int(found[at, way].argmax())]  # the smallest
            text, operand = WAYS[way]
            middle = (float(lo[at, 0]) + float(hi[at, 0])) / 2
            out[n] = text.format(a=float(operand(middle, b)), b=float(b)) + " (values seen)"
        left = [n for n, hit in zip(left, answered, strict=True) if not hit]
    return out


class _Workbook:
    """What the task's recomputed workbook gives, by cell or recipe expression, as one array."""

    def __init__(self, values: Mapping[str, float]) -> None:
        kept = {label: v for label, v in values.items() if v}
        self.labels, self.shown = list(kept), list(kept.values())
        self.values = np.abs(np.array(self.shown, dtype=float))

    def gives(self, low: float, high: float) -> str | None:
        """What gives a value in [low, high] at a power-of-ten scale (its 0.0985 is the
        answer's 9.85%), the first in the workbook's order."""
        if not self.labels:
            return None
        hit = ((self.values[:, None] >= low / SCALE_FACTORS)
               & (self.values[:, None] <= high / SCALE_FACTORS)).any(axis=1)
        if not hit.any():
            return None
        first = int(hit.argmax())
        return (f"what the task's workbook computes with its inputs ({self.labels[first]} = "
                f"{self.shown[first]:,.6g})")


def answer_provenance(answer: str, trajectory: Trajectory,
                      workbook: Mapping[str, float] | None = None) -> list[ValueSource]:
    """Each number of the answer (two significant digits or more), and its source; `workbook`
    is what the task's recomputed workbook gives, by cell or recipe expression. None from an
    answer too long to read (`numbers.unread`)."""
    if unread(answer=answer):
        return []
    judged = [q for q in find_quantities(answer) if _significant(q.text) >= MIN_SIGNIFICANT_DIGITS]
    if not judged:
        return []
    seen, book = _Seen(trajectory), _Workbook(workbook or {})
    intervals = [_interval(q) for q in judged]
    lows = np.array([low for low, _ in intervals])
    highs = np.array([high for _, high in intervals])
    digits = [_significant(q.text) for q in judged]
    out: list[ValueSource | None] = []
    for q, hit, (low, high) in zip(judged, seen.first(lows, highs, digits), intervals,
                                   strict=True):
        if hit is not None:
            out.append(ValueSource(text=q.text, status="seen", step=hit[0], tool=hit[1],
                                   where=hit[2], place=hit[3]))
            continue
        computes = book.gives(low, high)
        out.append(ValueSource(text=q.text, status="workbook", where=computes)
                   if computes is not None else None)
    left = [n for n, source in enumerate(out) if source is None]  # neither seen nor the workbook's
    computed = _computed(seen, lows[left], highs[left], [digits[n] for n in left], book.values)
    for n, how in zip(left, computed, strict=True):
        out[n] = ValueSource(text=judged[n].text, status="computed" if how else "unsupported",
                             where=how or "")
    return [source for source in out if source is not None]


def has_tool_results(trajectory: Trajectory) -> bool:
    """Whether any tool call (not the final answer's own) returned something to trace through."""
    return any(call.result and call.result.strip() and call.name not in FINAL_ANSWER_TOOLS
               for step in trajectory.steps for call in step.tool_calls)


def answer_value_unsupported(attempt: Attempt, trajectory: Trajectory,
                             workbook: Mapping[str, float] | None = None) -> Iterator[Finding]:
    """One finding per attempt: the numbers of its answer found in no tool result, not what the
    task's workbook computes (`workbook`, from gold recomputation) and not computed from values
    seen (info).

    Silent where the attempt has no tool result (no trajectory recorded, or an answer given
    without any tool): with nothing to trace through, a number found nowhere is no evidence."""
    if not attempt.answer or not has_tool_results(trajectory):
        return
    unsupported = list(dict.fromkeys(v.text for v in answer_provenance(
        attempt.answer, trajectory, workbook) if v.status == "unsupported"))
    if not unsupported:
        return
    not_computed = ", not what the task's workbook computes" if workbook else ""
    yield Finding(
        task_id=attempt.task_id, check="answer_value_unsupported", severity="info",
        message=f"attempt {attempt.id} states {', '.join(unsupported)}, found in no tool result "
                f"or prompt{not_computed} and not a sum, difference, ratio, product or "
                f"percentage of two values seen there",
        evidence={"attempt_id": attempt.id, "values": unsupported,
                  "tool_calls": len(trajectory.calls()), "workbook_values": len(workbook or {}),
                  "answer": attempt.answer[:500]})
