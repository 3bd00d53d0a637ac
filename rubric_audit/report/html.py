"""report.html: the report document as one self-contained page with inline SVG plots.

Plots are drawn with matplotlib (Agg) and embedded as SVG with a fixed hash salt and no date, so
the same audit renders the same bytes. No script, font or stylesheet is fetched from anywhere.
"""

from __future__ import annotations

import io
import re
import warnings

from rubric_audit.core.model import Finding, Task
from rubric_audit.core.text import html_text, plot_label
from rubric_audit.report.document import Bullets, Plot, Row, Table, Text, build_document
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
"""
GROUP_COLOURS = {"as graded": "#6b7280", "automatic": "#2b6cb0", "after review": "#2f855a",
                 "unreviewed": "#b7791f", "": "#2b6cb0"}
FONT_SIZE = 10  # points, at the figure's own width: about the page's body size once placed


def _styled(escaped: str) -> str:
    """Our own `code` spans, **strong** and *emphasis* in escaped text, as HTML."""
    escaped = re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)
    escaped = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", escaped)
    return re.sub(r"(?<![\w*])\*([^*]+)\*(?![\w*])", r"<em>\1</em>", escaped)


def _inline(text: str) -> str:
    """A document's text as HTML: escaped, our own markup styled (a stranger's shown as
    written)."""
    return html_text(text, _styled)


def _svg(plot: Plot, width: float = 8.0) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
        ax.set_xlabel(plot.xlabel)
        if plot.legend and len(set(plot.groups.values())) > 1:
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=3,
                      fontsize=FONT_SIZE - 1, frameon=False)
    else:
        ax.barh(positions, values, color="#2b6cb0")
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


def render_html(summary: AuditSummary, findings: list[Finding], tasks: dict[str, Task]) -> str:
    body: list[str] = []
    for number, section in enumerate(build_document(summary, findings, tasks)):
        tag = "h1" if number == 0 else "h2"
        body.append(f"<{tag}>{_inline(section.title)}</{tag}>")
        for block in section.blocks:
            if isinstance(block, Text):
                body.append(f"<p>{_inline(block.text)}</p>")
            elif isinstance(block, Bullets):
                body.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in block.items)
                            + "</ul>")
            elif isinstance(block, Table):
                head = "".join(f"<th>{_inline(h)}</th>" for h in block.header)
                rows = "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>"
                               for row in block.rows)
                body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
            elif isinstance(block, Plot) and block.series:
                body.append(_figure(block))
            elif isinstance(block, Row):
                body.append('<div class="row">' + "".join(
                    _figure(p, 6.0) for p in block.plots if p.series) + "</div>")
    title = html_text(f"rubric-audit: {summary.benchmark or 'recorded runs'}")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{title}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
