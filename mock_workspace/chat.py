"""Chat spaces (Google Chat Takeout layout): list spaces and members, read history, post, reply."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mock_workspace.errors import WorkspaceError
from mock_workspace.paging import page
from rubric_audit.core.model import ChatMessage, ChatSpace


class Chat:
    def __init__(self, spaces: list[ChatSpace], user: str) -> None:
        self.spaces = {s.name: s.model_copy(deep=True) for s in spaces}
        self.user = user
        self.posts: list[dict[str, Any]] = []

    def _space(self, space: str) -> ChatSpace:
        if space not in self.spaces:
            raise WorkspaceError(f"no chat space {space!r}; spaces: {sorted(self.spaces)}")
        return self.spaces[space]

    def list_spaces(self) -> dict[str, Any]:
        return {"items": [{"space": s.name, "members": len(s.members),
                           "messages": len(s.messages)} for s in self.spaces.values()]}

    def members(self, space: str) -> dict[str, Any]:
        return {"space": space, "items": [m.model_dump() for m in self._space(space).members]}

    def history(self, space: str, offset: int = 0, limit: int = 50) -> dict[str, Any]:
        result = page(self._space(space).messages, offset, limit)
        result["items"] = [m.model_dump() for m in result["items"]]
        return {"space": space, **result}

    def post(self, space: str, text: str, topic_id: str | None = None) -> dict[str, Any]:
        target = self._space(space)
        if not text.strip():
            raise WorkspaceError("a chat message needs text")
        message = ChatMessage(message_id=f"{space}/posted-{len(self.posts) + 1}",
                              author=self.user, author_email=self.user,
                              created=datetime.now(UTC).isoformat(timespec="seconds"), text=text,
                              topic_id=topic_id or f"posted-{len(self.posts) + 1}")
        target.messages.append(message)
        self.posts.append({"space": space, **message.model_dump()})
        return {"message_id": message.message_id, "status": "posted"}

    def reply(self, space: str, message_id: str, text: str) -> dict[str, Any]:
        original = next((m for m in self._space(space).messages if m.message_id == message_id),
                        None)
        if original is None:
            raise WorkspaceError(f"no message {message_id!r} in space {space!r}")
        return self.post(space, text, topic_id=original.topic_id or original.message_id)
