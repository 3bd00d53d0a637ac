"""Ablations (compare two arms, or run both through the fake server), frames and export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rubric_audit.checks.lints import task_depends_on_messages
from rubric_audit.cli import app
from rubric_audit.core.errors import InputError
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.load.world import load_task_world
from rubric_audit.report import frames
from rubric_audit.report.ablation import compare
from tests.conftest import SAMPLE, SHARED_RUNS, make_task, make_variant, write_json
from tests.fakes.openai_server import FakeOpenAI, Reply, is_preflight, text, tool_call


def test_compare_the_two_fixture_variants() -> None:
    result = compare(SHARED_RUNS / "grok43high-dc-rs", SHARED_RUNS / "grok43high-baseline")
    assert (result.tasks, result.grader) == (11, "recorded")
    assert result.difference.estimate == pytest.approx(2 / 11)
    assert result.difference.low <= result.difference.estimate <= result.difference.high
    assert "paired bootstrap" in result.difference.method
    assert result.a.opened == {"mail": 0.0, "chat": 0.0, "calendar": 0.0}


def test_compare_says_what_it_left_out_what_changed_and_how_the_prompts_differ() -> None:
    """The fixture's arms: dc-rs passes two tasks baseline fails (no task the other way), three
    tasks are left out for an unavailable attempt, and dc-rs's recorded prompts add the
    cheatsheet on every compared task; the same model, 11 tasks: nothing to warn of."""
    result = compare(SHARED_RUNS / "grok43high-dc-rs", SHARED_RUNS / "grok43high-baseline")
    assert [(c.change, c.b, c.a) for c in result.discordant] == [("fail→pass", 0.0, 1.0)] * 2
    assert sorted(d.reason for d in result.dropped) == [
        "no verdict of recorded in grok43high-baseline (1 unavailable)",
        "no verdict of recorded in grok43high-baseline (1 unavailable)",
        "no verdict of recorded in grok43high-dc-rs (1 unavailable)"]
    [prompt] = result.prompt_changes
    assert (prompt.arm, prompt.where, prompt.tasks, prompt.dropped) == (
        "grok43high-dc-rs", "task prompt", 11, [])
    assert prompt.added[0] == "## Reference cheatsheet — formulas, conventions, environment " \
                              "facts, pitfalls"
    assert result.warnings == []
    printed = CliRunner().invoke(app, ["ablate", "--compare", str(SHARED_RUNS / "grok43high-dc-rs"),
                                       str(SHARED_RUNS / "grok43high-baseline")])
    assert printed.exit_code == 0, printed.output
    assert "dc-rs − baseline: +18.2 pp [0.0, +45.5] in pass@1; the interval includes 0: no " \
           "difference shown" in printed.stdout
    assert "Discordant tasks (grok43high-baseline → grok43high-dc-rs): " in printed.stdout
    assert printed.stdout.count("fail→pass") == 2 and "Warning" not in printed.stdout
    assert "Prompt: grok43high-dc-rs's task prompt adds " in printed.stdout
    as_json = json.loads(CliRunner().invoke(app, [
        "ablate", "--compare", str(SHARED_RUNS / "grok43high-dc-rs"),
        str(SHARED_RUNS / "grok43high-baseline"), "--json"]).stdout)
    assert as_json["difference"]["estimate"] == pytest.approx(2 / 11)
    assert len(as_json["discordant"]) == 2 and len(as_json["dropped"]) == 3


def test_arms_that_are_one_folder_or_overlap_are_warned_of() -> None:
    same = compare(SHARED_RUNS / "grok43high-baseline", SHARED_RUNS / "grok43high-baseline")
    assert same.warnings == ["both arms are the same folder: the difference is 0 by construction"]
    inside = compare(SHARED_RUNS, SHARED_RUNS / "grok43high-baseline")
    assert inside.warnings[0].startswith("the arms overlap (")


def test_opened_apps_come_from_telemetry(tmp_path: Path) -> None:
    task = make_task()
    verdicts = {"task_1_c1": "pass", "task_1_c2": "pass"}
    arm_a = make_variant(tmp_path / "a", "with-mail", "m", [(task, 1, verdicts)])
    arm_b = make_variant(tmp_path / "b", "base", "m", [(task, 1, verdicts)])
    (arm_a / "task_1" / "telemetry.jsonl").write_text(
        json.dumps({"tool": "mail_search"}) + "\n" + json.dumps({"tool": "files_read"}) + "\n")
    write_json(arm_b / "task_1" / "trajectory.json", {"messages": [
        {"role": "assistant", "tool_calls": [{"id": "1", "type": "function",
                                              "function": {"name": "calendar_list",
                                                           "arguments": "{}"}}]},
        {"role": "tool", "name": "final_answer", "content": "The budget is 1.2m."}]})
    result = compare(arm_a, arm_b)
    assert result.a.opened == {"mail": 1.0, "chat": 0.0, "calendar": 0.0}
    assert result.b.opened == {"mail": 0.0, "chat": 0.0, "calendar": 1.0}
    assert result.difference.estimate == 0


SENTENCE = "Read every email before you answer."


def agent_and_judge(body: dict[str, Any]) -> Reply:
    """The agent answers right only when told to read mail; the judge passes an answer whose
    value the criterion states."""
    if is_preflight(body):
        return text("ok")
    if body["model"] == "judge":
        prompt = body["messages"][-1]["content"]
        answer = prompt.split("## The agent's final answer")[1].split("## Artifacts")[0]
        criterion = prompt.split("## Criterion")[1]
        value = answer.strip().removeprefix("NOK ")
        verdict = "pass" if value in criterion else "fail"
        return text(json.dumps({"rationale": "checked", "verdict": verdict}))
    told = SENTENCE in body["messages"][0]["content"]
    return tool_call("final_answer", {"answer": "NOK 47.63" if told else "NOK 48.50"})


def test_ablate_runs_and_judges_both_arms(tmp_path: Path) -> None:
    with FakeOpenAI(agent_and_judge) as server:
        result = CliRunner().invoke(app, [
            "ablate", str(SAMPLE), "--model", "openai/agent", "--sentence", SENTENCE,
            "--judge", "openai/judge", "--out", str(tmp_path / "runs"), "--tasks",
            "nordlys_06,nordlys_01", "--api-base", server.url],
            env={"OPENAI_API_KEY": "sk-test", "RUBRIC_AUDIT_CACHE": str(tmp_path / "c.db")})
    assert result.exit_code == 0, result.output
    assert "agent-76b12d10 − agent: +50.0 pp [0.0, +100.0] in pass@1; the interval includes 0" \
        in result.stdout, "A (with the sentence) minus B"
    assert "Prompt: openai-agent-76b12d10's system prompt adds 1 sentence: " \
           f"{SENTENCE!r}." in result.stdout, "the arms' variant.json differ by the sentence"
    assert "nordlys_06 fail→pass" in result.stdout
    variants = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert len(variants) == 2 and "openai-agent" in variants


def test_ablate_needs_arms_or_a_run(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["ablate", str(SAMPLE)])
    assert result.exit_code == 2 and "--compare RUNS_A RUNS_B" in result.stderr


def test_message_dependent_tasks() -> None:
    bench = load_benchmark(SAMPLE)
    needs = {t.name for t in bench.tasks
             if any(task_depends_on_messages(t, load_task_world(bench, t)))}
    assert "nordlys_06" in needs and "nordlys_01" not in needs


def test_frames_and_export(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["audit", str(SAMPLE), "--out", str(out)]).exit_code == 0
    tables = frames.load(out)
    assert len(tables["attempts"]) == 80 and "trajectory" not in tables["attempts"]
    assert set(tables["grades"].grader) == {"recorded", "code"}
    assert list(tables["reviews"].columns)[:4] == ["entry", "task", "reviewer", "created_at"]
    assert all("task" in frame.columns for name, frame in tables.items()
               if name not in ("source_metrics", "check_summaries")), \
        "task names wherever a row is of a task"
    named = tables["grades"].dropna(subset=["task"])
    assert len(named) == len(tables["grades"]) and "nordlys_02" in set(named.task)
    result = CliRunner().invoke(app, ["export", str(out), "--format", "csv"])
    assert result.exit_code == 0
    written = sorted(p.name for p in (out / "export").iterdir())
    assert written == ["attempts.csv", "check_summaries.csv", "control_grades.csv",
                       "controls.csv", "finding_reviews.csv", "findings.csv", "grades.csv",
                       "labels.csv", "labels_agreement.csv", "labels_disagreements.csv",
                       "measurements.csv", "reviews.csv", "source_metrics.csv"]
    labels = CliRunner().invoke(app, ["reviews", str(out), "--format", "json"])
    assert labels.exit_code == 0 and (out / "export" / "labels.json").is_file(), \
        "the reviewers' labels and agreement go to the one export folder too"
    assert not (out / "labels.json").exists() and not (out / "reviews.csv").exists()
    import csv

    with (out / "export" / "findings.csv").open() as f:
        evidence = [json.loads(row["evidence"]) for row in csv.DictReader(f)]
    assert all(isinstance(e, dict) for e in evidence), "evidence is JSON, not a Python repr"
    bad = CliRunner().invoke(app, ["export", str(out), "--format", "xml"])
    assert bad.exit_code == 2


def test_messages_only_counts_only_those_tasks_and_warns_on_small_n() -> None:
    runs = SAMPLE / "runs"
    result = CliRunner().invoke(app, ["ablate", str(SAMPLE), "--compare", str(runs / "atlas-1"),
                                      str(runs / "cirrus-2"), "--messages-only"])
    assert result.exit_code == 0, result.output
    assert "Ablation over 4 tasks" in result.output
    assert "│ atlas-1  │ 8        │ 8      │" in result.output, "2 attempts on each of 4 tasks"
    assert "Warning: only 4 tasks" in result.output
    everything = compare(runs / "atlas-1", runs / "cirrus-2")
    assert (everything.tasks, everything.a.attempts) == (20, 40)
    assert [w.split(" (")[0] for w in everything.warnings] == ["the arms ran different models"]
    assert "Left out: 16 tasks not a --messages-only task: " in result.output


def test_a_telemetry_line_that_is_not_json_is_one_input_error(tmp_path: Path) -> None:
    from rubric_audit.core.errors import InputError
    from rubric_audit.core.model import Attempt
    from rubric_audit.report.apps import apps_opened

    (tmp_path / "telemetry.jsonl").write_text('{"tool": "mail_list"}\n["chat_post"]\n{"tool": \n')
    attempt = Attempt(id="v/t/1", task_id="t", model="m", variant="v", index=1, state="graded",
                      source=str(tmp_path))
    with pytest.raises(InputError, match=r"telemetry\.jsonl: malformed JSON"):
        apps_opened(attempt)
    (tmp_path / "telemetry.jsonl").write_text('{"tool": "mail_list"}\n["chat_post"]\n')
    assert apps_opened(attempt) == {"mail"}


def test_arms_count_their_ungraded_attempts_and_say_so_when_nothing_is_graded(
        tmp_path: Path) -> None:
    task = make_task()
    ok = {"task_1_c1": "pass", "task_1_c2": "pass"}
    arm_a = make_variant(tmp_path / "a", "a", "m", [(task, 1, ok), (task, 2, None)])
    arm_b = make_variant(tmp_path / "b", "b", "m", [(task, 1, ok)])
    result = compare(arm_a, arm_b)
    assert (result.a.attempts, result.a.graded, result.a.ungraded) == (2, 1, 1)
    assert result.difference.estimate == 0, "the ungraded attempt is no fail"
    none_a = make_variant(tmp_path / "c", "c", "m", [(task, 1, None)])
    none_b = make_variant(tmp_path / "d", "d", "m", [(task, 1, None)])
    with pytest.raises(InputError, match="2 attempts are ungraded: `rubric-audit grade`"):
        compare(none_a, none_b)


def test_export_says_which_attempts_are_ungraded(tmp_path: Path) -> None:
    task = make_task()
    make_variant(tmp_path / "runs", "v", "m", [(task, 1, {"task_1_c1": "fail"}), (task, 2, None)])
    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["audit", str(tmp_path / "runs"), "--out",
                                    str(out)]).exit_code == 0
    assert CliRunner().invoke(app, ["export", str(out), "--format", "json"]).exit_code == 0
    attempts = json.loads((out / "export" / "attempts.json").read_text())
    assert [(a["index"], a["state"], a["unavailable_reason"]) for a in attempts] == [
        (1, "graded", None), (2, "ungraded", None)]


def test_exported_review_log_keeps_whole_numbers_whole(tmp_path: Path) -> None:
    """A retraction names the entry it retracts: 3, not 3.0, beside the entries that retract
    nothing (an empty cell)."""
    import csv

    from rubric_audit.core.model import Review
    from rubric_audit.store.audit_store import open_audit

    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["audit", str(SAMPLE), "--out", str(out)]).exit_code == 0
    with open_audit(out / "audit.db") as store:
        task = store.tasks()[0].id
        review = Review(reviewer="ana", created_at="2026-01-01T00:00:00Z", task_id=task,
                        label="model_error")
        first = store.append_review(review)
        store.append_review(review.model_copy(update={"label": None, "retracts": first}))
    assert list(frames.load(out)["reviews"].retracts)[1] == first
    assert CliRunner().invoke(app, ["export", str(out), "--format", "csv"]).exit_code == 0
    with (out / "export" / "reviews.csv").open() as f:
        assert [row["retracts"] for row in csv.DictReader(f)] == ["", str(first)]
