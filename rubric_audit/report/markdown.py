"""report.md: the human-readable audit report, rendered from the summary and the findings."""

from __future__ import annotations

from rubric_audit.model import Finding
from rubric_audit.report.summary import AuditSummary
from rubric_audit.scores import VariantScore

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _score_table(scores: list[VariantScore]) -> list[str]:
    if not scores:
        return ["No graded attempts."]
    return ["| model | variant | grader | tasks scored | graded | unavailable | pass@1 "
            "| mean criterion score |", "|---|---|---|---|---|---|---|---|",
            *[f"| {s.model} | {s.variant} | {s.grader} | {s.tasks_scored}/{s.tasks} | "
              f"{s.graded_attempts} | {s.unavailable_attempts} | {_pct(s.pass_at_1)} | "
              f"{_pct(s.mean_criterion_score)} |" for s in scores]]


def render_markdown(summary: AuditSummary, findings: list[Finding]) -> str:
    """Scores as graded and against what was achievable, checks, controls, screen, findings."""
    lines = [f"# Audit of {summary.benchmark or 'recorded runs'}", "",
             f"{summary.tasks} tasks, {summary.attempts} attempts."]
    if summary.models_used:
        lines.append(f"Models used by this audit: {', '.join(summary.models_used)}.")
    else:
        lines.append("Ran offline: no model was called.")
    if summary.skipped:
        lines += ["", "Not run (each needs a model):"]
        lines += [f"- {s['step']}: enable with `{s['enable_with']}`" for s in summary.skipped]
    if summary.model_failures:
        lines += ["", "Model calls that failed (those checks are missing, not failed):"]
        lines += [f"- {_cell(f)}" for f in summary.model_failures]
    if summary.alarms:
        lines += ["", "## Alarms", ""] + [f"- {a}" for a in summary.alarms]

    lines += ["", "## Scores as graded", "", *_score_table(summary.scores), "",
              "pass@1 is the mean over tasks of the share of graded attempts that pass every "
              "criterion; unavailable attempts are not counted as failures."]
    a = summary.achievable
    lines += ["", "## Scores against what was achievable", "",
              f"{a.tasks} of {summary.tasks} tasks are achievable (the gold does not fail and an "
              f"empty answer or refusal does not pass); {a.certified} of them certified (gold "
              f"shown to pass and null shown to fail)."]
    lines += [f"- excluded, {why}: {len(ids)}" for why, ids in a.excluded.items() if ids]
    lines += ["", *_score_table(a.scores)]
    if summary.unavailable:
        lines += ["", "## Unavailable attempts", ""]
        lines += [f"- `{u.attempt}`: {_cell(u.reason)}" for u in summary.unavailable]

    code = summary.code_checker
    lines += ["", "## Numeric criteria checked in code", "",
              f"{code.checked} of {code.criteria} (attempt, criterion) pairs decided by the code "
              f"checker; {code.not_applicable} not applicable."]
    lines += [f"- not applicable, {reason}: {n}" for reason, n in
              code.not_applicable_reasons.items()]
    lines += [f"- agreement with `{g.grader}`: {g.agree}/{g.checked} ({_pct(g.rate)})"
              for g in code.agreement]

    if summary.controls:
        lines += ["", "## Controls", "", "| grader | control | expectation met | broken "
                  "| undecided |", "|---|---|---|---|---|"]
        lines += [f"| {c.grader} | {c.kind} | {c.met} | {c.broken} | {c.undetermined} |"
                  for c in summary.controls]

    s = summary.screen
    lines += ["", "## Validity screen of tasks no model solved", "",
              f"{s.screened} tasks have no sound pass by any model (threshold for infra-limited: "
              f"{s.threshold:.0%} unavailable attempts).", "",
              "| requirement, applied in order | tasks left |", "|---|---|"]
    lines += [f"| {step.requirement} | {step.tasks} |" for step in s.steps]
    lines += ["", "| category | tasks |", "|---|---|"]
    lines += [f"| {category} | {count} |" for category, count in s.partition.items()]
    lines += ["", "At nearby thresholds: " + "; ".join(
        f"{t}: " + ", ".join(f"{c} {n}" for c, n in counts.items() if n)
        for t, counts in s.sensitivity.items())]

    counts = summary.findings.by_severity
    lines += ["", "## Findings", "",
              f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} info."]
    shown = [f for f in findings if f.severity != "info"]
    if shown:
        lines += ["", "| severity | task | criterion | check | message |", "|---|---|---|---|---|"]
        for f in sorted(shown, key=lambda f: (SEVERITY_ORDER[f.severity], f.task_id or "",
                                              f.check)):
            name = summary.task_names.get(f.task_id or "", f.task_id or "")
            lines.append(f"| {f.severity} | {name} | {f.criterion_id or ''} | "
                         f"`{f.check}` | {_cell(f.message)} |")
    if counts["info"]:
        lines += ["", f"{counts['info']} info findings are in findings.jsonl."]
    return "\n".join(lines) + "\n"
