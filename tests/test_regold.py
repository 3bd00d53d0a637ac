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


def test_set_values_are_checked_and_blamed_on_set_not_the_recipe() -> None:
    """A --set that names no sheet, an empty cell (a typo), or text for a number is refused
    naming --set; one that makes the recipe's expression fail is blamed on --set too, never on
    the recipe's line."""
    runner = CliRunner()
    for given, problem in [
            ("B9=0.1", "--set: 'B9=0.1': name the cell's sheet too, e.g. 'Assumptions!B9=0.09'"),
            ("Assumptions!B99=0.1", "--set: Assumptions!B99=0.1: Assumptions!B99 is empty in "
                                    "Project_Nordlys/Nordlys_Model.xlsx: a typo?"),
            ("Assumptions!B9=abc", "--set: Assumptions!B9=abc: Assumptions!B9 holds a number "
                                   "(0.085), not text: give a number"),
            ("Nowhere!B9=1", "--set: Nowhere!B9=1.0: no sheet 'Nowhere' in "
                             "Project_Nordlys/Nordlys_Model.xlsx (its sheets: Assumptions, Comps, DCF)"),
            ("Assumptions!B12=0", "--set: with Assumptions!B12=0.0, "
                                  "task_5b91f2d2c9b95d5004186f0334ca1d80.toml line 11 cannot be "
                                  "computed: DCF!B21 evaluates to #DIV/0!")]:
        result = runner.invoke(app, ["regold", str(SAMPLE), "nordlys_02", "--set", given])
        assert result.exit_code == 2, (given, result.output)
        [line] = result.stderr.strip().splitlines()
        assert line.startswith(f"error: {problem}"), (given, line)
    percent = runner.invoke(app, ["regold", str(SAMPLE), "nordlys_02", "--set",
                                  "Assumptions!B9=8.5%"])
    assert percent.exit_code == 0 and "48.5008" in percent.stdout


def test_findings_go_to_a_file_checked_before_the_work(tmp_path: Path) -> None:
    runner = CliRunner()
    folder = runner.invoke(app, ["regold", str(SAMPLE), "--all", "--findings", str(tmp_path)])
    assert folder.exit_code == 2 and folder.stdout == ""
    assert folder.stderr.strip() == (f"error: {tmp_path}: --findings: a folder, not a file: name "
                                     f"the file to write, e.g. {tmp_path / 'regold.jsonl'}")
    nowhere = runner.invoke(app, ["regold", str(SAMPLE), "--all", "--findings",
                                  str(tmp_path / "no" / "f.jsonl")])
    assert nowhere.exit_code == 2 and "no folder" in nowhere.stderr
    alone = runner.invoke(app, ["regold", str(SAMPLE), "nordlys_02", "--findings",
                                str(tmp_path / "f.jsonl")])
    assert alone.exit_code == 2 and "--findings: only with --all" in alone.stderr
    assert list(tmp_path.iterdir()) == []


def test_cells_of_a_task_without_a_recipe_come_from_its_one_workbook() -> None:
    """meridian_04 has no recipe and one workbook: --cell reads it, with --set; --workbook names
    one; a workbook the world lacks is refused naming those it has."""
    runner = CliRunner()
    bench = load_benchmark(SAMPLE)
    task = bench.task("meridian_04")
    assert not recipe_path(bench, task).is_file()
    book = "Meridian/Fee_Schedule.xlsx"
    from rubric_audit.core.workbook import workbook_cells
    from rubric_audit.load.world import task_tree

    cells = workbook_cells(task_tree(bench, task)[f"filesystem/{book}"])
    number = next(c for c in cells if isinstance(c.value, int | float) and not c.formula)
    shown = runner.invoke(app, ["regold", str(SAMPLE), "meridian_04", "--cell", number.ref,
                                "--json"])
    assert shown.exit_code == 0, shown.output
    read = json.loads(shown.stdout)
    assert (read["workbook"], read["recipe"]) == (book, None)
    assert [(r["criterion"], r["value"]) for r in read["results"]] == [
        (number.ref, pytest.approx(float(number.value)))]
    changed = runner.invoke(app, ["regold", str(SAMPLE), "meridian_04", "--cell", number.ref,
                                  "--set", f"{number.ref}=12345", "--workbook", book])
    assert changed.exit_code == 0, changed.output
    assert "12,345" in changed.stdout and "(no recipe)" in changed.stdout
    missing = runner.invoke(app, ["regold", str(SAMPLE), "meridian_04", "--cell", number.ref,
                                  "--workbook", "Nope.xlsx"])
    assert missing.exit_code == 2
    assert f"--workbook: Nope.xlsx is not a workbook of the task's world (its workbooks: " \
           f"{book})" in missing.stderr
    nothing = runner.invoke(app, ["regold", str(SAMPLE), "meridian_04"])
    assert nothing.exit_code == 2 and "show cells of its workbook with --cell" in nothing.stderr


def test_the_regold_table_names_criteria_and_json_gives_the_same(tmp_path: Path) -> None:
    runner = CliRunner()
    table = runner.invoke(app, ["regold", str(SAMPLE), "nordlys_02"])
    assert "C1 States an implied equity value per share of NOK 48.50" in table.stdout
    read = json.loads(runner.invoke(app, ["regold", str(SAMPLE), "nordlys_02", "--json"]).stdout)
    [result] = read["results"]
    assert result["criterion"] == "C1 States an implied equity value per share of NOK 48.50"
    assert (result["value"], result["criterion_matches"]) == (pytest.approx(44.2094, abs=1e-3),
                                                              False)
    assert read["overrides"] == [{"cell": "Assumptions!B9", "value": 0.09,
                                  "source": "prompt: Assume a WACC of 9.0%"}]
    every = json.loads(runner.invoke(app, ["regold", str(SAMPLE), "--all", "--json"]).stdout)
    assert every["recipes"] == 14 and len(every["findings"]) == 5


def test_tasks_and_show_say_which_tasks_have_a_recipe() -> None:
    runner = CliRunner()
    listed = json.loads(runner.invoke(app, ["tasks", str(SAMPLE), "--json"]).stdout)
    with_recipe = {t["name"] for t in listed["tasks"] if t["recipe"]}
    assert len(with_recipe) == 14 and "nordlys_02" in with_recipe
    assert "meridian_04" not in with_recipe
    table = runner.invoke(app, ["tasks", str(SAMPLE)])
    assert "20 tasks, 14 with a regold recipe" in table.stdout
    shown = runner.invoke(app, ["show", str(SAMPLE), "nordlys_02"])
    assert "Regold recipe " in shown.stdout and "task_5b91f2d2c9b95d5004186f0334ca1d80.toml" \
        in shown.stdout
    without = json.loads(runner.invoke(app, ["show", str(SAMPLE), "meridian_04", "--json"]).stdout)
    assert without["recipe"] is None and without["task"]["name"] == "meridian_04"
