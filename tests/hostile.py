"""What a stranger can put in a name, a prompt, an answer, a rationale or a note: one list of
hostile payloads, fed whole through every sink (tests/test_hostile_sinks.py).

Each payload tries one thing an attacker with a benchmark or runs of their own making would try on
a terminal, the review app, a markdown or HTML viewer, a spreadsheet, a plot or the store. Its
`seen` is plain text of it that every sink must still show: hostile text is shown as it is, with
what would act made visible, never dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Payload:
    name: str
    text: str
    seen: str  # plain text of `text` that every sink that shows it must show


PAYLOADS: tuple[Payload, ...] = (
    Payload("osc_title", "\x1b]0;pwned title\x07 window", "pwned title"),
    Payload("osc52_clipboard", "\x1b]52;c;cm0gLXJmIH4K\x07 clipboard", "cm0gLXJmIH4K"),
    Payload("csi_clear_screen", "\x1b[2J\x1b[H\x1b[31mredscreen\x1b[0m", "redscreen"),
    Payload("c1_controls", "\x9b2J c1csi \x9d0;c1title\x9c \x85nextline \x90dcs\x9c", "c1csi"),
    Payload("bidi_overrides", "invoice\u202efdp.exe\u202c \u2066isolate\u2069 \u2067rtl\u2069 "
            "\u2068first\u2069 \u202dltr\u202c", "fdp.exe"),
    Payload("zero_width", "zero\u200bwidth\u200c\u200d\ufeff joined", "joined"),
    Payload("nul", "nul\x00byte", "byte"),
    Payload("carriage_return", "harmless\rovertyped", "overtyped"),
    Payload("rich_markup", "[bold red]loud[/] [link=file:///etc/passwd]passwdlink[/link]",
            "passwdlink"),
    Payload("unbalanced_markup", "[/] closes [/bold] nothing [", "closes"),
    Payload("trailing_backslash", "ends in a backslash \\", "backslash"),
    Payload("textual_quit", "[@click=app.quit]quitnow", "quitnow"),
    Payload("textual_screenshot", "[@click=app.screenshot('hostile-shot.svg','.')]shotnow",
            "shotnow"),
    Payload("textual_label", "[@click=app.label(2)]labeltwo [b]bold[/b]", "labeltwo"),
    Payload("html_img_onerror", '<img src=x onerror="document.title=\'PWNED\'">imgerror',
            "imgerror"),
    Payload("html_script", "<script>document.body.insertAdjacentHTML('beforeend',"
            "'<b id=pwned>x</b>')</script>scripted", "scripted"),
    Payload("html_details", "<details open><summary>summarytext</summary>hidden</details>",
            "summarytext"),
    Payload("html_entities", "&lt;b&gt; &amp;amp; &#27; entitytext", "entitytext"),
    Payload("markdown_javascript_link", "[jsclick](javascript:alert(1)) <javascript:alert(2)>",
            "jsclick"),
    Payload("markdown_file_link", "[fileopen](file:///etc/passwd) ![fileimg](file:///etc/hosts)"
            " <file:///etc/shadow>", "fileopen"),
    Payload("markdown_reference", "[refclick]\n\n[refclick]: javascript:alert(3)", "refclick"),
    Payload("markdown_blocks", "# headline\n> quoted\n    indented code\n- item\n---\n"
            "*emph* **strong** `code span` ~~gone~~ \\*kept\\*", "headline"),
    Payload("mathtext", r"$\frac{1}{0}$ costs $100 and $\undefined{x}$", "costs"),
    Payload("formula_equals", '=HYPERLINK("http://evil.example","formulaeq")', "formulaeq"),
    Payload("formula_plus", "+1+cmd|' /C calc'!A0 formulaplus", "formulaplus"),
    Payload("formula_minus", "-2+3 formulaminus", "formulaminus"),
    Payload("formula_at", "@SUM(A1:A9) formulaat", "formulaat"),
    Payload("formula_tab", "\t=1+1 formulatab", "formulatab"),
    Payload("formula_cr", "\r=1+1 formulacr", "formulacr"),
    Payload("lone_surrogates", "half \ud800 pair \udfff surrogate", "surrogate"),
    Payload("huge_int", "9" * 5000, "9" * 40),
    Payload("huge_float", "1e999999 and -1e400 of NOK 1e308000 hugefloat", "hugefloat"),
    Payload("sql_and_fts", "'; DROP TABLE reviews; -- \"NEAR( * OR ftsquote", "ftsquote"),
    Payload("long_name", "long" + "g" * 9_996, "long" + "g" * 36),
)

BY_NAME = {p.name: p for p in PAYLOADS}
STORABLE = tuple(p for p in PAYLOADS if not re.search("[\ud800-\udfff]", p.text))
"""The payloads UTF-8 can hold: a lone surrogate is refused at the door (a file holding one is
unusable input, one line, exit 2), so it never reaches a store, a report or a screen."""

# What a terminal or a window acts on, written out here apart from rubric_audit.core.text so the tests
# can fail: C0 controls but tab and line feed, DEL, C1 controls, bidi embeddings, overrides,
# isolates and marks, and lone surrogates.
ACTING = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                    "\u2066-\u2069\ud800-\udfff]")
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def acting(text: str) -> list[str]:
    """Every character of `text` a terminal or window would act on, as its code point."""
    return [f"U+{ord(c):04X}" for c in ACTING.findall(text)]


def file_name(payload: Payload) -> str | None:
    """The payload as one file or folder name, where one can hold it (no NUL, no separator,
    UTF-8, under 200 bytes), else None."""
    if "\x00" in payload.text or "/" in payload.text or payload not in STORABLE \
            or len(payload.text.encode()) > 200:
        return None
    return payload.text
