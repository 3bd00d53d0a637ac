"""The Trajectory tab: what an attempt did, step by step, with where its answer's numbers came from.

At the top, the apps the attempt used (and those it never opened), the files it opened, its final
answer and each answer number's source. Below, one line per step and per tool call with its
arguments; a call's result (and a step's full text) unfolds on Enter. The steps are drawn with
Textual's line API (`LinesView`), so only the lines on screen are rendered: a 5,000-step attempt opens as fast
as a short one. The trajectory is read from audit.db only when the tab is open.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Unpack

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.events import Resize
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import OptionList, Static

from rubric_audit.checks.provenance import ValueSource, answer_provenance
from rubric_audit.core.model import Attempt, Step, Trajectory
from rubric_audit.core.text import visible
from rubric_audit.load.snapshots import shown_name
from rubric_audit.report.apps import WORLD_APPS, files_opened, trajectory_apps
from tui.widgets.document import TAB_SIZE, LinesView, WidgetOptions, row_starts
from tui.widgets.evidence import EvidenceTab, Shown
from tui.widgets.lists import PaneList, moving

LINE_CHARS = 400  # a line is cut here; the view is as wide as the screen anyway
WRAPPED_CHARS = 4_000  # a line wrapped (w) is shown up to here; $PAGER (o) shows it whole
MAX_RESULT_LINES = 500  # an unfolded result shows this many lines, then says how many are left
BODY_INDENT = {True: 12, False: 10}  # a call's unfolded lines, a step's: "          │ "
STYLES = {"system": Style(dim=True), "user": Style(color="cyan"),
          "assistant": Style(bold=True), "tool": Style(color="magenta"),
          "call": Style(color="green"), "error": Style(color="red"),
          "body": Style(dim=True), "mark": Style(color="yellow", bold=True)}
CURSOR = Style(reverse=True)


@dataclass(slots=True, frozen=True)
class Row:
    """One line of the steps view: a step's line (call -1), a call's line, or a line of an
    unfolded part (`body`). Its text is made only when it is on screen."""

    step: int
    call: int = -1
    body: str | None = None


def _line(text: str) -> str:
    return " ".join(visible(text[:LINE_CHARS]).split())


def _lines(text: str, width: int | None = None) -> list[str]:
    """A text as display lines; a JSON-escaped table ("a\\tb\\nc") is shown as the table. Each
    line is cut at LINE_CHARS or, wrapped to `width`, shown in rows of that width."""
    if "\n" not in text and "\\n" in text:
        text = text.replace("\\r\\n", "\n").replace("\\n", "\n").replace("\\t", "  ")
    out = []
    for number, line in enumerate(text.splitlines()):
        if number == MAX_RESULT_LINES:
            out.append(f"… {text.count(chr(10)) + 1 - MAX_RESULT_LINES:,} more lines "
                       "(o: all of it in $PAGER)")
            break
        shown = visible(line[:WRAPPED_CHARS if width else LINE_CHARS]).expandtabs(TAB_SIZE)
        if width:
            starts = row_starts(shown, width)
            out += [shown[a:b] for a, b in zip(starts, [*starts[1:], len(shown)], strict=True)]
        else:
            out.append(shown)
    return out


def _size(text: str) -> str:
    return f"{len(text):,} chars" if len(text) < 10_000 else f"{len(text) / 1000:,.0f}k chars"


def source_marks(sources: list[ValueSource], trajectory: Trajectory) -> dict[tuple[int, int], str]:
    """(step, call) -> the answer numbers first seen in that call's result."""
    marks: dict[tuple[int, int], list[str]] = {}
    for source in sources:
        if source.status != "seen" or source.step is None:
            continue
        step = trajectory.steps[source.step]
        call = next((i for i, c in enumerate(step.tool_calls) if c.name == source.tool), -1)
        marks.setdefault((source.step, call), []).append(source.text)
    return {key: "◆ " + ", ".join(dict.fromkeys(texts)) + " first seen here"
            for key, texts in marks.items()}


def _step_text(step: Step) -> str:
    return step.text or (f"(thinking) {step.reasoning}" if step.reasoning else "")


def _foldable(trajectory: Trajectory, row: Row) -> bool:
    if row.body is not None:
        return False
    step = trajectory.steps[row.step]
    if row.call >= 0:
        return step.tool_calls[row.call].result is not None
    text = _step_text(step)
    return "\n" in text or len(text) > 120


def trajectory_rows(trajectory: Trajectory, unfolded: set[tuple[int, int]],
                    width: int | None = None) -> list[Row]:
    """The steps view's lines: one per step and per call, and the unfolded parts in full (their
    lines wrapped to the view's `width`, or cut at its edge when None)."""
    def body(text: str, call: bool) -> list[str]:
        return _lines(text, max(8, width - BODY_INDENT[call]) if width else None)

    rows: list[Row] = []
    for i, step in enumerate(trajectory.steps):
        rows.append(Row(i))
        if (i, -1) in unfolded:
            rows += [Row(i, -1, line) for line in body(_step_text(step), False)]
        for j, call in enumerate(step.tool_calls):
            rows.append(Row(i, j))
            if (i, j) in unfolded and call.result is not None:
                rows += [Row(i, j, line) for line in body(call.result, True)]
    return rows


def part_text(trajectory: Trajectory, row: Row) -> tuple[str, str]:
    """(what it is, its whole text) of the part a line belongs to: a call's result (its
    arguments while it has none) or a step's text."""
    step = trajectory.steps[row.step]
    if row.call < 0:
        return f"step {row.step}", _step_text(step)
    call = step.tool_calls[row.call]
    if call.result is None:
        return f"the arguments of step {row.step}'s {call.name}", call.arguments
    return f"the result of step {row.step}'s {call.name}", call.result


def show_in_pager(text: str, command: str) -> str | None:
    """Run `command` (the user's $PAGER, split as a shell would) with the text on its standard
    input, controls made visible as on screen; None when it ran, else why it could not."""
    import shlex
    import subprocess

    try:
        argv = shlex.split(command)
        subprocess.run(argv, input=visible(text), text=True, check=False)
    except (OSError, ValueError) as exc:
        return f"$PAGER ({command}) could not run: {exc}"
    return None


def row_text(trajectory: Trajectory, row: Row, unfolded: set[tuple[int, int]]) -> tuple[str, str]:
    """(text, style) of one line of the steps view."""
    if row.body is not None:
        return f"{'          ' if row.call >= 0 else '        '}│ {row.body}", "body"
    step = trajectory.steps[row.step]
    fold = ("▾" if (row.step, row.call) in unfolded else "▸") if _foldable(trajectory, row) \
        else " "
    if row.call < 0:
        tokens = f" [{step.tokens:,} tokens]" if step.tokens else ""
        return f"{fold}{row.step:>5} {step.role:<9} {_line(_step_text(step))}{tokens}", step.role
    call = step.tool_calls[row.call]
    outcome = "no result" if call.result is None else \
        f"{'error, ' if call.error else ''}{_size(call.result)}"
    style = "error" if call.error else "tool" if step.role == "tool" else "call"
    return f"{fold}      → {call.name} {_line(call.arguments)}  ({outcome})", style


@dataclass
class Traced:
    """What is worked out from a whole trajectory: apps used, files opened, the answer's sources."""

    apps: dict[str, int]
    files: list[str]
    sources: list[ValueSource]


def trace(attempt: Attempt, trajectory: Trajectory) -> Traced:
    return Traced(trajectory_apps(trajectory), files_opened(trajectory),
                  answer_provenance(attempt.answer, trajectory) if attempt.answer else [])


def trajectory_summary(attempt: Attempt, trajectory: Trajectory | None,
                       traced: Traced | None) -> Text:
    """What the attempt used and opened, its answer, and where the answer's numbers came from
    (`traced` None: still being worked out)."""
    out = Text()
    out.append(visible(f"{attempt.variant} #{attempt.index} · {attempt.model}"), "bold")
    if trajectory is None:
        return out.append("\nNo trajectory was recorded for this attempt.")
    tokens = f" · {attempt.usage.total_tokens:,} tokens" if attempt.usage.total_tokens else ""
    out.append(f" · {len(trajectory.steps):,} steps{tokens}")
    out.append(f"\nanswer: {_line(attempt.answer or '(no answer)')[:300]}")
    if attempt.artifacts:
        shown = ", ".join(shown_name(a) for a in attempt.artifacts[:6])
        more = len(attempt.artifacts) - 6
        out.append(f"\nfiles left for the judge: {_line(shown)}"
                   + (f" (+{more} more)" if more > 0 else ""))
    if traced is None:
        return out.append("\nreading the apps used, the files opened and where the answer's "
                          "numbers came from…", "dim")
    apps = traced.apps
    out.append("\napps: " + (" · ".join(f"{app} {n}" for app, n in apps.items()) or "none"))
    never = [app for app in WORLD_APPS if app not in apps]
    if never:
        out.append(f" · never opened: {', '.join(never)}", "yellow")
    shown = ", ".join(p.rsplit("/", 1)[-1] for p in traced.files[:6])
    out.append(f"\nfiles opened: {shown or 'none'}"
               + (f" (+{len(traced.files) - 6} more)" if len(traced.files) > 6 else ""))
    for source in traced.sources:
        style = "red" if source.status == "unsupported" else ""
        out.append(f"\n  {_line(source.describe())[:200]}", style)
    return out


class StepsView(LinesView, can_focus=True, inherit_bindings=False):
    """The steps, one line each, drawn line by line; Enter folds or unfolds the line's part, w
    wraps unfolded parts to the width, o opens the part in $PAGER, y copies it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *moving("trajectory", ("cursor(-1)", "cursor(1)", "cursor(-1_000_000_000)",
                               "cursor(1_000_000_000)", "page(-1)", "page(1)"),
                ("Previous line", "Next line", "First line", "Last line", "Page up",
                 "Page down")),
        Binding("enter,space", "fold", "Fold or unfold", id="trajectory.toggle"),
        Binding("w", "wrap", "Wrap", id="trajectory.wrap"),
        Binding("o", "pager", "In $PAGER", id="trajectory.pager"),
        Binding("y", "copy", "Copy", id="trajectory.copy"),
        Binding("left", "attempt(-1)", "Previous attempt", id="trajectory.previous_attempt",
                show=False),
        Binding("right", "attempt(1)", "Next attempt", id="trajectory.next_attempt",
                show=False),
    ]

    class AttemptStep(Message):
        """Show the attempt `step` places after (or before) the one shown."""

        def __init__(self, step: int) -> None:
            super().__init__()
            self.step = step

    def __init__(self, **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(**kwargs)
        self.trajectory: Trajectory | None = None
        self.marks: dict[tuple[int, int], str] = {}
        self.unfolded: set[tuple[int, int]] = set()
        self.rows: list[Row] = []
        self.cursor = 0
        self.wrapped = False
        self._width = 0

    def load(self, trajectory: Trajectory | None) -> None:
        self.trajectory, self.marks, self.unfolded, self.cursor = trajectory, {}, set(), 0
        self._rebuild()
        self.scroll_to(0, 0, animate=False)

    def mark(self, marks: dict[tuple[int, int], str]) -> None:
        self.marks = marks
        self.refresh()

    def _rebuild(self) -> None:
        """Lay the rows out again, the cursor kept on the part it was on."""
        part = (self.rows[self.cursor].step, self.rows[self.cursor].call) if self.rows else None
        self._width = self.scrollable_content_region.width
        self.rows = trajectory_rows(self.trajectory, self.unfolded,
                                    self._width if self.wrapped and self._width > 0 else None) \
            if self.trajectory else []
        if part is not None:
            self.cursor = next((i for i, r in enumerate(self.rows)
                                if (r.step, r.call) == part and r.body is None), self.cursor)
        self.cursor = max(0, min(self.cursor, len(self.rows) - 1))
        self.virtual_size = Size(0, len(self.rows))  # lines are cut to the width: no x scroll
        self.lines_changed()
        self.refresh()

    def on_resize(self, event: Resize) -> None:
        if self.wrapped and self.scrollable_content_region.width != self._width:
            self._rebuild()

    def line_count(self) -> int:
        return len(self.rows) if self.trajectory is not None else 0

    def line_text(self, index: int) -> str:
        assert self.trajectory is not None  # there are rows only while a trajectory is shown
        return row_text(self.trajectory, self.rows[index], self.unfolded)[0]

    def line_strip(self, index: int, width: int) -> Strip:
        assert self.trajectory is not None
        row = self.rows[index]
        text, style = row_text(self.trajectory, row, self.unfolded)
        segments = [Segment(text[:width], STYLES[style])]  # cut before measuring
        mark = self.marks.get((row.step, row.call), "") if row.body is None else ""
        if mark and len(text) < width:
            segments.append(Segment(f"  {mark}"[:width - len(text)], STYLES["mark"]))
        strip = Strip(segments).crop_extend(0, width, None)
        return strip.apply_style(CURSOR) if index == self.cursor and self.has_focus else strip

    def position(self) -> tuple[frozenset[tuple[int, int]], int, float]:
        """The parts unfolded, the cursor and the scroll, for `restore`."""
        return frozenset(self.unfolded), self.cursor, self.scroll_y

    def restore(self, position: tuple[frozenset[tuple[int, int]], int, float]) -> None:
        unfolded, cursor, scroll = position
        self.unfolded, self.rows = set(unfolded), []
        self._rebuild()
        self.cursor = max(0, min(cursor, len(self.rows) - 1))
        self.scroll_to(y=scroll, animate=False, immediate=True, force=True)
        self.refresh()

    def action_cursor(self, step: int) -> None:
        self.cursor = max(0, min(self.cursor + step, len(self.rows) - 1))
        top, height = self.scroll_offset.y, max(1, self.scrollable_content_region.height)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False)
        self.refresh()

    def reveal(self, line: int, column: int) -> None:
        """A search moves the cursor onto the match's line."""
        self.action_cursor(line - self.cursor)

    def page(self, direction: int) -> None:
        self.action_page(direction)

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.scrollable_content_region.height - 1))

    def action_fold(self) -> None:
        if self.trajectory is None or not self.rows:
            return
        row = self.rows[self.cursor]
        if row.body is not None:  # Enter inside an unfolded part folds it
            while self.rows[self.cursor].body is not None:
                self.cursor -= 1
        elif not _foldable(self.trajectory, row):
            return
        self.unfolded ^= {(row.step, row.call)}
        self._rebuild()
        self.action_cursor(0)

    def action_wrap(self) -> None:
        """Wrap unfolded parts' long lines to the width, or cut them at its edge again."""
        self.wrapped = not self.wrapped
        self._rebuild()
        self.action_cursor(0)
        self.notify("unfolded lines wrapped to the width" if self.wrapped
                    else "unfolded lines cut at the edge (w wraps them)")

    def _part(self) -> tuple[str, str] | None:
        if self.trajectory is None or not self.rows:
            self.notify("no step here", severity="warning")
            return None
        return part_text(self.trajectory, self.rows[self.cursor])

    def action_pager(self) -> None:
        """The whole part under the cursor in $PAGER (less when unset), the app suspended."""
        part = self._part()
        if part is None:
            return
        command = os.environ.get("PAGER") or "less"
        try:
            with self.app.suspend():
                problem = show_in_pager(part[1], command)
        except SuspendNotSupported:
            problem = "this terminal cannot hand over to $PAGER (y copies the text instead)"
        if problem:
            self.notify(visible(problem), severity="warning", markup=False)

    def action_copy(self) -> None:
        """The whole part under the cursor to the clipboard (the terminal's, through OSC 52),
        controls made visible as on screen."""
        part = self._part()
        if part is None:
            return
        self.app.copy_to_clipboard(visible(part[1]))
        self.notify(visible(f"copied {part[0]} ({len(part[1]):,} characters) to the clipboard"),
                    markup=False)

    def action_attempt(self, step: int) -> None:
        self.post_message(self.AttemptStep(step))

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()


class TrajectoryTab(EvidenceTab):
    """The task's attempts on the left; the one highlighted, its summary and its steps."""

    name, title = "trajectory", "Trajectory"
    DEFAULT_CSS = """
    TrajectoryTab > Horizontal { height: 1fr; }
    #trajectory-attempts { width: 30%; max-width: 24; border-right: solid $primary-background; }
    #trajectory-summary { height: auto; max-height: 12; padding: 0 1; background: $boost; }
    #trajectory-steps { height: 1fr; overflow-x: hidden; }
    """
    def __init__(self, **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(**kwargs)
        self._attempts: list[Attempt] = []
        self._read: Callable[[str], Trajectory | None] = lambda attempt_id: None
        self._shown: int | None = None
        self._restoring: Any = None  # the position to take when the tab is next opened

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield PaneList(id="trajectory-attempts")
            with Vertical():
                yield Static(id="trajectory-summary")
                yield StepsView(id="trajectory-steps")

    async def show(self, shown: Shown) -> None:
        self._attempts, self._read, self._shown = shown.details.attempts, shown.trajectory, None
        listing = self.query_one("#trajectory-attempts", PaneList)
        listing.clear_options()
        listing.add_options([Text(visible(f"{a.variant} #{a.index}")) for a in self._attempts])
        self.query_one("#trajectory-summary", Static).update("")
        self.query_one(StepsView).load(None)

    def opened(self) -> None:
        """Read the highlighted attempt's trajectory, once, when the tab is shown; at the
        position the task's trajectory was left at, if any."""
        if self._shown is None and self._attempts:
            at, self._restoring = self._restoring, None
            self.show_attempt(min(at[0], len(self._attempts) - 1) if at else 0)
            if at:
                self.query_one(StepsView).restore(at[1])

    def position(self) -> Any:
        if self._shown is None:
            return self._restoring
        return self._shown, self.query_one(StepsView).position()

    def restore(self, position: Any) -> None:
        self._restoring = position

    def show_attempt(self, index: int) -> None:
        """Show an attempt's steps at once; the apps, files and the answer's sources are worked
        out in a thread (a long trajectory holds megabytes of tool output) and shown when done."""
        self._shown = index
        listing = self.query_one("#trajectory-attempts", PaneList)
        if listing.highlighted != index:
            listing.highlighted = index
        attempt = self._attempts[index]
        trajectory = self._read(attempt.id)
        self.query_one("#trajectory-summary", Static).update(
            trajectory_summary(attempt, trajectory, None))
        self.query_one(StepsView).load(trajectory)
        if trajectory is not None:  # once the steps are on screen
            self.call_after_refresh(self._trace, index, attempt, trajectory)

    @work(thread=True, exclusive=True, group="trace", description="trace the attempt")
    def _trace(self, index: int, attempt: Attempt, trajectory: Trajectory) -> None:
        self.app.call_from_thread(self._traced, index, attempt, trajectory,
                                  trace(attempt, trajectory))

    def _traced(self, index: int, attempt: Attempt, trajectory: Trajectory,
                traced: Traced) -> None:
        if self._shown != index or self.query_one(StepsView).trajectory is not trajectory:
            return  # another attempt is shown by now
        self.query_one("#trajectory-summary", Static).update(
            trajectory_summary(attempt, trajectory, traced))
        self.query_one(StepsView).mark(source_marks(traced.sources, trajectory))

    def on_steps_view_attempt_step(self, event: StepsView.AttemptStep) -> None:
        if self._attempts:
            self.show_attempt(max(0, min((self._shown or 0) + event.step, len(self._attempts) - 1)))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "trajectory-attempts":
            event.stop()
            if self._attempts and event.option_index != self._shown:
                self.show_attempt(event.option_index)

    def focused(self) -> Widget:
        return self.query_one(StepsView)

    def scroll_page(self, direction: int) -> None:
        self.query_one(StepsView).page(direction)
