"""Sessions named per call: one in-process server for all of a runner's attempts.

The runner serves every attempt from one server and one MCP client instead of building both per
attempt (and listing the tools again in each). Each attempt's Session and telemetry are opened
under a key of their own, and each of the attempt's tool calls names that key in the request's
`_meta` (SESSION_META_KEY), which the agent never writes: a call reaches its own attempt's
session and telemetry only. A call naming no open session gets a tool error.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

from mock_workspace.errors import WorkspaceError
from mock_workspace.session import Session
from mock_workspace.telemetry import Telemetry

SESSION_META_KEY = "rubric-audit/session"


@dataclass(frozen=True)
class _Opened:
    session: Session
    telemetry: Telemetry | None


class KeyedSessions:
    """The sessions open on one server, by key; installed as the server's middleware."""

    def __init__(self) -> None:
        self._open: dict[str, _Opened] = {}
        self._numbers = itertools.count(1)

    @contextmanager
    def opened(self, session: Session, telemetry: Telemetry | None = None
               ) -> Iterator[dict[str, Any]]:
        """Serve `session` (its calls recorded by `telemetry`) until the block ends; yields the
        `_meta` its tool calls carry."""
        key = str(next(self._numbers))
        self._open[key] = _Opened(session, telemetry)
        try:
            yield {SESSION_META_KEY: key}
        finally:
            del self._open[key]

    def _find(self, meta: Mapping[str, Any] | None) -> _Opened | None:
        key = (meta or {}).get(SESSION_META_KEY)
        return self._open.get(key) if isinstance(key, str) else None

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        opened = self._find(ctx.meta)
        if opened is None or opened.telemetry is None:
            return await call_next(ctx)
        return await opened.telemetry(ctx, call_next)

    def session_for(self, ctx: ServerRequestContext[Any, Any]) -> Session:
        opened = self._find(ctx.meta)
        if opened is None:
            raise WorkspaceError("no workspace session for this call: it names none that is "
                                 "open")
        return opened.session
