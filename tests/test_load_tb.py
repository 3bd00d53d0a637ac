"""Terminal-Bench 1 run folders (`tb run`), built in tb's own layout from its models' fields.

The public leaderboard runs this loader was tried on have no licence, so none is copied here:
`make_tb_run` writes runs of the same shape (docs/formats.md names the sources and their counts).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rubric_audit.cli import app
from rubric_audit.core.errors import InputError
from rubric_audit.load import tb
from rubric_audit.load.sources import load_sources
from rubric_audit.store.audit_store import AuditStore
from tests.conftest import make_tb_run, tb_trial, write_json

runner = CliRunner()


def one_run(root: Path, run_id: str = "2025-08-10__05-00-00", **options) -> Path:
    """Three tasks: solved, failed, and one whose tests timed out."""
    return make_tb_run(root, run_id, [
        tb_trial("hello-world", run_id),
        tb_trial("fix-git", run_id, resolved=False),
        tb_trial("build-tcc-qemu", run_id, resolved=None, failure_mode="test_timeout")],
        **options)


def by_task(runs) -> dict[str, list]:
    found: dict[str, list] = {}
    for a in sorted(runs.attempts, key=lambda a: (a.task_id, a.index)):
        found.setdefault(a.task_id, []).append(a)
    return found


def test_a_run_maps_trials_to_attempts_with_their_verdicts(tmp_path: Path) -> None:
    runs = load_sources([one_run(tmp_path)])
    [source] = runs.sources
    assert (source.format, source.attempts, source.graded, source.unavailable) == ("tb", 3, 2, 1)
    assert source.unavailable_reasons == {
        "tb failure_mode test_timeout: the tests timed out: no verdict": 1}
    attempts = {a.task_id: a for a in runs.attempts}
    assert {a.variant for a in runs.attempts} == {"terminus/openai/gpt-5"}
    assert {a.model for a in runs.attempts} == {"openai/gpt-5"}
    grades = {g.attempt_id: g for g in runs.grades}
    assert grades[attempts["hello-world"].id].verdict == "pass"
    failed = grades[attempts["fix-git"].id]
    assert failed.verdict == "fail" and failed.score == 0.5
    assert failed.rationale.splitlines()[:2] == ["1 of 2 tests passed",
                                                 "failed: test_output_content"]
    assert attempts["build-tcc-qemu"].agent_status == "test_timeout"
    assert attempts["build-tcc-qemu"].id not in grades
    hello = attempts["hello-world"]
    assert hello.answer is None and hello.wall_time == 8 * 60
    assert (hello.usage.prompt_tokens, hello.usage.completion_tokens,
            hello.usage.total_tokens) == (1200, 300, 1500)
    assert hello.source.endswith("hello-world.1-of-1.2025-08-10__05-00-00")
    task = runs.tasks["hello-world"]
    assert task.prompt.startswith("Do the hello-world task") and task.source == "runs"
    assert [c.id for c in task.criteria] == ["hello-world:tests"]
    assert source.unmapped == []


@pytest.mark.parametrize(("mode", "resolved", "state"), [
    ("unset", True, "graded"), ("none", False, "graded"), ("agent_timeout", False, "graded"),
    ("agent_timeout", True, "graded"), ("context_length_exceeded", False, "graded"),
    ("output_length_exceeded", False, "graded"), ("fatal_llm_parse_error", False, "graded"),
    ("agent_installation_failed", False, "unavailable"),
    ("unknown_agent_error", False, "unavailable"), ("test_timeout", None, "unavailable"),
    ("parse_error", None, "unavailable"), ("unknown", None, "unavailable"),
    ("sandbox_start_failed", None, "unavailable"), ("unset", None, "unavailable")])
def test_each_failure_mode_is_graded_or_unavailable(tmp_path: Path, mode: str,
                                                    resolved: bool | None, state: str) -> None:
    run = make_tb_run(tmp_path, "r1", [tb_trial("oom", "r1", resolved=resolved,
                                                failure_mode=mode)])
    [attempt] = load_sources([run]).attempts
    assert attempt.state == state
    assert (attempt.unavailable_reason is None) == (state == "graded")
    if state == "unavailable" and resolved is None and mode == "unset":
        assert attempt.unavailable_reason == tb.NO_VERDICT


def test_runs_of_one_agent_and_model_are_attempts_of_one_variant(tmp_path: Path) -> None:
    for run_id, solved in (("run-b", False), ("run-a", True)):
        make_tb_run(tmp_path / "submission", run_id, [
            tb_trial("fix-git", run_id, k=k, n=2, resolved=solved) for k in (2, 1)])
    make_tb_run(tmp_path / "submission", "other-model", [tb_trial("fix-git", "other-model")],
                model="anthropic/claude-sonnet-4")
    runs = load_sources([tmp_path / "submission"])
    variants = {s.path: s for s in runs.sources}
    assert len(variants) == 2
    gpt = [a for a in runs.attempts if a.model == "openai/gpt-5"]
    assert [a.index for a in sorted(gpt, key=lambda a: a.index)] == [1, 2, 3, 4]
    # run order (by folder), then each run's attempt number: run-a's two, then run-b's
    order = sorted(gpt, key=lambda a: a.index)
    assert [Path(a.source).name for a in order] == [
        "fix-git.1-of-2.run-a", "fix-git.2-of-2.run-a", "fix-git.1-of-2.run-b",
        "fix-git.2-of-2.run-b"]
    assert {a.variant for a in runs.attempts} == {"terminus/openai/gpt-5",
                                                  "terminus/anthropic/claude-sonnet-4"}


def test_a_run_without_a_model_is_a_variant_of_its_own(tmp_path: Path) -> None:
    for run_id in ("run-1", "run-2"):
        make_tb_run(tmp_path / "20250923_droid_opus", run_id, [tb_trial("oom", run_id)],
                    agent="Factory Droid", model=None)
    make_tb_run(tmp_path / "cursor", "run-3", [tb_trial("oom", "run-3")], metadata=False)
    runs = load_sources([tmp_path])
    assert sorted((a.model, a.variant) for a in runs.attempts) == [
        ("Factory Droid", "Factory Droid/20250923_droid_opus/run-1"),
        ("Factory Droid", "Factory Droid/20250923_droid_opus/run-2"),
        (tb.NOT_RECORDED, "cursor/run-3")]
    notes = [u for s in runs.sources for u in s.unmapped]
    assert sum("records no model" in u for u in notes) == 3
    assert any("no agent recorded either" in u for u in notes)


def test_the_model_comes_from_tb_lock_where_run_metadata_has_none(tmp_path: Path) -> None:
    run = one_run(tmp_path)
    metadata = json.loads((run / "run_metadata.json").read_text())
    write_json(run / "run_metadata.json", {**metadata, "model_name": None})
    assert {a.model for a in load_sources([run]).attempts} == {"openai/gpt-5"}


def test_trials_the_harness_failed_around_or_that_never_finished_are_unavailable(
        tmp_path: Path) -> None:
    run_id = "r1"
    run = make_tb_run(tmp_path, run_id, [
        tb_trial("hello-world", run_id),
        tb_trial("eval-mteb", run_id, resolved=None, failure_mode="unknown_agent_error",
                 ran=False)])
    (run / "oom" / f"oom.1-of-1.{run_id}" / "sessions").mkdir(parents=True)  # run stopped
    (run / "oom" / "notes").mkdir()  # no results.json and not a trial's name: no trial
    runs = load_sources([run])
    attempts = {a.task_id: a for a in runs.attempts}
    assert set(attempts) == {"hello-world", "eval-mteb", "oom"}
    assert attempts["oom"].unavailable_reason == tb.UNFINISHED
    assert attempts["eval-mteb"].unavailable_reason.startswith(
        "tb failure_mode unknown_agent_error")
    assert attempts["eval-mteb"].source == str(run / "results.json")
    [source] = runs.sources
    [note] = [u for u in source.unmapped if "resolved" in u]
    assert note == (f"run {run_id}: its results.json has 1 of 2 trials resolved; read 1 of 3 "
                    f"(1 trial folder without a results.json (the run stopped during them))")


def test_a_trial_file_beats_the_runs_listing_and_a_difference_is_said(tmp_path: Path) -> None:
    run = one_run(tmp_path)
    summary = json.loads((run / "results.json").read_text())
    summary["results"][1]["is_resolved"] = True  # fix-git: the run says resolved, its file not
    summary["n_resolved"], summary["accuracy"] = 2, 2 / 3
    write_json(run / "results.json", summary)
    runs = load_sources([run])
    [fix] = [a for a in runs.attempts if a.task_id == "fix-git"]
    assert next(g for g in runs.grades if g.attempt_id == fix.id).verdict == "fail"
    [note] = runs.sources[0].unmapped
    assert note.endswith("read 1 of 3 (1 trial whose own results.json says otherwise than "
                         "the run's (the trial's own is read))")


def test_a_runs_own_accuracy_that_does_not_add_up_is_said(tmp_path: Path) -> None:
    run = one_run(tmp_path)
    summary = json.loads((run / "results.json").read_text())
    write_json(run / "results.json", {**summary, "accuracy": 0.9})
    [note] = load_sources([run]).sources[0].unmapped
    assert "accuracy 0.9000 is not its n_resolved / trials (0.3333)" in note


def test_summary_files_alone_are_runs_without_trial_folders(tmp_path: Path) -> None:
    run = one_run(tmp_path / "src")
    goose = tmp_path / "20250829_goose_claude-4-opus"
    goose.mkdir()
    summary = json.loads((run / "results.json").read_text())
    for stamp in ("2025-08-27__22-13-13", "2025-08-29__07-37-19"):
        write_json(goose / f"{stamp}_results.json", {**summary, "id": stamp})
    write_json(goose / "copy_results.json", {**summary, "id": "2025-08-27__22-13-13"})
    (goose / "README.md").write_text("five runs of goose\n")
    runs = load_sources([goose])
    assert len(runs.sources) == 2 and {s.attempts for s in runs.sources} == {3}
    assert any("not read, the same run (id 2025-08-27__22-13-13)" in u
               for s in runs.sources for u in s.unmapped)
    assert {a.model for a in runs.attempts} == {tb.NOT_RECORDED}
    one = load_sources([goose / "2025-08-27__22-13-13_results.json"])
    assert one.sources[0].attempts == 3 and one.sources[0].format == "tb"
    assert load_sources([run / "results.json"]).sources[0].path == str(run)


def test_a_run_copied_into_another_is_read_once(tmp_path: Path) -> None:
    first = one_run(tmp_path / "sub", "2025-08-15__16-23-45")
    outer = make_tb_run(tmp_path / "sub", "2025-08-15__19-28-24",
                        [tb_trial("oom", "2025-08-15__19-28-24")])
    copy = make_tb_run(outer, "2025-08-15__16-23-45",  # a part of the same run (same uuid)
                       [tb_trial("hello-world", "2025-08-15__16-23-45")])
    metadata = json.loads((first / "run_metadata.json").read_text())
    runs = load_sources([tmp_path / "sub"])
    assert len(runs.attempts) == 4
    notes = [u for s in runs.sources for u in s.unmapped]
    assert any(u.startswith(f"{copy}: not read, the same run (id {metadata['uuid']})")
               for u in notes)


def test_oracle_and_nop_runs_are_the_gold_and_null_controls(tmp_path: Path) -> None:
    make_tb_run(tmp_path, "oracle-run", [tb_trial("oom", "oracle-run")], agent="oracle",
                model="Oracle")
    make_tb_run(tmp_path, "nop-run", [tb_trial("oom", "nop-run", resolved=False)], agent="nop",
                model=None)
    runs = load_sources([tmp_path])
    assert runs.attempts == []
    assert sorted((c.kind, c.expect) for c in runs.controls) == [("gold", "pass"),
                                                                 ("null", "fail")]
    assert sorted(g.verdict for g in runs.control_grades) == ["fail", "pass"]


def test_zero_tokens_are_unknown_usage(tmp_path: Path) -> None:
    run = make_tb_run(tmp_path, "r", [tb_trial("oom", "r", tokens=(0, 0))])
    runs = load_sources([run])
    assert runs.attempts[0].usage.prompt_tokens is None
    assert any("0 input and 0 output tokens" in u for u in runs.sources[0].unmapped)


def test_a_trial_without_per_test_results_is_graded_on_is_resolved(tmp_path: Path) -> None:
    run = make_tb_run(tmp_path, "r", [{**tb_trial("oom", "r"), "parser_results": None}])
    [grade] = load_sources([run]).grades
    assert grade.verdict == "pass" and grade.score == 1.0
    assert grade.rationale == "no per-test results recorded: tb's is_resolved"


@pytest.mark.parametrize(("file", "change", "field"), [
    ("oom/oom.1-of-1.r/results.json", {"parser_results": {"test_a": "maybe"}},
     "parser_results.test_a"),
    ("oom/oom.1-of-1.r/results.json", {"total_input_tokens": -3}, "total_input_tokens"),
    ("oom/oom.1-of-1.r/results.json", {"agent_started_at": "yesterday"}, "agent_started_at"),
    ("results.json", {"accuracy": "high"}, "accuracy"),
    ("run_metadata.json", {"model_name": 5}, "model_name")])
def test_a_wrong_value_is_an_input_error_naming_its_field(tmp_path: Path, file: str,
                                                          change: dict, field: str) -> None:
    run = make_tb_run(tmp_path, "r", [tb_trial("oom", "r")])
    write_json(run / file, {**json.loads((run / file).read_text()), **change})
    with pytest.raises(InputError) as error:
        load_sources([run])
    assert error.value.file == str(run / file) and error.value.field == field


def test_a_wrong_value_in_the_runs_listing_names_the_trial(tmp_path: Path) -> None:
    run = make_tb_run(tmp_path, "r", [tb_trial("oom", "r"), tb_trial("fix-git", "r")],
                      trial_files=False)
    summary = json.loads((run / "results.json").read_text())
    summary["results"][1]["is_resolved"] = "perhaps"
    write_json(run / "results.json", summary)
    with pytest.raises(InputError) as error:
        load_sources([run])
    assert error.value.field == "results[1].is_resolved"


def test_an_oversized_file_is_refused_by_its_size(tmp_path: Path, monkeypatch) -> None:
    run = one_run(tmp_path)
    monkeypatch.setattr(tb, "MAX_TRIAL_BYTES", 100)
    with pytest.raises(InputError, match="file too large"):
        load_sources([run])


def test_links_are_not_followed_and_the_walk_is_bounded(tmp_path: Path) -> None:
    outside = one_run(tmp_path / "outside")
    deep = tmp_path / "a" / "b" / "c" / "d" / "e" / "f"
    one_run(deep, "too-deep")
    (tmp_path / "a" / "link").symlink_to(outside, target_is_directory=True)
    run = one_run(tmp_path / "a", "near")
    os.symlink(outside / "fix-git", run / "linked-task")
    assert tb.tb_runs(tmp_path / "a") == [tb._run_at(run)]
    assert len(load_sources([tmp_path / "a"]).attempts) == 3


def test_a_trial_folder_alone_is_no_tb_run(tmp_path: Path) -> None:
    run = one_run(tmp_path)
    assert tb.tb_runs(run / "hello-world") == []
    assert tb.tb_runs(tmp_path / "missing") == []


def test_audit_of_a_tb_run_through_the_cli(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for run_id in ("2025-08-10__05-00-00", "2025-08-11__05-00-00"):
        one_run(runs, run_id)
    result = runner.invoke(app, ["audit", str(runs), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert (f"Read {runs} (tb): 6 attempts, 4 graded, 2 unavailable (2 x tb failure_mode "
            f"test_timeout: the tests timed out: no verdict); 3 tasks, 3 criteria.") in text
    with AuditStore(tmp_path / "out" / "audit.db") as store:
        attempts = store.attempts()
    assert sorted((a.task_id, a.index, a.state) for a in attempts) == [
        ("build-tcc-qemu", 1, "unavailable"), ("build-tcc-qemu", 2, "unavailable"),
        ("fix-git", 1, "graded"), ("fix-git", 2, "graded"), ("hello-world", 1, "graded"),
        ("hello-world", 2, "graded")]
    summary = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert summary["attempts"] == 6
    assert (tmp_path / "out" / "report.md").is_file()


def test_task_ids_differing_only_in_a_separator_are_two_tasks(tmp_path: Path) -> None:
    """`a/b` and `a_b` were one task (separators became `_`): the escape keeps them apart."""
    run_id = "2025-08-10__05-00-00"
    run = make_tb_run(tmp_path, run_id, [tb_trial("a/b", run_id), tb_trial("a_b", run_id)],
                      trial_files=False)
    assert sorted((a.task_id, a.index) for a in load_sources([run]).attempts) == [
        ("a%2Fb", 1), ("a_b", 1)]
