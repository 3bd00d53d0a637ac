"""Every corpus file keeps the schema in tests/corpus/README.md, so the precision bench can trust it."""

from __future__ import annotations

import json
from pathlib import Path

CORPUS = Path(__file__).parent / "corpus"
CLASSES = {"identifier", "within_prose", "prompt_rounding", "subject_binding", "non_numeric_claim",
           "false_hedge", "implied_unit", "plain_fail", "ordinary",
           # the classes #25 named, and the shapes a held-out set's author chose
           "sign_direction", "units", "hedge_revision", "multi_value", "approx_inequality",
           "words_scale_duration", "dates_periods", "rival_binding", "percent_points", "own_shape"}
CRITERIA_FIELDS = {"id", "domain", "failure_class", "prompt", "criterion", "explanation", "answer",
                   "verdict", "code", "why"}
LINT_FIELDS = {"id", "domain", "check", "prompt", "criterion", "explanation", "expected", "why"}
LINT_CHECKS = {"criterion_restates_premise", "numeric_criterion_without_tolerance"}
ITEM_FIELDS = {"id", "domain", "check", "task", "criteria", "attempts", "strength", "expected",
               "names", "why"}


def read_cases(kind: str) -> list[dict]:
    cases = []
    """Every case of a kind: the tuned corpus's and every held-out set's."""
    for path in sorted([*(CORPUS / kind).glob("*.jsonl"), *CORPUS.glob(f"holdout*/{kind}/*.jsonl")]):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            case = json.loads(line)
            assert isinstance(case, dict), f"{path.name}:{number} is not an object"
            case["_where"] = f"{path.relative_to(CORPUS)}:{number}"
            cases.append(case)
    return cases


def test_criteria_cases_keep_the_schema() -> None:
    cases = read_cases("criteria")
    assert cases
    for case in cases:
        where = case.pop("_where")
        assert case.keys() >= CRITERIA_FIELDS, f"{where} lacks {CRITERIA_FIELDS - case.keys()}"
        assert case.keys() <= CRITERIA_FIELDS | {"judge", "source"}, f"{where} has unknown fields"
        assert case["failure_class"] in CLASSES, where
        assert case["verdict"] in {"pass", "fail"}, where
        assert case["code"] in {"pass", "fail", "not_applicable"}, where
        assert case.get("judge") in {None, "pass", "fail"}, where
        assert case.get("judge") != case["verdict"], f"{where}: a recorded judge differs from the verdict"
        assert case["criterion"].strip() and case["answer"].strip() and case["why"].strip(), where


def test_lint_cases_keep_the_schema() -> None:
    cases = read_cases("lints")
    for case in cases:
        where = case.pop("_where")
        assert case.keys() == LINT_FIELDS, f"{where} fields differ: {case.keys() ^ LINT_FIELDS}"
        assert case["check"] in LINT_CHECKS, where
        assert isinstance(case["expected"], bool), where
        assert case["prompt"].strip() and case["criterion"].strip() and case["why"].strip(), where


def test_item_cases_keep_the_schema() -> None:
    from rubric_audit.checks.items import ITEM_CHECK_NAMES

    cases = read_cases("items")
    assert {case["check"] for case in cases} == ITEM_CHECK_NAMES
    for case in cases:
        where = case.pop("_where")
        assert case.keys() == ITEM_FIELDS, f"{where} fields differ: {case.keys() ^ ITEM_FIELDS}"
        criteria = [c["id"] for c in case["criteria"]]
        assert criteria and all(c["text"].strip() for c in case["criteria"]), where
        assert all(len(a["verdicts"]) == len(criteria) and set(a["verdicts"]) <= set("pf-")
                   and a["model"] in case["strength"] for a in case["attempts"]), where
        assert isinstance(case["expected"], bool) and set(case["names"]) <= set(criteria), where
        assert case["expected"] or not case["names"], f"{where}: names a finding it expects none of"
        assert case["task"].strip() and case["why"].strip(), where


def test_ids_are_unique_across_the_corpus() -> None:
    ids = [case["id"] for case in read_cases("criteria") + read_cases("lints")
           + read_cases("items")]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
