"""The help screen: the label keys of the task under the cursor, then every other key of the
app with what it does (after any remapping). Textual's own keys are not listed."""

from __future__ import annotations

from typing import ClassVar

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from rubric_audit.core.model import FAILURE_LABELS, LABEL_NAMES, PASS_LABELS
from rubric_audit.core.text import visible
from tui.document import HEADING, TITLE


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", id="help.close")]

    def __init__(self, task: str | None, labels: list[tuple[str, str]],
                 keys: list[tuple[str, str]]) -> None:
        super().__init__()
        self.task_name = task
        self.labels = labels
        self.keys = keys

    def compose(self) -> ComposeResult:
        """Our text, with the task's name (a stranger's) shown as written, never as Markdown."""
        def keys_table(what: str, rows: list[tuple[str, str]]) -> Table:
            table = Table("key", what, box=box.SIMPLE_HEAD)
            for key, action in rows:
                table.add_row(Text(visible(key), "bold cyan"), Text(visible(action)))
            return table

        labels = [(key, LABEL_NAMES[label]) for key, label in self.labels]
        text = Group(
            Text("Review keys", TITLE), Text(""),
            Text.assemble(("Labels for ", HEADING), (visible(self.task_name or "this queue"),
                                                     HEADING)),
            keys_table("records", labels),
            Text(f"A task every model failed takes "
                 f"{', '.join(LABEL_NAMES[x] for x in FAILURE_LABELS)}; a task every model "
                 f"passed takes {', '.join(LABEL_NAMES[x] for x in PASS_LABELS)}. The footer "
                 "and the status line always name the keys for the task under the cursor."),
            Text(""), Text("Other keys", HEADING), keys_table("action", self.keys),
            Text("Keys can be remapped in a TOML file (--keymap FILE, or keymap.toml in the user "
                 "config folder, ~/.config/rubric-audit/ on Linux): a [keys] table from binding "
                 "id to key."))
        with VerticalScroll(id="help"):
            yield Static(text)
