"""report.md: the report document rendered as markdown (plots become their data tables)."""

from __future__ import annotations

from rubric_audit.core.model import Finding, Task
from rubric_audit.core.text import markdown
from rubric_audit.report.document import (
    Bullets,
    Cell,
    Plot,
    Row,
    Section,
    Table,
    Text,
    build_document,
)
from rubric_audit.report.summary import AuditSummary


def _cell(cell: str | Cell) -> str:
    """A table cell's text (markdown has no script to sort by, and links to the site's pages
    are for report.html), on one line."""
    return markdown(cell if isinstance(cell, str) else cell.text).replace("\n", " ")


def render_markdown(summary: AuditSummary, findings: list[Finding], tasks: dict[str, Task]) -> str:
    return render_sections(build_document(summary, findings, tasks))


def render_sections(sections: list[Section]) -> str:
    """Sections as markdown: the first a title, the others its sections."""
    lines: list[str] = []
    for number, section in enumerate(sections):
        lines += [f"{'#' if number == 0 else '##'} {_cell(section.title)}", ""]
        for block in section.blocks:
            if isinstance(block, Text):
                lines += [markdown(block.text), ""]
            elif isinstance(block, Bullets):
                lines += [f"- {_cell(item)}" for item in block.items] + [""]
            elif isinstance(block, Table):
                lines += ["| " + " | ".join(_cell(h) for h in block.header) + " |",
                          "|" + "---|" * len(block.header)]
                lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in block.rows]
                lines.append("")
            elif isinstance(block, Plot | Row):
                continue  # markdown shows the same numbers in the text or table beside it
    return "\n".join(lines).rstrip() + "\n" if lines else ""
