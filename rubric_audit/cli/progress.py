"""Progress of a long command: Rich's bar on a terminal, plain lines anywhere else.

A command piped into a file or run by CI has no terminal, and Rich's bar then draws nothing until
the end: ten minutes of `grade` printed nothing. Without a terminal the progress is one line every
`every` items (a tenth of the total by default) or every `interval` seconds, whichever comes
first; a line comes each interval even when nothing finished, so a slow provider still shows that
the command is alive.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

INTERVAL = 60.0  # seconds between plain lines at most


def _clock(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


class CommandProgress:
    """`advance` as items finish; `stats()` says what the line shows beside the count."""

    def __init__(self, console: Console, label: str, unit: str, total: int | None = None,
                 stats: Callable[[], str] = lambda: "", every: int | None = None,
                 interval: float | None = None) -> None:
        self.console = console
        self.label = label
        self.unit = unit
        self.total = total
        self.stats = stats
        self.every = every
        self.interval = INTERVAL if interval is None else interval
        self.done = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._started = time.monotonic()
        self._last_line = self._started
        self._last_done = 0
        self._bar: Progress | None = None
        self._bar_task: TaskID | None = None
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> CommandProgress:
        if self.console.is_terminal:
            self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeRemainingColumn(),
                                 TextColumn("{task.fields[stats]}"), console=self.console)
            self._bar.start()
            self._bar_task = self._bar.add_task(self.label, total=self.total, stats="")
        else:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._stop.set()
        if self._bar is not None:
            self._bar.stop()
        if self._ticker is not None:
            self._ticker.join()
            if self.done != self._last_done:
                self._line()

    def plan(self, total: int) -> None:
        """The number of items, once known."""
        with self._lock:
            self.total = total
            if self._bar is not None and self._bar_task is not None:
                self._bar.update(self._bar_task, total=total)

    def advance(self, items: int = 1) -> None:
        with self._lock:
            self.done += items
            if self._bar is not None and self._bar_task is not None:
                self._bar.update(self._bar_task, advance=items, stats=self.stats())
                return
            every = self.every or max(1, (self.total or 10) // 10)
            if self.done - self._last_done >= every:
                self._line()

    def _tick(self) -> None:
        while not self._stop.wait(min(self.interval, 1.0)):
            with self._lock:
                if time.monotonic() - self._last_line >= self.interval:
                    self._line()

    def _line(self) -> None:
        """One plain line (the lock held, or the ticker stopped)."""
        now = time.monotonic()
        elapsed = now - self._started
        of = f"/{self.total}" if self.total is not None else ""
        rate = f", {self.done / elapsed * 60:.1f} {self.unit}/min" if elapsed > 0 else ""
        stats = self.stats()
        self.console.print(f"{self.label}: {self.done}{of} {self.unit}"
                           f"{f' ({stats})' if stats else ''}{rate}, {_clock(elapsed)} elapsed",
                           highlight=False, markup=False, soft_wrap=True)
        self._last_line, self._last_done = now, self.done
