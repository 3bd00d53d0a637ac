"""The one door to models: litellm (imported lazily), a preflight, bounded retries, usage and cost.

Every stage that calls a model (runner, judge, near misses, lints, suggestions) goes through here.
Commands check each model once before any work (`check_models`): missing or rejected
credentials, an unknown model, a base URL that cannot be reached or a server too slow to answer
stop the command with one line that says which (ModelSetupError, exit 2); for models that give
structured replies the check also chooses how to ask for them (`StructuredMode`). Every call is
bounded: an output cap (`max_output_tokens`, by default `STRUCTURED_OUTPUT_CAP` for structured
replies and `AGENT_OUTPUT_CAP` for agent steps) and a timeout per request that is enforced here,
not only asked of the provider. During the work, rate limits, 5xx answers, lost connections and
timeouts are retried with jittered exponential backoff (honouring Retry-After); anything else,
authentication errors included, is never retried. A provider that still fails raises
ModelUnavailable: an infrastructure state, never a model's failure. Settings follow litellm's
conventions (provider env vars such as OPENAI_API_KEY / OPENAI_API_BASE), plus an explicit
api_base. litellm's own log lines go to a log file (`library_log_path`), to stderr only with
--debug.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import importlib.util
import json
import logging
import logging.handlers
import os
import random
import socket
import sqlite3
from collections.abc import Awaitable, Callable, Collection, Iterator
from contextlib import contextmanager
from email.utils import parsedate_to_datetime
from pathlib import Path
from time import monotonic, time
from typing import Any, Generic, Literal, Protocol, TypeVar

import anyio
from pydantic import BaseModel, Field

from rubric_audit.core.errors import InputError
from rubric_audit.core.model import Usage

M = TypeVar("M", bound=BaseModel)  # the model a structured reply is parsed into
T = TypeVar("T")

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the cost map
# instructor logs every failed call at ERROR level; our one line per failure says it instead.
logging.getLogger("instructor").addHandler(logging.NullHandler())
logging.getLogger("instructor").propagate = False

MODEL_STACK = ("litellm", "instructor", "openai", "tenacity", "httpx")
"""What the `models` extra installs and this module imports; nothing offline imports them."""
MODELS_EXTRA = "pip install 'rubric-audit[models]'"
RETRY_STATUSES = {408, 409, 429}  # and every 5xx
MAX_RETRY_AFTER = 60.0  # seconds: a provider asking for longer is waited on this long at most
PREFLIGHT_TIMEOUT = 20.0
PREFLIGHT_PROMPT = "Reply with the word ok."
# Output caps per call when none is set: a judge's verdict with its rationale fits in a few
# hundred tokens, an agent's step (a tool call, or the answer) in a few thousand. Without a cap
# a small model's runaway reply ran to the context's end (8,192 tokens, minutes a call).
STRUCTURED_OUTPUT_CAP = 1024
AGENT_OUTPUT_CAP = 4096
CALL_TIMEOUT = 120.0

MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")

# How a structured reply is asked for, strictest first: the provider's JSON-schema response
# format (OpenAI's structured outputs, vLLM, ollama); a JSON object constrained by a schema given
# beside it (`{"type": "json_object", "schema": ...}`, as llama.cpp's servers take it); a forced
# call of one tool whose parameters are the schema; JSON asked for in the prompt (the schema in
# a system message, `{"type": "json_object"}`), which nothing constrains.
StructuredMode = Literal["json-schema", "json-object-schema", "tools", "json"]
STRUCTURED_MODES: tuple[StructuredMode, ...] = ("json-schema", "json-object-schema", "tools",
                                                "json")
CONSTRAINED_MODES = frozenset({"json-schema", "json-object-schema", "tools"})
# The probe a mode must pass at the check: a reply that is exactly {PROBE_KEY: "ok"} to the
# preflight's prompt, which never names the key, comes only from a provider that applied the
# schema.
PROBE_KEY = "rubric_audit_probe"
PROBE_SCHEMA = {"type": "object", "properties": {PROBE_KEY: {"type": "string", "enum": ["ok"]}},
                "required": [PROBE_KEY], "additionalProperties": False}


class ModelConfig(BaseModel):
    """Which model to call, how hard to try, and how to bound each call.

    `max_output_tokens` None is the cap of the call's kind (STRUCTURED_OUTPUT_CAP,
    AGENT_OUTPUT_CAP); `timeout` bounds each request, retries apart; `deadline` (a
    `time.monotonic()` reading, the end of the command's `--time-budget`) bounds them all: no
    request starts after it and none outlasts it. `structured_mode` None is chosen when the
    model is checked (`check_models`), or from litellm's capability data alone for a model that
    was not checked.
    """

    model: str
    api_base: str | None = None
    api_key: str | None = None
    temperature: float | None = None
    max_output_tokens: int | None = None
    timeout: float = CALL_TIMEOUT
    retries: int = 3
    backoff: float = 1.0
    structured_mode: StructuredMode | None = None
    deadline: float | None = None

    def request_seconds(self) -> float:
        """How long the next request may take: its timeout, or less where the command's time
        budget ends sooner; BudgetSpent once it has ended."""
        if self.deadline is None:
            return self.timeout
        left = self.deadline - monotonic()
        if left <= 0:
            raise BudgetSpent()
        return min(self.timeout, left)


def deadline_after(seconds: float | None) -> float | None:
    """The deadline of a time budget of `seconds` from now (None: no budget)."""
    return None if seconds is None else monotonic() + seconds


class Completion(BaseModel):
    """One model reply: the assistant message (litellm/OpenAI format), usage and cost, and why
    it ended (`length`: cut at the output cap)."""

    message: dict[str, Any]
    usage: Usage
    finish_reason: str | None = None


class ModelUnavailable(Exception):
    """The provider could not answer (after retries for transient errors)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


BUDGET_SPENT = ("the command's time budget (--time-budget) was spent before this call could "
                "be made or finished")


class BudgetSpent(ModelUnavailable):
    """The command's time budget ended: calls not made are unavailable, never failed."""

    def __init__(self) -> None:
        super().__init__(BUDGET_SPENT)


class ModelSetupError(InputError):
    """A model the command cannot use as set up: printed as one line, exit code 2."""

    def __init__(self, model: str, option: str, problem: str) -> None:
        super().__init__(model, option, problem)


class CallTimedOut(TimeoutError):
    """A request that got no answer within its timeout (cut here, whatever the provider does)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"no answer within {seconds:g} s")


LIBRARY_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx")
show_library_logs = False  # --debug: litellm's log lines on stderr too


def library_log_path() -> Path:
    """$RUBRIC_AUDIT_LOG, else rubric-audit.log in the platform's user log folder."""
    env = os.environ.get("RUBRIC_AUDIT_LOG")
    if env:
        return Path(env)
    import platformdirs

    return platformdirs.user_log_path("rubric-audit", appauthor=False) / "rubric-audit.log"


def _quiet_libraries() -> None:
    """litellm's log lines (its "LoggingWorker: event loop changed", its cost map) are not the
    user's business: they go to the log file (created with the first line, kept under 1 MB), and
    to stderr as well only with --debug (`show_library_logs`, or RUBRIC_AUDIT_DEBUG)."""
    path = library_log_path()
    handlers: list[logging.Handler] = []
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.handlers.RotatingFileHandler(
            path, maxBytes=1_000_000, backupCount=1, delay=True, encoding="utf-8"))
    except OSError:  # no writable log folder: the lines are dropped, never shown
        pass
    if show_library_logs or os.environ.get("RUBRIC_AUDIT_DEBUG", "").lower() in ("1", "true",
                                                                                 "yes"):
        handlers.append(logging.StreamHandler())
    formatter = logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s")
    for handler in handlers:
        handler.setFormatter(formatter)
    for name in LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        for old in list(logger.handlers):
            logger.removeHandler(old)
        for handler in handlers:
            logger.addHandler(handler)
        logger.propagate = False


@functools.cache
def litellm_module() -> Any:
    """Import litellm once per process and set it up for the runner's many calls.

    Its import leaves some 370,000 long-lived objects that every full garbage collection would
    walk again (0.2 s each, several times a run); they are moved out of the collector's reach
    (`gc.freeze`), which also keeps them shared, not copied, in forked worker processes.
    """
    import litellm

    litellm.suppress_debug_info = True
    _quiet_libraries()
    gc.collect()
    gc.freeze()
    return litellm


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Cut the request inside at `seconds` (CallTimedOut), whether or not the provider's client
    honours the timeout it was given."""
    try:
        with anyio.fail_after(seconds):
            yield
    except TimeoutError as exc:
        raise CallTimedOut(seconds) from exc


def _message(raw: Any) -> dict[str, Any]:
    data = raw.model_dump() if hasattr(raw, "model_dump") else dict(raw)
    message: dict[str, Any] = {k: data.get(k) for k in MESSAGE_KEYS if data.get(k) is not None}
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


def request_arguments(config: ModelConfig, messages: list[dict[str, Any]], cap: int,
             **extra: Any) -> dict[str, Any]:
    """litellm arguments for one call: retries are ours, so litellm's own are off; the output
    cap is the config's, else `cap`."""
    kwargs: dict[str, Any] = {"model": config.model, "messages": messages,
                              "timeout": config.timeout, "num_retries": 0}
    for key, value in (("api_base", config.api_base), ("api_key", config.api_key),
                       ("temperature", config.temperature),
                       ("max_tokens", config.max_output_tokens or cap), *extra.items()):
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
    """What a failed call met: an HTTP status from the provider, no connection (`unreachable`:
    refused, a name that does not resolve, a connection lost), a connection that brought no answer
    in time (`slow`), or neither (the call never left this machine, e.g. missing credentials)."""

    kind: Literal["status", "unreachable", "slow", "local"]
    status: int | None = None
    retry_after: float | None = None
    detail: str | None = None

    @property
    def transient(self) -> bool:
        return self.kind in ("unreachable", "slow") or (
            self.status is not None and (self.status in RETRY_STATUSES or self.status >= 500))


def _no_connection(exc: BaseException) -> str | None:
    """Why no connection was made, where the socket said so."""
    for cause in _chain(exc):
        if isinstance(cause, socket.gaierror):
            return "the host name does not resolve (DNS)"
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused: nothing listens there (the server is down or elsewhere)"
    return None


def provider_answer(exc: BaseException) -> ProviderAnswer:
    """Classify a failed call by the provider's real answer, found below litellm's wrappers
    (litellm subclasses openai's errors and reports missing credentials and lost connections
    alike as a 500)."""
    import httpx
    import openai

    for cause in _chain(exc):
        if type(cause).__module__.startswith("litellm"):
            continue
        if isinstance(cause, httpx.ConnectTimeout):
            return ProviderAnswer(kind="unreachable", detail="no connection within the timeout")
        if isinstance(cause, openai.APITimeoutError | httpx.TimeoutException | TimeoutError):
            return ProviderAnswer(kind="slow")
        if isinstance(cause, openai.APIConnectionError | httpx.TransportError | ConnectionError):
            return ProviderAnswer(kind="unreachable", detail=_no_connection(exc))
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

    return (openai.OpenAIError, litellm_module().exceptions.APIError, CallTimedOut)


async def with_retries(config: ModelConfig, call: Callable[[], Awaitable[T]]) -> T:
    """`call()`, retrying transient provider errors (tenacity: jittered exponential backoff, or
    the provider's Retry-After); raises ModelUnavailable when it gives up."""
    import tenacity

    def wait(state: tenacity.RetryCallState) -> float:
        failed = state.outcome.exception() if state.outcome is not None else None
        assert failed is not None  # tenacity waits only after a call that raised (retry_if_exception)
        asked = provider_answer(failed).retry_after
        base = config.backoff * 2 ** (state.attempt_number - 1)
        delay = min(asked, MAX_RETRY_AFTER) if asked is not None else base
        left = config.deadline - monotonic() if config.deadline is not None else delay + 1
        return max(0.0, min(delay + random.uniform(0, config.backoff / 2), left))

    def spent() -> bool:
        return config.deadline is not None and monotonic() >= config.deadline

    attempts = tenacity.stop_after_attempt(config.retries + 1)

    def stop(state: tenacity.RetryCallState) -> bool:
        """After the last try, or once the command's time budget has ended."""
        return attempts(state) or spent()

    errors = _provider_errors()
    try:
        async for attempt in tenacity.AsyncRetrying(
                retry=tenacity.retry_if_exception(
                    lambda e: isinstance(e, errors) and provider_answer(e).transient),
                wait=wait, stop=stop, reraise=True):
            with attempt:
                return await call()
    except errors as exc:
        raise BudgetSpent() if spent() else ModelUnavailable(_reason(exc)) from exc
    raise AssertionError("unreachable: tenacity returns or raises")


def provider_key(config: ModelConfig) -> str:
    """Whose limits a call counts against: the provider's endpoint and a hash of the key."""
    key = config.api_key or ""
    return f"{endpoint(config) or config.model.split('/', 1)[0]}#" \
           f"{hashlib.sha256(key.encode()).hexdigest()[:12] if key else 'env'}"


class CallGate(Protocol):
    """Where every request waits its turn before it is sent and reports how it ended (None: an
    answer), per provider and key (`provider_key`): a gate shared by many processes keeps one
    concurrency and one backoff across them (the Ray runner's)."""

    async def enter(self, key: str) -> None: ...

    def left(self, key: str, answer: ProviderAnswer | None) -> None: ...


call_gate: CallGate | None = None  # none: each process bounds its own calls


class _Bounded:
    """`request`: litellm's acompletion under the config's timeout, the longest request's seconds
    kept (`longest`).

    With `schema`, the JSON object it asks for is constrained by it (`{"type": "json_object",
    "schema": ...}`). With `lenient`, a reply whose JSON is invalid only for raw control
    characters inside its strings (a newline where `\\n` belongs: llama.cpp's grammar lets a
    small model write them) is given to the parser re-encoded, so it is read as it was meant
    rather than re-asked.
    """

    def __init__(self, config: ModelConfig, schema: dict[str, Any] | None = None,
                 lenient: bool = False) -> None:
        self.config, self.schema, self.lenient = config, schema, lenient
        self.longest = 0.0

    async def request(self, **kwargs: Any) -> Any:
        if self.schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": self.schema}
        key = provider_key(self.config)
        if call_gate is not None:
            await call_gate.enter(key)
        seconds = self.config.request_seconds()
        kwargs["timeout"] = seconds
        started = monotonic()
        answer: ProviderAnswer | None = None
        try:
            with _deadline(seconds):
                response = await litellm_module().acompletion(**kwargs)
        except Exception as exc:
            answer = provider_answer(exc)
            raise
        finally:
            self.longest = max(self.longest, monotonic() - started)
            if call_gate is not None:
                call_gate.left(key, answer)
        if self.lenient:
            _reencode_json(response)
        return response


def _reencode_json(response: Any) -> None:
    message = response.choices[0].message if getattr(response, "choices", None) else None
    content = getattr(message, "content", None)
    if message is None or not isinstance(content, str):
        return
    try:
        json.loads(content)
    except ValueError:
        try:
            message.content = json.dumps(json.loads(content, strict=False), ensure_ascii=False)
        except ValueError:
            return


async def complete(config: ModelConfig, messages: list[dict[str, Any]],
                   tools: list[dict[str, Any]] | None = None, **extra: Any) -> Completion:
    """One chat completion (an agent's step: AGENT_OUTPUT_CAP unless the config caps it),
    retrying transient provider errors."""
    litellm = litellm_module()
    kwargs = request_arguments(config, messages, AGENT_OUTPUT_CAP, tools=tools, **extra)
    call = _Bounded(config)
    response = await with_retries(config, lambda: call.request(**kwargs))
    choice = response.choices[0]
    return Completion(message=_message(choice.message),
                      usage=_usage(litellm, config.model, response),
                      finish_reason=getattr(choice, "finish_reason", None))


def _missing_keys(config: ModelConfig) -> list[str]:
    """The credentials litellm says the model needs and the environment lacks (base URLs are
    left to the call: most providers have a default)."""
    if config.api_key:
        return []
    found = litellm_module().validate_environment(config.model, api_base=config.api_base)
    return [k for k in found.get("missing_keys") or [] if "KEY" in k or "TOKEN" in k]


def _provider(config: ModelConfig, option: str) -> str:
    try:
        provider: str = litellm_module().get_llm_provider(config.model, api_base=config.api_base)[1]
        return provider
    except Exception:  # litellm raises a bare BadRequestError for any name it cannot route
        raise ModelSetupError(config.model, option, "unknown model: name it as provider/model, "
                                                    "e.g. openai/gpt-4o-mini") from None


def _check_config(config: ModelConfig) -> ModelConfig:
    """The config of a check's calls: tiny replies, a short timeout and one retry at most, so the
    check answers in seconds (a busy provider gets its second try after its Retry-After, as the
    work would); the command's time budget bounds the work, not its check."""
    return config.model_copy(update={"max_output_tokens": 32, "temperature": None,
                                     "timeout": min(config.timeout, PREFLIGHT_TIMEOUT),
                                     "retries": min(config.retries, 1), "deadline": None})


async def preflight(config: ModelConfig, option: str) -> None:
    """Check that `config` can answer, with litellm's key check and one tiny real call; raises
    ModelSetupError naming the model, the option that chose it and the setting to fix."""
    provider = _provider(config, option)
    if missing := _missing_keys(config):
        raise ModelSetupError(config.model, option, f"no credentials: set {' or '.join(missing)}")
    probe = _check_config(config)
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
    key_setting = " or ".join(litellm_module().validate_environment(config.model).get("missing_keys")
                              or []) or f"{provider.upper()}_API_KEY"
    if answer.kind == "unreachable":
        why = f": {answer.detail}" if answer.detail else ""
        return f"cannot reach {where}{why}; check {base_setting} (and the network)"
    if answer.kind == "slow":
        return (f"{where} is reachable but sent no answer to a one-line test call within "
                f"{config.timeout:g} s ({config.retries + 1} tries): the server is up but slow "
                f"or busy, not down; run again when it is idle (the check waits the lesser of "
                f"--call-timeout and {PREFLIGHT_TIMEOUT:g} s)")
    if answer.status in (401, 403):
        return f"credentials rejected (HTTP {answer.status}): check {key_setting}"
    if answer.status == 404:
        return (f"the provider at {where} does not know this model (HTTP 404): check the model "
                f"name, or {base_setting}")
    if answer.transient:
        return f"provider unavailable after {config.retries + 1} tries: {_reason(exc)}"
    return f"the provider refused a one-line test call: {_reason(exc)}"


def _probe_request(mode: StructuredMode) -> dict[str, Any]:
    """What a mode's probe adds to the one-line call."""
    if mode == "json-schema":
        return {"response_format": {"type": "json_schema", "json_schema": {
            "name": PROBE_KEY, "schema": PROBE_SCHEMA, "strict": True}}}
    if mode == "json-object-schema":
        return {"response_format": {"type": "json_object", "schema": PROBE_SCHEMA}}
    return {"tools": [{"type": "function", "function": {
        "name": PROBE_KEY, "description": "Give your reply.", "parameters": PROBE_SCHEMA}}],
        "tool_choice": {"type": "function", "function": {"name": PROBE_KEY}}}


def _probe_passed(mode: StructuredMode, reply: Completion) -> bool:
    if mode == "tools":
        calls = reply.message.get("tool_calls") or []
        texts = [c["function"]["arguments"] for c in calls if c["function"]["name"] == PROBE_KEY]
    else:
        texts = [reply.message.get("content") or ""]
    try:
        return any(json.loads(t) == {PROBE_KEY: "ok"} for t in texts)
    except ValueError:
        return False


ProbeResult = Literal["applied", "ignored", "refused"]


async def probe_mode(config: ModelConfig, mode: StructuredMode, option: str) -> ProbeResult:
    """What the provider does with a request in `mode` (one tiny call): applies the schema,
    ignores it, or refuses the request (any HTTP error: llama-cpp-python's server answers a
    response format it does not know with a 500; or litellm's refusal of the parameter); a
    provider that stops answering is a ModelSetupError, as at the preflight."""
    if mode == "json":
        return "applied"
    probe = _check_config(config).model_copy(update={"retries": 0})  # the check just passed
    try:
        reply = await complete(probe, [{"role": "user", "content": PREFLIGHT_PROMPT}],
                               **_probe_request(mode))
    except ModelUnavailable as exc:
        if provider_answer(exc.__cause__ or exc).kind in ("unreachable", "slow"):
            raise ModelSetupError(config.model, option, _setup_problem(
                exc.__cause__ or exc, probe, _provider(config, option))) from None
        return "refused"
    return "applied" if _probe_passed(mode, reply) else "ignored"


def capability_mode(config: ModelConfig) -> StructuredMode:
    """The mode litellm's capability data gives the provider's own endpoint: `json-schema` where
    it lists response schemas, else `json`. Behind another base URL (a local or proxy server)
    the data says nothing about the server, so it is not used."""
    if config.api_base:
        return "json"
    try:
        supported = litellm_module().supports_response_schema(config.model)
    except Exception:  # a model litellm has no data for
        supported = False
    return "json-schema" if supported else "json"


async def choose_mode(config: ModelConfig, option: str, mode_option: str = "--judge-mode"
                      ) -> StructuredMode:
    """The strictest structured mode the provider applies: the config's own when it names one
    (a provider that refuses it is a ModelSetupError; one that takes it is used, obeyed or not),
    else litellm's capability data for the provider's own endpoint, else the first constrained
    mode whose probe the provider applies, else prompted JSON."""
    if config.structured_mode is not None:
        if await probe_mode(config, config.structured_mode, option) == "refused":
            raise ModelSetupError(config.model, mode_option,
                                  f"the provider refused {config.structured_mode} replies; "
                                  f"choose another mode or leave the choice to the check")
        return config.structured_mode
    if (known := capability_mode(config)) != "json":
        return known
    for mode in STRUCTURED_MODES:
        if await probe_mode(config, mode, option) == "applied":
            return mode
    return "json"


def require_model_stack(model: str, option: str) -> None:
    """Refuse a model, in one line naming its option and the install that brings the model
    stack, where the slim install left it out (the offline audit needs none of it)."""
    missing = [name for name in MODEL_STACK if importlib.util.find_spec(name) is None]
    if missing:
        raise ModelSetupError(model, option, f"calling a model needs the models extra "
                                             f"({', '.join(missing)} not installed): "
                                             f"{MODELS_EXTRA}")


def check_models(models: dict[str, ModelConfig], structured: Collection[str] = ()
                 ) -> dict[str, ModelConfig]:
    """Preflight every model a command will use (option name -> config) before it does any work;
    for the options in `structured` (models that give structured replies) also choose the
    structured mode. Returns the configs with their modes set. The model stack is asked for
    first, for every model, before any is called."""
    for option, config in models.items():
        require_model_stack(config.model, option)

    async def check() -> dict[str, ModelConfig]:
        checked: set[tuple[str, str | None, str | None]] = set()
        chosen: dict[tuple[str, str | None, str | None, str | None], StructuredMode] = {}
        ready: dict[str, ModelConfig] = {}
        for option, config in models.items():
            if (key := (config.model, config.api_base, config.api_key)) not in checked:
                await preflight(config, option)
                checked.add(key)
            if option in structured:
                mode_key = (*key, config.structured_mode)
                if mode_key not in chosen:
                    chosen[mode_key] = await choose_mode(config, option)
                config = config.model_copy(update={"structured_mode": chosen[mode_key]})
            ready[option] = config
        return ready

    return anyio.run(check) if models else {}


def endpoint(config: ModelConfig) -> str:
    """Where the model's calls go: its base URL, else the provider's from the environment
    (`<PROVIDER>_API_BASE`, and OPENAI_BASE_URL for openai), else "" (the provider's default)."""
    provider = config.model.split("/", 1)[0].upper() if "/" in config.model else "OPENAI"
    names = [f"{provider}_API_BASE"] + (["OPENAI_BASE_URL"] if provider == "OPENAI" else [])
    return config.api_base or next((os.environ[n] for n in names if os.environ.get(n)), "")


class ResponseCache:
    """SQLite cache of structured replies, keyed by a hash of what decides the reply: the model,
    where it is served (two servers may serve models of one name), its sampling settings (the
    temperature and the output cap), the messages and the schema.

    A cached call costs zero tokens; only parsed, valid replies are stored. The file is created
    with the first reply stored, so a command that fails before calling a model leaves none.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @staticmethod
    def key(config: ModelConfig, messages: list[dict[str, Any]], schema: dict[str, Any]) -> str:
        blob = json.dumps({"model": config.model, "endpoint": endpoint(config),
                           "temperature": config.temperature,
                           "max_output_tokens": config.max_output_tokens or STRUCTURED_OUTPUT_CAP,
                           "messages": messages, "schema": schema}, sort_keys=True)
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


class Structured(BaseModel, Generic[M]):
    """A structured reply: the parsed object (None when unparseable, with the error; `cut` when
    the reply ran into the output cap), usage, cache hit, and the longest of its requests (each
    bounded by the config's timeout; re-asks and retries are requests of their own)."""

    value: M | None = None
    usage: Usage = Field(default_factory=Usage.zero)
    cached: bool = False
    error: str | None = None
    cut: bool = False
    longest_request_seconds: float = 0.0


def instructor_mode(mode: StructuredMode) -> Any:
    import instructor

    return {"json-schema": instructor.Mode.JSON_SCHEMA, "tools": instructor.Mode.TOOLS}.get(
        mode, instructor.Mode.JSON)  # json-object-schema: JSON mode, its schema added by _Bounded


async def structured(config: ModelConfig, messages: list[dict[str, Any]],
                     response_model: type[M], cache: ResponseCache | None = None,
                     parse_retries: int = 2, sample: int = 0) -> Structured[M]:
    """A reply parsed into `response_model` through instructor, asked for in the config's
    structured mode (else the one litellm's capability data gives), capped at
    STRUCTURED_OUTPUT_CAP tokens unless the config caps it.

    A reply still unparseable after `parse_retries` re-asks (instructor sends the validation
    error back) gives `value=None` with the error; a reply cut at the output cap is not re-asked
    (it would run away again) and gives `value=None`, `cut=True`. A provider that keeps failing
    raises ModelUnavailable, as `complete` does. `sample` numbers repeated calls on the same
    input (judge repeats), each cached on its own.
    """
    schema = response_model.model_json_schema()
    key = ResponseCache.key(config, messages, {**schema, "sample": sample})
    if cache is not None and (hit := cache.get(key)) is not None:
        return Structured(value=response_model.model_validate_json(hit), usage=Usage.zero(),
                          cached=True)
    litellm = litellm_module()
    import instructor
    from instructor.core import IncompleteOutputException, InstructorRetryException

    mode = config.structured_mode or capability_mode(config)
    bounded = _Bounded(config, schema if mode == "json-object-schema" else None,
                       lenient=mode != "tools")
    client = instructor.from_litellm(bounded.request, mode=instructor_mode(mode))
    assert isinstance(client, instructor.AsyncInstructor)  # bounded.request is a coroutine function
    kwargs = request_arguments(config, messages, STRUCTURED_OUTPUT_CAP)
    errors = _provider_errors()

    async def call() -> tuple[M, Any] | Structured[M]:
        """(value, completion), or the Structured of a reply that stayed unparseable."""
        try:
            return await client.chat.completions.create_with_completion(
                response_model=response_model, max_retries=parse_retries, **kwargs)
        except IncompleteOutputException as exc:
            cut = getattr(exc, "last_completion", None)
            return Structured(cut=True, usage=_usage(litellm, config.model, cut) if cut
                              else Usage.zero(),
                              error=f"the reply ran into the output cap of "
                                    f"{kwargs['max_tokens']} tokens and was cut")
        except InstructorRetryException as exc:
            causes: list[BaseException | None] = [
                exc.__cause__, *(getattr(f, "exception", None)
                                 for f in getattr(exc, "failed_attempts", None) or [])]
            provider = next((c for c in causes if isinstance(c, (*errors, BudgetSpent))), None)
            if provider is None:
                return Structured(error=" ".join(str(exc).split())[:300])
        raise provider  # outside the handler, so its own chain (the provider's answer) is kept

    reply = await with_retries(config, call)
    longest = round(bounded.longest, 3)
    if isinstance(reply, Structured):
        return reply.model_copy(update={"longest_request_seconds": longest})
    value, completion = reply
    usage = _usage(litellm, config.model, completion)
    if cache is not None:
        cache.put(key, config.model, value.model_dump_json(), usage)
    return Structured(value=value, usage=usage, longest_request_seconds=longest)
