"""The tabs of a task, one widget each. Adding a tab is writing one `EvidenceTab` subclass and
listing it in `TABS`: the task view, its F-key and the help screen follow from that list."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Unpack

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.events import Resize
from textual.widget import Widget
from textual.widgets import Static

from rubric_audit.core.model import Attempt
from rubric_audit.core.text import one_line, visible
from tui.document import Block, Literal
from tui.render import (
    finding_option,
    findings_keys_hint,
    gold_blocks,
    overview_blocks,
    reviewers_blocks,
)
from tui.widgets.document import DocumentView, WidgetOptions
from tui.widgets.evidence import EvidenceTab, Shown
from tui.widgets.lists import PaneList
from tui.widgets.trajectory import TrajectoryTab

ANSWER_WIDTH = 40  # narrower than this side by side, the answers are stacked in one column


class OverviewTab(EvidenceTab):
    name, title = "overview", "Overview"

    def compose(self) -> ComposeResult:
        yield DocumentView(id="overview")

    def focused(self) -> Widget:
        return self.query_one("#overview", DocumentView)

    async def show(self, shown: Shown) -> None:
        self.query_one("#overview", DocumentView).update(
            reviewers_blocks(shown.reviewers)
            + overview_blocks(shown.details, shown.notes, shown.expanded))


def answer_blocks(attempt: Attempt) -> list[Block]:
    return [Text(visible(f"{attempt.variant} #{attempt.index} ({attempt.state})"), "bold"),
            Text(""), Literal(attempt.answer) if attempt.answer
            else Text("(no answer)", "italic")]


class AnswersTab(EvidenceTab):
    """The attempts' answers side by side, or one under the other where a column would be
    narrower than ANSWER_WIDTH."""

    name, title = "answers", "Answers"

    def __init__(self, **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(**kwargs)
        self._attempts: list[Attempt] = []

    def compose(self) -> ComposeResult:
        yield Horizontal(id="answers")

    def focused(self) -> Widget:
        return next(iter(self.query(".answer").results(DocumentView)), self)

    def stacked(self) -> bool:
        return self.size.width < ANSWER_WIDTH * len(self._attempts)

    def columns(self) -> list[list[Block]]:
        """Each view's blocks: one per answer side by side, or all answers in one."""
        texts = [answer_blocks(a) for a in self._attempts]
        if not self.stacked():
            return texts
        return [[block for i, text in enumerate(texts)
                 for block in ([Text("")] if i else []) + text]]

    async def show(self, shown: Shown) -> None:
        self._attempts = shown.details.attempts
        await self._place()

    async def _place(self) -> None:
        texts = self.columns()
        answers = self.query_one("#answers", Horizontal)
        placed = list(answers.query(".answer").results(DocumentView))
        if len(placed) == len(texts) and texts:
            for widget, text in zip(placed, texts, strict=True):  # same layout: no remount
                widget.update(text)
            return
        await answers.remove_children()
        await answers.mount_all([DocumentView(t, classes="answer") for t in texts]
                                or [Static("No attempts.")])

    async def on_resize(self, event: Resize) -> None:
        if len(self.query(".answer")) != len(self.columns()):
            at = self.position()
            await self._place()
            self.restore(at)


class FindingsTab(EvidenceTab):
    """The task's findings, one option each, so a key can judge the one under the cursor."""

    name, title = "findings", "Findings"

    def compose(self) -> ComposeResult:
        yield Static(id="findings-summary")
        yield PaneList(id="findings")

    def focused(self) -> Widget:
        return self.query_one("#findings", PaneList)

    def scroll_page(self, direction: int) -> None:
        listing = self.query_one("#findings", PaneList)
        (listing.scroll_page_down if direction > 0 else listing.scroll_page_up)(animate=False)

    async def show(self, shown: Shown) -> None:
        d = shown.details
        self.query_one("#findings-summary", Static).update(Text(findings_keys_hint(d)))
        listing = self.query_one("#findings", PaneList)
        listing.clear_options()
        listing.add_options([finding_option(f, d.task, shown.finding_marks.get(key, ""))
                             for key, f in d.keyed_findings()])

    def position(self) -> Any:
        listing = self.query_one("#findings", PaneList)
        return listing.highlighted, listing.scroll_y

    def restore(self, position: Any) -> None:
        listing = self.query_one("#findings", PaneList)
        highlighted, scroll = position or (0, 0)
        if listing.option_count:
            listing.highlighted = min(highlighted or 0, listing.option_count - 1)
            listing.scroll_to(y=scroll, animate=False, immediate=True, force=True)

    def highlighted(self) -> int | None:
        return self.query_one("#findings", PaneList).highlighted


class GoldTab(EvidenceTab):
    name, title = "gold", "Gold"

    def compose(self) -> ComposeResult:
        yield DocumentView(id="gold")

    def focused(self) -> Widget:
        return self.query_one("#gold", DocumentView)

    async def show(self, shown: Shown) -> None:
        self.query_one("#gold", DocumentView).update(gold_blocks(shown.details))


WorldItems = list[tuple[str, list[Block]]]
NOT_HERE: WorldItems = [("(not available)", [Text(
    "The benchmark folder is not here, so the world cannot be shown.")])]


class WorldTab(EvidenceTab):
    """Files, mail, calendar and chat beside a viewer; read when the tab is first opened for a
    task, in a thread (a workbook's formulas take a second or two), saying so meanwhile."""

    name, title = "world", "World"

    def __init__(self, **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(**kwargs)
        self._world: Callable[[], WorldItems] | None = None
        self._items: WorldItems = []
        self._reading = False
        self._restoring: Any = None  # the position to take once the world is read
        self._item = 0  # the item in the viewer

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield PaneList(id="world-items")
            with Vertical(id="world-pane"):
                yield Static("", id="world-progress")
                yield DocumentView(id="world")

    def focused(self) -> Widget:
        return self.query_one("#world-items", PaneList)

    async def show(self, shown: Shown) -> None:
        self._world, self._items, self._reading = shown.world, [], False
        self.query_one("#world-items", PaneList).clear_options()
        self.query_one("#world-progress", Static).display = False
        self.query_one("#world", DocumentView).update([])

    def opened(self) -> None:
        """Read the world once per task, when its tab is first shown."""
        if self._world is None or self._items or self._reading:
            return
        self._reading = True
        progress = self.query_one("#world-progress", Static)
        progress.update(Text("Reading the world's files, mail, calendar and chat…", "italic"))
        progress.display = True
        self._read(self._world)

    @work(thread=True, exclusive=True, group="world", description="read the world")
    def _read(self, world: Callable[[], WorldItems]) -> None:
        self.app.call_from_thread(self._fill, world, world() or NOT_HERE)

    def _fill(self, world: Callable[[], WorldItems], items: WorldItems) -> None:
        if world is not self._world:
            return  # another task is shown by now
        self._items, self._reading = items, False
        self.query_one("#world-progress", Static).display = False
        listing = self.query_one("#world-items", PaneList)
        # one row each: a file name's line breaks joined (it took a row per line)
        listing.add_options([Text(one_line(visible(label)), no_wrap=True, overflow="ellipsis")
                             for label, _ in items])
        at, self._restoring = self._restoring, None
        item, scroll = at or (0, (0, 0))
        item = min(item, len(items) - 1)
        self._item = listing.highlighted = item
        self.query_one("#world", DocumentView).update(items[item][1], scroll)

    def position(self) -> Any:
        if not self._items:
            return self._restoring
        listing = self.query_one("#world-items", PaneList)
        return listing.highlighted or 0, self.query_one("#world", DocumentView).position()

    def restore(self, position: Any) -> None:
        self._restoring = position

    def on_option_list_option_highlighted(self, event: PaneList.OptionHighlighted) -> None:
        if event.option_list.id == "world-items":
            event.stop()
            if event.option_index != self._item and event.option_index < len(self._items):
                self._item = event.option_index
                self.query_one("#world", DocumentView).update(self._items[self._item][1])


TABS: tuple[type[EvidenceTab], ...] = (OverviewTab, AnswersTab, FindingsTab, GoldTab, WorldTab,
                                       TrajectoryTab)
