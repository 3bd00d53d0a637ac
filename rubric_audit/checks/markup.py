r"""An answer's markup read as the plain text a grader sees, position for position.

Markdown emphasis and code marks are presentation ("from **£1,300m**" is from £1,300m); LaTeX
math is notation (`$92.5\%$` is 92.5%, `23{,}100` is 23,100, `\pounds 2{,}000.93` is £2,000.93,
`\frac{a}{b}` is a and b); a value struck through (`~~£9.12~~`, `<del>`) is one the answer
retracts. Every mark is blanked by as many spaces, so a position in the plain text points at the
same character of the written answer and a quote taken from the original shows the value read.
Every pass is linear.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

EMPHASIS = re.compile(r"\*\*|__|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])|`")
# Display math, or inline math holding a command or a brace ("$92.5\%$", not "$5 or $6").
MATH = re.compile(r"\$\$[^$]{1,4000}?\$\$|\$(?=[^\s$])[^$\n]{0,300}?[\\{][^$\n]{0,300}?\$")
LATEX_GROUPED = re.compile(r"\d{1,3}(?:(?:\{,\}|\\,)\d{3})+(?:\.\d+)?")  # 23{,}100, 2{,}000.93
# "\pounds 2{,}000.93", "\euro", "\$": a currency sign written as a command
LATEX_CURRENCY = re.compile(r"\\(?:pounds|textsterling|euro|texteuro|yen|\$)(?![A-Za-z])(?:[ \t]|\\,)*")
CURRENCY_SIGNS = {"pounds": "£", "textsterling": "£", "euro": "€", "texteuro": "€", "yen": "¥",
                  "$": "$"}
LATEX_PERCENT = re.compile(r"\\%")
LATEX_MARKUP = re.compile(r"\\[A-Za-z]+|\\.|[{}$^_&]")
STRUCK = re.compile(r"~~[^~\n]{1,300}~~|<(del|s|strike)>[^<\n]{1,300}</\1>", re.I)


def plain_text(text: str) -> str:
    """`text` with markdown emphasis, code marks and LaTeX markup blanked, each by as many
    spaces (a LaTeX thousands group's padding after its digits), so every position still points
    into the original."""
    return MATH.sub(_plain_math, EMPHASIS.sub(lambda m: " " * len(m.group(0)), text))


def _plain_math(match: re.Match[str]) -> str:
    math = LATEX_GROUPED.sub(_grouped, match.group(0))
    math = LATEX_PERCENT.sub("% ", math)
    math = LATEX_CURRENCY.sub(_currency, math)
    return LATEX_MARKUP.sub(lambda m: " " * len(m.group(0)), math)


def _currency(match: re.Match[str]) -> str:
    """The sign a currency command writes, where it ends (so the amount follows it)."""
    sign = CURRENCY_SIGNS[re.sub(r"(?:[ \t]|\\,)+$", "", match.group(0)[1:])]
    return " " * (len(match.group(0)) - 1) + sign


def _grouped(match: re.Match[str]) -> str:
    digits = re.sub(r"\{,\}|\\,", ",", match.group(0))
    return digits + " " * (len(match.group(0)) - len(digits))


def struck(text: str) -> Callable[[int], bool]:
    """Whether a position of `text` lies in a stretch the answer strikes through."""
    spans = [m.span() for m in STRUCK.finditer(text)]
    starts = [a for a, _ in spans]

    def inside(position: int) -> bool:
        k = bisect.bisect_right(starts, position) - 1
        return k >= 0 and position < spans[k][1]

    return inside
