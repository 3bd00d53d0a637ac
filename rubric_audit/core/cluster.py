"""Ray, for runs and gradings past one machine (`--ray [ADDRESS]`, the optional `ray` extra).

`connect` joins a cluster (ADDRESS, or RAY_ADDRESS, else a local one started here). Workers on
every node send their model calls through one `Governor` actor (`RayGate`, installed as
`llm.call_gate`), so the concurrency and the backoff of a provider and key are the cluster's, not
each worker's: a window of calls in flight that halves when the provider answers 429 or 503 (and
no call starts before the Retry-After it asked for) and grows back by one for each window of
calls answered, up to the concurrency the command was given.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from typing import Any

from pydantic import BaseModel

from rubric_audit.core.errors import InputError
from rubric_audit.core.llm import ProviderAnswer

BACKOFF_STATUSES = frozenset({429, 503})


def ray_module() -> Any:
    """Ray, or one line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise InputError("--ray", None, "Ray is not installed: pip install 'rubric-audit[ray]'"
                         ) from None
    return ray


def connect(address: str | None) -> Any:
    """Ray, joined to the cluster at `address` ("" or None: RAY_ADDRESS, else a new local
    cluster); a driver already connected (a test's cluster) is kept."""
    ray = ray_module()
    if not ray.is_initialized():
        ray.init(address=address or None, log_to_driver=False, logging_level="ERROR")
    return ray


def provider_environment(model: str) -> dict[str, str]:
    """The environment variables of the model's provider (its key, base URL, ...: OPENAI_* for
    openai/...), passed to the workers, whose nodes do not have the driver's environment."""
    prefix = (model.split("/", 1)[0] if "/" in model else "openai").upper() + "_"
    return {k: v for k, v in os.environ.items() if k.startswith(prefix)}


def worker_count(ray: Any) -> int:
    """One worker per CPU of the cluster."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


class KeyWindow(BaseModel):
    """One provider and key's calls: how many may be in flight, are, and when the next may
    start; `answered` counts the answers since the window last grew."""

    window: float
    in_flight: int = 0
    not_before: float = 0.0
    answered: int = 0
    backoffs: int = 0


class Limits:
    """Additive increase, multiplicative decrease per provider and key, capped at `ceiling`."""

    def __init__(self, ceiling: int) -> None:
        self.ceiling = ceiling
        self.keys: dict[str, KeyWindow] = {}

    def key(self, key: str) -> KeyWindow:
        return self.keys.setdefault(key, KeyWindow(window=self.ceiling))

    def may_start(self, key: str, now: float) -> bool:
        state = self.key(key)
        return state.in_flight < int(state.window) and now >= state.not_before

    def started(self, key: str) -> None:
        self.key(key).in_flight += 1

    def ended(self, key: str, status: int | None, retry_after: float | None, now: float) -> None:
        state = self.key(key)
        state.in_flight -= 1
        if status in BACKOFF_STATUSES or retry_after is not None:
            state.window = max(1.0, state.window / 2)
            state.answered = 0
            state.backoffs += 1
            state.not_before = max(state.not_before, now + (retry_after or 0.0))
        elif status is None:
            state.answered += 1
            if state.answered >= state.window:
                state.window, state.answered = min(float(self.ceiling), state.window + 1), 0


class Governor:
    """The cluster's one view of every provider and key (a Ray actor: `governor`)."""

    def __init__(self, ceiling: int) -> None:
        self.limits = Limits(ceiling)
        self.changed = asyncio.Condition()

    async def enter(self, key: str) -> None:
        async with self.changed:
            while not self.limits.may_start(key, time.time()):
                wait = self.limits.key(key).not_before - time.time()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.changed.wait(), max(wait, 0.05))
            self.limits.started(key)

    async def left(self, key: str, status: int | None, retry_after: float | None) -> None:
        async with self.changed:
            self.limits.ended(key, status, retry_after, time.time())
            self.changed.notify_all()

    def state(self) -> dict[str, dict[str, Any]]:
        return {k: v.model_dump() for k, v in self.limits.keys.items()}


def governor(ray: Any, ceiling: int) -> Any:
    """A Governor actor for one command's calls (up to `ceiling` at once per provider and key)."""
    return ray.remote(num_cpus=0, max_concurrency=100_000)(Governor).remote(ceiling)


class RayGate:
    """`llm.call_gate` in a Ray worker: every request waits for the governor's turn and tells it
    how it ended (an answer, or the provider's status and Retry-After)."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    async def enter(self, key: str) -> None:
        await self.actor.enter.remote(key)

    def left(self, key: str, answer: ProviderAnswer | None) -> None:
        status = None if answer is None else answer.status or -1
        self.actor.left.remote(key, status, None if answer is None else answer.retry_after)
