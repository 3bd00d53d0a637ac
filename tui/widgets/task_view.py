"""The evidence for one task, one tab per `TABS` entry (overview, answers, findings, gold, world,
trajectory), or a line saying why there is no task to show.

Each tab renders Rich renderables in a few Statics (Textual's Markdown widget builds a widget per
table cell: too slow to move through hundreds of tasks). Each tab's position (scrolls, cursors)
is kept per task: a task opens at its top, and where it was left when shown again."""

from __future__ import annotations

from typing import Any, Unpack

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static, TabbedContent, TabPane

from tui.widgets.document import LinesView, WidgetOptions
from tui.widgets.evidence import EvidenceTab, Shown
from tui.widgets.tabs import TABS, FindingsTab


class TaskView(Vertical):
    """Tabs for one task; `show` fills them, `open_tab` and `scroll_page` move within them,
    `show_nothing` says why no task is shown."""

    ALLOW_MAXIMIZE = True  # z zooms the tabs to the whole screen

    def __init__(self, **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(**kwargs)
        self._task_id: str | None = None
        self._positions: dict[tuple[str, str], Any] = {}  # (task, tab) -> where it was left

    def compose(self) -> ComposeResult:
        yield Static(id="search-line")
        yield Static(id="nothing")
        with TabbedContent(id="tabs"):
            for tab in TABS:
                with TabPane(tab.title, id=f"tab-{tab.name}"):
                    yield tab(id=f"{tab.name}-tab")

    @property
    def active(self) -> str:
        return self.query_one("#tabs", TabbedContent).active.removeprefix("tab-")

    @property
    def task_id(self) -> str | None:
        return self._task_id

    def tab(self, name: str) -> EvidenceTab:
        return self.query_one(f"#{name}-tab", EvidenceTab)

    def open_tab(self, name: str) -> None:
        self.query_one("#tabs", TabbedContent).active = f"tab-{name}"

    def step_tab(self, step: int) -> None:
        names = [t.name for t in TABS]
        self.open_tab(names[(names.index(self.active) + step) % len(names)])

    def pane(self) -> Widget:
        """The open tab's pane that takes the keys."""
        return self.tab(self.active).focused()

    def scroll_page(self, direction: int) -> None:
        self.tab(self.active).scroll_page(direction)

    def search_view(self) -> LinesView | None:
        """The view `/` searches: the focused one inside the open tab, else the tab's own."""
        focused = self.screen.focused
        if isinstance(focused, LinesView) and self.tab(self.active) in focused.ancestors:
            return focused
        pane = self.pane()
        return pane if isinstance(pane, LinesView) else None

    def highlighted_finding(self) -> int | None:
        return self.query_one(FindingsTab).highlighted()

    def keep_positions(self) -> None:
        """Note where each tab of the task shown is, for when it is shown again."""
        if self._task_id is not None:
            for tab in TABS:
                self._positions[(self._task_id, tab.name)] = self.tab(tab.name).position()

    async def show(self, task_id: str, shown: Shown) -> None:
        """Show a task's evidence, each tab where it was left for this task (at its top the
        first time)."""
        self.keep_positions()
        self._task_id = task_id
        self.query_one("#nothing", Static).display = False
        self.query_one("#tabs", TabbedContent).display = True
        for tab in TABS:
            await self.tab(tab.name).show(shown)
            self.tab(tab.name).restore(self._positions.get((task_id, tab.name)))
        self.tab(self.active).opened()

    def show_nothing(self, why: str) -> None:
        """No task: the tabs go, a line says why (a filter that matches none, an empty queue)."""
        self.keep_positions()
        self._task_id = None
        self.query_one("#tabs", TabbedContent).display = False
        nothing = self.query_one("#nothing", Static)
        nothing.update(Text(why))
        nothing.display = True

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.tab((event.pane.id or "").removeprefix("tab-")).opened()
