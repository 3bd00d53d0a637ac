"""The fingerprint of an audit's inputs: a second offline audit of unchanged inputs is reused."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from rubric_audit.audit.inputs import inputs_fingerprint
from rubric_audit.audit.job import AuditOptions, import_runs, run_audit
from tests.conftest import ROOT, SAMPLE


def lint_findings(out: Path) -> int:
    return sum(1 for line in (out / "findings.jsonl").read_text().splitlines()
               if json.loads(line)["check"] == "criterion_restates_premise")


def test_unchanged_inputs_rebuild_only_the_reports(tmp_path: Path) -> None:
    bench, out = tmp_path / "sample", tmp_path / "out"
    shutil.copytree(SAMPLE, bench)
    first = run_audit(bench, None, out)
    assert first.imported.added > 0 and lint_findings(out) > 0
    with sqlite3.connect(out / "audit.db") as db:  # a trace that only a full audit would undo
        db.execute("DELETE FROM findings WHERE stage = 'lints'")
    (out / "report.md").unlink()
    second = run_audit(bench, None, out)
    assert (out / "report.md").is_file() and lint_findings(out) == 0
    assert second.reused and not first.reused and second.imported.added == 0
    assert second.imported.unchanged == first.imported.added + first.imported.unchanged
    grades = next((bench / "runs").rglob("grades.json"))
    grades.write_text(grades.read_text() + " ")
    assert not run_audit(bench, None, out).reused
    assert lint_findings(out) == 0, "a run file changed, not the benchmark its lints read"


HEAVY = ("numpy", "pandas", "scipy", "pint", "litellm", "rubric_audit.checks.code_grade")
AUDIT_IN_PROCESS = """
import json, sys
from rubric_audit.cli import app
try:
    app(["audit", sys.argv[1], "--out", sys.argv[2]])
except SystemExit as done:
    assert not done.code, done.code
print(json.dumps(sorted(m for m in sys.modules if m in sys.argv[3:])))
"""


def test_an_audit_of_unchanged_inputs_imports_neither_the_checks_nor_numpy(
        tmp_path: Path) -> None:
    """The second audit of an archive is start-up and a walk of its inputs: reading the stored
    summary back must not import what builds it. Its reports changed since (a review) are
    written again, and then the builders are imported."""
    bench, out = tmp_path / "sample", tmp_path / "out"
    shutil.copytree(SAMPLE, bench)

    def audit() -> tuple[str, list[str]]:
        done = subprocess.run([sys.executable, "-c", AUDIT_IN_PROCESS, str(bench), str(out),
                               *HEAVY], capture_output=True, text=True, cwd=ROOT, check=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        *said, imported = done.stdout.splitlines()
        return "\n".join(said), json.loads(imported)

    said, imported = audit()
    assert not said.startswith("Nothing read has changed")
    assert "numpy" in imported and "rubric_audit.checks.code_grade" in imported
    said, imported = audit()
    assert said.startswith("Nothing read has changed") and imported == []
    (out / "report.md").unlink()
    said, imported = audit()
    assert said.startswith("Nothing read has changed") and "numpy" in imported
    assert (out / "report.md").is_file()


def test_an_import_or_other_options_mean_an_audit_not_reused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_audit(SAMPLE, None, out)
    import_runs([SAMPLE / "runs"], out / "audit.db", SAMPLE)
    assert not run_audit(SAMPLE, None, out).reused
    result = run_audit(SAMPLE, None, out, AuditOptions(unavailable_threshold=0.4))
    assert not result.reused and result.summary.screen.threshold == 0.4
    assert json.loads((out / "audit.json").read_text())["screen"]["threshold"] == 0.4


def test_touching_a_file_without_changing_it_is_a_change(tmp_path: Path) -> None:
    bench, out = tmp_path / "sample", tmp_path / "out"
    shutil.copytree(SAMPLE, bench)
    run_audit(bench, None, out)
    with sqlite3.connect(out / "audit.db") as db:
        db.execute("DELETE FROM findings WHERE stage = 'lints'")
    task_file = bench / "tasks_and_rubrics.json"
    stat = task_file.stat()
    os.utime(task_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    run_audit(bench, None, out)
    assert lint_findings(out) > 0


def test_fingerprint_sees_link_targets_and_ignores_pycache(tmp_path: Path) -> None:
    runs, outside, out = tmp_path / "runs", tmp_path / "outside.json", tmp_path / "out"
    runs.mkdir()
    outside.write_text("{}")
    (runs / "grades.json").symlink_to(outside)
    before = inputs_fingerprint([runs], {}, out)
    (runs / "__pycache__").mkdir()
    assert inputs_fingerprint([runs], {}, out) == before
    outside.write_text('{"a": 1}')
    assert inputs_fingerprint([runs], {}, out) != before


def test_each_variant_folder_has_a_digest_of_its_own(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """One walk of the runs gives each variant folder's digest (a Merkle tree: a folder's covers
    its subfolders'), under any spelling of its path (the audit names a variant folder as it was
    given: relative, or through a link), so the audit stats each file once; a file touched in one
    variant changes that variant's and no other's."""
    from rubric_audit.audit.inputs import TreeDigests

    runs = tmp_path / "runs"
    shutil.copytree(SAMPLE / "runs", runs)
    (tmp_path / "linked").symlink_to(runs)
    walked = TreeDigests()
    whole = walked.digest(runs)
    before = {v: walked.digest(runs / v) for v in ("atlas-1", "cirrus-2")}
    assert TreeDigests().digest(runs / "atlas-1") == before["atlas-1"]
    trajectory = next((runs / "cirrus-2").rglob("trajectory.json"))
    stat = trajectory.stat()
    os.utime(trajectory, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000))
    monkeypatch.chdir(tmp_path)
    assert walked.digest(Path("runs/cirrus-2")) == before["cirrus-2"], "walked again"
    assert walked.digest(Path("linked") / "cirrus-2") == before["cirrus-2"], "walked again"
    again = TreeDigests()
    assert again.digest(runs) != whole
    assert again.digest(runs / "atlas-1") == before["atlas-1"]
    assert again.digest(Path("runs/cirrus-2")) != before["cirrus-2"]
