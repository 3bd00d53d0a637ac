"""Our own sentences count in words: "1 task", "2 criteria", never "1 tasks" or "trial(s)"."""

from __future__ import annotations

import ast
import re

from rubric_audit.core.words import plural
from tests.test_layers import project_modules


def test_plural_says_one_and_many() -> None:
    assert [plural(n, "task") for n in (0, 1, 2)] == ["0 tasks", "1 task", "2 tasks"]
    assert plural(1, "criterion") == "1 criterion" and plural(3, "criterion") == "3 criteria"
    assert plural(1_200, "attempt") == "1,200 attempts"
    assert plural(2, "reply", "replies") == "2 replies"


def test_no_message_hedges_its_plural() -> None:
    """No string the project writes says "noun(s)": it counts with `plural`."""
    hedged = []
    for module, path in sorted(project_modules().items()):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and id(node) not in docstrings and isinstance(node.value, str)
                    and re.search(r"[a-z]\(s\)", node.value)):
                hedged.append(f"{module}:{node.lineno}: {node.value[:60]}")
    assert not hedged, "\n".join(hedged)
