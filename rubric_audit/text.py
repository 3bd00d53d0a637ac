"""Text from strangers made safe for each place it is written: the one place that does it.

Task names, prompts, answers, rationales, file names and notes come from strangers. Shown in a
terminal they must not move the cursor, set a title or write the clipboard; in a CSV opened in a
spreadsheet they must not run as a formula; in a plot label they must not be parsed as mathtext.
Each sink has one function here, and every writer goes through it: the text is shown as it is,
with what would act made visible instead (an escape becomes the four characters `\\x1b`).
"""

from __future__ import annotations

import html
import re

REASON_LIMIT = 200
# C0 controls but tab and line feed, DEL and C1 controls, bidi embeddings, overrides and
# isolates (they reorder what a reader sees), and lone surrogates (unencodable).
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                    "\u2066-\u2069\ud800-\udfff]")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every control, bidi and surrogate character written as its escape, so a
    terminal or window shows it instead of acting on it (linear: one pass of one class)."""
    return UNSAFE.sub(_escape, text)


def console(text: str) -> str:
    """Text for a Rich console (the CLI's output and errors, piped or on a terminal): controls
    made visible, then Rich markup escaped, so `[link=...]` or `[/]` in a name is shown as it is
    (never a link, a style, or a crash)."""
    from rich.markup import escape

    return escape(visible(text))


def console_line(text: str) -> str:
    """Text for a console line that must stay one (an error line, a source's summary): as
    `console`, with line breaks written as `\\n` too, so a name holding one cannot start a line
    of its own (a second "error:" line, a summary of a source that was never read)."""
    return console(text.replace("\n", "\\n"))


def markdown(text: str) -> str:
    """Text for report.md, whose renderers take raw HTML and links: `visible`, then `&`, `<` and
    `>` as entities (no tag, comment or autolink of a stranger's survives: an `<img onerror>` in
    a task name ran script) and every inline link or image broken at its `](` (`[x](javascript:)`
    is shown, not followed). The report's own emphasis and code spans are left as written."""
    return html.escape(visible(text), quote=False).replace("](", "]\\(")


def html_text(text: str) -> str:
    """Text for report.html: `visible`, then escaped for HTML text and attributes."""
    return html.escape(visible(text))


def one_line(text: str, limit: int = REASON_LIMIT) -> str:
    """`text` as one line of at most `limit` characters (plus " ..." where cut): whitespace and
    line breaks collapse to single spaces, and a cut falls at the last word that fits."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + " ..."


def first_line(text: str, limit: int = REASON_LIMIT) -> str:
    """The first non-empty line of `text`, made `one_line` (a provider's error can quote the
    whole prompt after its first line)."""
    return one_line(next((line for line in text.splitlines() if line.strip()), ""), limit)


def csv_cell(value: object) -> object:
    """A CSV cell that a spreadsheet shows as text and a terminal prints as text: controls made
    visible, and a string that would start a formula given a leading apostrophe (OWASP's
    advice); other values are unchanged."""
    if not isinstance(value, str):
        return value
    value = visible(value)
    return "'" + value if value.startswith(FORMULA_START) else value


def plot_label(text: str) -> str:
    """A matplotlib label shown as written: `$` would open mathtext (a parse error fails the
    drawing), controls are made visible."""
    return visible(text).replace("$", r"\$")
