"""The evidence for one task, in tabs: overview (prompt, rubric, verdicts side by side), answers
side by side, findings, gold, and the world."""

from __future__ import annotations

import json
from collections.abc import Callable

from rich.markdown import Markdown as RichMarkdown
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import OptionList, Static, TabbedContent, TabPane

from tui.data import TaskDetails


def _short(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " ..."


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def overview(d: TaskDetails, notes: list[str]) -> str:
    t = d.task
    lines = [f"## {t.name}", f"*{t.domain}* · world `{t.world_id}` · `{t.id}`", "",
             "### Prompt", t.prompt, ""]
    if d.suggestion:
        lines += [f"> **Suggestion** ({d.suggestion.get('model')}): "
                  f"**{d.suggestion.get('label')}**, {d.suggestion.get('reasons', '')}", ""]
    lines.append("### Rubric")
    for i, c in enumerate(t.criteria, 1):
        lines += ["", f"**{i}. {c.text}**" + (" *(primary)*" if c.primary else "")]
        if c.explanation:
            lines.append(f"*why:* {c.explanation}")
        rows = []
        for a in d.attempts:
            verdicts = {g.grader: g for g in d.grades.get(a.id, []) if g.criterion_id == c.id}
            judges = [g for name, g in verdicts.items() if name != "code"]
            code = verdicts.get("code")
            judge_text = "; ".join(f"{g.grader}: **{g.verdict}**" for g in judges) or a.state
            rationale = _short(judges[0].rationale) if judges else (a.unavailable_reason or "")
            rows.append(f"| {a.variant} #{a.index} | {judge_text} | "
                        f"{code.verdict if code else '-'} | {_cell(rationale)} |")
        if rows:
            lines += ["", "| attempt | judge | code | rationale |", "|---|---|---|---|", *rows]
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


def findings_text(d: TaskDetails) -> str:
    if not d.findings:
        return "No findings for this task."
    order = {"error": 0, "warning": 1, "info": 2}
    lines = []
    for f in sorted(d.findings, key=lambda f: order[f.severity]):
        evidence = json.dumps(f.evidence, default=str)
        lines += [f"**{f.severity}** `{f.check}` {f.message}", "",
                  f"> {_short(evidence, 600)}", ""]
    return "\n".join(lines)


def gold_text(d: TaskDetails) -> str:
    gold = d.task.gold
    if gold is None:
        return "This task has no gold answer."
    files = "".join(f"\n- `{f}`" for f in gold.files)
    return f"### Gold ({gold.type})\n\n{gold.text or '(no text)'}{files}"


class TaskView(Vertical):
    """Tabs for one task; `show` fills them. Each tab is one Static with a Rich Markdown
    renderable (Textual's Markdown widget builds a widget per table cell: too slow to move
    through hundreds of tasks). The world is read only when its tab is open."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self._world: Callable[[], list[tuple[str, str]]] | None = None
        self._items: list[tuple[str, str]] = []

    def compose(self) -> ComposeResult:
        with TabbedContent(id="tabs"):
            with TabPane("Overview", id="tab-overview"), VerticalScroll():
                yield Static(id="overview")
            with TabPane("Answers", id="tab-answers"):
                yield Horizontal(id="answers")
            with TabPane("Findings", id="tab-findings"), VerticalScroll():
                yield Static(id="findings")
            with TabPane("Gold", id="tab-gold"), VerticalScroll():
                yield Static(id="gold")
            with TabPane("World", id="tab-world"), Horizontal():
                yield OptionList(id="world-items")
                with VerticalScroll(id="world-viewer"):
                    yield Static(id="world")

    async def show(self, details: TaskDetails, notes: list[str],
                   world: Callable[[], list[tuple[str, str]]]) -> None:
        self.query_one("#overview", Static).update(RichMarkdown(overview(details, notes)))
        self.query_one("#findings", Static).update(RichMarkdown(findings_text(details)))
        self.query_one("#gold", Static).update(RichMarkdown(gold_text(details)))
        self._world, self._items = world, []
        self.query_one("#world-items", OptionList).clear_options()
        self.query_one("#world", Static).update("")
        if self.query_one("#tabs", TabbedContent).active == "tab-world":
            self._fill_world()
        texts = [RichMarkdown(f"#### {a.variant} #{a.index} ({a.state})\n\n"
                              f"{a.answer or '*(no answer)*'}") for a in details.attempts]
        answers = self.query_one("#answers", Horizontal)
        shown = list(answers.query(".answer Static").results(Static))
        if len(shown) == len(texts) and texts:
            for widget, text in zip(shown, texts, strict=True):  # same layout: no remount
                widget.update(text)
            return
        await answers.remove_children()
        await answers.mount_all([VerticalScroll(Static(t), classes="answer") for t in texts]
                                or [Static("No attempts.")])

    def _fill_world(self) -> None:
        """Read the world once per task, when its tab is first shown."""
        if self._world is None or self._items:
            return
        self._items = self._world() or [("(not available)", "The benchmark folder is not here, "
                                                           "so the world cannot be shown.")]
        listing = self.query_one("#world-items", OptionList)
        listing.add_options([label for label, _ in self._items])
        listing.highlighted = 0
        self.query_one("#world", Static).update(RichMarkdown(self._items[0][1]))

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "tab-world":
            self._fill_world()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "world-items" and event.option_index < len(self._items):
            event.stop()
            self.query_one("#world", Static).update(
                RichMarkdown(self._items[event.option_index][1]))
