"""The tabs of a task, one widget each. Adding a tab is writing one `EvidenceTab` subclass and
listing it in `TABS`: the task view, its F-key and the help screen follow from that list."""

from __future__ import annotations

from collections.abc import Callable
from typing import Unpack

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import OptionList, Static

from rubric_audit.core.text import one_line, visible
from tui.document import Block, Literal
from tui.render import finding_option, findings_keys_hint, gold_blocks, overview_blocks
from tui.widgets.document import DocumentView, WidgetOptions
from tui.widgets.evidence import EvidenceTab, Shown
from tui.widgets.trajectory import TrajectoryTab


class OverviewTab(EvidenceTab):
    name, title = "overview", "Overview"

    def compose(self) -> ComposeResult:
        yield DocumentView(id="overview")

    async def show(self, shown: Shown) -> None:
        self.query_one("#overview", DocumentView).update(
            overview_blocks(shown.details, shown.notes, shown.expanded))


class AnswersTab(EvidenceTab):
    name, title = "answers", "Answers"

    def compose(self) -> ComposeResult:
        yield Horizontal(id="answers")

    async def show(self, shown: Shown) -> None:
        texts: list[list[Block]] = [
            [Text(visible(f"{a.variant} #{a.index} ({a.state})"), "bold"), Text(""),
             Literal(a.answer) if a.answer else Text("(no answer)", "italic")]
            for a in shown.details.attempts]
        answers = self.query_one("#answers", Horizontal)
        placed = list(answers.query(".answer").results(DocumentView))
        if len(placed) == len(texts) and texts:
            for widget, text in zip(placed, texts, strict=True):  # same layout: no remount
                widget.update(text)
            return
        await answers.remove_children()
        await answers.mount_all([DocumentView(t, classes="answer") for t in texts]
                                or [Static("No attempts.")])


class FindingsTab(EvidenceTab):
    """The task's findings, one option each, so a key can judge the one under the cursor."""

    name, title = "findings", "Findings"

    def compose(self) -> ComposeResult:
        yield Static(id="findings-summary")
        yield OptionList(id="findings")

    def focused(self) -> Widget | None:
        return self.query_one("#findings", OptionList)

    def scroll_page(self, direction: int) -> None:
        listing = self.query_one("#findings", OptionList)
        (listing.scroll_page_down if direction > 0 else listing.scroll_page_up)(animate=False)

    async def show(self, shown: Shown) -> None:
        d = shown.details
        self.query_one("#findings-summary", Static).update(Text(findings_keys_hint(d)))
        listing = self.query_one("#findings", OptionList)
        highlighted = listing.highlighted
        listing.clear_options()
        listing.add_options([finding_option(f, d.task, shown.finding_marks.get(key, ""))
                             for key, f in d.keyed_findings()])
        if d.findings:
            listing.highlighted = min(highlighted or 0, len(d.findings) - 1)

    def highlighted(self) -> int | None:
        return self.query_one("#findings", OptionList).highlighted


class GoldTab(EvidenceTab):
    name, title = "gold", "Gold"

    def compose(self) -> ComposeResult:
        yield DocumentView(id="gold")

    async def show(self, shown: Shown) -> None:
        self.query_one("#gold", DocumentView).update(gold_blocks(shown.details))


class WorldTab(EvidenceTab):
    """Files, mail, calendar and chat beside a viewer; read only when the tab is opened."""

    name, title = "world", "World"

    def __init__(self, **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(**kwargs)
        self._world: Callable[[], list[tuple[str, list[Block]]]] | None = None
        self._items: list[tuple[str, list[Block]]] = []

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield OptionList(id="world-items")
            yield DocumentView(id="world")

    async def show(self, shown: Shown) -> None:
        self._world, self._items = shown.world, []
        self.query_one("#world-items", OptionList).clear_options()
        self.query_one("#world", DocumentView).update([])

    def opened(self) -> None:
        """Read the world once per task, when its tab is first shown."""
        if self._world is None or self._items:
            return
        self._items = self._world() or [("(not available)", [Text(
            "The benchmark folder is not here, so the world cannot be shown.")])]
        listing = self.query_one("#world-items", OptionList)
        # one row each: a file name's line breaks joined (it took a row per line)
        listing.add_options([Text(one_line(visible(label)), no_wrap=True, overflow="ellipsis")
                             for label, _ in self._items])
        listing.highlighted = 0
        self.query_one("#world", DocumentView).update(self._items[0][1])

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "world-items" and event.option_index < len(self._items):
            event.stop()
            self.query_one("#world", DocumentView).update(self._items[event.option_index][1])


TABS: tuple[type[EvidenceTab], ...] = (OverviewTab, AnswersTab, FindingsTab, GoldTab, WorldTab,
                                       TrajectoryTab)
