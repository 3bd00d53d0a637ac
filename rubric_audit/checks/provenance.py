"""Where the numbers in an answer came from: a pure function of the answer and its trajectory.

A number the answer states is *seen* when a tool result (or the prompt) holds it, up to the
answer's precision (rounded or cut) and a power-of-ten scale (a workbook's 0.0985 is the
answer's 9.85%, its 2,156.687 in millions the answer's $2.16bn); the first such step is its
source. A number seen nowhere may still be *computed*: a sum, difference, ratio, percentage or
percentage change of two values seen. Anything else is *unsupported*, and
`answer_value_unsupported` says so (info).

Conservative by design: the final answer's own call and any result that merely echoes its
call's arguments (a todo list, a written file) are not sources; single-digit numbers are not
judged; and when the trajectory holds too many numbers for a pair to mean anything, the computed
test abstains (the value counts as computed). Tool output is machine text (CSV, JSON), so its
numbers are read by a plain pattern; the answer's by the project's quantity parser.

A number seen is also *placed* where its source is structured: a sheet read's `file sheet!cell`,
a JSON key path (`rows[3].revenue`), a table's row label and column header (a spreadsheet grid's
`M94`). A result is parsed as JSON only when it looks like JSON and is under `MAX_PARSED_CHARS`;
where the place cannot be known, only the text around the number is kept.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from itertools import pairwise
from pathlib import PurePosixPath
from typing import Any, Literal

import numpy as np

from rubric_audit.checks.numbers import Quantity, find_quantities
from rubric_audit.model import Attempt, Finding, Record, Trajectory

FINAL_ANSWER_TOOLS = frozenset({"final_answer", "submit"})
SCALES = (1.0, 1e2, 1e-2, 1e3, 1e-3, 1e6, 1e-6, 1e9, 1e-9)
MIN_SIGNIFICANT_DIGITS = 2
MAX_POOL_FOR_PAIRS = 5_000
CONTEXT = 40
ESCAPED_SPACE = re.compile(r"\\[tnr]")
MAX_PARSED_CHARS = 2_000_000
MAX_PLACE = 120
TABLE_DELIMITERS = ("\t", "|", ",")
MARKDOWN_RULE = re.compile(r"^\s*\|?[\s:|-]*-[\s:|-]*$")
GRID_COLUMN = re.compile(r"[A-Z]{1,3}")
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
WORD = re.compile(r"[A-DF-Za-df-z]")  # a letter other than an exponent's e
PLAIN_NUMBER = re.compile(r"(?<![\w.])\d+(?:,\d+)*(?:\.\d+)?(?:[eE][-+]?\d+)?")


class ValueSource(Record):
    """One number of the answer and where it came from."""

    text: str
    status: Literal["seen", "computed", "unsupported"]
    step: int | None = None
    tool: str | None = None
    where: str = ""
    place: str = ""  # the cell, key path or table row and column holding it, when known

    def describe(self) -> str:
        if self.status == "seen":
            where = f" {self.place}" if self.place else f": {self.where}"
            return f"{self.text} first seen in step {self.step} {self.tool}{where}"
        if self.status == "computed":
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
        self._pool: np.ndarray | None = None
        self._parsed: dict[int, dict | list | None] = {}  # a source's JSON, parsed once

    def _add(self, step: int, tool: str, text: str, arguments: str, tokens: list[str]) -> int:
        """Add a source's numbers to `tokens`; returns how many."""
        found = _readings(PLAIN_NUMBER.findall(ESCAPED_SPACE.sub(" ", text)))
        echoed = set(_readings(PLAIN_NUMBER.findall(arguments)))
        if echoed:  # a result that repeats its call's own arguments (a todo list) is no source
            found = [t for t in found if t not in echoed]
        tokens += found
        self.sources.append((step, tool, text))
        return len(found)

    def first(self, low: float, high: float,
              digits: int | None) -> tuple[int, str, str, str] | None:
        """(step, tool, context, place) of the earliest number in [low, high]; with `digits`,
        only one written to at least that many significant digits."""
        hits = np.nonzero((self.values >= low) & (self.values <= high))[0]
        hits = [int(i) for i in hits if digits is None or _significant(self.tokens[i]) >= digits]
        if not hits:
            return None
        best = min(hits, key=lambda i: (self.sources[self.owners[i]][0], i))
        step, tool, text = self.sources[self.owners[best]]
        owner, token = int(self.owners[best]), self.tokens[best]
        if owner not in self._parsed:
            self._parsed[owner] = _parsed(text)
        return step, tool, _context(text, token), _place(text, self._parsed[owner], token)

    def pool(self) -> np.ndarray:
        """Distinct values written to two significant digits or more: operands of a computation
        ("2 - 0.06" is no reason)."""
        if self._pool is None:
            distinct = np.unique(self.values)
            if len(distinct) > MAX_POOL_FOR_PAIRS:
                self._pool = distinct
            else:
                precise = {float(t) for t in set(self.tokens)
                           if _significant(t) >= MIN_SIGNIFICANT_DIGITS}
                self._pool = np.array(sorted(precise), dtype=float)
        return self._pool

    def any_between(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """For each [low, high], whether a pool value lies in it."""
        pool = self.pool()
        return np.searchsorted(pool, high, side="right") > np.searchsorted(pool, low, "left")


def _readings(found: list[str]) -> list[str]:
    """"1,234" is one number in prose and two cells in CSV: both readings are kept."""
    grouped = [w for w in found if "," in w]
    if not grouped:
        return found
    return [w for w in found if "," not in w] + [
        reading for w in grouped for reading in (w.replace(",", ""), *w.split(","))]


def _context(text: str, token: str) -> str:
    text = ESCAPED_SPACE.sub(" ", text)
    at = text.find(token)
    if at < 0:  # a reading of "1,234" as cells
        at = text.find(token.split(".")[0])
    at = max(at, 0)
    return " ".join(text[max(0, at - CONTEXT):at + len(token) + CONTEXT].split())


def _parsed(text: str) -> dict | list | None:
    """A result's JSON object or list, when it is JSON and under the size cap."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "[") or len(stripped) > MAX_PARSED_CHARS:
        return None
    try:
        parsed = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict | list) else None


def _place(text: str, parsed: dict | list | None, token: str) -> str:
    """Where in a structured result `token` first is ("" when that cannot be known)."""
    place = _json_place(parsed, token) if parsed is not None else _table_place(text, token)
    return place if len(place) <= MAX_PLACE else place[:MAX_PLACE - 1] + "…"


def _json_place(root: dict | list, token: str) -> str:
    """Where the first leaf holding `token`, in document order, is: a sheet cell (`file
    sheet!cell`) when the leaf is a cell's value, else its key path; for a text leaf, its key
    path and table place, or "" when the number is not in a table of it."""
    value = float(token)
    # depth first, in order, without recursion (hostile nesting); each node's way up is a
    # linked (up, key, container) so that a step costs the same at any depth
    stack: list[tuple[Any, tuple | None]] = [(root, None)]
    while stack:
        node, up = stack.pop()
        if isinstance(node, dict | list):
            items = list(node.items() if isinstance(node, dict) else enumerate(node))
            stack.extend((child, (up, key, node)) for key, child in reversed(items))
            continue
        if isinstance(node, bool) or not isinstance(node, int | float | str):
            continue
        if isinstance(node, str) and not _is_cell_of(node, token):  # text: a table in it?
            if token not in _readings(PLAIN_NUMBER.findall(node)):
                continue
            inner = _table_place(node, token)
            return f"{_key_path(_way(up)[0])} {inner}".strip() if inner else ""
        if isinstance(node, str) or node == value:  # the leaf is the value (151.2 or "151.2")
            path, parents = _way(up)
            return _sheet_cell(path, parents) or _key_path(path)
    return ""


def _way(up: tuple | None) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The keys from the root to a node, and the containers on the way."""
    keys: list[Any] = []
    containers: list[Any] = []
    while up is not None:
        up, key, container = up
        keys.append(key)
        containers.append(container)
    return tuple(reversed(keys)), tuple(reversed(containers))


def _sheet_cell(path: tuple[Any, ...], parents: tuple[Any, ...]) -> str:
    """`file sheet!cell` for a cell's value in a sheet read ({"path", "sheet", "items":
    [{"cell", "value", ...}]}); the field is named when it is not the value."""
    row = parents[-1] if parents else None
    if not isinstance(row, dict) or not isinstance(row.get("cell"), str):
        return ""
    read = next((p for p in reversed(parents[:-1]) if isinstance(p, dict)
                 and isinstance(p.get("sheet"), str)), None)
    if read is None:
        return ""
    file = PurePosixPath(read["path"]).name if isinstance(read.get("path"), str) else ""
    field = "" if path[-1] == "value" else f" {path[-1]}"
    return f"{file} {read['sheet']}!{row['cell']}{field}".strip()


def _key_path(path: tuple[Any, ...]) -> str:
    out = ""
    for key in path:
        if isinstance(key, int):
            out += f"[{key}]"
        elif IDENTIFIER.fullmatch(key):
            out += f".{key}" if out else key
        else:
            out += f"[{json.dumps(key)}]"
    return out


def _table_place(text: str, token: str) -> str:
    """The row label and column header of the first table cell holding `token`: a table is a
    run of two lines or more split by one delimiter (tab, pipe, comma) into the same number of
    fields, its first line the header (named in words); a spreadsheet grid (a blank corner,
    columns D, E, F..., rows numbered) gives the cell (`M94`). "" when the number is first
    written outside such a cell, or in the header or the label column."""
    lines = text.splitlines()
    for at, line in enumerate(lines):
        if token not in _readings(PLAIN_NUMBER.findall(line)):
            continue
        for delimiter in TABLE_DELIMITERS:
            fields = _fields(line, delimiter)
            column = next((i for i, f in enumerate(fields) if _is_cell_of(f, token)), None)
            if column is None:
                continue
            header = _table_header(lines, at, delimiter, len(fields))
            if header is None or column == 0 or not WORD.search(header[column]) or not fields[0]:
                return ""
            row, name = fields[0], header[column]
            if row.isdigit() and _is_grid_header(header):
                return f"{name}{row}"
            return f"row {row!r}, column {name!r}"
        return ""  # first written outside any table
    return ""


def _is_grid_header(header: list[str]) -> bool:
    """A spreadsheet grid's header: a blank corner, then consecutive column letters (D, E, F)."""
    if header[0] or not all(GRID_COLUMN.fullmatch(name) for name in header[1:]):
        return False
    numbers = [_column_number(name) for name in header[1:]]
    return all(b == a + 1 for a, b in pairwise(numbers))


def _column_number(letters: str) -> int:
    number = 0
    for letter in letters:
        number = number * 26 + ord(letter) - ord("A") + 1
    return number


def _is_cell_of(field: str, token: str) -> bool:
    """Whether a field (a table's, or a JSON string) is one value, no words, that is `token`."""
    if WORD.search(field):
        return False
    found = PLAIN_NUMBER.findall(field)
    return len(found) == 1 and token in _readings(found)


def _fields(line: str, delimiter: str) -> list[str]:
    """A line's fields (CSV quoting honoured); [] for a line that is no row of such a table."""
    if delimiter == "|":
        line = line.strip()
        if not (line.startswith("|") and line.endswith("|") and len(line) > 1):
            return []
        line = line[1:-1]
    if delimiter not in line:
        return []
    if delimiter != ",":
        return [f.strip() for f in line.split(delimiter)]
    try:
        return [f.strip() for f in next(csv.reader([line]))]
    except csv.Error:  # a field over the csv module's limit: no row of a table we read
        return []


def _table_header(lines: list[str], at: int, delimiter: str, width: int) -> list[str] | None:
    """The first line of the run of lines around `at` with `width` fields (a markdown rule line
    within it skipped); None when `at` is that first line."""
    start = at
    while start > 0:
        above = lines[start - 1]
        if delimiter == "|" and MARKDOWN_RULE.match(above):
            start -= 1
            continue
        if len(_fields(above, delimiter)) != width:
            break
        start -= 1
    if start == at:
        return None
    return _fields(lines[start], delimiter)


def _significant(written: str) -> int:
    return len(re.sub(r"\D", "", written.split("e")[0].split("E")[0]).lstrip("0"))


def _interval(q: Quantity) -> tuple[float, float]:
    """The values the answer's number stands for, unsigned and without its scale word: any value
    that rounds, or is cut, to it at the answer's precision."""
    number, unit = abs(q.value / q.scale), 10.0 ** -q.decimals
    return number - unit / 2, number + unit * (1 - 1e-9)


def _computed(seen: _Seen, low: float, high: float) -> str | None:
    """How two values seen give a value in [low, high] (a sum, difference, ratio or change)."""
    pool = seen.pool()
    if len(pool) > MAX_POOL_FOR_PAIRS:
        return f"not tested: {len(pool):,} numbers seen, too many for a pair to mean anything"
    ways = (("sum of {b:g} and {a:g}", lambda lo, hi: (lo - pool, hi - pool), lambda m: m - pool),
            ("difference of {a:g} and {b:g}", lambda lo, hi: (pool + lo, pool + hi),
             lambda m: pool + m),
            ("ratio of {a:g} to {b:g}", lambda lo, hi: (pool * lo, pool * hi), lambda m: pool * m),
            ("change from {b:g} to {a:g}", lambda lo, hi: (pool * (1 + lo), pool * (1 + hi)),
             lambda m: pool * (1 + m)))
    for scale in SCALES:
        lo, hi = low / scale, high / scale
        for i, (text, bounds, other) in enumerate(ways):
            if i == 3 and hi >= 1:
                continue  # a change of more than 100%: no percentage reads that way
            found = np.nonzero(seen.any_between(*bounds(lo, hi)))[0]
            if len(found):
                b = float(pool[found[0]])
                return text.format(a=float(other((lo + hi) / 2)[found[0]]), b=b) + " (values seen)"
    return None


def answer_provenance(answer: str, trajectory: Trajectory) -> list[ValueSource]:
    """Each number of the answer (two significant digits or more), and its source."""
    judged = [q for q in find_quantities(answer) if _significant(q.text) >= MIN_SIGNIFICANT_DIGITS]
    if not judged:
        return []
    seen = _Seen(trajectory)
    out = []
    for q in judged:
        digits = _significant(q.text)
        low, high = _interval(q)
        # a value written as precisely as the answer's first; a shorter one (3 for 3.00) after
        hit = next((h for need in (digits, None) for scale in SCALES
                    if (h := seen.first(low / scale, high / scale, need)) is not None), None)
        if hit is not None:
            out.append(ValueSource(text=q.text, status="seen", step=hit[0], tool=hit[1],
                                   where=hit[2], place=hit[3]))
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
