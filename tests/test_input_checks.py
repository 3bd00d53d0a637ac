"""The input_* checks: each fires on its problem and stays quiet on sound input."""

from __future__ import annotations

from pathlib import Path

from rubric_audit.audit import benchmark_findings, runs_findings
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.load.runs import load_runs
from tests.conftest import make_benchmark, make_task, make_variant


def _checks(root: Path) -> list[tuple[str, str | None, str | None]]:
    return [(f.check, f.task_id, f.criterion_id) for f in benchmark_findings(load_benchmark(root))]


def test_sound_benchmark_has_no_findings(bench: Path) -> None:
    assert _checks(bench) == []


def test_unknown_world(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b", tasks=[make_task(world_id="world_zzz")])
    assert _checks(root) == [("input_unknown_world", "task_1", None)]


def test_task_without_criteria(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b", tasks=[make_task(rubric=[])])
    assert _checks(root) == [("input_task_without_criteria", "task_1", None)]


def test_empty_criterion_text(tmp_path: Path) -> None:
    task = make_task()
    task["rubric"][1]["criteria"] = "  "
    assert _checks(make_benchmark(tmp_path / "b", tasks=[task])) == [
        ("input_empty_criterion", "task_1", "task_1_c2")]


def test_declared_task_files_missing(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b", tasks=[make_task(task_input_files=True)])
    assert _checks(root) == [("input_missing_task_files", "task_1", None)]


def test_world_without_files(tmp_path: Path) -> None:
    import shutil

    root = make_benchmark(tmp_path / "b")
    shutil.rmtree(root / "worlds")
    assert _checks(root) == [("input_world_files_missing", "task_1", None)]


def test_run_for_unknown_task_and_grade_mismatch(bench: Path, tmp_path: Path) -> None:
    task = make_task()
    stranger = make_task("task_stranger")
    make_variant(tmp_path / "runs", "v1", "m/one", [
        (task, 1, {"task_1_c1": "pass", "bogus_id": "fail"}),
        (stranger, 1, {"task_stranger_c1": "pass", "task_stranger_c2": "pass"}),
    ])
    findings = runs_findings(load_runs([tmp_path / "runs"]), load_benchmark(bench))
    by_check = {f.check: f for f in findings}
    assert set(by_check) == {"input_unknown_task", "input_grade_mismatch"}
    assert by_check["input_unknown_task"].task_id == "task_stranger"
    assert by_check["input_grade_mismatch"].evidence == {
        "attempt": "v1/task_1/1", "unknown_verifier_ids": ["bogus_id"],
        "criteria_without_grade": ["task_1_c2"]}


def test_matching_grades_give_no_finding(bench: Path, tmp_path: Path) -> None:
    make_variant(tmp_path / "runs", "v1", "m/one",
                 [(make_task(), 1, {"task_1_c1": "pass", "task_1_c2": "fail"})])
    assert runs_findings(load_runs([tmp_path / "runs"]), load_benchmark(bench)) == []
