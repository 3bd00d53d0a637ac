"""The review app: triage failures and audit a sample of passes with the evidence side by side.

Only a reviewer's key press records a label; suggestions are shown, never applied. The label
keys are named, in the footer, the status line and help, for the task under the cursor.
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.notifications import SeverityLevel
from textual.widgets import Footer, Header, OptionList, Static, TabbedContent
from textual.widgets.option_list import Option

from rubric_audit.core.errors import InputError, read_own_text
from rubric_audit.core.model import LABEL_NAMES, Review
from rubric_audit.core.text import one_line, visible
from rubric_audit.review.agreement import describe
from rubric_audit.review.labels import disputed_tasks
from rubric_audit.review.search import QueueFilter, filter_tasks, parse_filter
from rubric_audit.review.session import FINDING_MARKS, QUEUE_TITLES, ReviewData
from tui.data import world_items
from tui.screens.filter import FilterScreen
from tui.screens.help import HelpScreen
from tui.screens.note import NoteScreen
from tui.widgets.evidence import Shown
from tui.widgets.tabs import TABS, FindingsTab
from tui.widgets.task_view import TaskView

LABEL_KEYS = 4  # the most labels a task takes (the failure labels)
SEVERITY_MARK = {"error": ("●", "red"), "warning": ("▲", "yellow"), "info": ("·", "dim")}
# A name in the queue or a toast, or a note in a toast, is one line of at most this many
# characters (a 10,000-character task name took the queue's whole height and made a toast
# taller than the screen, covering the app while it lasted).
LINE_LIMIT = 100


def default_keymap() -> Path:
    """keymap.toml in the platform's user config folder (platformdirs: ~/.config/rubric-audit
    on Linux, ~/Library/Application Support/rubric-audit on macOS, ...)."""
    import platformdirs

    return platformdirs.user_config_path("rubric-audit", appauthor=False) / "keymap.toml"


def load_keymap(path: Path | None) -> dict[str, str]:
    """Binding id -> key, from the `[keys]` table of a TOML file (missing file: no changes)."""
    path = path or default_keymap()
    if not path.is_file():
        return {}
    try:
        keys = tomllib.loads(read_own_text(path)).get("keys", {})
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, None, f"malformed TOML: {exc}") from None
    if not isinstance(keys, dict):
        raise InputError(path, "keys", f"expected a table of binding id = key, found {keys!r}")
    return {str(k): str(v) for k, v in keys.items()}


class ReviewApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "rubric-audit review"
    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(str(n), f"label({n})", f"Label {n}", id=f"review.label_{n}")
          for n in range(1, LABEL_KEYS + 1)),
        Binding("n", "note", "Note", id="review.note"),
        Binding("s", "skip", "Skip", id="review.skip"),
        Binding("u", "undo", "Undo", id="review.undo"),
        Binding("j,down", "move(1)", "Next task", id="nav.next", show=False),
        Binding("k,up", "move(-1)", "Previous task", id="nav.previous", show=False),
        Binding("right_square_bracket", "step_tab(1)", "Next tab", id="tab.next"),
        Binding("left_square_bracket", "step_tab(-1)", "Previous tab", id="tab.previous",
                show=False),
        *(Binding(f"f{i}", f"open_tab('{tab.name}')", f"{tab.title} tab", id=f"tab.{tab.name}",
                  show=False) for i, tab in enumerate(TABS, 1)),
        Binding("pagedown", "scroll_tab(1)", "Scroll the tab down", id="tab.page_down",
                show=False, priority=True),
        Binding("pageup", "scroll_tab(-1)", "Scroll the tab up", id="tab.page_up", show=False,
                priority=True),
        Binding("c", "judge_finding('confirmed')", "Finding: confirmed", id="finding.confirm",
                show=False),
        Binding("x", "judge_finding('false_alarm')", "Finding: false alarm",
                id="finding.false_alarm", show=False),
        Binding("e", "expand", "Expand rationales and prompt changes", id="view.expand",
                show=False),
        Binding("slash", "filter", "Filter", id="queue.filter"),
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
        self.skipped: set[str] = set()
        self.expanded = False
        self._shown: str | None = None
        self._labels_shown: tuple[str, ...] | None = None
        self.filter = QueueFilter()
        self.kept: set[str] | None = None  # the tasks the filter keeps (None: no filter)

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
        self.sub_title = visible(f"reviewer {self.data.reviewer}")
        await self.refresh_all()

    @property
    def task_ids(self) -> list[str]:
        ids = self.data.queues[self.queue]
        return ids if self.kept is None else [t for t in ids if t in self.kept]

    @property
    def current_task(self) -> str | None:
        ids = self.task_ids
        return ids[self.position] if ids else None

    def label_keys(self, task_id: str) -> list[tuple[str, str]]:
        """(key as shown, label) for each label the task takes, after any remapping."""
        keys = self.keys_of()
        return [(keys.get(f"review.label_{n}", str(n)), label)
                for n, label in enumerate(self.data.labels_for(task_id), 1)]

    def keys_of(self) -> dict[str, str]:
        """Binding id -> its keys as the footer shows them ("j/down")."""
        found: dict[str, list[str]] = {}
        for binding in self.own_bindings():
            found.setdefault(binding.id or "", []).append(
                binding.key_display or self.get_key_display(binding))
        return {i: "/".join(keys) for i, keys in found.items()}

    def own_bindings(self) -> list[Binding]:
        """This app's bindings (not Textual's own), with their current keys and descriptions."""
        ids = {b.id for b in self.BINDINGS if isinstance(b, Binding)}
        return [b for group in self._bindings.key_to_bindings.values() for b in group
                if b.id in ids]

    def _row(self, task_id: str, mine: dict[str, Review], disputed: set[str]) -> Text:
        review = mine.get(task_id)
        mark = ("!" if self.data.stale(review) else "✓") if review else \
            "»" if task_id in self.skipped else " "
        symbol, style = SEVERITY_MARK.get(self.data.severity(task_id) or "", (" ", ""))
        row = Text.assemble(mark, " ", (symbol, style), " ", self.named(task_id))
        if task_id in disputed:
            row.append(" ≠", "bold magenta")
        if review and review.label:  # mine() holds only reviews with a label
            row.append(f" · {LABEL_NAMES[review.label]}", "dim")
        elif task_id in self.skipped:
            row.append(" · skipped", "dim italic")
        return row

    async def refresh_all(self) -> None:
        """Read the review log once, redraw the queue and what depends on the log (agreement,
        stale reviews), then the task under the cursor."""
        current = self.data.current()
        mine = self.data.mine(current)
        self._agreements = self.data.agreements(current)
        self._stale = sum(self.data.stale(r) for r in mine.values())
        disputed = disputed_tasks(current)
        ids = self.task_ids
        listing = self.query_one("#tasks", OptionList)
        listing.clear_options()
        listing.add_options([Option(self._row(t, mine, disputed), id=t) for t in ids])
        if ids:
            self.position = max(0, min(self.position, len(ids) - 1))
            listing.highlighted = self.position
        done = sum(t in mine for t in ids)
        counts = ", ".join(f"{LABEL_NAMES[k]} {v}" for k, v in self.data.counts(self.queue).items())
        shown = f"\nfilter: {visible(self.filter.describe())}" if self.kept is not None else ""
        self.query_one("#progress", Static).update(Text.assemble(
            (QUEUE_TITLES[self.queue], "bold"), f" {done}/{len(ids)}",
            f"\n{counts}" if counts else "", shown))
        await self.show_task()

    def _show_labels(self, task_id: str | None) -> None:
        """Name the label keys for this task in the footer and the status line."""
        labels = self.data.labels_for(task_id) if task_id else ()

        def named(binding: Binding) -> Binding:
            if not (binding.id or "").startswith("review.label_"):
                return binding
            number = int((binding.id or "").rsplit("_", 1)[1])
            if number > len(labels):
                return replace(binding, show=False)
            return replace(binding, description=LABEL_NAMES[labels[number - 1]], show=True)

        if labels != self._labels_shown:  # the footer redraws only when the names change
            table = self._bindings.key_to_bindings
            for key, bindings in table.items():
                table[key] = [named(b) for b in bindings]
            self.refresh_bindings()
            self._labels_shown = labels
        status = [" · ".join(f"{key} {LABEL_NAMES[label]}" for key, label in
                             self.label_keys(task_id))
                  if task_id else "nothing to review in this queue"]
        if task_id:
            group = self._agreements[self.data.group_of(task_id)]
            if len(group.reviewers) > 1:
                status.append(f"agreement on {describe(group)}")
        if self._stale:
            status.append(f"{self._stale} of your reviews are stale (evidence changed)")
        self.query_one("#status", Static).update(Text(visible(" · ".join(status) + " · ? help")))

    async def show_task(self) -> None:
        """Show the task under the cursor; a task not shown just before opens on Overview."""
        if not self.screen_stack:  # a move queued while the app was closing
            return
        task_id = self.current_task
        self._show_labels(task_id)
        view = self.query_one(TaskView)
        if task_id is None:
            return
        if task_id != self._shown:
            view.open_tab(TABS[0].name)
            self._shown = task_id
        notes = [f"{r.reviewer}: {r.note}" for r in self.data.notes(task_id)]
        await view.show(Shown(self.data.details(task_id), notes,
                              lambda: world_items(self.data, task_id),
                              self.data.finding_marks(task_id), expanded=self.expanded,
                              trajectory=self.data.store.trajectory))

    async def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "tasks" and event.option_index != self.position:
            self.position = event.option_index
            await self.show_task()

    async def action_move(self, step: int) -> None:
        if self.task_ids:
            self.position = max(0, min(self.position + step, len(self.task_ids) - 1))
            self.query_one("#tasks", OptionList).highlighted = self.position
            await self.show_task()

    def named(self, task_id: str) -> str:
        """The task's name as the queue and toasts show it: one line (controls made visible
        before the lines are joined), cut where long."""
        return one_line(visible(self.data.tasks[task_id].name), LINE_LIMIT)

    def say(self, message: str, severity: SeverityLevel = "information") -> None:
        """A toast. Its text holds names and notes from strangers: shown as written, never as
        markup (a name could otherwise carry a click action) and with controls made visible."""
        self.notify(visible(message), severity=severity, markup=False)

    async def action_label(self, number: int) -> None:
        task_id = self.current_task
        if task_id is None:
            return
        labels = self.data.labels_for(task_id)
        if number > len(labels):
            self.say(f"this task takes labels 1-{len(labels)}: "
                        f"{', '.join(LABEL_NAMES[label] for label in labels)}", severity="warning")
            return
        self.data.record(task_id, labels[number - 1])
        self.skipped.discard(task_id)
        self.say(f"{self.named(task_id)}: {LABEL_NAMES[labels[number - 1]]}")
        self.position = min(self.position + 1, len(self.task_ids) - 1)
        await self.refresh_all()

    async def action_skip(self) -> None:
        task_id = self.current_task
        if task_id is None:
            return
        self.skipped.add(task_id)
        self.say(f"skipped {self.named(task_id)}: it stays unlabelled")
        self.position = min(self.position + 1, len(self.task_ids) - 1)
        await self.refresh_all()

    async def action_undo(self) -> None:
        undone = self.data.undo()
        if undone is None:
            self.say("nothing to undo")
            return
        what = f"label {LABEL_NAMES[undone.label]}" if undone.label and not undone.note \
            else f"note “{one_line(visible(undone.note), LINE_LIMIT)}”"
        self.say(f"undid the {what} on {self.named(undone.task_id)}")
        if undone.task_id in self.task_ids:
            self.position = self.task_ids.index(undone.task_id)
        await self.refresh_all()

    def action_note(self) -> None:
        task_id = self.current_task
        if task_id is None:
            return

        async def save(note: str | None) -> None:
            if note:
                self.data.record(task_id, None, note)
                self.say(f"note saved on {self.named(task_id)}")
                await self.refresh_all()

        self.push_screen(NoteScreen(self.data.tasks[task_id].name), save)

    async def action_queue(self, queue: str) -> None:
        self.queue = queue
        self.position = self.data.first_unreviewed(queue) if self.kept is None else 0
        await self.refresh_all()

    def action_filter(self) -> None:
        """Narrow the queue to tasks whose texts hold the words typed, and to a model, domain,
        finding check or label."""

        async def apply(query: str | None) -> None:
            if query is None:
                return
            wanted = parse_filter(query)
            labels = {t: f"{r.label} {LABEL_NAMES[r.label]}" for t, r in self.data.mine().items()
                      if r.label}
            try:
                kept = None if wanted.is_empty() else filter_tasks(
                    self.data.store, self.data.tasks, wanted, labels)
            except InputError as exc:  # a damaged search index: the queue stays as it was
                self.say(str(exc), "error")
                return
            self.filter, self.kept = wanted, kept
            self.position = 0
            self.say(f"{len(self.task_ids)} tasks match {self.filter.describe()}"
                        if self.kept is not None else "filter cleared")
            await self.refresh_all()

        self.push_screen(FilterScreen(self.filter.describe()), apply)

    def action_open_tab(self, name: str) -> None:
        self.query_one(TaskView).open_tab(name)

    def action_step_tab(self, step: int) -> None:
        self.query_one(TaskView).step_tab(step)

    def action_scroll_tab(self, direction: int) -> None:
        self.query_one(TaskView).scroll_page(direction)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """A tab with a list of its own (findings, trajectory steps) takes the arrow keys; the
        others leave them to the task list."""
        view = self.query_one(TaskView)
        (view.tab(view.active).focused() or self.query_one("#tasks", OptionList)).focus()

    async def action_judge_finding(self, verdict: str) -> None:
        """Judge the finding under the cursor of the Findings tab (the same key again
        withdraws the judgement)."""
        task_id, view = self.current_task, self.query_one(TaskView)
        if task_id is None:
            return
        if view.active != FindingsTab.name:
            view.open_tab(FindingsTab.name)
            self.say("pick a finding with the arrow keys, then c (confirmed) or x (false "
                        "alarm)")
            return
        findings = self.data.details(task_id).keyed_findings()
        index = view.highlighted_finding()
        if index is None or index >= len(findings):
            self.say("this task has no findings to judge", severity="warning")
            return
        key, finding = findings[index]
        standing = self.data.judge_finding(key, finding, verdict)
        self.say(f"{finding.check}: {FINDING_MARKS[standing]}" if standing
                    else f"{finding.check}: your judgement withdrawn")
        await self.show_task()

    async def action_expand(self) -> None:
        self.expanded = not self.expanded
        self.say("rationales and prompt changes in full" if self.expanded
                    else "rationales and prompt changes shortened")
        await self.show_task()

    def action_help(self) -> None:
        grouped: dict[str, tuple[list[str], str]] = {}
        for b in self.own_bindings():
            if not b.id or b.id.startswith("review.label_"):
                continue
            keys, _ = grouped.setdefault(b.id, ([], b.description))
            keys.append(b.key_display or self.get_key_display(b))
        labels = self.label_keys(self.current_task) if self.current_task else []
        task = self.data.tasks[self.current_task].name if self.current_task else None
        self.push_screen(HelpScreen(task, labels, [("/".join(k), what) for k, what in
                                                   grouped.values()]))
