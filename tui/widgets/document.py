"""Views drawn a line at a time with Textual's line API: only the lines on screen are made, so a
3 MB answer or a 5,000-step trajectory opens as fast as a short one.

`LinesView` is the shared part (the Trajectory tab's steps are one); `DocumentView` shows a list
of blocks (`tui.document`): our own renderables laid out by Rich, and stranger text (`Literal`)
wrapped to the width in one linear pass over it and cut into rows only when drawn.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from itertools import accumulate
from typing import TypedDict, Unpack

from rich.cells import chop_cells
from rich.measure import Measurement
from rich.segment import Segment
from textual.events import Resize
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from rubric_audit.core.text import visible
from tui.document import Block, Literal

TAB_SIZE = 8


class WidgetOptions(TypedDict, total=False):
    """The keyword arguments every Textual widget takes, passed on by our widgets' `__init__`."""

    name: str | None
    id: str | None
    classes: str | None
    disabled: bool


class LinesView(ScrollView):
    """A scrolling view of `line_count()` lines, each drawn by `line_strip` when it is on screen,
    on the widget's own colours."""

    def line_count(self) -> int:
        raise NotImplementedError

    def line_strip(self, index: int, width: int) -> Strip:
        raise NotImplementedError

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        if index >= self.line_count():
            return Strip.blank(width, self.rich_style)
        return self.line_strip(index, width).apply_style(self.rich_style)

    def page(self, direction: int) -> None:
        (self.scroll_page_down if direction > 0 else self.scroll_page_up)(animate=False)


def row_starts(text: str, width: int) -> list[int]:
    """Where each display row of `text` starts when wrapped to `width` cells: at each line break,
    then at the last space that fits (or at the width when a word is longer). Linear: each row is
    found by one bounded search; a line of wide characters is cut by its cells."""
    ascii_only = text.isascii()
    lengths = list(map(len, text.split("\n")))
    if ascii_only and max(lengths) <= width:  # every line fits: a row per line
        return list(accumulate(lengths[:-1], lambda start, n: start + n + 1, initial=0))
    starts: list[int] = []
    pos, size = 0, len(text)
    while True:
        end = text.find("\n", pos)
        end = size if end < 0 else end
        starts.append(pos)
        line = "" if ascii_only else text[pos:end]
        if line and not line.isascii():
            for piece in chop_cells(line, width)[:-1]:
                pos += len(piece)
                starts.append(pos)
        else:
            while end - pos > width:
                cut = text.rfind(" ", pos + 1, pos + width + 1)
                pos = cut + 1 if cut > pos else pos + width
                starts.append(pos)
        if end >= size:
            return starts
        pos = end + 1


class DocumentView(LinesView):
    """Blocks shown one after the other; laid out again when the width changes (the scrollbar's
    gutter is kept, so a scrollbar appearing does not change it). Stranger text wraps to the
    width; a block of ours that cannot (a sheet's grid, whose cells are never cut) is drawn at
    its own width and scrolls sideways."""

    DEFAULT_CSS = """
    DocumentView { scrollbar-gutter: stable; overflow-x: auto; }
    """

    def __init__(self, blocks: Iterable[Block] = (), **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(**kwargs)
        self._blocks: list[Block] = []
        self._width = 0
        self._laid: list[list[list[Segment]] | tuple[str, list[int]]] = []
        self._first: list[int] = []  # the first line of each block
        self._lines = 0
        self.update(blocks)

    def update(self, blocks: Iterable[Block]) -> None:
        """Show these blocks from the top (stranger text made visible once, here)."""
        self._blocks = [Literal(visible(b.text).expandtabs(TAB_SIZE)) if isinstance(b, Literal)
                        else b for b in blocks]
        self._width = 0
        self.scroll_to(0, 0, animate=False)
        self._layout()

    def plain(self, lines: int | None = None) -> str:
        """The first `lines` lines (None: all) as drawn at the current width, for tests and the
        bench."""
        return "\n".join(self.line_strip(i, self._width).text.rstrip()
                         for i in range(min(self._lines, lines or self._lines)))

    def on_resize(self, event: Resize) -> None:
        self._layout()

    def _layout(self) -> None:
        width = self.scrollable_content_region.width
        if width <= 0 or width == self._width or not self.is_mounted:
            return
        self._width = width
        options = self.app.console.options.update_width(width)
        self._laid, self._first, self._lines, columns = [], [], 0, width
        for block in self._blocks:
            if isinstance(block, Literal):
                laid: list[list[Segment]] | tuple[str, list[int]] = (
                    block.text, row_starts(block.text, width))
                count = len(laid[1])
            else:
                own = max(width, Measurement.get(self.app.console, options, block).minimum)
                laid = self.app.console.render_lines(block, options.update_width(own), pad=False)
                count, columns = len(laid), max(columns, own)
            self._laid.append(laid)
            self._first.append(self._lines)
            self._lines += count
        self.virtual_size = Size(columns if columns > width else 0, self._lines)
        self.refresh()

    def on_mount(self) -> None:
        self._layout()

    def line_count(self) -> int:
        return self._lines

    def line_strip(self, index: int, width: int) -> Strip:
        block = bisect_right(self._first, index) - 1
        laid, row = self._laid[block], index - self._first[block]
        if isinstance(laid, tuple):
            text, starts = laid
            end = starts[row + 1] if row + 1 < len(starts) else len(text)
            segments = [Segment(text[starts[row]:end].rstrip("\n"))]
        else:
            segments = laid[row]
        left = self.scroll_offset.x
        return Strip(segments).crop_extend(left, left + width, None)

