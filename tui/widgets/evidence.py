"""What every tab of a task shares: the evidence shown (`Shown`) and the tab's base class."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from textual.containers import Vertical
from textual.widget import Widget

from rubric_audit.core.model import Trajectory
from rubric_audit.review.session import TaskDetails
from tui.document import Block
from tui.widgets.document import LinesView


@dataclass
class Shown:
    """Everything the tabs show for the task under the cursor."""

    details: TaskDetails
    notes: list[str]
    world: Callable[[], list[tuple[str, list[Block]]]]
    finding_marks: dict[str, str] = field(default_factory=dict)  # finding key -> mark text
    expanded: bool = False
    trajectory: Callable[[str], Trajectory | None] = lambda attempt_id: None  # read when shown


class EvidenceTab(Vertical):
    """One tab's content; `show` fills it for a task, `scroll_page` pages through it."""

    name: ClassVar[str]
    title: ClassVar[str]

    async def show(self, shown: Shown) -> None:
        raise NotImplementedError

    def opened(self) -> None:
        """Called when the tab is shown: a tab that reads much (world, trajectory) reads here."""

    def focused(self) -> Widget | None:
        """The widget that takes the keys while the tab is open (None: the task list)."""
        return None

    def scroll_page(self, direction: int) -> None:
        for view in self.query(LinesView):
            view.page(direction)
