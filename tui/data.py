"""What the review app draws of a task's world, without any Textual: files (a workbook as a grid
per sheet), mail, the calendar and chat, as document blocks. The session itself (queues,
evidence, labels) is the core's `rubric_audit.review.session`.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from rubric_audit.core.errors import InputError
from rubric_audit.core.model import Benchmark, Task
from rubric_audit.core.text import visible
from rubric_audit.core.workbook import Cell
from rubric_audit.review.session import ReviewData
from tui.document import Block, Literal, heading


def file_label(path: str) -> str:
    """ "file Nordlys_Model.xlsx · Project_Nordlys/": the name first, so a narrow list shows it."""
    folder, _, name = path.rpartition("/")
    return f"file {name} · {folder}/" if folder else f"file {name}"


def sheet_grid(sheet: str, cells: list[Cell]) -> list[Block]:
    """A sheet as a grid (rows by columns, values as computed), then its formulas by cell; every
    cell is Text, shown as written and never cut (the grid is as wide as its cells)."""
    from openpyxl.utils.cell import column_index_from_string, coordinate_from_string
    from rich import box
    from rich.table import Table

    placed = {coordinate_from_string(c.coordinate): c for c in cells}
    columns = sorted({col for col, _ in placed}, key=column_index_from_string)
    rows = sorted({row for _, row in placed})

    def shown(cell: Cell | None) -> Text:
        if cell is None or cell.value is None:
            return Text("")
        return Text(visible(f"{cell.value:,.6g}" if isinstance(cell.value, float)
                            else str(cell.value)), no_wrap=True)

    grid_rows = [[Text(str(r), "bold"), *(shown(placed.get((col, r))) for col in columns)]
                 for r in rows]
    headers = ["", *columns]
    widths = [max([len(header), *(row[i].cell_len for row in grid_rows)])
              for i, header in enumerate(headers)]  # each column as wide as its widest cell
    grid = Table(box=box.SQUARE, width=sum(widths) + 3 * len(widths) + 1)  # padding, borders
    for header, width in zip(headers, widths, strict=True):
        grid.add_column(header, no_wrap=True, min_width=width)
    for row in grid_rows:
        grid.add_row(*row)
    formulas = "\n".join(f"{c.coordinate} {c.formula}" for c in cells if c.formula)
    listed: list[Block] = [Text("Formulas:", "italic"), Literal(formulas)] if formulas else []
    return [heading(sheet), grid, *listed, Text("")]


def benchmark_of(data: ReviewData) -> Benchmark | None:
    """The benchmark the audit read, rebuilt from the store, when its folder is here (else
    None). Read in the app's thread: the store's connection is that thread's."""
    name, root = data.store.benchmark_name(), data.store.benchmark_root()
    if name is None or root is None or not Path(root).is_dir():
        return None
    return Benchmark(name=name, root=root, tasks=list(data.tasks.values()),
                     worlds=data.store.worlds())


def world_items(bench: Benchmark | None, task: Task) -> list[tuple[str, list[Block]]]:
    """The task's world as (label, blocks) items: each file (xlsx as a cell table per sheet),
    each mail, the calendar, each chat space. Empty without the benchmark's folder. Reads files
    only (no store), so it can run in a worker thread."""
    from rubric_audit.core.workbook import WorkbookError, workbook_cells
    from rubric_audit.load.world import load_task_world, task_tree

    if bench is None:
        return []
    try:
        world = load_task_world(bench, task)
        tree = task_tree(bench, task)
    except InputError as exc:
        return [("error", [Text(visible(f"The world cannot be read: {exc}"))])]
    items: list[tuple[str, list[Block]]] = []
    for f in world.files:
        if f.path.endswith((".xlsx", ".xlsm")):
            try:
                cells = workbook_cells(tree[f"filesystem/{f.path}"])
            except WorkbookError as exc:
                items.append((file_label(f.path), [Text(visible(f"Cannot read: {exc}"))]))
                continue
            items.append((file_label(f.path), [
                block for sheet in dict.fromkeys(c.sheet for c in cells)
                for block in sheet_grid(sheet, [c for c in cells if c.sheet == sheet])]))
        else:
            items.append((file_label(f.path), [Literal(f.text) if f.text is not None
                                               else Text("(binary file)", "italic")]))
    for m in world.mail:
        items.append((f"mail {m.subject}", [
            Text(visible(m.subject), "bold"), Text(visible(
                f"{m.date} · from {m.sender} · to {', '.join(m.to)} · {m.message_id}"), "dim"),
            Text(""), Literal(m.body)]))
    if world.events:
        items.append(("calendar", [Text.assemble(
            visible(f"- {e.start[:16]} "), (visible(e.summary), "bold"), visible(
                f" @ {e.location} ({', '.join(e.attendees)})"
                f"{': ' + e.description if e.description else ''}")) for e in world.events]))
    for space in world.chat:
        items.append((f"chat {space.name}", [Text.assemble(
            visible(f"- {m.created[:16]} "), (visible(m.author), "bold"), ": ",
            visible(m.text)) for m in space.messages]))
    return items
