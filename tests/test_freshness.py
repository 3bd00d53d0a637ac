"""An audit of an archive that grew or changed reads and checks what changed, and gives the audit
of the whole: a variant added is read alone, an unchanged variant folder is not read, a changed
attempt is the one checked again, and the benchmark's checks run when the benchmark changed."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from rubric_audit.audit.job import run_audit
from rubric_audit.core.errors import InputError
from rubric_audit.store.audit_store import AuditStore
from tests.conftest import SAMPLE

REPORTS = ("audit.json", "findings.jsonl", "report.md", "report.html")


def _bench(tmp_path: Path) -> Path:
    bench = tmp_path / "sample"
    shutil.copytree(SAMPLE, bench)
    return bench


def _code_graded(out: Path) -> set[str]:
    """The variants of the attempts the code checker has grades of."""
    with sqlite3.connect(out / "audit.db") as db:
        return {r[0].split("/")[0] for r in db.execute(
            "SELECT DISTINCT attempt_id FROM grades WHERE grader = 'code'")}


def _edit_in_place(path: Path, old: bytes, new: bytes) -> None:
    """Change a file's bytes keeping its size and modification time: unseen by a fingerprint
    of sizes and times, seen by anything that reads the file."""
    assert len(old) == len(new)
    stat = path.stat()
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new, 1))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_a_variant_added_to_an_audited_archive_gives_the_audit_of_the_whole(
        tmp_path: Path) -> None:
    bench = _bench(tmp_path)
    run_audit(bench, None, tmp_path / "whole")
    aside = tmp_path / "cirrus-2"
    (bench / "runs" / "cirrus-2").rename(aside)
    first = run_audit(bench, None, tmp_path / "grown")
    aside.rename(bench / "runs" / "cirrus-2")
    grown = run_audit(bench, None, tmp_path / "grown")
    assert not grown.reused
    assert grown.imported.unchanged == first.imported.added > 0
    assert grown.imported.added == grown.summary.attempts - first.summary.attempts > 0
    assert [s.path for s in grown.imported.sources] == [str(bench / "runs" / "atlas-1"),
                                                        str(bench / "runs" / "cirrus-2")]
    for name in REPORTS:
        assert (tmp_path / "grown" / name).read_text() == (tmp_path / "whole" / name).read_text()


def test_an_unchanged_variant_is_neither_read_nor_checked_again(tmp_path: Path) -> None:
    bench, out = _bench(tmp_path), tmp_path / "out"
    aside = tmp_path / "cirrus-2"
    (bench / "runs" / "cirrus-2").rename(aside)
    first = run_audit(bench, None, out)
    assert _code_graded(out) == {"atlas-1"}
    # read again, this recording would differ from the stored one: a conflict
    grades = sorted((bench / "runs" / "atlas-1").rglob("grades.json"))[0]
    _edit_in_place(grades, b'"pass"', b'"fail"')
    with sqlite3.connect(out / "audit.db") as db:  # checked again, these would come back
        db.execute("DELETE FROM grades WHERE grader = 'code'")
    aside.rename(bench / "runs" / "cirrus-2")
    result = run_audit(bench, None, out)
    assert result.imported.conflicts == 0
    assert result.imported.unchanged == first.imported.added
    assert _code_graded(out) == {"cirrus-2"}


def test_an_attempt_graded_since_is_checked_again_and_no_other(tmp_path: Path) -> None:
    bench, out = _bench(tmp_path), tmp_path / "out"
    run_audit(bench, None, out)
    folder = sorted((bench / "runs" / "atlas-1").rglob("verifiers.json"))[0].parent
    verifiers = json.loads((folder / "verifiers.json").read_text())
    (folder / "grades").mkdir()
    (folder / "grades" / "judge.json").write_text(json.dumps({
        "grading_run_status": "completed", "judge_model": "fake/judge",
        "verifier_results": [{"verifier_id": v["verifier_id"], "score": 0.0,
                              "verifier_result_values": {"judge_grade": "fail",
                                                         "grade_rationale": "no"}}
                             for v in verifiers]}))
    attempt = f"atlas-1/{folder.parent.name}/{folder.name.split('_')[1]}"
    with sqlite3.connect(out / "audit.db") as db:
        db.execute("DELETE FROM grades WHERE grader = 'code'")
    result = run_audit(bench, None, out)
    assert not result.reused and result.imported.added == 0
    assert "judge:fake/judge" in {s.grader for s in result.summary.scores}
    with sqlite3.connect(out / "audit.db") as db:
        assert {r[0] for r in db.execute("SELECT attempt_id FROM grades WHERE grader = 'code'"
                                         )} == {attempt}
        assert db.execute("SELECT count(*) FROM unchecked").fetchone() == (0,)


def _stages_found(out: Path) -> set[str]:
    with sqlite3.connect(out / "audit.db") as db:
        found = {r[0] for r in db.execute("SELECT DISTINCT stage FROM findings")}
        db.execute("DELETE FROM findings WHERE stage IN ('lints', 'code')")
    return found


def test_a_changed_benchmark_runs_the_checks_that_read_what_changed(tmp_path: Path) -> None:
    """A benchmark file changed: its static checks run again, not the checks of its attempts; a
    task changed is another version of the benchmark, refused into the same audit (#31)."""
    bench, out = _bench(tmp_path), tmp_path / "out"
    run_audit(bench, None, out)
    _stages_found(out)  # a trace that only checks run again undo
    worlds = bench / "world_descriptions.json"
    worlds.write_text(worlds.read_text() + "\n")
    run_audit(bench, None, out)
    assert {"lints", "code"} & _stages_found(out) == {"lints"}
    task_file = bench / "tasks_and_rubrics.json"
    tasks = json.loads(task_file.read_text())
    tasks[0]["task_name"] += " (renamed)"
    task_file.write_text(json.dumps(tasks))
    with pytest.raises(InputError, match="scores of two versions are never mixed"):
        run_audit(bench, None, out)


def test_reports_that_show_the_store_are_not_written_again(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_audit(SAMPLE, None, out)
    written = {name: (out / name).stat().st_mtime_ns for name in REPORTS}
    assert run_audit(SAMPLE, None, out).reused
    assert {name: (out / name).stat().st_mtime_ns for name in REPORTS} == written
    report = (out / "report.md").read_text()
    (out / "report.md").write_text("edited by hand")
    assert run_audit(SAMPLE, None, out).reused
    assert (out / "report.md").read_text() == report
    with AuditStore(out / "audit.db") as store:  # a review since: the reports show it
        from rubric_audit.core.model import Review
        task = store.tasks()[0]
        with store.transaction():
            store.append_review(Review(reviewer="r", created_at="2026-12-01T00:00:00Z",
                                       task_id=task.id, label="defective_task"))
    result = run_audit(SAMPLE, None, out)
    assert result.reused and result.summary.review_labels == {task.id: "defective_task"}
    assert (out / "report.md").read_text() != report


def test_a_variant_added_to_runs_audited_without_a_benchmark_gives_the_audit_of_the_whole(
        tmp_path: Path) -> None:
    """Without a benchmark the tasks are shared over the variants: a variant added can change
    them, and then every attempt's checks run again."""
    runs = tmp_path / "runs"
    shutil.copytree(SAMPLE / "runs", runs)
    run_audit(None, [runs], tmp_path / "whole")
    aside = tmp_path / "cirrus-2"
    (runs / "cirrus-2").rename(aside)
    run_audit(None, [runs], tmp_path / "grown")
    aside.rename(runs / "cirrus-2")
    assert not run_audit(None, [runs], tmp_path / "grown").reused
    for name in REPORTS:
        assert (tmp_path / "grown" / name).read_text() == (tmp_path / "whole" / name).read_text()
