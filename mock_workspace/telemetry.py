"""Tool-call telemetry: every `tools/call` as one line of the attempt's telemetry.jsonl.

Recorded as server middleware, so calls refused during argument validation are logged too. One
line per call: time, the session (over HTTP its number, as its export folder, and its MCP session
id; null for a server of one session), tool, arguments, result size in characters, error (or
null), duration; long arguments and errors are cut, so a line stays a few kilobytes whatever the
agent sends.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from pydantic import BaseModel

from mock_workspace.sessions import pooled

MAX_ARGUMENT_CHARS = 4_000
"""What one call's arguments may take in the log: a 5 MB chat post is logged by its size."""
MAX_NAME_CHARS = 200


def _cut(text: str) -> str:
    if len(text) <= MAX_ARGUMENT_CHARS:
        return text
    return f"{text[:MAX_ARGUMENT_CHARS]}... ({len(text):,} characters in all)"


def bounded(arguments: Any) -> Any:
    """The arguments as given when their JSON is short; else the start of that JSON and its size."""
    text = json.dumps(arguments, default=str)
    if len(text) <= MAX_ARGUMENT_CHARS:
        return arguments
    return {"truncated": text[:MAX_ARGUMENT_CHARS], "chars": len(text)}


def _result_text(result: HandlerResult) -> tuple[str, bool]:
    data = result.model_dump(by_alias=True) if isinstance(result, BaseModel) else (result or {})
    text = "".join(c.get("text", "") for c in data.get("content") or [] if isinstance(c, dict))
    return text, bool(data.get("isError") or data.get("is_error"))


class Telemetry:
    """One JSON line per tool call: appended to `path` (the file is created on first call), or,
    without a path, kept in `lines` for the caller to write (the runner writes an attempt's
    telemetry.jsonl with its other files, in one go)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = None if path is None else Path(path)
        self.lines: list[str] = []
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)

    def record(self, tool: str, arguments: Any, size: int, error: str | None,
               seconds: float, session: dict[str, Any] | None = None) -> None:
        line = {"time": datetime.now(UTC).isoformat(timespec="milliseconds"),
                "session": session, "tool": tool[:MAX_NAME_CHARS], "arguments": bounded(arguments),
                "result_chars": size, "error": None if error is None else _cut(error),
                "seconds": round(seconds, 6)}
        text = json.dumps(line, default=str) + "\n"
        if self.path is None:
            self.lines.append(text)
            return
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(text)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        params = ctx.params if isinstance(ctx.params, dict) else {}
        entry = pooled(ctx)
        session = None if entry is None else {"number": entry.number, "id": entry.mcp_session_id}
        started = time.perf_counter()
        try:
            result = await call_next(ctx)
        except Exception as exc:
            self.record(str(params.get("name")), params.get("arguments"), 0, str(exc),
                        time.perf_counter() - started, session)
            raise
        text, is_error = _result_text(result)
        self.record(str(params.get("name")), params.get("arguments"), len(text),
                    text if is_error else None, time.perf_counter() - started, session)
        return result
