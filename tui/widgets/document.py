"""Views drawn a line at a time with Textual's line API: only the lines on screen are made, so a
3 MB answer or a 5,000-step trajectory opens as fast as a short one.

`LinesView` is the shared part (the Trajectory tab's steps are one); `DocumentView` shows a list
of blocks (`tui.document`): our own renderables laid out by Rich, and stranger text (`Literal`)
wrapped to the width in one linear pass over it and cut into rows only when drawn.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable
from itertools import accumulate
from typing import ClassVar, TypedDict, Unpack

from rich.cells import cell_len, chop_cells
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from rubric_audit.core.text import visible
from tui.document import Block, Literal
from tui.widgets.lists import moving

TAB_SIZE = 8
MATCH = Style(color="black", bgcolor="yellow")
CURRENT_MATCH = Style(color="black", bgcolor="dark_orange", bold=True)


class WidgetOptions(TypedDict, total=False):
    """The keyword arguments every Textual widget takes, passed on by our widgets' `__init__`."""

    name: str | None
    id: str | None
    classes: str | None
    disabled: bool


class LinesView(ScrollView, can_focus=True, inherit_bindings=False):
    """A scrolling view of `line_count()` lines, each drawn by `line_strip` when it is on screen,
    on the widget's own colours. `/` searches its lines (`search`): every match is highlighted,
    n and N go from one to the next."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *moving("text", ("scroll_up", "scroll_down", "scroll_home", "scroll_end", "page_up",
                         "page_down"),
                ("Scroll up", "Scroll down", "Top", "Bottom", "Page up", "Page down")),
        Binding("left", "scroll_left", "Scroll left", id="text.left", show=False),
        Binding("right", "scroll_right", "Scroll right", id="text.right", show=False),
    ]

    def __init__(self, **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(**kwargs)
        self._query = ""
        self._matches: list[tuple[int, int, int]] = []  # (line, start, end) in the line's text
        self._on_line: dict[int, list[int]] = {}  # line -> its matches' indices
        self._current = -1

    def line_count(self) -> int:
        raise NotImplementedError

    def line_strip(self, index: int, width: int) -> Strip:
        raise NotImplementedError

    def line_text(self, index: int) -> str:
        """The line's text, as searched (the line as drawn, before any cut to the width)."""
        raise NotImplementedError

    def first_column(self) -> int:
        """The column of the line's text drawn at the view's left edge."""
        return 0

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        if index >= self.line_count():
            return Strip.blank(width, self.rich_style)
        strip = self.line_strip(index, width)
        if index in self._on_line:
            strip = self._highlighted(strip, index)
        return strip.apply_style(self.rich_style)

    def page(self, direction: int) -> None:
        (self.scroll_page_down if direction > 0 else self.scroll_page_up)(animate=False)

    @property
    def query_text(self) -> str:
        return self._query

    def search(self, query: str) -> tuple[int, int]:
        """Highlight every match of `query` (case-blind, as written) and go to the first one on
        screen or after it; returns (the match gone to, counted from 1, the number of matches),
        (0, 0) for none. An empty query clears the search."""
        self._query, self._current = query, -1
        self._find()
        if self._matches:
            top = self.scroll_offset.y
            first = next((i for i, m in enumerate(self._matches) if m[0] >= top), 0)
            return self._go(first)
        self.refresh()
        return 0, 0

    def matched(self) -> tuple[int, int]:
        """(the match gone to, counted from 1 (0: none yet), the number of matches)."""
        return self._current + 1, len(self._matches)

    def step_match(self, step: int) -> tuple[int, int]:
        """Go to the next (1) or previous (-1) match, round the end."""
        if not self._matches:
            return 0, 0
        return self._go((self._current + step) % len(self._matches))

    def lines_changed(self) -> None:
        """Find the matches again: the lines were laid out anew (a new width, a fold)."""
        if self._query:
            self._find()
            self._current = min(self._current, len(self._matches) - 1)

    def _find(self) -> None:
        """Every match, a line at a time: one linear pass over each line's text."""
        self._matches, self._on_line = [], {}
        wanted = self._query.casefold()
        if not wanted:
            return
        on_line = defaultdict(list)
        for index in range(self.line_count()):
            text = self.line_text(index).casefold()
            at = text.find(wanted)
            while at >= 0:
                on_line[index].append(len(self._matches))
                self._matches.append((index, at, at + len(wanted)))
                at = text.find(wanted, at + len(wanted))
        self._on_line = dict(on_line)

    def _go(self, number: int) -> tuple[int, int]:
        self._current = number
        line, start, _ = self._matches[number]
        self.reveal(line, cell_len(self.line_text(line)[:start]))
        self.refresh()
        return number + 1, len(self._matches)

    def reveal(self, line: int, column: int) -> None:
        """Bring a line (and a column of it) on screen, a third of the way down."""
        height = max(1, self.scrollable_content_region.height)
        width = max(1, self.scrollable_content_region.width)
        x = None if self.scroll_offset.x <= column < self.scroll_offset.x + width \
            else max(0, column - width // 3)
        self.scroll_to(x, max(0, line - height // 3), animate=False, immediate=True, force=True)

    def _highlighted(self, strip: Strip, index: int) -> Strip:
        """The strip with this line's matches in the match colours (the current one apart)."""
        text, left = self.line_text(index), self.first_column()
        spans = []
        for number in self._on_line[index]:
            _, start, end = self._matches[number]
            spans.append((cell_len(text[:start]) - left, cell_len(text[:end]) - left,
                          CURRENT_MATCH if number == self._current else MATCH))
        width = strip.cell_length
        cuts = sorted({min(max(c, 0), width) for s, e, _ in spans for c in (s, e)} | {width})
        pieces, at, out = strip.divide(cuts), 0, []
        for piece, end in zip(pieces, cuts, strict=True):
            style = next((st for s, e, st in spans if s <= at and end <= e and at < end), None)
            out.append(Strip(Segment.apply_style(piece, post_style=style), piece.cell_length)
                       if style else piece)  # over the text's own colours
            at = end
        return Strip.join(out)


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
        self._arrival: tuple[float, float] | None = None  # where to be once laid out
        self.update(blocks)

    def update(self, blocks: Iterable[Block], at: tuple[float, float] = (0, 0)) -> None:
        """Show these blocks from the top, or from `at` (a column and line, as `position`
        gave them), once laid out. Stranger text is made visible once, here."""
        self._blocks = [Literal(visible(b.text).expandtabs(TAB_SIZE)) if isinstance(b, Literal)
                        else b for b in blocks]
        self._width = 0
        self._arrival = at
        self._layout()

    def position(self) -> tuple[float, float]:
        """Where the view is scrolled to: the one it is to be scrolled to once laid out, else the
        one it is at."""
        return self._arrival or (self.scroll_x, self.scroll_y)

    def scroll_later(self, at: tuple[float, float]) -> None:
        """Scroll to `at` now if the view is laid out, else as soon as it is (a tab not shown
        yet has no width)."""
        self._arrival = at
        if self._width:
            self._arrive()

    def _arrive(self) -> None:
        if self._arrival is not None:
            x, y = self._arrival
            self._arrival = None
            self.scroll_to(x, y, animate=False, immediate=True, force=True)

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
        self.lines_changed()
        self._arrive()
        self.refresh()

    def on_mount(self) -> None:
        self._layout()

    def line_count(self) -> int:
        return self._lines

    def _segments(self, index: int) -> list[Segment]:
        block = bisect_right(self._first, index) - 1
        laid, row = self._laid[block], index - self._first[block]
        if isinstance(laid, tuple):
            text, starts = laid
            end = starts[row + 1] if row + 1 < len(starts) else len(text)
            return [Segment(text[starts[row]:end].rstrip("\n"))]
        return laid[row]

    def line_strip(self, index: int, width: int) -> Strip:
        left = self.scroll_offset.x
        return Strip(self._segments(index)).crop_extend(left, left + width, None)

    def line_text(self, index: int) -> str:
        return "".join(segment.text for segment in self._segments(index))

    def first_column(self) -> int:
        return self.scroll_offset.x

