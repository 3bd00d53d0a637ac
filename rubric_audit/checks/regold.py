"""Gold recomputation: re-derive criterion values from the task's workbook with the prompt's inputs.

A recipe per task, `BENCH/regold/<task_id>.toml` (docs/formats.md), names the workbook, the
overrides the prompt, mail or chat imply (each with its source), and for each numeric criterion (by
1-based index) the cell, or a small expression over cells, that yields its value:

    workbook = "Project_Nordlys/Nordlys_Model.xlsx"
    [[override]]
    cell = "Assumptions!B9"
    value = 0.09
    source = "prompt: Assume a WACC of 9.0%"
    [[criterion]]
    index = 1
    expr = "DCF!B21"          # or e.g. "sum(Stores!M2:M11) / 10 * 100"

The recomputed value is compared, in the criterion's written units, with what the criterion and
the gold state, using the tolerance the code checker would apply. Without a recipe, cells of the
task's one workbook (or a named one) can still be shown, with overrides (`ad_hoc_recipe`).
An override must name a sheet the workbook has and a cell that holds a value, a number where the
cell holds one: a typo is refused, never applied to an empty cell that no formula reads.
"""

from __future__ import annotations

import ast
import math
import operator
import re
import tomllib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, Field, ValidationError

from rubric_audit.checks.binding import check_target
from rubric_audit.checks.criterion import Tolerance, criterion_targets, split_criterion, tolerance_for
from rubric_audit.core.errors import InputError, read_text
from rubric_audit.core.model import Benchmark, Finding, Task
from rubric_audit.core.workbook import Cell, WorkbookError, stored_cells, workbook_cells
from rubric_audit.load.world import task_tree

RECIPES = "regold"
MAX_COMPUTED_CELLS = 5_000  # formula values kept per task for provenance (sheet order)
CELL = r"(?:'[^']+'|[A-Za-z_][\w ]*?)!\$?[A-Z]{1,3}\$?\d+"
# `sum` in any case; its cells in capitals, as REF and `total` read them.
RANGE = re.compile(rf"(?i:sum)\(\s*({CELL})\s*:\s*\$?([A-Z]{{1,3}})\$?(\d+)\s*\)")
REF = re.compile(CELL)
SET = re.compile(rf"\s*({CELL})\s*=(.*)", re.I | re.S)  # --set 'Sheet!B3=0.06'
BINARY: dict[type[ast.operator], Callable[[float, float], float | complex]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.Pow: operator.pow}
UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {ast.USub: operator.neg,
                                                           ast.UAdd: operator.pos}


class Override(BaseModel):
    cell: str
    value: float | str
    source: str = ""


class CriterionRecipe(BaseModel):
    index: int = Field(ge=1)
    expr: str


class Recipe(BaseModel):
    workbook: str
    override: list[Override] = Field(default_factory=list)
    criterion: list[CriterionRecipe] = Field(default_factory=list)


class Recomputed(BaseModel):
    """One recomputed value beside what the criterion and the gold state."""

    criterion_id: str | None
    label: str
    value: float
    criterion_value: float | None = None
    gold_values: list[float] = Field(default_factory=list)
    tolerance: tuple[float, float] | None = None
    tolerance_basis: str = ""
    criterion_matches: bool | None = None
    gold_matches: bool | None = None


class RecipeError(Exception):
    """A recipe that cannot be evaluated; names the recipe file and line."""

    def __init__(self, path: Path, line: int | None, problem: str) -> None:
        self.path, self.line, self.problem = path, line, problem
        super().__init__(f"{path}{f':{line}' if line else ''}: {problem}")


def recipe_path(bench: Benchmark, task: Task) -> Path:
    return Path(bench.root) / RECIPES / f"{task.id}.toml"


def has_recipe(bench: Benchmark, task: Task) -> bool:
    return bool(bench.root) and recipe_path(bench, task).is_file()


def parse_set(item: str) -> tuple[str, float | str]:
    """`--set 'Sheet!B3=0.06'` as (cell, value): a number (`6%` is 0.06), else the text as
    written; one line naming --set where it names no sheet's cell."""
    match = SET.fullmatch(item)
    if match is None:
        sheet_less = re.fullmatch(r"\s*\$?[A-Za-z]{1,3}\$?\d+\s*=.*", item, re.S)
        raise InputError("--set", None, f"{item!r}: " + (
            "name the cell's sheet too, e.g. 'Assumptions!B9=0.09'" if sheet_less
            else "expected SHEET!CELL=VALUE, e.g. 'Assumptions!B9=0.09'"))
    ref, text = match.group(1), match.group(2).strip()
    try:
        return ref, float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        return ref, text


def task_workbooks(bench: Benchmark, task: Task) -> list[str]:
    """The xlsx workbooks of the task's world (its overlay applied), by path in its files."""
    return sorted(p.removeprefix("filesystem/") for p in task_tree(bench, task)
                  if p.startswith("filesystem/") and p.lower().endswith(".xlsx"))


def ad_hoc_recipe(bench: Benchmark, task: Task, workbook: str | None) -> Recipe:
    """A recipe of no criteria for cells shown without one: the workbook named (`--workbook`),
    else the task's one workbook."""
    books = task_workbooks(bench, task)
    listed = f": {', '.join(books[:10])}" if books else ""
    if workbook is None and len(books) != 1:
        raise InputError("--workbook", None, f"the task's world holds {len(books)} workbooks"
                                             f"{listed}; name the one to read")
    if workbook is not None and workbook not in books:
        raise InputError("--workbook", None, f"{workbook} is not a workbook of the task's "
                                             f"world{' (its workbooks' + listed + ')' if books else ''}")
    return Recipe(workbook=workbook or books[0])


def load_recipe(path: Path) -> Recipe:
    try:
        return Recipe.model_validate(tomllib.loads(read_text(path)))
    except tomllib.TOMLDecodeError as exc:
        raise RecipeError(path, getattr(exc, "lineno", None), f"malformed TOML: {exc}") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise RecipeError(path, None, f"{field}: {err['msg']}") from None


def _line_of(path: Path, needle: str) -> int | None:
    if not path.is_file():  # an ad hoc recipe has no file
        return None
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if needle in line:
            return number
    return None


def _cell_key(ref: str) -> str:
    sheet, _, cell = ref.partition("!")
    return f"{sheet.strip(chr(39))}!{cell.replace('$', '').upper()}"


def applied_overrides(recipe: Recipe, extra: dict[str, float | str] | None = None
                      ) -> list[tuple[str, Any, str]]:
    """(cell, value, where it came from) of every override a recomputation applies; a cell
    given with --set replaces the recipe's override of the same cell."""
    applied = {_cell_key(o.cell): (o.cell, o.value, o.source) for o in recipe.override}
    for ref, value in (extra or {}).items():
        replaced = applied.get(_cell_key(ref))
        applied[_cell_key(ref)] = (ref, value, "--set" + (
            f", instead of the recipe's {replaced[1]}" if replaced else ""))
    return list(applied.values())


def evaluate_expression(expr: str, values: dict[str, Any]) -> float:
    """Arithmetic over cell references and sum(Sheet!A1:A9); nothing else is allowed."""
    names: dict[str, float] = {}

    def number(ref: str) -> float:
        key = _cell_key(ref)
        if key not in values:
            raise KeyError(f"no cell {key}")
        value = values[key]
        if isinstance(value, str) and value.startswith("#"):
            raise ValueError(f"{key} evaluates to {value} (unsupported function or bad reference)")
        if value is None:
            raise ValueError(f"{key} has no value (circular reference?)")
        if not isinstance(value, int | float):
            raise ValueError(f"{key} is not a number: {value!r}")
        return float(value)

    def total(match: re.Match[str]) -> str:
        sheet, first = match.group(1).rsplit("!", 1)
        start = re.match(r"\$?([A-Z]+)\$?(\d+)", first)
        assert start is not None  # RANGE's first cell is a CELL: column letters, then row
        start_col, start_row = start.groups()
        from openpyxl.utils import column_index_from_string, get_column_letter

        cols = range(column_index_from_string(start_col),
                     column_index_from_string(match.group(2)) + 1)
        rows = range(int(start_row), int(match.group(3)) + 1)
        name = f"_v{len(names)}"
        names[name] = sum(number(f"{sheet}!{get_column_letter(c)}{r}") for c in cols for r in rows
                          if values.get(_cell_key(f"{sheet}!{get_column_letter(c)}{r}"))
                          is not None)
        return name

    def single(match: re.Match[str]) -> str:
        name = f"_v{len(names)}"
        names[name] = number(match.group(0))
        return name

    python = REF.sub(single, RANGE.sub(total, expr))

    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
            return _number(BINARY[type(node.op)](walk(node.left), walk(node.right)))
        if isinstance(node, ast.UnaryOp) and type(node.op) in UNARY:
            return UNARY[type(node.op)](walk(node.operand))
        raise ValueError(f"not allowed in a recipe expression: {ast.dump(node)[:60]}")

    try:
        return walk(ast.parse(python, mode="eval"))
    except SyntaxError:
        raise ValueError(f"not an expression: {expr!r}") from None
    except ArithmeticError as exc:  # a division by zero, a power past a float's range
        raise ValueError(f"cannot be computed: {exc}") from None
    except RecursionError:
        raise ValueError("expression nested too deeply") from None


def _number(result: float | complex) -> float:
    """A step's result, if it is a real, finite number (a negative number's fractional power is
    complex; a product can overflow to infinity)."""
    if not isinstance(result, float) or not math.isfinite(result):
        raise ValueError(f"cannot be computed: a step gives {result}")
    return result


def recompute(bench: Benchmark, task: Task, recipe: Recipe, path: Path,
              extra: dict[str, float | str] | None = None,
              cells: list[str] | None = None) -> list[Recomputed]:
    """The recipe's values (and any extra `cells`) recomputed with its overrides (and `extra`,
    from --set). A recipe line that fails only with `extra` is blamed on --set, not the recipe."""
    try:
        return _recomputed(bench, task, recipe, path, extra, cells)[0]
    except RecipeError as exc:
        if not extra:
            raise
        _recomputed(bench, task, recipe, path)  # raises the recipe's own error, if it has one
        given = ", ".join(f"{ref}={value}" for ref, value in extra.items())
        raise InputError("--set", None, f"with {given}, {path.name}"
                                        f"{f' line {exc.line}' if exc.line else ''} cannot be "
                                        f"computed: {exc.problem}") from None


def _override_problem(ref: str, value: float | str, sheets: set[str], cells: dict[str, Cell],
                      workbook: str) -> str | None:
    """Why an override cannot apply to the workbook: no such sheet, an empty cell (a typo: no
    input is there), or text for a cell that holds a number."""
    key = _cell_key(ref)
    sheet = key.partition("!")[0]
    if sheet not in sheets:
        return f"no sheet {sheet!r} in {workbook} (its sheets: {', '.join(sorted(sheets))})"
    cell = cells.get(key)
    if cell is None:
        return f"{key} is empty in {workbook}: a typo? (an input cell holds a value)"
    if isinstance(value, str) and isinstance(cell.value, int | float) and cell.formula is None:
        return f"{key} holds a number ({cell.value:g}), not text: give a number"
    return None


def _check_overrides(recipe: Recipe, path: Path, extra: dict[str, float | str] | None,
                     data: bytes) -> None:
    """The recipe's overrides and --set's, each against the workbook before it is computed."""
    try:
        sheets, stored = stored_cells(data)
    except WorkbookError as exc:
        raise RecipeError(path, _line_of(path, recipe.workbook), str(exc)) from None
    cells = {c.ref: c for c in stored}
    for override in recipe.override:
        problem = _override_problem(override.cell, override.value, set(sheets), cells,
                                    recipe.workbook)
        if problem:
            raise RecipeError(path, _line_of(path, override.cell), problem)
    for ref, value in (extra or {}).items():
        if problem := _override_problem(ref, value, set(sheets), cells, recipe.workbook):
            raise InputError("--set", None, f"{ref}={value}: {problem}")


def _recomputed(bench: Benchmark, task: Task, recipe: Recipe, path: Path,
                extra: dict[str, float | str] | None = None, cells: list[str] | None = None
                ) -> tuple[list[Recomputed], dict[str, float]]:
    """`recompute`'s values, and the number every formula cell of the workbook gives with the
    overrides (at most MAX_COMPUTED_CELLS, in sheet order)."""
    tree = task_tree(bench, task)
    data = tree.get(f"filesystem/{recipe.workbook}")
    if data is None:
        raise RecipeError(path, _line_of(path, recipe.workbook),
                          f"workbook {recipe.workbook} is not in the task's world")
    _check_overrides(recipe, path, extra, data)
    overrides: dict[str, Any] = {_cell_key(cell): value
                                 for cell, value, _ in applied_overrides(recipe, extra)}
    try:
        book = workbook_cells(data, overrides)
    except WorkbookError as exc:
        raise RecipeError(path, None, str(exc)) from None
    values = {c.ref: c.value for c in book}
    out = []
    for item in recipe.criterion:
        if item.index > len(task.criteria):
            raise RecipeError(path, _line_of(path, f"index = {item.index}"),
                              f"the task has {len(task.criteria)} criteria, not {item.index}")
        try:
            value = evaluate_expression(item.expr, values)
        except (KeyError, ValueError) as exc:
            raise RecipeError(path, _line_of(path, item.expr), str(exc).strip("'\"")) from None
        out.append(compare(task, task.criteria[item.index - 1].id, item.expr, value))
    for ref in cells or []:
        try:
            out.append(Recomputed(criterion_id=None, label=ref,
                                  value=evaluate_expression(ref, values)))
        except (KeyError, ValueError) as exc:
            raise InputError("--cell", None, f"{ref}: {str(exc).strip(chr(39))} in "
                                             f"{recipe.workbook}") from None
    computed = [(c.ref, float(c.value)) for c in book if c.formula
                and isinstance(c.value, int | float) and not isinstance(c.value, bool)
                and math.isfinite(c.value)]
    return out, dict(computed[:MAX_COMPUTED_CELLS])


def compare(task: Task, criterion_id: str, label: str, value: float) -> Recomputed:
    """The recomputed value against the criterion's target and the gold's statement of it."""
    criterion = task.criterion(criterion_id)
    assert criterion is not None
    _, tolerance_text = split_criterion(criterion.text)
    targets = criterion_targets(criterion.text)
    if not targets:
        return Recomputed(criterion_id=criterion_id, label=label, value=value)
    target = targets[0]
    base = value * target.scale if target.dimension in ("currency", "plain") else value
    tolerance = tolerance_for(target, tolerance_text, task.prompt)
    half = (tolerance.high - tolerance.low) / 2
    recomputed = replace(target, value=base)
    around = Tolerance(low=base - half, high=base + half, basis=tolerance.basis)
    gold_values: list[float] = []
    gold_matches = None
    if task.gold is not None and task.gold.text.strip():
        check = check_target(recomputed, around, task.gold.text, [])
        gold_values = [q.value / target.scale if target.dimension in ("currency", "plain")
                       else q.value for q in check.matched + check.missed]
        gold_matches = check.outcome == "pass" if check.outcome != "not_found" else None
    return Recomputed(
        criterion_id=criterion_id, label=label, value=value,
        criterion_value=target.value / target.scale
        if target.dimension in ("currency", "plain") else target.value,
        gold_values=gold_values, tolerance=(tolerance.low, tolerance.high),
        tolerance_basis=tolerance.basis, criterion_matches=tolerance.contains(base),
        gold_matches=gold_matches)


def regold_findings(task: Task, results: list[Recomputed], recipe: Recipe) -> list[Finding]:
    """`gold_recompute_mismatch` where the criterion or the gold disagrees with the workbook,
    with the workbook and the inputs set in it (each with where the recipe took it from)."""
    inputs = [{"cell": cell, "value": value, "source": source}
              for cell, value, source in applied_overrides(recipe)]
    findings = []
    for r in results:
        wrong = [what for what, ok in (("criterion", r.criterion_matches), ("gold", r.gold_matches))
                 if ok is False]
        if wrong:
            findings.append(Finding(
                task_id=task.id, criterion_id=r.criterion_id, check="gold_recompute_mismatch",
                severity="error",
                message=f"recomputed from the workbook with the task's inputs: {r.value:,.4g}; "
                        f"the {' and the '.join(wrong)} {'state' if len(wrong) > 1 else 'states'} "
                        + ", ".join(f"{v:,.4g}" for v in ([r.criterion_value]
                                                          if 'criterion' in wrong else r.gold_values)),
                evidence={**r.model_dump(), "workbook": recipe.workbook, "inputs": inputs}))
    return findings


def regold_all(bench: Benchmark) -> list[Finding]:
    """Every task with a recipe; a broken recipe is a finding and the rest still runs."""
    return regold_everything(bench).findings


class Regold(NamedTuple):
    """Gold recomputation over a benchmark, per task with a recipe: its criteria's recomputed
    values, the findings they give, and what the workbook's formulas compute with the task's
    inputs (an answer may state those without a tool result showing them: provenance)."""

    recomputed: dict[str, list[Recomputed]]
    findings: list[Finding]
    computed: dict[str, dict[str, float]]


def regold_everything(bench: Benchmark) -> Regold:
    """Recomputed values of every task with a recipe, and the findings they give."""
    results: dict[str, list[Recomputed]] = {}
    computed: dict[str, dict[str, float]] = {}
    findings = []
    for task in bench.tasks:
        path = recipe_path(bench, task)
        if not path.is_file():
            continue
        try:
            recipe = load_recipe(path)
            results[task.id], computed[task.id] = _recomputed(bench, task, recipe, path)
            findings += regold_findings(task, results[task.id], recipe)
        except RecipeError as exc:
            findings.append(Finding(task_id=task.id, check="regold_recipe_error",
                                    severity="error", message=str(exc),
                                    evidence={"recipe": str(path), "line": exc.line}))
    return Regold(results, findings, computed)
