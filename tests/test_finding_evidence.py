"""Every finding kind carries the evidence a reviewer needs to judge it without leaving the finding:
the text it quotes, the values it compared and where each came from.

`NEEDS` names, per check, the evidence keys a reviewer reads; each kind is produced here (from the
sample audit, or by calling its check on a small case) and its evidence must hold every key,
non-empty. A check the code can emit that `NEEDS` does not list fails the registry test, so a
new check must say what its reviewer needs.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from rubric_audit.audit.job import AuditOptions, run_audit
from rubric_audit.audit.stages import benchmark_findings, runs_findings
from rubric_audit.checks import lints
from rubric_audit.checks.code_grade import code_verdicts
from rubric_audit.checks.controls import control_findings, judge_flips_on_repeats
from rubric_audit.checks.items import ITEM_CHECKS
from rubric_audit.checks.judge_vs_code import judge_disagrees_with_code
from rubric_audit.checks.model_lints import MODEL_CHECKS
from rubric_audit.core.model import (
    Attempt,
    ChatMessage,
    ChatSpace,
    Control,
    ControlGrade,
    Criterion,
    CriterionGrade,
    Finding,
    MailMessage,
    Task,
    WorldContents,
)
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.load.runs import load_runs
from tests.conftest import SAMPLE, make_benchmark, make_task, make_variant

ROOT = Path(__file__).resolve().parent.parent
JUDGE_VS_CODE = ("attempt", "grader", "judge_rationale", "code_reason", "targets")
CONTROL = ("control", "grader", "answer", "verdicts")
MODEL_LINT = ("source", "quote", "model")

NEEDS: dict[str, tuple[str, ...]] = {
    # static task checks: the criterion and the text that contradicts, repeats or lacks it
    "criterion_contradicts_explanation": ("criterion_text", "criterion_value", "explanation",
                                          "explanation_value"),
    "gold_contradicts_criterion": ("criterion_text", "gold", "code_reason", "rests_on"),
    "criteria_conflict_on_quantity": ("criteria", "values"),
    "criterion_restates_premise": ("criterion_text", "premise"),
    "criterion_terms_absent_from_world": ("criterion_text", "absent_terms"),
    "prompt_names_missing_file": ("file", "world_files"),
    "rubric_only_negative_criteria": ("criteria",),
    "criterion_duplicated": ("criterion_text",),
    "numeric_criterion_without_tolerance": ("criterion_text", "values"),
    "task_depends_on_messages": ("sources",),
    # a judge against the code checker: both verdicts, the judge's words, the values quoted
    "judge_failed_value_within_tolerance": JUDGE_VS_CODE,
    "judge_passed_value_outside_tolerance": JUDGE_VS_CODE,
    "judge_credited_hedge": JUDGE_VS_CODE,
    # controls: the synthetic answer and each grader's verdict with its reason
    "control_gold_fails": CONTROL,
    "control_null_passes": CONTROL,
    "control_near_miss_passes": CONTROL,
    "control_alternative_fails": CONTROL,
    "judge_flips_on_repeats": ("grader", "flip_rate", "flipped"),
    # gold recomputation: the workbook, the inputs set in it with their sources, both values
    "gold_recompute_mismatch": ("workbook", "inputs", "label", "value", "criterion_value",
                                "tolerance"),
    "regold_recipe_error": ("recipe",),
    "answer_value_unsupported": ("attempt_id", "values", "answer"),
    # input problems: what is wrong and where
    "input_unknown_world": ("world_id", "known_worlds"),
    "input_world_files_missing": ("world_id",),
    "input_task_without_criteria": (),
    "input_empty_criterion": (),
    "input_missing_gold_file": (),
    "input_missing_task_files": (),
    "input_text_too_long_to_read": (),
    "input_unknown_task": ("attempt", "source"),
    "input_grade_mismatch": ("attempt",),
    "input_id_collision": ("attempt", "sources"),
    "input_attempt_conflict": ("stored_source", "skipped_source"),
    "input_variants_disagree": ("kept", "other"),
    "input_graded_under_earlier_version": ("attempts", "lineage"),
    **{check: MODEL_LINT for check in MODEL_CHECKS},
    # item statistics: the statistic, its value and the attempts (and criteria) behind it
    "task_fails_on_same_criteria": ("criteria", "statistic", "value", "attempts"),
    "criterion_never_varies": ("statistic", "value", "attempts"),
    "criteria_redundant": ("criteria", "statistic", "value", "attempts", "chance"),
    "criterion_negative_discrimination": ("statistic", "value", "attempts", "chance",
                                          "passes_by_model"),
    "task_negative_discrimination": ("statistic", "value", "attempts", "chance",
                                     "passes_by_model"),
}


def emitted_checks() -> set[str]:
    """Every check name the code can emit: `check="..."` in a Finding, `check, message = ("...",
    ...)` where a check chooses its name, the static checks and item statistics by function
    name, and the model-assisted ones."""
    names = ({c.__name__ for c in lints.TASK_CHECKS} | {c.__name__ for c in ITEM_CHECKS}
             | set(MODEL_CHECKS))
    for path in (ROOT / "rubric_audit").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            value: ast.expr | None = None
            if isinstance(node, ast.keyword) and node.arg == "check":
                value = node.value
            elif (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple)
                  and isinstance(node.value, ast.Tuple)):
                first = node.targets[0].elts[0]
                if isinstance(first, ast.Name) and first.id == "check":
                    value = node.value.elts[0]
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                names.add(value.value)
    return names


def test_every_check_the_code_emits_says_what_its_reviewer_needs() -> None:
    emitted = emitted_checks()
    assert sorted(emitted - set(NEEDS)) == []
    assert sorted(set(NEEDS) - emitted) == []  # and names no check that no longer exists


def _filled(check: str, key: str, value: Any) -> bool:
    """Present and not empty; a null control's answer is empty by design, and a recipe may set no
    input (the workbook as it is)."""
    if (check, key) in (("control_null_passes", "answer"), ("gold_recompute_mismatch", "inputs")):
        return value is not None
    return value not in (None, "", [], {})


def assert_reviewable(finding: Finding) -> None:
    missing = [k for k in NEEDS[finding.check]
               if not _filled(finding.check, k, finding.evidence.get(k))]
    assert not missing, f"{finding.check}: evidence lacks {missing}: {finding.evidence}"
    assert finding.message.strip()


@pytest.fixture(scope="module")
def sample_findings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Finding]]:
    out = tmp_path_factory.mktemp("evidence") / "out"
    run_audit(SAMPLE, None, out, AuditOptions())
    found: dict[str, list[Finding]] = {}
    for line in (out / "findings.jsonl").read_text(encoding="utf-8").splitlines():
        finding = Finding.model_validate(json.loads(line))
        found.setdefault(finding.check, []).append(finding)
    return found


SAMPLE_KINDS = ["criterion_contradicts_explanation", "gold_contradicts_criterion",
                "criteria_conflict_on_quantity", "criterion_restates_premise",
                "criterion_terms_absent_from_world", "prompt_names_missing_file",
                "rubric_only_negative_criteria", "numeric_criterion_without_tolerance",
                "task_depends_on_messages", "judge_failed_value_within_tolerance",
                "judge_credited_hedge", "control_gold_fails", "control_null_passes",
                "gold_recompute_mismatch", "answer_value_unsupported",
                "task_fails_on_same_criteria", "criterion_never_varies",
                "task_negative_discrimination"]


@pytest.mark.parametrize("check", SAMPLE_KINDS)
def test_the_sample_audits_findings_carry_what_a_reviewer_needs(
        sample_findings: dict[str, list[Finding]], check: str) -> None:
    assert sample_findings.get(check), f"the sample audit no longer finds {check}"
    for finding in sample_findings[check]:
        assert_reviewable(finding)


def test_a_restated_premise_quotes_the_prompt_sentence_it_restates(
        sample_findings: dict[str, list[Finding]]) -> None:
    task = load_benchmark(SAMPLE).task(sample_findings["criterion_restates_premise"][0].task_id)
    for finding in sample_findings["criterion_restates_premise"]:
        assert finding.evidence["premise"] in task.prompt


def test_messages_a_task_depends_on_are_named_with_the_sentence_that_says_it(
        sample_findings: dict[str, list[Finding]]) -> None:
    for finding in sample_findings["task_depends_on_messages"]:
        for source in finding.evidence["sources"]:
            assert source["where"].startswith(("mail from", "chat "))
            assert source["quote"]


def test_a_recomputed_gold_names_its_workbook_and_each_input_with_its_source(
        sample_findings: dict[str, list[Finding]]) -> None:
    for finding in sample_findings["gold_recompute_mismatch"]:
        assert all(i["cell"] and "source" in i for i in finding.evidence["inputs"])


def _task(*criteria: str, prompt: str = "What is the FY2025 revenue?") -> Task:
    return Task(id="t", name="t", world_id="w", prompt=prompt,
                criteria=[Criterion(id=f"c{i}", text=text) for i, text in enumerate(criteria, 1)])


def test_a_duplicated_criterion_quotes_it() -> None:
    task = _task("States revenue of GBP 4.2m", "States revenue of GBP 4.2m")
    [finding] = lints.criterion_duplicated(task, WorldContents())
    assert_reviewable(finding)


def test_a_message_source_is_named_when_only_the_mail_says_a_value() -> None:
    task = _task("States a net debt of NOK 455.0m", prompt="What is the equity value?")
    world = WorldContents(
        mail=[MailMessage(message_id="<m>", mailbox="inbox", date="2025-03-01", sender="cfo@x",
                          subject="Net debt", body="Hi all. Net debt at 28 February was NOK "
                                                   "455.0m. Thanks.")],
        chat=[ChatSpace(name="Deal", messages=[ChatMessage(message_id="c", author="Mari",
                                                           text="Lunch at noon?")])])
    [finding] = lints.task_depends_on_messages(task, world)
    assert_reviewable(finding)
    assert finding.evidence["sources"] == [{"where": "mail from cfo@x", "title": "Net debt",
                                           "quote": "Net debt at 28 February was NOK 455.0m."}]


@pytest.mark.parametrize(("judge", "answer", "check"), [
    ("fail", "Revenue was GBP 4.2m.", "judge_failed_value_within_tolerance"),
    ("pass", "Revenue was GBP 6.9m.", "judge_passed_value_outside_tolerance"),
    ("pass", "Revenue was GBP 4.2m or possibly GBP 5.1m.", "judge_credited_hedge"),
])
def test_a_judge_against_the_code_checker_quotes_both(judge: str, answer: str, check: str
                                                      ) -> None:
    task = _task("States FY2025 revenue of GBP 4.2m")
    attempt = Attempt(id="v/t/1", task_id="t", model="m", variant="v", index=1, state="graded",
                      answer=answer)
    grades = [CriterionGrade(attempt_id=attempt.id, criterion_id="c1", grader="judge:j",
                             verdict=judge, rationale="The value is not what was asked.")]
    [finding] = judge_disagrees_with_code(task, attempt, grades, code_verdicts(task, attempt))
    assert finding.check == check
    assert_reviewable(finding)
    [target] = finding.evidence["targets"]
    assert target["answer_values"] and all(q in answer for q in target["quotes"])


@pytest.mark.parametrize(("kind", "answer", "verdict", "check"), [
    ("near_miss:outside_tolerance", "Revenue was GBP 4.6m.", "pass", "control_near_miss_passes"),
    ("alternative:units", "Revenue was 4.2 million pounds.", "fail", "control_alternative_fails"),
])
def test_a_control_names_its_answer_and_each_verdict(kind: str, answer: str, verdict: str,
                                                     check: str) -> None:
    task = _task("States FY2025 revenue of GBP 4.2m")
    control = Control(id=f"t:{kind}", task_id="t", task_version=task.version(), kind=kind,
                      answer=answer, expect="fail" if verdict == "pass" else "pass",
                      criterion_id="c1")
    grades = [CriterionGrade(attempt_id=control.id, criterion_id="c1", grader="judge:j",
                             verdict=verdict, rationale="Matches." if verdict == "pass" else "No.")]
    [finding] = control_findings(task, [(control, grades)])
    assert finding.check == check
    assert_reviewable(finding)


def test_a_judge_that_flips_names_each_control_and_its_verdicts_in_order() -> None:
    task = _task("States FY2025 revenue of GBP 4.2m")
    grades = [ControlGrade(grade=CriterionGrade(attempt_id=f"t:{control}", criterion_id="c1",
                                                grader="judge:j", verdict=verdict),
                           repeat=repeat, task_version=task.version())
              for control, verdicts in (("gold", ("pass", "fail", "pass")),
                                        ("null", ("fail", "fail", "fail")))
              for repeat, verdict in enumerate(verdicts)]
    [finding] = judge_flips_on_repeats({"t": task}, grades)
    assert_reviewable(finding)
    assert finding.evidence["flipped"] == {"t:gold": ["pass", "fail", "pass"]}
    assert finding.evidence["flip_rate"] == 0.5


def test_a_broken_recipe_names_its_file(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b")
    (root / "regold").mkdir()
    (root / "regold" / "task_1.toml").write_text("workbook = \n")
    from rubric_audit.checks.regold import regold_all

    [finding] = regold_all(load_benchmark(root))
    assert finding.check == "regold_recipe_error"
    assert_reviewable(finding)


def test_input_findings_name_what_is_wrong_and_where(tmp_path: Path) -> None:
    bench = make_benchmark(tmp_path / "b", tasks=[make_task(world_id="world_zzz")])
    task = make_task()
    make_variant(tmp_path / "runs", "v1", "m/one", [
        (task, 1, {"task_1_c1": "pass", "bogus_id": "fail"}),
        (make_task("task_stranger"), 1, {"task_stranger_c1": "pass"}),
    ])
    found = [*benchmark_findings(load_benchmark(bench)),
             *runs_findings(load_runs([tmp_path / "runs"]), load_benchmark(bench))]
    assert {"input_unknown_world", "input_unknown_task", "input_grade_mismatch"} <= {
        f.check for f in found}
    for finding in found:
        assert_reviewable(finding)
