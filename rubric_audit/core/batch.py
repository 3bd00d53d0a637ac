"""Structured replies through a provider's batch API (litellm's files and batches), at about half
the price of the same calls one by one.

`structured_batch` answers what it can from the response cache, writes the rest as one JSONL
file of chat-completion requests (each built by instructor for the model's structured mode, as
`llm.structured` would send it), uploads it and creates a batch (`litellm.acreate_file`,
`litellm.acreate_batch`), and records the batch in a ledger file before it waits, so a later call
with the same requests resumes that batch instead of paying for another. When the batch ends,
each line of its output is parsed into the response model as instructor parses a reply and
cached; a request the batch failed, left out or answered with something unparseable is made
again one by one through `llm.structured` (retries, re-asks), and one the provider still cannot
answer is unavailable, never a failure. A wait cut by the command's time budget leaves the
ledger in place: the next call collects.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from time import monotonic
from typing import Any

import anyio
from pydantic import BaseModel, Field

from rubric_audit.core.atomic import write_atomic
from rubric_audit.core.errors import InputError
from rubric_audit.core.llm import (
    STRUCTURED_OUTPUT_CAP,
    BudgetSpent,
    M,
    ModelConfig,
    ModelUnavailable,
    ResponseCache,
    Structured,
    capability_mode,
    instructor_mode,
    litellm_module,
    request_arguments,
    structured,
    with_retries,
)
from rubric_audit.core.model import Usage

ENDPOINT = "/v1/chat/completions"
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
POLL_SECONDS = 30.0


class BatchCall(BaseModel):
    """One structured call of a batch: its id (unique in the batch), messages and repeat."""

    custom_id: str
    messages: list[dict[str, Any]]
    sample: int = 0


class BatchRecord(BaseModel):
    """A submitted batch, as the ledger keeps it until its results are collected."""

    requests: str = Field(description="sha256 of the requests' JSONL: the same requests resume")
    batch_id: str
    input_file_id: str
    model: str
    calls: int


class Ledger(BaseModel):
    """The batches a command submitted and has not collected yet (the ledger file)."""

    batches: list[BatchRecord] = Field(default_factory=list)


BatchReply = Structured[M] | ModelUnavailable


class BatchOutcome(BaseModel):
    """What one batch pass did: the batch (None when the cache answered everything), its final
    status, how many replies came from it, and how many calls were made again one by one."""

    batch_id: str | None = None
    status: str | None = None
    from_batch: int = 0
    retried: int = 0
    resumed: bool = False


def _read_ledger(path: Path) -> Ledger:
    if not path.is_file():
        return Ledger()
    try:
        return Ledger.model_validate_json(path.read_bytes())
    except ValueError as exc:
        raise InputError(path, None, f"not a batch ledger: {' '.join(str(exc).split())[:200]}"
                         ) from None


def _write_ledger(path: Path, ledger: Ledger) -> None:
    if ledger.batches:
        write_atomic(path, ledger.model_dump_json(indent=2) + "\n")
    else:
        path.unlink(missing_ok=True)


def _body(config: ModelConfig, call: BatchCall, response_model: type[BaseModel]
          ) -> tuple[dict[str, Any], Any]:
    """The chat-completion body instructor sends for `call` in the config's structured mode,
    and the prepared model it parses the reply with."""
    from instructor.v2.core.response import handle_response_model

    mode = config.structured_mode or capability_mode(config)
    kwargs = request_arguments(config, call.messages, STRUCTURED_OUTPUT_CAP)
    prepared, body = handle_response_model(response_model, mode=instructor_mode(mode),
                                           **{k: v for k, v in kwargs.items()
                                              if k not in ("api_base", "api_key", "timeout",
                                                           "num_retries")})
    if mode == "json-object-schema":
        body["response_format"] = {"type": "json_object",
                                   "schema": response_model.model_json_schema()}
    body["model"] = config.model.split("/", 1)[1] if "/" in config.model else config.model
    return body, prepared


def _parse(line: dict[str, Any], prepared: Any, response_model: type[M], config: ModelConfig
           ) -> Structured[M] | None:
    """A batch output line's reply parsed as instructor parses one (None: failed or unparseable,
    so the call is made again one by one)."""
    from instructor.v2.core.response import process_response
    from openai.types.chat import ChatCompletion

    response = line.get("response") or {}
    if line.get("error") or response.get("status_code") != 200:
        return None
    try:
        completion = ChatCompletion.model_validate(response.get("body") or {})
        mode = config.structured_mode or capability_mode(config)
        parsed = process_response(completion, response_model=prepared, stream=False,
                                  mode=instructor_mode(mode))
        value = response_model.model_validate(parsed.model_dump())
    except Exception:  # unparseable (or cut): asked again one by one, with instructor's re-asks
        return None
    usage = completion.usage
    return Structured(value=value, usage=Usage(
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        total_tokens=usage.total_tokens if usage else None, cost=None))


def _litellm_args(config: ModelConfig) -> dict[str, Any]:
    """Where the batch goes: litellm's provider, base URL and key for the config's model."""
    provider = litellm_module().get_llm_provider(config.model, api_base=config.api_base)[1]
    args: dict[str, Any] = {"custom_llm_provider": provider}
    if config.api_base:
        args["api_base"] = config.api_base
    if config.api_key:
        args["api_key"] = config.api_key
    return args


async def _submit(config: ModelConfig, jsonl: bytes, digest: str, calls: int) -> BatchRecord:
    litellm, args = litellm_module(), _litellm_args(config)

    async def submit() -> BatchRecord:
        uploaded = await litellm.acreate_file(file=(f"{digest[:16]}.jsonl", jsonl),
                                              purpose="batch", **args)
        batch = await litellm.acreate_batch(completion_window="24h", endpoint=ENDPOINT,
                                            input_file_id=uploaded.id, **args)
        return BatchRecord(requests=digest, batch_id=batch.id, input_file_id=uploaded.id,
                           model=config.model, calls=calls)

    return await with_retries(config, submit)


async def _wait(config: ModelConfig, batch_id: str, poll: float) -> Any:
    """The batch once it has ended; BudgetSpent when the command's time budget ends first."""
    litellm, args = litellm_module(), _litellm_args(config)
    while True:
        batch = await with_retries(config, lambda: litellm.aretrieve_batch(batch_id=batch_id,
                                                                            **args))
        if batch.status in ENDED:
            return batch
        if config.deadline is not None and monotonic() + poll >= config.deadline:
            raise BudgetSpent()
        await anyio.sleep(poll)


async def _lines(config: ModelConfig, file_id: str | None) -> list[dict[str, Any]]:
    if not file_id:
        return []
    litellm, args = litellm_module(), _litellm_args(config)
    content = await with_retries(config, lambda: litellm.afile_content(file_id=file_id, **args))
    lines = []
    for text in content.content.decode("utf-8", errors="replace").splitlines():
        try:
            line = json.loads(text)
        except ValueError:  # a damaged line: its call is made again one by one
            continue
        if isinstance(line, dict) and isinstance(line.get("custom_id"), str):
            lines.append(line)
    return lines


async def structured_batch(config: ModelConfig, calls: list[BatchCall],
                           response_model: type[M], cache: ResponseCache | None, ledger: Path,
                           concurrency: int, poll: float = POLL_SECONDS,
                           on_reply: Callable[[str, BatchReply[M]], None] | None = None,
                           ) -> tuple[dict[str, BatchReply[M]], BatchOutcome]:
    """Every call's reply (a Structured, or the ModelUnavailable it met), through one batch.

    Cached replies are taken first; the rest go in one batch, recorded in `ledger` (resumed when
    a batch of the same requests is recorded there). Calls the batch did not answer with a
    parseable reply are made one by one, `concurrency` at a time. `on_reply` is told of each
    reply as it is known.
    """
    replies: dict[str, BatchReply[M]] = {}
    schema = response_model.model_json_schema()

    def settle(custom_id: str, reply: BatchReply[M]) -> None:
        replies[custom_id] = reply
        if on_reply is not None:
            on_reply(custom_id, reply)

    keys = {c.custom_id: ResponseCache.key(config, c.messages, {**schema, "sample": c.sample})
            for c in calls}
    pending = []
    for call in calls:
        hit = cache.get(keys[call.custom_id]) if cache is not None else None
        if hit is None:
            pending.append(call)
        else:
            settle(call.custom_id, Structured(value=response_model.model_validate_json(hit),
                                              cached=True))
    outcome = BatchOutcome()
    if not pending:
        return replies, outcome
    bodies = {c.custom_id: _body(config, c, response_model) for c in pending}
    jsonl = "".join(json.dumps({"custom_id": c.custom_id, "method": "POST", "url": ENDPOINT,
                                "body": bodies[c.custom_id][0]}, sort_keys=True) + "\n"
                    for c in pending).encode()
    digest = hashlib.sha256(jsonl).hexdigest()
    book = _read_ledger(ledger)
    record = next((b for b in book.batches if b.requests == digest), None)
    outcome.resumed = record is not None
    if record is None:
        record = await _submit(config, jsonl, digest, len(pending))
        book.batches.append(record)
        _write_ledger(ledger, book)
    outcome.batch_id = record.batch_id
    batch = await _wait(config, record.batch_id, poll)
    outcome.status = batch.status
    lines = await _lines(config, getattr(batch, "output_file_id", None))
    for line in lines:
        custom_id = line["custom_id"]
        if custom_id not in bodies or custom_id in replies:
            continue
        reply = _parse(line, bodies[custom_id][1], response_model, config)
        if reply is None:
            continue
        if cache is not None and reply.value is not None:
            cache.put(keys[custom_id], config.model, reply.value.model_dump_json(), reply.usage)
        outcome.from_batch += 1
        settle(custom_id, reply)
    again = [c for c in pending if c.custom_id not in replies]
    outcome.retried = len(again)
    limiter = anyio.CapacityLimiter(concurrency)

    async def one(call: BatchCall) -> None:
        async with limiter:
            try:
                reply: BatchReply[M] = await structured(config, call.messages, response_model,
                                                        cache, sample=call.sample)
            except ModelUnavailable as exc:
                reply = exc
        settle(call.custom_id, reply)

    async with anyio.create_task_group() as group:
        for call in again:
            group.start_soon(one, call)
    book.batches = [b for b in _read_ledger(ledger).batches if b.requests != digest]
    _write_ledger(ledger, book)
    return replies, outcome

