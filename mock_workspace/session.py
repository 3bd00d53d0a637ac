"""A workspace session: a fresh copy of one task's world, its state, and the export of changes.

The benchmark folder is never touched: the world (plus the task overlay) is written to a new
temporary folder, and mail, calendar and chat are read from that copy. Only the world and this
task's overlay are copied, so rubrics, golds and other tasks are out of reach by construction.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from mock_workspace.chat import Chat
from mock_workspace.events import Calendar
from mock_workspace.files import FileStore
from mock_workspace.mail import Mailbox
from rubric_audit.load.world import task_tree, world_contents
from rubric_audit.model import Benchmark, Task


class Session:
    """One agent's private copy of a task world. Use as a context manager."""

    def __init__(self, bench: Benchmark, task: Task) -> None:
        self.task_id = task.id
        tree = task_tree(bench, task)
        contents = world_contents(tree, with_text=False)  # corrupt mail/ics/chat raise here
        self.root = Path(tempfile.mkdtemp(prefix=f"workspace-{task.id[:16]}-"))
        try:
            for rel, data in tree.items():
                target = self.root / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            (self.root / "filesystem").mkdir(exist_ok=True)
        except BaseException:
            shutil.rmtree(self.root)
            raise
        self.files = FileStore(self.root / "filesystem")
        self.mail = Mailbox(contents.mail)
        self.calendar = Calendar(contents.events)
        self.chat = Chat(contents.chat, self.mail.owner)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def export(self, dest: Path) -> list[str]:
        """Write what the agent changed under `dest`; returns the written paths, relative."""
        dest = Path(dest)
        written: list[str] = []

        def put(rel: str, data: bytes) -> None:
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written.append(rel)

        for path in self.files.changed():
            put(f"files/{path.relative_to(self.files.root).as_posix()}", path.read_bytes())
        if self.mail.sent:
            put("mail/sent.mbox", self.mail.sent_mbox().encode())
        changes = self.calendar.changes()
        if any(changes.values()):
            put("calendar/changes.json", json.dumps(changes, indent=2).encode())
        if self.chat.posts:
            put("chat/posts.json", json.dumps(self.chat.posts, indent=2).encode())
        return written
