"""Archipelago run folders: the real recorded fixtures and generated layouts."""

from __future__ import annotations

import json
import shutil
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from rubric_audit.core.errors import InputError
from rubric_audit.grade.judge import artifacts_text
from rubric_audit.load.runs import load_runs
from tests.conftest import (
    FIXTURES,
    SHARED_RUNS,
    add_lying_entry,
    make_task,
    make_variant,
    write_json,
)


def test_shared_fixtures_give_24_graded_and_4_unavailable() -> None:
    runs = load_runs([SHARED_RUNS])
    assert Counter(a.state for a in runs.attempts) == {"graded": 24, "unavailable": 4}
    graded = [a for a in runs.attempts if a.state == "graded"]
    criteria = {a.id: len(runs.tasks[a.task_id].criteria) for a in graded}
    per_attempt = Counter(g.attempt_id for g in runs.grades)
    assert per_attempt == criteria, "every criterion of every graded attempt has a verdict"
    assert all(g.rationale.strip() and g.verdict in ("pass", "fail") for g in runs.grades)
    assert {a.model for a in runs.attempts} == {"xai/grok-4.3"}
    assert {a.judge_model for a in graded} == {"openai/gpt-5.5"}
    assert {a.variant for a in runs.attempts} == {"grok43high-baseline", "grok43high-dc-rs"}
    unavailable = [a for a in runs.attempts if a.state == "unavailable"]
    assert {a.unavailable_reason for a in unavailable} == {"agent_status='failed'"}
    assert all(a.answer for a in graded)


def test_a_variant_folder_alone_works() -> None:
    runs = load_runs([SHARED_RUNS / "grok43high-dc-rs"])
    assert Counter(a.state for a in runs.attempts) == {"graded": 13, "unavailable": 1}


def test_recorded_pass_and_partial_scores_match_grades_json() -> None:
    runs = load_runs([SHARED_RUNS / "grok43high-dc-rs"])
    attempt = "grok43high-dc-rs/task_0de09be0daf242208f7a60ee83bf8717/1"
    verdicts = Counter(g.verdict for g in runs.grades if g.attempt_id == attempt)
    assert verdicts == {"pass": 3, "fail": 4}  # final_score 3/7 in grades.json


def test_several_attempts_are_numbered_not_duplicates(tmp_path: Path) -> None:
    task = make_task()
    ok = {"task_1_c1": "pass", "task_1_c2": "pass"}
    make_variant(tmp_path, "v1", "m/one", [(task, 1, ok), (task, 2, ok), (task, 3, None)],
                 failures=["task_1"])
    runs = load_runs([tmp_path / "v1"])
    assert [(a.index, a.state) for a in runs.attempts] == [
        (1, "graded"), (2, "graded"), (3, "unavailable")]
    assert runs.attempts[2].unavailable_reason == "agent_status='failed'"
    assert len(runs.grades) == 4


def test_answer_falls_back_to_output(tmp_path: Path) -> None:
    task = make_task()
    folder = make_variant(tmp_path, "v1", "m/one", [(task, 1, {"task_1_c1": "pass"})]) / "task_1"
    write_json(folder / "trajectory.json", {"messages": [], "output": "plain output"})
    assert load_runs([tmp_path / "v1"]).attempts[0].answer == "plain output"


@pytest.mark.parametrize(("escaped", "usable"), [
    ("\\ud83d\\ude00", True), ("\\u00e9", True), ("\\\\ud800", True), ("\\ud800", False),
    ("x\\uDC00", False)])
def test_a_lone_surrogate_escape_is_refused_with_its_field(tmp_path: Path, escaped: str,
                                                           usable: bool) -> None:
    task = make_task()
    folder = make_variant(tmp_path, "v1", "m/one", [(task, 1, {"task_1_c1": "pass"})]) / "task_1"
    (folder / "trajectory.json").write_text(f'{{"messages": [], "output": "{escaped}"}}')
    if usable:
        assert load_runs([tmp_path / "v1"]).attempts[0].answer
        return
    with pytest.raises(InputError) as caught:
        load_runs([tmp_path / "v1"])
    assert caught.value.field == "output" and "trajectory.json" in str(caught.value.file)


def test_incomplete_grading_run_is_unavailable(tmp_path: Path) -> None:
    task = make_task()
    folder = make_variant(tmp_path, "v1", "m/one", [(task, 1, {"task_1_c1": "pass"})]) / "task_1"
    write_json(folder / "grades.json", {"grading_run_status": "error", "verifier_results": []})
    attempt = load_runs([tmp_path / "v1"]).attempts[0]
    assert attempt.state == "unavailable" and "'error'" in attempt.unavailable_reason


def test_malformed_failures_line_is_named(tmp_path: Path) -> None:
    make_variant(tmp_path, "v1", "m/one", [(make_task(), 1, {"task_1_c1": "pass"})])
    (tmp_path / "v1" / "results.failures.jsonl").write_text('{"task_id": "a"}\n{broken\n')
    with pytest.raises(InputError) as caught:
        load_runs([tmp_path / "v1"])
    assert caught.value.field == "line 2"


def test_not_a_run_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="not a run folder"):
        load_runs([tmp_path / "empty"])


def test_a_linked_artifact_is_neither_listed_nor_read(tmp_path: Path) -> None:
    task = make_task()
    variant = make_variant(tmp_path / "runs", "m1", "m/one", [(task, 1, {"task_1_c1": "pass"})])
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY")
    artifacts = variant / "task_1" / "artifacts"
    artifacts.mkdir()
    (artifacts / "answer.md").write_text("1.2m")
    (artifacts / "key.txt").symlink_to(secret)
    [attempt] = load_runs([variant]).attempts
    assert attempt.artifacts == ["artifacts/answer.md"]
    assert "PRIVATE KEY" not in artifacts_text(attempt)


@pytest.mark.parametrize("attempt", ["²", "9" * 5000, "-1", 2.5])
def test_a_failures_attempt_that_is_no_number_is_ignored(tmp_path: Path, attempt: object) -> None:
    task = make_task()
    variant = make_variant(tmp_path / "runs", "m1", "m/one", [(task, 1, None)])
    (variant / "results.failures.jsonl").write_text(
        json.dumps({"task_id": "task_1", "attempt": attempt, "error": "boom"}) + "\n")
    [attempt_read] = load_runs([variant]).attempts
    assert attempt_read.state == "unavailable" and attempt_read.unavailable_reason == "boom"


def test_unavailable_reasons_are_summarised_one_line_each(tmp_path: Path) -> None:
    """A reason that quotes a whole prompt (kilobytes, many lines) is its first line in the
    source summary, and reasons that share it are counted together."""
    task = make_task()
    prompt = "Please review the attached ledger.\n" + "Line of the prompt. " * 2000
    variant = make_variant(tmp_path / "runs", "m1", "m/one",
                           [(task, 1, None), (task, 2, None), (task, 3, None)])
    (variant / "results.failures.jsonl").write_text("".join(
        json.dumps({"task_id": "task_1", "attempt": k, "error": f"BadRequest: {prompt}"}) + "\n"
        for k in (1, 2)) + json.dumps({"task_id": "task_1", "attempt": 3, "error": "x"}) + "\n")
    [source] = load_runs([variant]).sources
    [(long_reason, count), short] = source.unavailable_reasons.items()
    assert short == ("x", 1) and count == 2 and "\n" not in long_reason and len(long_reason) <= 204
    assert long_reason == "BadRequest: Please review the attached ledger."


EXAMPLES = FIXTURES / "archipelago-examples" / "examples"


def test_the_harness_examples_are_two_models_two_agents_and_two_judges() -> None:
    """Archipelago's own example attempts, side by side in one folder: each attempt's configs
    say which model, agent and judge ran it, never the folder they share."""
    runs = load_runs([EXAMPLES])
    by_task = {a.task_id: a for a in runs.attempts}
    assert {t: (a.model, a.agent, a.judge_model) for t, a in by_task.items()} == {
        "simple_task": ("gpt-5.5", "react_toolbelt_agent", "gemini/gemini-2.5-flash"),
        "claude_code_task": ("anthropic/claude-sonnet-4-5-20250929", "claude_code_agent",
                             "anthropic/claude-sonnet-4-5-20250929")}
    [source] = runs.sources
    assert source.model_from == {}  # every model came from the attempt's own config


def _orchestrated(folder: Path, model: str) -> None:
    write_json(folder / "orchestrator_config.json", {"model": model, "extra_args": {}})


def test_a_model_is_read_from_the_config_then_results_csv_then_the_folder(tmp_path: Path) -> None:
    one, two, three = make_task("task_1"), make_task("task_2"), make_task("task_3")
    ok = {"task_1_c1": "pass"}
    variant = make_variant(tmp_path, "v1", "m/csv", [(one, 1, ok), (two, 1, ok), (three, 1, None)])
    _orchestrated(variant / "task_1", "m/own")
    (variant / "results.failures.jsonl").write_text("")  # task_3 is named nowhere
    runs = load_runs([variant])
    assert {a.task_id: a.model for a in runs.attempts} == {
        "task_1": "m/own", "task_2": "m/csv", "task_3": "m/csv"}
    assert runs.sources[0].model_from == {"results.csv agent_model": 1,
                                          "the variant's most common agent_model": 1}
    (variant / "results.csv").unlink()
    runs = load_runs([variant])
    assert {a.task_id: a.model for a in runs.attempts} == {
        "task_1": "m/own", "task_2": "v1", "task_3": "v1"}
    assert runs.sources[0].model_from == {"the variant folder's name": 2}


def test_two_agents_in_one_variant_are_two_models_in_the_scores(tmp_path: Path) -> None:
    from rubric_audit.core.scores import score_variants

    task = make_task()
    variant = make_variant(tmp_path, "v1", "m/csv", [
        (task, 1, {"task_1_c1": "pass", "task_1_c2": "pass"}),
        (task, 2, {"task_1_c1": "fail", "task_1_c2": "pass"})])
    _orchestrated(variant / "task_1", "m/first")
    _orchestrated(variant / "task_1" / "attempt_2", "m/second")
    runs = load_runs([variant])
    scores = score_variants(list(runs.tasks.values()), runs.attempts, runs.grades)
    assert {(s.model, s.pass_at_1) for s in scores} == {("m/first", 1.0), ("m/second", 0.0)}


def test_an_answer_in_plain_text_is_the_answer_and_the_summary_counts_each_rule() -> None:
    """Claude Code answers in its last assistant message; the harness's own agent calls
    final_answer. Both are read, and the source says which rule found which."""
    runs = load_runs([EXAMPLES])
    answers = {a.task_id: a.answer for a in runs.attempts}
    assert answers["simple_task"] == "/animals/xk92m/qz7fw.png"
    assert answers["claude_code_task"].startswith("Perfect! ✅ Test Case 1 completed")
    assert "`python3 hello.py`" in answers["claude_code_task"]
    assert runs.sources[0].answer_rules == {"final_answer result": 1,
                                            "last assistant message": 1}


CALL = {"role": "assistant", "content": "Submitting.", "tool_calls": [{
    "id": "c1", "type": "function",
    "function": {"name": "final_answer", "arguments": '{"status": "completed", "answer": "42"}'}}]}


@pytest.mark.parametrize(("messages", "output", "answer", "rule"), [
    ([{"role": "assistant", "content": "Draft: 41."}, CALL], None, "42", "final_answer call"),
    ([CALL, {"role": "tool", "tool_call_id": "c1", "name": "final_answer", "content": "42!"}],
     None, "42!", "final_answer result"),
    ([{"role": "assistant", "content": [{"type": "text", "text": "It is 42."}]},
      {"role": "assistant", "content": "", "tool_calls": []}], {"source": "agent"}, "It is 42.",
     "last assistant message"),
    ([{"role": "assistant", "content": "It is 42."}], "From output: 42", "From output: 42",
     "trajectory output"),
    ([{"role": "user", "content": "What is it?"}, {"role": "tool", "content": "x"}], None, None,
     "no answer"),
    ([{"role": "assistant", "content": None, "tool_calls": [{"function": {
        "name": "final_answer", "arguments": "{not json"}}]}], None, "{not json",
     "final_answer call"),
])
def test_each_answer_rule(tmp_path: Path, messages: list, output: object, answer: str | None,
                          rule: str) -> None:
    task = make_task()
    folder = make_variant(tmp_path, "v1", "m/one", [(task, 1, {"task_1_c1": "pass"})]) / "task_1"
    write_json(folder / "trajectory.json", {"messages": messages, "output": output})
    runs = load_runs([tmp_path / "v1"])
    assert runs.attempts[0].answer == answer
    assert runs.sources[0].answer_rules == {rule: 1}


def test_the_files_the_judge_graded_are_the_attempts_artifacts_read_in_memory(
        tmp_path: Path) -> None:
    """The final snapshot's changed files are artifacts, as `final_snapshot.zip!entry`; the
    judge reads them from the zip; nothing is extracted anywhere."""
    examples = tmp_path / "examples"
    shutil.copytree(EXAMPLES, examples)
    before = sorted(tmp_path.rglob("*"))
    runs = load_runs([examples])
    by_task = {a.task_id: a for a in runs.attempts}
    claude = by_task["claude_code_task"]
    assert claude.artifacts == ["final_snapshot.zip!filesystem/hello.py"]
    assert artifacts_text(claude) == '### filesystem/hello.py\nprint("hello world")'
    # the images are unchanged, and the coordinator's clock is the harness's, not the agent's
    assert by_task["simple_task"].artifacts == []
    assert sorted(tmp_path.rglob("*")) == before


def _snapshot(path: Path, files: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)


def test_snapshot_artifacts_are_what_the_agent_created_or_changed(tmp_path: Path) -> None:
    task = make_task()
    folder = make_variant(tmp_path, "v1", "m/one", [(task, 1, {"task_1_c1": "pass"})]) / "task_1"
    world = {"filesystem/kept.md": b"same", "filesystem/edited.md": b"old",
             ".apps_data/mail/inbox.mbox": b"From a\n"}
    _snapshot(folder / "original_snapshot.zip", world)
    _snapshot(folder / "final_snapshot.zip", {
        **world, "filesystem/edited.md": b"new", "snap/filesystem/out/new.csv": b"a,b",
        ".apps_data/mail/sent.mbox": b"From me\n", ".apps_data/.coordinator/clock.json": b"{}",
        "filesystem/.hidden/x.md": b"x", "filesystem/tool/__pycache__/m.pyc": b"\0",
        "filesystem/run.pyc": b"\0", "__MACOSX/filesystem/._new.csv": b"", "README.txt": b"x"})
    [attempt] = load_runs([tmp_path / "v1"]).attempts
    assert attempt.artifacts == [f"final_snapshot.zip!{name}" for name in (
        ".apps_data/mail/sent.mbox", "filesystem/edited.md", "snap/filesystem/out/new.csv")]
    assert "### filesystem/edited.md\nnew" in artifacts_text(attempt)
    (folder / "original_snapshot.zip").unlink()  # no original: every graded file is the agent's
    [attempt] = load_runs([tmp_path / "v1"]).attempts
    assert len(attempt.artifacts) == 5 and "final_snapshot.zip!filesystem/kept.md" in \
        attempt.artifacts


@pytest.mark.parametrize("damage", ["escaping", "bomb", "not_a_zip"])
def test_a_snapshot_that_fails_the_world_zip_checks_is_one_input_error(tmp_path: Path,
                                                                       damage: str) -> None:
    task = make_task()
    folder = make_variant(tmp_path, "v1", "m/one", [(task, 1, {"task_1_c1": "pass"})]) / "task_1"
    final = folder / "final_snapshot.zip"
    if damage == "not_a_zip":
        final.write_bytes(b"PK\x03\x04 this is no zip")
    else:
        _snapshot(final, {"filesystem/ok.md": b"ok"})
        if damage == "escaping":
            with zipfile.ZipFile(final, "a") as zf:
                zf.writestr("../../outside.md", b"x")
        else:
            add_lying_entry(final, "filesystem/big.md", zipfile.ZIP_DEFLATED, megabytes=2)
    with pytest.raises(InputError) as caught:
        load_runs([tmp_path / "v1"])
    assert caught.value.file.endswith("final_snapshot.zip")
    assert not (tmp_path / "outside.md").exists()


def test_a_changed_snapshot_changes_the_fingerprint_and_a_linked_one_is_refused(
        tmp_path: Path) -> None:
    task = make_task()
    folder = make_variant(tmp_path, "v1", "m/one", [(task, 1, {"task_1_c1": "pass"})]) / "task_1"
    _snapshot(folder / "final_snapshot.zip", {"filesystem/a.md": b"1"})
    first = load_runs([tmp_path / "v1"]).attempts[0].fingerprint
    _snapshot(folder / "final_snapshot.zip", {"filesystem/a.md": b"2"})
    assert load_runs([tmp_path / "v1"]).attempts[0].fingerprint != first
    elsewhere = tmp_path / "elsewhere.zip"
    (folder / "final_snapshot.zip").rename(elsewhere)
    (folder / "final_snapshot.zip").symlink_to(elsewhere)
    with pytest.raises(InputError, match="symbolic link") as caught:
        load_runs([tmp_path / "v1"])
    assert Path(caught.value.file).name == "final_snapshot.zip"


def test_a_finished_attempt_no_grader_graded_is_ungraded_not_unavailable(tmp_path: Path) -> None:
    task = make_task()
    variant = make_variant(tmp_path, "v1", "m/one", [
        (task, 1, {"task_1_c1": "pass", "task_1_c2": "pass"}), (task, 2, None)])
    runs = load_runs([variant])
    ungraded = runs.attempts[1]
    assert (ungraded.state, ungraded.unavailable_reason) == ("ungraded", None)
    assert ungraded.answer == "The budget is 1.2m." and ungraded.trajectory is not None
    [source] = runs.sources
    assert (source.graded, source.ungraded, source.unavailable) == (1, 1, 0)
    assert source.unavailable_reasons == {}


@pytest.mark.parametrize("status", ["failed", "error", "cancelled", "running"])
def test_an_attempt_whose_run_did_not_finish_stays_unavailable(tmp_path: Path,
                                                               status: str) -> None:
    """Archipelago grades only completed runs: with no failure record, the trajectory's own
    status says why there is no grade."""
    variant = make_variant(tmp_path, "v1", "m/one", [(make_task(), 1, None)])
    trajectory = variant / "task_1" / "trajectory.json"
    write_json(trajectory, {**json.loads(trajectory.read_text()), "status": status})
    [attempt] = load_runs([variant]).attempts
    assert attempt.state == "unavailable" and repr(status) in attempt.unavailable_reason


def test_an_attempt_listed_as_failed_or_whose_grading_failed_stays_unavailable(
        tmp_path: Path) -> None:
    task = make_task()
    variant = make_variant(tmp_path, "v1", "m/one", [(task, 1, None), (task, 2, None)],
                           failures=["task_1"])
    listed = load_runs([variant]).attempts
    assert [(a.state, a.unavailable_reason) for a in listed] == [
        ("unavailable", "agent_status='failed'")] * 2
    (variant / "results.failures.jsonl").write_text("")
    write_json(variant / "task_1" / "grades" / "openai-j.json", {
        "grading_run_status": "error", "judge_model": "openai/j", "error": "503 from provider"})
    first, second = load_runs([variant]).attempts
    assert (first.state, first.unavailable_reason) == (
        "unavailable", "grading by judge:openai/j failed: 503 from provider")
    assert second.state == "ungraded"


def test_an_attempt_folder_without_a_trajectory_is_unavailable(tmp_path: Path) -> None:
    variant = make_variant(tmp_path, "v1", "m/one", [(make_task(), 1, None)])
    (variant / "task_1" / "trajectory.json").unlink()
    [attempt] = load_runs([variant]).attempts
    assert attempt.state == "unavailable" and "no trajectory.json" in attempt.unavailable_reason
