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
from email.parser import BytesParser
from email.policy import default
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


def completion(reply: Reply, body: dict[str, Any], number: int) -> dict[str, Any]:
    """The chat completion a reply makes (or the error it is)."""
    if reply.status != 200 or reply.message is None:
        return {"error": {"message": f"scripted {reply.status}", "type": "server_error",
                          "code": reply.status}}
    calls = reply.message.get("tool_calls")
    return {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": 0,
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": reply.message, "finish_reason":
                         reply.finish_reason or ("tool_calls" if calls else "stop")}],
            "usage": reply.usage}


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

    It also serves OpenAI's batch API: `/v1/files` (a JSONL of requests uploaded as multipart,
    its content read back) and `/v1/batches`. A batch answers each line with the script, as a
    chat completion would; a line whose custom_id `batch_fails` picks goes to the batch's error
    file instead. A batch reports `in_progress` to its first `batch_polls` retrievals, then
    `completed`.
    """

    def __init__(self, script: Script, latency: float = 0.0, applies: frozenset[str] = frozenset(),
                 refuses: frozenset[str] = frozenset(),
                 batch_fails: Callable[[str], bool] = lambda _: False,
                 batch_polls: int = 0) -> None:
        self.script = script
        self.latency = latency
        self.applies = applies
        self.refuses = refuses
        self.batch_fails = batch_fails
        self.batch_polls = batch_polls
        self.requests: list[dict[str, Any]] = []
        self.batch_requests: list[dict[str, Any]] = []
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.retrievals: dict[str, int] = {}
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; with Nagle on, delayed ACKs add ~40 ms.
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path.endswith("/files"):
                    self.answer(Reply(), fake.upload(self.headers.get("Content-Type", ""), raw))
                    return
                body = json.loads(raw)
                if self.path.endswith("/batches"):
                    self.answer(Reply(), fake.create_batch(body))
                    return
                fake.requests.append(body)
                if fake.latency:
                    time.sleep(fake.latency)
                mode = probed_mode(body)
                reply = (fake.script(body) if mode is None else probe_reply(mode)
                         if mode in fake.applies else error(400) if mode in fake.refuses
                         else text("ok"))
                self.answer(reply, completion(reply, body, len(fake.requests)))

            def do_GET(self) -> None:
                parts = self.path.split("?")[0].strip("/").split("/")
                if parts[-2:-1] == ["batches"]:
                    self.answer(Reply(), fake.retrieve_batch(parts[-1]))
                elif parts[-1] == "content" and parts[-2] in fake.files:
                    self.answer(Reply(), fake.files[parts[-2]], "application/jsonl")
                elif parts[-2:-1] == ["files"] and parts[-1] in fake.files:
                    self.answer(Reply(), fake.file_object(parts[-1], "batch"))
                else:
                    self.answer(error(404), None)

            def answer(self, reply: Reply, payload: Any, kind: str = "application/json") -> None:
                if reply.status != 200:
                    payload = {"error": {"message": f"scripted {reply.status}",
                                         "type": "server_error", "code": reply.status}}
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", kind)
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

    def upload(self, content_type: str, raw: bytes) -> dict[str, Any]:
        """A multipart upload (purpose, file) stored as a file."""
        form = BytesParser(policy=default).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
        fields = {part.get_param("name", header="content-disposition"): part.get_payload(
            decode=True) for part in form.iter_parts()}
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = fields["file"]
        return self.file_object(file_id, fields["purpose"].decode())

    def file_object(self, file_id: str, purpose: str) -> dict[str, Any]:
        return {"id": file_id, "object": "file", "bytes": len(self.files[file_id]),
                "created_at": 0, "filename": f"{file_id}.jsonl", "purpose": purpose,
                "status": "processed"}

    def create_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        """Answer every request of the input file now; report it as the batch's polls go."""
        batch_id = f"batch-{len(self.batches) + 1}"
        output, errors = [], []
        for number, line in enumerate(self.files[body["input_file_id"]].splitlines()):
            request = json.loads(line)
            custom_id = request["custom_id"]
            if self.batch_fails(custom_id):
                errors.append({"id": f"req-{number}", "custom_id": custom_id, "response": None,
                               "error": {"code": "server_error", "message": "scripted failure"}})
                continue
            self.batch_requests.append(request["body"])
            reply = self.script(request["body"])
            output.append({"id": f"req-{number}", "custom_id": custom_id, "error": None,
                           "response": {"status_code": reply.status, "request_id": f"r{number}",
                                        "body": completion(reply, request["body"], number)}})
        files = {}
        for kind, lines in (("output_file_id", output), ("error_file_id", errors)):
            if lines:
                file_id = f"file-{len(self.files) + 1}"
                self.files[file_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()
                files[kind] = file_id
        self.batches[batch_id] = {
            "id": batch_id, "object": "batch", "endpoint": body["endpoint"],
            "input_file_id": body["input_file_id"], "completion_window": "24h",
            "status": "validating", "created_at": 0, "errors": None,
            "output_file_id": None, "error_file_id": None, "done": files,
            "request_counts": {"total": len(output) + len(errors), "completed": len(output),
                               "failed": len(errors)}}
        return self.batch_object(batch_id)

    def retrieve_batch(self, batch_id: str) -> dict[str, Any]:
        self.retrievals[batch_id] = self.retrievals.get(batch_id, 0) + 1
        batch = self.batches[batch_id]
        if self.retrievals[batch_id] > self.batch_polls:
            batch.update(status="completed", **batch["done"])
        else:
            batch["status"] = "in_progress"
        return self.batch_object(batch_id)

    def batch_object(self, batch_id: str) -> dict[str, Any]:
        return {k: v for k, v in self.batches[batch_id].items() if k != "done"}

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
