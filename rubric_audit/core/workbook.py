"""Read xlsx workbooks as cells (value and formula), computing formulas that have no cached value.

openpyxl reads formulas and cached values but has no calculator, and files written by openpyxl
carry no cached values; the `formulas` library evaluates the workbook, with overrides when asked.
The workspace uses this to show agents computed values; gold recomputation uses the overrides.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rubric_audit.core.limits import check_zip

_ENGINE = threading.Lock()
CELL_KEY = re.compile(r"^'\[[^\]]*\](?P<sheet>.+)'!(?P<cell>[A-Z]+\d+)$")


class WorkbookError(Exception):
    """The workbook cannot be read or evaluated (bad file, unsupported function, cycle)."""


class Cell(BaseModel):
    sheet: str
    coordinate: str
    value: Any = None
    formula: str | None = None

    @property
    def ref(self) -> str:
        return f"{self.sheet}!{self.coordinate}"


def _plain(value: Any) -> Any:
    """numpy scalars and Excel error objects as plain JSON-able Python values."""
    if hasattr(value, "item"):
        value = value.item()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _scalar(result: Any) -> Any:
    """The single value of a one-cell result (the engine returns 2-D arrays)."""
    value = getattr(result, "value", result)
    while hasattr(value, "__len__") and not isinstance(value, str):
        value = value[0]
    return _plain(value)


@lru_cache(maxsize=8)
def _compiled(data: bytes) -> Any:
    """The workbook compiled by the engine, once per content: compiling costs ~50x a calculation,
    and the tasks of one world share its workbooks."""
    os.environ.setdefault("TQDM_DISABLE", "1")  # the engine's progress bars would flood stderr
    import formulas

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "book.xlsx"
        path.write_bytes(data)
        return formulas.ExcelModel().loads(str(path)).finish()


def _computed(data: bytes, sheets: list[str], overrides: dict[str, Any]) -> dict[str, Any]:
    by_upper = {s.upper(): s for s in sheets}
    inputs = {}
    for ref, value in overrides.items():
        sheet, _, cell = ref.rpartition("!")
        inputs[f"'[book.xlsx]{sheet.upper()}'!{cell.upper()}"] = value
    try:
        with _ENGINE:  # one calculation at a time on a shared compiled model
            solution = _compiled(data).calculate(inputs=inputs)
    except Exception as exc:  # the engine raises many types; all mean "cannot evaluate"
        raise WorkbookError(f"cannot evaluate workbook: {exc}") from exc
    out = {}
    for key, ranges in solution.items():
        match = CELL_KEY.match(key)
        if match and match["sheet"] in by_upper:
            out[f"{by_upper[match['sheet']]}!{match['cell']}"] = _scalar(ranges)
    return out


@lru_cache(maxsize=8)
def stored_cells(data: bytes) -> tuple[tuple[str, ...], tuple[Cell, ...]]:
    """Sheet names, and every non-empty cell with its formula and cached value, read once per
    content (the tasks of one world, and the sessions of a run, read the same workbooks)."""
    import openpyxl

    try:
        check_zip(data, "workbook")
        formulas_book = openpyxl.load_workbook(io.BytesIO(data), data_only=False)
        values_book = openpyxl.load_workbook(io.BytesIO(data), data_only=True)
    except Exception as exc:  # openpyxl raises zip, XML and key errors for a bad file
        raise WorkbookError(f"not a readable xlsx workbook: {exc}") from exc
    cells: list[Cell] = []
    for sheet in formulas_book.worksheets:
        cached = values_book[sheet.title]
        for row in sheet.iter_rows():
            for c in row:
                if c.value is None:
                    continue
                formula = c.value if isinstance(c.value, str) and c.value.startswith("=") else None
                value = cached[c.coordinate].value if formula else c.value
                cells.append(Cell(sheet=sheet.title, coordinate=c.coordinate,
                                  value=_plain(value), formula=formula))
    return tuple(formulas_book.sheetnames), tuple(cells)


def workbook_cells(data: bytes, overrides: dict[str, Any] | None = None) -> list[Cell]:
    """Every non-empty cell, with its formula and its value (cached, else computed).

    `overrides` maps `Sheet!A1` to a value; when given, every formula is recomputed with them.
    """
    sheets, stored = stored_cells(data)
    cells = list(stored)
    overrides = overrides or {}
    if overrides or any(c.formula and c.value is None for c in cells):
        computed = _computed(data, list(sheets), overrides)
        cells = [c.model_copy(update={"value": computed.get(c.ref, c.value)})
                 if c.formula or c.ref in overrides else c for c in cells]
    return cells
