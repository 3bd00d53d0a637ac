"""Markdown helpers shared by the review app's data and render layers."""

from __future__ import annotations

import re


def code_block(text: str, lexer: str = "") -> str:
    """`text` verbatim as a fenced markdown block, its fence longer than any backtick run in it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lexer}\n{text}\n{fence}"
