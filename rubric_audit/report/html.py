"""report.html and the site's pages: documents as self-contained pages with inline SVG plots.

Plots are drawn with matplotlib (Agg) and embedded as SVG with a fixed hash salt and no date, so
the same audit renders the same bytes. No script, font or stylesheet is fetched from anywhere:
each page carries our style and our one small script (tables sorted by a column and filtered by
words), and a content security policy that runs that script, by its hash, and nothing else.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import warnings

from rubric_audit.core.model import Finding, Task
from rubric_audit.core.text import html_text, plot_label
from rubric_audit.core.words import plural
from rubric_audit.report.document import (
    FROM_CHECKS,
    Block,
    Bullets,
    Cell,
    Folded,
    Plot,
    Preformatted,
    Row,
    Section,
    Table,
    Text,
    build_document,
)
from rubric_audit.report.summary import AuditSummary

STYLE = """
body { font-family: system-ui, -apple-system, sans-serif; margin: 1.2rem auto; max-width: 80rem;
       padding: 0 1rem; color: #1d2430; line-height: 1.45; }
h1 { font-size: 1.5rem; margin: 0 0 0.5rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
p, li, td, th { overflow-wrap: break-word; }
table { border-collapse: collapse; margin: 0.6rem 0 1rem; font-size: 0.88rem; display: block;
        max-width: 100%; overflow-x: auto; }
th, td { border: 1px solid #d6dae0; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f3f5f8; }
code { background: #f3f5f8; padding: 0 0.2rem; border-radius: 3px; }
figure { margin: 0.6rem 0; } figcaption { font-size: 0.85rem; color: #555; }
figure svg { max-width: 100%; height: auto; }
.row { display: flex; flex-wrap: wrap; gap: 1rem; } .row figure { flex: 1 1 28rem; min-width: 0; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f7f8fa; padding: 0.5rem;
      border: 1px solid #e2e5ea; font-size: 0.85rem; max-height: 40rem; overflow-y: auto; }
details { margin: 0.2rem 0; } summary { cursor: pointer; overflow-wrap: anywhere; }
nav { font-size: 0.9rem; margin-bottom: 0.6rem; }
.filter { margin-bottom: 0.2rem; font-size: 0.88rem; } .filter input { width: 18rem; }
table.sortable th { cursor: pointer; }
table.sortable th[aria-sort=ascending]::after { content: " ▲"; }
table.sortable th[aria-sort=descending]::after { content: " ▼"; }
"""
# Our one script: a click (or Enter) on a sortable table's header sorts its rows by that column,
# numbers as numbers, again the other way; typing in a filter box keeps the rows holding every
# word. One listener per kind on the document, so a page of 1,000 rows costs nothing at load.
SCRIPT = r"""(() => {
"use strict";
const number = (text) => {
  const found = /^[-+\u2212]?[\d,]*\.?\d+/.exec(text);
  return found ? parseFloat(found[0].replace(/,/g, "").replace("\u2212", "-")) : NaN;
};
const compare = (a, b) => {
  const x = number(a), y = number(b);
  if (!isNaN(x) && !isNaN(y) && x !== y) return x - y;
  if (isNaN(x) !== isNaN(y)) return isNaN(x) ? 1 : -1;
  return a.localeCompare(b, undefined, {numeric: true, sensitivity: "base"});
};
const key = (row, column) => {
  const cell = row.cells[column];
  return cell ? (cell.dataset.sort ?? cell.textContent.trim()) : "";
};
const sort = (header) => {
  const body = header.closest("table").tBodies[0], column = header.cellIndex;
  const ascending = header.getAttribute("aria-sort") !== "ascending";
  for (const other of header.parentElement.cells) other.removeAttribute("aria-sort");
  header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  const keyed = Array.from(body.rows, (row) => [key(row, column), row]);
  keyed.sort((a, b) => ascending ? compare(a[0], b[0]) : compare(b[0], a[0]));
  const sorted = document.createDocumentFragment();
  for (const [, row] of keyed) sorted.append(row);
  body.append(sorted);
};
const header = (event) => event.target instanceof Element
  ? event.target.closest("table.sortable th") : null;
document.addEventListener("click", (event) => {
  const found = header(event);
  if (found) sort(found);
});
document.addEventListener("keydown", (event) => {
  const found = header(event);
  if (found && (event.key === "Enter" || event.key === " ")) {
    event.preventDefault();
    sort(found);
  }
});
document.addEventListener("input", (event) => {
  const box = event.target instanceof Element ? event.target.closest("input[data-filter]") : null;
  if (!box) return;
  const rows = document.getElementById(box.dataset.filter + "-table").tBodies[0].rows;
  const words = box.value.toLocaleLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  for (const row of rows) {
    const text = row.textContent.toLocaleLowerCase();
    row.hidden = !words.every((word) => text.includes(word));
    shown += row.hidden ? 0 : 1;
  }
  document.getElementById(box.dataset.filter + "-count").textContent =
    `${shown} of ${rows.length} rows`;
});
})();"""
SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
POLICY = (f"default-src 'none'; script-src 'sha256-{SCRIPT_HASH}'; style-src 'unsafe-inline'; "
          "img-src data:; base-uri 'none'; form-action 'none'")
GROUP_COLOURS = {"as graded": "#6b7280", FROM_CHECKS: "#2b6cb0", "after review": "#2f855a",
                 "unreviewed": "#b7791f", "": "#2b6cb0"}
FONT_SIZE = 10  # points, at the figure's own width: about the page's body size once placed


CODE_SPAN = re.compile(r"`([^`]+)`")
STRONG = re.compile(r"\*\*([^*]+)\*\*")
EMPHASIS = re.compile(r"(?<![\w*])\*([^*]+)\*(?![\w*])")


def _styled(escaped: str) -> str:
    """Our own `code` spans, **strong** and *emphasis* in escaped text, as HTML."""
    if "`" in escaped:
        escaped = CODE_SPAN.sub(lambda found: f"<code>{found.group(1)}</code>", escaped)
    if "*" not in escaped:
        return escaped
    escaped = STRONG.sub(lambda found: f"<strong>{found.group(1)}</strong>", escaped)
    return EMPHASIS.sub(lambda found: f"<em>{found.group(1)}</em>", escaped)


def _inline(text: str) -> str:
    """A document's text as HTML: escaped, our own markup styled (a stranger's shown as
    written)."""
    return html_text(text, _styled)


def _svg(plot: Plot, width: float = 8.0) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator, PercentFormatter

    matplotlib.rcParams["svg.hashsalt"] = "rubric-audit"
    matplotlib.rcParams["svg.fonttype"] = "none"
    matplotlib.rcParams["font.size"] = FONT_SIZE
    labels = list(plot.series)
    height = max(1.6, 0.32 * len(labels) + (1.2 if plot.legend and plot.groups else 0.9))
    fig, ax = plt.subplots(figsize=(width, height))
    values = [plot.series[k][0] for k in labels]
    positions = list(range(len(labels)))
    if plot.kind == "intervals":
        for group in dict.fromkeys(plot.groups.get(k, "") for k in labels):
            mine = [i for i, k in enumerate(labels) if plot.groups.get(k, "") == group]
            ax.errorbar([values[i] for i in mine], mine,
                        xerr=[[values[i] - plot.series[labels[i]][1] for i in mine],
                              [plot.series[labels[i]][2] - values[i] for i in mine]],
                        fmt="o", color=GROUP_COLOURS.get(group, "#2b6cb0"), capsize=3,
                        label=plot_label(group) if group else None)
        ax.set_xlim(0, 1)
        ax.xaxis.set_major_formatter(PercentFormatter(xmax=1))
        ax.set_xlabel(plot.xlabel)
        if plot.legend and len(set(plot.groups.values())) > 1:
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=3,
                      fontsize=FONT_SIZE - 1, frameon=False)
    else:
        ax.barh(positions, values, color="#2b6cb0")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("tasks")
    ax.set_yticks(positions, [plot_label(label) for label in labels])
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(fig)
    svg = buffer.getvalue()
    return svg[svg.index("<svg"):]


def _figure(plot: Plot, width: float = 8.0) -> str:
    """The plot as a figure; one that cannot be drawn says so in its place and why, so the rest
    of the report is still written (its numbers are in the tables and text beside it)."""
    try:
        # matplotlib warns of labels too long to lay out tightly and of glyphs its font lacks
        # (the SVG keeps text as text, which the browser draws): the figure is drawn all the same
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            drawing = _svg(plot, width)
    except Exception as exc:  # any drawing failure: the report must not depend on one figure
        import matplotlib.pyplot as plt

        plt.close("all")
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        drawing = f"<p><em>{html_text(f'This figure could not be drawn ({reason}).')}</em></p>"
    return f"<figure>{drawing}<figcaption>{_inline(plot.title)}</figcaption></figure>"


SAFE_HREF = re.compile(r"(?:(?:\.\./)*(?:[\w-]+/)*[\w.-]+\.html)?(?:#[\w-]+)?", re.ASCII)


def _href(root: str, href: str) -> str:
    """Our own link, relative to the report's folder, made relative to the page (`root`: "" for
    report.html, "../../" for a task's page). Only a relative path of plain names is a link: a
    scheme, an absolute path or a character outside [A-Za-z0-9_.-/#] is refused (a bug)."""
    if not href or not SAFE_HREF.fullmatch(href):
        raise ValueError(f"not a link of the report's own: {href!r}")
    return html_text(href if href.startswith("#") else root + href)


def _cell(cell: str | Cell, tag: str, root: str) -> str:
    if isinstance(cell, str):
        return f"<{tag}>{_inline(cell)}</{tag}>"
    sort = f' data-sort="{html_text(cell.sort)}"' if cell.sort is not None else ""
    text = _inline(cell.text)
    if cell.href is not None:
        text = f'<a href="{_href(root, cell.href)}">{text}</a>'
    return f"<{tag}{sort}>{text}</{tag}>"


def _table(table: Table, root: str) -> str:
    rows = "".join("<tr>" + "".join(_cell(c, "td", root) for c in row) + "</tr>"
                   for row in table.rows)
    if not table.name:
        head = "".join(_cell(h, "th", root) for h in table.header)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    name = html_text(table.name)
    head = "".join(f'<th tabindex="0" title="sort by this column">{_inline(h)}</th>'
                   for h in table.header)
    return (f'<p class="filter"><label>Filter rows <input type="search" data-filter="{name}" '
            f'placeholder="words in any column"></label> <output id="{name}-count">'
            f"{plural(len(table.rows), 'row')}</output></p>"
            f'<table id="{name}-table" class="sortable"><thead><tr>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table>")


def _blocks(blocks: list[Block], root: str) -> list[str]:
    body: list[str] = []
    for block in blocks:
        if isinstance(block, Text):
            body.append(f"<p>{_inline(block.text)}</p>")
        elif isinstance(block, Bullets):
            body.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in block.items)
                        + "</ul>")
        elif isinstance(block, Table):
            body.append(_table(block, root))
        elif isinstance(block, Plot) and block.series:
            body.append(_figure(block))
        elif isinstance(block, Row):
            body.append('<div class="row">' + "".join(
                _figure(p, 6.0) for p in block.plots if p.series) + "</div>")
        elif isinstance(block, Preformatted):
            body.append(f"<pre>{html_text(block.text)}</pre>")
        elif isinstance(block, Folded):
            body.append(f"<details><summary>{_inline(block.summary)}</summary>"
                        + "".join(_blocks(block.blocks, root)) + "</details>")
    return body


def render_page(title: str, sections: list[Section], root: str = "",
                nav: list[tuple[str, str]] | None = None) -> str:
    """One self-contained page: `sections` (the first one's title as the page's heading), `nav`
    (label, our own link) above it, our style and our one script inline, and a content security
    policy that lets no other script, style sheet, font or request in."""
    body: list[str] = []
    if nav:
        body.append("<nav>" + " · ".join(f'<a href="{_href(root, href)}">{html_text(label)}</a>'
                                         for label, href in nav) + "</nav>")
    for number, section in enumerate(sections):
        tag = "h1" if number == 0 else "h2"
        anchor = f' id="{html_text(section.anchor)}"' if section.anchor else ""
        body.append(f"<{tag}{anchor}>{_inline(section.title)}</{tag}>")
        body += _blocks(section.blocks, root)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{POLICY}\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{html_text(title)}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(body) + f"\n<script>{SCRIPT}</script>\n</body></html>\n")


def render_html(summary: AuditSummary, findings: list[Finding], tasks: dict[str, Task]) -> str:
    """report.html: the report's document as one page."""
    return render_page(f"rubric-audit: {summary.benchmark or 'recorded runs'}",
                       build_document(summary, findings, tasks))
