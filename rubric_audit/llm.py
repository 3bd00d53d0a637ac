"""The one door to models: litellm (imported lazily), bounded retries with backoff, usage and cost.

Every stage that calls a model (runner, judge, near misses, lints, suggestions) goes through here.
A provider that still fails after the retries raises ModelUnavailable: an infrastructure state,
never a model's failure. Settings follow litellm's conventions (provider env vars such as
OPENAI_API_KEY / OPENAI_API_BASE), plus an explicit api_base.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, Field

from rubric_audit.model import Usage

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the cost map

TRANSIENT = {"RateLimitError", "ServiceUnavailableError", "InternalServerError",
             "APIConnectionError", "Timeout", "BadGatewayError", "APIError"}
MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


class ModelConfig(BaseModel):
    """Which model to call and how hard to try."""

    model: str
    api_base: str | None = None
    api_key: str | None = None
    temperature: float | None = None
    max_output_tokens: int | None = None
    timeout: float = 120.0
    retries: int = 3
    backoff: float = 1.0


class Completion(BaseModel):
    """One model reply: the assistant message (litellm/OpenAI format), usage and cost."""

    message: dict[str, Any]
    usage: Usage


class ModelUnavailable(Exception):
    """The provider could not answer (after retries for transient errors)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def _litellm() -> Any:
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def _message(raw: Any) -> dict[str, Any]:
    data = raw.model_dump() if hasattr(raw, "model_dump") else dict(raw)
    message = {k: data.get(k) for k in MESSAGE_KEYS if data.get(k) is not None}
    message.setdefault("role", "assistant")
    message.setdefault("content", None)
    if message.get("tool_calls"):
        message["tool_calls"] = [
            {"id": c["id"], "type": "function",
             "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}}
            for c in message["tool_calls"]]
    return message


_UNPRICED: set[str] = set()


def _usage(litellm: Any, model: str, response: Any) -> Usage:
    raw = getattr(response, "usage", None)
    cost = None
    if model not in _UNPRICED:
        try:
            cost = float(litellm.completion_cost(completion_response=response))
        except Exception:  # a model without a price: its cost stays unknown, never a failure
            _UNPRICED.add(model)
    return Usage(prompt_tokens=getattr(raw, "prompt_tokens", None),
                 completion_tokens=getattr(raw, "completion_tokens", None),
                 total_tokens=getattr(raw, "total_tokens", None), cost=cost)


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}"


def _request(config: ModelConfig, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """litellm arguments for one call: retries are ours, so litellm's own are off."""
    kwargs: dict[str, Any] = {"model": config.model, "messages": messages,
                              "timeout": config.timeout, "num_retries": 0}
    for key, value in (("api_base", config.api_base), ("api_key", config.api_key),
                       ("temperature", config.temperature),
                       ("max_tokens", config.max_output_tokens), *extra.items()):
        if value is not None:
            kwargs[key] = value
    return kwargs


async def complete(config: ModelConfig, messages: list[dict[str, Any]],
                   tools: list[dict[str, Any]] | None = None, **extra: Any) -> Completion:
    """One chat completion, retrying transient provider errors with exponential backoff."""
    litellm = _litellm()
    import openai

    kwargs = _request(config, messages, tools=tools, **extra)
    for attempt in range(config.retries + 1):
        try:
            response = await litellm.acompletion(**kwargs)
        except (openai.OpenAIError, litellm.exceptions.APIError) as exc:
            if type(exc).__name__ not in TRANSIENT or attempt == config.retries:
                raise ModelUnavailable(_reason(exc)) from exc
            await anyio.sleep(config.backoff * 2**attempt)
            continue
        return Completion(message=_message(response.choices[0].message),
                          usage=_usage(litellm, config.model, response))
    raise AssertionError("unreachable: the loop returns or raises")


class ResponseCache:
    """SQLite cache of structured replies, keyed by a hash of (model, messages, schema).

    A cached call costs zero tokens; only parsed, valid replies are stored.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(self.path) as db:
            db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT,"
                       " response TEXT NOT NULL, usage TEXT NOT NULL)")

    @staticmethod
    def key(model: str, messages: list[dict[str, Any]], schema: dict[str, Any]) -> str:
        blob = json.dumps({"model": model, "messages": messages, "schema": schema},
                          sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def get(self, key: str) -> str | None:
        with sqlite3.connect(self.path) as db:
            row = db.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: str, model: str, response: str, usage: Usage) -> None:
        with sqlite3.connect(self.path) as db:
            db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)",
                       (key, model, response, usage.model_dump_json()))


def default_cache_path() -> Path:
    """$RUBRIC_AUDIT_CACHE, else ~/.cache/rubric-audit/responses.db."""
    env = os.environ.get("RUBRIC_AUDIT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "rubric-audit" / "responses.db"


class Structured(BaseModel):
    """A structured reply: the parsed object (None when unparseable), usage, and cache hit."""

    value: Any = None
    usage: Usage = Field(default_factory=Usage.zero)
    cached: bool = False
    error: str | None = None


async def structured(config: ModelConfig, messages: list[dict[str, Any]],
                     response_model: type[BaseModel], cache: ResponseCache | None = None,
                     parse_retries: int = 2, sample: int = 0) -> Structured:
    """A reply parsed into `response_model` through instructor (JSON mode, any model).

    A reply still unparseable after `parse_retries` re-asks (instructor sends the validation
    error back) gives `value=None` with the error;
    a provider that keeps failing raises ModelUnavailable, as `complete` does. `sample` numbers
    repeated calls on the same input (judge repeats), each cached on its own.
    """
    schema = response_model.model_json_schema()
    key = ResponseCache.key(config.model, messages, {**schema, "sample": sample})
    if cache is not None and (hit := cache.get(key)) is not None:
        return Structured(value=response_model.model_validate_json(hit), usage=Usage.zero(),
                          cached=True)
    litellm = _litellm()
    import instructor
    import openai
    from instructor.core import InstructorRetryException

    client = instructor.from_litellm(litellm.acompletion, mode=instructor.Mode.JSON)
    kwargs = _request(config, messages)
    for attempt in range(config.retries + 1):
        try:
            value, completion = await client.chat.completions.create_with_completion(
                response_model=response_model, max_retries=parse_retries, **kwargs)
        except InstructorRetryException as exc:
            causes = [exc.__cause__, *(getattr(f, "exception", None)
                                       for f in getattr(exc, "failed_attempts", None) or [])]
            provider = next((c for c in causes if isinstance(c, openai.OpenAIError)), None)
            if provider is None:
                return Structured(error=" ".join(str(exc).split())[:300])
            if type(provider).__name__ not in TRANSIENT or attempt == config.retries:
                raise ModelUnavailable(_reason(provider)) from exc
            await anyio.sleep(config.backoff * 2**attempt)
            continue
        usage = _usage(litellm, config.model, completion)
        if cache is not None:
            cache.put(key, config.model, value.model_dump_json(), usage)
        return Structured(value=value, usage=usage)
    raise AssertionError("unreachable: the loop returns or raises")
