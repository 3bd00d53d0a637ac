"""The queue's filter: words searched in prompts, answers, trajectories and rationales, and
model:, domain:, check:, label: parts."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class FilterScreen(ModalScreen[str | None]):
    """Returns the filter typed (empty: no filter), or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="filter.cancel")]

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="filter"):
            yield Label("Filter the queue: words found in prompts, answers, trajectories or "
                        "rationales, and model:, domain:, check:, label: (Enter to apply, empty "
                        "to clear, Esc to cancel)")
            yield Input(value=self.current, placeholder="Q3_Forecast.xlsx model:grok "
                                                        "check:answer_value", id="filter-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
