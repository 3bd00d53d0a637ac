"""Text from strangers made safe for each place it is written: the one place that does it.

Task names, prompts, answers, rationales, file names and notes come from strangers. Shown in a
terminal they must not move the cursor, set a title or write the clipboard; in a CSV opened in a
spreadsheet they must not run as a formula; in a plot label they must not be parsed as mathtext.
Each sink has one function here, and every writer goes through it: the text is shown as it is,
with what would act made visible instead (an escape becomes the four characters `\\x1b`).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable

REASON_LIMIT = 200
# C0 controls but tab and line feed, DEL and C1 controls, bidi embeddings, overrides and
# isolates (they reorder what a reader sees), zero-width characters and the byte-order mark (they
# hide a difference: "pay" and "pa\u200by" look alike), and lone surrogates (unencodable).
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e"
                    "\u2060\u2066-\u2069\ufeff\ud800-\udfff]")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# Private-use marks around a stranger's text inside a report document (`stranger`), and around
# the number of one held out of our own styling while report.html styles the rest (`html_text`).
STRANGER_OPEN, STRANGER_CLOSE, HOLD_OPEN, HOLD_CLOSE = "\ue000", "\ue001", "\ue002", "\ue003"
STRANGER_PART = re.compile("\ue000([^\ue000\ue001]*)\ue001")
HELD = re.compile("\ue002([0-9]+)\ue003")
# In a stranger's text: what markdown reads as syntax anywhere (escapes, code, emphasis, links,
# HTML and entities, table cells, strikethrough, math), "_" where it could open or close
# emphasis (anywhere but between letters or digits), and what opens a block at the start of a
# line (a heading, a quote, a list item: "-", "+", "1." or "1)").
MARKDOWN_SYNTAX = re.compile(r"[\\`*\[\]<&|~$]|(?<![^\W_])_|_(?![^\W_])|^[#>+=-]")
LIST_NUMBER = re.compile(r"^([0-9]{1,9})([.)])")


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


def json_document(value: object) -> str:
    """JSON for stdout (`--json`): every string exact once parsed, each character that would act
    on a terminal or not encode (controls, bidi, zero-width, lone surrogates) as its JSON escape."""
    return UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}",
                      json.dumps(value, ensure_ascii=False, indent=2))


def stranger(text: str) -> str:
    """`text`, a stranger's, marked inside a report document's own markup (report/document.py
    writes `code`, *emphasis* and **strong** of its own around names), so that each renderer
    (`markdown`, `html_text`) shows it as written and renders only ours; marks the text itself
    holds become escapes first."""
    return (STRANGER_OPEN + text.replace(STRANGER_OPEN, "\\ue000").replace(STRANGER_CLOSE, "\\ue001")
            + STRANGER_CLOSE)


def _stranger_markdown(text: str) -> str:
    """A stranger's text as markdown that renders as written: `visible`, each run of spaces,
    tabs and line breaks one space (a line of its own could start a heading, a list or a link
    definition, and a renderer shows one space anyway), and every character markdown would read
    as syntax backslash-escaped."""
    escaped = MARKDOWN_SYNTAX.sub(lambda found: "\\" + found.group(),
                                  re.sub(r"[ \t\n]+", " ", visible(text)))
    return LIST_NUMBER.sub(r"\1\\\2", escaped)


def markdown(text: str) -> str:
    """Text for report.md, whose renderers take raw HTML and links. A stranger's parts
    (`stranger`) render as written (`_stranger_markdown`: an `<img onerror>` in a task name ran
    script, a trailing backslash in a name escaped the table's next `|`, a line break in a
    variant's name started a heading, `*x*` was emphasis). Our own parts keep their code spans
    and emphasis, with `visible`, then `&`, `<` and `>` as entities, `|` escaped and every
    inline link or image broken at its `](`, should a stranger's text reach them unmarked."""
    def own(part: str) -> str:
        return html.escape(visible(part), quote=False).replace("](", "]\\(").replace("|", "\\|")

    out, at = [], 0
    for found in STRANGER_PART.finditer(text):
        out += [own(text[at:found.start()]), _stranger_markdown(found.group(1))]
        at = found.end()
    return "".join([*out, own(text[at:])])


def html_text(text: str, style: Callable[[str], str] | None = None) -> str:
    """Text for report.html: `visible`, then escaped for HTML text and attributes. `style`, our
    own inline markup (applied to the escaped text), styles our parts only: a stranger's
    (`stranger`) are held out of it and put back escaped, so `*x*` or a backtick in a name is
    shown as written."""
    if STRANGER_OPEN not in text and HOLD_OPEN not in text and HOLD_CLOSE not in text:
        escaped = html.escape(visible(text))  # no stranger part: nothing to hold out
        return style(escaped) if style else escaped
    held: list[str] = []

    def hold(found: re.Match[str]) -> str:
        held.append(found.group(1))
        return f"{HOLD_OPEN}{len(held) - 1}{HOLD_CLOSE}"

    unheld = text.replace(HOLD_OPEN, "\\ue002").replace(HOLD_CLOSE, "\\ue003")
    escaped = html.escape(visible(STRANGER_PART.sub(hold, unheld)))
    return HELD.sub(lambda found: html.escape(visible(held[int(found.group(1))])),
                    style(escaped) if style else escaped)


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


TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n",
                "\f": "\\f", "\r": "\\r"}
TOML_UNSAFE = re.compile(f"[\"\\\\\\t\\n{UNSAFE.pattern[1:-1]}]")


def toml_string(text: str) -> str:
    """A TOML basic string (quotes included) holding `text`, for a file a person edits: what TOML
    must escape escaped, and every character `visible` would show as an escape (controls, bidi,
    zero-width) written as `\\uXXXX`, so an editor shows the text as written and a TOML reader
    reads it back exactly. Text with line breaks is a multi-line string, one line per line."""
    def escape(found: re.Match[str]) -> str:
        char = found.group()
        return TOML_ESCAPES.get(char) or f"\\u{ord(char):04X}"

    if "\n" not in text:
        return f'"{TOML_UNSAFE.sub(escape, text)}"'
    lines = [TOML_UNSAFE.sub(escape, line) for line in text.split("\n")]
    return '"""\n' + "\n".join(lines) + '"""'


def plot_label(text: str) -> str:
    """A matplotlib label shown as written: `$` would open mathtext (a parse error fails the
    drawing), controls are made visible."""
    return visible(text).replace("$", r"\$")
