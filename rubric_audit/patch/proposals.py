"""The proposals file: one proposal per confirmed defect, each decided by the benchmark's author.

`patch OUT --propose` writes it (TOML, docs/formats.md), `patch OUT --out NEW` reads it. Each
proposal holds its changes (a field of a task: what it holds now, what is proposed, and `after`,
which the author may edit), the evidence it rests on and the author's decision: `accept` applies
`proposed`, `edit` applies `after`, `reject` and `pending` apply nothing. Proposing again keeps
the file as the author left it (decisions, edits, comments) and adds only proposals it lacks.
Stranger text is written through `core.text.toml_string`, so an editor shows it as written.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

import tomlkit
from pydantic import Field
from tomlkit.items import AoT, Item, String, StringType, Table, Trivia

from rubric_audit.core.atomic import write_atomic
from rubric_audit.core.errors import InputError, read_text, validated
from rubric_audit.core.model import Record
from rubric_audit.core.text import toml_string

FORMAT: Literal["rubric-audit proposals 1"] = "rubric-audit proposals 1"
Kind = Literal["tolerance", "regold", "unasked", "consistent", "prompt"]
Decision = Literal["pending", "accept", "reject", "edit"]
TaskField = Literal["criterion", "explanation", "gold", "prompt"]
KIND_NAMES: dict[str, str] = {
    "tolerance": "a stated tolerance added to a numeric criterion",
    "regold": "a criterion value or gold replaced by the recomputed one",
    "unasked": "a criterion that grades what the prompt never asked removed (or reworded)",
    "consistent": "a criterion made consistent with its explanation",
    "prompt": "a prompt sentence that removes an ambiguity",
}
HEADER = """rubric-audit patch proposals: one per confirmed defect, for the benchmark's author.
For each proposal set decision = "accept" (apply `proposed`), "edit" (apply your text, written
in `after`), or "reject"; `by` (or `author` below, for every proposal) names who decided. A
criterion whose `after` is "" is removed. Then: rubric-audit patch OUT --out NEW_BENCH
Proposing again keeps what you wrote here and adds only new proposals; the [[unpatched]] list
(confirmed defects no known kind fixes) is written anew."""


class Change(Record):
    """One field of a task (a criterion's text or explanation: of `criterion`)."""

    field: TaskField
    criterion: str = ""
    before: str
    proposed: str
    after: str


class Evidence(Record):
    """A finding a proposal rests on, said for a reader, and what confirms it."""

    check: str
    severity: str
    message: str
    confirmed_by: list[str] = Field(default_factory=list)
    lines: list[str] = Field(default_factory=list)


class Proposal(Record):
    id: str
    kind: Kind
    task: str
    task_name: str
    criterion: str = ""
    summary: str
    decision: Decision = "pending"
    by: str = ""
    note: str = ""
    written_by: str = "rubric-audit"
    changes: list[Change]
    evidence: list[Evidence]


class Unpatched(Record):
    """A confirmed defect no known kind of patch fixes, and why."""

    task: str
    task_name: str
    criterion: str = ""
    checks: list[str]
    reason: str


class Proposals(Record):
    format: Literal["rubric-audit proposals 1"]
    benchmark: str
    version: str
    author: str = ""
    proposal: list[Proposal] = Field(default_factory=list)
    unpatched: list[Unpatched] = Field(default_factory=list)


def default_path(out: Path) -> Path:
    return out / "proposals.toml"


def read_proposals(path: Path) -> Proposals:
    """The proposals file, as the author left it; one line naming the field at fault."""
    if not path.is_file():
        raise InputError(path, None, "no proposals file here: run `rubric-audit patch OUT "
                                     "--propose` first")
    try:
        data = tomllib.loads(read_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, None, f"malformed TOML: {exc}") from None
    return validated(path, data, Proposals)


def _item(value: Any) -> Item:
    """A value as TOML, every string through `toml_string`."""
    if isinstance(value, str):
        written = toml_string(value)
        kind = StringType.MLB if written.startswith('"""') else StringType.SLB
        return String(kind, value, written[len(kind.value):-len(kind.value)], Trivia())
    if isinstance(value, dict):
        return _table(value)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return AoT([_table(v) for v in value])
    if isinstance(value, list):
        array = tomlkit.array()
        array.extend(_item(v) for v in value)
        return array
    item: Item = tomlkit.item(value)
    return item


def _table(value: dict[str, Any]) -> Table:
    table = tomlkit.table()
    for key, inner in value.items():
        table.add(key, _item(inner))
    return table


def _tables(rows: list[Proposal] | list[Unpatched]) -> AoT:
    return AoT([_table(row.model_dump()) for row in rows])


def write_proposals(path: Path, proposals: Proposals) -> tuple[int, int]:
    """Write the proposals file; where one exists (of the same benchmark version), keep it as
    the author left it and add only the proposals it lacks, and the current list of defects no
    known kind fixes. Returns (proposals added, proposals kept)."""
    if path.is_file():
        kept = read_proposals(path)
        if kept.version != proposals.version:
            raise InputError(path, "version", f"proposals for version {kept.version[:12]} of the "
                                              f"benchmark; this audit is of version "
                                              f"{proposals.version[:12]}: move the file away (or "
                                              f"give --proposals another)")
        doc = tomlkit.parse(read_text(path))
        known = {p.id for p in kept.proposal}
        new = [p for p in proposals.proposal if p.id not in known]
        if new:
            if "proposal" not in doc:
                doc.add("proposal", tomlkit.aot())
            tables = doc["proposal"]
            if not isinstance(tables, AoT):
                raise InputError(path, "proposal", "not an array of tables ([[proposal]])")
            for table in _tables(new).body:
                tables.append(table)
        if "unpatched" in doc:
            del doc["unpatched"]
        if proposals.unpatched:
            doc.add("unpatched", _tables(proposals.unpatched))
        write_atomic(path, tomlkit.dumps(doc))
        return len(new), len(known)
    doc = tomlkit.document()
    for line in HEADER.splitlines():
        doc.add(tomlkit.comment(line))
    doc.add(tomlkit.nl())
    for key in ("format", "benchmark", "version", "author"):
        doc.add(key, _item(getattr(proposals, key)))
    if proposals.proposal:
        doc.add("proposal", _tables(proposals.proposal))
    if proposals.unpatched:
        doc.add("unpatched", _tables(proposals.unpatched))
    write_atomic(path, tomlkit.dumps(doc))
    return len(proposals.proposal), 0
