"""The review app: triage failures and audit a sample of passes with the evidence side by side.

Only a reviewer's key press records a label; suggestions are shown, never applied.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from tui.data import QUEUE_TITLES, ReviewData, agreement, world_items
from tui.screens.help import HelpScreen
from tui.screens.note import NoteScreen
from tui.widgets.task_view import TaskView

DEFAULT_KEYMAP = Path.home() / ".config" / "rubric-audit" / "keymap.toml"


def load_keymap(path: Path | None) -> dict[str, str]:
    """Binding id -> key, from the `[keys]` table of a TOML file (missing file: no changes)."""
    path = path or DEFAULT_KEYMAP
    if not path.is_file():
        return {}
    return {str(k): str(v) for k, v in tomllib.loads(path.read_text()).get("keys", {}).items()}


class ReviewApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "rubric-audit review"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "label(1)", "Label 1", id="review.label_1"),
        Binding("2", "label(2)", "Label 2", id="review.label_2"),
        Binding("3", "label(3)", "Label 3", id="review.label_3", show=False),
        Binding("4", "label(4)", "Label 4", id="review.label_4", show=False),
        Binding("n", "note", "Note", id="review.note"),
        Binding("s", "skip", "Skip", id="review.skip"),
        Binding("u", "undo", "Undo", id="review.undo"),
        Binding("j,down", "move(1)", "Next", id="nav.next", show=False),
        Binding("k,up", "move(-1)", "Previous", id="nav.previous", show=False),
        Binding("f", "queue('failures')", "Failures", id="queue.failures"),
        Binding("p", "queue('passes')", "Pass audit", id="queue.passes"),
        Binding("a", "queue('all')", "All", id="queue.all"),
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]

    def __init__(self, data: ReviewData, keymap: dict[str, str] | None = None) -> None:
        super().__init__()
        self.data = data
        self.keymap_overrides = keymap or {}
        self.queue = "failures" if data.queues["failures"] else "all"
        self.position = data.first_unreviewed(self.queue)

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="sidebar"):
                yield Static(id="progress")
                yield OptionList(id="tasks")
            yield TaskView(id="task")
        yield Static(id="status")
        yield Footer()

    async def on_mount(self) -> None:
        if self.keymap_overrides:
            self.set_keymap(self.keymap_overrides)
        self.sub_title = f"reviewer {self.data.reviewer}"
        await self.refresh_all()

    @property
    def task_ids(self) -> list[str]:
        return self.data.queues[self.queue]

    @property
    def current_task(self) -> str | None:
        ids = self.task_ids
        return ids[self.position] if ids else None

    def _row(self, task_id: str, mine: dict) -> str:
        review = mine.get(task_id)
        name = self.data.tasks[task_id].name
        if review is None:
            return f"  {name}"
        mark = "!" if self.data.stale(review) else "✓"
        return f"{mark} {name} · {review.label}"

    async def refresh_all(self) -> None:
        mine = self.data.mine()
        ids = self.task_ids
        listing = self.query_one("#tasks", OptionList)
        listing.clear_options()
        listing.add_options([Option(self._row(t, mine), id=t) for t in ids])
        if ids:
            self.position = max(0, min(self.position, len(ids) - 1))
            listing.highlighted = self.position
        done = sum(t in mine for t in ids)
        counts = ", ".join(f"{k} {v}" for k, v in self.data.counts(self.queue).items())
        self.query_one("#progress", Static).update(
            f"[b]{QUEUE_TITLES[self.queue]}[/b] {done}/{len(ids)}" + (f"\n{counts}" if counts
                                                                     else ""))
        method, kappa, shared = agreement(self.data.current())
        stale = sum(self.data.stale(r) for r in mine.values())
        status = [f"labels: {', '.join(self.data.labels_for(self.current_task))}"
                  if self.current_task else "nothing to review in this queue"]
        if kappa is not None:
            status.append(f"agreement ({method}'s kappa, {shared} tasks): {kappa:.2f}")
        if stale:
            status.append(f"{stale} of your reviews are stale (evidence changed)")
        self.query_one("#status", Static).update(" · ".join(status) + " · ? help")
        await self.show_task()

    async def show_task(self) -> None:
        task_id = self.current_task
        view = self.query_one(TaskView)
        if task_id is None:
            return
        notes = [f"{r.reviewer}: {r.note}" for r in self.data.notes(task_id)]
        await view.show(self.data.details(task_id), notes, lambda: world_items(self.data, task_id))

    async def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "tasks" and event.option_index != self.position:
            self.position = event.option_index
            await self.show_task()

    async def action_move(self, step: int) -> None:
        if self.task_ids:
            self.position = max(0, min(self.position + step, len(self.task_ids) - 1))
            self.query_one("#tasks", OptionList).highlighted = self.position
            await self.show_task()

    async def action_label(self, number: int) -> None:
        task_id = self.current_task
        if task_id is None:
            return
        labels = self.data.labels_for(task_id)
        if number > len(labels):
            self.notify(f"this task takes labels 1-{len(labels)}: {', '.join(labels)}",
                        severity="warning")
            return
        self.data.record(task_id, labels[number - 1])
        self.position = min(self.position + 1, len(self.task_ids) - 1)
        await self.refresh_all()

    async def action_skip(self) -> None:
        await self.action_move(1)

    async def action_undo(self) -> None:
        task_id = self.data.undo()
        if task_id is None:
            self.notify("nothing to undo")
            return
        if task_id in self.task_ids:
            self.position = self.task_ids.index(task_id)
        await self.refresh_all()

    def action_note(self) -> None:
        task_id = self.current_task
        if task_id is None:
            return

        async def save(note: str | None) -> None:
            if note:
                self.data.record(task_id, None, note)
                await self.refresh_all()

        self.push_screen(NoteScreen(self.data.tasks[task_id].name), save)

    async def action_queue(self, queue: str) -> None:
        self.queue = queue
        self.position = self.data.first_unreviewed(queue)
        await self.refresh_all()

    def action_help(self) -> None:
        keys = [(b.key_display or key, b.description) for key, b in
                ((ab.binding.key, ab.binding) for ab in self.active_bindings.values())]
        self.push_screen(HelpScreen(sorted(set(keys))))
