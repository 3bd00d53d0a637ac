"""How far each deterministic check can be trusted: its precision measured on labelled cases.

`measure(corpus)` grades every case of `tests/corpus` (README there) with the code checker, runs
the static checks on the lint cases and answer provenance on the provenance cases;
`bench/check_precision.py` prints the result and writes it to `precision.json` beside this module,
which the audit reads (`load()`). The rules were tuned on that corpus, so its numbers are an upper
bound. Held-out sets written without reading the rules (`tests/corpus/holdout*`) are measured once,
before anyone looks at a case, and that first measurement is kept in `precision_unseen.json`
(`load_unseen()` pools them): it is the estimate for benchmarks the project has never seen, and it
is the one a check is trusted by where it exists. A finding carries both (`calibrate`), and a check
whose trusted precision is under `TRUSTED` speaks only as `info`: a reviewer who meets false alarms
stops reading.

A finding that rests on the code checker's verdict (`evidence.rests_on`: a gold it reads as
failing) carries that verdict's doubt: it is an error only where the checker's fail decisions are
measured at `DECIDES` or better on unseen cases, else a warning "by the code checker's reading".
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rubric_audit.checks.code_grade import CodeVerdict, grade_numeric
from rubric_audit.checks.items import ITEM_CHECKS, ItemAttempt, TaskItems
from rubric_audit.checks.judge_vs_code import judge_disagrees_with_code
from rubric_audit.checks.numbers import find_quantities
from rubric_audit.checks.provenance import answer_value_unsupported
from rubric_audit.core.model import (
    Attempt,
    Criterion,
    CriterionGrade,
    Finding,
    Step,
    Task,
    ToolCall,
    Trajectory,
    WorldContents,
)

TRUSTED = 0.9
DECIDES = 0.98  # unseen precision of the checker's fail decisions an error may rest on
DECIDES_MIN = 50  # ... measured on at least this many unseen fail decisions
DATA = Path(__file__).with_name("precision.json")
UNSEEN = Path(__file__).with_name("precision_unseen.json")
CODE_CHECKER = "code_checker"
CODE_FAIL = "code_checker_fail"  # the checker's fail decisions alone: what a broken gold rests on
LINT_CHECKS = ("criterion_restates_premise", "numeric_criterion_without_tolerance")
PROVENANCE = "answer_value_unsupported"
Case = dict[str, Any]  # one labelled case: a JSON line of the corpus (tests/corpus/<kind>/*.jsonl)


@dataclass(frozen=True)
class CheckPrecision:
    """One check on the corpus: how often it spoke (`fired` of `cases`) and how often rightly.

    For the code checker `fired` counts decided cases (its coverage) and `correct` those equal to
    the expert verdict; for a finding check `correct` counts true findings.
    """

    check: str
    cases: int
    fired: int
    correct: int
    missed: int = 0  # lint cases that should have fired and did not

    @property
    def precision(self) -> float | None:
        return self.correct / self.fired if self.fired else None

    @property
    def coverage(self) -> float | None:
        return self.fired / self.cases if self.cases else None

    def plus(self, other: CheckPrecision) -> CheckPrecision:
        return CheckPrecision(self.check, self.cases + other.cases, self.fired + other.fired,
                              self.correct + other.correct, self.missed + other.missed)


def _cases(corpus: Path, kind: str) -> list[Case]:
    return [json.loads(line) for path in sorted((corpus / kind).glob("*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def code_verdict(case: Case) -> CodeVerdict:
    return grade_numeric(case["criterion"], case["answer"], case["prompt"])


def judge_findings(case: Case, verdict: CodeVerdict) -> list[Finding]:
    """The judge-vs-code findings the audit would write for this case's recorded judge."""
    task = Task(id=case["id"], name=case["id"], world_id="corpus", prompt=case["prompt"],
                criteria=[Criterion(id="c", text=case["criterion"])])
    attempt = Attempt(id=f"corpus/{case['id']}/1", task_id=task.id, model="corpus",
                      variant="corpus", index=1, state="graded", answer=case["answer"])
    judge = CriterionGrade(attempt_id=attempt.id, criterion_id="c", grader="recorded",
                           verdict=case.get("judge") or case["verdict"])
    return list(judge_disagrees_with_code(task, attempt, [judge], {"c": verdict}))


def lint_fires(case: Case) -> bool:
    from rubric_audit.checks.lints import TASK_CHECKS  # lints reads this module's calibration

    check = {c.__name__: c for c in TASK_CHECKS}[case["check"]]
    task = Task(id=case["id"], name=case["id"], world_id="corpus", prompt=case["prompt"],
                criteria=[Criterion(id="c", text=case["criterion"],
                                    explanation=case.get("explanation", ""))])
    return any(f.criterion_id == "c" for f in check(task, WorldContents()))


def provenance_finding(case: Case) -> Finding | None:
    """The `answer_value_unsupported` finding the audit would write for a provenance case: its
    prompt, its tool calls and their results in order, what the task's workbook computes, and
    the answer given through a final_answer call."""
    steps = [Step(role="user", text=case["prompt"]),
             *(Step(role="assistant", tool_calls=[ToolCall(
                 id=f"c{n}", name=call["tool"], arguments=json.dumps(call.get("arguments", {})),
                 result=call["result"])]) for n, call in enumerate(case["tool_calls"], 1)),
             Step(role="assistant", tool_calls=[ToolCall(
                 id="final", name="final_answer", arguments=json.dumps({"answer": case["answer"]}),
                 result=case["answer"])])]
    attempt = Attempt(id=f"corpus/{case['id']}/1", task_id=case["id"], model="corpus",
                      variant="corpus", index=1, state="graded", answer=case["answer"])
    return next(answer_value_unsupported(attempt, Trajectory(format="corpus", steps=steps),
                                         case.get("workbook") or None), None)


def _provenance(cases: list[Case]) -> CheckPrecision:
    """A finding is right when every value it names is one the case labels unsupported (a value
    seen, computed from two seen or what the workbook computes is a false alarm); a case with
    labelled values and no finding is missed."""
    fired = correct = missed = 0
    for case in cases:
        finding = provenance_finding(case)
        labelled = _numbers(case["unsupported"])
        if finding is None:
            missed += bool(labelled)
            continue
        fired += 1
        correct += _numbers(finding.evidence["values"]) <= labelled
    return CheckPrecision(PROVENANCE, len(cases), fired, correct, missed)


def _numbers(texts: list[str]) -> set[float]:
    """The values written in `texts` ("6.5 points" and "6.5" alike), to compare labels with a
    finding's values however each writes them."""
    return {round(q.value, 9) for text in texts for q in find_quantities(text)}


def task_items_of(case: Case) -> TaskItems:
    """An item case's task: its attempts' verdicts (one letter per criterion: p, f, or - for
    none) and each model's strength as the case states it."""
    criteria = tuple(c["id"] for c in case["criteria"])
    attempts = []
    for a in case["attempts"]:
        verdicts = {c: v == "p" for c, v in zip(criteria, a["verdicts"], strict=True) if v != "-"}
        attempts.append(ItemAttempt(key=a["model"], verdicts=verdicts,
                                    passed=bool(verdicts) and all(verdicts.values())))
    return TaskItems(task_id=case["id"], criteria=criteria, attempts=tuple(attempts),
                     strength=dict(case["strength"]))


def item_names(finding: Finding) -> list[str]:
    """What an item finding names: its criteria (none for a task-level signal)."""
    named = finding.evidence.get("criteria")
    return sorted(named) if named else [finding.criterion_id] if finding.criterion_id else []


def _measure_items(cases: list[Case]) -> dict[str, CheckPrecision]:
    """Per item check, on its planted cases: a finding is right where the case expects one
    naming those criteria; an expected finding that does not come is missed."""
    out = {}
    for check in ITEM_CHECKS:
        own = [c for c in cases if c["check"] == check.__name__]
        fired = right = missed = 0
        for case in own:
            found = list(check(task_items_of(case)))
            fired += len(found)
            right += sum(case["expected"] and item_names(f) == sorted(case["names"])
                         for f in found)
            missed += case["expected"] and not found
        out[check.__name__] = CheckPrecision(check.__name__, len(own), fired, right, missed)
    return out


def measure(corpus: Path) -> dict[str, CheckPrecision]:
    """Every measured check's record on the corpus at `corpus` (criteria/, lints/, provenance/
    and items/)."""
    criteria = _cases(corpus, "criteria")
    decided = correct = failed = failed_right = 0
    findings: dict[str, list[bool]] = {}
    for case in criteria:
        verdict = code_verdict(case)
        if verdict.verdict != "not_applicable":
            decided += 1
            correct += verdict.verdict == case["verdict"]
        if verdict.verdict == "fail":
            failed += 1
            failed_right += case["verdict"] == "fail"
        for finding in judge_findings(case, verdict):
            findings.setdefault(finding.check, []).append(verdict.verdict == case["verdict"])
    out = {CODE_CHECKER: CheckPrecision(CODE_CHECKER, len(criteria), decided, correct),
           CODE_FAIL: CheckPrecision(CODE_FAIL, len(criteria), failed, failed_right)}
    for check in ("judge_failed_value_within_tolerance", "judge_credited_hedge",
                  "judge_passed_value_outside_tolerance"):
        true = findings.get(check, [])
        out[check] = CheckPrecision(check, len(criteria), len(true), sum(true))
    lints = _cases(corpus, "lints")
    for check in LINT_CHECKS:
        cases = [c for c in lints if c["check"] == check]
        fired = [c for c in cases if lint_fires(c)]
        out[check] = CheckPrecision(check, len(cases), len(fired),
                                    sum(c["expected"] for c in fired),
                                    sum(c["expected"] for c in cases) - sum(c["expected"]
                                                                            for c in fired))
    provenance = _cases(corpus, "provenance")
    if provenance:
        out[PROVENANCE] = _provenance(provenance)
    items = _cases(corpus, "items")
    if items:
        out |= _measure_items(items)
    return out


def write(measured: dict[str, CheckPrecision], path: Path = DATA) -> None:
    rows = {name: asdict(p) for name, p in sorted(measured.items())}
    path.write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def load(path: Path = DATA) -> dict[str, CheckPrecision]:
    """The measured precision per check, as the bench script last wrote it (empty if never)."""
    if not path.is_file():
        return {}
    return {name: CheckPrecision(**row)
            for name, row in json.loads(path.read_text(encoding="utf-8")).items()}


def first_measurement(name: str, measured: dict[str, CheckPrecision], commit: str, date: str,
                      path: Path = UNSEEN) -> None:
    """Record the first measurement of the held-out set `name`; a set is measured first only
    once, so an existing record is never replaced (ValueError)."""
    sets = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    if name in sets:
        raise ValueError(f"{name} was first measured at {sets[name]['commit']} on "
                         f"{sets[name]['date']}; a later measurement is not a first one")
    sets[name] = {"commit": commit, "date": date,
                  "checks": {check: asdict(p) for check, p in sorted(measured.items())}}
    path.write_text(json.dumps(sets, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def load_unseen(path: Path = UNSEEN) -> dict[str, CheckPrecision]:
    """Per check, the first measurements of every held-out set pooled (empty if none)."""
    if not path.is_file():
        return {}
    pooled: dict[str, CheckPrecision] = {}
    for record in json.loads(path.read_text(encoding="utf-8")).values():
        for check, row in record["checks"].items():
            first = CheckPrecision(**row)
            pooled[check] = pooled[check].plus(first) if check in pooled else first
    return pooled


def trusted(corpus: CheckPrecision | None, unseen: CheckPrecision | None) -> float | None:
    """The precision a check is trusted by: on unseen cases where it spoke there, else on the
    corpus it was tuned on."""
    if unseen is not None and unseen.precision is not None:
        return unseen.precision
    return None if corpus is None else corpus.precision


def code_fails_decide(unseen: dict[str, CheckPrecision] | None = None) -> bool:
    """Whether the code checker's fail decisions are trusted enough for an error to rest on one:
    measured at DECIDES or better on at least DECIDES_MIN unseen fail decisions."""
    fails = (load_unseen() if unseen is None else unseen).get(CODE_FAIL)
    return (fails is not None and fails.precision is not None and fails.fired >= DECIDES_MIN
            and fails.precision >= DECIDES)


def _doubted(finding: Finding, unseen: dict[str, CheckPrecision]) -> Finding:
    """A finding resting on the code checker's fail verdict, as sure as that verdict is."""
    if finding.evidence.get("rests_on") != CODE_FAIL or code_fails_decide(unseen):
        return finding
    fails = unseen.get(CODE_FAIL)
    measured = (f"its fail decisions right on {fails.correct} of {fails.fired} unseen cases"
                if fails is not None and fails.fired else
                "its fail decisions not yet measured on unseen cases")
    return finding.model_copy(update={
        "severity": "warning" if finding.severity == "error" else finding.severity,
        "message": f"by the code checker's reading ({measured}): {finding.message}"})


def calibrate(findings: Iterable[Finding], measured: dict[str, CheckPrecision] | None = None,
              unseen: dict[str, CheckPrecision] | None = None) -> Iterator[Finding]:
    """Findings with their check's measured precision in the evidence (corpus and unseen); a
    check trusted under TRUSTED is lowered to info, and one resting on a code-checker fail that
    is not trusted to decide (`code_fails_decide`) to a warning."""
    measured = load() if measured is None else measured
    unseen = load_unseen() if unseen is None else unseen
    for finding in (_doubted(f, unseen) for f in findings):
        corpus, held_out = measured.get(finding.check), unseen.get(finding.check)
        precision = trusted(corpus, held_out)
        if precision is None:
            yield finding
            continue
        confidence: dict[str, float | int] = {}
        if corpus is not None and corpus.precision is not None:
            confidence |= {"corpus_precision": round(corpus.precision, 4),
                           "corpus_findings": corpus.fired, "corpus_cases": corpus.cases}
        if held_out is not None and held_out.precision is not None:
            confidence |= {"unseen_precision": round(held_out.precision, 4),
                           "unseen_findings": held_out.fired, "unseen_cases": held_out.cases}
        severity = finding.severity if precision >= TRUSTED else "info"
        evidence = {**finding.evidence, "confidence": confidence}
        yield finding.model_copy(update={"severity": severity, "evidence": evidence})
