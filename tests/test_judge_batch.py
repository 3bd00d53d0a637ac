"""Grading through a provider's batch API (litellm's files and batches) against the fake server's
/v1/files and /v1/batches: the same grade files as one call at a time, a partly failed batch,
a batch resumed after the command stopped, and the audit's controls."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from rubric_audit.load.runs import load_runs
from tests.conftest import SAMPLE, sample_runs_of
from tests.fakes.openai_server import FakeOpenAI, Reply, error, is_preflight, text
from tests.test_judge import JUDGE, TASKS, grade, tolerant_judge


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    return sample_runs_of(tmp_path, TASKS)


def judge_grades(runs: Path) -> dict[tuple[str, str], str]:
    """Each (attempt, criterion) verdict the judge's grade files hold."""
    graded = load_runs([runs]).grades
    return {(g.attempt_id, g.criterion_id): g.verdict for g in graded
            if g.grader == f"judge:{JUDGE}"}


def every_other() -> Callable[[str], bool]:
    """Fails every other line of a batch, the first included."""
    seen: list[str] = []

    def fails(custom_id: str) -> bool:
        seen.append(custom_id)
        return len(seen) % 2 == 1

    return fails


def test_batch_grades_as_one_call_at_a_time_and_retries_what_the_batch_failed(
        tmp_path: Path) -> None:
    alone, batched = sample_runs_of(tmp_path / "a", TASKS), sample_runs_of(tmp_path / "b", TASKS)
    with FakeOpenAI(tolerant_judge) as server:
        assert grade(alone, server, tmp_path / "a").exit_code == 0
    with FakeOpenAI(tolerant_judge, batch_fails=every_other()) as server:
        result = grade(batched, server, tmp_path / "b", "--batch")
        assert result.exit_code == 0, result.output
        [batch] = server.batches.values()
        counts = batch["request_counts"]
        one_by_one = server.work_requests
    assert counts["failed"] > 0 and counts["completed"] > 0
    assert len(server.batch_requests) == counts["completed"]
    # the calls the batch failed are made again one by one, and only those (two calls on the
    # same answer are one request: the second is the cache's)
    assert 1 <= len(one_by_one) <= counts["failed"]
    assert judge_grades(batched) == judge_grades(alone) != {}
    assert f"Batch {batch['id']} (completed): {counts['completed']} replies from it, " \
           f"{counts['failed']} calls made again one by one." in result.stdout
    assert not list(batched.glob("judge-batches-*.json")), "a collected batch leaves no ledger"


def test_calls_that_stay_unanswered_leave_their_attempts_unavailable_not_failed(
        runs: Path, tmp_path: Path) -> None:
    def down_after_the_check(body: dict) -> Reply:
        return text("ok") if is_preflight(body) else error(503)

    with FakeOpenAI(down_after_the_check, batch_fails=lambda _: True) as server:
        result = grade(runs, server, tmp_path, "--batch")
    assert result.exit_code == 0, result.output
    assert judge_grades(runs) == {}, "no grade file: the attempts stay ungraded by this judge"
    assert "Graded 0 attempts" in result.stdout and "4 could not be graded" in result.stdout


def test_a_batch_still_running_when_the_budget_ends_is_resumed_not_submitted_again(
        runs: Path, tmp_path: Path) -> None:
    with FakeOpenAI(tolerant_judge, batch_polls=1) as server:
        first = grade(runs, server, tmp_path, "--batch", "--time-budget", "1")
        assert first.exit_code == 0, first.output
        [ledger] = runs.glob("judge-batches-*.json")
        recorded = json.loads(ledger.read_text())["batches"]
        assert [b["batch_id"] for b in recorded] == list(server.batches)
        assert judge_grades(runs) == {} and "stays recorded" in first.stdout
        second = grade(runs, server, tmp_path, "--batch", "--batch-poll", "0.1")
        assert second.exit_code == 0, second.output
        assert len(server.batches) == 1, "the recorded batch is collected, not paid for again"
    assert "(resumed, completed)" in second.stdout and "Graded 4 attempts" in second.stdout
    assert len(judge_grades(runs)) == 4 and not ledger.exists()


def test_audit_judges_its_controls_through_one_batch(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rubric_audit.cli import app
    from rubric_audit.store.audit_store import open_audit

    with FakeOpenAI(tolerant_judge) as server:
        result = CliRunner().invoke(app, [
            "audit", str(SAMPLE), "--out", str(tmp_path / "out"), "--judge", JUDGE,
            "--api-base", server.url, "--cache", str(tmp_path / "cache.db"), "--batch"],
            env={"OPENAI_API_KEY": "sk-test"})
        assert result.exit_code == 0, result.output
        [batch] = server.batches.values()
        direct = server.work_requests
    with open_audit(tmp_path / "out" / "audit.db") as store:
        judged = [g for g in store.control_grades() if g.grade.grader == f"judge:{JUDGE}"]
    assert len(judged) == batch["request_counts"]["completed"] > 0
    assert direct == [], "every control's call went in the batch"
