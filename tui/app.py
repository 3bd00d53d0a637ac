"""The review app: triage failures and audit a sample of passes with the evidence side by side.

Only a reviewer's key press records a label; suggestions are shown, never applied. The label
keys are named, in the footer, the status line and help, for the task under the cursor. The
keys act on the pane with the focus (marked by a bar on its left): the queue at first, a tab's
pane once a tab is opened or Enter pressed; Tab and Shift+Tab go from pane to pane, Esc back to
the queue.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.keys import key_to_character
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Footer, Header, Static, Tabs
from textual.widgets.option_list import Option

from rubric_audit.core.errors import InputError
from rubric_audit.core.model import Benchmark, Review, ReviewLabel, label_name
from rubric_audit.core.text import one_line, visible
from rubric_audit.review.agreement import describe
from rubric_audit.review.labels import disputed_tasks
from rubric_audit.review.search import QueueFilter, filter_tasks, parse_filter, why_none
from rubric_audit.review.session import FINDING_MARKS, QUEUE_TITLES, ReviewData
from tui.data import benchmark_of, world_items
from tui.keymap import check_keymap, keys_of, read_keymap
from tui.screens.ask import AskScreen
from tui.screens.help import HelpScreen, KeyRow
from tui.widgets.document import LinesView
from tui.widgets.evidence import Shown
from tui.widgets.lists import PaneList, TaskList
from tui.widgets.tabs import TABS, FindingsTab
from tui.widgets.task_view import TaskView
from tui.widgets.trajectory import StepsView

LABEL_KEYS = 4  # the most labels a task takes (the failure labels)
SEVERITY_MARK = {"error": ("●", "red"), "warning": ("▲", "yellow"), "info": ("·", "dim")}
# A name in the queue or a toast, or a note in a toast, is one line of at most this many
# characters (a 10,000-character task name took the queue's whole height and made a toast
# taller than the screen, covering the app while it lasted).
LINE_LIMIT = 100


class ReviewApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "rubric-audit review"
    ESCAPE_TO_MINIMIZE = False  # Esc is nav.queue: out of the zoom and back to the queue
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", id="app.help"),
        *(Binding(str(n), f"label({n})", f"Label {n}", id=f"review.label_{n}")
          for n in range(1, LABEL_KEYS + 1)),
        Binding("m", "note", "Note", id="review.note"),
        Binding("s", "skip", "Skip", id="review.skip"),
        Binding("u", "undo", "Undo", id="review.undo"),
        Binding("slash", "search", "Search", id="view.search"),
        Binding("n", "match(1)", "Next match", id="view.next_match", show=False),
        Binding("N", "match(-1)", "Previous match", id="view.previous_match", show=False),
        Binding("j", "move(1)", "Next task", id="nav.next", show=False),
        Binding("k", "move(-1)", "Previous task", id="nav.previous", show=False),
        Binding("escape", "focus_queue", "Back to the queue", id="nav.queue", show=False),
        Binding("right_square_bracket", "step_tab(1)", "Next tab", id="tab.next"),
        Binding("left_square_bracket", "step_tab(-1)", "Previous tab", id="tab.previous",
                show=False),
        *(Binding(f"f{i}", f"open_tab('{tab.name}')", f"{tab.title} tab", id=f"tab.{tab.name}",
                  show=False) for i, tab in enumerate(TABS, 1)),
        Binding("pagedown", "scroll_tab(1)", "Scroll the tab down", id="tab.page_down",
                show=False),
        Binding("pageup", "scroll_tab(-1)", "Scroll the tab up", id="tab.page_up", show=False),
        Binding("c", "judge_finding('confirmed')", "Finding: confirmed", id="finding.confirm",
                show=False),
        Binding("x", "judge_finding('false_alarm')", "Finding: false alarm",
                id="finding.false_alarm", show=False),
        Binding("e", "expand", "Expand rationales and prompt changes", id="view.expand",
                show=False),
        Binding("b", "sidebar", "Hide or show the queue", id="view.sidebar", show=False),
        Binding("z", "zoom", "Zoom the tabs to the whole screen, or back", id="view.zoom",
                show=False),
        Binding("F", "filter", "Filter", id="queue.filter"),
        Binding("f", "queue('failures')", "Failures", id="queue.failures", show=False),
        Binding("p", "queue('passes')", "Pass audit", id="queue.passes", show=False),
        Binding("a", "queue('all')", "All", id="queue.all", show=False),
        Binding("d", "queue('disputed')", "Disputed: each reviewer's label", id="queue.disputed",
                show=False),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]

    def __init__(self, data: ReviewData, keymap: dict[str, str] | None = None) -> None:
        super().__init__()
        self.data = data
        self.keymap = keymap or {}
        self.queue = "failures" if data.queues["failures"] else "all"
        self.position = data.first_unreviewed(self.queue)
        self.skipped: set[str] = set()
        self.history: list[tuple[str, str]] = []  # ("skip" | "log", task id), latest last
        self.expanded = False
        self._shown: str | None = None
        self._labels_shown: tuple[str, ...] | None = None
        self._disputed: list[str] = []
        self.filter = QueueFilter()
        self.kept: set[str] | None = None  # the tasks the filter keeps (None: no filter)
        self.searched = ""  # what / last searched for in the view

    @classmethod
    def binding_scopes(cls) -> dict[str, list[Binding]]:
        """The bindings that act together, by where: the app's (with Textual's own) beside each
        kind of pane's, and each modal screen's alone. The keymap is checked against them."""
        def own(*classes: type) -> list[Binding]:
            return [b for c in classes for b in getattr(c, "BINDINGS", [])
                    if isinstance(b, Binding)]

        everywhere = own(App, Screen, cls)
        return {"the queue": everywhere + own(TaskList),
                "a text pane": everywhere + own(LinesView),
                "a list in a tab": everywhere + own(PaneList),
                "the trajectory's steps": everywhere + own(StepsView),
                "the tab bar": everywhere + own(Tabs),
                "help": own(HelpScreen), "a line asked": own(AskScreen)}

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="sidebar"):
                yield Static(id="progress")
                yield TaskList(id="tasks")
            yield TaskView(id="task")
        yield Static(id="status")
        yield Footer(show_command_palette=False)

    async def on_mount(self) -> None:
        if self.keymap:
            self.set_keymap(self.keymap)
        self.sub_title = visible(f"reviewer {self.data.reviewer}")
        await self.refresh_all()
        self.query_one("#tasks", TaskList).focus()

    @cached_property
    def benchmark(self) -> Benchmark | None:
        """The benchmark, for the World tab: read once, in the app's thread."""
        return benchmark_of(self.data)

    @property
    def task_ids(self) -> list[str]:
        ids = self._disputed if self.queue == "disputed" else self.data.queue(self.queue)
        return ids if self.kept is None else [t for t in ids if t in self.kept]

    @property
    def current_task(self) -> str | None:
        ids = self.task_ids
        return ids[self.position] if ids else None

    def key_display(self, binding: Binding) -> str:
        """The binding's keys as the footer shows them ("j/down"), after the keymap."""
        return "/".join(self.get_key_display(replace(binding, key=key, key_display=None))
                        for key in keys_of(binding, self.keymap))

    def key_words(self, binding: Binding) -> str:
        """The binding's keys as help names them, after the keymap: a character as itself,
        other keys by name ("enter/space", "pagedown", "ctrl+n")."""
        def word(key: str) -> str:
            character = key_to_character(key)
            return character if character and character.isprintable() and \
                not character.isspace() else key

        return "/".join(word(key) for key in keys_of(binding, self.keymap))

    def label_keys(self, task_id: str) -> list[tuple[str, ReviewLabel]]:
        """(key as shown, label) for each label the task takes, after any remapping."""
        keys = {b.id: self.key_display(b) for b in self.BINDINGS if isinstance(b, Binding)}
        return [(keys[f"review.label_{n}"], label)
                for n, label in enumerate(self.data.labels_for(task_id), 1)]

    def _row(self, task_id: str, mine: dict[str, Review], disputed: set[str]) -> Text:
        review = mine.get(task_id)
        mark = ("!" if self.data.stale(review) else "✓") if review else \
            "»" if task_id in self.skipped else " "
        symbol, style = SEVERITY_MARK.get(self.data.severity(task_id) or "", (" ", ""))
        row = Text.assemble(mark, " ", (symbol, style), " ", self.named(task_id))
        if task_id in disputed:
            row.append(" ≠", "bold magenta")
        if review and review.label:  # mine() holds only reviews with a label
            row.append(f" · {label_name(review.label)}", "dim")
        elif task_id in self.skipped:
            row.append(" · skipped", "dim italic")
        return row

    async def refresh_all(self) -> None:
        """Read the review log once, redraw the queue and what depends on the log (agreement,
        stale reviews, disputes), then the task under the cursor."""
        current = self.data.current()
        mine = self.data.mine(current)
        self._agreements = self.data.agreements(current)
        self._stale = sum(self.data.stale(r) for r in mine.values())
        disputed = disputed_tasks(current)
        self._disputed = self.data.queue("disputed", current)
        ids = self.task_ids
        listing = self.query_one("#tasks", TaskList)
        listing.clear_options()
        listing.add_options([Option(self._row(t, mine, disputed), id=t) for t in ids])
        if ids:
            self.position = max(0, min(self.position, len(ids) - 1))
            listing.highlighted = self.position
        done = sum(t in mine for t in ids)
        counts = ", ".join(f"{label_name(k)} {v}" for k, v in self.data.counts(self.queue).items())
        shown = f"\nfilter: {visible(self.filter.describe())}" if self.kept is not None else ""
        others = f"\ndisputed: {len(self._disputed)} (d)" if self._disputed and \
            self.queue != "disputed" else ""
        self.query_one("#progress", Static).update(Text.assemble(
            (QUEUE_TITLES[self.queue], "bold"), f" {done}/{len(ids)}",
            f"\n{counts}" if counts else "", others, shown))
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
            return replace(binding, description=label_name(labels[number - 1]), show=True)

        if labels != self._labels_shown:  # the footer redraws only when the names change
            table = self._bindings.key_to_bindings
            for key, bindings in table.items():
                table[key] = [named(b) for b in bindings]
            self.refresh_bindings()
            self._labels_shown = labels
        status = [" · ".join(f"{key} {label_name(label)}" for key, label in
                             self.label_keys(task_id))
                  if task_id else "no task to label"]
        if task_id:
            group = self._agreements[self.data.group_of(task_id)]
            if len(group.reviewers) > 1:
                status.append(f"agreement on {describe(group)}")
        if self._stale:
            status.append(f"{self._stale} of your reviews are stale (evidence changed)")
        self.query_one("#status", Static).update(Text(visible(" · ".join(status) + " · ? help")))

    def why_empty(self) -> str:
        """Why the queue shows no task: the filter, and what there is to match."""
        if self.kept is None:
            return f"Nothing to review in {QUEUE_TITLES[self.queue]}."
        if not self.kept:
            labels = {t: r.label for t, r in self.data.mine().items() if r.label}
            return visible(why_none(self.data.store, self.data.tasks, self.filter, labels)) + \
                " (F changes the filter; an empty filter clears it)"
        elsewhere = [f"{QUEUE_TITLES[q]} {n} ({q[0]})" for q in ("failures", "passes", "all",
                                                                  "disputed")
                     if (n := len(set(self.data.queue(q)) & self.kept))]
        return (f"No task in {QUEUE_TITLES[self.queue]} matches "
                f"{visible(self.filter.describe())}; it matches {', '.join(elsewhere)}.")

    async def show_task(self) -> None:
        """Show the task under the cursor; a task not shown just before opens on Overview, at
        its top the first time (each tab where it was left when shown again)."""
        if not self.screen_stack:  # a move queued while the app was closing
            return
        task_id = self.current_task
        self._show_labels(task_id)
        view = self.query_one(TaskView)
        if task_id is None:
            self._shown = None
            view.show_nothing(self.why_empty())
            return
        focus_in_view = self.focused is not None and view in self.focused.ancestors
        if task_id != self._shown:
            view.open_tab(TABS[0].name)
            self._shown = task_id
        bench = self.benchmark
        task = self.data.tasks[task_id]
        notes = [f"{r.reviewer}: {r.note}" for r in self.data.notes(task_id)]
        await view.show(task_id, Shown(
            self.data.details(task_id), notes, lambda: world_items(bench, task),
            self.data.finding_marks(task_id), expanded=self.expanded,
            trajectory=self.data.store.trajectory,
            reviewers=self.data.stances(task_id) if self.queue == "disputed" else None))
        if focus_in_view:
            self.call_after_refresh(lambda: view.pane().focus())
        self._report_match()

    async def on_option_list_option_highlighted(self, event: TaskList.OptionHighlighted) -> None:
        """The queue's cursor moved (↑/↓ in it): show that task. A message the list posted
        for a highlight it has moved on from since (keys pressed faster than tasks are shown,
        or a move made here) is stale: it took the view back to Overview of a task passed."""
        listing = event.option_list
        if listing.id == "tasks" and event.option_index == listing.highlighted \
                and event.option_index != self.position:
            self.position = event.option_index
            await self.show_task()

    async def action_move(self, step: int) -> None:
        if self.task_ids:
            self.position = max(0, min(self.position + step, len(self.task_ids) - 1))
            self.query_one("#tasks", TaskList).highlighted = self.position
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
                     f"{', '.join(label_name(label) for label in labels)}", severity="warning")
            return
        self.data.record(task_id, labels[number - 1])
        self.history.append(("log", task_id))
        self.skipped.discard(task_id)
        self.say(f"{self.named(task_id)}: {label_name(labels[number - 1])}")
        self.position = min(self.position + 1, len(self.task_ids) - 1)
        await self.refresh_all()

    async def action_skip(self) -> None:
        task_id = self.current_task
        if task_id is None:
            return
        self.skipped.add(task_id)
        self.history.append(("skip", task_id))
        self.say(f"skipped {self.named(task_id)}: it stays unlabelled")
        self.position = min(self.position + 1, len(self.task_ids) - 1)
        await self.refresh_all()

    async def action_undo(self) -> None:
        """Undo the latest skip, label or note: a skip of this session is taken back here, an
        entry of the log (of this session or an earlier one) by appending its retraction."""
        if self.history and self.history[-1][0] == "skip":
            task_id = self.history.pop()[1]
            self.skipped.discard(task_id)
            self.say(f"undid the skip of {self.named(task_id)}")
        else:
            if self.history:
                self.history.pop()
            undone = self.data.undo()
            if undone is None:
                self.say("nothing to undo")
                return
            what = f"label {label_name(undone.label)}" if undone.label and not undone.note \
                else f"note “{one_line(visible(undone.note), LINE_LIMIT)}”"
            self.say(f"undid the {what} on {self.named(undone.task_id)}")
            task_id = undone.task_id
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
                self.history.append(("log", task_id))
                self.say(f"note saved on {self.named(task_id)}")
                await self.refresh_all()

        self.push_screen(AskScreen(Text(f"Note on {self.named(task_id)} (Enter to save, Esc to "
                                        "cancel)"), "note", placeholder="what you saw"), save)

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
            labels = {t: r.label for t, r in self.data.mine().items() if r.label}
            try:
                kept = None if wanted.is_empty() else filter_tasks(
                    self.data.store, self.data.tasks, wanted, labels)
            except InputError as exc:  # a damaged search index: the queue stays as it was
                self.say(str(exc), "error")
                return
            self.filter, self.kept = wanted, kept
            self.position = 0
            await self.refresh_all()
            self.say(f"{len(self.task_ids)} tasks match {self.filter.describe()}"
                     if self.task_ids else self.why_empty() if self.kept is not None
                     else "filter cleared", "information" if self.task_ids or self.kept is None
                     else "warning")

        self.push_screen(AskScreen(
            Text("Filter the queue: words found in prompts, answers, trajectories or rationales, "
                 "and model:, domain:, check:, label: (Enter to apply, empty to clear, Esc to "
                 "cancel)"), "filter", self.filter.describe(),
            "Q3_Forecast.xlsx model:grok check:answer_value"), apply)

    def action_search(self) -> None:
        """Search the open tab's text (the focused pane's): every match highlighted, n and N
        from one to the next."""
        view = self.query_one(TaskView).search_view()
        if view is None:
            self.say("/ searches a text pane (Overview, Answers, Gold, World's viewer, "
                     "Trajectory's steps); this tab has none", "warning")
            return

        def search(query: str | None) -> None:
            if query is None:
                return
            self.searched = query
            self._report_match(view.search(query))

        self.push_screen(AskScreen(Text("Search this view (Enter to search, empty to clear, "
                                        "Esc to cancel)"), "search", self.searched), search)

    def action_match(self, step: int) -> None:
        view = self.query_one(TaskView).search_view()
        if view is None or not self.searched:
            self.say("nothing searched for yet: / searches the view", "warning")
            return
        if view.query_text != self.searched:  # another view than the one searched
            self._report_match(view.search(self.searched))
        else:
            self._report_match(view.step_match(step))

    def _report_match(self, found: tuple[int, int] | None = None) -> None:
        """The search line over the tabs: what was searched, the match gone to, of how many."""
        line = self.query_one("#search-line", Static)
        line.display = bool(self.searched)
        if not self.searched:
            return
        view = self.query_one(TaskView).search_view()
        if found is None:
            found = view.matched() if view is not None and view.query_text == self.searched \
                else (0, 0)
        number, count = found
        said = (f"{number} of {count}" if number else f"{count} matches") if count \
            else "no match in this view"
        line.update(Text.assemble(("/", "bold"), (visible(self.searched), "bold reverse"),
                                  f" · {said} · n next · N previous"))

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Another pane has the keys: the search line speaks of its matches."""
        if self.searched and self.screen is self.screen_stack[0]:
            self._report_match()

    def action_open_tab(self, name: str) -> None:
        view = self.query_one(TaskView)
        view.open_tab(name)
        self.call_after_refresh(lambda: view.pane().focus())

    def action_step_tab(self, step: int) -> None:
        view = self.query_one(TaskView)
        view.step_tab(step)
        self.call_after_refresh(lambda: view.pane().focus())

    def action_read_task(self) -> None:
        """Enter in the queue: the keys go to the open tab's pane."""
        if self.current_task is not None:
            self.query_one(TaskView).pane().focus()

    def action_focus_queue(self) -> None:
        """Esc: the keys back to the queue, shown again if hidden or zoomed away."""
        if self.screen.maximized is not None:
            self.screen.minimize()
        self.query_one("#sidebar").display = True
        self.call_after_refresh(self.query_one("#tasks", TaskList).focus)

    def action_scroll_tab(self, direction: int) -> None:
        self.query_one(TaskView).scroll_page(direction)

    def action_sidebar(self) -> None:
        """Hide the queue to give the tabs the whole width (b again shows it)."""
        sidebar = self.query_one("#sidebar")
        sidebar.display = not sidebar.display
        if not sidebar.display and self.focused is self.query_one("#tasks", TaskList):
            self.query_one(TaskView).pane().focus()

    def action_zoom(self) -> None:
        """The tabs over the whole screen (z again, or Esc, brings the queue back)."""
        if self.screen.maximized is not None:
            self.screen.minimize()
            return
        view = self.query_one(TaskView)
        if self.screen.maximize(view, container=False):
            view.pane().focus()

    async def action_judge_finding(self, verdict: str) -> None:
        """Judge the finding under the cursor of the Findings tab (the same key again
        withdraws the judgement)."""
        task_id, view = self.current_task, self.query_one(TaskView)
        if task_id is None:
            return
        if view.active != FindingsTab.name:
            self.action_open_tab(FindingsTab.name)
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

    def help_sections(self) -> list[tuple[str, list[KeyRow]]]:
        """Every key by where it acts, after the keymap: one row per binding id."""
        def rows(bindings: list[BindingType], skip: str = "") -> list[KeyRow]:
            grouped: dict[str, tuple[list[str], str]] = {}
            for b in bindings:
                if isinstance(b, Binding) and b.id and not (skip and b.id.startswith(skip)):
                    keys, _ = grouped.setdefault(b.id, ([], b.description))
                    keys.append(self.key_words(b))
            return [("/".join(keys), what, i) for i, (keys, what) in grouped.items()]

        moving = [("tab/shift+tab", "the next or previous pane (the focused one has a bar on "
                                    "its left)", "Textual's"),
                  ("1-4", "record the label the footer names (the table above)",
                   "review.label_1 .. review.label_4")]
        return [("Anywhere", moving + rows(self.BINDINGS, skip="review.label_")),
                ("The queue (the list of tasks)", rows(TaskList.BINDINGS)),
                ("A text pane (Overview, Answers, Gold, the World's viewer)",
                 rows(LinesView.BINDINGS)),
                ("A list in a tab (Findings, the World's items, the attempts)",
                 rows(PaneList.BINDINGS)),
                ("The Trajectory's steps", rows(StepsView.BINDINGS))]

    def action_help(self) -> None:
        task_id = self.current_task
        keys = {label: key for key, label in self.label_keys(task_id)} if task_id else {}
        self.push_screen(HelpScreen(self.data.tasks[task_id].name if task_id else None, keys,
                                    self.help_sections()))


def load_keymap(path: Path | None) -> dict[str, str]:
    """The keymap file's `[keys]` (missing default file: no changes), checked against the
    app's bindings: InputProblems with one line per problem."""
    found, keys = read_keymap(path)
    return check_keymap(found, keys, ReviewApp.binding_scopes())
