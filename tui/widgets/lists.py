"""The app's lists: the queue of tasks, and the lists inside a tab (findings, world items,
attempts). The arrow keys move a list's highlight only while it has the focus; every key has a
binding id, so it can be remapped and help lists it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import OptionList

MOVES = (("up", "up"), ("down", "down"), ("home", "first"), ("end", "last"),
         ("pageup", "page_up"), ("pagedown", "page_down"))  # (key, the id's last part)


def moving(scope: str, actions: Sequence[str], descriptions: Sequence[str]) -> list[Binding]:
    """↑, ↓, Home, End, PageUp and PageDown (as many as `actions` has, in that order) bound to
    `actions`, with ids `scope.up`, `scope.down`, `scope.first`, ..., not in the footer."""
    return [Binding(key, action, description, id=f"{scope}.{name}", show=False)
            for (key, name), action, description in zip(MOVES, actions, descriptions,
                                                         strict=False)]


class PaneList(OptionList, inherit_bindings=False):
    """A list inside a tab: ↑/↓, Home/End and PageUp/PageDown move its highlight."""

    BINDINGS: ClassVar[list[BindingType]] = [*moving(
        "list", ("cursor_up", "cursor_down", "first", "last", "page_up", "page_down"),
        ("Previous item", "Next item", "First item", "Last item", "A page up", "A page down"))]


class TaskList(OptionList, inherit_bindings=False):
    """The queue: ↑/↓ and Home/End move to another task, Enter reads the task (the focus goes
    to its open tab), PageUp/PageDown scroll that tab without leaving the queue."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *moving("queue", ("cursor_up", "cursor_down", "first", "last"),
                ("Previous task", "Next task", "First task", "Last task")),
        Binding("enter", "app.read_task", "Read the task", id="queue.read", show=False),
        Binding("pageup", "app.scroll_tab(-1)", "Scroll the tab up", id="tab.page_up",
                show=False),
        Binding("pagedown", "app.scroll_tab(1)", "Scroll the tab down", id="tab.page_down",
                show=False),
    ]
