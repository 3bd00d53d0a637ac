"""Pure work started early in a second process, so that it runs beside the audit's reading of runs
on another core.

Only where `fork` is available (the child shares the parent's loaded modules and inputs without
pickling them) and this process runs a single thread (a fork copies no other thread, so a lock one
of them held would stay locked in the child). Otherwise, and whenever the child fails for any
reason, the work runs in this process when its result is asked for, so a failure surfaces
exactly as it would without the second process.
"""

from __future__ import annotations

import gc
import multiprocessing
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")


def _child(fn: Callable[..., Any], args: tuple[Any, ...], sender: Connection) -> None:
    try:
        result = (True, fn(*args))
    except BaseException:  # reproduced in the parent, where it is reported as usual
        result = (False, None)
    sender.send(result)
    sender.close()


class Pending(Generic[T]):
    """The result of `fn(*args)`, computed in a forked process if one could be started."""

    def __init__(self, fn: Callable[..., T], args: tuple[Any, ...]) -> None:
        self._fn, self._args = fn, args
        self._process: multiprocessing.process.BaseProcess | None = None
        if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
            context = multiprocessing.get_context("fork")
            self._receiver, sender = context.Pipe(duplex=False)
            self._process = context.Process(target=_child, args=(fn, args, sender), daemon=True)
            # The child's collector would otherwise walk, and so copy, every page of the heap.
            gc.freeze()
            try:
                self._process.start()
            finally:
                gc.unfreeze()
            sender.close()

    def result(self) -> T:
        if self._process is not None:
            try:
                done, value = self._receiver.recv()
            except (EOFError, OSError):  # the child died without an answer
                done, value = False, None
            self.stop()
            if done:
                return cast(T, value)  # what the child's fn returned, through the pipe
        return self._fn(*self._args)

    def stop(self) -> None:
        if self._process is not None:
            self._receiver.close()
            if self._process.is_alive():
                self._process.terminate()
            self._process.join()
            self._process = None


@contextmanager
def in_background(fn: Callable[..., T], *args: Any) -> Iterator[Pending[T]]:
    """`fn(*args)` started in a forked process; stopped when the block ends unasked."""
    pending = Pending(fn, args)
    try:
        yield pending
    finally:
        pending.stop()
