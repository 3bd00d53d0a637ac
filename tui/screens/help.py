"""The help screen: what each label means (with the key that records it on the task under the
cursor), then every key of the app by where it acts, with its binding id (after any remapping).
PageDown, PageUp, the arrows, Home and End scroll it; Esc, q or ? close it."""

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

from rubric_audit.core.model import FAILURE_LABELS, LABELS, PASS_LABELS, ReviewLabel
from rubric_audit.core.text import visible
from rubric_audit.review.labels import DISPUTED
from tui.document import HEADING, TITLE

KeyRow = tuple[str, str, str]  # keys as shown, what they do, binding id


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", id="help.close")]

    def __init__(self, task: str | None, label_keys: dict[ReviewLabel, str],
                 sections: list[tuple[str, list[KeyRow]]]) -> None:
        """`label_keys`: the key of each label the task under the cursor takes; `sections`:
        (where the keys act, their rows)."""
        super().__init__()
        self.task_name = task
        self.label_keys = label_keys
        self.sections = sections

    def compose(self) -> ComposeResult:
        """Our text, with the task's name (a stranger's) shown as written, never as Markdown."""
        def labels_table(title: str, labels: tuple[ReviewLabel, ...]) -> Table:
            table = Table("key", title, "what separates it", "example", box=box.SIMPLE_HEAD,
                          expand=True)
            for label in labels:
                meaning = LABELS[label]
                table.add_row(Text(visible(self.label_keys.get(label, "-")), "bold cyan"),
                              Text(meaning.name, "bold"), Text(meaning.means),
                              Text(meaning.example, "italic"))
            return table

        def keys_table(rows: list[KeyRow]) -> Table:
            table = Table("key", "what it does", "binding id", box=box.SIMPLE_HEAD, expand=True)
            for keys, action, binding_id in rows:
                table.add_row(Text(visible(keys), "bold cyan"), Text(visible(action)),
                              Text(binding_id, "dim"))
            return table

        task = visible(self.task_name) if self.task_name else "no task"
        text = Group(
            Text("Review keys", TITLE), Text(""),
            Text.assemble(("Labels", HEADING), " (keys for the task under the cursor: ",
                          (task, "bold"), ")"),
            labels_table("a task every model failed", FAILURE_LABELS),
            labels_table("a task every model passed", PASS_LABELS),
            Text(f"{DISPUTED}: reviewers' labels with no majority (two reviewers, two labels). "
                 "The d queue lists the tasks reviewers disagree on, each with every reviewer's "
                 "label and notes; your label settles it. The footer and the status line always "
                 "name the label keys for the task under the cursor."),
            *(part for where, rows in self.sections
              for part in (Text(""), Text(where, HEADING), keys_table(rows))),
            Text("Keys can be remapped in a TOML file (--keymap FILE, or keymap.toml in the user "
                 "config folder, ~/.config/rubric-audit/ on Linux): a [keys] table from binding "
                 "id to key, such as \"review.label_1\" = \"x\"."))
        with VerticalScroll(id="help"):
            yield Static(text)
