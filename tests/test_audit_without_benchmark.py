"""`audit RUNS --out OUT` with no benchmark: tasks rebuilt from the runs, the rest skipped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from rubric_audit.audit.job import import_runs, run_audit
from rubric_audit.cli import app
from rubric_audit.report.summarise import build_summary
from rubric_audit.store.audit_store import AuditStore
from tests.conftest import SHARED_RUNS, bench_of_shared_runs

runner = CliRunner()


def _code_verdicts(out: Path) -> set[tuple[str, str, str]]:
    with AuditStore(out / "audit.db") as store:
        return set(store.verdicts("code"))


def test_runs_alone_give_the_code_checker_decisions_of_a_benchmark(tmp_path: Path) -> None:
    alone = run_audit(None, [SHARED_RUNS], tmp_path / "alone")
    with_bench = run_audit(bench_of_shared_runs(tmp_path / "bench"), [SHARED_RUNS],
                           tmp_path / "with")
    verdicts = _code_verdicts(tmp_path / "alone")
    assert verdicts == _code_verdicts(tmp_path / "with")
    decided = {v for v in verdicts if v[2] in ("pass", "fail")}
    assert len(decided) == alone.summary.code_checker.checked > 0
    assert alone.summary.code_checker == with_bench.summary.code_checker
    assert alone.summary.tasks == 14 and alone.summary.attempts == 28


def test_no_stored_prompt_holds_a_variants_addition(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    # The variant with the added cheatsheet is imported first: the order must not matter.
    import_runs([SHARED_RUNS / "grok43high-dc-rs"], db, None)
    import_runs([SHARED_RUNS / "grok43high-baseline"], db, None)
    with AuditStore(db) as store:
        tasks = {t.id: t for t in store.tasks()}
        differences = store.variant_prompts()
        findings = [f for f in store.findings() if f.check == "input_variants_disagree"]
    added = [d for d in differences if d.added]
    assert {d.variant for d in added} == {"grok43high-dc-rs"} and len(added) == 14
    for d in added:
        assert not any(s in tasks[d.task_id].prompt for s in d.added if len(s) > 20)
        baseline = json.loads((SHARED_RUNS / "grok43high-baseline" / d.task_id /
                               "initial_messages.json").read_text())[1]["content"]
        assert tasks[d.task_id].prompt == baseline
    assert {f.severity for f in findings} == {"info"} and len(findings) == 14


def test_the_command_says_what_it_read_and_what_it_skipped(tmp_path: Path) -> None:
    result = runner.invoke(app, ["audit", str(SHARED_RUNS), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert ("grok43high-baseline (archipelago): 14 attempts, 11 graded, 3 unavailable "
            "(3 x agent_status='failed'); 14 tasks, 36 criteria.") in text
    assert "Skipped (needs the benchmark's worlds): static checks that read the task's world" \
        in text
    assert "Skipped (needs the benchmark's golds)" in text
    summary = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert summary["code_checker"]["checked"] > 0
    assert {s["needs"] for s in summary["skipped"]} >= {"the benchmark's worlds", "a model"}
    report = (tmp_path / "out" / "report.md").read_text()
    assert "Audit of recorded runs" in report


def test_audit_with_nothing_to_read_is_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, ["audit", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "give run folders" in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_folder_that_is_no_run_folder_is_refused_before_writing(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = runner.invoke(app, ["audit", str(tmp_path / "empty"), "--out",
                                 str(tmp_path / "out")])
    assert result.exit_code == 2 and "not a run folder" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_a_benchmark_given_as_a_path_or_with_bench_is_the_benchmark(tmp_path: Path) -> None:
    bench = bench_of_shared_runs(tmp_path / "bench")
    for i, args in enumerate(([str(bench), "--runs", str(SHARED_RUNS)],
                              [str(SHARED_RUNS), "--bench", str(bench)])):
        out = tmp_path / f"out{i}"
        result = runner.invoke(app, ["audit", *args, "--out", str(out)])
        assert result.exit_code == 0, result.output
        assert "Skipped (needs the benchmark" not in result.stdout
        with AuditStore(out / "audit.db") as store:
            assert {t.source for t in store.tasks()} == {"benchmark"}


def test_import_says_per_source_what_it_read(tmp_path: Path) -> None:
    result = runner.invoke(app, ["import", str(SHARED_RUNS / "grok43high-dc-rs"), "--db",
                                 str(tmp_path / "audit.db")])
    assert result.exit_code == 0, result.output
    assert ("grok43high-dc-rs (archipelago): 14 attempts, 13 graded, 1 unavailable "
            "(1 x agent_status='failed'); 14 tasks, 36 criteria.") in " ".join(result.stdout.split())


def test_a_variant_is_scored_on_the_tasks_it_ran_and_no_other(tmp_path: Path) -> None:
    """A variant that ran a subset of the tasks: the tasks it never ran are not unavailable."""
    runs = tmp_path / "runs"
    shutil.copytree(SHARED_RUNS, runs)
    partial = runs / "grok43high-dc-rs"
    dropped = sorted(p for p in partial.iterdir() if p.is_dir())[:3]
    for folder in dropped:
        shutil.rmtree(folder)
    import_runs([runs], tmp_path / "audit.db", None)
    with AuditStore(tmp_path / "audit.db") as store:
        outcomes = {o.variant: o for o in build_summary(store).task_outcomes}
    whole, part = outcomes["grok43high-baseline"], outcomes["grok43high-dc-rs"]
    assert len(whole.tasks) == 14 and len(part.tasks) == 11
    assert not {p.name for p in dropped} & set(part.tasks)
    assert sum(part.counts[o] for o in ("pass", "fail", "unavailable")) == 11
    assert part.unavailable_rate == part.counts["unavailable"] / 11
