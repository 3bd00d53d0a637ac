"""Trajectories in their source formats, normalised to one model (`Trajectory`).

Three shapes are read: chat messages in the OpenAI style (Archipelago's trajectory.json `messages`,
our runner's), inspect_ai's `ChatMessage` list (the same roles, with `function` as a name and
`arguments` as an object), and Harbor's ATIF (`steps` with `tool_calls` and `observation`). A tool
result is attached to the call it answers (by call id); in chat messages a result whose call was
not recorded becomes a `tool` step holding that call. An ATIF observation result without a
`source_call_id` answers its own step's calls: it is attached to the step's one call, or to its
calls in order when there are as many such results as calls still without one; otherwise (and
for an id no call has) it stays a `tool` step with the result as its text and no call, since no
call is known to have been made. Loaders call `normalise_trajectory(raw, format)`. Malformed parts
(not objects, missing names) are skipped, never guessed; the work is linear in the input.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from rubric_audit.core.model import Role, Step, ToolCall, Trajectory

TrajectoryFormat = Literal["archipelago", "inspect", "atif"]
ROLES: dict[str, Role] = {"system": "system", "developer": "system", "user": "user",
                          "assistant": "assistant", "agent": "assistant", "tool": "tool"}


def _text(content: Any) -> tuple[str, str]:
    """(text, reasoning) of a message's content: a string, or a list of typed parts."""
    if content is None:
        return "", ""
    if isinstance(content, str):
        return content, ""
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return json.dumps(content, default=str), ""
    texts, reasoning = [], []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            kind = part.get("type")
            if kind == "reasoning" and isinstance(part.get("reasoning"), str):
                reasoning.append(part["reasoning"])
            elif isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif kind:
                texts.append(f"[{kind}]")
    return "\n".join(texts), "\n".join(reasoning)


def _arguments(raw: Any) -> str:
    if raw is None:
        return ""
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class _Builder:
    """Steps in order, with each result attached to the call it answers."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.open_calls: dict[str, ToolCall] = {}

    def add(self, step: Step) -> None:
        self.steps.append(step)
        for call in step.tool_calls:
            if call.id:
                self.open_calls[call.id] = call

    def result(self, call_id: str, name: str, text: str, error: bool) -> None:
        call = self.open_calls.pop(call_id, None) if call_id else None
        if call is not None:
            call.result, call.error = text, error
            return
        self.steps.append(Step(role="tool", tool_calls=[
            ToolCall(id=call_id, name=name or "(unknown tool)", result=text, error=error)]))

    def observation(self, step: Step, results: list[tuple[str, str]]) -> None:
        """An ATIF step's observation results, (source_call_id, text) each: by id to the call
        they answer; those without an id to the step's own calls still without a result (all to
        its one call, or in order when as many); any other a `tool` step of text, no call."""
        unnamed: list[str] = []
        unknown: list[str] = []
        for call_id, text in results:
            call = self.open_calls.pop(call_id, None) if call_id else None
            if call is not None:
                call.result = text
            else:
                (unknown if call_id else unnamed).append(text)
        waiting = [c for c in step.tool_calls if c.result is None]
        if unnamed and len(waiting) == 1:
            waiting[0].result = "\n".join(unnamed)
        elif unnamed and len(unnamed) == len(waiting):
            for call, text in zip(waiting, unnamed, strict=True):
                call.result = text
        else:
            unknown = unnamed + unknown
            waiting = []
        for call in waiting:
            self.open_calls.pop(call.id, None)
        self.steps += [Step(role="tool", text=text) for text in unknown]


def _chat_call(raw: Any) -> ToolCall | None:
    """An OpenAI call (`function: {name, arguments}`) or an inspect one (`function: name`)."""
    if not isinstance(raw, dict):
        return None
    function = raw.get("function")
    if isinstance(function, dict):
        name, arguments = function.get("name"), function.get("arguments")
    else:
        name, arguments = function, raw.get("arguments")
    if not isinstance(name, str) or not name:
        return None
    return ToolCall(id=str(raw.get("id") or ""), name=name, arguments=_arguments(arguments))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _role(value: Any) -> Role | None:
    """Our role for a source's role name; None for anything else (a list is no role)."""
    return ROLES.get(value) if isinstance(value, str) else None


def from_chat_messages(messages: Any, fmt: str = "archipelago") -> Trajectory:
    """OpenAI-style or inspect_ai chat messages."""
    built = _Builder()
    for message in messages if isinstance(messages, list) else []:
        role = _role(message.get("role")) if isinstance(message, dict) else None
        if role is None:
            continue
        text, reasoning = _text(message.get("content"))
        if role == "tool":
            name = message.get("name") or message.get("function") or ""
            error = message.get("error")
            if error and not text:
                text = _text(error.get("message") if isinstance(error, dict) else error)[0]
            built.result(str(message.get("tool_call_id") or ""), str(name), text, bool(error))
            continue
        own_reasoning = message.get("reasoning_content")
        calls = [c for c in map(_chat_call, _list(message.get("tool_calls"))) if c is not None]
        usage = message.get("usage") if isinstance(message.get("usage"), dict) else {}
        built.add(Step(role=role, text=text,
                       reasoning=own_reasoning if isinstance(own_reasoning, str) else reasoning,
                       tool_calls=calls, tokens=_int(usage.get("completion_tokens"))))
    return Trajectory(format=fmt, steps=built.steps)


def from_atif(document: Any) -> Trajectory:
    """Harbor's Agent Trajectory Interchange Format: `steps` with calls and their observation."""
    built = _Builder()
    steps = document.get("steps") if isinstance(document, dict) else None
    for raw in steps if isinstance(steps, list) else []:
        role = _role(raw.get("source")) if isinstance(raw, dict) else None
        if role is None:
            continue
        text, reasoning = _text(raw.get("message"))
        calls = []
        for call in _list(raw.get("tool_calls")):
            if isinstance(call, dict) and isinstance(call.get("function_name"), str):
                calls.append(ToolCall(id=str(call.get("tool_call_id") or ""),
                                      name=call["function_name"],
                                      arguments=_arguments(call.get("arguments"))))
        metrics = raw.get("metrics") if isinstance(raw.get("metrics"), dict) else {}
        own_reasoning = raw.get("reasoning_content")
        step = Step(role=role, text=text,
                    reasoning=own_reasoning if isinstance(own_reasoning, str) else reasoning,
                    tool_calls=calls, tokens=_int(metrics.get("completion_tokens")))
        built.add(step)
        observation = raw.get("observation") if isinstance(raw.get("observation"), dict) else {}
        built.observation(step, [(str(result.get("source_call_id") or ""),
                                  _text(result.get("content"))[0])
                                 for result in _list(observation.get("results"))
                                 if isinstance(result, dict)])
    return Trajectory(format="atif", steps=built.steps)


def normalise_trajectory(raw: Any, fmt: TrajectoryFormat) -> Trajectory:
    """The one entry point for loaders: Archipelago or inspect messages (a list), or an ATIF
    document (an object)."""
    if fmt == "atif":
        return from_atif(raw)
    return from_chat_messages(raw, fmt)
