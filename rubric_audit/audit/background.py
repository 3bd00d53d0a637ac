"""Pure work done in other processes, on other cores: started early in a second process, so that
it runs beside the audit's reading of runs (`in_background`), or spread item by item over worker
processes with the results in order (`in_order`: reading an archive's attempts, checking them).

Only where `fork` is available (the child shares the parent's loaded modules and inputs without
pickling them) and this process runs a single thread (a fork copies no other thread, so a lock one
of them held would stay locked in the child). Otherwise, and whenever a child fails for any
reason, the work runs in this process (the work of the item that failed, when its result is
asked for), so a failure surfaces exactly as it would without the other processes.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from multiprocessing.connection import Connection
from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")
Item = TypeVar("Item")
_END = object()


def _can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


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
        if _can_fork():
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


def _serve(fn: Callable[[Any], Any], connection: Connection) -> None:
    """A worker: each item received, its result sent back (None: the item failed here)."""
    while (item := connection.recv()) is not None:
        try:
            result = (True, fn(item[0]))
        except BaseException:  # reproduced in the parent, where it is reported as usual
            result = (False, None)
        connection.send(result)
    connection.close()


MAX_WORKERS = 8
WORKERS_ENV = "RUBRIC_AUDIT_WORKERS"
"""Caps the worker processes (1: none, all work in the audit's own process: a profile of it)."""


def workers_available() -> int:
    """How many worker processes `in_order` would start (1: it works in this process)."""
    cap = os.environ.get(WORKERS_ENV, "")
    count = min(os.cpu_count() or 1, MAX_WORKERS, int(cap) if cap.isdecimal() else MAX_WORKERS)
    return max(count, 1) if _can_fork() else 1


def in_order(fn: Callable[[Item], T], items: Iterable[Item], workers: int | None = None
             ) -> Iterator[T]:
    """`fn(item)` of each item, in the items' order, computed in `workers` forked processes
    (default: one per core) or, with one, here. Each worker holds one item at a time, so no
    more items are read ahead than there are workers (the items may be large)."""
    count = workers_available() if workers is None else min(workers, workers_available())
    if count <= 1:
        yield from map(fn, items)
        return
    context = multiprocessing.get_context("fork")
    started: list[tuple[multiprocessing.process.BaseProcess, Connection]] = []
    process: multiprocessing.process.BaseProcess
    gc.freeze()  # a child's collector would otherwise walk, and so copy, every page of the heap
    try:
        for _ in range(count):
            here, there = context.Pipe()
            process = context.Process(target=_serve, args=(fn, there), daemon=True)
            process.start()
            there.close()
            started.append((process, here))
    finally:
        gc.unfreeze()
    # (worker, whether it was sent to the worker, item): an item of a worker that died is
    # done here, as are those handed to it after
    pending: deque[tuple[int, bool, Item]] = deque()
    alive = [True] * count
    source = iter(items)

    def hand(worker: int) -> None:
        """The next item, to `worker` if it is up, else to this process."""
        item = next(source, _END)
        if item is not _END:
            if alive[worker]:
                started[worker][1].send((item,))
            pending.append((worker, alive[worker], cast(Item, item)))

    try:
        for worker in range(count):
            hand(worker)
        while pending:
            worker, sent, item = pending.popleft()
            done, value = False, None
            if sent:
                try:
                    done, value = started[worker][1].recv()
                except (EOFError, OSError):  # the worker died without an answer
                    alive[worker] = False
            hand(worker)
            yield cast(T, value) if done else fn(item)
    finally:
        for process, connection in started:
            with suppress(OSError, ValueError):  # a worker already gone
                connection.send(None)
            connection.close()
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join()
