"""Next actions: tasks ranked by their strongest finding (severity, then the measured precision
of its check), each with the fix its evidence implies; on the sample, the planted defects."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rubric_audit.checks.precision import TRUSTED, load_unseen
from rubric_audit.cli import app
from rubric_audit.core.model import Criterion, Finding, Task
from rubric_audit.report.actions import fix, strongest, tasks_to_fix
from tests.conftest import SAMPLE
from tests.test_sample import DEFECT_ROW

JUDGE = load_unseen()["judge_failed_value_within_tolerance"]
JUDGE_FAILED_MEASURED = f"{JUDGE.precision:.1%} of {JUDGE.fired} findings on unseen cases"
TASK = Task(id="t1", name="alpha", world_id="w", prompt="p",
            criteria=[Criterion(id="c_a", text="States A"), Criterion(id="c_b", text="States B")])


def finding(check: str, severity: str = "error", task_id: str = "t1",
            criterion_id: str | None = "c_b", **evidence: object) -> Finding:
    return Finding(task_id=task_id, criterion_id=criterion_id, check=check,
                   severity=severity, message=f"{check} fired", evidence=evidence)


def measured(precision: float) -> dict[str, float | int]:
    return {"unseen_precision": precision, "unseen_findings": 50, "unseen_cases": 200}


def test_strongest_is_by_severity_then_measured_precision_then_measured_at_all() -> None:
    unmeasured_error = finding("criterion_duplicated")
    measured_error = finding("criterion_restates_premise", confidence=measured(0.95))
    better_warning = finding("gold_contradicts_criterion", "warning", confidence=measured(0.99))
    worse_warning = finding("criterion_restates_premise", "warning", confidence=measured(0.91))
    info = finding("judge_failed_value_within_tolerance", "info", confidence=measured(0.49))
    order = [measured_error, unmeasured_error, better_warning, worse_warning, info]
    for shuffled in (order, order[::-1], order[2:] + order[:2]):
        assert strongest(shuffled) is measured_error
    assert strongest([info, worse_warning, better_warning]) is better_warning
    assert strongest([info]) is info, "an info finding where that is all there is"
    assert strongest([]) is None


def test_tasks_to_fix_ranks_tasks_and_leaves_out_findings_that_ask_for_no_fix() -> None:
    tasks = {t: TASK.model_copy(update={"id": t, "name": name})
             for t, name in (("t1", "alpha"), ("t2", "beta"), ("t3", "gamma"), ("t4", "delta"),
                             ("t5", "eps"))}
    names = {t: task.name for t, task in tasks.items()}
    found = [
        finding("criterion_restates_premise", "warning", "t1", confidence=measured(0.94)),
        finding("prompt_names_missing_file", "error", "t2", None, file="x.pdf"),
        finding("criterion_duplicated", "warning", "t2"),
        finding("criterion_terms_absent_from_world", "error", "t3", absent_terms=["carbon"]),
        finding("judge_failed_value_within_tolerance", "info", "t4",
                confidence=measured(0.49)),
        finding("task_depends_on_messages", "info", "t5", None),
        finding("answer_value_unsupported", "info", "t5", None)]
    ranked = tasks_to_fix(found, tasks, names)
    assert [r.task_id for r in ranked] == ["t2", "t3", "t1", "t4"], \
        "errors (two checks before one), then the warning, then info; t5 asks for nothing"
    assert (ranked[0].findings, ranked[0].checks) == (2, 2)
    assert ranked[0].fix == "add x.pdf to the world or the task's files, or drop it from the " \
                            "prompt"
    assert ranked[1].fix.startswith("put what C2 grades (carbon) where the agent can read it")
    assert ranked[3].fix.startswith("re-grade C2: the answer's value is within its tolerance")


def test_the_fix_follows_the_evidence() -> None:
    both = finding("gold_recompute_mismatch", value=44.21, criterion_matches=False,
                   gold_matches=False)
    gold = finding("gold_recompute_mismatch", value=268.0, criterion_matches=True,
                   gold_matches=False)
    assert fix(both, TASK) == "set C2 and the gold to 44.21, what the workbook gives with the " \
                              "task's inputs"
    assert fix(gold, TASK) == "set the gold to 268, what the workbook gives with the task's " \
                              "inputs"
    assert fix(finding("input_unknown_world"), TASK) == "correct the input the finding names"
    assert fix(finding("task_depends_on_messages", "info"), TASK) is None
    assert fix(finding("criterion_duplicated", criterion_id="gone"), TASK) == \
        "drop the criterion: another criterion has its text"


def _defects() -> dict[str, tuple[str, str]]:
    """Task name -> (sound or defective, the checks expected to catch it), from DEFECTS.md."""
    rows = {}
    for line in (SAMPLE / "DEFECTS.md").read_text().splitlines():
        if match := DEFECT_ROW.match(line):
            _, name, kind, _, checks, _ = match.groups()
            rows[name] = (kind, checks)
    return rows


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("actions") / "out"
    assert CliRunner().invoke(app, ["audit", str(SAMPLE), "--out", str(out)]).exit_code == 0
    return (Path(out) / "report.md").read_text()


def test_next_actions_open_the_report_and_name_the_planted_defects(sample_report: str) -> None:
    """The first section after the title is Next actions; the tasks it asks to fix at error or
    warning are exactly the planted defects an offline audit is expected to catch (DEFECTS.md:
    an expected check that needs no model), each with a fix; kestrel_05's planted judge error,
    an info finding of a check measured under 90%, is there too, below them, as a re-grade."""
    assert re.findall(r"^## (.*)$", sample_report, re.M)[0] == "Next actions"
    section = sample_report.split("## Next actions", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in section.splitlines()
            if re.match(r"^\| \d+ \|", line)]
    ranked = [(cells[1], cells[2]) for cells in rows]
    defects = _defects()
    expected = {name for name, (kind, checks) in defects.items() if kind == "defective"
                and re.search(r"`\w+`(?! \(model\))", checks)}
    flagged = [name for name, severity in ranked if severity in ("error", "warning")]
    assert set(flagged) <= expected and len(flagged) == len(set(flagged)), "no false alarm"
    for cells in rows:  # a planted defect below warning: its check is trusted under 90%
        if cells[1] in expected - set(flagged):
            assert cells[2] == "info" and re.search(r"(\d+(?:\.\d)?)% of \d+ findings on unseen",
                                                    cells[5]), cells
            assert float(re.search(r"(\d+(?:\.\d)?)%", cells[5]).group(1)) < 100 * TRUSTED
    assert expected <= {name for name, _ in ranked}, "every planted defect is named"
    assert ranked[:len(flagged)] == [(n, s) for n, s in ranked if s != "info"], \
        "errors and warnings before info"
    assert ("kestrel_05", "info") in ranked
    assert all(cells[4].strip() for cells in rows), "each with its fix"
    kestrel_05 = next(cells for cells in rows if cells[1] == "kestrel_05")
    assert kestrel_05[4].startswith("re-grade C1") and JUDGE_FAILED_MEASURED in kestrel_05[5]
    assert "- Failures left to review: 7 of the 7 tasks every model failed" in section
    assert "- Not run: model-assisted checks" in section and "`--lint-model MODEL`" in section
