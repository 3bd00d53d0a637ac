"""A workspace Session per MCP session, for the streamable HTTP server.

mcp 2.3 stands for one MCP session (one `mcp-session-id` over streamable HTTP) in the server by a
`Connection`: its `session_id`, its `state` (kept across the session's requests) and its
`exit_stack`, unwound when the session ends (the client's DELETE, the idle timeout, the transport
closing, the server stopping). A request's middleware and handlers reach it only through the
request's ServerSession, hence `connection_of`.

The 2026-07-28 protocol has no sessions (each request stands alone), so the pool answers it with
"unsupported protocol version", naming the handshake versions: a client in mcp's default `auto`
mode then connects with the initialize handshake, and gets a session.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    UNSUPPORTED_PROTOCOL_VERSION,
    UnsupportedProtocolVersionErrorData,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from mock_workspace.errors import WorkspaceError
from mock_workspace.session import Session, check_export_folder, export_or_rescue
from rubric_audit.core.model import Benchmark, Task
from rubric_audit.load.world import WorldReader

MAX_SESSIONS = 16
"""Workspace sessions one HTTP server holds at once: each holds what its agent writes."""
STATE_KEY = "mock_workspace.session"


def connection_of(ctx: ServerRequestContext[Any, Any]) -> Connection | None:
    """The MCP connection (one MCP session) a request came on; None where this mcp has none.

    mcp 2.3 hands a request's Connection to middleware and handlers only as its ServerSession's
    `_connection` (as the SDK's own tests reach it); the HTTP tests fail should that change."""
    connection = getattr(ctx.session, "_connection", None)
    return connection if isinstance(connection, Connection) else None


@dataclass(frozen=True)
class PooledSession:
    """A Session with the number it was started under (its export folder) and its MCP session id."""

    number: int
    mcp_session_id: str | None
    session: Session


def pooled(ctx: ServerRequestContext[Any, Any]) -> PooledSession | None:
    """The pooled session a request belongs to, if it has one."""
    connection = connection_of(ctx)
    found = connection.state.get(STATE_KEY) if connection is not None else None
    return found if isinstance(found, PooledSession) else None


class SessionPool:
    """The workspace sessions of one HTTP server, one per MCP session.

    Each gets its own Session (its own view of the world's files, write budget, mail, calendar
    and chat) when it initializes, at most `limit` at once; the world's files and parsed contents
    are shared. When the MCP session ends, or at the latest when the pool is closed (the server
    stopped), its changes are exported to EXPORT/<n>/ (n: 1, 2, ... in start order) and what it
    wrote removed.
    Installed as server middleware; use as a context manager.
    """

    def __init__(self, bench: Benchmark, task: Task, export_to: Path | None,
                 limit: int = MAX_SESSIONS) -> None:
        if export_to is not None:
            check_export_folder(export_to)
        self._bench, self._task, self._export_to, self.limit = bench, task, export_to, limit
        self._worlds = WorldReader(bench, with_text=False)
        Session(bench, task, self._worlds).close()  # a corrupt world is refused now, not per session
        self._lock = threading.Lock()
        self._live: dict[int, Session] = {}
        self._opening = 0
        self._started = 0

    def __enter__(self) -> SessionPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            raise MCPError(UNSUPPORTED_PROTOCOL_VERSION, "this workspace server keeps a workspace "
                           "per MCP session: connect with the initialize handshake",
                           UnsupportedProtocolVersionErrorData(
                               supported=list(HANDSHAKE_PROTOCOL_VERSIONS),
                               requested=ctx.protocol_version).model_dump(mode="json"))
        if ctx.method == "initialize":
            connection = connection_of(ctx)
            if connection is None:
                raise MCPError(INTERNAL_ERROR, "this mcp version gives requests no connection: "
                               "the workspace server needs mcp 2.3's to keep sessions apart")
            if STATE_KEY not in connection.state:
                entry = await self._open(connection.session_id)
                connection.state[STATE_KEY] = entry
                connection.exit_stack.push_async_callback(anyio.to_thread.run_sync, self.finish,
                                                          entry.number)
        return await call_next(ctx)

    async def _open(self, mcp_session_id: str | None) -> PooledSession:
        with self._lock:
            if len(self._live) + self._opening >= self.limit:
                raise MCPError(INVALID_REQUEST, f"this workspace server holds at most "
                               f"{self.limit} sessions at once and all are open; end one "
                               "(close its client) and connect again")
            self._opening += 1
        try:
            with anyio.CancelScope(shield=True):  # a session made is always pooled, so removed
                session = await anyio.to_thread.run_sync(Session, self._bench, self._task,
                                                         self._worlds)
        except BaseException:
            with self._lock:
                self._opening -= 1
            raise
        with self._lock:
            self._opening -= 1
            self._started += 1
            self._live[self._started] = session
            return PooledSession(self._started, mcp_session_id, session)

    def session_for(self, ctx: ServerRequestContext[Any, Any]) -> Session:
        entry = pooled(ctx)
        if entry is None or entry.number not in self._live:
            raise WorkspaceError("no workspace session for this request: this server keeps one "
                                 "per MCP session, made when the session initializes")
        return entry.session

    def finish(self, number: int) -> None:
        """Export session `number`'s changes (if asked) and remove what it wrote; once per session."""
        with self._lock:
            session = self._live.pop(number, None)
        if session is None:
            return
        try:
            if self._export_to is not None:
                export_or_rescue(session, self._export_to / str(number), new_folder=True)
        finally:
            session.close()

    def close(self) -> None:
        """Finish every session still open (the server stopped)."""
        with self._lock:
            numbers = sorted(self._live)
        for number in numbers:
            self.finish(number)
