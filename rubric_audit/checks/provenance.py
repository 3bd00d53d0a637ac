"""Where the numbers in an answer came from: a pure function of the answer and its trajectory.

A number the answer states is *seen* when a tool result (or the prompt) holds it, up to the
answer's precision (rounded or cut) and a power-of-ten scale (a workbook's 0.0985 is the answer's 9.85%, its
2,156.687 in millions the answer's $2.16bn); the first such step is its source. A number seen
nowhere may still be *computed*: a sum, difference, ratio, percentage or percentage change of
two values seen. Anything else is *unsupported*, and `answer_value_unsupported` says so (info).

Conservative by design: the final answer's own call and any result that merely echoes its
call's arguments (a todo list, a written file) are not sources; single-digit numbers are not
judged; and when the trajectory holds too many numbers for a pair to mean anything, the computed
test abstains (the value counts as computed). Tool output is machine text (CSV, JSON), so its
numbers are read by a plain pattern; the answer's by the project's quantity parser.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from typing import Literal

from rubric_audit.checks.numbers import Quantity, find_quantities
from rubric_audit.model import Attempt, Finding, Record, Trajectory

FINAL_ANSWER_TOOLS = frozenset({"final_answer", "submit"})
SCALES = (1.0, 1e2, 1e-2, 1e3, 1e-3, 1e6, 1e-6, 1e9, 1e-9)
MIN_SIGNIFICANT_DIGITS = 2
MAX_POOL_FOR_PAIRS = 5_000
CONTEXT = 40
ESCAPED_SPACE = re.compile(r"\\[tnr]")
PLAIN_NUMBER = re.compile(r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")


class ValueSource(Record):
    """One number of the answer and where it came from."""

    text: str
    status: Literal["seen", "computed", "unsupported"]
    step: int | None = None
    tool: str | None = None
    where: str = ""

    def describe(self) -> str:
        if self.status == "seen":
            return f"{self.text} first seen in step {self.step} {self.tool}: {self.where}"
        if self.status == "computed":
            return f"{self.text}: {self.where}"
        return f"{self.text} appears in no tool result and is not computed from values seen"


Found = tuple[float, int, str, str, int]  # value, step, tool, context, significant digits


class _Seen:
    """Every number of the prompt and the tool results, sorted by value, with where it was."""

    def __init__(self, trajectory: Trajectory) -> None:
        found: list[Found] = []
        for index, step in enumerate(trajectory.steps):
            if step.role in ("system", "user"):
                found += _numbers(step.text, index, "prompt", set())
            for call in step.tool_calls:
                if call.result and call.name not in FINAL_ANSWER_TOOLS:
                    echoed = {value for value, *_ in _numbers(call.arguments, index, "", set())}
                    found += _numbers(call.result, index, call.name, echoed)
        found.sort(key=lambda f: (f[0], f[1]))
        self.entries = found
        self.values = [f[0] for f in found]
        # operands of a computation: two significant digits or more, so "2 - 0.06" is no reason
        self.distinct = sorted({f[0] for f in found if f[4] >= MIN_SIGNIFICANT_DIGITS})

    def first(self, low: float, high: float, digits: int | None) -> Found | None:
        """The earliest number in [low, high]; with `digits`, only one written to at least that
        many significant digits."""
        start, end = bisect.bisect_left(self.values, low), bisect.bisect_right(self.values, high)
        return min((f for f in self.entries[start:end] if digits is None or f[4] >= digits),
                   key=lambda f: f[1], default=None)

    def has(self, low: float, high: float) -> bool:
        return bisect.bisect_right(self.distinct, high) > bisect.bisect_left(self.distinct, low)


def _significant(written: str) -> int:
    return len(re.sub(r"\D", "", written.split("e")[0].split("E")[0]).lstrip("0"))


def _numbers(text: str, step: int, tool: str, echoed: set[float]) -> list[Found]:
    text = ESCAPED_SPACE.sub(" ", text)  # JSON-escaped tables: "\\t622.85" is a cell
    out = []
    for match in PLAIN_NUMBER.finditer(text):
        written = match.group(0)
        snippet = " ".join(text[max(0, match.start() - CONTEXT):match.end() + CONTEXT].split())
        # "1,234" is one number in prose and two cells in CSV: keep both readings
        readings = [written.replace(",", ""), *written.split(",")] if "," in written else [written]
        for reading in readings:
            value = float(reading)
            if value != 0 and value not in echoed:
                out.append((value, step, tool, snippet, _significant(reading)))
    return out


def _interval(q: Quantity) -> tuple[float, float]:
    """The values the answer's number stands for, unsigned and without its scale word: any value
    that rounds, or is cut, to it at the answer's precision."""
    number, unit = abs(q.value / q.scale), 10.0 ** -q.decimals
    return number - unit / 2, number + unit * (1 - 1e-9)


def _computed(seen: _Seen, low: float, high: float) -> str | None:
    """How two values seen give a value in [low, high] (a sum, difference, ratio or change)."""
    pool = seen.distinct
    if len(pool) > MAX_POOL_FOR_PAIRS:
        return f"not tested: {len(pool):,} numbers seen, too many for a pair to mean anything"
    for scale in SCALES:
        lo, hi = low / scale, high / scale
        for b in pool:
            if seen.has(lo - b, hi - b):
                return f"sum of {b:g} and {(lo + hi) / 2 - b:g} (values seen)"
            if seen.has(b + lo, b + hi):
                return f"difference of {b + (lo + hi) / 2:g} and {b:g} (values seen)"
            if seen.has(b * lo, b * hi):
                return f"ratio of {b * (lo + hi) / 2:g} to {b:g} (values seen)"
            if hi < 1 and seen.has(b * (1 + lo), b * (1 + hi)):
                return f"change from {b:g} to {b * (1 + (lo + hi) / 2):g} (values seen)"
    return None


def answer_provenance(answer: str, trajectory: Trajectory) -> list[ValueSource]:
    """Each number of the answer (two significant digits or more), and its source."""
    seen = _Seen(trajectory)
    out = []
    for q in find_quantities(answer):
        digits = _significant(q.text)
        if digits < MIN_SIGNIFICANT_DIGITS:
            continue
        low, high = _interval(q)
        # a value written as precisely as the answer's first; a shorter one (3 for 3.00) after
        hit = next((h for need in (digits, None) for scale in SCALES
                    if (h := seen.first(low / scale, high / scale, need)) is not None), None)
        if hit is not None:
            out.append(ValueSource(text=q.text, status="seen", step=hit[1], tool=hit[2],
                                   where=hit[3]))
            continue
        how = _computed(seen, low, high)
        out.append(ValueSource(text=q.text, status="computed" if how else "unsupported",
                               where=how or ""))
    return out


def answer_value_unsupported(attempt: Attempt, trajectory: Trajectory) -> Iterator[Finding]:
    """Numbers of the answer found in no tool result and not computed from values seen (info).

    Silent when no trajectory was recorded or no number can be judged."""
    if not attempt.answer or not trajectory.steps:
        return
    unsupported = [v for v in answer_provenance(attempt.answer, trajectory)
                   if v.status == "unsupported"]
    if not unsupported:
        return
    values = ", ".join(v.text for v in unsupported)
    yield Finding(
        task_id=attempt.task_id, check="answer_value_unsupported", severity="info",
        message=f"attempt {attempt.id} states {values}, found in no tool result or prompt and "
                f"not a sum, difference, ratio or percentage of two values seen there",
        evidence={"attempt_id": attempt.id, "values": [v.text for v in unsupported],
                  "tool_calls": len(trajectory.calls()), "answer": attempt.answer[:500]})
