"""The help screen: the label keys of the task under the cursor, then every other key of the
app with what it does (after any remapping). Textual's own keys are not listed."""

from __future__ import annotations

from typing import ClassVar

from rich.markdown import Markdown
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from rubric_audit.reviews import FAILURE_LABELS, LABEL_NAMES, PASS_LABELS


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
        label_rows = "\n".join(f"| `{key}` | {LABEL_NAMES[label]} |" for key, label in self.labels)
        rows = "\n".join(f"| `{key}` | {what} |" for key, what in self.keys)
        text = (f"# Review keys\n\n## Labels for {self.task_name or 'this queue'}\n\n"
                f"| key | records |\n|---|---|\n{label_rows}\n\n"
                f"A task every model failed takes {', '.join(LABEL_NAMES[x] for x in FAILURE_LABELS)}"
                f"; a task every model passed takes "
                f"{', '.join(LABEL_NAMES[x] for x in PASS_LABELS)}. The footer and the status "
                f"line always name the keys for the task under the cursor.\n\n"
                f"## Other keys\n\n| key | action |\n|---|---|\n{rows}\n\n"
                "Keys can be remapped in a TOML file (`--keymap FILE`, or `keymap.toml` in the "
                "user config folder, `~/.config/rubric-audit/` on Linux): a `[keys]` table from "
                "binding id to key.")
        with VerticalScroll(id="help"):
            yield Static(Markdown(text))
