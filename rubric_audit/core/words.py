"""Our own words about numbers: a count with its noun in the right number ("1 task", "2 tasks"),
so no sentence says "1 tasks" or "criterion(s)"; a share as a percentage."""

from __future__ import annotations

IRREGULAR = {"criterion": "criteria"}


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`count` and `noun`, the noun made plural unless the count is one: `many` where given,
    else an irregular plural we know, else the noun with an s ("0 tasks", "1 criterion")."""
    if count == 1:
        return f"{count:,} {noun}"
    return f"{count:,} {many or IRREGULAR.get(noun) or noun + 's'}"


def pct(value: float | None) -> str:
    """A share as a percentage with one decimal ("n/a" for none)."""
    return "n/a" if value is None else f"{100 * value:.1f}%"
