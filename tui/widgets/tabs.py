"""The tabs of a task, one widget each. Adding a tab is writing one `EvidenceTab` subclass and
listing it in `TABS`: the task view, its F-key and the help screen follow from that list."""

from __future__ import annotations

from collections.abc import Callable

from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widget import Widget
from textual.widgets import OptionList, Static

from tui.render import finding_option, findings_keys_hint, gold_text, overview_renderable
from tui.widgets.evidence import EvidenceTab, Shown
from tui.widgets.trajectory import TrajectoryTab


class OverviewTab(EvidenceTab):
    name, title = "overview", "Overview"

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="overview")

    async def show(self, shown: Shown) -> None:
        self.query_one("#overview", Static).update(
            overview_renderable(shown.details, shown.notes, shown.expanded))


class AnswersTab(EvidenceTab):
    name, title = "answers", "Answers"

    def compose(self) -> ComposeResult:
        yield Horizontal(id="answers")

    async def show(self, shown: Shown) -> None:
        texts = [RichMarkdown(f"#### {a.variant} #{a.index} ({a.state})\n\n"
                              f"{a.answer or '*(no answer)*'}") for a in shown.details.attempts]
        answers = self.query_one("#answers", Horizontal)
        placed = list(answers.query(".answer Static").results(Static))
        if len(placed) == len(texts) and texts:
            for widget, text in zip(placed, texts, strict=True):  # same layout: no remount
                widget.update(text)
            return
        await answers.remove_children()
        await answers.mount_all([VerticalScroll(Static(t), classes="answer") for t in texts]
                                or [Static("No attempts.")])


class FindingsTab(EvidenceTab):
    """The task's findings, one option each, so a key can judge the one under the cursor."""

    name, title = "findings", "Findings"

    def compose(self) -> ComposeResult:
        yield Static(id="findings-summary")
        yield OptionList(id="findings")

    def focused(self) -> Widget | None:
        return self.query_one("#findings", OptionList)

    def scrollables(self) -> list[Widget]:
        return [self.query_one("#findings", OptionList)]

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
        with VerticalScroll():
            yield Static(id="gold")

    async def show(self, shown: Shown) -> None:
        self.query_one("#gold", Static).update(RichMarkdown(gold_text(shown.details)))


class WorldTab(EvidenceTab):
    """Files, mail, calendar and chat beside a viewer; read only when the tab is opened."""

    name, title = "world", "World"

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self._world: Callable[[], list[tuple[str, str]]] | None = None
        self._items: list[tuple[str, str]] = []

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield OptionList(id="world-items")
            with VerticalScroll(id="world-viewer"):
                yield Static(id="world")

    async def show(self, shown: Shown) -> None:
        self._world, self._items = shown.world, []
        self.query_one("#world-items", OptionList).clear_options()
        self.query_one("#world", Static).update("")

    def opened(self) -> None:
        """Read the world once per task, when its tab is first shown."""
        if self._world is None or self._items:
            return
        self._items = self._world() or [("(not available)", "The benchmark folder is not here, "
                                                           "so the world cannot be shown.")]
        listing = self.query_one("#world-items", OptionList)
        listing.add_options([Text(label, no_wrap=True, overflow="ellipsis")
                             for label, _ in self._items])
        listing.highlighted = 0
        self.query_one("#world", Static).update(RichMarkdown(self._items[0][1]))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "world-items" and event.option_index < len(self._items):
            event.stop()
            self.query_one("#world", Static).update(
                RichMarkdown(self._items[event.option_index][1]))


TABS: tuple[type[EvidenceTab], ...] = (OverviewTab, AnswersTab, FindingsTab, GoldTab, WorldTab,
                                       TrajectoryTab)
