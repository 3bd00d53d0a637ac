"""The mailbox: list, search and read the world's mail; send, reply, reply-all and forward.

Messages the agent sends are kept apart (folder `sent`) and exported as an mbox for grading.
"""

from __future__ import annotations

import mailbox
import tempfile
from collections import Counter
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime, getaddresses
from pathlib import Path
from typing import Any

from mock_workspace.errors import WorkspaceError
from mock_workspace.paging import page
from rubric_audit.core.model import MailMessage

FOLDERS = ("inbox", "sent")


def iso_datetime(value: str | None) -> datetime | None:
    """A tool argument's ISO date or date-time (UTC where it names no zone), None where empty;
    anything else is the agent's error, said back to it."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise WorkspaceError(f"not an ISO date or date-time: {value!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _summary(m: MailMessage) -> dict[str, Any]:
    return {"message_id": m.message_id, "date": m.date, "from": m.sender, "to": m.to,
            "subject": m.subject}


def _owner(messages: list[MailMessage]) -> str:
    """The mailbox's owner: the address the world's mail is most often sent to."""
    counts = Counter(a.lower() for m in messages for a in [*m.to, *m.cc])
    return counts.most_common(1)[0][0] if counts else "me@workspace.local"


class Mailbox:
    def __init__(self, messages: list[MailMessage]) -> None:
        self.inbox = list(messages)
        self.sent: list[MailMessage] = []
        self.owner = _owner(messages)

    def _folder(self, folder: str) -> list[MailMessage]:
        if folder not in FOLDERS:
            raise WorkspaceError(f"unknown folder {folder!r}; folders: {list(FOLDERS)}")
        items = self.inbox if folder == "inbox" else self.sent
        return sorted(items, key=lambda m: (m.date, m.message_id), reverse=True)

    def list_folder(self, folder: str = "inbox", offset: int = 0, limit: int = 20) -> dict[str, Any]:
        result = page(self._folder(folder), offset, limit)
        result["items"] = [_summary(m) for m in result["items"]]
        return result

    def search(self, sender: str | None = None, recipient: str | None = None,
               subject: str | None = None, text: str | None = None,
               date_from: str | None = None, date_to: str | None = None,
               offset: int = 0, limit: int = 20) -> dict[str, Any]:
        start, end = iso_datetime(date_from), iso_datetime(date_to)

        def matches(m: MailMessage) -> bool:
            when = iso_datetime(m.date)
            return all((
                not sender or sender.lower() in m.sender.lower(),
                not recipient or any(recipient.lower() in a.lower() for a in [*m.to, *m.cc]),
                not subject or subject.lower() in m.subject.lower(),
                not text or text.lower() in (m.subject + "\n" + m.body).lower(),
                not start or (when is not None and when >= start),
                not end or (when is not None and when <= end),
            ))

        found = [m for m in self._folder("inbox") + self._folder("sent") if matches(m)]
        result = page(found, offset, limit)
        result["items"] = [_summary(m) for m in result["items"]]
        return result

    def read(self, message_id: str) -> dict[str, Any]:
        m = self._find(message_id)
        return {**_summary(m), "cc": m.cc, "in_reply_to": m.in_reply_to, "body": m.body}

    def _find(self, message_id: str) -> MailMessage:
        for m in self.inbox + self.sent:
            if m.message_id == message_id or m.message_id.strip("<>") == message_id.strip("<>"):
                return m
        raise WorkspaceError(f"no message with id {message_id!r}")

    def send(self, to: list[str], subject: str, body: str, cc: list[str] | None = None,
             in_reply_to: str | None = None) -> dict[str, Any]:
        if not to:
            raise WorkspaceError("a message needs at least one recipient")
        message = MailMessage(
            message_id=f"<sent-{len(self.sent) + 1}@workspace.local>", mailbox="sent",
            date=datetime.now(UTC).isoformat(timespec="seconds"), sender=self.owner, to=to,
            cc=cc or [], subject=subject, in_reply_to=in_reply_to, body=body)
        self.sent.append(message)
        return {"message_id": message.message_id, "status": "sent"}

    def reply(self, message_id: str, body: str, reply_all: bool = False) -> dict[str, Any]:
        original = self._find(message_id)
        to = [a for _, a in getaddresses([original.sender])]
        cc = ([a for a in [*original.to, *original.cc] if a.lower() != self.owner]
              if reply_all else [])
        subject = original.subject if original.subject.lower().startswith("re:") \
            else f"Re: {original.subject}"
        return self.send(to, subject, body, cc=cc, in_reply_to=original.message_id)

    def forward(self, message_id: str, to: list[str], body: str = "") -> dict[str, Any]:
        original = self._find(message_id)
        quoted = (f"{body}\n\n---------- Forwarded message ----------\nFrom: {original.sender}\n"
                  f"Date: {original.date}\nSubject: {original.subject}\n\n{original.body}")
        return self.send(to, f"Fwd: {original.subject}", quoted.lstrip())

    def sent_mbox(self) -> str:
        """The sent messages as an mbox, written by the standard library's `mailbox` (it quotes a
        body line starting "From " as ">From ", so no message is split in two)."""
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "sent.mbox"
            box = mailbox.mbox(path)
            try:
                for m in self.sent:
                    box.add(self._as_mbox_message(m))
                box.flush()
            finally:
                box.close()
            return path.read_text(encoding="utf-8") if path.exists() else ""

    @staticmethod
    def _as_mbox_message(m: MailMessage) -> mailbox.mboxMessage:
        msg = EmailMessage()
        msg["Message-ID"], msg["From"], msg["To"] = m.message_id, m.sender, ", ".join(m.to)
        if m.cc:
            msg["Cc"] = ", ".join(m.cc)
        msg["Date"] = format_datetime(datetime.fromisoformat(m.date))
        msg["Subject"] = m.subject
        if m.in_reply_to:
            msg["In-Reply-To"] = m.in_reply_to
        msg.set_content(m.body)
        boxed = mailbox.mboxMessage(msg)
        boxed.set_from(m.sender, datetime.fromisoformat(m.date).astimezone(UTC).timetuple())
        return boxed
