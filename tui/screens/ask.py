"""One line asked of the reviewer: a note on the task, the queue's filter, a search in the
view. Enter gives what was typed (stripped), Esc cancels (None)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class AskScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="ask.cancel")]

    def __init__(self, question: Text, name: str, value: str = "", placeholder: str = "") -> None:
        """`question` is ours, with any stranger's part already made visible; `name` ids the
        input (`#NAME-input`)."""
        super().__init__()
        self.question, self.field, self.value = question, name, value
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(classes="ask", id=self.field):
            yield Label(self.question)
            yield Input(value=self.value, placeholder=self.placeholder,
                        id=f"{self.field}-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
