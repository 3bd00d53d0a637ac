"""Prompt variants for elicitation ablations: a named edit of the agent's system prompt.

A variant adds sentences to, or removes sentences from, a base system prompt. The exact prompt sent
is stored with every attempt, and the variant's definition in `<runs>/<variant>/variant.json`, so
two arms of an ablation differ by exactly the sentences named.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from pydantic import BaseModel, Field

from rubric_audit.core.errors import InputError, read_model, read_own_text
from rubric_audit.core.model import path_safe

DEFAULT_SYSTEM_PROMPT = (
    "You are an analyst at the firm whose workspace you can reach through the tools: its files, "
    "mailbox, calendar and chat. Complete the task you are given. Look for the information you "
    "need in the files, mail, calendar and chat before answering. When you are done, call "
    "final_answer with your complete answer."
)


class Variant(BaseModel):
    """A named system prompt, with the edits that made it from its base."""

    name: str
    model: str
    base_prompt: str
    added: list[str] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)
    system_prompt: str


def edit_prompt(base: str, add: list[str], drop: list[str]) -> str:
    """`base` without the `drop` sentences and with the `add` sentences appended."""
    prompt = base
    for sentence in drop:
        if sentence not in prompt:
            raise InputError("--drop-sentence", None, f"sentence not in the system prompt: "
                                                      f"{sentence!r}")
        prompt = prompt.replace(sentence, "")
    prompt = re.sub(r"[ \t]{2,}", " ", prompt).strip()
    return " ".join([prompt, *(s.strip() for s in add)]).strip()


def default_name(model: str, base: str, system_prompt: str) -> str:
    """The model's name as a folder, with a short prompt hash when the prompt is not the default."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-")
    if system_prompt == base == DEFAULT_SYSTEM_PROMPT:
        return slug
    return f"{slug}-{hashlib.sha256(system_prompt.encode()).hexdigest()[:8]}"


def make_variant(model: str, name: str | None, system_prompt_file: Path | None,
                 add: list[str], drop: list[str]) -> Variant:
    base = DEFAULT_SYSTEM_PROMPT
    if system_prompt_file is not None:
        base = read_own_text(system_prompt_file).strip()
    prompt = edit_prompt(base, add, drop)
    if name is not None:
        try:
            path_safe(name)
        except ValueError as exc:
            raise InputError("--variant", None, str(exc)) from None
    return Variant(name=name or default_name(model, base, prompt), model=model, base_prompt=base,
                   added=add, dropped=drop, system_prompt=prompt)


def check_variant(runs: Path, variant: Variant) -> bool:
    """Whether the variant's folder records it already; refuses one holding another definition."""
    path = runs / variant.name / "variant.json"
    if not path.is_file():
        return False
    stored = read_model(path, Variant)
    if stored != variant:
        raise InputError(path, "system_prompt", f"variant {variant.name!r} already exists "
                                                f"with another model or prompt; choose "
                                                f"another --variant")
    return True


def claim_variant(runs: Path, variant: Variant) -> None:
    """Record the variant in its folder; an existing folder must hold the same definition."""
    if check_variant(runs, variant):
        return
    path = runs / variant.name / "variant.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(variant.model_dump_json(indent=2) + "\n", encoding="utf-8")
