"""The evidence for one task, one tab per `TABS` entry (overview, answers, findings, gold, world).

Each tab renders Rich renderables in a few Statics (Textual's Markdown widget builds a widget per
table cell: too slow to move through hundreds of tasks)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import TabbedContent, TabPane

from tui.widgets.evidence import EvidenceTab, Shown
from tui.widgets.tabs import TABS, FindingsTab


class TaskView(Vertical):
    """Tabs for one task; `show` fills them, `open_tab` and `scroll_page` move within them."""

    def compose(self) -> ComposeResult:
        with TabbedContent(id="tabs"):
            for tab in TABS:
                with TabPane(tab.title, id=f"tab-{tab.name}"):
                    yield tab(id=f"{tab.name}-tab")

    @property
    def active(self) -> str:
        return self.query_one("#tabs", TabbedContent).active.removeprefix("tab-")

    def tab(self, name: str) -> EvidenceTab:
        return self.query_one(f"#{name}-tab", EvidenceTab)

    def open_tab(self, name: str) -> None:
        self.query_one("#tabs", TabbedContent).active = f"tab-{name}"

    def step_tab(self, step: int) -> None:
        names = [t.name for t in TABS]
        self.open_tab(names[(names.index(self.active) + step) % len(names)])

    def scroll_page(self, direction: int) -> None:
        self.tab(self.active).scroll_page(direction)

    def highlighted_finding(self) -> int | None:
        return self.query_one(FindingsTab).highlighted()

    async def show(self, shown: Shown) -> None:
        for tab in TABS:
            await self.tab(tab.name).show(shown)
        self.tab(self.active).opened()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.tab((event.pane.id or "").removeprefix("tab-")).opened()
