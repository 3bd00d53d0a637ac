"""How far each deterministic check can be trusted: its precision measured on the labelled corpus.

`measure(corpus)` grades every case of `tests/corpus` (README there) with the code checker and
runs the static checks on the lint cases; `bench/check_precision.py` prints the result and writes
it to `precision.json` beside this module, which the audit reads (`load()`). A finding carries its
check's measured precision (`calibrate`), and a check whose precision on the corpus is under
`TRUSTED` speaks only as `info`: a reviewer who meets false alarms stops reading.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from rubric_audit.checks.code_grade import CodeVerdict, grade_numeric, judge_disagrees_with_code
from rubric_audit.model import Attempt, Criterion, CriterionGrade, Finding, Task, WorldContents

TRUSTED = 0.9
DATA = Path(__file__).with_name("precision.json")
CODE_CHECKER = "code_checker"
LINT_CHECKS = ("criterion_restates_premise", "numeric_criterion_without_tolerance")


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


def _cases(corpus: Path, kind: str) -> list[dict]:
    return [json.loads(line) for path in sorted((corpus / kind).glob("*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def code_verdict(case: dict) -> CodeVerdict:
    return grade_numeric(case["criterion"], case["answer"], case["prompt"])


def judge_findings(case: dict, verdict: CodeVerdict) -> list[Finding]:
    """The judge-vs-code findings the audit would write for this case's recorded judge."""
    task = Task(id=case["id"], name=case["id"], world_id="corpus", prompt=case["prompt"],
                criteria=[Criterion(id="c", text=case["criterion"])])
    attempt = Attempt(id=f"corpus/{case['id']}/1", task_id=task.id, model="corpus",
                      variant="corpus", index=1, state="graded", answer=case["answer"])
    judge = CriterionGrade(attempt_id=attempt.id, criterion_id="c", grader="recorded",
                           verdict=case.get("judge") or case["verdict"])
    return list(judge_disagrees_with_code(task, attempt, [judge], {"c": verdict}))


def lint_fires(case: dict) -> bool:
    from rubric_audit.checks.lints import TASK_CHECKS  # lints reads this module's calibration

    check = {c.__name__: c for c in TASK_CHECKS}[case["check"]]
    task = Task(id=case["id"], name=case["id"], world_id="corpus", prompt=case["prompt"],
                criteria=[Criterion(id="c", text=case["criterion"],
                                    explanation=case.get("explanation", ""))])
    return any(f.criterion_id == "c" for f in check(task, WorldContents()))


def measure(corpus: Path) -> dict[str, CheckPrecision]:
    """Every measured check's record on the corpus at `corpus` (criteria/ and lints/)."""
    criteria = _cases(corpus, "criteria")
    decided = correct = 0
    findings: dict[str, list[bool]] = {}
    for case in criteria:
        verdict = code_verdict(case)
        if verdict.verdict != "not_applicable":
            decided += 1
            correct += verdict.verdict == case["verdict"]
        for finding in judge_findings(case, verdict):
            findings.setdefault(finding.check, []).append(verdict.verdict == case["verdict"])
    out = {CODE_CHECKER: CheckPrecision(CODE_CHECKER, len(criteria), decided, correct)}
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


def calibrate(findings: Iterable[Finding],
              measured: dict[str, CheckPrecision] | None = None) -> Iterator[Finding]:
    """Findings with their check's corpus precision in the evidence; a check measured under
    TRUSTED is lowered to info."""
    measured = load() if measured is None else measured
    for finding in findings:
        record = measured.get(finding.check)
        if record is None or record.precision is None:
            yield finding
            continue
        severity = finding.severity if record.precision >= TRUSTED else "info"
        evidence = {**finding.evidence, "confidence": {
            "corpus_precision": round(record.precision, 4), "corpus_findings": record.fired,
            "corpus_cases": record.cases}}
        yield finding.model_copy(update={"severity": severity, "evidence": evidence})
