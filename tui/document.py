"""What a tab shows, as blocks: our own lines (Rich `Text`, styled) and stranger text (`Literal`).

Prompts, answers, rationales, gold, world files, mail and chat come from strangers. They are never
read as Markdown or markup (a `<B12>` vanished, `[draft]` was eaten, a `javascript:` link was
clickable): a `Literal` is shown character for character with controls made visible
(`text.visible`), and laid out a screen at a time by `DocumentView` (a 3 MB answer opens at once).
Our labels and headings are `Text` built with `Text.assemble`, whose stranger parts also go
through `visible`.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType
from rich.text import Text

from rubric_audit.core.text import visible

HEADING = "bold magenta"
TITLE = "bold underline magenta"
CODE = "bold cyan"  # ids and names of ours, as inline code was shown


@dataclass(frozen=True, slots=True)
class Literal:
    """Stranger text, shown as it is (no markup, no Markdown), drawn only where it is on screen."""

    text: str


Block = Literal | RenderableType


def heading(text: str) -> Text:
    """A heading of ours (its stranger parts, such as a variant's name, shown literally)."""
    return Text(visible(text), HEADING)


def plain_text(blocks: list[Block]) -> str:
    """The blocks as plain text, for a model's triage prompt: stranger text as it is."""
    return "\n".join(b.text if isinstance(b, Literal) else b.plain if isinstance(b, Text)
                     else "" for b in blocks)
