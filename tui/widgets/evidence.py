"""What every tab of a task shares: the evidence shown (`Shown`) and the tab's base class."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from textual.containers import Vertical
from textual.widget import Widget

from rubric_audit.core.model import Trajectory
from rubric_audit.review.session import Stance, TaskDetails
from tui.document import Block
from tui.widgets.document import DocumentView, LinesView


@dataclass
class Shown:
    """Everything the tabs show for the task under the cursor."""

    details: TaskDetails
    notes: list[str]
    world: Callable[[], list[tuple[str, list[Block]]]]
    finding_marks: dict[str, str] = field(default_factory=dict)  # finding key -> mark text
    expanded: bool = False
    trajectory: Callable[[str], Trajectory | None] = lambda attempt_id: None  # read when shown
    reviewers: list[Stance] | None = None  # each reviewer's label and notes, when adjudicating


class EvidenceTab(Vertical):
    """One tab's content; `show` fills it for a task, `scroll_page` pages through it, `position`
    and `restore` keep where it was left for each task."""

    name: ClassVar[str]
    title: ClassVar[str]

    async def show(self, shown: Shown) -> None:
        raise NotImplementedError

    def opened(self) -> None:
        """Called when the tab is shown: a tab that reads much (world, trajectory) reads here."""

    def focused(self) -> Widget:
        """The pane that takes the keys when the tab is opened."""
        raise NotImplementedError

    def position(self) -> Any:
        """Where the tab is (scrolls, cursors), for `restore` when its task is shown again."""
        return [view.position() for view in self.query(DocumentView)]

    def restore(self, position: Any) -> None:
        """Go back to a `position` of this task's tab (None: its top); after `show`."""
        views = list(self.query(DocumentView))
        if position is not None and len(position) == len(views):
            for view, at in zip(views, position, strict=True):
                view.scroll_later(at)

    def scroll_page(self, direction: int) -> None:
        for view in self.query(LinesView):
            view.page(direction)
