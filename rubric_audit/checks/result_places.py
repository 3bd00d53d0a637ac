"""Where a number sits in a tool result: a sheet read's `file sheet!cell`, a JSON key path
(`rows[3].revenue`), a CSV or markdown table's row label and column header, a printed grid's cell.

Tool output is machine text, so its numbers are read by a plain pattern (`PLAIN_NUMBER`). A result
is parsed as JSON only when it looks like JSON and is under `MAX_PARSED_CHARS`, and walked without
recursion; where a place cannot be known, `ResultPlaces.place` says "" and never guesses.
"""

from __future__ import annotations

import csv
import json
import re
from itertools import pairwise
from pathlib import PurePosixPath
from typing import Any

MAX_PARSED_CHARS = 2_000_000
MAX_PLACE = 120
TABLE_DELIMITERS = ("\t", "|", ",")
MARKDOWN_RULE = re.compile(r"^\s*\|?[\s:|-]*-[\s:|-]*$")
GRID_COLUMN = re.compile(r"[A-Z]{1,3}")
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
WORD = re.compile(r"[A-DF-Za-df-z]")  # a letter other than an exponent's e

JsonTree = dict[str, Any] | list[Any]  # a parsed result: its leaves are any JSON, told apart by type
Way = tuple["Way | None", str | int, JsonTree]  # a node's way up: (its parent's, its key, its parent)
PLAIN_NUMBER = re.compile(r"(?<![\w.])\d+(?:,\d+)*(?:\.\d+)?(?:[eE][-+]?\d+)?")
DECIMAL_COMMA = re.compile(r"\d+,\d{1,2}")


def readings(found: list[str]) -> list[str]:
    """"1,234" is one number in prose and two cells in CSV: both readings are kept; "13,9" is
    also 13.9, written with a decimal comma (no thousands group has one or two digits)."""
    grouped = [w for w in found if "," in w]
    if not grouped:
        return found
    return [w for w in found if "," not in w] + [
        reading for w in grouped for reading in (w.replace(",", ""), *w.split(","), *(
            [w.replace(",", ".")] if DECIMAL_COMMA.fullmatch(w) else []))]


def parse_result(text: str) -> JsonTree | None:
    """A result's JSON object or list, when it is JSON and under the size cap."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "[") or len(stripped) > MAX_PARSED_CHARS:
        return None
    try:
        parsed = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict | list) else None


class ResultPlaces:
    """Where numbers sit in one tool result, asked of number after number: the result is
    parsed as JSON once, and its lines are read for their numbers once each, as far as the
    numbers asked for (a result where many of an answer's numbers were seen is read once, not
    once per number)."""

    def __init__(self, text: str) -> None:
        self.parsed = parse_result(text)
        self._lines = _Lines(text) if self.parsed is None else None

    def place(self, token: str) -> str:
        """Where in the result `token` first is ("" when that cannot be known)."""
        place = (self._lines.table_place(token) if self._lines is not None
                 else _json_place(self.parsed, token) if self.parsed is not None else "")
        return place if len(place) <= MAX_PLACE else place[:MAX_PLACE - 1] + "…"


class _Lines:
    """A text's lines, and the line each number read so far is first written on."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self._first: dict[str, int] = {}
        self._read = 0  # lines read for their numbers so far

    def line_of(self, token: str) -> int | None:
        """The first line `token` is written on (read on from the last line read until it is
        found), or None."""
        while token not in self._first and self._read < len(self.lines):
            for reading in readings(PLAIN_NUMBER.findall(self.lines[self._read])):
                self._first.setdefault(reading, self._read)
            self._read += 1
        return self._first.get(token)

    def table_place(self, token: str) -> str:
        """The row label and column header of the first table cell holding `token`: a table is
        a run of two lines or more split by one delimiter (tab, pipe, comma) into the same
        number of fields, its first line the header (named in words); a spreadsheet grid (a
        blank corner, columns D, E, F..., rows numbered) gives the cell (`M94`). "" when the
        number is first written outside such a cell, or in the header or the label column."""
        at = self.line_of(token)
        if at is None:
            return ""
        lines, line = self.lines, self.lines[at]
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


def _json_place(root: JsonTree, token: str) -> str:
    """Where the first leaf holding `token`, in document order, is: a sheet cell (`file
    sheet!cell`) when the leaf is a cell's value, else its key path; for a text leaf, its key
    path and table place, or "" when the number is not in a table of it."""
    value = float(token)
    # depth first, in order, without recursion (hostile nesting); each node's way up is a
    # linked (up, key, container) so that a step costs the same at any depth
    stack: list[tuple[Any, Way | None]] = [(root, None)]
    while stack:
        node, up = stack.pop()
        if isinstance(node, dict | list):
            items = list(node.items() if isinstance(node, dict) else enumerate(node))
            stack.extend((child, (up, key, node)) for key, child in reversed(items))
            continue
        if isinstance(node, bool) or not isinstance(node, int | float | str):
            continue
        if isinstance(node, str) and not _is_cell_of(node, token):  # text: a table in it?
            if token not in readings(PLAIN_NUMBER.findall(node)):
                continue
            inner = _Lines(node).table_place(token)
            return f"{_key_path(_way(up)[0])} {inner}".strip() if inner else ""
        if isinstance(node, str) or node == value:  # the leaf is the value (151.2 or "151.2")
            path, parents = _way(up)
            return _sheet_cell(path, parents) or _key_path(path)
    return ""


def _way(up: Way | None) -> tuple[tuple[str | int, ...], tuple[JsonTree, ...]]:
    """The keys from the root to a node, and the containers on the way."""
    keys: list[str | int] = []
    containers: list[JsonTree] = []
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
    return len(found) == 1 and token in readings(found)


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
