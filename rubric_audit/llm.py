"""The one door to models: litellm (imported lazily), bounded retries with backoff, usage and cost.

Every stage that calls a model (runner, judge, near misses, lints, suggestions) goes through here.
A provider that still fails after the retries raises ModelUnavailable: an infrastructure state,
never a model's failure. Settings follow litellm's conventions (provider env vars such as
OPENAI_API_KEY / OPENAI_API_BASE), plus an explicit api_base.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
from pydantic import BaseModel

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


async def complete(config: ModelConfig, messages: list[dict[str, Any]],
                   tools: list[dict[str, Any]] | None = None, **extra: Any) -> Completion:
    """One chat completion, retrying transient provider errors with exponential backoff."""
    litellm = _litellm()
    import openai

    kwargs: dict[str, Any] = {"model": config.model, "messages": messages,
                              "timeout": config.timeout, "num_retries": 0, **extra}
    for key, value in (("api_base", config.api_base), ("api_key", config.api_key),
                       ("temperature", config.temperature),
                       ("max_tokens", config.max_output_tokens), ("tools", tools)):
        if value is not None:
            kwargs[key] = value
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
