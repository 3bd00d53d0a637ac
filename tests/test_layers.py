"""Imports follow the flow (docs/design.md, "Layers"): a module imports only from its own layer
or the layers before it, so the layout holds after whoever changes it next.

Every module of rubric_audit, mock_workspace and tui must have a layer here: a new module fails
this test until it is placed.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("rubric_audit", "mock_workspace", "tui")

# (layer, packages); a module takes the layer of its package (the longest matching prefix)
LAYERS: list[tuple[int, tuple[str, ...]]] = [
    (0, ("rubric_audit", "rubric_audit.core")),  # the model, errors, safe text, the door to models
    (1, ("rubric_audit.load",)),  # benchmarks and runs, read
    (2, ("rubric_audit.store", "mock_workspace")),  # audit.db; a task's world served
    (3, ("rubric_audit.checks",)),  # pure checks on stored data, golds recomputed
    (4, ("rubric_audit.grade", "rubric_audit.run")),  # the steps that call models
    (5, ("rubric_audit.review",)),  # the review log, its queues, a session, search, suggestions
    (6, ("rubric_audit.report",)),  # scores, statistics, report.md/html, exports
    (7, ("rubric_audit.audit", "rubric_audit.patch")),  # the main job; from finding to fix
    (8, ("rubric_audit.cli", "rubric_audit.__main__")),  # the command line: the edge
    (9, ("tui",)),  # the review app, started by `rubric-audit review`
]
DOOR = ("rubric_audit.cli.review", "tui")  # the review commands start the app: the one edge to it


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int | None:
    found = [(len(prefix), layer) for layer, prefixes in LAYERS for prefix in prefixes
             if module == prefix or module.startswith(prefix + ".")]
    return max(found)[1] if found else None


def imports_of(path: Path) -> set[str]:
    """The project modules `path` imports (at any depth: inside functions too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module
                 and node.level == 0 else
                 [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        found |= {n for n in names if n.split(".")[0] in PACKAGES}
    return found


def project_modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}


def test_every_module_has_a_layer() -> None:
    assert not [m for m in project_modules() if layer_of(m) is None]


def test_no_module_imports_against_the_flow() -> None:
    against = []
    for module, path in sorted(project_modules().items()):
        for imported in sorted(imports_of(path)):
            mine, theirs = layer_of(module), layer_of(imported)
            if mine is None or theirs is None or theirs <= mine:
                continue
            if module == DOOR[0] and imported.startswith(DOOR[1]):
                continue
            against.append(f"{module} (layer {mine}) imports {imported} (layer {theirs})")
    assert not against, "\n".join(against)



def test_every_package_says_what_it_may_import() -> None:
    """Each package of rubric_audit opens with a docstring naming what it may import, so the layout
    reads as the flow without this file."""
    silent = [str(init.relative_to(ROOT)) for init in (ROOT / "rubric_audit").glob("*/__init__.py")
              if "May import:" not in (ast.get_docstring(ast.parse(init.read_text("utf-8"))) or "")]
    assert not silent


def test_no_module_lies_outside_a_package() -> None:
    """rubric_audit's top level holds only its packages, __init__ and __main__."""
    loose = sorted(p.name for p in (ROOT / "rubric_audit").glob("*.py"))
    assert loose == ["__init__.py", "__main__.py"]


def test_no_private_name_is_imported_across_modules() -> None:
    """A name with a leading underscore is its module's own: another module that needs it gets it
    made public (named for what it is), so what a module offers is what it exports."""
    private = []
    for module, path in sorted(project_modules().items()):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.ImportFrom) and node.module and node.level == 0
                    and node.module.split(".")[0] in PACKAGES):
                private += [f"{module} imports {node.module}.{a.name}" for a in node.names
                            if a.name.startswith("_") and not a.name.startswith("__")]
    assert not private, "\n".join(private)
