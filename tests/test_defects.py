"""DEFECTS.md against the offline audit of the sample: every planted defect is caught by the check
it names (checks that need a model are only required to exist), and sound tasks get nothing
above info. Findings about graders (judge_*) concern attempts, not tasks, and are tested apart."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rubric_audit.checks.lints import TASK_CHECKS
from rubric_audit.checks.model_lints import MODEL_CHECKS
from rubric_audit.cli import app
from tests.conftest import SAMPLE
from tests.test_sample import DEFECT_ROW

OFFLINE_CHECKS = {c.__name__ for c in TASK_CHECKS} | {
    "control_gold_fails", "control_null_passes", "gold_recompute_mismatch"}


@pytest.fixture(scope="module")
def findings(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("audit") / "out"
    result = CliRunner().invoke(app, ["audit", str(SAMPLE), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in (out / "findings.jsonl").read_text().splitlines()]


def rows() -> list[tuple[str, str, str, list[str], bool]]:
    out = []
    for line in (SAMPLE / "DEFECTS.md").read_text().splitlines():
        match = DEFECT_ROW.match(line)
        if match:
            task_id, name, kind, _, checks, _ = match.groups()
            named = re.findall(r"`(\w+)`( \(model\))?", checks)
            out.append((task_id, name, kind, [c for c, model in named if not model],
                        any(model for _, model in named)))
    return out


def test_every_named_check_exists() -> None:
    for _, name, _, offline, _ in rows():
        assert set(offline) <= OFFLINE_CHECKS, name
    text = (SAMPLE / "DEFECTS.md").read_text()
    assert set(re.findall(r"`(\w+)` \(model\)", text)) <= set(MODEL_CHECKS)


@pytest.mark.parametrize(("task_id", "name", "kind", "offline", "model"), rows(),
                         ids=[r[1] for r in rows()])
def test_planted_defect_is_caught_and_sound_task_is_quiet(findings, task_id, name, kind,
                                                           offline, model) -> None:
    own = [f for f in findings if f["task_id"] == task_id and not f["check"].startswith("judge_")]
    if kind == "sound":
        assert [f["check"] for f in own if f["severity"] != "info"] == []
        return
    fired = {f["check"] for f in own}
    assert set(offline) <= fired, f"{name}: expected {offline}, fired {sorted(fired)}"
    assert offline or model, f"{name} names no check at all"


def test_model_only_defect_is_reported_as_skipped(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["audit", str(SAMPLE), "--out", str(tmp_path / "o")])
    assert "prompt_has_two_readings" in result.stdout and "--lint-model MODEL" in result.stdout


def test_the_planted_judge_errors_in_the_runs_are_caught(findings) -> None:
    by_name = {name: task_id for task_id, name, *_ in rows()}
    judged = {(f["task_id"], f["check"]) for f in findings if f["check"].startswith("judge_")}
    assert judged == {(by_name["nordlys_07"], "judge_credited_hedge"),
                      (by_name["kestrel_05"], "judge_failed_value_within_tolerance")}


def test_item_statistics_name_the_planted_all_fail_criteria(findings) -> None:
    """Every task both models failed on every attempt is an item signal naming the criterion
    every attempt failed (the planted carbon-offset criterion of kestrel_02, the second of
    kestrel_03's conflicting totals), and kestrel_04, whose rubric accepts one reading of the
    prompt, is one the weaker model passes and the stronger fails."""
    names = {r[0]: r[1] for r in rows()}
    shared = {names[f["task_id"]]: f["evidence"]["criteria"] for f in findings
              if f["check"] == "task_fails_on_same_criteria"}
    assert set(shared) == {"kestrel_02", "kestrel_03", "meridian_04", "meridian_05",
                           "nordlys_02", "nordlys_03", "nordlys_04"}
    task = {t["task_id"]: t for t in json.loads((SAMPLE / "tasks_and_rubrics.json").read_text())}
    by_name = {names[t]: task[t] for t in task}
    assert shared["kestrel_02"] == [by_name["kestrel_02"]["rubric"][2]["verifier_id"]]
    assert shared["kestrel_03"] == [by_name["kestrel_03"]["rubric"][1]["verifier_id"]]
    assert [names[f["task_id"]] for f in findings
            if f["check"] == "task_negative_discrimination"] == ["kestrel_04"]
    assert all(f["severity"] == "info" for f in findings if f["check"].startswith(
        ("task_fails", "task_negative", "criterion_never", "criteria_redundant")))
