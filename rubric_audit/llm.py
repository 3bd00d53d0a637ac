"""The one door to models: litellm (imported lazily), a preflight, bounded retries, usage and cost.

Every stage that calls a model (runner, judge, near misses, lints, suggestions) goes through here.
Commands check each model once before any work (`check_models`): missing or rejected
credentials, an unknown model or an unreachable base URL stop the command with one line
(ModelSetupError, exit 2). During the work, rate limits, 5xx answers and lost connections are
retried with jittered exponential backoff (honouring Retry-After); anything else, authentication
errors included, is never retried. A provider that still fails raises ModelUnavailable: an
infrastructure state, never a model's failure. Settings follow litellm's conventions (provider
env vars such as OPENAI_API_KEY / OPENAI_API_BASE), plus an explicit api_base.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import json
import logging
import os
import random
import sqlite3
from collections.abc import Awaitable, Callable, Iterator
from email.utils import parsedate_to_datetime
from pathlib import Path
from time import time
from typing import Any, Literal

import anyio
from pydantic import BaseModel, Field

from rubric_audit.errors import InputError
from rubric_audit.model import Usage

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the cost map
# instructor logs every failed call at ERROR level; our one line per failure says it instead.
logging.getLogger("instructor").addHandler(logging.NullHandler())
logging.getLogger("instructor").propagate = False

RETRY_STATUSES = {408, 409, 429}  # and every 5xx
MAX_RETRY_AFTER = 60.0  # seconds: a provider asking for longer is waited on this long at most
PREFLIGHT_TIMEOUT = 20.0
PREFLIGHT_PROMPT = "Reply with the word ok."

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


class ModelSetupError(InputError):
    """A model the command cannot use as set up: printed as one line, exit code 2."""

    def __init__(self, model: str, option: str, problem: str) -> None:
        super().__init__(model, option, problem)


@functools.cache
def _litellm() -> Any:
    """Import litellm once per process and set it up for the runner's many calls.

    Its import leaves some 370,000 long-lived objects that every full garbage collection would
    walk again (0.2 s each, several times a run); they are moved out of the collector's reach
    (`gc.freeze`), which also keeps them shared, not copied, in forked worker processes.
    """
    import litellm

    litellm.suppress_debug_info = True
    gc.collect()
    gc.freeze()
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
    hidden = getattr(response, "_hidden_params", None) or {}
    if "response_cost" in hidden:  # litellm priced the reply already (None: no known price)
        cost = None if hidden["response_cost"] is None else float(hidden["response_cost"])
    elif model not in _UNPRICED:
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


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _retry_after(headers: Any) -> float | None:
    """Seconds the provider asked us to wait (Retry-After as seconds or an HTTP date)."""
    value = headers.get("retry-after") if headers is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time())
    except (TypeError, ValueError):
        return None


class ProviderAnswer(BaseModel):
    """What a failed call met: an HTTP status from the provider, no connection, or neither (the
    call never left this machine, e.g. missing credentials)."""

    kind: Literal["status", "unreachable", "local"]
    status: int | None = None
    retry_after: float | None = None

    @property
    def transient(self) -> bool:
        return self.kind == "unreachable" or (
            self.status is not None and (self.status in RETRY_STATUSES or self.status >= 500))


def provider_answer(exc: BaseException) -> ProviderAnswer:
    """Classify a failed call by the provider's real answer, found below litellm's wrappers
    (litellm subclasses openai's errors and reports missing credentials and lost connections
    alike as a 500)."""
    import httpx
    import openai

    for cause in _chain(exc):
        if type(cause).__module__.startswith("litellm"):
            continue
        if isinstance(cause, openai.APIConnectionError | httpx.TransportError | ConnectionError
                      | TimeoutError):
            return ProviderAnswer(kind="unreachable")
        if isinstance(cause, openai.APIStatusError | httpx.HTTPStatusError):
            return ProviderAnswer(kind="status", status=cause.response.status_code,
                                  retry_after=_retry_after(cause.response.headers))
        if isinstance(cause, openai.OpenAIError):  # the SDK refused before sending anything
            return ProviderAnswer(kind="local")
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):  # litellm's word only: nothing below it says more
        return ProviderAnswer(kind="status", status=status, retry_after=_retry_after(
            getattr(getattr(exc, "response", None), "headers", None)))
    return ProviderAnswer(kind="local")


def _provider_errors() -> tuple[type[BaseException], ...]:
    import openai

    return (openai.OpenAIError, _litellm().exceptions.APIError)


async def _with_retries(config: ModelConfig, call: Callable[[], Awaitable[Any]]) -> Any:
    """`call()`, retrying transient provider errors (tenacity: jittered exponential backoff, or
    the provider's Retry-After); raises ModelUnavailable when it gives up."""
    import tenacity

    def wait(state: tenacity.RetryCallState) -> float:
        asked = provider_answer(state.outcome.exception()).retry_after
        base = config.backoff * 2 ** (state.attempt_number - 1)
        delay = min(asked, MAX_RETRY_AFTER) if asked is not None else base
        return delay + random.uniform(0, config.backoff / 2)

    errors = _provider_errors()
    try:
        async for attempt in tenacity.AsyncRetrying(
                retry=tenacity.retry_if_exception(
                    lambda e: isinstance(e, errors) and provider_answer(e).transient),
                wait=wait, stop=tenacity.stop_after_attempt(config.retries + 1), reraise=True):
            with attempt:
                return await call()
    except errors as exc:
        raise ModelUnavailable(_reason(exc)) from exc
    raise AssertionError("unreachable: tenacity returns or raises")


async def complete(config: ModelConfig, messages: list[dict[str, Any]],
                   tools: list[dict[str, Any]] | None = None, **extra: Any) -> Completion:
    """One chat completion, retrying transient provider errors."""
    litellm = _litellm()
    kwargs = _request(config, messages, tools=tools, **extra)
    response = await _with_retries(config, lambda: litellm.acompletion(**kwargs))
    return Completion(message=_message(response.choices[0].message),
                      usage=_usage(litellm, config.model, response))


def _missing_keys(config: ModelConfig) -> list[str]:
    """The credentials litellm says the model needs and the environment lacks (base URLs are
    left to the call: most providers have a default)."""
    if config.api_key:
        return []
    found = _litellm().validate_environment(config.model, api_base=config.api_base)
    return [k for k in found.get("missing_keys") or [] if "KEY" in k or "TOKEN" in k]


async def preflight(config: ModelConfig, option: str) -> None:
    """Check that `config` can answer, with litellm's key check and one tiny real call; raises
    ModelSetupError naming the model, the option that chose it and the setting to fix."""
    litellm = _litellm()
    try:
        provider = litellm.get_llm_provider(config.model, api_base=config.api_base)[1]
    except Exception:  # litellm raises a bare BadRequestError for any name it cannot route
        raise ModelSetupError(config.model, option, "unknown model: name it as provider/model, "
                                                    "e.g. openai/gpt-4o-mini") from None
    if missing := _missing_keys(config):
        raise ModelSetupError(config.model, option, f"no credentials: set {' or '.join(missing)}")
    # One retry at most: the check must answer in seconds (a busy provider gets its second try
    # after its Retry-After, as the work would).
    probe = config.model_copy(update={"max_output_tokens": 16, "temperature": None,
                                      "timeout": min(config.timeout, PREFLIGHT_TIMEOUT),
                                      "retries": min(config.retries, 1)})
    try:
        await complete(probe, [{"role": "user", "content": PREFLIGHT_PROMPT}])
    except ModelUnavailable as exc:
        raise ModelSetupError(config.model, option,
                              _setup_problem(exc.__cause__ or exc, probe, provider)) from None


def _setup_problem(exc: BaseException, config: ModelConfig, provider: str) -> str:
    answer = provider_answer(exc)
    base_variable = f"{provider.upper()}_API_BASE"
    base_setting = f"--api-base or {base_variable}"
    base = config.api_base or os.environ.get(base_variable)
    where = base or f"{provider}'s default endpoint"
    key_setting = " or ".join(_litellm().validate_environment(config.model).get("missing_keys")
                              or []) or f"{provider.upper()}_API_KEY"
    if answer.kind == "unreachable":
        return f"cannot reach {where}: check {base_setting} (and the network)"
    if answer.status in (401, 403):
        return f"credentials rejected (HTTP {answer.status}): check {key_setting}"
    if answer.status == 404:
        return (f"the provider at {where} does not know this model (HTTP 404): check the model "
                f"name, or {base_setting}")
    if answer.transient:
        return f"provider unavailable after {config.retries + 1} tries: {_reason(exc)}"
    return f"the provider refused a one-line test call: {_reason(exc)}"


def check_models(models: dict[str, ModelConfig]) -> None:
    """Preflight every model a command will use (option name -> config) before it does any work."""
    async def check() -> None:
        checked: set[tuple[str, str | None, str | None]] = set()
        for option, config in models.items():
            if (key := (config.model, config.api_base, config.api_key)) not in checked:
                await preflight(config, option)
                checked.add(key)

    if models:
        anyio.run(check)


class ResponseCache:
    """SQLite cache of structured replies, keyed by a hash of (model, messages, schema).

    A cached call costs zero tokens; only parsed, valid replies are stored. The file is created
    with the first reply stored, so a command that fails before calling a model leaves none.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @staticmethod
    def key(model: str, messages: list[dict[str, Any]], schema: dict[str, Any]) -> str:
        blob = json.dumps({"model": model, "messages": messages, "schema": schema},
                          sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def get(self, key: str) -> str | None:
        if not self.path.is_file():
            return None
        with sqlite3.connect(self.path) as db:
            try:
                row = db.execute("SELECT response FROM responses WHERE key = ?", (key,)
                                 ).fetchone()
            except sqlite3.OperationalError:  # created by another process, table not yet there
                return None
        return row[0] if row else None

    def put(self, key: str, model: str, response: str, usage: Usage) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(self.path) as db:
            db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT,"
                       " response TEXT NOT NULL, usage TEXT NOT NULL)")
            db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)",
                       (key, model, response, usage.model_dump_json()))


def default_cache_path() -> Path:
    """$RUBRIC_AUDIT_CACHE, else responses.db in the platform's user cache folder (platformdirs:
    ~/.cache/rubric-audit on Linux, ~/Library/Caches/rubric-audit on macOS, ...)."""
    env = os.environ.get("RUBRIC_AUDIT_CACHE")
    if env:
        return Path(env)
    import platformdirs

    return platformdirs.user_cache_path("rubric-audit", appauthor=False) / "responses.db"


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
    from instructor.core import InstructorRetryException

    client = instructor.from_litellm(litellm.acompletion, mode=instructor.Mode.JSON)
    kwargs = _request(config, messages)
    errors = _provider_errors()

    async def call() -> tuple[Any, Any] | str:
        """(value, completion), or the parse error of a reply that stayed unparseable."""
        try:
            return await client.chat.completions.create_with_completion(
                response_model=response_model, max_retries=parse_retries, **kwargs)
        except InstructorRetryException as exc:
            causes = [exc.__cause__, *(getattr(f, "exception", None)
                                       for f in getattr(exc, "failed_attempts", None) or [])]
            provider = next((c for c in causes if isinstance(c, errors)), None)
            if provider is None:
                return " ".join(str(exc).split())[:300]
        raise provider  # outside the handler, so its own chain (the provider's answer) is kept

    reply = await _with_retries(config, call)
    if isinstance(reply, str):
        return Structured(error=reply)
    value, completion = reply
    usage = _usage(litellm, config.model, completion)
    if cache is not None:
        cache.put(key, config.model, value.model_dump_json(), usage)
    return Structured(value=value, usage=usage)
