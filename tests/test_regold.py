"""Gold recomputation: the formula engine, the sample's recipes, and bad recipes."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import openpyxl
import pytest
from typer.testing import CliRunner

from rubric_audit.checks.regold import (
    RecipeError,
    evaluate_expression,
    load_recipe,
    recipe_path,
    recompute,
    regold_all,
    regold_everything,
)
from rubric_audit.cli import app
from rubric_audit.core.workbook import workbook_cells
from rubric_audit.load.benchmark import load_benchmark
from tests.conftest import SAMPLE


def workbook() -> bytes:
    book = openpyxl.Workbook()
    inputs = book.active
    inputs.title = "Inputs"
    inputs["B1"], inputs["B2"] = 100, 0.1
    calc = book.create_sheet("Calc")
    calc["A1"] = "=Inputs!B1*(1+Inputs!B2)"
    calc["A2"] = "=A1*(1+Inputs!$B$2)"
    calc["A3"] = "=SUM(A1:A2)"
    calc["A4"] = '=IF(A3>240,"high","low")'
    calc["A5"] = "=Inputs!B1*(1+Inputs!B2)^5"
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def test_engine_on_the_formulas_the_sample_uses() -> None:
    cells = {c.ref: c.value for c in workbook_cells(workbook())}
    assert cells["Calc!A1"] == pytest.approx(110)
    assert cells["Calc!A2"] == pytest.approx(121)
    assert cells["Calc!A3"] == pytest.approx(231)
    assert cells["Calc!A4"] == "low"
    assert cells["Calc!A5"] == pytest.approx(100 * 1.1 ** 5)
    changed = {c.ref: c.value for c in workbook_cells(workbook(), {"Inputs!B2": 0.2})}
    assert (changed["Calc!A2"], changed["Calc!A3"], changed["Calc!A4"]) == (
        pytest.approx(144), pytest.approx(264), "high")


def test_expressions() -> None:
    values = {"Calc!A1": 110.0, "Calc!A2": 121.0, "Calc!A3": None, "Calc!A4": "#NAME?"}
    assert evaluate_expression("Calc!A1 * 2 - Calc!A2 / 11", values) == pytest.approx(209)
    assert evaluate_expression("sum(Calc!A1:A2) / 2", values) == pytest.approx(115.5)
    with pytest.raises(KeyError, match="no cell Calc!Z9"):
        evaluate_expression("Calc!Z9", values)
    with pytest.raises(ValueError, match="circular"):
        evaluate_expression("Calc!A3 + 1", values)
    with pytest.raises(ValueError, match="unsupported function"):
        evaluate_expression("Calc!A4", values)
    with pytest.raises(ValueError, match="not allowed"):
        evaluate_expression("__import__('os')", values)
    # Cells are written in capitals, in a sum as alone (only `sum` may be written in any case):
    # a lowercase one is refused in words, not with a crash.
    assert evaluate_expression("SUM(Calc!A1:A2)", values) == pytest.approx(231)
    for lowercase in ("Calc!a1", "sum(Calc!a1:a2)", "sum(Calc!A1:a2)"):
        with pytest.raises(ValueError, match="not an expression"):
            evaluate_expression(lowercase, values)
    for broken, problem in [("Calc!A1 / (Calc!A2 - Calc!A2)", "float division by zero"),
                            ("10.0 ** 400", "Numerical result out of range"),
                            ("(0 - Calc!A1) ** 0.5", "a step gives"),
                            ("1e300 * 1e300", "a step gives inf"),
                            ("+".join(["1"] * 100_000), "nested too deeply")]:
        with pytest.raises(ValueError, match=problem):
            evaluate_expression(broken, values)


@pytest.fixture(scope="module")
def sample():
    return load_benchmark(SAMPLE)


def test_sample_recipes_catch_the_planted_gold_and_pass_sound_tasks(sample) -> None:
    defects = (SAMPLE / "DEFECTS.md").read_text()
    recipes = [t for t in sample.tasks if recipe_path(sample, t).is_file()]
    assert len(recipes) >= 10
    for task in recipes:
        results = recompute(sample, task, load_recipe(recipe_path(sample, task)),
                            recipe_path(sample, task))
        sound = f"| {task.id} | {task.name} | sound |" in defects
        if sound:
            assert all(r.criterion_matches and r.gold_matches is not False for r in results), \
                task.name
    planted = sample.task("nordlys_02")
    [result] = recompute(sample, planted, load_recipe(recipe_path(sample, planted)),
                         recipe_path(sample, planted))
    assert result.value == pytest.approx(44.2094, abs=1e-3)
    assert (result.criterion_value, result.criterion_matches, result.gold_matches) == (
        48.5, False, False)


def test_what_the_recomputed_workbook_computes_is_kept_per_task(sample) -> None:
    """Every formula cell's number with the task's inputs (for answer provenance), not the
    inputs themselves: nordlys_02's 9.0% WACC gives EV 2,188.4 and 44.21 per share."""
    run = regold_everything(sample)
    computed = run.computed[sample.task("nordlys_02").id]
    assert computed["DCF!B21"] == pytest.approx(44.2094, abs=1e-3)
    assert computed["DCF!B18"] == pytest.approx(2188.4, abs=0.05)
    assert "Assumptions!B9" not in computed, "an input, not a computation"
    assert run.computed[sample.task("nordlys_01").id]["DCF!B21"] == pytest.approx(48.5, abs=1e-2)
    assert set(run.computed) == set(run.recomputed)
    assert all(isinstance(v, float) for cells in run.computed.values() for v in cells.values())


def test_bad_recipes_name_the_line_and_the_rest_still_runs(tmp_path: Path, sample) -> None:
    bench = tmp_path / "bench"
    shutil.copytree(SAMPLE, bench, ignore=shutil.ignore_patterns("runs"))
    copy = load_benchmark(bench)
    broken = {
        "nordlys_01": 'workbook = "Project_Nordlys/Nordlys_Model.xlsx"\n\n[[criterion]]\n'
                      'index = 1\nexpr = "Nowhere!B18"\n',
        "nordlys_07": 'workbook = "Project_Nordlys/Nordlys_Model.xlsx"\n\n[[criterion]]\n'
                      'index = 1\nexpr = "DCF!Z99"\n',
        "kestrel_05": 'workbook = "Kestrel/Missing.xlsx"\n',
        "nordlys_06": 'workbook = "Project_Nordlys/Nordlys_Model.xlsx"\n\n[[criterion]]\n'
                      'index = 1\nexpr = "DCF!B21 / (DCF!B21 - DCF!B21)"\n',
    }
    for name, text in broken.items():
        recipe_path(copy, copy.task(name)).write_text(text)
    findings = regold_all(copy)
    errors = {f.task_id: f for f in findings if f.check == "regold_recipe_error"}
    assert set(errors) == {copy.task(n).id for n in broken}
    assert errors[copy.task("nordlys_07").id].evidence["line"] == 5
    assert "no cell DCF!Z99" in errors[copy.task("nordlys_07").id].message
    assert "Nowhere" in errors[copy.task("nordlys_01").id].message
    assert "cannot be computed: float division by zero" in \
        errors[copy.task("nordlys_06").id].message
    mismatched = {f.task_id for f in findings if f.check == "gold_recompute_mismatch"}
    assert copy.task("nordlys_02").id in mismatched, "the other recipes still run"
    with pytest.raises(RecipeError):
        recompute(copy, copy.task("nordlys_07"),
                  load_recipe(recipe_path(copy, copy.task("nordlys_07"))),
                  recipe_path(copy, copy.task("nordlys_07")))


def test_regold_command(tmp_path: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(app, ["regold", str(SAMPLE), "nordlys_02"])
    assert shown.exit_code == 0 and "MISMATCH" in shown.stdout and "44.2094" in shown.stdout
    what_if = runner.invoke(app, ["regold", str(SAMPLE), "nordlys_06", "--set",
                                  "Assumptions!B11=420", "--cell", "DCF!B18"])
    assert what_if.exit_code == 0 and "48.5008" in what_if.stdout and "2,360.03" in what_if.stdout
    replaced = runner.invoke(app, ["regold", str(SAMPLE), "nordlys_02", "--set",
                                   "Assumptions!B9=0.085"])
    assert "override Assumptions!B9 = 0.085  (--set, instead of the recipe's 0.09)" \
        in replaced.stdout and "= 0.09 " not in replaced.stdout, "the footer shows what applied"
    every = runner.invoke(app, ["regold", str(SAMPLE), "--all", "--findings",
                                str(tmp_path / "regold.jsonl")])
    assert every.exit_code == 0 and "gold_recompute_mismatch" in every.stdout
    written = [json.loads(line) for line in (tmp_path / "regold.jsonl").read_text().splitlines()]
    assert {f["check"] for f in written} == {"gold_recompute_mismatch"} and len(written) == 5
    bench = tmp_path / "bench"
    shutil.copytree(SAMPLE, bench, ignore=shutil.ignore_patterns("runs"))
    task_id = json.loads((bench / "tasks_and_rubrics.json").read_text())[0]["task_id"]
    (bench / "regold" / f"{task_id}.toml").write_text(
        'workbook = "Project_Nordlys/Nordlys_Model.xlsx"\n[[criterion]]\nindex = 1\n'
        'expr = "DCF!Q1"\n')
    bad = runner.invoke(app, ["regold", str(bench), task_id])
    assert bad.exit_code == 2
    assert bad.stderr.strip().endswith("line 4: no cell DCF!Q1")
