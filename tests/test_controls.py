"""Controls in code, judge-side controls and model checks through the fake server, the screen."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rubric_audit.checks.controls import code_grade_control, control_outcome, make_controls
from rubric_audit.checks.numbers import find_quantities
from rubric_audit.checks.screen import TaskEvidence, classify, screen
from rubric_audit.cli import app
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.store.audit_store import MIGRATIONS, AuditStore
from tests.conftest import SAMPLE
from tests.fakes.openai_server import FakeOpenAI, Reply, text


@pytest.fixture(scope="module")
def sample():
    return load_benchmark(SAMPLE)


def test_controls_of_a_numeric_task(sample) -> None:
    task = sample.task("nordlys_06")
    controls = {c.kind: c for c in make_controls(task)}
    assert set(controls) >= {"null", "refusal", "gold", "alternative:units_written_out",
                             "near_miss:outside_tolerance", "near_miss:hedged",
                             "near_miss:wrong_scale", "near_miss:assumption"}
    moved = controls["near_miss:outside_tolerance"].answer
    assert "NOK 47.63" not in moved and "NOK 47." in moved
    assert "NOK 47.63 or NOK" in controls["near_miss:hedged"].answer
    assert controls["near_miss:assumption"].answer.startswith("Even if")
    assert all(c.task_version == task.version() for c in controls.values())
    for kind, expected in (("gold", "pass"), ("null", "fail"),
                           ("alternative:units_written_out", "pass"),
                           ("near_miss:outside_tolerance", "fail"),
                           ("near_miss:hedged", "fail")):
        outcome = control_outcome(code_grade_control(task, controls[kind]))
        assert outcome == expected, kind
    # A thousandfold value is no claim about the target in code: only a judge can fail it.
    wrong_scale = code_grade_control(task, controls["near_miss:wrong_scale"])
    assert control_outcome(wrong_scale) == "undetermined"


def test_every_occurrence_of_the_gold_value_is_moved(sample) -> None:
    task = sample.task("meridian_01")
    moved = next(c for c in make_controls(task) if c.kind == "near_miss:outside_tolerance")
    values = [q.value for q in find_quantities(moved.answer)]
    assert 480_900 not in values


def test_tasks_without_a_gold_get_only_null_controls(sample) -> None:
    task = sample.task("kestrel_06").model_copy(update={"gold": None})
    assert [c.kind for c in make_controls(task)] == ["null", "refusal"]


def evidence(**kw: Any) -> TaskEvidence:
    base = {"task_id": "t", "gold_outcome": "pass", "null_outcome": "fail", "attempts": 4,
            "ungraded": 0, "unavailable": 0, "passes": 0, "unsound_passes": 0}
    return TaskEvidence(**{**base, **kw})


def test_screen_rules_apply_in_order() -> None:
    assert classify(evidence(gold_outcome="fail", unavailable=4), 0.5) == "broken_oracle"
    assert classify(evidence(unavailable=3), 0.5) == "infra_limited"
    assert classify(evidence(unavailable=2), 0.5) == "certified_unsolved"
    assert classify(evidence(passes=1, unsound_passes=1), 0.5) == "exploit_only"
    assert classify(evidence(gold_outcome="undetermined"), 0.5) == "uncertified"
    assert classify(evidence(gold_outcome="none"), 0.5) == "uncertified"


def test_a_task_without_enough_verdicts_is_ungraded_or_infra_limited_by_the_larger_cause() -> None:
    assert classify(evidence(ungraded=4), 0.5) == "ungraded", "never graded: not infra-limited"
    assert classify(evidence(ungraded=4, gold_outcome="none"), 0.5) == "ungraded"
    assert classify(evidence(ungraded=2, unavailable=1), 0.5) == "ungraded", \
        "three of four attempts have no verdict, most of them never graded"
    assert classify(evidence(ungraded=1, unavailable=2), 0.5) == "infra_limited"
    assert classify(evidence(ungraded=2, unavailable=2), 0.5) == "ungraded", \
        "no attempt graded: a judge can grade half of them"
    assert classify(evidence(ungraded=2), 0.5) == "certified_unsolved", \
        "half the attempts graded, every one of them failing"
    assert classify(evidence(gold_outcome="fail", ungraded=4), 0.5) == "broken_oracle"


def test_screen_partition_steps_and_sensitivity() -> None:
    tasks = [evidence(task_id="a", gold_outcome="fail"), evidence(task_id="b", unavailable=2),
             evidence(task_id="c"), evidence(task_id="d", passes=1, unsound_passes=0),
             evidence(task_id="e", ungraded=3, unavailable=1)]
    result = screen(tasks, 0.5)
    assert result.screened == 4, "a task with a sound pass is not screened"
    assert result.partition == {"broken_oracle": 1, "ungraded": 1, "infra_limited": 0,
                                "exploit_only": 0, "uncertified": 0, "certified_unsolved": 2}
    assert [s.tasks for s in result.steps] == [4, 3, 2, 2, 2, 2]
    assert result.sensitivity["0.3"]["infra_limited"] == 1
    assert result.sensitivity["0.5"]["infra_limited"] == 0
    assert result.sensitivity["0.7"]["ungraded"] == 1


def lenient_judge(body: dict[str, Any]) -> Reply:
    return text(json.dumps({"rationale": "looks fine", "verdict": "pass"}))


def test_a_lenient_judge_that_passes_near_misses_is_reported(tmp_path: Path) -> None:
    bench = one_task_bench(tmp_path, "nordlys_07")
    with FakeOpenAI(lenient_judge) as server:
        result = audit_with(tmp_path, bench, server, "--judge", "openai/lenient", "--repeats", "2")
        calls = len(server.work_requests)
    assert result.exit_code == 0, result.output
    assert "Models used: openai/lenient" in result.stdout
    findings = [json.loads(line)
                for line in (tmp_path / "out" / "findings.jsonl").read_text().splitlines()]
    lenient = [f for f in findings if f["check"] == "control_near_miss_passes"
               and f["evidence"]["grader"] == "judge:openai/lenient"]
    assert {f["evidence"]["control"].split(":")[2] for f in lenient} >= {
        "outside_tolerance", "hedged", "wrong_scale", "assumption"}
    assert any(f["check"] == "control_null_passes" for f in findings)
    controls = make_controls(load_benchmark(bench).tasks[0])
    assert calls == len(controls) * 2, "one call per control, criterion and repeat"


def audit_with(tmp_path: Path, bench: Path, server: FakeOpenAI, *options: str):
    """`audit BENCH --out tmp/out` with the model options given, served by the fake server."""
    return CliRunner().invoke(app, [
        "audit", str(bench), "--out", str(tmp_path / "out"), *options, "--api-base", server.url,
        "--cache", str(tmp_path / "c.db")], env={"OPENAI_API_KEY": "sk-test"})


def one_task_bench(tmp_path: Path, *names: str) -> Path:
    bench = tmp_path / "bench"
    bench.mkdir()
    source = json.loads((SAMPLE / "tasks_and_rubrics.json").read_text())
    (bench / "tasks_and_rubrics.json").write_text(json.dumps(
        [t for t in source if t["task_name"] in names]))
    (bench / "world_descriptions.json").write_text(
        (SAMPLE / "world_descriptions.json").read_text())
    (bench / "worlds").symlink_to(SAMPLE / "worlds")
    return bench


def test_repeats_measure_judge_flips(tmp_path: Path) -> None:
    calls = iter(range(10_000))

    def alternating(body: dict[str, Any]) -> Reply:
        verdict = "pass" if next(calls) % 2 else "fail"
        return text(json.dumps({"rationale": "coin", "verdict": verdict}))

    bench = one_task_bench(tmp_path, "kestrel_04")
    with FakeOpenAI(alternating) as server:
        result = audit_with(tmp_path, bench, server, "--judge", "openai/coin", "--repeats", "2",
                            "--concurrency", "1")
    assert result.exit_code == 0, result.output
    findings = [json.loads(line)
                for line in (tmp_path / "out" / "findings.jsonl").read_text().splitlines()]
    [flips] = [f for f in findings if f["check"] == "judge_flips_on_repeats"]
    assert flips["evidence"]["flip_rate"] == 1.0
    assert any(f["check"] == "control_gold_fails" and
               f["evidence"]["grader"] == "judge:openai/coin" for f in findings), \
        "a gold that fails one repeat does not pass"


def test_model_checks_quote_their_source(tmp_path: Path, sample) -> None:
    answer = {"applies": True, "criterion_ids": [], "source": "<nordlys-comps-1@halvorsenlund.no>",
              "quote": "Exclude Fjordkost from the peer set", "explanation": "gold keeps it"}

    def lint_model(body: dict[str, Any]) -> Reply:
        prompt = body["messages"][-1]["content"]
        applies = "mail or chat message" in prompt and "Fjordkost" in prompt
        return text(json.dumps({**answer, "applies": applies}))

    bench = one_task_bench(tmp_path, "nordlys_03", "kestrel_06")
    with FakeOpenAI(lint_model) as server:
        result = audit_with(tmp_path, bench, server, "--lint-model", "openai/lint")
    assert result.exit_code == 0, result.output
    findings = [json.loads(line)
                for line in (tmp_path / "out" / "findings.jsonl").read_text().splitlines()]
    [found] = [f for f in findings if f["check"] == "gold_ignores_message_instruction"]
    assert found["task_id"] == sample.task("nordlys_03").id
    assert found["evidence"]["source"] == "<nordlys-comps-1@halvorsenlund.no>"
    assert found["evidence"]["quote"] == "Exclude Fjordkost from the peer set"
    assert "--lint-model" not in result.stdout


def _findings(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "findings.jsonl").read_text().splitlines()]


def test_an_alternative_the_judge_fails_beside_a_passing_gold_is_reported(tmp_path: Path,
                                                                           sample) -> None:
    """A judge that passes the gold word for word and fails any rewording of it: the
    alternatives (the gold reworded without changing its meaning) failing is the finding."""
    task = next(t for t in sample.tasks
                if any(c.kind.startswith("alternative:") for c in make_controls(t)))
    gold = task.gold.text

    def literal_judge(body: dict[str, Any]) -> Reply:
        verdict = "pass" if gold in body["messages"][-1]["content"] else "fail"
        return text(json.dumps({"rationale": "compared word for word", "verdict": verdict}))

    bench = one_task_bench(tmp_path, task.name)
    with FakeOpenAI(literal_judge) as server:
        result = audit_with(tmp_path, bench, server, "--judge", "openai/literal")
    assert result.exit_code == 0, result.output
    findings = _findings(tmp_path / "out")
    failed = [f for f in findings if f["check"] == "control_alternative_fails"]
    assert failed and all(f["task_id"] == task.id and f["evidence"]["control"].startswith(
        f"{task.id}:alternative:") for f in failed), failed
    assert not any(f["check"] == "control_gold_fails" and f["evidence"]["grader"].startswith(
        "judge:") for f in findings), "the gold itself passes"


def test_a_criterion_the_prompt_never_asks_for_is_reported_per_criterion_named(
        tmp_path: Path, sample) -> None:
    """The lint model names the criterion it finds ungrounded (and an id the task has not):
    one warning on the known criterion, quoting what it requires; the other checks say no."""
    task = sample.task("kestrel_04")
    named = task.criteria[-1].id

    def lint_model(body: dict[str, Any]) -> Reply:
        applies = "never asks for" in body["messages"][-1]["content"]
        return text(json.dumps({"applies": applies, "criterion_ids": [named, "no_such_id"],
                                "source": "prompt", "quote": "Reconcile the totals",
                                "explanation": "the prompt asks for no reconciliation"}))

    bench = one_task_bench(tmp_path, "kestrel_04")
    with FakeOpenAI(lint_model) as server:
        result = audit_with(tmp_path, bench, server, "--lint-model", "openai/lint")
    assert result.exit_code == 0, result.output
    [found] = [f for f in _findings(tmp_path / "out")
               if f["check"] == "criterion_not_asked_by_prompt"]
    assert (found["task_id"], found["criterion_id"], found["severity"]) == (
        task.id, named, "warning")
    assert found["evidence"]["quote"] == "Reconcile the totals"
    assert "the prompt asks for no reconciliation" in found["message"]


def test_an_old_store_is_migrated_in_place(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "audit.db")
    db.executescript(MIGRATIONS[0])
    db.execute("PRAGMA user_version = 1")
    db.execute("INSERT INTO worlds VALUES ('w', '{\"id\": \"w\"}')")
    db.commit()
    db.close()
    with AuditStore(tmp_path / "audit.db") as store:
        assert store.schema_version == len(MIGRATIONS)
        assert [w.id for w in store.worlds()] == ["w"]
        assert store.controls() == []


@pytest.mark.parametrize("decides", [False, True])
def test_a_gold_failing_only_by_the_code_checker_is_as_sure_as_its_fail_decisions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, decides: bool) -> None:
    """A doubt upstream stays a doubt downstream: where the checker's fail decisions are not
    measured at high precision on unseen cases, a gold it reads as failing is a warning that
    says so, and the task is neither unachievable nor a broken oracle; where they are, both."""
    from rubric_audit.audit.job import run_audit
    from rubric_audit.checks import precision
    from rubric_audit.report import summarise
    from tests.conftest import make_benchmark, make_task, make_variant

    monkeypatch.setattr(precision, "code_fails_decide", lambda unseen=None: decides)
    monkeypatch.setattr(summarise, "code_fails_decide", lambda unseen=None: decides)
    task = make_task(gold_response="The revised budget is USD 1.5m.")
    task["rubric"][0]["criteria"] = "States the revised budget is USD 1.2m"
    root = make_benchmark(tmp_path / "b", tasks=[task])
    make_variant(root / "runs", "v1", "m/one", [(task, 1, {"task_1_c1": "fail",
                                                          "task_1_c2": "fail"})])
    result = run_audit(root, None, tmp_path / "out")
    with AuditStore(tmp_path / "out" / "audit.db") as store:
        on_gold = {f.check: f for f in store.findings()
                   if f.check in ("gold_contradicts_criterion", "control_gold_fails")}
    assert set(on_gold) == {"gold_contradicts_criterion", "control_gold_fails"}
    for finding in on_gold.values():
        assert finding.severity == ("error" if decides else "warning")
        assert finding.message.startswith("by the code checker's reading") is not decides
    assert result.summary.achievable.excluded["gold fails"] == (["task_1"] if decides else [])
    assert result.summary.screen.tasks["task_1"] == ("broken_oracle" if decides
                                                     else "uncertified")
