"""report.html: the report document as one self-contained page with inline SVG plots.

Plots are drawn with matplotlib (Agg) and embedded as SVG with a fixed hash salt and no date, so
the same audit renders the same bytes. No script, font or stylesheet is fetched from anywhere.
"""

from __future__ import annotations

import html
import io
import re

from rubric_audit.model import Finding
from rubric_audit.report.document import Bullets, Plot, Table, Text, build_document
from rubric_audit.report.summary import AuditSummary

STYLE = """
body { font-family: system-ui, -apple-system, sans-serif; margin: 2rem auto; max-width: 72rem;
       padding: 0 1rem; color: #1d2430; line-height: 1.45; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.6rem 0 1rem; font-size: 0.88rem; }
th, td { border: 1px solid #d6dae0; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f3f5f8; }
code { background: #f3f5f8; padding: 0 0.2rem; border-radius: 3px; }
figure { margin: 1rem 0; } figcaption { font-size: 0.85rem; color: #555; }
"""


def _inline(text: str) -> str:
    """Escape text, then show `code` spans."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def _svg(plot: Plot) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "rubric-audit"
    matplotlib.rcParams["svg.fonttype"] = "none"
    labels = list(plot.series)
    height = max(1.8, 0.28 * len(labels) + 0.8)
    fig, ax = plt.subplots(figsize=(8, height))
    values = [plot.series[k][0] for k in labels]
    positions = range(len(labels))
    if plot.kind == "intervals":
        low = [v - plot.series[k][1] for k, v in zip(labels, values, strict=True)]
        high = [plot.series[k][2] - v for k, v in zip(labels, values, strict=True)]
        ax.errorbar(values, positions, xerr=[low, high], fmt="o", color="#2b6cb0", capsize=3)
        ax.set_xlim(0, 1)
        ax.set_xlabel("pass@1")
    else:
        ax.barh(positions, values, color="#2b6cb0")
        ax.set_xlabel("tasks")
    ax.set_yticks(list(positions), labels, fontsize=7)
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(fig)
    svg = buffer.getvalue()
    return svg[svg.index("<svg"):]


def render_html(summary: AuditSummary, findings: list[Finding]) -> str:
    body: list[str] = []
    for number, section in enumerate(build_document(summary, findings)):
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
                body.append(f"<figure>{_svg(block)}<figcaption>{_inline(block.title)}"
                            f"</figcaption></figure>")
    title = html.escape(f"rubric-audit: {summary.benchmark or 'recorded runs'}")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{title}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
