"""A task's evidence as text for the tabs (markdown and Rich text; no widgets): the overview
with verdicts side by side, findings as sentences, the gold."""

from __future__ import annotations

import re

from rich.console import Group
from rich.text import Text

from rubric_audit.describe import criterion_title, evidence_lines, finding_sentence
from rubric_audit.model import Finding, Task
from tui.data import TaskDetails

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}
RATIONALE_LIMIT = 240


def _short(text: str, limit: int = RATIONALE_LIMIT) -> str:
    text = " ".join(re.sub(r"^#+\s*", "", line) for line in text.split("\n")).strip()
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " ... (e: expand)"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def findings_summary(d: TaskDetails) -> str:
    """ "3 findings: 2 errors, 1 warning" or "No findings for this task." """
    if not d.findings:
        return "No findings for this task."
    counts = {s: sum(f.severity == s for f in d.findings) for s in SEVERITY_ORDER}
    parts = ", ".join(f"{n} {s}{'s' if n > 1 and s != 'info' else ''}"
                      for s, n in counts.items() if n)
    return f"{len(d.findings)} finding{'s' if len(d.findings) > 1 else ''}: {parts}"


def findings_keys_hint(d: TaskDetails) -> str:
    return (f"{findings_summary(d)} · ↑/↓ pick one, c confirmed, x false alarm (again: withdraw)"
            if d.findings else findings_summary(d))


def _verdicts(d: TaskDetails, criterion_id: str, expanded: bool) -> list[str]:
    rows, rationales = [], []
    for a in d.attempts:
        verdicts = {g.grader: g for g in d.grades.get(a.id, []) if g.criterion_id == criterion_id}
        judges = [g for name, g in verdicts.items() if name != "code"]
        code = verdicts.get("code")
        judge_text = "; ".join(f"{g.grader}: **{g.verdict}**" for g in judges) or a.state
        code_text = code.verdict if code else "-"
        if code and code.verdict == "fail" and any(g.verdict == "pass" for g in judges):
            code_text = "⚠ **fail** (judge passed)"
        rationale = judges[0].rationale if judges else (a.unavailable_reason or "")
        if expanded and judges:
            rationales += ["", f"*{a.variant} #{a.index}, {judges[0].grader}:*", "",
                           *(f"> {line}" for line in rationale.splitlines())]
            rationale = "(below)"
        rows.append(f"| {a.variant} #{a.index} | {judge_text} | {code_text} | "
                    f"{_cell(rationale if expanded else _short(rationale))} |")
    if not rows:
        return []
    return ["", "| attempt | judge | code | rationale |", "|---|---|---|---|", *rows, *rationales]


def overview(d: TaskDetails, notes: list[str], expanded: bool = False) -> str:
    t = d.task
    lines = [f"## {t.name}", f"*{t.domain}* · world `{t.world_id}` · `{t.id}`", "",
             f"**{findings_summary(d)}**" + (" (Findings tab, F3)" if d.findings else ""), "",
             "### Prompt", t.prompt, ""]
    if d.suggestion:
        lines += [f"> **Suggestion** ({d.suggestion.get('model')}): "
                  f"**{d.suggestion.get('label')}**, {d.suggestion.get('reasons', '')}", ""]
    lines.append("### Rubric")
    for c in t.criteria:
        lines += ["", f"**{criterion_title(t, c.id)}**" + (" *(primary)*" if c.primary else "")]
        if c.explanation:
            lines += ["", f"*why:* {c.explanation}"]
        lines += _verdicts(d, c.id, expanded)
        for r in d.recomputed:
            if r.get("criterion_id") == c.id:
                verdict = ("matches" if r.get("criterion_matches") and r.get("gold_matches")
                           is not False else "MISMATCH")
                lines.append(f"\n*recomputed from the workbook ({r['label']}):* "
                             f"{r['value']:,.6g}, criterion states {r.get('criterion_value')}, "
                             f"gold {r.get('gold_values')}: **{verdict}**")
    if notes:
        lines += ["", "### Notes", *(f"- {n}" for n in notes)]
    return "\n".join(lines)


def finding_option(f: Finding, task: Task, mark: str) -> Group:
    """One finding as the Findings tab lists it: severity, check, the criterion it is about,
    the message as a sentence, its evidence line by line, and how reviewers judged it."""
    head = Text.assemble((f.severity, SEVERITY_STYLE[f.severity]), " ", (f.check, "bold"))
    if mark:
        head.append(f"  {mark}", "green" if mark.startswith("✓") else "magenta")
    lines = [head]
    if f.criterion_id:
        lines.append(Text(criterion_title(task, f.criterion_id), "italic"))
    lines.append(Text(finding_sentence(f, task)))
    lines += [Text(f"  · {line}", "dim") for line in evidence_lines(f, task)]
    lines.append(Text(""))
    return Group(*lines)


def findings_text(d: TaskDetails) -> str:
    """The findings as markdown (for a model's triage prompt), worded as in the Findings tab."""
    lines = [findings_summary(d)]
    for _, f in d.keyed_findings():
        about = f" ({criterion_title(d.task, f.criterion_id)})" if f.criterion_id else ""
        lines += ["", f"**{f.severity}** `{f.check}`{about}: {finding_sentence(f, d.task)}",
                  *(f"- {line}" for line in evidence_lines(f, d.task))]
    return "\n".join(lines)


def gold_text(d: TaskDetails) -> str:
    gold = d.task.gold
    if gold is None:
        return "This task has no gold answer."
    files = "".join(f"\n- `{f}`" for f in gold.files)
    return f"### Gold ({gold.type})\n\n{gold.text or '(no text)'}{files}"
