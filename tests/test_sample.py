"""The sample benchmark: rebuilt byte for byte, loads cleanly, and its runs show what DEFECTS.md says."""

from __future__ import annotations

import filecmp
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import openpyxl
import pytest
from typer.testing import CliRunner

from rubric_audit.audit.placed import SITE_KEY
from rubric_audit.audit.stages import benchmark_findings, runs_findings
from rubric_audit.cli import app
from rubric_audit.core.scores import attempt_outcome
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.load.runs import load_runs
from rubric_audit.load.world import load_task_world
from tests.conftest import ROOT, SAMPLE

DEFECT_ROW = re.compile(r"^\| (task_\w+) \| (\w+) \| (sound|defective) \| (.+?) \| (.+?) \| (.+?) \|$")


@pytest.fixture(scope="module")
def bench():
    return load_benchmark(SAMPLE)


@pytest.fixture(scope="module")
def runs():
    return load_runs([SAMPLE / "runs"])


@pytest.fixture(scope="module")
def defects() -> dict[str, dict[str, str]]:
    rows = {}
    for line in (SAMPLE / "DEFECTS.md").read_text().splitlines():
        match = DEFECT_ROW.match(line)
        if match:
            task_id, name, kind, planted, checks, shown = match.groups()
            rows[task_id] = {"name": name, "kind": kind, "planted": planted, "checks": checks,
                             "shown": shown}
    return rows


def _tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_committed_sample_equals_a_fresh_build(tmp_path: Path) -> None:
    out = tmp_path / "sample"
    subprocess.run([sys.executable, str(ROOT / "rubrics" / "build_sample.py"), "--out", str(out)],
                   check=True, capture_output=True)
    assert _tree(out) == _tree(SAMPLE)
    _, mismatch, errors = filecmp.cmpfiles(SAMPLE, out, _tree(SAMPLE), shallow=False)
    assert (mismatch, errors) == ([], [])


def test_sample_loads_with_no_input_findings(bench, runs) -> None:
    assert benchmark_findings(bench) == []
    assert runs_findings(runs, bench) == []


def test_three_worlds_one_per_domain_with_real_files(bench) -> None:
    assert sorted(w.domain for w in bench.worlds) == [
        "Investment Banking", "Law", "Management Consulting"]
    for world in bench.worlds:
        task = next(t for t in bench.tasks if t.world_id == world.id)
        contents = load_task_world(bench, task)
        suffixes = {Path(f.path).suffix for f in contents.files}
        assert {".md", ".xlsx", ".docx"} <= suffixes, world.id
        assert any(m.in_reply_to for m in contents.mail), f"{world.id}: no reply thread"
        assert contents.events and contents.chat and all(s.messages for s in contents.chat)
        assert all(f.text for f in contents.files), "every file has readable text"


def test_workbooks_carry_live_formulas() -> None:
    books = list((SAMPLE / "worlds").rglob("*.xlsx"))
    assert books
    for path in books:
        book = openpyxl.load_workbook(path)
        formulas = [c.value for s in book.worksheets for row in s.iter_rows() for c in row
                    if isinstance(c.value, str) and c.value.startswith("=")]
        assert formulas, path.name
    dcf = openpyxl.load_workbook(SAMPLE / "worlds/world_halvorsen_lund/filesystem/"
                                 "Project_Nordlys/Nordlys_Model.xlsx")["DCF"]
    assert any("Assumptions!" in str(c.value) for row in dcf.iter_rows() for c in row)
    assert any(str(c.value).startswith("=IF(") for row in dcf.iter_rows() for c in row)


def test_tasks_are_complete(bench) -> None:
    assert len(bench.tasks) >= 15
    for task in bench.tasks:
        assert task.gold is not None and task.gold.text.strip(), task.name
        assert task.criteria and all(c.explanation.strip() for c in task.criteria), task.name
    assert any(t.overlay for t in bench.tasks), "at least one task has a task_files overlay"


def test_defects_md_agrees_with_the_tasks(bench, defects) -> None:
    assert set(defects) == {t.id for t in bench.tasks}
    assert all(defects[t.id]["name"] == t.name for t in bench.tasks)
    kinds = [row["kind"] for row in defects.values()]
    assert kinds.count("sound") >= kinds.count("defective") >= 10
    for row in defects.values():
        named = re.findall(r"`(\w+)`", row["checks"])
        assert bool(named) == (row["kind"] == "defective"), row["name"]


def _outcomes(bench, runs) -> dict[str, dict[str, list[str]]]:
    """task id -> variant -> outcome per attempt (unavailable ones as 'unavailable')."""
    grades = defaultdict(list)
    for g in runs.grades:
        grades[g.attempt_id].append(g)
    table: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for a in sorted(runs.attempts, key=lambda a: a.index):
        task = bench.task(a.task_id)
        outcome = attempt_outcome(task, grades[a.id]) if a.state == "graded" else "unavailable"
        table[a.task_id][a.variant].append(outcome)
    return table


def test_runs_are_two_models_two_attempts_each(bench, runs) -> None:
    assert {a.model for a in runs.attempts} == {"fictional/atlas-1", "fictional/cirrus-2"}
    for per_variant in _outcomes(bench, runs).values():
        assert sorted(per_variant) == ["atlas-1", "cirrus-2"]
        assert all(len(attempts) == 2 for attempts in per_variant.values())
    unavailable = [a for a in runs.attempts if a.state == "unavailable"]
    assert len(unavailable) == 1 and unavailable[0].unavailable_reason
    assert "hand-written illustrations" in (SAMPLE / "runs" / "README.md").read_text()


def test_runs_contain_the_situations_an_audit_must_separate(bench, runs, defects) -> None:
    outcomes = _outcomes(bench, runs)
    all_fail = {t for t, v in outcomes.items()
                if all(o == "fail" for attempts in v.values() for o in attempts)}
    assert {defects[t]["kind"] for t in all_fail} == {"sound", "defective"}
    assert sum(defects[t]["kind"] == "defective" for t in all_fail) >= 3
    assert any(o == "pass" for v in outcomes.values() for a in v.values() for o in a)


def _verdicts(runs, task_name: str, bench) -> list[tuple[str, str | None, str]]:
    task = bench.task(task_name)
    by_attempt = {a.id: a for a in runs.attempts if a.task_id == task.id}
    return [(by_attempt[g.attempt_id].variant, by_attempt[g.attempt_id].answer, g.verdict)
            for g in runs.grades if g.attempt_id in by_attempt]


def test_a_hedged_answer_is_credited(bench, runs) -> None:
    hedged = [(answer, verdict) for _, answer, verdict in _verdicts(runs, "nordlys_07", bench)
              if re.search(r"\d+% to \d+%", answer)]
    assert hedged and all(verdict == "pass" for _, verdict in hedged)


def test_an_answer_inside_the_stated_tolerance_is_failed(bench, runs) -> None:
    task = bench.task("kestrel_05")
    low, high = map(float, re.search(r"accept ([\d.]+)% to ([\d.]+)%",
                                     task.criteria[0].text).groups())
    inside_but_failed = [
        answer for _, answer, verdict in _verdicts(runs, "kestrel_05", bench)
        if verdict == "fail" and low <= float(re.search(r"([\d.]+)%", answer).group(1)) <= high]
    assert inside_but_failed


def test_tasks_command_lists_the_sample() -> None:
    result = CliRunner().invoke(app, ["tasks", str(SAMPLE)])
    assert result.exit_code == 0 and "20 tasks" in result.stdout
    assert "kestrel_07" in result.stdout


def test_committed_report_is_what_the_main_job_writes(tmp_path: Path) -> None:
    out = tmp_path / "sample"
    result = CliRunner().invoke(app, ["audit", str(SAMPLE), "--out", str(out)])
    assert result.exit_code == 0, result.output
    committed = ROOT / "reports" / "sample"
    for name in ("audit.json", "findings.jsonl", "report.md", "report.html"):
        assert (out / name).read_text() == (committed / name).read_text(), name
    pages = [name for name in _tree(out / "site") if name != SITE_KEY]  # the key: not committed
    assert pages == [name for name in _tree(committed / "site") if name != SITE_KEY]
    for name in pages:
        assert (out / "site" / name).read_text() == (committed / "site" / name).read_text(), name
