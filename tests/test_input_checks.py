"""The input_* checks: each fires on its problem and stays quiet on sound input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rubric_audit.audit.job import run_audit
from rubric_audit.audit.stages import benchmark_findings, import_into, runs_findings
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.load.runs import load_runs
from rubric_audit.load.sources import load_sources
from rubric_audit.store.audit_store import AuditStore
from tests.conftest import (
    PACKAGE_TASK,
    make_attempt,
    make_benchmark,
    make_task,
    make_task_package,
    make_variant,
    write_json,
)


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


def test_a_file_gold_without_its_files(tmp_path: Path) -> None:
    """A gold of type file with nothing under gold_files/<task_id>/ is said; with a file there,
    nothing is."""
    root = make_benchmark(tmp_path / "b", tasks=[make_task(gold_response_type="file")])
    assert _checks(root) == [("input_missing_gold_file", "task_1", None)]
    (root / "gold_files" / "task_1").mkdir(parents=True)
    (root / "gold_files" / "task_1" / "answer.md").write_text("The budget is 1.2m.")
    assert _checks(root) == []


def test_world_without_files(tmp_path: Path) -> None:
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


@pytest.mark.parametrize("layout", ["apex", "task-package"])
def test_a_world_without_files_is_said_and_the_checks_that_read_one_skip_it(
        tmp_path: Path, layout: str) -> None:
    """A prompt naming a file the absent world would hold is no finding: what a check cannot
    see is not missing. The audit says which checks it skipped and why."""
    prompt = "Update budget_model.xlsx with the revised budget."
    if layout == "apex":
        root = make_benchmark(tmp_path / "b", tasks=[make_task(prompt=prompt)])
        shutil.rmtree(root / "worlds")
    else:
        root = make_task_package(tmp_path / "b", with_world_files=False)
        write_json(root / "tasks" / f"{PACKAGE_TASK}.json", {"prompt": prompt, "extra": {
            "world_id": "world_a", "task_id": "task_1"}})
    result = run_audit(root, None, tmp_path / "out")
    checks = _audited(tmp_path / "out")
    assert "prompt_names_missing_file" not in checks
    assert checks.count("input_world_files_missing") == len(load_benchmark(root).tasks)
    [skipped] = [s for s in result.summary.skipped if s["needs"] == "the world's files"]
    assert "prompt_names_missing_file" in skipped["step"]


def test_a_prompt_naming_a_file_its_world_lacks_is_still_found(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b", tasks=[make_task(
        prompt="Update budget_model.xlsx with the revised budget.")])
    result = run_audit(root, None, tmp_path / "out")
    assert "prompt_names_missing_file" in _audited(tmp_path / "out")
    assert not [s for s in result.summary.skipped if s["needs"] == "the world's files"]


def _audited(out: Path) -> list[str]:
    return [json.loads(line)["check"] for line in (out / "findings.jsonl").read_text().splitlines()]


def _import(tmp_path: Path, *paths: Path) -> tuple[list, list[str]]:
    """Import `paths` into a new store: the findings, and the attempt ids stored."""
    tmp_path.mkdir(exist_ok=True)
    with AuditStore(tmp_path / "audit.db") as store:
        import_into(store, load_sources(list(paths)), None)
        return store.findings(), sorted(a.id for a in store.attempts())


def test_two_recordings_of_one_attempt_id_are_a_finding_and_neither_is_stored(
        tmp_path: Path) -> None:
    """attempt_2 and attempt_02 are both attempt 2: the second overwrote the first's grades in
    silence. Both are named and neither stored; the task's other attempt is."""
    task = make_task()
    variant = make_variant(tmp_path / "runs", "v1", "m/one", [
        (task, 1, {"task_1_c1": "pass", "task_1_c2": "pass"}),
        (task, 2, {"task_1_c1": "pass", "task_1_c2": "pass"})])
    make_attempt(variant / "task_1" / "attempt_02", task, {"task_1_c1": "fail", "task_1_c2": "fail"})
    findings, stored = _import(tmp_path, variant)
    [finding] = [f for f in findings if f.check == "input_id_collision"]
    assert finding.evidence["attempt"] == "v1/task_1/2"
    assert sorted(Path(s).name for s in finding.evidence["sources"]) == ["attempt_02", "attempt_2"]
    assert stored == ["v1/task_1/1"]


def test_two_variant_folders_of_one_name_collide_and_one_folder_twice_does_not(
        tmp_path: Path) -> None:
    task = make_task()
    first = make_variant(tmp_path / "a", "v1", "m/one", [(task, 1, {"task_1_c1": "pass"})])
    other = make_variant(tmp_path / "b", "v1", "m/one", [(task, 1, {"task_1_c1": "fail"})])
    findings, stored = _import(tmp_path / "twice", first, first)
    assert findings == [] and stored == ["v1/task_1/1"]
    findings, stored = _import(tmp_path / "both", first, other)
    assert [f.evidence["sources"] for f in findings] == [[str(first / "task_1"),
                                                           str(other / "task_1")]]
    assert stored == []


def test_a_text_too_long_to_read_is_said_once_and_every_number_reader_abstains(
        tmp_path: Path) -> None:
    """Past `MAX_READ_CHARS` the code checker, answer provenance and the static checks that read
    numbers abstain (a 3 MB prompt cost a minute of audit), and the audit says which text; a
    text of exactly the limit is still read."""
    from rubric_audit.checks.code_grade import grade_numeric
    from rubric_audit.checks.numbers import MAX_READ_CHARS
    from rubric_audit.checks.provenance import answer_provenance
    from rubric_audit.core.model import Trajectory

    def padded(text: str, length: int) -> str:
        filler = " Revenue grew 4.2% to NOK 1,240.5m against a plan of NOK 1,180.0m."
        return (text + filler * (length // len(filler) + 1))[:length]

    criterion = "States the revised budget is NOK 1.2m"
    read = grade_numeric(criterion, padded("The revised budget is NOK 1.2m.", MAX_READ_CHARS))
    assert read.verdict == "pass"
    unread_answer = padded("The revised budget is NOK 1.2m.", MAX_READ_CHARS + 1)
    abstained = grade_numeric(criterion, unread_answer)
    assert abstained.verdict == "not_applicable"
    assert f"{MAX_READ_CHARS + 1:,} characters" in abstained.reason
    assert grade_numeric(criterion, "NOK 1.2m", padded("", MAX_READ_CHARS + 1)).verdict \
        == "not_applicable"
    assert answer_provenance(unread_answer, Trajectory(format="archipelago", steps=[])) == []

    huge_prompt = padded("What is the revised budget? Our prior budget was NOK 1.2m.",
                         MAX_READ_CHARS + 1)
    task = make_task(prompt=huge_prompt)
    task["rubric"][0]["criteria"] = "States the prior budget was NOK 1.2m"  # restates the prompt
    root = make_benchmark(tmp_path / "b", tasks=[task, make_task("task_2")])
    make_variant(root / "runs", "v1", "m/one", [(task, 1, {"task_1_c1": "pass"})])
    make_attempt(root / "runs" / "v1" / "task_2", make_task("task_2"),
                 {"task_2_c1": "pass", "task_2_c2": "pass"}, answer=unread_answer)
    run_audit(root, None, tmp_path / "out")
    findings = [json.loads(line) for line in (tmp_path / "out" / "findings.jsonl").read_text()
                .splitlines()]
    too_long = sorted((f["task_id"], f["evidence"].get("attempt")) for f in findings
                      if f["check"] == "input_text_too_long_to_read")
    assert too_long == [("task_1", None), ("task_2", "v1/task_2/1")]
    assert not [f for f in findings if f["task_id"] == "task_1"
                and f["check"] in ("criterion_restates_premise", "gold_contradicts_criterion",
                                   "numeric_criterion_without_tolerance")]
    assert not [f for f in findings if f["check"] == "answer_value_unsupported"
                and f["evidence"].get("attempt_id") == "v1/task_2/1"]
