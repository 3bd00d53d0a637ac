"""A task's evidence as blocks for the tabs (`tui.document`: our Rich text, stranger text literal;
no widgets), and as text for a model's triage prompt: the overview with verdicts side by side,
findings as sentences, the gold."""

from __future__ import annotations

from dataclasses import dataclass

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.padding import Padding
from rich.table import Table as RichTable
from rich.text import Text

from rubric_audit.core.model import SEVERITY_ORDER, Finding, Task, VariantPrompt, label_name
from rubric_audit.core.text import visible
from rubric_audit.report.describe import criterion_title, evidence_lines, finding_sentence
from rubric_audit.review.session import ReviewData, Stance, TaskDetails
from tui.document import CODE, TITLE, Block, Literal, heading, plain_text

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}
RATIONALE_LIMIT = 240
PROMPT_PREVIEW = 3  # sentences a variant added or dropped shown before `e` expands them


def _short(text: str, limit: int = RATIONALE_LIMIT) -> str:
    """The start of `text` on one line; only its start is read (a rationale can be megabytes)."""
    head = " ".join(text[:limit * 8].split())
    return head if len(head) <= limit and len(text) <= limit * 8 else \
        head[:limit] + " ... (e: expand)"


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


NOT_GRADED_YET = "no grader has graded this attempt yet (`rubric-audit grade` grades it)"


@dataclass
class VerdictRow:
    """One attempt's verdicts on one criterion: the judges', the code checker's, and whether the
    judge passed what the checker failed (possible unearned credit)."""

    attempt: str
    judges: list[tuple[str, str]]  # (grader, verdict); empty when the attempt was not graded
    code: str
    judge_pass_code_fail: bool
    rationale: str


def _verdicts(d: TaskDetails, criterion_id: str) -> list[VerdictRow]:
    rows = []
    for a in d.attempts:
        verdicts = {g.grader: g for g in d.grades.get(a.id, []) if g.criterion_id == criterion_id}
        judges = [g for name, g in verdicts.items() if name != "code"]
        code = verdicts.get("code")
        rows.append(VerdictRow(
            attempt=f"{a.variant} #{a.index}",
            judges=[(g.grader, g.verdict) for g in judges] or [("", a.state)],
            code=code.verdict if code else "-",
            judge_pass_code_fail=bool(code and code.verdict == "fail"
                                      and any(g.verdict == "pass" for g in judges)),
            rationale=judges[0].rationale if judges else (a.unavailable_reason or (
                NOT_GRADED_YET if a.state == "ungraded" else ""))))
    return rows


def _markdown_table(rows: list[VerdictRow], expanded: bool) -> str:
    lines = ["| attempt | judge | code | rationale |", "|---|---|---|---|"]
    for r in rows:
        judge = "; ".join(f"{g}: **{v}**" if g else v for g, v in r.judges)
        code = "⚠ **fail** (judge passed)" if r.judge_pass_code_fail else r.code
        lines.append(f"| {r.attempt} | {judge} | {code} | "
                     f"{_cell('(below)' if expanded else _short(r.rationale))} |")
    return "\n".join(lines)


def _full_rationales(rows: list[VerdictRow]) -> list[Block]:
    """Each attempt's rationale in full, under the attempt's name."""
    return [block for r in rows if r.rationale
            for block in (Text(""), Text(visible(f"{r.attempt}:"), "italic"), Literal(r.rationale))]


VERDICT_STYLE = {"pass": "green", "fail": "red"}


TABLE_WIDTH = 72  # narrower than this, the verdicts are lines, each rationale under its row


def _judged(r: VerdictRow) -> tuple[Text, Text]:
    """The judges' verdicts and the code checker's, in colour; a judge pass the code checker
    fails is marked ⚠ in red. Every part is Text (a str would be read as markup)."""
    judge = Text()
    for grader, verdict in r.judges:
        judge.append(visible(f"{grader}: ") if grader else "")
        judge.append(visible(verdict), f"bold {VERDICT_STYLE.get(verdict, '')}")
        judge.append(" ")
    code = (Text("⚠ fail (judge passed)", "bold reverse red") if r.judge_pass_code_fail
            else Text(visible(r.code), VERDICT_STYLE.get(r.code, "")))
    return judge, code


@dataclass
class Verdicts:
    """A criterion's verdict rows: a table where there is room, else each attempt's line with
    its rationale under it (at 80 columns the table's rationale column was a word wide)."""

    rows: list[VerdictRow]
    expanded: bool

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        rationale = [Text("(below)" if self.expanded else visible(_short(r.rationale)))
                     for r in self.rows]
        if options.max_width >= TABLE_WIDTH:
            table = RichTable("attempt", "judge", "code", "rationale", box=box.SIMPLE_HEAD,
                              expand=True)
            for r, why in zip(self.rows, rationale, strict=True):
                table.add_row(Text(visible(r.attempt)), *_judged(r), why)
            yield table
            return
        for r, why in zip(self.rows, rationale, strict=True):
            judge, code = _judged(r)
            yield Text.assemble((visible(r.attempt), "bold"), " · ", judge, "· code ", code)
            yield Padding(why, (0, 0, 0, 2), style="dim")


def _counted(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def prompt_changes_blocks(task: Task, changes: list[VariantPrompt], expanded: bool
                          ) -> list[Block]:
    """Per variant whose prompt differed, the sentences it added (+) to and dropped (-) from the
    shared prompt, as stored: with them the reviewer reads the prompt that variant's agents saw.
    The first PROMPT_PREVIEW of each, or all when `expanded`."""
    shared = "the prompt above" if task.source == "runs" else "the prompt the variants share"
    blocks: list[Block] = []
    for change in changes:
        counts = " and ".join(f"{_counted(len(s), 'sentence')} {what}" for s, what in (
            (change.added, "added"), (change.dropped, "dropped")) if s)
        diff, more = [], 0
        for sign, sentences in (("+", change.added), ("-", change.dropped)):
            shown = sentences if expanded else sentences[:PROMPT_PREVIEW]
            diff += [f"{sign} {s}" for s in shown]
            more += len(sentences) - len(shown)
        blocks += [heading(f"Prompt of variant {change.variant}"),
                   Text(f"Its agents saw {shared} with {counts}:", "italic"),
                   Literal("\n".join(diff))]
        if more:
            blocks.append(Text(f"… {_counted(more, 'more sentence')} (e: expand)", "dim"))
        blocks.append(Text(""))
    return blocks


def overview_parts(d: TaskDetails, notes: list[str], expanded: bool = False
                   ) -> list[Block | list[VerdictRow]]:
    """The overview as blocks with each criterion's verdict rows between them."""
    t = d.task
    parts: list[Block | list[VerdictRow]] = [
        Text(visible(t.name), TITLE), Text(""),
        Text.assemble((visible(t.domain), "italic"), " · world ", (visible(t.world_id), CODE),
                      " · ", (visible(t.id), CODE)),
        Text(""),
        Text.assemble((findings_summary(d), "bold"), " (Findings tab, F3)" if d.findings else ""),
        Text(""), heading("Prompt"), Literal(t.prompt), Text(""),
        *prompt_changes_blocks(t, d.prompt_changes, expanded)]
    if d.suggestion:
        parts += [Text.assemble(("Suggestion", "bold"),
                                visible(f" ({d.suggestion.get('model')}): "),
                                (visible(str(d.suggestion.get("label"))), "bold"),
                                visible(f", {d.suggestion.get('reasons', '')}")), Text("")]
    parts.append(heading("Rubric"))
    for c in t.criteria:
        parts += [Text(""), Text.assemble((visible(criterion_title(t, c.id)), "bold"),
                                          (" (primary)" if c.primary else "", "italic"))]
        if c.explanation:
            parts.append(Text.assemble(("why: ", "italic"), visible(c.explanation)))
        rows = _verdicts(d, c.id)
        if rows:
            parts.append(rows)
            if expanded:
                parts += _full_rationales(rows)
        for r in d.recomputed:
            if r.get("criterion_id") == c.id:
                verdict = ("matches" if r.get("criterion_matches") and r.get("gold_matches")
                           is not False else "MISMATCH")
                parts.append(Text.assemble(
                    (visible(f"recomputed from the workbook ({r['label']}):"), "italic"),
                    visible(f" {r['value']:,.6g}, criterion states {r.get('criterion_value')}, "
                            f"gold {r.get('gold_values')}: "), (verdict, "bold")))
    if notes:
        parts += [Text(""), heading("Notes"), *(Text(visible(f"- {n}")) for n in notes)]
    return parts


def overview(d: TaskDetails, notes: list[str], expanded: bool = False) -> str:
    """The overview as text (for a model's triage prompt and for tests)."""
    return "\n".join(_markdown_table(p, expanded) if isinstance(p, list) else plain_text([p])
                     for p in overview_parts(d, notes, expanded))


def overview_blocks(d: TaskDetails, notes: list[str], expanded: bool = False) -> list[Block]:
    """The overview for the terminal, with the verdict tables in colour."""
    return [Verdicts(p, expanded) if isinstance(p, list) else p
            for p in overview_parts(d, notes, expanded)]


def reviewers_blocks(stances: list[Stance] | None) -> list[Block]:
    """For a disputed task, each reviewer's label and notes, above the overview (shown only in
    the Disputed queue: elsewhere a reviewer labels without seeing the others' labels)."""
    if stances is None:
        return []
    blocks: list[Block] = [heading("Reviewers disagree: your label settles it"), Text("")]
    for stance in stances:
        blocks.append(Text.assemble(
            (visible(stance.reviewer), "bold"), ": ",
            (label_name(stance.label), "bold cyan") if stance.label else ("notes only", "dim"),
            (" (stale: the evidence changed since)", "yellow") if stance.stale else ""))
        blocks += [Text(visible(f"    note: {note}")) for note in stance.notes]
    return [*blocks, Text("")]


def finding_option(f: Finding, task: Task, mark: str) -> Group:
    """One finding as the Findings tab lists it: severity, check, the criterion it is about,
    the message as a sentence, its evidence line by line, and how reviewers judged it."""
    head = Text.assemble((f.severity, SEVERITY_STYLE[f.severity]), " ", (visible(f.check), "bold"))
    if mark:
        head.append(f"  {mark}", "green" if mark.startswith("✓") else "magenta")
    lines = [head]
    if f.criterion_id:
        lines.append(Text(visible(criterion_title(task, f.criterion_id)), "italic"))
    lines.append(Text(visible(finding_sentence(f, task))))
    lines += [Text(visible(f"  · {line}"), "dim") for line in evidence_lines(f, task)]
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


def gold_blocks(d: TaskDetails) -> list[Block]:
    gold = d.task.gold
    if gold is None:
        return [Text("This task has no gold answer.")]
    return [heading(f"Gold ({gold.type})"), Text(""),
            Literal(gold.text) if gold.text else Text("(no text)", "italic"),
            *(Text(visible(f"- {f}")) for f in gold.files)]


def gold_text(d: TaskDetails) -> str:
    """The gold as text (for a model's triage prompt)."""
    return plain_text(gold_blocks(d))


def triage_text(data: ReviewData, task_id: str) -> str:
    """A task as a model triaging it reads it (`rubric-audit suggest`): the overview, the
    agents' answers, the findings and the gold, worded as the app shows them."""
    details = data.details(task_id)
    answers = "\n\n".join(f"### {a.variant} #{a.index}\n{a.answer or '(no answer)'}"
                          for a in details.attempts)
    return "\n\n".join([overview(details, []), "## Answers", answers, "## Findings",
                        findings_text(details), gold_text(details)])
