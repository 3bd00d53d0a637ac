"""The task world as an MCP server: mail, calendar, chat and files tools over a Session.

`build_server` registers the tools on an `MCPServer` bound to one Session (stdio, in memory), or
to the sessions each call names (`attempts.KeyedSessions`: the runner's attempts); `serve_stdio`
runs the first, and `serve_http` runs streamable HTTP on 127.0.0.1 with a Session per MCP
session (`sessions.SessionPool`). A refused request (unknown id, bad path, bad range) comes back to
the agent as a tool error and the server keeps serving.
"""

from __future__ import annotations

import functools
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from pydantic import ConfigDict, Field, create_model, model_validator

from mock_workspace.attempts import KeyedSessions
from mock_workspace.errors import WorkspaceError
from mock_workspace.files import MAX_CELLS, MAX_READ_CHARS
from mock_workspace.session import Session, export_or_rescue
from mock_workspace.sessions import MAX_SESSIONS, SessionPool
from mock_workspace.telemetry import Telemetry

F = TypeVar("F", bound=Callable[..., Any])

Offset = Annotated[int, Field(ge=0, description="Index of the first item to return (paging).")]
MessageId = Annotated[str, Field(description="A message_id from mail_list or mail_search.")]
Addresses = Annotated[list[str], Field(description="Email addresses, e.g. ['a@firm.com'].")]
IsoTime = Annotated[str, Field(description="ISO 8601 date-time, e.g. 2025-03-13T09:00:00+00:00.")]
Space = Annotated[str, Field(description="A space name from chat_list_spaces.")]
FilePath = Annotated[
    str,
    Field(
        description="Path relative to the workspace root, as listed by files_list, e.g. 'Project/Model.xlsx'."
    ),
]

INSTRUCTIONS = (
    "This is the firm's workspace for one task: its files, mailbox, calendar and chat. "
    "Read what you need with the *_list, *_search and *_read tools; anything you "
    "write, send, post or schedule is recorded as your work product."
)


ON_A_WORKER_THREAD = frozenset({"files_read", "files_read_sheet", "calendar_list"})
"""Tools whose work can be long (a document parsed, recurrences expanded): the server runs them
on a worker thread, so that its event loop goes on serving meanwhile. The others do bounded work
in memory and run in the event loop: a hop to a thread costs more than they do (about 0.25 ms of
CPU a call, measured through the runner's client)."""


def _served(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` as the server runs it: a WorkspaceError becomes a ToolError (the agent reads the
    message, the server goes on); a coroutine, run in the event loop, unless `fn` is one of
    ON_A_WORKER_THREAD (a plain function, which the server runs on a worker thread)."""

    @functools.wraps(fn)
    def refusing(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except WorkspaceError as exc:
            raise ToolError(str(exc)) from None

    if fn.__name__ in ON_A_WORKER_THREAD:
        return refusing

    @functools.wraps(fn)
    async def in_the_loop(*args: Any, **kwargs: Any) -> Any:
        return refusing(*args, **kwargs)

    return in_the_loop


class WorkspaceServer(MCPServer):
    """An MCPServer whose tools act on one Session, on the Session a SessionPool keeps for the
    request's MCP session, or on the one KeyedSessions holds under the key the call names; the
    shared tools find it through `_session`."""

    def __init__(self, sessions: Session | SessionPool | KeyedSessions,
                 telemetry: Telemetry | None = None) -> None:
        chooser = None if isinstance(sessions, Session) else sessions
        super().__init__(
            name="rubric-audit-workspace",
            instructions=INSTRUCTIONS,
            log_level="WARNING",
            middleware=[m for m in (chooser, telemetry) if m is not None] or None,
            tools=list(_compiled_tools()),
        )
        if isinstance(sessions, KeyedSessions):
            # The runner's server is reached by the runner's client only, which no one traces:
            # it drops the SDK's span per message (the SDK's documented opt-out), 0.07 to 0.14 ms
            # of CPU a call.
            self.middleware[:] = [m for m in self.middleware
                                  if not isinstance(m, OpenTelemetryMiddleware)]
        self.sessions = sessions


def _session(ctx: Context) -> Session:
    server = ctx.mcp_server
    assert isinstance(server, WorkspaceServer)
    if isinstance(server.sessions, Session):
        return server.sessions
    return server.sessions.session_for(ctx.request_context)


TOOL_FUNCTIONS: list[Callable[..., Any]] = []


def tool(fn: F) -> F:
    """Register a workspace tool (compiled once, shared by every session's server)."""
    TOOL_FUNCTIONS.append(fn)
    return fn


@tool
def mail_list(
    ctx: Context,
    folder: Annotated[str, Field(description="'inbox' or 'sent'.")] = "inbox",
    offset: Offset = 0,
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
) -> dict[str, Any]:
    """List mail in a folder, newest first: message_id, date, from, to, subject."""
    return _session(ctx).mail.list_folder(folder, offset, limit)


@tool
def mail_search(
    ctx: Context,
    sender: Annotated[str | None, Field(description="Part of the From name or address.")] = None,
    recipient: Annotated[str | None, Field(description="Part of a To/Cc address.")] = None,
    subject: Annotated[str | None, Field(description="Part of the subject.")] = None,
    text: Annotated[str | None, Field(description="Words in the subject or body.")] = None,
    date_from: Annotated[str | None, Field(description="ISO date, inclusive.")] = None,
    date_to: Annotated[str | None, Field(description="ISO date, inclusive.")] = None,
    offset: Offset = 0,
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
) -> dict[str, Any]:
    """Search all mail (received and sent); every given filter must match (case-insensitive)."""
    return _session(ctx).mail.search(sender, recipient, subject, text, date_from, date_to, offset, limit)


@tool
def mail_read(ctx: Context, message_id: MessageId) -> dict[str, Any]:
    """Read one message in full: headers, cc, in_reply_to and body."""
    return _session(ctx).mail.read(message_id)


@tool
def mail_send(ctx: Context, to: Addresses, subject: str, body: str, cc: Addresses | None = None
              ) -> dict[str, Any]:
    """Send a new message from the mailbox owner."""
    session = _session(ctx)
    with session.charged(subject, body, *to, *(cc or [])):
        return session.mail.send(to, subject, body, cc)


@tool
def mail_reply(ctx: Context, message_id: MessageId, body: str) -> dict[str, Any]:
    """Reply to the sender of a message."""
    session = _session(ctx)
    with session.charged(body):
        return session.mail.reply(message_id, body)


@tool
def mail_reply_all(ctx: Context, message_id: MessageId, body: str) -> dict[str, Any]:
    """Reply to the sender and every other recipient of a message."""
    session = _session(ctx)
    with session.charged(body):
        return session.mail.reply(message_id, body, reply_all=True)


@tool
def mail_forward(ctx: Context, message_id: MessageId, to: Addresses, body: str = "") -> dict[str, Any]:
    """Forward a message, with an optional note above it."""
    session = _session(ctx)
    with session.charged(body, *to):
        return session.mail.forward(message_id, to, body)


@tool
def calendar_list(
    ctx: Context,
    start: Annotated[str | None, Field(description="ISO date-time; events starting at or after.")] = None,
    end: Annotated[str | None, Field(description="ISO date-time; events starting at or before.")] = None,
    offset: Offset = 0,
    limit: Annotated[int, Field(ge=1, le=100)] = 50,
) -> dict[str, Any]:
    """List calendar events (uid, start, end, summary) in time order, optionally in a range.
    A recurring event is listed once per occurrence when `end` is given, else once with its rule."""
    return _session(ctx).calendar.list_events(start, end, offset, limit)


@tool
def calendar_read(ctx: Context, uid: Annotated[str, Field(description="An event uid.")]) -> dict[str, Any]:
    """Read one event: summary, description, location, start, end, attendees."""
    return _session(ctx).calendar.read(uid)


@tool
def calendar_create(
    ctx: Context,
    summary: str,
    start: IsoTime,
    end: IsoTime,
    description: str = "",
    location: str = "",
    attendees: Addresses | None = None,
) -> dict[str, Any]:
    """Create an event; returns its uid."""
    session = _session(ctx)
    with session.charged(summary, start, end, description, location, *(attendees or [])):
        return session.calendar.create(summary, start, end, description, location, attendees)


@tool
def calendar_update(
    ctx: Context,
    uid: str,
    summary: str | None = None,
    description: str | None = None,
    location: str | None = None,
    start: IsoTime | None = None,
    end: IsoTime | None = None,
    attendees: Addresses | None = None,
) -> dict[str, Any]:
    """Change the given fields of an event; fields left out keep their value."""
    given = {
        "summary": summary,
        "description": description,
        "location": location,
        "start": start,
        "end": end,
        "attendees": attendees,
    }
    changes = {k: v for k, v in given.items() if v is not None}
    session = _session(ctx)
    with session.charged(*(t for v in changes.values() for t in (v if isinstance(v, list) else [v]))):
        return session.calendar.update(uid, changes)


@tool
def calendar_delete(ctx: Context, uid: str) -> dict[str, Any]:
    """Delete an event."""
    return _session(ctx).calendar.delete(uid)


@tool
def chat_list_spaces(ctx: Context) -> dict[str, Any]:
    """List chat spaces with their member and message counts."""
    return _session(ctx).chat.list_spaces()


@tool
def chat_get_history(
    ctx: Context, space: Space, offset: Offset = 0, limit: Annotated[int, Field(ge=1, le=100)] = 50
) -> dict[str, Any]:
    """Read a space's messages, oldest first: author, created, text, topic_id, message_id."""
    return _session(ctx).chat.history(space, offset, limit)


@tool
def chat_post(ctx: Context, space: Space, text: str) -> dict[str, Any]:
    """Post a new message (a new topic) in a space."""
    session = _session(ctx)
    with session.charged(text):
        return session.chat.post(space, text)


@tool
def chat_reply(ctx: Context, space: Space, message_id: str, text: str) -> dict[str, Any]:
    """Reply in the thread (topic) of an existing message."""
    session = _session(ctx)
    with session.charged(text):
        return session.chat.reply(space, message_id, text)


@tool
def chat_list_members(ctx: Context, space: Space) -> dict[str, Any]:
    """List the members of a space."""
    return _session(ctx).chat.members(space)


@tool
def files_list(
    ctx: Context,
    path: Annotated[str, Field(description="Folder to list; '.' is the root.")] = ".",
    offset: Offset = 0,
    limit: Annotated[int, Field(ge=1, le=100)] = 100,
) -> dict[str, Any]:
    """List every file under a folder (recursively) with its size in bytes."""
    return _session(ctx).files.list_files(path, offset, limit)


@tool
def files_read(
    ctx: Context,
    path: FilePath,
    offset: Offset = 0,
    limit: Annotated[int, Field(ge=1, le=MAX_READ_CHARS)] = MAX_READ_CHARS,
) -> dict[str, Any]:
    """Read a document's text (md, txt, csv, json, docx paragraphs, pdf text), in pages of
    characters; `next_offset` gives where the next page starts. Use files_read_sheet for
    xlsx workbooks."""
    return _session(ctx).files.read(path, offset, limit)


@tool
def files_read_sheet(
    ctx: Context,
    path: FilePath,
    sheet: Annotated[str | None, Field(description="Sheet name; default the first.")] = None,
    cell_range: Annotated[
        str | None, Field(description="Cells to read, e.g. 'A1:F20'; default the whole sheet.")
    ] = None,
    offset: Offset = 0,
    limit: Annotated[int, Field(ge=1, le=MAX_CELLS)] = MAX_CELLS,
) -> dict[str, Any]:
    """Read an xlsx workbook's cells: each cell's value and, where it has one, its formula.
    Formula values are computed. Returns the list of sheets too."""
    return _session(ctx).files.read_sheet(path, sheet, cell_range, offset, limit)


@tool
def files_write(ctx: Context, path: FilePath, content: str, overwrite: bool = False) -> dict[str, Any]:
    """Create a text file (md, txt, csv, json), or replace one with overwrite=true."""
    session = _session(ctx)
    with session.charged(content, limit=None):  # files.write has its own cap per file
        return session.files.write(path, content, overwrite)


class _KnownArgumentsOnly(ArgModelBase):
    """Refuses arguments a tool does not take (a misspelt `range` must not read the whole sheet);
    the schema says so too (additionalProperties: false)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _known_only(cls, data: Any) -> Any:
        if isinstance(data, dict):
            known = [f.alias or name for name, f in cls.model_fields.items()]
            if unknown := sorted(set(data) - set(known)):
                raise ValueError(f"not an argument of this tool: {', '.join(unknown)}; it takes "
                                 f"{', '.join(known)}")
        return data


def _strict(tool: Tool) -> Tool:
    arguments = tool.fn_metadata.arg_model
    tool.fn_metadata.arg_model = create_model(arguments.__name__,
                                              __base__=(arguments, _KnownArgumentsOnly))
    tool.parameters = tool.fn_metadata.arg_model.model_json_schema(by_alias=True)
    return tool


@functools.cache
def _compiled_tools() -> tuple[Tool, ...]:
    """The tools' schemas are built once: doing it per session costs ~0.1 s of pydantic work."""
    return tuple(
        _strict(Tool.from_function(_served(fn), structured_output=False))
        for fn in TOOL_FUNCTIONS
    )


def build_server(sessions: Session | KeyedSessions, telemetry: Telemetry | None = None
                 ) -> MCPServer:
    """An MCPServer whose tools act on one session, or on the one each call names; telemetry,
    if given, records every call."""
    return WorkspaceServer(sessions, telemetry)


def serve_stdio(session: Session, telemetry: Telemetry | None, export_to: Path | None) -> None:
    """Serve one session over stdio until stopped, then export its changes.

    SIGTERM stops it like Ctrl-C does: the export is written and the caller's `with Session`
    removes what the agent wrote."""
    with _sigterm_stops():
        try:
            build_server(session, telemetry).run("stdio")
        finally:
            if export_to is not None:
                export_or_rescue(session, export_to)


def serve_http(pool: SessionPool, telemetry: Telemetry | None, port: int) -> None:
    """Serve streamable HTTP on 127.0.0.1:`port` (path /mcp) until stopped, a Session per MCP
    session. Each session is exported and removed when it ends; those still open when the server
    stops (Ctrl-C, SIGTERM) by the caller's `with SessionPool`."""
    with _sigterm_stops():
        # The SDK's own bound on transports sits above the pool's: a session the pool refused
        # holds a transport (no session) until its client closes it or it idles out.
        WorkspaceServer(pool, telemetry).run("streamable-http", host="127.0.0.1", port=port,
                                             max_sessions=4 * MAX_SESSIONS)


class Terminated(SystemExit):
    """The server was stopped by SIGTERM (exit code 143)."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated(128 + signum)


@contextmanager
def _sigterm_stops() -> Iterator[None]:
    """SIGTERM raises Terminated, so the callers' cleanup runs as on Ctrl-C."""
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
