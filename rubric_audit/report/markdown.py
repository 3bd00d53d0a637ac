"""report.md: the human-readable audit report."""

from __future__ import annotations

from rubric_audit.model import Finding
from rubric_audit.report.summary import AuditSummary


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def render_markdown(summary: AuditSummary, findings: list[Finding]) -> str:
    """A short report: scores per model and variant, unavailable attempts, findings."""
    lines = [f"# Audit of {summary.benchmark or 'recorded runs'}", "",
             f"{summary.tasks} tasks, {summary.attempts} attempts. "
             f"Model calls made by this audit: {summary.model_calls}.", ""]
    lines += ["## Scores", ""]
    if summary.scores:
        lines += ["| model | variant | grader | tasks scored | graded | unavailable | pass@1 "
                  "| mean criterion score |", "|---|---|---|---|---|---|---|---|"]
        lines += [f"| {s.model} | {s.variant} | {s.grader} | {s.tasks_scored}/{s.tasks} | "
                  f"{s.graded_attempts} | {s.unavailable_attempts} | {_pct(s.pass_at_1)} | "
                  f"{_pct(s.mean_criterion_score)} |" for s in summary.scores]
        lines += ["", "pass@1 is the mean over tasks of the share of graded attempts that pass "
                      "every criterion; unavailable attempts are not counted as failures."]
    else:
        lines.append("No recorded runs were given.")
    if summary.unavailable:
        lines += ["", "## Unavailable attempts", ""]
        lines += [f"- `{u.attempt}`: {u.reason}" for u in summary.unavailable]
    code = summary.code_checker
    lines += ["", "## Numeric criteria checked in code", "",
              f"{code.checked} of {code.criteria} (attempt, criterion) pairs decided by the code "
              f"checker; {code.not_applicable} not applicable."]
    for reason, count in code.not_applicable_reasons.items():
        lines.append(f"- not applicable, {reason}: {count}")
    for a in code.agreement:
        rate = "n/a" if a.rate is None else f"{100 * a.rate:.1f}%"
        lines.append(f"- agreement with `{a.grader}`: {a.agree}/{a.checked} ({rate})")
    counts = summary.findings.by_severity
    lines += ["", "## Findings", "",
              f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} info."]
    if findings:
        lines += ["", "| severity | task | criterion | check | message |", "|---|---|---|---|---|"]
        order = {"error": 0, "warning": 1, "info": 2}
        for f in sorted(findings, key=lambda f: (order[f.severity], f.task_id or "", f.check)):
            message = f.message.replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {f.severity} | {f.task_id or ''} | {f.criterion_id or ''} | "
                         f"`{f.check}` | {message} |")
    return "\n".join(lines) + "\n"
