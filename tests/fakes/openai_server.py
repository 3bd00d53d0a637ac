"""A local OpenAI-compatible chat completions server, scripted per test, on 127.0.0.1.

Tests reach it through litellm over real HTTP (`openai/<name>` models with `api_base=server.url`).
A script is a function from the request body to a Reply; `scripted()` builds one from a list.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rubric_audit.core.llm import PREFLIGHT_PROMPT, PROBE_KEY


@dataclass
class Reply:
    """What the server answers: an assistant message, or an HTTP error status (with headers such
    as Retry-After); `finish_reason` as the provider gives it (by default `stop`, or
    `tool_calls` for a message that calls tools; `content_filter` for a blocked answer)."""

    message: dict[str, Any] | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=lambda: {
        "prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120})


def text(content: str) -> Reply:
    return Reply({"role": "assistant", "content": content})


def tool_call(name: str, arguments: dict | str, call_id: str = "call_1") -> Reply:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return Reply({"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}]})


def error(status: int, retry_after: float | None = None) -> Reply:
    """An HTTP error: 401 (rejected key), 404 (unknown model), 429 or 5xx (transient)."""
    return Reply(status=status,
                 headers={} if retry_after is None else {"Retry-After": f"{retry_after:g}"})


Script = Callable[[dict[str, Any]], Reply]


def is_preflight(body: dict[str, Any]) -> bool:
    """The one-line check a command sends each model before any work, or one of its probes of
    the structured modes (rubric_audit.core.llm)."""
    return body["messages"] == [{"role": "user", "content": PREFLIGHT_PROMPT}]


def probed_mode(body: dict[str, Any]) -> str | None:
    """The structured mode a check's probe asks for (None: not a probe)."""
    if not is_preflight(body):
        return None
    if body.get("tools"):
        return "tools"
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return "json-schema"
    if response_format.get("type") == "json_object" and "schema" in response_format:
        return "json-object-schema"
    return None


def probe_reply(mode: str) -> Reply:
    """The reply of a server that applies `mode` to the probe's schema."""
    content = json.dumps({PROBE_KEY: "ok"})
    return tool_call(PROBE_KEY, content) if mode == "tools" else text(content)


def scripted(replies: list[Reply]) -> Script:
    """Answer requests with `replies` in order; the last one repeats."""
    lock = threading.Lock()
    position = [0]

    def script(_: dict[str, Any]) -> Reply:
        with lock:
            reply = replies[min(position[0], len(replies) - 1)]
            position[0] += 1
        return reply

    return script


class _Server(ThreadingHTTPServer):
    """A thread per connection; a listen backlog for a thousand clients connecting at once (the
    default of 5 drops their connections and the clients' retries cost seconds)."""

    daemon_threads = True
    request_queue_size = 1024


class FakeOpenAI:
    """Serve `script` on an ephemeral port; `latency` seconds are slept before every answer.

    The check's probes of structured modes never reach the script: the server answers them as
    one that applies the modes in `applies`, refuses those in `refuses` (HTTP 400) and ignores
    the rest (a plain "ok"), so by default a judge ends in prompted JSON mode.
    """

    def __init__(self, script: Script, latency: float = 0.0, applies: frozenset[str] = frozenset(),
                 refuses: frozenset[str] = frozenset()) -> None:
        self.script = script
        self.latency = latency
        self.applies = applies
        self.refuses = refuses
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; with Nagle on, delayed ACKs add ~40 ms.
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                fake.requests.append(body)
                if fake.latency:
                    time.sleep(fake.latency)
                mode = probed_mode(body)
                reply = (fake.script(body) if mode is None else probe_reply(mode)
                         if mode in fake.applies else error(400) if mode in fake.refuses
                         else text("ok"))
                if reply.status != 200:
                    payload = {"error": {"message": f"scripted {reply.status}",
                                         "type": "server_error", "code": reply.status}}
                else:
                    calls = reply.message.get("tool_calls")
                    payload = {"id": f"chatcmpl-{len(fake.requests)}", "object": "chat.completion",
                               "created": 0, "model": body.get("model", "fake"),
                               "choices": [{"index": 0, "message": reply.message,
                                            "finish_reason": reply.finish_reason or (
                                                "tool_calls" if calls else "stop")}],
                               "usage": reply.usage}
                data = json.dumps(payload).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client cut the request
                    self.close_connection = True

            def log_message(self, *args: Any) -> None:
                return

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def work_requests(self) -> list[dict[str, Any]]:
        """The requests other than preflight checks."""
        return [r for r in self.requests if not is_preflight(r)]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
