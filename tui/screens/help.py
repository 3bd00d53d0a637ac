"""The help screen: every key binding with what it does (after any remapping)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", id="help.close")]

    def __init__(self, keys: list[tuple[str, str]]) -> None:
        super().__init__()
        self.keys = keys

    def compose(self) -> ComposeResult:
        rows = "\n".join(f"| `{key}` | {what} |" for key, what in self.keys)
        text = ("# Review keys\n\nFailures: **1** defective task, **2** grader error, "
                "**3** ambiguous, **4** model error. Pass audit: **1** sound, **2** unearned "
                "credit.\n\n| key | action |\n|---|---|\n" + rows +
                "\n\nKeys can be remapped in a TOML file (`--keymap FILE`, or "
                "`~/.config/rubric-audit/keymap.toml`): a `[keys]` table from binding id to key.")
        with VerticalScroll(id="help"):
            yield Markdown(text)
