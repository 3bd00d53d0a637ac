"""A workspace session: one agent's view of a task's world, its state, and the export of changes.

The benchmark folder is never touched: the world's files (plus the task overlay) are read from
memory, shared by the world's sessions, and what the agent writes is kept in a temporary folder
of the session's own, made at its first write (`files.FileStore`); mail, calendar and chat are
copies in memory. Only the world and this task's overlay are served, so rubrics, golds and other
tasks are out of reach by construction.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mock_workspace.chat import Chat
from mock_workspace.errors import WorkspaceError
from mock_workspace.events import Calendar
from mock_workspace.files import FileStore
from mock_workspace.mail import Mailbox
from rubric_audit.core.errors import InputError
from rubric_audit.core.model import Benchmark, Task
from rubric_audit.load.world import WorldReader

MAX_MESSAGE_BYTES = 100_000
"""One mail, chat message or calendar event the agent writes."""
MAX_SESSION_WRITE_BYTES = 20_000_000
"""Everything one session writes: files, mail, chat posts and events."""


def check_export_folder(folder: Path) -> None:
    """Refuse, before serving, a folder the agent's changes could not be exported to when the
    session ends: a file, a folder already holding something (nothing exported before is
    overwritten), or a place this process cannot write."""
    if folder.exists() and not folder.is_dir():
        raise InputError(folder, "--export", "a file, not a folder: the agent's changes are "
                                             "written into a folder (files/, mail/, calendar/, "
                                             "chat/); give a new or empty one")
    if folder.is_dir() and any(folder.iterdir()):
        raise InputError(folder, "--export", "not empty: give a new or empty folder (nothing "
                                             "exported before is overwritten)")
    parent = folder if folder.is_dir() else folder.parent
    try:
        if not parent.is_dir():
            raise FileNotFoundError(f"no folder {parent}")
        tempfile.TemporaryFile(dir=parent).close()
    except OSError as exc:
        raise InputError(folder, "--export", f"cannot be written: {exc.strerror or exc}") from None


def export_or_rescue(session: Session, folder: Path, new_folder: bool = False) -> Path:
    """Export the session's changes to `folder` (made first with `new_folder`: never one planted
    or linked there before); where that fails after all (the disk filled, the folder was removed
    or taken while serving), to a new temporary folder instead, said on stderr, so the agent's
    work is never lost. Returns where they went."""
    try:
        if new_folder:
            folder.mkdir(parents=True)
        session.export(folder)
        return folder
    except OSError as exc:
        rescue = Path(tempfile.mkdtemp(prefix="workspace-export-"))
        session.export(rescue)
        print(f"could not export to {folder} ({exc.strerror or exc}); the agent's changes are "
              f"in {rescue}", file=sys.stderr)
        return rescue


class Session:
    """One agent's private view of a task world. Use as a context manager."""

    def __init__(self, bench: Benchmark, task: Task, worlds: WorldReader | None = None) -> None:
        """`worlds` shares each world's files and parsed mail, calendar and chat between the
        sessions of a run (the runner's), so a session copies only what its agent writes."""
        self.task_id = task.id
        worlds = worlds or WorldReader(bench, with_text=False)
        files = worlds.filesystem(task)
        contents = worlds.contents(task)  # corrupt mail/ics/chat raise here
        self.files = FileStore(files, prefix=f"workspace-{task.id[:16]}-")
        self.mail = Mailbox(contents.mail)
        self.calendar = Calendar(contents.events)
        self.chat = Chat(contents.chat, self.mail.owner)
        self.written = 0

    @contextmanager
    def charged(self, *texts: str, limit: int | None = MAX_MESSAGE_BYTES) -> Iterator[None]:
        """Refuse a write whose text is over `limit` bytes, or that would take the session past
        MAX_SESSION_WRITE_BYTES in all; count it once it succeeded."""
        size = sum(len(t.encode("utf-8", errors="replace")) for t in texts)
        if limit is not None and size > limit:
            raise WorkspaceError(f"the text is {size:,} bytes; the limit is {limit:,}")
        if self.written + size > MAX_SESSION_WRITE_BYTES:
            raise WorkspaceError(f"this session has written {self.written:,} bytes; the limit "
                                 f"is {MAX_SESSION_WRITE_BYTES:,} in all")
        yield
        self.written += size

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.files.close()

    def export(self, dest: Path) -> list[str]:
        """Write what the agent changed under `dest`; returns the written paths, relative."""
        dest = Path(dest)
        written: list[str] = []

        def put(rel: str, data: bytes) -> None:
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.unlink(missing_ok=True)  # a link planted here is replaced, not written through
            target.write_bytes(data)
            written.append(rel)

        for rel, data in self.files.changed():
            put(f"files/{rel}", data)
        if self.mail.sent:
            put("mail/sent.mbox", self.mail.sent_mbox().encode())
        changes = self.calendar.changes()
        if any(changes.values()):
            put("calendar/changes.json", json.dumps(changes, indent=2).encode())
        if self.chat.posts:
            put("chat/posts.json", json.dumps(self.chat.posts, indent=2).encode())
        return written
